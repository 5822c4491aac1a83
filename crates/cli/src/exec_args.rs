//! The executor flags shared by `render`, `run` and the benchmarks.

use std::path::PathBuf;
use std::time::Duration;

use fugue_engine::{Costs, ExecutorChoice, Pipeline};
use fugue_exec::{ExecOptions, ExecutorKind};
use fugue_sched::Algorithm;

/// Executor selection flags.
#[derive(clap::Args, Debug, Clone)]
pub struct ExecArgs {
    /// Executor: seq, static, ws (work stealing), ws-affinity (work stealing, tasks kept on the
    /// thread that ran them last), share (work sharing, mutex), share-spin
    /// (work sharing, spinlock), levels (fork/join by levels), or auto (measures seq, and ws
    /// and static at each thread count, pipelined too when the graph is short of parallelism
    /// and, in a render, running two cycles as one, on the graph for a bounded time (under
    /// 0.6 s, at most a twentieth of a render): the fastest candidate is kept if its mean
    /// cycle is at least 5 % shorter than seq's, else seq; says what it chose, and when the
    /// run is too short to measure) [default: auto for render and run, seq for profile and
    /// the benchmarks].
    #[arg(long, short = 'e', value_parser = parse_executor)]
    pub executor: Option<Executor>,
    /// Threads, the audio thread included (default: 1 for seq, else the number of cores).
    #[arg(long, short = 't', value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Static schedule algorithm (with --executor static): hlfet, etf, cpfd, random, optimal,
    /// best [default: hlfet].
    #[arg(long)]
    pub algorithm: Option<Algorithm>,
    /// Node costs for the static schedule: declared (from the file), measured (calibrated
    /// now), or a CSV file `node,cost` written by `fugue calibrate`.
    #[arg(long, default_value = "declared", value_parser = parse_costs)]
    pub costs: Costs,
    /// Seed of the random schedule.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Pin thread i to core i (mod the number of cores). The default in real time (`run`, and
    /// `profile` on the clocked backend): there the threads sleep between cycles, and two of
    /// them woken on one core stay there (the kernel does not spread threads that are mostly
    /// asleep), which halves a parallel executor; offline, threads are not pinned unless asked.
    #[arg(long)]
    pub pin: bool,
    /// Do not pin threads in real time (see --pin).
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Schedule the graph node by node instead of merging chains of nodes into units (for
    /// comparing executors on the graph as written).
    #[arg(long)]
    pub no_merge_chains: bool,
    /// Run the workers at real-time priority (SCHED_FIFO PRIORITY, default 80; the audio
    /// thread one above) where the system permits; when refused, say so once and go on.
    #[arg(long, num_args = 0..=1, default_missing_value = "80", value_parser = clap::value_parser!(i32).range(1..=98))]
    pub rt: Option<i32>,
    /// Work stealing's threshold.
    #[command(flatten)]
    pub steal: StealArgs,
    /// Real-time backends: workers sleeping between cycles wake this many µs before the
    /// next cycle's expected start and spin until it starts (0: they sleep until the cycle
    /// wakes them) [default: 50].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub wake_lead_us: Option<u64>,
    /// Pipelining: cut each cycle's buffer into N sub-blocks, so that a line of nodes cut
    /// into one segment per thread runs on several threads at once (N must divide the
    /// buffer; 1: off), or auto (N from the graph's critical path, the threads and the
    /// buffer: 1 when the graph has parallelism enough). Same output, same latency; not with
    /// --profile [default: 1; with --executor auto, candidates are tried both ways, N as auto].
    #[arg(long, value_parser = parse_pipeline)]
    pub pipeline: Option<Pipeline>,
}

/// Parses a `--pipeline` value: a number of sub-blocks (at least 1) or `auto`.
pub fn parse_pipeline(s: &str) -> Result<Pipeline, String> {
    if s == "auto" {
        return Ok(Pipeline::Auto);
    }
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Pipeline::Sub(n)),
        _ => Err(format!(
            "`{s}` is not a number of sub-blocks: give a whole number of at least 1 (1 turns pipelining off) that divides the buffer, or auto"
        )),
    }
}

/// Checks `--pipeline` against the buffer (when known before the run) and `--profile`: one
/// sentence (a usage error) when the sub-blocks do not divide the buffer, or when a pipelined
/// run is to be profiled.
pub fn check_pipeline(
    pipeline: Option<Pipeline>,
    buffer: Option<usize>,
    profile: bool,
) -> anyhow::Result<()> {
    let Some(pipeline) = pipeline else {
        return Ok(());
    };
    if let (Pipeline::Sub(n), Some(buffer)) = (pipeline, buffer) {
        if n > 1 && !buffer.is_multiple_of(n) {
            return Err(crate::util::usage(format!(
                "--pipeline {n} does not divide the buffer of {buffer} frames; choose a divisor of the buffer (1 turns pipelining off) or auto"
            )));
        }
    }
    if profile && pipeline != Pipeline::Sub(1) {
        return Err(crate::util::usage(
            "--profile cannot be used with --pipeline: a pipelined task runs once per sub-block and the profile keeps one record per task; profile without --pipeline",
        ));
    }
    Ok(())
}

/// The work-stealing flag shared by `render`, `run` and the benchmarks.
#[derive(clap::Args, Debug, Clone)]
pub struct StealArgs {
    /// Work stealing: the least work, in µs, a stolen task must bring for a thread to take it
    /// from a busy owner (0: steal any task, as the plain protocol) [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub min_steal_us: Option<u64>,
}

impl StealArgs {
    /// Sets `options.min_steal` when the flag was given.
    pub fn apply(&self, options: &mut ExecOptions) {
        if let Some(us) = self.min_steal_us {
            options.min_steal = Duration::from_micros(us);
        }
    }
}

/// An executor named on the command line: one of the library's, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    /// Chosen by measuring ([`ExecutorChoice::auto`]).
    Auto,
    /// This one.
    Kind(ExecutorKind),
}

impl std::fmt::Display for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Executor::Auto => f.write_str("auto"),
            Executor::Kind(k) => write!(f, "{k}"),
        }
    }
}

pub(crate) fn parse_executor(s: &str) -> Result<Executor, String> {
    if s == "auto" {
        return Ok(Executor::Auto);
    }
    ExecutorKind::from_name(s)
        .map(Executor::Kind)
        .ok_or_else(|| {
            let names: Vec<&str> = ExecutorKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown executor `{s}`; expected one of {}, auto",
                names.join(", ")
            )
        })
}

/// Parses a `--costs` value: declared, measured, or a costs file.
pub fn parse_costs(s: &str) -> Result<Costs, String> {
    Ok(match s {
        "declared" => Costs::Declared,
        "measured" => Costs::Measured,
        path => Costs::File(PathBuf::from(path)),
    })
}

impl ExecArgs {
    /// Flags that the chosen executor ignores: `--algorithm` without `--executor static`.
    /// `default` is the executor used when none is named.
    pub fn warnings(&self, default: Executor) -> Vec<String> {
        let e = self.executor.unwrap_or(default);
        match self.algorithm {
            Some(a) if e != Executor::Kind(ExecutorKind::Static) => {
                let how = if self.executor.is_none() {
                    " (the default)"
                } else {
                    ""
                };
                vec![format!(
                    "--algorithm {a} applies to --executor static only; it is ignored with --executor {e}{how}"
                )]
            }
            _ => Vec::new(),
        }
    }

    /// Whether threads are pinned: always with `--pin`; in real time (`realtime`) unless
    /// `--no-pin`.
    pub fn pin_for(&self, realtime: bool) -> bool {
        self.pin || (realtime && !self.no_pin)
    }

    /// Whether to say what the automatic choice chose: always when `--executor auto` was
    /// given; as the default, when it measured something or kept seq because the run is too
    /// short to measure (a graph with nothing to choose from stays with seq without a word).
    pub fn says_auto(&self, report: &fugue_engine::auto::AutoReport) -> bool {
        self.executor == Some(Executor::Auto)
            || report.candidates.len() > 1
            || report.untried == Some(fugue_engine::auto::Untried::Short)
    }

    /// The library's executor choice, seq when no executor was named (the profile and the
    /// benchmarks).
    pub fn choice(&self) -> ExecutorChoice {
        self.choice_or(Executor::Kind(ExecutorKind::Seq), false)
    }

    /// The library's executor choice, `default` when no executor was named. With `profile`
    /// (a profiled run), `auto` tries no pipelined candidate (the profile needs whole tasks).
    pub fn choice_or(&self, default: Executor, profile: bool) -> ExecutorChoice {
        let executor = self.executor.unwrap_or(default);
        let kind = match executor {
            Executor::Auto => ExecutorKind::Seq,
            Executor::Kind(k) => k,
        };
        let pipeline = match (self.pipeline, executor) {
            (Some(p), _) => p,
            (None, Executor::Auto) if !profile => Pipeline::Auto,
            (None, _) => Pipeline::Sub(1),
        };
        let threads = match (self.threads, executor) {
            (Some(t), _) => t as usize,
            (None, Executor::Kind(ExecutorKind::Seq)) | (None, Executor::Auto) => 1,
            (None, _) => fugue_exec::placement::available_cores(),
        };
        ExecutorChoice {
            kind,
            auto: executor == Executor::Auto,
            auto_cycles: None,
            threads,
            algorithm: self.algorithm.unwrap_or(Algorithm::Hlfet),
            costs: self.costs.clone(),
            seed: self.seed,
            time_limit: Duration::from_secs(2),
            pin: self.pin,
            rt: self.rt,
            merge_chains: !self.no_merge_chains,
            pipeline,
            overlap: 1,
            auto_overlap: false,
            trials_in_run: false,
            options: {
                let mut o = ExecOptions::default();
                self.steal.apply(&mut o);
                if let Some(us) = self.wake_lead_us {
                    o.wake_lead = Duration::from_micros(us);
                }
                o
            },
        }
    }
}

/// The executor and threads that played: the one `auto` chose when it chose, else `choice`'s.
pub fn played(
    choice: &ExecutorChoice,
    auto: Option<&fugue_engine::auto::AutoReport>,
) -> (fugue_exec::ExecutorKind, usize) {
    auto.map_or((choice.kind, choice.threads), |a| {
        (a.chosen().kind, a.chosen().threads)
    })
}
