//! Shutdown frees every task, queue and thread: with a counting global allocator, the bytes
//! alive after a pool of each policy was built, used (spawns, joins, detached tasks, a
//! panic, a full bounded queue) and dropped equal the bytes alive before it was built. A
//! single-threaded harness (`harness = false`): no other test allocates meanwhile.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use fugue_testkit::alloc::live_bytes;

use fugue_pool::{join, Policy, Pool, Scope};

#[global_allocator]
static ALLOC: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

fn tree<'s>(s: &Scope<'s>, d: u32, n: &'s AtomicUsize) {
    n.fetch_add(1, Ordering::Relaxed);
    if d > 0 {
        s.spawn(move |s| tree(s, d - 1, n));
        let (a, b) = join(|| d, || d);
        assert_eq!(a, b);
        s.spawn(move |s| tree(s, d - 1, n));
    }
}

/// Builds, uses and drops one pool.
fn use_pool(p: Policy, threads: usize) {
    let pool = Pool::builder().threads(threads).policy(p).build().unwrap();
    let n = AtomicUsize::new(0);
    pool.scope(|s| tree(s, 12, &n));
    assert_eq!(n.load(Ordering::Relaxed), (1 << 13) - 1);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.scope(|s| {
            s.spawn(|_| panic!("a task panics"));
        })
    }));
    assert!(r.is_err());
    for _ in 0..100 {
        pool.spawn(|| {});
    }
    let _ = pool.stats();
    drop(pool);
    // A bounded pool whose queue fills.
    let pool = Pool::builder()
        .threads(1)
        .policy(p)
        .capacity(1)
        .build()
        .unwrap();
    pool.scope(|s| {
        s.try_spawn(|_| {}).unwrap();
        assert!(s.try_spawn(|_| {}).is_err());
    });
    drop(pool);
}

fn main() {
    // Silence the expected panic's message (the hook itself allocates once, before counting).
    std::panic::set_hook(Box::new(|_| {}));
    // A first round allocates what std keeps for the process (thread bookkeeping, the panic
    // machinery's buffers); the measured rounds must not grow it.
    for p in Policy::ALL {
        use_pool(p, 2);
    }
    for p in Policy::ALL {
        for threads in [1, 3] {
            let before = live_bytes();
            use_pool(p, threads);
            let after = live_bytes();
            assert_eq!(
                after - before,
                0,
                "{p} with {threads} threads: {} bytes still alive after the pool was dropped",
                after - before
            );
        }
    }
    println!("pool_no_leak: every policy frees what it allocated");
}
