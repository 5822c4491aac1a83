//! An idle pool burns no core. A binary of its own: the figure is the process's CPU time, to
//! which any other test running beside it in the same process would add its own.

use std::time::Duration;

use fugue_bench::pool::{idle_cpu, PoolKind, Runner};
use fugue_pool::Policy;

#[test]
fn an_idle_pool_burns_no_core() {
    let r = Runner::start(PoolKind::Fugue(Policy::Steal), 2).unwrap();
    // Generous: the machine running the test may be busy; the benchmark reports the figure.
    let busy = idle_cpu(&r, Duration::from_millis(200));
    assert!(
        busy < 0.2,
        "an idle pool of 2 threads kept {busy:.2} cores busy"
    );
}
