//! The driver of the oneTBB flow-graph harness (`benches/peers/tbb/flow_graph.cpp`, built by
//! `scripts/bench-peers.sh` into `target/peers/tbb-flow`): the harness reads the DAG as an
//! [`edge_list`](super::edge_list), runs it with the same checks as the probe nodes, and
//! prints one JSON object.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{failed, BenchError};
use crate::stats::CycleStats;

/// Where the oneTBB harness is: `explicit`, else `$FUGUE_TBB_HARNESS`, else
/// `target/peers/tbb-flow` (from the current folder or beside the running binary's
/// `target/<profile>/`), if it exists.
pub fn harness(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("FUGUE_TBB_HARNESS") {
        return Some(PathBuf::from(p));
    }
    let mut candidates = vec![PathBuf::from("target/peers/tbb-flow")];
    if let Ok(exe) = std::env::current_exe() {
        // target/<profile>/fugue -> target/peers/tbb-flow
        if let Some(t) = exe.parent().and_then(Path::parent) {
            candidates.push(t.join("peers/tbb-flow"));
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// One run of the harness.
#[derive(Clone, Debug)]
pub struct TbbRun<'a> {
    /// The harness.
    pub harness: &'a Path,
    /// The edge-list file of the DAG.
    pub edges: &'a Path,
    /// Threads (oneTBB's arena size).
    pub threads: usize,
    /// Timed cycles.
    pub cycles: usize,
    /// Untimed cycles before.
    pub warmup: usize,
    /// Sleep between cycles, µs.
    pub idle_us: u64,
    /// Pin arena slot i to core i mod cores.
    pub pin: bool,
}

/// Runs the harness once: its cycle statistics and the share of node runs on oneTBB's
/// worker threads (absent from a harness built before it was reported).
pub fn run(r: &TbbRun<'_>) -> Result<(CycleStats, Option<f64>), BenchError> {
    let harness = r.harness.display();
    let out = Command::new(r.harness)
        .arg(r.edges)
        .arg(r.threads.to_string())
        .arg(r.cycles.to_string())
        .arg(r.warmup.to_string())
        .arg(r.idle_us.to_string())
        .arg(if r.pin { "1" } else { "0" })
        .output()
        .map_err(|e| BenchError::io(format!("cannot run the oneTBB harness {harness}"), e))?;
    if !out.status.success() {
        return failed(format!(
            "the oneTBB harness {harness} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
        return failed(format!(
            "the oneTBB harness {harness} printed no JSON object"
        ));
    };
    if v["ok"] != serde_json::Value::Bool(true) {
        return failed(format!(
            "the oneTBB run failed its check: {}",
            v["error"].as_str().unwrap_or("the tasks ran out of order")
        ));
    }
    let f = |k: &str| -> Result<f64, BenchError> {
        v[k].as_f64()
            .ok_or_else(|| BenchError::Failed(format!("the oneTBB harness printed no `{k}`")))
    };
    let stats = CycleStats {
        cycles: f("cycles")? as usize,
        median_ns: f("median_ns")?,
        p99_ns: f("p99_ns")?,
        max_ns: f("max_ns")?,
        min_ns: f("min_ns")?,
        mean_ns: f("mean_ns")?,
    };
    Ok((stats, v["worker_share"].as_f64()))
}
