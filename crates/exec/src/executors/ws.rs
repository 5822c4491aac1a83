//! Work stealing, after Letz, Orlarey, Fober, "Work Stealing Scheduler for Automatic
//! Parallelization in Faust" (LAC 2010): activation counters; a thread that finishes a task
//! runs one ready successor directly and pushes the others on its own deque; it pops its own
//! deque LIFO and steals from the others FIFO; the calling (audio) thread participates, and
//! the cycle ends when the last sink is done.
//!
//! Affinity (the `ws-affinity` executor, [`WorkStealing::with_affinity`]): every unit
//! remembers the thread that ran it last (its *home*). A thread that makes a unit ready keeps
//! it (runs it next or pushes it on its own deque) when the unit's home is this thread or
//! unknown, and otherwise posts it to the home thread's mailbox (a bounded lock-free queue, one
//! per thread). A thread looks for work in its own deque, then its mailbox, then steals from
//! the other deques and mailboxes; a stolen unit changes home. So the placement that stealing
//! finds is kept from one cycle to the next and only moves when a thread runs out of work, and
//! each unit's processor state, buffers and counters can stay in one core's cache. This is the
//! affinity idea of Acar, Blelloch and Blumofe ("The data locality of work stealing", SPAA
//! 2000) and of TBB's affinity mailboxes, applied across cycles of the same graph. What it
//! gains and costs: `bench-results/overhead/HISTORY.md`.

use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;

use crate::executors::ExecOptions;
use crate::runtime::activation::Common;
use crate::runtime::pool::{Pool, StartError, Work, Workers};
use crate::runtime::signal::SpinBudget;
use crate::runtime::sources::{source_cuts, SourceRanges};
use crate::runtime::{Deque, Steal};
use crate::{Executor, Plan};
use fugue_sync::{AtomicBool, AtomicU32, Ordering};

/// Steals are chosen by the work they bring only when a steal costs more than this many
/// average units (`WorkStealing::learn_costs`): with coarser units nearly every task is worth
/// a steal, and the owners' accounts would cost more than they save (measurement:
/// `bench-results/overhead/HISTORY.md`).
const SELECTIVE_UNITS: f64 = 4.0;

/// The audio thread times its first chain (to learn what a steal brings, see
/// `WorkStealing::learn_costs`) on one cycle in this many: the estimate is smoothed over
/// cycles anyway (a time constant of about 80 cycles), and timing every cycle made them
/// slower (measurement: `bench-results/table/HISTORY.md`).
const LEARN_EVERY: u32 = 8;

/// No home yet.
const NO_HOME: u32 = u32::MAX;

/// A thread's account of its own deque: the indices it last saw and the sum of the dominated
/// costs of the tasks between them. Only its owner touches it.
#[derive(Default)]
struct Pending {
    top: std::cell::Cell<isize>,
    bottom: std::cell::Cell<isize>,
    sum: std::cell::Cell<f32>,
    /// The value of `WsState::selective` the account was kept under.
    synced: std::cell::Cell<u32>,
}

// SAFETY: each `Pending` is used by one thread only, its deque's owner (`WsState::account`
// takes the owner's index); the executor hands the state to other threads, which never touch
// another thread's `Pending`.
unsafe impl Sync for Pending {}

struct WsState {
    common: Common,
    deques: Box<[Deque]>,
    /// Per thread: units posted to it by other threads (affinity).
    mail: Box<[CachePadded<ArrayQueue<u32>>]>,
    /// Per unit: the thread that ran it last, or `NO_HOME`. Written only when it changes, so
    /// in a steady state the array is read-only and shared by all caches.
    home: Box<[AtomicU32]>,
    /// The cycle's source units, one range per thread.
    sources: SourceRanges,
    affinity: bool,
    steal_budget: SpinBudget,
    /// Per thread: whether its deque holds work worth a steal (the sum of its tasks'
    /// dominated costs at least [`WsState::min_steal`]), written by the owner only when that
    /// changes. Thieves read this word, not the deque, so a busy owner's deque lines stay in
    /// its cache; a hint, refreshed at the owner's next push or pop.
    worth: Box<[CachePadded<AtomicBool>]>,
    /// Per thread, the owner's own account of its deque (`Pending`), on its own line.
    pending: Box<[CachePadded<Pending>]>,
    /// The least sum of dominated costs ([`Plan::unit_dominated_cost`]) a deque must hold
    /// for a thread to steal from it while its owner is busy (`f32` bits; 0: any), set by
    /// the audio thread from the time its first chain takes (timed on one cycle in
    /// [`LEARN_EVERY`]).
    min_steal: CachePadded<AtomicU32>,
    /// Whether steals are chosen by the work they bring (bit 0), and how many times that
    /// changed (bits 1..: an owner resynchronises its account when it sees a new value). On
    /// when `ExecOptions::min_steal` is not zero and a steal's cost exceeds the average
    /// unit's (`WorkStealing::learn_costs`): below, nearly every task is worth a steal and the
    /// bookkeeping would cost more than it saves ([`SELECTIVE_UNITS`]).
    selective: AtomicU32,
    /// How long a thread looks only for tasks worth a steal before it takes any.
    patience: Duration,
}

impl WsState {
    /// Finds a task: own deque first (LIFO), then own mailbox, then own range of sources,
    /// then the others' deques (FIFO), their mailboxes and their ranges of sources (from the
    /// back), round robin from the next worker.
    #[inline]
    fn find(&self, w: usize, any: bool) -> Option<u32> {
        let popped = self.deques[w].pop();
        self.account(w);
        if let Some(t) = popped {
            return Some(t);
        }
        if self.affinity {
            if let Some(t) = self.mail[w].pop() {
                return Some(t);
            }
        }
        if let Some(i) = self.sources.take_own(w) {
            return Some(self.source(i));
        }
        let n = self.deques.len();
        loop {
            let mut retry = false;
            for k in 1..n {
                let v = (w + k) % n;
                // Only from a deque worth it, unless this thread has waited long enough.
                if self.selective() && !any && !self.worth[v].load(Ordering::Relaxed) {
                    continue;
                }
                match self.deques[v].steal() {
                    Steal::Success(t) => {
                        self.common.steals[w].fetch_add(1, Ordering::Relaxed);
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if self.affinity {
                for k in 1..n {
                    if let Some(t) = self.mail[(w + k) % n].pop() {
                        self.common.steals[w].fetch_add(1, Ordering::Relaxed);
                        return Some(t);
                    }
                }
            }
            for k in 1..n {
                if let Some(i) = self.sources.steal((w + k) % n) {
                    self.common.steals[w].fetch_add(1, Ordering::Relaxed);
                    return Some(self.source(i));
                }
            }
            if !retry {
                return None;
            }
        }
    }

    #[inline]
    fn selective(&self) -> bool {
        self.selective.load(Ordering::Relaxed) & 1 != 0
    }

    /// Brings thread `w`'s account of its deque up to date after a push or a pop (owner
    /// only): the dominated costs of the tasks between its `top` and `bottom`, updated by the
    /// indices that moved (pushes and pops at the bottom, steals and the last pop at the
    /// top), and publishes whether they are worth a steal when that changes.
    #[inline]
    fn account(&self, w: usize) {
        let sel = self.selective.load(Ordering::Relaxed);
        if sel & 1 == 0 {
            return;
        }
        // SAFETY: the owner accounts for its deque only while it takes part in a cycle (after
        // a push in `place`, after a pop in `find`): the cycle's plan, published by `begin`,
        // lives until the cycle ends, which cannot happen while this thread still works or
        // looks for work in it.
        let plan = unsafe { self.common.plan() };
        let own = &self.pending[w];
        let d = &self.deques[w];
        let (t, b) = d.ends();
        let dom = |i: isize| {
            let u = d.slot_value(i) as usize;
            // A unit of another layout (after a plan change) counts as nothing.
            if u < plan.n_units() {
                plan.unit_dominated_cost(u)
            } else {
                0.0
            }
        };
        let (mut top, mut bottom) = (own.top.get(), own.bottom.get());
        let mut sum = own.sum.get();
        if own.synced.get() != sel {
            // Not kept while off: count the deque afresh.
            own.synced.set(sel);
            (top, bottom, sum) = (t, t, 0.0);
        }
        if t >= b {
            sum = 0.0;
        } else {
            // Popped at the bottom (indices below the old bottom, at or above the top).
            while bottom > b {
                bottom -= 1;
                if bottom >= top {
                    sum -= dom(bottom);
                }
            }
            // Taken at the top.
            while top < t {
                if top < bottom {
                    sum -= dom(top);
                }
                top += 1;
            }
            // Pushed.
            while bottom < b {
                sum += dom(bottom);
                bottom += 1;
            }
        }
        own.top.set(t);
        own.bottom.set(b);
        own.sum.set(sum);
        let min = f32::from_bits(self.min_steal.load(Ordering::Relaxed));
        let worth = sum >= min && t < b;
        if self.worth[w].load(Ordering::Relaxed) != worth {
            self.worth[w].store(worth, Ordering::Relaxed);
        }
    }

    /// The unit of source index `i`, just taken from a range.
    #[inline]
    fn source(&self, i: u32) -> u32 {
        // SAFETY: taking index `i` acquired the dealing of this cycle's ranges, which the
        // audio thread did after publishing the cycle's plan; the cycle (and the plan's
        // borrow) cannot end before this source has run.
        let plan = unsafe { self.common.plan() };
        plan.unit_sources_by_join()[i as usize]
    }

    /// Gives a unit made ready by thread `w` to its place: run next here (`next`), this
    /// thread's deque, or its home's mailbox.
    #[inline]
    fn place(&self, w: usize, s: u32, next: &mut Option<u32>) {
        if self.affinity {
            // Relaxed: a hint; the unit itself is handed over by the mailbox's or the deque's
            // own release/acquire.
            let h = self.home[s as usize].load(Ordering::Relaxed);
            // A full mailbox cannot happen (each unit is made ready once per cycle and a
            // mailbox holds as many as there are units); if it did, the unit stays here.
            if h != NO_HOME && h as usize != w && self.mail[h as usize].push(s).is_ok() {
                return;
            }
        }
        if next.is_none() {
            *next = Some(s);
        } else {
            self.deques[w].push(s);
            self.account(w);
        }
    }

    /// Runs `t` and then the chain of successors it makes ready. Returns whether this thread
    /// finished the cycle's last sink (the cycle is over: nothing is left to find).
    #[inline]
    fn run_chain(&self, w: usize, t: u32) -> bool {
        self.run_chain_with(w, t, |_| {})
    }

    /// [`WsState::run_chain`], calling `each` with every unit it runs.
    #[inline]
    fn run_chain_with(&self, w: usize, mut t: u32, mut each: impl FnMut(u32)) -> bool {
        loop {
            each(t);
            if self.affinity && self.home[t as usize].load(Ordering::Relaxed) != w as u32 {
                self.home[t as usize].store(w as u32, Ordering::Relaxed);
            }
            let mut next = None;
            // SAFETY: `t` was popped or stolen from a deque, or handed over by the previous
            // iteration: in each case the thread that made it ready (brought its counter to
            // zero, or the audio thread for a source) gave it to exactly one place.
            let last = unsafe { self.common.run(t, |s| self.place(w, s, &mut next)) };
            match next {
                Some(s) => t = s,
                None => return last,
            }
        }
    }

    fn serve(&self, w: usize) {
        loop {
            let t = match self.find(w, false) {
                Some(t) => t,
                None => {
                    if self.common.finished() {
                        return;
                    }
                    // Bounded: wait for work or the end, spinning then sleeping on `done`.
                    // A worker that sleeps here is woken at the end of the cycle; the others
                    // (and the audio thread) go on with the work. Small tasks of a busy owner
                    // are left to it for `patience`, then taken too (an owner that does not
                    // run, descheduled, cannot hold the cycle back longer).
                    let mut found = None;
                    let selective = self.selective();
                    let since = selective.then(Instant::now);
                    let mut any = !selective;
                    self.common.done.wait_until(self.steal_budget, || {
                        if self.common.finished() {
                            return true;
                        }
                        // Checked at every look: the spin ends after at least `patience`,
                        // so the looks before sleeping take any task.
                        any = any || since.is_none_or(|s| s.elapsed() >= self.patience);
                        found = self.find(w, any);
                        found.is_some()
                    });
                    match found {
                        Some(t) => t,
                        None => continue,
                    }
                }
            };
            // The thread that finished the last sink stops here: looking at the others'
            // deques and ranges once more would only fetch their lines.
            if self.run_chain(w, t) {
                return;
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
    /// Where the sources, in dealing order, are cut into ranges ([`source_cuts`]): the audio
    /// thread's own, recomputed when the plan's units change.
    cuts: Vec<u32>,
    /// The least work worth a steal (`ExecOptions::min_steal`), in ns.
    min_steal_ns: f64,
    /// Smoothed ns per unit of cost, measured on the first chain of one cycle in
    /// [`LEARN_EVERY`] (0: not measured yet).
    ns_per_cost: f64,
    /// Cycles until the next one whose first chain is timed (0: this one).
    learn_in: u32,
}

impl WorkStealing {
    /// An executor with `threads` threads (the caller plus `threads - 1` workers) for plans
    /// of up to `plan.n_units()` units; fails when the system refuses a worker thread.
    pub fn new(plan: &Plan, threads: usize, opts: &ExecOptions) -> Result<Self, StartError> {
        Self::build(plan, threads, opts, false)
    }

    /// The same with affinity (see the module documentation): a unit made ready by one thread
    /// is posted to the thread that ran it in the previous cycle.
    pub fn with_affinity(
        plan: &Plan,
        threads: usize,
        opts: &ExecOptions,
    ) -> Result<Self, StartError> {
        Self::build(plan, threads, opts, true)
    }

    fn build(
        plan: &Plan,
        threads: usize,
        opts: &ExecOptions,
        affinity: bool,
    ) -> Result<Self, StartError> {
        let threads = threads.max(1);
        let cap = plan.n_units().max(1);
        let state = WsState {
            common: Common::new(plan.n_slots().max(1), threads),
            deques: (0..threads).map(|_| Deque::with_capacity(cap)).collect(),
            mail: (0..threads)
                .map(|_| CachePadded::new(ArrayQueue::new(cap)))
                .collect(),
            home: (0..cap).map(|_| AtomicU32::new(NO_HOME)).collect(),
            sources: SourceRanges::new(threads),
            affinity: affinity && threads > 1,
            steal_budget: opts.steal_budget,
            worth: (0..threads)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
            pending: (0..threads)
                .map(|_| CachePadded::new(Pending::default()))
                .collect(),
            min_steal: CachePadded::new(AtomicU32::new(0)),
            selective: AtomicU32::new(0),
            patience: (opts.min_steal * 2).min(opts.steal_budget.time),
        };
        let pool = Pool::new(threads, state, opts)?;
        Ok(WorkStealing {
            pool,
            cuts: vec![0; threads - 1],
            min_steal_ns: if threads > 1 {
                opts.min_steal.as_nanos() as f64
            } else {
                0.0
            },
            ns_per_cost: 0.0,
            learn_in: 0,
        })
    }

    /// Updates the least dominated cost worth a steal from the time and cost of a cycle's
    /// first chain (run by the audio thread alone, with the executor's own per-unit work).
    /// Smoothed over cycles; published only when it moves by more than an eighth, so that
    /// the word stays in every core's cache.
    fn learn_costs(&mut self, plan: &Plan, time: Duration, cost: f32) {
        if cost <= 0.0 {
            return;
        }
        let per = time.as_nanos() as f64 / f64::from(cost);
        if per <= 0.0 {
            return;
        }
        // Smoothed; a cycle preempted in its first chain counts at most four times the
        // current estimate.
        self.ns_per_cost = if self.ns_per_cost == 0.0 {
            per
        } else {
            0.9 * self.ns_per_cost + 0.1 * per.min(4.0 * self.ns_per_cost)
        };
        let min = (self.min_steal_ns / self.ns_per_cost) as f32;
        let mean = plan.total_cost() / plan.n_units().max(1) as f64;
        self.set_selective(f64::from(min) > SELECTIVE_UNITS * mean);
        let st = self.pool.work();
        let old = f32::from_bits(st.min_steal.load(Ordering::Relaxed));
        if (min - old).abs() > old / 8.0 {
            st.min_steal.store(min.to_bits(), Ordering::Relaxed);
        }
    }

    /// Sets the least work a steal must bring ([`ExecOptions::min_steal`]) for the next
    /// cycles (zero: steal any task, as the plain protocol). Call between cycles.
    pub fn set_min_steal(&mut self, min: Duration) {
        self.min_steal_ns = min.as_nanos() as f64;
        self.ns_per_cost = 0.0;
        self.learn_in = 0;
        self.set_selective(false);
    }

    /// Turns the choice of steals by their work on or off (for every thread's next look).
    fn set_selective(&mut self, on: bool) {
        let st = self.pool.work();
        let cur = st.selective.load(Ordering::Relaxed);
        if (cur & 1 != 0) != on {
            st.min_steal.store(0, Ordering::Relaxed);
            st.selective.store(
                (cur & !1).wrapping_add(2) | u32::from(on),
                Ordering::Relaxed,
            );
        }
    }

    fn state(&self) -> &WsState {
        self.pool.work()
    }
}

impl Executor for WorkStealing {
    fn workers(&self) -> Option<&dyn Workers> {
        Some(&self.pool)
    }

    fn thread_steals(&self, out: &mut [u64]) {
        let steals = &self.pool.work().common.steals;
        for (w, o) in out.iter_mut().enumerate() {
            *o = steals.get(w).map_or(0, |s| s.load(Ordering::Relaxed));
        }
    }

    /// Tasks run by a thread other than the one that made them ready, since creation.
    fn steals(&self) -> u64 {
        self.pool.work().common.total_steals()
    }

    fn run_cycle(&mut self, plan: &mut Plan) {
        // The pool's field alone, so that `self.cuts` can be written below.
        let Some((_flush, st)) = crate::executors::begin_cycle(plan, &self.pool) else {
            return;
        };
        if !st.common.begin(plan) {
            return;
        }
        if st.common.layout_changed() {
            for h in st.home.iter() {
                h.store(NO_HOME, Ordering::Relaxed);
            }
            source_cuts(plan, &mut self.cuts);
        }
        // The audio thread runs the first source at once (no shared word touched: with a
        // single source, no other line is written at all); the others are dealt, one range
        // per thread, and a thread that runs out steals from the others' ranges (a worker
        // still waking up cannot hold back the cycle: its range is stolen from like its deque).
        st.sources.deal_at(1, &self.cuts, plan.unit_sources().len());
        let learn = self.min_steal_ns > 0.0 && {
            let now = self.learn_in == 0;
            self.learn_in = self.learn_in.checked_sub(1).unwrap_or(LEARN_EVERY - 1);
            now
        };
        self.pool.start_cycle();
        let st: &WsState = self.state();
        let first = plan.unit_sources_by_join()[0];
        // The first chain runs alone on this thread, before any steal: its time per unit
        // of cost tells what a steal would bring (`learn_costs`).
        let (last, learned) = if learn {
            let start = Instant::now();
            let mut cost = 0.0f32;
            let last = st.run_chain_with(0, first, |u| cost += plan.unit_cost(u as usize));
            (last, Some((start.elapsed(), cost)))
        } else {
            (st.run_chain(0, first), None)
        };
        if !last {
            st.serve(0);
        }
        st.common.wait_finished(st.steal_budget);
        if let Some((time, cost)) = learned {
            self.learn_costs(plan, time, cost);
        }
    }
}
