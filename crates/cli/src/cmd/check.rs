//! `fugue check GRAPH`: the graph read and checked against the node kinds, every problem said
//! with its place and, for a near miss, the valid name it probably meant.

use std::path::{Path, PathBuf};

use fugue_engine::check::{self, Problem, Severity};
use fugue_engine::report::counted;
use fugue_graph::{Format, TaskGraph};

use crate::{util, warn};

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
    /// Frames per cycle the nodes are checked at (a resampler's ratio must give a whole
    /// block at its node, as in a render or run at this buffer size).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
}

/// Runs `fugue check`: exit code 0 when the graph has no error (warnings are said), 1
/// otherwise, each problem on its own line of standard error.
pub fn run(a: Args) -> anyhow::Result<()> {
    let g = util::read_graph(&a.file, a.format)?;
    let problems = check::check_with(&g, &util::registry(), f64::from(a.rate), a.buffer as usize);
    say(&problems, &a.file);
    let errors: usize = problems
        .iter()
        .filter(|p| a.strict || p.severity == Severity::Error)
        .map(|p| p.count)
        .sum();
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
    println!(
        "{}",
        util::one_line(&format!(
            "{}: {}",
            a.file.display(),
            verdict(&g, problems.iter().map(|p| p.count).sum())
        ))
    );
    Ok(())
}

/// What a graph without errors is.
fn verdict(g: &TaskGraph, warnings: usize) -> String {
    let what = if g.is_empty() {
        "an empty graph"
    } else if check::has_kinds(g) {
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
        "ok, {}, {}; {what}{warned}",
        counted(g.written_nodes(), "node"),
        counted(g.written_edges(), "edge")
    )
}

/// Says each problem on standard error: `fugue: error: FILE:LINE:COLUMN: message`; a problem
/// that [`warn::GROUP_AT`] nodes or more share is said once, followed by one line naming the
/// others ([`warn::group`]).
pub fn say(problems: &[Problem], file: &Path) {
    let file = file.display().to_string();
    let keys: Vec<_> = problems.iter().map(same_but_node).collect();
    let items: Vec<warn::NodeSentence<'_, (bool, &str)>> = problems
        .iter()
        .zip(&keys)
        .map(|(p, k)| {
            k.as_ref().map(|(name, rest)| {
                (
                    (p.severity == Severity::Error, rest.as_str()),
                    name.as_str(),
                    p.place.map(|at| at.to_string()),
                )
            })
        })
        .collect();
    for (i, also) in warn::group(&items) {
        let p = &problems[i];
        let line = fugue_graph::error::shorten_quotes(&p.line(&file)).into_owned();
        let also = also.map(|a| format!("{file}: {a}"));
        for line in std::iter::once(line).chain(also) {
            match p.severity {
                Severity::Error => eprintln!("fugue: error: {}", util::one_line(&line)),
                Severity::Warning => util::warning(line),
            }
        }
    }
}

/// A problem's node name and the rest of its sentence, for one that begins with the node
/// (`` node `NAME` ... ``): problems whose rest is the same are said together.
fn same_but_node(p: &Problem) -> Option<(String, String)> {
    let rest = p.message.strip_prefix("node `")?;
    let end = rest.find('`')?;
    Some((rest[..end].to_string(), rest[end + 1..].to_string()))
}
