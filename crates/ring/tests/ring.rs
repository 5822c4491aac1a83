//! The in-process ring: smoke, out-of-order production, misuse, abandon, 1p/1c, stampede,
//! no starvation, exactly-once accounting, stress (100k here, a million `#[ignore]`d), for
//! every wait strategy, both paddings and the mutex/condvar baseline.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use fugue_ring::{
    ordered, ordered_typed, ordered_typed_with, ordered_with, AcquireError, MutexCondRing,
    NextError, Options, Padding, Strategy, TryAcquireError, TryNextError,
};

const STRATEGIES: [Strategy; 3] = [Strategy::Spin, Strategy::Yield, Strategy::Park];

fn opts(strategy: Strategy) -> Options {
    Options {
        strategy,
        padding: Padding::CacheLine,
    }
}

/// The payload of item `n`: its number, then a pattern derived from it.
fn fill(buf: &mut [u8], n: u64) {
    buf[..8].copy_from_slice(&n.to_le_bytes());
    for (j, b) in buf[8..].iter_mut().enumerate() {
        *b = (n as u8).wrapping_mul(31).wrapping_add(j as u8);
    }
}

fn check(buf: &[u8], n: u64) {
    assert_eq!(
        u64::from_le_bytes(buf[..8].try_into().unwrap()),
        n,
        "item {n} carries another number"
    );
    for (j, b) in buf[8..].iter().enumerate() {
        assert_eq!(
            *b,
            (n as u8).wrapping_mul(31).wrapping_add(j as u8),
            "item {n} byte {}",
            j + 8
        );
    }
}

#[test]
fn smoke() {
    let (p, mut c) = ordered(4, 16);
    let mut g = p.acquire(0).unwrap();
    fill(&mut g, 0);
    g.commit();
    let item = c.next().unwrap();
    assert_eq!(item.number(), 0);
    check(&item, 0);
    drop(item);
    assert!(matches!(c.try_next(), Err(TryNextError::Empty { next: 1 })));
    assert_eq!(p.next_to_read(), 1);
}

#[test]
fn out_of_order_production_is_read_in_order() {
    let (p, mut c) = ordered(8, 8);
    for n in [3u64, 1, 7, 0, 2, 6, 5, 4] {
        let mut g = p.try_acquire(n).unwrap();
        fill(&mut g, n);
        g.commit();
        if n != 0
            && p.try_acquire(0).is_ok_and(|g| {
                drop(g);
                true
            })
        {
            // Item 0 is not committed yet: nothing is readable.
            assert!(matches!(c.try_next(), Err(TryNextError::Empty { next: 0 })));
        }
    }
    for n in 0..8 {
        let item = c.try_next().unwrap();
        assert_eq!(item.number(), n);
        check(&item, n);
    }
}

#[test]
fn full_already_acquired_already_read_are_reported() {
    let (p, mut c) = ordered(2, 8);
    let g0 = p.try_acquire(0).unwrap();
    // Twice the same number while it is held.
    assert_eq!(
        p.try_acquire(0).err(),
        Some(TryAcquireError::AlreadyAcquired)
    );
    assert!(matches!(
        p.acquire(0),
        Err(AcquireError::AlreadyAcquired { n: 0 })
    ));
    // Item 2 shares slot 0 with item 0: full.
    assert_eq!(p.try_acquire(2).err(), Some(TryAcquireError::Full));
    g0.commit();
    // Committed: still "already acquired" until read.
    assert_eq!(
        p.try_acquire(0).err(),
        Some(TryAcquireError::AlreadyAcquired)
    );
    {
        let item = c.next().unwrap();
        // Being read.
        assert_eq!(p.try_acquire(0).err(), Some(TryAcquireError::AlreadyRead));
        drop(item);
    }
    // Read and released.
    assert_eq!(p.try_acquire(0).err(), Some(TryAcquireError::AlreadyRead));
    assert!(matches!(
        p.acquire(0),
        Err(AcquireError::AlreadyRead { n: 0 })
    ));
    // Slot 0 is now free for item 2.
    p.try_acquire(2).unwrap().commit();
    // A stale producer aiming at item 0 far later still cannot touch slot 0.
    assert_eq!(p.try_acquire(0).err(), Some(TryAcquireError::AlreadyRead));
}

#[test]
fn dropping_an_uncommitted_guard_abandons_the_item() {
    let (p, mut c) = ordered(2, 8);
    {
        let mut g = p.try_acquire(0).unwrap();
        fill(&mut g, 999);
        // Dropped without commit.
    }
    // Nothing was published.
    assert!(matches!(c.try_next(), Err(TryNextError::Empty { next: 0 })));
    // The number can be acquired again and committed.
    let mut g = p.try_acquire(0).unwrap();
    fill(&mut g, 0);
    g.commit();
    check(&c.try_next().unwrap(), 0);
}

#[test]
fn consumer_timeout_names_the_missing_item() {
    for s in STRATEGIES {
        let (p, mut c) = ordered_with(4, 8, opts(s));
        p.try_acquire(1).unwrap().commit();
        let _held = p.try_acquire(0).unwrap();
        let e = c.next_timeout(Duration::from_millis(30)).err().unwrap();
        assert!(
            matches!(e, NextError::Timeout { missing: 0, .. }),
            "{s:?}: {e}"
        );
        assert_eq!(e.to_string(), "item 0 did not arrive within 30ms");
    }
}

#[test]
fn disconnection_is_reported_on_both_sides() {
    for s in STRATEGIES {
        let (p, c) = ordered_with(1, 8, opts(s));
        p.try_acquire(0).unwrap().commit();
        let waiting = thread::spawn(move || {
            // Slot of item 1 holds item 0 until the consumer releases it; the consumer goes
            // away instead.
            let r = p.acquire(1).map(|_| ());
            r.err()
        });
        thread::sleep(Duration::from_millis(20));
        drop(c);
        assert_eq!(
            waiting.join().unwrap(),
            Some(AcquireError::Disconnected { n: 1 }),
            "{s:?}"
        );

        let (p, mut c) = ordered_with(2, 8, opts(s));
        p.try_acquire(0).unwrap().commit();
        let p2 = p.clone();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            drop(p2);
        });
        drop(p);
        assert_eq!(c.next().unwrap().number(), 0);
        assert_eq!(
            c.next().err(),
            Some(NextError::Disconnected { missing: 1 }),
            "{s:?}"
        );
        assert_eq!(
            c.try_next().err(),
            Some(TryNextError::Disconnected { missing: 1 })
        );
        t.join().unwrap();
    }
}

#[test]
fn acquire_timeout_on_a_full_ring() {
    let (p, _c) = ordered_with(1, 8, opts(Strategy::Park));
    p.try_acquire(0).unwrap().commit();
    let e = p
        .acquire_timeout(1, Duration::from_millis(20))
        .err()
        .unwrap();
    assert!(matches!(e, AcquireError::Timeout { n: 1, .. }));
}

/// P producer threads, producer k writes k, k+P, ...; the consumer checks order and payload.
fn run_threads(producers: u64, capacity: usize, item_size: usize, items: u64, options: Options) {
    let (p, mut c) = ordered_with(capacity, item_size, options);
    let start = Arc::new(Barrier::new(producers as usize + 1));
    let handles: Vec<_> = (0..producers)
        .map(|k| {
            let p = p.clone();
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                let mut n = k;
                while n < items {
                    let mut g = p.acquire(n).unwrap();
                    fill(&mut g, n);
                    g.commit();
                    n += producers;
                }
            })
        })
        .collect();
    drop(p);
    start.wait();
    for n in 0..items {
        let item = c
            .next_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("{options:?} cap {capacity}: {e}"));
        assert_eq!(item.number(), n);
        check(&item, n);
    }
    assert_eq!(
        c.next().err(),
        Some(NextError::Disconnected { missing: items })
    );
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn one_producer_one_consumer() {
    for s in STRATEGIES {
        // A spinning pair needs both cores; on a loaded machine it waits out time slices.
        let items = if s == Strategy::Spin { 2_000 } else { 20_000 };
        for cap in [1, 2, 7, 64] {
            run_threads(1, cap, 24, items, opts(s));
        }
    }
}

#[test]
fn three_producers_100k_items() {
    // Spin with 4 threads on 2 cores is slow but must stay correct; fewer items for it.
    run_threads(3, 16, 16, 2_000, opts(Strategy::Spin));
    run_threads(3, 16, 16, 100_000, opts(Strategy::Yield));
    run_threads(3, 16, 16, 100_000, opts(Strategy::Park));
    run_threads(
        3,
        3,
        16,
        30_000,
        Options {
            strategy: Strategy::Yield,
            padding: Padding::None,
        },
    );
}

#[test]
#[ignore = "a million items per strategy; scripts/long-tests.sh runs it"]
fn three_producers_a_million_items() {
    // Not `Spin`: 4 spinning threads on a 2-core machine wait out scheduler time slices
    // (about a millisecond per item); spin is checked at 20k items in the normal tests.
    for s in [Strategy::Yield, Strategy::Park] {
        run_threads(3, 64, 32, 1_000_000, opts(s));
    }
    run_threads(
        3,
        64,
        32,
        1_000_000,
        Options {
            strategy: Strategy::Yield,
            padding: Padding::None,
        },
    );
}

#[test]
fn stampede() {
    // Many producers start at once on a small ring and fight for the same few slots.
    for s in [Strategy::Yield, Strategy::Park] {
        run_threads(8, 2, 8, 20_000, opts(s));
    }
}

#[test]
fn no_starvation() {
    // One producer asks for the last number at once, far beyond the ring's capacity, while
    // three others flood every other number. The far producer must wait until the consumer
    // has read up to its slot's previous occupant (never earlier: that would overwrite an
    // unread item), and must then get through (never starved by the flood: the consumer would
    // time out on it).
    let flooders = 3u64;
    let items = 20_000u64;
    let capacity = 4u64;
    let far = items - 1;
    for strategy in [Strategy::Yield, Strategy::Park] {
        let (p, mut c) = ordered_with(capacity as usize, 8, opts(strategy));
        let consumed = Arc::new(AtomicU64::new(0));
        let far_handle = {
            let p = p.clone();
            let consumed = consumed.clone();
            thread::spawn(move || {
                let slot = p.acquire(far).unwrap();
                // Acquired only once item `far - capacity` was read (the consumer counts it
                // just after, hence `>=` one less).
                let read = consumed.load(Ordering::Acquire);
                slot.commit();
                read
            })
        };
        let mut handles = Vec::new();
        for k in 0..flooders {
            let p = p.clone();
            handles.push(thread::spawn(move || {
                let mut n = k;
                while n < far {
                    p.acquire(n).unwrap().commit();
                    n += flooders;
                }
            }));
        }
        drop(p);
        for n in 0..items {
            let item = c
                .next_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("{strategy:?}: item {n}: {e}"));
            assert_eq!(item.number(), n, "{strategy:?}");
            drop(item);
            consumed.store(n + 1, Ordering::Release);
        }
        for h in handles {
            h.join().unwrap();
        }
        let read_when_acquired = far_handle.join().unwrap();
        assert!(
            read_when_acquired >= far - capacity,
            "{strategy:?}: the far item's slot was handed out after only {read_when_acquired} items were read"
        );
    }
}

#[test]
fn exactly_once_commit_and_read_accounting() {
    // Producers abandon some acquisitions (then retry the number), commit each item exactly
    // once; the consumer sees every number exactly once, in order.
    let producers = 3u64;
    let items = 30_000u64;
    let (p, mut c) = ordered_with(8, 8, opts(Strategy::Yield));
    let commits = Arc::new(AtomicU64::new(0));
    let abandons = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..producers)
        .map(|k| {
            let (p, commits, abandons) = (p.clone(), commits.clone(), abandons.clone());
            thread::spawn(move || {
                let mut n = k;
                while n < items {
                    if n % 7 == 0 {
                        let mut g = p.acquire(n).unwrap();
                        fill(&mut g, u64::MAX);
                        drop(g);
                        abandons.fetch_add(1, Ordering::Relaxed);
                    }
                    let mut g = p.acquire(n).unwrap();
                    fill(&mut g, n);
                    g.commit();
                    commits.fetch_add(1, Ordering::Relaxed);
                    n += producers;
                }
            })
        })
        .collect();
    drop(p);
    let mut seen = HashSet::new();
    let mut reads = 0u64;
    while let Ok(item) = c.next() {
        check(&item, item.number());
        assert!(
            seen.insert(item.number()),
            "item {} read twice",
            item.number()
        );
        assert_eq!(item.number(), reads);
        reads += 1;
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(reads, items);
    assert_eq!(commits.load(Ordering::Relaxed), items);
    assert_eq!(abandons.load(Ordering::Relaxed), items.div_ceil(7));
}

#[test]
fn typed_ring_round_trip() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Record {
        cycle: u64,
        duration_ns: u32,
        missed: bool,
    }
    let (p, mut c) = ordered_typed::<Record>(4);
    let t = thread::spawn(move || {
        for cycle in 0..10_000u64 {
            let g = p.acquire(cycle).unwrap();
            g.write(Record {
                cycle,
                duration_ns: cycle as u32 * 3,
                missed: cycle % 5 == 0,
            });
        }
    });
    for cycle in 0..10_000u64 {
        let r = c.next().unwrap();
        assert_eq!(
            *r,
            Record {
                cycle,
                duration_ns: cycle as u32 * 3,
                missed: cycle % 5 == 0
            }
        );
    }
    t.join().unwrap();

    // Over-aligned items land on aligned slots, packed or padded.
    #[derive(Clone, Copy)]
    #[repr(align(32))]
    struct Wide([u8; 40]);
    for padding in [Padding::None, Padding::CacheLine] {
        let (p, mut c) = ordered_typed_with::<Wide>(
            3,
            Options {
                strategy: Strategy::Spin,
                padding,
            },
        );
        for n in 0..9u64 {
            let mut g = p.try_acquire(n).unwrap();
            assert_eq!(g.as_uninit().as_ptr() as usize % 32, 0);
            g.write(Wide([n as u8; 40]));
            assert_eq!(c.try_next().unwrap().0, [n as u8; 40]);
        }
    }
}

#[test]
fn mutex_baseline_has_the_same_contract() {
    let (p, mut c) = MutexCondRing::new(2, 8);
    let g = p.try_acquire(0).unwrap();
    assert_eq!(
        p.try_acquire(0).err(),
        Some(TryAcquireError::AlreadyAcquired)
    );
    assert_eq!(p.try_acquire(2).err(), Some(TryAcquireError::Full));
    drop(g);
    assert!(matches!(c.try_next(), Err(TryNextError::Empty { next: 0 })));
    let mut g = p.try_acquire(0).unwrap();
    fill(&mut g, 0);
    g.commit();
    check(&c.next().unwrap(), 0);
    assert_eq!(p.try_acquire(0).err(), Some(TryAcquireError::AlreadyRead));
    let e = c.next_timeout(Duration::from_millis(10)).err().unwrap();
    assert_eq!(e.to_string(), "item 1 did not arrive within 10ms");

    let items = 50_000u64;
    let producers = 3u64;
    let handles: Vec<_> = (0..producers)
        .map(|k| {
            let p = p.clone();
            thread::spawn(move || {
                let mut n = k + 1;
                while n < items {
                    let mut g = p.acquire(n).unwrap();
                    fill(&mut g, n);
                    g.commit();
                    n += producers;
                }
            })
        })
        .collect();
    drop(p);
    for n in 1..items {
        let item = c.next().unwrap();
        assert_eq!(item.number(), n);
        check(&item, n);
    }
    assert_eq!(
        c.next().err(),
        Some(NextError::Disconnected { missing: items })
    );
    for h in handles {
        h.join().unwrap();
    }
}
