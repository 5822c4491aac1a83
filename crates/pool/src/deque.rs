//! The `steal` policy's per-thread deque: the Chase–Lev deque (Chase & Lev, "Dynamic circular
//! work-stealing deque", SPAA 2005) with the C11 memory orderings of Lê, Pop, Cohen,
//! Zappa Nardelli, "Correct and efficient work-stealing for weak memory models" (PPoPP 2013),
//! and a growable ring.
//!
//! The owner pushes and pops at the bottom (LIFO); thieves steal at the top (FIFO). Items are
//! raw pointers stored in atomics, so a thief that loses a race may read a stale pointer but
//! never a torn one, and discards it (it dereferences nothing before its CAS on `top` wins).
//!
//! Growth: when a push finds the ring full, the owner copies the live items into a ring twice
//! as large and publishes it. The old ring is not freed while the deque lives (a thief that
//! read the old pointer may still read a slot of it); it is kept in a list that only the owner
//! touches and freed with the deque. The rings' sizes double, so the retired ones together take
//! less memory than the current one. An optional `limit` bounds the number of items: a push
//! beyond it hands the item back.

use std::cell::UnsafeCell;

use fugue_sync::{fence, AtomicIsize, AtomicPtr, Ordering};

use crate::util::CachePadded;

/// What a steal attempt found. `Retry` is the spurious failure: another thread won the race
/// for the same item, and the deque may still hold work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal<T> {
    /// Nothing to steal.
    Empty,
    /// An item.
    Success(*mut T),
    /// Lost a race; try again.
    Retry,
}

/// One ring: `mask + 1` slots, a power of two.
struct Ring<T> {
    slots: Box<[AtomicPtr<T>]>,
    mask: usize,
}

impl<T> Ring<T> {
    fn new(cap: usize) -> Box<Self> {
        debug_assert!(cap.is_power_of_two());
        Box::new(Ring {
            slots: (0..cap)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            mask: cap - 1,
        })
    }

    #[inline]
    fn slot(&self, i: isize) -> &AtomicPtr<T> {
        let i = i as usize & self.mask;
        debug_assert!(i < self.slots.len());
        // SAFETY: `mask + 1 == slots.len()` (built so in `new`), so `i <= mask` is in bounds.
        unsafe { self.slots.get_unchecked(i) }
    }

    #[inline]
    fn cap(&self) -> usize {
        self.mask + 1
    }
}

/// The deque. One owner thread calls [`push`](Self::push) and [`pop`](Self::pop); any
/// thread calls [`steal`](Self::steal).
pub struct Deque<T> {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    /// The current ring. Written by the owner only (Release), read by thieves (Acquire).
    ring: AtomicPtr<Ring<T>>,
    /// Rings retired by growth, freed with the deque. Owner only. Boxed: a thief may still
    /// hold a pointer to a retired ring, which must not move.
    #[allow(clippy::vec_box)]
    retired: UnsafeCell<Vec<Box<Ring<T>>>>,
    /// The most items the deque holds, `usize::MAX` when unbounded.
    limit: usize,
}

// SAFETY: the deque hands out raw pointers only; the fields shared between threads are
// atomics, and `retired` is touched by the owner only (`push`, documented owner-only) and by
// `drop` (exclusive access).
unsafe impl<T> Sync for Deque<T> {}
// SAFETY: as above: moving the deque moves owned rings and atomics.
unsafe impl<T> Send for Deque<T> {}

impl<T> Deque<T> {
    /// A deque whose ring starts with `initial` slots (rounded up to a power of two), holding at most `limit` items (`None`: unbounded).
    pub fn new(initial: usize, limit: Option<usize>) -> Self {
        crate::barrier::init();
        let limit = limit.unwrap_or(usize::MAX);
        let cap = initial
            .min(limit)
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(1 << 20);
        Deque {
            top: CachePadded::new(AtomicIsize::new(0)),
            bottom: CachePadded::new(AtomicIsize::new(0)),
            ring: AtomicPtr::new(Box::into_raw(Ring::new(cap))),
            retired: UnsafeCell::new(Vec::new()),
            limit,
        }
    }

    /// Pushes at the bottom; hands the item back when the deque holds `limit` items. Returns
    /// whether the deque was empty before the push (as far as the owner could tell: a thief
    /// may have taken the last item an instant later, never the reverse).
    ///
    /// # Safety
    /// Owner only: no other thread calls `push` or `pop` on this deque concurrently.
    #[inline(always)]
    pub unsafe fn push(&self, item: *mut T) -> Result<bool, *mut T> {
        let b = self.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the thieves' successful CAS on `top` (SeqCst, so Release): the
        // slots below the `top` we read have been read by the thieves that took them, and
        // may be overwritten.
        let t = self.top.load(Ordering::Acquire);
        let mut ring = self.ring.load(Ordering::Relaxed);
        let len = (b - t) as usize;
        if len >= self.limit {
            return Err(item);
        }
        // SAFETY: `ring` is the current ring, freed only by `drop`.
        if len >= unsafe { (*ring).cap() } {
            // SAFETY: owner only (our contract), as `grow` requires.
            ring = unsafe { self.grow(t, b, ring) };
        }
        // SAFETY: as above.
        unsafe { (*ring).slot(b).store(item, Ordering::Relaxed) };
        // Release fence: the slot's write (and the ring's, after growth) happens-before a
        // thief's Acquire load of `bottom` that reads the new value.
        fence(Ordering::Release);
        self.bottom.store(b + 1, Ordering::Relaxed);
        Ok(len == 0)
    }

    /// Copies the live items `t..b` into a ring twice as large and publishes it.
    ///
    /// # Safety
    /// Owner only; `old` is the current ring.
    #[cold]
    unsafe fn grow(&self, t: isize, b: isize, old: *mut Ring<T>) -> *mut Ring<T> {
        // SAFETY: `old` is the current ring, alive until `drop`.
        let old_ref = unsafe { &*old };
        let new = Ring::new(old_ref.cap() * 2);
        for i in t..b {
            new.slot(i)
                .store(old_ref.slot(i).load(Ordering::Relaxed), Ordering::Relaxed);
        }
        let new = Box::into_raw(new);
        // Release: pairs with the thieves' Acquire load of `ring`: the copied slots are
        // visible through the new pointer.
        self.ring.store(new, Ordering::Release);
        // SAFETY: `retired` is touched by the owner only (our contract); `old` came from
        // `Box::into_raw` and is retired once (it is no longer the current ring).
        unsafe { (*self.retired.get()).push(Box::from_raw(old)) };
        new
    }

    /// Pops at the bottom (the most recently pushed item).
    ///
    /// # Safety
    /// Owner only, as for [`push`](Self::push).
    #[inline(always)]
    pub unsafe fn pop(&self) -> Option<*mut T> {
        // Empty already: `top` only grows and only the owner moves `bottom`, so a `top` read
        // at or past `bottom` stays so until the owner pushes. Returning here writes nothing.
        let b = self.bottom.load(Ordering::Relaxed);
        if self.top.load(Ordering::Relaxed) >= b {
            return None;
        }
        let b = b - 1;
        let ring = self.ring.load(Ordering::Relaxed);
        self.bottom.store(b, Ordering::Relaxed);
        // The light half of a SeqCst fence pair (`barrier.rs`): orders the `bottom` store
        // before the `top` load, against the thieves' heavy half between their `top` and
        // `bottom` loads (the store-load race for the last item: a thief and the owner cannot
        // both miss each other's claim).
        crate::barrier::light();
        let t = self.top.load(Ordering::Relaxed);
        if t > b {
            self.bottom.store(b + 1, Ordering::Relaxed);
            return None;
        }
        // SAFETY: the current ring, alive until `drop`.
        let item = unsafe { (*ring).slot(b).load(Ordering::Relaxed) };
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
        // Acquire: pairs with a previous thief's or the owner's CAS on `top` (SeqCst).
        let t = self.top.load(Ordering::Acquire);
        // The heavy half of the fence pair: pairs with the owner's light half in `pop`.
        crate::barrier::heavy();
        // Acquire: pairs with the owner's Release fence in `push`: the slot is written.
        let b = self.bottom.load(Ordering::Acquire);
        if t >= b {
            return Steal::Empty;
        }
        // Acquire: pairs with the Release store of `grow`: the slots copied into a new ring
        // are visible. (A ring older than the one that holds item `t` cannot be read: the
        // push of `t` happens-before our `bottom` load, and the ring it wrote to was published
        // before it.)
        let ring = self.ring.load(Ordering::Acquire);
        // SAFETY: rings are freed only by `drop`, and a thief holds `&self`.
        let item = unsafe { (*ring).slot(t).load(Ordering::Relaxed) };
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

    /// The current ring's slot count (for tests).
    #[cfg(test)]
    pub fn ring_cap(&self) -> usize {
        // SAFETY: the current ring, alive until `drop`.
        unsafe { (*self.ring.load(Ordering::Acquire)).cap() }
    }
}

impl<T> Drop for Deque<T> {
    fn drop(&mut self) {
        // The items are raw pointers that the deque does not own: the pool drains its deques
        // before dropping them.
        let ring = self.ring.load(Ordering::Relaxed);
        // SAFETY: `ring` came from `Box::into_raw` and is freed once, here; `&mut self`
        // means no thief holds the deque.
        drop(unsafe { Box::from_raw(ring) });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU8};
    use std::sync::Arc;

    fn p(i: usize) -> *mut u8 {
        (i + 1) as *mut u8
    }
    fn ix(p: *mut u8) -> usize {
        p as usize - 1
    }

    #[test]
    fn lifo_owner_fifo_thief_and_growth() {
        let d = Deque::<u8>::new(2, None);
        // SAFETY: this thread is the only one touching the deque.
        unsafe {
            for i in 0..5 {
                d.push(p(i)).unwrap();
            }
            assert!(d.ring_cap() >= 8);
            assert_eq!(d.steal(), Steal::Success(p(0)));
            assert_eq!(d.pop(), Some(p(4)));
            assert_eq!(d.steal(), Steal::Success(p(1)));
            assert_eq!(d.pop(), Some(p(3)));
            assert_eq!(d.pop(), Some(p(2)));
            assert_eq!(d.pop(), None);
            assert_eq!(d.steal(), Steal::Empty);
        }
    }

    #[test]
    fn a_bounded_deque_hands_the_item_back() {
        let d = Deque::<u8>::new(2, Some(3));
        // SAFETY: this thread is the only one touching the deque.
        unsafe {
            for i in 0..3 {
                assert_eq!(
                    d.push(p(i)),
                    Ok(i == 0),
                    "only the first push finds it empty"
                );
            }
            assert_eq!(d.push(p(3)), Err(p(3)));
            assert_eq!(d.pop(), Some(p(2)));
            assert_eq!(d.push(p(2)), Ok(false));
            assert_eq!(d.pop(), Some(p(2)));
            d.push(p(3)).unwrap();
        }
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn stress_every_item_exactly_once_with_growth() {
        const N: usize = 300_000;
        let d = Arc::new(Deque::<u8>::new(4, None));
        let seen: Arc<Vec<AtomicU8>> = Arc::new((0..N).map(|_| AtomicU8::new(0)).collect());
        let done = Arc::new(AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (d, seen, done) = (d.clone(), seen.clone(), done.clone());
                std::thread::spawn(move || loop {
                    match d.steal() {
                        Steal::Success(x) => {
                            seen[ix(x)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Steal::Retry => {}
                        Steal::Empty => {
                            if done.load(std::sync::atomic::Ordering::Acquire) && d.is_empty() {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                    }
                })
            })
            .collect();
        let mut next = 0;
        while next < N {
            // Bursts of varying size make the ring grow and shrink in use.
            let burst = (N - next).min(1 + next % 61);
            for _ in 0..burst {
                // SAFETY: this thread is the deque's only owner.
                unsafe { d.push(p(next)).unwrap() };
                next += 1;
            }
            for _ in 0..(burst / 2) {
                // SAFETY: as above.
                if let Some(x) = unsafe { d.pop() } {
                    seen[ix(x)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        // SAFETY: as above.
        while let Some(x) = unsafe { d.pop() } {
            seen[ix(x)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        for t in thieves {
            t.join().unwrap();
        }
        for (i, s) in seen.iter().enumerate() {
            assert_eq!(s.load(std::sync::atomic::Ordering::Relaxed), 1, "item {i}");
        }
    }
}
