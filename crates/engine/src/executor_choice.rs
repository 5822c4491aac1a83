//! What selects an executor: [`ExecutorChoice`], the one type that says which executor runs
//! a graph, with how many threads, placed how, and for static schedules the algorithm and
//! the costs it schedules with (declared in the file, measured now, or read from a file),
//! its pipelining ([`Pipeline`]), and the errors of building an engine from it
//! ([`BuildError`]). With [`ExecutorChoice::auto`] set, [`crate::auto`] measures candidates on
//! the graph and replaces the choice's executor and threads by the fastest.

use std::path::PathBuf;
use std::time::Duration;

use fugue_exec::{ExecOptions, ExecutorKind};
use fugue_sched::Algorithm;
use thiserror::Error;

/// Where a static schedule takes its node costs from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Costs {
    /// The costs the graph file declares (`wcet`, `.stg` times, `Weight`).
    #[default]
    Declared,
    /// Measured now by [`calibrate`](crate::calibrate()) at the run's block size.
    Measured,
    /// A CSV file `node,cost` (as written by `fugue calibrate`).
    File(PathBuf),
}

/// Sub-blocks per cycle (pipelining, see [`fugue_exec::Plan`], "Pipelining").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pipeline {
    /// This many sub-blocks (1: no pipelining); must divide the block.
    Sub(usize),
    /// Chosen from the plan's critical path, the threads and the block
    /// ([`Pipeline::choose`]).
    Auto,
}

impl Pipeline {
    /// Sub-blocks per thread that [`Pipeline::Auto`] aims at: with `n` sub-blocks and as many
    /// segments as threads, a line keeps about `n / segments` sub-blocks ahead of each thread.
    pub const AUTO_SUBS_PER_THREAD: usize = 2;
    /// The shortest sub-block [`Pipeline::Auto`] makes, frames: shorter ones cost more in
    /// synchronisation than they give.
    pub const AUTO_MIN_FRAMES: usize = 32;

    /// The sub-blocks for `plan` (compiled without pipelining) run on `threads` threads at
    /// its block: 1 with one thread, or when the plan already has enough parallelism (its
    /// total cost at least `threads` times its critical path: every thread can be kept busy
    /// without it); otherwise the largest divisor of the block up to
    /// [`Pipeline::AUTO_SUBS_PER_THREAD`] per thread (at most [`fugue_exec::MAX_PIPELINE`])
    /// whose sub-blocks keep at least
    /// [`Pipeline::AUTO_MIN_FRAMES`] frames (1 if none).
    pub fn choose(self, plan: &fugue_exec::Plan, threads: usize) -> usize {
        let n = match self {
            Pipeline::Sub(n) => return n,
            Pipeline::Auto => (threads * Self::AUTO_SUBS_PER_THREAD).min(fugue_exec::MAX_PIPELINE),
        };
        let cp = plan.critical_path_cost();
        if threads <= 1 || plan.total_cost() >= threads as f64 * cp {
            return 1;
        }
        let block = plan.block();
        (2..=n)
            .rev()
            .find(|&d| block.is_multiple_of(d) && block / d >= Self::AUTO_MIN_FRAMES)
            .unwrap_or(1)
    }
}

impl std::fmt::Display for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pipeline::Sub(n) => write!(f, "{n}"),
            Pipeline::Auto => f.write_str("auto"),
        }
    }
}

/// Everything that selects an executor.
#[derive(Clone, Debug)]
pub struct ExecutorChoice {
    /// Which executor (with [`ExecutorChoice::auto`]: the one used if nothing is measured).
    pub kind: ExecutorKind,
    /// Choose the executor by measuring candidates on the graph first
    /// ([`crate::auto`]): `kind` and `threads` are then replaced by the fastest.
    pub auto: bool,
    /// How many cycles the engine is expected to run (`None`: no end known): offline (no
    /// period), the automatic choice spends at most a twentieth of their time on its trials,
    /// and chooses seq without trials when that is too short to measure.
    pub auto_cycles: Option<u64>,
    /// With [`ExecutorChoice::auto`]: the time the trials' cycles are counted to fit in
    /// (below [`crate::auto::BUDGET`]; `None`: that), and by which they are cut as they run:
    /// a round that passes it by a quarter is left unfinished, though the first round ends
    /// whatever it takes, and the plans' compiles and executors' builds come on top. Unlike
    /// a count of cycles ([`ExecutorChoice::auto_cycles`]) told from an estimate of one
    /// cycle's time, it holds when the cycles are slower than the estimate.
    pub auto_budget: Option<Duration>,
    /// Threads, the calling (audio) thread included.
    pub threads: usize,
    /// The static schedule's algorithm (for [`ExecutorKind::Static`]).
    pub algorithm: Algorithm,
    /// The static schedule's costs.
    pub costs: Costs,
    /// Seed of the random schedule.
    pub seed: u64,
    /// Time limit of the exact scheduler.
    pub time_limit: Duration,
    /// Pin thread `i` to allowed core `i mod cores` (the audio thread, 0, to the first core
    /// the process may use: [`crate::place_audio_thread`]).
    pub pin: bool,
    /// SCHED_FIFO priority for the workers (the audio thread asks for one more where it can).
    pub rt: Option<i32>,
    /// Pool and wait budgets.
    pub options: ExecOptions,
    /// Merge chains of nodes into units (the default); `false` schedules the graph node by
    /// node, for comparing executors on the graph as written
    /// ([`fugue_exec::CompileOptions::merge_chains`]).
    pub merge_chains: bool,
    /// Sub-blocks per cycle (pipelining; [`fugue_exec::CompileOptions::pipeline`]), cutting
    /// chains into as many segments as threads. Default: 1 (none). With
    /// [`ExecutorChoice::auto`]: `Sub(1)` tries no pipelined candidate, `Sub(n)` tries them
    /// with `n` sub-blocks, `Auto` with [`Pipeline::choose`]'s.
    pub pipeline: Pipeline,
    /// Cycles run as one, offline (where no deadline holds): the plan is compiled for
    /// `overlap` blocks per cycle, pipelined into `overlap` sub-blocks of one block (each cut
    /// again by `pipeline`), so that the first nodes of one block run while the last nodes
    /// of the block before finish. The samples are the same as without; a graph that changes
    /// rates is not pipelined, and then runs without overlap. Default: 1 (none).
    pub overlap: usize,
    /// With [`ExecutorChoice::auto`]: also try candidates with overlap (offline renders only,
    /// where a cycle of several blocks has no deadline to miss). Default: off.
    pub auto_overlap: bool,
    /// With [`ExecutorChoice::auto`], offline and [`ExecutorChoice::auto_cycles`] known:
    /// the trials are the run's first cycles, on the plan that plays (`crate::auto`'s
    /// in-run trials), so that they cost little even in a short run; only candidates of that
    /// plan are tried (with `auto_overlap`, ws and static running two blocks per cycle, and
    /// seq; else plain ws and static, and seq). The run must not need the executor before
    /// its cycles (the profile, the wake-up tracking). Default: off.
    pub trials_in_run: bool,
    /// With [`ExecutorChoice::auto`]: the most threads a candidate gets, when they were
    /// asked (`--threads`); `None`: one per core, at most [`crate::auto::MAX_THREADS`].
    pub auto_threads: Option<usize>,
    /// With [`ExecutorChoice::auto`]: a request to stop (a signal) that ends the trials at
    /// once, seq then kept untried ([`crate::auto::Untried::Stopped`]).
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl ExecutorChoice {
    /// Whether [`ExecutorChoice::stop`] was set.
    pub fn stop_requested(&self) -> bool {
        // Relaxed: a request flag; nothing is published with it.
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for ExecutorChoice {
    fn default() -> Self {
        ExecutorChoice {
            kind: ExecutorKind::Seq,
            auto: false,
            auto_cycles: None,
            auto_budget: None,
            threads: 1,
            algorithm: Algorithm::Hlfet,
            costs: Costs::Declared,
            seed: 1,
            time_limit: Duration::from_secs(2),
            pin: false,
            rt: None,
            options: ExecOptions::default(),
            merge_chains: true,
            pipeline: Pipeline::Sub(1),
            overlap: 1,
            auto_overlap: false,
            trials_in_run: false,
            auto_threads: None,
            stop: None,
        }
    }
}

/// Why no engine could be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The costs file could not be read.
    #[error("cannot read costs file {path}")]
    CostsIo {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The costs file is malformed.
    #[error(transparent)]
    Costs(#[from] fugue_sched::CostsError),
    /// The scheduler failed.
    #[error(transparent)]
    Sched(#[from] fugue_sched::SchedError),
    /// The executor refused the schedule.
    #[error(transparent)]
    Executor(#[from] fugue_exec::BuildError),
    /// The graph does not compile.
    #[error(transparent)]
    Compile(#[from] fugue_exec::CompileError),
}
