//! How a host is started: the mode, the backend, the executor of each graph and the other
//! options, with the checks and fittings [`Host::with_registry`](super::Host::with_registry)
//! applies to them.

use std::path::PathBuf;
use std::time::Duration;

use fugue_exec::{ExecOptions, ExecutorKind, TenantGrain};

use super::HostError;
use crate::Pipeline;

/// How the loaded graphs share the threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// One pool, one thread per core, all graphs' tasks together.
    #[default]
    Shared,
    /// The threads split among the graphs.
    Partitioned,
    /// One executor of `threads` threads per graph.
    Separate,
}

impl Mode {
    /// Every mode, in the order reports list them.
    pub const ALL: [Mode; 3] = [Mode::Shared, Mode::Partitioned, Mode::Separate];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Partitioned => "partitioned",
            Mode::Separate => "separate",
        }
    }

    /// The mode of a command-line name.
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An executor as named: a kind, or `auto` (chosen by measuring). In the host, which
/// executor runs each graph that has one of its own (`separate` mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphExecutor {
    /// `separate` mode: chosen at each load by measuring the candidates on the graph (see the
    /// module's documentation). `shared` and `partitioned` modes: the host's pool, the only
    /// executor they have.
    #[default]
    Auto,
    /// This executor on [`HostOptions::threads`] threads (`separate` mode only).
    Kind(ExecutorKind),
}

impl std::fmt::Display for GraphExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphExecutor::Auto => f.write_str("auto"),
            GraphExecutor::Kind(k) => write!(f, "{k}"),
        }
    }
}

/// How long the measurements of [`GraphExecutor::Auto`] take at most per load, by default:
/// the trials run on the control thread while the loaded graphs play, and on a machine of few
/// cores they compete with the audio thread (see `docs/host.md`, "Executors").
pub const AUTO_BUDGET: Duration = Duration::from_millis(100);

/// What paces the host's cycles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostBackend {
    /// No clock: cycles run on the control thread, as fast as possible, while it waits
    /// ([`Host::wait`](super::Host::wait)). Deterministic.
    #[default]
    Offline,
    /// An audio thread woken every period by absolute-time sleeps.
    Clocked,
    /// An ALSA playback device: asked for [`HostOptions::rate`] and
    /// [`HostOptions::block`], the host runs at what it grants (see
    /// [`crate::backend::alsa`]); its audio thread is paced by the device.
    Alsa {
        /// The device's ALSA name (`default`, `hw:0`, `null`, ...).
        device: String,
        /// Periods in the device's buffer asked.
        periods: u32,
    },
    /// A JACK client: the server's rate and buffer size, one output port per channel.
    Jack {
        /// The client's name.
        client_name: String,
        /// Connect the output ports to the system's playback ports.
        connect: bool,
        /// Give each graph its own output ports too (`NAME_out_1`, ...: its sinks with its
        /// gain), registered at load and removed at unload; the mix stays on `out_N`.
        per_graph_ports: bool,
    },
}

/// How to start a host.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// What paces the cycles.
    pub backend: HostBackend,
    /// Sample rate, Hz.
    pub rate: u32,
    /// Frames per cycle.
    pub block: usize,
    /// Threads of the pool (shared, partitioned) or of each graph's executor (separate),
    /// the audio thread included.
    pub threads: usize,
    /// How the graphs share the threads.
    pub mode: Mode,
    /// Output channels of the mix.
    pub channels: usize,
    /// Refuse a graph whose predicted cycle passes 80% of the period.
    pub strict: bool,
    /// Record the mix to this WAV file (32-bit float).
    pub record: Option<PathBuf>,
    /// Run nodes of unknown kind as silence.
    pub placeholder: bool,
    /// Units of all loaded graphs together at most (the pool's deques are this large).
    pub unit_capacity: usize,
    /// Options of the threads.
    pub exec: ExecOptions,
    /// Sub-blocks per cycle of every graph loaded (pipelining): `Sub(n)`, where `n` divides
    /// the block (1: off), or `Auto` (chosen per graph from its plain plan and the threads
    /// it runs on). See the module's documentation.
    pub pipeline: Pipeline,
    /// Each graph's own executor (`separate` mode; the pool modes accept only `Auto`).
    pub executor: GraphExecutor,
    /// How long [`GraphExecutor::Auto`] measures at most per load ([`AUTO_BUDGET`]).
    pub auto_budget: Duration,
    /// How the pool's groups of several threads run the graphs (shared mode, and
    /// partitioned groups of several threads): unit by unit, each graph whole, or balanced
    /// ([`TenantGrain`]).
    pub grain: TenantGrain,
}

impl Default for HostOptions {
    /// Offline, 48 kHz, 256 frames, one thread per core, shared, stereo.
    fn default() -> Self {
        HostOptions {
            backend: HostBackend::Offline,
            rate: 48_000,
            block: 256,
            threads: fugue_exec::placement::available_cores().max(1),
            mode: Mode::Shared,
            channels: 2,
            strict: false,
            record: None,
            placeholder: false,
            unit_capacity: 1 << 16,
            exec: ExecOptions::default(),
            pipeline: Pipeline::Sub(1),
            executor: GraphExecutor::Auto,
            auto_budget: AUTO_BUDGET,
            grain: TenantGrain::Auto,
        }
    }
}

impl HostOptions {
    /// The buffer period, ns.
    pub fn period_ns(&self) -> u64 {
        (self.block as u128 * 1_000_000_000 / self.rate.max(1) as u128) as u64
    }
}

impl HostOptions {
    /// Checks the sizes a host needs: a rate, a block, threads and channels of at least 1.
    pub(super) fn check(&self) -> Result<(), HostError> {
        if self.rate == 0 || self.block == 0 || self.threads == 0 {
            return Err(HostError::Options(
                "the sample rate, the buffer size and the threads must be at least 1".into(),
            ));
        }
        if self.channels == 0 {
            return Err(HostError::Options(
                "the host needs at least one output channel".into(),
            ));
        }
        Ok(())
    }

    /// Refuses a named executor in a pool mode ([`pool_mode_executor`]).
    pub(super) fn check_executor(&self) -> Result<(), HostError> {
        if let (GraphExecutor::Kind(k), Mode::Shared | Mode::Partitioned) =
            (self.executor, self.mode)
        {
            return Err(HostError::Options(pool_mode_executor(self.mode, k)));
        }
        Ok(())
    }

    /// [`HostOptions::pipeline`] fitted to the block at start ([`fit_pipeline`]). Under JACK
    /// or ALSA (`granted`), the server or the device chooses the block and the pipeline
    /// follows it, with a warning pushed to `warnings`; otherwise a pipeline that does not
    /// fit is refused.
    pub(super) fn start_pipeline(
        &self,
        granted: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Pipeline, HostError> {
        let (pipeline, note) = fit_pipeline(self.pipeline, self.block);
        match (note, granted) {
            (None, _) => {}
            // JACK or the device chooses the block: the pipeline follows it.
            (Some(note), true) => warnings.push(note),
            (Some(_), false) => {
                let Pipeline::Sub(n) = self.pipeline else {
                    unreachable!("auto always fits")
                };
                return Err(HostError::Options(if n == 0 {
                    "a pipeline of 0 sub-blocks is not possible; give a number of sub-blocks of at least 1 (1 turns pipelining off), or auto".to_string()
                } else {
                    format!(
                        "a pipeline of {n} sub-blocks does not divide the block of {} frames; choose a divisor of the block (1 turns pipelining off), or auto",
                        self.block
                    )
                }));
            }
        }
        Ok(pipeline)
    }

    /// The options of a graph's own executor: the host's, with the period of the block when
    /// a clock paces the cycles.
    pub(super) fn exec_paced(&self) -> ExecOptions {
        let mut exec = self.exec.clone();
        if self.backend != HostBackend::Offline && exec.period.is_none() {
            exec.period = Some(Duration::from_nanos(self.period_ns()));
        }
        exec
    }
}

/// Why a named executor does not apply to pool mode `mode`: one sentence.
fn pool_mode_executor(mode: Mode, kind: ExecutorKind) -> String {
    let how = match mode {
        Mode::Partitioned => "each graph runs on its share of the host's one pool of threads (work stealing within the share, re-split at every load and unload)",
        _ => "every graph runs on the host's one pool of threads, stealing work across graphs",
    };
    format!(
        "executor {kind} does not apply to {mode} mode: {how}; use separate mode to give each graph an executor of its own, or leave the executor auto"
    )
}

/// `pipeline` fitted to `block`: the same when its sub-blocks divide the block (or it is
/// auto); otherwise the largest divisor of the block below it (at least 1), with a note
/// that says so. A pipeline of 0 becomes 1.
pub(super) fn fit_pipeline(pipeline: Pipeline, block: usize) -> (Pipeline, Option<String>) {
    match pipeline {
        Pipeline::Sub(n) if n == 0 || !block.is_multiple_of(n) => {
            let d = (1..=n)
                .rev()
                .find(|&d| block.is_multiple_of(d))
                .unwrap_or(1);
            (
                Pipeline::Sub(d),
                Some(format!(
                    "a pipeline of {n} sub-blocks does not divide the buffer of {block} frames: {d} sub-block{} instead (the largest divisor of the buffer up to {n})",
                    if d == 1 { "" } else { "s" }
                )),
            )
        }
        p => (p, None),
    }
}
