//! The `.stg` (Standard Task Graph Set) reader.
//!
//! The first line gives a number of tasks, and copies disagree whether it counts the two
//! dummy tasks: rows are read until the first line starting with `#` or the end of the
//! file, and their count must be that number or two more (a file cut short, or rows added
//! or lost, is an error at its first line). Each row is `id processing_time n_predecessors pred_id...`.
//! Task 0 and the last task are dummy entry/exit tasks of time 0; they are kept as nodes
//! (cost 0), named by their ids like every task. Communication costs are 0. Ids, counts and
//! predecessor ids are whole numbers in digits only (no sign; leading zeros are the same id),
//! processing times digits with an optional decimal point.

use std::collections::HashMap;

use super::{finish, location_of, syntax};
use crate::error::{GraphError, ReadError};
use crate::model::{GraphBuilder, Node, TaskGraph};

/// Parses `.stg` text; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<TaskGraph, ReadError> {
    // Tokens with byte offsets, up to the first comment line.
    let mut lines = Vec::new();
    let mut offset = 0;
    // Where the first comment line starts (the end of the file when there is none).
    let mut comments = text.len();
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if line.trim_start().starts_with('#') {
            comments = start + (line.len() - line.trim_start().len());
            break;
        }
        let mut toks = Vec::new();
        let mut pos = 0;
        for tok in line.split_ascii_whitespace() {
            let at = pos + line[pos..].find(tok).unwrap_or(0);
            pos = at + tok.len();
            toks.push((tok, start + at));
        }
        if !toks.is_empty() {
            lines.push(toks);
        }
    }
    let err = |pos: usize, msg: String| syntax(file, location_of(text, pos), msg);
    let Some(header) = lines.first() else {
        let what = if text.trim().is_empty() {
            "empty file"
        } else {
            "no task before the first `#` line"
        };
        return Err(err(
            comments,
            format!("{what}: expected the number of tasks on the first line"),
        ));
    };
    if header.len() != 1 {
        return Err(err(
            header[0].1,
            "expected the number of tasks alone on the first line".into(),
        ));
    }
    if !is_digits(header[0].0) {
        return Err(err(
            header[0].1,
            format!(
                "expected the number of tasks on the first line (a whole number, in digits only), found `{}`",
                header[0].0
            ),
        ));
    }
    let Ok(declared) = header[0].0.parse::<usize>() else {
        return Err(err(
            header[0].1,
            format!("the number of tasks {} is too large", header[0].0),
        ));
    };
    struct Row<'t> {
        id: (&'t str, usize),
        time: f64,
        preds: Vec<(&'t str, usize)>,
    }
    let mut rows = Vec::new();
    for toks in &lines[1..] {
        let int = |i: usize, what: &str| -> Result<u64, ReadError> {
            let (t, at) = toks[i];
            // Digits only: Rust's parsing also takes a leading `+`, which would make `+1` a
            // task apart from `1` (ids are names, told apart as written but for leading zeros).
            if !is_digits(t) {
                return Err(err(
                    at,
                    format!("expected {what} (a whole number >= 0, in digits only), found `{t}`"),
                ));
            }
            t.parse::<u64>()
                .map_err(|_| err(at, format!("{what} `{t}` is too large")))
        };
        if toks.len() < 3 {
            let at = toks.last().map_or(0, |t| t.1 + t.0.len());
            return Err(err(
                at,
                "expected a task row `id processing_time n_predecessors pred_id...`".into(),
            ));
        }
        int(0, "a task id")?;
        // Digits with at most one decimal point: no sign, exponent, `inf` or `NaN`, which
        // Rust's parsing takes.
        let decimal = is_digits(&toks[1].0.replacen('.', "", 1));
        let time = Some(toks[1].0)
            .filter(|_| decimal)
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|&v| crate::is_cost(v))
            .ok_or_else(|| {
                err(
                    toks[1].1,
                    format!(
                        "expected a processing time (a number from 0 to 1e12, in digits with an optional decimal point), found `{}`",
                        toks[1].0
                    ),
                )
            })?;
        let n = int(2, "the number of predecessors")? as usize;
        if toks.len() - 3 != n {
            let at = toks
                .get(n.saturating_add(3))
                .map_or(toks[toks.len() - 1].1, |t| t.1);
            return Err(err(
                at,
                format!(
                    "task {} declares {n} predecessor(s) but the row lists {}",
                    toks[0].0,
                    toks.len() - 3
                ),
            ));
        }
        for i in 3..toks.len() {
            int(i, "a predecessor id")?;
        }
        rows.push(Row {
            id: toks[0],
            time,
            preds: toks[3..].to_vec(),
        });
    }
    if rows.is_empty() {
        return Err(err(
            text.len(),
            "expected at least one task row after the first line".into(),
        ));
    }
    if rows.len() != declared && rows.len() != declared.saturating_add(2) {
        return Err(err(
            header[0].1,
            format!(
                "the first line gives {declared} tasks ({} rows with the dummy entry and exit tasks), but the file has {} task row(s){}; a file cut short, or a wrong count",
                declared.saturating_add(2),
                rows.len(),
                if comments < text.len() {
                    " before its first `#` line"
                } else {
                    ""
                }
            ),
        ));
    }
    let mut g = GraphBuilder::new();
    let mut first_seen: HashMap<&str, usize> = HashMap::new();
    for r in &rows {
        let name = r.id.0.trim_start_matches('0');
        let name = if name.is_empty() { "0" } else { name };
        if let Some(&prev) = first_seen.get(name) {
            return Err(ReadError::Graph {
                file: file.into(),
                location: location_of(text, r.id.1),
                error: GraphError::DuplicateNode {
                    name: name.into(),
                    first: Some(location_of(text, prev)),
                },
            });
        }
        first_seen.insert(name, r.id.1);
        super::room_for_node(&g)
            .and_then(|()| g.add_node(Node::new(name, crate::TASK_KIND).with_units_cost(r.time)))
            .map_err(|e| ReadError::Graph {
                file: file.into(),
                location: location_of(text, r.id.1),
                error: e,
            })?;
    }
    let mut edge_places: Vec<usize> = Vec::new();
    for (dst, r) in rows.iter().enumerate() {
        for &(p, at) in &r.preds {
            let name = p.trim_start_matches('0');
            let name = if name.is_empty() { "0" } else { name };
            let src = g.find(name).ok_or_else(|| ReadError::Graph {
                file: file.into(),
                location: location_of(text, at),
                error: GraphError::UnknownNode {
                    name: name.into(),
                    nearest: None,
                    later: None,
                },
            })?;
            let added = super::room_for_edge(&g).and_then(|()| g.add_edge(src, 0, dst, 0, 0.0));
            added.map_err(|e| ReadError::Graph {
                file: file.into(),
                location: location_of(text, at),
                error: super::with_first_edge(e, &g, text, &edge_places, &[]),
            })?;
            edge_places.push(at);
        }
    }
    let mut graph = finish(g, file, text, &edge_places, crate::error::FEEDBACK_STG)?;
    // Each task's place, its id at the start of its row: what a message about a task names
    // (the rows are in the text's order, the nodes in the rows').
    let mut places = crate::places::SourcePlaces::default();
    let mut cursor = crate::places::Cursor::new(text);
    for r in &rows {
        places.push(cursor.at(r.id.1), None, []);
    }
    graph.set_places(Some(places));
    Ok(graph)
}

/// Whether `t` is one or more ASCII digits: how the format writes its whole numbers.
fn is_digits(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}
