//! What a deque stores and where: the items ([`Item`]: a value kept in one atomic word), the
//! ring of slots ([`Ring`]), and the two buffers, [`Fixed`] (one ring for the deque's life)
//! and [`Growing`] (rings that double when full).

use std::cell::UnsafeCell;

use crate::{AtomicPtr, AtomicU32, Ordering};

/// The bytes of one [`Line`]: a pair of cache lines, which x86 processors fetch together.
const LINE_BYTES: usize = 128;

/// A value that a deque holds: one atomic word per slot, so that a thief that loses a race
/// reads a stale item but never a torn one, and discards it.
pub trait Item: Copy {
    /// The slots of one 128-byte line: an array of the item's atomic word.
    type Line: Send + Sync;
    /// The number of slots of a [`Line`](Self::Line) (a power of two).
    const PER_LINE: usize;
    /// A line of empty slots.
    fn line() -> Self::Line;
    /// The item in slot `i` of `line` (`i < PER_LINE`), Relaxed.
    fn load(line: &Self::Line, i: usize) -> Self;
    /// Writes `item` into slot `i` of `line` (`i < PER_LINE`), Relaxed.
    fn store(line: &Self::Line, i: usize, item: Self);
}

impl Item for u32 {
    type Line = [AtomicU32; LINE_BYTES / 4];
    const PER_LINE: usize = LINE_BYTES / 4;

    fn line() -> Self::Line {
        std::array::from_fn(|_| AtomicU32::new(0))
    }

    #[inline(always)]
    fn load(line: &Self::Line, i: usize) -> u32 {
        line[i].load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn store(line: &Self::Line, i: usize, item: u32) {
        line[i].store(item, Ordering::Relaxed);
    }
}

impl<U> Item for *mut U {
    type Line = [AtomicPtr<U>; LINE_BYTES / std::mem::size_of::<usize>()];
    const PER_LINE: usize = LINE_BYTES / std::mem::size_of::<usize>();

    fn line() -> Self::Line {
        std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut()))
    }

    #[inline(always)]
    fn load(line: &Self::Line, i: usize) -> *mut U {
        line[i].load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn store(line: &Self::Line, i: usize, item: *mut U) {
        line[i].store(item, Ordering::Relaxed);
    }
}

/// One line of slots, aligned (and so padded) to 128 bytes: a ring shares no cache line, nor
/// pair of lines fetched together, with any other allocation.
#[repr(align(128))]
struct Line<T: Item>(T::Line);

/// One ring: `mask + 1` slots (a power of two) in whole lines.
pub struct Ring<T: Item> {
    lines: Box<[Line<T>]>,
    mask: usize,
}

impl<T: Item> Ring<T> {
    /// A ring of `cap` slots (a power of two).
    fn new(cap: usize) -> Self {
        debug_assert!(cap.is_power_of_two());
        Ring {
            lines: (0..cap.div_ceil(T::PER_LINE))
                .map(|_| Line(T::line()))
                .collect(),
            mask: cap - 1,
        }
    }

    /// The line and the slot in it of position `i`.
    #[inline(always)]
    fn place(&self, i: isize) -> (&T::Line, usize) {
        let i = i as usize & self.mask;
        debug_assert!(i / T::PER_LINE < self.lines.len());
        // SAFETY: the ring holds `mask + 1` slots in `ceil((mask + 1) / PER_LINE)` lines
        // (built so in `new`), so `i <= mask` is in line `i / PER_LINE`, which exists.
        let line = unsafe { self.lines.get_unchecked(i / T::PER_LINE) };
        (&line.0, i % T::PER_LINE)
    }

    /// The item in the slot of position `i` (Relaxed).
    #[inline(always)]
    pub(super) fn load(&self, i: isize) -> T {
        let (line, k) = self.place(i);
        T::load(line, k)
    }

    /// Writes `item` into the slot of position `i` (Relaxed).
    #[inline(always)]
    pub(super) fn store(&self, i: isize, item: T) {
        let (line, k) = self.place(i);
        T::store(line, k, item);
    }

    /// The number of slots.
    #[inline(always)]
    pub(super) fn cap(&self) -> usize {
        self.mask + 1
    }
}

/// Where a deque keeps its ring: [`Fixed`] or [`Growing`].
pub trait Buffer<T: Item>: private::Sealed {
    /// The current ring as the owner sees it (the owner is the only thread that replaces it).
    ///
    /// # Safety
    /// Called by the deque's owner only (a ring that another thread published could be read
    /// before its slots are visible).
    unsafe fn owner_ring(&self) -> &Ring<T>;
    /// The current ring as a thief sees it after its Acquire load of `bottom`: a ring that
    /// holds every item pushed before that `bottom` was stored.
    fn thief_ring(&self) -> &Ring<T>;
}

mod private {
    pub trait Sealed {}
    impl<T: super::Item> Sealed for super::Fixed<T> {}
    impl<T: super::Item> Sealed for super::Growing<T> {}
}

/// A fixed-capacity buffer: one ring, allocated with the deque and never replaced, so the
/// deque never allocates after construction and its slots are reached without indirection
/// through an atomic pointer.
pub struct Fixed<T: Item> {
    pub(super) ring: Ring<T>,
}

impl<T: Item> Fixed<T> {
    /// A ring of `capacity` slots at least (rounded up to a power of two, at least 2).
    pub(super) fn new(capacity: usize) -> Self {
        Fixed {
            ring: Ring::new(capacity.max(2).next_power_of_two()),
        }
    }
}

impl<T: Item> Buffer<T> for Fixed<T> {
    #[inline(always)]
    unsafe fn owner_ring(&self) -> &Ring<T> {
        &self.ring
    }

    #[inline(always)]
    fn thief_ring(&self) -> &Ring<T> {
        &self.ring
    }
}

/// A growing buffer: when a push finds the ring full, the owner copies the live items into a
/// ring twice as large and publishes it. The old ring is not freed while the deque lives (a
/// thief that read the old pointer may still read a slot of it); it is kept in a list that
/// only the owner touches and freed with the deque. The rings' sizes double, so the retired
/// ones together take less memory than the current one. An optional limit bounds the number
/// of items: a push beyond it hands the item back.
pub struct Growing<T: Item> {
    /// The current ring. Written by the owner only (Release), read by thieves (Acquire).
    ring: AtomicPtr<Ring<T>>,
    /// Rings retired by growth, freed with the deque. Owner only. Boxed: a thief may still
    /// hold a pointer to a retired ring, which must not move.
    #[allow(clippy::vec_box)]
    retired: UnsafeCell<Vec<Box<Ring<T>>>>,
    /// The most items the deque holds, `usize::MAX` when unbounded.
    pub(super) limit: usize,
}

// SAFETY: the fields shared between threads are atomics and rings of atomics; `retired` is
// touched by the owner only (`grow`, whose callers promise to be the owner) and by `drop`
// (exclusive access).
unsafe impl<T: Item> Sync for Growing<T> {}
// SAFETY: as above: moving the buffer moves owned rings of atomics.
unsafe impl<T: Item> Send for Growing<T> {}

impl<T: Item> Growing<T> {
    /// A ring of `initial` slots (rounded up to a power of two, and down to the limit), and
    /// at most `limit` items (`None`: unbounded).
    pub(super) fn new(initial: usize, limit: Option<usize>) -> Self {
        let limit = limit.unwrap_or(usize::MAX);
        let cap = initial
            .min(limit)
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(1 << 20);
        Growing {
            ring: AtomicPtr::new(Box::into_raw(Box::new(Ring::new(cap)))),
            retired: UnsafeCell::new(Vec::new()),
            limit,
        }
    }

    /// Copies the live items `t..b` of the current ring into a ring twice as large, publishes
    /// it and returns it.
    ///
    /// # Safety
    /// Owner only: no other thread calls `grow` concurrently.
    #[cold]
    pub(super) unsafe fn grow(&self, t: isize, b: isize) -> &Ring<T> {
        let old_ptr = self.ring.load(Ordering::Relaxed);
        // SAFETY: the current ring, alive until `drop`.
        let old = unsafe { &*old_ptr };
        let new = Ring::new(old.cap() * 2);
        for i in t..b {
            new.store(i, old.load(i));
        }
        let new = Box::into_raw(Box::new(new));
        // Release: pairs with the thieves' Acquire load of `ring`: the copied slots are
        // visible through the new pointer.
        self.ring.store(new, Ordering::Release);
        // SAFETY: `retired` is touched by the owner only (our contract); `old_ptr` came from
        // `Box::into_raw` and is retired once (it is no longer the current ring).
        unsafe { (*self.retired.get()).push(Box::from_raw(old_ptr)) };
        // SAFETY: just published; freed only by `drop`.
        unsafe { &*new }
    }
}

impl<T: Item> Buffer<T> for Growing<T> {
    #[inline(always)]
    unsafe fn owner_ring(&self) -> &Ring<T> {
        // SAFETY: the current ring, freed only by `drop` (which takes `&mut self`); Relaxed:
        // the caller is the owner (our contract), which wrote the pointer and the ring itself.
        unsafe { &*self.ring.load(Ordering::Relaxed) }
    }

    #[inline(always)]
    fn thief_ring(&self) -> &Ring<T> {
        // Acquire: pairs with the Release store of `grow`: the slots copied into a new ring
        // are visible. (A ring older than the one that holds the item the thief goes for
        // cannot be read: the push of that item happens-before the thief's `bottom` load, and
        // the ring it wrote to was published before it.)
        // SAFETY: rings are freed only by `drop`, and a thief holds `&self`.
        unsafe { &*self.ring.load(Ordering::Acquire) }
    }
}

impl<T: Item> Drop for Growing<T> {
    fn drop(&mut self) {
        // The items are values that the deque does not own (pointers are not freed).
        let ring = self.ring.load(Ordering::Relaxed);
        // SAFETY: `ring` came from `Box::into_raw` and is freed once, here; `&mut self`
        // means no thief holds the deque.
        drop(unsafe { Box::from_raw(ring) });
    }
}
