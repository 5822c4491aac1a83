//! Static-schedule execution: a schedule computed before the run (HLFET, ETF, CPFD, ... from
//! fugue-sched) becomes one task list per thread; each list runs in its order, each task after
//! its predecessors (counted down on the task's wait word).
//!
//! Every list has a cursor, tagged with the cycle number (as in fork/join by levels, so that
//! a thread still looking at the previous cycle can never claim a task of the next one). A
//! thread takes the next task of a list by compare-and-swap on the cursor, and only when that
//! task is ready. A thread runs its own list first; when its next task is not ready (or its
//! list is done) it takes ready heads of the other lists. The schedule's placement and order
//! are kept whenever every thread keeps pace; when one does not (a worker still waking up, or
//! descheduled on a loaded machine), the others run its ready tasks instead of waiting for it.
//! So the audio thread never waits for a worker that has not started: it waits only for tasks
//! that some thread is running.
//!
//! Waiting: bounded spin (which keeps trying the other lists), then sleep on the wait word of
//! the own list's next task (top bit = a thread sleeps on it; the predecessor that brings the
//! count to zero wakes it), or, for a thread whose list is done, on the end-of-cycle signal.
//!
//! Schedules that duplicate tasks (CPFD) are run with each task once, on the thread whose
//! copy of it the schedule finishes first; the other copies are dropped (audio processors
//! have state and must run exactly once per cycle).

use crossbeam_utils::CachePadded;

use crate::executors::{BuildError, ExecOptions};
use crate::runtime::activation::Common;
use crate::runtime::pool::{Pool, Work, Workers};
use crate::runtime::signal::SpinBudget;
use crate::{Executor, Plan};
use fugue_sync::{AtomicU32, AtomicU64, Ordering};

const SLEEPER: u32 = 1 << 31;
const LOW: u64 = 0xffff_ffff;

/// What a look at one list's cursor found.
enum Head {
    /// This thread now owns the task.
    Claimed(u32),
    /// The next task is not ready yet.
    NotReady(u32),
    /// The list is done for this cycle.
    Done,
    /// The cursor belongs to another cycle: this thread is late; stop.
    Stale,
}

struct StaticState {
    common: Common,
    /// Each thread's tasks, in order.
    lists: Vec<Vec<u32>>,
    /// Per list: (cycle, index of the next task).
    cursors: Box<[CachePadded<AtomicU64>]>,
    /// The cycle being run.
    cycle: CachePadded<AtomicU32>,
    /// Per-task wait words (count of unfinished predecessors, top bit = a thread sleeps).
    wait: Box<[CachePadded<AtomicU32>]>,
    budget: SpinBudget,
}

impl StaticState {
    /// Looks at the head of list `v` for cycle `cycle` and claims it if it is ready.
    #[inline]
    fn head(&self, v: usize, cycle: u32) -> Head {
        let list = &self.lists[v];
        loop {
            // Acquire: pairs with the AcqRel CAS of the previous claimer (and the audio
            // thread's Release store at cycle start).
            let cur = self.cursors[v].load(Ordering::Acquire);
            if (cur >> 32) as u32 != cycle {
                return Head::Stale;
            }
            let i = (cur & LOW) as usize;
            let Some(&t) = list.get(i) else {
                return Head::Done;
            };
            // Acquire: pairs with the predecessors' AcqRel decrements: reading zero makes
            // their outputs visible.
            if self.wait[t as usize].load(Ordering::Acquire) & !SLEEPER != 0 {
                return Head::NotReady(t);
            }
            // AcqRel: one claimer wins index `i`; the next claimer of this list acquires it.
            if self.cursors[v]
                .compare_exchange(cur, cur + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return Head::Claimed(t);
            }
        }
    }

    /// Runs a claimed task and counts down its successors.
    #[inline]
    fn run(&self, t: u32) {
        // SAFETY: `t` was claimed in the current cycle (its cursor carried the cycle the audio
        // thread published with the plan), so the plan is the current one.
        let plan = unsafe { self.common.plan() };
        let i = t as usize;
        // Reset the wait word for the next cycle: no predecessor touches it again this cycle,
        // but a thread about to sleep on `t` (`sleep_on`) may set its flag at the same time:
        // an exchange, so that the reset and that `fetch_or` are ordered one after the other
        // (a plain store could be, in the memory model, neither before nor after it).
        // Release: a sleeper whose `fetch_or` reads the reset also sees the cursor's move
        // past `t` (our claim, before this), and so does not sleep on a task already taken,
        // whose word nobody would wake before the next cycle.
        self.wait[i].swap(plan.slot_initial(i), Ordering::Release);
        // SAFETY: every predecessor finished and is visible (wait word read as zero with
        // Acquire), and the cursor's CAS gave `t` to this thread alone.
        unsafe { plan.run_unit(i) };
        let succ = plan.unit_successors(i);
        if succ.is_empty() {
            // AcqRel: as in the activation executors (see `Common::run`).
            if self.common.sinks_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.common.done.notify();
            }
        }
        for &c in plan.unit_succ_slots(i) {
            // The successor's own wait word, or (wide join) a group word of it: the thread that
            // brings a group to zero resets it and counts down the parent; only a unit's own
            // word carries the SLEEPER bit.
            let mut c = c as usize;
            loop {
                // AcqRel: Release publishes `t`'s outputs to whoever reads the count as zero.
                let prev = self.wait[c].fetch_sub(1, Ordering::AcqRel);
                let parent = plan.slot_parent(c);
                if parent == crate::NO_SLOT {
                    if prev & !SLEEPER == 1
                        && prev & SLEEPER != 0
                        && !fugue_sync::fault::active("static-no-wake")
                    {
                        fugue_sync::futex::wake_all(&self.wait[c]);
                    }
                    break;
                }
                if prev != 1 {
                    break;
                }
                self.wait[c].store(plan.slot_initial(c), Ordering::Relaxed);
                c = parent as usize;
            }
        }
    }

    /// One pass: own list first, then the others. Returns whether a task ran, and the own
    /// list's head when it is waiting for predecessors.
    #[inline]
    fn pass(&self, w: usize, cycle: u32) -> Option<(bool, Option<u32>)> {
        let n = self.lists.len();
        let mut own_wait = None;
        for k in 0..n {
            let v = (w + k) % n;
            match self.head(v, cycle) {
                Head::Claimed(t) => {
                    self.run(t);
                    return Some((true, None));
                }
                Head::NotReady(t) if k == 0 => own_wait = Some(t),
                Head::NotReady(_) | Head::Done => {}
                Head::Stale => return None,
            }
        }
        Some((false, own_wait))
    }

    fn serve(&self, w: usize) {
        if w >= self.lists.len() {
            return;
        }
        // Acquire: pairs with the audio thread's Release store of the cycle.
        let cycle = self.cycle.load(Ordering::Acquire);
        loop {
            if self.common.finished() {
                return;
            }
            let Some((ran, own_wait)) = self.pass(w, cycle) else {
                return;
            };
            if ran {
                continue;
            }
            // Nothing claimable: spin for the budget, trying again (Some(true): a task ran;
            // Some(false): the cycle is over or this thread is late).
            let spun = self.budget.spin(|| {
                if self.common.finished() {
                    return Some(false);
                }
                match self.pass(w, cycle) {
                    None => Some(false),
                    Some((true, _)) => Some(true),
                    Some((false, _)) => None,
                }
            });
            match spun {
                Some(true) => continue,
                Some(false) => return,
                None => {}
            }
            match own_wait {
                Some(t) => self.sleep_on(w, t, cycle),
                None => {
                    // Own list done: sleep until the cycle ends (the other lists' owners are
                    // awake or will be woken by their own tasks' wait words).
                    self.common
                        .done
                        .wait_until(SpinBudget::NONE, || self.common.finished());
                    return;
                }
            }
        }
    }

    /// Sleeps until task `t`, the head of this thread's list, may be ready (or was taken).
    #[cold]
    fn sleep_on(&self, w: usize, t: u32, cycle: u32) {
        let word = &self.wait[t as usize];
        // AcqRel: the decrement that reaches zero reads our flag (and wakes us), or we read
        // the zero it left.
        let v = word.fetch_or(SLEEPER, Ordering::AcqRel) | SLEEPER;
        if v & !SLEEPER == 0 {
            return;
        }
        // The head moved (another thread took `t`) or the cycle is over: do not sleep.
        let cur = self.cursors[w].load(Ordering::Acquire);
        if (cur >> 32) as u32 != cycle || self.lists[w].get((cur & LOW) as usize) != Some(&t) {
            return;
        }
        // Any change of the word after our `fetch_or` (a decrement, or the reset by the
        // thread that runs `t`, which can only follow the waking decrement) makes this return.
        fugue_sync::futex::wait(word, v, None);
    }
}

impl Work for StaticState {
    fn work(&self, w: usize) {
        self.serve(w);
    }
}

/// The static-schedule executor.
pub struct StaticSchedule {
    pool: Pool<StaticState>,
    cycle: u32,
}

impl StaticSchedule {
    /// An executor running `lists[w]` on thread `w` (thread 0 = the caller). Every task of
    /// `plan` must appear in exactly one list, and each list must be in an order compatible
    /// with the dependencies (a topological order restricted to the list), as list schedules
    /// are; otherwise an error says which task is wrong ([`BuildError::BadSchedule`]). Fails
    /// also when the system refuses a worker thread ([`BuildError::Threads`]).
    pub fn new(plan: &Plan, lists: Vec<Vec<u32>>, opts: &ExecOptions) -> Result<Self, BuildError> {
        let bad = BuildError::BadSchedule;
        let n = plan.n_units();
        let name = |u: usize| unit_name(plan, u);
        let mut seen = vec![false; n];
        for l in &lists {
            for &t in l {
                let t = t as usize;
                if t >= n {
                    return Err(bad(format!("task {t} is not in the plan")));
                }
                if std::mem::replace(&mut seen[t], true) {
                    return Err(bad(format!(
                        "task `{}` appears twice in the schedule",
                        name(t)
                    )));
                }
            }
        }
        if let Some(t) = seen.iter().position(|s| !s) {
            return Err(bad(format!(
                "task `{}` is missing from the schedule",
                name(t)
            )));
        }
        // Deadlock check: simulate the lists with the dependencies.
        let mut pos = vec![0usize; lists.len()];
        let mut count: Vec<u32> = (0..n).map(|i| plan.unit_count(i)).collect();
        let mut left = n;
        loop {
            let mut progressed = false;
            for (w, l) in lists.iter().enumerate() {
                while pos[w] < l.len() && count[l[pos[w]] as usize] == 0 {
                    for &s in plan.unit_successors(l[pos[w]] as usize) {
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
                return Err(bad(format!(
                    "the schedule's order deadlocks at task `{}` on thread {w}",
                    name(lists[w][pos[w]] as usize)
                )));
            }
        }
        let threads = lists.len().max(1);
        let state = StaticState {
            common: Common::new(plan.n_slots().max(1), threads),
            wait: (0..plan.n_slots().max(1))
                .map(|c| {
                    let initial = if c < plan.n_slots() {
                        plan.slot_initial(c)
                    } else {
                        0
                    };
                    CachePadded::new(AtomicU32::new(initial))
                })
                .collect(),
            cursors: crate::runtime::padded_zeros(lists.len()),
            cycle: CachePadded::new(AtomicU32::new(0)),
            lists,
            budget: opts.steal_budget,
        };
        Ok(StaticSchedule {
            pool: Pool::new(threads, state, opts)?,
            cycle: 0,
        })
    }
}

impl Executor for StaticSchedule {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let Some((_flush, st)) = crate::executors::begin_cycle(plan, &self.pool) else {
            return;
        };
        if !st.common.begin(plan) {
            return;
        }
        // Cycle numbers start at 1: the cursors' initial tag 0 never matches a cycle.
        self.cycle = self.cycle.wrapping_add(1).max(1);
        let c = self.cycle;
        for cur in st.cursors.iter() {
            cur.store(u64::from(c) << 32, Ordering::Relaxed);
        }
        // Release: publishes the cursors (and the plan stored by `begin`) to any thread that
        // reads this cycle number; the epoch bump below publishes them too.
        st.cycle.store(c, Ordering::Release);
        self.pool.start_cycle();
        st.serve(0);
        st.common.wait_finished(st.budget);
    }

    fn workers(&self) -> Option<&dyn Workers> {
        Some(&self.pool)
    }
}

/// The name of unit `u` for messages: its first task's node, and how many tasks follow.
fn unit_name(plan: &Plan, u: usize) -> String {
    let ts = plan.unit_tasks(u);
    match ts.len() {
        1 => plan.name(ts[0] as usize).to_string(),
        k => format!(
            "{} (and the {} task(s) chained after it)",
            plan.name(ts[0] as usize),
            k - 1
        ),
    }
}
