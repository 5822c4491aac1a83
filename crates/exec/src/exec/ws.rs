//! Work stealing, after Letz, Orlarey, Fober, "Work Stealing Scheduler for Automatic
//! Parallelization in Faust" (LAC 2010): activation counters; a thread that finishes a task
//! runs one ready successor directly and pushes the others on its own deque; it pops its own
//! deque LIFO and steals from the others FIFO; the calling (audio) thread participates, and
//! the cycle ends when the last sink is done.

use crate::exec::common::Common;
use crate::exec::deque::{Deque, Steal};
use crate::exec::pool::{Pool, Work};
use crate::exec::signal::SpinBudget;
use crate::exec::ExecOptions;
use crate::sync::Ordering;
use crate::{Executor, Plan};

struct WsState {
    common: Common,
    deques: Box<[Deque]>,
    steal_budget: SpinBudget,
}

impl WsState {
    /// Finds a task: own deque first (LIFO), then the others' (FIFO), round robin from the
    /// next worker.
    #[inline]
    fn find(&self, w: usize) -> Option<u32> {
        if let Some(t) = self.deques[w].pop() {
            return Some(t);
        }
        let n = self.deques.len();
        loop {
            let mut retry = false;
            for k in 1..n {
                let v = (w + k) % n;
                match self.deques[v].steal() {
                    Steal::Success(t) => {
                        self.common.steals[w].fetch_add(1, Ordering::Relaxed);
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Runs `t` and then the chain of successors it makes ready.
    #[inline]
    fn run_chain(&self, w: usize, mut t: u32) {
        loop {
            let mut next = None;
            // SAFETY: `t` was popped or stolen from a deque, or handed over by the previous
            // iteration: in each case the thread that made it ready (brought its counter to
            // zero, or the audio thread for a source) gave it to exactly one place.
            unsafe {
                self.common.run(t, |s| {
                    if next.is_none() {
                        next = Some(s);
                    } else {
                        self.deques[w].push(s);
                    }
                })
            };
            match next {
                Some(s) => t = s,
                None => return,
            }
        }
    }

    fn serve(&self, w: usize) {
        loop {
            match self.find(w) {
                Some(t) => self.run_chain(w, t),
                None => {
                    if self.common.finished() {
                        return;
                    }
                    // Bounded: wait for work or the end, spinning then sleeping on `done`.
                    // A worker that sleeps here is woken at the end of the cycle; the others
                    // (and the audio thread) go on with the work.
                    let mut found = None;
                    self.common.done.wait_until(self.steal_budget, || {
                        if self.common.finished() {
                            return true;
                        }
                        found = self.find(w);
                        found.is_some()
                    });
                    if let Some(t) = found {
                        self.run_chain(w, t);
                    }
                }
            }
        }
    }
}

impl Work for WsState {
    fn work(&self, w: usize) {
        self.serve(w);
    }
}

/// The work-stealing executor.
pub struct WorkStealing {
    pool: Pool<WsState>,
}

impl WorkStealing {
    /// An executor with `threads` threads (the caller plus `threads - 1` workers) for plans
    /// of up to `plan.n_units()` units.
    pub fn new(plan: &Plan, threads: usize, opts: &ExecOptions) -> Self {
        let threads = threads.max(1);
        let cap = plan.n_units().max(1);
        let state = WsState {
            common: Common::new(cap, threads),
            deques: (0..threads).map(|_| Deque::with_capacity(cap)).collect(),
            steal_budget: opts.steal_budget,
        };
        let pool = Pool::new(threads, state, opts.idle_budget, &opts.placement);
        WorkStealing { pool }
    }

    /// Problems met placing threads (said once by the caller).
    pub fn warnings(&self) -> &[String] {
        &self.pool.warnings
    }

    /// Tasks run by a thread other than the one that made them ready, since creation.
    pub fn steals(&self) -> u64 {
        self.pool.work().common.total_steals()
    }

    fn state(&self) -> &WsState {
        self.pool.work()
    }
}

impl Executor for WorkStealing {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let st: &WsState = self.state();
        assert!(
            st.common.begin(plan),
            "plan larger than the executor was built for"
        );
        // The audio thread keeps the first source for itself (a worker that is still waking up
        // cannot take the whole cycle away from it); the others are offered to the workers.
        let Some((&first, rest)) = plan.unit_sources().split_first() else {
            return;
        };
        for &s in rest {
            st.deques[0].push(s);
        }
        self.pool.start_cycle();
        let st: &WsState = self.state();
        st.run_chain(0, first);
        st.serve(0);
        st.common.wait_finished(st.steal_budget);
    }
}
