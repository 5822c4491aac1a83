//! Warnings about a graph or a render that still succeeds: said once each on standard error,
//! or, with `--strict`, turned into an error (exit code 1).

use std::path::Path;

use fugue_graph::TaskGraph;

/// What the graph itself suggests is a mistake ([`fugue_engine::lint::lint`]), each warning
/// preceded by the file's name.
pub fn graph_warnings(graph: &TaskGraph, file: &Path) -> Vec<String> {
    let registry = crate::util::registry();
    let lints = fugue_engine::lint::lint(graph, &registry);
    lints
        .iter()
        .map(ToString::to_string)
        .map(|w| format!("{}: {w}", file.display()))
        .collect()
}

/// Says `warnings` on standard error, or with `strict` fails with the first of them (and how
/// many more there are).
pub fn report(warnings: &[String], strict: bool) -> anyhow::Result<()> {
    if strict {
        if let Some(first) = warnings.first() {
            let more = match warnings.len() {
                1 => String::new(),
                n => format!(
                    " (and {} more warning{})",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            };
            anyhow::bail!("{first}{more}; --strict makes warnings errors");
        }
    }
    for w in warnings {
        crate::util::warning(w);
    }
    Ok(())
}

/// Says what the engine reported beside a render or a run: what the automatic choice chose
/// (when `says_auto`), its warnings, the nodes of unknown kind played as silence, and the
/// processors that panicked.
pub fn engine_notes(
    says_auto: bool,
    auto: Option<&fugue_engine::auto::AutoReport>,
    warnings: &[String],
    placeholders: &[String],
    panics: &[fugue_exec::TaskPanic],
) {
    if let Some(a) = auto.filter(|_| says_auto) {
        eprintln!("fugue: {}", a.line());
    }
    for w in warnings {
        crate::util::warning(w);
    }
    for name in placeholders {
        crate::util::warning(format_args!(
            "node `{name}` has an unknown kind; it was rendered as silence (--placeholder)"
        ));
    }
    for p in panics {
        crate::util::warning(format_args!(
            "node `{}` failed ({}); its output was silenced",
            p.node, p.message
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_makes_the_first_warning_an_error() {
        let g = fugue_graph::read::ag::parse(
            "o = { kind: \"osc\", freq: 440, volme: 0.5, };  d = { kind: \"osc\", freq: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;",
            "t.ag",
        )
        .unwrap();
        let w = graph_warnings(&g, Path::new("t.ag"));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("t.ag: node `o` has attribute `volme`"),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("t.ag: node `d` (osc) reaches no sink"),
            "{}",
            w[1]
        );
        let e = report(&w, true).unwrap_err().to_string();
        assert!(
            e.ends_with("(and 1 more warning); --strict makes warnings errors"),
            "{e}"
        );
        assert!(report(&w, false).is_ok());
        assert!(report(&[], true).is_ok());
    }
}
