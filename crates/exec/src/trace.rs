//! What a profiled cycle leaves behind: when each task ran and on which thread, and when each
//! worker woke for the cycle. The plan and the executors write these records on the audio
//! path (a clock read and a few stores per task, nothing allocated); the owner of the plan
//! reads them between cycles ([`Plan::task_times`](crate::Plan::task_times),
//! [`Executor::worker_wakes`](crate::Executor::worker_wakes)).
//!
//! Times are nanoseconds of one monotonic clock ([`now_ns`]), the same for every thread of
//! the process, so that a task's start can be set against the cycle's start taken by another
//! thread.

use std::cell::Cell;

/// When one task (or one part of a split task) ran in the last profiled cycle, and where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskTime {
    /// Start, [`now_ns`] clock.
    pub start_ns: u64,
    /// End, [`now_ns`] clock.
    pub end_ns: u64,
    /// The thread that ran it: 0 for the calling (audio) thread, `1..threads` for the
    /// executor's workers.
    pub worker: u32,
}

impl TaskTime {
    /// How long it ran.
    #[inline]
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// A monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, read through the vDSO: no system
/// call). Never allocates, locks or blocks.
#[inline]
pub fn now_ns() -> u64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on the
        // systems fugue supports.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    #[cfg(not(unix))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static BASE: OnceLock<Instant> = OnceLock::new();
        BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

thread_local! {
    /// The executor thread index of the calling thread (0 unless a worker set it).
    static WORKER: Cell<u32> = const { Cell::new(0) };
}

/// The executor thread index of the calling thread: what a worker of a pool set with
/// [`set_worker_index`], 0 on any other thread (the audio thread).
#[inline]
pub fn worker_index() -> u32 {
    WORKER.with(Cell::get)
}

/// Sets the calling thread's executor thread index (the pools' workers, at start).
pub(crate) fn set_worker_index(w: u32) {
    WORKER.with(|c| c.set(w));
}
