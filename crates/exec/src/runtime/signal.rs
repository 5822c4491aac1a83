//! Waiting without losing a wake-up: bounded spinning, then sleeping on a futex.
//!
//! The protocol (written down with its proof sketch in `docs/executors.md`, "Sleep and wake")
//! uses read-modify-write operations on one word only, so its correctness rests on that
//! word's modification order, not on sequentially consistent store-load ordering. The word
//! holds a sequence number (bits 1..) and a "someone sleeps" flag (bit 0).
//! - A waiter that decides to sleep sets the flag (`fetch_or`, AcqRel), re-checks its
//!   condition, then sleeps on the futex only while the word still equals the value it made
//!   (sequence and flag).
//! - A signaller first makes the condition true, then advances the sequence and clears the
//!   flag in one compare-and-swap (AcqRel); if the flag was set it wakes every sleeper (one
//!   system call; none when nobody sleeps).
//!
//! If the waiter's `fetch_or` precedes the signaller's CAS in the word's modification order,
//! the CAS sees the flag and wakes it (and a futex wait that comes after the CAS fails at
//! once, the word having changed). If it follows, the `fetch_or` reads the CAS's value and so
//! acquires everything the signaller did before: the re-check sees the condition true.

use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use fugue_sync::{spin_hint, yield_now, Futex, Ordering};

const SLEEPING: u32 = 1;

/// A sequence word that a signaller bumps and that waiters wait on.
pub(crate) struct Signal {
    futex: CachePadded<Futex>,
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
    /// Polls `poll` until it returns `Some`, spinning (CPU relax hint) for `spins` iterations
    /// and then yielding, for at most `time`; `None` when the time ran out first.
    #[inline]
    pub(crate) fn spin<R>(self, mut poll: impl FnMut() -> Option<R>) -> Option<R> {
        if self.time == Duration::ZERO {
            return None;
        }
        let start = Instant::now();
        let mut i: u32 = 0;
        loop {
            if let Some(r) = poll() {
                return Some(r);
            }
            if i < self.spins {
                spin_hint();
            } else {
                // More threads than cores: let the thread we wait for run.
                yield_now();
                if start.elapsed() >= self.time {
                    return None;
                }
            }
            i = i.wrapping_add(1);
            if i.is_multiple_of(256) && start.elapsed() >= self.time {
                return None;
            }
        }
    }

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
        }
    }

    /// The current sequence value.
    #[inline]
    pub(crate) fn seq(&self) -> u32 {
        // Acquire: pairs with the AcqRel CAS of `notify`.
        self.futex.word.load(Ordering::Acquire) >> 1
    }

    /// Advances the sequence and wakes every sleeper (one system call, only if there is one).
    /// Make the waiters' condition true before calling this.
    #[inline]
    pub(crate) fn notify(&self) {
        let mut cur = self.futex.word.load(Ordering::Relaxed);
        loop {
            let next = (cur & !SLEEPING).wrapping_add(2);
            // AcqRel: Release publishes what the signaller did before (the condition); Acquire
            // pairs with the waiters' flag-setting `fetch_or`.
            match self.futex.word.compare_exchange_weak(
                cur,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        if cur & SLEEPING != 0 {
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

    /// Sleeps until `done()` holds or the [`now_ns`](crate::trace::now_ns) clock reaches
    /// `deadline_ns`, whichever comes first; returns whether `done()` held. No spinning: the
    /// sleep is the futex wait of [`Signal::wait_until`], with a timeout, so a `notify` ends
    /// it at once. A wait that times out leaves the word's flag set: the next `notify` makes
    /// one wake-up call that finds nobody (a sleeper of the same signal may need it).
    pub(crate) fn sleep_until(&self, deadline_ns: u64, mut done: impl FnMut() -> bool) -> bool {
        loop {
            if done() {
                return true;
            }
            // AcqRel: as in `wait_slow`.
            let v = self.futex.word.fetch_or(SLEEPING, Ordering::AcqRel) | SLEEPING;
            if done() {
                return true;
            }
            let now = crate::trace::now_ns();
            if now >= deadline_ns {
                return false;
            }
            self.futex
                .wait_timeout(v, Duration::from_nanos(deadline_ns - now));
            // Under loom the timed wait is one model step: the timeout may fire at any point.
            #[cfg(loom)]
            return done();
        }
    }

    #[cold]
    fn wait_slow(&self, budget: SpinBudget, done: &mut dyn FnMut() -> bool) {
        if budget.spin(|| done().then_some(())).is_some() {
            return;
        }
        loop {
            // The broken variant checks the condition before announcing itself: a signal
            // between the check and the `fetch_or` is lost.
            if fugue_sync::fault::active("signal-check-before-flag") && done() {
                return;
            }
            // AcqRel: Release so that the signaller's CAS that reads our flag also orders our
            // earlier operations; Acquire pairs with a CAS we may read (see the module doc).
            let v = self.futex.word.fetch_or(SLEEPING, Ordering::AcqRel) | SLEEPING;
            if fugue_sync::fault::active("signal-check-before-flag") {
                self.futex.wait(v);
                continue;
            }
            // `done` may consume something (a task): once it says true, return at once.
            if done() {
                return;
            }
            self.futex.wait(v);
        }
    }
}
