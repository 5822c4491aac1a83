//! The `steal` policy's sleep/wake protocol: a thief that found no work for its spin budget
//! parks on a futex; a thread that makes work visible wakes one parked thief.
//!
//! # The protocol
//!
//! Shared state: `epoch` (a futex word, bumped by every wake-up) and `sleepers` (the number of
//! threads between [`Sleep::fall_asleep`]'s announcement and its return).
//!
//! A thief falling asleep (`fall_asleep(has_work)`):
//! 1. `e = epoch` (SeqCst);
//! 2. `sleepers += 1` (SeqCst), then a SeqCst fence `F2`;
//! 3. re-checks every queue (`has_work`); if one holds work, skips step 4;
//! 4. waits on the futex while `epoch == e`;
//! 5. `sleepers -= 1`, and returns to searching.
//!
//! A thread that made work visible (`work_pushed`, after its push):
//! 1. a SeqCst fence `F1`, then reads `sleepers`;
//! 2. if it is not zero: `epoch += 1` (SeqCst) and wakes one thread waiting on it.
//!
//! # Why no wake-up is lost (proof sketch)
//!
//! Take a push P and a thief T that sleeps in step 4 with P's item still queued. The fences
//! `F1` (after P) and `F2` (after T's increment) are ordered in the single total order of SeqCst
//! operations:
//! - if `F1` precedes `F2`, T's re-check (after `F2`) reads the queue as P left it or later
//!   (C++ [atomics.order]: a load after a SeqCst fence sees every store before an earlier
//!   SeqCst fence), so it sees the item (or sees it taken), and T does not sleep on it;
//! - if `F2` precedes `F1`, the pusher's read of `sleepers` sees T's increment (or a later
//!   value, and a later value that is zero means T already passed step 5 and searches again),
//!   so it bumps `epoch`. T read `e` before its increment, so either T's futex wait starts after
//!   the bump and returns at once (the word no longer equals `e`), or T is already waiting and
//!   the wake that follows the bump wakes it (or another sleeper, which then searches and finds
//!   the item; each push wakes one).
//!
//! Either way the item is seen by T or a thread is woken to search for it: no push is left
//! with every thief asleep. Shutdown bumps `epoch` and wakes everybody.
//!
//! # Local pushes
//!
//! A push from outside the pool (the injector) always runs `work_pushed`. A worker's push onto
//! its own deque runs it only when the deque was empty: the fence F1 costs as much as the rest
//! of a `join`, and a worker pushes millions of times per second. The pushes above the first
//! are covered as follows: a worker never sleeps while its own deque holds work (it pops it
//! first), so every queued item is run, by its owner if by nobody else, as soon as the owner
//! returns from the task it is running; and a thief that steals an item and sees more behind
//! it runs `work_pushed` itself, so that a burst of pushes wakes thieves one after another.
//! The wake-up for the first push is never lost (the proof above); the others add
//! parallelism, best effort. A task that blocks its worker until another task queued on that
//! same worker has run therefore relies on a thief being awake, as in rayon.
//!
//! The loom model in `loom_tests.rs` checks this with the pool's deque (`fugue_sync::deque`)
//! and fugue-sync's futex model, in which a lost wake-up is a deadlock.

use fugue_sync::{fence, futex, AtomicU32, CachePadded, Ordering};

/// The sleep state shared by the workers of one `steal` pool.
#[derive(Default)]
pub struct Sleep {
    epoch: CachePadded<AtomicU32>,
    sleepers: CachePadded<AtomicU32>,
}

impl Sleep {
    /// A state with nobody asleep.
    pub fn new() -> Self {
        Self::default()
    }

    /// Called after a push made work visible: wakes one sleeper if there is one.
    #[inline]
    pub fn work_pushed(&self) {
        // F1 (see the module doc): pairs with the sleepers' fence F2.
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake(1);
        }
    }

    /// Wakes every sleeper (shutdown).
    #[cold]
    pub fn wake_all(&self) {
        fence(Ordering::SeqCst);
        self.wake(i32::MAX);
    }

    #[cold]
    fn wake(&self, n: i32) {
        // SeqCst: a thief whose step-1 read sees this bump sees, through it, the push before
        // F1 (the RMW is a release that its SeqCst load acquires).
        self.epoch.fetch_add(1, Ordering::SeqCst);
        futex::wake(&self.epoch, n);
    }

    /// Parks the calling thread unless `has_work` finds work after the announcement; returns
    /// when woken (or spuriously, or at once if work was found). The caller searches again.
    pub fn fall_asleep(&self, has_work: impl FnOnce() -> bool) {
        // SeqCst: reads the latest bump before our announcement; see the module doc.
        let e = self.epoch.load(Ordering::SeqCst);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // F2: pairs with the pushers' fence F1.
        fence(Ordering::SeqCst);
        // The broken variant (a test-only fault switch, off outside loom builds) parks
        // without the re-check (step 3); the loom model must find the lost wake-up.
        if fugue_sync::fault::active("pool-sleep-no-recheck") || !has_work() {
            futex::wait(&self.epoch, e, None);
        }
        // SeqCst: keeps the count in the single order that the proof sketch reasons about.
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// The number of threads asleep or about to be (a hint).
    pub fn sleepers(&self) -> u32 {
        self.sleepers.load(Ordering::Relaxed)
    }
}
