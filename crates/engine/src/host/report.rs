//! What the host says: the reports of its commands, its log and why a command failed.

use fugue_exec::ExecutorKind;
use thiserror::Error;

use super::{GraphStatsSnapshot, HostStatsSnapshot};

/// Why a host command failed. Each is one sentence; the host goes on.
#[derive(Debug, Error)]
pub enum HostError {
    /// The graph file could not be read (names `file:line:col`).
    #[error(transparent)]
    Read(#[from] fugue_graph::ReadError),
    /// The graph could not be compiled.
    #[error(transparent)]
    Compile(#[from] fugue_exec::CompileError),
    /// No graph of that name is loaded.
    #[error("no graph named `{0}` is loaded{near}; `list` shows the loaded graphs", near = .1.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default())]
    UnknownName(String, Option<String>),
    /// A graph of that name is loaded already.
    #[error("a graph named `{0}` is loaded already; unload it first or choose another name")]
    NameTaken(String),
    /// The host holds as many graphs (or units) as it can.
    #[error("{0}")]
    Full(String),
    /// The graph would not fit in the period (with `--strict`), or the partition.
    #[error("{0}")]
    Refused(String),
    /// Bad options.
    #[error("{0}")]
    Options(String),
    /// The audio backend failed: the JACK server or library, the ALSA device.
    #[error("{0}")]
    Backend(String),
    /// A graph's executor could not be built, or measured by the automatic choice.
    #[error(transparent)]
    Build(Box<crate::BuildError>),
    /// A graph file that could not be built (its nodes, its plan), named.
    #[error("cannot load {file}: {why}")]
    Graph {
        /// The graph file.
        file: String,
        /// Why (not an error `source`: the message says it already, once).
        why: Box<HostError>,
    },
    /// A live value was refused (`set`).
    #[error("{0}")]
    Live(String),
    /// A thread of the host panicked.
    #[error("the {0} thread panicked")]
    ThreadPanicked(&'static str),
    /// The host is stopping (its stop request is set) while the command waited for the
    /// audio thread to take it: the command is not done.
    #[error("the host is stopping; the command was not done")]
    Stopping,
    /// The audio thread stopped answering.
    #[error("the audio thread is not answering (it stopped, or is stuck)")]
    AudioGone,
    /// The JACK server stopped (or closed the client): the host cannot play on.
    #[error("the JACK server stopped ({0}); the host cannot play on and ends")]
    JackStopped(String),
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

impl From<crate::BuildError> for HostError {
    fn from(e: crate::BuildError) -> HostError {
        HostError::Build(Box::new(e))
    }
}

/// What [`Host::load`](super::Host::load) did.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    /// The host's number for the graph (the mix adds graphs in increasing id).
    pub id: u32,
    /// The first cycle it runs in (its solo cycle 0).
    pub cycle: u64,
    /// Its measured cost per cycle (median of a few sequential cycles), ns.
    pub cost_ns: u64,
    /// The cycle predicted with it, ns.
    pub predicted_ns: u64,
    /// The buffer period, ns.
    pub period_ns: u64,
    /// Said when the predicted cycle passes 80% of the period, and the graph's lints
    /// ([`crate::lint::lint`]: attributes its kinds do not read, nodes that reach no sink).
    pub warning: Option<String>,
    /// Sub-blocks per cycle it was compiled with (1: not pipelined).
    pub pipeline: usize,
    /// Why it was not pipelined as asked (it changes rates), when it was not.
    pub pipeline_note: Option<String>,
    /// Its own executor and threads (`separate` mode), as `ws 2t` or `seq`; `None` in the
    /// pool modes.
    pub executor: Option<String>,
    /// With [`GraphExecutor::Auto`](super::GraphExecutor::Auto) in `separate` mode: what
    /// was measured and chosen, one line.
    pub auto: Option<String>,
}

/// What [`Host::unload`](super::Host::unload) did.
#[derive(Clone, Debug, PartialEq)]
pub struct UnloadReport {
    /// The graph's id.
    pub id: u32,
    /// The first cycle it no longer ran in.
    pub cycle: u64,
    /// Its statistics at removal.
    pub stats: GraphStatsSnapshot,
}

/// A loaded graph, as [`Host::list`](super::Host::list) shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GraphInfo {
    /// Its name.
    pub name: String,
    /// Its id.
    pub id: u32,
    /// Where it was read from.
    pub file: String,
    /// Its gain, dB.
    pub gain_db: f64,
    /// Its tasks.
    pub tasks: usize,
    /// Its output channels.
    pub channels: usize,
    /// Bytes it holds against the host's memory limit: its plan (buffers and processors'
    /// state) and, offline, its outputs' capture.
    pub memory: usize,
    /// Measured cost per cycle, ns.
    pub cost_ns: u64,
    /// The cycle it was adopted at.
    pub adopted: u64,
    /// Silenced after a panic.
    pub silenced: bool,
    /// Sub-blocks per cycle (1: not pipelined).
    pub pipeline: usize,
    /// Its own executor and threads (`separate` mode), as `ws 2t` or `seq`.
    pub executor: Option<String>,
}

/// An adoption or a removal, in the host's log ([`Host::log`](super::Host::log)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// Graph `id` (`name`) runs from `cycle` on.
    Adopted {
        /// Its name.
        name: String,
        /// Its id.
        id: u32,
        /// The first cycle it ran in.
        cycle: u64,
    },
    /// Graph `id` ran last in `cycle - 1`.
    Removed {
        /// Its name.
        name: String,
        /// Its id.
        id: u32,
        /// The first cycle it did not run in.
        cycle: u64,
    },
}

/// What a finished host did.
#[derive(Clone, Debug)]
pub struct HostReport {
    /// The whole host's statistics.
    pub stats: HostStatsSnapshot,
    /// Cycles run.
    pub cycles: u64,
    /// Things to say once (pinning or priority refused, ...).
    pub warnings: Vec<String>,
    /// Frames written to the recording (when it stopped on an error: those its file's header
    /// counts, flushed before the error).
    pub recorded_frames: u64,
    /// Why the recording stopped before the host did (a full disk, a reader gone), if it did.
    pub record_error: Option<String>,
}

impl HostReport {
    /// What the finished host did, in one line (`record`: where it recorded).
    pub fn summary(&self, record: Option<&std::path::Path>) -> String {
        let s = &self.stats;
        let resizes = if s.resizes > 0 {
            format!(
                ", {} followed",
                crate::report::counted(s.resizes as usize, "buffer-size change")
            )
        } else {
            String::new()
        };
        let recorded = match record {
            Some(p) => {
                let drops = if s.record_drops > 0 {
                    format!(
                        " ({} blocks dropped: the disk was too slow)",
                        s.record_drops
                    )
                } else {
                    String::new()
                };
                let stopped = match &self.record_error {
                    Some(e) => format!(", where the recording stopped: {e}"),
                    None => String::new(),
                };
                format!(
                    "; recorded {} frames to {}{drops}{stopped}",
                    self.recorded_frames,
                    p.display()
                )
            }
            None => String::new(),
        };
        format!(
            "{}, {} ({} of {} with a swap), {}{resizes}{recorded}",
            crate::report::counted(s.cycles as usize, "cycle"),
            s.misses_said(),
            s.swap_misses,
            crate::report::counted(s.swap_cycles as usize, "cycle"),
            crate::report::counted(s.overruns as usize, "overrun")
        )
    }
}

/// An executor and its threads as reports name them: `seq`, `ws 2t`.
pub(super) fn executor_label(kind: ExecutorKind, threads: usize) -> String {
    if threads <= 1 {
        kind.to_string()
    } else {
        format!("{kind} {threads}t")
    }
}
