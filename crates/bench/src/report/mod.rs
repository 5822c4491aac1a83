//! Writing results: files replaced atomically, CSV, one table writer for Markdown and HTML,
//! figures (SVG and PNG) through plotters, and the results folder every benchmark writes.

mod file;
pub mod folder;
pub mod plot;
pub mod table;

pub use folder::{Existing, Folder};
pub use table::{Align, Table};

use std::fmt::Display;
use std::path::Path;

use crate::error::BenchError;

pub use file::{commit, destination, is_disk_full, temp_path, write_atomic, Destination};

/// Creates the folder `dir` (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::io(format!("cannot create {}", dir.display()), e))
}

/// A CSV text (RFC 4180): a header line, then one line per row; a cell holding a comma, a
/// double quote or a line break is quoted, its quotes doubled.
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
        let cells: Vec<String> = cells.into_iter().map(|c| quote(&c.to_string())).collect();
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

/// A CSV cell: `cell` as it is, or in double quotes (its own doubled) when it holds a comma,
/// a double quote or a line break.
fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// `value` with `digits` decimals, or an empty cell when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or(String::new(), |x| format!("{x:.digits$}"))
}

/// The first value of `values` that comes again later, as text: a benchmark given one value
/// twice (`--threads 1,1`, a study's `buffers = [256, 256]`) would run its configurations
/// twice, and its rows could not be told apart.
pub(crate) fn first_twice<T: PartialEq + ToString>(values: &[T]) -> Option<String> {
    values
        .iter()
        .enumerate()
        .find(|(i, v)| values[i + 1..].contains(v))
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_with_commas_or_quotes_are_quoted() {
        let mut c = Csv::new(&["a", "b", "c"]);
        c.row(["plain", "one, two", "say \"x\""]);
        assert_eq!(c.as_str(), "a,b,c\nplain,\"one, two\",\"say \"\"x\"\"\"\n");
    }
}
