//! Fork/join by levels, the OpenMP-style baseline: the tasks of one topological level run in
//! parallel (each thread claims the next task of the level with a fetch-and-add), and a
//! barrier separates the levels. No activation counters; the barrier is the join.
//!
//! Barrier protocol: every shared word carries the cycle number in its high 32 bits, so that
//! a thread still finishing its look at cycle `c` can never claim or count work of cycle
//! `c + 1`. `level` = (cycle, level being run); `claim[l]` = (cycle, next index to hand out),
//! advanced by compare-and-swap only while its cycle is the claimer's; `done[l]` = (cycle,
//! tasks finished). The thread that finishes the last task of level `l` stores (cycle, l + 1)
//! into `level` (Release) and notifies the level signal. Threads that run out of tasks in a
//! level wait until `level` changes (bounded spin, then sleep).

use crossbeam_utils::CachePadded;

use crate::executors::ExecOptions;
use crate::runtime::pool::{Pool, StartError, Work, Workers};
use crate::runtime::signal::{Signal, SpinBudget};
use crate::{Executor, Plan};
use fugue_sync::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

const LOW: u64 = 0xffff_ffff;

#[inline]
fn pack(cycle: u32, x: u32) -> u64 {
    (u64::from(cycle) << 32) | u64::from(x)
}

struct LevelState {
    plan: AtomicPtr<Plan>,
    n_levels: AtomicU32,
    /// (cycle, level being run); the level is `n_levels` when the cycle is over.
    level: CachePadded<AtomicU64>,
    claim: Box<[CachePadded<AtomicU64>]>,
    done: Box<[CachePadded<AtomicU64>]>,
    signal: Signal,
    budget: SpinBudget,
}

impl LevelState {
    fn serve(&self) {
        loop {
            // Acquire: pairs with the Release stores of `level` (cycle start by the audio
            // thread, level advance by the last finisher): the plan, the level's claim and
            // done words, and the previous level's outputs are visible.
            let lw = self.level.load(Ordering::Acquire);
            let (cycle, l) = ((lw >> 32) as u32, (lw & LOW) as u32);
            if l >= self.n_levels.load(Ordering::Relaxed) {
                return;
            }
            // SAFETY: level `l` of cycle `cycle` is running (seen above), so the audio thread
            // is inside `run_cycle` holding the plan it published before starting the cycle.
            let plan = unsafe { &*self.plan.load(Ordering::Relaxed) };
            let li = l as usize;
            let tasks = plan.unit_level(li);
            let mut cur = self.claim[li].load(Ordering::Relaxed);
            loop {
                if (cur >> 32) as u32 != cycle || (cur & LOW) as usize >= tasks.len() {
                    break;
                }
                // Relaxed: the claim only hands out distinct indices of this cycle;
                // visibility comes from the level barrier.
                match self.claim[li].compare_exchange_weak(
                    cur,
                    cur + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Err(now) => cur = now,
                    Ok(_) => {
                        let k = (cur & LOW) as usize;
                        // SAFETY: index `k` of level `l` of this cycle is ours alone; every
                        // predecessor is in an earlier level, finished before the barrier
                        // that let `level` reach `l` (Acquire above).
                        unsafe { plan.run_unit(tasks[k] as usize) };
                        // AcqRel: the last finisher acquires every other finisher's writes
                        // before it releases them to the next level.
                        let prev = self.done[li].fetch_add(1, Ordering::AcqRel);
                        // The broken variant opens the barrier one task early.
                        let early = usize::from(
                            fugue_sync::fault::active("levels-early-barrier") && tasks.len() > 1,
                        );
                        if (prev & LOW) as usize + 1 + early == tasks.len() {
                            // Release: publishes the level's outputs with the new level.
                            self.level.store(pack(cycle, l + 1), Ordering::Release);
                            self.signal.notify();
                        }
                        cur = self.claim[li].load(Ordering::Relaxed);
                    }
                }
            }
            self.signal
                .wait_until(self.budget, || self.level.load(Ordering::Acquire) != lw);
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
    cycle: u32,
}

impl Levels {
    /// An executor with `threads` threads for plans of up to `plan.n_unit_levels()` levels;
    /// fails when the system refuses a worker thread.
    pub fn new(plan: &Plan, threads: usize, opts: &ExecOptions) -> Result<Self, StartError> {
        let n = plan.n_unit_levels().max(1);
        let state = LevelState {
            plan: AtomicPtr::new(std::ptr::null_mut()),
            n_levels: AtomicU32::new(0),
            level: CachePadded::new(AtomicU64::new(0)),
            claim: crate::runtime::padded_zeros(n),
            done: crate::runtime::padded_zeros(n),
            signal: Signal::new(),
            budget: opts.steal_budget,
        };
        Ok(Levels {
            pool: Pool::new(threads.max(1), state, opts)?,
            cycle: 0,
        })
    }
}

impl Executor for Levels {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let Some((_flush, st)) = crate::executors::begin_cycle(plan, &self.pool) else {
            return;
        };
        let n = plan.n_unit_levels();
        assert!(
            n <= st.claim.len(),
            "plan deeper than the executor was built for"
        );
        if n == 0 {
            return;
        }
        self.cycle = self.cycle.wrapping_add(1);
        let c = self.cycle;
        for l in 0..n {
            st.claim[l].store(pack(c, 0), Ordering::Relaxed);
            st.done[l].store(pack(c, 0), Ordering::Relaxed);
        }
        st.plan.store(plan as *mut Plan, Ordering::Relaxed);
        st.n_levels.store(n as u32, Ordering::Relaxed);
        // Release: publishes everything above to any thread that reads this cycle's level
        // word (a worker still looking at the previous cycle, or one woken by the epoch).
        st.level.store(pack(c, 0), Ordering::Release);
        self.pool.start_cycle();
        let st = self.pool.work();
        st.serve();
    }

    fn workers(&self) -> Option<&dyn Workers> {
        Some(&self.pool)
    }
}
