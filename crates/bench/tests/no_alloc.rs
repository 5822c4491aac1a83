//! The probe nodes do not allocate: cycles of an empty plan under a counting allocator.

use fugue_bench::peers::probe::Probe;
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

#[test]
fn probe_cycles_do_not_allocate() {
    let g = fugue_graph::gen::diamond(4);
    let (probe, empty) = Probe::new(&g);
    let mut plan = Plan::compile(
        &empty,
        &Probe::registry(),
        &CompileOptions {
            sample_rate: 48_000.0,
            block: 16,
            placeholder: false,
            merge_chains: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut seq = SeqExecutor::new();
    probe.begin_cycle();
    seq.run_cycle(&mut plan);
    let (allocs, ()) = fugue_testkit::alloc::count_this_thread(|| {
        for _ in 0..1000 {
            probe.begin_cycle();
            seq.run_cycle(&mut plan);
        }
    });
    assert_eq!(allocs, 0, "allocations in 1000 probe cycles");
    assert_eq!(probe.check_cycle(), Ok(()));
    assert_eq!(probe.cycles(), 1001);
}
