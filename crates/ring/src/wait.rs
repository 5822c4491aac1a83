//! Waiting: the spin / yield / park strategies and the parking protocol (docs/ring.md,
//! "Parking"). Labels [C1]..[C3] (consumer) and [P1]..[P2] (producer) refer to that proof.

use std::time::Instant;

use crate::region::{Control, Strategy};
use fugue_sync::{spin_hint, yield_now, AtomicU32, Ordering};

/// Spin iterations before `Yield` starts yielding and before `Park` starts parking.
const SPIN_STEPS: u32 = 6;
/// Yield iterations (after spinning) before `Park` sleeps.
const YIELD_STEPS: u32 = 10;

/// One waiting episode of one thread: how far it has backed off.
pub(crate) struct Waiter {
    strategy: Strategy,
    step: u32,
}

/// Which side is waiting, and so which counter it sleeps on.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    /// The consumer waits for a commit.
    Consumer,
    /// A producer waits for a release.
    Producer,
}

impl Waiter {
    pub(crate) fn new(strategy: Strategy) -> Waiter {
        Waiter { strategy, step: 0 }
    }

    /// Wait a little. `done` re-checks the caller's condition right before sleeping (it is
    /// the [C3] check of the parking protocol); `deadline` bounds any sleep.
    #[inline]
    pub(crate) fn pause(
        &mut self,
        control: &Control,
        side: Side,
        done: impl Fn() -> bool,
        deadline: Option<Instant>,
    ) {
        // Under loom every wait is one yield to the model's scheduler: the back-off counts
        // would only multiply the explored branches.
        #[cfg(loom)]
        {
            let _ = (control, side, &done, deadline);
            yield_now();
            return;
        }
        #[allow(unreachable_code)]
        match self.strategy {
            Strategy::Spin => spin_hint(),
            Strategy::Yield => {
                if self.step < spin_steps(control, side) {
                    for _ in 0..(1u32 << self.step) {
                        spin_hint();
                    }
                    self.step += 1;
                } else {
                    yield_now();
                }
            }
            Strategy::Park => {
                if self.step < spin_steps(control, side) {
                    for _ in 0..(1u32 << self.step) {
                        spin_hint();
                    }
                } else if self.step < SPIN_STEPS + YIELD_STEPS {
                    yield_now();
                } else {
                    park(control, side, done, deadline);
                }
                self.step = self.step.saturating_add(1);
            }
        }
    }
}

/// How many doubling spin rounds a waiter of `side` makes before yielding. With more threads
/// than cores (producers + consumer > cores), the thread a waiter waits for is often not
/// running: the item it needs belongs to one producer, or its slot to the consumer, and a
/// spinning waiter only holds a core that thread needs. Producers then yield at once and the
/// consumer spins two short rounds (measurement: `bench-results/ring/HISTORY.md`); otherwise
/// both spin `SPIN_STEPS` rounds.
#[inline]
fn spin_steps(control: &Control, side: Side) -> u32 {
    // Relaxed: a hint; the count changes only when handles are made or dropped.
    let threads = control.producers.load(Ordering::Relaxed) as usize + 1;
    if threads <= cores() {
        return SPIN_STEPS;
    }
    match side {
        Side::Producer => 0,
        Side::Consumer => 2,
    }
}

/// Cores this process may use (read once).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Sleep until the other side signals (or the deadline passes, or spuriously).
#[cold]
fn park(control: &Control, side: Side, done: impl Fn() -> bool, deadline: Option<Instant>) {
    let timeout = match deadline {
        Some(d) => match d.checked_duration_since(Instant::now()) {
            Some(t) if !t.is_zero() => Some(t),
            _ => return,
        },
        None => None,
    };
    match side {
        Side::Consumer => {
            // [C1] SeqCst: in the single total order before [C2]; a producer's [P2] that
            // comes after it reads 1 and wakes us.
            control.consumer_sleeping.store(1, Ordering::SeqCst);
            // [C2] SeqCst load: pairs with the producer's [P1] fetch_add (release); reading
            // its value makes the commit before it visible to [C3].
            let seen = control.commits.load(Ordering::SeqCst);
            if !done() {
                sleep(&control.commits, seen, timeout);
            }
            control.consumer_sleeping.store(0, Ordering::SeqCst);
        }
        Side::Producer => {
            // [C1]/[C2] with the roles swapped: producers count themselves in, the consumer's
            // release bumps `releases` and wakes everyone when the count is not zero.
            control.producers_sleeping.fetch_add(1, Ordering::SeqCst);
            let seen = control.releases.load(Ordering::SeqCst);
            if !done() {
                sleep(&control.releases, seen, timeout);
            }
            control.producers_sleeping.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn sleep(word: &AtomicU32, seen: u32, timeout: Option<std::time::Duration>) {
    fugue_sync::futex::wait_shared(word, seen, timeout);
}

fn wake(word: &AtomicU32, count: i32) {
    fugue_sync::futex::wake_shared(word, count);
}

/// After a commit (Park mode) or when a producer handle goes away: wake the consumer if it
/// may be asleep.
#[inline]
pub(crate) fn notify_consumer(control: &Control) {
    // [P1] SeqCst RMW: releases the commit stored before it to the consumer's [C2].
    control.commits.fetch_add(1, Ordering::SeqCst);
    // [P2] SeqCst: after [P1] in the total order; reads the consumer's [C1] if [C1] came
    // first, otherwise the consumer's [C2] reads [P1] and [C3] sees the commit.
    if control.consumer_sleeping.load(Ordering::SeqCst) != 0 {
        wake(&control.commits, 1);
    }
}

/// After a release (Park mode) or when the consumer goes away: wake the producers that may
/// be asleep.
#[inline]
pub(crate) fn notify_producers(control: &Control) {
    // Same pairing as `notify_consumer`, with `releases` and `producers_sleeping`.
    control.releases.fetch_add(1, Ordering::SeqCst);
    if control.producers_sleeping.load(Ordering::SeqCst) != 0 {
        wake(&control.releases, i32::MAX);
    }
}
