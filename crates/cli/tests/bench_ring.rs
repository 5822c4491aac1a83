//! `fugue bench ring` through the binary: a run bounded by `--max-seconds` that cannot
//! transfer its items is reported as not finished and returns in time, and the sweep's
//! producers experiment writes its table and plot with the unfinished points named.

mod common;

use std::time::{Duration, Instant};

use common::{fugue, stderr, stdout};

#[test]
fn a_bounded_run_that_cannot_finish_is_reported_and_returns_in_time() {
    let t0 = Instant::now();
    let o = fugue(&[
        "bench",
        "ring",
        "--strategy",
        "mutex",
        "--producers",
        "3",
        "--items",
        "4000000000",
        "--max-seconds",
        "0.5",
        "--json",
    ]);
    let took = t0.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["finished"], false, "{v}");
    let done = v["items_done"].as_u64().unwrap();
    assert!(done > 0 && done < 4_000_000_000, "{v}");
    assert_eq!(v["max_seconds"], 0.5);
    // The sentence says it too.
    let o = fugue(&[
        "bench",
        "ring",
        "--strategy",
        "yield",
        "--producers",
        "2",
        "--items",
        "4000000000",
        "--max-seconds",
        "0.3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("did not finish 4000000000 items in 0.3 s"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_run_within_its_budget_finishes() {
    let o = fugue(&[
        "bench",
        "ring",
        "--items",
        "20000",
        "--max-seconds",
        "60",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["finished"], true, "{v}");
    assert_eq!(v["items_done"], 20000);
}

#[test]
fn a_bad_budget_is_one_sentence() {
    for bad in ["0", "-1", "nan"] {
        let o = fugue(&["bench", "ring", "--items", "10", "--max-seconds", bad]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("--max-seconds must be a positive number"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `--items` is bounded (a count of 2^64 - 1 would run for millennia), in one sentence, and
/// `--point-seconds` is refused without the sweep it times.
#[test]
fn items_are_bounded_and_point_seconds_needs_the_sweep() {
    for bad in ["0", "1000000000001", "18446744073709551615"] {
        let o = fugue(&["bench", "ring", "--items", bad]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains(&format!(
                "--items {bad} is out of range: from 1 to 1000000000000"
            )),
            "{err}"
        );
    }
    let o = fugue(&["bench", "ring", "--items", "10", "--point-seconds", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--sweep"), "{}", stderr(&o));
}

#[test]
fn the_producers_sweep_reports_unfinished_points_and_plots() {
    let out = common::folder("bench-ring", "producers");
    let out_s = out.to_string_lossy().into_owned();
    let t0 = Instant::now();
    let o = fugue(&[
        "bench",
        "ring",
        "--sweep",
        "--only-producers",
        "--producer-counts",
        "1,3",
        "--items",
        "4000000000",
        "--max-seconds",
        "0.2",
        "-o",
        &out_s,
        "--force",
    ]);
    let took = t0.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    // 4 implementations x 2 counts x 0.2 s, and nothing waited for beyond the budget.
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("## Producers (threads)"), "{readme}");
    assert!(
        readme.contains("did not finish 4000000000 items in 0.2 s"),
        "{readme}"
    );
    for f in ["producers.svg", "producers.png", "raw.csv", "summary.csv"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let raw = std::fs::read_to_string(out.join("raw.csv")).unwrap();
    assert_eq!(
        raw.lines().filter(|l| l.starts_with("producers,")).count(),
        8
    );
}

#[test]
fn the_producers_sweep_plots_the_finished_points() {
    let out = common::folder("bench-ring", "producers-finished");
    let out_s = out.to_string_lossy().into_owned();
    let o = fugue(&[
        "bench",
        "ring",
        "--sweep",
        "--only-producers",
        "--producer-counts",
        "1,2",
        "--items",
        "20000",
        "-o",
        &out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!readme.contains("did not finish"), "{readme}");
    let svg = std::fs::read_to_string(out.join("producers.svg")).unwrap();
    for name in ["spin", "yield", "park", "mutex"] {
        assert!(svg.contains(name), "{name} not in the plot's legend");
    }
}
