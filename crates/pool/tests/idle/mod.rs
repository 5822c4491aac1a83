//! What the idle-CPU tests measure: the process's CPU time over 300 ms of idleness, after
//! 50 ms for the last tasks' threads to settle.

use std::time::{Duration, Instant};

/// The process's CPU time (user and system) over 300 ms of sleep, and that wall time.
pub fn cpu_while_idle() -> (Duration, Duration) {
    std::thread::sleep(Duration::from_millis(50));
    let (u0, s0) = fugue_pool::process_cpu_time();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    let (u1, s1) = fugue_pool::process_cpu_time();
    ((u1 + s1) - (u0 + s0), t0.elapsed())
}
