//! The weighted DOT reader: a directed Graphviz graph whose node attribute `Weight` is the
//! computation cost and whose edge attribute `Weight` is the communication cost.
//!
//! Supported: `digraph` (optionally `strict`, optionally named), node statements, edge
//! chains `a -> b -> c`, `graph`/`node`/`edge` default attribute statements, `key = value`
//! graph attributes, `//`, `/* */` and `#` comments, quoted and numeral IDs. A node used in
//! an edge before (or without) its declaration is created as DOT does. Node attribute `kind`
//! sets the node kind (default `task`); other attributes are kept as strings. Subgraphs and
//! ports (`a:p`) are reported as unsupported. Edges use port 1 on both ends.

use std::collections::HashMap;

use super::{finish, location_of, syntax};
use crate::error::{GraphError, ReadError};
use crate::model::{GraphBuilder, Node, TaskGraph, Value};

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Semi,
    Comma,
    Eq,
    Arrow,
    UArrow,
    Colon,
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Id(s) => format!("`{s}`"),
        Tok::LBrace => "`{`".into(),
        Tok::RBrace => "`}`".into(),
        Tok::LBracket => "`[`".into(),
        Tok::RBracket => "`]`".into(),
        Tok::Semi => "`;`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Eq => "`=`".into(),
        Tok::Arrow => "`->`".into(),
        Tok::UArrow => "`--`".into(),
        Tok::Colon => "`:`".into(),
        Tok::Eof => "the end of the file".into(),
    }
}

fn lex(text: &str, file: &str) -> Result<Vec<(Tok, usize)>, ReadError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |pos: usize, m: String| syntax(file, location_of(text, pos), m);
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // `#` first on a line (after blanks): C preprocessor output, which Graphviz ignores.
        let line_start = || {
            b[..i]
                .iter()
                .rev()
                .take_while(|&&x| x != b'\n')
                .all(|&x| x == b' ' || x == b'\t' || x == b'\r')
        };
        if b[i..].starts_with(b"//") || (c == b'#' && line_start()) {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            match text[i + 2..].find("*/") {
                Some(e) => i += 2 + e + 2,
                None => return Err(err(i, "unterminated `/*` comment: expected `*/`".into())),
            }
            continue;
        }
        let tok = match c {
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b';' => Tok::Semi,
            b',' => Tok::Comma,
            b'=' => Tok::Eq,
            b':' => Tok::Colon,
            b'-' if b.get(i + 1) == Some(&b'>') => {
                i += 1;
                Tok::Arrow
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i += 1;
                Tok::UArrow
            }
            b'"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match b.get(i) {
                        None => {
                            return Err(err(
                                start,
                                "unterminated string: expected a closing `\"`".into(),
                            ))
                        }
                        Some(b'"') => break,
                        Some(b'\\') if b.get(i + 1) == Some(&b'"') => {
                            s.push('"');
                            i += 2;
                        }
                        Some(b'\\') if b.get(i + 1) == Some(&b'\n') => i += 2,
                        Some(_) => {
                            let ch = text[i..].chars().next().unwrap_or('?');
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push((Tok::Id(s), start));
                i += 1;
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-' || c >= 0x80 => {
                let mut j = i;
                while j < b.len() {
                    let d = b[j];
                    let arrow = d == b'-' && matches!(b.get(j + 1), Some(b'>' | b'-'));
                    if (d.is_ascii_alphanumeric()
                        || d == b'_'
                        || d == b'.'
                        || d >= 0x80
                        || (d == b'-' && j == i))
                        && !(arrow && j > i)
                    {
                        j += 1;
                    } else {
                        break;
                    }
                }
                out.push((Tok::Id(text[i..j].to_string()), start));
                i = j;
                continue;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(err(i, format!("unexpected character {ch:?} in DOT text")));
            }
        };
        out.push((tok, start));
        i += 1;
    }
    out.push((Tok::Eof, b.len()));
    Ok(out)
}

/// An edge as read: source, destination, attributes, byte offset.
type EdgeDecl = (String, String, Vec<(String, String)>, usize);

struct NodeDecl {
    pos: usize,
    attrs: Vec<(String, String)>,
}

/// Parses weighted DOT text; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<TaskGraph, ReadError> {
    let toks = lex(text, file)?;
    let mut k = 0;
    let err = |pos: usize, m: String| syntax(file, location_of(text, pos), m);
    let id_is = |t: &Tok, w: &str| matches!(t, Tok::Id(s) if s.eq_ignore_ascii_case(w));
    let strict = id_is(&toks[k].0, "strict");
    if strict {
        k += 1;
    }
    if id_is(&toks[k].0, "graph") {
        return Err(err(
            toks[k].1,
            "expected `digraph`: undirected graphs are not task graphs".into(),
        ));
    }
    if !id_is(&toks[k].0, "digraph") {
        return Err(err(
            toks[k].1,
            format!("expected `digraph`, found {}", describe(&toks[k].0)),
        ));
    }
    k += 1;
    if let Tok::Id(_) = toks[k].0 {
        k += 1;
    }
    if toks[k].0 != Tok::LBrace {
        return Err(err(
            toks[k].1,
            format!(
                "expected `{{` after `digraph`, found {}",
                describe(&toks[k].0)
            ),
        ));
    }
    k += 1;

    let mut order: Vec<String> = Vec::new();
    let mut decls: HashMap<String, NodeDecl> = HashMap::new();
    let mut edges: Vec<EdgeDecl> = Vec::new();
    let mut node_defaults: Vec<(String, String)> = Vec::new();
    let mut edge_defaults: Vec<(String, String)> = Vec::new();

    let parse_attrs = |k: &mut usize| -> Result<Vec<(String, String)>, ReadError> {
        let mut attrs = Vec::new();
        while toks[*k].0 == Tok::LBracket {
            *k += 1;
            loop {
                match &toks[*k].0 {
                    Tok::RBracket => {
                        *k += 1;
                        break;
                    }
                    Tok::Comma | Tok::Semi => *k += 1,
                    Tok::Id(key) => {
                        let key = key.clone();
                        *k += 1;
                        if toks[*k].0 != Tok::Eq {
                            return Err(err(
                                toks[*k].1,
                                format!(
                                    "expected `=` after attribute `{key}`, found {}",
                                    describe(&toks[*k].0)
                                ),
                            ));
                        }
                        *k += 1;
                        let Tok::Id(v) = &toks[*k].0 else {
                            return Err(err(
                                toks[*k].1,
                                format!(
                                    "expected a value for attribute `{key}`, found {}",
                                    describe(&toks[*k].0)
                                ),
                            ));
                        };
                        attrs.push((key, v.clone()));
                        *k += 1;
                    }
                    other => {
                        return Err(err(
                            toks[*k].1,
                            format!(
                                "expected an attribute `key=value` or `]`, found {}",
                                describe(other)
                            ),
                        ))
                    }
                }
            }
        }
        Ok(attrs)
    };

    loop {
        let (t, at) = (&toks[k].0, toks[k].1);
        match t {
            Tok::RBrace => {
                k += 1;
                break;
            }
            Tok::Semi => {
                k += 1;
                continue;
            }
            Tok::Eof => {
                return Err(err(
                    at,
                    "unexpected end of file: expected `}` to close the digraph".into(),
                ))
            }
            Tok::LBrace => return Err(err(at, "subgraphs are not supported".into())),
            Tok::Id(name) => {
                if id_is(t, "subgraph") {
                    return Err(err(at, "subgraphs are not supported".into()));
                }
                let name = name.clone();
                k += 1;
                if ["graph", "node", "edge"]
                    .iter()
                    .any(|w| name.eq_ignore_ascii_case(w))
                    && toks[k].0 == Tok::LBracket
                {
                    let attrs = parse_attrs(&mut k)?;
                    match name.to_ascii_lowercase().as_str() {
                        "node" => node_defaults.extend(attrs),
                        "edge" => edge_defaults.extend(attrs),
                        _ => {}
                    }
                    continue;
                }
                match &toks[k].0 {
                    Tok::Eq => {
                        // graph attribute `key = value`
                        k += 1;
                        if !matches!(toks[k].0, Tok::Id(_)) {
                            return Err(err(
                                toks[k].1,
                                format!(
                                    "expected a value after `{name} =`, found {}",
                                    describe(&toks[k].0)
                                ),
                            ));
                        }
                        k += 1;
                    }
                    Tok::Colon => {
                        return Err(err(
                            toks[k].1,
                            "ports (`node:port`) are not supported".into(),
                        ))
                    }
                    Tok::UArrow => {
                        return Err(err(
                            toks[k].1,
                            "expected `->`: `--` is for undirected graphs".into(),
                        ))
                    }
                    Tok::Arrow => {
                        let mut chain = vec![(name, at)];
                        while toks[k].0 == Tok::Arrow {
                            k += 1;
                            match &toks[k].0 {
                                Tok::Id(n) => chain.push((n.clone(), toks[k].1)),
                                other => {
                                    return Err(err(
                                        toks[k].1,
                                        format!(
                                            "expected a node name after `->`, found {}",
                                            describe(other)
                                        ),
                                    ))
                                }
                            }
                            k += 1;
                        }
                        let mut attrs = edge_defaults.clone();
                        attrs.extend(parse_attrs(&mut k)?);
                        for (n, pos) in &chain {
                            if !decls.contains_key(n) {
                                order.push(n.clone());
                                decls.insert(
                                    n.clone(),
                                    NodeDecl {
                                        pos: *pos,
                                        attrs: node_defaults.clone(),
                                    },
                                );
                            }
                        }
                        for w in chain.windows(2) {
                            edges.push((w[0].0.clone(), w[1].0.clone(), attrs.clone(), w[0].1));
                        }
                    }
                    _ => {
                        let attrs = parse_attrs(&mut k)?;
                        match decls.get_mut(&name) {
                            Some(d) => d.attrs.extend(attrs),
                            None => {
                                let mut all = node_defaults.clone();
                                all.extend(attrs);
                                order.push(name.clone());
                                decls.insert(
                                    name,
                                    NodeDecl {
                                        pos: at,
                                        attrs: all,
                                    },
                                );
                            }
                        }
                    }
                }
            }
            other => {
                return Err(err(
                    at,
                    format!("expected a statement, found {}", describe(other)),
                ))
            }
        }
    }
    if toks[k].0 != Tok::Eof {
        return Err(err(
            toks[k].1,
            format!(
                "expected the end of the file after the digraph, found {}",
                describe(&toks[k].0)
            ),
        ));
    }

    let weight =
        |attrs: &[(String, String)], pos: usize, what: &str| -> Result<Option<f64>, ReadError> {
            match attrs
                .iter()
                .rev()
                .find(|(key, _)| key.eq_ignore_ascii_case("weight"))
            {
                None => Ok(None),
                Some((_, v)) => crate::model::parse_number(v)
                    .filter(|x| *x >= 0.0)
                    .map(Some)
                    .ok_or_else(|| {
                        err(
                            pos,
                            format!("the Weight of {what} must be a number >= 0, found `{v}`"),
                        )
                    }),
            }
        };
    let mut g = GraphBuilder::new();
    for name in &order {
        let d = &decls[name];
        let mut node = Node::new(name.clone(), "task");
        if let Some(w) = weight(&d.attrs, d.pos, &format!("node `{name}`"))? {
            node = node.with_cost(w);
        }
        for (key, v) in &d.attrs {
            if key.eq_ignore_ascii_case("weight") {
                continue;
            }
            if key == "kind" {
                node.kind = v.clone();
            } else if let Some(slot) = node.attrs.iter_mut().find(|(k2, _)| k2 == key) {
                slot.1 = Value::Str(v.clone());
            } else {
                node.attrs.push((key.clone(), Value::Str(v.clone())));
            }
        }
        g.add_node(node).map_err(|e| ReadError::Graph {
            file: file.into(),
            location: location_of(text, d.pos),
            error: e,
        })?;
    }
    let mut offsets = Vec::with_capacity(edges.len());
    for (a, b, attrs, pos) in &edges {
        let comm = weight(attrs, *pos, &format!("edge `{a}` -> `{b}`"))?.unwrap_or(0.0);
        let (src, dst) = (g.find(a).expect("declared"), g.find(b).expect("declared"));
        if strict {
            // `strict`: a repeated edge is the same edge, its attributes merged (Graphviz).
            if let Some(id) = g.find_edge(src, 0, dst, 0) {
                if weight(attrs, *pos, "")?.is_some() {
                    g.set_edge_comm(id, comm);
                }
                continue;
            }
        }
        let added = g.add_edge(src, 0, dst, 0, comm);
        added.map_err(|e: GraphError| {
            let e = super::with_first_edge(e, &g, text, &offsets);
            let e = match e {
                GraphError::DuplicateEdge { .. } => ReadError::Syntax {
                    file: file.into(),
                    location: location_of(text, *pos),
                    message: format!("{e}, or write `strict digraph` to merge repeated edges"),
                },
                e => ReadError::Graph {
                    file: file.into(),
                    location: location_of(text, *pos),
                    error: e,
                },
            };
            e
        })?;
        offsets.push(*pos);
    }
    finish(g, file, text, &offsets)
}
