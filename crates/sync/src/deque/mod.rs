//! The work-stealing deque: the Chase–Lev deque (Chase & Lev, "Dynamic circular work-stealing
//! deque", SPAA 2005) with the C11 memory orderings of Lê, Pop, Cohen, Zappa Nardelli,
//! "Correct and efficient work-stealing for weak memory models" (PPoPP 2013).
//!
//! The owner pushes and pops at the bottom (LIFO); thieves steal at the top (FIFO). One type,
//! [`Deque<T, B, F>`](Deque), serves every user through three parameters:
//! - `T`, the [`Item`]: a value kept in one atomic word (`u32` task indices, `*mut` job
//!   pointers), so that a thief that loses a race reads a stale item but never a torn one, and
//!   discards it (it uses nothing before its CAS on `top` wins);
//! - `B`, the [`Buffer`]: [`Fixed`] (the real-time executors: a capacity chosen when the
//!   executor is built, so that the deque never allocates after construction, and slots
//!   reached without indirection) or [`Growing`] (the task pool: a ring that doubles when
//!   full, with an optional limit on the items held);
//! - `F`, the [`Fences`] of the store-load race between `pop` and `steal`: [`Symmetric`]
//!   (two SeqCst fences, no system call: for real-time threads) or [`Asymmetric`] (a
//!   compiler fence for the owner and `membarrier` for the thieves).
//!
//! The loom models of both configurations are in `crates/sync/tests/loom.rs`
//! (`scripts/loom.sh`).
//!
//! # Example
//! ```
//! use fugue_sync::deque::{Asymmetric, Deque, Growing, Steal};
//!
//! // The executors' configuration (the defaults): fixed capacity, symmetric fences.
//! let d = Deque::<u32>::with_capacity(4);
//! d.push(1);
//! d.push(2);
//! assert_eq!(d.steal(), Steal::Success(1)); // a thief takes the oldest item
//! assert_eq!(d.pop(), Some(2)); // the owner the newest
//! assert_eq!(d.steal(), Steal::Empty);
//!
//! // The pool's: a growing ring (here from one slot, at most two items), asymmetric fences.
//! let mut jobs = [0u8; 3];
//! let p = jobs.as_mut_ptr();
//! let (a, b, c) = (p, p.wrapping_add(1), p.wrapping_add(2));
//! let g = Deque::<*mut u8, Growing<*mut u8>, Asymmetric>::growing(1, Some(2));
//! // SAFETY: this thread is the only one that pushes and pops.
//! unsafe {
//!     assert_eq!(g.push(a), Ok(true)); // it was empty
//!     assert_eq!(g.push(b), Ok(false)); // the ring grew
//!     assert_eq!(g.push(c), Err(c)); // the limit hands the item back
//!     assert_eq!(g.pop(), Some(b));
//! }
//! assert_eq!(g.steal(), Steal::Success(a));
//! ```

mod buffer;
mod fences;

use std::marker::PhantomData;

use crate::{fault, AtomicIsize, CachePadded, Ordering};

pub use buffer::{Buffer, Fixed, Growing, Item, Ring};
pub use fences::{Asymmetric, Fences, Symmetric};

/// What a steal attempt found. `Retry` is the spurious failure: another thread won the race
/// for the same item, and the deque may still hold work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// Nothing to steal.
    Empty,
    /// An item.
    Success(T),
    /// Lost a race; try again.
    Retry,
}

impl<T> Steal<T> {
    /// The same outcome with the item passed through `f`.
    #[inline]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Steal<U> {
        match self {
            Steal::Empty => Steal::Empty,
            Steal::Success(item) => Steal::Success(f(item)),
            Steal::Retry => Steal::Retry,
        }
    }
}

/// The deque. One owner thread calls `push` and `pop`; any thread calls
/// [`steal`](Self::steal). The defaults are the real-time executors' configuration: a fixed
/// capacity and symmetric fences.
pub struct Deque<T: Item, B: Buffer<T> = Fixed<T>, F: Fences = Symmetric> {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    buf: B,
    fences: PhantomData<fn() -> (T, F)>,
}

impl<T: Item, F: Fences> Deque<T, Fixed<T>, F> {
    /// A deque that can hold `capacity` items (rounded up to a power of two, at least 2). It
    /// never allocates again.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_buffer(Fixed::new(capacity))
    }

    /// The number of slots.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.ring.cap()
    }

    /// Pushes at the bottom. Owner only: pushes and pops from another thread at the same time
    /// lose or repeat items (they cannot corrupt memory: every slot is an atomic word).
    ///
    /// # Panics
    /// In debug builds, if the deque is full (its users size it so that it never is).
    #[inline]
    pub fn push(&self, item: T) {
        let b = self.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the thieves' successful CAS on `top`, so the slot we overwrite
        // has been read by them.
        let t = self.top.load(Ordering::Acquire);
        debug_assert!(
            ((b - t) as usize) < self.capacity(),
            "work-stealing deque overflow"
        );
        self.publish(&self.buf.ring, b, item);
    }

    /// Pops at the bottom (the most recently pushed item). Owner only, as for `push`.
    #[inline(always)]
    pub fn pop(&self) -> Option<T> {
        // SAFETY: a fixed ring is never replaced, so any thread may read it; a pop from
        // another thread than the owner loses or repeats items, as for `push`.
        unsafe { self.take() }
    }

    /// The item last stored in the slot of position `i`. Owner only (the owner is its only
    /// writer).
    #[inline]
    pub fn slot_value(&self, i: isize) -> T {
        self.buf.ring.load(i)
    }
}

impl<T: Item, F: Fences> Deque<T, Growing<T>, F> {
    /// A deque whose ring starts with `initial` slots (rounded up to a power of two), holding
    /// at most `limit` items (`None`: unbounded).
    pub fn growing(initial: usize, limit: Option<usize>) -> Self {
        Self::with_buffer(Growing::new(initial, limit))
    }

    /// Pushes at the bottom, growing the ring when it is full; hands the item back when the
    /// deque holds `limit` items. Returns whether the deque was empty before the push (as far
    /// as the owner could tell: a thief may have taken the last item an instant later, never
    /// the reverse).
    ///
    /// # Safety
    /// Owner only: no other thread calls `push` or `pop` on this deque concurrently.
    #[inline(always)]
    pub unsafe fn push(&self, item: T) -> Result<bool, T> {
        let b = self.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the thieves' successful CAS on `top` (SeqCst, so Release): the
        // slots below the `top` we read have been read by the thieves that took them, and
        // may be overwritten.
        let t = self.top.load(Ordering::Acquire);
        let len = (b - t) as usize;
        if len >= self.buf.limit {
            return Err(item);
        }
        // SAFETY: owner only (our contract).
        let mut ring = unsafe { self.buf.owner_ring() };
        if len >= ring.cap() {
            // SAFETY: owner only (our contract), as `grow` requires.
            ring = unsafe { self.buf.grow(t, b) };
        }
        self.publish(ring, b, item);
        Ok(len == 0)
    }

    /// Pops at the bottom (the most recently pushed item).
    ///
    /// # Safety
    /// Owner only, as for [`push`](Self::push).
    #[inline(always)]
    pub unsafe fn pop(&self) -> Option<T> {
        // SAFETY: owner only (our contract).
        unsafe { self.take() }
    }

    /// The current ring's slot count (it grows as needed; a hint).
    pub fn ring_capacity(&self) -> usize {
        self.buf.thief_ring().cap()
    }
}

impl<T: Item, B: Buffer<T>, F: Fences> Deque<T, B, F> {
    fn with_buffer(buf: B) -> Self {
        F::init();
        Deque {
            top: CachePadded::new(AtomicIsize::new(0)),
            bottom: CachePadded::new(AtomicIsize::new(0)),
            buf,
            fences: PhantomData,
        }
    }

    /// The end of a push: writes `item` into slot `b` of `ring` and moves `bottom` past it.
    #[inline(always)]
    fn publish(&self, ring: &Ring<T>, b: isize, item: T) {
        ring.store(b, item);
        // Release fence: the slot's write (and the ring's, after growth) happens-before a
        // thief's Acquire load of `bottom` that reads the new value.
        crate::fence(Ordering::Release);
        self.bottom.store(b + 1, Ordering::Relaxed);
    }

    /// Pops at the bottom (the most recently pushed item): the body of both `pop`s.
    ///
    /// # Safety
    /// As [`Buffer::owner_ring`]: called by the owner only.
    #[inline(always)]
    unsafe fn take(&self) -> Option<T> {
        // Empty already: `top` only grows and only the owner moves `bottom`, so a `top` read
        // at or past `bottom` stays so until the owner pushes. Returning here writes nothing:
        // a thief polling this deque keeps its copy of the `bottom` line, and the owner pays
        // neither the fence nor the line's transfer.
        let b = self.bottom.load(Ordering::Relaxed);
        if self.top.load(Ordering::Relaxed) >= b {
            return None;
        }
        let b = b - 1;
        // SAFETY: owner only (our contract).
        let ring = unsafe { self.buf.owner_ring() };
        self.bottom.store(b, Ordering::Relaxed);
        // The owner's half of the fence pair: orders the `bottom` store before the `top` load
        // against the thieves' half between their `top` and `bottom` loads (the store-load
        // race for the last item: a thief and the owner cannot both miss each other's claim).
        F::light();
        let t = self.top.load(Ordering::Relaxed);
        if t > b {
            self.bottom.store(b + 1, Ordering::Relaxed);
            return None;
        }
        let item = ring.load(b);
        if t == b {
            // The last item: race the thieves for it on `top`.
            let won = self
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            self.bottom.store(b + 1, Ordering::Relaxed);
            return won.then_some(item);
        }
        Some(item)
    }

    /// Steals at the top (the oldest item). Any thread.
    #[inline]
    pub fn steal(&self) -> Steal<T> {
        // Looks empty: no fence. (A stale `bottom` may hide an item pushed just now; the
        // thief looks again, as after any empty steal.)
        if self.is_empty() {
            return Steal::Empty;
        }
        // Acquire: pairs with a previous thief's or the owner's CAS on `top` (SeqCst).
        let t = self.top.load(Ordering::Acquire);
        // The thief's half of the fence pair: pairs with the owner's half in `pop`.
        F::heavy();
        // Acquire: pairs with the owner's Release fence in `push`: the slot is written.
        let b = self.bottom.load(Ordering::Acquire);
        if t >= b {
            return Steal::Empty;
        }
        let item = self.buf.thief_ring().load(t);
        if fault::active("deque-steal-no-cas") {
            // Broken variant: takes the item with a plain store, racing the owner's `pop`.
            self.top.store(t + 1, Ordering::SeqCst);
            return Steal::Success(item);
        }
        match self
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => Steal::Success(item),
            Err(_) => Steal::Retry,
        }
    }

    /// Whether the deque looks empty (a hint: it may change at once).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.top.load(Ordering::Relaxed) >= self.bottom.load(Ordering::Relaxed)
    }

    /// The number of items, as seen now (a hint).
    #[inline]
    pub fn len(&self) -> usize {
        let b = self.bottom.load(Ordering::Relaxed);
        let t = self.top.load(Ordering::Relaxed);
        (b - t).max(0) as usize
    }

    /// The owner's view of `(top, bottom)`. Owner only (`top` may grow at once: a hint).
    #[inline]
    pub fn ends(&self) -> (isize, isize) {
        (
            self.top.load(Ordering::Relaxed),
            self.bottom.load(Ordering::Relaxed),
        )
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
