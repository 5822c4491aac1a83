//! fugue-engine: runs compiled graphs. For now, the offline render: [`render`] runs the
//! graph cycle after cycle with the sequential executor and hands the sink channels' blocks
//! to a thread that writes the WAV file, so that audio is never written by the thread that
//! computes it (DESIGN.md, "The data path", step 5).
//!
//! Real time: [`run()`] plays a graph through a [`backend`] (JACK, or `clocked` without an
//! audio server), one measured cycle per buffer period; each cycle's [`CycleRecord`] travels
//! through a single-producer ordered ring to a statistics thread ([`stats`]).

#![deny(unsafe_op_in_unsafe_fn)]

pub mod backend;
mod blocks;
pub mod executor;
mod render;
pub mod run;
pub mod stats;

pub use executor::{calibrate, make_executor, Calibration, Costs, ExecutorChoice, ExecutorError};
pub use render::{
    render, Bits, Output, Progress, RenderError, RenderOptions, RenderSummary, DEFAULT_SECONDS,
};
pub use run::{run, Backend, Deadline, EndReason, RunError, RunOptions, RunReport};
pub use stats::{CycleRecord, StatsOptions, Summary};
