//! The registry: kind names to constructors.
//!
//! A constructor is a shared closure, not a function pointer, so that it can carry state: a
//! kind compiled or loaded at run time (a Faust program, an LV2 plugin) registers a closure
//! that holds its factory, shared by every node of that kind. Kind names and descriptions are
//! owned ([`Cow`]), so that they can come from a file read at run time.

use std::borrow::Cow;
use std::sync::Arc;

use crate::kinds;
use crate::kinds::doc::KindDoc;
use crate::{DspNode, NodeContext, NodeError};

/// Builds the control-side node of one kind from a graph node (see [`NodeContext`]). Shared:
/// a [`Registry`] and its clones call the same closure, possibly from several threads.
pub type Constructor =
    Arc<dyn Fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> + Send + Sync>;

/// What a kind says of one of its nodes that still builds but looks like a mistake (a
/// Faust node's attribute that names none of its program's parameters), one [`LintNote`]
/// each: the warnings that every front end that loads a graph says. Control side.
pub type Linter = Arc<dyn Fn(&NodeContext<'_>) -> Vec<LintNote> + Send + Sync>;

/// One warning of a [`Linter`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintNote {
    /// The attribute it is about, when one (its place in the file is then the warning's).
    pub attr: Option<String>,
    /// The warning, in one sentence that names the node.
    pub text: String,
    /// Whether it matters only where cycles have a deadline (a plugin that may block): an
    /// offline render leaves it out.
    pub real_time: bool,
    /// Whether it says that the node does not read the attribute (a name that is none of a
    /// program's parameters or a plugin's controls): `fugue check` counts it as an error,
    /// as it does an attribute a built-in kind does not read.
    pub unread: bool,
}

impl LintNote {
    /// A warning about the node's attribute `attr`.
    pub fn attr(attr: &str, text: String) -> LintNote {
        LintNote {
            attr: Some(attr.to_string()),
            text,
            real_time: false,
            unread: false,
        }
    }

    /// A warning that the node does not read its attribute `attr` (see
    /// [`LintNote::unread`]).
    pub fn unread(attr: &str, text: String) -> LintNote {
        LintNote {
            unread: true,
            ..LintNote::attr(attr, text)
        }
    }

    /// A warning about the node as a whole.
    pub fn node(text: String) -> LintNote {
        LintNote {
            attr: None,
            text,
            real_time: false,
            unread: false,
        }
    }

    /// A warning about the node that matters only in real time (see
    /// [`LintNote::real_time`]).
    pub fn real_time(text: String) -> LintNote {
        LintNote {
            attr: None,
            text,
            real_time: true,
            unread: false,
        }
    }
}

/// One registered kind.
#[derive(Clone)]
struct Kind {
    name: Cow<'static, str>,
    constructor: Constructor,
    doc: Option<KindDoc>,
    linter: Option<Linter>,
}

/// Maps kind names to [`Constructor`]s, and to what each kind reads ([`KindDoc`]) when it
/// is known. A program adds its own kinds with [`Registry::register`] (see the engine's
/// `custom_kind` and `runtime_kind` examples); nothing in fugue needs editing. Cloning a
/// registry shares its constructors.
///
/// ```
/// let reg = fugue_dsp::Registry::with_builtin_kinds();
/// assert!(reg.get("osc").is_some());
/// assert!(reg.names().contains(&"biquad"));
/// assert!(reg.doc("osc").unwrap().reads("freq"));
/// ```
///
/// A kind whose constructor carries state (here a gain chosen at run time):
///
/// ```
/// use fugue_dsp::{kinds, Registry};
///
/// let mut reg = Registry::new();
/// let gain = String::from("gain");
/// reg.register(format!("my-{gain}"), move |ctx| {
///     // Any state the closure owns is reachable here.
///     assert!(!gain.is_empty());
///     kinds::gain::build(ctx)
/// });
/// assert_eq!(reg.names(), ["my-gain"]);
/// ```
#[derive(Clone, Default)]
pub struct Registry {
    kinds: Vec<Kind>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("kinds", &self.names())
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry that knows every kind of [`kinds::BUILTIN`], each with its description.
    pub fn with_builtin_kinds() -> Self {
        let mut r = Registry::new();
        for &(name, build) in kinds::BUILTIN {
            r.insert(
                Cow::Borrowed(name),
                Arc::new(build),
                kinds::doc::builtin_doc(name).cloned(),
            );
        }
        r
    }

    /// Adds (or replaces) the kind `name`, with no description of its attributes.
    pub fn register<F>(&mut self, name: impl Into<Cow<'static, str>>, constructor: F)
    where
        F: Fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> + Send + Sync + 'static,
    {
        self.insert(name.into(), Arc::new(constructor), None);
    }

    /// Adds (or replaces) the kind `doc.name`, described by `doc`: `fugue kinds`-style
    /// listings show it, and an attribute it does not list can be reported as unread.
    pub fn register_documented<F>(&mut self, constructor: F, doc: KindDoc)
    where
        F: Fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> + Send + Sync + 'static,
    {
        self.insert(doc.name.clone(), Arc::new(constructor), Some(doc));
    }

    /// Adds (or replaces) the kind `name` with a constructor that is already shared (several
    /// registries, or several names, calling the same closure), and its description if any.
    pub fn register_shared(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        constructor: Constructor,
        doc: Option<KindDoc>,
    ) {
        self.insert(name.into(), constructor, doc);
    }

    fn insert(&mut self, name: Cow<'static, str>, constructor: Constructor, doc: Option<KindDoc>) {
        let kind = Kind {
            name,
            constructor,
            doc,
            linter: None,
        };
        match self.kinds.iter_mut().find(|k| k.name == kind.name) {
            Some(slot) => *slot = kind,
            None => self.kinds.push(kind),
        }
    }

    fn find(&self, kind: &str) -> Option<&Kind> {
        self.kinds.iter().find(|k| k.name == kind)
    }

    /// Gives the registered kind `kind` a [`Linter`] (replacing any it had); nothing when
    /// `kind` is not registered.
    pub fn set_linter<F>(&mut self, kind: &str, linter: F)
    where
        F: Fn(&NodeContext<'_>) -> Vec<LintNote> + Send + Sync + 'static,
    {
        if let Some(k) = self.kinds.iter_mut().find(|k| k.name == kind) {
            k.linter = Some(Arc::new(linter));
        }
    }

    /// The [`Linter`] of `kind`, if it has one.
    pub fn linter(&self, kind: &str) -> Option<&Linter> {
        self.find(kind).and_then(|k| k.linter.as_ref())
    }

    /// The constructor of `kind`.
    pub fn get(&self, kind: &str) -> Option<&Constructor> {
        self.find(kind).map(|k| &k.constructor)
    }

    /// Whether `kind` is registered.
    pub fn contains(&self, kind: &str) -> bool {
        self.find(kind).is_some()
    }

    /// What `kind` reads, when it was registered with a description.
    pub fn doc(&self, kind: &str) -> Option<&KindDoc> {
        self.find(kind).and_then(|k| k.doc.as_ref())
    }

    /// The known kind names, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.kinds.iter().map(|k| k.name.as_ref()).collect();
        v.sort_unstable();
        v
    }

    /// The descriptions of the kinds that have one, in name order.
    pub fn docs(&self) -> Vec<&KindDoc> {
        self.names()
            .into_iter()
            .filter_map(|n| self.doc(n))
            .collect()
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
                nearest: fugue_graph::suggest::nearest(ctx.kind(), self.names())
                    .map(str::to_string),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_registered_again_replaces_the_first() {
        let mut reg = Registry::with_builtin_kinds();
        let before = reg.names().len();
        reg.register(String::from("osc"), crate::kinds::gain::build);
        assert_eq!(reg.names().len(), before);
        assert!(reg.doc("osc").is_none(), "the new osc has no description");
    }

    #[test]
    fn clones_share_their_constructors() {
        let mut reg = Registry::new();
        reg.register("g", crate::kinds::gain::build);
        let copy = reg.clone();
        assert!(Arc::ptr_eq(reg.get("g").unwrap(), copy.get("g").unwrap()));
    }
}
