//! `fugue bench study [SPEC.toml] [-o DIR]`: the scheduling study. Sweeps graphs × executors ×
//! threads × buffer sizes × machine load, runs each configuration in real time (clocked or
//! JACK backend) for a few seconds, and writes a folder: README.md, raw per-cycle data
//! (gzipped CSV), summary.csv, plots (SVG and PNG) and report.html.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use fugue_engine::{
    Backend, CycleRecord, Deadline, Engine, ExecutorChoice, RunOptions, StatsOptions, Summary,
};
use fugue_exec::ExecutorKind;
use fugue_graph::TaskGraph;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Deserialize;

use crate::util;

/// The default spec, relative to the repository.
const DEFAULT_SPEC: &str = "studies/default.toml";

/// Arguments of `fugue bench study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The study spec (TOML) [default: studies/default.toml].
    pub spec: Option<PathBuf>,
    /// Output folder.
    #[arg(short, long, default_value = "bench-results/study")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// A study spec.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    #[serde(default)]
    root: Option<String>,
    graphs: Vec<String>,
    executors: Vec<String>,
    threads: Vec<usize>,
    buffers: Vec<usize>,
    loads: Vec<String>,
    #[serde(default = "default_busy")]
    busy_threads: usize,
    #[serde(default)]
    busy_command: Option<String>,
    #[serde(default = "default_backend")]
    backend: String,
    #[serde(default = "default_rate")]
    rate: u32,
    seconds: f64,
    #[serde(default = "default_deadline")]
    deadline: String,
    #[serde(default)]
    rt: bool,
    #[serde(default)]
    histogram_buffer: Option<usize>,
}

fn default_busy() -> usize {
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
struct Exec {
    order: usize,
    name: String,
}

/// One configuration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config {
    graph: usize,
    exec: Exec,
    threads: usize,
    buffer: usize,
    load: String,
}

/// One configuration's results.
#[derive(Clone, Debug)]
struct Row {
    cfg: Config,
    s: Summary,
    overruns: u64,
    verified: bool,
    expected_cycles: u64,
    period_us: f64,
    speedup: Option<f64>,
}

fn choice_for(name: &str, threads: usize, rt: bool) -> anyhow::Result<ExecutorChoice> {
    let (kind, algo) = match name.strip_prefix("static-") {
        Some(a) => (ExecutorKind::Static, Some(a)),
        None => (
            ExecutorKind::from_name(name)
                .ok_or_else(|| anyhow!("unknown executor `{name}` in the spec"))?,
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
        ..ExecutorChoice::default()
    };
    if let Some(a) = algo {
        c.algorithm = a
            .parse()
            .map_err(|e| anyhow!("executor `{name}` in the spec: {e}"))?;
    }
    Ok(c)
}

fn load_graph(spec_dir: &Path, root: &Path, name: &str) -> anyhow::Result<(String, TaskGraph)> {
    if let Some(g) = name.strip_prefix("gen:") {
        let mut it = g.split(':');
        let shape = it.next().unwrap_or("");
        let n: usize = it
            .next()
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| anyhow!("graph `{name}`: expected gen:SHAPE:N"))?;
        let graph = match shape {
            "line" => fugue_graph::gen::line(n),
            "diamond" => fugue_graph::gen::diamond(n),
            "rake" => fugue_graph::gen::rake(n),
            _ => anyhow::bail!("graph `{name}`: unknown shape `{shape}` (line, diamond, rake)"),
        };
        return Ok((format!("{shape}{n}"), graph));
    }
    let path = spec_dir.join(root).join(name);
    let graph = util::read_graph(&path, None)?;
    let label = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    Ok((label, graph))
}

/// Checks that `choice` computes the same output as the sequential executor, bit for bit,
/// over a few cycles: a configuration's times count only if it does.
fn verify(graph: &TaskGraph, rate: u32, block: usize, choice: &ExecutorChoice) -> bool {
    let build = |c: &ExecutorChoice| Engine::build(graph, rate as f64, block, c, false).ok();
    let (Some((mut a, _)), Some((mut b, _))) = (build(&ExecutorChoice::default()), build(choice))
    else {
        return false;
    };
    for _ in 0..4 {
        a.run_cycle();
        b.run_cycle();
        for ch in 0..a.plan.n_outputs() {
            if a.plan
                .output(ch)
                .iter()
                .zip(b.plan.output(ch))
                .any(|(x, y)| x.to_bits() != y.to_bits())
            {
                return false;
            }
        }
    }
    true
}

/// The machine load of a busy run: threads computing, or a command.
enum Load {
    Idle,
    Threads(Arc<AtomicBool>, Vec<std::thread::JoinHandle<f64>>),
    Command(std::process::Child),
}

fn start_load(load: &str, spec: &Spec) -> anyhow::Result<Load> {
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
            .with_context(|| format!("cannot start the load command `{cmd}`"))?;
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

fn command_output(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    let l = command_output("lscpu", &[]);
    l.lines()
        .find_map(|x| x.strip_prefix("Model name:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Histogram bins of the histogram figures: share of cycles (%) per bin of `width` µs.
const HIST_BINS: usize = 40;

/// Runs `fugue bench study`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let spec_path = args
        .spec
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SPEC));
    let text = std::fs::read_to_string(&spec_path)
        .with_context(|| format!("cannot read study spec {}", spec_path.display()))?;
    let spec: Spec =
        toml::from_str(&text).map_err(|e| anyhow!("{}: {}", spec_path.display(), e.message()))?;
    if !(spec.seconds > 0.0 && spec.seconds <= 3600.0) {
        return Err(util::usage(format!(
            "{}: seconds must be between 0 and 3600",
            spec_path.display()
        )));
    }
    if spec.buffers.contains(&0) || spec.threads.contains(&0) {
        return Err(util::usage(format!(
            "{}: buffers and threads must be at least 1",
            spec_path.display()
        )));
    }
    for l in &spec.loads {
        if l != "idle" && l != "busy" {
            return Err(util::usage(format!(
                "{}: unknown load `{l}` (idle or busy)",
                spec_path.display()
            )));
        }
    }
    let jack = match spec.backend.as_str() {
        "clocked" => false,
        "jack" => true,
        b => {
            return Err(util::usage(format!(
                "{}: unknown backend `{b}` (clocked or jack)",
                spec_path.display()
            )))
        }
    };
    let deadline = match spec.deadline.as_str() {
        "period" => Deadline::Period,
        "double" => Deadline::Double,
        d => {
            return Err(util::usage(format!(
                "{}: unknown deadline `{d}` (period or double)",
                spec_path.display()
            )))
        }
    };
    let spec_dir = spec_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let root = PathBuf::from(spec.root.clone().unwrap_or_else(|| ".".into()));
    let graphs = spec
        .graphs
        .iter()
        .map(|g| load_graph(&spec_dir, &root, g))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let execs: Vec<Exec> = spec
        .executors
        .iter()
        .enumerate()
        .map(|(order, name)| {
            choice_for(name, 2, false).map(|_| Exec {
                order,
                name: name.clone(),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    if args.output.exists() && !args.force && std::fs::read_dir(&args.output)?.next().is_some() {
        return Err(util::usage(format!(
            "{} already exists and is not empty; pass --force to replace its files",
            args.output.display()
        )));
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;

    // The configurations: seq once per graph/buffer/load, others once per thread count.
    let mut configs = Vec::new();
    for gi in 0..graphs.len() {
        for e in &execs {
            let threads: Vec<usize> = if e.name == "seq" {
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
    let bar = indicatif::ProgressBar::new(configs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "study {bar:40} {pos}/{len} runs  {elapsed} (about {eta} left)  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let c = cancel.clone();
        let _ = ctrlc::set_handler(move || c.store(true, Ordering::Relaxed));
    }
    let started = Instant::now();
    let raw_path = args.output.join("raw.csv.gz");
    let raw_tmp = util::temp_path(&raw_path, true)?;
    let mut raw = flate2::write::GzEncoder::new(
        std::io::BufWriter::new(
            std::fs::File::create(&raw_tmp)
                .with_context(|| format!("cannot write {}", raw_path.display()))?,
        ),
        flate2::Compression::best(),
    );
    writeln!(
        raw,
        "graph,executor,threads,buffer,load,{}",
        fugue_engine::stats::CSV_HEADER
    )?;
    let mut rows: Vec<Row> = Vec::new();
    let mut samples: BTreeMap<Config, Vec<f64>> = BTreeMap::new();
    let hist_buffer = spec
        .histogram_buffer
        .unwrap_or(spec.buffers[spec.buffers.len() / 2]);
    for cfg in &configs {
        if cancel.load(Ordering::Relaxed) {
            bar.abandon();
            let _ = std::fs::remove_file(&raw_tmp);
            anyhow::bail!("interrupted; the study was not written");
        }
        let (gname, graph) = &graphs[cfg.graph];
        bar.set_message(format!(
            "{gname} {} t{} b{} {}",
            cfg.exec.name, cfg.threads, cfg.buffer, cfg.load
        ));
        let choice = choice_for(&cfg.exec.name, cfg.threads, spec.rt)?;
        if jack {
            // The server's buffer size is the configuration's (its sample rate is the server's).
            let ok = std::process::Command::new("jack_bufsize")
                .arg(cfg.buffer.to_string())
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                anyhow::bail!(
                    "cannot set the JACK buffer size to {} with jack_bufsize",
                    cfg.buffer
                );
            }
        }
        let verified = verify(graph, spec.rate, cfg.buffer, &choice);
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
            executor: choice,
            duration: Some(Duration::from_secs_f64(spec.seconds)),
            deadline,
            stats: StatsOptions {
                csv: None,
                keep_records: true,
            },
            stop: Some(cancel.clone()),
            placeholder: false,
        };
        let result = fugue_engine::run(graph, &options, |_| {});
        stop_load(load);
        let report = result.with_context(|| {
            format!(
                "cannot run {gname} with {} ({} threads, {} frames)",
                cfg.exec.name, cfg.threads, cfg.buffer
            )
        })?;
        for r in &report.records {
            writeln!(
                raw,
                "{gname},{},{},{},{},{}",
                cfg.exec.name,
                cfg.threads,
                report.block,
                cfg.load,
                r.csv_row()
            )?;
        }
        let expected = (spec.seconds * report.sample_rate as f64 / report.block as f64)
            .round()
            .max(1.0) as u64;
        let period_us = report.block as f64 * 1e6 / report.sample_rate as f64;
        if cfg.buffer == hist_buffer {
            samples.insert(
                cfg.clone(),
                report
                    .records
                    .iter()
                    .map(|r: &CycleRecord| r.duration_ns as f64 / 1000.0)
                    .collect(),
            );
        }
        rows.push(Row {
            cfg: cfg.clone(),
            s: report.summary.clone(),
            overruns: report.xruns,
            verified,
            expected_cycles: expected,
            period_us,
            speedup: None,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    raw.finish()
        .and_then(|mut w| w.flush())
        .with_context(|| format!("cannot write {}", raw_path.display()))?;
    std::fs::rename(&raw_tmp, &raw_path)
        .with_context(|| format!("cannot write {}", raw_path.display()))?;

    // Speedups against seq at the same graph, buffer and load.
    let seq_mean: BTreeMap<(usize, usize, String), f64> = rows
        .iter()
        .filter(|r| r.cfg.exec.name == "seq")
        .map(|r| ((r.cfg.graph, r.cfg.buffer, r.cfg.load.clone()), r.s.mean_ns))
        .collect();
    for r in &mut rows {
        r.speedup = seq_mean
            .get(&(r.cfg.graph, r.cfg.buffer, r.cfg.load.clone()))
            .filter(|_| r.s.mean_ns > 0.0)
            .map(|m| m / r.s.mean_ns);
    }
    let names: Vec<String> = graphs.iter().map(|(n, _)| n.clone()).collect();
    let out = &args.output;
    let mut csv = String::from(
        "graph,executor,threads,buffer,load,period_us,cycles,expected_cycles,mean_us,median_us,p99_us,max_us,misses,miss_rate,overruns,dropped,steals,speedup_vs_seq,verified\n",
    );
    for r in &rows {
        csv.push_str(&format!(
            "{},{},{},{},{},{:.2},{},{},{:.2},{:.2},{:.2},{:.2},{},{:.5},{},{},{},{},{}\n",
            names[r.cfg.graph],
            r.cfg.exec.name,
            r.cfg.threads,
            r.cfg.buffer,
            r.cfg.load,
            r.period_us,
            r.s.cycles,
            r.expected_cycles,
            r.s.mean_ns / 1000.0,
            r.s.median_ns as f64 / 1000.0,
            r.s.p99_ns as f64 / 1000.0,
            r.s.max_ns as f64 / 1000.0,
            r.s.misses,
            r.s.miss_rate(),
            r.overruns,
            r.s.dropped,
            r.s.steals,
            r.speedup.map(|s| format!("{s:.3}")).unwrap_or_default(),
            r.verified,
        ));
    }
    util::write_atomic(&out.join("summary.csv"), true, csv.as_bytes())?;
    // The plotted series: one per executor, or per executor and thread count when the spec
    // has several thread counts ("ws 2t", "ws 3t"); the second shade is darker.
    let multi = spec.threads.len() > 1;
    let label = |c: &Config| {
        if multi && c.exec.name != "seq" {
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
            let base = color(c.exec.order);
            let ti = spec
                .threads
                .iter()
                .position(|&t| t == c.threads)
                .unwrap_or(0);
            let k = if c.exec.name == "seq" {
                1.0
            } else {
                1.0 - 0.4 * ti as f64 / spec.threads.len() as f64
            };
            colors.push(RGBColor(
                (base.0 as f64 * k) as u8,
                (base.1 as f64 * k) as u8,
                (base.2 as f64 * k) as u8,
            ));
            series.push(Exec {
                order: series.len(),
                name,
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
    };
    for (name, kind) in [
        ("percentiles", Figure::Percentiles),
        ("misses", Figure::Misses),
        ("speedup", Figure::Speedup),
    ] {
        plot_both(out, name, &ctx, &kind, &samples)?;
        figures.push(name.to_string());
    }
    for (gi, g) in names.iter().enumerate() {
        let name = format!("histogram-{g}");
        plot_both(
            out,
            &name,
            &ctx,
            &Figure::Histogram(gi, hist_buffer),
            &samples,
        )?;
        figures.push(name);
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let commit = command_output("git", &["rev-parse", "--short", "HEAD"]);
    let machine = format!(
        "{}, {} cores",
        cpu_model(),
        fugue_exec::placement::available_cores()
    );
    let rustc = command_output("rustc", &["--version"]);
    let readme = readme(
        &command,
        &commit,
        &machine,
        &rustc,
        &spec,
        &spec_path,
        rows.len(),
        started.elapsed(),
        &text,
    );
    util::write_atomic(&out.join("README.md"), true, readme.as_bytes())?;
    let html = report_html(&ctx, &figures, &machine, &commit, hist_buffer, &spec);
    util::write_atomic(&out.join("report.html"), true, html.as_bytes())?;
    let unverified = rows.iter().filter(|r| !r.verified).count();
    println!(
        "{}: {} runs in {:.0} s; summary.csv, report.html, {} figures (SVG and PNG), raw.csv.gz",
        out.display(),
        rows.len(),
        started.elapsed().as_secs_f64(),
        figures.len()
    );
    if unverified > 0 {
        anyhow::bail!(
            "{unverified} configuration(s) did not compute the same output as seq (see the verified column of summary.csv)"
        );
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn readme(
    command: &str,
    commit: &str,
    machine: &str,
    rustc: &str,
    spec: &Spec,
    spec_path: &Path,
    runs: usize,
    took: Duration,
    spec_text: &str,
) -> String {
    format!(
        "# Scheduling study\n\n\
         Graphs run in real time, cycle after cycle, with each executor; per-cycle times, \
         deadline misses and histograms over the buffer size and the machine's load. See \
         `report.html` for the figures and their readings.\n\n\
         - Command: `{command}`\n\
         - Spec: `{}` (copied below)\n\
         - Commit: {commit}\n\
         - Machine: {machine}; **shared with other jobs while the study ran**: figures are noisy, \
         every configuration ran once.\n\
         - Versions: {rustc}; fugue {}\n\
         - Backend: {}, {} Hz, {} s per run, deadline = {} ({}), {} runs in {:.0} s\n\n\
         ## Files\n\n\
         - `summary.csv`: one row per configuration: mean, median, p99, max cycle time (µs), \
         deadline misses and miss rate, overruns (cycles that started more than a period late), \
         records dropped by a full statistics ring, steals, speedup of the mean over seq at the \
         same graph/buffer/load, and `verified` (the executor's output equals seq's bit for bit).\n\
         - `raw.csv.gz`: one row per cycle of every run (`cycle,start_ns,duration_ns,deadline_ns,missed,late_ns,frames,steals`).\n\
         - `percentiles`, `misses`, `speedup`, `histogram-GRAPH` as `.svg` and `.png`.\n\
         - `report.html`: all of it on one page.\n\n\
         ## Spec\n\n```toml\n{spec_text}```\n",
        spec_path.display(),
        env!("CARGO_PKG_VERSION"),
        spec.backend,
        spec.rate,
        spec.seconds,
        spec.deadline,
        if spec.deadline == "double" {
            "twice the buffer period"
        } else {
            "one buffer period"
        },
        runs,
        took.as_secs_f64(),
    )
}

/// Everything the figures and the report read.
struct PlotCtx<'a> {
    rows: &'a [Row],
    names: &'a [String],
    execs: &'a [Exec],
    colors: &'a [RGBColor],
    buffers: &'a [usize],
    loads: &'a [String],
}

impl PlotCtx<'_> {
    fn find(&self, g: usize, e: &str, b: usize, l: &str) -> Option<&Row> {
        // The first thread count of the spec for parallel executors.
        self.rows.iter().find(|r| {
            r.cfg.graph == g && r.cfg.exec.name == e && r.cfg.buffer == b && r.cfg.load == l
        })
    }
}

enum Figure {
    Percentiles,
    Misses,
    Speedup,
    Histogram(usize, usize),
}

fn color(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(0, 0, 0),
        RGBColor(31, 119, 180),
        RGBColor(23, 190, 207),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    C[i % C.len()]
}

fn plot_both(
    out: &Path,
    name: &str,
    ctx: &PlotCtx<'_>,
    fig: &Figure,
    samples: &BTreeMap<Config, Vec<f64>>,
) -> anyhow::Result<()> {
    let (w, h) = match fig {
        Figure::Histogram(..) => (
            1600u32,
            330 * ctx.execs.len().div_ceil(4).max(1) as u32 + 150,
        ),
        _ => (
            1600u32,
            (330 * ctx.names.len() as u32 + 120).clamp(450, 1400),
        ),
    };
    for svg in [true, false] {
        let ext = if svg { "svg" } else { "png" };
        let path = out.join(format!("{name}.{ext}"));
        let tmp = util::temp_path(&path, true)?.with_extension(format!("part.{ext}"));
        let res = if svg {
            let root = SVGBackend::new(&tmp, (w, h)).into_drawing_area();
            draw(root, ctx, fig, samples)
        } else {
            let root = BitMapBackend::new(&tmp, (w, h)).into_drawing_area();
            draw(root, ctx, fig, samples)
        };
        if let Err(e) = res {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.context(format!("cannot draw {}", path.display())));
        }
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    ctx: &PlotCtx<'_>,
    fig: &Figure,
    samples: &BTreeMap<Config, Vec<f64>>,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("{e}");
    root.fill(&WHITE).map_err(err)?;
    let title = match fig {
        Figure::Percentiles => {
            "Cycle time per configuration: median (dot) to p99 (bar top), max (x); dashed = deadline".to_string()
        }
        Figure::Misses => "Deadline misses per configuration (% of cycles)".to_string(),
        Figure::Speedup => "Speedup of the mean cycle time over seq (same graph, buffer, load)".to_string(),
        Figure::Histogram(g, b) => format!(
            "Distribution of cycle times, {}, {b} frames (share of cycles per bin; x axes differ)",
            ctx.names[*g]
        ),
    };
    let (top, rest) = root.split_vertically(50);
    top.titled(&title, ("sans-serif", 28)).map_err(err)?;
    let n_entries = match fig {
        Figure::Histogram(..) => ctx.loads.len(),
        _ => ctx.execs.len(),
    };
    let per_row = 7usize;
    let legend_rows = n_entries.div_ceil(per_row).max(1);
    let (body, legend) =
        rest.split_vertically(rest.dim_in_pixel().1 as i32 - 45 * legend_rows as i32 - 5);
    // Legend: one swatch per executor (histograms: one per load).
    let entries: Vec<(String, RGBColor)> = match fig {
        Figure::Histogram(..) => ctx
            .loads
            .iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    format!("load {l}"),
                    if i == 0 { color(1) } else { color(3) },
                )
            })
            .collect(),
        _ => ctx
            .execs
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), ctx.colors[i]))
            .collect(),
    };
    let lw = legend.dim_in_pixel().0 as i32;
    let step = (lw - 100) / entries.len().clamp(1, per_row) as i32;
    for (i, (name, c)) in entries.iter().enumerate() {
        let x = 50 + (i % per_row) as i32 * step;
        let y = 45 * (i / per_row) as i32;
        legend
            .draw(&Rectangle::new([(x, y + 15), (x + 30, y + 35)], c.filled()))
            .map_err(err)?;
        legend
            .draw(&Text::new(
                name.clone(),
                (x + 38, y + 14),
                ("sans-serif", 22).into_font(),
            ))
            .map_err(err)?;
    }
    match fig {
        Figure::Histogram(g, b) => {
            let execs: Vec<&Exec> = ctx.execs.iter().collect();
            let cols = 4usize.min(execs.len().max(1));
            let nrows = execs.len().div_ceil(cols);
            let panels = body.split_evenly((nrows, cols));
            for (p, e) in panels.iter().zip(execs.iter()) {
                // Each panel its own x range: up to the 99th percentile of its runs, + 10 %.
                let mut xmax = 0.0f64;
                for (k, v) in samples.iter() {
                    if k.graph == *g && k.buffer == *b && k.exec.name == e.name && !v.is_empty() {
                        let mut s = v.clone();
                        s.sort_by(f64::total_cmp);
                        xmax = xmax.max(s[((s.len() - 1) as f64 * 0.99) as usize]);
                    }
                }
                let xmax = (xmax * 1.1).max(1.0);
                let width = xmax / HIST_BINS as f64;
                let mut series = Vec::new();
                let mut ymax = 1.0f64;
                for (li, l) in ctx.loads.iter().enumerate() {
                    let key = ctx
                        .rows
                        .iter()
                        .find(|r| {
                            r.cfg.graph == *g
                                && r.cfg.exec.name == e.name
                                && r.cfg.buffer == *b
                                && &r.cfg.load == l
                        })
                        .map(|r| r.cfg.clone());
                    let Some(v) = key.and_then(|k| samples.get(&k)) else {
                        continue;
                    };
                    let mut bins = vec![0.0f64; HIST_BINS + 1];
                    for &x in v {
                        let i = ((x / width) as usize).min(HIST_BINS);
                        bins[i] += 1.0;
                    }
                    let n = v.len().max(1) as f64;
                    for x in bins.iter_mut() {
                        *x *= 100.0 / n;
                    }
                    ymax = ymax.max(bins.iter().cloned().fold(0.0, f64::max));
                    series.push((li, bins));
                }
                let mut chart = ChartBuilder::on(p)
                    .caption(e.name.clone(), ("sans-serif", 22))
                    .margin(10)
                    .x_label_area_size(45)
                    .y_label_area_size(60)
                    .build_cartesian_2d(
                        0.0..xmax * (HIST_BINS + 1) as f64 / HIST_BINS as f64,
                        0.0..ymax * 1.1,
                    )
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .x_desc("cycle time (µs); last bin: all longer cycles")
                    .y_desc("% of cycles")
                    .x_label_formatter(&|x: &f64| format!("{x:.0}"))
                    .y_label_formatter(&|y: &f64| format!("{y:.0}"))
                    .label_style(("sans-serif", 16))
                    .axis_desc_style(("sans-serif", 18))
                    .x_labels(6)
                    .y_labels(5)
                    .draw()
                    .map_err(err)?;
                for (li, bins) in &series {
                    let c = if *li == 0 { color(1) } else { color(3) };
                    chart
                        .draw_series(bins.iter().enumerate().map(|(i, &y)| {
                            let x0 = i as f64 * width;
                            Rectangle::new([(x0, 0.0), (x0 + width, y)], c.mix(0.45).filled())
                        }))
                        .map_err(err)?;
                }
            }
            for p in panels.iter().skip(execs.len()) {
                p.fill(&WHITE).map_err(err)?;
            }
        }
        _ => {
            let panels = body.split_evenly((ctx.names.len(), ctx.loads.len()));
            let nb = ctx.buffers.len();
            let ne = ctx.execs.len();
            for (pi, p) in panels.iter().enumerate() {
                let g = pi / ctx.loads.len();
                let l = &ctx.loads[pi % ctx.loads.len()];
                let caption = format!("{}, load {l}", ctx.names[g]);
                let off = |ei: usize| (ei as f64 - (ne as f64 - 1.0) / 2.0) * 0.8 / ne as f64;
                let xr = -0.5..nb as f64 - 0.5;
                let bufs = ctx.buffers.to_vec();
                let xfmt = move |x: &f64| {
                    let i = x.round();
                    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < bufs.len() {
                        format!("{}", bufs[i as usize])
                    } else {
                        String::new()
                    }
                };
                match fig {
                    Figure::Percentiles => {
                        let mut lo = f64::INFINITY;
                        let mut hi = 0.0f64;
                        for r in ctx
                            .rows
                            .iter()
                            .filter(|r| r.cfg.graph == g && &r.cfg.load == l)
                        {
                            lo = lo.min(r.s.median_ns as f64 / 1000.0);
                            hi = hi.max(r.s.max_ns as f64 / 1000.0).max(r.period_us);
                        }
                        if !lo.is_finite() {
                            continue;
                        }
                        let mut chart = ChartBuilder::on(p)
                            .caption(caption, ("sans-serif", 22))
                            .margin(10)
                            .x_label_area_size(45)
                            .y_label_area_size(75)
                            .build_cartesian_2d(xr, (lo.max(0.1) / 1.5..hi * 1.5).log_scale())
                            .map_err(err)?;
                        chart
                            .configure_mesh()
                            .x_desc("buffer size (frames)")
                            .y_desc("cycle time (µs, log)")
                            .y_label_formatter(&|y: &f64| {
                                if *y >= 10.0 {
                                    format!("{y:.0}")
                                } else {
                                    format!("{y:.1}")
                                }
                            })
                            .x_labels(nb * 2 + 1)
                            .x_label_formatter(&xfmt)
                            .label_style(("sans-serif", 16))
                            .axis_desc_style(("sans-serif", 18))
                            .disable_x_mesh()
                            .draw()
                            .map_err(err)?;
                        for (bi, &b) in ctx.buffers.iter().enumerate() {
                            if let Some(r) = ctx
                                .rows
                                .iter()
                                .find(|r| r.cfg.graph == g && r.cfg.buffer == b)
                            {
                                let y = r.period_us * r.s.deadline_ns.max(1) as f64
                                    / (r.period_us * 1000.0).max(1e-9);
                                let y = if r.s.deadline_ns > 0 { y } else { r.period_us };
                                chart
                                    .draw_series(DashedLineSeries::new(
                                        [(bi as f64 - 0.45, y), (bi as f64 + 0.45, y)],
                                        6,
                                        4,
                                        BLACK.stroke_width(2),
                                    ))
                                    .map_err(err)?;
                            }
                            for (ei, e) in ctx.execs.iter().enumerate() {
                                let Some(r) = ctx.find(g, &e.name, b, l) else {
                                    continue;
                                };
                                let x = bi as f64 + off(ei);
                                let c = ctx.colors[ei];
                                let med = (r.s.median_ns as f64 / 1000.0).max(0.1);
                                let p99 = (r.s.p99_ns as f64 / 1000.0).max(0.1);
                                let max = (r.s.max_ns as f64 / 1000.0).max(0.1);
                                chart
                                    .draw_series(std::iter::once(PathElement::new(
                                        vec![(x, med), (x, p99)],
                                        c.stroke_width(5),
                                    )))
                                    .map_err(err)?;
                                chart
                                    .draw_series(std::iter::once(Circle::new(
                                        (x, med),
                                        5,
                                        c.filled(),
                                    )))
                                    .map_err(err)?;
                                chart
                                    .draw_series(std::iter::once(Cross::new(
                                        (x, max),
                                        5,
                                        c.stroke_width(2),
                                    )))
                                    .map_err(err)?;
                            }
                        }
                    }
                    Figure::Misses => {
                        let hi = ctx
                            .rows
                            .iter()
                            .filter(|r| r.cfg.graph == g)
                            .map(|r| r.s.miss_rate() * 100.0)
                            .fold(1.0f64, f64::max);
                        let mut chart = ChartBuilder::on(p)
                            .caption(caption, ("sans-serif", 22))
                            .margin(10)
                            .x_label_area_size(45)
                            .y_label_area_size(75)
                            .build_cartesian_2d(xr, 0.0..hi * 1.1)
                            .map_err(err)?;
                        chart
                            .configure_mesh()
                            .x_desc("buffer size (frames)")
                            .y_desc("deadline misses (% of cycles)")
                            .y_label_formatter(&|y: &f64| format!("{y:.1}"))
                            .x_labels(nb * 2 + 1)
                            .x_label_formatter(&xfmt)
                            .label_style(("sans-serif", 16))
                            .axis_desc_style(("sans-serif", 18))
                            .disable_x_mesh()
                            .draw()
                            .map_err(err)?;
                        let w = 0.8 / ne as f64;
                        for (bi, &b) in ctx.buffers.iter().enumerate() {
                            for (ei, e) in ctx.execs.iter().enumerate() {
                                let Some(r) = ctx.find(g, &e.name, b, l) else {
                                    continue;
                                };
                                let x = bi as f64 + off(ei);
                                let y = r.s.miss_rate() * 100.0;
                                chart
                                    .draw_series(std::iter::once(Rectangle::new(
                                        [(x - w / 2.0, 0.0), (x + w / 2.0, y)],
                                        ctx.colors[ei].filled(),
                                    )))
                                    .map_err(err)?;
                            }
                        }
                    }
                    Figure::Speedup => {
                        let hi = ctx
                            .rows
                            .iter()
                            .filter(|r| r.cfg.graph == g)
                            .filter_map(|r| r.speedup)
                            .fold(2.0f64, f64::max);
                        let mut chart = ChartBuilder::on(p)
                            .caption(caption, ("sans-serif", 22))
                            .margin(10)
                            .x_label_area_size(45)
                            .y_label_area_size(75)
                            .build_cartesian_2d(xr, 0.0..hi * 1.1)
                            .map_err(err)?;
                        chart
                            .configure_mesh()
                            .x_desc("buffer size (frames)")
                            .y_desc("speedup over seq (×)")
                            .y_label_formatter(&|y: &f64| format!("{y:.1}"))
                            .x_labels(nb * 2 + 1)
                            .x_label_formatter(&xfmt)
                            .label_style(("sans-serif", 16))
                            .axis_desc_style(("sans-serif", 18))
                            .disable_x_mesh()
                            .draw()
                            .map_err(err)?;
                        chart
                            .draw_series(DashedLineSeries::new(
                                [(-0.5, 1.0), (nb as f64 - 0.5, 1.0)],
                                6,
                                4,
                                BLACK.stroke_width(1),
                            ))
                            .map_err(err)?;
                        for (ei, e) in ctx.execs.iter().enumerate() {
                            let pts: Vec<(f64, f64)> = ctx
                                .buffers
                                .iter()
                                .enumerate()
                                .filter_map(|(bi, &b)| {
                                    ctx.find(g, &e.name, b, l)
                                        .and_then(|r| r.speedup)
                                        .map(|s| (bi as f64, s))
                                })
                                .collect();
                            let c = ctx.colors[ei];
                            chart
                                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))
                                .map_err(err)?;
                            chart
                                .draw_series(pts.iter().map(|&p| Circle::new(p, 5, c.filled())))
                                .map_err(err)?;
                        }
                    }
                    Figure::Histogram(..) => {}
                }
            }
        }
    }
    root.present().map_err(err)?;
    Ok(())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn report_html(
    ctx: &PlotCtx<'_>,
    figures: &[String],
    machine: &str,
    commit: &str,
    hist_buffer: usize,
    spec: &Spec,
) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fugue scheduling study</title>\n<style>body{font-family:sans-serif;max-width:1250px;margin:auto;padding:1em;color:#222}table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}td.l{text-align:left}img{width:100%;border:1px solid #ddd;margin:0.5em 0}.miss{background:#fdd}.best{background:#dfd;font-weight:bold}</style></head><body>\n");
    h.push_str(&format!(
        "<h1>fugue scheduling study</h1>\n<p>Machine: {} (shared with other jobs during the study, so the figures are noisy; every configuration ran once for {} s). Commit {}. Backend {}, {} Hz; a cycle misses its deadline when it takes longer than {}.</p>\n",
        esc(machine),
        spec.seconds,
        esc(commit),
        esc(&spec.backend),
        spec.rate,
        if spec.deadline == "double" { "twice the buffer period" } else { "one buffer period" }
    ));
    // Readings per graph.
    h.push_str("<h2>What the numbers show</h2>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        let mut p = format!("<p><b>{}</b>: ", esc(gname));
        let mut parts = Vec::new();
        for l in ctx.loads {
            let mut best = Vec::new();
            for &b in ctx.buffers {
                let winner = ctx
                    .execs
                    .iter()
                    .filter_map(|e| ctx.find(g, &e.name, b, l))
                    .min_by(|a, b| a.s.mean_ns.total_cmp(&b.s.mean_ns));
                if let Some(w) = winner {
                    best.push(format!(
                        "{} at {b} frames ({:.0} µs, ×{:.2} vs seq)",
                        w.cfg.exec.name,
                        w.s.mean_ns / 1000.0,
                        w.speedup.unwrap_or(1.0)
                    ));
                }
            }
            parts.push(format!(
                "load {l}, the fastest mean cycle is {}",
                best.join(", ")
            ));
        }
        p.push_str(&parts.join("; "));
        p.push_str(". ");
        let misses: Vec<&Row> = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g && r.s.misses > 0)
            .collect();
        if misses.is_empty() {
            p.push_str("No configuration missed a deadline.");
        } else {
            let mut worst = misses.clone();
            worst.sort_by(|a, b| b.s.miss_rate().total_cmp(&a.s.miss_rate()));
            let list: Vec<String> = worst
                .iter()
                .take(4)
                .map(|r| {
                    format!(
                        "{} at {} frames, load {} ({:.1} %)",
                        r.cfg.exec.name,
                        r.cfg.buffer,
                        r.cfg.load,
                        r.s.miss_rate() * 100.0
                    )
                })
                .collect();
            p.push_str(&format!(
                "Deadlines were missed in {} of {} configurations; most often by {}.",
                misses.len(),
                ctx.rows.iter().filter(|r| r.cfg.graph == g).count(),
                list.join(", ")
            ));
        }
        let seq_rows: Vec<&Row> = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g && r.cfg.exec.name == "seq")
            .collect();
        if !seq_rows.is_empty() {
            let use_of = |r: &&Row| r.s.mean_ns / 1000.0 / r.period_us * 100.0;
            let lo = seq_rows.iter().map(use_of).fold(f64::INFINITY, f64::min);
            let hi = seq_rows.iter().map(use_of).fold(0.0, f64::max);
            p.push_str(&format!(
                " The sequential cycle takes {lo:.1} % to {hi:.1} % of the buffer period on average{}. ",
                if hi < 25.0 {
                    ", so the work per cycle is small against the cost of waking and synchronising a second thread"
                } else {
                    ""
                }
            ));
        }
        let mut best_par: Option<(String, f64)> = None;
        for e in ctx.execs.iter().filter(|e| e.name != "seq") {
            let mut sp: Vec<f64> = ctx
                .rows
                .iter()
                .filter(|r| r.cfg.graph == g && r.cfg.exec.name == e.name)
                .filter_map(|r| r.speedup)
                .collect();
            if sp.is_empty() {
                continue;
            }
            sp.sort_by(f64::total_cmp);
            let med = sp[sp.len() / 2];
            if best_par.as_ref().is_none_or(|(_, m)| med > *m) {
                best_par = Some((e.name.clone(), med));
            }
        }
        if let Some((name, med)) = best_par {
            p.push_str(&format!(
                "The best parallel executor here is {name} (median speedup ×{med:.2} over the buffer sizes and loads). "
            ));
        }
        let parallel_wins = ctx
            .rows
            .iter()
            .filter(|r| {
                r.cfg.graph == g && r.cfg.exec.name != "seq" && r.speedup.unwrap_or(0.0) > 1.05
            })
            .count();
        p.push_str(&format!(
            "{} parallel configuration(s) beat seq by more than 5 %.</p>\n",
            parallel_wins
        ));
        h.push_str(&p);
    }
    for f in figures {
        let text = if f == "percentiles" {
            "Each bar runs from the median to the 99th percentile of the cycle time; the cross is the longest cycle; the dashed line is the deadline. The y axis is logarithmic."
        } else if f == "misses" {
            "The share of cycles that took longer than their deadline."
        } else if f == "speedup" {
            "The mean cycle time of seq divided by the executor's, at the same graph, buffer size and load; above the dashed line the executor is faster."
        } else {
            "The distribution of cycle times (as the 2019 report's figures 17-19), idle and busy load overlaid; the last bin holds every longer cycle."
        };
        h.push_str(&format!(
            "<h2>{}</h2><p>{}{}</p><img src=\"{f}.svg\" alt=\"{f}\">\n",
            esc(f),
            text,
            if f.starts_with("histogram") {
                format!(" Buffer: {hist_buffer} frames.")
            } else {
                String::new()
            }
        ));
    }
    // The summary table, per graph.
    h.push_str("<h2>Summary</h2><p>Times in µs. Green: the fastest mean of its graph, buffer and load; red: deadline misses.</p>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        let grows: Vec<&Row> = ctx.rows.iter().filter(|r| r.cfg.graph == g).collect();
        let clean = grows.iter().filter(|r| r.s.misses == 0).count();
        if let Some(worst) = grows.iter().max_by_key(|r| r.s.p99_ns) {
            h.push_str(&format!(
                "<p><b>{}</b>: {clean} of {} configurations met every deadline. The largest 99th percentile, {:.0} µs, is {} at {} frames under load {} (deadline {:.0} µs); the longest single cycle of the graph took {:.0} µs.</p>\n",
                esc(gname),
                grows.len(),
                worst.s.p99_ns as f64 / 1000.0,
                esc(&worst.cfg.exec.name),
                worst.cfg.buffer,
                esc(&worst.cfg.load),
                worst.s.deadline_ns as f64 / 1000.0,
                grows.iter().map(|r| r.s.max_ns).max().unwrap_or(0) as f64 / 1000.0
            ));
        }
        h.push_str(&format!("<h3>{}</h3><table><tr><th>executor</th><th>threads</th><th>buffer</th><th>load</th><th>cycles</th><th>mean</th><th>median</th><th>p99</th><th>max</th><th>deadline</th><th>misses</th><th>miss rate</th><th>speedup</th></tr>\n", esc(gname)));
        for l in ctx.loads {
            for &b in ctx.buffers {
                let rows: Vec<&Row> = ctx
                    .rows
                    .iter()
                    .filter(|r| r.cfg.graph == g && r.cfg.buffer == b && &r.cfg.load == l)
                    .collect();
                let best = rows
                    .iter()
                    .map(|r| r.s.mean_ns)
                    .fold(f64::INFINITY, f64::min);
                for r in rows {
                    let cls = if r.s.mean_ns == best {
                        " class=\"best\""
                    } else if r.s.misses > 0 {
                        " class=\"miss\""
                    } else {
                        ""
                    };
                    h.push_str(&format!(
                        "<tr{cls}><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0}</td><td>{}</td><td>{:.2} %</td><td>{}</td></tr>\n",
                        esc(&r.cfg.exec.name),
                        r.cfg.threads,
                        r.cfg.buffer,
                        esc(&r.cfg.load),
                        r.s.cycles,
                        r.s.mean_ns / 1000.0,
                        r.s.median_ns as f64 / 1000.0,
                        r.s.p99_ns as f64 / 1000.0,
                        r.s.max_ns as f64 / 1000.0,
                        r.s.deadline_ns as f64 / 1000.0,
                        r.s.misses,
                        r.s.miss_rate() * 100.0,
                        r.speedup.map(|s| format!("×{s:.2}")).unwrap_or_default()
                    ));
                }
            }
        }
        h.push_str("</table>\n");
    }
    h.push_str("</body></html>\n");
    h
}
