//! `fugue check GRAPH`: the graph read and checked against the node kinds, every problem said
//! with its place and, for a near miss, the valid name it probably meant.

use std::path::{Path, PathBuf};

use fugue_engine::check::{self, Problem, Severity};
use fugue_graph::{Format, TaskGraph};

use crate::util;

/// Arguments of `fugue check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg, .dot, or a Faust program .dsp).
    pub file: PathBuf,
    /// The file's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
    /// Fail (exit code 1) on warnings too: a node that reaches no sink.
    #[arg(long)]
    pub strict: bool,
    /// The sample rate in Hz the nodes are checked at (ranges that depend on it: a filter's
    /// frequency below half of it, an LV2 control given as a fraction of it).
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: u32,
}

/// Runs `fugue check`: exit code 0 when the graph has no error (warnings are said), 1
/// otherwise, each problem on its own line of standard error.
pub fn run(a: Args) -> anyhow::Result<()> {
    let g = util::read_graph(&a.file, a.format)?;
    let problems = check::check_at(&g, &util::registry(), f64::from(a.rate));
    say(&problems, &a.file);
    let errors = problems
        .iter()
        .filter(|p| a.strict || p.severity == Severity::Error)
        .count();
    if errors > 0 {
        anyhow::bail!(
            "{}: {errors} problem{} (listed above){}",
            a.file.display(),
            if errors == 1 { "" } else { "s" },
            if a.strict {
                "; --strict makes warnings errors"
            } else {
                ""
            }
        );
    }
    println!("{}: {}", a.file.display(), verdict(&g, problems.len()));
    Ok(())
}

/// What a graph without errors is.
fn verdict(g: &TaskGraph, warnings: usize) -> String {
    let what = if check::has_kinds(g) {
        "every kind, attribute and port checked"
    } else {
        "a task graph (no node gives a kind): it can be scheduled, not rendered"
    };
    let warned = match warnings {
        0 => String::new(),
        1 => " (1 warning)".into(),
        n => format!(" ({n} warnings)"),
    };
    format!(
        "ok, {} nodes, {} edges; {what}{warned}",
        g.written_nodes(),
        g.written_edges()
    )
}

/// Says each problem on standard error: `fugue: error: FILE:LINE:COLUMN: message`.
pub fn say(problems: &[Problem], file: &Path) {
    let file = file.display().to_string();
    for p in problems {
        let line = fugue_graph::error::shorten_quotes(&p.line(&file)).into_owned();
        match p.severity {
            Severity::Error => eprintln!("fugue: error: {line}"),
            Severity::Warning => util::warning(line),
        }
    }
}
