//! Writers: DOT for Graphviz, and `.ag`.

use std::fmt::Write as _;

use crate::model::{TaskGraph, Value};

fn dot_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// DOT text for Graphviz: one box per node labelled with its name, kind and cost; edges
/// labelled with their ports when a node has several. Node and edge `Weight` attributes carry
/// the costs, so the weighted-DOT reader reads the graph's structure and costs back.
pub fn to_dot(g: &TaskGraph, name: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", dot_id(name));
    s.push_str("\trankdir=TB;\n\tnode [shape=box, style=rounded, fontname=\"Helvetica\"];\n\tedge [fontname=\"Helvetica\", fontsize=9];\n");
    for (v, n) in g.nodes().iter().enumerate() {
        if g.is_feedback_node(v) {
            continue; // drawn as its dashed edge below
        }
        let mut label = n.name.clone();
        if !n.kind.is_empty() {
            let _ = write!(label, "\n{}", n.kind);
        }
        if n.cost_declared {
            let _ = write!(label, " ({})", n.cost);
        }
        let _ = write!(
            s,
            "\t{} [label={}, Weight={:?}",
            dot_id(&n.name),
            dot_id(&label),
            n.cost
        );
        if !n.kind.is_empty() {
            let _ = write!(s, ", kind={}", dot_id(&n.kind));
        }
        s.push_str("];\n");
    }
    for e in g.edges() {
        if g.is_feedback_node(e.src) || g.is_feedback_node(e.dst) {
            continue;
        }
        let _ = write!(
            s,
            "\t{} -> {} [Weight={:?}",
            dot_id(&g.node(e.src).name),
            dot_id(&g.node(e.dst).name),
            e.comm
        );
        let multi = g.outputs(e.src) > 1 || g.inputs(e.dst) > 1;
        if multi {
            let _ = write!(
                s,
                ", taillabel=\"{}\", headlabel=\"{}\"",
                e.src_port + 1,
                e.dst_port + 1
            );
        }
        if e.comm != 0.0 {
            let _ = write!(s, ", label=\"{}\"", e.comm);
        }
        s.push_str("];\n");
    }
    for f in g.feedback_edges() {
        let _ = writeln!(
            s,
            "\t{} -> {} [feedback=true, style=dashed, constraint=false, taillabel=\"{}\", headlabel=\"{}\", label=\"~>\"];",
            dot_id(&g.node(f.src).name),
            dot_id(&g.node(f.dst).name),
            f.src_port + 1,
            f.dst_port + 1
        );
    }
    s.push_str("}\n");
    s
}

fn ag_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Str(s) => {
            let mut out = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(out, "\\u{:04x}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
    }
}

/// `.ag` text: every node with its attributes, then every edge (feedback edges as `~>`),
/// then the deadline if any. Reading it back gives an equal graph. Node names must be `.ag` identifiers (letters,
/// digits, `-`, `_`, starting with a letter or `_`); see [`is_ag_ident`].
pub fn to_ag(g: &TaskGraph) -> String {
    let mut s = String::new();
    for (v, n) in g.nodes().iter().enumerate() {
        if g.is_feedback_node(v) {
            continue; // written as its `~>` edge below
        }
        let _ = writeln!(s, "{} = {{", n.name);
        if !n.kind.is_empty() {
            let _ = writeln!(s, "\tkind: {},", ag_value(&Value::Str(n.kind.clone())));
        }
        if let Some(i) = n.declared_inputs {
            let _ = writeln!(s, "\tin: {i},");
        }
        if let Some(o) = n.declared_outputs {
            let _ = writeln!(s, "\tout: {o},");
        }
        if n.cost_declared {
            let _ = writeln!(s, "\twcet: {:?},", n.cost);
        }
        for (k, v) in &n.attrs {
            // A name that is not an identifier (a parameter path) is written quoted.
            let key = if is_ag_ident(k) {
                k.clone()
            } else {
                ag_value(&Value::Str(k.clone()))
            };
            let _ = writeln!(s, "\t{key}: {},", ag_value(v));
        }
        s.push_str("};\n");
    }
    for e in g.edges() {
        if g.is_feedback_node(e.src) || g.is_feedback_node(e.dst) {
            continue;
        }
        let _ = writeln!(
            s,
            "{}.{} -> {}.{};",
            g.node(e.src).name,
            e.src_port + 1,
            g.node(e.dst).name,
            e.dst_port + 1
        );
    }
    for f in g.feedback_edges() {
        let _ = writeln!(
            s,
            "{}.{} ~> {}.{};",
            g.node(f.src).name,
            f.src_port + 1,
            g.node(f.dst).name,
            f.dst_port + 1
        );
    }
    if let Some(d) = g.deadline() {
        let _ = writeln!(s, "deadline = {d:?};");
    }
    s
}

/// Whether `s` can be written as an `.ag` node name or attribute key.
pub fn is_ag_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !s.contains("->")
        && !s.ends_with('-')
}
