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
use std::time::{Duration, Instant};

use fugue_engine::host::{
    GraphExecutor, Host, HostBackend, HostOptions, Mode, TenantGrain, BATCH_CYCLES,
};
use fugue_engine::{Engine, ExecutorChoice};
use fugue_exec::ExecutorKind;
use fugue_graph::TaskGraph;

use crate::error::BenchError;
use crate::progress::{Event, Progress};

mod ceiling;
mod figures;
mod write;

pub use write::{findings, write, FILES};

/// The most chains [`heavy_graph`] makes: each holds a reverb of about 110 KiB of delay lines
/// at 48 kHz, which a plan counts twice (the node and its processor), so 1,000 chains fit the
/// 512 MiB a plan may use ([`fugue_exec::MEMORY_LIMIT`]) up to 96 kHz, and the graph is
/// refused before it is built rather than after it took the memory.
pub const MAX_HEAVY_CHAINS: usize = 1000;

/// The pause between a slice of the host and one of the ceiling: longer than the host's
/// workers look for work after a run before they sleep
/// ([`fugue_exec::executors::DEFAULT_IDLE_SPIN`]), so that the engines do not share their
/// cores with them. Counted on neither side.
const IDLE_GAP: Duration = Duration::from_millis(2);

/// The heavier graph of the study: `chains` chains of noise → two biquads → reverb, mixed
/// into a stereo sink. The filters' frequencies step up chain by chain and wrap every 30
/// chains, so that they stay below the Nyquist frequency of 22.05 kHz and above.
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
            800 + 300 * (i % 30),
            1200 + 250 * (i % 30),
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

/// The graph `name` names, with the name the study gives it: `rateau101`, `heavyK` (K
/// chains, 1 to [`MAX_HEAVY_CHAINS`]), `gen:SHAPE:N` (N from 1 to 10,000), or a graph file
/// read by `read` (named by its file's stem).
pub fn named_graph(
    name: &str,
    read: &dyn Fn(&std::path::Path) -> Result<TaskGraph, BenchError>,
) -> Result<(String, TaskGraph), BenchError> {
    let config = |why: String| BenchError::Config(format!("--graphs: `{name}`{why}"));
    if name == "rateau101" {
        return Ok(default_graphs().remove(0));
    }
    if let Some(k) = name
        .strip_prefix("heavy")
        .and_then(crate::shapes::gen_size)
        .map(|k| k as u64)
    {
        // Each chain's reverb counts against the memory a plan may use.
        let max = MAX_HEAVY_CHAINS as u64;
        if k == 0 || k > max {
            return Err(config(format!(
                ": K must be between 1 and {max} (each chain's reverb holds about 220 KiB of the {} MiB a plan may use: docs/limits.md)",
                fugue_exec::MEMORY_LIMIT >> 20
            )));
        }
        return Ok((name.to_string(), heavy_graph(k as usize)));
    }
    if let Some(spec) = name.strip_prefix("gen:") {
        let (shape, size) = spec.split_once(':').unwrap_or((spec, ""));
        let size = crate::shapes::gen_size(size)
            .ok_or_else(|| config(" is not gen:SHAPE:N (N a number)".into()))?;
        if size == 0 || size > 10_000 {
            return Err(config(": N must be between 1 and 10000".into()));
        }
        return match crate::shapes::generated(shape, size) {
            Some(Ok((_, g))) => Ok((name.to_string(), g)),
            Some(Err(e)) => Err(config(format!(": {e}"))),
            None => Err(config(format!(
                ": unknown shape `{shape}`; expected line, diamond or rake"
            ))),
        };
    }
    let p = std::path::Path::new(name);
    if !p.exists() {
        // A file that is not there is bad input (exit code 1), as for the other benchmarks.
        return Err(BenchError::Input(format!(
            "--graphs: `{name}`: no such file; a graph is a file, or one of rateau101, heavyK (K chains, 1 to {MAX_HEAVY_CHAINS}) and gen:SHAPE:N (SHAPE line, diamond or rake)"
        )));
    }
    let g = crate::shapes::not_empty(read(p)?, p)?;
    let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
    Ok((stem.unwrap_or_else(|| name.to_string()), g))
}

/// When the host refused every run: why, in one sentence (`None` when something ran).
pub fn all_refused(bench: &HostBench) -> Option<String> {
    if !(bench.offline.is_empty() && bench.realtime.is_empty()) {
        return None;
    }
    let (g, mode, n, why, t) = bench.refused.first()?;
    Some(format!(
        "the host refused every run ({}; the first: {g}, {} mode, {} on {}: {why}); nothing was written",
        fugue_engine::report::counted(bench.refused.len(), "refusal"),
        mode.name(),
        fugue_engine::report::counted(*n, "instance"),
        fugue_engine::report::counted(*t, "thread"),
    ))
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
    /// Wall time of each offline point, s (and as much of the ceiling beside it).
    pub offline_seconds: f64,
    /// Buffer sizes of the real-time runs (none: no real-time part).
    pub buffers: Vec<usize>,
    /// Length of each real-time run, s.
    pub rt_seconds: f64,
    /// Repeats of the offline part: each repeat measures every offline point again, each
    /// beside its own ceiling, and the README gives the median and the range over repeats.
    pub repeats: usize,
    /// How the host's pool runs the graphs ([`TenantGrain`]).
    pub grain: TenantGrain,
    /// The real-time runs' threads at this SCHED_FIFO priority (the audio thread one
    /// above), as `fugue host --rt` runs them; `None`: normal scheduling.
    pub rt_priority: Option<i32>,
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
            repeats: 1,
            grain: TenantGrain::Auto,
            rt_priority: None,
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
    /// The repeat it belongs to (from 0).
    pub repeat: usize,
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
    /// Graphs handed over from a thread that fell behind during the point
    /// ([`fugue_engine::host::HostStatsSnapshot::handovers`]).
    pub handovers: u64,
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

/// The ceiling of one offline point: `threads` sequential engines of the graph side by side,
/// each on its own thread pinned to its own core, running cycles with no synchronisation
/// between them, for as long as the point's host, in slices alternating with the host's.
#[derive(Clone, Debug, PartialEq)]
pub struct CeilingPoint {
    /// The graph.
    pub graph: String,
    /// Engines (and threads, and cores).
    pub threads: usize,
    /// The repeat it belongs to (from 0).
    pub repeat: usize,
    /// The mode of the point it was measured beside.
    pub mode: Mode,
    /// The instances of the point it was measured beside.
    pub n: usize,
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
    /// The ceiling measured beside each offline point.
    pub ceiling: Vec<CeilingPoint>,
    /// Offline points (partitioned with more instances than threads is refused and absent).
    pub offline: Vec<OfflinePoint>,
    /// Real-time runs (per graph, mode and buffer, N grows until the first miss).
    pub realtime: Vec<RtPoint>,
    /// What the hosts said once (a real-time priority refused, a thread not pinned), each
    /// once.
    pub warnings: Vec<String>,
    /// (graph, mode, N, reason, threads): what the host refused, with its reason.
    pub refused: Vec<(String, Mode, usize, String, usize)>,
}

impl HostBench {
    /// Records that the host refused `n` instances of `name` in `mode` on `threads` threads,
    /// and why: once per point, not once per repeat or buffer size.
    fn refuse(&mut self, name: &str, mode: Mode, n: usize, reason: String, threads: usize) {
        if !self
            .refused
            .iter()
            .any(|r| r.0 == name && r.1 == mode && r.2 == n && r.4 == threads)
        {
            self.refused
                .push((name.to_string(), mode, n, reason, threads));
        }
    }

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

    /// The ceiling measured beside the offline point `p`.
    pub fn ceiling_of(&self, p: &OfflinePoint) -> Option<&CeilingPoint> {
        self.ceiling.iter().find(|c| {
            c.graph == p.graph
                && c.threads == p.threads
                && c.repeat == p.repeat
                && c.mode == p.mode
                && c.n == p.n
        })
    }

    /// The ceilings of (graph, threads), one per offline point.
    pub fn ceilings(&self, graph: &str, threads: usize) -> Vec<&CeilingPoint> {
        self.ceiling
            .iter()
            .filter(|c| c.graph == graph && c.threads == threads)
            .collect()
    }

    /// One summary per (graph, threads, mode, N), in the order they were first measured:
    /// medians over the repeats, and the range of the fraction of the ceiling.
    pub fn summaries(&self) -> Vec<Summary> {
        let mut keys: Vec<(&str, usize, Mode, usize)> = Vec::new();
        for p in &self.offline {
            let k = (p.graph.as_str(), p.threads, p.mode, p.n);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys.into_iter()
            .map(|(g, t, m, n)| {
                let ps: Vec<&OfflinePoint> = self
                    .offline
                    .iter()
                    .filter(|p| p.graph == g && p.threads == t && p.mode == m && p.n == n)
                    .collect();
                let of = |f: &dyn Fn(&OfflinePoint) -> Option<f64>| {
                    let v: Vec<f64> = ps.iter().filter_map(|p| f(p)).collect();
                    median(&v)
                };
                let fractions: Vec<f64> = ps.iter().filter_map(|p| self.fraction(p)).collect();
                let ceilings: Vec<f64> = ps
                    .iter()
                    .filter_map(|p| self.ceiling_of(p).map(|c| c.aggregate()))
                    .collect();
                Summary {
                    graph: g.to_string(),
                    threads: t,
                    mode: m,
                    n,
                    repeats: ps.len(),
                    ceiling: median(&ceilings),
                    aggregate: of(&|p| Some(p.aggregate())),
                    fraction: median(&fractions),
                    fraction_min: fractions.iter().copied().reduce(f64::min),
                    fraction_max: fractions.iter().copied().reduce(f64::max),
                    fairness: of(&|p| Some(p.fairness())).unwrap_or(f64::NAN),
                    cycle_ns: of(&|p| Some(p.cycle_ns)).unwrap_or(f64::NAN),
                    serial_ns: of(&|p| Some(p.cycle_ns - p.parallel_ns)).unwrap_or(f64::NAN),
                    busy: of(&|p| Some(HostBench::busy_share(p))).unwrap_or(f64::NAN),
                    inflation: of(&|p| self.inflation(p)),
                    handovers_per_s: of(&|p| Some(p.handovers as f64 / p.seconds.max(1e-9)))
                        .unwrap_or(f64::NAN),
                }
            })
            .collect()
    }

    /// Of the threads' time in the cycles' parallel part, the share spent running units
    /// (the rest: looking for work and waiting for the others).
    pub fn busy_share(p: &OfflinePoint) -> f64 {
        p.shares_ns.iter().sum::<f64>() / (p.threads as f64 * p.parallel_ns).max(1e-9)
    }

    /// Node-time inflation: an instance's mean share of the cycle (its units' time, all
    /// threads together) over a sequential engine's cycle in the ceiling.
    pub fn inflation(&self, p: &OfflinePoint) -> Option<f64> {
        let c = self.ceiling_of(p)?;
        let mean = p.shares_ns.iter().sum::<f64>() / p.shares_ns.len().max(1) as f64;
        Some(mean / c.cycle_ns().max(1e-9))
    }

    /// An offline point's aggregate as a fraction of the ceiling measured beside it.
    pub fn fraction(&self, p: &OfflinePoint) -> Option<f64> {
        self.ceiling_of(p)
            .map(|c| p.aggregate() / c.aggregate().max(1e-9))
    }
}

/// An offline point over its repeats: medians, and the range of the fraction of the ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The graph.
    pub graph: String,
    /// Threads of the host.
    pub threads: usize,
    /// The mode.
    pub mode: Mode,
    /// Instances.
    pub n: usize,
    /// Repeats measured.
    pub repeats: usize,
    /// Median aggregate, instance-cycles per second.
    pub aggregate: Option<f64>,
    /// Median aggregate of the ceilings measured beside the point, instance-cycles per
    /// second.
    pub ceiling: Option<f64>,
    /// Median fraction of the ceiling (each repeat against its own ceiling).
    pub fraction: Option<f64>,
    /// Lowest fraction of the ceiling over the repeats.
    pub fraction_min: Option<f64>,
    /// Highest fraction of the ceiling over the repeats.
    pub fraction_max: Option<f64>,
    /// Median fairness.
    pub fairness: f64,
    /// Median host cycle, ns.
    pub cycle_ns: f64,
    /// Median serial part of the cycle (the audio thread alone), ns.
    pub serial_ns: f64,
    /// Median busy share ([`HostBench::busy_share`]).
    pub busy: f64,
    /// Median node-time inflation ([`HostBench::inflation`]).
    pub inflation: Option<f64>,
    /// Median hand-overs per second ([`OfflinePoint::handovers`]).
    pub handovers_per_s: f64,
}

/// The median of `v` ([`crate::stats::median`]); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| crate::stats::median(v))
}

fn start(
    c: &HostBenchConfig,
    threads: usize,
    mode: Mode,
    backend: HostBackend,
    block: usize,
) -> Result<Host, BenchError> {
    let clocked = matches!(backend, HostBackend::Clocked);
    let options = HostOptions {
        backend,
        rate: c.rate,
        block,
        threads,
        mode,
        grain: c.grain,
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
            if clocked {
                o.placement.rt_priority = c.rt_priority;
            }
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
            // The host's advice is its shell's; a benchmark loads no fewer graphs unless
            // told to.
            let said = e.to_string();
            // What one instance holds, from the first one loaded: the figure to size N by
            // (the host's own sentence can only say what the refused one needs at least).
            let each = host
                .list()
                .first()
                .map(|g| {
                    format!(
                        " (each instance holds {}, so {n} hold about {})",
                        fugue_exec::size_in_words(g.memory),
                        fugue_exec::size_in_words(g.memory.saturating_mul(n))
                    )
                })
                .unwrap_or_default();
            let said = match said.strip_suffix("; unload a graph first") {
                Some(why) => format!(
                    "{why}: instance {} of {n} does not fit{each}; ask for fewer with --instances",
                    i + 1
                ),
                None => said,
            };
            return Ok(Err(said));
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
    let repeats = c.repeats.max(1);
    let total = c.threads.len()
        * graphs.len()
        * (repeats * (1 + c.modes.len() * c.instances.len())
            + c.modes.len() * c.instances.len() * c.buffers.len());
    progress.event(Event::Start {
        total: total as u64,
    });
    for &threads in &c.threads {
        for (name, graph) in graphs {
            // Each repeat builds the ceiling's engines, and each of its points is measured
            // in slices alternating with them (`offline_points`).
            for repeat in 0..repeats {
                let r = if repeats > 1 {
                    format!(" (repeat {}/{repeats})", repeat + 1)
                } else {
                    String::new()
                };
                progress.event(Event::Step(&format!("ceiling {name} T={threads}{r}")));
                let engines = ceiling::Ceiling::start(c, name, graph, threads)?;
                progress.event(Event::StepDone);
                // The engines' threads end when `engines` is dropped, whatever happens.
                offline_points(
                    c, threads, name, graph, repeat, &engines, &mut out, progress,
                )?;
            }
            realtime_points(c, threads, name, graph, &mut out, progress)?;
        }
    }
    progress.event(Event::Finished);
    Ok(out)
}

/// Why the host would refuse `n` instances in `mode` on `threads` threads before any is
/// loaded: partitioned mode gives each graph at least one thread of its own. Said in the
/// study's words (its flags), not the host's (its commands, `unload`, `--mode`).
fn refused_up_front(mode: Mode, n: usize, threads: usize) -> Option<String> {
    (mode == Mode::Partitioned && n > threads).then(|| {
        format!(
            "partitioned mode gives each instance at least one thread of its own, and N={n} is more than {}; add a thread count to --threads, or keep N in --instances within the threads",
            fugue_engine::report::counted(threads, "thread")
        )
    })
}

/// How many slices of the host, and as many of the ceiling, an offline point of `seconds`
/// is measured in: slices of about 50 ms, 2 to 20.
pub fn slices_of(seconds: f64) -> usize {
    ((seconds / 0.05).round() as usize).clamp(2, 20)
}

/// The offline points of one graph at `threads` threads, in repeat `repeat`, each measured
/// in slices that alternate with the ceiling's `engines`.
#[allow(clippy::too_many_arguments)]
fn offline_points(
    c: &HostBenchConfig,
    threads: usize,
    name: &str,
    graph: &TaskGraph,
    repeat: usize,
    engines: &ceiling::Ceiling,
    out: &mut HostBench,
    progress: &mut dyn Progress,
) -> Result<(), BenchError> {
    let name = &name.to_string();
    {
        for &mode in &c.modes {
            for &n in &c.instances {
                if let Some(reason) = refused_up_front(mode, n, threads) {
                    // Said as not run, not as a step that ran.
                    progress.event(Event::Step(&format!(
                        "offline {name} T={threads} {mode} N={n}: not run (more instances than threads)"
                    )));
                    out.refuse(name, mode, n, reason, threads);
                    progress.event(Event::StepDone);
                    continue;
                }
                progress.event(Event::Step(&format!(
                    "offline {name} T={threads} {mode} N={n}"
                )));
                let mut host = start(c, threads, mode, HostBackend::Offline, c.offline_buffer)?;
                if let Err(reason) = load_n(&mut host, graph, name, n)? {
                    out.refuse(name, mode, n, reason, threads);
                    progress.event(Event::StepDone);
                    continue;
                }
                check_mix(&mut host, graph, n, c)?;
                let warm = Instant::now();
                host.run_cycles(20)
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let per_cycle = warm.elapsed().as_secs_f64() / 20.0;
                let before: Vec<_> = (0..n)
                    .map(|i| {
                        host.stats(&format!("{name}-{i}"))
                            .map(|s| (s.cycles, s.work_mean_ns))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                // The point's time in slices, the host's and the ceiling's in turn (host,
                // ceiling, ceiling, host, host, ...: each side's slices are centred alike
                // in the stretch), so that a slow spell of the machine, which on a VM comes
                // and goes over seconds, weighs on both sides of the fraction alike.
                let slices = slices_of(c.offline_seconds);
                let slice = c.offline_seconds / slices as f64;
                // Cycles per call: as many as the host runs in a row (its runs end at a
                // call's end), or half a slice at the warm-up's pace; at least enough for
                // the point to run 20 cycles in all (a slice runs one call at least, so a
                // graph of slow cycles runs longer than the slice).
                let least = 20u64.div_ceil(slices as u64) as f64;
                let chunk =
                    (slice / 2.0 / per_cycle.max(1e-9)).clamp(least, BATCH_CYCLES as f64) as u64;
                let h0 = host.host_stats();
                let before_ceiling = engines.cycles();
                let (mut seconds, mut ceiling_seconds, mut cycles) = (0.0, 0.0, 0u64);
                for k in 0..slices {
                    for host_now in [k % 2 == 0, k % 2 == 1] {
                        if host_now {
                            let t0 = Instant::now();
                            let mut ran = 0u64;
                            while t0.elapsed().as_secs_f64() < slice || ran == 0 {
                                host.run_cycles(chunk)
                                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                                ran += chunk;
                            }
                            seconds += t0.elapsed().as_secs_f64();
                            cycles += ran;
                            // The host's workers look for work a while after a run, then
                            // sleep: the engines start after that.
                            std::thread::sleep(IDLE_GAP);
                        } else {
                            ceiling_seconds += engines.slice(slice)?;
                        }
                    }
                }
                let h1 = host.host_stats();
                let engine_cycles: Vec<u64> = engines
                    .cycles()
                    .iter()
                    .zip(&before_ceiling)
                    .map(|(a, b)| a - b)
                    .collect();
                if engine_cycles.contains(&0) {
                    return Err(BenchError::Failed(format!(
                        "{name}: an engine of the ceiling ran no cycle in {ceiling_seconds:.3} s, so there is no ceiling to compare with; give the points more time (--offline-seconds)"
                    )));
                }
                out.ceiling.push(CeilingPoint {
                    graph: name.clone(),
                    threads,
                    repeat,
                    mode,
                    n,
                    cycles: engine_cycles,
                    seconds: ceiling_seconds,
                });
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
                    repeat,
                    cycles,
                    seconds,
                    shares_ns,
                    cycle_ns,
                    parallel_ns,
                    handovers: h1.handovers - h0.handovers,
                });
                host.finish()
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                progress.event(Event::StepDone);
            }
        }
    }
    Ok(())
}

/// The real-time runs of one graph at `threads` threads: per mode and buffer size, N grows
/// until the first run with a miss.
fn realtime_points(
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
            for &buffer in &c.buffers {
                let mut missed = false;
                for &n in &c.instances {
                    let refused = refused_up_front(mode, n, threads);
                    // A point not run is said as such (after a smaller N missed deadlines,
                    // or refused).
                    let not_run = if missed {
                        ": not run (a smaller N missed deadlines or was refused)"
                    } else if refused.is_some() {
                        ": not run (more instances than threads)"
                    } else {
                        ""
                    };
                    progress.event(Event::Step(&format!(
                        "real time {name} T={threads} {mode} {buffer} frames N={n}{not_run}"
                    )));
                    if missed {
                        progress.event(Event::StepDone);
                        continue;
                    }
                    if let Some(reason) = refused {
                        out.refuse(name, mode, n, reason, threads);
                        missed = true;
                        progress.event(Event::StepDone);
                        continue;
                    }
                    let mut host = start(c, threads, mode, HostBackend::Clocked, buffer)?;
                    for w in host.warnings() {
                        if !out.warnings.contains(w) {
                            out.warnings.push(w.clone());
                        }
                    }
                    if let Err(reason) = load_n(&mut host, graph, name, n)? {
                        out.refuse(name, mode, n, reason, threads);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_partitioned_instances_than_threads_are_refused_in_the_studys_words() {
        assert_eq!(refused_up_front(Mode::Partitioned, 2, 2), None);
        assert_eq!(refused_up_front(Mode::Shared, 8, 2), None);
        let why = refused_up_front(Mode::Partitioned, 3, 2).unwrap();
        assert!(
            why.contains("N=3 is more than 2 threads") && why.contains("--instances"),
            "{why}"
        );
    }

    /// The largest heavy graph allowed is one a plan accepts at 48 kHz: its filters below
    /// the Nyquist frequency, its reverbs within the plan's memory.
    #[test]
    fn the_largest_heavy_graph_compiles() {
        let g = heavy_graph(MAX_HEAVY_CHAINS);
        let plan = fugue_exec::Plan::compile(
            &g,
            &fugue_dsp::Registry::with_builtin_kinds(),
            &fugue_exec::CompileOptions {
                sample_rate: 48_000.0,
                block: 256,
                ..Default::default()
            },
        );
        assert!(plan.is_ok(), "{:?}", plan.err());
    }

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
        // Every point has the ceiling measured beside it, and only it.
        assert_eq!(b.ceiling.len(), b.offline.len());
        for p in &b.offline {
            let beside = b.ceiling_of(p).expect("a ceiling beside every point");
            assert!(
                beside.aggregate() > 0.0 && beside.seconds > 0.0,
                "{beside:?}"
            );
            assert!(beside.cycles.iter().all(|&n| n > 0), "{beside:?}");
        }
        let dir = std::env::temp_dir().join(format!("fugue-bench-host-{}", std::process::id()));
        write(&dir, &c, &b, "test", true).unwrap();
        let raw = std::fs::read_to_string(dir.join("raw.csv")).unwrap();
        let header: Vec<&str> = raw.lines().next().unwrap().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let ceiling_rows: Vec<Vec<&str>> = raw
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|r| r[at("phase")] == "ceiling")
            .collect();
        // Two engines per point, each row naming the point it was measured beside.
        assert_eq!(ceiling_rows.len(), 2 * b.offline.len());
        assert!(ceiling_rows
            .iter()
            .any(|r| r[at("point_mode")] == "partitioned" && r[at("point_instances")] == "2"));
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
        // Written over by a study with no real-time part: no misses plot is left from the
        // earlier one, nor named by the README.
        let offline_only = HostBench {
            realtime: Vec::new(),
            ..b.clone()
        };
        write(&dir, &c, &offline_only, "test", true).unwrap();
        for f in ["misses.svg", "misses.png"] {
            assert!(!dir.join(f).exists(), "{f}");
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(!readme.contains("misses.svg"), "{readme}");
        assert!(dir.join("ceiling.svg").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// With repeats, each repeat measures its own ceiling and every point is judged against
    /// it; the summaries give the median and the range, and `summary.csv` says how many
    /// repeats each row holds. Whole tenants give the same mix (checked by the study).
    #[test]
    fn repeats_give_medians_and_ranges() {
        let c = HostBenchConfig {
            instances: vec![2],
            modes: vec![Mode::Shared],
            threads: vec![2],
            offline_seconds: 0.02,
            buffers: Vec::new(),
            repeats: 3,
            grain: TenantGrain::Whole,
            ..HostBenchConfig::default()
        };
        let graphs = vec![("heavy2".to_string(), heavy_graph(2))];
        let b = run(&c, &graphs, &mut crate::NoProgress).unwrap();
        assert_eq!(b.ceiling.len(), 3);
        assert_eq!(b.offline.len(), 3);
        assert_eq!(
            b.offline.iter().map(|p| p.repeat).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        let s = b.summaries();
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.repeats, 3);
        let (lo, mid, hi) = (
            s.fraction_min.unwrap(),
            s.fraction.unwrap(),
            s.fraction_max.unwrap(),
        );
        assert!(lo <= mid && mid <= hi && lo > 0.0, "{s:?}");
        let each: Vec<f64> = b.offline.iter().map(|p| b.fraction(p).unwrap()).collect();
        assert_eq!(median(&each), Some(mid));
        let dir = std::env::temp_dir().join(format!("fugue-bench-host-r-{}", std::process::id()));
        write(&dir, &c, &b, "test", true).unwrap();
        let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
        let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("repeats"), "3");
        assert_eq!(col("of_ceiling"), format!("{mid:.3}"));
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(
            readme.contains("3 repeats") && readme.contains("Grain: whole"),
            "{readme}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
