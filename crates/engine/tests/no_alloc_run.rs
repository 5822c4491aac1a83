//! The real-time path of a run allocates nothing: the measured cycle body of the backends
//! (inputs in, one cycle, outputs out, one record pushed through the statistics ring) and the
//! callback side of the plan handoff, under a counting global allocator, with the statistics
//! thread attached and consuming.
//!
//! Only the audio thread (this test's thread) is counted: the statistics thread is not
//! real-time and may allocate (histograms, CSV), and the executors' worker threads are
//! covered by fugue-exec's `exec_no_alloc` test.

use std::time::{Duration, Instant};

use fugue_engine::backend::jack::Handoff;
use fugue_engine::stats::{start_stats, StatsOptions};
use fugue_engine::ExecutorChoice;
use fugue_engine::{CycleBody, Engine};
use fugue_exec::ExecutorKind;

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

/// The engine of `choice` for `graph`, at 44.1 kHz and 128 frames.
fn build(graph: &fugue_graph::TaskGraph, choice: &ExecutorChoice) -> Engine {
    Engine::build(
        graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        44_100.0,
        128,
        choice,
        false,
    )
    .unwrap()
    .0
}

/// One test only in this binary, so no other test allocates while we count.
#[test]
fn cycle_body_and_handoff_do_not_allocate() {
    let graph = fugue_graph::gen::rake(10);
    let mut inputs = [0.25f32; 128];
    // Each executor plain, then with the profile on (its records folded in on this thread
    // after every cycle).
    let runs = [ExecutorKind::Seq, ExecutorKind::Ws, ExecutorKind::Levels]
        .into_iter()
        .flat_map(|k| [(k, false), (k, true)]);
    for (kind, profiled) in runs {
        let choice = ExecutorChoice {
            kind,
            threads: if kind == ExecutorKind::Seq { 1 } else { 2 },
            ..ExecutorChoice::default()
        };
        let mut engine = build(&graph, &choice);
        let mut engine2 = build(&graph, &choice);
        engine.track_wakes();
        engine2.track_wakes();
        if profiled {
            engine.enable_profile().unwrap();
            engine2.enable_profile().unwrap();
        }
        let (stats, meter) = start_stats(StatsOptions::default()).unwrap();
        let live = fugue_engine::live::queue();
        let mut body = CycleBody {
            meter,
            deadline_periods: 1,
            hash_outputs: true,
            live: Some(live.clone()),
            non_finite: Default::default(),
        };
        let handoff = Handoff::default();
        let mut current = Some(Box::new(engine));
        let mut sink = 0.0f32;
        let cycle = |body: &mut CycleBody, current: &mut Option<Box<Engine>>, sink: &mut f32| {
            let e = current.as_mut().unwrap();
            body.run(
                e,
                128,
                Instant::now(),
                0,
                |_, b| b.copy_from_slice(&inputs[..b.len()]),
                |_, b| *sink += b[7],
            );
        };
        // Warm up (first-touch effects, worker start-up).
        for _ in 0..50 {
            cycle(&mut body, &mut current, &mut sink);
        }
        handoff.offer(Box::new(engine2)).unwrap();
        let (n, ()) = fugue_testkit::alloc::count_this_thread(|| {
            for i in 0..2000 {
                if i == 1000 {
                    // The callback swaps the new engine in and retires the old one.
                    assert!(handoff.take(&mut current));
                }
                if i % 100 == 0 {
                    // A live change for every node (the rake's oscillators take their
                    // frequency; the others have no parameter 0 and ignore it), set by
                    // the cycle body before the next cycle.
                    for node in 0..graph.len() as u32 {
                        let _ = live.push(fugue_engine::live::LiveSet {
                            node,
                            param: 0,
                            value: 100.0 + f64::from(i),
                        });
                    }
                }
                cycle(&mut body, &mut current, &mut sink);
            }
        });
        // The stats thread is still consuming concurrently: let it drain, then check it saw
        // every cycle (no record was dropped).
        std::thread::sleep(Duration::from_millis(20));
        let out = stats.finish();
        assert_eq!(
            n, 0,
            "{kind} (profiled: {profiled}): {n} allocations or frees in 2000 measured cycles"
        );
        assert_eq!(out.summary.cycles, 2050, "{kind}");
        assert_eq!(out.summary.dropped, 0, "{kind}");
        // The retired engine is freed here, on the control side.
        let retired = handoff.collect();
        assert!(retired.is_some());
        if profiled {
            // The profile saw the cycles: the first engine its 1050, the second its 1000.
            assert_eq!(retired.unwrap().profile_report().unwrap().cycles, 1050);
            let p = current.as_ref().unwrap().profile_report().unwrap();
            assert_eq!(p.cycles, 1000);
            assert_eq!(p.nodes.len(), graph.len());
        }
        inputs[0] = sink; // keep the outputs observed
    }
    // An offline auto run whose trials are its first cycles: every trial cycle but the one
    // that ends them (the choice made, the report written, the others' threads joined) runs
    // without allocating, each candidate's times pushed into room made beforehand.
    if fugue_exec::placement::available_cores() >= 2 {
        let choice = ExecutorChoice {
            auto: true,
            trials_in_run: true,
            auto_overlap: true,
            auto_cycles: Some(4000),
            ..ExecutorChoice::default()
        };
        let mut engine = build(&graph, &choice);
        let mut trial_cycles = 0;
        while engine.auto_report().is_none() {
            let (n, ()) = fugue_testkit::alloc::count_this_thread(|| engine.run_cycle());
            if engine.auto_report().is_none() {
                assert_eq!(n, 0, "trial cycle {trial_cycles} allocated {n} times");
            }
            trial_cycles += 1;
            assert!(trial_cycles < 4000, "the trials never ended");
        }
        assert!(engine.auto_report().unwrap().in_run);
        assert!(trial_cycles > 50, "{trial_cycles} trial cycles");
    }
}
