//! Errors of building a node.

use thiserror::Error;

/// Why a graph node could not be turned into a [`DspNode`](crate::DspNode).
///
/// Every variant names the node, and the attribute when one is at fault.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum NodeError {
    /// The node's kind is not in the registry.
    #[error("node `{node}` {}; known kinds: {known} (render, run, profile and host take --placeholder to play unknown kinds as silence)", unknown_kind(kind, nearest.as_deref()))]
    UnknownKind {
        /// The node.
        node: String,
        /// Its kind, as written (empty when the file gives none).
        kind: String,
        /// The known kinds, comma-separated.
        known: String,
        /// The known kind closest to it, when one is a likely misspelling.
        nearest: Option<String>,
    },
    /// A required attribute is absent.
    #[error("node `{node}` ({kind}) needs the attribute `{attr}` ({what})")]
    MissingAttr {
        /// The node.
        node: String,
        /// Its kind.
        kind: String,
        /// The attribute.
        attr: String,
        /// What it should be, e.g. "a frequency in Hz".
        what: String,
    },
    /// An attribute has a value of the wrong type or out of range.
    #[error("node `{node}` ({kind}): attribute `{attr}` = `{value}` {reason}")]
    BadAttr {
        /// The node.
        node: String,
        /// Its kind.
        kind: String,
        /// The attribute.
        attr: String,
        /// The value as written.
        value: String,
        /// What is wrong, e.g. "is not a number".
        reason: String,
    },
    /// The node's ports do not suit its kind (a generator with an input, a sink with none...).
    #[error("node `{node}` ({kind}) {reason}")]
    BadPorts {
        /// The node.
        node: String,
        /// Its kind.
        kind: String,
        /// What is wrong, e.g. "takes no input, but an edge feeds port 1".
        reason: String,
    },
}

/// What [`NodeError::UnknownKind`] says of the kind: a kind given and not known (with the
/// likely one), none (an `.ag` node without `kind`), or `task`, which the task-graph formats
/// give a node without one (DOT's default, every `.stg` node).
fn unknown_kind(kind: &str, nearest: Option<&str>) -> String {
    match (kind, nearest) {
        ("", _) => "gives no kind".to_string(),
        (fugue_graph::TASK_KIND, _) => {
            "gives no kind (`task`, a node of a task graph, which only schedules read: give it `kind`)"
                .to_string()
        }
        (k, Some(n)) => format!("has unknown kind `{k}` (did you mean `{n}`?)"),
        (k, None) => format!("has unknown kind `{k}`"),
    }
}
