//! Writing results: files replaced atomically, CSV, one table writer for Markdown and HTML,
//! and figures (SVG and PNG) through plotters.

mod file;
pub mod plot;
pub mod table;

pub use table::{Align, Table};

use std::fmt::Display;
use std::path::Path;

use crate::error::{config, BenchError};

pub use file::{commit, destination, is_disk_full, temp_path, write_atomic, Destination};

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
