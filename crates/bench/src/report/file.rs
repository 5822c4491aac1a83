//! Output files, written by [`fugue_engine::output`]: what stands at an output path, the
//! temporary name a file is written under, and the step that gives a finished temporary file
//! its name. The functions here return the benchmarks' error.

use std::path::{Path, PathBuf};

use crate::error::BenchError;

pub use fugue_engine::output::{is_disk_full, Destination};

/// Says how an output at `path` is written ([`fugue_engine::output::destination`]).
pub fn destination(path: &Path) -> Result<Destination, BenchError> {
    Ok(fugue_engine::output::destination(path)?)
}

/// A new temporary name for an output to `path` ([`fugue_engine::output::temp_path`]).
pub fn temp_path(path: &Path) -> Result<PathBuf, BenchError> {
    Ok(fugue_engine::output::temp_path(path)?)
}

/// Gives the finished temporary file `tmp` its name `path`
/// ([`fugue_engine::output::commit`]).
pub fn commit(tmp: &Path, path: &Path) -> Result<(), BenchError> {
    Ok(fugue_engine::output::commit(tmp, path)?)
}

/// Writes `bytes` to `path` through a temporary file and a rename
/// ([`fugue_engine::output::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    Ok(fugue_engine::output::write_atomic(path, bytes)?)
}
