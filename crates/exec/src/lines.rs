//! Keeping a plan's memory on cache lines of its own.
//!
//! A processor allocates its own state (delay lines, filter memories, the read and write
//! positions it updates every sample) from the process's heap. The heap hands out small
//! blocks side by side, and once graphs have been loaded and unloaded (the host, a study that
//! runs one graph after another) the holes they left are filled in any order: one graph's
//! comb-filter position, written by one core every sample, can share a 64-byte line with
//! another graph's state written by another core, and the line then moves between the two
//! cores at every write (false sharing). The plan's audio buffers never do (each starts on its
//! own pair of lines in the plan's arena); the processors' state did.
//!
//! [`LineAllocator`], installed as the program's global allocator, gives every allocation made
//! inside [`apart`] whole pairs of cache lines that nothing else uses: its size rounded up to a
//! multiple of [`PAIR`] bytes, its start aligned to [`PAIR`] (the adjacent-line prefetcher
//! moves lines in pairs). Every other allocation is a plain `malloc`.
//! [`Plan::compile`](crate::Plan::compile) builds each node and its processors inside
//! [`apart`] (not its own tables and temporaries: a graph of many nodes would pay the rounding
//! for each), the executors and the shared pool their threads' structures, a tenant its
//! counters, so that the state a thread writes while it runs does not share a line with
//! another processor's or with the rest of the program's. The `fugue` program installs it; a program that embeds the engine
//! installs it with
//!
//! ```
//! #[global_allocator]
//! static LINES: fugue_exec::lines::LineAllocator = fugue_exec::lines::LineAllocator;
//!
//! fn main() {
//!     let v: Vec<u8> = fugue_exec::lines::apart(|| vec![1, 2, 3]);
//!     assert_eq!(v.as_ptr() as usize % fugue_exec::lines::PAIR, 0);
//! }
//! ```
//!
//! and without it [`apart`] changes nothing. Memory that foreign code allocates with C's
//! `malloc` (a Faust or LV2 instance's own state) is not covered.
//!
//! What it changed, measured, is in `docs/host.md` ("Processors' state and false sharing").

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

/// Bytes of a pair of cache lines: the size and alignment unit of an allocation made inside
/// [`apart`].
pub const PAIR: usize = 128;

/// The alignment `malloc` guarantees at least: two words (glibc's `MALLOC_ALIGNMENT`, 16 on
/// 64-bit targets).
const MALLOC_ALIGN: usize = 2 * std::mem::size_of::<usize>();

thread_local! {
    /// How many [`apart`] calls the thread is inside. `const` and without a destructor, so
    /// that reading it from the allocator never allocates.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` with every allocation it makes on the current thread given cache lines of its own
/// (when [`LineAllocator`] is the global allocator). Calls nest.
pub fn apart<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    let _leave = Leave;
    f()
}

/// Whether the current thread is inside [`apart`] (`try_with`: never fails for a `const`
/// thread-local without a destructor, and would answer false rather than panic).
fn inside() -> bool {
    DEPTH.try_with(|d| d.get() > 0).unwrap_or(false)
}

/// The global allocator that honours [`apart`]: `malloc`, `posix_memalign`, `realloc` and
/// `free` of the C library, with allocations made inside [`apart`] rounded up to whole pairs
/// of cache lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineAllocator;

/// `size` bytes aligned to `align` (a power of two) from `malloc` or `posix_memalign`; null
/// when the C library has no memory.
fn c_alloc(size: usize, align: usize) -> *mut u8 {
    if align <= MALLOC_ALIGN && align <= size {
        // SAFETY: `malloc` with a non-zero size (`align <= size` and an alignment is at
        // least 1); its result is aligned to `MALLOC_ALIGN`, which covers `align`.
        unsafe { libc::malloc(size) as *mut u8 }
    } else {
        let mut out = std::ptr::null_mut();
        let align = align.max(std::mem::size_of::<usize>());
        // SAFETY: `align` is a power of two and a multiple of the size of a pointer, as
        // `posix_memalign` requires; `out` is a valid place for the result.
        let r = unsafe { libc::posix_memalign(&mut out, align, size) };
        if r == 0 {
            out as *mut u8
        } else {
            std::ptr::null_mut()
        }
    }
}

/// The layout given to the C library for `layout` inside [`apart`]; `None` on overflow.
fn widened(layout: Layout) -> Option<(usize, usize)> {
    let size = layout.size().checked_next_multiple_of(PAIR)?;
    Some((size, layout.align().max(PAIR)))
}

// SAFETY: every block comes from `malloc`, `calloc`, `posix_memalign` or `realloc` with at
// least the layout's size and alignment, and every block (whichever made it, inside `apart`
// or not) is freed by `free` or resized by `realloc`, which the C library accepts for all. A block
// resized outside `apart` may lose its lines of its own, never its validity.
unsafe impl GlobalAlloc for LineAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if inside() {
            match widened(layout) {
                Some((size, align)) => c_alloc(size, align),
                None => std::ptr::null_mut(),
            }
        } else {
            c_alloc(layout.size(), layout.align())
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !inside() && layout.align() <= MALLOC_ALIGN && layout.align() <= layout.size() {
            // SAFETY: `calloc` of one block of a non-zero size (as in `c_alloc`), aligned to
            // `MALLOC_ALIGN`, which covers the layout's.
            return unsafe { libc::calloc(1, layout.size()) as *mut u8 };
        }
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { self.alloc(layout) };
        if !p.is_null() {
            // SAFETY: `p` points to at least `layout.size()` writable bytes just allocated.
            unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from `malloc` or `posix_memalign` (the caller's contract: it was
        // allocated by this allocator) and is freed once.
        unsafe { libc::free(ptr as *mut libc::c_void) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !inside() && layout.align() <= MALLOC_ALIGN && layout.align() <= new_size {
            // SAFETY: `ptr` came from this allocator (the caller's contract), `new_size` is
            // not zero, and `realloc`'s result is aligned to `MALLOC_ALIGN`, which covers the
            // alignment.
            return unsafe { libc::realloc(ptr as *mut libc::c_void, new_size) as *mut u8 };
        }
        // SAFETY: the caller's contract: `new_size` rounded up to the alignment does not
        // overflow, and the alignment is a power of two.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a fresh block for the new layout.
        let p = unsafe { self.alloc(new) };
        if !p.is_null() {
            // SAFETY: both blocks are valid for the smaller of the two sizes and distinct.
            unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size)) };
            // SAFETY: the old block is not used after this.
            unsafe { self.dealloc(ptr, layout) };
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apart_nests_and_leaves() {
        assert!(!inside());
        apart(|| {
            assert!(inside());
            apart(|| assert!(inside()));
            assert!(inside());
        });
        assert!(!inside());
    }

    #[test]
    fn apart_leaves_on_panic() {
        let r = std::panic::catch_unwind(|| apart(|| panic!("inside")));
        assert!(r.is_err());
        assert!(!inside());
    }

    #[test]
    fn widened_rounds_to_pairs() {
        let l = |s, a| Layout::from_size_align(s, a).unwrap();
        assert_eq!(widened(l(1, 1)), Some((128, 128)));
        assert_eq!(widened(l(128, 4)), Some((128, 128)));
        assert_eq!(widened(l(129, 8)), Some((256, 128)));
        assert_eq!(widened(l(8, 4096)), Some((128, 4096)));
    }
}
