//! The real-time path allocates nothing: after construction, producer `try_acquire`/`commit`
//! (`write`) and consumer `try_next`/release run under a counting global allocator and the
//! count stays at zero.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use fugue_ring::{ordered_typed_with, ordered_with, Options, Padding, Strategy, TryAcquireError};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Only allocations made by the test's own thread count (the test harness's threads
    /// allocate on their own schedule).
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count() {
    if COUNTING.with(|c| c.get()) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count();
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy)]
struct Record {
    cycle: u64,
    duration_ns: u64,
}

#[test]
fn producer_and_consumer_paths_do_not_allocate() {
    for strategy in [Strategy::Spin, Strategy::Yield, Strategy::Park] {
        let options = Options {
            strategy,
            padding: Padding::CacheLine,
        };
        let (p, mut c) = ordered_typed_with::<Record>(8, options);
        let (bp, mut bc) = ordered_with(4, 64, options);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        COUNTING.with(|c| c.set(true));
        let mut full = 0u64;
        let mut next = 0u64;
        let mut read = 0u64;
        for cycle in 0..10_000u64 {
            // Audio-thread side: try, count a full ring, keep the number.
            match p.try_acquire(next) {
                Ok(g) => {
                    g.write(Record {
                        cycle,
                        duration_ns: cycle * 2,
                    });
                    next += 1;
                }
                Err(TryAcquireError::Full) => full += 1,
                Err(e) => panic!("{e}"),
            }
            // The consumer drains every 16th cycle, so the ring fills up sometimes.
            if cycle % 16 == 0 {
                while let Ok(r) = c.try_next() {
                    assert_eq!(r.number(), read);
                    assert_eq!(r.duration_ns, r.cycle * 2);
                    read += 1;
                }
            }
            // Byte form.
            let mut g = bp.try_acquire(cycle).unwrap();
            g[..8].copy_from_slice(&cycle.to_le_bytes());
            g.commit();
            let item = bc.try_next().unwrap();
            assert_eq!(&item[..8], &cycle.to_le_bytes());
        }
        COUNTING.with(|c| c.set(false));
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(
            after - before,
            0,
            "{strategy:?}: the ring allocated on the hot path"
        );
        assert!(full > 0, "the test should have hit a full ring");
        assert!(read > 0);
    }
}
