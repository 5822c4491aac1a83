//! An idle pool does not burn CPU, under every policy: the process's CPU time over 300 ms of
//! idleness stays under a tenth of the wall time. (A test binary of its own: the process's CPU
//! time must not include other tests running beside it.)

use std::time::{Duration, Instant};

use fugue_pool::{Policy, Pool};

#[test]
fn an_idle_pool_uses_almost_no_cpu() {
    for p in Policy::ALL {
        let pool = Pool::new(2, p).unwrap();
        pool.scope(|s| {
            for _ in 0..100 {
                s.spawn(|_| {});
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        let (u0, s0) = fugue_pool::process_cpu_time();
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_millis(300));
        let (u1, s1) = fugue_pool::process_cpu_time();
        let cpu = (u1 + s1) - (u0 + s0);
        let wall = t0.elapsed();
        // Two spinning threads would use 600 ms here; allow 10% of one core.
        assert!(
            cpu < wall / 10,
            "{p}: an idle pool used {cpu:?} of CPU in {wall:?}"
        );
        drop(pool);
    }
}
