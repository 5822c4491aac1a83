//! The registry: kind names to constructors.

use crate::kinds;
use crate::{DspNode, NodeContext, NodeError};

/// Builds the control-side node of one kind from a graph node (see [`NodeContext`]).
pub type Constructor = fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError>;

/// Maps kind names to [`Constructor`]s.
///
/// ```
/// let reg = fugue_dsp::Registry::with_builtin_kinds();
/// assert!(reg.get("osc").is_some());
/// assert!(reg.names().contains(&"biquad"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Registry {
    kinds: Vec<(&'static str, Constructor)>,
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
            r.register(name, c);
        }
        r
    }

    /// Adds (or replaces) the kind `name`.
    pub fn register(&mut self, name: &'static str, constructor: Constructor) {
        match self.kinds.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = constructor,
            None => self.kinds.push((name, constructor)),
        }
    }

    /// The constructor of `kind`.
    pub fn get(&self, kind: &str) -> Option<Constructor> {
        self.kinds.iter().find(|(n, _)| *n == kind).map(|&(_, c)| c)
    }

    /// The known kind names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.kinds.iter().map(|&(n, _)| n).collect();
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
