//! Warnings about a graph or a render that still succeeds: said once each on standard error,
//! or, with `--strict`, turned into an error (exit code 1).

use std::path::Path;

use fugue_dsp::Registry;
use fugue_engine::{Bits, RenderSummary};
use fugue_graph::TaskGraph;

/// What the graph itself suggests is a mistake: an attribute that its node's kind does not
/// read (a misspelling, most often), and a node whose outputs reach no `sink` (computed and
/// never heard). Graphs without `sink` nodes (task graphs: .stg, .dot) get only the first.
pub fn graph_warnings(graph: &TaskGraph, file: &Path) -> Vec<String> {
    let reg = Registry::with_builtin_kinds();
    let f = file.display();
    let mut out = Vec::new();
    for n in graph.nodes() {
        let Some(doc) = reg.doc(&n.kind) else {
            continue;
        };
        for (attr, _) in &n.attrs {
            if !doc.reads(attr) {
                out.push(format!(
                    "{f}: node `{}` has attribute `{attr}`, which kind {} does not read (it reads {}; every node may also give kind, in, out and wcet)",
                    n.name,
                    doc.name,
                    doc.attribute_names()
                ));
            }
        }
    }
    let is_sink: Vec<bool> = graph.nodes().iter().map(|n| n.kind == "sink").collect();
    if is_sink.iter().any(|&s| s) {
        // Walk back from the sinks: every node reached feeds one.
        let mut heard = is_sink.clone();
        let mut stack: Vec<usize> = (0..graph.len()).filter(|&i| is_sink[i]).collect();
        while let Some(v) = stack.pop() {
            for &(p, _) in graph.preds(v) {
                if !heard[p] {
                    heard[p] = true;
                    stack.push(p);
                }
            }
        }
        for (i, n) in graph.nodes().iter().enumerate() {
            if !heard[i] {
                out.push(format!(
                    "{f}: node `{}` ({}) reaches no sink: it is computed every cycle and never heard; connect it or remove it",
                    n.name,
                    if n.kind.is_empty() { "no kind" } else { &n.kind }
                ));
            }
        }
    }
    out
}

/// What an input file given to a render suggests is a mistake: `--input` on a graph with no
/// `source` node (the file is never read), and a file with fewer channels than the sources'
/// ports (the ports beyond the file's channels read silence).
pub fn input_warnings(graph: &TaskGraph, input: Option<&Path>) -> Vec<String> {
    let Some(input) = input else {
        return Vec::new();
    };
    let ports: usize = (0..graph.len())
        .filter(|&v| graph.node(v).kind == "source")
        .map(|v| graph.outputs(v))
        .sum();
    if ports == 0 {
        return vec![format!(
            "--input {}: the graph has no source node, so the file is not read",
            input.display()
        )];
    }
    match fugue_engine::wav_channels(input) {
        Some(ch) if usize::from(ch) < ports => vec![format!(
            "--input {} has {ch} channel{} but the graph's source nodes have {ports} ports; ports {}..{ports} read silence",
            input.display(),
            if ch == 1 { "" } else { "s" },
            usize::from(ch) + 1
        )],
        _ => Vec::new(),
    }
}

/// What the rendered audio suggests went wrong: a float file that peaks above 0 dBFS
/// (samples beyond ±1.0 clip when played or converted), clipped samples in an integer file,
/// and silence (with the likely cause when the graph has `source` nodes and no input was
/// given).
pub fn render_warnings(
    s: &RenderSummary,
    bits: Bits,
    output: &str,
    graph: &TaskGraph,
    had_input: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if s.frames > 0 && s.channels > 0 && s.peak == 0.0 {
        let sources = graph.nodes().iter().any(|n| n.kind == "source");
        out.push(format!(
            "{output} is silent (every sample is 0){}",
            if sources && !had_input {
                "; the graph's source nodes read silence without --input FILE.wav"
            } else {
                ""
            }
        ));
    } else if bits == Bits::F32 && s.peak > 1.0 {
        out.push(format!(
            "{output} peaks at {:+.1} dBFS: its samples beyond ±1.0 will clip when played or converted to integers; lower a volume in the graph",
            s.peak_dbfs()
        ));
    }
    if s.clipped > 0 {
        out.push(format!(
            "{output}: {} samples were clipped to ±1.0 (peak {:+.1} dBFS before clipping); lower a volume in the graph, or render with --bits 32",
            s.clipped,
            s.peak_dbfs()
        ));
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(text: &str) -> TaskGraph {
        fugue_graph::read::ag::parse(text, "t.ag").unwrap()
    }

    #[test]
    fn a_misspelt_attribute_and_a_dead_node_are_named() {
        let g = graph(
            "o = { kind: \"osc\", freq: 440, volme: 0.5, };  d = { kind: \"osc\", freq: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;",
        );
        let w = graph_warnings(&g, Path::new("t.ag"));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("t.ag: node `o` has attribute `volme`, which kind osc does not read (it reads freq, phase, volume;"),
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

    #[test]
    fn a_clean_graph_has_no_warning() {
        let g = graph("o = { kind: \"osc\", freq: 440, volume: 0.5, wcet: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;");
        assert!(graph_warnings(&g, Path::new("t.ag")).is_empty());
    }
}
