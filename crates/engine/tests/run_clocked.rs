//! Real-time runs on the clocked backend: cycle counts, the per-cycle CSV against the summary,
//! stopping early with the statistics kept, each record's output hash against seq's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fugue_engine::stats::read_csv;
use fugue_engine::{
    run, Backend, Deadline, EndReason, ExecutorChoice, RunOptions, StatsOptions, Summary,
};
use fugue_exec::ExecutorKind;

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("fugue-run-{}-{name}", std::process::id()))
}

/// The summary equals what the CSV rows say (percentiles within the histogram's precision).
fn check_summary_matches(s: &Summary, rows: &[fugue_engine::CycleRecord]) {
    assert_eq!(s.cycles as usize, rows.len());
    let max = rows.iter().map(|r| r.duration_ns).max().unwrap();
    let min = rows.iter().map(|r| r.duration_ns).min().unwrap();
    let mean = rows.iter().map(|r| r.duration_ns as f64).sum::<f64>() / rows.len() as f64;
    let misses = rows.iter().filter(|r| r.missed).count() as u64;
    assert_eq!(s.max_ns, max);
    assert_eq!(s.min_ns, min);
    assert_eq!(s.misses, misses);
    assert!(
        (s.mean_ns - mean).abs() <= 1e-6 * mean + 1.0,
        "{} vs {mean}",
        s.mean_ns
    );
    let mut d: Vec<u64> = rows.iter().map(|r| r.duration_ns).collect();
    d.sort_unstable();
    let exact_median = d[(d.len() - 1) / 2] as f64;
    // The histogram keeps three significant digits: within 0.1 % (+1 ns), up to a neighbouring rank.
    let near = |v: u64, q: f64| {
        let lo = d[((d.len() - 1) as f64 * q).floor() as usize].saturating_sub(1) as f64;
        let hi = d[(((d.len() - 1) as f64 * q).ceil() as usize + 1).min(d.len() - 1)] as f64;
        (v as f64) >= lo * 0.999 - 1.0 && (v as f64) <= hi * 1.001 + 1.0
    };
    assert!(
        near(s.median_ns, 0.5),
        "median {} vs {exact_median}",
        s.median_ns
    );
    assert!(near(s.p99_ns, 0.99), "p99 {}", s.p99_ns);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.cycle, i as u64, "cycle indices are consecutive");
        assert_eq!(r.missed, r.duration_ns > r.deadline_ns);
    }
}

#[test]
fn clocked_run_counts_cycles_and_writes_one_row_per_cycle() {
    // Four branches of 300 µs each: a cycle lasts long enough for the second thread to wake
    // inside it even on a loaded machine (a few µs of work would end before a late wake-up,
    // which is then not the cycle's).
    let text = fugue_testkit::host::load_fan(4, 300);
    let graph = fugue_graph::read::ag::parse(&text, "wide.ag").unwrap();
    let csv = tmp("clocked.csv");
    let options = RunOptions {
        backend: Backend::Clocked {
            rate: 48_000,
            block: 256,
        },
        executor: ExecutorChoice {
            kind: ExecutorKind::Ws,
            threads: 2,
            ..ExecutorChoice::default()
        },
        duration: Some(Duration::from_millis(500)),
        deadline: Deadline::Double,
        stats: StatsOptions {
            csv: Some(csv.clone()),
            keep_records: true,
            hash_outputs: false,
        },
        ..RunOptions::default()
    };
    let mut ticks = 0;
    let report = run(&graph, &options, |_| ticks += 1).unwrap();
    assert_eq!(report.end, EndReason::Duration);
    // round(0.5 s × 48000 / 256) = 94 cycles, exactly, unless the thread was held off its
    // core for more than a period (an overrun: the clock restarts at the present, and the
    // cycles due meanwhile are not run; the run still ends on time).
    let ran = report.summary.cycles + report.summary.dropped;
    if report.xruns == 0 {
        assert_eq!(ran, 94);
    } else {
        assert!(ran < 94, "{ran} cycles with {} overruns", report.xruns);
    }
    assert_eq!(report.summary.dropped, 0);
    assert!(ticks >= 1);
    let rows = read_csv(&csv).unwrap();
    assert_eq!(rows, report.records);
    check_summary_matches(&report.summary, &rows);
    // The second thread's wake-up latency: recorded (and read back from the CSV) for the
    // cycles it took part in, and summarised over exactly those.
    let woken: Vec<u64> = rows
        .iter()
        .filter(|r| r.wake_ns > 0)
        .map(|r| r.wake_ns as u64)
        .collect();
    assert!(!woken.is_empty(), "no cycle recorded a wake-up");
    assert_eq!(report.summary.woken, woken.len() as u64);
    assert_eq!(report.summary.wake_max_ns, *woken.iter().max().unwrap());
    assert!(report.summary.wake_median_ns > 0);
    assert!(report.summary.wake_median_ns <= report.summary.wake_p99_ns);
    assert!(report.summary.wake_p99_ns <= report.summary.wake_max_ns);
    // Double deadline: two periods of 256 frames at 48 kHz.
    assert_eq!(rows[0].deadline_ns, 2 * (256.0 * 1e9 / 48_000.0) as u64);
    // Cycles are paced: the run lasts about 94 periods.
    let span = rows.last().unwrap().start_ns - rows[0].start_ns;
    let expect = 93.0 * 256.0 / 48_000.0 * 1e9;
    assert!((span as f64) > expect * 0.95, "{span} ns for 93 periods");
    let _ = std::fs::remove_file(&csv);
}

#[test]
fn a_stop_request_ends_the_run_and_keeps_the_statistics() {
    let graph = fugue_graph::gen::line(20);
    let csv = tmp("stop.csv");
    let stop = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        backend: Backend::Clocked {
            rate: 44_100,
            block: 128,
        },
        duration: None,
        stats: StatsOptions {
            csv: Some(csv.clone()),
            keep_records: false,
            hash_outputs: false,
        },
        stop: Some(stop.clone()),
        ..RunOptions::default()
    };
    let s2 = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s2.store(true, Ordering::Relaxed);
    });
    let report = run(&graph, &options, |_| {}).unwrap();
    stopper.join().unwrap();
    assert_eq!(report.end, EndReason::Stopped);
    let rows = read_csv(&csv).unwrap();
    assert!(rows.len() > 20, "{} cycles in 0.3 s", rows.len());
    check_summary_matches(&report.summary, &rows);
    // One thread: nothing to wake.
    assert!(rows.iter().all(|r| r.wake_ns == 0));
    assert_eq!(report.summary.woken, 0);
    let _ = std::fs::remove_file(&csv);
}

#[test]
fn each_record_carries_its_cycles_output_hash() {
    let graph = fugue_graph::gen::diamond(2);
    let options = RunOptions {
        backend: Backend::Clocked {
            rate: 48_000,
            block: 64,
        },
        executor: ExecutorChoice {
            kind: ExecutorKind::Ws,
            threads: 2,
            ..ExecutorChoice::default()
        },
        duration: Some(Duration::from_millis(40)),
        stats: StatsOptions {
            csv: None,
            keep_records: true,
            hash_outputs: true,
        },
        ..RunOptions::default()
    };
    let report = run(&graph, &options, |_| {}).unwrap();
    // 40 ms of 1.33 ms cycles: 30, fewer when a loaded machine made the clock drop one
    // (the hashes below are checked cycle by cycle whatever their number).
    let n = report.records.len();
    assert!((2..=31).contains(&n), "{n} records");
    // Silent inputs, as the clocked backend feeds them: seq's hash of cycle i must be there.
    let (mut seq, _) = fugue_engine::Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        64,
        &ExecutorChoice::default(),
        false,
    )
    .unwrap();
    let mut hashes = std::collections::HashSet::new();
    for (i, r) in report.records.iter().enumerate() {
        seq.run_cycle();
        assert_eq!(r.cycle, i as u64);
        assert_eq!(r.output_hash, seq.plan.output_hash(), "cycle {i}");
        hashes.insert(r.output_hash);
    }
    // The graph's output changes from cycle to cycle: the hashes do too.
    assert!(hashes.len() > 1);
}

#[test]
fn bad_options_are_errors() {
    let graph = fugue_graph::gen::line(3);
    let options = RunOptions {
        backend: Backend::Clocked { rate: 0, block: 64 },
        duration: Some(Duration::from_millis(10)),
        ..RunOptions::default()
    };
    assert!(run(&graph, &options, |_| {}).is_err());
    let options = RunOptions {
        duration: Some(Duration::ZERO),
        ..RunOptions::default()
    };
    assert!(run(&graph, &options, |_| {}).is_err());
}
