//! The ALSA backend's audio path allocates nothing: the measured cycle body, the outputs
//! interleaved into the device's period, and the write to the device (ALSA's `null` device,
//! paced by the clock), under a counting global allocator. Only this thread is counted (the
//! statistics thread and the executors' workers are covered elsewhere).

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use fugue_engine::backend::alsa;
use fugue_engine::stats::{start_stats, StatsOptions};
use fugue_engine::{CycleBody, Engine, ExecutorChoice};
use fugue_exec::ExecutorKind;

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

/// One test only in this binary, so no other test allocates while we count.
#[test]
fn cycles_written_to_an_alsa_device_do_not_allocate() {
    let graph = fugue_graph::gen::rake(6);
    for kind in [ExecutorKind::Seq, ExecutorKind::Ws] {
        // A write late for the device's clock (5.3 ms periods, on a machine where another
        // process, or the virtual machine's host, may take the core) is an xrun, whose
        // recovery is not the steady path measured here: a try that allocated with an xrun
        // is made again, five times at most. A try that allocated without one fails at once;
        // a try with xruns that allocated nothing shows it too (the recovery included).
        let mut tries = Vec::new();
        for _ in 0..5 {
            let (n, xruns) = cycles_allocate(&graph, kind);
            assert!(
                n == 0 || xruns > 0,
                "{kind}: {n} allocations or frees in 300 cycles"
            );
            tries.push((n, xruns));
            if n == 0 {
                break;
            }
        }
        assert!(
            tries.iter().any(|&(n, _)| n == 0),
            "{kind}: every try had an xrun and allocated (allocations, xruns): {tries:?}"
        );
    }
}

/// Runs 320 cycles of `graph` with `kind` on ALSA's `null` device: the allocations and frees
/// of the last 300 on this thread, and the device's xruns.
fn cycles_allocate(graph: &fugue_graph::TaskGraph, kind: ExecutorKind) -> (u64, u64) {
    let device = alsa::open("null", 48_000, 256, 2, 2).unwrap();
    let (rate, block) = (device.granted().rate, device.granted().block);
    let choice = ExecutorChoice {
        kind,
        threads: if kind == ExecutorKind::Seq { 1 } else { 2 },
        ..ExecutorChoice::default()
    };
    let (mut engine, _) = Engine::build(
        graph,
        &fugue_engine::Registry::with_builtin_kinds(),
        f64::from(rate),
        block,
        &choice,
        false,
    )
    .unwrap();
    let mut out = alsa::Writer::new(device, engine.plan.n_outputs());
    let (stats, meter) = start_stats(StatsOptions::default()).unwrap();
    let mut body = CycleBody {
        meter,
        deadline_periods: 1,
        hash_outputs: true,
        live: None,
        non_finite: Default::default(),
    };
    let stop = AtomicBool::new(false);
    let mut cycle = |engine: &mut Engine, out: &mut alsa::Writer| {
        body.run(
            engine,
            block,
            Instant::now(),
            0,
            |_, b| b.fill(0.0),
            |ch, b| out.output(ch, b),
        );
        out.write(&stop).unwrap();
    };
    // Warm up (first-touch effects, worker start-up, the device started).
    for _ in 0..20 {
        cycle(&mut engine, &mut out);
    }
    let (n, ()) = fugue_testkit::alloc::count_this_thread(|| {
        for _ in 0..300 {
            cycle(&mut engine, &mut out);
        }
    });
    let summary = stats.finish().summary;
    assert_eq!(summary.cycles, 320, "{kind}");
    (n as u64, out.xruns())
}
