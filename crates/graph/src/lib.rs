//! fugue-graph: the task graph at the base of fugue.
//!
//! A [`TaskGraph`] has named nodes (a processor kind, attributes, input and output ports, a
//! computation cost) and edges from an output port to an input port (with a communication
//! cost). It is built through a [`GraphBuilder`], which validates it: unknown nodes, ports
//! out of range, duplicate names and cycles are typed [`GraphError`]s.
//!
//! The crate reads `.ag`, `.stg` and weighted `.dot` files ([`read`]), writes DOT and `.ag`
//! ([`write`](mod@write)), computes levels and critical paths ([`analysis`]) and generates graphs
//! ([`gen`]).
//!
//! ```
//! let g = fugue_graph::read::ag::parse(
//!     "a = { kind: \"osc\", freq: 440, };  b = { kind: \"sink\", };  a.1 -> b.1;",
//!     "inline.ag",
//! ).unwrap();
//! assert_eq!(g.len(), 2);
//! assert_eq!(g.edges().len(), 1);
//! assert_eq!(fugue_graph::analysis::depth(&g), 2);
//! ```

pub mod analysis;
pub mod error;
pub mod gen;
mod model;
mod places;
pub mod read;
pub mod suggest;
pub mod write;

pub use error::{Direction, GraphError, Location, ReadError};
pub use model::{
    is_cost, parse_number, BuildError, Edge, EdgeId, Feedback, GraphBuilder, Node, NodeId,
    TaskGraph, Value, DEFAULT_COST, FEEDBACK_READ, FEEDBACK_TASKS, FEEDBACK_WRITE, MAX_COST,
};
pub use places::{SourcePlaces, UnreadKey, MAX_UNREAD_KEYS};
pub use read::{read_file, Format};

/// The most attributes one node may have (a Faust program's parameters, an LV2 plugin's
/// controls, with the kind's own): more is refused when the node is added, so that what
/// looks attributes up by key stays cheap.
pub const MAX_NODE_ATTRS: usize = 4096;

/// The kind that the `.stg` reader gives every node, and the `.dot` reader a node without
/// `kind`: a task to schedule.
pub const TASK_KIND: &str = "task";

/// `value` as a short text for a message: as written for usual magnitudes, in exponent
/// notation beyond (`1e308`, not three hundred digits).
pub fn short_number(value: f64) -> String {
    let m = value.abs();
    if m != 0.0 && m.is_finite() && !(1e-6..1e15).contains(&m) {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}
