//! The study's spec (a TOML file), its configurations and their results.

use fugue_engine::Summary;
use plotters::style::RGBColor;
use serde::Deserialize;

/// A study spec: what to sweep, and how to run each configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Folder of the graph files, relative to the spec's folder (default `.`).
    #[serde(default)]
    pub root: Option<String>,
    /// Graph files, or `gen:SHAPE:N` (line, diamond, rake).
    pub graphs: Vec<String>,
    /// Executors: fugue's names, or `static-ALGORITHM`.
    pub executors: Vec<String>,
    /// Thread counts of the parallel executors.
    pub threads: Vec<usize>,
    /// Buffer sizes (frames).
    pub buffers: Vec<usize>,
    /// Machine loads: `idle` or `busy`.
    pub loads: Vec<String>,
    /// Threads that compute during a busy run (default 2).
    #[serde(default = "default_busy")]
    pub busy_threads: usize,
    /// A command to run as the load of a busy run, instead of the threads.
    #[serde(default)]
    pub busy_command: Option<String>,
    /// `clocked` (default) or `jack`.
    #[serde(default = "default_backend")]
    pub backend: String,
    /// Sample rate of the clocked backend (default 44100).
    #[serde(default = "default_rate")]
    pub rate: u32,
    /// Seconds per run.
    pub seconds: f64,
    /// `period` (default) or `double` the buffer period.
    #[serde(default = "default_deadline")]
    pub deadline: String,
    /// Run the workers at real-time priority (80) where permitted.
    #[serde(default)]
    pub rt: bool,
    /// The buffer size of the histograms (default: the middle one).
    #[serde(default)]
    pub histogram_buffer: Option<usize>,
}

pub(super) fn default_busy() -> usize {
    2
}
fn default_backend() -> String {
    "clocked".into()
}
fn default_rate() -> u32 {
    44_100
}
fn default_deadline() -> String {
    "period".into()
}

/// An executor of the study: the kind and, for static, the algorithm.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Exec {
    /// Its place in the spec (its colour).
    pub order: usize,
    /// Its name in the spec.
    pub name: String,
}

/// One configuration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Config {
    /// Index of the graph.
    pub graph: usize,
    /// The executor.
    pub exec: Exec,
    /// Threads.
    pub threads: usize,
    /// Frames per cycle.
    pub buffer: usize,
    /// `idle` or `busy`.
    pub load: String,
}

/// One configuration's results.
#[derive(Clone, Debug)]
pub struct Row {
    /// The configuration.
    pub cfg: Config,
    /// Its cycle statistics.
    pub s: Summary,
    /// Cycles that started more than a period late.
    pub overruns: u64,
    /// Whether its output equals seq's, bit for bit.
    pub verified: bool,
    /// Cycles a run of `seconds` should have.
    pub expected_cycles: u64,
    /// The buffer period, µs.
    pub period_us: f64,
    /// Speedup of the mean over seq at the same graph, buffer and load.
    pub speedup: Option<f64>,
}

/// Everything the figures and the report read.
pub struct PlotCtx<'a> {
    /// The results.
    pub rows: &'a [Row],
    /// The graphs' names.
    pub names: &'a [String],
    /// The plotted series.
    pub execs: &'a [Exec],
    /// Their colours.
    pub colors: &'a [RGBColor],
    /// Buffer sizes.
    pub buffers: &'a [usize],
    /// Loads.
    pub loads: &'a [String],
}

impl PlotCtx<'_> {
    /// The row of graph `g`, executor `e`, buffer `b`, load `l` (the first thread count).
    pub fn find(&self, g: usize, e: &str, b: usize, l: &str) -> Option<&Row> {
        // The first thread count of the spec for parallel executors.
        self.rows.iter().find(|r| {
            r.cfg.graph == g && r.cfg.exec.name == e && r.cfg.buffer == b && r.cfg.load == l
        })
    }
}
