//! fugue-dsp: the audio processors of fugue.
//!
//! Every node of a [`TaskGraph`](fugue_graph::TaskGraph) is split in two:
//!
//! - a **control-side node** ([`DspNode`]), built on the control thread from the graph node's
//!   kind and attributes by a [`Constructor`] found in the [`Registry`]. Building it may
//!   allocate and may fail with a typed [`NodeError`] that names the node and the attribute.
//!   It tells the compiler how many buffers the node reads and writes, whether it changes the
//!   sample rate ([`DspNode::rate_ratio`]), and whether it is an engine input or output
//!   ([`Io`]);
//! - a **processor** ([`Processor`]) made by [`DspNode::processor`]. Its
//!   [`Processor::process`] fills every output buffer from its input buffers once per cycle
//!   and never allocates, locks or blocks; all its memory is sized when it is made.
//!
//! Constructors receive a [`NodeContext`]: the node (name, kind, attributes, port counts),
//! the sample rate and block size **at that node**, which differ from the engine's downstream
//! of a `resampler`, and the folder of the graph's file, against which a file that a node
//! names is found ([`NodeContext::resolve`]).
//!
//! # Conventions shared by the kinds
//!
//! - Attributes are read by name; numbers may be written as strings (`freq: "440"`). A
//!   required attribute that is missing or not a number is an error naming node and attribute.
//! - Every kind scales its output by `volume` (default 1.0).
//! - A kind that processes one signal (`mod`, `gain`, `biquad`, `delay`, `resampler`, `load`,
//!   ...) takes as its input the **sum of its input ports** (port order; usually there is one),
//!   and writes its result to **every output port** (a graph may fan one output port out to
//!   several consumers, or declare several output ports: both work). An input port that no
//!   edge feeds reads silence; several edges into one port are summed before `process` by the
//!   plan, in edge declaration order.
//! - Generators (`osc`, `noise`, `karplus` without input) take no input port.
//!
//! The kinds, one module each, are listed in [`kinds`] (and, as data, in
//! [`kinds::doc::BUILTIN_DOCS`], which `fugue kinds` and `docs/nodes.md` print);
//! [`Registry::with_builtin_kinds`] knows them all. A program adds its own kinds to a
//! registry with [`Registry::register`] or [`Registry::register_documented`] (a constructor
//! is a closure, which may hold state: a program compiled or a plugin loaded at run time) and
//! hands that registry to the engine (`fugue_engine::Engine::build`, `fugue_engine::render`,
//! the host; the engine's `custom_kind` and `runtime_kind` examples show it). A new built-in
//! kind is one module and one line in [`kinds::BUILTIN`] and in [`kinds::doc::BUILTIN_DOCS`].

pub mod attrs;
pub mod convert;
mod error;
pub mod fast;
pub mod foreign;
pub mod kinds;
pub mod memory;
mod node;
mod ratio;
mod registry;

pub use error::NodeError;
pub use node::{
    isolated, sum_inputs, DspNode, Failure, Io, NodeContext, Processor, SharedMemory,
    SharedOrigins, MAX_NODE_MEMORY, SUM_GROUP,
};
pub use ratio::Ratio;
pub use registry::{Constructor, LintNote, Linter, Registry};
