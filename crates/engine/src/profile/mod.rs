//! The per-node, per-worker profile: why a cycle took the time it took.
//!
//! A [`Profiler`] is made on the control thread for one plan and executor (it allocates all
//! it will use), then the audio thread calls [`Profiler::record`] after each cycle: it reads
//! the plan's per-task records ([`fugue_exec::Plan::task_times`]) and the workers' wake-up records
//! ([`fugue_exec::Executor::worker_wakes`]) and folds them into preallocated statistics, without
//! allocating, locking or blocking:
//! - per node: calls, min, mean, p99 and max of its time in a cycle (a node split into
//!   groups or frame parts counts the sum of its pieces);
//! - per worker: wake-up latency (cycle start to the moment the worker saw the cycle),
//!   latency of its first task, busy and idle time, steals;
//! - per cycle: its time, the time before the first task and after the last one (the
//!   executor's own start and end), and the trace of the slowest cycles and of one cycle
//!   whose time is closest to the running median.
//!
//! [`Profiler::report`] (control thread) turns them into a [`ProfileReport`]: tables, the
//! breakdown of the slowest cycles (the chain of tasks and waits that made each one end when
//! it did) and per-worker timelines ([`ProfileReport::gantt_svg`]).

mod critical;
mod histogram;
mod recorder;
mod render;
mod report;

pub use recorder::Profiler;
pub use report::{
    Bar, ChainStep, NodeRow, Pacing, PathStep, ProfileReport, Timeline, WorkerRow, CHAIN_SHOWN,
};

/// Traces of the slowest cycles kept.
pub const SLOWEST_KEPT: usize = 5;
