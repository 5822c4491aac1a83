//! State shared by the activation-counter executors: the current plan, the activation
//! counters, the count of sinks left, and the end-of-cycle signal.
//!
//! Activation protocol ("Activation" in `docs/executors.md`): each task has a counter set to
//! its number of distinct predecessors. A task whose predecessor finishes decrements its
//! counter (AcqRel); the thread that brings it to zero owns the task: it is the only one that
//! will run it this cycle, and it sees every predecessor's writes (the release sequence of
//! the counter). Before running a task, its owner stores the initial count back (for the next
//! cycle: no predecessor can touch it again before this cycle has ended). Every task leads to
//! a sink; when the last sink finishes (`sinks_left` reaches zero, AcqRel) every task of the
//! cycle has finished, and the thread that finished it notifies the audio thread.

use crossbeam_utils::CachePadded;

use crate::runtime::signal::{Signal, SpinBudget};
use crate::Plan;
use fugue_sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// Cycle state of an activation-counter executor.
pub(crate) struct Common {
    plan: AtomicPtr<Plan>,
    /// The layout of the plan the counters were set for (written and read by the audio
    /// thread only, in `begin`).
    layout: AtomicU64,
    pub counters: Box<[CachePadded<AtomicU32>]>,
    pub sinks_left: CachePadded<AtomicU32>,
    pub done: Signal,
    /// Whether the last `begin` saw a new plan or layout (re-initialised the counters).
    changed: AtomicBool,
    /// Number of tasks run from another thread's queue, per worker (statistics).
    pub steals: Box<[CachePadded<AtomicU64>]>,
}

impl Common {
    pub fn new(capacity: usize, threads: usize) -> Self {
        Common {
            plan: AtomicPtr::new(std::ptr::null_mut()),
            layout: AtomicU64::new(0),
            counters: (0..capacity)
                .map(|_| CachePadded::new(AtomicU32::new(0)))
                .collect(),
            sinks_left: CachePadded::new(AtomicU32::new(0)),
            done: Signal::new(),
            changed: AtomicBool::new(false),
            steals: crate::runtime::padded_zeros(threads),
        }
    }

    /// Prepares a cycle of `plan` (audio thread, before starting the workers): publishes the
    /// plan, and re-initialises the counters when the plan is not the one of the last cycle.
    /// Returns whether the plan has a unit to run (an empty plan's cycle is over at once).
    ///
    /// # Panics
    /// If the plan has more tasks than the executor was built for.
    #[must_use]
    pub fn begin(&self, plan: &Plan) -> bool {
        assert!(
            plan.n_slots() <= self.counters.len(),
            "plan larger than the executor was built for"
        );
        let p = plan as *const Plan as *mut Plan;
        if self.plan.load(Ordering::Relaxed) != p
            || self.layout.load(Ordering::Relaxed) != plan.layout_id()
        {
            for c in 0..plan.n_slots() {
                self.counters[c].store(plan.slot_initial(c), Ordering::Relaxed);
            }
            self.layout.store(plan.layout_id(), Ordering::Relaxed);
            self.changed.store(true, Ordering::Relaxed);
            // Relaxed: published to the workers by the SeqCst epoch bump that follows.
            self.plan.store(p, Ordering::Relaxed);
        } else if self.changed.load(Ordering::Relaxed) {
            // Written only when it changes: the line also holds the plan pointer, which every
            // thread reads for every task.
            self.changed.store(false, Ordering::Relaxed);
        }
        // Relaxed: published by the epoch bump (SeqCst) that starts the cycle.
        self.sinks_left
            .store(plan.unit_sinks().len() as u32, Ordering::Relaxed);
        // A plan with units has a source unit (the unit graph has no cycle).
        !plan.unit_sources().is_empty()
    }

    /// Whether the last [`Common::begin`] re-initialised the counters for a new plan or layout
    /// (audio thread, before starting the workers).
    pub fn layout_changed(&self) -> bool {
        self.changed.load(Ordering::Relaxed)
    }

    /// The plan of the current cycle.
    ///
    /// # Safety
    /// Call only while running a task of the current cycle, obtained through the activation
    /// protocol (which orders the plan's publication before it).
    #[inline]
    pub unsafe fn plan(&self) -> &Plan {
        // SAFETY: the pointer was stored by `begin` from a `&Plan` that the audio thread holds
        // by `&mut` until the cycle ends, which cannot happen before the task the caller is
        // running has finished.
        unsafe { &*self.plan.load(Ordering::Acquire) }
    }

    /// Runs task `t` (owned by the caller through the activation protocol), resets its counter
    /// for the next cycle, and calls `ready` for each successor it made ready. Returns whether
    /// it finished the cycle's last sink.
    ///
    /// # Safety
    /// The caller owns task `t` for this cycle: its counter reached zero by the caller's
    /// decrement (or it is a source handed out once by the audio thread).
    #[inline]
    pub unsafe fn run(&self, t: u32, mut ready: impl FnMut(u32)) -> bool {
        // SAFETY: we are running a task of this cycle.
        let plan = unsafe { self.plan() };
        let i = t as usize;
        // A task with one predecessor is never counted (see below): nothing to reset.
        if plan.unit_count(i) > 1 && !fugue_sync::fault::active("activation-no-reset") {
            self.counters[i].store(plan.slot_initial(i), Ordering::Relaxed);
        }
        // SAFETY: activation protocol: all predecessors finished and their writes are visible
        // (we, or the thread that handed us `t`, acquired the counter's release sequence); we
        // alone own `t`, and its successors cannot run before we decrement their counters.
        unsafe { plan.run_unit(i) };
        let succ = plan.unit_successors(i);
        if succ.is_empty() {
            // AcqRel: Release publishes this sink's work to the audio thread; Acquire chains
            // the other sinks' releases so the last one sees all.
            if self.sinks_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.done.notify();
                return true;
            }
            return false;
        }
        let slots = plan.unit_succ_slots(i);
        for (k, &s) in succ.iter().enumerate() {
            // A successor whose only predecessor is `t` is ready now: no counter to touch (most
            // tasks of chains and trees). It runs on this thread, or reaches another one
            // through a deque or the shared stack, whose release/acquire publishes `t`'s
            // outputs.
            if plan.unit_count(s as usize) == 1 {
                ready(s);
                continue;
            }
            // The successor's own slot, or (wide join) a group slot of it: the thread that
            // brings a group to zero resets it for the next cycle (every member has counted
            // down: nobody touches it again this cycle) and counts down the parent.
            let mut c = slots[k] as usize;
            loop {
                // AcqRel: Release publishes task `t`'s outputs (and, up the tree, those the
                // group's last member acquired); Acquire (for the thread reaching zero) sees
                // every other predecessor's.
                let order = if fugue_sync::fault::active("activation-relaxed") {
                    Ordering::Relaxed
                } else {
                    Ordering::AcqRel
                };
                if self.counters[c].fetch_sub(1, order) != 1 {
                    break;
                }
                let parent = plan.slot_parent(c);
                if parent == crate::NO_SLOT {
                    ready(s);
                    break;
                }
                self.counters[c].store(plan.slot_initial(c), Ordering::Relaxed);
                c = parent as usize;
            }
        }
        false
    }

    /// Whether the cycle's sinks have all finished.
    #[inline]
    pub fn finished(&self) -> bool {
        // Acquire: pairs with the AcqRel decrements of `sinks_left`.
        self.sinks_left.load(Ordering::Acquire) == 0
    }

    /// The audio thread's wait for the end of the cycle: bounded spin, then sleep.
    #[inline]
    pub fn wait_finished(&self, budget: SpinBudget) {
        self.done.wait_until(budget, || self.finished());
    }

    /// Total steals so far.
    pub fn total_steals(&self) -> u64 {
        self.steals.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}
