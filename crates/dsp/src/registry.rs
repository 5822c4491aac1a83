//! The registry: kind names to constructors.

use crate::kinds;
use crate::kinds::doc::KindDoc;
use crate::{DspNode, NodeContext, NodeError};

/// Builds the control-side node of one kind from a graph node (see [`NodeContext`]).
pub type Constructor = fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError>;

/// Maps kind names to [`Constructor`]s, and to what each kind reads ([`KindDoc`]) when it
/// is known. A program adds its own kinds with [`Registry::register`] (see the engine's
/// `custom_kind` example); nothing in fugue needs editing.
///
/// ```
/// let reg = fugue_dsp::Registry::with_builtin_kinds();
/// assert!(reg.get("osc").is_some());
/// assert!(reg.names().contains(&"biquad"));
/// assert!(reg.doc("osc").unwrap().reads("freq"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Registry {
    kinds: Vec<(&'static str, Constructor, Option<KindDoc>)>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry that knows every kind of [`kinds::BUILTIN`].
    pub fn with_builtin_kinds() -> Self {
        let mut r = Registry::new();
        for &(name, c) in kinds::BUILTIN {
            r.insert(name, c, kinds::doc::builtin_doc(name).copied());
        }
        r
    }

    /// Adds (or replaces) the kind `name`, with no description of its attributes.
    pub fn register(&mut self, name: &'static str, constructor: Constructor) {
        self.insert(name, constructor, None);
    }

    /// Adds (or replaces) the kind `doc.name`, described by `doc`: `fugue kinds`-style
    /// listings show it, and an attribute it does not list can be reported as unread.
    pub fn register_documented(&mut self, constructor: Constructor, doc: KindDoc) {
        self.insert(doc.name, constructor, Some(doc));
    }

    fn insert(&mut self, name: &'static str, constructor: Constructor, doc: Option<KindDoc>) {
        match self.kinds.iter_mut().find(|(n, _, _)| *n == name) {
            Some(slot) => *slot = (name, constructor, doc),
            None => self.kinds.push((name, constructor, doc)),
        }
    }

    /// The constructor of `kind`.
    pub fn get(&self, kind: &str) -> Option<Constructor> {
        self.kinds
            .iter()
            .find(|(n, _, _)| *n == kind)
            .map(|&(_, c, _)| c)
    }

    /// What `kind` reads, when it was registered with a description.
    pub fn doc(&self, kind: &str) -> Option<&KindDoc> {
        self.kinds
            .iter()
            .find(|(n, _, _)| *n == kind)
            .and_then(|(_, _, d)| d.as_ref())
    }

    /// The known kind names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.kinds.iter().map(|&(n, _, _)| n).collect();
        v.sort_unstable();
        v
    }

    /// Builds the node of `ctx`. An unknown kind is [`NodeError::UnknownKind`] (listing the
    /// known kinds), unless `placeholder`: then the node becomes a
    /// [`kinds::placeholder`] that outputs silence, and the second value is `true` so that
    /// the caller can warn.
    pub fn build(
        &self,
        ctx: &NodeContext<'_>,
        placeholder: bool,
    ) -> Result<(Box<dyn DspNode>, bool), NodeError> {
        match self.get(ctx.kind()) {
            Some(c) => Ok((c(ctx)?, false)),
            None if placeholder => Ok((kinds::placeholder::build(ctx)?, true)),
            None => Err(NodeError::UnknownKind {
                node: ctx.name().to_string(),
                kind: ctx.kind().to_string(),
                known: self.names().join(", "),
            }),
        }
    }
}
