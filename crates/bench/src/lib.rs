//! fugue-bench: every benchmark of fugue as a library, and what they share.
//!
//! Each harness is a function with a plain configuration struct and a typed result, which a
//! unit test can call and which [`cli`] (the flags of `fugue bench ...` and `fugue pool ...`,
//! which the `fugue` binary mounts) fills from the flags, checks and turns into the text
//! printed:
//!
//! - [`overhead`]: the per-cycle cost of running a graph of empty, checking nodes, for each
//!   executor and the peers (rayon, oneTBB);
//! - [`table`]: every executor × graphs × buffer sizes with real DSP, outputs checked
//!   bit-identical to `seq`, speedups against it;
//! - [`capacity`]: the machine's parallel capacity (each core's speed while every core works);
//! - [`ring`]: the ordered ring's throughput against a mutex/condvar ring and peer queues,
//!   one point or the whole sweep;
//! - [`pool`]: the task pool's policies against the sequential program and rayon on
//!   quicksort, Mandelbrot, Voronoi and a spawn tree, written as a folder with plots;
//! - [`host`]: the shared-runtime study: N instances of a graph on one host in each mode,
//!   offline throughput and fairness, real-time misses and the largest N held;
//! - [`study`]: the scheduling study (graphs × executors × threads × buffers × load, in real
//!   time), written as a folder with plots and an HTML report;
//! - [`faust`]: Faust's own builds of a program against fugue on a graph of the same music;
//! - [`profile_cost`]: what the profile costs the cycle.
//!
//! Beside them: [`peers`] (the rayon DAG peer, the checking probe nodes, the oneTBB driver,
//! the ring peers rtrb / `ArrayQueue` / `sync_channel`), [`stats`] (median, spread,
//! percentiles: one implementation for every harness), [`machine`] (CPU, cores, caches, load,
//! tool versions) and [`report`] (atomic file writes, CSV, one table writer for Markdown and
//! HTML, the figures' palette and chart frame, the results folder every benchmark writes). Probes that are not harnesses live in `examples/`.
//!
//! Nothing here prints or exits: progress goes through [`Progress`], results come back as
//! values (or, from [`cli`], as the text to print), failures are [`BenchError`]s.

#![deny(unsafe_op_in_unsafe_fn)]

/// The most cycles one timed run of `bench table` or `bench study` may have (its length
/// times its rate over its buffer): every cycle's record (a study's, about 64 bytes) or time
/// and output hash (a table's, 16 bytes) is kept until the run ends, so a run of more would
/// commit gigabytes. 8,388,608 cycles: 46 minutes at 48 kHz and 16 frames.
pub const MAX_CYCLES_PER_RUN: usize = 1 << 23;

/// Refuses a run of `seconds` at `rate` Hz and `buffer` frames per cycle that would have more
/// than [`MAX_CYCLES_PER_RUN`] cycles, in one sentence that names `what` (the flags or the
/// spec) and the figures.
pub fn check_cycles_per_run(
    what: &str,
    seconds: f64,
    rate: u32,
    buffer: usize,
) -> Result<(), error::BenchError> {
    let cycles = (seconds * f64::from(rate) / buffer.max(1) as f64).ceil();
    if cycles > MAX_CYCLES_PER_RUN as f64 {
        return Err(error::BenchError::Config(format!(
            "{what}: {seconds} s at {rate} Hz and {} per cycle make {cycles:.0} cycles per run, more than the {MAX_CYCLES_PER_RUN} a run may keep (docs/limits.md); shorten the runs or raise the buffer",
            fugue_engine::report::counted(buffer, "frame")
        )));
    }
    Ok(())
}

pub mod capacity;
pub mod check;
pub mod cli;
pub mod error;
pub mod faust;
pub mod host;
pub mod machine;
pub mod overhead;
pub mod peers;
pub mod pool;
pub mod profile_cost;
pub mod progress;
pub mod report;
pub mod ring;
pub mod runner;
pub mod shapes;
pub mod stats;
pub mod study;
pub mod table;

pub use error::{BenchError, Context};
pub use progress::{Event, NoProgress, Progress};
