//! Writing results: files replaced atomically, CSV, one table writer for Markdown and HTML,
//! and figures (SVG and PNG) through plotters.

pub mod plot;
pub mod table;

pub use table::{Align, Table};

use std::fmt::Display;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{config, BenchError};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so that
/// no half-written file ever stands under the final name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    let tmp = temp_path(path)?;
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(BenchError::io(
            format!("cannot write {}", path.display()),
            e,
        ));
    }
    rename(&tmp, path)
}

/// Renames the temporary file `tmp` to `path`.
pub fn rename(tmp: &Path, path: &Path) -> Result<(), BenchError> {
    std::fs::rename(tmp, path)
        .map_err(|e| BenchError::io(format!("cannot write {}", path.display()), e))
}

/// A temporary name beside `path` (hidden, with the process id), for [`write_atomic`].
pub fn temp_path(path: &Path) -> Result<PathBuf, BenchError> {
    if path.is_dir() {
        return config(format!(
            "{} is a directory, not a file name",
            path.display()
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(dir.join(format!(".{name}.{}.part", std::process::id())))
}

/// Refuses (a configuration error) when one of `files` exists in `dir` and not `force`.
pub fn refuse_existing(dir: &Path, files: &[&str], force: bool) -> Result<(), BenchError> {
    for f in files {
        let p = dir.join(f);
        if p.exists() && !force {
            return config(format!(
                "{} already exists; pass --force to overwrite it",
                p.display()
            ));
        }
    }
    Ok(())
}

/// Creates the folder `dir` (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::io(format!("cannot create {}", dir.display()), e))
}

/// A CSV text: a header line, then one line per row (cells are written as they are: the
/// harnesses' cells hold no commas).
#[derive(Clone, Debug)]
pub struct Csv(String);

impl Csv {
    /// A CSV with these column names.
    pub fn new(columns: &[&str]) -> Csv {
        Csv(format!("{}\n", columns.join(",")))
    }

    /// Appends a row.
    pub fn row<I: IntoIterator>(&mut self, cells: I)
    where
        I::Item: Display,
    {
        let cells: Vec<String> = cells.into_iter().map(|c| c.to_string()).collect();
        self.0.push_str(&cells.join(","));
        self.0.push('\n');
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Writes the text to `path` ([`write_atomic`]).
    pub fn write(&self, path: &Path) -> Result<(), BenchError> {
        write_atomic(path, self.0.as_bytes())
    }
}

/// `value` with `digits` decimals, or an empty cell when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or(String::new(), |x| format!("{x:.digits$}"))
}
