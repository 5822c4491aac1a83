//! A counting global allocator.
//!
//! Install it in a test binary with
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;
//! ```
//! then measure with one of two scopes:
//! - [`count_this_thread`]: the allocations, frees and reallocations the calling thread makes
//!   while it runs a closure (tests running in parallel in one binary do not disturb each
//!   other);
//! - [`count_all`]: those any thread of the process makes while a closure runs (for code whose
//!   workers must not allocate either; run such a test alone in its binary, `harness = false`,
//!   so that no test-harness thread allocates meanwhile). [`last_event`] then says which
//!   thread made the last one, and its size.
//!
//! [`live_bytes`] is the number of bytes allocated and not yet freed, process-wide, at every
//! moment: a leak test compares it before building something and after dropping it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

/// The counting allocator: forwards every call to [`System`] unchanged and counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

/// Whether [`count_all`] is counting.
static ARMED: AtomicBool = AtomicBool::new(false);
/// Events (allocation, free, reallocation) of any thread while armed.
static ALL: AtomicUsize = AtomicUsize::new(0);
/// The thread and size of the last event counted while armed.
static LAST_THREAD: AtomicUsize = AtomicUsize::new(0);
static LAST_SIZE: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated and not freed.
static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Whether this thread counts its own events ([`count_this_thread`]).
    static MINE: Cell<bool> = const { Cell::new(false) };
    /// This thread's events while `MINE` was set.
    static MINE_EVENTS: Cell<usize> = const { Cell::new(0) };
}

#[inline]
fn note(size: usize) {
    // Relaxed everywhere: the counters are read after the measured code has finished, on a
    // thread that joined (or synchronised with) every thread it counts.
    if ARMED.load(Ordering::Relaxed) {
        ALL.fetch_add(1, Ordering::Relaxed);
        // SAFETY: pthread_self has no preconditions.
        LAST_THREAD.store(unsafe { libc::pthread_self() } as usize, Ordering::Relaxed);
        LAST_SIZE.store(size, Ordering::Relaxed);
    }
    // `try_with`: the thread-locals may be gone while a thread exits.
    if MINE.try_with(Cell::get).unwrap_or(false) {
        let _ = MINE_EVENTS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is forwarded to `System` with the caller's arguments, so `System`'s
// guarantees are ours; counting touches only atomics and const-initialised thread-locals,
// which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(layout.size());
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        p
    }
}

/// Runs `f` and returns the allocations, frees and reallocations the calling thread made
/// meanwhile, with `f`'s result.
pub fn count_this_thread<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = MINE_EVENTS.with(Cell::get);
    let was = MINE.with(|m| m.replace(true));
    let r = f();
    MINE.with(|m| m.set(was));
    (MINE_EVENTS.with(Cell::get) - before, r)
}

/// Runs `f` and returns the allocations, frees and reallocations every thread of the process
/// made meanwhile, with `f`'s result. Not reentrant.
pub fn count_all<R>(f: impl FnOnce() -> R) -> (usize, R) {
    ALL.store(0, Ordering::SeqCst);
    ARMED.store(true, Ordering::SeqCst);
    let r = f();
    ARMED.store(false, Ordering::SeqCst);
    (ALL.load(Ordering::SeqCst), r)
}

/// The thread (`pthread_self`) and size of the last event [`count_all`] counted.
pub fn last_event() -> (usize, usize) {
    (
        LAST_THREAD.load(Ordering::Relaxed),
        LAST_SIZE.load(Ordering::Relaxed),
    )
}

/// Bytes allocated through [`Counting`] and not freed yet, process-wide.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::SeqCst)
}
