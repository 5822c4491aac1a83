//! Thousands of cycles of every executor allocate nothing after the first cycle, on any
//! thread (the audio thread and the workers), under a counting global allocator.
//!
//! This test has its own `main` (`harness = false`): no test harness thread runs beside it
//! and allocates while the counter is armed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use fugue_dsp::Registry;
use fugue_exec::SpinBudget;
use fugue_exec::{build, CompileOptions, ExecOptions, ExecutorKind, Plan};

struct Counting;

static ARMED: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static WHO: AtomicUsize = AtomicUsize::new(0);
static SIZE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to `System` unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            COUNT.fetch_add(1, Ordering::Relaxed);
            // SAFETY: pthread_self has no preconditions.
            WHO.store(unsafe { libc::pthread_self() } as usize, Ordering::Relaxed);
            SIZE.store(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ARMED.load(Ordering::Relaxed) {
            COUNT.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ARMED.load(Ordering::Relaxed) {
            COUNT.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    no_executor_allocates_after_the_first_cycle();
    println!("exec_no_alloc: 1 passed, 0 failed");
}

fn no_executor_allocates_after_the_first_cycle() {
    let reg = Registry::with_builtin_kinds();
    let graphs = [
        ("rake", fugue_graph::gen::rake(8)),
        ("diamond", fugue_graph::gen::diamond(3)),
        (
            "layered",
            fugue_graph::gen::layered(5, 4, 0.5, Default::default(), 3),
        ),
    ];
    // Short budgets so that workers park and are woken often: the futex path is covered too.
    let opts = ExecOptions {
        idle_budget: SpinBudget {
            spins: 50,
            time: std::time::Duration::from_micros(20),
        },
        steal_budget: SpinBudget {
            spins: 50,
            time: std::time::Duration::from_micros(20),
        },
        ..ExecOptions::default()
    };
    for (name, g) in &graphs {
        for kind in ExecutorKind::ALL {
            // The mutex/condvar work-sharing executor is the documented exception (it locks and
            // blocks), but it must not allocate either.
            for threads in [2, 3] {
                let mut plan = Plan::compile(
                    g,
                    &reg,
                    &CompileOptions {
                        sample_rate: 48_000.0,
                        block: 64,
                        placeholder: false,
                        merge_chains: true,
                    },
                )
                .unwrap();
                let lists = (kind == ExecutorKind::Static).then(|| {
                    let mut l = vec![Vec::new(); threads];
                    for t in 0..plan.n_units() {
                        l[t % threads].push(t as u32);
                    }
                    l
                });
                let mut exec = build(kind, &plan, threads, lists, &opts).unwrap();
                exec.run_cycle(&mut plan);
                COUNT.store(0, Ordering::SeqCst);
                ARMED.store(true, Ordering::SeqCst);
                for _ in 0..2000 {
                    exec.run_cycle(&mut plan);
                }
                ARMED.store(false, Ordering::SeqCst);
                let n = COUNT.load(Ordering::SeqCst);
                // SAFETY: no preconditions.
                let me = unsafe { libc::pthread_self() } as usize;
                assert_eq!(
                    n,
                    0,
                    "{kind} on {name} with {threads} threads allocated or freed {n} times in 2000 \
                     cycles (last on thread {}, the main thread is {me}; last allocation size {})",
                    WHO.load(Ordering::Relaxed),
                    SIZE.load(Ordering::Relaxed)
                );
                drop(exec);
            }
        }
    }
}
