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
    /// The DAG's nodes (the harness's reply must name as many).
    pub nodes: usize,
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
    check_reply(&v, r, &stats).map_err(|why| {
        BenchError::Failed(format!(
            "the oneTBB harness {harness} {why}, so its times are not comparable"
        ))
    })?;
    Ok((stats, v["worker_share"].as_f64()))
}

/// Refuses a reply that is not of the run asked (another count of cycles, threads or nodes,
/// where it says them) or whose times are impossible (not finite, not positive, or out of
/// order: min <= median <= p99 <= max, mean within min and max).
fn check_reply(v: &serde_json::Value, r: &TbbRun<'_>, s: &CycleStats) -> Result<(), String> {
    if s.cycles != r.cycles {
        return Err(format!(
            "timed {} cycles where {} were asked",
            s.cycles, r.cycles
        ));
    }
    if let Some(t) = v["threads"].as_u64() {
        if t as usize != r.threads {
            return Err(format!("ran {t} threads where {} were asked", r.threads));
        }
    }
    if let Some(n) = v["nodes"].as_u64() {
        if n as usize != r.nodes {
            return Err(format!("ran {n} nodes where the graph has {}", r.nodes));
        }
    }
    let times = [s.min_ns, s.median_ns, s.p99_ns, s.max_ns, s.mean_ns];
    if times.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
        return Err("reported a time that is not a positive number".to_string());
    }
    let ordered = s.min_ns <= s.median_ns
        && s.median_ns <= s.p99_ns
        && s.p99_ns <= s.max_ns
        && (s.min_ns..=s.max_ns).contains(&s.mean_ns);
    if !ordered {
        return Err("reported times out of order (min, median, p99, max, mean)".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A harness that answers with `json` whatever it is asked.
    fn fake(dir: &Path, name: &str, json: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{json}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A reply of another run (threads, nodes, cycles) or of impossible times is refused; the
    /// run asked, with ordered times, is taken.
    #[test]
    fn a_reply_of_another_run_or_impossible_times_is_refused() {
        let dir = std::env::temp_dir().join(format!("fugue-tbb-reply-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let edges = dir.join("g.edges");
        std::fs::write(&edges, "fugue-dag 1\n3 2\n0 1\n1 2\n").unwrap();
        let reply = |threads: u32, nodes: u32, cycles: u32, median: f64| {
            format!(
                "{{\"ok\":true,\"executor\":\"tbb\",\"threads\":{threads},\"nodes\":{nodes},\"cycles\":{cycles},\"median_ns\":{median},\"p99_ns\":900,\"max_ns\":1000,\"min_ns\":100,\"mean_ns\":400}}"
            )
        };
        let run_with = |name: &str, json: &str| {
            let h = fake(&dir, name, json);
            run(&TbbRun {
                harness: &h,
                edges: &edges,
                nodes: 3,
                threads: 2,
                cycles: 5,
                warmup: 1,
                idle_us: 0,
                pin: false,
            })
        };
        assert!(run_with("good", &reply(2, 3, 5, 300.0)).is_ok());
        for (name, json, said) in [
            (
                "threads",
                reply(64, 3, 5, 300.0),
                "ran 64 threads where 2 were asked",
            ),
            (
                "nodes",
                reply(2, 4, 5, 300.0),
                "ran 4 nodes where the graph has 3",
            ),
            (
                "cycles",
                reply(2, 3, 6, 300.0),
                "timed 6 cycles where 5 were asked",
            ),
            ("negative", reply(2, 3, 5, -10.0), "not a positive number"),
            ("order", reply(2, 3, 5, 950.0), "out of order"),
        ] {
            let e = run_with(name, &json).unwrap_err().to_string();
            assert!(e.contains(said), "{name}: {e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
