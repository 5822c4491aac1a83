//! The overhead benchmark: the cost of running a graph whose nodes do nothing, per cycle, for
//! each executor and for the peers (rayon, the oneTBB flow graph), on the same graph, on the
//! same machine, in the same run.
//!
//! Every node is replaced by a [`Probe`] node: no DSP, but each run checks that the node runs
//! once per cycle, after all of its predecessors (see [`crate::peers::probe`]): the only
//! result empty nodes compute, and what seq computes by construction. Every cycle is checked,
//! warm-up and timed alike (a node's run checks its own counter and its predecessors'; after
//! the last cycle every counter is checked); the checks are a few relaxed atomic operations
//! per node inside the timed cycle, the same for every executor. A failed check fails the
//! benchmark before anything is printed: its times do not count. The oneTBB harness
//! (`benches/peers/tbb/`, built by `scripts/bench-peers.sh`) reads the same DAG as an edge
//! list and makes the same checks.
//!
//! Measurements of the executors are interleaved (run 1 of every executor, then run 2, ...),
//! so that a change of the machine's load during the benchmark touches them all alike.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fugue_engine::Costs;
use fugue_exec::{CompileOptions, ExecOptions, Executor, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::error::{failed, BenchError, Context as _};
use crate::machine::load_average;
use crate::peers::probe::Probe;
use crate::peers::tbb;
use crate::progress::{Event, Progress};
use crate::runner::{build_executor, parse_runners, settle, Runner, Spec, Tuning};
use crate::stats::{median, min_max, paired_ratios, spread_pct, CycleStats, Runs as _};

/// Frames per cycle of the empty plans (the probe writes one zero per output).
const EMPTY_BLOCK: usize = 1;

/// A generated graph's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A chain of nodes.
    Line,
    /// Fan out, fan in.
    Diamond,
    /// Parallel branches between a source and a sink.
    Rake,
}

impl Shape {
    /// The shape of a name: `line`, `diamond` or `rake`.
    pub fn from_name(s: &str) -> Option<Shape> {
        match s {
            "line" => Some(Shape::Line),
            "diamond" => Some(Shape::Diamond),
            "rake" => Some(Shape::Rake),
            _ => None,
        }
    }
}

/// The graph to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphSource {
    /// A generated graph of about `nodes` nodes (a line has exactly N; a diamond the nearest
    /// of 5*2^d-4; a rake the nearest of 3k+2; never more than the limit on generated graphs).
    Shape(Shape, usize),
    /// A graph file: its DAG, every node replaced by an empty one.
    File(PathBuf),
}

/// The overhead benchmark's configuration.
#[derive(Clone, Debug)]
pub struct OverheadConfig {
    /// The graph.
    pub graph: GraphSource,
    /// Threads, the calling thread included.
    pub threads: usize,
    /// Executors, comma-separated: fugue's, `rayon`, `tbb`, or `all` (with tbb when its
    /// harness is found).
    pub executors: String,
    /// Static schedule algorithm (for static).
    pub algorithm: Algorithm,
    /// Sleep this long between cycles, in µs.
    pub idle_us: u64,
    /// Start cycles every this many µs, as a real-time backend would (instead of
    /// `idle_us`); the executors are told the period (`ExecOptions::period`).
    pub period_us: Option<u64>,
    /// Timed cycles per run.
    pub cycles: usize,
    /// Untimed cycles before each run.
    pub warmup: usize,
    /// Runs per executor (interleaved).
    pub runs: usize,
    /// Budgets, unit grouping and pinning.
    pub tuning: Tuning,
    /// The oneTBB harness (else found as [`tbb::harness`] says).
    pub tbb: Option<PathBuf>,
}

/// One executor's runs.
#[derive(Clone, Debug)]
pub struct RunnerRuns {
    /// The executor.
    pub runner: Runner,
    /// Its runs' statistics, in order.
    pub runs: Vec<CycleStats>,
    /// Per run: the CPU time the process used over the timed cycles, per second of wall
    /// time (in cores; fugue's executors only).
    pub cpu: Vec<f64>,
}

/// The overhead benchmark's result: every run of every executor, each of whose cycles passed
/// the probe's checks (a failed check makes [`run`] fail instead).
#[derive(Clone, Debug)]
pub struct OverheadResult {
    /// The graph, in words.
    pub graph: String,
    /// Tasks of the plan.
    pub nodes: usize,
    /// Threads asked for.
    pub threads: usize,
    /// Timed cycles per run.
    pub cycles: usize,
    /// Untimed cycles per run.
    pub warmup: usize,
    /// Runs per executor.
    pub runs: usize,
    /// Sleep between cycles, µs.
    pub idle_us: u64,
    /// Period at which cycles started, µs (instead of `idle_us`).
    pub period_us: Option<u64>,
    /// The executor options used.
    pub options: ExecOptions,
    /// Per executor, in the order asked.
    pub rows: Vec<RunnerRuns>,
    /// Load average before and after.
    pub load: (Option<String>, Option<String>),
}

/// The graph to measure and its description.
fn load_graph(source: &GraphSource) -> Result<(TaskGraph, String), BenchError> {
    let n = match source {
        GraphSource::File(path) => {
            let g = crate::shapes::read_file(path)?;
            // The probe checks each task's order against its predecessors in one cycle; a
            // feedback edge reads the previous cycle's block, which no probe task keeps.
            let feedback = g.feedback_edges().len();
            if feedback > 0 {
                return crate::error::config(format!(
                    "{}: the overhead benchmark runs graphs without feedback edges (`~>`), and this one has {feedback}; measure it with `fugue bench table --shapes {}` or `fugue profile`",
                    path.display(),
                    path.display()
                ));
            }
            let d = format!("{} ({} nodes)", path.display(), g.len());
            return Ok((g, d));
        }
        GraphSource::Shape(_, n) => *n,
    };
    if n as f64 > fugue_graph::gen::MAX_NODES {
        return crate::error::config(format!(
            "a graph of {n} nodes is more than the limit of {} nodes on generated graphs (docs/limits.md)",
            fugue_graph::gen::MAX_NODES
        ));
    }
    Ok(match source {
        GraphSource::Shape(Shape::Line, _) => {
            (fugue_graph::gen::line(n), format!("line of {n} nodes"))
        }
        GraphSource::Shape(Shape::Rake, _) => {
            let k = rake_branches(n);
            let g = fugue_graph::gen::rake(k);
            let d = format!(
                "rake of {k} branch{} ({} nodes, nearest to {n})",
                if k == 1 { "" } else { "es" },
                g.len()
            );
            (g, d)
        }
        _ => {
            let depth = diamond_depth(n);
            let g = fugue_graph::gen::diamond(depth);
            let d = format!(
                "diamond of depth {depth} ({} nodes, nearest to {n})",
                g.len()
            );
            (g, d)
        }
    })
}

/// The branches of the rake (3k + 2 nodes) nearest to `n` nodes, within the limit on
/// generated graphs ([`fugue_graph::gen::MAX_NODES`]).
fn rake_branches(n: usize) -> usize {
    let most = ((fugue_graph::gen::MAX_NODES - 2.0) / 3.0).floor();
    ((n.saturating_sub(2) as f64) / 3.0)
        .round()
        .clamp(1.0, most) as usize
}

/// The depth of the diamond (5 * 2^d - 4 nodes) nearest to `n` nodes, within the limit on
/// generated graphs ([`fugue_graph::gen::MAX_NODES`]; depth 1 at least).
fn diamond_depth(n: usize) -> usize {
    (1..=20)
        .filter(|&d| {
            d == 1 || fugue_graph::gen::diamond_nodes(d) as f64 <= fugue_graph::gen::MAX_NODES
        })
        .min_by_key(|&d| (fugue_graph::gen::diamond_nodes(d) as i64 - n as i64).unsigned_abs())
        .unwrap_or(1)
}

/// How the cycles of a run follow each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Sleep this long between cycles (zero: back to back).
    Idle(Duration),
    /// Start a cycle every period (absolute-time sleeps, as a clocked backend does).
    Period(Duration),
}

/// Process CPU time (user and system, every thread): the sum of each thread's own CPU clock.
/// The process's clock (and `getrusage`) adds the times the threads had at their last
/// switch or tick, so a thread that kept running on another core (a worker spinning between
/// cycles) is counted up to a tick late at one end of a run and not at the other: over runs
/// of tens of milliseconds that read more CPU than the cores could give (213 % on 2 cores).
/// A thread's own clock is read up to date. Allocates (reads `/proc/self/task`): called
/// outside the timed cycles. Falls back on the process's clock where `/proc` is not there.
fn process_cpu() -> Duration {
    let read = |clock: libc::clockid_t| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid, writable timespec; an unknown clock is an error return.
        (unsafe { libc::clock_gettime(clock, &mut ts) } == 0).then(|| {
            Duration::new(
                ts.tv_sec.max(0) as u64,
                ts.tv_nsec.clamp(0, 999_999_999) as u32,
            )
        })
    };
    let threads = std::fs::read_dir("/proc/self/task").ok().map(|d| {
        d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .collect::<Vec<_>>()
    });
    match threads {
        Some(tids) if !tids.is_empty() => tids
            .into_iter()
            // Linux's clock of thread `tid` (CPUCLOCK_SCHED of a thread, as glibc makes it
            // for pthread_getcpuclockid); a thread gone meanwhile has none, and adds nothing.
            .filter_map(|tid| read((!tid << 3) | 6))
            .sum(),
        _ => read(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or_else(|| {
            let (user, system) = fugue_pool::process_cpu_time();
            user + system
        }),
    }
}

/// Sleeps until `t_ns` of the `CLOCK_MONOTONIC` clock.
fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; the remaining-time pointer may be null with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Times `cycles` cycles (after `warmup`) of `exec`, checking the probe at the end. A failed
/// check's cycle is counted from 1 at the run's first warm-up cycle. Also returns the CPU
/// the process used over the timed cycles, in cores.
pub fn measure(
    exec: &mut dyn Executor,
    plan: &mut Plan,
    probe: &Probe,
    cycles: usize,
    warmup: usize,
    pace: Pace,
) -> Result<(CycleStats, f64), BenchError> {
    use fugue_exec::trace::now_ns;
    let mut samples: Vec<u64> = Vec::with_capacity(cycles);
    let before = probe.cycles();
    if let Pace::Period(_) = pace {
        // Start at the period's boundary, not up to the default 50 µs of timer slack later.
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    }
    let mut next = now_ns();
    let (mut cpu0, mut wall0) = (process_cpu(), Instant::now());
    for i in 0..warmup + cycles {
        if i == warmup {
            (cpu0, wall0) = (process_cpu(), Instant::now());
        }
        match pace {
            Pace::Idle(idle) if !idle.is_zero() => std::thread::sleep(idle),
            Pace::Idle(_) => {}
            Pace::Period(p) => {
                next += p.as_nanos() as u64;
                let now = now_ns();
                if now < next {
                    sleep_until(next);
                } else {
                    // Late (a cycle longer than the period): start now, keep the grid.
                    next = now;
                }
            }
        }
        probe.begin_cycle();
        let t0 = Instant::now();
        exec.run_cycle(plan);
        let dt = t0.elapsed();
        if i >= warmup {
            samples.push(dt.as_nanos() as u64);
        }
    }
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = process_cpu().saturating_sub(cpu0).as_secs_f64();
    // A node skipped in one cycle fails its own check at its next run (its counter lags);
    // the last cycle is checked here.
    probe.check_cycle().map_err(|mut e| {
        e.cycle = e.cycle.saturating_sub(before);
        e
    })?;
    let stats = CycleStats::of(&mut samples)
        .ok_or_else(|| BenchError::Failed("no cycle was timed".into()))?;
    Ok((stats, if wall > 0.0 { cpu / wall } else { 0.0 }))
}

/// Runs the overhead benchmark; warnings go to `progress`.
pub fn run(c: &OverheadConfig, progress: &mut dyn Progress) -> Result<OverheadResult, BenchError> {
    let tbb_path = tbb::harness(c.tbb.as_deref());
    let extra: Vec<Runner> =
        if tbb_path.is_some() || c.executors.split(',').any(|x| x.trim() == "tbb") {
            vec![Runner::Rayon, Runner::Tbb]
        } else {
            vec![Runner::Rayon]
        };
    let runners = parse_runners("--executor", &c.executors, &extra)?;
    if runners.contains(&Runner::Tbb) && tbb_path.is_none() {
        return failed("the oneTBB harness is not built: run scripts/bench-peers.sh (it compiles benches/peers/tbb/flow_graph.cpp into target/peers/tbb-flow), or give --tbb PATH");
    }
    let (graph, desc) = load_graph(&c.graph)?;
    let (probe, empty) = Probe::new(&graph);
    let options = CompileOptions {
        sample_rate: 48_000.0,
        block: EMPTY_BLOCK,
        placeholder: false,
        merge_chains: c.tuning.merge_chains,
        ..Default::default()
    };
    let registry = Probe::registry();
    let mut plan =
        Plan::compile(&empty, &registry, &options).context("cannot compile the empty graph")?;
    let mut options = c.tuning.options();
    let pace = match c.period_us {
        Some(p) => {
            let p = Duration::from_micros(p);
            if !options.wake_lead.is_zero() {
                options.period = Some(p);
            }
            Pace::Period(p)
        }
        None => Pace::Idle(Duration::from_micros(c.idle_us)),
    };
    let spec = Spec {
        threads: c.threads,
        algorithm: c.algorithm,
        costs: Costs::Declared,
        pin: c.tuning.pin,
        options,
        registry,
    };
    let edges_file = if runners.contains(&Runner::Tbb) {
        let p = std::env::temp_dir().join(format!("fugue-dag-{}.txt", std::process::id()));
        std::fs::write(&p, crate::peers::edge_list(&plan))
            .map_err(|e| BenchError::io(format!("cannot write {}", p.display()), e))?;
        Some(p)
    } else {
        None
    };
    let load_before = load_average();
    let mut rows: Vec<RunnerRuns> = runners
        .iter()
        .map(|&r| RunnerRuns {
            runner: r,
            runs: Vec::new(),
            cpu: Vec::new(),
        })
        .collect();
    let mut warnings = Vec::new();
    // Runs in which oneTBB's workers took (almost) no part.
    let mut tbb_alone = 0;
    let result = (|| -> Result<(), BenchError> {
        for run in 1..=c.runs {
            for row in rows.iter_mut() {
                settle();
                let stats = match row.runner {
                    Runner::Tbb => {
                        let (stats, worker_share) = tbb::run(&tbb::TbbRun {
                            harness: tbb_path.as_deref().expect("checked above"),
                            edges: edges_file.as_deref().expect("written above"),
                            nodes: plan.len(),
                            threads: c.threads,
                            cycles: c.cycles,
                            warmup: c.warmup,
                            idle_us: c.idle_us,
                            pin: c.tuning.pin,
                        })?;
                        if worker_share.is_some_and(|s| c.threads > 1 && s < 0.05) {
                            tbb_alone += 1;
                        }
                        stats
                    }
                    r => {
                        let (mut exec, w) = build_executor(r, &empty, &plan, &spec)?;
                        warnings.extend(w);
                        let (stats, cpu) = measure(exec.as_mut(), &mut plan, &probe, c.cycles, c.warmup, pace)
                            .with_context(|| {
                                format!(
                                    "bench overhead: executor {} ({}) on {desc}, run {run} ({} warm-up and {} timed cycles)",
                                    r.name(),
                                    r.threads_text(c.threads),
                                    c.warmup,
                                    c.cycles
                                )
                            })?;
                        row.cpu.push(cpu);
                        stats
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
            c.runs
        ));
    }
    warnings.sort();
    warnings.dedup();
    for w in &warnings {
        progress.event(Event::Warning(w));
    }
    Ok(OverheadResult {
        graph: desc,
        nodes: plan.len(),
        threads: c.threads,
        cycles: c.cycles,
        warmup: c.warmup,
        runs: c.runs,
        idle_us: c.idle_us,
        period_us: c.period_us,
        options: spec.options,
        rows,
        load: (load_before, load_average()),
    })
}

impl OverheadResult {
    fn tbb(&self) -> Option<&RunnerRuns> {
        self.rows.iter().find(|r| r.runner == Runner::Tbb)
    }

    /// oneTBB's median over runs, the denominator of every `vs tbb`.
    fn tbb_median(&self) -> Option<f64> {
        self.tbb()
            .map(|r| r.runs.median_of(|s| s.median_ns))
            .filter(|&t| t > 0.0)
    }

    /// Per run: the row's median over oneTBB's in the same round.
    fn vs_tbb_per_run(&self, row: &RunnerRuns) -> Vec<f64> {
        self.tbb()
            .map(|t| paired_ratios(&row.runs, &t.runs))
            .unwrap_or_default()
    }

    /// One JSON object per executor. No field says whether a run was checked: every run of
    /// a result passed the probe's checks in every cycle ([`run`] fails otherwise).
    pub fn to_json(&self) -> Vec<serde_json::Value> {
        let o = &self.options;
        self.rows
            .iter()
            .map(|row| {
                let r = &row.runs;
                let paired = self.vs_tbb_per_run(row);
                serde_json::json!({
                    "executor": row.runner.name(),
                    "threads": row.runner.threads(self.threads),
                    "nodes": self.nodes,
                    "graph": self.graph,
                    "idle_us": self.idle_us,
                    "period_us": self.period_us,
                    "wake_lead_ns": self.period_us.map(|_| if o.period.is_some() { o.wake_lead.as_nanos() as u64 } else { 0 }),
                    "cpu_cores": (!row.cpu.is_empty()).then(|| median(&row.cpu)),
                    "run_cpu_cores": row.cpu,
                    "idle_spin_ns": o.idle_budget.time.as_nanos() as u64,
                    "steal_spin_ns": o.steal_budget.time.as_nanos() as u64,
                    "min_steal_ns": o.min_steal.as_nanos() as u64,
                    "cycles": self.cycles,
                    "runs": r.len(),
                    "median_ns": r.median_of(|s| s.median_ns),
                    "p99_ns": r.median_of(|s| s.p99_ns),
                    "max_ns": r.max_ns(),
                    "mean_ns": r.median_of(|s| s.mean_ns),
                    "min_ns": r.min_ns(),
                    "spread_pct": spread_pct(&r.medians()),
                    "run_medians_ns": r.medians(),
                    "run_p99s_ns": r.iter().map(|s| s.p99_ns).collect::<Vec<_>>(),
                    "vs_tbb": self.tbb_median().map(|t| r.median_of(|s| s.median_ns) / t),
                    "vs_tbb_per_run": paired,
                    "vs_tbb_paired_median": (!paired.is_empty()).then(|| median(&paired)),
                    "load_before": self.load.0,
                    "load_after": self.load.1,
                })
            })
            .collect()
    }

    /// The result as a text table.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let pacing = match self.period_us {
            Some(p) if self.options.period.is_some() => format!(
                "a cycle every {p} µs, workers woken {} µs ahead",
                self.options.wake_lead.as_micros()
            ),
            Some(p) => format!("a cycle every {p} µs, workers not woken ahead"),
            None => format!("idle {} µs between cycles", self.idle_us),
        };
        let _ = writeln!(
            out,
            "{}, empty nodes, {}, {} (+{} warm-up) x {}, {pacing}; every run checked (each task once per cycle, after its predecessors)",
            self.graph,
            fugue_engine::report::counted(self.threads, "thread"),
            fugue_engine::report::counted(self.cycles, "cycle"),
            self.warmup,
            fugue_engine::report::counted(self.runs, "run")
        );
        let _ = writeln!(
            out,
            "{:<11} {:>10} {:>9} {:>10} {:>10} {:>11} {:>9} {:>19} {:>6}",
            "executor",
            "median µs",
            "spread %",
            "p99 µs",
            "mean µs",
            "max µs",
            "vs tbb",
            "per run (min-max)",
            "CPU %"
        );
        for row in &self.rows {
            let r = &row.runs;
            let med = r.median_of(|s| s.median_ns);
            let vs = match self.tbb_median() {
                Some(t) => format!("{:.2}x", med / t),
                None => "-".to_string(),
            };
            let paired = self.vs_tbb_per_run(row);
            let per_run = if paired.is_empty() {
                "-".to_string()
            } else {
                let (lo, hi) = min_max(&paired);
                format!("{:.2}x ({lo:.2}-{:.2})", median(&paired), hi.max(0.0))
            };
            let cpu = if row.cpu.is_empty() {
                "-".to_string()
            } else {
                format!("{:.0}", 100.0 * median(&row.cpu))
            };
            let _ = writeln!(
                out,
                "{:<11} {:>10.2} {:>9.1} {:>10.2} {:>10.2} {:>11.1} {:>9} {:>19} {:>6}",
                row.runner.name(),
                med / 1e3,
                spread_pct(&r.medians()),
                r.median_of(|s| s.p99_ns) / 1e3,
                r.median_of(|s| s.mean_ns) / 1e3,
                r.max_ns() / 1e3,
                vs,
                per_run,
                cpu
            );
        }
        let _ = writeln!(
            out,
            "median and p99: medians over runs; spread: (max - min) / median of the run medians; max: over all runs; vs tbb: median over oneTBB's median; per run: the median (and range) over runs of the run's median over oneTBB's in the same round; CPU %: the process's CPU time over the timed cycles per second of wall time (median over runs; 100 = one core busy). Load average before: {}, after: {}",
            self.load.0.as_deref().unwrap_or("?"),
            self.load.1.as_deref().unwrap_or("?")
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;
    use fugue_exec::ExecutorKind;

    /// The generated shapes nearest to a size stay within the limit on generated graphs
    /// (the nearest diamond to 1,000,000 nodes was depth 18's 1,310,716).
    #[test]
    fn generated_shapes_stay_within_the_limit() {
        let max = fugue_graph::gen::MAX_NODES as usize;
        assert_eq!(rake_branches(101), 33);
        assert_eq!(rake_branches(2), 1);
        assert!(3 * rake_branches(max) + 2 <= max);
        assert_eq!(diamond_depth(156), 5);
        assert_eq!(diamond_depth(2), 1);
        assert_eq!(diamond_depth(max), 17);
        assert!(fugue_graph::gen::diamond_nodes(diamond_depth(max)) <= max);
    }

    #[test]
    fn every_runner_on_a_tiny_graph_is_verified() {
        let c = OverheadConfig {
            graph: GraphSource::Shape(Shape::Diamond, 16),
            threads: 2,
            executors: "all".into(),
            algorithm: Algorithm::Hlfet,
            idle_us: 0,
            period_us: None,
            cycles: 50,
            warmup: 5,
            runs: 2,
            tuning: Tuning {
                merge_chains: true,
                ..Tuning::default()
            },
            tbb: Some("/nonexistent/tbb-flow".into()),
        };
        // `all` with a harness named but missing: every fugue executor, rayon, and tbb, which
        // fails to run: the benchmark fails.
        assert!(run(&c, &mut NoProgress).is_err());
        let mut names: Vec<&str> = ExecutorKind::ALL.iter().map(|k| k.name()).collect();
        names.push("rayon");
        let c = OverheadConfig {
            executors: names.join(","),
            tbb: None,
            ..c
        };
        let r = run(&c, &mut NoProgress).unwrap();
        assert_eq!(r.nodes, 16);
        assert_eq!(r.rows.len(), names.len());
        let json = r.to_json();
        for (row, v) in r.rows.iter().zip(&json) {
            assert_eq!(row.runs.len(), 2);
            assert!(row.runs.iter().all(|s| s.cycles == 50 && s.median_ns > 0.0));
            assert_eq!(v["threads"], if row.runner == Runner::SEQ { 1 } else { 2 });
        }
        assert!(r.text().contains("rayon"));
    }

    #[test]
    fn unknown_executors_are_config_errors() {
        let e = parse_runners("--executor", "seq,nope", &[Runner::Rayon]).unwrap_err();
        assert!(
            e.is_config() && e.to_string().contains("unknown executor `nope`"),
            "{e}"
        );
        assert!(parse_runners("--executor", "tbb", &[Runner::Rayon])
            .unwrap_err()
            .is_config());
    }

    /// An executor named twice, or beside `all` that holds it, is refused under the flag's
    /// own name; so is a list that names none.
    #[test]
    fn executors_named_twice_are_config_errors() {
        for (list, want) in [
            (
                "ws,ws",
                "--executors names ws twice; name each executor once",
            ),
            ("all,ws", "--executors names ws twice (all holds it)"),
            ("rayon,all", "--executors names rayon twice (all holds it)"),
            ("all,all", "--executors names all twice"),
            (",", "--executors names no executor"),
        ] {
            let e = parse_runners("--executors", list, &[Runner::Rayon]).unwrap_err();
            assert!(e.is_config() && e.to_string().contains(want), "{list}: {e}");
        }
        let all = parse_runners("--executors", "all", &[Runner::Rayon]).unwrap();
        assert_eq!(all.len(), ExecutorKind::ALL.len() + 1);
    }
}
