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
//! - [`calibrate`]: each node's measured cost (median and 99th percentile per cycle), for
//!   static schedules.
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
mod choice;
mod cycle;
mod engine;
pub mod host;
mod options;
mod placement;
pub mod profile;
mod render;
mod run;
mod schedule;
pub mod stats;
mod wav;

pub use calibrate::{calibrate, Calibration};
pub use choice::{BuildError, Costs, ExecutorChoice, Pipeline};
pub use cycle::CycleBody;
pub use engine::{build_executor, Engine};
pub use fugue_dsp::Registry;
pub use options::{
    Backend, Deadline, EndReason, RunError, RunOptions, RunReport, JACK_CLIENT_NAME_MAX,
};
pub use placement::place_audio_thread;
pub use profile::{ProfileReport, Profiler};
pub use render::{
    read_wav, render, wav_channels, Bits, Output, Progress, RenderError, RenderOptions,
    RenderSummary, WavInputError, DEFAULT_SECONDS, MAX_INPUT_SAMPLES,
};
pub use run::run;
pub use schedule::lists_from_unit_schedule;
pub use stats::{CycleRecord, StatsOptions, Summary};
