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
pub(crate) fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

/// The first cell of every row of the CSV text `text` as [`Csv`] writes it (RFC 4180: a
/// quoted cell may hold commas, doubled quotes and line breaks), the header line left out.
pub fn first_column(text: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut chars = text.chars().peekable();
    let mut header = true;
    while chars.peek().is_some() {
        // The row's first cell.
        let mut cell = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        cell.push('"');
                    } else {
                        break;
                    }
                } else {
                    cell.push(c);
                }
            }
        }
        // The rest of the row (an unquoted first cell, then the other cells), to its end.
        let mut quoted = false;
        let mut first = true;
        for c in chars.by_ref() {
            if c == '"' {
                quoted = !quoted;
            } else if !quoted && c == ',' {
                first = false;
            } else if !quoted && c == '\n' {
                break;
            }
            if first && c != ',' && c != '\r' {
                cell.push(c);
            }
        }
        if !std::mem::take(&mut header) {
            cells.push(cell);
        }
    }
    cells
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
    fn first_column_reads_back_what_csv_writes() {
        let names = ["plain", "a,b", "q\"r\"", "line\nbreak", "", "<b>x&y,\"q\""];
        let mut csv = Csv::new(&["graph", "other"]);
        for n in names {
            csv.row([n, "1,\"2\"\n3"]);
        }
        assert_eq!(first_column(csv.as_str()), names);
        assert!(first_column("graph,x\n").is_empty());
        assert_eq!(first_column("graph\r\nz\r\n"), ["z"]);
    }

    #[test]
    fn cells_with_commas_or_quotes_are_quoted() {
        let mut c = Csv::new(&["a", "b", "c"]);
        c.row(["plain", "one, two", "say \"x\""]);
        assert_eq!(c.as_str(), "a,b,c\nplain,\"one, two\",\"say \"\"x\"\"\"\n");
    }
}
