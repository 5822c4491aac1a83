//! fugue-engine: a graph, an executor and a backend put together.
//!
//! - [`Engine::build`]: the one way to turn a graph and an [`ExecutorChoice`] into a compiled
//!   plan with its executor (and its static schedule when it has one); used by the offline
//!   render, the real-time backends, calibration and the benchmarks. The graph's nodes are
//!   built by the kinds of a [`Registry`] that the caller gives: the built-in kinds
//!   ([`Registry::with_builtin_kinds`], the default of [`RenderOptions`], [`RunOptions`] and
//!   [`host::Host::start`]) and any registered at run time.
//! - [`place_audio_thread`]: the one place that places the thread that runs the cycles (the
//!   first core the process may use, a real-time priority above the workers').
//! - [`render`]: offline rendering to WAV with any executor; the sink channels' blocks go to a
//!   writer thread, so audio is never written by the thread that computes it.
//! - [`run()`]: real time through a [`backend`] (JACK, or `clocked` without an audio server),
//!   one measured cycle per buffer period ([`CycleBody`]); each cycle's [`CycleRecord`]
//!   travels through a single-producer ordered ring to a statistics thread ([`stats`]).
//! - [`report`]: what the commands report, as values that serialize to their JSON.
//! - [`graphviz`]: a graph drawn by Graphviz, stopped after a time limit.
//! - [`lint`]: warnings about a graph, a render's input or its output that still work.
//! - [`output`]: output files written safely (never replaced unless asked, never half
//!   written: a temporary file and a rename).
//! - [`calibrate`]: each node's measured cost (median and 99th percentile per cycle), for
//!   static schedules.
//! - [`ExecutorRequest`]: the executor's settings as a user asks them, made an
//!   [`ExecutorChoice`] with a command's defaults; with the feature `clap`, `flags`, the
//!   command-line flags that ask them.
//! - [`auto`]: the executor chosen by measuring ([`ExecutorChoice::auto`], the default of
//!   `fugue render` and `fugue run`): candidate executors and thread counts run the real plan
//!   for a bounded time before the first cycle, and the fastest plays.
//! - [`profile`]: the per-node, per-worker profile of a run ([`Profiler`], recorded on the
//!   audio thread without allocating; [`ProfileReport`]: node times, wake-ups, busy and idle
//!   time, the slowest cycles; rendered as text, CSV and SVG Gantt charts).
//! - [`host`]: the multi-graph host (`fugue host`): graphs loaded and unloaded while it plays,
//!   compiled on the control thread and adopted at a cycle boundary, run together by one
//!   shared pool of threads ([`fugue_exec::SharedPool`], whole or partitioned among the
//!   graphs) or each by an executor of its own; its commands, the controller that drives a
//!   session from a script, a prompt and a control socket (`host::control`), its JACK and
//!   ALSA drivers and statistics.
//!
//! "Pool" names four things in fugue: the task pool (the crate `fugue-pool`, for fork/join
//! programs that are not audio graphs; not used here), each parallel executor's own worker
//! pool (private to `fugue-exec`), the host's shared pool ([`fugue_exec::SharedPool`]), and
//! the task pool's benchmark (`fugue_bench::pool`); `docs/pool.md` tells them apart.
//!
//! Runnable examples (`crates/engine/examples/`): `embed` builds an engine in a program and
//! feeds and reads it cycle by cycle, as an audio callback would
//! (`cargo run -p fugue-engine --example embed`); `custom_kind` adds a node kind of its own to
//! a [`Registry`] and runs a graph that uses it, without editing fugue: compile the graph with
//! that registry ([`fugue_exec::Plan::compile`]) and build the engine on the plan with
//! [`Engine::with_plan`]; `runtime_kind` registers, at run time, a kind whose constructor
//! holds state and reads a file named relative to the graph's folder, and renders a graph
//! that uses it with [`render`].
//!
//! ```
//! use fugue_engine::{Engine, ExecutorChoice, Registry};
//! let g = fugue_graph::read::ag::parse(
//!     "o = { kind: \"osc\", freq: 1000, };  s = { kind: \"sink\", };  o.1 -> s.1;",
//!     "inline.ag",
//! ).unwrap();
//! let kinds = Registry::with_builtin_kinds();
//! let (mut engine, warnings) =
//!     Engine::build(&g, &kinds, 48_000.0, 48, &ExecutorChoice::default(), false).unwrap();
//! assert!(warnings.is_empty());
//! engine.run_cycle();
//! // 1 kHz at 48 kHz: a quarter period is 12 frames.
//! assert!((engine.plan.output(0)[12] - 1.0).abs() < 1e-6);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

pub mod auto;
pub mod backend;
mod blocks;
mod calibrate;
pub mod check;
pub mod costs;
mod cycle;
mod engine;
mod executor_choice;
mod executor_request;
#[cfg(feature = "clap")]
pub mod flags;
pub mod graphviz;
mod histogram;
pub mod host;
pub mod lint;
pub mod live;
mod options;
pub mod output;
mod placement;
pub mod profile;
mod render;
pub mod report;
mod run;
mod schedule;
pub mod stats;
mod wav;

pub use calibrate::{calibrate, calibrate_within, Calibration};
pub use cycle::{copy_finite, count_non_finite, finite_or_zero, CycleBody};
pub use engine::{build_executor, Engine};
pub use executor_choice::{BuildError, Costs, ExecutorChoice, Pipeline};
pub use executor_request::{check_pipeline, ExecutorRequest};
pub use fugue_dsp::Registry;
pub use options::{
    check_seconds, Backend, Deadline, EndReason, RunError, RunOptions, RunReport,
    JACK_CLIENT_NAME_MAX,
};
pub use placement::place_audio_thread;
pub use profile::{ProfileReport, Profiler};
pub use render::{
    read_wav, render, tail_seconds, wav_channels, Bits, Output, Progress, RenderError,
    RenderOptions, RenderSummary, WavInputError, DEFAULT_SECONDS, MAX_INPUT_SAMPLES, MAX_RATE,
};
pub use run::run;
pub use schedule::lists_from_unit_schedule;
pub use stats::{CycleRecord, StatsOptions, Summary};
