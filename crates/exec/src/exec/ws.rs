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
//! 2000) and of TBB's affinity mailboxes, applied across cycles of the same graph. Measured on
//! a 2-vCPU virtual machine it kept the placement stable (about one home change per cycle on a
//! 76-node diamond) without making cycles faster there: the cost on that machine is the
//! protocol's own traffic between the cores (bench-results/exec/README.md).

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;

use crate::exec::common::Common;
use crate::exec::deque::{Deque, Steal};
use crate::exec::pool::{Pool, Work};
use crate::exec::signal::SpinBudget;
use crate::exec::sources::{source_cuts, SourceRanges};
use crate::exec::ExecOptions;
use crate::sync::{AtomicU32, Ordering};
use crate::{Executor, Plan};

/// No home yet.
const NO_HOME: u32 = u32::MAX;

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
}

impl WsState {
    /// Finds a task: own deque first (LIFO), then own mailbox, then own range of sources,
    /// then the others' deques (FIFO), their mailboxes and their ranges of sources (from the
    /// back), round robin from the next worker.
    #[inline]
    fn find(&self, w: usize) -> Option<u32> {
        if let Some(t) = self.deques[w].pop() {
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
        }
    }

    /// Runs `t` and then the chain of successors it makes ready. Returns whether this thread
    /// finished the cycle's last sink (the cycle is over: nothing is left to find).
    #[inline]
    fn run_chain(&self, w: usize, mut t: u32) -> bool {
        loop {
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
            let t = match self.find(w) {
                Some(t) => t,
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
}

impl WorkStealing {
    /// An executor with `threads` threads (the caller plus `threads - 1` workers) for plans
    /// of up to `plan.n_units()` units.
    pub fn new(plan: &Plan, threads: usize, opts: &ExecOptions) -> Self {
        Self::build(plan, threads, opts, false)
    }

    /// The same with affinity (see the module documentation): a unit made ready by one thread
    /// is posted to the thread that ran it in the previous cycle.
    pub fn with_affinity(plan: &Plan, threads: usize, opts: &ExecOptions) -> Self {
        Self::build(plan, threads, opts, true)
    }

    fn build(plan: &Plan, threads: usize, opts: &ExecOptions, affinity: bool) -> Self {
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
        };
        let pool = Pool::new(threads, state, opts.idle_budget, &opts.placement);
        WorkStealing {
            pool,
            cuts: vec![0; threads - 1],
        }
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
        if crate::exec::run_if_sequential(plan) {
            return;
        }
        // The pool's field alone, so that `self.cuts` can be written below.
        let st: &WsState = self.pool.work();
        assert!(
            st.common.begin(plan),
            "plan larger than the executor was built for"
        );
        if plan.unit_sources().is_empty() {
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
        self.pool.start_cycle();
        let st: &WsState = self.state();
        let first = plan.unit_sources_by_join()[0];
        if !st.run_chain(0, first) {
            st.serve(0);
        }
        st.common.wait_finished(st.steal_budget);
    }
}
