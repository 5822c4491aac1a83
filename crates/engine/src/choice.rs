//! What selects an executor: [`ExecutorChoice`], the one type that says which executor runs
//! a graph, with how many threads, placed how, and for static schedules the algorithm and
//! the costs it schedules with (declared in the file, measured now, or read from a file).

use std::path::PathBuf;
use std::time::Duration;

use fugue_exec::{ExecOptions, ExecutorKind};
use fugue_sched::Algorithm;
use thiserror::Error;

/// Where a static schedule takes its node costs from.
#[derive(Clone, Debug, PartialEq)]
pub enum Costs {
    /// The costs the graph file declares (`wcet`, `.stg` times, `Weight`).
    Declared,
    /// Measured now by [`calibrate`] at the run's block size.
    Measured,
    /// A CSV file `node,cost` (as written by `fugue calibrate`).
    File(PathBuf),
}

/// Everything that selects an executor.
#[derive(Clone, Debug)]
pub struct ExecutorChoice {
    /// Which executor (with [`ExecutorChoice::auto`]: the one used if nothing is measured).
    pub kind: ExecutorKind,
    /// Choose the executor by measuring candidates on the graph first
    /// ([`crate::auto`]): `kind` and `threads` are then replaced by the fastest.
    pub auto: bool,
    /// How many cycles the engine is expected to run (`None`: no end known): the automatic
    /// choice spends at most a tenth of their time on its trials, and chooses seq without
    /// trials when that is too short to measure.
    pub auto_cycles: Option<u64>,
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
}

impl Default for ExecutorChoice {
    fn default() -> Self {
        ExecutorChoice {
            kind: ExecutorKind::Seq,
            auto: false,
            auto_cycles: None,
            threads: 1,
            algorithm: Algorithm::Hlfet,
            costs: Costs::Declared,
            seed: 1,
            time_limit: Duration::from_secs(2),
            pin: false,
            rt: None,
            options: ExecOptions::default(),
            merge_chains: true,
        }
    }
}

/// Why no engine could be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The costs file could not be read.
    #[error("cannot read costs file {path}: {source}")]
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
