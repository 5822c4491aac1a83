//! The weighted DOT reader: a directed Graphviz graph whose node attribute `Weight` is the
//! computation cost (`wcet`, as in `.ag`, is read as the cost too) and whose edge attribute
//! `Weight` is the communication cost.
//!
//! Supported: `digraph` (optionally `strict`, optionally named), node statements, edge
//! chains `a -> b -> c`, `node`/`edge` default attribute statements, graph attributes
//! (`key = value` or `graph [key = value]`: the graph reads `deadline`, which a subgraph may
//! not give, Graphviz scoping it to the subgraph), `//`, `/* */` and `#` comments, quoted and
//! numeral IDs. A node used in an edge before (or without) its declaration is created as
//! DOT does. Node attribute `kind` sets the node kind (default `task`), `in` and `out` its
//! declared ports; Graphviz's display attributes (`label`, `shape`, ...
//! [`DISPLAY_ATTRIBUTES`]) are left out; other attributes are kept, unquoted numbers as
//! numbers and the rest as strings. An edge's ports are its `taillabel` and `headlabel`
//! when these are whole numbers from 1 (as `fugue dot` writes them), else port 1 on both
//! ends (a label in words at a node that declares several ports on that side is an error).
//! Subgraphs (`subgraph cluster_a { ... }`, `{ ... }`) group nodes for a drawing:
//! their nodes and edges are the graph's, their defaults their own, and a subgraph in an
//! edge (`a -> {b c}`) stands for each of its nodes. HTML strings (`<...>`) are read as
//! strings. Ports (`a:p`) are reported as unsupported. An attribute left out that Graphviz
//! does not read either (`GRAPHVIZ_ATTRIBUTES`) is recorded with its place
//! ([`SourcePlaces::unread`]): of an edge, the edge defaults or the graph, and a task node's
//! key close to `Weight`, `wcet` or `kind`; `check` refuses it and the other commands warn,
//! with the key it is closest to (`headlable`: `headlabel`).
//! What `fugue dot` writes reads back as the graph it was written from.

use std::collections::HashMap;

use super::{finish, location_of, syntax};
use crate::error::Location;
use crate::error::{GraphError, ReadError};
use crate::model::{GraphBuilder, Node, TaskGraph, Value};
use crate::places::{Cursor, SourcePlaces, UnreadKey, MAX_UNREAD_KEYS};
use crate::read::ag::MAX_PORTS;

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
        if out.len() >= MAX_TOKENS {
            return Err(err(
                start,
                format!(
                    "the file holds more than {MAX_TOKENS} tokens (names, values and punctuation), the most a DOT file may hold; reading stopped here"
                ),
            ));
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
                        // `\\` is one backslash (as Graphviz shows it), so that a value
                        // ending in a backslash can be written before the closing quote.
                        Some(b'\\') if b.get(i + 1) == Some(&b'\\') => {
                            s.push('\\');
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
            b'<' => {
                // An HTML string `<...>` (Graphviz's HTML-like labels), `<` and `>` nested.
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match b.get(j) {
                        None => {
                            return Err(err(
                                start,
                                "unterminated HTML string: expected a closing `>`".into(),
                            ))
                        }
                        Some(b'<') => depth += 1,
                        Some(b'>') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Some(_) => {}
                    }
                    j += 1;
                }
                out.push((Tok::Id(text[i + 1..j].to_string()), start));
                i = j + 1;
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-' || c >= 0x80 => {
                let mut j = i;
                while j < b.len() {
                    let d = b[j];
                    let arrow = d == b'-' && matches!(b.get(j + 1), Some(b'>' | b'-'));
                    // The sign of a number's exponent (`1e-12`, `2.5E+3`): after an `e` that
                    // follows digits (and a point, a leading minus) only.
                    let exponent_sign = matches!(d, b'-' | b'+')
                        && j > i + 1
                        && matches!(b[j - 1], b'e' | b'E')
                        && b[i..j - 1].iter().any(u8::is_ascii_digit)
                        && b[i..j - 1].iter().enumerate().all(|(k, c)| {
                            c.is_ascii_digit() || *c == b'.' || (k == 0 && *c == b'-')
                        });
                    if (d.is_ascii_alphanumeric()
                        || d == b'_'
                        || d == b'.'
                        || d >= 0x80
                        || (d == b'-' && j == i)
                        || exponent_sign)
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
type EdgeDecl = (u32, u32, std::rc::Rc<Attrs>, usize);

/// The most tokens (names, values, punctuation) a DOT file may hold: about 40 bytes each
/// in memory while it is read, so at most about 1.3 GB, where a file at
/// [`super::MAX_FILE_BYTES`] of one-byte statements would make 256 million. A graph of a
/// million nodes with a few attributes each, and their edges, takes about 20 million.
pub const MAX_TOKENS: usize = 32_000_000;

/// How deep subgraphs may nest (each level is a call of the parser).
pub const MAX_SUBGRAPH_DEPTH: usize = 64;

/// The most edges a DOT file may hold once links between subgraphs (`{a b} -> {c d}`: every
/// node of one to every node of the other) are made.
pub const MAX_EDGES: usize = 4_000_000;

/// The most bytes of attributes that the `node [...]` and `edge [...]` defaults may be copied
/// into, counted over the whole file (each node declared after them, each edge statement,
/// each subgraph; each attribute's key, value and record): a few hundred kilobytes of
/// defaults before tens of thousands of nodes would otherwise take gigabytes.
pub const MAX_DEFAULT_COPIES: usize = 64 << 20;

/// What a copy of `attrs` holds in memory, about: each attribute's key and value, and its
/// own record.
fn attrs_bytes(attrs: &[Attr]) -> usize {
    attrs
        .iter()
        .map(|a| std::mem::size_of::<Attr>() + a.key.len() + a.value.len())
        .sum()
}

/// One `key = value` attribute as read: the value's text (a quoted string without its
/// quotes), its byte offset, and whether it was quoted.
#[derive(Clone, Debug)]
struct Attr {
    key: String,
    /// The key's byte offset.
    key_pos: usize,
    value: String,
    pos: usize,
    quoted: bool,
}

/// Attributes as read, in file order.
type Attrs = Vec<Attr>;

struct NodeDecl {
    pos: usize,
    /// The defaults copied in when the node was first mentioned, then its own attributes.
    attrs: Attrs,
    /// The keys the node gives itself (drawing attributes apart), and where: to refuse one
    /// given twice, in one statement or two.
    own: HashMap<String, usize>,
}

/// The body of a digraph as read: nodes in order of first mention, their declarations, the
/// edges, and the `node [...]` and `edge [...]` defaults in force.
#[derive(Default)]
struct Body {
    order: Vec<String>,
    /// Each node's index in `order`.
    index: HashMap<String, u32>,
    decls: Vec<NodeDecl>,
    edges: Vec<EdgeDecl>,
    node_defaults: Attrs,
    edge_defaults: Attrs,
    /// The graph attribute `deadline`, if given.
    deadline: Option<f64>,
    /// The bytes the defaults were copied into so far ([`MAX_DEFAULT_COPIES`]).
    copied: usize,
    /// Attributes left out that neither fugue nor Graphviz reads ([`UnreadKey`]): the key's
    /// byte offset, what gives it, the key and the nearest key read there; at most
    /// [`MAX_UNREAD_KEYS`], and how many more.
    unread: Vec<(usize, String, String, Option<String>)>,
    unread_more: usize,
}

impl Body {
    /// Records attribute `key` (written at byte `key_pos`) of `of` when neither fugue
    /// (`reads`: the keys read there, the first candidates for a misspelling) nor Graphviz
    /// reads it.
    fn unless_read(&mut self, key: &str, key_pos: usize, of: &str, reads: &[&str]) {
        if reads.iter().any(|r| own_key(r) == own_key(key)) || is_graphviz(key) {
            return;
        }
        if self.unread.len() < MAX_UNREAD_KEYS {
            let nearest = crate::suggest::nearest(key, reads.iter().copied()).map(String::from);
            self.unread
                .push((key_pos, of.to_string(), key.to_string(), nearest));
        } else {
            self.unread_more += 1;
        }
    }

    /// Declares node `name` (first mentioned at byte `pos`) with the node defaults, unless it
    /// is declared already; returns its index. Fails when the defaults' copies pass
    /// [`MAX_DEFAULT_COPIES`].
    fn mention(&mut self, name: &str, pos: usize) -> Result<u32, String> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        self.charge(attrs_bytes(&self.node_defaults))?;
        let i = self.order.len() as u32;
        self.order.push(name.to_string());
        self.index.insert(name.to_string(), i);
        let attrs = self.node_defaults.clone();
        self.decls.push(NodeDecl {
            pos,
            attrs,
            own: HashMap::new(),
        });
        Ok(i)
    }

    /// Counts `bytes` more of the defaults' copies; fails past [`MAX_DEFAULT_COPIES`].
    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.copied = self.copied.saturating_add(bytes);
        if self.copied > MAX_DEFAULT_COPIES {
            return Err(format!(
                "the `node [...]` and `edge [...]` defaults, copied into every node, edge statement and subgraph after them, make more than {} MiB of attributes by here; give such attributes to the nodes that need them, or shorten them",
                MAX_DEFAULT_COPIES >> 20
            ));
        }
        Ok(())
    }
}

/// Whether `t` is the keyword `w` (DOT keywords are case-insensitive).
fn id_is(t: &Tok, w: &str) -> bool {
    matches!(t, Tok::Id(s) if s.eq_ignore_ascii_case(w))
}

/// A cursor over the tokens of one DOT text (which ends with [`Tok::Eof`], never passed).
struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    k: usize,
    text: &'a str,
    file: &'a str,
}

impl Parser<'_> {
    fn err(&self, pos: usize, m: String) -> ReadError {
        syntax(self.file, location_of(self.text, pos), m)
    }

    /// The current token.
    fn tok(&self) -> &Tok {
        &self.toks[self.k].0
    }

    /// The current token's byte offset.
    fn at(&self) -> usize {
        self.toks[self.k].1
    }

    /// An error at the current token: `what` then "found" the token.
    fn found(&self, what: &str) -> ReadError {
        self.err(self.at(), format!("{what}, found {}", describe(self.tok())))
    }

    /// `[strict] digraph [name] {`; returns whether the graph is strict.
    fn header(&mut self) -> Result<bool, ReadError> {
        let strict = id_is(self.tok(), "strict");
        if strict {
            self.k += 1;
        }
        if id_is(self.tok(), "graph") {
            return Err(self.err(
                self.at(),
                "expected `digraph`: undirected graphs are not task graphs".into(),
            ));
        }
        if !id_is(self.tok(), "digraph") {
            return Err(self.found("expected `digraph`"));
        }
        self.k += 1;
        if let Tok::Id(_) = self.tok() {
            self.k += 1;
        }
        if *self.tok() != Tok::LBrace {
            return Err(self.found("expected `{` after `digraph`"));
        }
        self.k += 1;
        Ok(strict)
    }

    /// Attribute lists `[k = v, ...] [...]`, none or several.
    fn attrs(&mut self) -> Result<Attrs, ReadError> {
        let mut attrs = Vec::new();
        while *self.tok() == Tok::LBracket {
            self.k += 1;
            loop {
                match self.tok() {
                    Tok::RBracket => {
                        self.k += 1;
                        break;
                    }
                    Tok::Comma | Tok::Semi => self.k += 1,
                    Tok::Id(key) => {
                        let key = key.clone();
                        let key_pos = self.at();
                        self.k += 1;
                        if *self.tok() != Tok::Eq {
                            return Err(
                                self.found(&format!("expected `=` after attribute `{key}`"))
                            );
                        }
                        self.k += 1;
                        let Tok::Id(v) = self.tok() else {
                            return Err(
                                self.found(&format!("expected a value for attribute `{key}`"))
                            );
                        };
                        let pos = self.at();
                        attrs.push(Attr {
                            key,
                            key_pos,
                            value: v.clone(),
                            pos,
                            quoted: matches!(self.text.as_bytes().get(pos), Some(b'"' | b'<')),
                        });
                        self.k += 1;
                    }
                    _ => return Err(self.found("expected an attribute `key=value` or `]`")),
                }
            }
        }
        Ok(attrs)
    }

    /// The statements up to the digraph's closing `}`, and the end of the file after it.
    fn body(&mut self) -> Result<Body, ReadError> {
        let mut body = Body::default();
        self.statements(&mut body, 0)?;
        if *self.tok() != Tok::Eof {
            return Err(self.found("expected the end of the file after the digraph"));
        }
        Ok(body)
    }

    /// Whether the current token is the keyword `w`: an unquoted ID (a quoted `"node"` is a
    /// node's name, as Graphviz reads it).
    fn keyword(&self, w: &str) -> bool {
        id_is(self.tok(), w) && self.text.as_bytes().get(self.at()) != Some(&b'"')
    }

    /// Statements up to and with the closing `}` of the digraph (`depth` 0) or of a
    /// subgraph; returns the nodes mentioned in them, each once, in order of first mention
    /// (a subgraph's nodes: a set, as Graphviz takes them).
    fn statements(&mut self, body: &mut Body, depth: usize) -> Result<Vec<u32>, ReadError> {
        let mut nodes = Vec::new();
        loop {
            let at = self.at();
            match self.tok() {
                Tok::RBrace => {
                    self.k += 1;
                    let mut seen = std::collections::HashSet::new();
                    nodes.retain(|n| seen.insert(*n));
                    return Ok(nodes);
                }
                Tok::Semi => self.k += 1,
                Tok::Eof => {
                    let what = if depth == 0 {
                        "the digraph"
                    } else {
                        "a subgraph"
                    };
                    return Err(self.err(
                        at,
                        format!("unexpected end of file: expected `}}` to close {what}"),
                    ));
                }
                Tok::LBrace => {
                    let first = self.subgraph(body, depth)?;
                    self.after_subgraph(first, at, body, depth, &mut nodes)?;
                }
                Tok::Id(name) => {
                    if self.keyword("subgraph") {
                        let first = self.subgraph(body, depth)?;
                        self.after_subgraph(first, at, body, depth, &mut nodes)?;
                        continue;
                    }
                    let name = name.clone();
                    let quoted = self.text.as_bytes().get(at) == Some(&b'"');
                    self.k += 1;
                    self.statement(name, quoted, at, body, depth, &mut nodes)?;
                }
                other => {
                    return Err(self.err(
                        at,
                        format!("expected a statement, found {}", describe(other)),
                    ))
                }
            }
        }
    }

    /// A subgraph at the current token: `subgraph [name] { ... }` or `{ ... }`. Its nodes
    /// and edges belong to the graph (a cluster only groups them in a drawing); the node and
    /// edge defaults it sets hold inside it only. Returns its nodes, in order.
    fn subgraph(&mut self, body: &mut Body, depth: usize) -> Result<Vec<u32>, ReadError> {
        if depth >= MAX_SUBGRAPH_DEPTH {
            return Err(self.err(
                self.at(),
                format!("subgraphs nest deeper than {MAX_SUBGRAPH_DEPTH}"),
            ));
        }
        if self.keyword("subgraph") {
            self.k += 1;
            if let Tok::Id(_) = self.tok() {
                self.k += 1;
            }
        }
        if *self.tok() != Tok::LBrace {
            return Err(self.found("expected `{` to open the subgraph"));
        }
        let at = self.at();
        body.charge(attrs_bytes(&body.node_defaults) + attrs_bytes(&body.edge_defaults))
            .map_err(|m| self.err(at, m))?;
        self.k += 1;
        let saved = (body.node_defaults.clone(), body.edge_defaults.clone());
        let nodes = self.statements(body, depth + 1);
        (body.node_defaults, body.edge_defaults) = saved;
        nodes
    }

    /// After a subgraph (started at byte `at`, in statements at `depth`) that is a statement:
    /// an edge chain from its nodes, or nothing more. Its nodes are added to `nodes`.
    fn after_subgraph(
        &mut self,
        first: Vec<u32>,
        at: usize,
        body: &mut Body,
        depth: usize,
        nodes: &mut Vec<u32>,
    ) -> Result<(), ReadError> {
        if *self.tok() == Tok::Arrow {
            self.edge_chain(first, at, body, depth, nodes)
        } else {
            nodes.extend(first);
            Ok(())
        }
    }

    /// The rest of a statement that starts with the ID `name` at byte `at`: default
    /// attributes (`node [...]`), a graph attribute (`key = value`), an edge chain or a node.
    fn statement(
        &mut self,
        name: String,
        quoted: bool,
        at: usize,
        body: &mut Body,
        depth: usize,
        nodes: &mut Vec<u32>,
    ) -> Result<(), ReadError> {
        if !quoted
            && ["graph", "node", "edge"]
                .iter()
                .any(|w| name.eq_ignore_ascii_case(w))
            && *self.tok() == Tok::LBracket
        {
            let attrs = self.attrs()?;
            // Only what the graph reads is kept as a default: a node's drawing attributes and
            // an edge's attributes other than its cost, ports and feedback mark would be left
            // out of every node and edge anyway.
            match name.to_ascii_lowercase().as_str() {
                "node" => body.node_defaults.extend(
                    attrs
                        .into_iter()
                        .filter(|a| !DISPLAY_ATTRIBUTES.contains(&a.key.as_str())),
                ),
                "edge" => {
                    for a in &attrs {
                        body.unless_read(&a.key, a.key_pos, "the edge defaults", EDGE_KEYS);
                    }
                    body.edge_defaults
                        .extend(attrs.into_iter().filter(|a| edge_reads(&a.key)))
                }
                // `graph [k = v]` sets graph attributes, as `k = v` statements do.
                _ => {
                    for a in &attrs {
                        self.graph_attr(&a.key, a.key_pos, &a.value, a.pos, body, depth)?;
                    }
                }
            }
            return Ok(());
        }
        match self.tok() {
            Tok::Eq => {
                // graph attribute `key = value`
                self.k += 1;
                let Tok::Id(v) = self.tok() else {
                    return Err(self.found(&format!("expected a value after `{name} =`")));
                };
                let v = v.clone();
                self.graph_attr(&name, at, &v, self.at(), body, depth)?;
                self.k += 1;
            }
            Tok::Colon => {
                return Err(self.err(self.at(), "ports (`node:port`) are not supported".into()))
            }
            Tok::UArrow => {
                return Err(self.err(
                    self.at(),
                    "expected `->`: `--` is for undirected graphs".into(),
                ))
            }
            Tok::Arrow => {
                let i = body.mention(&name, at).map_err(|m| self.err(at, m))?;
                self.edge_chain(vec![i], at, body, depth, nodes)?
            }
            _ => {
                let attrs = self.attrs()?;
                let i = body.mention(&name, at).map_err(|m| self.err(at, m))?;
                nodes.push(i);
                let decl = &mut body.decls[i as usize];
                // A key the node itself gives twice (a default it overrides, and a drawing
                // attribute, which the graph leaves out, apart).
                for a in &attrs {
                    if DISPLAY_ATTRIBUTES.contains(&a.key.as_str()) {
                        continue;
                    }
                    if let Some(&first) = decl.own.get(own_key(&a.key)) {
                        let first = location_of(self.text, first);
                        return Err(self.err(
                            a.key_pos,
                            format!(
                                "attribute `{}` of node `{name}` is given twice (first at line {}, column {}); keep one",
                                a.key, first.line, first.column
                            ),
                        ));
                    }
                    if decl.own.len() >= crate::MAX_NODE_ATTRS {
                        return Err(self.err(
                            a.key_pos,
                            format!(
                                "node `{name}` has more than the {} attributes a node may have",
                                crate::MAX_NODE_ATTRS
                            ),
                        ));
                    }
                    decl.own.insert(own_key(&a.key).to_string(), a.key_pos);
                }
                decl.attrs.extend(attrs);
            }
        }
        Ok(())
    }

    /// A graph attribute `key = value` (the key at byte `key_at`, the value at `value_at`),
    /// given by a statement or in `graph [...]` at subgraph `depth` (0: the digraph's own).
    /// The graph reads `deadline` (as in `.ag`), given once, at the top level: Graphviz scopes
    /// a subgraph's graph attributes to the subgraph, so one there cannot be the whole
    /// graph's and is refused. Other graph attributes (drawing ones: `label`, `rankdir`, ...)
    /// are left out.
    fn graph_attr(
        &self,
        key: &str,
        key_at: usize,
        value: &str,
        value_at: usize,
        body: &mut Body,
        depth: usize,
    ) -> Result<(), ReadError> {
        if key != "deadline" {
            body.unless_read(key, key_at, "the graph", &["deadline"]);
            return Ok(());
        }
        if depth > 0 {
            return Err(self.err(
                key_at,
                "a `deadline` inside a subgraph would hold for the subgraph only (Graphviz scopes a subgraph's graph attributes to it); give the deadline at the top level of the digraph".into(),
            ));
        }
        if body.deadline.is_some() {
            return Err(self.err(key_at, "the deadline is given twice; keep one".into()));
        }
        // In the costs' unit, so within their bound (every sum stays finite).
        let d = crate::model::parse_number(value).filter(|d| *d > 0.0 && crate::is_cost(*d));
        let Some(d) = d else {
            return Err(self.err(
                value_at,
                format!(
                    "the deadline must be a positive number up to {:e} (the bound of a cost), found `{value}`",
                    crate::MAX_COST
                ),
            ));
        };
        body.deadline = Some(d);
        Ok(())
    }

    /// An edge chain `a -> b -> c [...]` after its first operand `first` (a node, or a
    /// subgraph's nodes, each with the byte where the operand starts): an operand is a node
    /// or a subgraph (`{b c}`: every node in it). Every node mentioned is declared, and each
    /// link joins every node of its left operand to every node of its right one, with the
    /// edge defaults and the chain's attributes.
    fn edge_chain(
        &mut self,
        first: Vec<u32>,
        first_at: usize,
        body: &mut Body,
        depth: usize,
        nodes: &mut Vec<u32>,
    ) -> Result<(), ReadError> {
        let mut chain = vec![(first, first_at)];
        while *self.tok() == Tok::Arrow {
            self.k += 1;
            let at = self.at();
            let operand = match self.tok() {
                // A subgraph in an edge nests as one in a statement does.
                Tok::LBrace => self.subgraph(body, depth)?,
                Tok::Id(_) if self.keyword("subgraph") => self.subgraph(body, depth)?,
                Tok::Id(n) => {
                    let n = n.clone();
                    self.k += 1;
                    if *self.tok() == Tok::Colon {
                        return Err(
                            self.err(self.at(), "ports (`node:port`) are not supported".into())
                        );
                    }
                    vec![body.mention(&n, at).map_err(|m| self.err(at, m))?]
                }
                _ => return Err(self.found("expected a node name or a subgraph after `->`")),
            };
            chain.push((operand, at));
        }
        let at = self.at();
        body.charge(attrs_bytes(&body.edge_defaults))
            .map_err(|m| self.err(at, m))?;
        let own = self.attrs()?;
        for a in &own {
            body.unless_read(&a.key, a.key_pos, "an edge", EDGE_KEYS);
        }
        // A key the edge statement itself gives twice (one that overrides a default is
        // fine), as for a node.
        // Only the keys an edge is read for: others (Graphviz's `arrowhead`, `dir`, ...) are
        // left out, as Graphviz would take the last.
        for (i, a) in own.iter().enumerate() {
            if !edge_reads(&a.key) {
                continue;
            }
            let same = |b: &&Attr| own_key(&b.key) == own_key(&a.key);
            if let Some(first) = own[..i].iter().find(same) {
                let first = location_of(self.text, first.key_pos);
                return Err(self.err(
                    a.key_pos,
                    format!(
                        "attribute `{}` of the edge is given twice (first at line {}, column {}); keep one",
                        a.key, first.line, first.column
                    ),
                ));
            }
        }
        let mut attrs = body.edge_defaults.clone();
        attrs.extend(own);
        let attrs = std::rc::Rc::new(attrs);
        for w in chain.windows(2) {
            let ((from, pos), (to, _)) = (&w[0], &w[1]);
            // A link between subgraphs makes the product of their nodes: bounded, as a
            // few bytes of text could otherwise ask for billions of edges.
            let product = from.len() > 1 || to.len() > 1;
            for &a in from {
                for &b in to {
                    if product && body.edges.len() >= MAX_EDGES {
                        return Err(self.err(
                            *pos,
                            format!("the subgraphs' edges make more than {MAX_EDGES} edges"),
                        ));
                    }
                    body.edges.push((a, b, attrs.clone(), *pos));
                }
            }
        }
        for (op, _) in chain {
            nodes.extend(op);
        }
        Ok(())
    }
}

/// Parses weighted DOT text; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<TaskGraph, ReadError> {
    let toks = lex(text, file)?;
    let mut parser = Parser {
        toks,
        k: 0,
        text,
        file,
    };
    let strict = parser.header()?;
    let body = parser.body()?;
    let mut g = GraphBuilder::new();
    if let Some(d) = body.deadline {
        g.set_deadline(d);
    }
    let mut unread = Vec::new();
    let raw = add_nodes(&mut g, &body, text, file, &mut unread)?;
    let offsets = add_edges(&mut g, &body.order, &body.edges, strict, text, file)?;
    let mut graph = finish(g, file, text, &offsets, crate::error::FEEDBACK_DOT)?;
    let mut places = source_places(text, &raw);
    // The statements' keys (their first ones) and the task nodes', together in file order,
    // the first MAX_UNREAD_KEYS named.
    let mut more = body.unread_more;
    unread.extend(body.unread);
    unread.sort_by_key(|u| u.0);
    if unread.len() > MAX_UNREAD_KEYS {
        more += unread.len() - MAX_UNREAD_KEYS;
        unread.truncate(MAX_UNREAD_KEYS);
    }
    let mut cursor = Cursor::new(text);
    let unread = unread
        .into_iter()
        .map(|(pos, of, key, nearest)| UnreadKey {
            at: cursor.at(pos),
            of,
            key,
            nearest,
        })
        .collect();
    places.set_unread(unread, more);
    graph.set_places(Some(places));
    Ok(graph)
}

/// Graphviz's display attributes of nodes: they say how a node is drawn, not what it
/// computes, so the reader leaves them out of the node's attributes (a node kind is not told
/// of a `label` or a `shape` it does not read). No built-in kind reads one of these names; a
/// parameter of that name (of a plugin, say) is given in `.ag`.
pub const DISPLAY_ATTRIBUTES: &[&str] = &[
    "label",
    "xlabel",
    "shape",
    "style",
    "color",
    "fillcolor",
    "fontname",
    "fontsize",
    "fontcolor",
    "penwidth",
    "peripheries",
    "fixedsize",
    "labelloc",
    "tooltip",
    "URL",
    "href",
    "target",
    "id",
    "class",
    "pos",
    "xlp",
    "group",
    "sortv",
    "ordering",
    "comment",
    "image",
    "imagescale",
    "gradientangle",
    "nojustify",
];

/// Whether `key` is `Weight`: the reader takes it in any case.
fn is_weight(key: &str) -> bool {
    key.eq_ignore_ascii_case("weight")
}

/// `key` as a node's or an edge's own keys are told apart: `Weight` in any case is one key.
fn own_key(key: &str) -> &str {
    if is_weight(key) {
        "weight"
    } else {
        key
    }
}

/// Whether an edge is read for `key`: its cost, its ports and its feedback mark.
fn edge_reads(key: &str) -> bool {
    is_weight(key) || ["taillabel", "headlabel", "feedback"].contains(&key)
}

/// The keys an edge is read for ([`edge_reads`]).
const EDGE_KEYS: &[&str] = &["Weight", "taillabel", "headlabel", "feedback"];

/// The keys a node of a task graph (no `kind`) is read for, besides `in` and `out`: an
/// attribute close to one of them is said ([`UnreadKey`]); others are the file's own data.
const TASK_NODE_KEYS: &[&str] = &["Weight", "wcet", "kind"];

/// Graphviz's attributes (of graphs, nodes, edges and clusters, every layout engine),
/// sorted: a key among them is the drawing's, read by Graphviz, and not said when fugue
/// leaves it out.
const GRAPHVIZ_ATTRIBUTES: &[&str] = &[
    "Damping",
    "K",
    "TBbalance",
    "URL",
    "_background",
    "area",
    "arrowhead",
    "arrowsize",
    "arrowtail",
    "bb",
    "beautify",
    "bgcolor",
    "center",
    "charset",
    "class",
    "cluster",
    "clusterrank",
    "color",
    "colorscheme",
    "comment",
    "compound",
    "concentrate",
    "constraint",
    "decorate",
    "defaultdist",
    "dim",
    "dimen",
    "dir",
    "diredgeconstraints",
    "distortion",
    "dpi",
    "edgeURL",
    "edgehref",
    "edgetarget",
    "edgetooltip",
    "epsilon",
    "esep",
    "fillcolor",
    "fixedsize",
    "fontcolor",
    "fontname",
    "fontnames",
    "fontpath",
    "fontsize",
    "forcelabels",
    "gradientangle",
    "group",
    "headURL",
    "head_lp",
    "headclip",
    "headhref",
    "headlabel",
    "headport",
    "headtarget",
    "headtooltip",
    "height",
    "href",
    "id",
    "image",
    "imagepath",
    "imagepos",
    "imagescale",
    "inputscale",
    "label",
    "labelURL",
    "label_scheme",
    "labelangle",
    "labeldistance",
    "labelfloat",
    "labelfontcolor",
    "labelfontname",
    "labelfontsize",
    "labelhref",
    "labeljust",
    "labelloc",
    "labeltarget",
    "labeltooltip",
    "landscape",
    "layer",
    "layerlistsep",
    "layers",
    "layerselect",
    "layersep",
    "layout",
    "len",
    "levels",
    "levelsgap",
    "lhead",
    "lheight",
    "linelength",
    "lp",
    "ltail",
    "lwidth",
    "margin",
    "maxiter",
    "mclimit",
    "mindist",
    "minlen",
    "mode",
    "model",
    "newrank",
    "nodesep",
    "nojustify",
    "normalize",
    "notranslate",
    "nslimit",
    "nslimit1",
    "oneblock",
    "ordering",
    "orientation",
    "outputorder",
    "overlap",
    "overlap_scaling",
    "overlap_shrink",
    "pack",
    "packmode",
    "pad",
    "page",
    "pagedir",
    "pencolor",
    "penwidth",
    "peripheries",
    "pin",
    "pos",
    "quadtree",
    "quantum",
    "radius",
    "rank",
    "rankdir",
    "ranksep",
    "ratio",
    "rects",
    "regular",
    "remincross",
    "repulsiveforce",
    "resolution",
    "root",
    "rotate",
    "rotation",
    "samehead",
    "sametail",
    "samplepoints",
    "scale",
    "searchsize",
    "sep",
    "shape",
    "shapefile",
    "showboxes",
    "sides",
    "size",
    "skew",
    "smoothing",
    "sortv",
    "splines",
    "start",
    "style",
    "stylesheet",
    "tailURL",
    "tail_lp",
    "tailclip",
    "tailhref",
    "taillabel",
    "tailport",
    "tailtarget",
    "tailtooltip",
    "target",
    "tooltip",
    "truecolor",
    "vertices",
    "viewport",
    "voro_margin",
    "weight",
    "width",
    "xdotversion",
    "xlabel",
    "xlp",
    "z",
];

/// Whether Graphviz reads `key` ([`GRAPHVIZ_ATTRIBUTES`]).
fn is_graphviz(key: &str) -> bool {
    GRAPHVIZ_ATTRIBUTES.binary_search(&key).is_ok()
}

/// The `Weight` of `what` (declared at byte `pos`) among `attrs`: the last one given, a
/// number from 0 to [`crate::MAX_COST`], or `None`.
fn weight(
    attrs: &[Attr],
    pos: usize,
    what: &str,
    text: &str,
    file: &str,
) -> Result<Option<f64>, ReadError> {
    match attrs.iter().rev().find(|a| is_weight(&a.key)) {
        None => Ok(None),
        Some(a) => crate::model::parse_number(&a.value)
            .filter(|&x| crate::is_cost(x))
            .map(Some)
            .ok_or_else(|| {
                // At the value (a default's, given elsewhere, at the statement).
                let at = if a.pos >= pos { a.pos } else { pos };
                syntax(
                    file,
                    location_of(text, at),
                    format!(
                        "the Weight of {what} must be a number from 0 to 1e12, found `{}`",
                        a.value
                    ),
                )
            }),
    }
}

/// An attribute's value as a node attribute: an unquoted whole number an integer, an
/// unquoted decimal number (`0.5`, `-2.`, `1e3`) a float, anything else (and anything quoted)
/// a string. So the numbers `fugue dot` writes read back as the numbers they were.
fn value(a: &Attr) -> Value {
    let v = a.value.as_str();
    let numeral = !v.is_empty()
        && v.bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E'))
        && v.bytes().any(|c| c.is_ascii_digit());
    if !a.quoted && numeral {
        if let Ok(i) = v.parse::<i64>() {
            return Value::Int(i);
        }
        if let Some(f) = crate::model::parse_number(v) {
            return Value::Float(f);
        }
    }
    Value::Str(a.value.clone())
}

/// Adds the nodes in order of first mention: `Weight` is the cost, `kind` the kind (default
/// `task`), `in` and `out` the ports declared, Graphviz's display attributes
/// ([`DISPLAY_ATTRIBUTES`]) left out, any other attribute kept ([`value`]; the node's own
/// value of a key replaces a default's, a key the node gives twice having been refused).
fn add_nodes(
    g: &mut GraphBuilder,
    body: &Body,
    text: &str,
    file: &str,
    unread: &mut Vec<(usize, String, String, Option<String>)>,
) -> Result<Vec<RawPlaces>, ReadError> {
    let mut places = Vec::with_capacity(body.order.len());
    for (name, d) in body.order.iter().zip(&body.decls) {
        let mut node = Node::new(name.clone(), crate::TASK_KIND);
        let mut place = RawPlaces {
            decl: d.pos,
            kind: None,
            attrs: Vec::new(),
        };
        // `wcet`, a node's cost in .ag, is its cost here too: the node's own key wins over a
        // default's, and a node may not give both itself.
        let wcet = d.attrs.iter().rev().find(|a| a.key == "wcet");
        let weight_at = d.attrs.iter().rev().find(|a| is_weight(&a.key));
        let own_wcet = d.own.contains_key("wcet");
        if !(own_wcet || weight_at.is_none()) {
            if let Some(w) = weight(&d.attrs, d.pos, &format!("node `{name}`"), text, file)? {
                node = node.with_units_cost(w);
            }
        }
        if let Some(a) = wcet.filter(|_| own_wcet || weight_at.is_none()) {
            // Both given by the node itself (its own follow the defaults: the last `Weight`).
            if let Some(w) = weight_at.filter(|_| d.own.contains_key("weight")) {
                let first = location_of(text, w.key_pos);
                return Err(syntax(
                    file,
                    location_of(text, a.key_pos),
                    format!(
                        "node `{name}` gives its cost twice, as `wcet` and as `{}` (line {}, column {}); keep one",
                        w.key, first.line, first.column
                    ),
                ));
            }
            let c = crate::model::parse_number(&a.value)
                .filter(|&x| crate::is_cost(x))
                .ok_or_else(|| {
                    syntax(
                        file,
                        location_of(text, a.pos),
                        format!(
                            "attribute `wcet` of node `{name}` must be a number from 0 to 1e12 (microseconds), found `{}`",
                            a.value
                        ),
                    )
                })?;
            node = node.with_cost(c);
        }
        // Each key's index in `node.attrs`: a key given again (a default, then the node's
        // own) replaces the value, found without a search through the others.
        let mut index: HashMap<&str, usize> = HashMap::new();
        for a in &d.attrs {
            let key = &a.key;
            if is_weight(key) || key == "wcet" || DISPLAY_ATTRIBUTES.contains(&key.as_str()) {
                continue;
            }
            if key == "kind" {
                node.kind = a.value.clone();
                place.kind = Some(a.pos);
            } else if key == "in" || key == "out" {
                let n = crate::model::parse_number(&a.value)
                    .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v <= MAX_PORTS as f64)
                    .ok_or_else(|| {
                        syntax(
                            file,
                            location_of(text, a.pos),
                            format!(
                                "attribute `{key}` of node `{name}` must be a whole number of ports, at most {MAX_PORTS}, found `{}`",
                                a.value
                            ),
                        )
                    })? as usize;
                if key == "in" {
                    node.declared_inputs = Some(n);
                } else {
                    node.declared_outputs = Some(n);
                }
            } else if let Some(&i) = index.get(key.as_str()) {
                node.attrs[i].1 = value(a);
                place.attrs[i] = a.key_pos;
            } else {
                index.insert(key, node.attrs.len());
                node.attrs.push((key.clone(), value(a)));
                place.attrs.push(a.key_pos);
            }
        }
        // A node of no kind (a task graph's): its other keys are the file's own data, but
        // one close to a key read is a misspelling of it.
        if node.kind == crate::TASK_KIND {
            for (i, (key, _)) in node.attrs.iter().enumerate() {
                if is_graphviz(key) {
                    continue;
                }
                if let Some(near) = crate::suggest::nearest(key, TASK_NODE_KEYS.iter().copied()) {
                    unread.push((
                        place.attrs[i],
                        format!("node `{name}`"),
                        key.clone(),
                        Some(near.to_string()),
                    ));
                }
            }
        }
        super::room_for_node(g)
            .and_then(|()| g.add_node(node))
            .map_err(|e| ReadError::Graph {
                file: file.into(),
                location: location_of(text, d.pos),
                error: e,
            })?;
        places.push(place);
    }
    Ok(places)
}

/// Where a node's parts are written: byte offsets of its first mention, its kind's value and
/// the keys of its attributes (in the order of [`Node::attrs`]).
struct RawPlaces {
    decl: usize,
    kind: Option<usize>,
    attrs: Vec<usize>,
}

/// The places of the nodes' parts ([`RawPlaces`]) as lines and columns: every offset sorted
/// once, so that one pass over the text turns them all (a node's attributes may be written
/// anywhere in the file, after other nodes').
fn source_places(text: &str, raw: &[RawPlaces]) -> SourcePlaces {
    let mut offsets: Vec<(usize, usize)> = Vec::new();
    for r in raw {
        offsets.push((r.decl, offsets.len()));
        offsets.push((r.kind.unwrap_or(r.decl), offsets.len()));
        for &a in &r.attrs {
            offsets.push((a, offsets.len()));
        }
    }
    let mut at = vec![Location { line: 1, column: 1 }; offsets.len()];
    offsets.sort_unstable();
    let mut cursor = Cursor::new(text);
    for &(pos, slot) in &offsets {
        at[slot] = cursor.at(pos);
    }
    let mut places = SourcePlaces::default();
    let mut k = 0;
    for r in raw {
        let (decl, kind) = (at[k], at[k + 1]);
        k += 2;
        let attrs = at[k..k + r.attrs.len()].iter().copied();
        k += r.attrs.len();
        places.push(decl, r.kind.map(|_| kind), attrs);
    }
    places
}

/// An edge's port at one end (0-based): its `taillabel` (source) or `headlabel`
/// (destination) when that is a whole number from 1, as `fugue dot` writes the ports of
/// nodes with several; else the first port. Errors when the label is a number that is not a
/// port (0, a fraction, a negative number), and when it is a label in words (which a drawing
/// may give an edge) at the end of a node that declares several ports on that side
/// (`declared`: its `out` for the tail, its `in` for the head), which one could not tell.
fn port(
    attrs: &[Attr],
    (key, declared): (&str, Option<usize>),
    what: &str,
    text: &str,
    file: &str,
) -> Result<usize, ReadError> {
    let Some(a) = attrs.iter().rev().find(|a| a.key == key) else {
        return Ok(0);
    };
    let Some(v) = crate::model::parse_number(a.value.trim()) else {
        return match declared {
            Some(n) if n > 1 => Err(syntax(
                file,
                location_of(text, a.pos),
                format!(
                    "the `{key}` of {what} is `{}`, which names no port, and the node at that end declares {n} {} ports; give the port's number, from 1 to {n}",
                    crate::error::shorten_words(&a.value),
                    if key == "taillabel" { "output" } else { "input" }
                ),
            )),
            // A label in words at a node of one port: that port.
            _ => Ok(0),
        };
    };
    if v >= 1.0 && v.fract() == 0.0 && v <= MAX_PORTS as f64 {
        Ok(v as usize - 1)
    } else {
        Err(syntax(
            file,
            location_of(text, a.pos),
            format!(
                "the `{key}` of {what} names its port: a whole number from 1 to {MAX_PORTS}, found `{}`",
                a.value
            ),
        ))
    }
}

/// Adds the edges (ports from `taillabel` and `headlabel`, see [`port`]; else port 1 to
/// port 1; `Weight` the communication cost; `feedback=true`: a feedback edge, `~>`), in the
/// order written. In a `strict` graph the edges between the same two ports are one edge,
/// added where the first is written, with their attributes merged, a later value replacing
/// an earlier one: `Weight`, and `feedback`, which makes the merged edge a feedback edge or
/// not. (Unlike Graphviz, which gives an edge the `edge [...]` defaults only when it is
/// made, a repeat carries the defaults in force where it is written.) Returns each added
/// edge's byte offset.
fn add_edges(
    g: &mut GraphBuilder,
    names: &[String],
    edges: &[EdgeDecl],
    strict: bool,
    text: &str,
    file: &str,
) -> Result<Vec<usize>, ReadError> {
    let mut added = Added {
        offsets: Vec::with_capacity(edges.len()),
        feedback: Vec::new(),
    };
    // strict: each port pair's edge, merged as the statements come, added at the end.
    let mut merged: Vec<Written> = Vec::new();
    let mut index: HashMap<(usize, usize, usize, usize), usize> = HashMap::new();
    for (a, b, attrs, pos) in edges {
        let (a, b) = (&names[*a as usize], &names[*b as usize]);
        let what = format!("edge `{a}` -> `{b}`");
        let comm = weight(attrs, *pos, &what, text, file)?;
        let (src, dst) = (g.find(a).expect("declared"), g.find(b).expect("declared"));
        let outs = g.nodes()[src].declared_outputs;
        let ins = g.nodes()[dst].declared_inputs;
        let sp = port(attrs, ("taillabel", outs), &what, text, file)?;
        let dp = port(attrs, ("headlabel", ins), &what, text, file)?;
        let feedback = match attrs.iter().rev().find(|x| x.key == "feedback") {
            None => None,
            Some(x) if x.value.eq_ignore_ascii_case("true") => Some(true),
            Some(x) if x.value.eq_ignore_ascii_case("false") => Some(false),
            Some(x) => {
                return Err(syntax(
                    file,
                    location_of(text, x.pos),
                    format!(
                        "attribute `feedback` of {what} must be true or false, found `{}`",
                        crate::error::shorten_words(&x.value)
                    ),
                ))
            }
        };
        let w = Written {
            key: (src, sp, dst, dp),
            comm,
            feedback,
            pos: *pos,
        };
        if !strict {
            added.add(g, &w, text, file)?;
        } else if let Some(&i) = index.get(&w.key) {
            let m = &mut merged[i];
            m.comm = w.comm.or(m.comm);
            m.feedback = w.feedback.or(m.feedback);
        } else {
            index.insert(w.key, merged.len());
            merged.push(w);
        }
    }
    for w in &merged {
        added.add(g, w, text, file)?;
    }
    Ok(added.offsets)
}

/// One edge statement as [`add_edges`] reads it: its ports, `Weight` and `feedback` when
/// given, and its place.
struct Written {
    key: (usize, usize, usize, usize),
    comm: Option<f64>,
    feedback: Option<bool>,
    pos: usize,
}

/// Where the edges [`add_edges`] added are written: each plain edge's byte offset, and each
/// feedback edge's, in the order they were added.
struct Added {
    offsets: Vec<usize>,
    feedback: Vec<usize>,
}

impl Added {
    /// Adds `w` to `g`: a feedback edge or a plain one; a repeat is refused at its place,
    /// naming the first.
    fn add(
        &mut self,
        g: &mut GraphBuilder,
        w: &Written,
        text: &str,
        file: &str,
    ) -> Result<(), ReadError> {
        let (src, sp, dst, dp) = w.key;
        let feedback = w.feedback == Some(true);
        let added = if feedback {
            // A feedback edge (`fugue dot` writes `~>` so): one block late, no cycle.
            g.add_feedback(src, sp, dst, dp)
        } else {
            super::room_for_edge(g)
                .and_then(|()| g.add_edge(src, sp, dst, dp, w.comm.unwrap_or(0.0)))
                .map(|_| ())
        };
        added.map_err(|e| {
            // Only on failure: finding a line scans the text.
            let location = location_of(text, w.pos);
            match super::with_first_edge(e, g, text, &self.offsets, &self.feedback) {
                e @ GraphError::DuplicateEdge { .. } => ReadError::Syntax {
                    file: file.into(),
                    location,
                    message: format!("{e}, or write `strict digraph` to merge repeated edges"),
                },
                error => ReadError::Graph {
                    file: file.into(),
                    location,
                    error,
                },
            }
        })?;
        if feedback {
            self.feedback.push(w.pos);
        } else {
            self.offsets.push(w.pos);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`is_graphviz`] searches the list in halves: it must be sorted, without repeats.
    #[test]
    fn the_graphviz_attributes_are_sorted() {
        assert!(GRAPHVIZ_ATTRIBUTES.windows(2).all(|w| w[0] < w[1]));
        for key in [
            "label",
            "arrowhead",
            "TBbalance",
            "_background",
            "z",
            "headlabel",
        ] {
            assert!(is_graphviz(key), "{key}");
        }
        for key in ["headlable", "Wieght", "deadline", "feedback", "kind"] {
            assert!(!is_graphviz(key), "{key}");
        }
    }
}
