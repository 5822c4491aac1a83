//! Helpers shared by the commands: reading graphs, error kinds and exit codes, safe output.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

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
    temp_path(path, force)?;
    Ok(fugue_bench::report::write_atomic(path, bytes)?)
}

/// Checks that `path` may be written (absent, or `force`, in an existing folder) and returns
/// a temporary name beside it.
pub fn temp_path(path: &Path, force: bool) -> anyhow::Result<PathBuf> {
    if path.exists() && !force {
        return Err(usage(format!(
            "{} already exists; pass --force to overwrite it",
            path.display()
        )));
    }
    let tmp = fugue_bench::report::temp_path(path)?;
    if let Some(dir) = tmp.parent().filter(|d| !d.is_dir()) {
        anyhow::bail!(
            "cannot write {}: folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    Ok(tmp)
}

/// Set by Ctrl-C (the first call installs the handler; without one, e.g. when another is
/// already set, Ctrl-C keeps its default effect).
pub fn ctrl_c_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let _ = ctrlc::set_handler(move || f.store(true, Ordering::Relaxed));
        flag
    })
    .clone()
}

/// A progress bar of `total` steps on standard error, drawn with `template`.
pub fn progress_bar(total: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// A value parser for a whole number from 1 to `max`: `0`, `-2` or `x` are refused with a
/// sentence that says what is accepted.
pub fn count(max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s: &str| match s.trim().parse::<i128>() {
        Ok(v) if v < 1 => Err(format!("must be at least 1 (got {v})")),
        Ok(v) if v > i128::from(max) => Err(format!("must be at most {max} (got {v})")),
        Ok(v) => Ok(v as u64),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}
