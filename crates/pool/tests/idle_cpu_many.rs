//! Many idle threads (64 per core) do not burn CPU, under every policy: the process's CPU
//! time over 300 ms of idleness stays under a tenth of the wall time. (A test binary of its
//! own: the process's CPU time must not include other tests running beside it.)

mod idle;

use std::time::{Duration, Instant};

use fugue_pool::{Policy, Pool};

#[test]
fn many_idle_threads_use_almost_no_cpu() {
    // Threads far beyond the cores: the polling policies' sleeps are stretched so that the
    // pool's wake-ups stay at one sleeper's per core (without, 256 threads waking every 1-2 ms
    // took most of two cores), and the pool still starts, runs and stops promptly.
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let threads = (64 * cores).min(1024);
    for p in Policy::ALL {
        let t0 = Instant::now();
        let pool = Pool::new(threads, p).unwrap();
        let sum = std::sync::atomic::AtomicUsize::new(0);
        pool.scope(|s| {
            for i in 0..1000 {
                let sum = &sum;
                s.spawn(move |_| {
                    sum.fetch_add(i, std::sync::atomic::Ordering::Relaxed);
                });
            }
        });
        assert_eq!(sum.into_inner(), 999 * 1000 / 2, "{p}");
        let (cpu, wall) = idle::cpu_while_idle();
        assert!(
            cpu < wall / 10,
            "{p}: {threads} idle threads used {cpu:?} of CPU in {wall:?}"
        );
        drop(pool);
        // Started, ran its tasks, idled and stopped: seconds at most, not the tens of
        // seconds of a pool whose threads' wake-ups fill the cores.
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{p}: {threads} threads took {:?}",
            t0.elapsed()
        );
    }
}
