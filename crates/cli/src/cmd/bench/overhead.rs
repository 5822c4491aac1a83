//! `fugue bench overhead`: the cost of running a graph whose nodes do nothing, per cycle, for
//! each executor and for the peers (rayon, the oneTBB flow graph), on the same graph, on the
//! same machine, in the same run.
//!
//! Every node is replaced by a [`Probe`] node: no DSP, but each run checks that the node runs
//! once per cycle, after all of its predecessors (see `fugue_peers::probe`). A run whose
//! checks fail fails the benchmark: its times do not count. The oneTBB harness
//! (`benches/peers/tbb/`, built by `scripts/bench-peers.sh`) reads the same DAG as an edge
//! list and makes the same checks.
//!
//! Measurements of the executors are interleaved (run 1 of every executor, then run 2, ...),
//! so that a change of the machine's load during the benchmark touches them all alike.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use fugue_engine::{Costs, ExecutorChoice};
use fugue_exec::executors::SpinBudget;
use fugue_exec::{CompileOptions, ExecOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_peers::probe::Probe;
use fugue_peers::rayon_dag::RayonDag;
use fugue_sched::Algorithm;

use crate::util::usage;

/// Frames per cycle of the empty plans (the probe writes one zero per output).
const EMPTY_BLOCK: usize = 1;

/// Arguments of `fugue bench overhead`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A generated graph: line, diamond or rake (with --nodes).
    #[arg(long, value_parser = ["line", "diamond", "rake"], conflicts_with = "graph", required_unless_present = "graph")]
    pub shape: Option<String>,
    /// Nodes of the generated graph (a line has exactly N; a diamond the nearest of
    /// 5*2^d-4 = 6, 16, 36, 76, 156, 316...; a rake the nearest of 3k+2).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub nodes: u64,
    /// A graph file instead: its DAG, every node replaced by an empty one.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Threads, the calling thread included.
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Executors, comma-separated: seq, static, ws, ws-affinity, share, share-spin, levels, and the peers
    /// rayon and tbb; `all` for every one (tbb when its harness is built).
    #[arg(long, short = 'e', default_value = "ws")]
    pub executor: String,
    /// Static schedule algorithm (for static): hlfet, etf, cpfd, random, optimal, best.
    #[arg(long, default_value = "hlfet", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,
    /// Sleep this long between cycles (as an audio thread waits for the next period), in µs.
    #[arg(long, default_value_t = 0)]
    pub idle_us: u64,
    /// Timed cycles per run.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub cycles: u64,
    /// Untimed cycles before each run.
    #[arg(long, default_value_t = 1000)]
    pub warmup: u64,
    /// Runs per executor (interleaved); medians and spread are over runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// The oneTBB harness [default: $FUGUE_TBB_HARNESS, else target/peers/tbb-flow].
    #[arg(long)]
    pub tbb: Option<PathBuf>,
    /// Print one JSON object per executor instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse::<Algorithm>().map_err(|e| e.to_string())
}

/// An executor under test: one of fugue's, or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// A fugue executor.
    Fugue(ExecutorKind),
    /// The rayon scope peer.
    Rayon,
    /// The oneTBB flow-graph peer (a separate process).
    Tbb,
}

impl Runner {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Fugue(k) => k.name(),
            Runner::Rayon => "rayon",
            Runner::Tbb => "tbb",
        }
    }
}

/// Parses a comma-separated executor list (`all` = fugue's executors, then `extra`).
pub fn parse_runners(s: &str, extra: &[Runner]) -> anyhow::Result<Vec<Runner>> {
    let mut v = Vec::new();
    for name in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        if name == "all" {
            v.extend(ExecutorKind::ALL.iter().map(|&k| Runner::Fugue(k)));
            v.extend_from_slice(extra);
            continue;
        }
        let r = match name {
            "rayon" => Runner::Rayon,
            "tbb" => Runner::Tbb,
            _ => match ExecutorKind::from_name(name) {
                Some(k) => Runner::Fugue(k),
                None => {
                    let mut names: Vec<&str> = ExecutorKind::ALL.iter().map(|k| k.name()).collect();
                    names.push("rayon");
                    if extra.contains(&Runner::Tbb) {
                        names.push("tbb");
                    }
                    return Err(usage(format!(
                        "unknown executor `{name}` in --executor; expected {} or all",
                        names.join(", ")
                    )));
                }
            },
        };
        if (r == Runner::Tbb) && !extra.contains(&Runner::Tbb) {
            return Err(usage(
                "the tbb peer runs empty graphs only (fugue bench overhead)",
            ));
        }
        v.push(r);
    }
    v.dedup();
    if v.is_empty() {
        return Err(usage("--executor names no executor"));
    }
    Ok(v)
}

/// Statistics of one run's cycle times, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Timed cycles.
    pub cycles: usize,
    /// Median.
    pub median_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// Largest.
    pub max_ns: f64,
    /// Smallest.
    pub min_ns: f64,
    /// Mean.
    pub mean_ns: f64,
}

impl Stats {
    /// The statistics of `samples` (sorted in place). `None` when empty.
    pub fn of(samples: &mut [u64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        let q = |p: f64| samples[((p * n as f64).ceil() as usize).clamp(1, n) - 1] as f64;
        Some(Stats {
            cycles: n,
            median_ns: if n % 2 == 1 {
                samples[n / 2] as f64
            } else {
                (samples[n / 2 - 1] + samples[n / 2]) as f64 / 2.0
            },
            p99_ns: q(0.99),
            max_ns: samples[n - 1] as f64,
            min_ns: samples[0] as f64,
            mean_ns: samples.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        })
    }
}

/// The median of `v` (not empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Spread of `v` around its median: (max - min) / median, in percent.
pub fn spread_pct(v: &[f64]) -> f64 {
    let m = median(v);
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if m > 0.0 {
        100.0 * (hi - lo) / m
    } else {
        0.0
    }
}

/// How many of a run's first cycles are left out of its statistics as warm-up (caches,
/// branch predictors): the first tenth, at most 50.
pub fn warm_up(cycles: usize) -> usize {
    (cycles / 10).min(50)
}

/// Pause between two runs: the threads of the runner measured before (fugue's workers spin
/// for their idle budget, rayon's for its own) park before the next run starts, so that no
/// runner is measured beside another one's spinning threads.
pub fn settle() {
    std::thread::sleep(Duration::from_millis(20));
}

/// The flags that tune the executors, shared by `bench overhead` and `bench table`.
#[derive(clap::Args, Debug)]
pub struct TuningArgs {
    /// Between cycles, how long workers spin before parking, in µs [default: the executors'].
    #[arg(long)]
    pub idle_spin_us: Option<u64>,
    /// Inside a cycle, how long a thread with nothing to do spins before sleeping, in µs
    /// [default: the executors'].
    #[arg(long)]
    pub steal_spin_us: Option<u64>,
    /// Busy-wait iterations (CPU relax hint) before a waiting thread starts yielding
    /// (sched_yield) for the rest of its budget [default: the executors'].
    #[arg(long)]
    pub spins: Option<u32>,
    /// Work stealing's threshold.
    #[command(flatten)]
    pub steal: crate::exec_args::StealArgs,
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
    /// The executor options from the budget flags.
    pub fn options(&self) -> ExecOptions {
        let mut o = ExecOptions::default();
        if let Some(n) = self.spins {
            o.idle_budget.spins = n;
            o.steal_budget.spins = n;
        }
        let budget = |us: u64, base: SpinBudget| SpinBudget {
            spins: if us == 0 { 0 } else { base.spins },
            time: Duration::from_micros(us),
        };
        if let Some(us) = self.idle_spin_us {
            o.idle_budget = budget(us, o.idle_budget);
        }
        if let Some(us) = self.steal_spin_us {
            o.steal_budget = budget(us, o.steal_budget);
        }
        self.steal.apply(&mut o);
        o
    }
}

/// How to build an executor besides its kind.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Threads, the calling thread included (seq always uses one).
    pub threads: usize,
    /// Static schedule algorithm.
    pub algorithm: Algorithm,
    /// Static schedule costs.
    pub costs: Costs,
    /// Pin threads to cores.
    pub pin: bool,
    /// Wait budgets.
    pub options: ExecOptions,
}

/// Builds an in-process executor (a fugue executor or the rayon peer) for `plan`.
pub fn build_executor(
    runner: Runner,
    graph: &TaskGraph,
    plan: &Plan,
    spec: &Spec,
) -> anyhow::Result<(Box<dyn Executor + Send>, Vec<String>)> {
    match runner {
        Runner::Fugue(kind) => {
            let choice = ExecutorChoice {
                kind,
                threads: if kind == ExecutorKind::Seq {
                    1
                } else {
                    spec.threads
                },
                algorithm: spec.algorithm,
                costs: spec.costs.clone(),
                pin: spec.pin,
                options: spec.options.clone(),
                ..ExecutorChoice::default()
            };
            let (executor, _, warnings) = fugue_engine::build_executor(graph, plan, &choice)?;
            Ok((executor, warnings))
        }
        Runner::Rayon => Ok((
            Box::new(
                RayonDag::with_pinning(plan, spec.threads, spec.pin)
                    .context("cannot start the rayon pool")?,
            ),
            Vec::new(),
        )),
        Runner::Tbb => bail!("the tbb peer runs in its own process"),
    }
}

/// The graph to measure and its description.
fn load_graph(args: &Args) -> anyhow::Result<(TaskGraph, String)> {
    if let Some(path) = &args.graph {
        let g = crate::util::read_graph(path, None)?;
        let d = format!("{} ({} nodes)", path.display(), g.len());
        return Ok((g, d));
    }
    let n = args.nodes as usize;
    Ok(match args.shape.as_deref() {
        Some("line") => (fugue_graph::gen::line(n), format!("line of {n} nodes")),
        Some("rake") => {
            let k = ((n.saturating_sub(2) as f64) / 3.0).round().max(1.0) as usize;
            let g = fugue_graph::gen::rake(k);
            let d = format!("rake of {k} branches ({} nodes, nearest to {n})", g.len());
            (g, d)
        }
        Some("diamond") => {
            let depth = (1..=20)
                .min_by_key(|&d| {
                    (fugue_graph::gen::diamond_nodes(d) as i64 - n as i64).unsigned_abs()
                })
                .unwrap_or(1);
            let g = fugue_graph::gen::diamond(depth);
            let d = format!(
                "diamond of depth {depth} ({} nodes, nearest to {n})",
                g.len()
            );
            (g, d)
        }
        _ => return Err(usage("give --shape line|diamond|rake or --graph FILE")),
    })
}

/// Where the oneTBB harness is.
fn tbb_harness(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("FUGUE_TBB_HARNESS") {
        return Some(PathBuf::from(p));
    }
    let mut candidates = vec![PathBuf::from("target/peers/tbb-flow")];
    if let Ok(exe) = std::env::current_exe() {
        // target/<profile>/fugue -> target/peers/tbb-flow
        if let Some(t) = exe.parent().and_then(Path::parent) {
            candidates.push(t.join("peers/tbb-flow"));
        }
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// Times `cycles` cycles (after `warmup`) of `exec`, checking the probe at the end.
pub fn measure(
    exec: &mut dyn Executor,
    plan: &mut Plan,
    probe: &Probe,
    cycles: usize,
    warmup: usize,
    idle: Duration,
) -> anyhow::Result<Stats> {
    let mut samples: Vec<u64> = Vec::with_capacity(cycles);
    for i in 0..warmup + cycles {
        if !idle.is_zero() {
            std::thread::sleep(idle);
        }
        probe.begin_cycle();
        let t0 = Instant::now();
        exec.run_cycle(plan);
        let dt = t0.elapsed();
        if i >= warmup {
            samples.push(dt.as_nanos() as u64);
        }
    }
    // A node skipped in one cycle fails its own check at its next run (its counter lags);
    // the last cycle is checked here.
    probe.check_cycle()?;
    Stats::of(&mut samples).context("no cycle was timed")
}

/// One run of the oneTBB harness.
fn run_tbb(
    harness: &Path,
    edges: &Path,
    threads: usize,
    cycles: usize,
    warmup: usize,
    idle_us: u64,
    pin: bool,
) -> anyhow::Result<(Stats, Option<f64>)> {
    let out = Command::new(harness)
        .arg(edges)
        .arg(threads.to_string())
        .arg(cycles.to_string())
        .arg(warmup.to_string())
        .arg(idle_us.to_string())
        .arg(if pin { "1" } else { "0" })
        .output()
        .with_context(|| format!("cannot run the oneTBB harness {}", harness.display()))?;
    if !out.status.success() {
        bail!(
            "the oneTBB harness {} failed ({}): {}",
            harness.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "the oneTBB harness {} printed no JSON object",
            harness.display()
        )
    })?;
    if v["ok"] != serde_json::Value::Bool(true) {
        bail!(
            "the oneTBB run failed its check: {}",
            v["error"].as_str().unwrap_or("the tasks ran out of order")
        );
    }
    let f = |k: &str| -> anyhow::Result<f64> {
        v[k].as_f64()
            .with_context(|| format!("the oneTBB harness printed no `{k}`"))
    };
    let stats = Stats {
        cycles: f("cycles")? as usize,
        median_ns: f("median_ns")?,
        p99_ns: f("p99_ns")?,
        max_ns: f("max_ns")?,
        min_ns: f("min_ns")?,
        mean_ns: f("mean_ns")?,
    };
    // The share of node runs on oneTBB's worker threads (a harness built before it was
    // reported prints none).
    Ok((stats, v["worker_share"].as_f64()))
}

/// The machine's load average (1, 5, 15 minutes), if readable.
pub fn load_average() -> Option<String> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// The results of one executor over all runs.
struct Row {
    runner: Runner,
    runs: Vec<Stats>,
}

impl Row {
    fn medians(&self) -> Vec<f64> {
        self.runs.iter().map(|s| s.median_ns).collect()
    }
    /// Per run `i`: this row's median over `other`'s median of the same run `i` (the two
    /// were measured one right after the other, so a change of the machine's speed between
    /// runs touches both).
    fn paired_ratios(&self, other: &Row) -> Vec<f64> {
        self.runs
            .iter()
            .zip(&other.runs)
            .filter(|(_, o)| o.median_ns > 0.0)
            .map(|(s, o)| s.median_ns / o.median_ns)
            .collect()
    }
    fn of(&self, f: impl Fn(&Stats) -> f64) -> f64 {
        median(&self.runs.iter().map(f).collect::<Vec<_>>())
    }
}

/// Runs `fugue bench overhead`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let tbb_path = tbb_harness(args.tbb.as_deref());
    let extra: Vec<Runner> =
        if tbb_path.is_some() || args.executor.split(',').any(|x| x.trim() == "tbb") {
            vec![Runner::Rayon, Runner::Tbb]
        } else {
            vec![Runner::Rayon]
        };
    let runners = parse_runners(&args.executor, &extra)?;
    if runners.contains(&Runner::Tbb) && tbb_path.is_none() {
        bail!("the oneTBB harness is not built: run scripts/bench-peers.sh (it compiles benches/peers/tbb/flow_graph.cpp into target/peers/tbb-flow), or give --tbb PATH");
    }
    let (graph, desc) = load_graph(&args)?;
    let (probe, empty) = Probe::new(&graph);
    let mut plan = Plan::compile(
        &empty,
        &Probe::registry(),
        &CompileOptions {
            sample_rate: 48_000.0,
            block: EMPTY_BLOCK,
            placeholder: false,
            merge_chains: !args.tuning.no_merge_chains,
        },
    )
    .context("cannot compile the empty graph")?;
    let threads = args.threads as usize;
    let spec = Spec {
        threads,
        algorithm: args.algorithm,
        costs: Costs::Declared,
        pin: args.tuning.pin,
        options: args.tuning.options(),
    };
    let (cycles, warmup) = (args.cycles as usize, args.warmup as usize);
    let idle = Duration::from_micros(args.idle_us);
    let edges_file = if runners.contains(&Runner::Tbb) {
        let p = std::env::temp_dir().join(format!("fugue-dag-{}.txt", std::process::id()));
        std::fs::write(&p, fugue_peers::edge_list(&plan))
            .with_context(|| format!("cannot write {}", p.display()))?;
        Some(p)
    } else {
        None
    };
    let load_before = load_average();
    let mut rows: Vec<Row> = runners
        .iter()
        .map(|&r| Row {
            runner: r,
            runs: Vec::new(),
        })
        .collect();
    let mut warnings = Vec::new();
    // Runs in which oneTBB's workers took (almost) no part.
    let mut tbb_alone = 0;
    let result = (|| -> anyhow::Result<()> {
        for _ in 0..args.runs {
            for row in rows.iter_mut() {
                settle();
                let stats = match row.runner {
                    Runner::Tbb => {
                        let (stats, worker_share) = run_tbb(
                            tbb_path.as_deref().expect("checked above"),
                            edges_file.as_deref().expect("written above"),
                            threads,
                            cycles,
                            warmup,
                            args.idle_us,
                            args.tuning.pin,
                        )?;
                        if worker_share.is_some_and(|s| threads > 1 && s < 0.05) {
                            tbb_alone += 1;
                        }
                        stats
                    }
                    r => {
                        let (mut exec, w) = build_executor(r, &empty, &plan, &spec)?;
                        warnings.extend(w);
                        measure(exec.as_mut(), &mut plan, &probe, cycles, warmup, idle)
                            .with_context(|| format!("executor {}", r.name()))?
                    }
                };
                row.runs.push(stats);
            }
        }
        Ok(())
    })();
    if let Some(p) = &edges_file {
        let _ = std::fs::remove_file(p);
    }
    result?;
    if tbb_alone > 0 {
        warnings.push(format!(
            "in {tbb_alone} of {} runs oneTBB ran below 5 % of its node runs on its worker \
             threads: it was in effect sequential there, on the calling thread",
            args.runs
        ));
    }
    warnings.sort();
    warnings.dedup();
    for w in &warnings {
        eprintln!("fugue: warning: {w}");
    }
    let load_after = load_average();
    let tbb_row = rows.iter().find(|r| r.runner == Runner::Tbb);
    // oneTBB's median over runs, the denominator of every `vs tbb`.
    let tbb_med = tbb_row.map(|r| r.of(|s| s.median_ns)).filter(|&t| t > 0.0);
    if args.json {
        for row in &rows {
            let paired = tbb_row.map(|t| row.paired_ratios(t)).unwrap_or_default();
            let t = if row.runner == Runner::Fugue(ExecutorKind::Seq) {
                1
            } else {
                threads
            };
            let v = serde_json::json!({
                "executor": row.runner.name(),
                "threads": t,
                "nodes": plan.len(),
                "graph": desc,
                "idle_us": args.idle_us,
                "idle_spin_ns": spec.options.idle_budget.time.as_nanos() as u64,
                "steal_spin_ns": spec.options.steal_budget.time.as_nanos() as u64,
                "min_steal_ns": spec.options.min_steal.as_nanos() as u64,
                "cycles": cycles,
                "runs": row.runs.len(),
                "median_ns": row.of(|s| s.median_ns),
                "p99_ns": row.of(|s| s.p99_ns),
                "max_ns": row.runs.iter().map(|s| s.max_ns).fold(0.0, f64::max),
                "mean_ns": row.of(|s| s.mean_ns),
                "min_ns": row.runs.iter().map(|s| s.min_ns).fold(f64::INFINITY, f64::min),
                "spread_pct": spread_pct(&row.medians()),
                "run_medians_ns": row.medians(),
                "run_p99s_ns": row.runs.iter().map(|s| s.p99_ns).collect::<Vec<_>>(),
                "verified": true,
                "vs_tbb": tbb_med.map(|t| row.of(|s| s.median_ns) / t),
                "vs_tbb_per_run": paired,
                "vs_tbb_paired_median": (!paired.is_empty()).then(|| median(&paired)),
                "load_before": load_before,
                "load_after": load_after,
            });
            println!("{v}");
        }
        return Ok(());
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{desc}, empty nodes, {threads} threads, {cycles} cycles (+{warmup} warm-up) x {} runs, idle {} µs between cycles; every run checked (each task once per cycle, after its predecessors)",
        args.runs, args.idle_us
    );
    let _ = writeln!(
        out,
        "{:<11} {:>10} {:>9} {:>10} {:>10} {:>11} {:>9} {:>19}",
        "executor",
        "median µs",
        "spread %",
        "p99 µs",
        "mean µs",
        "max µs",
        "vs tbb",
        "per run (min-max)"
    );
    for row in &rows {
        let med = row.of(|s| s.median_ns);
        let vs = match tbb_med {
            Some(t) => format!("{:.2}x", med / t),
            None => "-".to_string(),
        };
        let paired = tbb_row.map(|t| row.paired_ratios(t)).unwrap_or_default();
        let per_run = if paired.is_empty() {
            "-".to_string()
        } else {
            format!(
                "{:.2}x ({:.2}-{:.2})",
                median(&paired),
                paired.iter().copied().fold(f64::INFINITY, f64::min),
                paired.iter().copied().fold(0.0, f64::max)
            )
        };
        let _ = writeln!(
            out,
            "{:<11} {:>10.2} {:>9.1} {:>10.2} {:>10.2} {:>11.1} {:>9} {:>19}",
            row.runner.name(),
            med / 1e3,
            spread_pct(&row.medians()),
            row.of(|s| s.p99_ns) / 1e3,
            row.of(|s| s.mean_ns) / 1e3,
            row.runs.iter().map(|s| s.max_ns).fold(0.0, f64::max) / 1e3,
            vs,
            per_run
        );
    }
    let _ = writeln!(
        out,
        "median and p99: medians over runs; spread: (max - min) / median of the run medians; max: over all runs; vs tbb: median over oneTBB's median; per run: the median (and range) over runs of the run's median over oneTBB's in the same round. Load average before: {}, after: {}",
        load_before.as_deref().unwrap_or("?"),
        load_after.as_deref().unwrap_or("?")
    );
    print!("{out}");
    Ok(())
}
