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
//!
//! **Files.** `options.rs`: how a host is started; `report.rs`: what its commands report and
//! why one failed; `load.rs`: loading and admission; `resize.rs`: following JACK
//! buffer-size changes; `channel.rs`: the channel to the audio thread, control side;
//! `audio.rs`: the audio side; `driver.rs` and `jack.rs`: what runs the audio side;
//! `command.rs`: the command language; `session.rs`: commands executed and their replies;
//! `control/`: a session driven by a script, a prompt and a control socket at once.

mod audio;
mod channel;
pub mod command;
pub mod control;
mod driver;
mod jack;
mod load;
mod options;
mod report;
mod resize;
pub mod session;
mod stats;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_dsp::Registry;
use fugue_graph::TaskGraph;

use audio::{Queues, ToAudio};
use channel::gain_of;
use driver::{Driver, Recorder};
use load::Entry;
use report::executor_label;
use stats::HostStats;

pub use audio::BATCH_CYCLES;
pub use fugue_exec::TenantGrain;
pub use options::{GraphExecutor, HostBackend, HostOptions, Mode, AUTO_BUDGET};
pub use report::{GraphInfo, HostError, HostEvent, HostReport, LoadReport, UnloadReport};
pub use stats::{GraphStatsSnapshot, HostStatsSnapshot, MISSES_KEPT};

use crate::Pipeline;

/// A reader of files in a format of its own ([`Host::set_reader`]): `None` when `file` is
/// not one of its files, else the graph or why it could not be read (one sentence naming
/// the file).
pub type GraphReader = Arc<dyn Fn(&Path) -> Option<Result<TaskGraph, String>> + Send + Sync>;

/// The control side of a running host (see the module's documentation).
pub struct Host {
    options: HostOptions,
    /// [`HostOptions::pipeline`] fitted to the block (`options::fit_pipeline`).
    pipeline: Pipeline,
    registry: Registry,
    /// Reads the files that [`Host::load`] is given in a format of its own (a Faust
    /// program), before the graph formats.
    reader: Option<GraphReader>,
    queues: Arc<Queues>,
    stats: Arc<HostStats>,
    graphs: Vec<Entry>,
    next_id: u32,
    driver: Driver,
    recorder: Option<Recorder>,
    /// The last [`LOG_KEPT`] adoptions and removals (a host that plays for days must not
    /// grow with every load).
    log: VecDeque<HostEvent>,
    warnings: Vec<String>,
    /// The buffer size of the set of graphs that the audio thread plays, as far as the
    /// control thread knows (JACK: a set offered at another size may be on its way).
    audio_block: usize,
    /// The buffer size of the set offered to the JACK callback and not yet known to be
    /// adopted.
    pending: Option<usize>,
    /// What happened since [`Host::take_notices`] was last called.
    notices: Vec<String>,
    /// Whether a notice said that the mix overflowed (said once).
    told_mix: bool,
    /// [`Host::device`].
    device: Option<String>,
    /// [`Host::set_stop`]: a request that ends a wait for the audio thread's answer.
    stop: Option<Arc<std::sync::atomic::AtomicBool>>,
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

/// How long the control thread waits for the audio thread to take a command, beyond two of
/// its periods ([`Host::answer_timeout`]).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

impl Host {
    /// How long the control thread waits for the audio thread to take a command:
    /// [`ANSWER_TIMEOUT`] and two periods (the audio thread takes commands at the start of a
    /// cycle, and a period may be seconds long: `--rate 1000 --buffer 8192`).
    pub(super) fn answer_timeout(&self) -> Duration {
        let period = self.audio_block as f64 / f64::from(self.options.rate.max(1));
        ANSWER_TIMEOUT + Duration::from_secs_f64(2.0 * period.min(1e6))
    }

    /// Starts a host with the built-in node kinds.
    pub fn start(options: HostOptions) -> Result<Host, HostError> {
        Host::with_registry(options, Registry::with_builtin_kinds())
    }

    /// Starts a host whose graphs may use the kinds of `registry`.
    pub fn with_registry(options: HostOptions, registry: Registry) -> Result<Host, HostError> {
        let mut options = options;
        options.check_executor()?;
        let jack_client = driver::open_jack(&mut options)?;
        let alsa = driver::open_alsa(&mut options)?;
        let device = alsa.as_ref().map(|d| d.granted().to_string());
        options.check()?;
        let mut warnings = Vec::new();
        if let (Some(c), HostBackend::Jack { client_name, .. }) = (&jack_client, &options.backend) {
            warnings.extend(crate::backend::jack::renamed(c, client_name));
        }
        driver::resolve_rt(&mut options, &mut warnings);
        let pipeline =
            options.start_pipeline(jack_client.is_some() || alsa.is_some(), &mut warnings)?;
        let queues = Arc::new(Queues::new());
        let stats = Arc::new(HostStats::new());
        let started = driver::start(
            &options,
            (jack_client, alsa),
            queues.clone(),
            stats.clone(),
            &mut warnings,
        )?;
        Ok(Host {
            audio_block: options.block,
            pending: None,
            notices: Vec::new(),
            told_mix: false,
            options,
            pipeline,
            registry,
            reader: None,
            stop: None,
            queues,
            stats,
            graphs: Vec::new(),
            next_id: 1,
            driver: started.driver,
            recorder: started.recorder,
            log: VecDeque::with_capacity(LOG_KEPT),
            warnings,
            device,
        })
    }

    /// What the audio device was asked and granted, in words (ALSA backend).
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
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

    /// Sets the stop request (a signal): a command waiting for the audio thread to take it
    /// (a `load` at a long period) gives up when it is set, with [`HostError::Stopping`],
    /// rather than keep the host from ending for up to a period. Meant for a host about to
    /// end: a `load` given up after it was sent may still be adopted by the audio thread and
    /// play, unlisted, until the host ends.
    pub fn set_stop(&mut self, stop: Arc<std::sync::atomic::AtomicBool>) {
        self.stop = Some(stop);
    }

    /// Whether the stop request is set ([`Host::set_stop`]).
    pub(super) fn stopping(&self) -> bool {
        // Relaxed: a request flag; nothing is published with it.
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Sets the reader that [`Host::load`] asks first: it returns `None` for a file it does
    /// not read, which is then read as a graph file.
    pub fn set_reader(&mut self, reader: GraphReader) {
        self.reader = Some(reader);
    }

    /// Reads `file` and loads it as `name` (see the module's documentation).
    pub fn load(&mut self, name: &str, file: &Path) -> Result<LoadReport, HostError> {
        self.collect();
        self.check_name(name)?;
        self.check_not_recording(file)?;
        let graph = match self.reader.as_ref().and_then(|r| r(file)) {
            Some(read) => read.map_err(HostError::Refused)?,
            None => fugue_graph::read::read_file(file, None)?,
        };
        // A file its nodes read (a Faust program), named relative to the graph's folder.
        for read in crate::output::graph_files(file, &graph) {
            self.check_not_recording(&read)?;
        }
        self.load_graph(name, &graph, &file.display().to_string())
            .map_err(|e| {
                // The graph's own faults, which name its nodes but not its file: the file,
                // and the place of the node in it, as `check` and `render` give them.
                let source: &(dyn std::error::Error + 'static) = match &e {
                    HostError::Compile(c) => c,
                    HostError::Build(b) => b.as_ref(),
                    _ => return e,
                };
                let at = crate::check::error_at(&graph, source);
                HostError::Graph {
                    file: format!("{}{at}", file.display()),
                    why: Box::new(e),
                }
            })
    }

    /// Refuses to read `file` when it is the file the host records to
    /// ([`HostOptions::record`]).
    fn check_not_recording(&self, file: &Path) -> Result<(), HostError> {
        use std::os::unix::fs::MetadataExt as _;
        let Some(record) = &self.options.record else {
            return Ok(());
        };
        let (Ok(a), Ok(b)) = (std::fs::metadata(file), std::fs::metadata(record)) else {
            return Ok(());
        };
        if a.dev() == b.dev() && a.ino() == b.ino() {
            return Err(HostError::Refused(format!(
                "{} is the file the host records to (--record {}); load another file",
                file.display(),
                record.display()
            )));
        }
        Ok(())
    }

    /// Loads `graph` as `name`; `file` is what [`Host::list`] shows as its origin.
    pub fn load_graph(
        &mut self,
        name: &str,
        graph: &TaskGraph,
        file: &str,
    ) -> Result<LoadReport, HostError> {
        self.add(name, graph, file)
    }

    /// Removes graph `name` at the next cycle boundary and frees it here.
    pub fn unload(&mut self, name: &str) -> Result<UnloadReport, HostError> {
        self.remove(name)
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

    /// Sets attribute `attr` of node `node` of graph `name` to `value` from the next cycle,
    /// while it plays: the attribute must be live ([`fugue_dsp::DspNode::live_param`]) and
    /// `value` one its kind accepts (the node's kind is built with it, on this thread, and
    /// says what is wrong). The audio thread receives the value through the command queue
    /// and sets it between two cycles; the graph kept here takes it too, so that a
    /// recompilation (a JACK buffer-size change) keeps it.
    pub fn set_param(
        &mut self,
        name: &str,
        node: &str,
        attr: &str,
        value: f64,
    ) -> Result<(), HostError> {
        // Display writes the shortest digits that parse back to the same number.
        self.set_param_word(name, node, attr, &value.to_string())
            .map(|_| ())
    }

    /// [`Host::set_param`] with the value as written (a shell's or a socket's word): the
    /// graph, the node and the attribute are checked before it ([`crate::live::check`]).
    /// Returns the number set.
    pub(crate) fn set_param_word(
        &mut self,
        name: &str,
        node: &str,
        attr: &str,
        word: &str,
    ) -> Result<f64, HostError> {
        self.poll()?;
        let i = self.index(name)?;
        // Relaxed: a hint; a graph that failed stays silenced, so a set would not be heard.
        if self.graphs[i]
            .stats
            .panics
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
        {
            return Err(HostError::Live(format!(
                "set {name} {node} {attr}: graph {name} is silenced since a node of it failed, so nothing it plays would change; unload it and load it again"
            )));
        }
        let (c, value) = crate::live::check(
            &self.graphs[i].graph,
            &self.registry,
            self.options.rate as f64,
            self.options.block,
            node,
            attr,
            word,
            self.graphs[i].pipeline > 1,
        )
        .map_err(|e| HostError::Live(format!("set {name} {node} {attr}: {e}")))?;
        self.send(ToAudio::Set {
            id: self.graphs[i].id,
            node: c.node as u32,
            param: c.param as u32,
            value,
        })?;
        // The graph kept for recompilation takes the value (in place of the attributes
        // that named it otherwise).
        crate::live::apply(&mut self.graphs[i].graph, &c, attr, word, value);
        Ok(value)
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
                memory: e.memory,
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
        self.driver_cycle()
    }

    /// Lets the host play for `d`: offline, runs that many cycles' worth now, as fast as
    /// possible; with a clock, sleeps while the audio thread plays.
    pub fn wait(&mut self, d: Duration) -> Result<(), HostError> {
        self.play_for(d)
    }

    /// Services the audio side from the control thread: frees what the audio thread handed
    /// back and, under JACK, follows a buffer-size change (every loaded graph compiled again
    /// at the new size and handed over as one set; see `jack.rs`). Every command calls it,
    /// and so does [`Host::wait`]; a shell that waits for commands calls it while idle.
    /// Commands are never in flight while it runs, so loads and unloads and a change of size
    /// are serialised here.
    pub fn poll(&mut self) -> Result<(), HostError> {
        self.collect();
        self.follow_resize()
    }

    /// Under JACK, once the server went away (it stopped, or closed this client): why. The
    /// host cannot play on; its front end ends it ([`control::Controller::serve`]).
    pub fn jack_stopped(&self) -> Option<HostError> {
        match &self.driver {
            Driver::Jack { shared, .. } => shared.stopped().map(HostError::JackStopped),
            _ => None,
        }
    }

    /// What happened on its own since the last call (a JACK buffer-size change followed,
    /// and how; JACK's process thread refused its pin; a recording that could not be
    /// written; a graph that panicked, or whose output held samples that are not finite
    /// numbers, said once per graph), one sentence each.
    pub fn take_notices(&mut self) -> Vec<String> {
        if let Some(n) = self.recorder.as_mut().and_then(|r| r.failure()) {
            self.notices.push(n);
        }
        // A refused pin of JACK's process thread, said once.
        if let Driver::Jack {
            pin: (core, refused),
            ..
        } = &mut self.driver
        {
            if let Some(w) = crate::backend::jack::pin_warning(*core, refused) {
                *core = None;
                self.notices.push(w);
            }
        }
        // Relaxed: counters, read as hints.
        let mix = self
            .stats
            .mix_non_finite
            .load(std::sync::atomic::Ordering::Relaxed);
        if mix > 0 && !self.told_mix {
            self.told_mix = true;
            self.notices.push(
                "the mix holds samples that are not finite numbers (the graphs' outputs, summed with their gains, overflowed), played and recorded as silence: lower a graph's gain".to_string(),
            );
        }
        for e in self.graphs.iter_mut() {
            // Acquire: the failure set before the count was raised (Release).
            let panics = e.stats.panics.load(std::sync::atomic::Ordering::Acquire);
            let non_finite = e
                .stats
                .non_finite
                .load(std::sync::atomic::Ordering::Relaxed);
            if panics > 0 && !e.told.0 {
                e.told.0 = true;
                let what = match e.stats.failure.get() {
                    Some((node, message)) => {
                        format!("its node `{}` failed ({message})", e.graph.node(*node).name)
                    }
                    None => "a node of it failed (its processor panicked, or its Faust program or LV2 plugin divided an integer by zero)".to_string(),
                };
                self.notices.push(format!(
                    "graph {}: {what}; the graph is silenced (the others play on): unload it",
                    e.name
                ));
            }
            if non_finite > 0 && !e.told.1 {
                e.told.1 = true;
                self.notices.push(format!(
                    "graph {}: its output holds samples that are not finite numbers (NaN or infinity), mixed and recorded as silence: a node's output overflowed; look for a level, gain or feedback that is too large",
                    e.name
                ));
            }
        }
        std::mem::take(&mut self.notices)
    }

    /// Offline backend: runs `n` cycles now (the commands sent since the last cycle are
    /// applied at the start of the first). Nothing is freed here: what the cycles hand back
    /// is freed by the next command or [`Host::wait`]. Other backends: an error.
    pub fn run_cycles(&mut self, n: u64) -> Result<(), HostError> {
        self.run_offline(n, None).map(|_| ())
    }

    /// Offline backend: as [`Host::run_cycles`], but starts no run of the pool after `wall`
    /// (a run lasts about 50 ms at most), so that a caller can look at other things between
    /// calls. Returns the cycles run (at least one when `n` is not 0). Other backends: an
    /// error.
    pub fn run_cycles_for(&mut self, n: u64, wall: Duration) -> Result<u64, HostError> {
        self.run_offline(n, Some(Instant::now() + wall))
    }

    /// [`Host::run_cycles`] and [`Host::run_cycles_for`]: the offline driver's
    /// [`audio::HostAudio::run_cycles`].
    fn run_offline(&mut self, n: u64, until: Option<Instant>) -> Result<u64, HostError> {
        let Driver::Offline(audio) = &mut self.driver else {
            return Err(HostError::Options(
                "only the offline backend runs cycles on demand".into(),
            ));
        };
        Ok(audio.run_cycles(n, until))
    }

    /// Offline backend: the last cycle's mix, one buffer per channel.
    pub fn last_mix(&self) -> Option<&[Vec<f32>]> {
        match &self.driver {
            Driver::Offline(a) => Some(a.mix()),
            _ => None,
        }
    }

    /// Stops the cycles, frees every graph, and closes the recording (which is a valid WAV
    /// file whatever stopped the host).
    pub fn finish(self) -> Result<HostReport, HostError> {
        self.stop()
    }
}
