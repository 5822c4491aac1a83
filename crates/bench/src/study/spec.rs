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
    /// `clocked` (default) or `jack` (a running server, whose buffer size each run sets to
    /// its configuration's with `jack_bufsize`, and the study sets back when it ends).
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
    /// Pin thread i to core i, as `fugue run` does by default (default true).
    #[serde(default = "default_pin")]
    pub pin: bool,
    /// The buffer size of the histograms (default: the middle one).
    #[serde(default)]
    pub histogram_buffer: Option<usize>,
    /// Runs of each configuration (default 3; `--repeats` overrides it).
    #[serde(default)]
    pub repeats: Option<usize>,
    /// The widest confidence interval of a configuration's figure (its speedup, or seq's
    /// median cycle time), in percent of the figure, under which it is stated as a finding
    /// (default 20; see [`super::trust`]).
    #[serde(default)]
    pub max_spread_pct: Option<f64>,
}

/// The spec's fields that have no default.
pub const REQUIRED: [&str; 6] = [
    "graphs",
    "executors",
    "threads",
    "buffers",
    "loads",
    "seconds",
];

/// Every field of a spec, required ones first.
pub const FIELDS: [&str; 17] = [
    "graphs",
    "executors",
    "threads",
    "buffers",
    "loads",
    "seconds",
    "root",
    "busy_threads",
    "busy_command",
    "backend",
    "rate",
    "deadline",
    "rt",
    "pin",
    "histogram_buffer",
    "repeats",
    "max_spread_pct",
];

/// Where the spec `text` (read from `file`) gives `key`: `file:LINE` of the first line that
/// assigns it (`key = ...`, blanks allowed around the key), or `file` when none does (a field
/// left to its default).
pub fn place(text: &str, file: &str, key: &str) -> String {
    text.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or_else(|| file.to_string(), |i| format!("{file}:{}", i + 1))
}

/// Reads a spec's text: every missing required field and every unknown one is named at
/// once, then the values are checked by type. `Err`: one sentence naming `file`.
pub fn parse(text: &str, file: &str) -> Result<Spec, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| toml_error(text, file, &e, false))?;
    let known = &FIELDS[..];
    let unknown: Vec<&str> = table
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k))
        .collect();
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|k| !table.contains_key(*k))
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("missing required field(s) {}", missing.join(", ")));
    }
    if !unknown.is_empty() {
        problems.push(format!(
            "unknown field(s) {} (the fields are {})",
            unknown.join(", "),
            known.join(", ")
        ));
    }
    if !problems.is_empty() {
        // At the first unknown field's line (a missing one has none).
        let at = unknown
            .first()
            .map_or_else(|| file.to_string(), |k| place(text, file, k));
        return Err(format!(
            "{at}: {}; see studies/README.md",
            problems.join("; ")
        ));
    }
    toml::from_str(text).map_err(|e| toml_error(text, file, &e, true))
}

/// A TOML error as `file:line:column: message` (the place where toml's span starts), with
/// the field named when `typed` (an error of a value's type: the key of its line; a syntax
/// error may be found on the line after the one at fault).
fn toml_error(text: &str, file: &str, e: &toml::de::Error, typed: bool) -> String {
    // toml's message may run over several lines: one sentence here.
    let message = plain_types(
        &e.message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
    );
    let Some(span) = e.span() else {
        return format!("{file}: {message}");
    };
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    // The field the value belongs to: the key of its line, when the line has one.
    let key = text
        .lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim().trim_matches('"'))
        .filter(|k| typed && FIELDS.contains(k));
    match key {
        Some(k) => format!("{file}:{line}:{column}: field `{k}`: {message}"),
        None => format!("{file}:{line}:{column}: {message}"),
    }
}

/// `message` with serde's names of Rust types in words (`expected usize`: `expected a whole
/// number, 0 or more`; `expected a sequence`: a list in brackets).
fn plain_types(message: &str) -> String {
    let mut out = message.to_string();
    for (rust, words) in [
        ("usize", "a whole number, 0 or more"),
        ("u64", "a whole number, 0 or more"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u16", "a whole number from 0 to 65535"),
        ("u8", "a whole number from 0 to 255"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("f64", "a number"),
        ("f32", "a number"),
    ] {
        let from = format!("expected {rust}");
        if out.ends_with(&from)
            || out.contains(&format!("{from} "))
            || out.contains(&format!("{from},"))
        {
            out = out.replace(&from, &format!("expected {words}"));
        }
    }
    // A TOML array, in TOML's words.
    if out.ends_with("expected a sequence") {
        out = out.replace(
            "expected a sequence",
            "expected a list in brackets, such as [1, 2]",
        );
    }
    out
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
fn default_pin() -> bool {
    true
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
    /// A second (or later) thread count of the same executor: drawn dashed and hollow in the
    /// figures, in the executor's colour.
    pub later_threads: bool,
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
    /// The cycle statistics of its median repeat (by median cycle time).
    pub s: Summary,
    /// The mean cycle time of each repeat, µs.
    pub means_us: Vec<f64>,
    /// The median cycle time of each repeat, its warm-up left out, µs.
    pub medians_us: Vec<f64>,
    /// The speedup of each repeat (its median cycle time against that of seq's run of the
    /// same round, graph, buffer and load).
    pub speedups: Vec<f64>,
    /// The width of its figure's confidence interval ([`super::trust::interval_pct`]) in
    /// percent of the figure: of the speedups when it has them, else of the median cycle
    /// times.
    pub spread_pct: f64,
    /// Why its figures cannot be trusted (not stated as findings), if they cannot.
    pub doubt: Option<String>,
    /// Times the clock fell more than a period behind and skipped ahead (cycles not run), in
    /// its median repeat.
    pub overruns: u64,
    /// Over every repeat, not only the median one: cycles that missed their deadline,
    /// overruns, and the longest cycle (ns).
    pub every_repeat: EveryRepeat,
    /// Whether its output equals seq's, bit for bit.
    pub verified: bool,
    /// For `auto`: the candidate it chose in each repeat, in the order they ran (`seq`,
    /// `ws 2t`, `static 2t pipeline 4`...); empty for the other executors.
    pub chose: Vec<String>,
    /// Cycles a run of `seconds` should have.
    pub expected_cycles: u64,
    /// The buffer period, µs.
    pub period_us: f64,
    /// Speedup over seq at the same graph, buffer and load: the median of
    /// [`Row::speedups`].
    pub speedup: Option<f64>,
}

/// What a configuration's repeats did together ([`Row::every_repeat`]): what the report
/// says of "any cycle" or "every deadline" counts them all, not only the median repeat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EveryRepeat {
    /// Cycles that missed their deadline, summed.
    pub misses: u64,
    /// Overruns, summed.
    pub overruns: u64,
    /// The longest cycle of any repeat, ns.
    pub max_ns: u64,
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
    /// The thread counts of the parallel executors.
    pub threads: &'a [usize],
    /// The cores this process may use.
    pub cores: usize,
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
