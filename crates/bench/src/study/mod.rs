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

/// The default spec, relative to the repository.
pub const DEFAULT_SPEC: &str = "studies/default.toml";

/// The study's configuration.
#[derive(Clone, Debug)]
pub struct StudyConfig {
    /// The spec (TOML).
    pub spec: PathBuf,
    /// The output folder.
    pub output: PathBuf,
    /// Replace the files of an existing, non-empty output folder.
    pub force: bool,
    /// The command line, for the README.
    pub command: String,
    /// Set to stop: the current run ends early and the study is not written.
    pub stop: Arc<AtomicBool>,
}

/// What the study did.
#[derive(Clone, Debug)]
pub struct StudyResult {
    /// The folder written.
    pub output: PathBuf,
    /// Configurations run.
    pub runs: usize,
    /// Seconds it took.
    pub seconds: f64,
    /// Figures written (each as SVG and PNG).
    pub figures: usize,
    /// Cycles whose output was compared with seq's, over every run.
    pub checked_cycles: u64,
}

impl StudyResult {
    /// What the study did, in one sentence.
    pub fn sentence(&self) -> String {
        format!(
            "{}: {} runs in {:.0} s, {} timed cycles checked bit-identical to seq; summary.csv, report.html, {} figures (SVG and PNG), raw.csv.gz",
            self.output.display(),
            self.runs,
            self.seconds,
            self.checked_cycles,
            self.figures
        )
    }
}

fn choice_for(name: &str, threads: usize, rt: bool) -> Result<ExecutorChoice, BenchError> {
    let (kind, algo) = match name.strip_prefix("static-") {
        Some(a) => (ExecutorKind::Static, Some(a)),
        None => (
            ExecutorKind::from_name(name).ok_or_else(|| {
                BenchError::Failed(format!("unknown executor `{name}` in the spec"))
            })?,
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
            .map_err(|e| BenchError::Failed(format!("executor `{name}` in the spec: {e}")))?;
    }
    Ok(c)
}

fn load_graph(spec_dir: &Path, root: &Path, name: &str) -> Result<(String, TaskGraph), BenchError> {
    if let Some(g) = name.strip_prefix("gen:") {
        let mut it = g.split(':');
        let shape = it.next().unwrap_or("");
        let n: usize = it
            .next()
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| BenchError::Failed(format!("graph `{name}`: expected gen:SHAPE:N")))?;
        let graph = match shape {
            "line" => fugue_graph::gen::line(n),
            "diamond" => fugue_graph::gen::diamond(n),
            "rake" => fugue_graph::gen::rake(n),
            _ => {
                return failed(format!(
                    "graph `{name}`: unknown shape `{shape}` (line, diamond, rake)"
                ))
            }
        };
        return Ok((format!("{shape}{n}"), graph));
    }
    let path = spec_dir.join(root).join(name);
    let graph = fugue_graph::read_file(&path, None)?;
    let label = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    Ok((label, graph))
}

/// Checks a real-time run of `graph` with `choice`: the output hash each record carries
/// against seq's for the same cycle. Returns the cycles compared; the error names `who`, the
/// cycle, and (from an offline run of the same configuration beside seq) the output channel
/// and sample.
fn check_run(
    graph: &TaskGraph,
    choice: &ExecutorChoice,
    report: &fugue_engine::RunReport,
    who: &str,
) -> Result<u64, BenchError> {
    if report.buffer_changes > 0 || report.silent_cycles > 0 {
        return failed(format!(
            "{who}: the server changed the buffer size during the run; its output cannot be checked against seq"
        ));
    }
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let opts = fugue_exec::CompileOptions {
        sample_rate: f64::from(report.sample_rate),
        block: report.block,
        placeholder: false,
        merge_chains: choice.merge_chains,
    };
    let recorded = report.records.iter().map(|r| (r.cycle, r.output_hash));
    match check_hashes(graph, &reg, &opts, recorded)? {
        Ok(n) => Ok(n),
        Err(HashMismatch { cycle, timed, seq }) => {
            let cycle = cycle + 1;
            let place = replay(graph, choice, &reg, &opts, cycle, who).unwrap_or_else(|| {
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
    let (mut engine, _) = Engine::build(graph, opts.sample_rate, opts.block, choice, false).ok()?;
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

/// Runs the study and writes its folder: raw.csv.gz as the runs go, then summary.csv, the
/// figures, README.md and report.html. Progress: one step per configuration.
pub fn run(args: &StudyConfig, progress: &mut dyn Progress) -> Result<StudyResult, BenchError> {
    let spec_path = args.spec.clone();
    let text = std::fs::read_to_string(&spec_path).map_err(|e| {
        BenchError::io(format!("cannot read study spec {}", spec_path.display()), e)
    })?;
    let spec: Spec = match toml::from_str(&text) {
        Ok(s) => s,
        Err(e) => return failed(format!("{}: {}", spec_path.display(), e.message())),
    };
    if !(spec.seconds > 0.0 && spec.seconds <= 3600.0) {
        return config(format!(
            "{}: seconds must be between 0 and 3600",
            spec_path.display()
        ));
    }
    if spec.buffers.contains(&0) || spec.threads.contains(&0) {
        return config(format!(
            "{}: buffers and threads must be at least 1",
            spec_path.display()
        ));
    }
    for l in &spec.loads {
        if l != "idle" && l != "busy" {
            return config(format!(
                "{}: unknown load `{l}` (idle or busy)",
                spec_path.display()
            ));
        }
    }
    let jack = match spec.backend.as_str() {
        "clocked" => false,
        "jack" => true,
        b => {
            return config(format!(
                "{}: unknown backend `{b}` (clocked or jack)",
                spec_path.display()
            ))
        }
    };
    let deadline = match spec.deadline.as_str() {
        "period" => Deadline::Period,
        "double" => Deadline::Double,
        d => {
            return config(format!(
                "{}: unknown deadline `{d}` (period or double)",
                spec_path.display()
            ))
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
        .collect::<Result<Vec<_>, BenchError>>()?;
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
        .collect::<Result<_, BenchError>>()?;
    let not_empty = std::fs::read_dir(&args.output).is_ok_and(|mut d| d.next().is_some());
    if args.output.exists() && !args.force && not_empty {
        return config(format!(
            "{} already exists and is not empty; pass --force to replace its files",
            args.output.display()
        ));
    }
    let created = !args.output.exists();
    report::create_dir(&args.output)?;

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
    progress.event(Event::Start {
        total: configs.len() as u64,
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
        "graph,executor,threads,buffer,load,{}",
        fugue_engine::stats::CSV_HEADER
    )
    .map_err(raw_err)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut samples: BTreeMap<Config, Vec<f64>> = BTreeMap::new();
    let hist_buffer = spec
        .histogram_buffer
        .unwrap_or(spec.buffers[spec.buffers.len() / 2]);
    let mut checked_cycles = 0u64;
    // The runs; on any failure nothing is left in the output folder (the temporary raw file
    // is removed, and the folder too when this run created it).
    let measured = (|| -> Result<(), BenchError> {
        for cfg in &configs {
            if cancel.load(Ordering::Relaxed) || progress.cancelled() {
                return failed("interrupted; the study was not written");
            }
            let (gname, graph) = &graphs[cfg.graph];
            progress.event(Event::Step(&format!(
                "{gname} {} t{} b{} {}",
                cfg.exec.name, cfg.threads, cfg.buffer, cfg.load
            )));
            let choice = choice_for(&cfg.exec.name, cfg.threads, spec.rt)?;
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
                "bench study: executor {} ({} thread{}) on {gname} at buffer {}, {} load",
                cfg.exec.name,
                cfg.threads,
                if cfg.threads == 1 { "" } else { "s" },
                report.block,
                cfg.load
            );
            checked_cycles += check_run(graph, &choice, &report, &who)?;
            for r in &report.records {
                writeln!(
                    raw,
                    "{gname},{},{},{},{},{}",
                    cfg.exec.name,
                    cfg.threads,
                    report.block,
                    cfg.load,
                    r.csv_row()
                )
                .map_err(raw_err)?;
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
                // `check_run` passed: every recorded cycle equalled seq's (a difference fails
                // the study).
                verified: true,
                expected_cycles: expected,
                period_us,
                speedup: None,
            });
            progress.event(Event::StepDone);
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
    report::rename(&raw_tmp, &raw_path)?;

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
    let mut csv = Csv::new(&[
        "graph",
        "executor",
        "threads",
        "buffer",
        "load",
        "period_us",
        "cycles",
        "expected_cycles",
        "mean_us",
        "median_us",
        "p99_us",
        "max_us",
        "misses",
        "miss_rate",
        "overruns",
        "dropped",
        "steals",
        "speedup_vs_seq",
        "verified",
    ]);
    for r in &rows {
        let us = |ns: f64| format!("{:.2}", ns / 1000.0);
        csv.row([
            names[r.cfg.graph].clone(),
            r.cfg.exec.name.clone(),
            r.cfg.threads.to_string(),
            r.cfg.buffer.to_string(),
            r.cfg.load.clone(),
            format!("{:.2}", r.period_us),
            r.s.cycles.to_string(),
            r.expected_cycles.to_string(),
            us(r.s.mean_ns),
            us(r.s.median_ns as f64),
            us(r.s.p99_ns as f64),
            us(r.s.max_ns as f64),
            r.s.misses.to_string(),
            format!("{:.5}", r.s.miss_rate()),
            r.overruns.to_string(),
            r.s.dropped.to_string(),
            r.s.steals.to_string(),
            opt(r.speedup, 3),
            r.verified.to_string(),
        ]);
    }
    csv.write(&out.join("summary.csv"))?;
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
        ("percentiles", Kind::Percentiles),
        ("misses", Kind::Misses),
        ("speedup", Kind::Speedup),
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
    let (commit, rustc) = (versions.short_commit, versions.rustc);
    let m = Machine::detect();
    let machine = format!("{}, {} cores", m.cpu, m.cores);
    let readme = page::readme(
        &args.command,
        &commit,
        &machine,
        &rustc,
        &spec,
        &spec_path,
        rows.len(),
        started.elapsed(),
        &text,
    );
    report::write_atomic(&out.join("README.md"), readme.as_bytes())?;
    let html = page::report_html(&ctx, &figures, &machine, &commit, hist_buffer, &spec);
    report::write_atomic(&out.join("report.html"), html.as_bytes())?;
    Ok(StudyResult {
        output: out.clone(),
        runs: rows.len(),
        seconds: started.elapsed().as_secs_f64(),
        figures: figures.len(),
        checked_cycles,
    })
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
            "graphs = [\"gen:line:6\"]\nexecutors = [\"seq\", \"ws\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
        )
        .unwrap();
        let config = StudyConfig {
            spec,
            output: dir.join("out"),
            force: false,
            command: "test".into(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let r = run(&config, &mut NoProgress).unwrap();
        assert_eq!(r.runs, 2);
        // 0.1 s at the default 44.1 kHz and 256 frames: 17 cycles a run, each checked.
        assert_eq!(r.checked_cycles, 2 * 17);
        let summary = std::fs::read_to_string(r.output.join("summary.csv")).unwrap();
        let rows: Vec<&str> = summary.lines().skip(1).collect();
        assert_eq!(rows.len(), 2, "{summary}");
        assert!(
            rows[0].starts_with("line6,seq,1,256,idle,") && rows[0].ends_with(",true"),
            "{summary}"
        );
        assert!(rows[1].starts_with("line6,ws,2,256,idle,"), "{summary}");
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
