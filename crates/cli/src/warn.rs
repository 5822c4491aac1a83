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
    for name in names {
        // Where the file writes the node's kind, as the other warnings of a node say.
        let at = fugue_engine::lint::node_place(graph, name, None)
            .map(|l| format!("{}:{l}: ", file.display()))
            .unwrap_or_default();
        warning(format_args!(
            "{at}{}",
            fugue_engine::lint::placeholder(graph, name, "was rendered")
        ));
    }
    for p in panics {
        warning(format_args!(
            "node `{}` failed ({}); its output was silenced",
            p.node, p.message
        ));
    }
}
