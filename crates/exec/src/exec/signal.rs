//! Waiting without losing a wake-up: bounded spinning, then sleeping on a futex.
//!
//! The protocol (written down with its proof sketch in `docs/executors.md`, "Sleep and wake"):
//! a waiter that decides to sleep first announces itself (`waiters += 1`, SeqCst), then
//! re-checks its condition (SeqCst), then sleeps on the futex word only while the word still
//! holds the value it read *before* checking. A signaller first changes the word (SeqCst),
//! then reads `waiters` (SeqCst) and makes the wake-up system call only if someone announced
//! itself. In the single total order of SeqCst operations, either the signaller's read of
//! `waiters` comes after the waiter's announcement (it wakes it), or the waiter's re-check
//! comes after the signaller's change (it does not sleep; and the futex itself refuses to
//! sleep on a changed word). No wake-up is lost; a signal with no sleeper costs no system call.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::sync::{spin_hint, yield_now, AtomicU32, Futex, Ordering};

/// A sequence word that a signaller bumps and that waiters wait on.
pub(crate) struct Signal {
    futex: CachePadded<Futex>,
    waiters: CachePadded<AtomicU32>,
}

/// How long to spin before sleeping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinBudget {
    /// Busy-wait iterations (with a CPU relax hint) before yielding.
    pub spins: u32,
    /// Total time to spin and yield before sleeping on the futex.
    pub time: Duration,
}

impl SpinBudget {
    /// Never spin: sleep at once.
    pub const NONE: SpinBudget = SpinBudget {
        spins: 0,
        time: Duration::ZERO,
    };
}

impl Signal {
    pub(crate) fn new() -> Self {
        Signal {
            futex: CachePadded::new(Futex::new(0)),
            waiters: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// The current sequence value; read it *before* checking the condition to wait for.
    #[inline]
    pub(crate) fn seq(&self) -> u32 {
        self.futex.word.load(Ordering::SeqCst)
    }

    /// Bumps the sequence and wakes every sleeper (one system call, only if there is one).
    #[inline]
    pub(crate) fn notify(&self) {
        self.futex.word.fetch_add(1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.futex.wake_all();
        }
    }

    /// Waits until `done()` holds: spins per `budget`, then sleeps until a `notify` changes
    /// the sequence. `done` must become true only together with (before) a `notify`, or be
    /// something the caller polls for (a task to steal) that the sleep may miss until the
    /// next `notify`. Once `done` returns true it is not called again.
    #[inline]
    pub(crate) fn wait_until(&self, budget: SpinBudget, mut done: impl FnMut() -> bool) {
        if done() {
            return;
        }
        self.wait_slow(budget, &mut done);
    }

    #[cold]
    fn wait_slow(&self, budget: SpinBudget, done: &mut dyn FnMut() -> bool) {
        let mut i: u32 = 0;
        let start = if budget.time > Duration::ZERO {
            Some(Instant::now())
        } else {
            None
        };
        if let Some(start) = start {
            loop {
                if done() {
                    return;
                }
                if i < budget.spins {
                    spin_hint();
                } else {
                    // More threads than cores: let the thread we wait for run.
                    yield_now();
                    if start.elapsed() >= budget.time {
                        break;
                    }
                }
                i = i.wrapping_add(1);
                if i % 256 == 0 && start.elapsed() >= budget.time {
                    break;
                }
            }
        }
        loop {
            let seq = self.seq();
            if done() {
                return;
            }
            self.waiters.fetch_add(1, Ordering::SeqCst);
            // `done` may consume something (a task): once it says true, return at once.
            if done() {
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            self.futex.wait(seq);
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
