//! What a real-time run is asked (options, backend, deadline rule) and what it reports: a
//! graph played cycle after cycle by a backend ([`Backend::Jack`] or
//! [`Backend::Clocked`]), measured per cycle, until a duration, a stop request or the end of
//! the audio server.
//!
//! **Deadlines.** A cycle of `B` frames at `R` Hz must be computed within its buffer period
//! `B / R`: that is the default deadline ([`Deadline::Period`]). JACK double-buffers, so the
//! 2019 study counted a miss only past twice the period; [`Deadline::Double`] offers that
//! rule. A cycle's duration is measured from the entry of the callback (JACK) or the wake-up
//! (clocked) to the moment its outputs have been copied out.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use fugue_dsp::Registry;
use fugue_exec::TaskPanic;
use thiserror::Error;

use crate::executor_choice::{BuildError, ExecutorChoice};
use crate::stats::{start_stats, CycleMeter, CycleRecord, StatsOptions, StatsThread, Summary};

/// Which deadline a cycle is held to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deadline {
    /// One buffer period (`frames / rate`).
    #[default]
    Period,
    /// Two buffer periods (the 2019 study's rule: JACK double-buffers).
    Double,
}

impl Deadline {
    /// The deadline in buffer periods.
    pub fn periods(self) -> u32 {
        match self {
            Deadline::Period => 1,
            Deadline::Double => 2,
        }
    }
}

/// The backend that paces the cycles.
#[derive(Clone, Debug, PartialEq)]
pub enum Backend {
    /// A JACK client: JACK's sample rate and buffer size, one port per channel.
    Jack {
        /// Connect the output ports to the system playback ports.
        connect: bool,
        /// The client's name.
        client_name: String,
    },
    /// JACK when a server is running, else the ALSA device (with the rate, block and
    /// periods asked), else an error that says what to do ([`RunError::NoBackend`]).
    Auto {
        /// As [`Backend::Jack`]'s.
        connect: bool,
        /// As [`Backend::Jack`]'s.
        client_name: String,
        /// As [`Backend::Alsa`]'s.
        device: String,
        /// As [`Backend::Alsa`]'s.
        rate: u32,
        /// As [`Backend::Alsa`]'s.
        block: usize,
        /// As [`Backend::Alsa`]'s.
        periods: u32,
    },
    /// An ALSA playback device (a sound card, or PulseAudio and PipeWire through their ALSA
    /// plugins): the rate and period size asked of it, the graph compiled at what it grants,
    /// cycles paced by the device (see [`crate::backend::alsa`]).
    Alsa {
        /// The device's ALSA name (`default`, `hw:0`, `plughw:1,0`, `null`, ...).
        device: String,
        /// Sample rate asked, in Hz.
        rate: u32,
        /// Frames per cycle asked (the device's period size).
        block: usize,
        /// Periods in the device's buffer asked (its latency: `periods × block` frames).
        periods: u32,
    },
    /// No audio server: cycles paced by absolute-time sleeps at the buffer period, on a
    /// real-time thread where the executor choice asks for one and the system permits.
    Clocked {
        /// Sample rate in Hz.
        rate: u32,
        /// Frames per cycle.
        block: usize,
    },
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The backend.
    pub backend: Backend,
    /// The executor.
    pub executor: ExecutorChoice,
    /// Stop after this much wall time (`None`: until [`RunOptions::stop`] is set or the
    /// server ends). The clocked backend runs `round(duration × rate / block)` cycles when
    /// none overruns, fewer when some do: no cycle starts once the time is up. The JACK
    /// backend stops within a few milliseconds of it (its control thread looks every 5 ms).
    pub duration: Option<Duration>,
    /// The deadline rule.
    pub deadline: Deadline,
    /// Where the per-cycle records go.
    pub stats: StatsOptions,
    /// Set to `true` by another thread (Ctrl-C) to stop the run; the statistics so far are
    /// kept.
    pub stop: Option<Arc<AtomicBool>>,
    /// Run nodes of unknown kind as silence.
    pub placeholder: bool,
    /// Collect the per-node, per-worker profile ([`RunReport::profile`]).
    pub profile: bool,
    /// The kinds the graph's nodes are built by (the built-in ones by default).
    pub registry: Registry,
    /// Live parameter changes, set before the cycle after they arrive ([`crate::live`]).
    pub live: Option<crate::live::LiveQueue>,
    /// Set with the rate and block the backend granted, before the first cycle.
    pub granted: Option<std::sync::Arc<crate::live::Granted>>,
    /// The graph as the live changes left it ([`crate::live::LiveGraph`]): what the JACK
    /// backend compiles at a new buffer size, instead of the graph the run started with.
    pub live_graph: Option<crate::live::LiveGraph>,
    /// Called once on the calling thread, before the first cycle, with a line saying what
    /// the audio device was asked and granted (ALSA backend), so that it is seen when the
    /// run starts. The line is also [`RunReport::device`].
    pub announce: Option<fn(&str)>,
}

impl RunOptions {
    /// The executor choice for a backend whose cycles start every `block / rate` seconds:
    /// the workers wake ahead of each cycle ([`fugue_exec::ExecOptions::period`]) unless
    /// the choice has a period already or a zero wake lead.
    pub(crate) fn executor_for_period(&self, rate: u32, block: usize) -> ExecutorChoice {
        let mut choice = self.executor.clone();
        choice.stop.clone_from(&self.stop);
        if choice.options.period.is_none() && !choice.options.wake_lead.is_zero() && rate > 0 {
            choice.options.period = Some(Duration::from_nanos(
                (block as u128 * 1_000_000_000 / rate as u128) as u64,
            ));
        }
        choice
    }

    /// Starts the statistics thread these options ask for; the error names the CSV file
    /// that could not be created.
    pub(crate) fn start_stats(&self) -> Result<(StatsThread, CycleMeter), RunError> {
        start_stats(self.stats.clone()).map_err(|source| RunError::Io {
            what: match &self.stats.csv {
                Some(p) => format!("cannot create {}", p.display()),
                None => "cannot start the statistics thread".into(),
            },
            source,
        })
    }
}

impl Default for RunOptions {
    /// Clocked at 48 kHz and 256 frames, sequential, until stopped, the built-in kinds.
    fn default() -> Self {
        RunOptions {
            backend: Backend::Clocked {
                rate: 48_000,
                block: 256,
            },
            executor: ExecutorChoice::default(),
            duration: None,
            deadline: Deadline::Period,
            stats: StatsOptions::default(),
            stop: None,
            placeholder: false,
            profile: false,
            registry: Registry::with_builtin_kinds(),
            live: None,
            granted: None,
            live_graph: None,
            announce: None,
        }
    }
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The duration elapsed.
    Duration,
    /// [`RunOptions::stop`] was set.
    Stopped,
    /// The audio server shut down (its reason).
    ServerGone(String),
    /// The audio device failed and could not be recovered (ALSA's reason).
    DeviceLost(String),
    /// The audio server changed what the run plays at (JACK's buffer size) to something the
    /// graph cannot run at (why).
    Unplayable(String),
}

impl EndReason {
    /// How a run of `cycles` cycles that ended this way is said: `Err` with a sentence when
    /// it failed (the audio server or device went away, or changed to what the graph cannot
    /// run at), `Ok` with a sentence when it was
    /// stopped, `Ok(None)` when its time was up. `note` ends the sentence (where the
    /// statistics went).
    pub fn said(&self, cycles: u64, note: &str) -> Result<Option<String>, String> {
        let kept = format!(
            "after {}; the statistics so far were kept{note}",
            crate::report::counted(cycles as usize, "cycle")
        );
        match self {
            EndReason::ServerGone(reason) if reason.is_empty() => {
                Err(format!("the JACK server stopped {kept}"))
            }
            EndReason::ServerGone(reason) => {
                Err(format!("the JACK server stopped ({reason}) {kept}"))
            }
            EndReason::DeviceLost(reason) | EndReason::Unplayable(reason) => {
                Err(format!("{reason} {kept}"))
            }
            EndReason::Stopped => Ok(Some(format!(
                "after {}{note}",
                crate::report::counted(cycles as usize, "cycle")
            ))),
            EndReason::Duration => Ok(None),
        }
    }
}

/// What a run did.
#[derive(Debug)]
pub struct RunReport {
    /// The aggregate of the cycle records.
    pub summary: Summary,
    /// Every record, when [`StatsOptions::keep_records`].
    pub records: Vec<CycleRecord>,
    /// Why the run ended.
    pub end: EndReason,
    /// JACK's xrun count (jack backend); the device's underruns, each recovered (ALSA
    /// backend); cycles that started more than one period late and were rescheduled
    /// (clocked backend).
    pub xruns: u64,
    /// Periods whose cycle never ran because the clock restarted after a late cycle
    /// (clocked backend; `None` for the others, whose device or server keeps the time).
    pub skipped_periods: Option<u64>,
    /// Sub-blocks each cycle's block was cut into (`--pipeline`; 1: not pipelined; JACK: at
    /// the last buffer size).
    pub pipeline: usize,
    /// What the audio device was asked and granted (ALSA backend), in words.
    pub device: Option<String>,
    /// The backend that ran: `jack`, `alsa` or `clocked` (what [`Backend::Auto`] found).
    pub backend: &'static str,
    /// The sample rate, Hz.
    pub sample_rate: u32,
    /// Frames per cycle (the last one used).
    pub block: usize,
    /// Buffer-size changes handled while running (jack backend).
    pub buffer_changes: u32,
    /// Cycles output as silence while a plan for a new buffer size was being compiled.
    pub silent_cycles: u64,
    /// Frames the server's clock advanced from the start of the first cycle this client ran
    /// to the end of the last one (jack backend; `None` for the clocked backend, whose clock
    /// is the run's own). Divided by the block, it is the number of cycles the server ran
    /// while the client was active: more than the cycles run means the server skipped it.
    pub server_frames: Option<u64>,
    /// Things to say once (pinning or priority refused, ...).
    pub warnings: Vec<String>,
    /// Processors that panicked (their outputs were silenced).
    pub panics: Vec<TaskPanic>,
    /// The CSV ([`StatsOptions::csv`]) could not be written: the reason; the summary is
    /// still valid.
    pub csv_error: Option<std::io::Error>,
    /// The profile, when [`RunOptions::profile`] asked for it (jack backend: of the cycles
    /// run at the last buffer size).
    pub profile: Option<crate::ProfileReport>,
    /// What the automatic executor choice measured and chose ([`ExecutorChoice::auto`];
    /// JACK backend: at the first buffer size).
    pub auto: Option<crate::auto::AutoReport>,
    /// Output samples that were not finite numbers (NaN or infinity), played as silence.
    pub non_finite: u64,
}

impl RunReport {
    /// Cycles the client ran: measured, dropped from the statistics, or output as silence
    /// while a plan for a new buffer size was compiled.
    pub fn cycles_run(&self) -> u64 {
        self.summary.cycles + self.summary.dropped + self.silent_cycles
    }

    /// Cycles of the server's clock while the client was active ([`RunReport::server_frames`]
    /// over the block), when that count is exact: jack backend, no buffer-size change.
    pub fn server_cycles(&self) -> Option<u64> {
        match self.server_frames {
            Some(f) if self.buffer_changes == 0 && self.block > 0 => Some(f / self.block as u64),
            _ => None,
        }
    }
}

/// The longest JACK client name, in bytes: `jack_client_name_size()` (64 in JACK 1 and 2,
/// the final NUL included) less one. Checked before connecting, as JACK's own refusal reads
/// like a missing server.
pub const JACK_CLIENT_NAME_MAX: usize = 63;

/// Why a run could not start or go on.
#[derive(Debug, Error)]
pub enum RunError {
    /// The graph could not be compiled, or its executor built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// No JACK server is running (the one `JACK_DEFAULT_SERVER` names, when it is set).
    #[error("{}", crate::backend::jack::no_server())]
    NoServer,
    /// The JACK client name is longer than JACK allows.
    #[error("the JACK client name is {len} bytes long; JACK allows at most {max} (jack_client_name_size() less the final NUL): give a shorter --client-name")]
    ClientName {
        /// The name's length in bytes.
        len: usize,
        /// [`JACK_CLIENT_NAME_MAX`].
        max: usize,
    },
    /// The JACK library is missing.
    #[error("the JACK library (libjack) cannot be loaded: {0}; install libjack-jackd2-0 or use --backend clocked")]
    NoLibrary(String),
    /// A JACK call failed.
    #[error("JACK: {0}")]
    Jack(String),
    /// The ALSA device could not be opened or set up (the sentence names it and says why).
    #[error("{0}")]
    Alsa(String),
    /// [`Backend::Auto`] found neither a JACK server nor a usable ALSA device (the ALSA
    /// backend's sentence, which begins in lower case: `the ALSA playback device ...`).
    #[error("no JACK server is running and {0}; start JACK (`jackd -d alsa &`, or `jackd -d dummy -r 48000 -p 256 &` to play silently), choose an ALSA device with --device NAME, or use --backend clocked")]
    NoBackend(String),
    /// Bad options (a duration, a sample rate or a buffer size out of range).
    #[error("{0}")]
    Options(String),
    /// A thread of the run (the audio thread) panicked.
    #[error("the {0} thread panicked")]
    ThreadPanicked(&'static str),
    /// A file or thread could not be created.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
}

/// Checks a length asked in seconds: a number from the length of one `unit` (`unit_seconds`
/// long: one sample, one cycle; nothing shorter can be rendered or run; without one, any
/// length above zero) to `max` seconds. The error is one sentence about `--seconds`.
pub fn check_seconds(s: f64, max: f64, unit: Option<(f64, &str)>) -> Result<(), String> {
    if !(s.is_finite() && s > 0.0 && s <= max) {
        return Err(format!(
            "--seconds must be a number of seconds above 0 and up to {max}, not {}",
            fugue_graph::short_number(s)
        ));
    }
    if let Some((unit_seconds, unit)) = unit.filter(|(u, _)| s < *u) {
        // Rounded up, so that the value shown is accepted.
        let shortest = (unit_seconds * 1e7).ceil() / 1e7;
        return Err(format!(
            "--seconds {} is shorter than {unit}; the shortest length is {shortest:.7} s",
            fugue_graph::short_number(s)
        ));
    }
    Ok(())
}
