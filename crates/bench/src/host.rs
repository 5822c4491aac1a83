//! The shared-runtime study: N instances of a graph on one host, in each mode
//! ([`Mode::Shared`], [`Mode::Partitioned`], [`Mode::Separate`]).
//!
//! - Offline, as fast as possible: the aggregate throughput (instance-cycles per second) and
//!   each instance's share of the work (fairness: the smallest share over the largest).
//! - Real time with the clocked backend at each buffer size: the deadline misses of each N,
//!   and the largest N each mode holds with no miss for the whole run.
//!
//! Before any time counts, the host's mix of N instances is checked against N times the
//! instance's solo render (added in load order): a host that mixes wrongly fails the bench.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use fugue_engine::host::{GraphExecutor, Host, HostBackend, HostOptions, Mode};
use fugue_engine::{Engine, ExecutorChoice};
use fugue_exec::ExecutorKind;
use fugue_graph::TaskGraph;

use crate::error::BenchError;
use crate::machine::{Machine, Versions};
use crate::progress::{Event, Progress};
use crate::report::plot::{self, err, Area, Figure};
use crate::report::{Csv, Existing, Folder};

/// The heavier graph of the study: `chains` chains of noise → two biquads → reverb, mixed
/// into a stereo sink.
pub fn heavy_graph(chains: usize) -> TaskGraph {
    let mut s = String::new();
    s.push_str("bus = { kind: \"mix\", volume: 0.2, };\nout = { kind: \"sink\", in: 2, };\n");
    for i in 0..chains {
        s.push_str(&format!(
            "n{i} = {{ kind: \"noise\", volume: 0.3, seed: {}, }};\n\
             lp{i} = {{ kind: \"biquad\", type: \"lowpass\", freq: {}.0, q: 1.2, }};\n\
             bp{i} = {{ kind: \"biquad\", type: \"bandpass\", freq: {}.0, q: 4.0, }};\n\
             rv{i} = {{ kind: \"reverb\", room: 0.7, damp: 0.4, wet: 0.3, dry: 0.7, }};\n\
             n{i}.1 -> lp{i}.1 -> bp{i}.1 -> rv{i}.1 -> bus.{};\n",
            i + 1,
            800 + 300 * i,
            1200 + 250 * i,
            i + 1
        ));
    }
    s.push_str("bus.1 -> out.1;\nbus.1 -> out.2;\n");
    fugue_graph::read::ag::parse(&s, "heavy.ag").expect("the heavy graph is valid")
}

/// The graphs the study runs by default: `rateau101` (the generated rake of 101 nodes) and
/// the heavy graph of 6 chains.
pub fn default_graphs() -> Vec<(String, TaskGraph)> {
    let (_, rake) = crate::shapes::generated("rake", 101).expect("the rake shape exists");
    vec![
        ("rateau101".to_string(), rake),
        ("heavy6".to_string(), heavy_graph(6)),
    ]
}

/// The study's configuration.
#[derive(Clone, Debug)]
pub struct HostBenchConfig {
    /// Instance counts.
    pub instances: Vec<usize>,
    /// Modes.
    pub modes: Vec<Mode>,
    /// Threads of the pool (shared, partitioned) or of each instance (separate).
    pub threads: usize,
    /// Sample rate, Hz.
    pub rate: u32,
    /// Frames per cycle offline.
    pub offline_buffer: usize,
    /// Wall time of each offline point, s.
    pub offline_seconds: f64,
    /// Buffer sizes of the real-time runs (none: no real-time part).
    pub buffers: Vec<usize>,
    /// Length of each real-time run, s.
    pub rt_seconds: f64,
}

impl Default for HostBenchConfig {
    /// N = 1..8, every mode, one thread per core, 48 kHz; offline at 256 frames for 1 s a
    /// point; real time at 128 and 512 frames for 10 s a run.
    fn default() -> Self {
        HostBenchConfig {
            instances: (1..=8).collect(),
            modes: Mode::ALL.to_vec(),
            threads: fugue_exec::placement::available_cores().max(1),
            rate: 48_000,
            offline_buffer: 256,
            offline_seconds: 1.0,
            buffers: vec![128, 512],
            rt_seconds: 10.0,
        }
    }
}

/// One offline point.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflinePoint {
    /// The graph.
    pub graph: String,
    /// The mode.
    pub mode: Mode,
    /// Instances.
    pub n: usize,
    /// Host cycles run.
    pub cycles: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// Each instance's mean share of the cycle (the time its tasks ran), ns.
    pub shares_ns: Vec<f64>,
}

impl OfflinePoint {
    /// Instance-cycles per second: every instance runs once per host cycle.
    pub fn aggregate(&self) -> f64 {
        self.n as f64 * self.cycles as f64 / self.seconds.max(1e-9)
    }

    /// The smallest instance share over the largest (1: perfectly even).
    pub fn fairness(&self) -> f64 {
        let lo = self.shares_ns.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.shares_ns.iter().copied().fold(0.0, f64::max);
        if hi > 0.0 {
            lo / hi
        } else {
            1.0
        }
    }
}

/// One real-time run.
#[derive(Clone, Debug, PartialEq)]
pub struct RtPoint {
    /// The graph.
    pub graph: String,
    /// The mode.
    pub mode: Mode,
    /// Frames per cycle.
    pub buffer: usize,
    /// Instances.
    pub n: usize,
    /// Cycles measured.
    pub cycles: u64,
    /// Of those, the ones that missed their deadline.
    pub misses: u64,
    /// Cycles the clock dropped because one started more than a period late (the audio
    /// thread resynchronises): xruns as much as misses.
    pub overruns: u64,
}

impl RtPoint {
    /// Misses and dropped cycles: the run held its N when this is zero.
    pub fn missed(&self) -> u64 {
        self.misses + self.overruns
    }
}

/// What the study measured.
#[derive(Clone, Debug, Default)]
pub struct HostBench {
    /// Offline points (partitioned with more instances than threads is refused and absent).
    pub offline: Vec<OfflinePoint>,
    /// Real-time runs (per graph, mode and buffer, N grows until the first miss).
    pub realtime: Vec<RtPoint>,
    /// (graph, mode, N) the host refused, with its reason.
    pub refused: Vec<(String, Mode, usize, String)>,
}

impl HostBench {
    /// The largest N that ran with no miss, per (graph, mode, buffer).
    pub fn max_held(&self) -> BTreeMap<(String, &'static str, usize), usize> {
        let mut m = BTreeMap::new();
        for p in &self.realtime {
            let e = m
                .entry((p.graph.clone(), p.mode.name(), p.buffer))
                .or_insert(0);
            if p.missed() == 0 {
                *e = (*e).max(p.n);
            }
        }
        m
    }

    /// The offline point of (graph, mode, n).
    pub fn offline_point(&self, graph: &str, mode: Mode, n: usize) -> Option<&OfflinePoint> {
        self.offline
            .iter()
            .find(|p| p.graph == graph && p.mode == mode && p.n == n)
    }
}

fn start(
    c: &HostBenchConfig,
    mode: Mode,
    backend: HostBackend,
    block: usize,
) -> Result<Host, BenchError> {
    Host::start(HostOptions {
        backend,
        rate: c.rate,
        block,
        threads: c.threads,
        mode,
        // Separate mode as n independent engines: work stealing on every graph, not measured
        // at each load.
        executor: match mode {
            Mode::Separate if c.threads > 1 => GraphExecutor::Kind(ExecutorKind::Ws),
            Mode::Separate => GraphExecutor::Kind(ExecutorKind::Seq),
            Mode::Shared | Mode::Partitioned => GraphExecutor::Auto,
        },
        // Threads pinned (the audio thread to the first core, worker i to core i), offline
        // too: after the pause between points, the kernel can leave a worker woken on its
        // waker's core for seconds, and a point would measure that instead of the mode (two
        // runs of the same point differed by 2x unpinned).
        exec: {
            let mut o = HostOptions::default().exec;
            o.placement.cores = fugue_exec::placement::allowed_cores().to_vec();
            o
        },
        ..HostOptions::default()
    })
    .map_err(|e| BenchError::Failed(e.to_string()))
}

/// Loads `n` instances; `Ok(false)` when the host refuses (partitioned, too many).
fn load_n(
    host: &mut Host,
    graph: &TaskGraph,
    name: &str,
    n: usize,
) -> Result<Result<(), String>, BenchError> {
    for i in 0..n {
        if let Err(e) = host.load_graph(&format!("{name}-{i}"), graph, name) {
            return Ok(Err(e.to_string()));
        }
    }
    Ok(Ok(()))
}

/// Checks that the host's mix of `n` fresh instances is `n` times the solo render.
fn check_mix(
    host: &mut Host,
    graph: &TaskGraph,
    n: usize,
    c: &HostBenchConfig,
) -> Result<(), BenchError> {
    const CYCLES: usize = 3;
    host.run_cycles(CYCLES as u64)
        .map_err(|e| BenchError::Failed(e.to_string()))?;
    let (mut e, _) = Engine::build(
        graph,
        c.rate as f64,
        c.offline_buffer,
        &ExecutorChoice::default(),
        false,
    )
    .map_err(|e| BenchError::Failed(e.to_string()))?;
    for _ in 0..CYCLES {
        e.run_cycle();
    }
    let mix = host.last_mix().expect("offline host");
    let channels = mix.len();
    let mut want = vec![vec![0.0f32; c.offline_buffer]; channels];
    let outs = e.plan.n_outputs();
    for _ in 0..n {
        for ch in 0..outs {
            let src = e.plan.output(ch);
            let targets: Vec<usize> = if outs == 1 {
                (0..channels).collect()
            } else {
                vec![ch % channels]
            };
            for t in targets {
                for (d, &x) in want[t].iter_mut().zip(src) {
                    *d += x;
                }
            }
        }
    }
    if want.as_slice() != mix {
        return Err(BenchError::Failed(format!(
            "the host's mix of {n} instances is not {n} times the solo render"
        )));
    }
    Ok(())
}

/// Runs the study on `graphs`.
pub fn run(
    c: &HostBenchConfig,
    graphs: &[(String, TaskGraph)],
    progress: &mut dyn Progress,
) -> Result<HostBench, BenchError> {
    let mut out = HostBench::default();
    // Offline points run their cycles on this thread: on the first core, beside the pinned
    // workers (see `start`); a refusal leaves it where it is.
    let _ = fugue_exec::placement::pin_current(fugue_exec::placement::allowed_cores()[0]);
    let total = graphs.len() * c.modes.len() * c.instances.len() * (1 + c.buffers.len());
    progress.event(Event::Start {
        total: total as u64,
    });
    for (name, graph) in graphs {
        for &mode in &c.modes {
            for &n in &c.instances {
                progress.event(Event::Step(&format!("offline {name} {mode} N={n}")));
                let mut host = start(c, mode, HostBackend::Offline, c.offline_buffer)?;
                if let Err(reason) = load_n(&mut host, graph, name, n)? {
                    out.refused.push((name.clone(), mode, n, reason));
                    progress.event(Event::StepDone);
                    continue;
                }
                check_mix(&mut host, graph, n, c)?;
                host.run_cycles(20)
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let before: Vec<_> = (0..n)
                    .map(|i| {
                        host.stats(&format!("{name}-{i}"))
                            .map(|s| (s.cycles, s.mean_ns))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let t0 = Instant::now();
                let mut cycles = 0u64;
                while t0.elapsed().as_secs_f64() < c.offline_seconds || cycles < 20 {
                    host.run_cycles(10)
                        .map_err(|e| BenchError::Failed(e.to_string()))?;
                    cycles += 10;
                }
                let seconds = t0.elapsed().as_secs_f64();
                let shares_ns = (0..n)
                    .map(|i| {
                        let s = host.stats(&format!("{name}-{i}")).expect("loaded");
                        let (c0, m0) = before[i];
                        let dc = (s.cycles - c0).max(1) as f64;
                        (s.mean_ns * s.cycles as f64 - m0 * c0 as f64) / dc
                    })
                    .collect();
                out.offline.push(OfflinePoint {
                    graph: name.clone(),
                    mode,
                    n,
                    cycles,
                    seconds,
                    shares_ns,
                });
                host.finish()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                progress.event(Event::StepDone);
            }
            for &buffer in &c.buffers {
                let mut missed = false;
                for &n in &c.instances {
                    progress.event(Event::Step(&format!(
                        "real time {name} {mode} {buffer} frames N={n}"
                    )));
                    if missed {
                        progress.event(Event::StepDone);
                        continue;
                    }
                    let mut host = start(c, mode, HostBackend::Clocked, buffer)?;
                    if let Err(reason) = load_n(&mut host, graph, name, n)? {
                        if !out
                            .refused
                            .iter()
                            .any(|r| r.0 == *name && r.1 == mode && r.2 == n)
                        {
                            out.refused.push((name.clone(), mode, n, reason));
                        }
                        missed = true;
                        progress.event(Event::StepDone);
                        continue;
                    }
                    host.wait(Duration::from_millis(200))
                        .map_err(|e| BenchError::Failed(e.to_string()))?;
                    let s0 = host.host_stats();
                    host.wait(Duration::from_secs_f64(c.rt_seconds))
                        .map_err(|e| BenchError::Failed(e.to_string()))?;
                    let s1 = host.host_stats();
                    host.finish()
                        .map_err(|e| BenchError::Failed(e.to_string()))?;
                    let p = RtPoint {
                        graph: name.clone(),
                        mode,
                        buffer,
                        n,
                        cycles: s1.cycles - s0.cycles,
                        misses: s1.misses - s0.misses,
                        overruns: s1.overruns - s0.overruns,
                    };
                    missed = p.missed() > 0;
                    out.realtime.push(p);
                    progress.event(Event::StepDone);
                }
            }
        }
    }
    progress.event(Event::Finished);
    Ok(out)
}

fn mode_color(m: Mode) -> plotters::style::RGBColor {
    plot::color(match m {
        Mode::Shared => 5,
        Mode::Partitioned => 1,
        Mode::Separate => 7,
    })
}

/// One panel: a line per mode through `points` (mode, instances, value), the instances on x.
struct Panel<'a> {
    caption: String,
    y_desc: &'a str,
    y_label_size: u32,
    legend: plotters::prelude::SeriesLabelPosition,
    points: Vec<(Mode, usize, f64)>,
}

impl Panel<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, area: &Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let hi_n = self.points.iter().map(|p| p.1).max().unwrap_or(1) as f64;
        let hi = self.points.iter().map(|p| p.2).fold(0.0, f64::max);
        let mut chart = plot::chart(
            area,
            &self.caption,
            20,
            self.y_label_size,
            0.5..hi_n + 0.5,
            0.0..hi.max(1.0) * 1.2,
        )?;
        plot::mesh(&mut chart, "instances", self.y_desc)
            .draw()
            .map_err(err)?;
        for m in Mode::ALL {
            let line: Vec<(f64, f64)> = self
                .points
                .iter()
                .filter(|p| p.0 == m)
                .map(|p| (p.1 as f64, p.2))
                .collect();
            if !line.is_empty() {
                plot::line(&mut chart, m.name(), mode_color(m), 2, &line)?;
            }
        }
        plot::legend(&mut chart, self.legend.clone())
    }
}

/// Panels side by side.
struct Panels<'a>(Vec<Panel<'a>>);

impl Figure for Panels<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        plot::grid(&root, (1, self.0.len().max(1)), |i, area| {
            self.0.get(i).map_or(Ok(()), |p| p.draw(area))
        })
    }
}

/// Aggregate throughput against N, one panel per graph, one line per mode.
fn throughput<'a>(bench: &HostBench, graphs: &[String]) -> Panels<'a> {
    Panels(
        graphs
            .iter()
            .map(|g| Panel {
                caption: format!("{g}: aggregate throughput"),
                y_desc: "instance-cycles per second",
                y_label_size: 70,
                legend: plotters::prelude::SeriesLabelPosition::LowerRight,
                points: bench
                    .offline
                    .iter()
                    .filter(|p| &p.graph == g)
                    .map(|p| (p.mode, p.n, p.aggregate()))
                    .collect(),
            })
            .collect(),
    )
}

/// Deadline misses (percent of the run's cycles) against N, one panel per graph and buffer
/// size of `panels`, one line per mode; a run with no miss is drawn at 0.
fn misses<'a>(bench: &HostBench, panels: &[(String, usize)]) -> Panels<'a> {
    Panels(
        panels
            .iter()
            .map(|(g, b)| Panel {
                caption: format!("{g}, {b} frames: misses"),
                y_desc: "cycles missed or dropped (%)",
                y_label_size: 60,
                legend: plotters::prelude::SeriesLabelPosition::UpperLeft,
                points: bench
                    .realtime
                    .iter()
                    .filter(|p| &p.graph == g && p.buffer == *b)
                    .map(|p| {
                        (
                            p.mode,
                            p.n,
                            100.0 * p.missed() as f64 / p.cycles.max(1) as f64,
                        )
                    })
                    .collect(),
            })
            .collect(),
    )
}

/// Writes the study into `dir`: `README.md` (command, commit, machine, findings), `raw.csv`
/// (one row per measurement), `summary.csv` (one row per point), `throughput.svg/png`, and
/// with a real-time part `misses.svg/png`.
pub fn write(
    dir: &Path,
    c: &HostBenchConfig,
    b: &HostBench,
    command: &str,
    force: bool,
) -> Result<(), BenchError> {
    let dir = Folder::create(
        dir,
        Existing::Files(&[
            "README.md",
            "raw.csv",
            "summary.csv",
            "throughput.svg",
            "misses.svg",
        ]),
        force,
    )?;
    let mut raw = Csv::new(&[
        "phase",
        "graph",
        "mode",
        "buffer",
        "instances",
        "instance",
        "cycles",
        "seconds",
        "share_ns",
        "misses",
        "overruns",
    ]);
    for p in &b.offline {
        for (i, s) in p.shares_ns.iter().enumerate() {
            raw.row([
                "offline".to_string(),
                p.graph.clone(),
                p.mode.name().to_string(),
                c.offline_buffer.to_string(),
                p.n.to_string(),
                i.to_string(),
                p.cycles.to_string(),
                format!("{:.6}", p.seconds),
                format!("{s:.0}"),
                String::new(),
                String::new(),
            ]);
        }
    }
    for p in &b.realtime {
        raw.row([
            "realtime".to_string(),
            p.graph.clone(),
            p.mode.name().to_string(),
            p.buffer.to_string(),
            p.n.to_string(),
            String::new(),
            p.cycles.to_string(),
            format!("{:.3}", c.rt_seconds),
            String::new(),
            p.misses.to_string(),
            p.overruns.to_string(),
        ]);
    }
    dir.csv("raw.csv", &raw)?;
    let mut summary = Csv::new(&[
        "graph",
        "mode",
        "instances",
        "aggregate_per_s",
        "vs_n1",
        "fairness",
    ]);
    for p in &b.offline {
        let n1 = b
            .offline_point(&p.graph, p.mode, 1)
            .map(|q| q.aggregate())
            .unwrap_or(f64::NAN);
        summary.row([
            p.graph.clone(),
            p.mode.name().to_string(),
            p.n.to_string(),
            format!("{:.1}", p.aggregate()),
            format!("{:.3}", p.aggregate() / n1),
            format!("{:.3}", p.fairness()),
        ]);
    }
    dir.csv("summary.csv", &summary)?;
    let graphs: Vec<String> = {
        let mut g: Vec<String> = b.offline.iter().map(|p| p.graph.clone()).collect();
        g.dedup();
        g
    };
    if !b.offline.is_empty() {
        dir.figure(
            "throughput",
            (560 * graphs.len().max(1) as u32, 420),
            &throughput(b, &graphs),
        )?;
    }
    if !b.realtime.is_empty() {
        let mut panels: Vec<(String, usize)> = Vec::new();
        for p in &b.realtime {
            if !panels.iter().any(|(g, k)| g == &p.graph && *k == p.buffer) {
                panels.push((p.graph.clone(), p.buffer));
            }
        }
        dir.figure(
            "misses",
            (480 * panels.len().max(1) as u32, 400),
            &misses(b, &panels),
        )?;
    }
    let v = Versions::detect();
    let mut md = String::new();
    md.push_str("# The shared-runtime study (`fugue bench host`)\n\n");
    md.push_str(&format!(
        "Command: `{command}`\n\nCommit {} ({}), {}, fugue {}.\n\nMachine: {}. Load average at the end: {}.\n\n",
        v.short_commit,
        v.date,
        v.rustc,
        v.fugue,
        Machine::detect(),
        crate::machine::load_average().unwrap_or_else(|| "?".into())
    ));
    md.push_str(&format!(
        "Threads: {}. Offline: {} frames, {:.2} s of wall time per point. Real time (clocked): {:?} frames, {:.1} s per run; N grows until the first run with a miss.\n\n",
        c.threads, c.offline_buffer, c.offline_seconds, c.buffers, c.rt_seconds
    ));
    md.push_str("Each point is one run (no repeats): read the figures as indications, not as medians.\n\n## Offline: aggregate throughput (instance-cycles per second)\n\n");
    md.push_str(
        "| graph | mode | N | aggregate/s | vs N=1 | fairness |\n|---|---|---:|---:|---:|---:|\n",
    );
    for p in &b.offline {
        let n1 = b
            .offline_point(&p.graph, p.mode, 1)
            .map(|q| q.aggregate())
            .unwrap_or(f64::NAN);
        md.push_str(&format!(
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} |\n",
            p.graph,
            p.mode,
            p.n,
            p.aggregate(),
            p.aggregate() / n1,
            p.fairness()
        ));
    }
    md.push_str("\n## Findings\n\n");
    for g in &graphs {
        let at = |m: Mode, n: usize| b.offline_point(g, m, n).map(|p| p.aggregate());
        if let (Some(s1), Some(s8)) = (at(Mode::Shared, 1), at(Mode::Shared, 8)) {
            md.push_str(&format!(
                "- {g}: shared at N=8 runs {:.2}x its aggregate at N=1.\n",
                s8 / s1
            ));
        }
        if let (Some(s4), Some(p4)) = (at(Mode::Shared, 4), at(Mode::Separate, 4)) {
            md.push_str(&format!(
                "- {g}: at N=4, shared runs {:.2}x the aggregate of separate.\n",
                s4 / p4
            ));
        }
    }
    if !b.realtime.is_empty() {
        md.push_str("\n## Real time: the largest N held with no deadline miss\n\nA run holds its N when no cycle missed its deadline and none was dropped (an overrun: a cycle that started more than a period late, after which the clock resynchronises).\n\n| graph | mode | buffer | N held |\n|---|---|---:|---:|\n");
        for ((g, m, buf), n) in b.max_held() {
            md.push_str(&format!("| {g} | {m} | {buf} | {n} |\n"));
        }
        md.push_str(
            "\n| graph | mode | buffer | N | cycles | misses | overruns |\n|---|---|---:|---:|---:|---:|---:|\n",
        );
        for p in &b.realtime {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                p.graph, p.mode, p.buffer, p.n, p.cycles, p.misses, p.overruns
            ));
        }
    }
    if !b.refused.is_empty() {
        md.push_str("\n## Refused\n\n");
        for (g, m, n, why) in &b.refused {
            md.push_str(&format!("- {g}, {m}, N={n}: {why}\n"));
        }
    }
    md.push_str("\nFiles: `raw.csv` (one row per instance and point, and per real-time run), `summary.csv`, `throughput.svg`/`.png` (aggregate against N per mode), `misses.svg`/`.png` (real time: the share of cycles that missed against N, per graph and buffer).\n");
    dir.text("README.md", &md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_study_runs_and_checks_its_mix() {
        let c = HostBenchConfig {
            instances: vec![1, 2, 3],
            modes: Mode::ALL.to_vec(),
            threads: 2,
            offline_seconds: 0.02,
            buffers: vec![512],
            rt_seconds: 0.05,
            ..HostBenchConfig::default()
        };
        let graphs = vec![("heavy2".to_string(), heavy_graph(2))];
        let b = run(&c, &graphs, &mut crate::NoProgress).unwrap();
        // Partitioned on 2 threads refuses 3 instances.
        assert_eq!(b.offline.len(), 8);
        assert!(b
            .refused
            .iter()
            .any(|r| r.1 == Mode::Partitioned && r.2 == 3));
        for p in &b.offline {
            assert!(p.aggregate() > 0.0 && p.fairness() > 0.0, "{p:?}");
        }
        let dir = std::env::temp_dir().join(format!("fugue-bench-host-{}", std::process::id()));
        write(&dir, &c, &b, "test", true).unwrap();
        for f in [
            "README.md",
            "raw.csv",
            "summary.csv",
            "throughput.svg",
            "throughput.png",
        ] {
            assert!(dir.join(f).exists(), "{f}");
        }
        assert!(!b.realtime.is_empty());
        for f in ["misses.svg", "misses.png"] {
            assert!(dir.join(f).exists(), "{f}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
