//! fugue-exec: the compiled [`Plan`] of a task graph and the executors that run it.
//!
//! [`Plan::compile`] (control thread, allocates) turns a [`TaskGraph`](fugue_graph::TaskGraph)
//! into a flat array of tasks in topological order, with successor lists, initial activation
//! counts, topological levels, one preallocated buffer per output port and each input port
//! resolved to the buffer it reads, through the typed passes of `plan/compile.rs`. Executors then run
//! every task once per cycle, each after all of its predecessors, through
//! [`Plan::run_task`], which never allocates, locks or blocks.
//!
//! [`SeqExecutor`] runs the tasks in topological order on the calling thread: the reference
//! that every parallel executor ([`executors`]: work stealing, work sharing, levels, static
//! lists) must match bit for bit. Each parallel executor owns a worker pool: `threads - 1`
//! persistent threads, woken once per cycle (the protocols are in `docs/executors.md`).
//! `SharedPool` (in [`executors`]) is the shared pool of the multi-graph host: one set of
//! threads that runs, each cycle, the units of many plans (tenants) at once, stealing across
//! them. [`placement`] pins threads and sets their priority. [`denormals`] keeps denormal
//! floats out of every thread that runs tasks. [`lines`] keeps a plan's memory on cache lines of its own. [`fault`] is the test-only switch that breaks
//! a named executor on purpose. The crate does not know static schedulers: a static schedule
//! arrives as per-thread unit lists.
//!
//! Neither pool is the task pool of the crate `fugue-pool` (`scope`/`spawn`/`join` for
//! fork/join programs), which the executors do not use; `docs/pool.md` tells the four things
//! called "pool" apart.
//!
//! ```
//! use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
//! let g = fugue_graph::read::ag::parse(
//!     "o = { kind: \"osc\", freq: 1000, };  s = { kind: \"sink\", };  o.1 -> s.1;",
//!     "inline.ag",
//! ).unwrap();
//! let reg = fugue_dsp::Registry::with_builtin_kinds();
//! let opts = CompileOptions { sample_rate: 48_000.0, block: 48, ..Default::default() };
//! let mut plan = Plan::compile(&g, &reg, &opts).unwrap();
//! SeqExecutor::new().run_cycle(&mut plan);
//! // 1 kHz at 48 kHz: a quarter period is 12 frames.
//! assert!((plan.output(0)[12] - 1.0).abs() < 1e-6);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

pub mod denormals;
pub mod executors;
pub mod fault;
pub mod lines;
pub mod placement;
mod plan;
mod runtime;
pub mod trace;

#[cfg(all(test, loom))]
mod loom_tests;

pub use executors::{
    build, BuildError, ExecOptions, ExecutorKind, SeqExecutor, SpinBudget, DEFAULT_WAKE_LEAD,
};
pub use executors::{SharedPool, Tenant, TenantGrain};
pub use plan::{
    buffer_bytes, port_mismatch, size_in_words, CompileError, CompileOptions, Plan, TaskPanic,
    JOIN_FANIN, MAX_BLOCK, MAX_PIPELINE, MAX_RATE_FACTOR, MAX_READ_SAMPLES, MAX_SUB_BLOCKS,
    MEMORY_LIMIT, NO_SLOT, SPLIT_GROUP_MIN_FRAMES, SPLIT_MIN_FRAMES, SPLIT_MIN_INPUTS, SPLIT_PARTS,
};
pub use runtime::pool::StartError;

/// The message of a panic's `payload` (what `panic!` was given: a `&str` or a `String`),
/// or `None` for any other payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .or_else(|| {
            payload
                .downcast_ref::<fugue_dsp::Failure>()
                .map(|f| f.0.as_str())
        })
}

/// Runs whole cycles of a [`Plan`].
///
/// `run_cycle` takes the plan by `&mut`: for the length of the cycle the executor has the
/// plan to itself (it may share `&Plan` with its worker threads), and no reference to the
/// plan's buffers ([`Plan::output`]) can be alive. Between cycles the owner fills inputs
/// ([`Plan::set_input`]) and reads outputs.
pub trait Executor {
    /// Runs every task of `plan` exactly once, each after all its predecessors, and returns
    /// when all are done.
    fn run_cycle(&mut self, plan: &mut Plan);

    /// The worker pool that runs the cycles with the calling thread, if any: the methods
    /// about threads below answer from it by default ([`warnings`](Self::warnings),
    /// [`threads`](Self::threads), [`set_profiling`](Self::set_profiling),
    /// [`worker_wakes`](Self::worker_wakes)). None by default: the calling thread alone.
    fn workers(&self) -> Option<&dyn executors::Workers> {
        None
    }

    /// What building the executor could not do as asked (pinning or real-time priority
    /// refused, ...), each to be said once. Its pool's by default, else none.
    fn warnings(&self) -> &[String] {
        self.workers().map_or(&[], |w| w.warnings())
    }

    /// Units taken from another thread's queue since the executor was built (0 for
    /// executors that do not steal).
    fn steals(&self) -> u64 {
        0
    }

    /// Threads that run cycles, the calling thread included: its pool's, else 1.
    fn threads(&self) -> usize {
        self.workers().map_or(1, |w| w.threads())
    }

    /// Turns on or off the workers' wake-up records ([`Executor::worker_wakes`]). Between
    /// cycles; the plan's own records are turned on by [`Plan::set_profiling`].
    fn set_profiling(&mut self, on: bool) {
        if let Some(w) = self.workers() {
            w.set_profiling(on);
        }
    }

    /// Between cycles, with the profile on: for each thread `w` of `out` (up to
    /// [`Executor::threads`]), when worker `w` woke for the last cycle, in
    /// [`trace::now`] ticks, or `None` if it had not woken for it (or is the calling thread,
    /// `w = 0`, or the cycle ran on the calling thread alone). A worker that noticed the
    /// cycle only after it ended, before this call, shows with a time after the end: callers
    /// compare with the end they measured. Never allocates.
    fn worker_wakes(&self, out: &mut [Option<u64>]) {
        match self.workers() {
            Some(w) => w.wakes(out),
            None => out.fill(None),
        }
    }

    /// Units each thread took from another thread's queue since the executor was built,
    /// thread by thread (zeros for executors that do not steal). Never allocates.
    fn thread_steals(&self, out: &mut [u64]) {
        out.fill(0);
    }
}
