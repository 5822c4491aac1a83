//! The real-time path allocates nothing: after construction, producer `try_acquire`/`commit`
//! (`write`) and consumer `try_next`/release, and the blocking `acquire` and `next` of several
//! producer threads and the consumer with every wait strategy, run under a counting global
//! allocator and every thread's count stays at zero.

use fugue_ring::{ordered_typed_with, ordered_with, Options, Padding, Strategy, TryAcquireError};

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

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
        let mut full = 0u64;
        let mut next = 0u64;
        let mut read = 0u64;
        let (allocs, ()) = fugue_testkit::alloc::count_this_thread(|| {
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
        });
        assert_eq!(
            allocs, 0,
            "{strategy:?}: the ring allocated on the hot path"
        );
        assert!(full > 0, "the test should have hit a full ring");
        assert!(read > 0);
    }
}

/// The blocking calls too, with the ring shared between threads: three producer threads
/// `acquire` (waiting for a slot) and commit their numbers while the consumer waits in `next`,
/// with each wait strategy (`Park` sleeps on the futex). Each thread counts its own
/// allocations from its first call to its last: all zero.
#[test]
fn blocking_calls_on_every_thread_do_not_allocate() {
    const PRODUCERS: u64 = 3;
    const ITEMS: u64 = 6_000;
    for strategy in [Strategy::Spin, Strategy::Yield, Strategy::Park] {
        let options = Options {
            strategy,
            padding: Padding::CacheLine,
        };
        let (p, mut c) = ordered_with(4, 16, options);
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|k| {
                let p = p.clone();
                std::thread::spawn(move || {
                    fugue_testkit::alloc::count_this_thread(|| {
                        let mut n = k;
                        while n < ITEMS {
                            let mut g = p.acquire(n).unwrap();
                            g[..8].copy_from_slice(&n.to_le_bytes());
                            g[8..].copy_from_slice(&(!n).to_le_bytes());
                            g.commit();
                            n += PRODUCERS;
                        }
                    })
                    .0
                })
            })
            .collect();
        drop(p);
        let (consumer_allocs, ()) = fugue_testkit::alloc::count_this_thread(|| {
            for n in 0..ITEMS {
                let item = c.next().unwrap();
                assert_eq!(item.number(), n);
                assert_eq!(&item[..8], &n.to_le_bytes());
                assert_eq!(&item[8..], &(!n).to_le_bytes());
            }
        });
        assert_eq!(
            consumer_allocs, 0,
            "{strategy:?}: the consumer allocated in next"
        );
        for (k, h) in producers.into_iter().enumerate() {
            assert_eq!(
                h.join().unwrap(),
                0,
                "{strategy:?}: producer {k} allocated in acquire/commit"
            );
        }
    }
}
