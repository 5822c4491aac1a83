//! The scheduling study: sweeps graphs × executors × threads × buffer sizes × machine load,
//! runs each configuration in real time (clocked or JACK backend) for a few seconds, and
//! writes a folder: README.md, raw per-cycle data (gzipped CSV), summary.csv, plots (SVG and
//! PNG) and report.html.
//!
//! Correctness before timing: each timed cycle's record carries the hash of that cycle's
//! output ([`fugue_engine::StatsOptions::hash_outputs`], taken on the audio thread after the
//! cycle's end time, so outside its measured duration but inside its period); after each run,
//! seq runs the same number of cycles on its own plan (silent inputs, as the clocked backend
//! feeds them and as the study's unconnected JACK input ports read) and every recorded hash
//! must equal seq's for the same cycle ([`crate::check::check_hashes`]). The first difference
//! fails the study before anything but the temporary raw file, which is removed, is written;
//! the configuration is then run again offline, cycle by cycle beside seq, to name the output
//! channel and sample.

mod figures;
mod page;
pub mod spec;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_engine::Engine;
use fugue_engine::{Backend, CycleRecord, Deadline, ExecutorChoice, RunOptions, StatsOptions};
use fugue_exec::ExecutorKind;
use fugue_graph::TaskGraph;
use plotters::style::RGBColor;

use self::figures::{color, Kind, StudyFigure};
use self::spec::{Config, Exec, PlotCtx, Row, Spec};
use crate::check::{check_hashes, HashMismatch, SeqReference};
use crate::error::{config, failed, BenchError, Context as _};
use crate::machine::{Machine, Versions};
use crate::progress::{Event, Progress};
use crate::report::{self, opt, Csv};
use crate::stats::{median, min_max, Spread};

/// The default spec, relative to the repository.
pub const DEFAULT_SPEC: &str = "studies/default.toml";

/// The default spec's text, built in: what runs when no spec is given and
/// [`DEFAULT_SPEC`] is not in the current folder (its graphs are generated, so it needs no
/// file).
pub const DEFAULT_SPEC_TEXT: &str = include_str!("../../../../studies/default.toml");

/// Runs of each configuration when neither the spec nor the command line says.
pub const DEFAULT_REPEATS: usize = 3;

/// The largest spread of a configuration's repeats (percent of the median) under which its
/// figures are stated as findings, when the spec does not say.
pub const DEFAULT_MAX_SPREAD_PCT: f64 = 20.0;

/// How far above a bound (threads, cores, the graph's width) a speedup must be to be flagged
/// as impossible: timing noise of a percent or two around a bound says nothing.
const BOUND_SLACK: f64 = 1.02;

/// Time a run costs beyond its seconds (building the engine, starting the load, checking the
/// outputs against seq), for the estimate of [`plan`].
const RUN_OVERHEAD: Duration = Duration::from_millis(250);

/// The study's configuration.
#[derive(Clone, Debug)]
pub struct StudyConfig {
    /// The spec (TOML); `None`: [`DEFAULT_SPEC`] when it is there, else the built-in
    /// [`DEFAULT_SPEC_TEXT`].
    pub spec: Option<PathBuf>,
    /// The output folder.
    pub output: PathBuf,
    /// Replace the files of an existing, non-empty output folder.
    pub force: bool,
    /// Runs of each configuration, overriding the spec's `repeats`.
    pub repeats: Option<usize>,
    /// The command line, for the README.
    pub command: String,
    /// Set to stop: the current run ends early and the study is not written.
    pub stop: Arc<AtomicBool>,
    /// The kinds the graphs' nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// What the study did.
#[derive(Clone, Debug)]
pub struct StudyResult {
    /// The folder written.
    pub output: PathBuf,
    /// Runs made (configurations × repeats).
    pub runs: usize,
    /// Configurations.
    pub configurations: usize,
    /// Seconds it took.
    pub seconds: f64,
    /// Figures written (each as SVG and PNG).
    pub figures: usize,
    /// Cycles whose output was compared with seq's, over every run.
    pub checked_cycles: u64,
    /// Figures flagged as not to be trusted (not stated as findings).
    pub doubtful: usize,
}

impl StudyResult {
    /// What the study did, in one sentence.
    pub fn sentence(&self) -> String {
        format!(
            "{}: {} runs ({} configurations) in {:.0} s, {} timed cycles checked bit-identical to seq; {} figure(s) flagged as not to be trusted; summary.csv, report.html, {} figures (SVG and PNG), raw.csv.gz",
            self.output.display(),
            self.runs,
            self.configurations,
            self.seconds,
            self.checked_cycles,
            self.doubtful,
            self.figures
        )
    }
}

/// What a study would run: [`plan`]'s answer, for `--dry-run`.
#[derive(Clone, Debug)]
pub struct StudyPlan {
    /// The spec read (a path, or `built-in studies/default.toml`).
    pub spec: String,
    /// One line per configuration: graph, executor, threads, buffer, load.
    pub configurations: Vec<String>,
    /// Runs of each configuration.
    pub repeats: usize,
    /// Seconds per run.
    pub seconds: f64,
    /// The estimated wall time of the whole study.
    pub estimate: Duration,
}

impl StudyPlan {
    /// The plan as text: the runs, then their number and the estimated time.
    pub fn text(&self) -> String {
        let mut t = String::new();
        for (i, c) in self.configurations.iter().enumerate() {
            t.push_str(&format!("{:>4}  {c}\n", i + 1));
        }
        let runs = self.configurations.len() * self.repeats;
        t.push_str(&format!(
            "{}: {} configurations x {} repeats = {runs} runs of {} s; about {} in all\n",
            self.spec,
            self.configurations.len(),
            self.repeats,
            self.seconds,
            duration_text(self.estimate)
        ));
        t
    }
}

/// `1 h 05 min`, `13 min 20 s`, `42 s`.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// The executor names a spec accepts.
fn executor_names() -> String {
    let mut v: Vec<String> = ExecutorKind::ALL
        .iter()
        .filter(|k| **k != ExecutorKind::Static)
        .map(|k| k.name().to_string())
        .collect();
    v.push("static-ALGORITHM (static-hlfet, static-etf, static-cpfd, static-random, static-optimal, static-best)".into());
    v.push(format!(
        "{AUTO} (chooses among seq, ws and static by measuring them first)"
    ));
    v.join(", ")
}

/// Whether the executor of this name runs on threads of its own choosing (one configuration
/// per graph, buffer and load, whatever the spec's thread counts): seq (one) and auto.
fn single(name: &str) -> bool {
    name == "seq" || name == AUTO
}

/// The spec's name of the executor that chooses itself ([`ExecutorChoice::auto`]).
pub(crate) const AUTO: &str = "auto";

fn choice_for(
    name: &str,
    threads: usize,
    rt: bool,
    pin: bool,
) -> Result<ExecutorChoice, BenchError> {
    if name == AUTO {
        // Measures its candidates (paced at the run's period) before the run, and plays the
        // one it keeps; pipelined ones too when the graph is short of parallelism.
        return Ok(ExecutorChoice {
            auto: true,
            threads: 1,
            pipeline: fugue_engine::Pipeline::Auto,
            rt: rt.then_some(80),
            pin,
            ..ExecutorChoice::default()
        });
    }
    let (kind, algo) = match name.strip_prefix("static-") {
        Some(a) => (ExecutorKind::Static, Some(a)),
        None => (
            match ExecutorKind::from_name(name) {
                Some(ExecutorKind::Static) => {
                    return config(
                        "executor `static` in the spec: name its algorithm, as static-hlfet",
                    )
                }
                Some(k) => k,
                None => {
                    return config(format!(
                        "unknown executor `{name}` in the spec; expected one of {}",
                        executor_names()
                    ))
                }
            },
            None,
        ),
    };
    let mut c = ExecutorChoice {
        kind,
        threads: if kind == ExecutorKind::Seq {
            1
        } else {
            threads
        },
        rt: rt.then_some(80),
        pin,
        ..ExecutorChoice::default()
    };
    if let Some(a) = algo {
        c.algorithm = a
            .parse()
            .map_err(|e| BenchError::Config(format!("executor `{name}` in the spec: {e}")))?;
    }
    Ok(c)
}

/// A spec read and checked, with its graphs loaded and its configurations listed.
struct Prepared {
    spec: Spec,
    text: String,
    /// The spec's path, or `built-in studies/default.toml`.
    label: String,
    graphs: Vec<(String, TaskGraph)>,
    /// Where each graph came from.
    sources: Vec<String>,
    configs: Vec<Config>,
    repeats: usize,
    jack: bool,
    deadline: Deadline,
}

fn prepare(args: &StudyConfig) -> Result<Prepared, BenchError> {
    let (text, label, spec_dir) = match &args.spec {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| {
                BenchError::io(format!("cannot read study spec {}", p.display()), e)
            })?,
            p.display().to_string(),
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None if Path::new(DEFAULT_SPEC).is_file() => {
            let p = Path::new(DEFAULT_SPEC);
            (
                std::fs::read_to_string(p).map_err(|e| {
                    BenchError::io(format!("cannot read study spec {}", p.display()), e)
                })?,
                DEFAULT_SPEC.to_string(),
                p.parent().map(Path::to_path_buf).unwrap_or_default(),
            )
        }
        None => (
            DEFAULT_SPEC_TEXT.to_string(),
            format!("built-in {DEFAULT_SPEC}"),
            PathBuf::new(),
        ),
    };
    let spec = spec::parse(&text, &label).map_err(BenchError::Config)?;
    let file = &label;
    if !(spec.seconds > 0.0 && spec.seconds <= 3600.0) {
        return config(format!("{file}: seconds must be between 0 and 3600"));
    }
    for (field, empty) in [
        ("graphs", spec.graphs.is_empty()),
        ("executors", spec.executors.is_empty()),
        ("threads", spec.threads.is_empty()),
        ("buffers", spec.buffers.is_empty()),
        ("loads", spec.loads.is_empty()),
    ] {
        if empty {
            return config(format!("{file}: `{field}` needs at least one value"));
        }
    }
    if spec.buffers.contains(&0) || spec.threads.contains(&0) {
        return config(format!("{file}: buffers and threads must be at least 1"));
    }
    for l in &spec.loads {
        if l != "idle" && l != "busy" {
            return config(format!("{file}: unknown load `{l}` (idle or busy)"));
        }
    }
    let jack = match spec.backend.as_str() {
        "clocked" => false,
        "jack" => true,
        b => return config(format!("{file}: unknown backend `{b}` (clocked or jack)")),
    };
    let deadline = match spec.deadline.as_str() {
        "period" => Deadline::Period,
        "double" => Deadline::Double,
        d => return config(format!("{file}: unknown deadline `{d}` (period or double)")),
    };
    if let Some(m) = spec.max_spread_pct {
        if !(m.is_finite() && m > 0.0) {
            return config(format!("{file}: max_spread_pct must be a positive number"));
        }
    }
    let repeats = args.repeats.or(spec.repeats).unwrap_or(DEFAULT_REPEATS);
    if repeats == 0 || repeats > 1000 {
        return config(format!("{file}: repeats must be between 1 and 1000"));
    }
    let root = spec_dir.join(spec.root.clone().unwrap_or_else(|| ".".into()));
    let mut graphs = Vec::new();
    let mut sources = Vec::new();
    for g in &spec.graphs {
        let l = crate::shapes::load(g, None, &root)
            .map_err(|e| BenchError::Config(format!("{file}: {e}")))?;
        graphs.push((l.label, l.graph));
        sources.push(l.source);
    }
    let execs: Vec<Exec> = spec
        .executors
        .iter()
        .enumerate()
        .map(|(order, name)| {
            choice_for(name, 2, false, false).map(|_| Exec {
                order,
                name: name.clone(),
                later_threads: false,
            })
        })
        .collect::<Result<_, BenchError>>()
        .map_err(|e| BenchError::Config(format!("{file}: {e}")))?;
    // The configurations: seq and auto once per graph/buffer/load, others once per thread
    // count.
    let mut configs = Vec::new();
    for gi in 0..graphs.len() {
        for e in &execs {
            let threads: Vec<usize> = if single(&e.name) {
                vec![1]
            } else {
                spec.threads.clone()
            };
            for &t in &threads {
                for &b in &spec.buffers {
                    for l in &spec.loads {
                        configs.push(Config {
                            graph: gi,
                            exec: e.clone(),
                            threads: t,
                            buffer: b,
                            load: l.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(Prepared {
        spec,
        text,
        label,
        graphs,
        sources,
        configs,
        repeats,
        jack,
        deadline,
    })
}

fn describe(graphs: &[(String, TaskGraph)], c: &Config) -> String {
    format!(
        "{} {} t{} b{} {}",
        graphs[c.graph].0, c.exec.name, c.threads, c.buffer, c.load
    )
}

/// What [`run`] would run, without running it: the configurations, the repeats and the
/// estimated time. Checks the spec as `run` does.
pub fn plan(args: &StudyConfig) -> Result<StudyPlan, BenchError> {
    let p = prepare(args)?;
    let runs = (p.configs.len() * p.repeats) as u32;
    Ok(StudyPlan {
        spec: p.label.clone(),
        configurations: p.configs.iter().map(|c| describe(&p.graphs, c)).collect(),
        repeats: p.repeats,
        seconds: p.spec.seconds,
        estimate: (Duration::from_secs_f64(p.spec.seconds) + RUN_OVERHEAD) * runs,
    })
}

/// Checks a real-time run of `graph` with `choice`: the output hash each record carries
/// against seq's for the same cycle. Returns the cycles compared; the error names `who`, the
/// cycle, and (from an offline run of the same configuration beside seq) the output channel
/// and sample.
fn check_run(
    graph: &TaskGraph,
    reg: &fugue_dsp::Registry,
    choice: &ExecutorChoice,
    report: &fugue_engine::RunReport,
    who: &str,
) -> Result<u64, BenchError> {
    if report.buffer_changes > 0 || report.silent_cycles > 0 {
        return failed(format!(
            "{who}: the server changed the buffer size during the run; its output cannot be checked against seq"
        ));
    }
    let opts = fugue_exec::CompileOptions {
        sample_rate: f64::from(report.sample_rate),
        block: report.block,
        placeholder: false,
        merge_chains: choice.merge_chains,
        ..Default::default()
    };
    let recorded = report.records.iter().map(|r| (r.cycle, r.output_hash));
    match check_hashes(graph, reg, &opts, recorded)? {
        Ok(n) => Ok(n),
        Err(HashMismatch { cycle, timed, seq }) => {
            let cycle = cycle + 1;
            let place = replay(graph, choice, reg, &opts, cycle, who).unwrap_or_else(|| {
                format!(
                    "{who}: cycle {cycle}'s output differs from seq (hash {timed:016x} against {seq:016x}); run again offline, the configuration matched seq up to that cycle, so the output channel and sample are not known"
                )
            });
            failed(format!(
                "{place}; the output is wrong, no result is written"
            ))
        }
    }
}

/// Runs the configuration again offline for `cycles` cycles (from 1), each compared with seq
/// bit for bit: the first difference, with its output channel and sample.
fn replay(
    graph: &TaskGraph,
    choice: &ExecutorChoice,
    reg: &fugue_dsp::Registry,
    opts: &fugue_exec::CompileOptions,
    cycles: u64,
    who: &str,
) -> Option<String> {
    let (mut engine, _) =
        Engine::build(graph, reg, opts.sample_rate, opts.block, choice, false).ok()?;
    let mut reference = SeqReference::new(graph, reg, opts).ok()?;
    for _ in 0..cycles {
        engine.run_cycle();
        if let Err(e) = reference.check(&engine.plan, who) {
            return Some(e.to_string());
        }
    }
    None
}

/// The machine load of a busy run: threads computing, or a command.
enum Load {
    Idle,
    Threads(Arc<AtomicBool>, Vec<std::thread::JoinHandle<f64>>),
    Command(std::process::Child),
}

fn start_load(load: &str, spec: &Spec) -> Result<Load, BenchError> {
    if load == "idle" {
        return Ok(Load::Idle);
    }
    if let Some(cmd) = &spec.busy_command {
        let child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec {cmd}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| BenchError::io(format!("cannot start the load command `{cmd}`"), e))?;
        return Ok(Load::Command(child));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let handles = (0..spec.busy_threads)
        .map(|i| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 1.0f64 + i as f64;
                // Relaxed: a stop request polled.
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = (x * 1.000_001 + 0.5).sqrt() + 1.0;
                    }
                }
                x
            })
        })
        .collect();
    Ok(Load::Threads(stop, handles))
}

fn stop_load(load: Load) {
    match load {
        Load::Idle => {}
        Load::Threads(stop, handles) => {
            stop.store(true, Ordering::Relaxed);
            for h in handles {
                let _ = h.join();
            }
        }
        Load::Command(mut c) => {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One run's results, before the repeats are put together.
struct Run {
    summary: fugue_engine::Summary,
    /// What `auto` chose for this repeat (its candidate's label); `None` for the others.
    chose: Option<String>,
    overruns: u64,
    expected_cycles: u64,
    period_us: f64,
}

/// Runs the study and writes its folder: raw.csv.gz as the runs go, then summary.csv, the
/// figures, README.md and report.html. Every configuration runs `repeats` times, the repeats
/// interleaved (all configurations once, then again), so that a slow spell of the machine
/// falls on every configuration rather than on one. Progress: one step per run.
pub fn run(args: &StudyConfig, progress: &mut dyn Progress) -> Result<StudyResult, BenchError> {
    let Prepared {
        spec,
        text,
        label: spec_label,
        graphs,
        sources,
        configs,
        repeats,
        jack,
        deadline,
    } = prepare(args)?;
    let not_empty = std::fs::read_dir(&args.output).is_ok_and(|mut d| d.next().is_some());
    if args.output.exists() && !args.force && not_empty {
        return config(format!(
            "{} already exists and is not empty; pass --force to replace its files",
            args.output.display()
        ));
    }
    let created = !args.output.exists();
    report::create_dir(&args.output)?;

    let total = configs.len() * repeats;
    progress.event(Event::Start {
        total: total as u64,
    });
    let cancel = args.stop.clone();
    let started = Instant::now();
    let raw_path = args.output.join("raw.csv.gz");
    let raw_tmp = report::temp_path(&raw_path)?;
    let raw_err = |e| BenchError::io(format!("cannot write {}", raw_path.display()), e);
    let mut raw = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(std::fs::File::create(&raw_tmp).map_err(raw_err)?),
        flate2::Compression::best(),
    );
    writeln!(
        raw,
        "graph,executor,threads,buffer,load,repeat,{}",
        fugue_engine::stats::CSV_HEADER
    )
    .map_err(raw_err)?;
    let mut runs: BTreeMap<Config, Vec<Run>> = BTreeMap::new();
    let mut samples: BTreeMap<Config, Vec<f64>> = BTreeMap::new();
    let hist_buffer = spec
        .histogram_buffer
        .unwrap_or(spec.buffers[spec.buffers.len() / 2]);
    let mut checked_cycles = 0u64;
    // The runs; on any failure nothing is left in the output folder (the temporary raw file
    // is removed, and the folder too when this run created it).
    let measured = (|| -> Result<(), BenchError> {
        let mut done = 0usize;
        for rep in 0..repeats {
            for cfg in &configs {
                if cancel.load(Ordering::Relaxed) || progress.cancelled() {
                    return failed("interrupted; the study was not written");
                }
                done += 1;
                let (gname, graph) = &graphs[cfg.graph];
                progress.event(Event::Step(&format!(
                    "[{done}/{total}] {}, repeat {}/{repeats}",
                    describe(&graphs, cfg),
                    rep + 1
                )));
                let choice = choice_for(&cfg.exec.name, cfg.threads, spec.rt, spec.pin)?;
                if jack {
                    // The server's buffer size is the configuration's (its sample rate is the server's).
                    let ok = std::process::Command::new("jack_bufsize")
                        .arg(cfg.buffer.to_string())
                        .stdout(std::process::Stdio::null())
                        .status()
                        .is_ok_and(|s| s.success());
                    if !ok {
                        return failed(format!(
                            "cannot set the JACK buffer size to {} with jack_bufsize",
                            cfg.buffer
                        ));
                    }
                }
                let load = start_load(&cfg.load, &spec)?;
                let options = RunOptions {
                    backend: if jack {
                        Backend::Jack {
                            connect: false,
                            client_name: "fugue-study".into(),
                        }
                    } else {
                        Backend::Clocked {
                            rate: spec.rate,
                            block: cfg.buffer,
                        }
                    },
                    executor: choice.clone(),
                    duration: Some(Duration::from_secs_f64(spec.seconds)),
                    deadline,
                    stats: StatsOptions {
                        csv: None,
                        keep_records: true,
                        hash_outputs: true,
                    },
                    stop: Some(cancel.clone()),
                    placeholder: false,
                    profile: false,
                    registry: args.registry.clone(),
                };
                let result = fugue_engine::run(graph, &options, |_| {});
                stop_load(load);
                let report = result.with_context(|| {
                    format!(
                        "cannot run {gname} with {} ({} threads, {} frames)",
                        cfg.exec.name, cfg.threads, cfg.buffer
                    )
                })?;
                let who = format!(
                    "bench study: executor {} ({} thread{}) on {gname} at buffer {}, {} load, repeat {}",
                    cfg.exec.name,
                    cfg.threads,
                    if cfg.threads == 1 { "" } else { "s" },
                    report.block,
                    cfg.load,
                    rep + 1
                );
                checked_cycles += check_run(graph, &args.registry, &choice, &report, &who)?;
                for r in &report.records {
                    writeln!(
                        raw,
                        "{gname},{},{},{},{},{},{}",
                        cfg.exec.name,
                        cfg.threads,
                        report.block,
                        cfg.load,
                        rep + 1,
                        r.csv_row()
                    )
                    .map_err(raw_err)?;
                }
                let expected = (spec.seconds * report.sample_rate as f64 / report.block as f64)
                    .round()
                    .max(1.0) as u64;
                let period_us = report.block as f64 * 1e6 / report.sample_rate as f64;
                if cfg.buffer == hist_buffer && rep == 0 {
                    samples.insert(
                        cfg.clone(),
                        report
                            .records
                            .iter()
                            .map(|r: &CycleRecord| r.duration_ns as f64 / 1000.0)
                            .collect(),
                    );
                }
                runs.entry(cfg.clone()).or_default().push(Run {
                    summary: report.summary.clone(),
                    chose: report.auto.as_ref().map(|a| a.chosen().label.clone()),
                    overruns: report.xruns,
                    expected_cycles: expected,
                    period_us,
                });
                progress.event(Event::StepDone);
            }
        }
        Ok(())
    })();
    progress.event(Event::Finished);
    if let Err(e) = measured {
        drop(raw);
        let _ = std::fs::remove_file(&raw_tmp);
        if created {
            // Only succeeds if the folder is empty.
            let _ = std::fs::remove_dir(&args.output);
        }
        return Err(e);
    }
    raw.finish().and_then(|mut w| w.flush()).map_err(raw_err)?;
    report::commit(&raw_tmp, &raw_path)?;

    let max_spread = spec.max_spread_pct.unwrap_or(DEFAULT_MAX_SPREAD_PCT);
    let cores = fugue_exec::placement::available_cores();
    let rows = aggregate(&configs, &runs, &graphs, cores, max_spread);
    let names: Vec<String> = graphs.iter().map(|(n, _)| n.clone()).collect();
    let out = &args.output;
    let mut csv = Csv::new(&[
        "graph",
        "executor",
        "threads",
        "buffer",
        "load",
        "period_us",
        "repeats",
        "cycles",
        "expected_cycles",
        "mean_us",
        "mean_us_min",
        "mean_us_max",
        "spread_pct",
        "median_us",
        "p99_us",
        "max_us",
        "misses",
        "miss_rate",
        "overruns",
        "dropped",
        "steals",
        "wake_median_us",
        "wake_p99_us",
        "speedup_vs_seq",
        "speedup_min",
        "speedup_max",
        "trusted",
        "doubt",
        "verified",
        "chose",
    ]);
    for r in &rows {
        let us = |ns: f64| format!("{:.2}", ns / 1000.0);
        let (lo, hi) = min_max(&r.means_us);
        let (slo, shi) = if r.speedups.is_empty() {
            (None, None)
        } else {
            let (a, b) = min_max(&r.speedups);
            (Some(a), Some(b))
        };
        csv.row([
            names[r.cfg.graph].clone(),
            r.cfg.exec.name.clone(),
            r.cfg.threads.to_string(),
            r.cfg.buffer.to_string(),
            r.cfg.load.clone(),
            format!("{:.2}", r.period_us),
            r.means_us.len().to_string(),
            r.s.cycles.to_string(),
            r.expected_cycles.to_string(),
            us(r.s.mean_ns),
            format!("{lo:.2}"),
            format!("{hi:.2}"),
            format!("{:.1}", r.spread_pct),
            us(r.s.median_ns as f64),
            us(r.s.p99_ns as f64),
            us(r.s.max_ns as f64),
            r.s.misses.to_string(),
            format!("{:.5}", r.s.miss_rate()),
            r.overruns.to_string(),
            r.s.dropped.to_string(),
            r.s.steals.to_string(),
            us(r.s.wake_median_ns as f64),
            us(r.s.wake_p99_ns as f64),
            opt(r.speedup, 3),
            opt(slo, 3),
            opt(shi, 3),
            r.doubt.is_none().to_string(),
            r.doubt.clone().unwrap_or_default(),
            r.verified.to_string(),
            r.chose.join("; "),
        ]);
    }
    csv.write(&out.join("summary.csv"))?;
    // The plotted series: one per executor, or per executor and thread count when the spec
    // has several thread counts ("ws 2t", "ws 3t"): the same colour, later thread counts
    // dashed and hollow.
    let multi = spec.threads.len() > 1;
    let label = |c: &Config| {
        if multi && !single(&c.exec.name) {
            format!("{} {}t", c.exec.name, c.threads)
        } else {
            c.exec.name.clone()
        }
    };
    let mut series: Vec<Exec> = Vec::new();
    let mut colors: Vec<RGBColor> = Vec::new();
    for c in &configs {
        let name = label(c);
        if !series.iter().any(|e| e.name == name) {
            colors.push(color(c.exec.order));
            let later = !single(&c.exec.name) && spec.threads.first() != Some(&c.threads);
            series.push(Exec {
                order: series.len(),
                name,
                later_threads: later,
            });
        }
    }
    let relabel = |c: &Config| {
        let name = label(c);
        Config {
            exec: series
                .iter()
                .find(|e| e.name == name)
                .cloned()
                .unwrap_or(c.exec.clone()),
            ..c.clone()
        }
    };
    // Before the relabelling: names as the spec gives them, with their thread counts apart.
    let auto = page::auto_check(&rows, &names);
    let rows: Vec<Row> = rows
        .iter()
        .map(|r| Row {
            cfg: relabel(&r.cfg),
            ..r.clone()
        })
        .collect();
    let samples: BTreeMap<Config, Vec<f64>> = samples
        .iter()
        .map(|(k, v)| (relabel(k), v.clone()))
        .collect();
    let mut figures = Vec::new();
    let ctx = PlotCtx {
        rows: &rows,
        names: &names,
        execs: &series,
        colors: &colors,
        buffers: &spec.buffers,
        loads: &spec.loads,
        threads: &spec.threads,
        cores,
    };
    for (name, kind) in [
        ("speedup", Kind::Speedup),
        ("percentiles", Kind::Percentiles),
        ("misses", Kind::Misses),
    ] {
        StudyFigure {
            ctx: &ctx,
            kind,
            samples: &samples,
        }
        .write(out, name)?;
        figures.push(name.to_string());
    }
    for (gi, g) in names.iter().enumerate() {
        let name = format!("histogram-{g}");
        let kind = Kind::Histogram(gi, hist_buffer);
        StudyFigure {
            ctx: &ctx,
            kind,
            samples: &samples,
        }
        .write(out, &name)?;
        figures.push(name);
    }
    let versions = Versions::detect();
    let commit = Some(versions.short_commit).filter(|c| !c.is_empty() && c != "unknown");
    let rustc = versions.rustc;
    let m = Machine::detect();
    let machine = format!("{}, {} cores", m.cpu, m.cores);
    let wake = page::wake_table(&rows);
    let info = page::Info {
        command: &args.command,
        commit: commit.as_deref(),
        machine: &machine,
        rustc: &rustc,
        spec: &spec,
        spec_label: &spec_label,
        spec_text: &text,
        sources: &sources,
        names: &names,
        repeats,
        max_spread,
        configurations: configs.len(),
        took: started.elapsed(),
        hist_buffer,
        wake: &wake,
        auto: auto.as_ref(),
    };
    report::write_atomic(&out.join("README.md"), page::readme(&info).as_bytes())?;
    let html = page::report_html(&ctx, &figures, &info);
    report::write_atomic(&out.join("report.html"), html.as_bytes())?;
    Ok(StudyResult {
        output: out.clone(),
        runs: total,
        configurations: configs.len(),
        seconds: started.elapsed().as_secs_f64(),
        figures: figures.len(),
        checked_cycles,
        doubtful: rows.iter().filter(|r| r.doubt.is_some()).count(),
    })
}

/// The rows of the study: per configuration, its median repeat, the repeats' spread, the
/// speedups over seq's same repeats, and why its figures cannot be trusted when they cannot:
/// a speedup above the thread count, the machine's cores or the graph's width (no more nodes
/// can run at once), or repeats (its own or seq's) that spread by more than `max_spread` %.
fn aggregate(
    configs: &[Config],
    runs: &BTreeMap<Config, Vec<Run>>,
    graphs: &[(String, TaskGraph)],
    cores: usize,
    max_spread: f64,
) -> Vec<Row> {
    let mean_us = |r: &Run| r.summary.mean_ns / 1000.0;
    let widths: Vec<Option<usize>> = graphs
        .iter()
        .map(|(_, g)| {
            let (w, method) = fugue_graph::analysis::width(g);
            (method == fugue_graph::analysis::WidthMethod::Exact).then_some(w)
        })
        .collect();
    let seq_of = |c: &Config| {
        configs.iter().find(|s| {
            s.exec.name == "seq" && s.graph == c.graph && s.buffer == c.buffer && s.load == c.load
        })
    };
    let mut rows = Vec::new();
    for cfg in configs {
        let Some(reps) = runs.get(cfg).filter(|r| !r.is_empty()) else {
            continue;
        };
        let means: Vec<f64> = reps.iter().map(mean_us).collect();
        let mut order: Vec<usize> = (0..reps.len()).collect();
        order.sort_by(|&a, &b| means[a].total_cmp(&means[b]));
        let mid = &reps[order[(order.len() - 1) / 2]];
        let spread = Spread::of(&means).pct();
        let seq_reps = seq_of(cfg).and_then(|s| runs.get(s));
        let speedups: Vec<f64> = match seq_reps {
            Some(seq) if cfg.exec.name != "seq" => seq
                .iter()
                .zip(reps)
                .filter(|(_, r)| r.summary.mean_ns > 0.0)
                .map(|(s, r)| s.summary.mean_ns / r.summary.mean_ns)
                .collect(),
            _ => Vec::new(),
        };
        let speedup = (!speedups.is_empty()).then(|| median(&speedups));
        let seq_spread = seq_reps
            .map(|s| Spread::of(&s.iter().map(mean_us).collect::<Vec<_>>()).pct())
            .unwrap_or(0.0);
        let mut doubt = None;
        if let Some(sp) = speedup {
            let width = widths[cfg.graph];
            // auto's configuration has one thread; the candidate it plays may have up to
            // the cores (bounded just below).
            doubt = if cfg.exec.name != AUTO && sp > cfg.threads as f64 * BOUND_SLACK {
                Some(format!(
                    "speedup ×{sp:.2} above its {} threads: impossible, the timing was disturbed",
                    cfg.threads
                ))
            } else if sp > cores as f64 * BOUND_SLACK {
                Some(format!(
                    "speedup ×{sp:.2} above the machine's {cores} cores: impossible, the timing was disturbed"
                ))
            } else {
                width.filter(|&w| sp > w as f64 * BOUND_SLACK).map(|w| {
                    format!(
                        "speedup ×{sp:.2} above the graph's width {w} (no more than {w} node{} can run at once): the timing was disturbed",
                        if w == 1 { "" } else { "s" }
                    )
                })
            };
        }
        if doubt.is_none() && reps.len() > 1 {
            if spread > max_spread {
                doubt = Some(format!(
                    "its repeats' mean cycle times spread by {spread:.0} % (more than {max_spread:.0} %)"
                ));
            } else if speedup.is_some() && seq_spread > max_spread {
                doubt = Some(format!(
                    "seq's repeats spread by {seq_spread:.0} % (more than {max_spread:.0} %)"
                ));
            }
        }
        rows.push(Row {
            cfg: cfg.clone(),
            s: mid.summary.clone(),
            means_us: means,
            medians_us: reps
                .iter()
                .map(|r| r.summary.median_ns as f64 / 1000.0)
                .collect(),
            speedups,
            spread_pct: spread,
            doubt,
            overruns: mid.overruns,
            // `check_run` passed for every repeat: every recorded cycle equalled seq's (a
            // difference fails the study).
            verified: true,
            chose: reps.iter().filter_map(|r| r.chose.clone()).collect(),
            expected_cycles: mid.expected_cycles,
            period_us: mid.period_us,
            speedup,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn a_tiny_study_writes_its_summary() {
        let dir = std::env::temp_dir().join(format!("fugue-study-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let spec = dir.join("spec.toml");
        std::fs::write(
            &spec,
            "graphs = [\"gen:line:6\"]\nexecutors = [\"seq\", \"ws\", \"auto\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
        )
        .unwrap();
        let config = StudyConfig {
            spec: Some(spec),
            output: dir.join("out"),
            force: false,
            repeats: Some(2),
            command: "test".into(),
            stop: Arc::new(AtomicBool::new(false)),
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        };
        let r = run(&config, &mut NoProgress).unwrap();
        assert_eq!((r.runs, r.configurations), (6, 3));
        // 0.1 s at the default 44.1 kHz and 256 frames: 17 cycles a run, each checked.
        assert_eq!(r.checked_cycles, 6 * 17);
        let summary = std::fs::read_to_string(r.output.join("summary.csv")).unwrap();
        let rows: Vec<&str> = summary.lines().skip(1).collect();
        assert_eq!(rows.len(), 3, "{summary}");
        // The last column, `chose`, is auto's alone.
        assert!(
            rows[0].starts_with("line6,seq,1,256,idle,5804.99,2,") && rows[0].ends_with(",true,"),
            "{summary}"
        );
        assert!(rows[1].starts_with("line6,ws,2,256,idle,"), "{summary}");
        // A run of 17 cycles is too short for auto's trials: seq, untried, each repeat.
        assert!(
            rows[2].starts_with("line6,auto,1,256,idle,") && rows[2].ends_with(",true,seq; seq"),
            "{summary}"
        );
        let readme = std::fs::read_to_string(r.output.join("README.md")).unwrap();
        assert!(readme.contains("## auto against the others"), "{readme}");
        assert!(readme.contains("| line6 | 256 | idle |"), "{readme}");
        for f in [
            "README.md",
            "report.html",
            "raw.csv.gz",
            "speedup.svg",
            "histogram-line6.png",
        ] {
            assert!(r.output.join(f).is_file(), "{f}");
        }
        let html = std::fs::read_to_string(r.output.join("report.html")).unwrap();
        assert!(html.contains("<table><tr><th>executor</th>"), "{html}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
