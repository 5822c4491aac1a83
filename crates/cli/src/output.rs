//! Output files named on the command line, checked before any work is done and written so
//! that nothing the user had is lost or replaced without asking.
//!
//! A new or existing regular file (`--force` to replace one) is written whole under a short
//! temporary name beside it and renamed. A named pipe (FIFO) or a character device
//! (`/dev/null`) is written directly once the output is complete, never replaced, and needs
//! no `--force`. Refused, with one sentence naming the path: a directory, a block device, a
//! socket, a symbolic link to nothing, a folder that does not exist, and an output that is
//! one of the command's input files (even with `--force`).

use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use fugue_bench::report::{self, Destination};

use crate::signals::{self, Temp};
use crate::util::usage;

/// A checked output path.
#[derive(Debug)]
pub struct Output {
    /// The path as given.
    path: PathBuf,
    /// What stands there.
    dest: Destination,
}

/// The first of `inputs` that is the same file as `dest` (same device and inode).
fn same_file<'a>(dest: &Path, inputs: &[&'a Path]) -> Option<&'a Path> {
    let out = std::fs::metadata(dest).ok()?;
    inputs
        .iter()
        .copied()
        .find(|i| std::fs::metadata(i).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()))
}

impl Output {
    /// Checks that `path` may be written: see the module's documentation. `inputs` are the
    /// files the command reads.
    pub fn check(path: &Path, force: bool, inputs: &[&Path]) -> anyhow::Result<Output> {
        let dest = report::destination(path)?;
        if let Destination::File(p) = &dest {
            if let Some(input) = same_file(p, inputs) {
                anyhow::bail!(
                    "{} is the input file {}; name another output file",
                    path.display(),
                    input.display()
                );
            }
            if !force {
                return Err(usage(format!(
                    "{} already exists; pass --force to overwrite it",
                    path.display()
                )));
            }
        }
        // The folder exists (the temporary name is not used).
        report::temp_path(path)?;
        Ok(Output {
            path: path.to_path_buf(),
            dest,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output is a named pipe or a character device, written directly.
    pub fn is_stream(&self) -> bool {
        self.dest.is_stream()
    }

    /// A new temporary file for this output, removed unless [`Output::commit`] gives it its
    /// name.
    pub fn temp(&self) -> anyhow::Result<Temp> {
        Ok(Temp::new(report::temp_path(&self.path)?, &self.path))
    }

    /// Gives the finished temporary file its name (a rename, or a copy into a pipe or a
    /// device). A signal from here on ends the process at once, the temporary file removed:
    /// a pipe may wait for its reader.
    pub fn commit(&self, tmp: Temp) -> anyhow::Result<()> {
        signals::not_polled();
        let res = report::commit(tmp.path(), &self.path);
        tmp.keep();
        Ok(res?)
    }

    /// Writes `bytes` (through a temporary file for a regular file).
    pub fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        signals::not_polled();
        if self.is_stream() {
            return Ok(report::write_atomic(&self.path, bytes)?);
        }
        let tmp = self.temp()?;
        let written = std::fs::File::create(tmp.path()).and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
        if let Err(e) = written {
            return Err(fugue_bench::BenchError::io(
                format!("cannot write {}", self.path.display()),
                e,
            )
            .into());
        }
        self.commit(tmp)
    }
}
