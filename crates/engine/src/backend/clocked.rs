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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_graph::TaskGraph;

use crate::cycle::CycleBody;
use crate::engine::Engine;
use crate::options::{EndReason, RunError, RunOptions, RunReport};
use crate::placement::place_audio_thread;
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

/// What the audio thread hands back.
struct Done {
    engine: Engine,
    overruns: u64,
    warnings: Vec<String>,
    stopped: bool,
}

/// Runs `graph` on the clocked backend at `rate` Hz and `block` frames.
pub(crate) fn run(
    graph: &TaskGraph,
    options: &RunOptions,
    rate: u32,
    block: usize,
    mut on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
    if rate == 0 || block == 0 {
        return Err(RunError::Options(
            "the sample rate and the buffer size must be at least 1".into(),
        ));
    }
    let mut choice = options.executor_for_period(rate, block);
    choice.auto_cycles = options
        .duration
        .map(|d| (d.as_secs_f64() * rate as f64 / block.max(1) as f64).ceil() as u64);
    let (mut engine, mut warnings) = Engine::build(
        graph,
        &options.registry,
        rate as f64,
        block,
        &choice,
        options.placeholder,
    )?;
    engine.track_wakes();
    if options.profile {
        engine.enable_profile();
    }
    let (stats, meter) = options.start_stats()?;
    let mut body = CycleBody {
        meter,
        deadline_periods: options.deadline.periods(),
        hash_outputs: options.stats.hash_outputs,
        live: options.live.clone(),
    };
    let max_cycles = options.duration.map(|d| {
        (d.as_secs_f64() * rate as f64 / block as f64)
            .round()
            .max(1.0) as u64
    });
    let stop = options
        .stop
        .clone()
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let finished = Arc::new(AtomicBool::new(false));
    let audio = {
        let stop = stop.clone();
        let finished = finished.clone();
        std::thread::Builder::new()
            .name("fugue-clocked".into())
            .spawn(move || {
                let mut engine = engine;
                let warnings = place_audio_thread(&choice);
                // Wake at the period's boundary, not up to the default 50 µs of timer slack
                // later (a real-time thread has no slack; this one may not be one).
                // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
                unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                let period_num = block as u128 * 1_000_000_000;
                let mut base = now_ns() + 1_000_000;
                // The run's length is wall time: no cycle starts at or after this instant,
                // however many cycles overran (and restarted the clock) before it.
                let end = max_cycles.map(|m| base + (m as u128 * period_num / rate as u128) as u64);
                let mut k: u64 = 0;
                let mut overruns = 0u64;
                let mut stopped = false;
                let mut done_cycles = 0u64;
                loop {
                    if max_cycles.is_some_and(|m| done_cycles >= m) {
                        break;
                    }
                    // Relaxed: a request polled once per cycle; nothing is published with it.
                    if stop.load(Ordering::Relaxed) {
                        stopped = true;
                        break;
                    }
                    let target = base + (k as u128 * period_num / rate as u128) as u64;
                    // A cycle due before the end runs even when this thread is a little
                    // late for it (an overrun restarts the clock at the present, so a run
                    // that keeps overrunning still ends on time).
                    if end.is_some_and(|e| target >= e) {
                        break;
                    }
                    sleep_until(target);
                    let started = Instant::now();
                    let late = now_ns().saturating_sub(target);
                    body.run(
                        &mut engine,
                        block,
                        started,
                        late,
                        |_, b| b.fill(0.0),
                        |_, _| {},
                    );
                    done_cycles += 1;
                    k += 1;
                    let next = base + (k as u128 * period_num / rate as u128) as u64;
                    if now_ns() > next + (period_num / rate as u128) as u64 {
                        overruns += 1;
                        base = now_ns();
                        k = 0;
                    }
                }
                // Release pairs with the control thread's Acquire load: the thread is done.
                finished.store(true, Ordering::Release);
                Done {
                    engine,
                    overruns,
                    warnings,
                    stopped,
                }
            })
            .map_err(|source| RunError::Io {
                what: "cannot start the audio thread".into(),
                source,
            })?
    };
    // Acquire pairs with the audio thread's Release store.
    while !finished.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(100));
        on_tick(&stats.live());
    }
    let done = audio
        .join()
        .map_err(|_| RunError::ThreadPanicked("audio"))?;
    let outcome = stats.finish();
    let mut engine = done.engine;
    warnings.extend(done.warnings);
    warnings.sort();
    warnings.dedup();
    on_tick(&outcome.summary);
    Ok(RunReport {
        summary: outcome.summary,
        records: outcome.records,
        end: if done.stopped {
            EndReason::Stopped
        } else {
            EndReason::Duration
        },
        xruns: done.overruns,
        sample_rate: rate,
        block,
        buffer_changes: 0,
        silent_cycles: 0,
        server_frames: None,
        warnings,
        panics: engine.plan.take_panics(),
        csv_error: outcome.csv_error,
        auto: engine.auto_report().cloned(),
        profile: engine.profile_report(),
    })
}
