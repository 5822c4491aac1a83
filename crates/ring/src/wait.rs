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
        // Under loom the back-off counts would only multiply the explored branches: `Spin`
        // and `Yield` wait by one yield to the model's scheduler, and `Park` parks at once
        // with the real protocol on the modelled futex (untimed: loom has no clock, and a
        // lost wake-up must show as a deadlock, not as a timeout).
        #[cfg(loom)]
        {
            match self.strategy {
                Strategy::Park if deadline.is_none() => park(control, side, done, None),
                _ => yield_now(),
            }
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

/// Reads what the waits need once (the core count, whose first reading allocates), so that
/// no wait does it on the real-time path: called where rings and handles are made.
pub(crate) fn prepare() {
    cores();
}

/// Cores this process may use (read once, by [`prepare`]).
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
    // The consumer sleeps on `commits`, producers on `releases`.
    let word = match side {
        Side::Consumer => &control.commits,
        Side::Producer => &control.releases,
    };
    // [C1] One read-modify-write announces the sleeper (bit 0) and reads the count it sleeps
    // on. AcqRel: if a signaller's [P1] came first, this reads its value (or a later one) and
    // acquires what came before it, so that [C2] sees the commit or release.
    let seen = word.fetch_or(SLEEPING, Ordering::AcqRel) | SLEEPING;
    // [C2] The caller's condition, re-checked; the broken variant sleeps without it.
    if fugue_sync::fault::active("ring-park-no-recheck") || !done() {
        // [C3] Returns at once if the word has changed since [C1].
        fugue_sync::futex::wait_shared(word, seen, timeout);
    }
}

/// The sleeping flag in bit 0 of `commits` and `releases`; their count is in bits 1.. .
const SLEEPING: u32 = 1;

/// [P1] Advances `word`'s count (a read-modify-write, after the commit or release it
/// announces) and [P2], if a sleeper announced itself, clears the flag and wakes up to `count`
/// sleepers.
#[inline]
fn signal(word: &AtomicU32, count: i32) {
    // AcqRel: Release publishes the commit or release made before; a sleeper's [C1] that
    // reads this value (or a later one) acquires it.
    let prev = word.fetch_add(2, Ordering::AcqRel);
    if prev & SLEEPING != 0 {
        // Relaxed: the flag only decides who calls wake; a sleeper that sets it again in
        // between sleeps on a changed word and returns at once.
        word.fetch_and(!SLEEPING, Ordering::Relaxed);
        fugue_sync::futex::wake_shared(word, count);
    }
}

/// After a commit (Park mode) or when a producer handle goes away: wake the consumer if it
/// may be asleep.
#[inline]
pub(crate) fn notify_consumer(control: &Control) {
    signal(&control.commits, 1);
}

/// After a release (Park mode) or when the consumer goes away: wake the producers that may
/// be asleep.
#[inline]
pub(crate) fn notify_producers(control: &Control) {
    signal(&control.releases, i32::MAX);
}
