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
            grouped(warnings).iter().for_each(warning);
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

/// Nodes that share a sentence before it is said once for all of them, with the others
/// named on one line.
pub(crate) const GROUP_AT: usize = 3;

/// Names listed on a repeated sentence's line before "and N more".
pub(crate) const GROUP_NAMES: usize = 12;

/// One sentence of a list, as [`group`] reads it: about one node (its group key, its name and
/// its place, when known), or about no node in particular (`None`).
pub(crate) type NodeSentence<'a, K> = Option<(K, &'a str, Option<String>)>;

/// The order in which to say `items`: each index said in full, in order, with, for the first
/// of [`GROUP_AT`] items or more of one key, the end of the line that names the others
/// (`the same for N more nodes: `a` (3:1), ...`, up to [`GROUP_NAMES`] names); the others are
/// not said again. Items of no key are said each in its place.
pub(crate) fn group<K: std::hash::Hash + Eq>(
    items: &[NodeSentence<'_, K>],
) -> Vec<(usize, Option<String>)> {
    // One pass: many different sentences cost no more than many alike.
    let mut groups: std::collections::HashMap<&K, Vec<usize>> = std::collections::HashMap::new();
    for (j, item) in items.iter().enumerate() {
        if let Some((key, _, _)) = item {
            groups.entry(key).or_default().push(j);
        }
    }
    let mut said = vec![false; items.len()];
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if said[i] {
            continue;
        }
        let others: &[usize] = match item {
            // The first unsaid member of its group: every member after it.
            Some((key, _, _)) if groups[key].len() >= GROUP_AT => {
                let group = &groups[key];
                &group[group.partition_point(|&j| j <= i)..]
            }
            _ => &[],
        };
        if others.is_empty() {
            out.push((i, None));
            continue;
        }
        let mut names: Vec<String> = others
            .iter()
            .take(GROUP_NAMES)
            .filter_map(|&j| items[j].as_ref())
            .map(|(_, name, place)| match place {
                Some(at) => format!("`{name}` ({at})"),
                None => format!("`{name}`"),
            })
            .collect();
        if others.len() > GROUP_NAMES {
            names.push(format!("and {} more", others.len() - GROUP_NAMES));
        }
        for &j in others {
            said[j] = true;
        }
        out.push((
            i,
            Some(format!(
                "the same for {} more nodes: {}",
                others.len(),
                names.join(", ")
            )),
        ));
    }
    out
}

/// `warnings` with each one that [`GROUP_AT`] nodes or more share (the same sentence, in the
/// same file, but for the node and its place: `FILE:LINE:COLUMN: node `NAME`...`) said in
/// full once, followed by one line naming the other nodes with their places, as `fugue
/// check` says them.
pub fn grouped(warnings: &[String]) -> Vec<String> {
    let parts: Vec<Option<NodeWarning<'_>>> = warnings.iter().map(|w| node_warning(w)).collect();
    let items: Vec<NodeSentence<'_, (&str, &str)>> = parts
        .iter()
        .map(|p| {
            p.as_ref()
                .map(|p| ((p.file, p.rest), p.name, Some(p.place.to_string())))
        })
        .collect();
    let mut out = Vec::with_capacity(warnings.len());
    for (i, also) in group(&items) {
        out.push(warnings[i].clone());
        if let (Some(also), Some(p)) = (also, &parts[i]) {
            out.push(format!("{}: {also}", p.file));
        }
    }
    out
}

/// A warning about one node, `FILE:LINE:COLUMN: node `NAME`REST`, in its parts.
struct NodeWarning<'a> {
    file: &'a str,
    place: &'a str,
    name: &'a str,
    rest: &'a str,
}

/// `w` in its parts, when it is about one node at a place of a file: the last `: node ``
/// whose head ends with `:LINE:COLUMN` (a path may hold colons, and even that text; the
/// sentences after the place never hold `:LINE:COLUMN: node ``).
fn node_warning(w: &str) -> Option<NodeWarning<'_>> {
    const MARK: &str = ": node `";
    let number = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    w.rmatch_indices(MARK).find_map(|(at, _)| {
        let (head, tail) = (&w[..at], &w[at + MARK.len()..]);
        let end = tail.find('`')?;
        let mut it = head.rsplitn(3, ':');
        let (column, line, file) = (it.next()?, it.next()?, it.next()?);
        if file.is_empty() || !number(line) || !number(column) {
            return None;
        }
        Some(NodeWarning {
            file,
            place: &head[file.len() + 1..],
            name: &tail[..end],
            rest: &tail[end + 1..],
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three nodes or more with the same warning are said once, the others named with their
    /// places; two are said one by one, and other warnings are kept in their order.
    #[test]
    fn warnings_many_nodes_share_are_said_once() {
        let w = |n: usize, name: &str| format!("g.ag:{n}:1: node `{name}`: at 384000 Hz it is off");
        let warnings = vec![
            w(3, "s1"),
            "g.ag: something else".to_string(),
            w(5, "s2"),
            w(7, "s3"),
            "g.ag:9:1: node `x` has no sink".to_string(),
        ];
        let got = grouped(&warnings);
        assert_eq!(
            got,
            vec![
                w(3, "s1"),
                "g.ag: the same for 2 more nodes: `s2` (5:1), `s3` (7:1)".to_string(),
                "g.ag: something else".to_string(),
                "g.ag:9:1: node `x` has no sink".to_string(),
            ]
        );
        let two = vec![w(3, "s1"), w(5, "s2")];
        assert_eq!(grouped(&two), two);
        // A path with colons, even with the mark in it, is read from its place.
        let odd = |n: usize, name: &str| {
            format!("a:1:2: node `y`/g.ag:{n}:1: node `{name}`: at 384000 Hz it is off")
        };
        let got = grouped(&[odd(3, "s1"), odd(5, "s2"), odd(7, "s3")]);
        assert_eq!(
            got,
            vec![
                odd(3, "s1"),
                "a:1:2: node `y`/g.ag: the same for 2 more nodes: `s2` (5:1), `s3` (7:1)"
                    .to_string()
            ]
        );
        // No place: not read as one.
        let bare: Vec<String> = (0..3)
            .map(|i| format!("g.ag::: node `s{i}`: off"))
            .collect();
        assert_eq!(grouped(&bare), bare);
    }
}
