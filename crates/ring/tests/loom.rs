//! loom models of the slot protocol: two producers, capacity 1 and 2, acquire / commit /
//! abandon / next / release. loom explores the interleavings (and, through the per-slot
//! access tracking in `access`, checks that slot bytes are never accessed by a writer and a
//! reader without happens-before). Each model asserts that every item is delivered exactly
//! once, in order, with its own payload, and loom reports a deadlock if every thread waits.
//! With `Strategy::Park` every wait parks at once through the real parking protocol on the
//! modelled futex (`fugue_sync::futex`), so a lost wake-up is a deadlock; the protocol's
//! broken variant (the `ring-park-no-recheck` fault switch) is shown to be caught.
//!
//! Run with `scripts/loom.sh`, which CI runs.
#![cfg(loom)]

use fugue_ring::{ordered_with, Options, Padding, Strategy, TryAcquireError};
use loom::thread;

/// Explore with at most `LOOM_MAX_PREEMPTIONS` preemptions (default 2) per execution.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.max_branches = 100_000;
    b.check(f);
}

fn opts(strategy: Strategy) -> Options {
    Options {
        strategy,
        padding: Padding::CacheLine,
    }
}

fn put(p: &fugue_ring::Producer, n: u64) {
    let mut g = p.acquire(n).unwrap();
    g.copy_from_slice(&(n * 10 + 1).to_le_bytes());
    g.commit();
}

fn take(c: &mut fugue_ring::Consumer, n: u64) {
    let item = c.next().unwrap();
    assert_eq!(item.number(), n);
    assert_eq!(u64::from_le_bytes(item[..].try_into().unwrap()), n * 10 + 1);
}

/// Producer A (a spawned thread) writes items 0 and 2; producer B (the consumer's thread,
/// between reads) writes item 1. With capacity 1, A's item 2 waits for the release of item 1
/// and the consumer waits for A; with capacity 2, B writes item 1 before item 0 exists.
fn two_producers(capacity: usize, strategy: Strategy) {
    model(move || {
        let (p, mut c) = ordered_with(capacity, 8, opts(strategy));
        let a = p.clone();
        let t = thread::spawn(move || {
            put(&a, 0);
            put(&a, 2);
        });
        if capacity >= 2 {
            put(&p, 1);
            take(&mut c, 0);
        } else {
            take(&mut c, 0);
            put(&p, 1);
        }
        drop(p);
        take(&mut c, 1);
        take(&mut c, 2);
        // Nothing more: both producers are gone and item 3 never comes.
        t.join().unwrap();
        assert!(c.next().is_err());
    });
}

#[test]
fn capacity_1_two_producers_spin() {
    two_producers(1, Strategy::Spin);
}

#[test]
fn capacity_2_two_producers_spin() {
    two_producers(2, Strategy::Spin);
}

#[test]
fn capacity_1_two_producers_park() {
    two_producers(1, Strategy::Park);
}

#[test]
fn capacity_2_two_producers_park() {
    two_producers(2, Strategy::Park);
}

/// The parking protocol's broken variant (sleeping without the [C3] re-check of the
/// condition) loses a wake-up, and the park model reports the deadlock.
#[test]
fn park_catches_no_recheck() {
    fugue_sync::fault::expect_caught(
        "capacity_1_two_producers_park",
        "ring-park-no-recheck",
        "deadlock",
    );
}

/// Three threads, parking: producer A commits item 1 while the consumer may sleep waiting for
/// item 0 (only the commit of the item it waits for wakes it), then producer B commits
/// item 0.
#[test]
fn park_consumer_woken_by_the_item_it_waits_for() {
    model(|| {
        let (p, mut c) = ordered_with(2, 8, opts(Strategy::Park));
        let handles: Vec<_> = [1u64, 0]
            .into_iter()
            .map(|n| {
                let p = p.clone();
                thread::spawn(move || put(&p, n))
            })
            .collect();
        drop(p);
        take(&mut c, 0);
        take(&mut c, 1);
        for h in handles {
            h.join().unwrap();
        }
    });
}

/// The signaller's fence [S1] is needed: releasing a slot and reading the producers' wait
/// word without it can miss a producer that announced itself, and the model deadlocks.
#[test]
fn park_catches_no_fence() {
    fugue_sync::fault::expect_caught(
        "capacity_1_two_producers_park",
        "ring-park-no-fence",
        "deadlock",
    );
}

/// Two producers asleep on one wait word at once (capacity 3, and under loom slots 0 and 2
/// share a word): A waits for slot 0 (item 3), B for slot 2 (item 5). Each release of
/// either slot wakes both; the one whose slot is still taken sleeps again.
#[test]
fn park_producers_sharing_a_wait_word() {
    model(|| {
        let (p, mut c) = ordered_with(3, 8, opts(Strategy::Park));
        let handles: Vec<_> = [(0u64, 3u64), (2, 5)]
            .into_iter()
            .map(|(first, second)| {
                let p = p.clone();
                thread::spawn(move || {
                    put(&p, first);
                    put(&p, second);
                })
            })
            .collect();
        put(&p, 1);
        take(&mut c, 0);
        take(&mut c, 1);
        put(&p, 4);
        drop(p);
        for n in 2..6 {
            take(&mut c, n);
        }
        for h in handles {
            h.join().unwrap();
        }
    });
}

/// A producer asleep waiting for a slot is woken when the consumer goes away and gets
/// `Disconnected`.
#[test]
fn park_consumer_drop_wakes_a_waiting_producer() {
    model(|| {
        let (p, c) = ordered_with(1, 8, opts(Strategy::Park));
        let t = thread::spawn(move || {
            put(&p, 0);
            assert!(p.acquire(1).is_err());
        });
        drop(c);
        t.join().unwrap();
    });
}

#[test]
fn capacity_2_two_producers_yield() {
    two_producers(2, Strategy::Yield);
}

/// Three threads: two spawned producers (one item each) and the consumer.
#[test]
fn two_producer_threads_and_the_consumer() {
    model(|| {
        let (p, mut c) = ordered_with(2, 8, opts(Strategy::Spin));
        let handles: Vec<_> = (0..2u64)
            .map(|n| {
                let p = p.clone();
                thread::spawn(move || put(&p, n))
            })
            .collect();
        drop(p);
        take(&mut c, 0);
        take(&mut c, 1);
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn racing_for_the_same_number_one_wins() {
    model(|| {
        let (p, mut c) = ordered_with(1, 8, opts(Strategy::Spin));
        let p2 = p.clone();
        let t = thread::spawn(move || match p2.try_acquire(0) {
            Ok(mut g) => {
                g.copy_from_slice(&2u64.to_le_bytes());
                g.commit();
                true
            }
            Err(e) => {
                assert!(matches!(
                    e,
                    TryAcquireError::AlreadyAcquired | TryAcquireError::AlreadyRead
                ));
                false
            }
        });
        let mine = match p.try_acquire(0) {
            Ok(mut g) => {
                g.copy_from_slice(&1u64.to_le_bytes());
                g.commit();
                true
            }
            Err(e) => {
                assert!(matches!(
                    e,
                    TryAcquireError::AlreadyAcquired | TryAcquireError::AlreadyRead
                ));
                false
            }
        };
        let theirs = t.join().unwrap();
        assert!(mine ^ theirs, "exactly one producer gets item 0");
        let item = c.next().unwrap();
        let v = u64::from_le_bytes(item[..].try_into().unwrap());
        assert_eq!(v, if mine { 1 } else { 2 });
    });
}

#[test]
fn abandoned_item_is_written_again_and_read_once() {
    model(|| {
        let (p, mut c) = ordered_with(2, 8, opts(Strategy::Spin));
        let p2 = p.clone();
        let t = thread::spawn(move || {
            // Abandon item 0, then produce it for real.
            let mut g = p2.acquire(0).unwrap();
            g.copy_from_slice(&99u64.to_le_bytes());
            drop(g);
            let mut g = p2.acquire(0).unwrap();
            g.copy_from_slice(&7u64.to_le_bytes());
            g.commit();
        });
        let mut g = p.acquire(1).unwrap();
        g.copy_from_slice(&8u64.to_le_bytes());
        g.commit();
        drop(p);
        for (n, v) in [(0u64, 7u64), (1, 8)] {
            let item = c.next().unwrap();
            assert_eq!(item.number(), n);
            assert_eq!(u64::from_le_bytes(item[..].try_into().unwrap()), v);
        }
        t.join().unwrap();
    });
}
