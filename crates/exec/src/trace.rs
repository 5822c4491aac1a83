//! What a profiled cycle leaves behind: when each task ran and on which thread, and when each
//! worker woke for the cycle. The plan and the executors write these records on the audio
//! path (a clock read and a few stores per task, nothing allocated); the owner of the plan
//! reads them between cycles ([`Plan::task_times`](crate::Plan::task_times),
//! [`Executor::worker_wakes`](crate::Executor::worker_wakes)).
//!
//! Times are ticks of one clock ([`now`]: the processor's time-stamp counter on x86-64,
//! read in a few nanoseconds, else [`now_ns`]), the same for every thread of the process, so
//! that a task's start can be set against the cycle's start taken by another thread;
//! [`Calibration`] converts ticks to nanoseconds.

use std::cell::Cell;

/// When one task (or one part of a split task) ran in the last profiled cycle, and where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskTime {
    /// Start, [`now`] ticks.
    pub start: u64,
    /// End, [`now`] ticks.
    pub end: u64,
    /// The thread that ran it: 0 for the calling (audio) thread, `1..threads` for the
    /// executor's workers.
    pub worker: u32,
}

impl TaskTime {
    /// How long it ran, in ticks.
    #[inline]
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// The profile's clock, in ticks: the time-stamp counter on x86-64 (constant-rate and
/// synchronised between cores on the processors fugue runs on, which is what lets Linux use
/// it as its clock source), [`now_ns`] elsewhere. Never allocates, locks or blocks.
#[inline]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions; it is available on every x86-64 processor.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        now_ns()
    }
}

/// [`now`], read in program order: after every earlier instruction has completed (its
/// loads included) and before any later one starts. The cycle's own start and end use it,
/// so that the end is not read ahead of the load that saw the cycle's last task finish.
/// Never allocates, locks or blocks.
#[inline]
pub fn now_ordered() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: LFENCE and RDTSC have no preconditions; both exist on every x86-64
        // processor (SSE2 is part of the architecture).
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        now_ns()
    }
}

/// Converts [`now`] ticks to nanoseconds, from two readings of both clocks taken apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    ticks: u64,
    ns: u64,
}

impl Calibration {
    /// Both clocks now: the first reading.
    pub fn start() -> Calibration {
        Calibration {
            ticks: now(),
            ns: now_ns(),
        }
    }

    /// Nanoseconds per tick, from the first reading to now (1 on systems where ticks are
    /// nanoseconds, or when no time passed; the longer the interval, the closer).
    pub fn ns_per_tick(&self) -> f64 {
        if cfg!(not(target_arch = "x86_64")) {
            return 1.0;
        }
        let dt = now().saturating_sub(self.ticks);
        let dn = now_ns().saturating_sub(self.ns);
        if dt == 0 || dn == 0 {
            1.0
        } else {
            dn as f64 / dt as f64
        }
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
/// `set_worker_index`, 0 on any other thread (the audio thread).
#[inline]
pub fn worker_index() -> u32 {
    WORKER.with(Cell::get)
}

/// Sets the calling thread's executor thread index (the pools' workers, at start).
pub(crate) fn set_worker_index(w: u32) {
    WORKER.with(|c| c.set(w));
}
