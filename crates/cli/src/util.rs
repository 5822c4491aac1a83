//! Helpers shared by the commands: reading graphs, error kinds and exit codes, safe output.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use fugue_graph::{Format, ReadError, TaskGraph};

/// A usage error: exit code 2.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Returns a usage error (exit code 2) with this message.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(msg.into()))
}

/// The exit code for an error: 2 for usage errors (a benchmark's configuration errors
/// included), 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| c.downcast_ref::<Usage>().is_some())
        || e.chain().any(|c| {
            c.downcast_ref::<fugue_bench::BenchError>()
                .is_some_and(|b| b.is_config())
        })
        || e.chain().any(|c| {
            matches!(
                c.downcast_ref::<ReadError>(),
                Some(ReadError::UnknownFormat { .. })
            )
        })
    {
        2
    } else {
        1
    }
}

/// The error's message: its causes joined with `: `.
pub fn message(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// Parses a `--format` value.
pub fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown format `{s}`; expected ag, stg or dot"))
}

/// Reads a graph file (format from `format` or the extension).
pub fn read_graph(path: &Path, format: Option<Format>) -> anyhow::Result<TaskGraph> {
    Ok(fugue_graph::read_file(path, format)?)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so
/// that no half-written file ever stands under the final name. Refuses to replace an
/// existing file unless `force`.
pub fn write_atomic(path: &Path, force: bool, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = temp_path(path, force)?;
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Checks that `path` may be written (absent, or `force`) and returns a temporary name
/// beside it.
pub fn temp_path(path: &Path, force: bool) -> anyhow::Result<PathBuf> {
    if path.exists() && !force {
        return Err(usage(format!(
            "{} already exists; pass --force to overwrite it",
            path.display()
        )));
    }
    if path.is_dir() {
        return Err(usage(format!(
            "{} is a directory, not a file name",
            path.display()
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "cannot write {}: folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(dir.join(format!(".{name}.{}.part", std::process::id())))
}
