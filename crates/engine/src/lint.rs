//! Warnings about a graph, an input file or a rendered output that still work: what they
//! suggest is a mistake. [`lint`] looks at a graph (what every front end that loads one
//! says), [`input`] at the WAV file given to a render, [`audio`] at what a render produced.
//! Each warning is a [`Warning`], said in one sentence by its `Display`.

use std::path::{Path, PathBuf};

use fugue_dsp::Registry;
use fugue_graph::TaskGraph;

use crate::{Bits, RenderSummary};

/// What looks like a mistake.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// A node has an attribute that its kind does not read (a misspelling, most often).
    UnreadAttribute {
        /// The node's name.
        node: String,
        /// The attribute.
        attr: String,
        /// The node's kind.
        kind: String,
        /// The attributes the kind reads, comma-separated.
        reads: String,
        /// The attribute the kind reads that is closest to `attr`, when one is a likely
        /// misspelling.
        nearest: Option<String>,
    },
    /// What a node's kind says of it ([`fugue_dsp::Linter`]: a Faust node's attribute that
    /// names none of its program's parameters), in the kind's words.
    OfKind {
        /// The node's name.
        node: String,
        /// The attribute it is about, when one.
        attr: Option<String>,
        /// The kind's sentence.
        text: String,
        /// Whether it matters only in real time ([`fugue_dsp::LintNote::real_time`]).
        real_time: bool,
        /// Whether it says the node does not read the attribute
        /// ([`fugue_dsp::LintNote::unread`]): an error for `fugue check`.
        unread: bool,
    },
    /// A node whose outputs reach no `sink`: computed every cycle and never heard.
    Unheard {
        /// The node's name.
        node: String,
        /// Its kind (empty: none).
        kind: String,
    },
    /// An attribute the file's reader left out that neither fugue nor Graphviz reads
    /// ([`fugue_graph::UnreadKey`]: DOT's edges, edge defaults and graph attributes, and a
    /// task graph's node keys close to one read): a misspelling, most often.
    UnreadKey {
        /// Where its key is written.
        at: fugue_graph::Location,
        /// What gives it, in words.
        of: String,
        /// The key.
        key: String,
        /// The key read there that it is closest to.
        nearest: Option<String>,
    },
    /// More such attributes than are named one by one ([`fugue_graph::MAX_UNREAD_KEYS`]).
    UnreadKeysMore {
        /// The attributes not named.
        more: usize,
    },
    /// An audio graph (nodes of audio kinds, not a task graph's) with no `sink` node: nothing
    /// of it is heard; `render` refuses it, `run` and the host play silence.
    NoSink,
    /// A graph with no node at all (an empty file): `render` refuses it, `run` and the host
    /// play silence.
    Empty,
    /// More nodes reach no sink than are named one by one ([`MAX_UNHEARD_NAMED`]): how many
    /// more.
    UnheardMore {
        /// The nodes not named.
        more: usize,
    },
    /// An input file given to a graph that has no `source` node, or whose `source` nodes
    /// have no output port: it is not read.
    InputNotRead {
        /// The input file.
        input: PathBuf,
        /// How many `source` nodes the graph has (all without ports).
        sources: usize,
    },
    /// An input file with fewer channels than the graph's `source` ports (the other ports
    /// read silence), or more (the others are not read).
    InputChannels {
        /// The input file.
        input: PathBuf,
        /// Its channels.
        channels: u16,
        /// The source nodes' output ports.
        ports: usize,
    },
    /// The rendered output holds samples that are not finite numbers.
    NonFinite {
        /// The output, as shown to the user.
        output: String,
        /// How many.
        samples: u64,
        /// Whether the file holds integers (where they were written as 0 or ±1).
        integer: bool,
    },
    /// The rendered output is silent.
    Silent {
        /// The output, as shown to the user.
        output: String,
        /// Whether the graph has `source` nodes and no input was given (the likely cause).
        no_input: bool,
    },
    /// A float output that peaks above 0 dBFS.
    Peak {
        /// The output, as shown to the user.
        output: String,
        /// The peak in dBFS.
        dbfs: f64,
    },
    /// Samples of an integer output clipped to ±1.0.
    Clipped {
        /// The output, as shown to the user.
        output: String,
        /// How many.
        samples: u64,
        /// The peak in dBFS, before clipping.
        dbfs: f64,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::UnreadAttribute { node, attr, kind, reads, nearest: Some(near) } => write!(
                f,
                "node `{node}` has attribute `{attr}`, which kind {kind} does not read; did you mean `{near}`? (it reads {reads})"
            ),
            Warning::UnreadAttribute { node, attr, kind, reads, nearest: None } => write!(
                f,
                "node `{node}` has attribute `{attr}`, which kind {kind} does not read (it reads {reads}; every node may also give kind, in, out and wcet)"
            ),
            Warning::OfKind { text, .. } => f.write_str(text),
            Warning::UnreadKey { of, key, nearest, .. } => write!(
                f,
                "attribute `{key}` of {of} is read neither by fugue nor by Graphviz, so it is left out{}",
                nearest
                    .as_ref()
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default()
            ),
            Warning::UnreadKeysMore { more } => write!(
                f,
                "{more} more attribute{} read neither by fugue nor by Graphviz (not named one by one)",
                if *more == 1 { "" } else { "s" }
            ),
            Warning::Unheard { node, kind } => write!(
                f,
                "node `{node}` ({}) reaches no sink: it is computed every cycle and never heard; connect it or remove it",
                if kind.is_empty() { "no kind" } else { kind }
            ),
            Warning::NoSink => f.write_str(
                "the graph has no sink node, so none of it is heard (render refuses it; run and the host play silence); connect the audio to a node of kind \"sink\"",
            ),
            Warning::Empty => f.write_str(
                "the graph has no node, so it is silent (render refuses it; run and the host play silence)",
            ),
            Warning::UnheardMore { more } => write!(
                f,
                "{more} more node{} reach{} no sink (not named one by one)",
                if *more == 1 { "" } else { "s" },
                if *more == 1 { "es" } else { "" }
            ),
            Warning::InputNotRead { input, sources: 0 } => write!(
                f,
                "--input {}: the graph has no source node, so the file is not read (without --seconds, its length still sets the render's)",
                input.display()
            ),
            Warning::InputNotRead { input, sources } => write!(
                f,
                "--input {}: {} no output port in use (no edge leaves it, or it says `out: 0`), so the file is not read (without --seconds, its length still sets the render's)",
                input.display(),
                if *sources == 1 {
                    "the graph's source node has".to_string()
                } else {
                    format!("none of the graph's {sources} source nodes has")
                },
            ),
            Warning::InputChannels { input, channels, ports } if usize::from(*channels) < *ports => write!(
                f,
                "--input {} has {channels} channel{} but the graph's source nodes have {ports} ports; {}",
                input.display(),
                if *channels == 1 { "" } else { "s" },
                if usize::from(*channels) + 1 == *ports {
                    format!("port {ports} reads silence")
                } else {
                    format!("ports {} to {ports} read silence", usize::from(*channels) + 1)
                }
            ),
            Warning::InputChannels { input, channels, ports } => write!(
                f,
                "--input {} has {channels} channels but the graph's source nodes have {ports} port{}; {}",
                input.display(),
                if *ports == 1 { "" } else { "s" },
                if ports + 1 == usize::from(*channels) {
                    format!("channel {channels} is not read")
                } else {
                    format!("channels {} to {channels} are not read", ports + 1)
                }
            ),
            Warning::NonFinite {
                output,
                samples,
                integer,
            } => write!(
                f,
                "{output}: {samples} samples are not finite numbers (NaN or infinity{}): a node's output overflowed, or the input file holds them; look for a level, gain or feedback that is too large",
                if *integer {
                    ", written as 0 or full scale"
                } else {
                    ""
                }
            ),
            Warning::Silent { output, no_input } => write!(
                f,
                "{output} is silent (every sample is 0){}",
                if *no_input {
                    "; the graph's source nodes read silence without --input FILE.wav"
                } else {
                    ""
                }
            ),
            Warning::Peak { output, dbfs } => write!(
                f,
                "{output} peaks at {}: its samples beyond ±1.0 will clip when played or converted to integers; lower a volume in the graph",
                above_full_scale(*dbfs)
            ),
            Warning::Clipped { output, samples, dbfs } => write!(
                f,
                "{output}: {samples} samples were clipped to ±1.0 (peak {} before clipping); lower a volume in the graph, or render with --bits 32",
                above_full_scale(*dbfs)
            ),
        }
    }
}

/// The attribute closest to `attr` among those of `doc` and those every node may give.
pub fn nearest_attribute(doc: &fugue_dsp::kinds::doc::KindDoc, attr: &str) -> Option<String> {
    let names = doc.attributes.iter().map(|(a, _)| a.as_ref());
    fugue_graph::suggest::nearest(attr, names.chain(["kind", "in", "out", "wcet"]))
        .map(str::to_string)
}

/// The nodes that reach no sink named one warning each at most; the others are counted in one
/// more ([`Warning::UnheardMore`]), so that a graph of a million unconnected nodes does not
/// print a million lines.
pub const MAX_UNHEARD_NAMED: usize = 10;

/// What a graph itself suggests is a mistake: an attribute that its node's kind (known to
/// `registry`) does not read, what a kind's [`fugue_dsp::Linter`] says of a node, and a node whose outputs reach no `sink`. Graphs without `sink`
/// nodes (task graphs: .stg, .dot) get only the first. The kinds' linters see the nodes at
/// `rate` Hz, the rate the graph will run at (a Faust program may go out of tune above
/// 192 kHz).
pub fn lint(graph: &TaskGraph, registry: &Registry, rate: f64) -> Vec<Warning> {
    let mut out = unread_keys(graph);
    let mut said_of_kind: std::collections::HashSet<String> = Default::default();
    let ratios = rate_ratios(graph);
    for (v, n) in graph.nodes().iter().enumerate() {
        if graph.is_feedback_node(v) {
            continue;
        }
        if let Some(linter) = registry.linter(&n.kind) {
            // At the node's own rate (a resampler upstream changes it), and 256 frames: what
            // a kind checks does not depend on the block.
            let ctx = fugue_dsp::NodeContext {
                sample_rate: rate * ratios[v].as_f64(),
                rate: ratios[v],
                ..fugue_dsp::NodeContext::of(graph, v, rate, 256)
            };
            for note in linter(&ctx) {
                // Said once: a kind may say the same of every node of one plugin.
                let w = Warning::OfKind {
                    node: n.name.clone(),
                    attr: note.attr,
                    text: note.text,
                    real_time: note.real_time,
                    unread: note.unread,
                };
                if said_of_kind.insert(w.to_string()) {
                    out.push(w);
                }
            }
        }
        let Some(doc) = registry.doc(&n.kind) else {
            continue;
        };
        for (attr, _) in &n.attrs {
            if !doc.reads(attr) {
                out.push(Warning::UnreadAttribute {
                    node: n.name.clone(),
                    attr: attr.clone(),
                    kind: doc.name.to_string(),
                    reads: doc.attribute_names().to_string(),
                    nearest: nearest_attribute(doc, attr),
                });
            }
        }
    }
    let is_sink: Vec<bool> = graph.nodes().iter().map(|n| n.kind == "sink").collect();
    let has_sink = is_sink.contains(&true);
    // A task graph (.stg, .dot: nodes of the task kind or none) has no sink by nature.
    let audio = crate::check::has_kinds(graph);
    if graph.is_empty() {
        out.push(Warning::Empty);
    } else if audio && !has_sink {
        out.push(Warning::NoSink);
    }
    if has_sink {
        // Walk back from the sinks: every node reached feeds one.
        let mut heard = is_sink.clone();
        let mut stack: Vec<usize> = (0..graph.len()).filter(|&i| is_sink[i]).collect();
        loop {
            while let Some(v) = stack.pop() {
                for &(p, _) in graph.preds(v) {
                    if !heard[p] {
                        heard[p] = true;
                        stack.push(p);
                    }
                }
            }
            // A feedback edge carries a heard node's input back to what feeds it: the node
            // that keeps the block is heard when the node that plays it is.
            for f in graph.feedback_edges() {
                if heard[f.read] && !heard[f.write] {
                    heard[f.write] = true;
                    stack.push(f.write);
                }
            }
            if stack.is_empty() {
                break;
            }
        }
        let mut unheard = (0..graph.len()).filter(|&i| !heard[i] && !graph.is_feedback_node(i));
        for i in unheard.by_ref().take(MAX_UNHEARD_NAMED) {
            let n = graph.node(i);
            out.push(Warning::Unheard {
                node: n.name.clone(),
                kind: n.kind.clone(),
            });
        }
        let more = unheard.count();
        if more > 0 {
            out.push(Warning::UnheardMore { more });
        }
    }
    out
}

/// Each node's rate relative to the engine's: the product of the ratios of the `resampler`
/// nodes on a path from a source to it (the first input's path; inputs at different rates
/// are the plan compiler's error). A resampler whose ratio cannot be read counts as 1.
fn rate_ratios(graph: &TaskGraph) -> Vec<fugue_dsp::Ratio> {
    use fugue_dsp::Ratio;
    let mut input = vec![Ratio::ONE; graph.len()];
    let mut output = vec![Ratio::ONE; graph.len()];
    for &v in graph.topo_order() {
        if let Some(&(u, _)) = graph.preds(v).first() {
            input[v] = output[u];
        }
        output[v] = input[v];
        if graph.node(v).kind == "resampler" {
            let ctx = fugue_dsp::NodeContext::of(graph, v, 48_000.0, 256);
            if let Some(r) = fugue_dsp::kinds::resampler::ratio_of(&ctx)
                .ok()
                .and_then(|r| input[v].checked_mul(r))
            {
                output[v] = r;
            }
        }
    }
    input
}

/// [`lint`]'s warnings for a run: for an `offline` one, without those that matter only in
/// real time ([`fugue_dsp::LintNote::real_time`]).
pub fn lint_run(graph: &TaskGraph, registry: &Registry, offline: bool, rate: f64) -> Vec<Warning> {
    let mut out = lint(graph, registry, rate);
    if offline {
        out.retain(|w| {
            !matches!(
                w,
                Warning::OfKind {
                    real_time: true,
                    ..
                }
            )
        });
    }
    out
}

/// The attributes the file's reader left out that neither fugue nor Graphviz reads
/// ([`Warning::UnreadKey`], then [`Warning::UnreadKeysMore`]): part of [`lint`], and all that
/// `fugue schedule` says of a graph (an edge's misspelt `Weight` changes its schedule).
pub fn unread_keys(graph: &TaskGraph) -> Vec<Warning> {
    let mut out = Vec::new();
    if let Some(places) = graph.places() {
        let (keys, more) = places.unread();
        out.extend(keys.iter().map(|k| Warning::UnreadKey {
            at: k.at,
            of: k.of.clone(),
            key: k.key.clone(),
            nearest: k.nearest.clone(),
        }));
        if more > 0 {
            out.push(Warning::UnreadKeysMore { more });
        }
    }
    out
}

/// [`lint`]'s warnings, each preceded by the graph file's name (and its place in the file);
/// for an `offline` run, without those that matter only in real time.
pub fn file_lints(
    graph: &TaskGraph,
    file: &Path,
    registry: &Registry,
    offline: bool,
    rate: f64,
) -> Vec<String> {
    placed(graph, file, &lint_run(graph, registry, offline, rate))
}

/// `warnings` of `graph`, read from `file`, each preceded by the file's name and its place
/// in the file when it has one.
pub fn placed(graph: &TaskGraph, file: &Path, warnings: &[Warning]) -> Vec<String> {
    warnings
        .iter()
        .map(|w| match place(graph, w) {
            Some(at) => format!("{}:{at}: {w}", file.display()),
            None => format!("{}: {w}", file.display()),
        })
        .collect()
}

/// Where `w` is in the file `graph` was read from: the attribute it is about, else its node;
/// `None` for a warning about no node, or a graph that records no places.
pub fn place(graph: &TaskGraph, w: &Warning) -> Option<fugue_graph::Location> {
    let (node, attr) = match w {
        Warning::UnreadAttribute { node, attr, .. } => (node, Some(attr)),
        Warning::OfKind { node, attr, .. } => (node, attr.as_ref()),
        Warning::Unheard { node, .. } => (node, None),
        Warning::UnreadKey { at, .. } => return Some(*at),
        _ => return None,
    };
    node_place(graph, node, attr.map(String::as_str))
}

/// Where the file `graph` was read from writes node `node`'s attribute `attr`, else the node;
/// `None` for a node it does not have, or a graph that records no places.
pub fn node_place(
    graph: &TaskGraph,
    node: &str,
    attr: Option<&str>,
) -> Option<fugue_graph::Location> {
    let places = graph.places()?;
    let id = graph.find(node)?;
    attr.and_then(|a| graph.node(id).attrs.iter().position(|(k, _)| k == a))
        .and_then(|i| places.attr(id, i))
        .or_else(|| places.node(id))
}

/// What is said of node `name` of `graph`, of a kind no registry knows, that `played` (`was
/// rendered`, `plays`) as silence (`--placeholder`): by render and run, and in the host's
/// reply to its `load`.
pub fn placeholder(graph: &TaskGraph, name: &str, played: &str) -> String {
    let kind = graph
        .find(name)
        .map(|v| format!(" `{}`", graph.node(v).kind))
        .unwrap_or_default();
    format!("node `{name}` has an unknown kind{kind}; it {played} as silence (--placeholder)")
}

/// The error that makes warnings fatal (`--strict`): the first of them and how many more
/// there are; `None` when there is none.
pub fn strict_error(warnings: &[String]) -> Option<String> {
    let first = warnings.first()?;
    let more = match warnings.len() {
        1 => String::new(),
        n => format!(
            " (and {} more warning{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    };
    Some(format!("{first}{more}; --strict makes warnings errors"))
}

/// What an input file given to a render of `graph` suggests is a mistake: a graph with no
/// `source` node (the file is never read), and a file with fewer or more channels than the
/// sources' ports.
pub fn input(graph: &TaskGraph, input: &Path) -> Vec<Warning> {
    let ports: usize = (0..graph.len())
        .filter(|&v| graph.node(v).kind == "source")
        .map(|v| graph.outputs(v))
        .sum();
    if ports == 0 {
        return vec![Warning::InputNotRead {
            input: input.to_path_buf(),
            sources: (0..graph.len())
                .filter(|&v| graph.node(v).kind == "source")
                .count(),
        }];
    }
    match crate::wav_channels(input) {
        Some(channels) if usize::from(channels) != ports => vec![Warning::InputChannels {
            input: input.to_path_buf(),
            channels,
            ports,
        }],
        _ => Vec::new(),
    }
}

/// What the rendered audio (`s`, written as `bits` to `output`) suggests went wrong: silence
/// (with the likely cause when `graph` has `source` nodes and no input was given), a float
/// file that peaks above 0 dBFS, clipped samples in an integer file.
pub fn audio(
    s: &RenderSummary,
    bits: Bits,
    output: &str,
    graph: &TaskGraph,
    had_input: bool,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let output = output.to_string();
    if s.non_finite > 0 {
        // The peak and the clipped samples say nothing more (infinities count in both; a
        // NaN in neither, which would read as silence).
        out.push(Warning::NonFinite {
            output,
            samples: s.non_finite,
            integer: bits != Bits::F32,
        });
        return out;
    }
    if s.frames > 0 && s.channels > 0 && s.peak == 0.0 {
        let sources = graph.nodes().iter().any(|n| n.kind == "source");
        out.push(Warning::Silent {
            output: output.clone(),
            no_input: sources && !had_input,
        });
    } else if bits == Bits::F32 && s.peak > 1.0 {
        out.push(Warning::Peak {
            output: output.clone(),
            dbfs: s.peak_dbfs(),
        });
    }
    if s.clipped > 0 {
        out.push(Warning::Clipped {
            output,
            samples: s.clipped,
            dbfs: s.peak_dbfs(),
        });
    }
    out
}

/// A peak above full scale, `dbfs` above 0, in words: `+3.5 dBFS`, or, for one that would
/// round to `+0.0 dBFS` (a sample of 1.000001), its decibels to two significant digits
/// (`+8.7e-6 dBFS`), so that a peak said to clip never reads as full scale exactly.
fn above_full_scale(dbfs: f64) -> String {
    if dbfs > 0.0 && dbfs < 0.05 {
        format!("{dbfs:+.1e} dBFS")
    } else {
        format!("{dbfs:+.1} dBFS")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peak just above full scale is not written as `+0.0 dBFS` (which read as a
    /// contradiction beside "will clip").
    #[test]
    fn a_peak_just_above_full_scale_is_not_rounded_to_zero() {
        assert_eq!(
            above_full_scale(20.0 * 1.000_001_f64.log10()),
            "+8.7e-6 dBFS"
        );
        assert_eq!(above_full_scale(3.52), "+3.5 dBFS");
        assert_eq!(above_full_scale(0.05), "+0.1 dBFS");
    }

    fn graph(text: &str) -> TaskGraph {
        fugue_graph::read::ag::parse(text, "t.ag").unwrap()
    }

    /// Past [`MAX_UNHEARD_NAMED`] dead nodes, one more warning counts the rest.
    #[test]
    fn many_dead_nodes_are_counted_past_the_first_few() {
        let mut text = String::from("s = { kind: \"sink\", };\n");
        for i in 0..25 {
            text += &format!("d{i} = {{ kind: \"osc\", freq: 3, }};\n");
        }
        let w: Vec<String> = lint(&graph(&text), &Registry::with_builtin_kinds(), 48_000.0)
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(w.len(), MAX_UNHEARD_NAMED + 1, "{w:?}");
        assert!(w[0].starts_with("node `d0` (osc) reaches no sink"), "{w:?}");
        assert_eq!(
            w[MAX_UNHEARD_NAMED],
            "15 more nodes reach no sink (not named one by one)"
        );
    }

    #[test]
    fn a_misspelt_attribute_and_a_dead_node_are_named() {
        let g = graph(
            "o = { kind: \"osc\", freq: 440, volme: 0.5, };  d = { kind: \"osc\", freq: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;",
        );
        let w: Vec<String> = lint(&g, &Registry::with_builtin_kinds(), 48_000.0)
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with(
                "node `o` has attribute `volme`, which kind osc does not read; did you mean `volume`? (it reads freq, phase, volume"
            ),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("node `d` (osc) reaches no sink"),
            "{}",
            w[1]
        );
    }

    #[test]
    fn a_clean_graph_has_no_warning() {
        let g = graph("o = { kind: \"osc\", freq: 440, volume: 0.5, wcet: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;");
        assert!(lint(&g, &Registry::with_builtin_kinds(), 48_000.0).is_empty());
    }

    #[test]
    fn strict_makes_the_first_warning_an_error() {
        let g = fugue_graph::read::ag::parse(
            "o = { kind: \"osc\", freq: 440, volme: 0.5, };  d = { kind: \"osc\", freq: 3, };  s = { kind: \"sink\", };  o.1 -> s.1;",
            "t.ag",
        )
        .unwrap();
        let w = file_lints(
            &g,
            Path::new("t.ag"),
            &Registry::with_builtin_kinds(),
            false,
            48_000.0,
        );
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("t.ag:1:31: node `o` has attribute `volme`"),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("t.ag:1:47: node `d` (osc) reaches no sink"),
            "{}",
            w[1]
        );
        let e = strict_error(&w).unwrap();
        assert!(
            e.ends_with("(and 1 more warning); --strict makes warnings errors"),
            "{e}"
        );
        assert_eq!(strict_error(&[]), None);
    }
}
