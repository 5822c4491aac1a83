//! What the backends that own their audio thread share (the clocked one and ALSA): the
//! engine built for the rate and block the backend runs at, a thread that runs one measured
//! cycle each time its [`Pacer`] says the next one is due and hands the cycle's outputs to
//! it, the statistics read about ten times a second on the calling thread, and the report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_graph::TaskGraph;

use crate::cycle::CycleBody;
use crate::engine::Engine;
use crate::options::{EndReason, RunError, RunOptions, RunReport};
use crate::placement::place_audio_thread;
use crate::stats::Summary;

/// What paces a run's cycles on its audio thread and takes their outputs. Every method runs
/// on the audio thread, between cycles, and must not allocate, lock or wait for anything but
/// the clock or the device.
pub(crate) trait Pacer: Send {
    /// Waits until the next cycle is due. Returns how late it starts (ns), or `None` when no
    /// cycle is due any more (the run's time is up, or `stop` was set while it waited).
    fn wait(&mut self, stop: &AtomicBool) -> Option<u64>;
    /// Takes output channel `ch` of the cycle just run.
    fn output(&mut self, ch: usize, samples: &[f32]);
    /// Ends a cycle once its outputs are taken (the device's write). `Err` ends the run: the
    /// device failed, for the reason given.
    fn end_cycle(&mut self, stop: &AtomicBool) -> Result<(), String>;
    /// Cycles that came too late for the clock or the device (each recovered from).
    fn xruns(&self) -> u64;
    /// Periods whose cycle never ran because the clock restarted after a late cycle (the
    /// clocked backend; `None` where the device keeps the time).
    fn skipped(&self) -> Option<u64> {
        None
    }
    /// After the run's last cycle, when its time was up (not stopped): waits until that
    /// cycle's period has passed and the device has played what it holds, so that a run of
    /// `--seconds S` lasts S seconds and its last blocks are heard (returns early when `stop`
    /// is set).
    fn finish(&mut self, _stop: &AtomicBool) {}
}

/// What the audio thread hands back.
struct Done {
    engine: Engine,
    xruns: u64,
    skipped: Option<u64>,
    warnings: Vec<String>,
    end: EndReason,
}

/// The cycles a run of `options.duration` runs at `rate` Hz and `block` frames (at least
/// one), or `None` when it runs until stopped.
pub(crate) fn max_cycles(options: &RunOptions, rate: u32, block: usize) -> Option<u64> {
    options.duration.map(|d| {
        (d.as_secs_f64() * rate as f64 / block as f64)
            .round()
            .max(1.0) as u64
    })
}

/// Runs `graph` at `rate` Hz and `block` frames, paced by `make_pacer` (called on the audio
/// thread with the plan's output channels, before the first cycle: what it allocates is
/// allocated there before the cycles start). `device` is what the audio device granted, for
/// the report.
pub(crate) fn run<P: Pacer + 'static>(
    graph: &TaskGraph,
    options: &RunOptions,
    rate: u32,
    block: usize,
    device: Option<String>,
    make_pacer: impl FnOnce(usize) -> P + Send + 'static,
    mut on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
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
        engine.enable_profile().map_err(RunError::Options)?;
    }
    let (stats, meter) = options.start_stats()?;
    if let Some(g) = &options.granted {
        g.set(rate, block);
    }
    let mut body = CycleBody {
        meter,
        deadline_periods: options.deadline.periods(),
        hash_outputs: options.stats.hash_outputs,
        live: options.live.clone(),
        non_finite: Default::default(),
    };
    let non_finite = body.non_finite.clone();
    let max_cycles = max_cycles(options, rate, block);
    let stop = options
        .stop
        .clone()
        .unwrap_or_else(|| Arc::new(AtomicBool::new(false)));
    let finished = Arc::new(AtomicBool::new(false));
    let audio = {
        let stop = stop.clone();
        let finished = finished.clone();
        std::thread::Builder::new()
            .name("fugue-audio".into())
            .spawn(move || {
                let mut engine = engine;
                let warnings = place_audio_thread(&choice);
                // Wake at the period's boundary, not up to the default 50 µs of timer slack
                // later (a real-time thread has no slack; this one may not be one).
                // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
                unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                let mut pacer = make_pacer(engine.plan.n_outputs());
                let mut done_cycles = 0u64;
                let end = loop {
                    if max_cycles.is_some_and(|m| done_cycles >= m) {
                        break EndReason::Duration;
                    }
                    // Relaxed: a request polled once per cycle; nothing is published with it.
                    if stop.load(Ordering::Relaxed) {
                        break EndReason::Stopped;
                    }
                    let Some(late) = pacer.wait(&stop) else {
                        // Relaxed: as above.
                        break if stop.load(Ordering::Relaxed) {
                            EndReason::Stopped
                        } else {
                            EndReason::Duration
                        };
                    };
                    let started = Instant::now();
                    body.run(
                        &mut engine,
                        block,
                        started,
                        late,
                        |_, b| b.fill(0.0),
                        |ch, b| pacer.output(ch, b),
                    );
                    done_cycles += 1;
                    if let Err(why) = pacer.end_cycle(&stop) {
                        break EndReason::DeviceLost(why);
                    }
                };
                if matches!(end, EndReason::Duration) {
                    pacer.finish(&stop);
                }
                // Release pairs with the control thread's Acquire load: the thread is done.
                finished.store(true, Ordering::Release);
                Done {
                    engine,
                    xruns: pacer.xruns(),
                    skipped: pacer.skipped(),
                    warnings,
                    end,
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
        end: done.end,
        xruns: done.xruns,
        skipped_periods: done.skipped,
        pipeline: engine.plan.pipeline(),
        backend: if device.is_some() { "alsa" } else { "clocked" },
        device,
        sample_rate: rate,
        block,
        buffer_changes: 0,
        silent_cycles: 0,
        server_frames: None,
        warnings,
        panics: engine.plan.take_panics(),
        csv_error: outcome.csv_error,
        auto: engine.auto_report().cloned(),
        // Relaxed: the audio thread is done (joined).
        non_finite: non_finite.load(Ordering::Relaxed),
        profile: engine.profile_report(),
    })
}
