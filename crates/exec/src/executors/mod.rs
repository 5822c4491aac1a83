//! The executors: [`SeqExecutor`], the reference, and the parallel ones, each in its own
//! file; their shared machinery (worker pool, deque, signal, source ranges) is in the private
//! `runtime` module.
//!
//! | executor | how a cycle runs | waits |
//! |---|---|---|
//! | [`WorkStealing`] (`ws`) | activation counters, per-thread deques, LIFO pop / FIFO steal | bounded spin, then futex |
//! | [`WorkSharing`] (`share`, `share-spin`) | activation counters, one global LIFO | mutex+condvar / spinlock |
//! | [`Levels`] (`levels`) | topological levels in parallel, barrier between levels | bounded spin, then futex |
//! | [`StaticSchedule`] (`static`) | per-thread lists from a static schedule | per-task counter, bounded spin, then futex |
//!
//! Every executor runs each task of the plan exactly once per cycle, after all of its
//! predecessors, with the calling (audio) thread participating, and produces output
//! bit-identical to [`SeqExecutor`] (each task computes the same thing
//! whatever thread runs it; inputs fed by several edges are summed by the consumer in a fixed
//! order). The protocols are written down in `docs/executors.md`.

pub mod grain;
pub mod levels;
pub mod multi;
mod seq;
pub mod share;
pub mod static_list;
pub mod ws;

use std::time::Duration;

pub use grain::{GrainTuner, TenantGrain};
pub use levels::Levels;
pub use multi::{SharedPool, Tenant};
pub use seq::SeqExecutor;
pub use share::{ShareLock, WorkSharing};
pub use static_list::StaticSchedule;
pub use ws::WorkStealing;

use crate::denormals::FlushDenormals;
pub use crate::placement::Placement;
pub use crate::runtime::pool::Workers;
use crate::runtime::pool::{Pool, Work};
pub use crate::runtime::signal::SpinBudget;
use crate::{Executor, Plan};

/// Default time a worker spins (and yields) after a cycle before parking: 300 µs.
///
/// Chosen by measurement (`fugue bench overhead --idle-us U`, see `docs/executors.md`):
/// waking a parked worker costs one futex call plus the scheduler's wake-up latency (tens of
/// µs on the machines measured), which would be paid at every cycle if workers parked during
/// the gap between cycles; spinning through short gaps and parking in long ones keeps
/// both the CPU use of an idle engine and the wake-up cost bounded.
pub const DEFAULT_IDLE_SPIN: Duration = Duration::from_micros(300);

/// Default time a thread looks for work inside a cycle before sleeping until the cycle's end.
pub const DEFAULT_STEAL_SPIN: Duration = Duration::from_micros(200);

/// Default least work a steal must bring (work stealing): a steal moves several cache lines
/// between cores (the deque's ends and slot, the task's counters and inputs) and makes the
/// victim wait for them too, about a microsecond on the machines measured; a task that
/// brings less work than that is left to its owner. See [`ExecOptions::min_steal`].
pub const DEFAULT_MIN_STEAL: Duration = Duration::from_micros(1);

/// Default time before the expected start of a periodic cycle at which workers that sleep
/// between cycles wake up and start spinning ([`ExecOptions::period`]).
///
/// Chosen by measurement (`fugue bench overhead --period-us P --wake-lead-us L`, see
/// `docs/executors.md`, "Waking ahead of the cycle"): it must cover the lateness of a timed
/// wake-up (the futex timeout's, with the workers' timer slack at 1 ns), and every
/// microsecond of it is spent spinning by every worker once per period. 50 µs: in two
/// measurements of cycles every 1000 µs (diamond of 76 nodes, ws on 2 threads, 5 invocations
/// each) its p99 cycle time was the lower (5.2 and 13.2 µs against 17.7 and 20.7 µs with
/// 100 µs) for about 8 % of a core instead of 11 %.
pub const DEFAULT_WAKE_LEAD: Duration = Duration::from_micros(50);

/// Options common to the parallel executors.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecOptions {
    /// Between cycles: how long workers spin before parking.
    pub idle_budget: SpinBudget,
    /// Inside a cycle: how long a thread with nothing to do spins before sleeping.
    pub steal_budget: SpinBudget,
    /// Pinning and real-time priority of the workers.
    pub placement: Placement,
    /// Work stealing: the least work a stolen task must bring (its dominated cost,
    /// [`crate::Plan::unit_dominated_cost`], converted to time with the cycle times measured)
    /// for a thread to steal it while the owner is busy; a thread that has found only smaller
    /// tasks for twice this long steals them too. Zero: steal any task.
    pub min_steal: Duration,
    /// The period at which cycles start, when the backend knows it (a real-time backend's
    /// buffer period). Workers then sleep between cycles until [`ExecOptions::wake_lead`]
    /// before the expected start of the next one (one period after the last one's start),
    /// and spin from there until it starts, so that a cycle after an idle gap does not pay
    /// for waking them. A cycle that starts early wakes them as without a period. `None`
    /// (offline, benchmarks back to back): spin for [`ExecOptions::idle_budget`], then
    /// sleep until woken.
    pub period: Option<Duration>,
    /// With a [`ExecOptions::period`]: how long before the expected start workers wake.
    pub wake_lead: Duration,
}

impl Default for ExecOptions {
    /// Spin (with a CPU relax hint, no yield) for [`DEFAULT_IDLE_SPIN`] between cycles and
    /// [`DEFAULT_STEAL_SPIN`] inside a cycle, then sleep.
    fn default() -> Self {
        ExecOptions {
            idle_budget: SpinBudget {
                spins: u32::MAX,
                time: DEFAULT_IDLE_SPIN,
            },
            steal_budget: SpinBudget {
                spins: u32::MAX,
                time: DEFAULT_STEAL_SPIN,
            },
            placement: Placement::default(),
            min_steal: DEFAULT_MIN_STEAL,
            period: None,
            wake_lead: DEFAULT_WAKE_LEAD,
        }
    }
}

impl ExecOptions {
    /// The options adapted to `threads` threads: with more threads than cores, a spinning
    /// thread would keep a descheduled one from finishing the work it waits for, so spins
    /// give way to `sched_yield` after a few iterations. With no more threads than cores,
    /// waits spin without yielding (a yield on a loaded machine can hand the core to another
    /// process for a whole time slice).
    pub fn adapted_to(&self, threads: usize) -> ExecOptions {
        let mut o = self.clone();
        if threads > crate::placement::available_cores() {
            o.idle_budget.spins = o.idle_budget.spins.min(64);
            o.steal_budget.spins = o.steal_budget.spins.min(64);
        }
        o
    }
}

/// The executors by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecutorKind {
    /// Topological order on the calling thread.
    Seq,
    /// Per-thread lists from a static schedule.
    Static,
    /// Work stealing as in Letz et al.
    Ws,
    /// Work stealing with affinity: units go back to the thread that ran them last.
    WsAffinity,
    /// Work sharing, mutex + condition variable.
    Share,
    /// Work sharing, spinlock.
    ShareSpin,
    /// Fork/join by levels.
    Levels,
}

impl ExecutorKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [ExecutorKind; 7] = [
        ExecutorKind::Seq,
        ExecutorKind::Static,
        ExecutorKind::Ws,
        ExecutorKind::WsAffinity,
        ExecutorKind::Share,
        ExecutorKind::ShareSpin,
        ExecutorKind::Levels,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ExecutorKind::Seq => "seq",
            ExecutorKind::Static => "static",
            ExecutorKind::Ws => "ws",
            ExecutorKind::WsAffinity => "ws-affinity",
            ExecutorKind::Share => "share",
            ExecutorKind::ShareSpin => "share-spin",
            ExecutorKind::Levels => "levels",
        }
    }

    /// The kind of a command-line name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl std::fmt::Display for ExecutorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The start of a parallel executor's `run_cycle` on `pool`: subnormal numbers are flushed to
/// zero on the calling thread until the returned guard drops, and a plan whose units form a
/// single chain (nothing could run in parallel) runs at once on the calling thread, without
/// waking any worker. Returns the guard and the pool's work state, or `None` when the cycle
/// has run.
#[inline]
pub(crate) fn begin_cycle<'p, W: Work>(
    plan: &mut Plan,
    pool: &'p Pool<W>,
) -> Option<(FlushDenormals, &'p W)> {
    let flush = FlushDenormals::new();
    if !plan.is_sequential() {
        return Some((flush, pool.work()));
    }
    // SAFETY: `&mut Plan`: no other thread runs its tasks (an executor's workers only touch a
    // plan published by a cycle start, and none is started here) and no output reference is
    // alive.
    unsafe { plan.run_all_tasks() };
    None
}

/// Why [`build`] made no executor.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum BuildError {
    /// [`ExecutorKind::Static`] without per-thread lists.
    #[error("the static executor needs a schedule")]
    NoSchedule,
    /// The per-thread lists do not run the plan (a unit missing or listed twice, or lists
    /// that would wait for each other); the reason names the units.
    #[error("{0}")]
    BadSchedule(String),
    /// The test-only fault switch ([`crate::fault::FAULT_VAR`]) holds a value that does not
    /// parse.
    #[error("{0}")]
    Fault(String),
    /// The system refused a worker thread (a process or memory limit); the message names the
    /// worker and the system's reason.
    #[error("{0}")]
    Threads(String),
}

impl From<crate::runtime::pool::StartError> for BuildError {
    fn from(e: crate::runtime::pool::StartError) -> Self {
        BuildError::Threads(e.to_string())
    }
}

/// Builds an executor of `kind` with `threads` threads for `plan`. `static_lists` gives the
/// per-thread unit lists of a static schedule (required for [`ExecutorKind::Static`]).
/// What could not be placed as asked is in the executor's [`Executor::warnings`]. When the
/// test-only switch [`crate::fault::FAULT_VAR`] names `kind`, the executor is built broken
/// on purpose (see [`crate::fault`]).
pub fn build(
    kind: ExecutorKind,
    plan: &Plan,
    threads: usize,
    static_lists: Option<Vec<Vec<u32>>>,
    opts: &ExecOptions,
) -> Result<Box<dyn Executor + Send>, BuildError> {
    let opts = &opts.adapted_to(threads);
    // The threads' deques and counters on cache lines of their own (`crate::lines`).
    let executor: Box<dyn Executor + Send> =
        crate::lines::apart(|| -> Result<Box<dyn Executor + Send>, BuildError> {
            Ok(match kind {
                ExecutorKind::Seq => Box::new(SeqExecutor::new()),
                ExecutorKind::Ws => Box::new(WorkStealing::new(plan, threads, opts)?),
                ExecutorKind::WsAffinity => {
                    Box::new(WorkStealing::with_affinity(plan, threads, opts)?)
                }
                ExecutorKind::Share => {
                    Box::new(WorkSharing::new(plan, threads, ShareLock::Mutex, opts)?)
                }
                ExecutorKind::ShareSpin => {
                    Box::new(WorkSharing::new(plan, threads, ShareLock::Spin, opts)?)
                }
                ExecutorKind::Levels => Box::new(Levels::new(plan, threads, opts)?),
                ExecutorKind::Static => {
                    let lists = static_lists.ok_or(BuildError::NoSchedule)?;
                    Box::new(StaticSchedule::new(plan, lists, opts)?)
                }
            })
        })?;
    crate::fault::inject(kind.name(), executor)
}
