//! Static-schedule execution: a schedule computed before the run (HLFET, ETF, CPFD, ... from
//! fugue-sched) becomes one task list per thread; each thread runs its list in order and
//! waits for a task's predecessors on the task's activation counter.
//!
//! Waiting: bounded spin (with back-off), then sleep on the counter's futex. The counter's top
//! bit says that a thread sleeps on it; the predecessor that brings the count to zero wakes it
//! (one system call, only then). This keeps the real-time rule: the audio thread never spins
//! without bound on a task that a descheduled worker must finish.
//!
//! Schedules that duplicate tasks (CPFD) are run with each task once, on the thread whose
//! copy of it the schedule finishes first; the other copies are dropped (audio processors
//! have state and must run exactly once per cycle).

use crossbeam_utils::CachePadded;

use crate::exec::common::Common;
use crate::exec::pool::{Pool, Work};
use crate::exec::signal::SpinBudget;
use crate::exec::ExecOptions;
use crate::sync::{spin_hint, yield_now, AtomicU32, Ordering};
use crate::{Executor, Plan};

const SLEEPER: u32 = 1 << 31;

struct StaticState {
    common: Common,
    /// Each thread's tasks, in order.
    lists: Vec<Vec<u32>>,
    /// Per-task wait words (count of unfinished predecessors, top bit = a thread sleeps).
    wait: Box<[CachePadded<AtomicU32>]>,
    budget: SpinBudget,
}

impl StaticState {
    #[inline]
    fn wait_ready(&self, t: usize) {
        let word = &self.wait[t];
        // Acquire: pairs with the predecessors' AcqRel decrements.
        if word.load(Ordering::Acquire) & !SLEEPER == 0 {
            return;
        }
        self.wait_slow(word);
    }

    #[cold]
    fn wait_slow(&self, word: &AtomicU32) {
        let start = std::time::Instant::now();
        let mut i = 0u32;
        while start.elapsed() < self.budget.time {
            if word.load(Ordering::Acquire) & !SLEEPER == 0 {
                return;
            }
            if i < self.budget.spins {
                spin_hint();
            } else {
                yield_now();
            }
            i = i.wrapping_add(1);
        }
        loop {
            let v = word.fetch_or(SLEEPER, Ordering::AcqRel) | SLEEPER;
            if v & !SLEEPER == 0 {
                return;
            }
            futex_wait(word, v);
        }
    }

    fn serve(&self, w: usize) {
        let Some(list) = self.lists.get(w) else {
            return;
        };
        for &t in list {
            self.wait_ready(t as usize);
            // SAFETY: every predecessor of `t` has finished (its wait word reached zero,
            // acquired above) and `t` is in exactly one thread's list.
            let plan = unsafe { self.common.plan() };
            // Reset the wait word for the next cycle: no predecessor touches it again in
            // this cycle.
            self.wait[t as usize].store(plan.initial_count(t as usize), Ordering::Relaxed);
            // SAFETY: as above: predecessors finished and visible, `t` runs on this thread only.
            unsafe { plan.run_task(t as usize) };
            let succ = plan.successors(t as usize);
            if succ.is_empty() {
                // AcqRel: as in the activation executors (see `Common::run`).
                if self.common.sinks_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.common.done.notify();
                }
            }
            for &s in succ {
                // AcqRel: Release publishes `t`'s outputs to the waiter of `s`.
                let prev = self.wait[s as usize].fetch_sub(1, Ordering::AcqRel);
                if prev & !SLEEPER == 1 && prev & SLEEPER != 0 {
                    futex_wake(&self.wait[s as usize]);
                }
            }
        }
    }
}

#[inline]
fn futex_wait(word: &AtomicU32, v: u32) {
    #[cfg(not(loom))]
    atomic_wait::wait(word, v);
    #[cfg(loom)]
    {
        let _ = (word, v);
        loom::thread::yield_now();
    }
}

#[inline]
fn futex_wake(word: &AtomicU32) {
    #[cfg(not(loom))]
    atomic_wait::wake_all(word);
    #[cfg(loom)]
    let _ = word;
}

impl Work for StaticState {
    fn work(&self, w: usize) {
        self.serve(w);
    }
}

/// The static-schedule executor.
pub struct StaticSchedule {
    pool: Pool<StaticState>,
}

impl StaticSchedule {
    /// An executor running `lists[w]` on thread `w` (thread 0 = the caller). Every task of
    /// `plan` must appear in exactly one list, and each list must be in an order compatible
    /// with the dependencies (a topological order restricted to the list), as list schedules
    /// are; otherwise an error says which task is wrong.
    pub fn new(plan: &Plan, lists: Vec<Vec<u32>>, opts: &ExecOptions) -> Result<Self, String> {
        let n = plan.len();
        let mut seen = vec![false; n];
        for l in &lists {
            for &t in l {
                let t = t as usize;
                if t >= n {
                    return Err(format!("task {t} is not in the plan"));
                }
                if std::mem::replace(&mut seen[t], true) {
                    return Err(format!(
                        "task `{}` appears twice in the schedule",
                        plan.name(t)
                    ));
                }
            }
        }
        if let Some(t) = seen.iter().position(|s| !s) {
            return Err(format!(
                "task `{}` is missing from the schedule",
                plan.name(t)
            ));
        }
        // Deadlock check: simulate the lists with the dependencies.
        let mut pos = vec![0usize; lists.len()];
        let mut count: Vec<u32> = (0..n).map(|i| plan.initial_count(i)).collect();
        let mut left = n;
        loop {
            let mut progressed = false;
            for (w, l) in lists.iter().enumerate() {
                while pos[w] < l.len() && count[l[pos[w]] as usize] == 0 {
                    for &s in plan.successors(l[pos[w]] as usize) {
                        count[s as usize] -= 1;
                    }
                    pos[w] += 1;
                    left -= 1;
                    progressed = true;
                }
            }
            if left == 0 {
                break;
            }
            if !progressed {
                let w = (0..lists.len())
                    .find(|&w| pos[w] < lists[w].len())
                    .unwrap_or(0);
                return Err(format!(
                    "the schedule's order deadlocks at task `{}` on thread {w}",
                    plan.name(lists[w][pos[w]] as usize)
                ));
            }
        }
        let threads = lists.len().max(1);
        let state = StaticState {
            common: Common::new(n.max(1), threads),
            wait: (0..n.max(1))
                .map(|i| {
                    CachePadded::new(AtomicU32::new(if i < n {
                        plan.initial_count(i)
                    } else {
                        0
                    }))
                })
                .collect(),
            lists,
            budget: opts.steal_budget,
        };
        Ok(StaticSchedule {
            pool: Pool::new(threads, state, opts.idle_budget, &opts.placement),
        })
    }

    /// Problems met placing threads.
    pub fn warnings(&self) -> &[String] {
        &self.pool.warnings
    }
}

impl Executor for StaticSchedule {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let st = self.pool.work();
        assert!(
            st.common.begin(plan),
            "plan larger than the executor was built for"
        );
        if plan.is_empty() {
            return;
        }
        self.pool.start_cycle();
        let st = self.pool.work();
        st.serve(0);
        st.common.wait_finished(st.budget);
    }
}

/// Per-thread task lists of `plan` from a static schedule of the graph it was compiled from.
///
/// Processor `p` of the schedule becomes thread `p` (thread 0 is the caller). Each list is in
/// the schedule's start-time order. A task the schedule duplicates (CPFD) is kept once: on the
/// processor whose copy finishes first (ties: the lower processor); its other copies are
/// dropped. Because every copy starts after its predecessors' earliest copies finish, the
/// lists stay free of deadlock; [`StaticSchedule::new`] checks it anyway.
pub fn lists_from_schedule(schedule: &fugue_sched::Schedule, plan: &Plan) -> Vec<Vec<u32>> {
    let n = plan.len();
    let mut best: Vec<Option<(f64, usize)>> = vec![None; n];
    for (p, slots) in schedule.processors.iter().enumerate() {
        for s in slots {
            let t = plan.task_of(s.task);
            if best[t].is_none_or(|(f, _)| s.finish < f) {
                best[t] = Some((s.finish, p));
            }
        }
    }
    let mut lists: Vec<Vec<(f64, u32)>> = vec![Vec::new(); schedule.processors.len().max(1)];
    for (p, slots) in schedule.processors.iter().enumerate() {
        for s in slots {
            let t = plan.task_of(s.task);
            if best[t].is_some_and(|(f, q)| q == p && f == s.finish) {
                lists[p].push((s.start, t as u32));
                best[t] = Some((f64::NEG_INFINITY, usize::MAX)); // taken: later equal copies skip
            }
        }
    }
    lists
        .into_iter()
        .map(|mut l| {
            // Start-time order; ties by task index, which is a topological order.
            l.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            l.into_iter().map(|(_, t)| t).collect()
        })
        .collect()
}
