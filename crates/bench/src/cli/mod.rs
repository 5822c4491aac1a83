//! The benchmarks' command line (`fugue bench <subcommand>`, mounted by the `fugue` binary):
//! the flags of each benchmark ([`BenchCommand`]), made its configuration and checked, the
//! benchmark run, and its results as the text the command prints ([`run`]). Progress goes to
//! the front end's [`Progress`]; what the front end lends (the node kinds, the stop request,
//! reading a graph file) comes in an [`Env`].

/// A command's `after_help`: its examples (the binary adds the exit codes).
macro_rules! examples {
    ($($line:literal),+ $(,)?) => { concat!("Examples:\n", $("  ", $line, "\n",)+) };
}

pub mod demo;
pub mod faust;
pub mod host;
pub mod pool;
pub mod ring;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use fugue_engine::Costs;
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::capacity::CapacityConfig;
use crate::error::BenchError;
use crate::overhead::{GraphSource, OverheadConfig, Shape};
use crate::profile_cost::ProfileCostReport;
use crate::study::StudyConfig;
use crate::table::TableConfig;
use crate::{Event, Progress};

/// What the front end lends the benchmarks.
pub struct Env {
    /// The node kinds graphs are built with (built-in, Faust, LV2).
    pub registry: fn() -> fugue_dsp::Registry,
    /// The stop request, for a benchmark that stops on it (the study); asking for it tells
    /// the front end that a signal is to set it rather than end the process.
    pub stop: fn() -> Arc<AtomicBool>,
    /// Runs a call that may block beyond the stop request's reach (reading a named pipe).
    pub blocking: fn(&mut dyn FnMut()),
    /// Reads a graph file (a Faust program included).
    pub read_graph: fn(&Path) -> Result<TaskGraph, BenchError>,
    /// The command line, for the READMEs of results folders.
    pub command: String,
}

/// A value parser for a whole number from 1 to `max`: `0`, `-2` or `x` are refused with a
/// sentence that says what is accepted.
pub fn count(max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s: &str| match s.trim().parse::<i128>() {
        Ok(v) if v < 1 => Err(format!("must be at least 1 (got {v})")),
        Ok(v) if v > i128::from(max) => Err(format!("must be at most {max} (got {v})")),
        Ok(v) => Ok(v as u64),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

/// The benchmarks.
#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Throughput of the ordered ring against a mutex/condvar ring and peer queues; `--sweep`
    /// runs the whole grid and writes CSV, plots and a README.
    #[command(after_help = examples!(
        "fugue bench ring --producers 4 --strategy park",
        "fugue bench ring --sweep --repeat 3 -o bench-results/ring --force",
    ))]
    Ring(ring::Args),
    /// Per-cycle cost of running a graph of empty (checking) nodes, for each executor and
    /// the peers (rayon, oneTBB flow graph).
    #[command(after_help = examples!(
        "fugue bench overhead --shape diamond --nodes 100 --executor all --threads 2 --runs 5",
        "fugue bench overhead --graph examples/rake.ag --executor ws,levels --json",
    ))]
    Overhead(OverheadArgs),
    /// Every executor x line/diamond/rake x buffer sizes with real DSP: cycle times and
    /// speedup against seq, outputs checked bit-identical to seq.
    #[command(after_help = examples!(
        "fugue bench table                                     # line, diamond, rake, generated",
        "fugue bench table --executors ws,levels --buffers 128,512 --runs 7",
        "fugue bench table --corpus ../shared/data/ag -o table-out",
    ))]
    Table(TableArgs),
    /// The scheduling study: graphs x executors x threads x buffer sizes x load, run in real
    /// time; writes summary.csv, raw data, plots (SVG, PNG) and report.html.
    #[command(after_help = STUDY_HELP)]
    Study(StudyArgs),
    /// The machine's parallel capacity over time: each core's speed at running a graph's DSP
    /// while every core runs it, in units of the fastest (the bound of any speedup).
    #[command(after_help = examples!(
        "fugue bench capacity --seconds 20",
        "fugue bench capacity --graph examples/synth.ag --threads 2 --json",
    ))]
    Capacity(CapacityArgs),
    /// The task pool: every policy x thread counts x workloads (quicksort, Mandelbrot,
    /// Voronoi, a spawn tree) against the sequential program and rayon, results checked;
    /// writes CSV, plots (SVG, PNG) and a README.
    #[command(after_help = examples!(
        "fugue bench pool -o pool-bench",
        "fugue bench pool --threads 1,2 -o pool-bench --force",
    ))]
    Pool(pool::Args),
    /// What the profile (`--profile`, `fugue profile`) costs the cycle: a plain and a
    /// profiled engine of one graph run blocks of cycles back to back, interleaved, outputs
    /// compared; the profiled mean cycle over the plain one, median and range over the pairs.
    #[command(after_help = examples!(
        "fugue bench profile-cost                              # rake (rateau101), seq, 512 frames",
        "fugue bench profile-cost --graph diamond --executor ws --threads 2 --pairs 40",
    ))]
    // The profile records whole cycles of one executor: no pipelining and no auto (refused
    // if given), so not offered.
    #[command(mut_arg("pipeline", |a| a.hide(true)))]
    #[command(mut_arg("executor", |a| {
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        a.help(format!("{help} (not auto here: the profile's cost is measured on one executor)"))
    }))]
    ProfileCost(ProfileCostArgs),
    /// The shared-runtime study: N instances of a graph on one host in each mode (shared,
    /// partitioned, separate): offline throughput and fairness, real-time misses.
    #[command(after_help = examples!(
        "fugue bench host --offline-only --offline-seconds 0.5 -o bench-results/host --force",
        "fugue bench host --graphs rateau101 --buffers 512 --seconds 10",
    ))]
    Host(host::Args),
    /// Faust's own builds of a program (scalar, -vec, and its parallel modes -vec -sch and
    /// -vec -omp at each thread count) against fugue on a graph of the same music, one node
    /// per voice; outputs checked; writes CSV, a plot and a README.
    #[command(after_help = examples!(
        "fugue bench faust -o faust-bench                      # karplus32 and mixer",
        "fugue bench faust --programs karplus32 --seconds 30 --runs 5 -o faust-bench --force",
    ))]
    Faust(faust::Args),
    /// (internal) A producer process of `fugue bench ring --processes`.
    #[command(hide = true)]
    RingProducer(crate::ring::ProducerConfig),
}

/// Runs a benchmark; what it prints on standard output, in one string (progress and
/// warnings went to `progress` meanwhile).
pub fn run(
    command: BenchCommand,
    env: &Env,
    progress: &mut dyn Progress,
) -> Result<String, BenchError> {
    // Graph files are read as the front end reads them (a Faust program as a graph of one
    // node), wherever a benchmark names one.
    crate::shapes::use_reader(env.read_graph);
    match command {
        BenchCommand::Ring(a) => ring::run(a, env, progress),
        BenchCommand::Pool(a) => pool::run(a, env, progress),
        BenchCommand::Host(a) => host::run(a, env, progress),
        BenchCommand::Faust(a) => faust::run(a, env, progress),
        BenchCommand::Overhead(a) => run_overhead(a, progress),
        BenchCommand::Table(a) => run_table(a, env, progress),
        BenchCommand::Study(a) => run_study(a, env, progress),
        BenchCommand::Capacity(a) => run_capacity(a, env, progress),
        BenchCommand::ProfileCost(a) => run_profile_cost(a, env, progress),
        BenchCommand::RingProducer(a) => crate::ring::run_producer(&a).map(|()| String::new()),
    }
}

/// Passes on every event but the capacity's windows (when its result is printed as JSON).
struct NoWindows<'a>(&'a mut dyn Progress);

impl Progress for NoWindows<'_> {
    fn event(&mut self, event: Event<'_>) {
        if !matches!(event, Event::Window { .. }) {
            self.0.event(event);
        }
    }

    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

/// The flags that choose and tune the executors, shared by `bench overhead` and `bench table`.
#[derive(clap::Args, Debug)]
pub struct TuningArgs {
    /// Threads, the calling thread included.
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Static schedule algorithm (for static): hlfet, etf, cpfd, random, optimal, best.
    #[arg(long, default_value = "hlfet")]
    pub algorithm: Algorithm,
    /// Between cycles, how long workers spin before parking, in µs, at most a second
    /// [default: the executors'].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub idle_spin_us: Option<u64>,
    /// Inside a cycle, how long a thread with nothing to do spins before sleeping, in µs, at
    /// most a second [default: the executors'].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub steal_spin_us: Option<u64>,
    /// Busy-wait iterations (CPU relax hint) before a waiting thread starts yielding
    /// (sched_yield) for the rest of its budget, at most 100 million [default: the
    /// executors'].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000_000))]
    pub spins: Option<u32>,
    /// Work stealing's threshold.
    #[command(flatten)]
    pub steal: fugue_engine::flags::StealArgs,
    /// Schedule the graph node by node instead of merging chains of nodes into units.
    #[arg(long)]
    pub no_merge_chains: bool,
    /// Pin thread i to core i (the calling thread to core 0), for fugue's executors and the
    /// peers alike (rayon's pool thread i to core i mod cores, oneTBB's arena slot i to core
    /// i mod cores).
    #[arg(long)]
    pub pin: bool,
}

impl TuningArgs {
    /// The library's tuning.
    pub fn tuning(&self) -> crate::runner::Tuning {
        crate::runner::Tuning {
            idle_spin_us: self.idle_spin_us,
            steal_spin_us: self.steal_spin_us,
            spins: self.spins,
            min_steal_us: self.steal.min_steal_us,
            merge_chains: !self.no_merge_chains,
            pin: self.pin,
            wake_lead_us: None,
        }
    }
}

/// Arguments of `fugue bench capacity`.
#[derive(clap::Args, Debug)]
pub struct CapacityArgs {
    /// The graph whose DSP the cores run: a graph file, gen:SHAPE:N, or line, diamond or
    /// rake (the 2019 corpus's shapes, generated; rake is rateau101.ag's 101 nodes).
    #[arg(long, default_value = "rake")]
    pub graph: String,
    /// Frames per cycle.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Cores probed side by side (the first ones this process may use).
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// How long to follow the capacity, in seconds (at most a day).
    #[arg(long, default_value_t = 20.0, value_parser = seconds_up_to_a_day)]
    pub seconds: f64,
    /// Length of one probe, in milliseconds.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(5..=60_000))]
    pub window_ms: u64,
    /// Print one JSON object (per-window values and the summary) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// A number of seconds above 0 and at most `max`, for a flag.
fn seconds_up_to(s: &str, max: f64) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v <= max)
        .ok_or_else(|| format!("`{s}` is not a number of seconds above 0 and at most {max}"))
}

/// `--seconds` of `bench capacity`.
fn seconds_up_to_a_day(s: &str) -> Result<f64, String> {
    seconds_up_to(s, 86_400.0)
}

/// `--seconds` of `bench table`.
fn seconds_up_to_an_hour(s: &str) -> Result<f64, String> {
    seconds_up_to(s, 3_600.0)
}

/// Runs `fugue bench capacity` ([`crate::capacity`]).
fn run_capacity(
    args: CapacityArgs,
    env: &Env,
    progress: &mut dyn Progress,
) -> Result<String, BenchError> {
    let config = CapacityConfig {
        graph: args.graph,
        buffer: args.buffer as usize,
        rate: args.rate,
        threads: args.threads as usize,
        seconds: args.seconds,
        window: Duration::from_millis(args.window_ms),
        registry: (env.registry)(),
    };
    if args.json {
        let result = crate::capacity::run(&config, &mut NoWindows(progress))?;
        return Ok(format!("{:#}\n", result.to_json(&config)));
    }
    let result = crate::capacity::run(&config, progress)?;
    Ok(format!("{}\n", result.sentence(&config)))
}

/// Arguments of `fugue bench profile-cost`.
#[derive(clap::Args, Debug)]
pub struct ProfileCostArgs {
    /// The graph: a graph file, gen:SHAPE:N, or line, diamond or rake (the 2019 corpus's
    /// shapes, generated; rake is rateau101.ag's 101 nodes).
    #[arg(long, default_value = "rake")]
    pub graph: String,
    /// Frames per cycle.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub buffer: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Pairs of blocks (one plain, one profiled).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub pairs: u64,
    /// Cycles per block.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub cycles: u64,
    /// Untimed cycles of each engine first.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    pub warmup: u64,
    /// The executor.
    #[command(flatten)]
    pub exec: fugue_engine::flags::ExecArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue bench profile-cost` ([`crate::profile_cost`]).
fn run_profile_cost(
    args: ProfileCostArgs,
    env: &Env,
    progress: &mut dyn Progress,
) -> Result<String, BenchError> {
    // What `fugue profile` refuses: the profile's cost is measured on one executor named, on
    // whole cycles.
    if args.exec.executor == Some(fugue_engine::host::GraphExecutor::Auto) {
        return Err(BenchError::Config(
            "--executor auto: the profile's cost is measured on one executor; name it (seq, ws, static, ...)".into(),
        ));
    }
    if let Some(p) = args
        .exec
        .pipeline
        .filter(|p| *p != fugue_engine::Pipeline::Sub(1))
    {
        return Err(BenchError::Config(format!(
            "--pipeline {p}: the profile records whole cycles, which a pipelined run does not have; measure without --pipeline"
        )));
    }
    // Flags the executor ignores, as `fugue profile` says them (its default is seq too).
    for w in args
        .exec
        .request()
        .warnings(fugue_engine::host::GraphExecutor::Kind(
            fugue_exec::ExecutorKind::Seq,
        ))
    {
        progress.event(Event::Warning(&w));
    }
    // Each flag is bounded, their product too: the run's length in cycles.
    let total = 2 * args.pairs * args.cycles + 2 * args.warmup;
    if total > crate::profile_cost::MAX_CYCLES {
        return Err(BenchError::Config(format!(
            "--pairs {} of two blocks of --cycles {} make {total} cycles with the two engines' --warmup, more than the limit of {} (docs/limits.md); ask for fewer pairs or cycles",
            args.pairs,
            args.cycles,
            crate::profile_cost::MAX_CYCLES
        )));
    }
    let loaded = crate::shapes::load(&args.graph, None, Path::new("."))?;
    let config = crate::profile_cost::ProfileCostConfig {
        choice: args.exec.request().choice(),
        rate: args.rate as f64,
        buffer: args.buffer as usize,
        pairs: args.pairs as usize,
        cycles: args.cycles as usize,
        warmup: args.warmup as usize,
        registry: (env.registry)(),
    };
    let r = crate::profile_cost::run(&loaded.graph, &config).map_err(|e| match e {
        e @ BenchError::Executor(_) => {
            e.at_node(format!("cannot profile {}", args.graph), &loaded.graph)
        }
        e => e,
    })?;
    let report = ProfileCostReport::new(&r, &config, &loaded.label, &loaded.source);
    if args.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| BenchError::Failed(format!("cannot write the report as JSON: {e}")))?;
        return Ok(format!("{json}\n"));
    }
    Ok(format!("{report}\n"))
}

/// Arguments of `fugue bench study`.
#[derive(clap::Args, Debug)]
pub struct StudyArgs {
    /// The study spec (TOML; its fields are described in studies/README.md) [default:
    /// studies/default.toml when it is in the current folder, else the same spec built in].
    pub spec: Option<PathBuf>,
    /// Output folder.
    #[arg(short, long, default_value = "bench-results/study")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder (an earlier study's histograms of
    /// graphs this one does not run, as its summary.csv names them, are removed; other files
    /// stay).
    #[arg(long)]
    pub force: bool,
    /// Runs of each configuration (interleaved); figures are medians over them, with their
    /// spread [default: the spec's `repeats`, else 3].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub repeats: Option<u64>,
    /// List the runs and the estimated time, and run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

const STUDY_HELP: &str = "\
Spec fields (TOML; studies/README.md describes each):
  required: graphs, executors, threads, buffers, loads, seconds
  optional: root, busy_threads, busy_command, backend, rate, deadline, rt, pin, histogram_buffer,
            repeats, max_spread_pct

Examples:
  fugue bench study --dry-run                    # the default study's runs and its length
  fugue bench study -o study-out --repeats 5     # the default study, 5 runs per configuration
  fugue bench study studies/short.toml -o short  # a spec file (studies/README.md)
";

/// Runs `fugue bench study` ([`crate::study`]).
fn run_study(
    args: StudyArgs,
    env: &Env,
    progress: &mut dyn Progress,
) -> Result<String, BenchError> {
    // The spec is read where a signal ends the process: a named pipe with no writer, or one
    // that never delivers, would otherwise hold it past the stop request.
    let spec_text = match &args.spec {
        Some(p) => {
            let mut text = None;
            (env.blocking)(&mut || text = Some(crate::study::read_spec(p)));
            Some(text.expect("the call ran")?)
        }
        None => None,
    };
    let config = StudyConfig {
        spec: args.spec,
        spec_text,
        output: args.output,
        force: args.force,
        repeats: args.repeats.map(|r| r as usize),
        command: env.command.clone(),
        stop: (env.stop)(),
        registry: (env.registry)(),
    };
    if args.dry_run {
        return Ok(crate::study::plan(&config)?.text());
    }
    let r = crate::study::run(&config, progress)?;
    Ok(format!("{}\n{}\n", r.sentence(), r.trust))
}

/// Arguments of `fugue bench overhead`.
#[derive(clap::Args, Debug)]
pub struct OverheadArgs {
    /// A generated graph: line, diamond or rake (with --nodes). One of --shape and --graph is
    /// required.
    #[arg(long, value_parser = ["line", "diamond", "rake"], conflicts_with = "graph", required_unless_present = "graph")]
    pub shape: Option<String>,
    /// Nodes of the generated graph (a line has exactly N; a diamond the nearest of
    /// 5*2^d-4 = 6, 16, 36, 76, 156, 316...; a rake the nearest of 3k+2).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub nodes: u64,
    /// A graph file instead of --shape: its DAG, every node replaced by an empty one.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Executors, comma-separated: seq, static, ws, ws-affinity, share, share-spin, levels, and the peers
    /// rayon and tbb; `all` for every one (tbb when its harness is built).
    #[arg(long, short = 'e', default_value = "ws")]
    pub executor: String,
    /// Sleep this long between cycles (as an audio thread waits for the next period), in µs.
    #[arg(long, default_value_t = 0, conflicts_with = "period_us", value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    pub idle_us: u64,
    /// Start cycles every P µs, as a real-time backend starts them (the idle gap is P minus
    /// the cycle); the executors know the period and wake their workers ahead of each cycle
    /// (--wake-lead-us). The table adds the process's CPU use.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub period_us: Option<u64>,
    /// With --period-us: workers sleeping between cycles wake this many µs before the next
    /// cycle's expected start and spin until it starts (0: they sleep until the cycle wakes
    /// them) [default: the executors', 50].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub wake_lead_us: Option<u64>,
    /// Timed cycles per run (each one's time is kept until the run ends: at most
    /// 8,388,608, as `bench table`'s runs).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=crate::MAX_CYCLES_PER_RUN as u64))]
    pub cycles: u64,
    /// Untimed cycles before each run.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
    pub warmup: u64,
    /// Runs per executor (interleaved); medians and spread are over runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Threads, schedule algorithm, wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// The oneTBB harness [default: $FUGUE_TBB_HARNESS, else target/peers/tbb-flow].
    #[arg(long)]
    pub tbb: Option<PathBuf>,
    /// Print one JSON object per executor instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue bench overhead` ([`crate::overhead`]).
fn run_overhead(args: OverheadArgs, progress: &mut dyn Progress) -> Result<String, BenchError> {
    if args.wake_lead_us.is_some() && args.period_us.is_none() {
        return Err(BenchError::Config(
            "--wake-lead-us needs --period-us: workers wake ahead of a cycle's expected start only when cycles start every period".into(),
        ));
    }
    let names: Vec<&str> = args.executor.split(',').map(str::trim).collect();
    once_each("--executor", Some(&names))?;
    let graph = match (args.graph, args.shape.as_deref().and_then(Shape::from_name)) {
        (Some(path), _) => GraphSource::File(path),
        (None, Some(shape)) => GraphSource::Shape(shape, args.nodes as usize),
        _ => {
            return Err(BenchError::Config(
                "give --shape line|diamond|rake or --graph FILE".into(),
            ))
        }
    };
    let config = OverheadConfig {
        graph,
        threads: args.tuning.threads as usize,
        executors: args.executor,
        algorithm: args.tuning.algorithm,
        idle_us: args.idle_us,
        period_us: args.period_us,
        cycles: args.cycles as usize,
        warmup: args.warmup as usize,
        runs: args.runs as usize,
        tuning: crate::runner::Tuning {
            wake_lead_us: args.wake_lead_us,
            ..args.tuning.tuning()
        },
        tbb: args.tbb,
    };
    let result = crate::overhead::run(&config, progress)?;
    if args.json {
        let mut out = String::new();
        result
            .to_json()
            .iter()
            .for_each(|v| _ = writeln!(out, "{v}"));
        return Ok(out);
    }
    Ok(result.text())
}

/// Arguments of `fugue bench table`.
#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// Graphs, comma-separated: line (ligne/ligne100.ag), diamond (losange/losange156.ag),
    /// rake (rateau/rateau101.ag) — the 2019 corpus's shapes, generated node for node unless
    /// --corpus is given —, gen:SHAPE:N, or paths of graph files.
    #[arg(long, default_value = "line,diamond,rake", value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// Buffer sizes (frames per cycle), comma-separated.
    #[arg(long, default_value = "64,128,512,2048", value_delimiter = ',')]
    pub buffers: Vec<usize>,
    /// Executors, comma-separated (seq, static, ws, ws-affinity, share, share-spin, levels, rayon), or
    /// `all` (every one, and the rayon peer). `seq` is always run: it is the reference.
    #[arg(long, default_value = "all")]
    pub executors: String,
    /// Audio seconds rendered per run (at most an hour: each cycle's record is kept).
    #[arg(long, default_value_t = 2.0, value_parser = seconds_up_to_an_hour)]
    pub seconds: f64,
    /// Runs per configuration (interleaved across executors).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Read line, diamond and rake from this corpus folder (the one holding ligne/, losange/
    /// and rateau/) instead of generating them.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Costs of the static schedule: measured (calibrated at each buffer size) or declared.
    #[arg(long, default_value = "measured", value_parser = ["measured", "declared"])]
    pub costs: String,
    /// Threads, schedule algorithm, wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// Write README.md, raw.csv, summary.csv and table.md into this folder.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
    /// Pipelining for every executor but seq (the baseline runs unpipelined): N sub-blocks
    /// per cycle (must divide every buffer; 1: off), or auto (from each graph's critical
    /// path, the threads and the buffer).
    #[arg(long, default_value = "1")]
    pub pipeline: fugue_engine::Pipeline,
}

/// Refuses a list option that names one value twice ([`crate::report::first_twice`]).
pub(crate) fn once_each<T: PartialEq + ToString>(
    flag: &str,
    values: Option<&[T]>,
) -> Result<(), BenchError> {
    if values.is_some_and(|v| v.iter().any(|x| x.to_string().trim().is_empty())) {
        return Err(BenchError::Config(format!(
            "{flag} holds an empty name (two commas in a row, or one at an end); name each value between the commas"
        )));
    }
    match values.and_then(crate::report::first_twice) {
        Some(v) => Err(BenchError::Config(format!(
            "{flag} names {v} twice; name each value once"
        ))),
        None => Ok(()),
    }
}

pub(crate) use fugue_engine::report::shown;

/// Runs `fugue bench table` ([`crate::table`]).
fn run_table(
    args: TableArgs,
    env: &Env,
    progress: &mut dyn Progress,
) -> Result<String, BenchError> {
    once_each("--shapes", Some(&args.shapes))?;
    once_each("--buffers", Some(&args.buffers))?;
    let config = TableConfig {
        shapes: args
            .shapes
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .collect(),
        buffers: args.buffers,
        executors: args.executors,
        threads: args.tuning.threads as usize,
        seconds: args.seconds,
        runs: args.runs as usize,
        rate: args.rate,
        corpus: args.corpus,
        algorithm: args.tuning.algorithm,
        costs: if args.costs == "declared" {
            Costs::Declared
        } else {
            Costs::Measured
        },
        tuning: args.tuning.tuning(),
        output: args.output,
        force: args.force,
        pipeline: args.pipeline,
        registry: (env.registry)(),
    };
    let result = crate::table::run(&config, progress)?;
    if let Some(dir) = &config.output {
        result.write(dir, &env.command)?;
        progress.event(Event::Line(&format!("wrote {}", dir.display())));
    }
    Ok(result.markdown())
}
