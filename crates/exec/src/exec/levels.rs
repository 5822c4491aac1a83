//! Fork/join by levels, the OpenMP-style baseline: the tasks of one topological level run in
//! parallel (each thread claims the next task of the level with a fetch-and-add), and a
//! barrier separates the levels. No activation counters; the barrier is the join.
//!
//! Barrier protocol: `done[l]` counts the finished tasks of level `l`; the thread that
//! finishes the last one advances `level` (Release) and notifies the level signal. Threads
//! that run out of tasks in a level wait until `level` moves (bounded spin, then sleep).

use crossbeam_utils::CachePadded;

use crate::exec::pool::{Pool, Work};
use crate::exec::signal::{Signal, SpinBudget};
use crate::exec::ExecOptions;
use crate::sync::{AtomicPtr, AtomicU32, Ordering};
use crate::{Executor, Plan};

struct LevelState {
    plan: AtomicPtr<Plan>,
    /// The level being run; `n_levels` when the cycle is over.
    level: CachePadded<AtomicU32>,
    n_levels: AtomicU32,
    claim: Box<[CachePadded<AtomicU32>]>,
    done: Box<[CachePadded<AtomicU32>]>,
    signal: Signal,
    budget: SpinBudget,
}

impl LevelState {
    fn serve(&self) {
        loop {
            // Acquire: pairs with the Release store that advanced the level, so the previous
            // level's outputs are visible.
            let l = self.level.load(Ordering::Acquire);
            if l >= self.n_levels.load(Ordering::Relaxed) {
                return;
            }
            // SAFETY: a level below `n_levels` is running, so the audio thread is inside
            // `run_cycle` holding the plan it published before starting the cycle.
            let plan = unsafe { &*self.plan.load(Ordering::Acquire) };
            let tasks = plan.level(l as usize);
            let li = l as usize;
            loop {
                // Relaxed: the claim only hands out distinct indices; visibility comes from
                // the level barrier.
                let k = self.claim[li].fetch_add(1, Ordering::Relaxed) as usize;
                if k >= tasks.len() {
                    break;
                }
                // SAFETY: index `k` of level `l` is claimed by this thread alone; every
                // predecessor is in an earlier level, finished before the barrier that let
                // `level` reach `l` (Acquire above).
                unsafe { plan.run_task(tasks[k] as usize) };
                // AcqRel: the last finisher acquires every other finisher's writes before it
                // releases them to the next level.
                if self.done[li].fetch_add(1, Ordering::AcqRel) + 1 == tasks.len() as u32 {
                    // Release: publishes the level's outputs with the new level number.
                    self.level.store(l + 1, Ordering::Release);
                    self.signal.notify();
                }
            }
            self.signal
                .wait_until(self.budget, || self.level.load(Ordering::Acquire) != l);
        }
    }
}

impl Work for LevelState {
    fn work(&self, _w: usize) {
        self.serve();
    }
}

/// The fork/join-by-levels executor.
pub struct Levels {
    pool: Pool<LevelState>,
}

impl Levels {
    /// An executor with `threads` threads for plans of up to `plan.n_levels()` levels.
    pub fn new(plan: &Plan, threads: usize, opts: &ExecOptions) -> Self {
        let n = plan.n_levels().max(1);
        let state = LevelState {
            plan: AtomicPtr::new(std::ptr::null_mut()),
            level: CachePadded::new(AtomicU32::new(u32::MAX)),
            n_levels: AtomicU32::new(0),
            claim: (0..n)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
            done: (0..n)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
            signal: Signal::new(),
            budget: opts.steal_budget,
        };
        Levels {
            pool: Pool::new(threads.max(1), state, opts.idle_budget, &opts.placement),
        }
    }

    /// Problems met placing threads.
    pub fn warnings(&self) -> &[String] {
        &self.pool.warnings
    }
}

impl Executor for Levels {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let st = self.pool.work();
        let n = plan.n_levels();
        assert!(
            n <= st.claim.len(),
            "plan deeper than the executor was built for"
        );
        if n == 0 {
            return;
        }
        for l in 0..n {
            st.claim[l].store(0, Ordering::Relaxed);
            st.done[l].store(0, Ordering::Relaxed);
        }
        st.plan.store(plan as *mut Plan, Ordering::Relaxed);
        st.n_levels.store(n as u32, Ordering::Relaxed);
        // Relaxed: the SeqCst epoch bump below publishes all of the above.
        st.level.store(0, Ordering::Relaxed);
        self.pool.start_cycle();
        let st = self.pool.work();
        st.serve();
    }
}
