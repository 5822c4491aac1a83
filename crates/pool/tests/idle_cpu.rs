//! An idle pool does not burn CPU, under every policy: the process's CPU time over 300 ms of
//! idleness stays under a tenth of the wall time. (A test binary of its own: the process's CPU
//! time must not include other tests running beside it.)

mod idle;

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
        let (cpu, wall) = idle::cpu_while_idle();
        // Two spinning threads would use 600 ms here; allow 10% of one core.
        assert!(
            cpu < wall / 10,
            "{p}: an idle pool used {cpu:?} of CPU in {wall:?}"
        );
        drop(pool);
    }
}
