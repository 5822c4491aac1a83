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
use crate::report::{self, Csv};

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

/// The graphs the study runs by default: `rateau101` (the corpus's rake of 101 nodes, 33
/// branches, as the generator makes it) and the heavy graph of 6 chains.
pub fn default_graphs() -> Vec<(String, TaskGraph)> {
    let rake = crate::shapes::corpus_shape("rake")
        .expect("the rake shape exists")
        .graph;
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
    /// Thread counts of the pool (shared, partitioned) or of each instance (separate): the
    /// whole study runs at each, with its ceiling.
    pub threads: Vec<usize>,
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
    /// The kinds the graphs' nodes are built by.
    pub registry: fugue_dsp::Registry,
}

impl Default for HostBenchConfig {
    /// N = 1..8, every mode, one thread per core, 48 kHz; offline at 256 frames for 1 s a
    /// point (and as long for the ceiling); real time at 128 and 512 frames for 10 s a run;
    /// the built-in kinds.
    fn default() -> Self {
        HostBenchConfig {
            instances: (1..=8).collect(),
            modes: Mode::ALL.to_vec(),
            threads: vec![fugue_exec::placement::available_cores().max(1)],
            rate: 48_000,
            offline_buffer: 256,
            offline_seconds: 1.0,
            buffers: vec![128, 512],
            rt_seconds: 10.0,
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        }
    }
}

/// One offline point.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflinePoint {
    /// The graph.
    pub graph: String,
    /// Threads of the host.
    pub threads: usize,
    /// The mode.
    pub mode: Mode,
    /// Instances.
    pub n: usize,
    /// Host cycles run.
    pub cycles: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// Each instance's mean work per cycle (the time its tasks ran, all threads), ns.
    pub shares_ns: Vec<f64>,
    /// The host's mean cycle, ns.
    pub cycle_ns: f64,
    /// The mean of the cycles' parallel part (the graphs' run on every thread), ns; the rest
    /// of the cycle is the audio thread's alone (commands, mix, statistics).
    pub parallel_ns: f64,
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
    /// Threads of the host.
    pub threads: usize,
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

/// The ceiling at one thread count: `threads` sequential engines of the graph side by side,
/// each on its own thread pinned to its own core, running cycles for the same wall time as an
/// offline point, with no synchronisation between them.
#[derive(Clone, Debug, PartialEq)]
pub struct CeilingPoint {
    /// The graph.
    pub graph: String,
    /// Engines (and threads, and cores).
    pub threads: usize,
    /// Cycles each engine ran.
    pub cycles: Vec<u64>,
    /// Wall time, s.
    pub seconds: f64,
}

impl CeilingPoint {
    /// Instance-cycles per second of all the engines together.
    pub fn aggregate(&self) -> f64 {
        self.cycles.iter().sum::<u64>() as f64 / self.seconds.max(1e-9)
    }

    /// An engine's mean cycle, ns (the wall time over its cycles, averaged over engines).
    pub fn cycle_ns(&self) -> f64 {
        self.threads as f64 * self.seconds * 1e9 / self.cycles.iter().sum::<u64>().max(1) as f64
    }
}

/// What the study measured.
#[derive(Clone, Debug, Default)]
pub struct HostBench {
    /// The ceiling of each (graph, thread count).
    pub ceiling: Vec<CeilingPoint>,
    /// Offline points (partitioned with more instances than threads is refused and absent).
    pub offline: Vec<OfflinePoint>,
    /// Real-time runs (per graph, mode and buffer, N grows until the first miss).
    pub realtime: Vec<RtPoint>,
    /// (graph, mode, N, reason, threads): what the host refused, with its reason.
    pub refused: Vec<(String, Mode, usize, String, usize)>,
}

impl HostBench {
    /// The largest N that ran with no miss, per (graph, threads, mode, buffer).
    pub fn max_held(&self) -> BTreeMap<(String, usize, &'static str, usize), usize> {
        let mut m = BTreeMap::new();
        for p in &self.realtime {
            let e = m
                .entry((p.graph.clone(), p.threads, p.mode.name(), p.buffer))
                .or_insert(0);
            if p.missed() == 0 {
                *e = (*e).max(p.n);
            }
        }
        m
    }

    /// The offline point of (graph, mode, n) at `threads` threads.
    pub fn offline_point(
        &self,
        graph: &str,
        threads: usize,
        mode: Mode,
        n: usize,
    ) -> Option<&OfflinePoint> {
        self.offline
            .iter()
            .find(|p| p.graph == graph && p.threads == threads && p.mode == mode && p.n == n)
    }

    /// The ceiling of (graph, threads).
    pub fn ceiling_of(&self, graph: &str, threads: usize) -> Option<&CeilingPoint> {
        self.ceiling
            .iter()
            .find(|c| c.graph == graph && c.threads == threads)
    }

    /// Of the threads' time in the cycles' parallel part, the share spent running units
    /// (the rest: looking for work and waiting for the others).
    pub fn busy_share(p: &OfflinePoint) -> f64 {
        p.shares_ns.iter().sum::<f64>() / (p.threads as f64 * p.parallel_ns).max(1e-9)
    }

    /// Node-time inflation: an instance's mean share of the cycle (its units' time, all
    /// threads together) over a sequential engine's cycle in the ceiling.
    pub fn inflation(&self, p: &OfflinePoint) -> Option<f64> {
        let c = self.ceiling_of(&p.graph, p.threads)?;
        let mean = p.shares_ns.iter().sum::<f64>() / p.shares_ns.len().max(1) as f64;
        Some(mean / c.cycle_ns().max(1e-9))
    }

    /// An offline point's aggregate as a fraction of the ceiling at its thread count.
    pub fn fraction(&self, p: &OfflinePoint) -> Option<f64> {
        self.ceiling_of(&p.graph, p.threads)
            .map(|c| p.aggregate() / c.aggregate().max(1e-9))
    }
}

fn start(
    c: &HostBenchConfig,
    threads: usize,
    mode: Mode,
    backend: HostBackend,
    block: usize,
) -> Result<Host, BenchError> {
    let options = HostOptions {
        backend,
        rate: c.rate,
        block,
        threads,
        mode,
        // Separate mode as n independent engines: work stealing on every graph, not measured
        // at each load.
        executor: match mode {
            Mode::Separate if threads > 1 => GraphExecutor::Kind(ExecutorKind::Ws),
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
    };
    Host::with_registry(options, c.registry.clone()).map_err(|e| BenchError::Failed(e.to_string()))
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
        &c.registry,
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
    let total = c.threads.len()
        * graphs.len()
        * (1 + c.modes.len() * c.instances.len() * (1 + c.buffers.len()));
    progress.event(Event::Start {
        total: total as u64,
    });
    for &threads in &c.threads {
        for (name, graph) in graphs {
            progress.event(Event::Step(&format!("ceiling {name} T={threads}")));
            out.ceiling.push(ceiling(c, name, graph, threads)?);
            progress.event(Event::StepDone);
            run_graph(c, threads, name, graph, &mut out, progress)?;
        }
    }
    progress.event(Event::Finished);
    Ok(out)
}

/// The ceiling of `graph` at `threads` threads ([`CeilingPoint`]): each engine is built on
/// its own thread (its buffers in its own core's memory), checked against the first
/// engine's output for the first cycles, then all start together and run cycles until
/// the wall time of an offline point has passed.
fn ceiling(
    c: &HostBenchConfig,
    name: &str,
    graph: &TaskGraph,
    threads: usize,
) -> Result<CeilingPoint, BenchError> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Barrier};
    const CHECKED: usize = 3;
    let cores = fugue_exec::placement::allowed_cores();
    let barrier = Arc::new(Barrier::new(threads + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (graph, barrier, stop) = (graph.clone(), barrier.clone(), stop.clone());
            let registry = c.registry.clone();
            let core = cores[i % cores.len()];
            let (rate, block) = (c.rate as f64, c.offline_buffer);
            std::thread::spawn(move || -> Result<(Vec<u64>, u64), String> {
                let _ = fugue_exec::placement::pin_current(core);
                let built = Engine::build(
                    &graph,
                    &registry,
                    rate,
                    block,
                    &ExecutorChoice::default(),
                    false,
                );
                let mut hashes = Vec::with_capacity(CHECKED);
                let mut engine = match built {
                    Ok((mut e, _)) => {
                        for _ in 0..CHECKED {
                            e.run_cycle();
                            hashes.push(e.plan.output_hash());
                        }
                        Ok(e)
                    }
                    Err(e) => Err(e.to_string()),
                };
                // Every engine meets the others here, built or not, so that none waits for
                // ever.
                barrier.wait();
                let mut cycles = 0u64;
                if let Ok(e) = engine.as_mut() {
                    // Relaxed: a stop request; nothing is published with it.
                    while !stop.load(Ordering::Relaxed) {
                        e.run_cycle();
                        cycles += 1;
                    }
                }
                engine.map(|_| (hashes, cycles))
            })
        })
        .collect();
    barrier.wait();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(c.offline_seconds));
    stop.store(true, Ordering::Relaxed);
    let mut cycles = Vec::with_capacity(threads);
    let mut first: Option<Vec<u64>> = None;
    for h in handles {
        let (hashes, n) = h
            .join()
            .map_err(|_| BenchError::Failed("a ceiling engine panicked".into()))?
            .map_err(BenchError::Failed)?;
        match &first {
            None => first = Some(hashes),
            Some(f) if *f != hashes => {
                return Err(BenchError::Failed(format!(
                    "{name}: the ceiling's engines disagree on the first {CHECKED} cycles"
                )))
            }
            Some(_) => {}
        }
        cycles.push(n);
    }
    let seconds = t0.elapsed().as_secs_f64();
    Ok(CeilingPoint {
        graph: name.to_string(),
        threads,
        cycles,
        seconds,
    })
}

/// The offline points and the real-time runs of one graph at `threads` threads.
fn run_graph(
    c: &HostBenchConfig,
    threads: usize,
    name: &str,
    graph: &TaskGraph,
    out: &mut HostBench,
    progress: &mut dyn Progress,
) -> Result<(), BenchError> {
    let name = &name.to_string();
    {
        for &mode in &c.modes {
            for &n in &c.instances {
                progress.event(Event::Step(&format!(
                    "offline {name} T={threads} {mode} N={n}"
                )));
                let mut host = start(c, threads, mode, HostBackend::Offline, c.offline_buffer)?;
                if let Err(reason) = load_n(&mut host, graph, name, n)? {
                    out.refused.push((name.clone(), mode, n, reason, threads));
                    progress.event(Event::StepDone);
                    continue;
                }
                check_mix(&mut host, graph, n, c)?;
                host.run_cycles(20)
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let before: Vec<_> = (0..n)
                    .map(|i| {
                        host.stats(&format!("{name}-{i}"))
                            .map(|s| (s.cycles, s.work_mean_ns))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let h0 = host.host_stats();
                let t0 = Instant::now();
                let mut cycles = 0u64;
                while t0.elapsed().as_secs_f64() < c.offline_seconds || cycles < 20 {
                    host.run_cycles(10)
                        .map_err(|e| BenchError::Failed(e.to_string()))?;
                    cycles += 10;
                }
                let seconds = t0.elapsed().as_secs_f64();
                let h1 = host.host_stats();
                let dc = (h1.cycles - h0.cycles).max(1) as f64;
                let cycle_ns = (h1.mean_ns * h1.cycles as f64 - h0.mean_ns * h0.cycles as f64) / dc;
                let parallel_ns = (h1.parallel_mean_ns * h1.cycles as f64
                    - h0.parallel_mean_ns * h0.cycles as f64)
                    / dc;
                let shares_ns = (0..n)
                    .map(|i| {
                        let s = host.stats(&format!("{name}-{i}")).expect("loaded");
                        let (c0, m0) = before[i];
                        let dc = (s.cycles - c0).max(1) as f64;
                        (s.work_mean_ns * s.cycles as f64 - m0 * c0 as f64) / dc
                    })
                    .collect();
                out.offline.push(OfflinePoint {
                    graph: name.clone(),
                    threads,
                    mode,
                    n,
                    cycles,
                    seconds,
                    shares_ns,
                    cycle_ns,
                    parallel_ns,
                });
                host.finish()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                progress.event(Event::StepDone);
            }
            for &buffer in &c.buffers {
                let mut missed = false;
                for &n in &c.instances {
                    progress.event(Event::Step(&format!(
                        "real time {name} T={threads} {mode} {buffer} frames N={n}"
                    )));
                    if missed {
                        progress.event(Event::StepDone);
                        continue;
                    }
                    let mut host = start(c, threads, mode, HostBackend::Clocked, buffer)?;
                    if let Err(reason) = load_n(&mut host, graph, name, n)? {
                        if !out
                            .refused
                            .iter()
                            .any(|r| r.0 == *name && r.1 == mode && r.2 == n && r.4 == threads)
                        {
                            out.refused.push((name.clone(), mode, n, reason, threads));
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
                        threads,
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
    Ok(())
}

/// Offline figures against N, one panel per (graph, threads), one line per mode: the
/// aggregate throughput, or (with `fraction`) the aggregate as a fraction of the ceiling.
struct Throughput<'a> {
    bench: &'a HostBench,
    panels: Vec<(String, usize)>,
    fraction: bool,
}

fn mode_color(m: Mode) -> plotters::style::RGBColor {
    match m {
        Mode::Shared => plotters::style::RGBColor(0, 114, 178),
        Mode::Partitioned => plotters::style::RGBColor(230, 159, 0),
        Mode::Separate => plotters::style::RGBColor(204, 121, 167),
    }
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
    fn draw<DB: plotters::prelude::DrawingBackend>(self, area: &Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let hi_n = self.points.iter().map(|p| p.1).max().unwrap_or(1) as f64;
        let hi = self.points.iter().map(|p| p.2).fold(0.0, f64::max);
        let mut chart = ChartBuilder::on(area)
            .caption(self.caption, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(self.y_label_size)
            .build_cartesian_2d(0.5..hi_n + 0.5, 0.0..hi.max(1.0) * 1.2)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("instances")
            .y_desc(self.y_desc)
            .draw()
            .map_err(err)?;
        for m in Mode::ALL {
            let col = mode_color(m);
            let line: Vec<(f64, f64)> = self
                .points
                .iter()
                .filter(|p| p.0 == m)
                .map(|p| (p.1 as f64, p.2))
                .collect();
            if line.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(
                    line.clone(),
                    ShapeStyle::from(&col).stroke_width(2),
                ))
                .map_err(err)?
                .label(m.name())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], col.stroke_width(2)));
            chart
                .draw_series(
                    line.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, col.filled())),
                )
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(self.legend)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)
    }
}

impl Figure for Throughput<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((1, self.panels.len().max(1)));
        for (area, (g, t)) in areas.iter().zip(&self.panels) {
            let points = self
                .bench
                .offline
                .iter()
                .filter(|p| &p.graph == g && p.threads == *t)
                .filter_map(|p| {
                    let y = if self.fraction {
                        self.bench.fraction(p)?
                    } else {
                        p.aggregate()
                    };
                    Some((p.mode, p.n, y))
                })
                .collect();
            Panel {
                caption: if self.fraction {
                    format!("{g}, {t} threads: fraction of the ceiling")
                } else {
                    format!("{g}, {t} threads: aggregate throughput")
                },
                y_desc: if self.fraction {
                    "aggregate / k sequential engines side by side"
                } else {
                    "instance-cycles per second"
                },
                y_label_size: 70,
                legend: SeriesLabelPosition::LowerRight,
                points,
            }
            .draw(area)?;
        }
        root.present().map_err(err)
    }
}

/// Deadline misses (percent of the run's cycles) against N, one panel per graph and buffer
/// size, one line per mode; a run with no miss is drawn at 0.
struct Misses<'a> {
    bench: &'a HostBench,
    /// (graph, threads, buffer) of each panel.
    panels: Vec<(String, usize, usize)>,
}

impl Figure for Misses<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((1, self.panels.len().max(1)));
        for (area, (g, t, b)) in areas.iter().zip(&self.panels) {
            Panel {
                caption: format!("{g}, {t} threads, {b} frames: misses"),
                y_desc: "cycles missed or dropped (%)",
                y_label_size: 60,
                legend: SeriesLabelPosition::UpperLeft,
                points: self
                    .bench
                    .realtime
                    .iter()
                    .filter(|p| &p.graph == g && p.threads == *t && p.buffer == *b)
                    .map(|p| {
                        (
                            p.mode,
                            p.n,
                            100.0 * p.missed() as f64 / p.cycles.max(1) as f64,
                        )
                    })
                    .collect(),
            }
            .draw(area)?;
        }
        root.present().map_err(err)
    }
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
    report::refuse_existing(
        dir,
        &[
            "README.md",
            "raw.csv",
            "summary.csv",
            "throughput.svg",
            "ceiling.svg",
            "misses.svg",
        ],
        force,
    )?;
    report::create_dir(dir)?;
    write_csvs(dir, c, b)?;
    let mut panels: Vec<(String, usize)> = Vec::new();
    for p in &b.offline {
        if !panels.iter().any(|(g, t)| g == &p.graph && *t == p.threads) {
            panels.push((p.graph.clone(), p.threads));
        }
    }
    if !b.offline.is_empty() {
        for (name, fraction) in [("throughput", false), ("ceiling", true)] {
            let figure = Throughput {
                bench: b,
                panels: panels.clone(),
                fraction,
            };
            for ext in ["svg", "png"] {
                plot::write(
                    &dir.join(format!("{name}.{ext}")),
                    (560 * panels.len().max(1) as u32, 420),
                    &figure,
                )?;
            }
        }
    }
    if !b.realtime.is_empty() {
        let mut panels: Vec<(String, usize, usize)> = Vec::new();
        for p in &b.realtime {
            if !panels
                .iter()
                .any(|(g, t, k)| g == &p.graph && *t == p.threads && *k == p.buffer)
            {
                panels.push((p.graph.clone(), p.threads, p.buffer));
            }
        }
        let size = (480 * panels.len().max(1) as u32, 400);
        let figure = Misses { bench: b, panels };
        for ext in ["svg", "png"] {
            plot::write(&dir.join(format!("misses.{ext}")), size, &figure)?;
        }
    }
    let mut md = readme_offline(c, b, command);
    if !b.realtime.is_empty() {
        md.push_str("\n## Real time: the largest N held with no deadline miss\n\nA run holds its N when no cycle missed its deadline and none was dropped (an overrun: a cycle that started more than a period late, after which the clock resynchronises).\n\n| graph | threads | mode | buffer | N held |\n|---|---:|---|---:|---:|\n");
        for ((g, t, m, buf), n) in b.max_held() {
            md.push_str(&format!("| {g} | {t} | {m} | {buf} | {n} |\n"));
        }
        md.push_str(
            "\n| graph | threads | mode | buffer | N | cycles | misses | overruns |\n|---|---:|---|---:|---:|---:|---:|---:|\n",
        );
        for p in &b.realtime {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                p.graph, p.threads, p.mode, p.buffer, p.n, p.cycles, p.misses, p.overruns
            ));
        }
    }
    if !b.refused.is_empty() {
        md.push_str("\n## Refused\n\n");
        for (g, m, n, why, t) in &b.refused {
            md.push_str(&format!("- {g}, {t} threads, {m}, N={n}: {why}\n"));
        }
    }
    md.push_str("\nFiles: `raw.csv` (one row per instance and point, and per real-time run), `summary.csv`, `throughput.svg`/`.png` (aggregate against N per mode), `ceiling.svg`/`.png` (the aggregate as a fraction of the ceiling against N per mode, per graph and thread count), `misses.svg`/`.png` (real time: the share of cycles that missed against N, per graph and buffer).\n");
    report::write_atomic(&dir.join("README.md"), md.as_bytes())
}

/// `raw.csv` (one row per instance and point, per ceiling engine, per real-time run) and
/// `summary.csv` (one row per offline point).
fn write_csvs(dir: &Path, c: &HostBenchConfig, b: &HostBench) -> Result<(), BenchError> {
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
        "threads",
    ]);
    for p in &b.ceiling {
        for (i, n) in p.cycles.iter().enumerate() {
            raw.row([
                "ceiling".to_string(),
                p.graph.clone(),
                "seq".to_string(),
                c.offline_buffer.to_string(),
                p.threads.to_string(),
                i.to_string(),
                n.to_string(),
                format!("{:.6}", p.seconds),
                String::new(),
                String::new(),
                String::new(),
                p.threads.to_string(),
            ]);
        }
    }
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
                p.threads.to_string(),
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
            p.threads.to_string(),
        ]);
    }
    raw.write(&dir.join("raw.csv"))?;
    let mut summary = Csv::new(&[
        "graph",
        "mode",
        "instances",
        "aggregate_per_s",
        "vs_n1",
        "fairness",
        "threads",
        "ceiling_per_s",
        "of_ceiling",
        "cycle_us",
        "serial_us",
        "busy_share",
        "inflation",
    ]);
    for p in &b.offline {
        summary.row([
            p.graph.clone(),
            p.mode.name().to_string(),
            p.n.to_string(),
            format!("{:.1}", p.aggregate()),
            format!("{:.3}", p.aggregate() / n1_aggregate(b, p)),
            format!("{:.3}", p.fairness()),
            p.threads.to_string(),
            b.ceiling_of(&p.graph, p.threads)
                .map_or(String::new(), |c| format!("{:.1}", c.aggregate())),
            b.fraction(p).map_or(String::new(), |f| format!("{f:.3}")),
            format!("{:.2}", p.cycle_ns / 1e3),
            format!("{:.2}", (p.cycle_ns - p.parallel_ns) / 1e3),
            format!("{:.3}", HostBench::busy_share(p)),
            b.inflation(p).map_or(String::new(), |f| format!("{f:.3}")),
        ]);
    }
    summary.write(&dir.join("summary.csv"))
}

/// The aggregate of `p`'s graph, threads and mode at N = 1 (NaN when absent).
fn n1_aggregate(b: &HostBench, p: &OfflinePoint) -> f64 {
    b.offline_point(&p.graph, p.threads, p.mode, 1)
        .map(|q| q.aggregate())
        .unwrap_or(f64::NAN)
}

/// The README's head and its offline part: the ceiling, every point against it, and the
/// findings.
fn readme_offline(c: &HostBenchConfig, b: &HostBench, command: &str) -> String {
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
        "Threads: {:?}. Offline: {} frames, {:.2} s of wall time per point. Real time (clocked): {:?} frames, {:.1} s per run; N grows until the first run with a miss.\n\n",
        c.threads, c.offline_buffer, c.offline_seconds, c.buffers, c.rt_seconds
    ));
    md.push_str(
        "Each point is one run (no repeats): read the figures as indications, not as medians.\n\n",
    );
    md.push_str("## The ceiling\n\nAt T threads, the ceiling is T sequential engines of the same graph side by side, each on its own thread pinned to its own core (the cores the host's threads use), run in the same study for the same wall time: what the cores do with no host at all. Every offline point is given as a fraction of it.\n\n| graph | threads | ceiling (instance-cycles/s) | per engine, slowest / fastest |\n|---|---:|---:|---:|\n");
    for p in &b.ceiling {
        let lo = p.cycles.iter().copied().min().unwrap_or(0) as f64;
        let hi = p.cycles.iter().copied().max().unwrap_or(1).max(1) as f64;
        md.push_str(&format!(
            "| {} | {} | {:.0} | {:.2} |\n",
            p.graph,
            p.threads,
            p.aggregate(),
            lo / hi
        ));
    }
    md.push_str("\n## Offline: aggregate throughput (instance-cycles per second)\n\n");
    md.push_str(
        "| graph | threads | mode | N | aggregate/s | of the ceiling | vs N=1 | fairness | cycle µs | serial µs | busy | inflation |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for p in &b.offline {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {} | {:.2} | {:.2} | {:.1} | {:.1} | {:.2} | {} |\n",
            p.graph,
            p.threads,
            p.mode,
            p.n,
            p.aggregate(),
            b.fraction(p).map_or("?".into(), |f| format!("{f:.2}")),
            p.aggregate() / n1_aggregate(b, p),
            p.fairness(),
            p.cycle_ns / 1e3,
            (p.cycle_ns - p.parallel_ns) / 1e3,
            HostBench::busy_share(p),
            b.inflation(p).map_or("?".into(), |f| format!("{f:.2}")),
        ));
    }
    md.push_str("\nCycle: the host's mean cycle; serial: its part on the audio thread alone (commands, mix, statistics); busy: of the threads' time in the parallel part, the share spent running units (the rest is looking for work and waiting); inflation: an instance's units' time per cycle over a sequential engine's cycle in the ceiling (1: the nodes run as fast as alone).\n");
    md.push_str("\n## Findings\n\n");
    for f in findings(b) {
        md.push_str(&format!("- {f}\n"));
    }
    md
}

/// One sentence per (graph, threads, mode): the fraction of the ceiling reached, at the
/// smallest and the largest N of at least the threads (where the host has enough graphs to
/// fill its threads), and the lowest fraction of any N.
pub fn findings(b: &HostBench) -> Vec<String> {
    let mut out = Vec::new();
    let mut keys: Vec<(String, usize, Mode)> = Vec::new();
    for p in &b.offline {
        if !keys
            .iter()
            .any(|k| k.0 == p.graph && k.1 == p.threads && k.2 == p.mode)
        {
            keys.push((p.graph.clone(), p.threads, p.mode));
        }
    }
    for (g, t, m) in keys {
        let points: Vec<(usize, f64)> = b
            .offline
            .iter()
            .filter(|p| p.graph == g && p.threads == t && p.mode == m)
            .filter_map(|p| Some((p.n, b.fraction(p)?)))
            .collect();
        let full: Vec<&(usize, f64)> = points.iter().filter(|p| p.0 >= t).collect();
        let Some(worst) = points.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        let mut line = format!("{g}, {t} threads, {m}:");
        if let (Some(first), Some(last)) = (full.first(), full.last()) {
            line.push_str(&format!(
                " {:.2} of the ceiling at N={}, {:.2} at N={};",
                first.1, first.0, last.1, last.0
            ));
        }
        line.push_str(&format!(" lowest {:.2} (N={}).", worst.1, worst.0));
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_study_runs_and_checks_its_mix() {
        let c = HostBenchConfig {
            instances: vec![1, 2, 3],
            modes: Mode::ALL.to_vec(),
            threads: vec![2],
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
