//! A fixed-capacity work-stealing deque of task indices: the Chase–Lev deque (Chase & Lev,
//! "Dynamic circular work-stealing deque", SPAA 2005) with the memory orderings of Lê, Pop,
//! Cohen, Zappa Nardelli, "Correct and efficient work-stealing for weak memory models"
//! (PPoPP 2013), without growth.
//!
//! The owner pushes and pops at the bottom (LIFO); thieves steal at the top (FIFO). The
//! capacity is fixed when the executor is built: a plan's tasks are each pushed at most once
//! per cycle, so a deque of capacity >= the number of tasks never overflows, and the deque
//! never allocates after construction. Items are `u32` stored in atomics, so a thief that
//! loses a race reads a stale index but never a torn one, and discards it.

use crossbeam_utils::CachePadded;

use fugue_sync::{fence, AtomicIsize, AtomicU32, Ordering};

/// What a steal attempt found. `Retry` means another thread won a race for the same item:
/// the deque may still hold work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steal {
    /// Nothing to steal.
    Empty,
    /// A task.
    Success(u32),
    /// Lost a race; try again.
    Retry,
}

/// Slots per [`Slots`] block: 128 bytes.
const SLOTS: usize = 32;

/// A block of the deque's ring, aligned (and so padded) to 128 bytes: the ring shares no
/// cache line, nor pair of lines fetched together, with any other allocation.
#[repr(align(128))]
struct Slots([AtomicU32; SLOTS]);

/// The deque. One owner thread calls `push` and `pop`; any thread calls `steal`.
pub struct Deque {
    top: CachePadded<AtomicIsize>,
    bottom: CachePadded<AtomicIsize>,
    buf: Box<[Slots]>,
    mask: usize,
}

impl Deque {
    /// A deque that can hold `capacity` items (rounded up to a power of two).
    pub fn with_capacity(capacity: usize) -> Self {
        let cap = capacity.max(2).next_power_of_two();
        Deque {
            top: CachePadded::new(AtomicIsize::new(0)),
            bottom: CachePadded::new(AtomicIsize::new(0)),
            buf: (0..cap.div_ceil(SLOTS))
                .map(|_| Slots(std::array::from_fn(|_| AtomicU32::new(0))))
                .collect(),
            mask: cap - 1,
        }
    }

    /// The ring slot of position `i`.
    #[inline]
    fn slot(&self, i: isize) -> &AtomicU32 {
        let i = i as usize & self.mask;
        &self.buf[i / SLOTS].0[i % SLOTS]
    }

    /// The number of slots.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Pushes at the bottom. Owner only.
    ///
    /// # Panics
    /// In debug builds, if the deque is full (the executor sizes it so that it never is).
    #[inline]
    pub fn push(&self, task: u32) {
        let b = self.bottom.load(Ordering::Relaxed);
        // Acquire: pairs with the thieves' successful CAS on `top`, so the slot we overwrite
        // has been read by them.
        let t = self.top.load(Ordering::Acquire);
        debug_assert!(
            ((b - t) as usize) < self.capacity(),
            "work-stealing deque overflow"
        );
        self.slot(b).store(task, Ordering::Relaxed);
        // Release fence: the slot's write happens-before a thief that reads the new `bottom`
        // (its Acquire load of `bottom`).
        fence(Ordering::Release);
        self.bottom.store(b + 1, Ordering::Relaxed);
    }

    /// Pops at the bottom (the most recently pushed task). Owner only.
    #[inline]
    pub fn pop(&self) -> Option<u32> {
        // Empty already: `top` only grows and only the owner moves `bottom`, so a `top` read
        // at or past `bottom` stays so until the owner pushes. Returning here writes nothing:
        // a thief polling this deque keeps its copy of the `bottom` line, and the owner pays
        // neither the fence nor the line's transfer.
        let b = self.bottom.load(Ordering::Relaxed);
        if self.top.load(Ordering::Relaxed) >= b {
            return None;
        }
        let b = b - 1;
        self.bottom.store(b, Ordering::Relaxed);
        // SeqCst fence: orders the `bottom` store before the `top` load against the thieves'
        // SeqCst fence between their `top` and `bottom` loads (the classic store-load race of
        // the last item: at most one of owner and thief sees the item uncontended).
        fence(Ordering::SeqCst);
        let t = self.top.load(Ordering::Relaxed);
        if t > b {
            self.bottom.store(b + 1, Ordering::Relaxed);
            return None;
        }
        let task = self.slot(b).load(Ordering::Relaxed);
        if t == b {
            // The last item: race the thieves for it on `top`.
            let won = self
                .top
                .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok();
            self.bottom.store(b + 1, Ordering::Relaxed);
            return won.then_some(task);
        }
        Some(task)
    }

    /// Steals at the top (the oldest task). Any thread.
    #[inline]
    pub fn steal(&self) -> Steal {
        // Looks empty: no fence. (A stale `bottom` may hide a task pushed just now; the
        // thief polls again, as after any empty steal.)
        if self.is_empty() {
            return Steal::Empty;
        }
        // Acquire: pairs with a previous thief's CAS (Release part of SeqCst) on `top`.
        let t = self.top.load(Ordering::Acquire);
        // SeqCst fence: pairs with the owner's fence in `pop` (see there).
        fence(Ordering::SeqCst);
        // Acquire: pairs with the owner's Release fence in `push`: the slot is written.
        let b = self.bottom.load(Ordering::Acquire);
        if t >= b {
            return Steal::Empty;
        }
        let task = self.slot(t).load(Ordering::Relaxed);
        match self
            .top
            .compare_exchange(t, t + 1, Ordering::SeqCst, Ordering::Relaxed)
        {
            Ok(_) => Steal::Success(task),
            Err(_) => Steal::Retry,
        }
    }

    /// The owner's view of `(top, bottom)`. Owner only (`top` may grow at once: a hint).
    #[inline]
    pub fn ends(&self) -> (isize, isize) {
        (
            self.top.load(Ordering::Relaxed),
            self.bottom.load(Ordering::Relaxed),
        )
    }

    /// The value last stored in the slot of index `i`. Owner only (the owner is its only
    /// writer).
    #[inline]
    pub fn slot_value(&self, i: isize) -> u32 {
        self.slot(i).load(Ordering::Relaxed)
    }

    /// Whether the deque looks empty (a hint: it may change at once).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.top.load(Ordering::Relaxed) >= self.bottom.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn lifo_owner_fifo_thief() {
        let d = Deque::with_capacity(8);
        for i in 0..5 {
            d.push(i);
        }
        assert_eq!(d.steal(), Steal::Success(0));
        assert_eq!(d.pop(), Some(4));
        assert_eq!(d.steal(), Steal::Success(1));
        assert_eq!(d.pop(), Some(3));
        assert_eq!(d.pop(), Some(2));
        assert_eq!(d.pop(), None);
        assert_eq!(d.steal(), Steal::Empty);
        // Wraps around the ring many times without growing.
        for round in 0..100u32 {
            for i in 0..8 {
                d.push(round * 8 + i);
            }
            for i in (0..8).rev() {
                assert_eq!(d.pop(), Some(round * 8 + i));
            }
        }
        assert_eq!(d.capacity(), 8);
    }

    #[test]
    fn stress_every_item_exactly_once() {
        const N: u32 = 200_000;
        let d = Arc::new(Deque::with_capacity(1024));
        let seen: Arc<Vec<std::sync::atomic::AtomicU8>> = Arc::new(
            (0..N)
                .map(|_| std::sync::atomic::AtomicU8::new(0))
                .collect(),
        );
        let done = Arc::new(AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (d, seen, done) = (d.clone(), seen.clone(), done.clone());
                std::thread::spawn(move || loop {
                    match d.steal() {
                        Steal::Success(x) => {
                            seen[x as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Steal::Retry => {}
                        Steal::Empty => {
                            if done.load(std::sync::atomic::Ordering::Acquire) {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                    }
                })
            })
            .collect();
        let mut next = 0u32;
        while next < N {
            // Keep at most 1000 items in flight (the capacity bound of the executors).
            let burst = (N - next).min(7);
            if (d.bottom.load(std::sync::atomic::Ordering::Relaxed)
                - d.top.load(std::sync::atomic::Ordering::Relaxed))
                < 1000
            {
                for _ in 0..burst {
                    d.push(next);
                    next += 1;
                }
            }
            if let Some(x) = d.pop() {
                seen[x as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        while let Some(x) = d.pop() {
            seen[x as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
