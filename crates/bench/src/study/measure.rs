//! Measuring a study: every configuration run in real time, `repeats` times interleaved,
//! each run's output checked against seq's cycle by cycle, and its cycles written to
//! raw.csv.gz as it goes.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_engine::Engine;
use fugue_engine::{Backend, CycleRecord, ExecutorChoice, RunOptions, StatsOptions};
use fugue_graph::TaskGraph;

use super::prepare::{choice_for, describe, Prepared};
use super::spec::{Config, Spec};
use super::trust::{eta, step_line};
use crate::check::{check_hashes, HashMismatch, SeqReference};
use crate::error::{failed, BenchError, Context as _};
use crate::progress::{Event, Progress};
use crate::report::{self, Folder};

/// What the runs measured.
pub(super) struct Measured {
    /// Each configuration's runs, in the order of the repeats.
    pub runs: BTreeMap<Config, Vec<Run>>,
    /// Cycle times (µs) of the first repeat of each configuration at the histograms' buffer
    /// size.
    pub samples: BTreeMap<Config, Vec<f64>>,
    /// Cycles whose output was compared with seq's, over every run.
    pub checked_cycles: u64,
}

/// The gzipped raw file, written under a temporary name until every run has passed.
struct Raw {
    path: std::path::PathBuf,
    tmp: std::path::PathBuf,
    out: flate2::write::GzEncoder<std::io::BufWriter<std::fs::File>>,
}

impl Raw {
    /// Starts `raw.csv.gz` in `dir` with its header.
    fn create(dir: &Folder) -> Result<Raw, BenchError> {
        let path = dir.join("raw.csv.gz");
        let tmp = report::temp_path(&path)?;
        let file = std::fs::File::create(&tmp).map_err(|e| Raw::error(&path, e))?;
        let mut raw = Raw {
            out: flate2::write::GzEncoder::new(
                std::io::BufWriter::new(file),
                flate2::Compression::best(),
            ),
            path,
            tmp,
        };
        raw.line(format_args!(
            "graph,executor,threads,buffer,load,repeat,{}",
            fugue_engine::stats::CSV_HEADER
        ))?;
        Ok(raw)
    }

    fn error(path: &std::path::Path, e: std::io::Error) -> BenchError {
        BenchError::io(format!("cannot write {}", path.display()), e)
    }

    /// Appends a line.
    fn line(&mut self, line: std::fmt::Arguments<'_>) -> Result<(), BenchError> {
        writeln!(self.out, "{line}").map_err(|e| Raw::error(&self.path, e))
    }

    /// Finishes the file and gives it its name.
    fn commit(self) -> Result<(), BenchError> {
        let Raw { path, tmp, out } = self;
        out.finish()
            .and_then(|mut w| w.flush())
            .map_err(|e| Raw::error(&path, e))?;
        report::commit(&tmp, &path)
    }

    /// Removes the temporary file.
    fn discard(self) {
        drop(self.out);
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Runs every configuration of `p` `repeats` times, the repeats interleaved (all
/// configurations once, then again), so that a slow spell of the machine falls on every
/// configuration rather than on one; writes raw.csv.gz into `dir`. On any failure the
/// temporary raw file is removed and nothing is written. Progress: one step per run.
pub(super) fn measure(
    p: &Prepared,
    dir: &Folder,
    cancel: &Arc<AtomicBool>,
    progress: &mut dyn Progress,
) -> Result<Measured, BenchError> {
    let total = p.configs.len() * p.repeats;
    progress.event(Event::Start {
        total: total as u64,
    });
    let mut raw = Raw::create(dir)?;
    let mut m = Measured {
        runs: BTreeMap::new(),
        samples: BTreeMap::new(),
        checked_cycles: 0,
    };
    let started = Instant::now();
    let measured = (|| -> Result<(), BenchError> {
        let mut done = 0usize;
        for rep in 0..p.repeats {
            for i in round_order(&p.configs, rep) {
                let cfg = &p.configs[i];
                // Relaxed: a stop request polled.
                if cancel.load(Ordering::Relaxed) || progress.cancelled() {
                    return failed("interrupted; the study was not written");
                }
                let left = eta(started.elapsed(), done, total, p.per_run());
                done += 1;
                let what = format!(
                    "{}, repeat {}/{}",
                    describe(&p.graphs, cfg),
                    rep + 1,
                    p.repeats
                );
                progress.event(Event::Step(&step_line(done, total, &what, left)));
                m.record(p, cfg, rep, cancel, &mut raw)?;
                // A stop during the run ends it early: its cycles are not a whole run, and
                // the last run of the study is no exception.
                if cancel.load(Ordering::Relaxed) || progress.cancelled() {
                    return failed("interrupted; the study was not written");
                }
                progress.event(Event::StepDone);
            }
        }
        Ok(())
    })();
    progress.event(Event::Finished);
    match measured {
        Ok(()) => {
            raw.commit()?;
            Ok(m)
        }
        Err(e) => {
            raw.discard();
            Err(e)
        }
    }
}

/// A block of runs: graph, buffer size, load.
type BlockKey<'a> = (usize, usize, &'a str);

/// The order of the configurations in round `rep` (from 0): in blocks of one graph, buffer
/// size and load, so that seq and the executors compared with it run one right after the
/// other (a slow spell of the machine longer than a block touches every run the block's
/// speedups pair), each block's runs rotated by `rep` so that no executor always runs first
/// after the load or the graph changes.
pub(super) fn round_order(configs: &[Config], rep: usize) -> Vec<usize> {
    let mut blocks: Vec<(BlockKey<'_>, Vec<usize>)> = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        let key = (c.graph, c.buffer, c.load.as_str());
        match blocks.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => blocks.push((key, vec![i])),
        }
    }
    blocks
        .into_iter()
        .flat_map(|(_, mut v)| {
            let n = v.len();
            v.rotate_left(rep % n);
            v
        })
        .collect()
}

/// The median cycle time of a run's `records`, µs, the first ones left out as warm-up
/// ([`crate::stats::warm_up`]: the first cycles after the engine's start run on cold caches
/// and wake cores from idle, and take up to twice as long); 0 without records.
pub(super) fn steady_median_us(records: &[CycleRecord]) -> f64 {
    let skip = crate::stats::warm_up(records.len());
    let v: Vec<f64> = records[skip..]
        .iter()
        .map(|r| r.duration_ns as f64 / 1000.0)
        .collect();
    if v.is_empty() {
        0.0
    } else {
        crate::stats::median(&v)
    }
}

impl Measured {
    /// Runs `cfg` once (repeat `rep`, from 0), checks its output, writes its cycles to `raw`
    /// and keeps its results.
    fn record(
        &mut self,
        p: &Prepared,
        cfg: &Config,
        rep: usize,
        cancel: &Arc<AtomicBool>,
        raw: &mut Raw,
    ) -> Result<(), BenchError> {
        let spec = &p.spec;
        let (gname, graph) = &p.graphs[cfg.graph];
        let choice = choice_for(&cfg.exec.name, cfg.threads, spec.rt, spec.pin)?;
        let report = run_once(p, cfg, &choice, cancel)?;
        let who = format!(
            "bench study: executor {} ({} thread{}) on {gname} at buffer {}, {} load, repeat {}",
            cfg.exec.name,
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" },
            report.block,
            cfg.load,
            rep + 1
        );
        self.checked_cycles += check_run(graph, &choice, &report, &who)?;
        // Quoted as summary.csv's cells are (a graph's file name may hold a comma).
        let (gcell, ecell, lcell) = (
            report::quote(gname),
            report::quote(&cfg.exec.name),
            report::quote(&cfg.load.to_string()),
        );
        for r in &report.records {
            raw.line(format_args!(
                "{gcell},{ecell},{},{},{lcell},{},{}",
                cfg.threads,
                report.block,
                rep + 1,
                r.csv_row()
            ))?;
        }
        let expected = (spec.seconds * report.sample_rate as f64 / report.block as f64)
            .round()
            .max(1.0) as u64;
        let period_us = report.block as f64 * 1e6 / report.sample_rate as f64;
        if cfg.buffer == p.hist_buffer() && rep == 0 {
            self.samples.insert(
                cfg.clone(),
                report
                    .records
                    .iter()
                    .map(|r: &CycleRecord| r.duration_ns as f64 / 1000.0)
                    .collect(),
            );
        }
        self.runs.entry(cfg.clone()).or_default().push(Run {
            median_us: steady_median_us(&report.records),
            summary: report.summary.clone(),
            chose: report.auto.as_ref().map(|a| a.chosen().label.clone()),
            overruns: report.xruns,
            expected_cycles: expected,
            period_us,
        });
        Ok(())
    }
}

/// Whether a JACK server answers (`jack_wait --check`), before a study through JACK runs
/// anything: without one, its first run would fail after the library's own messages.
pub(super) fn jack_server_answers() -> Result<(), BenchError> {
    // It says `running` or `not running` on its standard output (its status is 0 either way).
    let answered = std::process::Command::new("jack_wait")
        .arg("--check")
        .stderr(std::process::Stdio::null())
        .output();
    match answered {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "running" => {
            Ok(())
        }
        Ok(_) => failed(
            "backend = \"jack\", but no JACK server is running (jack_wait --check found none); start one first, e.g. `jackd -d dummy -r 48000 -p 256 &`",
        ),
        Err(e) => failed(format!(
            "backend = \"jack\", but jack_wait, which checks for the server, cannot be run ({e}); install JACK's tools (jackd2)"
        )),
    }
}

/// The JACK server's buffer size as a study found it (`jack_bufsize` with no argument says
/// it), set again when the study ends, however it ends: the server is not the study's, and
/// its other clients keep the size they had. A client of a busy server may fail to connect:
/// each step is tried a few times, and the size set is read back.
pub(super) struct JackBufferKept(Option<u32>);

/// Tries of each `jack_bufsize` step.
const JACK_TRIES: usize = 5;

/// The server's buffer size, when `jack_bufsize` says it.
fn jack_buffer_size() -> Option<u32> {
    (0..JACK_TRIES).find_map(|i| {
        if i > 0 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        std::process::Command::new("jack_bufsize")
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    })
}

impl JackBufferKept {
    /// The server's buffer size now (none kept when `jack_bufsize` does not say it).
    pub(super) fn now() -> Self {
        JackBufferKept(jack_buffer_size())
    }
}

impl Drop for JackBufferKept {
    fn drop(&mut self) {
        let Some(size) = self.0 else { return };
        for _ in 0..JACK_TRIES {
            if jack_buffer_size() == Some(size) {
                return;
            }
            set_jack_buffer_size(size as usize);
        }
    }
}

/// Sets the server's buffer size with `jack_bufsize`; whether it said it did.
fn set_jack_buffer_size(size: usize) -> bool {
    std::process::Command::new("jack_bufsize")
        .arg(size.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cfg` once in real time with `choice`, its load beside it (and, through JACK, the
/// server's buffer size set to the configuration's first).
fn run_once(
    p: &Prepared,
    cfg: &Config,
    choice: &ExecutorChoice,
    cancel: &Arc<AtomicBool>,
) -> Result<fugue_engine::RunReport, BenchError> {
    let spec = &p.spec;
    if p.jack {
        // The server's buffer size is the configuration's (its sample rate is the server's).
        if !set_jack_buffer_size(cfg.buffer) {
            return failed(format!(
                "cannot set the JACK buffer size to {} with jack_bufsize",
                cfg.buffer
            ));
        }
    }
    let load = start_load(&cfg.load, spec)?;
    let options = RunOptions {
        backend: if p.jack {
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
        deadline: p.deadline,
        stats: StatsOptions {
            csv: None,
            keep_records: true,
            hash_outputs: true,
        },
        stop: Some(cancel.clone()),
        placeholder: false,
        profile: false,
        registry: fugue_dsp::Registry::with_builtin_kinds(),
        live: None,
        granted: None,
        live_graph: None,
        announce: None,
    };
    let result = fugue_engine::run(&p.graphs[cfg.graph].1, &options, |_| {});
    // A load that was not there for the whole run does not make a busy figure.
    if let Err(why) = stop_load(load) {
        return failed(format!(
            "{}: {why}; the run of {} with {} ({} threads, {} frames) was not under the busy load",
            super::spec::place(&p.text, &p.label, "busy_command"),
            p.graphs[cfg.graph].0,
            cfg.exec.name,
            cfg.threads,
            cfg.buffer
        ));
    }
    result.with_context(|| {
        format!(
            "cannot run {} with {} ({} threads, {} frames)",
            p.graphs[cfg.graph].0, cfg.exec.name, cfg.threads, cfg.buffer
        )
    })
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
        ..Default::default()
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

/// The process group of the busy load's command while it runs (0: none), for
/// [`stop_busy_load`].
static BUSY_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Ends the busy load's command and every process it started, if one runs: for a process
/// that ends at once (a second signal), which would otherwise leave it running, out of the
/// terminal's reach in its own process group.
pub fn stop_busy_load() {
    let group = BUSY_GROUP.swap(0, Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; it reads no memory
        // of this process.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
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
        use std::os::unix::process::CommandExt;
        // A shell command (a loop, a pipeline, `cd dir && prog`), in a process group of its
        // own, which `stop_load` ends whole.
        let child = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| BenchError::io(format!("cannot start the load command `{cmd}`"), e))?;
        // SeqCst: read by a signal's thread that ends the process.
        BUSY_GROUP.store(
            libc::pid_t::try_from(child.id()).unwrap_or(0),
            Ordering::SeqCst,
        );
        return Ok(Load::Command(child));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::with_capacity(spec.busy_threads);
    for i in 0..spec.busy_threads {
        let s = stop.clone();
        let started = std::thread::Builder::new()
            .name("fugue-busy".into())
            .spawn(move || {
                let mut x = 1.0f64 + i as f64;
                // Relaxed: a stop request polled.
                while !s.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = (x * 1.000_001 + 0.5).sqrt() + 1.0;
                    }
                }
                x
            });
        match started {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The ones started stop before the error is said.
                let _ = stop_load(Load::Threads(stop, handles));
                return Err(BenchError::io(
                    format!(
                        "cannot start busy thread {} of {}",
                        i + 1,
                        spec.busy_threads
                    ),
                    e,
                ));
            }
        }
    }
    Ok(Load::Threads(stop, handles))
}

/// Stops `load`; `Err` (in words) when its command had ended before (it failed to start,
/// or ran out): the run was not under the load it is labelled with.
fn stop_load(load: Load) -> Result<(), String> {
    match load {
        Load::Idle => Ok(()),
        Load::Threads(stop, handles) => {
            stop.store(true, Ordering::Relaxed);
            for h in handles {
                let _ = h.join();
            }
            Ok(())
        }
        Load::Command(mut c) => {
            let ended = c.try_wait().ok().flatten();
            // The shell and every process it started (its group, led by it; the shell is
            // not reaped before the wait below, so its pid still names that group).
            stop_busy_load();
            let _ = c.kill();
            let _ = c.wait();
            match ended {
                Some(status) => Err(format!(
                    "the busy load's command ended before the run did ({status}); busy_command must run until it is stopped"
                )),
                None => Ok(()),
            }
        }
    }
}

/// One run's results, before the repeats are put together.
pub(super) struct Run {
    /// Its median cycle time after the warm-up ([`steady_median_us`]), µs: the figure its
    /// repeats are compared by.
    pub median_us: f64,
    /// Its cycle statistics.
    pub summary: fugue_engine::Summary,
    /// What `auto` chose for this repeat (its candidate's label); `None` for the others.
    pub chose: Option<String>,
    /// Times the clock fell more than a period behind and skipped ahead (cycles not run).
    pub overruns: u64,
    /// Cycles a run of the spec's seconds should have.
    pub expected_cycles: u64,
    /// The buffer period, µs.
    pub period_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_with(cmd: &str) -> Spec {
        let text = format!(
            "graphs = [\"line\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [64]\nloads = [\"busy\"]\nseconds = 1\nbusy_command = {}\n",
            toml::Value::String(cmd.into())
        );
        super::super::spec::parse(&text, "busy.toml").unwrap()
    }

    /// `busy_command` is a shell command: a loop runs until the run ends and is stopped with
    /// every process it started; one that ends early is said with its own status.
    #[test]
    fn the_busy_command_is_a_shell_command() {
        let load = start_load("busy", &spec_with("while true; do sleep 0.01; done")).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(stop_load(load), Ok(()));
        let load = start_load("busy", &spec_with("exit 3")).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let e = stop_load(load).unwrap_err();
        assert!(e.contains("exit status: 3"), "{e}");
    }
}
