//! Where a graph read from a file writes each node, its kind and its attributes, so that a
//! message about a node (an unknown kind, an attribute its kind does not read) can name the
//! line and column.

use crate::error::Location;
use crate::model::NodeId;

/// The places of a graph's declarations in the file it was read from (`.ag` files record
/// them; other formats and graphs made in memory have none). Indexed like the graph's nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourcePlaces {
    nodes: Vec<NodePlace>,
    attrs: Vec<Location>,
    unread: Vec<UnreadKey>,
    unread_more: usize,
}

/// An attribute the reader left out that neither fugue nor Graphviz reads (DOT: of an edge,
/// the edge defaults or the graph, or of a node of a task graph that is close to a key fugue
/// reads): a misspelling, most often (`headlable`, `Wieght`), which would otherwise change
/// the graph without a word.
#[derive(Clone, Debug, PartialEq)]
pub struct UnreadKey {
    /// Where its key is written.
    pub at: Location,
    /// What gives it, in words: "an edge `a` -> `b`", "the edge defaults", "the graph", "node `a`".
    pub of: String,
    /// The key.
    pub key: String,
    /// The key fugue reads there that it is closest to, when it is a likely misspelling.
    pub nearest: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct NodePlace {
    /// The node's name in its declaration.
    decl: Location,
    /// The value of its `kind` attribute.
    kind: Option<Location>,
    /// Its attributes' keys, as `attrs[start..start + len]`, in the order of `Node::attrs`.
    attrs: (usize, usize),
}

impl SourcePlaces {
    /// Where node `id` is declared (its name).
    pub fn node(&self, id: NodeId) -> Option<Location> {
        self.nodes.get(id).map(|n| n.decl)
    }

    /// Where node `id` gives its kind (the value), or else where it is declared.
    pub fn kind(&self, id: NodeId) -> Option<Location> {
        self.nodes.get(id).map(|n| n.kind.unwrap_or(n.decl))
    }

    /// Where node `id` gives its `index`-th attribute of [`Node::attrs`](crate::Node::attrs)
    /// (the key), or else where it is declared.
    pub fn attr(&self, id: NodeId, index: usize) -> Option<Location> {
        let n = self.nodes.get(id)?;
        let (start, len) = n.attrs;
        Some(if index < len {
            self.attrs[start + index]
        } else {
            n.decl
        })
    }

    /// The attributes left out that neither fugue nor Graphviz reads, in file order (at most
    /// [`MAX_UNREAD_KEYS`]), and how many more there are.
    pub fn unread(&self) -> (&[UnreadKey], usize) {
        (&self.unread, self.unread_more)
    }

    /// Sets the attributes left out that neither fugue nor Graphviz reads: those named (at
    /// most [`MAX_UNREAD_KEYS`], the reader's cut) and how many more.
    pub(crate) fn set_unread(&mut self, keys: Vec<UnreadKey>, more: usize) {
        debug_assert!(keys.len() <= MAX_UNREAD_KEYS);
        self.unread = keys;
        self.unread_more = more;
    }

    /// Adds the next node's places.
    pub(crate) fn push(
        &mut self,
        decl: Location,
        kind: Option<Location>,
        attrs: impl IntoIterator<Item = Location>,
    ) {
        let start = self.attrs.len();
        self.attrs.extend(attrs);
        self.nodes.push(NodePlace {
            decl,
            kind,
            attrs: (start, self.attrs.len() - start),
        });
    }
}

/// Turns byte offsets of a text, given in increasing order, into locations in one pass.
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    at: Location,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            at: Location { line: 1, column: 1 },
        }
    }

    /// The location of byte offset `pos` (not before the previous one asked).
    pub(crate) fn at(&mut self, pos: usize) -> Location {
        let pos = pos.min(self.text.len());
        if pos < self.pos {
            return crate::read::location_of(self.text, pos);
        }
        if let Some(between) = self.text.get(self.pos..pos) {
            for c in between.chars() {
                if c == '\n' {
                    self.at.line += 1;
                    self.at.column = 1;
                } else {
                    self.at.column += 1;
                }
            }
            self.pos = pos;
            self.at
        } else {
            crate::read::location_of(self.text, pos)
        }
    }
}

/// The most attributes left out unread that a graph's places name one by one
/// ([`SourcePlaces::unread`]): the others are counted.
pub const MAX_UNREAD_KEYS: usize = 32;
