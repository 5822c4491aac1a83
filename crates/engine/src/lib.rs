//! fugue-engine: runs compiled graphs. For now, the offline render: [`render`] runs the
//! graph cycle after cycle with the sequential executor and hands the sink channels' blocks
//! to a thread that writes the WAV file, so that audio is never written by the thread that
//! computes it (DESIGN.md, "The data path", step 5).

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
