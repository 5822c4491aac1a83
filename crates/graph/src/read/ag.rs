//! The `.ag` (AudioGraph) reader.
//!
//! Grammar (the 2019 corpus), with the extensions later writers use: `_` in identifiers,
//! `//` and `/* */` comments, negative numbers, exponents, numbers written as strings.
//!
//! ```text
//! file      = statement* ;              statement = (node | edges | deadline) ";"
//! node      = ident "=" "{" attribute* "}"
//! attribute = ident ":" (float | int | string) ","        (the comma is optional after the last)
//! edges     = port_ident (arrow port_ident)+            (a.1 -> b.1 -> c.2 is two edges)
//! arrow     = "->" | "~>"                               (`~>`: a feedback edge, one block late)
//! port_ident= ident "." digits                          (ports are 1-based)
//! deadline  = "deadline" "=" float
//! ```
//!
//! Known attributes: `kind` (string), `in` and `out` (port counts), `wcet` (cost in
//! microseconds; [`DEFAULT_COST`](crate::DEFAULT_COST) when absent). All others are kept in
//! [`Node::attrs`] for the node kind to read.

use std::collections::HashMap;

use super::{finish, location_of, syntax};
use crate::error::{Direction, GraphError, Location, ReadError};
use crate::model::{GraphBuilder, Node, NodeId, TaskGraph, Value};
use crate::places::{Cursor, SourcePlaces};

/// The most ports a node may declare with `in` or `out`.
pub const MAX_PORTS: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Int(i64),
    /// A number with a fraction or an exponent, or a whole one beyond `i64`, with its text
    /// (quoted as written in messages).
    Float(f64, &'a str),
    Str(usize, usize),
    Eq,
    LBrace,
    RBrace,
    Colon,
    Comma,
    Semi,
    Arrow,
    /// `~>`: a feedback edge.
    Tilde,
    Dot,
    Eof,
}

fn describe(t: &Tok<'_>) -> String {
    match t {
        Tok::Ident(s) => format!("identifier `{s}`"),
        Tok::Int(i) => format!("number `{i}`"),
        Tok::Float(_, text) => format!("number `{text}`"),
        Tok::Str(..) => "a string".into(),
        Tok::Eq => "`=`".into(),
        Tok::LBrace => "`{`".into(),
        Tok::RBrace => "`}`".into(),
        Tok::Colon => "`:`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Semi => "`;`".into(),
        Tok::Arrow => "`->`".into(),
        Tok::Tilde => "`~>`".into(),
        Tok::Dot => "`.`".into(),
        Tok::Eof => "the end of the file".into(),
    }
}

/// Bytes that may continue an identifier: letters, digits, `_` and `-` (a `-` followed by
/// `>` ends it: that is an arrow).
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        c += 1;
    }
    t
};

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    file: &'a str,
}

impl<'a> Lexer<'a> {
    fn err(&self, pos: usize, msg: String) -> ReadError {
        syntax(self.file, location_of(self.text, pos), msg)
    }

    fn skip_trivia(&mut self) -> Result<(), ReadError> {
        loop {
            while let Some(c) = self.b.get(self.pos) {
                if !c.is_ascii_whitespace() {
                    break;
                }
                self.pos += 1;
            }
            if self.b.get(self.pos) != Some(&b'/') {
                return Ok(());
            }
            if self.b[self.pos..].starts_with(b"//") {
                while self.pos < self.b.len() && self.b[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if self.b[self.pos..].starts_with(b"/*") {
                let start = self.pos;
                match self.text[self.pos + 2..].find("*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => {
                        return Err(
                            self.err(start, "unterminated `/*` comment: expected `*/`".into())
                        )
                    }
                }
            } else {
                return Ok(());
            }
        }
    }

    /// Next token and its byte offset.
    fn next(&mut self) -> Result<(Tok<'a>, usize), ReadError> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(&c) = self.b.get(self.pos) else {
            return Ok((Tok::Eof, start));
        };
        let tok = match c {
            b'=' => self.single(Tok::Eq),
            b'{' => self.single(Tok::LBrace),
            b'}' => self.single(Tok::RBrace),
            b':' => self.single(Tok::Colon),
            b',' => self.single(Tok::Comma),
            b';' => self.single(Tok::Semi),
            b'.' => self.single(Tok::Dot),
            b'-' if self.b.get(self.pos + 1) == Some(&b'>') => {
                self.pos += 2;
                Tok::Arrow
            }
            b'~' if self.b.get(self.pos + 1) == Some(&b'>') => {
                self.pos += 2;
                Tok::Tilde
            }
            b'"' => self.string()?,
            b'-' | b'+' | b'0'..=b'9' => self.number()?,
            c if c.is_ascii_alphabetic() || c == b'_' => {
                self.pos += 1;
                while let Some(&d) = self.b.get(self.pos) {
                    if !IDENT[d as usize] || (d == b'-' && self.b.get(self.pos + 1) == Some(&b'>'))
                    {
                        break;
                    }
                    self.pos += 1;
                }
                Tok::Ident(&self.text[start..self.pos])
            }
            _ => {
                let ch = self.text[start..].chars().next().unwrap_or('?');
                return Err(self.err(
                    start,
                    format!("unexpected character {ch:?}; expected a name, a number, a string or one of = {{ }} : , ; -> ~> ."),
                ));
            }
        };
        Ok((tok, start))
    }

    fn single(&mut self, t: Tok<'a>) -> Tok<'a> {
        self.pos += 1;
        t
    }

    fn number(&mut self) -> Result<Tok<'a>, ReadError> {
        let start = self.pos;
        if matches!(self.b[self.pos], b'-' | b'+') {
            self.pos += 1;
        }
        let digits_start = self.pos;
        // The integer value is accumulated while scanning (the common case: port numbers).
        let mut value: u64 = 0;
        let mut overflow = false;
        while let Some(&d) = self.b.get(self.pos) {
            if !d.is_ascii_digit() {
                break;
            }
            match value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(v) => value = v,
                None => overflow = true,
            }
            self.pos += 1;
        }
        if self.pos == digits_start {
            let rest = &self.text[digits_start..];
            let word = rest
                .get(..3)
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            let why = if self.b[start] == b'-'
                && (rest.trim_start().starts_with('>') || rest.starts_with('-'))
            {
                "`-` here starts neither a number nor an arrow: an arrow is written `->`, with nothing inside it"
            } else if word == "inf" || word == "nan" {
                "expected digits after the sign of a number (infinity and NaN are not values of a graph)"
            } else {
                "expected digits after the sign of a number"
            };
            return Err(self.err(start, why.into()));
        }
        let mut float = false;
        // A fraction: "." followed by digits or by something that cannot start a port number.
        if self.b.get(self.pos) == Some(&b'.') {
            float = true;
            self.pos += 1;
            while self.pos < self.b.len() && self.b[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
        }
        if matches!(self.b.get(self.pos), Some(b'e' | b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.b.get(self.pos), Some(b'-' | b'+')) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            while self.pos < self.b.len() && self.b[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
            if self.pos == exp_start {
                self.pos = save;
            } else {
                float = true;
            }
        }
        let s = &self.text[start..self.pos];
        if !float && !overflow {
            if let Ok(i) = i64::try_from(value) {
                return Ok(Tok::Int(if self.b[start] == b'-' { -i } else { i }));
            }
        }
        match crate::model::parse_number(s) {
            Some(f) => Ok(Tok::Float(f, s)),
            // Well formed (scanned above), so too large for a double.
            None => Err(self.err(
                start,
                format!("`{s}` is too large a number (a double reaches about 1.8e308)"),
            )),
        }
    }

    fn string(&mut self) -> Result<Tok<'a>, ReadError> {
        let start = self.pos;
        self.pos += 1;
        while let Some(&c) = self.b.get(self.pos) {
            match c {
                b'"' => {
                    self.pos += 1;
                    return Ok(Tok::Str(start, self.pos));
                }
                b'\\' => self.pos += 2,
                b'\n' => break,
                _ => self.pos += 1,
            }
        }
        Err(self.err(
            start,
            "unterminated string: expected a closing `\"` on the same line".into(),
        ))
    }

    /// The unescaped contents of the string token spanning `start..end` (quotes included).
    fn unescape(&self, start: usize, end: usize) -> Result<String, ReadError> {
        let raw = &self.text[start + 1..end - 1];
        if !raw.contains('\\') {
            return Ok(raw.to_string());
        }
        let mut out = String::with_capacity(raw.len());
        let mut it = raw.char_indices();
        while let Some((i, c)) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            let bad = |what: &str| self.err(start + 1 + i, format!("bad escape in string: {what}"));
            match it.next().map(|x| x.1) {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('b') => out.push('\u{8}'),
                Some('f') => out.push('\u{c}'),
                Some('u') => {
                    // Four hex digits after the `\u` at `at` (an offset in `raw`).
                    let four = |it: &mut std::str::CharIndices<'_>, at: usize| {
                        let hex: String = (0..4).filter_map(|_| it.next().map(|x| x.1)).collect();
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| {
                                hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit())
                            })
                            .ok_or_else(|| {
                                self.err(
                                    start + 1 + at,
                                    "bad escape in string: expected four hex digits after \\u"
                                        .into(),
                                )
                            })
                    };
                    let code = four(&mut it, i)?;
                    let code = match code {
                        // A high surrogate: JSON's way to write a character beyond U+FFFF
                        // is with the low one that must follow.
                        0xD800..=0xDBFF => {
                            let mut ahead = it.clone();
                            let low = match (ahead.next(), ahead.next()) {
                                (Some((j, '\\')), Some((_, 'u'))) => Some(four(&mut ahead, j)?),
                                _ => None,
                            }
                            .filter(|l| (0xDC00..=0xDFFF).contains(l));
                            let Some(low) = low else {
                                return Err(bad(&format!(
                                    "\\u{code:04X} is the first half of a surrogate pair, and no \\uDC00-\\uDFFF follows it"
                                )));
                            };
                            it = ahead;
                            0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        0xDC00..=0xDFFF => {
                            return Err(bad(&format!(
                                "\\u{code:04X} is the second half of a surrogate pair, with no first half before it"
                            )))
                        }
                        c => c,
                    };
                    out.push(char::from_u32(code).expect("not a surrogate, at most U+10FFFF"));
                }
                Some(c) => return Err(bad(&format!("unknown escape `\\{c}`"))),
                None => return Err(bad("a `\\` ends the string")),
            }
        }
        Ok(out)
    }
}

struct Parser<'a> {
    lx: Lexer<'a>,
    peeked: Option<(Tok<'a>, usize)>,
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Result<(Tok<'a>, usize), ReadError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lx.next(),
        }
    }

    fn peek(&mut self) -> Result<(Tok<'a>, usize), ReadError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lx.next()?);
        }
        Ok(self.peeked.expect("just set"))
    }

    /// Takes the next token, which must be `want`; `context` describes the place for the
    /// error message (built only when there is an error).
    fn expect(
        &mut self,
        want: Tok<'static>,
        context: impl FnOnce() -> String,
    ) -> Result<usize, ReadError> {
        let (t, at) = self.next()?;
        if std::mem::discriminant(&t) == std::mem::discriminant(&want) {
            Ok(at)
        } else {
            Err(self.lx.err(
                at,
                format!(
                    "expected {} {}, found {}",
                    describe(&want),
                    context(),
                    describe(&t)
                ),
            ))
        }
    }

    fn loc(&self, pos: usize) -> Location {
        location_of(self.lx.text, pos)
    }
}

/// Parses `.ag` text; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<TaskGraph, ReadError> {
    let mut p = Parser {
        lx: Lexer {
            text,
            b: text.as_bytes(),
            pos: 0,
            file,
        },
        peeked: None,
    };
    let mut g = GraphBuilder::new();
    let mut node_pos: HashMap<NodeId, usize> = HashMap::new();
    let mut edge_pos: Vec<usize> = Vec::new();
    // Where each feedback edge is written, in the order they are added.
    let mut feedback_pos: Vec<usize> = Vec::new();
    let mut raw_places: Vec<RawPlaces> = Vec::new();
    // Where the deadline was given, to refuse a second one.
    let mut deadline_at: Option<usize> = None;
    loop {
        let (t, at) = p.next()?;
        let name = match t {
            Tok::Eof => break,
            Tok::Ident(name) => name,
            other => {
                return Err(p.lx.err(
                    at,
                    format!("expected a node declaration (`name = {{ ... }};`), an edge (`a.1 -> b.1;`) or `deadline = ...;`, found {}", describe(&other)),
                ))
            }
        };
        let (t2, at2) = p.next()?;
        match t2 {
            Tok::Eq => {
                let (t3, at3) = p.peek()?;
                match t3 {
                    Tok::LBrace => {
                        p.next()?;
                        let mut raw = RawPlaces { decl: at, kind: None, attrs: Vec::new() };
                        let node = parse_node_body(&mut p, name, &mut raw)?;
                        match super::room_for_node(&g).and_then(|()| g.add_node(node)) {
                            Ok(id) => {
                                node_pos.insert(id, at);
                                raw_places.push(raw);
                            }
                            Err(GraphError::DuplicateNode { name, .. }) => {
                                let first = g.find(&name).and_then(|id| node_pos.get(&id)).map(|&p2| p.loc(p2));
                                return Err(ReadError::Graph {
                                    file: file.into(),
                                    location: p.loc(at),
                                    error: GraphError::DuplicateNode { name, first },
                                });
                            }
                            Err(e) => {
                                return Err(ReadError::Graph {
                                    file: file.into(),
                                    location: p.loc(at),
                                    error: e,
                                })
                            }
                        }
                    }
                    Tok::Int(_) | Tok::Float(..) if name == "deadline" => {
                        p.next()?;
                        let v = match t3 {
                            Tok::Int(i) => i as f64,
                            Tok::Float(f, _) => f,
                            _ => unreachable!("matched above"),
                        };
                        // In the costs' unit, so within their bound (every sum stays finite).
                        if !(v > 0.0 && crate::is_cost(v)) {
                            return Err(p.lx.err(at3, format!("the deadline must be a positive number up to {:e} (the bound of a cost), found {}", crate::MAX_COST, crate::short_number(v))));
                        }
                        if let Some(first) = deadline_at {
                            let first = p.loc(first);
                            return Err(p.lx.err(at, format!("the deadline is given twice (first at line {}, column {}); keep one", first.line, first.column)));
                        }
                        deadline_at = Some(at);
                        g.set_deadline(v);
                    }
                    other => {
                        let want = if name == "deadline" { "`{` or a number" } else { "`{`" };
                        return Err(p.lx.err(at3, format!("expected {want} after `{name} =`, found {}", describe(&other))));
                    }
                }
            }
            Tok::Dot => {
                let mut from = (name, at, parse_port(&mut p, name)?);
                let mut count = 0;
                loop {
                    let (t, at_t) = p.next()?;
                    let feedback = match t {
                        Tok::Arrow => false,
                        Tok::Tilde => true,
                        Tok::Semi if count > 0 => break,
                        other => {
                            let want = if count == 0 { "`->` or `~>`" } else { "`->`, `~>` or `;`" };
                            return Err(p.lx.err(at_t, format!("expected {want} in an edge statement, found {}", describe(&other))));
                        }
                    };
                    let (tn, at_n) = p.next()?;
                    let Tok::Ident(to_name) = tn else {
                        return Err(p.lx.err(at_n, format!("expected a port such as `node.1` after `->`, found {}", describe(&tn))));
                    };
                    p.expect(Tok::Dot, || format!("after `{to_name}` (a port is written `node.number`)"))?;
                    let to_port = parse_port(&mut p, to_name)?;
                    let to = (to_name, at_n, to_port);
                    let resolve = |nm: &str, pos: usize| {
                        g.find(nm).ok_or_else(|| ReadError::Graph {
                            file: file.into(),
                            location: location_of(text, pos),
                            error: GraphError::UnknownNode {
                                name: nm.into(),
                                nearest: crate::suggest::nearest(nm, g.nodes().iter().map(|n| n.name.as_str())).map(str::to_string),
                                later: declared_after(text, pos, nm).map(|d| location_of(text, d)),
                            },
                        })
                    };
                    let src = resolve(from.0, from.1)?;
                    let dst = resolve(to.0, to.1)?;
                    let added = if feedback {
                        g.add_feedback(src, from.2 - 1, dst, to.2 - 1).map(|()| usize::MAX)
                    } else {
                        super::room_for_edge(&g).and_then(|()| g.add_edge(src, from.2 - 1, dst, to.2 - 1, 0.0))
                    };
                    added.map_err(|error| {
                        let at = match &error {
                            GraphError::PortOutOfRange { direction: Direction::Input, .. } => to.1,
                            _ => from.1,
                        };
                        let error = super::with_first_edge(error, &g, text, &edge_pos, &feedback_pos);
                        ReadError::Graph { file: file.into(), location: p.loc(at), error }
                    })?;
                    if feedback {
                        feedback_pos.push(from.1);
                    } else {
                        edge_pos.push(from.1);
                    }
                    count += 1;
                    from = to;
                }
            }
            other => {
                return Err(p.lx.err(
                    at2,
                    format!("expected `=` (a node declaration) or `.` (an edge `{name}.port -> ...`) after `{name}`, found {}", describe(&other)),
                ))
            }
        }
        if t2 == Tok::Eq {
            p.expect(Tok::Semi, || "after the declaration".into())?;
        }
    }
    let mut graph = finish(g, file, text, &edge_pos, crate::error::FEEDBACK_AG)?;
    // The offsets grow through the file, so one pass turns them into places.
    let mut cursor = Cursor::new(text);
    let mut places = SourcePlaces::default();
    let mut body: Vec<(usize, usize)> = Vec::new();
    let mut found: Vec<Location> = Vec::new();
    for r in &raw_places {
        let decl = cursor.at(r.decl);
        // The kind may come after other attributes: visit the node's parts in file order.
        body.clear();
        body.extend(r.attrs.iter().enumerate().map(|(i, &a)| (a, i + 1)));
        body.extend(r.kind.map(|k| (k, 0)));
        body.sort_unstable();
        found.clear();
        found.resize(r.attrs.len() + 1, decl);
        for &(offset, slot) in &body {
            found[slot] = cursor.at(offset);
        }
        let kind = r.kind.map(|_| found[0]);
        places.push(decl, kind, found[1..].iter().copied());
    }
    graph.set_places(Some(places));
    Ok(graph)
}

/// Where node `name` is declared (`name = {`) after byte `from` of `text`, which starts a
/// token, if it is: an edge that names the node before its declaration is told so. The text
/// after `from` is read as tokens, up to the first that does not lex.
fn declared_after(text: &str, from: usize, name: &str) -> Option<usize> {
    let mut lx = Lexer {
        text,
        b: text.as_bytes(),
        pos: from,
        file: "",
    };
    // The two tokens before the current one, the earlier first.
    let mut before = [(Tok::Eof, 0), (Tok::Eof, 0)];
    loop {
        let (t, at) = lx.next().ok()?;
        match (before[0].0, before[1].0, t) {
            (_, _, Tok::Eof) => return None,
            (Tok::Ident(n), Tok::Eq, Tok::LBrace) if n == name => return Some(before[0].1),
            _ => before = [before[1], (t, at)],
        }
    }
}

fn parse_port(p: &mut Parser<'_>, node: &str) -> Result<usize, ReadError> {
    let (t, at) = p.next()?;
    match t {
        Tok::Int(i) if i > MAX_PORTS as i64 => Err(p.lx.err(
            at,
            format!("port {i} of `{node}`: a node has at most {MAX_PORTS} ports"),
        )),
        Tok::Int(i) if i >= 1 => Ok(i as usize),
        Tok::Int(_) => Err(p.lx.err(
            at,
            format!("port numbers of `{node}` start at 1; did you mean `{node}.1`?"),
        )),
        other => Err(p.lx.err(
            at,
            format!(
                "expected a port number (1, 2, ...) after `{node}.`, found {}",
                describe(&other)
            ),
        )),
    }
}

/// Where a node's parts are written: byte offsets of its name, its kind's value and the keys
/// of its attributes (in the order of [`Node::attrs`]).
struct RawPlaces {
    decl: usize,
    kind: Option<usize>,
    attrs: Vec<usize>,
}

fn parse_node_body(
    p: &mut Parser<'_>,
    name: &str,
    places: &mut RawPlaces,
) -> Result<Node, ReadError> {
    let mut node = Node::new(name, "");
    // Attributes given so far and where, to refuse one given twice.
    let mut given: HashMap<String, usize> = HashMap::new();
    loop {
        let (t, at) = p.next()?;
        let key: String = match t {
            Tok::RBrace => return Ok(node),
            Tok::Ident(k) => k.to_string(),
            // A quoted name: a parameter path, for kinds that read them (`"/synth/gain": 0.5`).
            Tok::Str(s, e) => p.lx.unescape(s, e)?,
            other => {
                return Err(p.lx.err(
                    at,
                    format!(
                        "expected an attribute (`key: value,`) or `}}` in node `{name}`, found {}",
                        describe(&other)
                    ),
                ))
            }
        };
        if let Some(first) = given.get(&key) {
            let first = p.loc(*first);
            return Err(p.lx.err(
                at,
                format!(
                    "attribute `{key}` of node `{name}` is given twice (first at line {}, column {}); keep one",
                    first.line, first.column
                ),
            ));
        }
        given.insert(key.clone(), at);
        p.expect(Tok::Colon, || format!("after attribute `{key}`"))?;
        let (tv, at_v) = p.next()?;
        let value = match tv {
            Tok::Int(i) => Value::Int(i),
            Tok::Float(f, _) => Value::Float(f),
            Tok::Str(s, e) => Value::Str(p.lx.unescape(s, e)?),
            other => {
                return Err(p.lx.err(
                    at_v,
                    format!(
                        "expected a number or a string as the value of `{key}`, found {}",
                        describe(&other)
                    ),
                ))
            }
        };
        // A comma ends an attribute; after the last one it may be left out.
        let (tc, at_c) = p.next()?;
        let last = match tc {
            Tok::Comma => false,
            Tok::RBrace => true,
            _ => {
                return Err(p.lx.err(
                    at_c,
                    format!(
                        "expected `,` or `}}` after the value of `{key}`, found {}",
                        describe(&tc)
                    ),
                ))
            }
        };
        let bad = |what: &str| {
            p.lx.err(
                at_v,
                format!("attribute `{key}` of node `{name}` must be {what}"),
            )
        };
        match key.as_str() {
            "kind" => match value {
                Value::Str(s) => {
                    node.kind = s;
                    places.kind = Some(at_v);
                }
                _ => return Err(bad("a string such as \"osc\"")),
            },
            "in" | "out" => {
                let v = value
                    .as_f64()
                    .filter(|v| *v >= 0.0 && v.fract() == 0.0)
                    .ok_or_else(|| bad("a whole number of ports"))?;
                if v > MAX_PORTS as f64 {
                    // The number as written (a double would round a long one).
                    let written = match tv {
                        Tok::Float(_, text) => text.to_string(),
                        _ => value.as_str().into_owned(),
                    };
                    return Err(bad(&format!("at most {MAX_PORTS} ports, not {written}")));
                }
                let n = v as usize;
                if key == "in" {
                    node.declared_inputs = Some(n);
                } else {
                    node.declared_outputs = Some(n);
                }
            }
            "wcet" => {
                let c = value
                    .as_f64()
                    .filter(|&v| crate::is_cost(v))
                    .ok_or_else(|| bad("a number from 0 to 1e12 (microseconds)"))?;
                node.cost = c;
                node.cost_declared = true;
                node.cost_in_us = true;
            }
            _ => {
                node.attrs.push((key.to_string(), value));
                places.attrs.push(at);
            }
        }
        if last {
            return Ok(node);
        }
    }
}
