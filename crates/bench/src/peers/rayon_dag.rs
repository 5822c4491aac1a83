//! The DAG run by rayon: per cycle, one `rayon::scope`; a task, when its activation counter
//! reaches zero, is spawned into the scope; the calling thread waits for the scope to end.
//!
//! This is how a rayon user would run a task graph whose shape is known only at run time.
//! Every spawn allocates a job on the heap and the calling thread blocks on a latch while the
//! pool's threads run the scope: it is a peer to measure against, not a real-time executor.

use std::sync::atomic::{AtomicU32, Ordering};

use crossbeam_utils::CachePadded;
use fugue_exec::{Executor, Plan};

/// Runs a [`Plan`] on a rayon pool of `threads` threads.
pub struct RayonDag {
    pool: rayon::ThreadPool,
    counters: Box<[CachePadded<AtomicU32>]>,
    threads: usize,
}

impl std::fmt::Debug for RayonDag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayonDag")
            .field("threads", &self.threads)
            .field("tasks", &self.counters.len())
            .finish_non_exhaustive()
    }
}

impl RayonDag {
    /// A rayon pool of `threads` threads (at least 1) for `plan`, or plans compiled from the
    /// same graph (the activation counters start from `plan`'s counts).
    pub fn new(plan: &Plan, threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        Self::with_pinning(plan, threads, false)
    }

    /// The same, with pool thread `i` pinned to core `i mod cores` when `pin` (a refused
    /// pinning is ignored: the peer runs unpinned).
    pub fn with_pinning(
        plan: &Plan,
        threads: usize,
        pin: bool,
    ) -> Result<Self, rayon::ThreadPoolBuildError> {
        let threads = threads.max(1);
        let cores = fugue_exec::placement::allowed_cores();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("rayon-peer-{i}"))
            .start_handler(move |i| {
                // As fugue's workers (the outputs must match seq's bit for bit).
                fugue_exec::denormals::flush_denormals_on_this_thread();
                if pin {
                    let _ = fugue_exec::placement::pin_current(cores[i % cores.len()]);
                }
            })
            .build()?;
        let counters = (0..plan.len())
            .map(|i| CachePadded::new(AtomicU32::new(plan.initial_count(i))))
            .collect();
        Ok(RayonDag {
            pool,
            counters,
            threads,
        })
    }

    /// Number of pool threads.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

/// Runs task `t`, then spawns each successor whose counter it brings to zero.
///
/// # Safety
/// The caller owns `t` for this cycle: it is a source spawned once by `run_cycle`, or the
/// spawning task brought its counter to zero (AcqRel), so every predecessor has finished and
/// its writes are visible, and no other thread runs `t`.
unsafe fn run_task<'s>(
    scope: &rayon::Scope<'s>,
    plan: &'s Plan,
    counters: &'s [CachePadded<AtomicU32>],
    t: u32,
) {
    let i = t as usize;
    // Relaxed: no predecessor touches this counter again this cycle; the next cycle's
    // decrements come after the scope has ended, which orders this store before them.
    counters[i].store(plan.initial_count(i), Ordering::Relaxed);
    // SAFETY: the caller's contract: all predecessors done and visible, `t` owned by us; the
    // plan is borrowed from the `&mut Plan` of `run_cycle` for the whole scope.
    unsafe { plan.run_task(i) };
    for &s in plan.successors(i) {
        // AcqRel: Release publishes task `t`'s outputs; Acquire (for the thread that reaches
        // zero) sees every other predecessor's.
        if counters[s as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: we brought `s`'s counter to zero: we alone hand it out, once.
            scope.spawn(move |sc| unsafe { run_task(sc, plan, counters, s) });
        }
    }
}

impl Executor for RayonDag {
    fn run_cycle(&mut self, plan: &mut Plan) {
        assert!(
            plan.len() <= self.counters.len(),
            "plan larger than the executor was built for"
        );
        let plan: &Plan = plan;
        let counters: &[CachePadded<AtomicU32>] = &self.counters;
        self.pool.scope(|scope| {
            for &s in plan.sources() {
                // SAFETY: a source has no predecessor and is spawned once per cycle.
                scope.spawn(move |sc| unsafe { run_task(sc, plan, counters, s) });
            }
        });
    }
}
