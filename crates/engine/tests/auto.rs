//! The executor that chooses itself: what it tries, what it keeps, and that the audio it
//! plays is the chosen executor's from the first sample.

use fugue_engine::auto::{MIN_CYCLES, MIN_GAIN};
use fugue_engine::{Engine, ExecutorChoice};
use fugue_exec::ExecutorKind;

fn auto() -> ExecutorChoice {
    ExecutorChoice {
        auto: true,
        ..ExecutorChoice::default()
    }
}

#[test]
fn every_candidate_is_measured_and_the_choice_is_explained() {
    let graph = fugue_graph::gen::rake(12);
    let (engine, _) = Engine::build(&graph, 48_000.0, 256, &auto(), false).unwrap();
    let r = engine.auto_report().expect("a report");
    let cores = fugue_exec::placement::available_cores().min(fugue_engine::auto::MAX_THREADS);
    // seq, then ws and static at each thread count from 2.
    assert_eq!(r.candidates.len(), 1 + 2 * (cores - 1));
    assert_eq!(r.candidates[0].label, "seq");
    for c in &r.candidates {
        assert!(c.cycles >= MIN_CYCLES, "{c:?}");
        assert!(c.median_ns > 0.0, "{c:?}");
    }
    assert!(!r.paced);
    // The rule: the fastest, unless it gains less than MIN_GAIN over seq.
    let seq = r.candidates[0].median_ns;
    let best = r
        .candidates
        .iter()
        .map(|c| c.median_ns)
        .fold(f64::INFINITY, f64::min);
    if r.chosen == 0 {
        assert!(best > seq * (1.0 - MIN_GAIN), "{r:?}");
    } else {
        assert_eq!(r.chosen().median_ns, best);
        assert!(best <= seq * (1.0 - MIN_GAIN));
    }
    let line = r.line();
    assert!(
        line.starts_with(&format!("executor auto: chose {}", r.chosen().label)),
        "{line}"
    );
    assert!(line.contains("seq "), "{line}");
}

/// The trials run on a plan of their own: the engine plays from the first sample what the
/// chosen executor alone (and seq) would play.
#[test]
fn the_played_audio_starts_fresh() {
    let graph = fugue_graph::gen::diamond(3);
    let (mut chosen, _) = Engine::build(&graph, 48_000.0, 128, &auto(), false).unwrap();
    let (mut seq, _) =
        Engine::build(&graph, 48_000.0, 128, &ExecutorChoice::default(), false).unwrap();
    for cycle in 0..50 {
        chosen.run_cycle();
        seq.run_cycle();
        assert_eq!(
            chosen.plan.output_hash(),
            seq.plan.output_hash(),
            "cycle {cycle}"
        );
    }
}

/// A known period paces the trials, as the real-time backends will run the cycles.
#[test]
fn a_period_paces_the_trials() {
    let graph = fugue_graph::gen::line(4);
    let mut choice = auto();
    choice.options.period = Some(std::time::Duration::from_micros(500));
    let started = std::time::Instant::now();
    let (engine, _) = Engine::build(&graph, 48_000.0, 24, &choice, false).unwrap();
    let r = engine.auto_report().unwrap();
    assert!(r.paced);
    let cycles: usize = r.candidates.iter().map(|c| c.cycles).sum();
    // At least one period per timed cycle.
    assert!(
        started.elapsed().as_secs_f64() >= cycles as f64 * 500e-6 * 0.9,
        "{cycles} cycles in {:?}",
        started.elapsed()
    );
    assert!(r.chosen < r.candidates.len());
    assert_eq!(
        r.candidates[0].kind,
        ExecutorKind::Seq,
        "seq is always a candidate"
    );
}

/// A run too short for trials worth a tenth of it stays with seq, untried, and says so.
#[test]
fn a_short_run_is_not_measured() {
    let graph = fugue_graph::gen::rake(12);
    let choice = ExecutorChoice {
        auto_cycles: Some(10),
        ..auto()
    };
    let (engine, _) = Engine::build(&graph, 48_000.0, 256, &choice, false).unwrap();
    let r = engine.auto_report().unwrap();
    assert_eq!(r.candidates.len(), 1);
    assert_eq!(r.chosen().kind, ExecutorKind::Seq);
    assert!(r.line().contains("too short"), "{}", r.line());
}
