//! One allocation holding every audio buffer of a plan, cut into pieces that each start on a
//! 128-byte boundary (a pair of cache lines, the unit of the adjacent-line prefetcher).

use std::ptr::NonNull;

/// Floats per cache line.
pub(crate) const LINE: usize = 16;

/// A 64-byte cache line of samples (the arena itself is aligned to a pair of lines).
#[derive(Clone, Copy)]
#[repr(C, align(128))]
struct Pair([f32; 2 * LINE]);

/// A buffer inside the arena: offset and length in samples (offset a multiple of [`LINE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Buf {
    pub off: u32,
    pub len: u32,
}

/// Lays buffers out; [`Layout::finish`] allocates the arena.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    lines: usize,
}

impl Layout {
    /// Reserves a buffer of `len` samples starting on its own pair of cache lines, so that
    /// buffers written by different tasks never share a line, nor a pair that the adjacent-line
    /// prefetcher moves together (no false sharing).
    pub fn alloc(&mut self, len: usize) -> Buf {
        let b = Buf {
            off: (self.lines * LINE) as u32,
            len: len as u32,
        };
        self.lines += len.div_ceil(2 * LINE).max(1) * 2;
        b
    }

    /// Bytes that a buffer of `len` samples takes in the arena.
    pub fn bytes_of(len: usize) -> usize {
        len.div_ceil(2 * LINE).max(1) * 2 * LINE * std::mem::size_of::<f32>()
    }

    /// Bytes of the arena laid out so far.
    pub fn bytes(&self) -> usize {
        self.lines * LINE * std::mem::size_of::<f32>()
    }

    pub fn finish(self) -> Arena {
        let pairs = self.lines.div_ceil(2).max(1);
        let boxed: Box<[Pair]> = vec![Pair([0.0; 2 * LINE]); pairs].into_boxed_slice();
        // `Box::into_raw` gives a pointer with write permission over the whole allocation that
        // no reference aliases; the arena frees it in `Drop`.
        let ptr =
            NonNull::new(Box::into_raw(boxed) as *mut Pair).expect("Box pointers are not null");
        Arena { ptr, pairs }
    }
}

/// The samples of every buffer. Owns its allocation; accessed only through raw pointers.
pub(crate) struct Arena {
    ptr: NonNull<Pair>,
    pairs: usize,
}

// SAFETY: the arena is plain memory of `f32`s owned by this value; which thread may touch
// which buffer when is governed by the plan's protocol (see `Plan::run_task`).
unsafe impl Send for Arena {}
// SAFETY: as above; shared access only hands out raw pointers.
unsafe impl Sync for Arena {}

impl Arena {
    /// The first sample.
    #[inline]
    pub fn base(&self) -> *mut f32 {
        self.ptr.as_ptr().cast::<f32>()
    }

    /// Total samples.
    pub fn len(&self) -> usize {
        self.pairs * 2 * LINE
    }

    /// A shared slice of `b`.
    ///
    /// # Safety
    /// No mutable slice of `b` may be alive while the result is, and `b` must lie inside the
    /// arena (it does when it came from this arena's [`Layout`]).
    #[inline]
    pub unsafe fn slice<'a>(&self, b: Buf) -> &'a [f32] {
        debug_assert!(b.off as usize + b.len as usize <= self.len());
        // SAFETY: in bounds and initialised (the arena is zeroed at creation); the caller
        // guarantees no mutable alias.
        unsafe { std::slice::from_raw_parts(self.base().add(b.off as usize), b.len as usize) }
    }

    /// A mutable slice of `b`.
    ///
    /// # Safety
    /// No other slice of `b` may be alive while the result is, and `b` must lie inside the
    /// arena.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut<'a>(&self, b: Buf) -> &'a mut [f32] {
        debug_assert!(b.off as usize + b.len as usize <= self.len());
        // SAFETY: in bounds and initialised; the caller guarantees exclusivity. The pointer
        // comes from `Box::into_raw`, not from a shared reference.
        unsafe { std::slice::from_raw_parts_mut(self.base().add(b.off as usize), b.len as usize) }
    }

    /// Frames `r` of `b` (the other frames are not borrowed: other threads may write them).
    ///
    /// # Safety
    /// As [`Arena::slice`], for these frames only; `r` must lie inside `b`.
    #[inline]
    pub unsafe fn slice_range<'a>(&self, b: Buf, r: std::ops::Range<usize>) -> &'a [f32] {
        debug_assert!(r.start <= r.end && r.end <= b.len as usize);
        // SAFETY: inside `b`, hence inside the arena; the caller guarantees no mutable alias
        // of these frames.
        unsafe { std::slice::from_raw_parts(self.base().add(b.off as usize + r.start), r.len()) }
    }

    /// Frames `r` of `b`, mutable (the other frames are not borrowed).
    ///
    /// # Safety
    /// As [`Arena::slice_mut`], for these frames only; `r` must lie inside `b`.
    #[inline]
    pub unsafe fn slice_mut_range<'a>(&self, b: Buf, r: std::ops::Range<usize>) -> &'a mut [f32] {
        debug_assert!(r.start <= r.end && r.end <= b.len as usize);
        // SAFETY: inside `b`; the caller guarantees exclusivity for these frames.
        unsafe {
            std::slice::from_raw_parts_mut(self.base().add(b.off as usize + r.start), r.len())
        }
    }

    /// Zeroes every sample.
    pub fn clear(&mut self) {
        // SAFETY: `&mut self`: no slice of the arena is alive; the range is the allocation.
        unsafe { std::ptr::write_bytes(self.base(), 0, self.len()) };
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let slice = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.pairs);
        // SAFETY: the pointer and length are those `Box::into_raw` returned in `finish`, and
        // this is the only place that frees them.
        drop(unsafe { Box::from_raw(slice) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_line_pair_aligned_and_disjoint() {
        let mut l = Layout::default();
        let a = l.alloc(5);
        let b = l.alloc(16);
        let c = l.alloc(17);
        let d = l.alloc(0);
        let e = l.alloc(1);
        assert_eq!((a.off, b.off, c.off, d.off, e.off), (0, 32, 64, 96, 128));
        let arena = l.finish();
        assert_eq!(arena.len(), 160);
        assert_eq!(arena.base() as usize % 128, 0);
    }
}
