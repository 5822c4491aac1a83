//! The compiler: a [`TaskGraph`] becomes a [`Plan`] through a chain of typed passes, each
//! taking the previous pass's result by value:
//!
//! ```text
//! Prepared::new        options checked, wide sums split into groups, topological order
//!   .resolve_rates     each node's rate and block (resamplers), its control-side node
//!   .lay_out_buffers   one buffer per output port, engine channels, scratch sums, silence
//!   .build_tasks       tasks, successors, counts, levels, processors; units (chains merged,
//!                      cut into segments and sub-blocks when pipelined)
//! ```
//!
//! Control thread only: every pass allocates.

use fugue_dsp::{DspNode, Io, NodeContext, NodeError, Ratio, Registry};
use fugue_graph::{EdgeId, NodeId, TaskGraph};
use thiserror::Error;

use super::arena::{Buf, Layout};
use super::regroup::{self, Regrouped};
use super::task::TaskCell;
use super::units::{
    by_level, Pipelining, Units, SPLIT_GROUP_MIN_FRAMES, SPLIT_MIN_FRAMES, SPLIT_MIN_INPUTS,
    SPLIT_PARTS,
};
use super::{next_layout_id, InPort, Plan, TaskInfo, NOT_PIPELINED};

/// What [`Plan::compile`] needs besides the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileOptions {
    /// The engine's sample rate in Hz.
    pub sample_rate: f64,
    /// Frames per cycle at the engine's rate.
    pub block: usize,
    /// Turn nodes of unknown kind into silent placeholders instead of failing.
    pub placeholder: bool,
    /// Merge chains of tasks into units (see [`Plan`], "Units"); `false` makes one unit per
    /// task, for executors that must see the graph node by node.
    pub merge_chains: bool,
    /// Sub-blocks per cycle (pipelining, see [`Plan`], "Pipelining"): 1 runs every unit on the
    /// whole block (no pipelining); `n > 1` cuts the block into `n` sub-blocks of `block / n`
    /// frames and every unit into `n` units, one per sub-block. Must divide the block. A graph
    /// that changes rates (a resampler) is not pipelined ([`Plan::pipeline_note`] says so).
    pub pipeline: usize,
    /// With pipelining: chains of tasks whose cost exceeds the plan's total cost divided by
    /// this number are cut into segments of about that cost (a line of nodes is one chain: cut
    /// into 2 segments of 4 sub-blocks, two threads have work at once). 0 or 1: chains are
    /// not cut. Usually the number of threads.
    pub pipeline_segments: usize,
}

impl Default for CompileOptions {
    /// 48 kHz, 512 frames, no placeholders, chains merged, no pipelining (2 segments when
    /// pipelining is asked for).
    fn default() -> Self {
        CompileOptions {
            sample_rate: 48_000.0,
            block: 512,
            placeholder: false,
            merge_chains: true,
            pipeline: 1,
            pipeline_segments: 2,
        }
    }
}

/// [`CompileError::PortMismatch`] when node `v` of `graph`, built as `d`, has fewer output
/// buffers than the graph's edges use (a sink writes none); `None` otherwise.
pub fn port_mismatch(graph: &TaskGraph, v: NodeId, d: &dyn DspNode) -> Option<CompileError> {
    let used = graph.outputs(v);
    let has = match d.io() {
        Io::Sink { .. } => 0,
        _ => d.outputs(),
    };
    (has < used).then(|| CompileError::PortMismatch {
        node: graph.node(v).name.clone(),
        kind: graph.node(v).kind.clone(),
        has,
        used,
    })
}

/// Why a graph could not be compiled.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CompileError {
    /// A node could not be built (unknown kind, bad attribute, bad ports).
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A feedback edge leaves a node that runs at another rate than the graph's: the block it
    /// keeps is played back at the graph's rate.
    #[error("feedback edge `{edge}` leaves node `{node}` at {hz} Hz, but a feedback edge carries its block at the graph's rate, {base_hz} Hz; resample before the edge (add or move resamplers)")]
    FeedbackRate {
        /// The edge, as written (`up.1 ~> m.2`).
        edge: String,
        /// The node it leaves.
        node: String,
        /// That node's rate, in Hz.
        hz: f64,
        /// The graph's rate, in Hz.
        base_hz: f64,
    },
    /// A feedback edge comes into a node whose other inputs run at another rate than the
    /// graph's: the block it plays back comes at the graph's rate.
    #[error("feedback edge `{edge}` brings its block into node `{node}` at the graph's rate, {base_hz} Hz, but the node's other inputs come at {hz} Hz; a feedback edge carries its block at the graph's rate: keep the loop at that rate (resample before and after it)")]
    FeedbackInto {
        /// The edge, as written (`g.1 ~> m.2`).
        edge: String,
        /// The node it comes into.
        node: String,
        /// The rate of the node's other inputs, in Hz.
        hz: f64,
        /// The graph's rate, in Hz.
        base_hz: f64,
    },
    /// The inputs of a node arrive at different sample rates.
    #[error("node `{node}` receives inputs at different rates ({rates}); all inputs of a node must come at one rate (add or move resamplers)")]
    MixedRates {
        /// The node.
        node: String,
        /// The rates seen, in Hz, comma-separated.
        rates: String,
    },
    /// A node's block size would not be a whole number of frames.
    #[error("node `{node}`: its block of {block} frames times its rate ratio {ratio} is not a whole number of frames; choose another buffer size")]
    BlockNotWhole {
        /// The node.
        node: String,
        /// Its input block.
        block: usize,
        /// Its rate ratio.
        ratio: String,
    },
    /// A node's processor could not be made: its kind refused ([`DspNode::try_processor`]:
    /// a foreign library that would not instantiate it), or making it panicked.
    #[error("node `{node}`: its processor could not be made: {why}")]
    Processor {
        /// The node.
        node: String,
        /// The kind's reason, or the panic's message.
        why: String,
    },
    /// A kind reported fewer output buffers than the graph uses.
    #[error("node `{node}` ({kind}) has {has} output(s) but the graph uses {used}")]
    PortMismatch {
        /// The node.
        node: String,
        /// Its kind.
        kind: String,
        /// Outputs the processor writes.
        has: usize,
        /// Output ports the graph uses.
        used: usize,
    },
    /// Bad options.
    #[error("invalid options: {0}")]
    Options(String),
    /// A node would run at a rate beyond [`MAX_RATE_FACTOR`] times the engine's, or with a
    /// block beyond [`MAX_BLOCK`] (resamplers in a chain multiply their ratios).
    #[error("node `{node}` would run at {rate_hz} Hz, {factor} times the engine's rate, with blocks of {block} frames; {}", rate_too_high(*factor))]
    RateTooHigh {
        /// The node.
        node: String,
        /// Its rate, Hz.
        rate_hz: f64,
        /// Its rate over the engine's.
        factor: f64,
        /// Its block, frames.
        block: usize,
    },
    /// The plan would need more memory than [`MEMORY_LIMIT`].
    #[error("the graph needs {} MiB of memory at {block} frames per cycle ({what}), more than the limit of {} MiB; {}", mib(*.needed), mib(*.limit), if *.nodes { "use fewer nodes, shorter delays or smaller tables, or a smaller buffer size where the nodes' work buffers take it (--buffer; a benchmark's --buffers or a study's `buffers`)" } else { "use a smaller buffer size (--buffer; a benchmark's --buffers or a study's `buffers`), or fewer ports, nodes or shorter delays" })]
    TooLarge {
        /// Whether the nodes' own memory passed the limit, before any audio buffer was
        /// counted.
        nodes: bool,
        /// Bytes needed (at least; counted until the limit was passed).
        needed: usize,
        /// The limit, in bytes.
        limit: usize,
        /// The engine's block, in frames.
        block: usize,
        /// What takes the memory, e.g. "buffers of 1000001 ports".
        what: String,
        /// The node at which the count passed the limit, where one did.
        node: Option<String>,
    },
    /// The nodes' input ports would read more samples per cycle than [`MAX_READ_SAMPLES`]
    /// (an input port reads a block each cycle, a block of silence when nothing feeds it).
    #[error("the graph's nodes would read {reads} input samples per cycle at {block} frames, more than the limit of {limit}; the limit passed at node `{node}`, whose {inputs} input port(s) ({unconnected} of them unconnected, each reading a block of silence) read {node_reads}; declare fewer input ports (`in:`) or use a smaller buffer size (--buffer)")]
    TooManyReads {
        /// Samples read per cycle, counted up to `node`.
        reads: usize,
        /// The limit ([`MAX_READ_SAMPLES`]).
        limit: usize,
        /// The engine's block, in frames.
        block: usize,
        /// The node at which the count passed the limit.
        node: String,
        /// Its input ports.
        inputs: usize,
        /// Those of them that no edge feeds.
        unconnected: usize,
        /// Samples its ports read per cycle.
        node_reads: usize,
    },
    /// The number of sub-blocks of pipelining is 0 or does not divide the block.
    #[error("a pipeline of {pipeline} sub-blocks does not divide the block of {block} frames; choose a divisor of the block (1 turns pipelining off)")]
    Pipeline {
        /// The sub-blocks asked for.
        pipeline: usize,
        /// The block, frames.
        block: usize,
    },
}

/// Which bound of [`CompileError::RateTooHigh`] a node passes, and what to lower.
fn rate_too_high(factor: f64) -> String {
    if factor > MAX_RATE_FACTOR as f64 {
        format!(
            "a node may run at most {MAX_RATE_FACTOR} times the engine's rate: lower the resamplers' ratios"
        )
    } else {
        format!(
            "its blocks may have at most {MAX_BLOCK} frames: lower the buffer (--buffer) or the resamplers' ratios"
        )
    }
}

impl CompileError {
    /// [`CompileError::TooLarge`] for the nodes' own memory (before any audio buffer), which
    /// passed `limit` with `needed` bytes at node `node`, at `block` frames.
    pub fn nodes_too_large(needed: usize, limit: usize, block: usize, node: &str) -> Self {
        CompileError::TooLarge {
            nodes: true,
            needed,
            limit,
            block,
            what: format!(
                "delay lines, work buffers and tables of its nodes, counted up to node `{node}`"
            ),
            node: Some(node.to_string()),
        }
    }

    /// The error of node `v` of `graph`, whose inputs come at the rates `seen` (against the
    /// engine's, at `sample_rate` Hz; more than one): [`CompileError::FeedbackRate`] when it
    /// keeps a feedback edge's block (its source's rate, `source`, is not the graph's),
    /// [`CompileError::FeedbackInto`] when a feedback edge comes into it and all its other
    /// inputs come at one rate that is not the graph's, else [`CompileError::MixedRates`],
    /// the rates from the lowest.
    pub fn rates_of(
        graph: &TaskGraph,
        v: NodeId,
        seen: &[Ratio],
        source: impl Fn(NodeId) -> Ratio,
        sample_rate: f64,
    ) -> CompileError {
        if let Some(f) = graph.feedback_edges().iter().find(|f| f.write == v) {
            return CompileError::FeedbackRate {
                edge: graph.feedback_text(f),
                node: graph.node(f.src).name.clone(),
                hz: source(f.src).as_f64() * sample_rate,
                base_hz: sample_rate,
            };
        }
        // A feedback edge into `v`, whose block comes at the graph's rate, while all its
        // other inputs come at one other rate: said as the edge's, which the file writes
        // (the node that plays the block back is the compiler's own).
        let mut others: Vec<Ratio> = graph
            .in_edges(v)
            .iter()
            .map(|&e| graph.edges()[e].src)
            .filter(|&u| !graph.is_feedback_node(u))
            .map(&source)
            .collect();
        others.dedup();
        let other = match others.as_slice() {
            [one] if *one != Ratio::ONE => Some(*one),
            _ => None,
        };
        let into = graph.feedback_edges().iter().find(|f| f.dst == v);
        if let (Some(f), Some(other)) = (into, other) {
            return CompileError::FeedbackInto {
                edge: graph.feedback_text(f),
                node: graph.node(v).name.clone(),
                hz: other.as_f64() * sample_rate,
                base_hz: sample_rate,
            };
        }
        let mut seen = seen.to_vec();
        seen.sort_by(|a, b| a.as_f64().total_cmp(&b.as_f64()));
        seen.dedup();
        let rates: Vec<String> = seen
            .iter()
            .map(|r| format!("{} Hz", r.as_f64() * sample_rate))
            .collect();
        CompileError::MixedRates {
            node: graph.node(v).name.clone(),
            rates: rates.join(", "),
        }
    }

    /// The node the error is about, when it names one outside a [`NodeError`] (which
    /// carries its own place).
    pub fn node(&self) -> Option<&str> {
        match self {
            CompileError::MixedRates { node, .. }
            | CompileError::FeedbackRate { node, .. }
            | CompileError::FeedbackInto { node, .. }
            | CompileError::BlockNotWhole { node, .. }
            | CompileError::PortMismatch { node, .. }
            | CompileError::RateTooHigh { node, .. } => Some(node),
            CompileError::TooLarge { node, .. } => node.as_deref(),
            CompileError::TooManyReads { node, .. } => Some(node),
            _ => None,
        }
    }
}

/// The most input samples a plan's nodes may read per cycle, all their input ports together
/// (2^30: a second or more of a core's time; a cycle of a graph within [`MEMORY_LIMIT`] reads
/// far fewer unless ports are declared by the hundred thousand, or one output feeds millions
/// of them). Time, not memory: a port that no edge feeds reads the plan's one block of
/// silence, but reads it every cycle, so that a `mix` of a million declared inputs at a
/// million frames took minutes per cycle.
pub const MAX_READ_SAMPLES: usize = 1 << 30;

/// The most memory a compiled plan may take: audio buffers (one per output port, engine
/// channel and summed input, each a block long) plus the memory that the nodes' processors
/// hold (delay lines, counted twice: prototype and processor): 512 MiB. The compiler checks it
/// before allocating and returns [`CompileError::TooLarge`] instead.
pub const MEMORY_LIMIT: usize = 512 << 20;

pub use fugue_dsp::memory::size_in_words;

/// Bytes as whole MiB, rounded up.
fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1 << 20)
}

/// The most frames a plan's block may have.
pub const MAX_BLOCK: usize = 1 << 20;

/// The most sub-blocks a user may ask a block to be pipelined into (`--pipeline N`; an
/// automatic choice stays within it too): more than a few per thread gain nothing.
pub const MAX_PIPELINE: usize = 256;

/// The most sub-blocks a plan's block may be cut into ([`CompileOptions::pipeline`]: a
/// pipeline times the cycles overlapped in one block, at most 16): the plan's units grow with
/// the sub-blocks, and their ordering with their square (a million took minutes).
pub const MAX_SUB_BLOCKS: usize = 16 * MAX_PIPELINE;

/// The highest rate a node may run at, as a multiple of the engine's: 4096, the largest
/// numerator of one resampler's ratio. Resamplers in a chain multiply their ratios; beyond
/// this a node's block and its converters' filters (whose length grows with the ratio of a
/// conversion back to the engine's rate) would take gigabytes.
pub const MAX_RATE_FACTOR: u64 = 4096;

impl CompileOptions {
    /// Checks the rate and block size.
    fn check(&self) -> Result<(), CompileError> {
        if !(self.sample_rate.is_finite() && self.sample_rate >= 1.0) {
            return Err(CompileError::Options(format!(
                "the sample rate must be at least 1 Hz, not {}",
                self.sample_rate
            )));
        }
        if self.block == 0 || self.block > MAX_BLOCK {
            return Err(CompileError::Options(format!(
                "the block must be 1 to {MAX_BLOCK} frames, not {}",
                self.block
            )));
        }
        if self.pipeline > MAX_SUB_BLOCKS {
            return Err(CompileError::Options(format!(
                "a block cut into {} sub-blocks is more than the {MAX_SUB_BLOCKS} a plan may have",
                self.pipeline
            )));
        }
        if self.pipeline == 0 || !self.block.is_multiple_of(self.pipeline) {
            return Err(CompileError::Pipeline {
                pipeline: self.pipeline,
                block: self.block,
            });
        }
        Ok(())
    }
}

/// The cell of a task whose node is `d` (named `node`), its processor's state on cache
/// lines of its own (`crate::lines`). A processor that cannot be made
/// ([`DspNode::try_processor`]), or whose making panics, is the node's error (with the
/// reason, or the panic's message), not a panic of the thread that compiles (the host's
/// control thread goes on).
fn cell_of(d: &dyn DspNode, node: &str, ins: u32, outs: u32) -> Result<TaskCell, CompileError> {
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::lines::apart(|| d.try_processor().map(|p| TaskCell::new(p, ins, outs)))
    }));
    let why = match made {
        Ok(Ok(cell)) => return Ok(cell),
        Ok(Err(why)) => why,
        Err(payload) => crate::panic_message(payload.as_ref())
            .unwrap_or("making it panicked")
            .to_string(),
    };
    Err(CompileError::Processor {
        node: node.to_string(),
        why,
    })
}

impl Plan {
    /// Compiles `graph`: builds every node through `registry`, computes rates and block sizes
    /// downstream of resamplers, lays out buffers, instantiates the processors and groups the
    /// tasks into units.
    pub fn compile(
        graph: &TaskGraph,
        registry: &Registry,
        options: &CompileOptions,
    ) -> Result<Plan, CompileError> {
        Plan::compile_within(graph, registry, options, MEMORY_LIMIT)
    }

    /// [`Plan::compile`] with at most `limit` bytes of memory (at most [`MEMORY_LIMIT`]):
    /// what is left of a budget that other plans share (the host's graphs), checked as
    /// [`MEMORY_LIMIT`] is, before the memory is allocated.
    pub fn compile_within(
        graph: &TaskGraph,
        registry: &Registry,
        options: &CompileOptions,
        limit: usize,
    ) -> Result<Plan, CompileError> {
        let limit = limit.min(MEMORY_LIMIT);
        Prepared::new(graph, registry, options)?
            .resolve_rates(registry, options, limit)?
            .lay_out_buffers(options, limit)?
            .build_tasks(options)
    }
}

/// Pass 1: the graph to compile, with wide sums split into trees of groups (same samples;
/// see `regroup`), in topological order.
struct Prepared<'g> {
    /// The graph as given.
    given: &'g TaskGraph,
    /// The graph with sums split, when any was.
    regrouped: Option<Regrouped>,
    /// The compiled graph's nodes in topological order: task `t` is node `order[t]`.
    order: Vec<NodeId>,
    /// The inverse of `order`.
    task_of_node: Vec<u32>,
}

impl<'g> Prepared<'g> {
    fn new(
        given: &'g TaskGraph,
        registry: &Registry,
        options: &CompileOptions,
    ) -> Result<Self, CompileError> {
        options.check()?;
        let regrouped = regroup::regroup(given, registry, options);
        let graph = regrouped.as_ref().map_or(given, |r| &r.graph);
        let order: Vec<NodeId> = graph.topo_order().to_vec();
        let mut task_of_node = vec![0u32; graph.len()];
        for (t, &v) in order.iter().enumerate() {
            task_of_node[v] = t as u32;
        }
        Ok(Prepared {
            given,
            regrouped,
            order,
            task_of_node,
        })
    }

    /// The graph compiled (the given one, or the one with sums split).
    fn graph(&self) -> &TaskGraph {
        self.regrouped.as_ref().map_or(self.given, |r| &r.graph)
    }

    /// The given graph's node that compiled node `v` computes (a group: its sum's node).
    fn origin(&self, v: NodeId) -> NodeId {
        self.regrouped.as_ref().map_or(v, |r| r.origin[v])
    }

    /// Node `v`'s share of its origin's cost.
    fn share(&self, v: NodeId) -> f64 {
        self.regrouped.as_ref().map_or(1.0, |r| r.share[v])
    }

    /// The given graph's edge whose communication cost compiled edge `i` carries.
    fn edge_origin(&self, i: usize) -> Option<EdgeId> {
        self.regrouped
            .as_ref()
            .map_or(Some(i), |r| r.edge_origin[i])
    }

    /// Pass 2: each node's rate and block size, in topological order, and its control-side
    /// node built through `registry`.
    fn resolve_rates(
        self,
        registry: &Registry,
        options: &CompileOptions,
        limit: usize,
    ) -> Result<Rated<'g>, CompileError> {
        let graph = self.graph();
        let order = &self.order;
        let user_nodes = self.given.len();
        let n = graph.len();
        let mut out_rate = vec![Ratio::ONE; n];
        let mut out_block = vec![0usize; n];
        let mut node_rate = vec![Ratio::ONE; n];
        let mut node_block = vec![0usize; n];
        let mut dsp: Vec<Option<Box<dyn DspNode>>> = (0..n).map(|_| None).collect();
        let mut placeholders = Vec::new();
        // Memory the processors hold, checked node by node: at most one node's worth
        // (`MAX_NODE_MEMORY`) is allocated beyond the limit before it is refused.
        let mut node_memory = 0usize;
        // The origins of the shared memory counted ([`DspNode::shared_memory`]).
        let mut shared = fugue_dsp::SharedOrigins::default();
        let mut feedback = super::feedback::Pairs::default();
        for &v in order {
            let node = graph.node(v);
            let mut rate: Option<Ratio> = None;
            for &e in graph.in_edges(v) {
                let r = out_rate[graph.edges()[e].src];
                match rate {
                    None => rate = Some(r),
                    Some(r0) if r0 != r => {
                        // The node that keeps a feedback edge's block: its source's rate
                        // against the graph's, at which the block is played back.
                        let seen: Vec<Ratio> = graph
                            .in_edges(v)
                            .iter()
                            .map(|&e| out_rate[graph.edges()[e].src])
                            .collect();
                        return Err(CompileError::rates_of(
                            graph,
                            v,
                            &seen,
                            |u| out_rate[u],
                            options.sample_rate,
                        ));
                    }
                    Some(_) => {}
                }
            }
            let rate = rate.unwrap_or(Ratio::ONE);
            let block = rate
                .scale(options.block)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block: options.block,
                    ratio: rate.to_string(),
                })?;
            // Bounded before the node is built: its kind allocates by its block and rate.
            if rate.as_f64() > MAX_RATE_FACTOR as f64 || block > MAX_BLOCK {
                return Err(CompileError::RateTooHigh {
                    node: node.name.clone(),
                    rate_hz: options.sample_rate * rate.as_f64(),
                    factor: rate.as_f64(),
                    block,
                });
            }
            let ctx = NodeContext {
                node,
                inputs: graph.inputs(v),
                outputs: graph.outputs(v),
                in_edges: graph.in_edges(v).len(),
                sample_rate: options.sample_rate * rate.as_f64(),
                block,
                rate,
                engine_rate: options.sample_rate,
                engine_block: options.block,
                folder: self.given.folder(),
            };
            // The node's state on cache lines of its own (`crate::lines`): no other
            // processor's or plan's thread writes next to it.
            let (d, is_placeholder) = crate::lines::apart(|| {
                Ok::<_, CompileError>(if v >= user_nodes {
                    // A group of a split sum (not a kind of the registry).
                    (regroup::group_node(&node.kind, ctx.inputs), false)
                } else if let Some(d) = if self.given.is_feedback_node(self.origin(v)) {
                    feedback.build(&ctx)?
                } else {
                    // A node of the file that gives a feedback side's kind is of no kind
                    // the registry knows, as check says: the two sides of a feedback edge
                    // are the graph's own, ordered by it, and share their block by `pair`.
                    None
                } {
                    // A feedback edge's side (not a kind of the registry either).
                    (d, false)
                } else {
                    registry.build(&ctx, options.placeholder)?
                })
            })?;
            if is_placeholder {
                placeholders.push(node.name.clone());
            }
            let ratio = d.rate_ratio();
            let orate = rate
                .checked_mul(ratio)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block,
                    ratio: ratio.to_string(),
                })?;
            out_block[v] = ratio
                .scale(block)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block,
                    ratio: ratio.to_string(),
                })?;
            if let Some(e) = port_mismatch(graph, v, d.as_ref()) {
                return Err(e);
            }
            node_memory = node_memory.saturating_add(d.memory().saturating_mul(2));
            // Held once for every node of its origin.
            node_memory = node_memory.saturating_add(shared.add(d.shared_memory()));
            if node_memory > limit {
                return Err(CompileError::nodes_too_large(
                    node_memory,
                    limit,
                    options.block,
                    &node.name,
                ));
            }
            out_rate[v] = orate;
            node_rate[v] = rate;
            node_block[v] = block;
            dsp[v] = Some(d);
        }

        Ok(Rated {
            prepared: self,
            out_block,
            node_rate,
            node_block,
            dsp,
            placeholders,
            node_memory,
        })
    }
}

/// The result of [`Prepared::resolve_rates`].
struct Rated<'g> {
    prepared: Prepared<'g>,
    /// Per node: the block of its outputs.
    out_block: Vec<usize>,
    /// Per node: its own (input) rate and block.
    node_rate: Vec<Ratio>,
    node_block: Vec<usize>,
    /// Per node: its control-side node, until `build_tasks` takes it.
    dsp: Vec<Option<Box<dyn DspNode>>>,
    /// Nodes of unknown kind built as silent placeholders.
    placeholders: Vec<String>,
    /// Bytes that the nodes' prototypes and processors hold.
    node_memory: usize,
}

impl<'g> Rated<'g> {
    /// Pass 3: buffers for output ports, engine channels, scratch sums and silence, and each
    /// input port resolved to the buffer it reads.
    fn lay_out_buffers(
        self,
        options: &CompileOptions,
        limit: usize,
    ) -> Result<Laid<'g>, CompileError> {
        let graph = self.prepared.graph();
        let order = &self.prepared.order;
        let (dsp, node_block, out_block) = (&self.dsp, &self.node_block, &self.out_block);
        let n = graph.len();
        // The plan passes `limit` with `needed` bytes; `what` takes them.
        let too_large =
            |needed: usize, what: String, node: Option<String>| CompileError::TooLarge {
                nodes: false,
                needed,
                limit,
                block: options.block,
                what,
                node,
            };
        let mut layout = Layout::default();
        let max_block = node_block
            .iter()
            .chain(out_block)
            .copied()
            .chain([options.block])
            .max()
            .unwrap_or(1);
        let silence = layout.alloc(max_block);
        let mut out_bufs = Vec::new();
        let mut out_range = vec![(0u32, 0u32); n];
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        // Engine channels follow sources / sinks in file (declaration) order, then port order.
        let mut chan_in = vec![(0u32, 0u32); n];
        let mut chan_out = vec![(0u32, 0u32); n];
        for v in 0..n {
            let d = dsp[v].as_ref().expect("built above");
            match d.io() {
                Io::Source { channels } => {
                    chan_in[v] = (inputs.len() as u32, channels as u32);
                    for _ in 0..channels {
                        inputs.push(layout.alloc(options.block));
                    }
                }
                Io::Sink { channels } => {
                    chan_out[v] = (outputs.len() as u32, channels as u32);
                    for _ in 0..channels {
                        outputs.push(layout.alloc(options.block));
                    }
                }
                Io::None => {}
            }
        }
        // The engine's channels first: a sink or a source of a million ports is named as
        // such, not the node whose buffers come next.
        let needed = layout.bytes().saturating_add(self.node_memory);
        if needed > limit {
            return Err(too_large(
                needed,
                format!(
                    "audio buffers; {} MiB for the engine's {} input and {} output channel(s), the ports of its source and sink nodes",
                    mib(layout.bytes()),
                    inputs.len(),
                    outputs.len()
                ),
                None,
            ));
        }
        // Each node's scratch sums, then its output ports, in a depth-first topological order
        // (`layout_order`): the buffers of a chain or a subtree, which one thread usually runs,
        // are neighbours in memory. In the level order of the tasks, the buffers of the two
        // halves of a diamond alternate level by level, and a core's prefetcher, streaming
        // through the end of its own buffer, takes the first lines of the next one, written by
        // the other core (measurement: `bench-results/table/HISTORY.md`).
        let mut port_buf: Vec<Vec<Buf>> = vec![Vec::new(); n]; // graph output ports
        let mut scratch: Vec<Vec<Option<Buf>>> = vec![Vec::new(); n]; // per input port
        let mut reads = 0usize;
        for v in layout_order(graph) {
            let d = dsp[v].as_ref().expect("built above");
            if !matches!(d.io(), Io::Source { .. }) {
                // A port fed by several edges gets a scratch buffer for their sum.
                let mut edges_into = vec![0usize; d.inputs()];
                for &e in graph.in_edges(v) {
                    edges_into[graph.edges()[e].dst_port] += 1;
                }
                let node_reads = d.inputs().saturating_mul(node_block[v]);
                reads = reads.saturating_add(node_reads);
                if reads > MAX_READ_SAMPLES {
                    return Err(CompileError::TooManyReads {
                        reads,
                        limit: MAX_READ_SAMPLES,
                        block: options.block,
                        node: graph.node(v).name.clone(),
                        inputs: d.inputs(),
                        unconnected: edges_into.iter().filter(|&&k| k == 0).count(),
                        node_reads,
                    });
                }
                scratch[v] = edges_into
                    .iter()
                    .map(|&k| (k > 1).then(|| layout.alloc(node_block[v])))
                    .collect();
            }
            if !matches!(d.io(), Io::Sink { .. }) {
                // Checked before the node's buffers are laid out: a node may declare a
                // million ports.
                let needed = Layout::bytes_of(out_block[v])
                    .saturating_mul(d.outputs())
                    .saturating_add(layout.bytes())
                    .saturating_add(self.node_memory);
                if needed > limit {
                    return Err(too_large(
                        needed,
                        format!(
                            "audio buffers of the nodes' ports, the limit passed at node `{}`, whose {} output port(s) take {}",
                            graph.node(v).name,
                            d.outputs(),
                            size_in_words(Layout::bytes_of(out_block[v]).saturating_mul(d.outputs())),
                        ),
                        Some(graph.node(v).name.clone()),
                    ));
                }
                port_buf[v] = (0..d.outputs())
                    .map(|_| layout.alloc(out_block[v]))
                    .collect();
            }
        }
        let needed = layout.bytes().saturating_add(self.node_memory);
        if needed > limit {
            return Err(too_large(
                needed,
                "audio buffers, delay lines and work buffers".into(),
                None,
            ));
        }
        for &v in order {
            let d = dsp[v].as_ref().expect("built above");
            let start = out_bufs.len() as u32;
            match d.io() {
                Io::Sink { .. } => {
                    let (s, c) = chan_out[v];
                    out_bufs.extend_from_slice(&outputs[s as usize..(s + c) as usize]);
                }
                _ => out_bufs.extend_from_slice(&port_buf[v]),
            }
            out_range[v] = (start, out_bufs.len() as u32 - start);
        }
        let mut in_ports = Vec::new();
        let mut sum_srcs = Vec::new();
        let mut in_range = vec![(0u32, 0u32); n];
        for &v in order {
            let d = dsp[v].as_ref().expect("built above");
            let start = in_ports.len() as u32;
            let block = node_block[v];
            match d.io() {
                Io::Source { .. } => {
                    let (s, c) = chan_in[v];
                    for &b in &inputs[s as usize..(s + c) as usize] {
                        in_ports.push(InPort {
                            buf: b,
                            first: 0,
                            n_srcs: 1,
                        });
                    }
                }
                _ => {
                    // The node's in-edges by port (a stable sort: edge order within a port),
                    // walked once: a node of e in-edges costs e log e, not its ports times e.
                    let mut by_port: Vec<(usize, Buf)> = graph
                        .in_edges(v)
                        .iter()
                        .map(|&e| &graph.edges()[e])
                        .map(|e| (e.dst_port, port_buf[e.src][e.src_port]))
                        .collect();
                    by_port.sort_by_key(|&(p, _)| p);
                    let mut at = 0;
                    // One entry per input port (laid out above).
                    for (p, scratch) in scratch[v].iter().enumerate() {
                        let from = at;
                        while at < by_port.len() && by_port[at].0 == p {
                            at += 1;
                        }
                        let feeding = &by_port[from..at];
                        let port = match feeding.len() {
                            0 => InPort {
                                buf: Buf {
                                    off: silence.off,
                                    len: block as u32,
                                },
                                first: 0,
                                n_srcs: 0,
                            },
                            1 => InPort {
                                buf: feeding[0].1,
                                first: 0,
                                n_srcs: 1,
                            },
                            k => {
                                let first = sum_srcs.len() as u32;
                                sum_srcs.extend(feeding.iter().map(|&(_, b)| b));
                                InPort {
                                    buf: scratch.expect("laid out above"),
                                    first,
                                    n_srcs: k as u32,
                                }
                            }
                        };
                        in_ports.push(port);
                    }
                }
            }
            in_range[v] = (start, in_ports.len() as u32 - start);
        }

        Ok(Laid {
            rated: self,
            layout,
            out_bufs,
            out_range,
            inputs,
            outputs,
            in_ports,
            sum_srcs,
            in_range,
        })
    }
}

/// The result of [`Rated::lay_out_buffers`].
struct Laid<'g> {
    rated: Rated<'g>,
    layout: Layout,
    /// Every task's output buffers, by task's node in topological order.
    out_bufs: Vec<Buf>,
    /// Per node: its range of `out_bufs`.
    out_range: Vec<(u32, u32)>,
    /// Engine input and output channels.
    inputs: Vec<Buf>,
    outputs: Vec<Buf>,
    /// Every task's input ports, and the sources of the ports that sum several.
    in_ports: Vec<InPort>,
    sum_srcs: Vec<Buf>,
    /// Per node: its range of `in_ports`.
    in_range: Vec<(u32, u32)>,
}

impl Laid<'_> {
    /// Pass 4: the tasks (successors, activation counts, levels, processors, parts of tasks
    /// split by frames), grouped into units, and the plan; a processor that cannot be made
    /// is the node's error.
    fn build_tasks(self, options: &CompileOptions) -> Result<Plan, CompileError> {
        let Laid {
            rated,
            layout,
            out_bufs,
            out_range,
            inputs,
            outputs,
            in_ports,
            sum_srcs,
            in_range,
        } = self;
        let Rated {
            prepared,
            node_rate,
            node_block,
            out_block,
            mut dsp,
            placeholders,
            node_memory,
            ..
        } = rated;
        let memory = layout.bytes().saturating_add(node_memory);
        let graph = prepared.graph();
        // Pipelining cuts every buffer into the same sub-blocks: only a graph whose every
        // node runs at the engine's rate and block can be cut so, sample for sample.
        let rate_changer = (0..graph.len())
            .find(|&v| node_block[v] != options.block || out_block[v] != options.block);
        // A node whose samples depend on how a block is cut into calls cannot be pipelined
        // without changing the output. Asked only of a plan that would be pipelined: a kind
        // may find it out by running its processors (a Faust program).
        let whole = (options.pipeline > 1 && rate_changer.is_none())
            .then(|| {
                (0..graph.len()).find(|&v| !dsp[v].as_ref().expect("built above").splits_in_time())
            })
            .flatten();
        let (pipeline, pipeline_note) = match (rate_changer, whole) {
            _ if options.pipeline <= 1 => (options.pipeline, None),
            (Some(v), _) => (
                1,
                Some(format!(
                    "{NOT_PIPELINED}node `{}` ({}) changes the rate, and sub-blocks cannot be cut at the same samples on both sides of it",
                    graph.node(v).name,
                    graph.node(v).kind
                )),
            ),
            (None, Some(v)) => (
                1,
                Some(format!(
                    "{NOT_PIPELINED}node `{}` ({}) gives other samples when a block is cut into shorter calls",
                    graph.node(v).name,
                    graph.node(v).kind
                )),
            ),
            (None, None) => (options.pipeline, None),
        };
        let order = &prepared.order;
        let task_of_node = &prepared.task_of_node;
        let n = graph.len();
        let mut succ = Vec::new();
        let mut tasks = Vec::with_capacity(n);
        let mut cells = Vec::with_capacity(n);
        // Cells of parts 1.. of split tasks, after the tasks' own, and their tasks.
        let mut extra_cells = Vec::new();
        let mut cell_task: Vec<u32> = (0..n as u32).collect();
        let mut level = vec![0u32; n];
        for (t, &v) in order.iter().enumerate() {
            let node = graph.node(v);
            let lv = graph
                .preds(v)
                .iter()
                .map(|&(p, _)| level[task_of_node[p] as usize] + 1)
                .max()
                .unwrap_or(0);
            level[t] = lv;
            let s0 = succ.len() as u32;
            let mut ss: Vec<u32> = graph
                .succs(v)
                .iter()
                .map(|&(s, _)| task_of_node[s])
                .collect();
            ss.sort_unstable();
            succ.extend_from_slice(&ss);
            let d = dsp[v].take().expect("built above");
            let (ins, outs) = (in_range[v], out_range[v]);
            let split = d.frame_parallel()
            && d.io() == Io::None
            && d.rate_ratio() == Ratio::ONE
            && if prepared.share(v) == 1.0 {
                node_block[v] >= SPLIT_MIN_FRAMES
                    && graph.in_edges(v).len() >= SPLIT_MIN_INPUTS
            } else {
                // A sum split into groups (the node and its groups share its cost): at
                // large blocks its parts are split by frames as well, so that the sums
                // left after the last branch run on two threads.
                node_block[v] >= SPLIT_GROUP_MIN_FRAMES
            }
            // Pipelined sub-blocks already spread the join's frames.
            && pipeline == 1;
            let parts = if split { SPLIT_PARTS } else { 1 };
            let part_cells = n + extra_cells.len();
            for _ in 1..parts {
                extra_cells.push(cell_of(d.as_ref(), &node.name, ins.1, outs.1)?);
                cell_task.push(t as u32);
            }
            // A stateless task, pipelined: each sub-block beyond the first has a processor of
            // its own, so that the sub-blocks may run at the same time.
            let stateless = pipeline > 1
                && d.frame_parallel()
                && d.io() == Io::None
                && d.rate_ratio() == Ratio::ONE;
            let sub_cells = n + extra_cells.len();
            if stateless {
                for _ in 1..pipeline {
                    extra_cells.push(cell_of(d.as_ref(), &node.name, ins.1, outs.1)?);
                    cell_task.push(t as u32);
                }
            }
            tasks.push(TaskInfo {
                node: prepared.origin(v),
                name: node.name.clone(),
                kind: node.kind.clone(),
                cost: graph.node(prepared.origin(v)).cost * prepared.share(v),
                share: prepared.share(v),
                succ: (s0, ss.len() as u32),
                initial: graph.preds(v).len() as u32,
                level: lv,
                ins,
                outs,
                sample_rate: options.sample_rate * node_rate[v].as_f64(),
                block: node_block[v],
                parts: parts as u32,
                part_cells: part_cells as u32,
                stateless,
                sub_cells: sub_cells as u32,
            });
            cells.push(cell_of(d.as_ref(), &node.name, ins.1, outs.1)?);
        }
        cells.extend(extra_cells);
        let (level_order, level_starts) = by_level(&level);
        let sources = (0..n as u32)
            .filter(|&t| tasks[t as usize].initial == 0)
            .collect();
        let sinks = (0..n as u32)
            .filter(|&t| tasks[t as usize].succ.1 == 0)
            .collect();
        let total: f64 = tasks.iter().map(|t| t.cost).sum();
        let pipelining = Pipelining {
            subs: pipeline as u32,
            max_cost: if options.pipeline_segments > 1 && total > 0.0 {
                total / options.pipeline_segments as f64
            } else {
                f64::INFINITY
            },
        };
        let units = Units::new(&tasks, &succ, options.merge_chains, pipelining);
        let task_edges = graph
            .edges()
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let orig = prepared.edge_origin(i);
                (task_of_node[e.src], task_of_node[e.dst], orig)
            })
            .collect();
        #[cfg(loom)]
        let access = super::task::Access::new(tasks.len(), |i| {
            let (s, l) = tasks[i].succ;
            &succ[s as usize..(s + l) as usize]
        });
        let n_cells = cells.len();
        Ok(Plan {
            any_panic: std::sync::atomic::AtomicBool::new(false),
            #[cfg(loom)]
            access,
            units,
            layout_id: next_layout_id(),
            tasks,
            cells: cells.into_boxed_slice(),
            cell_task,
            succ,
            in_ports,
            sum_srcs,
            out_bufs,
            arena: layout.finish(),
            inputs,
            outputs,
            sources,
            sinks,
            level_order,
            level_starts,
            task_edges,
            task_of_node: task_of_node.clone(),
            sample_rate: options.sample_rate,
            block: options.block,
            placeholders,
            memory,
            pipeline,
            pipeline_note,
            profiling: false,
            times: (0..n_cells)
                .map(|_| std::cell::UnsafeCell::new(crate::trace::TaskTime::default()))
                .collect(),
        })
    }
}

/// The nodes of `graph` in a depth-first topological order: Kahn's algorithm with a stack
/// (the sources in declaration order, then each node's successors as they become ready, the
/// first successor first), so that a chain, or each branch of a fan-out with what hangs
/// below it, comes out in one piece.
fn layout_order(graph: &TaskGraph) -> Vec<NodeId> {
    let n = graph.len();
    let mut waiting: Vec<usize> = (0..n).map(|v| graph.preds(v).len()).collect();
    let mut stack: Vec<NodeId> = graph.sources();
    stack.reverse();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = stack.pop() {
        order.push(v);
        let mark = stack.len();
        for &(s, _) in graph.succs(v) {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                stack.push(s);
            }
        }
        stack[mark..].reverse();
    }
    debug_assert_eq!(order.len(), n, "the graph is acyclic");
    order
}

#[cfg(test)]
mod tests {
    use super::layout_order;

    /// The buffers of the two halves of a diamond are laid out one half after the other: the
    /// order is topological, and every node below the first branch only (the first half of
    /// the split tree and the merges that take only its data) comes before any node below the
    /// second branch only.
    #[test]
    fn the_layout_order_is_depth_first_and_topological() {
        let g = fugue_graph::gen::diamond(4);
        let order = layout_order(&g);
        let mut pos = vec![usize::MAX; g.len()];
        for (i, &v) in order.iter().enumerate() {
            assert_eq!(pos[v], usize::MAX, "node {v} listed twice");
            pos[v] = i;
        }
        for v in 0..g.len() {
            for &(s, _) in g.succs(v) {
                assert!(pos[v] < pos[s], "{v} -> {s} out of order");
            }
        }
        // Descendants of each of the first split's two branches.
        let below = |root: usize| {
            let mut seen = vec![false; g.len()];
            let mut stack = vec![root];
            while let Some(v) = stack.pop() {
                if !std::mem::replace(&mut seen[v], true) {
                    stack.extend(g.succs(v).iter().map(|&(s, _)| s));
                }
            }
            seen
        };
        let split = g.find("mi2").unwrap();
        let (a, b) = (g.succs(split)[0].0, g.succs(split)[1].0);
        let (da, db) = (below(a), below(b));
        let only_a: Vec<usize> = (0..g.len()).filter(|&v| da[v] && !db[v]).collect();
        let only_b: Vec<usize> = (0..g.len()).filter(|&v| db[v] && !da[v]).collect();
        assert!(only_a.len() > 10 && only_a.len() == only_b.len());
        let last_a = only_a.iter().map(|&v| pos[v]).max().unwrap();
        let first_b = only_b.iter().map(|&v| pos[v]).min().unwrap();
        assert!(last_a < first_b, "the halves interleave: {order:?}");
    }
}
