//! Waiting: the spin / yield / park strategies and the parking protocol (docs/ring.md,
//! "Parking"). Labels [C1]..[C3] and [F] (the sleeper) and [S1]..[S3] (the signaller) refer
//! to that proof.

use std::time::Instant;

use crate::region::{Control, Strategy};
use fugue_sync::{fence, spin_hint, yield_now, AtomicU32, Ordering};

/// Spin iterations before `Yield` starts yielding and before `Park` starts parking.
const SPIN_STEPS: u32 = 6;
/// Yield iterations (after spinning) before `Park` sleeps.
const YIELD_STEPS: u32 = 10;

/// One waiting episode of one thread: how far it has backed off.
pub(crate) struct Waiter {
    strategy: Strategy,
    step: u32,
}

/// Which side is waiting, and so which word it sleeps on.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    /// The consumer waits for the commit of item `want`.
    Consumer {
        /// The item it waits for.
        want: u64,
    },
    /// A producer waits for the release of `slot`.
    Producer {
        /// The slot it waits for.
        slot: usize,
    },
}

impl Waiter {
    pub(crate) fn new(strategy: Strategy) -> Waiter {
        Waiter { strategy, step: 0 }
    }

    /// Wait a little. `done` re-checks the caller's condition right before sleeping (it is
    /// the [C2] check of the parking protocol); `deadline` bounds any sleep.
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
        Side::Producer { .. } => 0,
        Side::Consumer { .. } => 2,
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
    // The consumer sleeps on `commits` (after naming the item it waits for), a producer on
    // the release word of its slot.
    let word = match side {
        Side::Consumer { want } => {
            // Relaxed: ordered before the signallers' reads by the fence [F] below.
            control.wanted.store(want, Ordering::Relaxed);
            &*control.commits
        }
        Side::Producer { slot } => control.release_word(slot),
    };
    // [C1] Announce the sleeper (bit 0) and read the word it sleeps on.
    let seen = word.fetch_or(SLEEPING, Ordering::Relaxed) | SLEEPING;
    // [F] Pairs with the signaller's fence [S1]: either the signaller's read [S2] sees [C1]
    // (and `wanted`), or the re-check [C2] sees the commit or release made before [S1].
    fence(Ordering::SeqCst);
    // [C2] The caller's condition, re-checked; the broken variant sleeps without it.
    if fugue_sync::fault::active("ring-park-no-recheck") || !done() {
        // [C3] Returns at once if the word has changed since [C1].
        fugue_sync::futex::wait_shared(word, seen, timeout);
    }
}

/// The sleeping flag in bit 0 of `commits` and of the release words; their count is in
/// bits 1.. .
const SLEEPING: u32 = 1;

/// After a commit of item `n` (Park mode): wake the consumer if it sleeps waiting for `n`.
/// The commit's store comes before; no read-modify-write unless the consumer sleeps.
#[inline]
pub(crate) fn notify_consumer(control: &Control, n: u64) {
    // [S1] Pairs with the sleeper's fence [F].
    fence(Ordering::SeqCst);
    // [S2] Relaxed: the fences order these reads after the sleeper's [C1] and `wanted`
    // store, or the sleeper's re-check after our commit.
    if control.commits.load(Ordering::Relaxed) & SLEEPING != 0
        && control.wanted.load(Ordering::Relaxed) == n
    {
        wake_consumer(control);
    }
}

/// When a producer handle goes away: wake the consumer if it may be asleep (it may be
/// waiting for an item that will never come).
#[inline]
pub(crate) fn notify_consumer_any(control: &Control) {
    fence(Ordering::SeqCst);
    if control.commits.load(Ordering::Relaxed) & SLEEPING != 0 {
        wake_consumer(control);
    }
}

/// [S3] Clears the consumer's flag, and wakes it if this caller cleared it (several
/// producers may race here; the only sleeper is the consumer, which cannot announce itself
/// again while it sleeps, so clearing the flag is enough to change the word).
#[cold]
fn wake_consumer(control: &Control) {
    let prev = control.commits.fetch_and(!SLEEPING, Ordering::Relaxed);
    if prev & SLEEPING != 0 {
        fugue_sync::futex::wake_shared(&control.commits, 1);
    }
}

/// After the release of `slot` (Park mode): wake the producers sleeping on its word. Only
/// the consumer calls this, after the release's store.
#[inline]
pub(crate) fn notify_producers(control: &Control, slot: usize) {
    // [S1] Pairs with the sleeper's fence [F]; the broken variant reads without it.
    if !fugue_sync::fault::active("ring-park-no-fence") {
        fence(Ordering::SeqCst);
    }
    let word = control.release_word(slot);
    // [S2]
    if word.load(Ordering::Relaxed) & SLEEPING != 0 {
        wake_producers(word);
    }
}

/// When the consumer goes away: wake every producer that may be asleep.
#[cold]
pub(crate) fn notify_all_producers(control: &Control) {
    fence(Ordering::SeqCst);
    for word in &control.releases {
        if word.load(Ordering::Relaxed) & SLEEPING != 0 {
            wake_producers(word);
        }
    }
}

/// [S3] Clears the flag and bumps the count in one step (the flag is set and only this
/// consumer clears it, so adding 1 carries bit 0 into the count), then wakes every sleeper on
/// the word. The count makes the word differ from every value a sleeper announced before,
/// even if another producer sets the flag again at once.
#[cold]
fn wake_producers(word: &AtomicU32) {
    word.fetch_add(SLEEPING, Ordering::Relaxed);
    fugue_sync::futex::wake_shared(word, i32::MAX);
}
