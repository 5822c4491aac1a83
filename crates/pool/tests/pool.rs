//! The pool's behaviour under every policy: every task runs exactly once (about ten million
//! tasks across the test: nested spawns, joins, spawns from threads outside the pool, panics),
//! no deadlock or lost wake-up under random trees with random sleeps, bounded queues that say
//! `Full` instead of blocking, rejected sizes, statistics that add up, an idle pool that does
//! not burn CPU.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use fugue_pool::{join, BuildError, Policy, Pool, Scope, SpawnError};

fn marks(n: usize) -> Vec<AtomicU8> {
    (0..n).map(|_| AtomicU8::new(0)).collect()
}

fn assert_once(seen: &[AtomicU8], from: usize, what: &str, p: Policy) {
    for (i, s) in seen.iter().enumerate().skip(from) {
        let v = s.load(Ordering::Relaxed);
        assert_eq!(v, 1, "{what} under {p}: node {i} ran {v} times");
    }
}

/// A binary tree of spawns: node `i` marks itself and spawns `2i` and `2i + 1` below `depth`.
fn spawn_tree<'s>(s: &Scope<'s>, i: usize, depth: u32, seen: &'s [AtomicU8]) {
    seen[i].fetch_add(1, Ordering::Relaxed);
    if (i.ilog2()) < depth {
        s.spawn(move |s| spawn_tree(s, 2 * i, depth, seen));
        s.spawn(move |s| spawn_tree(s, 2 * i + 1, depth, seen));
    }
}

/// The same tree with `join`.
fn join_tree(i: usize, depth: u32, seen: &[AtomicU8]) {
    seen[i].fetch_add(1, Ordering::Relaxed);
    if (i.ilog2()) < depth {
        join(
            || join_tree(2 * i, depth, seen),
            || join_tree(2 * i + 1, depth, seen),
        );
    }
}

/// Runs `f` on another thread and fails if it takes longer than `limit` (a deadlock or a lost
/// wake-up).
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: not finished after {limit:?} (deadlock or lost wake-up)"),
    }
}

const SPAWN_DEPTH: u32 = 19;
const JOIN_DEPTH: u32 = 18;

#[test]
fn every_task_runs_exactly_once_under_every_policy() {
    let total = AtomicUsize::new(0);
    for p in Policy::ALL {
        let pool = Pool::new(2, p).unwrap();

        // Nested spawns: 2^20 - 1 tasks.
        let seen = marks(1 << (SPAWN_DEPTH + 1));
        pool.scope(|s| spawn_tree(s, 1, SPAWN_DEPTH, &seen));
        assert_once(&seen, 1, "spawn tree", p);
        total.fetch_add(seen.len() - 1, Ordering::Relaxed);

        // Joins: 2^19 - 1 closures.
        let seen = marks(1 << (JOIN_DEPTH + 1));
        pool.install(|| join_tree(1, JOIN_DEPTH, &seen));
        assert_once(&seen, 1, "join tree", p);
        total.fetch_add(seen.len() - 1, Ordering::Relaxed);

        // Spawns from threads outside the pool, into a scope and detached.
        let seen = marks(4000);
        pool.scope(|s| {
            std::thread::scope(|ts| {
                for t in 0..2 {
                    let seen = &seen;
                    ts.spawn(move || {
                        for k in 0..1000 {
                            let i = t * 1000 + k;
                            s.spawn(move |_| {
                                seen[i].fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                }
            });
        });
        let detached = std::sync::Arc::new(marks(2000));
        for i in 0..2000 {
            let d = detached.clone();
            pool.spawn(move || {
                d[i].fetch_add(1, Ordering::Relaxed);
            });
        }
        drop(pool); // waits for the detached tasks
        assert_once(&seen[..2000], 0, "outside spawns", p);
        assert_once(&detached, 0, "detached spawns", p);
        total.fetch_add(4000, Ordering::Relaxed);
    }
    assert!(total.load(Ordering::Relaxed) >= 10_000_000);
}

#[test]
fn a_panic_reaches_the_scope_caller_and_the_other_tasks_still_run() {
    for p in Policy::ALL {
        let pool = Pool::new(2, p).unwrap();
        let seen = marks(20_000);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.scope(|s| {
                for i in 0..seen.len() {
                    let seen = &seen;
                    s.spawn(move |s| {
                        seen[i].fetch_add(1, Ordering::Relaxed);
                        if i % 5000 == 17 {
                            // A nested task spawned just before the panic still runs.
                            s.spawn(move |_| {
                                seen[i].fetch_add(1, Ordering::Relaxed);
                            });
                            std::panic::panic_any(i);
                        }
                    });
                }
            })
        }));
        let payload = r.expect_err("the scope must resume the panic");
        let i = *payload.downcast_ref::<usize>().expect("the task's payload");
        assert_eq!(i % 5000, 17, "{p}");
        for (i, s) in seen.iter().enumerate() {
            let want = if i % 5000 == 17 { 2 } else { 1 };
            assert_eq!(s.load(Ordering::Relaxed), want, "{p}: task {i}");
        }

        // A panic in either half of a join reaches the caller after both ran.
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.join(
                || {
                    ran.fetch_add(1, Ordering::Relaxed);
                    panic!("a")
                },
                || {
                    std::thread::sleep(Duration::from_millis(1));
                    ran.fetch_add(1, Ordering::Relaxed);
                },
            )
        }));
        // `b` ran if another thread had taken it before `a` panicked; it is not running now.
        assert!(r.is_err(), "{p}");
        let n = ran.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(3));
        assert!(
            (1..=2).contains(&n) && ran.load(Ordering::Relaxed) == n,
            "{p}"
        );
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.join(|| 1, || -> u32 { panic!("b") })
        }));
        assert!(r.is_err(), "{p}");
        // The pool still works.
        assert_eq!(pool.join(|| 1, || 2), (1, 2));
    }
}

/// A small deterministic generator (the tree's shape must be the same when counted serially).
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The number of nodes of the random tree rooted at `seed`.
fn tree_size(seed: u64, depth: u32) -> usize {
    let r = mix(seed);
    let kids = if depth == 0 { 0 } else { r % 4 };
    1 + (0..kids)
        .map(|k| tree_size(mix(seed ^ (k + 1)), depth - 1))
        .sum::<usize>()
}

/// The random tree run in the pool: 0-3 children each, spawned or joined at random, some
/// nodes sleeping up to 300 µs.
fn random_tree<'s>(s: &Scope<'s>, seed: u64, depth: u32, count: &'s AtomicUsize) {
    count.fetch_add(1, Ordering::Relaxed);
    let r = mix(seed);
    if r.is_multiple_of(7) {
        std::thread::sleep(Duration::from_micros(r % 300));
    }
    let kids = if depth == 0 { 0 } else { r % 4 };
    let child = |k: u64| mix(seed ^ (k + 1));
    match kids {
        2 if (r >> 8).is_multiple_of(2) => {
            join(
                || random_tree(s, child(0), depth - 1, count),
                || random_tree(s, child(1), depth - 1, count),
            );
        }
        _ => {
            for k in 0..kids {
                let c = child(k);
                s.spawn(move |s| random_tree(s, c, depth - 1, count));
            }
        }
    }
}

#[test]
fn random_trees_with_random_sleeps_finish_under_every_policy() {
    for p in Policy::ALL {
        within(
            Duration::from_secs(120),
            &format!("stress under {p}"),
            move || {
                for threads in [1, 2, 3] {
                    let pool = Pool::new(threads, p).unwrap();
                    for round in 0..12u64 {
                        let seed = mix(round * 31 + threads as u64);
                        let count = AtomicUsize::new(0);
                        pool.scope(|s| random_tree(s, seed, 9, &count));
                        assert_eq!(
                            count.load(Ordering::Relaxed),
                            tree_size(seed, 9),
                            "{p}, {threads} threads, round {round}"
                        );
                        if round % 4 == 3 {
                            // Let the workers fall asleep, so the next scope must wake them.
                            std::thread::sleep(Duration::from_millis(5));
                        }
                    }
                }
            },
        );
    }
}

#[test]
fn a_full_queue_hands_the_task_back_and_never_hangs() {
    for p in Policy::ALL {
        within(
            Duration::from_secs(30),
            &format!("full queue under {p}"),
            move || {
                // From a worker: one thread, capacity 1; the worker is busy running the body.
                let pool = Pool::builder()
                    .threads(1)
                    .policy(p)
                    .capacity(1)
                    .build()
                    .unwrap();
                let ran = AtomicUsize::new(0);
                pool.scope(|s| {
                    let ran = &ran;
                    s.try_spawn(move |_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
                    let back = s
                        .try_spawn(move |_| {
                            ran.fetch_add(10, Ordering::Relaxed);
                        })
                        .expect_err("a second task must not fit");
                    let SpawnError::Full(f) = back else {
                        panic!("the scope ended while its body runs");
                    };
                    f(s);
                    // `spawn` runs the task itself when the queue is full.
                    s.spawn(move |_| {
                        ran.fetch_add(100, Ordering::Relaxed);
                    });
                });
                assert_eq!(ran.load(Ordering::Relaxed), 111, "{p}");

                // The same from inside a task (whose spawns spend reserved counts): the refused
                // task's count goes back, and the scope still ends.
                let ran = AtomicUsize::new(0);
                pool.scope(|s| {
                    let ran = &ran;
                    s.spawn(move |s| {
                        s.try_spawn(move |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                        let SpawnError::Full(f) = s
                            .try_spawn(move |_| {
                                ran.fetch_add(10, Ordering::Relaxed);
                            })
                            .expect_err("a second task must not fit")
                        else {
                            panic!("the scope ended while a task of it runs");
                        };
                        f(s);
                    });
                });
                assert_eq!(ran.load(Ordering::Relaxed), 11, "{p}");

                // From outside: the only worker is blocked, the injector (or stack) holds 2.
                let pool = Pool::builder()
                    .threads(1)
                    .policy(p)
                    .capacity(2)
                    .build()
                    .unwrap();
                let (started_tx, started_rx) = mpsc::channel();
                let (go_tx, go_rx) = mpsc::channel::<()>();
                pool.spawn(move || {
                    started_tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                });
                started_rx.recv().unwrap();
                pool.try_spawn(|| {}).unwrap();
                pool.try_spawn(|| {}).unwrap();
                let e = pool.try_spawn(|| {}).expect_err("the queue holds 2");
                assert_eq!(e.to_string(), "the pool's queue is full");
                go_tx.send(()).unwrap();
                drop(pool);
            },
        );
    }
}

#[test]
fn bad_sizes_are_rejected_when_the_pool_is_built() {
    assert!(matches!(
        Pool::builder().threads(0).build(),
        Err(BuildError::ZeroThreads)
    ));
    assert!(matches!(
        Pool::builder().capacity(0).build(),
        Err(BuildError::ZeroCapacity)
    ));
    let e = Pool::builder().threads(5000).build().unwrap_err();
    assert!(
        matches!(
            e,
            BuildError::TooManyThreads {
                requested: 5000,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("5000"), "{e}");
    assert!("steal".parse::<Policy>().is_ok());
    assert!("STEAL".parse::<Policy>().is_err());
}

#[test]
fn statistics_add_up() {
    for p in Policy::ALL {
        let pool = Pool::new(2, p).unwrap();
        let seen = marks(1 << 15);
        let ((), st) = pool.scope_with_stats(|s| spawn_tree(s, 1, 14, &seen));
        assert_eq!(st.threads.len(), 2);
        // The root runs in the body; every other node is a spawned task.
        let n = (1u64 << 15) - 2;
        // Every task counted once, plus the body (sent in from outside).
        assert_eq!(st.total.tasks, n + 1, "{p}: {st:?}");
        assert_eq!(st.total.spawns, n + 1, "{p}: {st:?}");
        assert_eq!(st.outside.spawns, 1, "{p}");
        assert_eq!(
            st.threads.iter().map(|t| t.tasks).sum::<u64>(),
            st.total.tasks
        );
        assert!(st.wall > Duration::ZERO);
        // Idle time is time within the run: at most the run's wall time per thread (give or
        // take the few µs between a worker's last clock read and the caller's).
        for t in &st.threads {
            assert!(
                t.idle <= st.wall + Duration::from_micros(50),
                "{p}: idle {:?} > wall {:?}",
                t.idle,
                st.wall
            );
        }
        // The next run starts from zero.
        let ((), st2) = pool.scope_with_stats(|_| {});
        assert_eq!(st2.total.tasks, 1, "{p}");
    }
}

#[test]
fn a_task_can_open_a_nested_scope_on_the_same_pool() {
    for p in Policy::ALL {
        let pool = Pool::new(2, p).unwrap();
        let count = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..8 {
                let (pool, count) = (&pool, &count);
                s.spawn(move |_| {
                    let mut local = [0u32; 8];
                    pool.scope(|inner| {
                        for x in local.iter_mut() {
                            inner.spawn(move |_| *x = 1);
                        }
                    });
                    count.fetch_add(local.iter().sum::<u32>() as usize, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(count.load(Ordering::Relaxed), 64, "{p}");
    }
}
