//! Writers: DOT for Graphviz, and `.ag`.

use std::fmt::Write as _;

use crate::model::{TaskGraph, Value};

/// A quoted DOT ID: `"` and `\` escaped (the reader takes `\\` as one backslash), all
/// else as it is (a quoted string may span lines).
fn dot_id(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A quoted label for Graphviz to show: as [`dot_id`], with line breaks as Graphviz's `\n`.
fn dot_label(s: &str) -> String {
    dot_id(s).replace('\n', "\\n")
}

/// An attribute value in DOT: a number unquoted (an integer as it is, a float in decimals with
/// a point, never an exponent, which Graphviz does not read), a string quoted. The reader
/// takes unquoted numbers back as the numbers they were.
fn dot_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => {
            // `Display` writes the shortest decimals that read back as `f`, without exponent.
            let t = f.to_string();
            if t.contains('.') {
                t
            } else {
                format!("{t}.0")
            }
        }
        Value::Str(s) => dot_id(s),
    }
}

/// DOT text for Graphviz: one box per node labelled with its name, kind and cost; edges
/// labelled with their ports when a node has several. Every node's kind, ports, cost and
/// attributes are written too (a node's cost as `wcet` when it is a time in µs, else as
/// `Weight`; edge `Weight` the communication cost,
/// edge `taillabel`/`headlabel` the ports), so the weighted-DOT reader reads back the graph
/// it was written from; but an attribute named `weight` or like a drawing attribute
/// ([`DISPLAY_ATTRIBUTES`](crate::read::dot::DISPLAY_ATTRIBUTES)), which DOT reads as
/// something else, is left out and named in a comment.
pub fn to_dot(g: &TaskGraph, name: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", dot_id(name));
    s.push_str("\trankdir=TB;\n\tnode [shape=box, style=rounded, fontname=\"Helvetica\"];\n\tedge [fontname=\"Helvetica\", fontsize=9];\n");
    if let Some(d) = g.deadline() {
        let _ = writeln!(s, "\tdeadline={};", dot_value(&Value::Float(d)));
    }
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
            "\t{} [label={}, kind={}",
            dot_id(&n.name),
            dot_label(&label),
            dot_id(&n.kind)
        );
        if n.cost_declared {
            // A time as `wcet`, read back as a time; a figure in the file's own units as
            // `Weight`.
            let key = if n.cost_in_us { "wcet" } else { "Weight" };
            let _ = write!(s, ", {key}={}", dot_value(&Value::Float(n.cost)));
        }
        if let Some(i) = n.declared_inputs {
            let _ = write!(s, ", in={i}");
        }
        if let Some(o) = n.declared_outputs {
            let _ = write!(s, ", out={o}");
        }
        // An attribute whose name DOT reads as something else (the cost, a drawing
        // attribute) is not written: said in a comment, for the .ag writer keeps it.
        let mut left = Vec::new();
        for (k, v) in &n.attrs {
            if k.eq_ignore_ascii_case("weight")
                || crate::read::dot::DISPLAY_ATTRIBUTES.contains(&k.as_str())
            {
                left.push(k.as_str());
                continue;
            }
            let _ = write!(s, ", {}={}", dot_id(k), dot_value(v));
        }
        s.push_str("];\n");
        if !left.is_empty() {
            let shown: String = left
                .join(", ")
                .chars()
                .map(|c| if crate::error::unprintable(c) { ' ' } else { c })
                .collect();
            let _ = writeln!(
                s,
                "\t// not written: attributes of {} that DOT reads as a cost or a drawing's: {shown} (fugue's .ag keeps them)",
                n.name.chars().map(|c| if crate::error::unprintable(c) { ' ' } else { c }).collect::<String>()
            );
        }
    }
    for e in g.edges() {
        if g.is_feedback_node(e.src) || g.is_feedback_node(e.dst) {
            continue;
        }
        let _ = write!(
            s,
            "\t{} -> {} [Weight={}",
            dot_id(&g.node(e.src).name),
            dot_id(&g.node(e.dst).name),
            dot_value(&Value::Float(e.comm))
        );
        let multi = g.outputs(e.src) > 1 || g.inputs(e.dst) > 1;
        if multi || e.src_port > 0 || e.dst_port > 0 {
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
        Value::Str(s) => ag_string(s),
    }
}

/// `s` as an `.ag` string, quoted, with what the reader unescapes escaped (quotes,
/// backslashes, control characters): reading it gives `s` back.
pub fn ag_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
