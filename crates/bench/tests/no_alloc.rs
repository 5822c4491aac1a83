//! The probe nodes do not allocate: cycles of an empty plan under a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use fugue_bench::peers::probe::Probe;
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
        },
    )
    .unwrap();
    let mut seq = SeqExecutor::new();
    probe.begin_cycle();
    seq.run_cycle(&mut plan);
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..1000 {
        probe.begin_cycle();
        seq.run_cycle(&mut plan);
    }
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(after - before, 0, "allocations in 1000 probe cycles");
    assert_eq!(probe.check_cycle(), Ok(()));
    assert_eq!(probe.cycles(), 1001);
}
