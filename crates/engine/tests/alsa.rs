//! Runs on ALSA's `null` device (no sound card needed: it discards what it is given, and the
//! backend paces it by the clock): the cycles of the duration, the statistics, the automatic
//! executor choice, stopping early, what the device granted, an unknown device.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_engine::stats::read_csv;
use fugue_engine::{run, Backend, EndReason, ExecutorChoice, RunError, RunOptions, StatsOptions};

fn null(rate: u32, block: usize) -> Backend {
    Backend::Alsa {
        device: "null".into(),
        rate,
        block,
        periods: 2,
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("fugue-alsa-{}-{name}", std::process::id()))
}

#[test]
fn a_null_device_run_lasts_its_duration_with_one_record_per_cycle_and_auto_chooses() {
    let graph = fugue_graph::gen::rake(8);
    let csv = tmp("null.csv");
    let options = RunOptions {
        backend: null(48_000, 256),
        executor: ExecutorChoice {
            auto: true,
            ..ExecutorChoice::default()
        },
        duration: Some(Duration::from_millis(600)),
        stats: StatsOptions {
            csv: Some(csv.clone()),
            keep_records: true,
            hash_outputs: false,
        },
        ..RunOptions::default()
    };
    let start = Instant::now();
    let report = run(&graph, &options, |_| {}).unwrap();
    let took = start.elapsed();
    assert_eq!(report.end, EndReason::Duration);
    assert_eq!(report.backend, "alsa");
    // round(0.6 s × 48000 / 256) = 113 cycles, exactly.
    assert_eq!(report.summary.cycles, 113);
    assert_eq!(report.records.len(), 113);
    assert_eq!(read_csv(&csv).unwrap().len(), 113);
    std::fs::remove_file(&csv).ok();
    // Paced: the cycles take the audio's time, less the buffer filled ahead (two periods),
    // plus auto's trials before them.
    assert!(
        took >= Duration::from_millis(600 - 2 * 6),
        "113 cycles of 5.3 ms played in {took:?}"
    );
    assert_eq!(report.sample_rate, 48_000);
    assert_eq!(report.block, 256);
    let device = report.device.as_deref().unwrap();
    assert!(
        device.starts_with("ALSA device null: asked 48000 Hz, 256-frame periods")
            && device.contains("granted 48000 Hz, 256-frame periods"),
        "{device}"
    );
    let auto = report.auto.as_ref().expect("auto measured or kept seq");
    assert!(!auto.candidates.is_empty());
    // The null device takes the periods at the clock's pace and never runs dry by itself;
    // only a writer kept off its core for more than the two periods filled ahead (10 ms: a
    // virtual machine whose host takes its CPU for a while, which took 2 minutes of 15 in
    // one CI run) leaves it without samples. A writer that failed to keep it fed would run
    // it dry at nearly every cycle.
    assert!(
        report.xruns <= 113 / 4,
        "the null device ran dry {} times in 113 cycles",
        report.xruns
    );
}

#[test]
fn a_stop_request_ends_a_null_device_run_with_its_statistics() {
    let graph = fugue_graph::gen::rake(4);
    let stop = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        backend: null(48_000, 128),
        stop: Some(stop.clone()),
        ..RunOptions::default()
    };
    let s = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s.store(true, Ordering::Relaxed);
    });
    let start = Instant::now();
    let report = run(&graph, &options, |_| {}).unwrap();
    stopper.join().unwrap();
    assert_eq!(report.end, EndReason::Stopped);
    assert!(start.elapsed() < Duration::from_secs(5));
    // About 0.3 s of 2.67 ms cycles: far more than none, far fewer than a second's worth.
    let c = report.summary.cycles;
    assert!((20..=375).contains(&c), "{c} cycles in about 0.3 s");
}

#[test]
fn an_unknown_device_is_refused_in_one_sentence_naming_it() {
    let graph = fugue_graph::gen::rake(2);
    let options = RunOptions {
        backend: Backend::Alsa {
            device: "fugue-no-such-device".into(),
            rate: 48_000,
            block: 256,
            periods: 2,
        },
        duration: Some(Duration::from_millis(100)),
        ..RunOptions::default()
    };
    let e = run(&graph, &options, |_| {}).unwrap_err();
    assert!(matches!(e, RunError::Alsa(_)), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains("\"fugue-no-such-device\" cannot be opened") && !m.contains('\n'),
        "{m}"
    );
}

#[test]
fn the_auto_backend_plays_on_jack_or_else_alsa() {
    let graph = fugue_graph::gen::rake(2);
    let options = RunOptions {
        backend: Backend::Auto {
            connect: false,
            client_name: format!("fugue-alsa-test-{}", std::process::id()),
            device: "null".into(),
            rate: 48_000,
            block: 256,
            periods: 2,
        },
        duration: Some(Duration::from_millis(200)),
        ..RunOptions::default()
    };
    let report = run(&graph, &options, |_| {}).unwrap();
    assert!(report.summary.cycles > 0);
    match report.backend {
        // A JACK server runs (the JACK tests may have started one).
        "jack" => assert!(report.device.is_none()),
        "alsa" => assert!(report.device.unwrap().contains("granted")),
        other => panic!("played on {other}"),
    }
}

#[test]
fn a_device_with_an_impossible_period_count_is_refused_before_opening() {
    let e = fugue_engine::backend::alsa::open("null", 48_000, 256, 1, 2).unwrap_err();
    assert!(e.to_string().contains("periods per buffer"), "{e}");
}
