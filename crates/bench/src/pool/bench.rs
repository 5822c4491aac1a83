//! `fugue bench pool`: every policy × thread counts × workloads, with the sequential program
//! and rayon measured in the same run ([`run`]); written as a folder ([`PoolBench::write`]):
//! raw.csv (one row per run), summary.csv (median, spread, speed-up over the sequential
//! program, ratio to rayon), idle.csv (CPU use of an idle pool), the figures time, speedup,
//! steals and cpu (SVG and PNG), and README.md (command, commit, machine, the targets checked,
//! speed-up against threads per policy, a reading of each figure).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fugue_pool::Policy;

use super::plot::{PoolFigure, Which};
use super::work::{Mandelbrot, Voronoi, VoronoiAlgorithm};
use super::{Outcome, PoolKind, Runner, Workload};
use crate::error::{config, BenchError, Context as _};
use crate::machine::{Machine, Versions};
use crate::progress::{Event, Progress};
use crate::report::{self, Align, Csv, Existing, Folder, Table};
use crate::stats::{median, Spread};

const FILES: [&str; 12] = [
    "raw.csv",
    "summary.csv",
    "idle.csv",
    "README.md",
    "time.svg",
    "time.png",
    "speedup.svg",
    "speedup.png",
    "steals.svg",
    "steals.png",
    "cpu.svg",
    "cpu.png",
];

/// The benchmark's configuration.
#[derive(Clone, Debug)]
pub struct PoolBenchConfig {
    /// fugue's policies to measure.
    pub policies: Vec<Policy>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// The workloads.
    pub workloads: Vec<Workload>,
    /// Runs per configuration (repeats are the outer loop).
    pub runs: usize,
    /// How long each idle pool is watched for its CPU use.
    pub idle: Duration,
    /// The output folder.
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    pub force: bool,
    /// The command line, for the README.
    pub command: String,
}

/// The default thread counts on a machine of `cores` cores: the powers of two below the cores,
/// then the cores (1, 2, 4, 8, 16 on 16 cores; 1, 2, 4, 6 on 6).
pub fn default_threads(cores: usize) -> Vec<usize> {
    let cores = cores.max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |&t| t.checked_mul(2))
        .take_while(|&t| t < cores)
        .collect();
    v.push(cores);
    v
}

/// The default workloads: quicksort of 10 million ints (cutoff 128), Mandelbrot 1024×768
/// (1000 iterations), Voronoi 2048×2048 with 256 seeds (split algorithm), a spawn tree of
/// about a million empty tasks (depth 19). `scale` divides the sizes (1: full).
pub fn default_workloads(scale: usize) -> Vec<Workload> {
    let k = scale.max(1);
    let m = Mandelbrot::default();
    vec![
        Workload::Quicksort {
            n: 10_000_000 / k,
            cutoff: 128,
        },
        Workload::Mandelbrot(Mandelbrot {
            width: m.width / k.min(8),
            height: m.height / k.min(8),
            iterations: 1000,
            ..m
        }),
        Workload::Voronoi {
            diagram: Voronoi::random(2048 / k.min(8), 2048 / k.min(8), 256, 11),
            algorithm: VoronoiAlgorithm::Split,
        },
        Workload::SpawnTree {
            depth: 19 - (k.ilog2()).min(10),
        },
    ]
}

/// One timed run.
#[derive(Clone, Debug)]
pub struct Run {
    /// The repeat it belongs to (0-based).
    pub repeat: usize,
    /// The workload's name.
    pub workload: &'static str,
    /// Who ran it.
    pub kind: PoolKind,
    /// Threads (1 for the sequential program).
    pub threads: usize,
    /// What it measured.
    pub outcome: Outcome,
}

/// Key of a summary row: workload, runner, threads.
pub type Key = (&'static str, PoolKind, usize);

/// The medians and spreads of one configuration.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Wall time in seconds.
    pub seconds: Spread,
    /// Runs.
    pub runs: usize,
    /// Median cores kept busy (CPU time / wall time).
    pub cores_busy: f64,
    /// Median tasks run (fugue's pool only).
    pub tasks: Option<f64>,
    /// Median successful steal attempts (fugue's pool only).
    pub steals: Option<f64>,
    /// Median failed steal attempts (fugue's pool only).
    pub failed_steals: Option<f64>,
    /// Median sleeps (fugue's pool only).
    pub sleeps: Option<f64>,
}

/// The benchmark's results.
#[derive(Clone, Debug)]
pub struct PoolBench {
    /// The output folder made for the run, taken away if it is dropped empty (a run that
    /// was stopped, or results never written).
    pub folder: std::sync::Arc<crate::report::folder::UntilWritten>,
    /// Every run.
    pub runs: Vec<Run>,
    /// Per configuration.
    pub summary: BTreeMap<Key, Summary>,
    /// CPU use of an idle pool (cores busy) per runner at `idle_threads` threads, one value
    /// per repeat.
    pub idle: BTreeMap<PoolKind, Vec<f64>>,
    /// Threads of the idle measurement.
    pub idle_threads: usize,
    /// The workloads, described.
    pub workloads: Vec<(&'static str, String)>,
    /// Cores, counted before any run.
    pub cores: usize,
    /// Seconds the benchmark took.
    pub seconds: f64,
}

/// Runs the benchmark (after checking that its folder may be written).
pub fn run(a: &PoolBenchConfig, progress: &mut dyn Progress) -> Result<PoolBench, BenchError> {
    if a.runs == 0 {
        return config("--runs must be at least 1");
    }
    if a.threads.is_empty() || a.threads.contains(&0) {
        return config("thread counts must be at least 1");
    }
    if a.policies.is_empty() || a.workloads.is_empty() {
        return config("nothing to measure: no policy or no workload");
    }
    if let Some(&t) = a.threads.iter().find(|&&t| t > fugue_pool::MAX_THREADS) {
        return config(format!(
            "{t} threads requested, more than the pool's limit of {}",
            fugue_pool::MAX_THREADS
        ));
    }
    // Made now (its path checked); taken away again if the run ends before writing into it
    // (the guard lives in the results, until they are written and dropped).
    let made = Folder::create(&a.output, Existing::Files(&FILES), a.force)?.until_written();
    let started = Instant::now();
    let cores = fugue_pool::default_threads();
    let prepared: Vec<_> = a.workloads.iter().map(Workload::prepare).collect();
    let mut kinds = vec![PoolKind::Rayon];
    kinds.extend(a.policies.iter().map(|&p| PoolKind::Fugue(p)));
    let idle_threads = cores.min(*a.threads.iter().max().unwrap_or(&1)).max(1);
    let mut runs = Vec::new();
    let mut idle: BTreeMap<PoolKind, Vec<f64>> = BTreeMap::new();
    let total = a.runs * a.workloads.len() * (1 + kinds.len() * a.threads.len());
    progress.event(Event::Line(&format!(
        "fugue bench pool: {total} runs ({} repeats x {} workloads x (serial + {} pools x {} thread counts)), every result checked",
        a.runs,
        a.workloads.len(),
        kinds.len(),
        a.threads.len()
    )));
    for repeat in 0..a.runs {
        for (w, prep) in a.workloads.iter().zip(&prepared) {
            if progress.cancelled() {
                return Err(BenchError::Failed("cancelled".into()));
            }
            let (out, _) = w
                .run(&Runner::Serial, 1, prep)
                .context("the sequential program")?;
            runs.push(Run {
                repeat,
                workload: w.name(),
                kind: PoolKind::Serial,
                threads: 1,
                outcome: out,
            });
            for &t in &a.threads {
                // Rotated each repeat, so that no runner always follows the same one.
                for i in 0..kinds.len() {
                    let kind = kinds[(i + repeat) % kinds.len()];
                    let runner = Runner::start(kind, t)
                        .with_context(|| format!("starting {} with {t} threads", kind.name()))?;
                    runner.warm_up();
                    let (out, _) = w.run(&runner, t, prep)?;
                    drop(runner);
                    runs.push(Run {
                        repeat,
                        workload: w.name(),
                        kind,
                        threads: t,
                        outcome: out,
                    });
                }
            }
            progress.event(Event::Line(&format!(
                "fugue bench pool: repeat {}/{}, {} done after {:.0}s",
                repeat + 1,
                a.runs,
                w.name(),
                started.elapsed().as_secs_f64()
            )));
        }
        for &kind in &kinds {
            let runner = Runner::start(kind, idle_threads)?;
            idle.entry(kind)
                .or_default()
                .push(super::idle_cpu(&runner, a.idle));
        }
    }
    let mut by: BTreeMap<Key, Vec<&Outcome>> = BTreeMap::new();
    for r in &runs {
        by.entry((r.workload, r.kind, r.threads))
            .or_default()
            .push(&r.outcome);
    }
    let summary = by
        .into_iter()
        .map(|(k, v)| {
            let secs: Vec<f64> = v.iter().map(|o| o.wall.as_secs_f64()).collect();
            let busy: Vec<f64> = v.iter().map(|o| o.cores_busy()).collect();
            let stat = |f: fn(&fugue_pool::Stats) -> u64| -> Option<f64> {
                let xs: Vec<f64> = v
                    .iter()
                    .filter_map(|o| o.stats.as_ref().map(|s| f(s) as f64))
                    .collect();
                (!xs.is_empty()).then(|| median(&xs))
            };
            let s = Summary {
                seconds: Spread::of(&secs),
                runs: v.len(),
                cores_busy: median(&busy),
                tasks: stat(|s| s.total.tasks),
                steals: stat(|s| s.total.steals),
                failed_steals: stat(|s| s.total.failed_steals),
                sleeps: stat(|s| s.total.sleeps),
            };
            (k, s)
        })
        .collect();
    Ok(PoolBench {
        folder: std::sync::Arc::new(made),
        runs,
        summary,
        idle,
        idle_threads,
        workloads: a
            .workloads
            .iter()
            .map(|w| (w.name(), w.describe()))
            .collect(),
        cores,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A target of the issue that the README checks, with its verdict.
#[derive(Clone, Debug)]
pub struct Target {
    /// What is asked.
    pub what: String,
    /// What was measured.
    pub measured: String,
    /// Whether it holds (None: not measured in this run).
    pub met: Option<bool>,
    /// Not met, but by less than the run-to-run variation: some paired runs went each way.
    pub tie: bool,
}

impl Target {
    /// `yes`, `tie (within the spread)`, `no` or `not measured`.
    pub fn verdict(&self) -> &'static str {
        match (self.met, self.tie) {
            (Some(true), _) => "yes",
            (Some(false), true) => "tie (within the run-to-run spread)",
            (Some(false), false) => "no",
            (None, _) => "not measured",
        }
    }
}

impl PoolBench {
    /// The median seconds of a configuration.
    pub fn median(&self, workload: &str, kind: PoolKind, threads: usize) -> Option<f64> {
        self.summary
            .iter()
            .find(|(k, _)| k.0 == workload && k.1 == kind && k.2 == threads)
            .map(|(_, s)| s.seconds.median)
    }

    /// Per repeat, the time of `a` over the time of `b` (same workload and threads): ratios of
    /// runs made a few seconds apart, which a slow drift of the machine's speed spares.
    pub fn paired(&self, workload: &str, a: PoolKind, b: PoolKind, threads: usize) -> Vec<f64> {
        let time = |k: PoolKind, r: usize| {
            self.runs
                .iter()
                .find(|x| {
                    x.workload == workload && x.kind == k && x.threads == threads && x.repeat == r
                })
                .map(|x| x.outcome.wall.as_secs_f64())
        };
        let repeats = self.runs.iter().map(|r| r.repeat + 1).max().unwrap_or(0);
        (0..repeats)
            .filter_map(|r| Some(time(a, r)? / time(b, r)?))
            .collect()
    }

    /// The sequential program's median seconds on `workload`.
    pub fn serial(&self, workload: &str) -> Option<f64> {
        self.median(workload, PoolKind::Serial, 1)
    }

    /// The thread counts measured, in order.
    pub fn thread_counts(&self) -> Vec<usize> {
        let mut t: Vec<usize> = self
            .summary
            .keys()
            .filter(|k| k.1 != PoolKind::Serial)
            .map(|k| k.2)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    }

    /// The runners measured (serial first, then rayon, then the policies in their order).
    pub fn kinds(&self) -> Vec<PoolKind> {
        let mut k: Vec<PoolKind> = self.summary.keys().map(|k| k.1).collect();
        k.sort_unstable();
        k.dedup();
        k
    }

    /// The median idle CPU use of a runner (cores busy).
    pub fn idle_median(&self, kind: PoolKind) -> Option<f64> {
        self.idle.get(&kind).map(|v| median(v))
    }

    /// The speed targets at `threads` threads (2 on the reference machine).
    pub fn targets(&self, threads: usize) -> Vec<Target> {
        let steal = PoolKind::Fugue(Policy::Steal);
        let mut v = Vec::new();
        let qs = self.median("quicksort", steal, threads);
        let serial = self.serial("quicksort");
        v.push(Target {
            what: format!(
                "quicksort: `steal` on {threads} threads at least 1.7x the sequential program"
            ),
            measured: match (qs, serial) {
                (Some(q), Some(s)) => format!(
                    "{:.2}x ({:.1} ms against {:.1} ms)",
                    s / q,
                    q * 1e3,
                    s * 1e3
                ),
                _ => "not measured".into(),
            },
            met: qs.zip(serial).map(|(q, s)| s / q >= 1.7),
            tie: false,
        });
        let tree = self.median("spawn-tree", steal, threads);
        let rayon = self.median("spawn-tree", PoolKind::Rayon, threads);
        v.push(Target {
            what: format!(
                "spawn tree: `steal` on {threads} threads no slower than rayon (aim 0.7x)"
            ),
            measured: match (tree, rayon) {
                (Some(t), Some(r)) => format!(
                    "{:.2}x rayon's time ({:.1} ms against {:.1} ms)",
                    t / r,
                    t * 1e3,
                    r * 1e3
                ),
                _ => "not measured".into(),
            },
            met: tree.zip(rayon).map(|(t, r)| t <= r),
            tie: false,
        });
        for (w, _) in &self.workloads {
            let Some(s) = self.median(w, steal, threads) else {
                continue;
            };
            let others: Vec<(PoolKind, f64)> = self
                .kinds()
                .into_iter()
                .filter(|k| matches!(k, PoolKind::Fugue(p) if *p != Policy::Steal))
                .filter_map(|k| self.median(w, k, threads).map(|m| (k, m)))
                .collect();
            if others.is_empty() {
                continue;
            }
            // Against each other policy: the median of the paired ratios steal / other. The
            // target holds when none is above 1 and steal's median time is the lowest.
            let mut worst: Option<(PoolKind, f64, Spread)> = None;
            for &(k, _) in &others {
                let p = self.paired(w, steal, k, threads);
                if p.is_empty() {
                    continue;
                }
                let sp = Spread::of(&p);
                if worst.is_none_or(|(_, m, _)| sp.median > m) {
                    worst = Some((k, sp.median, sp));
                }
            }
            let (best_kind, best) = others
                .iter()
                .copied()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("not empty");
            let Some((wk, wm, wsp)) = worst else {
                continue;
            };
            v.push(Target {
                what: format!(
                    "{w}: `steal` on {threads} threads at least as fast as every other policy"
                ),
                measured: format!(
                    "steal {:.1} ms, fastest other `{}` {:.1} ms; per-run ratio to the closest, `{}`: median {:.3} ({:.3}–{:.3})",
                    s * 1e3,
                    best_kind.name(),
                    best * 1e3,
                    wk.name(),
                    wm,
                    wsp.min,
                    wsp.max
                ),
                met: Some(wm <= 1.0 && s <= best),
                tie: !(wm <= 1.0 && s <= best) && wsp.min < 1.0,
            });
        }
        if let Some(i) = self.idle_median(steal) {
            v.push(Target {
                what: format!(
                    "idle: `steal` with {} (one per core, at most the largest --threads) and no work burns no core",
                    fugue_engine::report::counted(self.idle_threads, "thread")
                ),
                measured: format!("{:.2}% of one core", i * 100.0),
                met: Some(i < 0.01),
                tie: false,
            });
        }
        v
    }

    /// What the benchmark did, in one sentence.
    pub fn sentence(&self, a: &PoolBenchConfig) -> String {
        format!(
            "fugue bench pool: {} runs, every result checked, in {:.0}s; wrote {}",
            self.runs.len(),
            self.seconds,
            a.output.display()
        )
    }

    /// Writes the CSVs, the figures and README.md into `a.output`.
    pub fn write(&self, a: &PoolBenchConfig) -> Result<(), BenchError> {
        crate::report::folder::as_one_set(&a.output, || self.write_files(a))
    }

    /// [`Self::write`]'s files, each given its name when the set is.
    fn write_files(&self, a: &PoolBenchConfig) -> Result<(), BenchError> {
        let dir = Folder::open(&a.output)?;
        let mut raw = Csv::new(&[
            "repeat",
            "workload",
            "pool",
            "threads",
            "seconds",
            "cpu_seconds",
            "cores_busy",
            "tasks",
            "spawns",
            "steals",
            "failed_steals",
            "sleeps",
            "idle_seconds",
            "verified",
        ]);
        for r in &self.runs {
            let o = &r.outcome;
            let st =
                |f: fn(&fugue_pool::Stats) -> String| o.stats.as_ref().map_or(String::new(), f);
            raw.row([
                r.repeat.to_string(),
                r.workload.to_string(),
                r.kind.name().to_string(),
                r.threads.to_string(),
                format!("{:.6}", o.wall.as_secs_f64()),
                format!("{:.6}", o.cpu.as_secs_f64()),
                format!("{:.3}", o.cores_busy()),
                st(|s| s.total.tasks.to_string()),
                st(|s| s.total.spawns.to_string()),
                st(|s| s.total.steals.to_string()),
                st(|s| s.total.failed_steals.to_string()),
                st(|s| s.total.sleeps.to_string()),
                st(|s| format!("{:.6}", s.total.idle.as_secs_f64())),
                // A run whose check failed stops the benchmark before it is recorded.
                "true".to_string(),
            ]);
        }
        dir.csv("raw.csv", &raw)?;
        let mut summary = Csv::new(&[
            "workload",
            "pool",
            "threads",
            "runs",
            "median_ms",
            "min_ms",
            "max_ms",
            "spread_pct",
            "speedup_vs_serial",
            "ratio_to_rayon",
            "cores_busy",
            "tasks",
            "steals",
            "failed_steals",
            "sleeps",
        ]);
        for (k, s) in &self.summary {
            let (w, kind, t) = *k;
            let serial = self.serial(w);
            let rayon = self.median(w, PoolKind::Rayon, t);
            summary.row([
                w.to_string(),
                kind.name().to_string(),
                t.to_string(),
                s.runs.to_string(),
                format!("{:.3}", s.seconds.median * 1e3),
                format!("{:.3}", s.seconds.min * 1e3),
                format!("{:.3}", s.seconds.max * 1e3),
                format!("{:.1}", s.seconds.pct()),
                report::opt(serial.map(|b| b / s.seconds.median), 3),
                report::opt(
                    rayon
                        .filter(|_| kind != PoolKind::Serial)
                        .map(|r| s.seconds.median / r),
                    3,
                ),
                format!("{:.3}", s.cores_busy),
                report::opt(s.tasks, 0),
                report::opt(s.steals, 0),
                report::opt(s.failed_steals, 0),
                report::opt(s.sleeps, 0),
            ]);
        }
        dir.csv("summary.csv", &summary)?;
        let mut idle = Csv::new(&["pool", "threads", "seconds_watched", "repeat", "cores_busy"]);
        for (kind, v) in &self.idle {
            for (i, x) in v.iter().enumerate() {
                idle.row([
                    kind.name().to_string(),
                    self.idle_threads.to_string(),
                    format!("{:.3}", a.idle.as_secs_f64()),
                    i.to_string(),
                    format!("{x:.5}"),
                ]);
            }
        }
        dir.csv("idle.csv", &idle)?;
        let workloads: Vec<&'static str> = self.workloads.iter().map(|w| w.0).collect();
        for (name, which) in [
            ("time", Which::Time),
            ("speedup", Which::Speedup),
            ("steals", Which::Steals),
            ("cpu", Which::Cpu),
        ] {
            let figure = PoolFigure {
                bench: self,
                workloads: &workloads,
                which,
            };
            dir.figure(name, (1500, 1100), &figure)?;
        }
        dir.text("README.md", &self.readme(a))
    }

    fn readme(&self, a: &PoolBenchConfig) -> String {
        let machine = Machine::detect();
        let versions = Versions::detect();
        let threads = self.thread_counts();
        let ref_threads = if threads.contains(&2) {
            2
        } else {
            self.cores.min(*threads.last().unwrap_or(&1))
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# The task pool: policies, the sequential program and rayon\n"
        );
        let _ = writeln!(s, "Command: `{}`\n", a.command);
        let _ = writeln!(
            s,
            "- commit: {} ({}), {}",
            versions.short_commit, versions.date, versions.rustc
        );
        let _ = writeln!(
            s,
            "- machine: {machine}; load average before: {}",
            crate::machine::load_average().unwrap_or_else(|| "?".into())
        );
        let _ = writeln!(s, "- {} run(s) per configuration, repeats as the outer loop, the runners' order rotated each repeat; a pool is started before each run and stopped after it (start-up not timed); whole benchmark {:.0}s", a.runs, self.seconds);
        let _ = writeln!(s, "- every run's result was checked before its time counted (the sort against the standard library's sort of the same input, each image pixel for pixel against the sequential program's per-pixel drawing, the tree's leaf count); a failed check stops the benchmark");
        let _ = writeln!(s, "- CPU time is the whole process's (user + system, `getrusage`) over the run; `cores busy` = CPU time / wall time");
        let _ = writeln!(s, "- rayon 1.x, exact version in Cargo.lock at the commit (`scope`/`spawn`, the same code as fugue's pool through one trait); the sequential program runs that code with every spawn a call\n");
        let _ = writeln!(s, "Workloads:\n");
        for (w, d) in &self.workloads {
            let _ = writeln!(s, "- `{w}`: {d}");
        }
        let _ = writeln!(s, "\nFiles: `raw.csv` (one row per run, with the pool's statistics), `summary.csv` (medians, spread, speed-up over the sequential program, ratio to rayon at the same thread count), `idle.csv`, `time`, `speedup`, `steals`, `cpu` (`.svg` and `.png`).\n");
        let _ = writeln!(s, "## Targets at {ref_threads} threads\n");
        let _ = writeln!(s, "`steal` against the other policies: its median time must be the lowest and, run by run, its time over each other policy's (the runs of one repeat, seconds apart) must have a median of at most 1. When the workload is compute-bound the seven policies differ by less than the run-to-run variation; such a comparison is marked a tie.\n");
        let mut t = Table::new([
            ("target", Align::Left),
            ("measured (medians)", Align::Left),
            ("met", Align::Left),
        ]);
        for tg in self.targets(ref_threads) {
            let verdict = match (tg.met, tg.tie) {
                (Some(false), false) => "**no**".to_string(),
                _ => tg.verdict().to_string(),
            };
            t.row(vec![tg.what, tg.measured, verdict]);
        }
        let _ = writeln!(s, "{}", t.markdown());
        for (w, _) in &self.workloads {
            let _ = writeln!(
                s,
                "## `{w}`: median ms (min–max), speed-up over the sequential program\n"
            );
            let serial = self.serial(w);
            if let Some(sv) = serial {
                let _ = writeln!(s, "Sequential program: {:.1} ms.\n", sv * 1e3);
            }
            let mut t = Table::new(
                std::iter::once(("pool".to_string(), Align::Left))
                    .chain(threads.iter().map(|t| (format!("{t} thr"), Align::Right))),
            );
            for kind in self.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
                let mut row = vec![format!("`{}`", kind.name())];
                for &th in &threads {
                    let cell = self.summary.get(&(w, kind, th)).map_or("–".into(), |x| {
                        let sp = serial
                            .map_or(String::new(), |b| format!(" {:.2}x", b / x.seconds.median));
                        format!(
                            "{:.1} ({:.1}–{:.1}){sp}",
                            x.seconds.median * 1e3,
                            x.seconds.min * 1e3,
                            x.seconds.max * 1e3
                        )
                    });
                    row.push(cell);
                }
                t.row(row);
            }
            let _ = writeln!(s, "{}", t.markdown());
        }
        s.push_str(&self.speedup_section(&threads));
        let _ = writeln!(s, "## Figures and their reading\n");
        let _ = writeln!(s, "![time](time.png)\n");
        let _ = writeln!(s, "{}\n", self.reading_time(ref_threads));
        let _ = writeln!(s, "![steals](steals.png)\n");
        let _ = writeln!(s, "{}\n", self.reading_steals(ref_threads));
        let _ = writeln!(s, "![cpu](cpu.png)\n");
        let _ = writeln!(s, "{}", self.reading_cpu(ref_threads));
        s
    }

    /// Speed-up over the sequential program against threads, per workload and runner (the
    /// table of `speedup.png`).
    fn speedup_section(&self, threads: &[usize]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## Speed-up against threads\n");
        let _ = writeln!(
            s,
            "The sequential program's median time over each runner's median time ({} cores).\n",
            self.cores
        );
        let _ = writeln!(s, "![speedup](speedup.png)\n");
        for (w, _) in &self.workloads {
            let Some(serial) = self.serial(w) else {
                continue;
            };
            let _ = writeln!(s, "`{w}`:\n");
            let mut t = Table::new(
                std::iter::once(("pool".to_string(), Align::Left))
                    .chain(threads.iter().map(|t| (format!("{t} thr"), Align::Right))),
            );
            for kind in self.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
                let mut row = vec![format!("`{}`", kind.name())];
                for &th in threads {
                    row.push(
                        self.median(w, kind, th)
                            .map_or("–".into(), |m| format!("{:.2}x", serial / m)),
                    );
                }
                t.row(row);
            }
            let _ = writeln!(s, "{}", t.markdown());
        }
        s
    }

    /// The fastest and slowest runner of each workload at `threads`, and what happens past
    /// the cores.
    fn reading_time(&self, threads: usize) -> String {
        let mut s = String::from(
            "**Time against threads** (log scale; bars: min–max; dashed: the sequential program). ",
        );
        for (w, _) in &self.workloads {
            let mut at: Vec<(PoolKind, f64)> = self
                .kinds()
                .into_iter()
                .filter(|k| *k != PoolKind::Serial)
                .filter_map(|k| self.median(w, k, threads).map(|m| (k, m)))
                .collect();
            at.sort_by(|a, b| a.1.total_cmp(&b.1));
            if let (Some(f), Some(l)) = (at.first(), at.last()) {
                let _ = write!(
                    s,
                    "On `{w}` at {threads} threads the fastest is `{}` ({:.1} ms) and the slowest `{}` ({:.1} ms, {:.1}x). ",
                    f.0.name(),
                    f.1 * 1e3,
                    l.0.name(),
                    l.1 * 1e3,
                    l.1 / f.1
                );
            }
        }
        let over: Vec<usize> = self
            .thread_counts()
            .into_iter()
            .filter(|&t| t > self.cores)
            .collect();
        if let Some(&t) = over.last() {
            let steal = PoolKind::Fugue(Policy::Steal);
            let ratios: Vec<String> = self
                .workloads
                .iter()
                .filter_map(|(w, _)| {
                    let a = self.median(w, steal, self.cores)?;
                    let b = self.median(w, steal, t)?;
                    Some(format!("`{w}` {:.2}x", b / a))
                })
                .collect();
            let _ = write!(
                s,
                "Past this machine's {} cores the threads share cores: `steal` at {t} threads takes, against {} threads: {}.",
                self.cores,
                self.cores,
                ratios.join(", ")
            );
        }
        s
    }

    fn reading_steals(&self, threads: usize) -> String {
        let mut s = String::from("**Steal attempts** (solid: succeeded, dashed: failed; fugue's policies only, rayon does not count them). ");
        for (w, _) in &self.workloads {
            let row: Vec<String> = self
                .kinds()
                .into_iter()
                .filter_map(|k| {
                    let x = self.summary.get(&(w, k, threads))?;
                    Some(format!(
                        "`{}` {:.0}/{:.0}",
                        k.name(),
                        x.steals?,
                        x.failed_steals?
                    ))
                })
                .collect();
            if !row.is_empty() {
                let _ = write!(
                    s,
                    "`{w}` at {threads} threads, succeeded/failed: {}. ",
                    row.join(", ")
                );
            }
        }
        s.push_str("A failed attempt is one sweep over the other threads' queues that found nothing; policies that sleep a fixed time between sweeps make few, the spinning `steal` makes many while it waits, then parks.");
        s
    }

    fn reading_cpu(&self, threads: usize) -> String {
        /// Runs shorter than this (median, milliseconds) get no figure of cores busy.
        const MIN_MS_FOR_CORES: f64 = 20.0;
        let mut s = String::from("**CPU use** (cores kept busy = process CPU time / wall time; last panel: an idle pool). ");
        for (w, _) in &self.workloads {
            let row: Vec<String> = self
                .kinds()
                .into_iter()
                .filter_map(|k| {
                    let x = self.summary.get(&(
                        w,
                        k,
                        if k == PoolKind::Serial { 1 } else { threads },
                    ))?;
                    // The process's CPU time is accounted at the scheduler's grain: over a
                    // run of a few milliseconds the ratio says nothing.
                    Some(if x.seconds.median * 1e3 < MIN_MS_FOR_CORES {
                        format!("`{}` – (runs too short to say)", k.name())
                    } else {
                        format!("`{}` {:.2}", k.name(), x.cores_busy)
                    })
                })
                .collect();
            let _ = write!(s, "`{w}` at {threads} threads: {}. ", row.join(", "));
        }
        let idle: Vec<String> = self
            .idle
            .keys()
            .filter_map(|&k| {
                self.idle_median(k)
                    .map(|m| format!("`{}` {:.2}%", k.name(), m * 100.0))
            })
            .collect();
        let _ = write!(
            s,
            "Idle, {} threads, median share of one core: {}.",
            self.idle_threads,
            idle.join(", ")
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::default_threads;

    #[test]
    fn default_threads_go_up_to_the_cores() {
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(16), vec![1, 2, 4, 8, 16]);
    }
}
