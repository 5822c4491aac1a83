//! Checking a graph against the node kinds of a registry before anything runs it: every kind
//! known, every attribute read by its kind, every node constructible with its attributes and
//! ports. Each [`Problem`] names the node and, for a graph read from an `.ag` file, the line
//! and column, with the nearest valid name when the mistake looks like a misspelling.
//!
//! Task graphs (`.stg`, `.dot`, or `.ag` files whose nodes give no kind or `task`) are
//! scheduled, not rendered: their nodes are not checked against kinds.

use std::fmt;

use fugue_dsp::{DspNode, Io, NodeContext, NodeError, Ratio, Registry};
use fugue_graph::{suggest, Location, NodeId, TaskGraph};

use crate::lint::{self, Warning};

/// How serious a [`Problem`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The graph cannot be rendered or run as written.
    Error,
    /// It runs, but something looks like a mistake.
    Warning,
}

/// What a [`Problem`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// A kind that the registry does not know, or none given: rendering refuses it.
    Kind,
    /// An attribute that the node's kind does not read: rendering ignores it (and warns).
    UnreadAttribute,
    /// A node that its kind refuses to build (a bad or missing attribute value, ports the kind
    /// does not have): rendering refuses it.
    Node,
    /// A node that reaches no sink.
    Unheard,
    /// An audio graph with no sink: nothing of it is heard, and rendering refuses it.
    NoSink,
    /// What a node's kind says of it ([`fugue_dsp::Linter`]: an attribute that names none of
    /// a Faust program's parameters or an LV2 plugin's controls, a part of the node that
    /// will not play).
    OfKind,
}

/// One thing wrong with a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// What it is about.
    pub what: What,
    /// Where, in the file the graph was read from (`None`: the graph records no places).
    pub place: Option<Location>,
    /// What, in one sentence that names the node.
    pub message: String,
    /// How many things it says: 1, or the nodes a count stands for (`N more nodes reach no
    /// sink`).
    pub count: usize,
}

impl Problem {
    /// The problem as said to a user: `FILE:LINE:COLUMN: message`, or `FILE: message`.
    pub fn line(&self, file: &str) -> String {
        match self.place {
            Some(at) => format!("{file}:{at}: {}", self.message),
            None => format!("{file}: {}", self.message),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub use fugue_graph::TASK_KIND;

/// Whether some node of `graph` gives a kind other than [`TASK_KIND`]: a graph to render, not
/// only to schedule.
pub fn has_kinds(graph: &TaskGraph) -> bool {
    // A feedback edge's two nodes have the plan compiler's own kinds: a task graph with a
    // feedback edge is still a task graph.
    (0..graph.len()).any(|v| {
        let n = graph.node(v);
        !n.kind.is_empty() && n.kind != TASK_KIND && !graph.is_feedback_node(v)
    })
}

/// The sample rate and block at which nodes are built to check them.
const CHECK_RATE: f64 = 48_000.0;
const CHECK_BLOCK: usize = 512;

/// Every problem of `graph` against the kinds of `registry`, errors first, each group in file
/// order: unknown or missing kinds, attributes that a node's kind does not read, nodes that
/// their kind refuses to build (a bad or missing attribute value, ports the kind does not
/// have), and the warnings of [`lint::lint`] (nodes that reach no sink, what a node's kind
/// says of it).
pub fn check(graph: &TaskGraph, registry: &Registry) -> Vec<Problem> {
    check_at(graph, registry, CHECK_RATE)
}

/// [`check`], the nodes built at `rate` Hz (a range that depends on the rate, a filter's
/// frequency below half of it, is checked at the rate the graph will run at).
pub fn check_at(graph: &TaskGraph, registry: &Registry, rate: f64) -> Vec<Problem> {
    check_with(graph, registry, rate, CHECK_BLOCK)
}

/// [`check_at`], at an engine of `rate` Hz and `block` frames per cycle. Each node is built
/// at its own rate and block, as the plan compiler works them out: the engine's, times the
/// ratios of the resamplers on the way to it. So a filter after a resampler that doubles the
/// rate may go up to the doubled rate's half, and what the compiler refuses about rates (a
/// node whose inputs come at different rates, a block that is not a whole number of frames
/// at a node, a rate beyond [`fugue_exec::MAX_RATE_FACTOR`] times the engine's, a feedback
/// edge that leaves a node at another rate than the graph's) is an error here too.
pub fn check_with(graph: &TaskGraph, registry: &Registry, rate: f64, block: usize) -> Vec<Problem> {
    let mut out = Vec::new();
    if has_kinds(graph) {
        // Each node's output rate against the engine's, in topological order.
        let mut out_rate = vec![Some(Ratio::ONE); graph.len()];
        let mut memory = NodeMemory::default();
        for &id in graph.topo_order() {
            out_rate[id] = check_rated(
                graph,
                registry,
                id,
                &out_rate,
                (rate, block),
                &mut memory,
                &mut out,
            );
        }
        // What the nodes' processors hold, summed as the plan compiler sums it (each counted
        // twice: the node's prototype and its processor), against the limit it applies: a
        // graph that check passes is not refused by render for it.
        // Refused for memory at node `id` with `e`.
        let too_large = |id: NodeId, e: fugue_exec::CompileError| Problem {
            severity: Severity::Error,
            what: What::Node,
            place: graph.places().and_then(|p| p.node(id)),
            message: e.to_string(),
            count: 1,
        };
        if let Some((id, needed)) = memory.over {
            out.push(too_large(
                id,
                fugue_exec::CompileError::nodes_too_large(
                    needed,
                    fugue_exec::MEMORY_LIMIT,
                    block,
                    &graph.node(id).name,
                ),
            ));
        } else if let Some((id, needed, b)) = memory.buffers_over() {
            // Then, as the compiler lays them out after building every node, the audio
            // buffers of the ports on top of the nodes' memory.
            let ports = b.bytes;
            out.push(too_large(
                id,
                fugue_exec::CompileError::TooLarge {
                    nodes: false,
                    needed,
                    limit: fugue_exec::MEMORY_LIMIT,
                    block,
                    what: format!(
                        "audio buffers of the nodes' ports, the limit passed at node `{}`, whose {} {} take {}",
                        graph.node(id).name,
                        b.count,
                        if b.engine {
                            "engine channel(s)"
                        } else {
                            "output port(s)"
                        },
                        fugue_exec::size_in_words(ports)
                    ),
                    node: Some(graph.node(id).name.clone()),
                },
            ));
        }
        // The samples the nodes' input ports read per cycle, as the compiler counts them.
        if let Some((id, reads, b)) = memory.reads_over() {
            out.push(too_large(
                id,
                fugue_exec::CompileError::TooManyReads {
                    reads,
                    limit: fugue_exec::MAX_READ_SAMPLES,
                    block,
                    node: graph.node(id).name.clone(),
                    inputs: b.inputs,
                    unconnected: b.unconnected,
                    node_reads: b.reads,
                },
            ));
        }
    }
    for w in lint::lint(graph, registry, rate) {
        // Unread attributes of the built-in kinds were said above, as errors with their
        // place; those of a program's or a plugin's node are errors too.
        let (what, severity) = match &w {
            Warning::Unheard { .. } | Warning::UnheardMore { .. } => {
                (What::Unheard, Severity::Warning)
            }
            Warning::NoSink | Warning::Empty => (What::NoSink, Severity::Warning),
            Warning::OfKind { unread: true, .. }
            | Warning::UnreadKey { .. }
            | Warning::UnreadKeysMore { .. } => (What::UnreadAttribute, Severity::Error),
            Warning::OfKind { .. } => (What::OfKind, Severity::Warning),
            _ => continue,
        };
        out.push(Problem {
            severity,
            what,
            place: lint::place(graph, &w),
            count: match &w {
                Warning::UnheardMore { more } | Warning::UnreadKeysMore { more } => *more,
                _ => 1,
            },
            message: w.to_string(),
        });
    }
    // By severity, then place; within a severity what has no place (a count) comes last.
    out.sort_by_key(|p| (p.severity, p.place.is_none(), p.place));
    out
}

/// Values a refused attribute is replaced with, in turn, when the node cannot be built
/// without it ([`more_bad_values`]): plain ones that most ranges hold.
const STAND_INS: [fugue_graph::Value; 5] = [
    fugue_graph::Value::Float(1.0),
    fugue_graph::Value::Float(0.5),
    fugue_graph::Value::Int(1),
    fugue_graph::Value::Float(0.0),
    fugue_graph::Value::Float(100.0),
];

/// The node's other values that its kind refuses, after `first` ([`NodeError::BadAttr`]):
/// the node built again with each refused attribute left out (its default in its place) or,
/// where the kind needs it, replaced with one of [`STAND_INS`], until it builds or fails for
/// another reason; so `fugue check` says every bad value of a node at once, not one per run.
/// Only for kinds with a closed set of attributes (the built-in ones, cheap to build). A value
/// refused against an attribute that was replaced (`must be at least `time``) is not said
/// (it may be right beside the value the user will write there), and is replaced in turn.
fn more_bad_values(
    registry: &Registry,
    ctx: &NodeContext<'_>,
    first: &NodeError,
) -> Vec<NodeError> {
    let NodeError::BadAttr { attr, .. } = first else {
        return Vec::new();
    };
    if registry.doc(ctx.kind()).is_none_or(|d| d.others.is_some()) {
        return Vec::new();
    }
    let mut node = ctx.node.clone();
    let mut refused = vec![attr.clone()];
    let mut more = Vec::new();
    // Each pass takes one attribute out of the refused ones' way, so this ends within the
    // node's attribute count.
    for _ in 0..ctx.node.attrs.len() {
        let name = refused.last().expect("one at least").clone();
        let Some(at) = node.attrs.iter().position(|(a, _)| *a == name) else {
            break;
        };
        node.attrs.remove(at);
        let tried =
            std::iter::once(None)
                .chain(STAND_INS.iter().map(Some))
                .find_map(|value| {
                    let mut n = node.clone();
                    if let Some(v) = value {
                        n.attrs.insert(at, (name.clone(), v.clone()));
                    }
                    match registry.build(&NodeContext { node: &n, ..*ctx }, false) {
                        Err(
                            NodeError::MissingAttr { attr, .. } | NodeError::BadAttr { attr, .. },
                        ) if attr == name => None,
                        r => Some((n, r.err())),
                    }
                });
        let Some((n, Some(e))) = tried else {
            break;
        };
        node = n;
        let NodeError::BadAttr { attr, reason, .. } = &e else {
            break;
        };
        let against_replaced = refused.iter().any(|r| reason.contains(&format!("`{r}`")));
        refused.push(attr.clone());
        if !against_replaced {
            more.push(e);
        }
    }
    more
}

/// The memory of the nodes built so far (bytes, counted twice as the plan compiler counts
/// it), and the node at which it first passed [`fugue_exec::MEMORY_LIMIT`], with the sum
/// there; and each node's audio buffers ([`port_bytes`]).
#[derive(Default)]
struct NodeMemory {
    sum: usize,
    over: Option<(NodeId, usize)>,
    /// The origins of the shared memory counted ([`fugue_dsp::DspNode::shared_memory`]),
    /// kept while the nodes are counted (the nodes built are dropped one by one).
    shared: fugue_dsp::SharedOrigins,
    /// Per node built, in order ([`port_bytes`]).
    buffers: Vec<(NodeId, PortBytes)>,
}

/// A node's audio buffers ([`port_bytes`]).
#[derive(Clone, Copy)]
struct PortBytes {
    /// Its output ports, or a sink's or a source's engine channels.
    count: usize,
    /// Whether those are engine channels.
    engine: bool,
    /// Their buffers' bytes.
    bytes: usize,
    /// Those with its input sums' scratch buffers.
    all: usize,
    /// Its input ports, those that no edge feeds, and the samples they read per cycle (a
    /// block each, [`fugue_exec::MAX_READ_SAMPLES`]).
    inputs: usize,
    unconnected: usize,
    reads: usize,
}

impl NodeMemory {
    /// Adds node `id`'s `bytes` (its processor's, counted twice), and the memory it shares
    /// with the nodes of its origin when no node of that origin was counted yet.
    fn add(&mut self, id: NodeId, bytes: usize, shared: Option<fugue_dsp::SharedMemory>) {
        self.sum = self
            .sum
            .saturating_add(bytes.saturating_mul(2))
            .saturating_add(self.shared.add(shared));
        if self.over.is_none() && self.sum > fugue_exec::MEMORY_LIMIT {
            self.over = Some((id, self.sum));
        }
    }

    /// The node whose input ports' reads, added in order, first pass
    /// [`fugue_exec::MAX_READ_SAMPLES`]: with the sum there and its ports.
    fn reads_over(&self) -> Option<(NodeId, usize, PortBytes)> {
        let mut sum = 0usize;
        self.buffers.iter().find_map(|&(id, b)| {
            sum = sum.saturating_add(b.reads);
            (sum > fugue_exec::MAX_READ_SAMPLES).then_some((id, sum, b))
        })
    }

    /// The node whose audio buffers, added in order to every node's memory, first pass
    /// [`fugue_exec::MEMORY_LIMIT`]: with the sum there and its buffers.
    fn buffers_over(&self) -> Option<(NodeId, usize, PortBytes)> {
        let mut sum = self.sum;
        self.buffers.iter().find_map(|&(id, b)| {
            sum = sum.saturating_add(b.all);
            (sum > fugue_exec::MEMORY_LIMIT).then_some((id, sum, b))
        })
    }
}

/// The memory a node's processor holds: its own ([`fugue_dsp::DspNode::memory`]), and what
/// it holds with the nodes of its origin ([`fugue_dsp::DspNode::shared_memory`]).
type Held = (usize, Option<fugue_dsp::SharedMemory>);

/// The audio buffers the plan compiler lays out for node `id`, built as `built` in `ctx`:
/// its output ports at its output block (a sink's or a source's engine channels at the
/// engine's block instead), and a scratch buffer at its block for each input port that
/// several edges feed.
fn port_bytes(
    graph: &TaskGraph,
    id: NodeId,
    ctx: &NodeContext<'_>,
    built: &dyn DspNode,
) -> PortBytes {
    let buffers = |n: usize, frames: usize| fugue_exec::buffer_bytes(frames).saturating_mul(n);
    let (count, engine, bytes) = match built.io() {
        Io::Source { channels } | Io::Sink { channels } => {
            (channels, true, buffers(channels, ctx.engine_block))
        }
        Io::None => {
            let out_block = built.rate_ratio().scale(ctx.block).unwrap_or(ctx.block);
            (built.outputs(), false, buffers(built.outputs(), out_block))
        }
    };
    let of = |all, unconnected| PortBytes {
        count,
        engine,
        bytes,
        all,
        inputs: built.inputs(),
        unconnected,
        reads: built.inputs().saturating_mul(ctx.block),
    };
    if matches!(built.io(), Io::Source { .. }) {
        return PortBytes {
            inputs: 0,
            reads: 0,
            ..of(bytes, 0)
        };
    }
    let mut edges_into = vec![0usize; built.inputs()];
    for &e in graph.in_edges(id) {
        if let Some(k) = edges_into.get_mut(graph.edges()[e].dst_port) {
            *k += 1;
        }
    }
    let sums = edges_into.iter().filter(|&&k| k > 1).count();
    let unconnected = edges_into.iter().filter(|&&k| k == 0).count();
    of(bytes.saturating_add(buffers(sums, ctx.block)), unconnected)
}

/// Checks node `id` at the rate its inputs come at (`out_rate`: every earlier node's output
/// rate against the engine's, `None` where a rate was refused) in an engine of `rate` Hz and
/// `block` frames (`engine`), adds what it holds to `memory`, and returns its own output rate: its input rate times its ratio once built
/// (a resampler's), its input rate where it cannot be built (what follows is checked as if it
/// changed nothing), `None` where its rate is refused or comes from a refused one (what
/// follows is built at the rates known, and no rate of it is refused again).
fn check_rated(
    graph: &TaskGraph,
    registry: &Registry,
    id: NodeId,
    out_rate: &[Option<Ratio>],
    (rate, block): (f64, usize),
    memory: &mut NodeMemory,
    out: &mut Vec<Problem>,
) -> Option<Ratio> {
    use fugue_exec::CompileError;
    let node = graph.node(id);
    // A feedback edge's own nodes have no place in the file: the node the edge leaves has
    // (as `render` places the plan compiler's error).
    let placed = graph
        .feedback_edges()
        .iter()
        .find(|f| f.read == id || f.write == id)
        .map_or(id, |f| f.src);
    let place = graph.places().and_then(|p| p.node(placed));
    let refused = |e: CompileError| Problem {
        severity: Severity::Error,
        what: What::Node,
        place,
        message: e.to_string(),
        count: 1,
    };
    let inputs: Vec<Option<Ratio>> = graph
        .in_edges(id)
        .iter()
        .map(|&e| out_rate[graph.edges()[e].src])
        .collect();
    let known = inputs.iter().all(Option::is_some);
    let mut seen: Vec<Ratio> = inputs.into_iter().flatten().collect();
    let at = seen.first().copied().unwrap_or(Ratio::ONE);
    seen.sort_by(|a, b| a.as_f64().total_cmp(&b.as_f64()));
    seen.dedup();
    if known && seen.len() > 1 {
        // As the plan compiler says it (a feedback edge's, or inputs at different rates).
        out.push(refused(CompileError::rates_of(
            graph,
            id,
            &seen,
            |u| out_rate[u].unwrap_or(Ratio::ONE),
            rate,
        )));
        return None;
    }
    // A feedback edge's two nodes are the plan compiler's own (fugue_graph::Feedback), of no
    // kind of the registry: they pass the rate on.
    if graph.is_feedback_node(id) {
        // Each side holds the edge's block (32-bit samples), as the compiler counts it.
        if let Some(b) = at.scale(block).filter(|_| known) {
            memory.add(id, b.saturating_mul(4), None);
        }
        return known.then_some(at);
    }
    // After a refused rate or a node that could not be built upstream: the node's kind and
    // attributes are checked, not its values (what a value may be can depend on the rate,
    // which is not known), and no rate of it is refused (said upstream, not again).
    if !known {
        check_node(graph, registry, id, None, out);
        return None;
    }
    let too_high =
        |b: usize| at.as_f64() > fugue_exec::MAX_RATE_FACTOR as f64 || b > fugue_exec::MAX_BLOCK;
    let node_block = match at.scale(block) {
        Some(b) if !too_high(b) => b,
        Some(b) => {
            out.push(refused(CompileError::RateTooHigh {
                node: node.name.clone(),
                rate_hz: rate * at.as_f64(),
                factor: at.as_f64(),
                block: b,
            }));
            return None;
        }
        None => {
            out.push(refused(CompileError::BlockNotWhole {
                node: node.name.clone(),
                block,
                ratio: at.to_string(),
            }));
            return None;
        }
    };
    let ctx = node_context(graph, id, rate, block, at, node_block);
    let Some((ratio, (bytes, shared), ports)) = check_node(graph, registry, id, Some(&ctx), out)
    else {
        // Not built (said above): a resampler's rate follows its ratio where it can be read,
        // any other kind keeps the rate it was given.
        if node.kind != "resampler" {
            return Some(at);
        }
        return fugue_dsp::kinds::resampler::ratio_of(&ctx)
            .ok()
            .filter(|r| r.scale(node_block).is_some())
            .and_then(|r| at.checked_mul(r));
    };
    memory.add(id, bytes, shared);
    memory.buffers.push((id, ports));
    match (at.checked_mul(ratio), ratio.scale(node_block)) {
        (Some(next), Some(_)) => Some(next),
        _ => {
            out.push(refused(CompileError::BlockNotWhole {
                node: node.name.clone(),
                block: node_block,
                ratio: ratio.to_string(),
            }));
            None
        }
    }
}

/// The context node `id` is built in at `rate` Hz and `block` frames of the engine, its rate
/// `at` the engine's and its block `node_block`.
pub(crate) fn node_context(
    graph: &TaskGraph,
    id: NodeId,
    rate: f64,
    block: usize,
    at: Ratio,
    node_block: usize,
) -> NodeContext<'_> {
    NodeContext {
        sample_rate: rate * at.as_f64(),
        block: node_block,
        rate: at,
        ..NodeContext::of(graph, id, rate, block)
    }
}

/// Each node's rate against the engine's, and its block at an engine of `block` frames, as
/// the plan compiler works them out, without building the nodes: its inputs' rate (a
/// source's is the engine's), times the `ratio` of a `resampler` for what leaves it. `None`
/// where it is not known: inputs at different rates, a block that is not whole, a ratio that
/// cannot be read, or a node after one of these. For what is built at a node's own rate
/// outside a plan (a live `set`'s trial of the changed node, `info`'s details).
pub fn node_rates(graph: &TaskGraph, block: usize) -> Vec<Option<(Ratio, usize)>> {
    let mut at: Vec<Option<(Ratio, usize)>> = vec![None; graph.len()];
    let mut leaves: Vec<Option<Ratio>> = vec![None; graph.len()];
    for &v in graph.topo_order() {
        let mut rates = graph
            .in_edges(v)
            .iter()
            .map(|&e| leaves[graph.edges()[e].src]);
        let first = rates.next().unwrap_or(Some(Ratio::ONE));
        let rate = first.filter(|&r| rates.all(|x| x == Some(r)));
        at[v] = rate.and_then(|r| Some((r, r.scale(block)?)));
        leaves[v] = at[v].and_then(|(r, b)| {
            if graph.node(v).kind != "resampler" || graph.is_feedback_node(v) {
                return Some(r);
            }
            let ctx = node_context(graph, v, CHECK_RATE, block, r, b);
            let ratio = fugue_dsp::kinds::resampler::ratio_of(&ctx).ok()?;
            ratio.scale(b)?;
            r.checked_mul(ratio)
        });
    }
    at
}

/// What each node of `graph` that its kind can build says of itself beyond its kind and
/// ports ([`fugue_dsp::DspNode::describe`]: an LV2 plugin's name, controls and control
/// outputs), by node name, in node order; nodes with nothing to say, and nodes that cannot
/// be built (which [`check_with`] reports), are left out. Builds every node at its own rate
/// and block ([`node_rates`]) in an engine of `rate` Hz and `block` frames (its controls'
/// ranges may follow the rate); a node whose rate is not known, at the engine's. Control
/// side.
pub fn details(
    graph: &TaskGraph,
    registry: &Registry,
    rate: f64,
    block: usize,
) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let rates = node_rates(graph, block);
    for (id, known) in rates.iter().enumerate() {
        let node = graph.node(id);
        if !registry.contains(&node.kind) {
            continue;
        }
        let (at, node_block) = known.unwrap_or((Ratio::ONE, block));
        let ctx = node_context(graph, id, rate, block, at, node_block);
        if let Ok(built) = registry.build(&ctx, false) {
            let lines = built.0.describe();
            if !lines.is_empty() {
                out.push((node.name.clone(), lines));
            }
        }
    }
    out
}

/// Where the file `graph` was read from writes what `e` is about: the attribute at fault, the
/// kind of a node of unknown kind, else the node; `None` when the graph records no places.
pub fn place_of(graph: &TaskGraph, e: &NodeError) -> Option<Location> {
    let (node, attr) = match e {
        NodeError::BadAttr { node, attr, .. } | NodeError::MissingAttr { node, attr, .. } => {
            (node, Some(attr))
        }
        NodeError::UnknownKind { node, .. } | NodeError::BadPorts { node, .. } => (node, None),
    };
    if matches!(e, NodeError::UnknownKind { .. }) {
        let (places, id) = (graph.places()?, graph.find(node)?);
        return places.kind(id).or_else(|| places.node(id));
    }
    lint::node_place(graph, node, attr.map(String::as_str))
}

/// Where the file `graph` was read from writes the node behind error `e` (of a render or a
/// run), when a node could not be built ([`node_error_of`], [`place_of`]).
pub fn error_place(graph: &TaskGraph, e: &(dyn std::error::Error + 'static)) -> Option<Location> {
    if let Some(n) = node_error_of(e) {
        return place_of(graph, n);
    }
    // A plan's error about one node (its ports, its rates): where the node is declared.
    let name = compile_error_of(e)?.node()?;
    graph.places()?.node(graph.find(name)?)
}

/// [`error_place`] as a message writes it after the file's name: `:LINE:COLUMN`, or nothing
/// when the file records no place for `e`.
pub fn error_at(graph: &TaskGraph, e: &(dyn std::error::Error + 'static)) -> String {
    error_place(graph, e)
        .map(|l| format!(":{l}"))
        .unwrap_or_default()
}

/// The plan compiler's error behind `e`, when the plan could not be compiled.
fn compile_error_of<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a fugue_exec::CompileError> {
    use crate::{BuildError, RenderError, RunError};
    if let Some(c) = e.downcast_ref::<fugue_exec::CompileError>() {
        return Some(c);
    }
    let build = if let Some(b) = e.downcast_ref::<BuildError>() {
        b
    } else if let Some(RenderError::Build(b)) = e.downcast_ref::<RenderError>() {
        b
    } else if let Some(RunError::Build(b)) = e.downcast_ref::<RunError>() {
        b
    } else {
        return None;
    };
    match build {
        BuildError::Compile(c) => Some(c),
        _ => None,
    }
}

/// The node error behind `e`, when a node of the graph could not be built: what
/// [`place_of`] places in the file.
pub fn node_error_of<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a NodeError> {
    if let Some(n) = e.downcast_ref::<NodeError>() {
        return Some(n);
    }
    match compile_error_of(e)? {
        fugue_exec::CompileError::Node(n) => Some(n),
        _ => None,
    }
}

/// The problems of node `id`: its kind and attributes, and, given `ctx` (its rate and
/// block), what its kind says of it built there; returns its rate ratio (a resampler's: its
/// output rate over its input rate) and the memory its processor holds
/// ([`fugue_dsp::DspNode::memory`], and [`fugue_dsp::DspNode::shared_memory`]) when it was
/// built.
fn check_node(
    graph: &TaskGraph,
    registry: &Registry,
    id: NodeId,
    ctx: Option<&NodeContext<'_>>,
    out: &mut Vec<Problem>,
) -> Option<(Ratio, Held, PortBytes)> {
    let node = graph.node(id);
    let places = graph.places();
    let error = |what: What, place: Option<Location>, message: String| Problem {
        severity: Severity::Error,
        what,
        place,
        message,
        count: 1,
    };
    if node.kind.is_empty() || node.kind == TASK_KIND {
        let how = if node.kind.is_empty() {
            "write `kind: \"osc\"`, for example"
        } else {
            // The task-graph formats' kind (DOT's default, every .stg node's).
            "`task`, a node of a task graph, which only schedules read; give it a kind, osc for example"
        };
        out.push(error(
            What::Kind,
            places.and_then(|p| p.node(id)),
            format!(
                "node `{}` gives no kind ({how}); known kinds: {}",
                node.name,
                registry.names().join(", ")
            ),
        ));
        return None;
    }
    if !registry.contains(&node.kind) {
        let hint = match suggest::nearest(&node.kind, registry.names()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("known kinds: {}", registry.names().join(", ")),
        };
        out.push(error(
            What::Kind,
            places.and_then(|p| p.kind(id)),
            format!(
                "node `{}` has unknown kind `{}`; {hint}",
                node.name, node.kind
            ),
        ));
        return None;
    }
    // The attributes that the misspelt ones probably meant.
    let mut meant: Vec<String> = Vec::new();
    if let Some(doc) = registry.doc(&node.kind) {
        for (i, (attr, _)) in node.attrs.iter().enumerate() {
            if doc.reads(attr) {
                continue;
            }
            let near = lint::nearest_attribute(doc, attr);
            let hint = match &near {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("it reads {}", doc.attribute_names()),
            };
            meant.extend(near);
            out.push(error(
                What::UnreadAttribute,
                places.and_then(|p| p.attr(id, i)),
                format!(
                    "node `{}` has attribute `{attr}`, which kind {} does not read; {hint}",
                    node.name, node.kind
                ),
            ));
        }
    }
    let ctx = ctx?;
    match registry.build(ctx, false) {
        Err(e) => {
            // A misspelt attribute that leaves a required one missing is said once, above.
            if !matches!(&e, NodeError::MissingAttr { attr, .. } if meant.contains(attr)) {
                out.push(error(What::Node, place_of(graph, &e), e.to_string()));
            }
            for e in more_bad_values(registry, ctx, &e) {
                out.push(error(What::Node, place_of(graph, &e), e.to_string()));
            }
            None
        }
        Ok((built, _)) => {
            // Output ports the node does not have (a Faust program's, an LV2 plugin's,
            // known once it is built), as the plan compiler refuses them.
            if let Some(e) = fugue_exec::port_mismatch(graph, id, built.as_ref()) {
                out.push(error(
                    What::Node,
                    places.and_then(|p| p.node(id)),
                    e.to_string(),
                ));
            }
            Some((
                built.rate_ratio(),
                (built.memory(), built.shared_memory()),
                port_bytes(graph, id, ctx, built.as_ref()),
            ))
        }
    }
}
