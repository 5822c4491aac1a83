//! The clocked backend: no audio server; one audio thread wakes at absolute times `start +
//! k × period` (`clock_nanosleep` with `TIMER_ABSTIME` on `CLOCK_MONOTONIC`, so sleeps do not
//! drift), runs one measured cycle, and sleeps again. The thread asks for real-time priority
//! when the executor choice has `rt` (one above the workers), and goes on without it when the
//! system refuses. Inputs are silent and outputs are discarded: this backend exists to study
//! real-time behaviour on any machine.
//!
//! A cycle that starts more than one period late (the previous one overran, or the thread
//! was not scheduled) restarts the schedule from now and counts one overrun, reported as an
//! xrun; the late cycles are never run twice to catch up.

use std::sync::atomic::AtomicBool;

use fugue_graph::TaskGraph;

use super::paced::{self, Pacer};
use crate::options::{RunError, RunOptions, RunReport};
use crate::stats::Summary;

/// Monotonic clock now, in ns.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the monotonic clock reads `t_ns` (returns at once if it already does).
pub(crate) fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; the remaining-time pointer may be null with
        // TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
}

/// The longest single sleep of [`sleep_until_or`]: a stop request is seen within this
/// (a period may be seconds long: `--rate 1000 --buffer 8192`).
const STOP_LOOK: u64 = 20_000_000;

/// Sleeps until the monotonic clock reads `t_ns`, as [`sleep_until`], looking at `stop` at
/// least every [`STOP_LOOK`]: false when `stop` was set first (the caller ends instead of
/// running its cycle).
pub(crate) fn sleep_until_or(t_ns: u64, stop: &AtomicBool) -> bool {
    loop {
        // Relaxed: a request flag; nothing is published with it.
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        let now = now_ns();
        if now >= t_ns {
            return true;
        }
        sleep_until(t_ns.min(now + STOP_LOOK));
    }
}

/// The clock of a clocked run: cycle `k` is due at `base + k × period`.
struct Clock {
    /// `block × 1e9`: the period is `period_num / rate` ns, kept exact over many cycles.
    period_num: u128,
    rate: u128,
    base: u64,
    k: u64,
    /// No cycle starts at or after this instant (ns), however many cycles overran (and
    /// restarted the clock) before it.
    end: Option<u64>,
    overruns: u64,
    /// Time that ran no cycle, ns: a late cycle restarts the clock at the present, and the
    /// time it overran (from when the next cycle was due) is not caught up.
    skipped_ns: u64,
}

impl Clock {
    /// When cycle `k` of the present schedule is due.
    fn due(&self, k: u64) -> u64 {
        self.base + (k as u128 * self.period_num / self.rate) as u64
    }
}

impl Pacer for Clock {
    fn wait(&mut self, stop: &AtomicBool) -> Option<u64> {
        let target = self.due(self.k);
        // A cycle due before the end runs even when this thread is a little late for it (an
        // overrun restarts the clock at the present, so a run that keeps overrunning still
        // ends on time).
        if self.end.is_some_and(|e| target >= e) {
            return None;
        }
        if !sleep_until_or(target, stop) {
            return None;
        }
        Some(now_ns().saturating_sub(target))
    }

    fn output(&mut self, _: usize, _: &[f32]) {}

    fn end_cycle(&mut self, _: &AtomicBool) -> Result<(), String> {
        self.k += 1;
        let next = self.due(self.k);
        let now = now_ns();
        let period = (self.period_num / self.rate) as u64;
        if now > next + period {
            self.overruns += 1;
            self.skipped_ns += now - next;
            self.base = now;
            self.k = 0;
        }
        Ok(())
    }

    fn finish(&mut self, stop: &AtomicBool) {
        // The last cycle's period ends where the next cycle would be due.
        sleep_until_or(self.due(self.k), stop);
    }

    fn xruns(&self) -> u64 {
        self.overruns
    }

    fn skipped(&self) -> Option<u64> {
        // In periods: the schedule restarts at any instant, so the time is summed, not the
        // slots it passed.
        let period = self.period_num as f64 / self.rate as f64;
        Some((self.skipped_ns as f64 / period).round() as u64)
    }
}

/// Runs `graph` on the clocked backend at `rate` Hz and `block` frames.
pub(crate) fn run(
    graph: &TaskGraph,
    options: &RunOptions,
    rate: u32,
    block: usize,
    on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
    if rate == 0 || block == 0 {
        return Err(RunError::Options(
            "the sample rate and the buffer size must be at least 1".into(),
        ));
    }
    let max_cycles = paced::max_cycles(options, rate, block);
    let make = move |_outputs| {
        let period_num = block as u128 * 1_000_000_000;
        let base = now_ns() + 1_000_000;
        // The run's length is wall time.
        let end = max_cycles.map(|m| base + (m as u128 * period_num / rate as u128) as u64);
        Clock {
            period_num,
            rate: rate as u128,
            base,
            k: 0,
            end,
            overruns: 0,
            skipped_ns: 0,
        }
    };
    paced::run(graph, options, rate, block, None, make, on_tick)
}
