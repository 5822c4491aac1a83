//! Warnings about a graph or a render that still succeeds: said once each on standard error,
//! or, with `--strict`, turned into an error (exit code 1).

use std::path::Path;

use fugue_graph::TaskGraph;

use crate::util::warning;

/// What the graph itself suggests is a mistake at `rate` Hz
/// ([`fugue_engine::lint::file_lints`]); for an `offline` run (a render), without what
/// matters only in real time.
pub fn graph_warnings(graph: &TaskGraph, file: &Path, offline: bool, rate: u32) -> Vec<String> {
    fugue_engine::lint::file_lints(
        graph,
        file,
        &crate::util::registry(),
        offline,
        f64::from(rate),
    )
}

/// What is said of the nodes `names` of `graph` (read from `file`), of kinds no registry
/// knows, that `played` as silence: where the file writes the first, why, and how many more
/// there are (a scheduling graph, `.stg`, is all of them), named up to a few.
fn placeholder_line(
    graph: &TaskGraph,
    file: &Path,
    names: &[String],
    played: &str,
) -> Option<String> {
    const NAMED: usize = 4;
    let first = names.first()?;
    let at = fugue_engine::lint::node_place(graph, first, None)
        .map(|l| format!("{}:{l}: ", file.display()))
        .unwrap_or_default();
    let more = match names.len() - 1 {
        0 => String::new(),
        n => {
            let shown: Vec<String> = names[1..]
                .iter()
                .take(NAMED)
                .map(|n| format!("`{n}`"))
                .collect();
            let rest = if n > NAMED { ", ..." } else { "" };
            format!(
                " (and {n} more node{} of unknown kind: {}{rest})",
                if n == 1 { "" } else { "s" },
                shown.join(", ")
            )
        }
    };
    Some(format!(
        "{at}{}{more}",
        fugue_engine::lint::placeholder(graph, first, played)
    ))
}

/// The nodes of `graph` (read from `file`) whose kind no registry knows, which `--placeholder`
/// makes silent, in one warning (`played`: `plays`, `played`), before anything is built. Not
/// a mistake that `--strict` refuses: the silence was asked for.
pub fn placeholders(graph: &TaskGraph, file: &Path, played: &str) -> Option<String> {
    let registry = crate::util::registry();
    // A feedback edge's two nodes are the graph's own, of no kind of the registry.
    let names: Vec<String> = (0..graph.len())
        .filter(|&v| !graph.is_feedback_node(v) && !registry.contains(&graph.node(v).kind))
        .map(|v| graph.node(v).name.clone())
        .collect();
    placeholder_line(graph, file, &names, played)
}

/// Says `warnings` on standard error, or with `strict` fails with the first of them
/// ([`fugue_engine::lint::strict_error`]).
pub fn report(warnings: &[String], strict: bool) -> anyhow::Result<()> {
    match fugue_engine::lint::strict_error(warnings).filter(|_| strict) {
        Some(e) => Err(anyhow::anyhow!(e)),
        None => {
            warnings.iter().for_each(warning);
            Ok(())
        }
    }
}

/// Says what the engine reported beside a render or a run: what the automatic choice chose
/// (when `says_auto`), its warnings, the nodes of unknown kind played as silence, and the
/// processors that panicked.
pub fn engine_notes(
    says_auto: bool,
    auto: Option<&fugue_engine::auto::AutoReport>,
    warnings: &[String],
    placeholders: (&[String], &TaskGraph, &Path),
    panics: &[fugue_exec::TaskPanic],
) {
    if let Some(a) = auto.filter(|_| says_auto) {
        eprintln!("fugue: {}", a.line());
    }
    warnings.iter().for_each(warning);
    let (names, graph, file) = placeholders;
    if let Some(w) = placeholder_line(graph, file, names, "was rendered") {
        warning(w);
    }
    for p in panics {
        warning(format_args!(
            "node `{}` failed ({}); its output was silenced",
            p.node, p.message
        ));
    }
}
