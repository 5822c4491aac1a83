//! The multi-graph host: several graphs loaded and unloaded while one cycle clock plays
//! them, every loaded graph run once per cycle and its sinks mixed into the host's outputs
//! with a per-graph gain.
//!
//! - [`Mode::Shared`] (default): one pool of threads, one per core, runs the units of every
//!   loaded graph together each cycle, stealing across graphs
//!   ([`fugue_exec::SharedPool`]).
//! - [`Mode::Partitioned`]: the same pool with its threads split among the graphs; each
//!   graph runs only on its share (refused when graphs outnumber threads).
//! - [`Mode::Separate`]: each graph on its own executor of `threads` threads (measured at
//!   load, or named: [`HostOptions::executor`]), as that many independent engines would run
//!   (the audio thread runs them one after the other).
//!
//! **Live changes.** [`Host::load`] reads and compiles the graph on the control thread (the
//! caller's), measures its cost (a few sequential cycles, then [`fugue_exec::Plan::reset`], so
//! the graph starts fresh), and hands the box to the audio thread through a preallocated
//! lock-free queue; the audio thread adopts it at the next cycle boundary and says at which
//! cycle. [`Host::unload`] asks for its removal; the audio thread sends the box back and the
//! control thread frees it. The audio thread never allocates, frees, locks or waits for the
//! control thread. A graph whose processor panics is silenced (and no longer run); the others
//! play on.
//!
//! **The mix is exact.** A graph adopted at cycle `a` and removed at cycle `r` contributes,
//! in cycles `a..r`, cycles `0..r - a` of its solo render; the mix adds the graphs in load
//! order, starting from silence. So the mix is, bit for bit, that sum (`tests/host.rs`).
//!
//! **Admission.** Each graph's cost is measured at load; `load` warns
//! ([`LoadReport::warning`]) when the predicted cycle passes 80% of the period, and refuses
//! with [`HostOptions::strict`].
//!
//! **Pipelining.** With [`HostOptions::pipeline`], every graph is compiled with its buffer
//! cut into sub-blocks ([`fugue_exec::CompileOptions::pipeline`]), its chains cut into as
//! many segments as the threads it runs on (the pool's in `shared` mode, its share in
//! `partitioned` mode, its executor's in `separate` mode); [`Pipeline::Auto`] chooses per
//! graph ([`Pipeline::choose`]). The output is the same, sample for sample. A graph that
//! cannot be pipelined (it changes rates) loads unpipelined and [`LoadReport::pipeline_note`]
//! says why.
//!
//! **Executors.** In `separate` mode each graph runs on an executor of its own
//! ([`HostOptions::executor`]): a named one on `threads` threads, or (the default)
//! [`GraphExecutor::Auto`]: at each load the candidates are measured on the graph on the
//! control thread, on a plan of their own, within [`HostOptions::auto_budget`]
//! ([`crate::auto::choose`], as `render`/`run` do, paced at the period under a clock), and the
//! fastest that uses at most `threads` threads is kept ([`LoadReport::auto`] says what it
//! measured). In the pool modes the executor is the pool: only `Auto` is accepted there.
//!
//! **JACK buffer-size changes** are followed: [`Host::poll`] (called by every command, by
//! [`Host::wait`], and by an idle shell) compiles every loaded graph again at the new size and
//! hands the whole set to the process callback, which adopts it at a cycle boundary; the
//! graphs restart from their first sample at the new size (see `jack.rs`).

mod audio;
pub mod command;
mod jack;
mod stats;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fugue_dsp::Registry;
use fugue_exec::executors::multi::MAX_TENANTS;
use fugue_exec::{
    CompileOptions, ExecOptions, ExecutorKind, Plan, SeqExecutor, SharedPool, Tenant,
};
use fugue_graph::TaskGraph;
use thiserror::Error;

use audio::{FromAudio, GraphSet, HostAudio, Queues, Runtime, Slot, ToAudio};
use stats::{GraphStats, HostStats};
pub use stats::{GraphStatsSnapshot, HostStatsSnapshot};

use crate::blocks::{block_channel, BlockReceiver};
use crate::{ExecutorChoice, Pipeline};
use fugue_exec::Executor as _;

/// How the loaded graphs share the threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// One pool, one thread per core, all graphs' tasks together.
    #[default]
    Shared,
    /// The threads split among the graphs.
    Partitioned,
    /// One executor of `threads` threads per graph.
    Separate,
}

impl Mode {
    /// Every mode, in the order reports list them.
    pub const ALL: [Mode; 3] = [Mode::Shared, Mode::Partitioned, Mode::Separate];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Partitioned => "partitioned",
            Mode::Separate => "separate",
        }
    }

    /// The mode of a command-line name.
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which executor runs each graph that has one of its own (`separate` mode).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphExecutor {
    /// `separate` mode: chosen at each load by measuring the candidates on the graph (see the
    /// module's documentation). `shared` and `partitioned` modes: the host's pool, the only
    /// executor they have.
    #[default]
    Auto,
    /// This executor on [`HostOptions::threads`] threads (`separate` mode only).
    Kind(ExecutorKind),
}

impl std::fmt::Display for GraphExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphExecutor::Auto => f.write_str("auto"),
            GraphExecutor::Kind(k) => write!(f, "{k}"),
        }
    }
}

/// How long the measurements of [`GraphExecutor::Auto`] take at most per load, by default:
/// the trials run on the control thread while the loaded graphs play, and on a machine of few
/// cores they compete with the audio thread (see `docs/host.md`, "Executors").
pub const AUTO_BUDGET: Duration = Duration::from_millis(100);

/// What paces the host's cycles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostBackend {
    /// No clock: cycles run on the control thread, as fast as possible, while it waits
    /// ([`Host::wait`]). Deterministic.
    #[default]
    Offline,
    /// An audio thread woken every period by absolute-time sleeps.
    Clocked,
    /// A JACK client: the server's rate and buffer size, one output port per channel.
    Jack {
        /// The client's name.
        client_name: String,
        /// Connect the output ports to the system's playback ports.
        connect: bool,
        /// Give each graph its own output ports too (`NAME_out_1`, ...: its sinks with its
        /// gain), registered at load and removed at unload; the mix stays on `out_N`.
        per_graph_ports: bool,
    },
}

/// How to start a host.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// What paces the cycles.
    pub backend: HostBackend,
    /// Sample rate, Hz.
    pub rate: u32,
    /// Frames per cycle.
    pub block: usize,
    /// Threads of the pool (shared, partitioned) or of each graph's executor (separate),
    /// the audio thread included.
    pub threads: usize,
    /// How the graphs share the threads.
    pub mode: Mode,
    /// Output channels of the mix.
    pub channels: usize,
    /// Refuse a graph whose predicted cycle passes 80% of the period.
    pub strict: bool,
    /// Record the mix to this WAV file (32-bit float).
    pub record: Option<PathBuf>,
    /// Run nodes of unknown kind as silence.
    pub placeholder: bool,
    /// Units of all loaded graphs together at most (the pool's deques are this large).
    pub unit_capacity: usize,
    /// Options of the threads.
    pub exec: ExecOptions,
    /// Sub-blocks per cycle of every graph loaded (pipelining): `Sub(n)`, where `n` divides
    /// the block (1: off), or `Auto` (chosen per graph from its plain plan and the threads
    /// it runs on). See the module's documentation.
    pub pipeline: Pipeline,
    /// Each graph's own executor (`separate` mode; the pool modes accept only `Auto`).
    pub executor: GraphExecutor,
    /// How long [`GraphExecutor::Auto`] measures at most per load ([`AUTO_BUDGET`]).
    pub auto_budget: Duration,
}

impl Default for HostOptions {
    /// Offline, 48 kHz, 256 frames, one thread per core, shared, stereo.
    fn default() -> Self {
        HostOptions {
            backend: HostBackend::Offline,
            rate: 48_000,
            block: 256,
            threads: fugue_exec::placement::available_cores().max(1),
            mode: Mode::Shared,
            channels: 2,
            strict: false,
            record: None,
            placeholder: false,
            unit_capacity: 1 << 16,
            exec: ExecOptions::default(),
            pipeline: Pipeline::Sub(1),
            executor: GraphExecutor::Auto,
            auto_budget: AUTO_BUDGET,
        }
    }
}

impl HostOptions {
    /// The buffer period, ns.
    pub fn period_ns(&self) -> u64 {
        (self.block as u128 * 1_000_000_000 / self.rate.max(1) as u128) as u64
    }
}

/// Why a host command failed. Each is one sentence; the host goes on.
#[derive(Debug, Error)]
pub enum HostError {
    /// The graph file could not be read (names `file:line:col`).
    #[error(transparent)]
    Read(#[from] fugue_graph::ReadError),
    /// The graph could not be compiled.
    #[error(transparent)]
    Compile(#[from] fugue_exec::CompileError),
    /// No graph of that name is loaded.
    #[error("no graph named `{0}` is loaded; `list` shows the loaded graphs")]
    UnknownName(String),
    /// A graph of that name is loaded already.
    #[error("a graph named `{0}` is loaded already; unload it first or choose another name")]
    NameTaken(String),
    /// The host holds as many graphs (or units) as it can.
    #[error("{0}")]
    Full(String),
    /// The graph would not fit in the period (with `--strict`), or the partition.
    #[error("{0}")]
    Refused(String),
    /// Bad options.
    #[error("{0}")]
    Options(String),
    /// The audio thread stopped answering.
    #[error("the audio thread is not answering (it stopped, or is stuck)")]
    AudioGone,
    /// A file or thread could not be created.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
}

/// What [`Host::load`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    /// The host's number for the graph (the mix adds graphs in increasing id).
    pub id: u32,
    /// The first cycle it runs in (its solo cycle 0).
    pub cycle: u64,
    /// Its measured cost per cycle (median of a few sequential cycles), ns.
    pub cost_ns: u64,
    /// The cycle predicted with it, ns.
    pub predicted_ns: u64,
    /// The buffer period, ns.
    pub period_ns: u64,
    /// Said when the predicted cycle passes 80% of the period.
    pub warning: Option<String>,
    /// Sub-blocks per cycle it was compiled with (1: not pipelined).
    pub pipeline: usize,
    /// Why it was not pipelined as asked (it changes rates), when it was not.
    pub pipeline_note: Option<String>,
    /// Its own executor and threads (`separate` mode), as `ws 2t` or `seq`; `None` in the
    /// pool modes.
    pub executor: Option<String>,
    /// With [`GraphExecutor::Auto`] in `separate` mode: what was measured and chosen, one
    /// line.
    pub auto: Option<String>,
}

/// What [`Host::unload`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct UnloadReport {
    /// The graph's id.
    pub id: u32,
    /// The first cycle it no longer ran in.
    pub cycle: u64,
    /// Its statistics at removal.
    pub stats: GraphStatsSnapshot,
}

/// A loaded graph, as [`Host::list`] shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphInfo {
    /// Its name.
    pub name: String,
    /// Its id.
    pub id: u32,
    /// Where it was read from.
    pub file: String,
    /// Its gain, dB.
    pub gain_db: f64,
    /// Its tasks.
    pub tasks: usize,
    /// Its output channels.
    pub channels: usize,
    /// Measured cost per cycle, ns.
    pub cost_ns: u64,
    /// The cycle it was adopted at.
    pub adopted: u64,
    /// Silenced after a panic.
    pub silenced: bool,
    /// Sub-blocks per cycle (1: not pipelined).
    pub pipeline: usize,
    /// Its own executor and threads (`separate` mode), as `ws 2t` or `seq`.
    pub executor: Option<String>,
}

/// An adoption or a removal, in the host's log ([`Host::log`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// Graph `id` (`name`) runs from `cycle` on.
    Adopted {
        /// Its name.
        name: String,
        /// Its id.
        id: u32,
        /// The first cycle it ran in.
        cycle: u64,
    },
    /// Graph `id` ran last in `cycle - 1`.
    Removed {
        /// Its name.
        name: String,
        /// Its id.
        id: u32,
        /// The first cycle it did not run in.
        cycle: u64,
    },
}

/// What a finished host did.
#[derive(Clone, Debug)]
pub struct HostReport {
    /// The whole host's statistics.
    pub stats: HostStatsSnapshot,
    /// Cycles run.
    pub cycles: u64,
    /// Things to say once (pinning or priority refused, ...).
    pub warnings: Vec<String>,
    /// Frames written to the recording.
    pub recorded_frames: u64,
}

struct Entry {
    name: String,
    id: u32,
    file: String,
    gain_db: f64,
    tasks: usize,
    units: usize,
    channels: usize,
    cost_ns: u64,
    adopted: u64,
    stats: Arc<GraphStats>,
    pipeline: usize,
    /// The graph, to compile again at a new buffer size.
    graph: TaskGraph,
    /// Its own executor and threads (`separate` mode).
    executor: Option<(ExecutorKind, usize)>,
}

/// A graph compiled and measured, ready for the audio thread ([`Host::build_slot`]).
struct Built {
    slot: Box<Slot>,
    cost_ns: u64,
    tasks: usize,
    units: usize,
    channels: usize,
    pipeline: usize,
    pipeline_note: Option<String>,
    /// Its own executor and threads.
    executor: Option<(ExecutorKind, usize)>,
    /// What the automatic choice measured, when it chose.
    auto: Option<String>,
}

/// How a graph gets its executor ([`Host::build_slot`]).
#[derive(Clone, Copy, Debug)]
enum ExecutorPlan {
    /// None of its own: it runs on the host's pool.
    Pool,
    /// This one, on this many threads.
    Fixed(ExecutorKind, usize),
    /// Measured now ([`GraphExecutor::Auto`]).
    Measure,
}

impl ExecutorPlan {
    /// The same executor again (compiled again at a new buffer size: not measured again).
    fn again(chosen: Option<(ExecutorKind, usize)>) -> ExecutorPlan {
        match chosen {
            Some((k, t)) => ExecutorPlan::Fixed(k, t),
            None => ExecutorPlan::Pool,
        }
    }
}

/// An executor and its threads as reports name them: `seq`, `ws 2t`.
fn executor_label(kind: ExecutorKind, threads: usize) -> String {
    if threads <= 1 {
        kind.to_string()
    } else {
        format!("{kind} {threads}t")
    }
}

/// Where the audio side lives.
enum Driver {
    /// On the control thread.
    Offline(Box<HostAudio>),
    /// In a JACK client's process callback.
    Jack {
        active: Option<jack::Active>,
        gone: Arc<AtomicBool>,
        /// Buffer-size changes (the size announced, the sets of graphs in transit) and the
        /// request to end the process thread.
        shared: Arc<jack::Shared>,
    },
    /// On its own thread, which hands it back when stopped.
    Thread {
        handle: Option<JoinHandle<Box<HostAudio>>>,
        stop: Arc<AtomicBool>,
    },
    /// Stopped.
    Done,
}

/// The recording's writer thread.
struct Recorder {
    handle: JoinHandle<Result<u64, String>>,
    path: PathBuf,
}

/// The control side of a running host (see the module's documentation).
pub struct Host {
    options: HostOptions,
    /// [`HostOptions::pipeline`] fitted to the block ([`fit_pipeline`]).
    pipeline: Pipeline,
    registry: Registry,
    queues: Arc<Queues>,
    stats: Arc<HostStats>,
    graphs: Vec<Entry>,
    next_id: u32,
    driver: Driver,
    recorder: Option<Recorder>,
    /// The last [`LOG_KEPT`] adoptions and removals (a host that plays for days must not
    /// grow with every load).
    log: std::collections::VecDeque<HostEvent>,
    warnings: Vec<String>,
    /// The buffer size of the set of graphs that the audio thread plays, as far as the
    /// control thread knows (JACK: a set offered at another size may be on its way).
    audio_block: usize,
    /// The buffer size of the set offered to the JACK callback and not yet known to be
    /// adopted.
    pending: Option<usize>,
    /// What happened since [`Host::take_notices`] was last called.
    notices: Vec<String>,
}

/// How many adoptions and removals [`Host::log`] keeps (the oldest go first).
pub const LOG_KEPT: usize = 256;

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("mode", &self.options.mode)
            .field("graphs", &self.graphs.len())
            .finish_non_exhaustive()
    }
}

/// Cycles run to measure a graph's cost at load.
const CALIBRATION_CYCLES: usize = 9;

/// How long the control thread waits for the audio thread to take a command.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

impl Host {
    /// Starts a host with the built-in node kinds.
    pub fn start(options: HostOptions) -> Result<Host, HostError> {
        Host::with_registry(options, Registry::with_builtin_kinds())
    }

    /// Starts a host whose graphs may use the kinds of `registry`.
    pub fn with_registry(options: HostOptions, registry: Registry) -> Result<Host, HostError> {
        let mut options = options;
        if let (GraphExecutor::Kind(k), Mode::Shared | Mode::Partitioned) =
            (options.executor, options.mode)
        {
            return Err(HostError::Options(pool_mode_executor(options.mode, k)));
        }
        let jack_client = match &options.backend {
            HostBackend::Jack { client_name, .. } => {
                let (client, rate, block) = jack::open(client_name)?;
                options.rate = rate;
                options.block = block;
                Some(client)
            }
            _ => None,
        };
        if options.rate == 0 || options.block == 0 || options.threads == 0 {
            return Err(HostError::Options(
                "the sample rate, the buffer size and the threads must be at least 1".into(),
            ));
        }
        if options.channels == 0 {
            return Err(HostError::Options(
                "the host needs at least one output channel".into(),
            ));
        }

        let mut warnings = Vec::new();
        let (pipeline, note) = fit_pipeline(options.pipeline, options.block);
        match (note, jack_client.is_some()) {
            (None, _) => {}
            // JACK chooses the block: the pipeline follows it.
            (Some(note), true) => warnings.push(note),
            (Some(_), false) => {
                let Pipeline::Sub(n) = options.pipeline else {
                    unreachable!("auto always fits")
                };
                return Err(HostError::Options(if n == 0 {
                    "a pipeline of 0 sub-blocks is not possible; give a number of sub-blocks of at least 1 (1 turns pipelining off), or auto".to_string()
                } else {
                    format!(
                        "a pipeline of {n} sub-blocks does not divide the block of {} frames; choose a divisor of the block (1 turns pipelining off), or auto",
                        options.block
                    )
                }));
            }
        }
        let queues = Arc::new(Queues::new());
        let stats = Arc::new(HostStats::new());
        let mut exec = options.exec.clone();
        if options.backend != HostBackend::Offline && exec.period.is_none() {
            exec.period = Some(Duration::from_nanos(options.period_ns()));
        }
        let runtime = match options.mode {
            Mode::Shared | Mode::Partitioned => {
                let pool = SharedPool::new(options.threads, options.unit_capacity, true, &exec);
                warnings.extend(pool.warnings().iter().cloned());
                Runtime::Pool(Box::new(pool))
            }
            Mode::Separate => Runtime::Separate,
        };
        let mut audio = Box::new(HostAudio::new(
            options.mode,
            runtime,
            queues.clone(),
            Box::new(GraphSet::new(
                options.block,
                options.channels,
                options.period_ns(),
            )),
            stats.clone(),
        ));
        let recorder = match &options.record {
            Some(path) => {
                let (tx, rx) = block_channel(options.block, options.channels);
                audio.record = Some(tx);
                audio.record_waits = options.backend == HostBackend::Offline;
                Some(start_recorder(path, rx, options.rate, options.channels)?)
            }
            None => None,
        };
        let driver = match (&options.backend, jack_client) {
            (HostBackend::Jack { connect, .. }, Some(client)) => {
                let shared = Arc::new(jack::Shared::default());
                // Relaxed: read by the control thread only.
                shared.wanted.store(options.block as u32, Ordering::Relaxed);
                let (active, gone, w) =
                    jack::activate(client, audio, options.channels, *connect, shared.clone())?;
                warnings.extend(w);
                Driver::Jack {
                    active: Some(active),
                    gone,
                    shared,
                }
            }
            (HostBackend::Offline, _) => Driver::Offline(audio),
            _ => start_clocked(audio, &options)?,
        };
        Ok(Host {
            audio_block: options.block,
            pending: None,
            notices: Vec::new(),
            options,
            pipeline,
            registry,
            queues,
            stats,
            graphs: Vec::new(),
            next_id: 1,
            driver,
            recorder,
            log: std::collections::VecDeque::with_capacity(LOG_KEPT),
            warnings,
        })
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.options.mode
    }

    /// The options it was started with.
    pub fn options(&self) -> &HostOptions {
        &self.options
    }

    /// The adoptions and removals so far, in order: the last [`LOG_KEPT`] of them.
    pub fn log(&self) -> Vec<HostEvent> {
        self.log.iter().cloned().collect()
    }

    /// Appends to the log, dropping its oldest event when it is full.
    fn note(&mut self, event: HostEvent) {
        if self.log.len() == LOG_KEPT {
            self.log.pop_front();
        }
        self.log.push_back(event);
    }

    /// Things to say once.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Reads `file` and loads it as `name` (see the module's documentation).
    pub fn load(&mut self, name: &str, file: &Path) -> Result<LoadReport, HostError> {
        self.collect();
        self.check_name(name)?;
        let graph = fugue_graph::read::read_file(file, None)?;
        self.load_graph(name, &graph, &file.display().to_string())
    }

    /// Loads `graph` as `name`; `file` is what [`Host::list`] shows as its origin.
    pub fn load_graph(
        &mut self,
        name: &str,
        graph: &TaskGraph,
        file: &str,
    ) -> Result<LoadReport, HostError> {
        self.poll()?;
        self.check_name(name)?;
        if self.graphs.len() >= MAX_TENANTS {
            return Err(HostError::Full(format!(
                "the host holds at most {MAX_TENANTS} graphs; unload one first"
            )));
        }
        if self.options.mode == Mode::Partitioned && self.graphs.len() >= self.options.threads {
            return Err(HostError::Refused(format!(
                "partitioned mode gives each graph at least one of the {} threads, and {} graphs are loaded; unload one, add --threads, or use --mode shared",
                self.options.threads,
                self.graphs.len()
            )));
        }
        let threads = self.threads_of_new_graph();
        let plan = match (self.options.mode, self.options.executor) {
            (Mode::Shared | Mode::Partitioned, _) => ExecutorPlan::Pool,
            (Mode::Separate, GraphExecutor::Auto) => ExecutorPlan::Measure,
            (Mode::Separate, GraphExecutor::Kind(k)) => {
                ExecutorPlan::Fixed(k, if k == ExecutorKind::Seq { 1 } else { threads })
            }
        };
        let stats = Arc::new(GraphStats::new());
        let id = self.next_id;
        let mut built = self.build_slot(graph, id, threads, plan, stats.clone())?;
        let executor = ExecutorPlan::again(built.executor);
        let cost_ns = built.cost_ns;
        let period_ns = self.options.period_ns();
        let predicted_ns = self.predict(cost_ns);
        let warning = (predicted_ns as f64 > 0.8 * period_ns as f64).then(|| {
            format!(
                "with `{name}` the cycle is predicted to take {:.0} µs, {:.0}% of the {:.0} µs period",
                predicted_ns as f64 / 1e3,
                predicted_ns as f64 * 100.0 / period_ns as f64,
                period_ns as f64 / 1e3
            )
        });
        if let (true, Some(w)) = (self.options.strict, &warning) {
            return Err(HostError::Refused(format!("{w}; not loaded (--strict)")));
        }
        built.slot.ports = self.register_ports(name, built.channels)?;
        self.next_id += 1;
        let started = Instant::now();
        let mut slot = built.slot;
        let cycle = loop {
            self.send(ToAudio::Load(slot))?;
            if let Driver::Offline(audio) = &self.driver {
                // Adopted at the start of the next cycle run.
                break audio.cycle;
            }
            let back = loop {
                match self.answer()? {
                    FromAudio::Adopted { id: got, cycle } if got == id => break Ok(cycle),
                    FromAudio::Stale(back) if back.id == id => break Err(back),
                    ev @ FromAudio::Refused(_) => {
                        self.release(ev);
                        return Err(HostError::Full(format!(
                            "the host holds at most {MAX_TENANTS} graphs; unload one first"
                        )));
                    }
                    ev => self.release(ev),
                }
            };
            match back {
                Ok(cycle) => break cycle,
                // Compiled at a buffer size that does not play now: a JACK buffer-size change
                // crossed the load. Once the host follows it, compile again at the new size
                // (or resend, when the new size's set is still on its way).
                Err(back) => {
                    if started.elapsed() > ANSWER_TIMEOUT {
                        self.release(FromAudio::Refused(back));
                        return Err(HostError::AudioGone);
                    }
                    std::thread::sleep(Duration::from_millis(1));
                    self.poll()?;
                    slot = if back.tenant.plan().block() == self.options.block {
                        back
                    } else {
                        let mut back = back;
                        let ports = std::mem::take(&mut back.ports);
                        drop(back);
                        let mut again =
                            self.build_slot(graph, id, threads, executor, stats.clone())?;
                        again.slot.ports = ports;
                        built.cost_ns = again.cost_ns;
                        built.pipeline = again.pipeline;
                        built.pipeline_note = again.pipeline_note;
                        again.slot
                    };
                }
            }
        };
        self.note(HostEvent::Adopted {
            name: name.to_string(),
            id,
            cycle,
        });
        self.graphs.push(Entry {
            name: name.to_string(),
            id,
            file: file.to_string(),
            gain_db: 0.0,
            tasks: built.tasks,
            units: built.units,
            channels: built.channels,
            cost_ns: built.cost_ns,
            adopted: cycle,
            stats,
            pipeline: built.pipeline,
            graph: graph.clone(),
            executor: built.executor,
        });
        Ok(LoadReport {
            id,
            cycle,
            cost_ns: built.cost_ns,
            predicted_ns,
            period_ns,
            warning,
            pipeline: built.pipeline,
            pipeline_note: built.pipeline_note,
            executor: built.executor.map(|(k, t)| executor_label(k, t)),
            auto: built.auto,
        })
    }

    /// Compiles `graph` as graph `id` at the host's block for `threads` threads, checks that
    /// the pool has room for its units, measures its cost (then resets it: it starts fresh)
    /// and builds its own executor when it has one (`separate` mode; chosen by measuring
    /// with [`ExecutorPlan::Measure`]): what the audio thread adopts. Control thread.
    fn build_slot(
        &mut self,
        graph: &TaskGraph,
        id: u32,
        threads: usize,
        executor: ExecutorPlan,
        stats: Arc<GraphStats>,
    ) -> Result<Built, HostError> {
        let mut plan = self.compile(graph, threads)?;
        let units: usize = self
            .graphs
            .iter()
            .filter(|e| e.id != id)
            .map(|e| e.units)
            .sum();
        if units + plan.n_units() > self.options.unit_capacity {
            return Err(HostError::Full(format!(
                "the host's pool holds {} units and this graph has {} more than the room left; unload a graph first",
                self.options.unit_capacity,
                units + plan.n_units() - self.options.unit_capacity
            )));
        }
        let cost_ns = measure_cost(&mut plan);
        let (chosen, auto) = match executor {
            ExecutorPlan::Pool => (None, None),
            ExecutorPlan::Fixed(k, t) => (Some((k, t)), None),
            ExecutorPlan::Measure => {
                let (k, t, line) = self.measure_executors(graph, threads, cost_ns)?;
                (Some((k, t)), Some(line))
            }
        };
        let executor = match chosen {
            Some((kind, threads)) => {
                let choice = ExecutorChoice {
                    kind,
                    threads,
                    options: self.graph_exec_options(),
                    ..ExecutorChoice::default()
                };
                let (e, warnings) =
                    crate::engine::build_executor(graph, &self.registry, &plan, &choice)
                        .map_err(|e| HostError::Options(e.to_string()))?;
                // The pipeline's note goes in the load reply.
                let note = plan.pipeline_note();
                self.warnings
                    .extend(warnings.into_iter().filter(|w| Some(w.as_str()) != note));
                self.warnings.sort();
                self.warnings.dedup();
                Some(e)
            }
            None => None,
        };
        Ok(Built {
            cost_ns,
            tasks: plan.len(),
            units: plan.n_units(),
            channels: plan.n_outputs(),
            pipeline: plan.pipeline(),
            pipeline_note: plan.pipeline_note().map(str::to_string),
            executor: chosen,
            auto,
            slot: Box::new(Slot {
                id,
                tenant: Tenant::new(plan),
                executor,
                gain: 1.0,
                silenced: false,
                stats,
                ports: Vec::new(),
            }),
        })
    }

    /// [`GraphExecutor::Auto`]: measures the candidates on `graph` ([`crate::auto::choose`],
    /// on a plan compiled apart, so that the one that plays starts fresh), paced at the
    /// period under a clock, within [`HostOptions::auto_budget`], and keeps the fastest that
    /// runs on at most `threads` threads (seq unless another gains
    /// [`crate::auto::MIN_GAIN`]). Returns it with the line that says what was measured.
    /// `cost_ns` is the graph's sequential cycle.
    fn measure_executors(
        &self,
        graph: &TaskGraph,
        threads: usize,
        cost_ns: u64,
    ) -> Result<(ExecutorKind, usize, String), HostError> {
        let options = self.graph_exec_options();
        let per_cycle = options
            .period
            .map_or(0, |p| p.as_nanos() as u64)
            .max(cost_ns)
            .max(1);
        let budget = self.options.auto_budget;
        // The automatic choice spends, paced, at most the run it is told of, and offline a
        // twentieth of it: a run of one budget, or of twenty.
        let cycles = match options.period {
            Some(_) => budget.as_nanos() / per_cycle as u128,
            None => 20 * budget.as_nanos() / per_cycle as u128,
        }
        .max(1) as u64;
        let choice = ExecutorChoice {
            auto: true,
            auto_cycles: Some(cycles),
            threads,
            options,
            ..ExecutorChoice::default()
        };
        // Every candidate's trial plan is the host's own compile of the graph (pipelined as
        // the host's --pipeline says) on the candidate's threads.
        let plain = self.compile(graph, 1)?;
        let compile = |_: usize, _: usize, t: usize| {
            self.compile(graph, t).map_err(|e| match e {
                HostError::Compile(e) => crate::choice::BuildError::Compile(e),
                other => crate::choice::BuildError::Executor(fugue_exec::BuildError::BadSchedule(
                    other.to_string(),
                )),
            })
        };
        let (_, mut report) = crate::auto::choose(graph, &self.registry, &compile, &plain, &choice)
            .map_err(|e| HostError::Options(e.to_string()))?;
        drop(plain);
        if let Some(u) = report.untried {
            let c = report.chosen();
            if u != crate::auto::Untried::Short {
                return Ok((c.kind, c.threads, report.line()));
            }
            return Ok((
                c.kind,
                c.threads,
                format!(
                    "executor auto: seq, not measured: {} cycles of {:.0} µs for each candidate do not fit in the {} ms the trials may take (name an executor to choose another)",
                    if choice.options.period.is_some() {
                        crate::auto::MIN_PACED_CYCLES
                    } else {
                        crate::auto::MIN_CYCLES
                    },
                    per_cycle as f64 / 1e3,
                    budget.as_millis()
                ),
            ));
        }
        // Within the host's threads (the candidates go up to the cores).
        report.chosen = crate::auto::keep(&report.candidates, |c| c.threads <= threads);
        let c = report.chosen();
        Ok((c.kind, c.threads, report.line()))
    }

    /// The options of a graph's own executor: the host's, with the period of the block when
    /// a clock paces the cycles.
    fn graph_exec_options(&self) -> ExecOptions {
        let mut exec = self.options.exec.clone();
        if self.options.backend != HostBackend::Offline && exec.period.is_none() {
            exec.period = Some(Duration::from_nanos(self.options.period_ns()));
        }
        exec
    }

    /// The threads a graph loaded now runs on: the pool's (`shared`), its share of them
    /// (`partitioned`: the last of the graphs then loaded), or its executor's (`separate`).
    fn threads_of_new_graph(&self) -> usize {
        let t = self.options.threads.max(1);
        match self.options.mode {
            Mode::Shared | Mode::Separate => t,
            Mode::Partitioned => {
                let n = self.graphs.len() + 1;
                (t - (n - 1) * t / n).max(1)
            }
        }
    }

    /// Compiles `graph` at the host's rate and block, pipelined as
    /// [`HostOptions::pipeline`] says for a graph that runs on `threads` threads.
    fn compile(&self, graph: &TaskGraph, threads: usize) -> Result<Plan, HostError> {
        let compile = |pipeline: usize| {
            Plan::compile(
                graph,
                &self.registry,
                &CompileOptions {
                    sample_rate: self.options.rate as f64,
                    block: self.options.block,
                    placeholder: self.options.placeholder,
                    merge_chains: true,
                    pipeline,
                    pipeline_segments: threads,
                },
            )
        };
        Ok(match self.pipeline {
            Pipeline::Sub(n) => compile(n)?,
            Pipeline::Auto => {
                let plain = compile(1)?;
                match Pipeline::Auto.choose(&plain, threads) {
                    1 => plain,
                    n => compile(n)?,
                }
            }
        })
    }

    /// The cycle predicted with one more graph of cost `cost_ns`, ns.
    fn predict(&self, cost_ns: u64) -> u64 {
        let t = self.options.threads.max(1) as u64;
        let sum: u64 = self.graphs.iter().map(|e| e.cost_ns).sum::<u64>() + cost_ns;
        match self.options.mode {
            Mode::Shared | Mode::Separate => sum.div_ceil(t),
            Mode::Partitioned => {
                // Each graph on about t / n threads.
                let n = self.graphs.len() as u64 + 1;
                let worst = self
                    .graphs
                    .iter()
                    .map(|e| e.cost_ns)
                    .chain([cost_ns])
                    .max()
                    .unwrap_or(0);
                (worst * n).div_ceil(t).max(worst.div_ceil(t))
            }
        }
    }

    fn check_name(&self, name: &str) -> Result<(), HostError> {
        if self.graphs.iter().any(|e| e.name == name) {
            return Err(HostError::NameTaken(name.to_string()));
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Result<usize, HostError> {
        self.graphs
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| HostError::UnknownName(name.to_string()))
    }

    /// Removes graph `name` at the next cycle boundary and frees it here.
    pub fn unload(&mut self, name: &str) -> Result<UnloadReport, HostError> {
        self.poll()?;
        let i = self.index(name)?;
        let id = self.graphs[i].id;
        self.send(ToAudio::Unload(id))?;
        let cycle = loop {
            if let Driver::Offline(audio) = &self.driver {
                // Removed at the start of the next cycle run.
                break audio.cycle;
            }
            match self.answer()? {
                FromAudio::Removed {
                    id: got,
                    cycle,
                    slot,
                } if got == id => {
                    self.release(FromAudio::Removed { id, cycle, slot });
                    break cycle;
                }
                FromAudio::Unknown { id: got } if got == id => {
                    return Err(HostError::UnknownName(name.to_string()))
                }
                ev => self.release(ev),
            }
        };
        let e = self.graphs.remove(i);
        self.note(HostEvent::Removed {
            name: e.name,
            id,
            cycle,
        });
        Ok(UnloadReport {
            id,
            cycle,
            stats: e.stats.snapshot(),
        })
    }

    /// Sets graph `name`'s gain, dB (applied from the next cycle).
    pub fn set_gain(&mut self, name: &str, db: f64) -> Result<(), HostError> {
        if !db.is_finite() {
            return Err(HostError::Options(format!(
                "the gain must be a finite number of dB, not {db}"
            )));
        }
        self.poll()?;
        let i = self.index(name)?;
        self.send(ToAudio::Gain(self.graphs[i].id, gain_of(db)))?;
        self.graphs[i].gain_db = db;
        Ok(())
    }

    /// The loaded graphs, in load order.
    pub fn list(&self) -> Vec<GraphInfo> {
        self.graphs
            .iter()
            .map(|e| GraphInfo {
                name: e.name.clone(),
                id: e.id,
                file: e.file.clone(),
                gain_db: e.gain_db,
                tasks: e.tasks,
                channels: e.channels,
                cost_ns: e.cost_ns,
                adopted: e.adopted,
                silenced: e.stats.snapshot().panics > 0,
                pipeline: e.pipeline,
                executor: e.executor.map(|(k, t)| executor_label(k, t)),
            })
            .collect()
    }

    /// Graph `name`'s statistics.
    pub fn stats(&self, name: &str) -> Result<GraphStatsSnapshot, HostError> {
        Ok(self.graphs[self.index(name)?].stats.snapshot())
    }

    /// The whole host's statistics.
    pub fn host_stats(&self) -> HostStatsSnapshot {
        self.stats.snapshot()
    }

    /// Cycles run so far (the next cycle's number).
    pub fn cycle(&self) -> u64 {
        match &self.driver {
            Driver::Offline(a) => a.cycle,
            _ => self.stats.snapshot().cycles,
        }
    }

    /// Lets the host play for `d`: offline, runs that many cycles' worth now, as fast as
    /// possible; with a clock, sleeps while the audio thread plays.
    pub fn wait(&mut self, d: Duration) -> Result<(), HostError> {
        match &mut self.driver {
            Driver::Offline(_) => {
                let n = (d.as_secs_f64() * self.options.rate as f64 / self.options.block as f64)
                    .round() as u64;
                self.run_cycles(n)?;
                self.collect();
                Ok(())
            }
            Driver::Thread { handle, .. } => {
                let end = Instant::now() + d;
                while Instant::now() < end {
                    if handle.as_ref().is_none_or(|h| h.is_finished()) {
                        return Err(HostError::AudioGone);
                    }
                    std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
                }
                Ok(())
            }
            Driver::Jack { .. } => {
                let end = Instant::now() + d;
                while Instant::now() < end {
                    // Follows a buffer-size change while playing.
                    self.poll()?;
                    std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
                }
                self.poll()
            }
            Driver::Done => Err(HostError::AudioGone),
        }
    }

    /// Services the audio side from the control thread: frees what the audio thread handed
    /// back and, under JACK, follows a buffer-size change (every loaded graph compiled again
    /// at the new size and handed over as one set; see `jack.rs`). Every command calls it,
    /// and so does [`Host::wait`]; a shell that waits for commands calls it while idle.
    /// Commands are never in flight while it runs, so loads and unloads and a change of size
    /// are serialised here.
    pub fn poll(&mut self) -> Result<(), HostError> {
        self.collect();
        let resize = match &self.driver {
            Driver::Jack { gone, shared, .. } => {
                // Relaxed: see `jack::Notifications`.
                if gone.load(Ordering::Relaxed) {
                    return Err(HostError::AudioGone);
                }
                shared.clone()
            }
            _ => return Ok(()),
        };
        if let Some(b) = self.pending {
            if let Some(old) = resize.handoff.collect() {
                // The set of size `b` was adopted.
                self.pending = None;
                self.audio_block = b;
                self.free_set(old);
            }
        }
        // Relaxed: the size alone; the sets travel through the handoff.
        let wanted = resize.wanted.load(Ordering::Relaxed) as usize;
        if let Some(b) = self.pending {
            if b == wanted {
                // On its way.
                return Ok(());
            }
            match resize.handoff.withdraw() {
                // Never adopted: the audio thread still plays at `audio_block`.
                Some(set) => self.free_set(set),
                None => {
                    // Taken just now: the callback retires the old set right after.
                    let start = Instant::now();
                    let old = loop {
                        if let Some(old) = resize.handoff.collect() {
                            break old;
                        }
                        if start.elapsed() > ANSWER_TIMEOUT {
                            return Err(HostError::AudioGone);
                        }
                        std::thread::yield_now();
                    };
                    self.audio_block = b;
                    self.free_set(old);
                }
            }
            self.pending = None;
        }
        if wanted == 0 || wanted == self.audio_block {
            self.set_block(self.audio_block);
            return Ok(());
        }
        let set = self.build_set(wanted)?;
        if resize.handoff.offer(set).is_err() {
            // Cannot happen: nothing is pending, and every retired set was collected.
            return Err(HostError::AudioGone);
        }
        self.pending = Some(wanted);
        Ok(())
    }

    /// What happened on its own since the last call (a JACK buffer-size change followed,
    /// and how), one sentence each.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Makes `block` the size that graphs are compiled at, with the pipeline fitted to it.
    /// Returns the note when the pipeline asked for does not divide it.
    fn set_block(&mut self, block: usize) -> Option<String> {
        self.options.block = block;
        let (pipeline, note) = fit_pipeline(self.options.pipeline, block);
        self.pipeline = pipeline;
        note
    }

    /// Every loaded graph compiled again at `block` frames (same ids, gains, executors and
    /// pipelining), as one set for the JACK callback. A graph that cannot be compiled at
    /// that size, or no longer fits in the pool, is unloaded with a notice.
    fn build_set(&mut self, block: usize) -> Result<Box<GraphSet>, HostError> {
        let note = self.set_block(block);
        let mut set = Box::new(GraphSet::new(
            block,
            self.options.channels,
            self.options.period_ns(),
        ));
        let mut said = format!(
            "JACK buffer size {} -> {block} frames: {} graph{} compiled again",
            self.audio_block,
            self.graphs.len(),
            if self.graphs.len() == 1 { "" } else { "s" }
        );
        if let Some(note) = note {
            said.push_str(&format!(" ({note})"));
        }
        let mut i = 0;
        while i < self.graphs.len() {
            let n = self.graphs.len();
            let t = self.options.threads.max(1);
            let threads = match self.options.mode {
                Mode::Partitioned => ((i + 1) * t / n - i * t / n).max(1),
                Mode::Shared | Mode::Separate => t,
            };
            let e = &self.graphs[i];
            let executor = ExecutorPlan::again(e.executor);
            let (graph, id, stats) = (e.graph.clone(), e.id, e.stats.clone());
            match self.build_slot(&graph, id, threads, executor, stats) {
                Ok(mut built) => {
                    let e = &mut self.graphs[i];
                    built.slot.gain = gain_of(e.gain_db);
                    e.cost_ns = built.cost_ns;
                    e.units = built.units;
                    e.pipeline = built.pipeline;
                    set.slots.push(built.slot);
                    i += 1;
                }
                Err(err) => {
                    // Not in the new set, it stops with the old one, which takes its ports.
                    let e = self.graphs.remove(i);
                    said.push_str(&format!("; `{}` unloaded: {err}", e.name));
                }
            }
        }
        // Each graph was checked against the others' units as they were: the whole set must
        // fit too (the pool's deques hold this many).
        while self.graphs.iter().map(|e| e.units).sum::<usize>() > self.options.unit_capacity {
            let e = self.graphs.pop().expect("units come from graphs");
            drop(set.slots.pop());
            said.push_str(&format!(
                "; `{}` unloaded: the pool holds {} units and the graphs have more at this size",
                e.name, self.options.unit_capacity
            ));
        }
        self.notices.push(said);
        Ok(set)
    }

    /// Frees a set the JACK callback retired or never took, unregistering the ports still
    /// in it (those of graphs that the set replacing it did not hold).
    fn free_set(&self, set: Box<GraphSet>) {
        let mut set = set;
        for slot in set.slots.drain(..) {
            self.release(FromAudio::Refused(slot));
        }
    }

    /// Offline backend: runs `n` cycles now (the commands sent since the last cycle are
    /// applied at the start of the first). Nothing is freed here: what the cycles hand back
    /// is freed by the next command or [`Host::wait`]. Other backends: an error.
    pub fn run_cycles(&mut self, n: u64) -> Result<(), HostError> {
        let Driver::Offline(audio) = &mut self.driver else {
            return Err(HostError::Options(
                "only the offline backend runs cycles on demand".into(),
            ));
        };
        for _ in 0..n {
            audio.run_cycle(Instant::now());
        }
        Ok(())
    }

    /// Offline backend: the last cycle's mix, one buffer per channel.
    pub fn last_mix(&self) -> Option<&[Vec<f32>]> {
        match &self.driver {
            Driver::Offline(a) => Some(a.mix()),
            _ => None,
        }
    }

    fn send(&mut self, cmd: ToAudio) -> Result<(), HostError> {
        let mut cmd = cmd;
        let start = Instant::now();
        loop {
            match self.queues.to_audio.push(cmd) {
                Ok(()) => break,
                Err(back) => {
                    if let Driver::Offline(audio) = &mut self.driver {
                        // Commands pile up only between cycles run: take them now.
                        audio.apply_commands();
                        self.collect();
                    } else if start.elapsed() > ANSWER_TIMEOUT {
                        return Err(HostError::AudioGone);
                    }
                    cmd = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        Ok(())
    }

    /// Frees what the audio thread handed back (offline backend: the graphs removed by
    /// the cycles run since).
    fn collect(&mut self) {
        while let Some(ev) = self.queues.from_audio.pop() {
            self.release(ev);
        }
    }

    /// The graph's own JACK ports (`--ports per-graph`), or none.
    fn register_ports(
        &self,
        name: &str,
        channels: usize,
    ) -> Result<Vec<::jack::Port<::jack::AudioOut>>, HostError> {
        let (
            HostBackend::Jack {
                per_graph_ports: true,
                ..
            },
            Driver::Jack {
                active: Some(active),
                ..
            },
        ) = (&self.options.backend, &self.driver)
        else {
            return Ok(Vec::new());
        };
        (0..channels)
            .map(|c| {
                active
                    .as_client()
                    .register_port(
                        &format!("{name}_out_{}", c + 1),
                        ::jack::AudioOut::default(),
                    )
                    .map_err(|e| {
                        HostError::Options(format!("JACK: cannot add a port for `{name}`: {e}"))
                    })
            })
            .collect()
    }

    /// Frees what an event hands back, unregistering a removed graph's own ports.
    fn release(&self, ev: FromAudio) {
        let slot = match ev {
            FromAudio::Removed { slot, .. }
            | FromAudio::Refused(slot)
            | FromAudio::Stale(slot)
            | FromAudio::Discarded(slot) => slot,
            _ => return,
        };
        let mut slot = slot;
        if let Driver::Jack {
            active: Some(active),
            ..
        } = &self.driver
        {
            for p in slot.ports.drain(..) {
                let _ = active.as_client().unregister_port(p);
            }
        }
    }

    /// The next event from the audio thread.
    fn answer(&mut self) -> Result<FromAudio, HostError> {
        let start = Instant::now();
        loop {
            if let Some(ev) = self.queues.from_audio.pop() {
                return Ok(ev);
            }
            match &self.driver {
                Driver::Thread { handle, .. } => {
                    if handle.as_ref().is_none_or(|h| h.is_finished())
                        || start.elapsed() > ANSWER_TIMEOUT
                    {
                        return Err(HostError::AudioGone);
                    }
                }
                Driver::Jack { gone, .. } => {
                    // Relaxed: see `jack::Notifications`.
                    if gone.load(Ordering::Relaxed) || start.elapsed() > ANSWER_TIMEOUT {
                        return Err(HostError::AudioGone);
                    }
                }
                _ => return Err(HostError::AudioGone),
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Stops the cycles, frees every graph, and closes the recording (which is a valid WAV
    /// file whatever stopped the host).
    pub fn finish(mut self) -> Result<HostReport, HostError> {
        let audio = match std::mem::replace(&mut self.driver, Driver::Done) {
            Driver::Offline(a) => Some(a),
            Driver::Thread { handle, stop } => {
                // Relaxed: a request polled once per cycle.
                stop.store(true, Ordering::Relaxed);
                handle.and_then(|h| h.join().ok())
            }
            Driver::Jack { active, shared, .. } => active.and_then(|a| jack::close(a, &shared)),
            Driver::Done => None,
        };
        let cycles = self.stats.snapshot().cycles;
        if let Some(mut a) = audio {
            drop(a.drain());
            // Closing the sender ends the recording.
            a.record = None;
        }
        while self.queues.from_audio.pop().is_some() {}
        let mut recorded_frames = 0;
        if let Some(r) = self.recorder.take() {
            recorded_frames = r
                .handle
                .join()
                .map_err(|_| HostError::Options("the recording thread panicked".into()))?
                .map_err(|reason| HostError::Io {
                    what: format!("cannot write {}", r.path.display()),
                    source: std::io::Error::other(reason),
                })?;
        }
        Ok(HostReport {
            stats: self.stats.snapshot(),
            cycles,
            warnings: self.warnings.clone(),
            recorded_frames,
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        match &mut self.driver {
            Driver::Thread { handle, stop } => {
                stop.store(true, Ordering::Relaxed);
                if let Some(h) = handle.take() {
                    let _ = h.join();
                }
            }
            Driver::Jack { active, shared, .. } => {
                if let Some(a) = active.take() {
                    drop(jack::close(a, shared));
                }
            }
            _ => {}
        }
    }
}

/// Why a named executor does not apply to pool mode `mode`: one sentence.
fn pool_mode_executor(mode: Mode, kind: ExecutorKind) -> String {
    let how = match mode {
        Mode::Partitioned => "each graph runs on its share of the host's one pool of threads (work stealing within the share, re-split at every load and unload)",
        _ => "every graph runs on the host's one pool of threads, stealing work across graphs",
    };
    format!(
        "executor {kind} does not apply to {mode} mode: {how}; use separate mode to give each graph an executor of its own, or leave the executor auto"
    )
}

/// The linear gain of `db` decibels (exactly 1 at 0 dB).
fn gain_of(db: f64) -> f32 {
    if db == 0.0 {
        1.0
    } else {
        10f64.powf(db / 20.0) as f32
    }
}

/// `pipeline` fitted to `block`: the same when its sub-blocks divide the block (or it is
/// auto); otherwise the largest divisor of the block below it (at least 1), with a note
/// that says so. A pipeline of 0 becomes 1.
fn fit_pipeline(pipeline: Pipeline, block: usize) -> (Pipeline, Option<String>) {
    match pipeline {
        Pipeline::Sub(n) if n == 0 || !block.is_multiple_of(n) => {
            let d = (1..=n)
                .rev()
                .find(|&d| block.is_multiple_of(d))
                .unwrap_or(1);
            (
                Pipeline::Sub(d),
                Some(format!(
                    "a pipeline of {n} sub-blocks does not divide the buffer of {block} frames: {d} sub-block{} instead (the largest divisor of the buffer up to {n})",
                    if d == 1 { "" } else { "s" }
                )),
            )
        }
        p => (p, None),
    }
}

/// The median time of a few sequential cycles of `plan`, ns; then the plan is reset, so
/// that the graph starts fresh when it is adopted.
fn measure_cost(plan: &mut Plan) -> u64 {
    let mut seq = SeqExecutor::new();
    let mut times: Vec<u64> = (0..CALIBRATION_CYCLES)
        .map(|_| {
            let t = Instant::now();
            seq.run_cycle(plan);
            t.elapsed().as_nanos() as u64
        })
        .collect();
    plan.reset();
    times.sort_unstable();
    times[times.len() / 2]
}

/// Starts the recording's writer thread.
fn start_recorder(
    path: &Path,
    mut rx: BlockReceiver,
    rate: u32,
    channels: usize,
) -> Result<Recorder, HostError> {
    let spec = hound::WavSpec {
        channels: channels as u16,
        sample_rate: rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writer = hound::WavWriter::create(path, spec).map_err(|e| HostError::Io {
        what: format!("cannot create {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    let handle = std::thread::Builder::new()
        .name("fugue-host-record".into())
        .spawn(move || {
            let mut frames = 0u64;
            let mut failed = None;
            while let Some(block) = rx.recv() {
                if failed.is_some() {
                    continue;
                }
                let data = block.data();
                for &x in data {
                    if let Err(e) = writer.write_sample(x) {
                        failed = Some(e.to_string());
                        break;
                    }
                }
                frames += (data.len() / channels) as u64;
            }
            if let Some(e) = failed {
                return Err(e);
            }
            writer.finalize().map_err(|e| e.to_string())?;
            Ok(frames)
        })
        .map_err(|source| HostError::Io {
            what: "cannot start the recording thread".into(),
            source,
        })?;
    Ok(Recorder {
        handle,
        path: path.to_path_buf(),
    })
}

/// Starts the clocked audio thread: it wakes at `start + k × period` and runs one cycle.
fn start_clocked(mut audio: Box<HostAudio>, options: &HostOptions) -> Result<Driver, HostError> {
    let stop = Arc::new(AtomicBool::new(false));
    let rate = options.rate as u128;
    let block = options.block as u128;
    // With pinned workers ([`HostOptions::exec`]'s placement), the audio thread takes the
    // first core (worker i takes core i); a refusal is said by the workers already.
    let core = options.exec.placement.cores.first().copied();
    let handle = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("fugue-host".into())
            .spawn(move || {
                // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
                unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                if let Some(c) = core {
                    let _ = fugue_exec::placement::pin_current(c);
                }
                let period_num = block * 1_000_000_000;
                let mut base = crate::backend::clocked::now_ns() + 1_000_000;
                let mut k: u64 = 0;
                // Relaxed: a request polled once per cycle; nothing is published with it.
                while !stop.load(Ordering::Relaxed) {
                    let target = base + (k as u128 * period_num / rate) as u64;
                    crate::backend::clocked::sleep_until(target);
                    audio.run_cycle(Instant::now());
                    k += 1;
                    let next = base + (k as u128 * period_num / rate) as u64;
                    let now = crate::backend::clocked::now_ns();
                    if now > next + (period_num / rate) as u64 {
                        audio.stats.overruns.fetch_add(1, Ordering::Relaxed);
                        base = now;
                        k = 0;
                    }
                }
                audio
            })
            .map_err(|source| HostError::Io {
                what: "cannot start the audio thread".into(),
                source,
            })?
    };
    Ok(Driver::Thread {
        handle: Some(handle),
        stop,
    })
}
