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
    if fugue_exec::placement::available_cores() < 2 {
        eprintln!("SKIPPED every_candidate_is_measured_and_the_choice_is_explained: one core, where auto has one candidate");
        return;
    }
    let graph = fugue_graph::gen::rake(12);
    let (engine, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        256,
        &auto(),
        false,
    )
    .unwrap();
    let r = engine.auto_report().expect("a report");
    let cores = fugue_exec::placement::available_cores().min(fugue_engine::auto::MAX_THREADS);
    // seq, then ws and static at 2, 4, 8... threads and at the most.
    let counts = fugue_engine::auto::thread_counts(cores);
    assert_eq!(r.candidates.len(), 1 + 2 * counts.len());
    for (i, t) in counts.iter().enumerate() {
        assert_eq!(r.candidates[1 + 2 * i].threads, *t, "{r:?}");
        assert_eq!(r.candidates[2 + 2 * i].threads, *t, "{r:?}");
    }
    assert_eq!(r.candidates[0].label, "seq");
    for c in &r.candidates {
        assert!(c.cycles >= MIN_CYCLES, "{c:?}");
        assert!(c.mean_ns > 0.0, "{c:?}");
    }
    assert!(!r.paced);
    // The rule: the fastest, unless it gains less than MIN_GAIN over seq.
    let seq = r.candidates[0].mean_ns;
    let best = r
        .candidates
        .iter()
        .map(|c| c.mean_ns)
        .fold(f64::INFINITY, f64::min);
    if r.chosen == 0 {
        assert!(best > seq * (1.0 - MIN_GAIN), "{r:?}");
    } else {
        assert_eq!(r.chosen().mean_ns, best);
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
    let (mut chosen, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        128,
        &auto(),
        false,
    )
    .unwrap();
    let (mut seq, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        128,
        &ExecutorChoice::default(),
        false,
    )
    .unwrap();
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
    let graph = fugue_graph::gen::rake(4);
    let mut choice = auto();
    choice.options.period = Some(std::time::Duration::from_micros(500));
    let started = std::time::Instant::now();
    let (engine, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        24,
        &choice,
        false,
    )
    .unwrap();
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
    // With parallel candidates, seq's turns after the first round follow a turn on more
    // threads and settle first: the trials take SETTLE twice at least, within the budget.
    if r.untried.is_none() && r.candidates.len() > 1 {
        let settle = fugue_engine::auto::SETTLE * 2;
        assert!(r.took >= settle, "{:?} of trials", r.took);
        // The trials end once past the budget and a quarter (a round left out); the plans'
        // compilation comes before them.
        let budget = fugue_engine::auto::BUDGET;
        assert!(
            r.took <= budget + budget / 4 + std::time::Duration::from_millis(100),
            "{:?} of trials",
            r.took
        );
    }
}

/// A real-time run of one second at a period longer than the trials' (2048 frames at
/// 44.1 kHz: 46 ms, 22 cycles) is long enough for trials paced at
/// [`fugue_engine::auto::MAX_TRIAL_PERIOD`]: the candidates are measured, not left untried
/// because the run has fewer cycles than the trials.
#[test]
fn a_long_period_run_of_a_second_is_measured() {
    let cores = fugue_exec::placement::available_cores().min(fugue_engine::auto::MAX_THREADS);
    if cores < 2 {
        println!("one core: no parallel candidate to measure");
        return;
    }
    let graph = fugue_graph::gen::rake(12);
    let period = std::time::Duration::from_secs_f64(2048.0 / 44_100.0);
    let mut choice = ExecutorChoice {
        auto_cycles: Some((44_100.0_f64 / 2048.0).ceil() as u64),
        ..auto()
    };
    choice.options.period = Some(period);
    let (engine, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        44_100.0,
        2048,
        &choice,
        false,
    )
    .unwrap();
    let r = engine.auto_report().unwrap();
    assert!(r.paced);
    assert_eq!(r.untried, None, "{}", r.line());
    assert!(r.candidates.len() > 1, "{}", r.line());
    for c in &r.candidates {
        assert!(c.cycles >= fugue_engine::auto::MIN_PACED_CYCLES, "{c:?}");
    }
    // Within the run's own length and the budget.
    assert!(
        r.took <= fugue_engine::auto::BUDGET + std::time::Duration::from_millis(100),
        "{:?} of trials",
        r.took
    );
    // A run of the same cycles at the trials' own period is too short: seq, untried.
    let mut short = choice.clone();
    short.options.period = Some(fugue_engine::auto::MAX_TRIAL_PERIOD);
    let (engine, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        44_100.0,
        2048,
        &short,
        false,
    )
    .unwrap();
    let r = engine.auto_report().unwrap();
    assert_eq!(r.chosen().kind, ExecutorKind::Seq);
    assert!(r.line().contains("too short"), "{}", r.line());
}

/// A run too short for trials worth a tenth of it stays with seq, untried, and says so.
#[test]
fn a_short_run_is_not_measured() {
    if fugue_exec::placement::available_cores() < 2 {
        eprintln!("SKIPPED a_short_run_is_not_measured: one core, where auto has one candidate");
        return;
    }
    let graph = fugue_graph::gen::rake(12);
    let choice = ExecutorChoice {
        auto_cycles: Some(10),
        ..auto()
    };
    let (engine, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        256,
        &choice,
        false,
    )
    .unwrap();
    let r = engine.auto_report().unwrap();
    assert_eq!(r.candidates.len(), 1);
    assert_eq!(r.chosen().kind, ExecutorKind::Seq);
    assert!(r.line().contains("too short"), "{}", r.line());
}

/// A line has no parallelism: with `Pipeline::Auto`, auto tries ws and static pipelined
/// only (never a second thread that would idle); offline with `auto_overlap`, it also tries them running two cycles as one.
/// Whatever it keeps plays seq's samples from the first one.
#[test]
fn a_line_gets_pipelined_and_overlapping_candidates() {
    let cores = fugue_exec::placement::available_cores().min(fugue_engine::auto::MAX_THREADS);
    if cores < 2 {
        println!("one core: no parallel candidate to look at");
        return;
    }
    let graph = fugue_graph::gen::line(40);
    let choice = ExecutorChoice {
        pipeline: fugue_engine::Pipeline::Auto,
        auto_overlap: true,
        ..auto()
    };
    let (mut chosen, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        256,
        &choice,
        false,
    )
    .unwrap();
    let r = chosen.auto_report().unwrap().clone();
    let labels: Vec<&str> = r.candidates.iter().map(|c| c.label.as_str()).collect();
    for want in [
        format!("ws {cores}t pipeline"),
        format!("static {cores}t pipeline"),
    ] {
        assert!(labels.iter().any(|l| l.starts_with(&want)), "{labels:?}");
    }
    assert!(
        labels.iter().any(|l| l.ends_with(" overlap 2")),
        "{labels:?}"
    );
    // Unpipelined, a second thread cannot gain anything on a line: not tried.
    for c in &r.candidates[1..] {
        assert!(c.pipeline * c.overlap > 1, "{labels:?}");
    }
    for c in &r.candidates {
        assert!(c.cycles >= 1 && c.mean_ns > 0.0, "{c:?}");
    }
    // The played plan is the chosen candidate's.
    let k = r.chosen();
    assert_eq!(chosen.plan.block(), 256 * k.overlap);
    assert_eq!(chosen.plan.pipeline(), k.pipeline * k.overlap);
    // Same samples as seq, whatever the choice (an overlapping cycle is two of seq's).
    let (mut seq, _) = Engine::build(
        &graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        256,
        &ExecutorChoice::default(),
        false,
    )
    .unwrap();
    for cycle in 0..20 {
        chosen.run_cycle();
        let got = chosen.plan.output(0).to_vec();
        for (i, part) in got.chunks(256).enumerate() {
            seq.run_cycle();
            assert_eq!(part, seq.plan.output(0), "cycle {cycle}, block {i}, {k:?}");
        }
    }
}

/// `overlap` runs cycles of several blocks, pipelined by block: the same samples as seq. A
/// graph that changes rates cannot be pipelined: it runs without overlap.
#[test]
fn overlapping_cycles_play_seqs_samples() {
    let graph = fugue_graph::gen::diamond(3);
    for (kind, threads) in [
        (ExecutorKind::Ws, 2),
        (ExecutorKind::Static, 2),
        (ExecutorKind::Seq, 1),
    ] {
        let choice = ExecutorChoice {
            kind,
            threads,
            overlap: 3,
            pipeline: fugue_engine::Pipeline::Sub(2),
            ..ExecutorChoice::default()
        };
        let (mut e, _) = Engine::build(
            &graph,
            &fugue_engine::Registry::with_builtin_kinds(),
            48_000.0,
            64,
            &choice,
            false,
        )
        .unwrap();
        assert_eq!(e.plan.block(), 192);
        assert_eq!(e.plan.pipeline(), 6);
        let (mut seq, _) = Engine::build(
            &graph,
            &fugue_engine::Registry::with_builtin_kinds(),
            48_000.0,
            64,
            &ExecutorChoice::default(),
            false,
        )
        .unwrap();
        for cycle in 0..30 {
            e.run_cycle();
            let got = e.plan.output(0).to_vec();
            for (i, part) in got.chunks(64).enumerate() {
                seq.run_cycle();
                assert_eq!(part, seq.plan.output(0), "{kind} cycle {cycle}, block {i}");
            }
        }
    }
    let resampling = fugue_graph::read::ag::parse(
        "o = { kind: \"osc\", freq: 440, };  r = { kind: \"resampler\", ratio: 2, };  s = { kind: \"sink\", };  o.1 -> r.1;  r.1 -> s.1;",
        "inline.ag",
    )
    .unwrap();
    let choice = ExecutorChoice {
        kind: ExecutorKind::Ws,
        threads: 2,
        overlap: 2,
        ..ExecutorChoice::default()
    };
    let (e, _) = Engine::build(
        &resampling,
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        64,
        &choice,
        false,
    )
    .unwrap();
    assert_eq!(
        e.plan.block(),
        64,
        "no overlap for a graph that changes rates"
    );
    assert_eq!(e.plan.pipeline(), 1);
}

/// The WAV's samples, all channels interleaved.
fn wav_samples(path: &std::path::Path) -> Vec<f32> {
    hound::WavReader::open(path)
        .unwrap()
        .samples::<f32>()
        .map(|s| s.unwrap())
        .collect()
}

/// An offline render with trials in the run: the trials are the render's first cycles, every
/// candidate on the plan that plays (two blocks per cycle with overlap allowed, one without),
/// and the file is seq's, sample for sample; a render too short for them measures apart.
#[test]
fn trials_in_the_run_render_seq_s_samples() {
    use fugue_engine::{render, Output, RenderOptions};
    let cores = fugue_exec::placement::available_cores().min(fugue_engine::auto::MAX_THREADS);
    let graph = fugue_graph::gen::rake(12);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fugue-auto-in-run");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str| dir.join(name);
    let go = |choice: ExecutorChoice, seconds: f64, out: &std::path::Path| {
        let opts = RenderOptions {
            seconds: Some(seconds),
            block: 128,
            executor: choice,
            output: Output::Wav(out.to_path_buf()),
            ..Default::default()
        };
        render(&graph, &opts, |_| {}).unwrap()
    };
    // 6 s at 128 frames: 2250 blocks, room for every candidate's trials in a quarter.
    go(ExecutorChoice::default(), 6.0, &file("seq.wav"));
    let want = wav_samples(&file("seq.wav"));
    for overlap in [false, true] {
        let choice = ExecutorChoice {
            trials_in_run: true,
            auto_overlap: overlap,
            ..auto()
        };
        let out = file(&format!("auto-{overlap}.wav"));
        let s = go(choice, 6.0, &out);
        let r = s.auto.expect("auto reports its choice");
        if cores < 2 {
            assert!(r.untried.is_some());
            continue;
        }
        assert!(r.in_run, "{}", r.line());
        assert!(r.line().contains("the run's first"), "{}", r.line());
        assert_eq!(r.candidates[0].label, "seq");
        assert!(r.candidates.len() >= 3, "{}", r.line());
        for c in &r.candidates {
            assert_eq!(c.pipeline, 1, "{}", r.line());
            assert_eq!(c.overlap, if overlap { 2 } else { 1 }, "{}", r.line());
            // Seq runs one round only when a candidate took at most 0.7 of its time.
            let least = if c.label == "seq" {
                MIN_CYCLES / 3
            } else {
                MIN_CYCLES
            };
            assert!(c.cycles >= least, "{}", r.line());
        }
        assert!(
            wav_samples(&out) == want,
            "overlap {overlap}: not seq's samples"
        );
    }
    // 0.05 s: 19 blocks, too few for trials in the run: measured apart (or seq kept).
    let choice = ExecutorChoice {
        trials_in_run: true,
        auto_overlap: true,
        ..auto()
    };
    let s = go(choice, 0.05, &file("short.wav"));
    assert!(!s.auto.unwrap().in_run);
}

/// A request to stop that comes during the trials (a signal) ends them at once: seq is kept,
/// untried, and the report says why.
#[test]
fn a_stop_during_the_trials_keeps_seq_untried() {
    if fugue_exec::placement::available_cores() < 2 {
        eprintln!("SKIPPED a_stop_during_the_trials_keeps_seq_untried: one core, where auto has one candidate");
        return;
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let choice = ExecutorChoice {
        stop: Some(stop),
        ..auto()
    };
    let (engine, _) = Engine::build(
        &fugue_graph::gen::rake(12),
        &fugue_engine::Registry::with_builtin_kinds(),
        48_000.0,
        256,
        &choice,
        false,
    )
    .unwrap();
    let r = engine.auto_report().expect("a report");
    assert_eq!(
        r.untried,
        Some(fugue_engine::auto::Untried::Stopped),
        "{r:?}"
    );
    assert_eq!(r.candidates.len(), 1);
    assert_eq!(r.chosen().kind, ExecutorKind::Seq);
    assert_eq!(r.why(), "stopped during the trials");
}
