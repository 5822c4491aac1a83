//! The counting allocator counts what it must: this thread's events, every thread's events,
//! and the live bytes.

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

use fugue_testkit::alloc::{count_all, count_this_thread, last_event, live_bytes};

/// One test: the process-wide counts must not see another test's allocations.
#[test]
fn the_counter_counts() {
    // This thread: one allocation and one free.
    let (n, ()) = count_this_thread(|| drop(std::hint::black_box(vec![1u8; 10])));
    assert_eq!(n, 2);
    // Nothing: no event.
    let (n, ()) = count_this_thread(|| {});
    assert_eq!(n, 0);
    // Another thread's allocation is not this thread's, but is the process's.
    let (mine, ()) = count_this_thread(|| {
        let (all, ()) = count_all(|| {
            std::thread::scope(|s| {
                s.spawn(|| drop(std::hint::black_box(vec![0u64; 1000])));
            })
        });
        assert!(all >= 2, "{all}");
    });
    assert!(mine >= 1, "spawning a thread allocates on this one: {mine}");
    assert_ne!(last_event().0, 0);
    // Live bytes: up by the allocation, down after the free.
    let before = live_bytes();
    let v = std::hint::black_box(vec![0u8; 4096]);
    assert!(live_bytes() >= before + 4096);
    drop(v);
    assert!(live_bytes() < before + 4096);
}
