//! `fugue bench overhead` and `fugue bench table` through the binary, scaled down: every
//! executor and the rayon peer pass the checks, JSON has the promised fields, the table
//! writes its files and refuses to overwrite them.

mod common;

use common::{example, fugue};
use std::path::Path;
use std::process::Output;

/// A fresh folder for one test.
fn folder(name: &str) -> std::path::PathBuf {
    common::folder("bench-overhead-cli", name)
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn overhead_every_executor_json() {
    let o = fugue(&[
        "bench",
        "overhead",
        "--shape",
        "diamond",
        "--nodes",
        "16",
        "--executor",
        "seq,static,ws,ws-affinity,share,share-spin,levels,rayon",
        "--threads",
        "2",
        "--cycles",
        "300",
        "--warmup",
        "20",
        "--runs",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = json_lines(&o);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["executor"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "seq",
            "static",
            "ws",
            "ws-affinity",
            "share",
            "share-spin",
            "levels",
            "rayon"
        ]
    );
    for r in &rows {
        assert_eq!(r["nodes"], 16);
        assert_eq!(r["cycles"], 300);
        assert_eq!(r["runs"], 2);
        let med = r["median_ns"].as_f64().unwrap();
        let p99 = r["p99_ns"].as_f64().unwrap();
        let max = r["max_ns"].as_f64().unwrap();
        assert!(med > 0.0 && med <= p99 && p99 <= max, "{r}");
        assert_eq!(r["run_medians_ns"].as_array().unwrap().len(), 2);
        let t = r["threads"].as_u64().unwrap();
        assert_eq!(t, if r["executor"] == "seq" { 1 } else { 2 });
    }
}

#[test]
fn overhead_json_reports_the_budgets_used() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "bench",
            "overhead",
            "--shape",
            "rake",
            "--nodes",
            "20",
            "--executor",
            "ws",
            "--cycles",
            "100",
            "--warmup",
            "5",
            "--json",
        ];
        a.extend_from_slice(extra);
        let o = fugue(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_lines(&o).remove(0)
    };
    let d = run(&[]);
    assert_eq!(d["min_steal_ns"], 1000, "{d}");
    let r = run(&[
        "--min-steal-us",
        "0",
        "--idle-spin-us",
        "40",
        "--steal-spin-us",
        "7",
    ]);
    assert_eq!(r["min_steal_ns"], 0, "{r}");
    assert_eq!(r["idle_spin_ns"], 40_000, "{r}");
    assert_eq!(r["steal_spin_ns"], 7_000, "{r}");
    let o = fugue(&["bench", "overhead", "--min-steal-us", "soon"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--min-steal-us"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn overhead_graph_file_with_idle_and_budgets() {
    let o = fugue(&[
        "bench",
        "overhead",
        "--graph",
        &example("synth.ag"),
        "--executor",
        "ws",
        "--cycles",
        "50",
        "--warmup",
        "5",
        "--idle-us",
        "200",
        "--idle-spin-us",
        "50",
        "--steal-spin-us",
        "20",
        "--min-steal-us",
        "0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("synth.ag") && out.contains("ws") && out.contains("idle 200"),
        "{out}"
    );
}

#[test]
fn overhead_tbb_peer_when_built() {
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers/tbb-flow");
    if !harness.is_file() {
        eprintln!("skipped: the oneTBB harness is not built (scripts/bench-peers.sh --build-only)");
        return;
    }
    let o = fugue(&[
        "bench",
        "overhead",
        "--shape",
        "rake",
        "--nodes",
        "20",
        "--executor",
        "ws,tbb",
        "--cycles",
        "200",
        "--warmup",
        "10",
        "--runs",
        "3",
        "--json",
        "--tbb",
        harness.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = json_lines(&o);
    assert_eq!(rows[1]["executor"], "tbb");
    assert_eq!(rows[1]["nodes"], rows[0]["nodes"]);
    assert!(rows[1]["median_ns"].as_f64().unwrap() > 0.0);
    // The ratios to oneTBB: of the medians, and per run (run i of ws over run i of oneTBB).
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let ws = &rows[0];
    let (ws_runs, tbb_runs) = (
        ws["run_medians_ns"].as_array().unwrap(),
        rows[1]["run_medians_ns"].as_array().unwrap(),
    );
    let per_run = ws["vs_tbb_per_run"].as_array().unwrap();
    assert_eq!(per_run.len(), 3);
    for i in 0..3 {
        let want = f(&ws_runs[i]) / f(&tbb_runs[i]);
        assert!((f(&per_run[i]) - want).abs() < 1e-9 * want, "run {i}");
    }
    let mut sorted: Vec<f64> = per_run.iter().map(f).collect();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(f(&ws["vs_tbb_paired_median"]), sorted[1]);
    let want = f(&ws["median_ns"]) / f(&rows[1]["median_ns"]);
    assert!((f(&ws["vs_tbb"]) - want).abs() < 1e-9 * want);
    assert_eq!(f(&rows[1]["vs_tbb_paired_median"]), 1.0);
}

/// The harness pinned (`PIN` = 1) still gets its worker threads: oneTBB sizes its pool from
/// the process's affinity mask, so the harness must not pin the main thread to one core before
/// oneTBB starts (it did: pinned runs were sequential). On two or more cores, some node runs
/// happen off the main thread.
#[test]
fn tbb_harness_pinned_keeps_its_workers() {
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/peers/tbb-flow");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !harness.is_file() || cores < 2 {
        eprintln!("skipped: the oneTBB harness is not built, or fewer than 2 cores");
        return;
    }
    // A fan of 64 independent nodes between a source and a sink.
    let mut dag = String::from("fugue-dag 1\n66 128\n");
    for v in 1..=64 {
        dag += &format!("0 {v}\n{v} 65\n");
    }
    let path = std::env::temp_dir().join(format!("fugue-test-dag-{}.txt", std::process::id()));
    std::fs::write(&path, dag).unwrap();
    let o = std::process::Command::new(&harness)
        .args([path.to_str().unwrap(), "2", "20000", "100", "0", "1"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert!(v["worker_share"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn overhead_usage_and_input_errors() {
    let o = fugue(&["bench", "overhead", "--shape", "line", "--executor", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown executor `nope`"));
    let o = fugue(&["bench", "overhead", "--graph", "/nonexistent/g.ag"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/g.ag"));
    let o = fugue(&[
        "bench",
        "overhead",
        "--shape",
        "line",
        "--nodes",
        "5",
        "--executor",
        "tbb",
        "--tbb",
        "/nonexistent/tbb-flow",
        "--cycles",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("oneTBB harness"));
    let o = fugue(&["bench", "overhead"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn table_writes_its_files_and_checks_outputs() {
    let d = folder("table");
    let out = d.join("run");
    let args = [
        "bench",
        "table",
        "--shapes",
        &example("rake.ag"),
        "--buffers",
        "64,256",
        "--seconds",
        "0.05",
        "--runs",
        "2",
        "--threads",
        "2",
        "-o",
        out.to_str().unwrap(),
    ];
    let o = fugue(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["README.md", "raw.csv", "summary.csv", "table.md"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    // 2 buffers x (7 executors + rayon).
    assert_eq!(rows.len(), 16, "{summary}");
    for r in &rows {
        assert!(r.ends_with(",true"), "{r}");
    }
    let seq = rows.iter().find(|r| r.contains(",seq,")).unwrap();
    let speedup: f64 = seq.split(',').nth(12).unwrap().parse().unwrap();
    assert!((speedup - 1.0).abs() < 1e-9, "{seq}");
    let raw = std::fs::read_to_string(out.join("raw.csv")).unwrap();
    assert_eq!(raw.lines().count(), 1 + 16 * 2);
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("Command: `") && readme.contains("commit:"));
    // Again without --force: refused, nothing changed.
    let o = fugue(&args);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv")).unwrap(),
        summary
    );
}
