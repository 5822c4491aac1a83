//! The task graph: named nodes with ports and costs, and edges between ports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rustc_hash::FxBuildHasher;

type NameMap = HashMap<String, NodeId, FxBuildHasher>;

use crate::error::{Direction, GraphError};
use crate::places::SourcePlaces;

/// Index of a node in [`TaskGraph::nodes`].
pub type NodeId = usize;
/// Index of an edge in [`TaskGraph::edges`].
pub type EdgeId = usize;

/// The computation cost given to a node whose file declares none (`wcet` absent in `.ag`).
///
/// One unit, so that graphs without costs schedule as graphs of equal tasks.
pub const DEFAULT_COST: f64 = 1.0;

/// The largest cost a node or an edge may have: 1e12 (microseconds: eleven days). Sums of
/// costs over any graph that fits in memory stay finite, so that schedules, critical paths
/// and predictions are numbers.
pub const MAX_COST: f64 = 1e12;

/// Whether `c` may be a node's or an edge's cost: a number from 0 to [`MAX_COST`] (NaN is
/// not).
pub fn is_cost(c: f64) -> bool {
    (0.0..=MAX_COST).contains(&c)
}

/// An attribute value, kept as it was written.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// A string literal (unescaped).
    Str(String),
}

impl Value {
    /// The value as a number: integers and floats as they are, strings parsed
    /// (the 2019 corpus writes `freq: "440"`). `None` when it is not a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Str(s) => parse_number(s.trim()),
        }
    }

    /// The value as text: the string itself, or the number as written by Rust.
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Value::Str(s) => std::borrow::Cow::Borrowed(s),
            Value::Int(i) => std::borrow::Cow::Owned(i.to_string()),
            Value::Float(f) => std::borrow::Cow::Owned(format!("{f:?}")),
        }
    }
}

/// Parses a number as the `.ag` grammar writes it (`2.`, `-1.5e3`, `440`).
pub fn parse_number(s: &str) -> Option<f64> {
    if s.is_empty() {
        return None;
    }
    let t = s.strip_suffix('.').unwrap_or(s);
    let v: f64 = t.parse().ok().or_else(|| s.parse().ok())?;
    v.is_finite().then_some(v)
}

/// A node of the task graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's unique name.
    pub name: String,
    /// The processor kind (`osc`, `mix`, ...); empty when the file gives none.
    pub kind: String,
    /// Other attributes in the order they were written (not `kind`, `in`, `out`, `wcet`).
    pub attrs: Vec<(String, Value)>,
    /// Number of input ports declared with `in`, if any.
    pub declared_inputs: Option<usize>,
    /// Number of output ports declared with `out`, if any.
    pub declared_outputs: Option<usize>,
    /// Computation cost (`wcet` in `.ag`, in microseconds; the time in `.stg`; `Weight` in `.dot`).
    pub cost: f64,
    /// Whether the cost was given by the file (otherwise it is [`DEFAULT_COST`]).
    pub cost_declared: bool,
    /// Whether the declared cost is a time in microseconds (`wcet`, in `.ag` or `.dot`), not
    /// a figure in the file's own units (`Weight` in `.dot`, a task's time in `.stg`).
    pub cost_in_us: bool,
}

impl Node {
    /// A node with a name and kind, no attributes, no declared ports and the default cost.
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        Node {
            name: name.into(),
            kind: kind.into(),
            attrs: Vec::new(),
            declared_inputs: None,
            declared_outputs: None,
            cost: DEFAULT_COST,
            cost_declared: false,
            cost_in_us: false,
        }
    }

    /// Sets a declared cost, a time in microseconds (`wcet`).
    pub fn with_cost(mut self, us: f64) -> Self {
        self.cost = us;
        self.cost_declared = true;
        self.cost_in_us = true;
        self
    }

    /// Sets a declared cost in a file's own units, not a time (DOT's `Weight`, a task's time
    /// in `.stg`).
    pub fn with_units_cost(mut self, cost: f64) -> Self {
        self.cost = cost;
        self.cost_declared = true;
        self.cost_in_us = false;
        self
    }

    /// Declares the numbers of input and output ports.
    pub fn with_ports(mut self, inputs: usize, outputs: usize) -> Self {
        self.declared_inputs = Some(inputs);
        self.declared_outputs = Some(outputs);
        self
    }

    /// Adds an attribute.
    pub fn with_attr(mut self, key: impl Into<String>, value: Value) -> Self {
        self.attrs.push((key.into(), value));
        self
    }

    /// Sets attribute `key` to `value`: the one [`Node::attr`] reads (the last, when it is
    /// written twice), or a new one.
    pub fn set_attr(&mut self, key: &str, value: Value) {
        match self.attrs.iter_mut().rev().find(|(k, _)| k == key) {
            Some((_, old)) => *old = value,
            None => self.attrs.push((key.to_string(), value)),
        }
    }

    /// The attribute `key`, if present (the last one wins when written twice).
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attrs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// An edge from an output port of one node to an input port of another.
///
/// Ports are 0-based here (files number them from 1). Several edges between the same two
/// nodes are distinct edges.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Source node.
    pub src: NodeId,
    /// Output port of the source, from 0.
    pub src_port: usize,
    /// Destination node.
    pub dst: NodeId,
    /// Input port of the destination, from 0.
    pub dst_port: usize,
    /// Communication cost, paid when the two tasks run on different processors.
    pub comm: f64,
}

/// The kind of the node that plays a feedback edge's previous block (see [`Feedback`]).
pub const FEEDBACK_READ: &str = "feedback-read";

/// The kind of the node that keeps a feedback edge's block for the next cycle (see
/// [`Feedback`]).
pub const FEEDBACK_WRITE: &str = "feedback-write";

/// What a feedback edge's two tasks are, by the names [`GraphBuilder::build`] gives them: for
/// the outputs that list tasks beside the nodes (a schedule, a calibration).
pub const FEEDBACK_TASKS: &str =
    "`A.p~>B.q` plays the block kept from the previous cycle, `A.p~>B.q (kept)` keeps this cycle's (`A.p~>B.q #2` where a node has that name)";

/// A feedback edge, `a.1 ~> b.1`: `b`'s input carries the block that `a`'s output made in the
/// previous cycle (zero in the first), so a graph may loop back through it.
///
/// The graph holds it as two nodes of its own, so that every scheduler and executor sees
/// an acyclic graph of ordinary tasks:
/// - `read` ([`FEEDBACK_READ`], no input): outputs the block kept in the previous cycle on
///   its port 1, which feeds `b`'s port;
/// - `write` ([`FEEDBACK_WRITE`], no output): keeps the block of `a`'s port (its input 1)
///   for the next cycle;
/// - an edge from `read`'s port 2 to `write`'s port 2 orders them (no data is read through
///   it): in a cycle, `read` gives out the kept block before `write` replaces it. No cycle
///   can pass through the pair, since `read` has no input.
///
/// Both carry the attribute `pair` (the feedback edge's index), by which the plan compiler
/// gives them one shared block. The `.ag` and DOT writers write the edge back as `~>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feedback {
    /// The node whose output is fed back.
    pub src: NodeId,
    /// Its output port, from 0.
    pub src_port: usize,
    /// The node that reads it one cycle later.
    pub dst: NodeId,
    /// Its input port, from 0.
    pub dst_port: usize,
    /// The node that plays the kept block.
    pub read: NodeId,
    /// The node that keeps the block.
    pub write: NodeId,
}

/// A graph under construction; [`GraphBuilder::build`] validates it into a [`TaskGraph`].
#[derive(Clone, Debug, Default)]
pub struct GraphBuilder {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// Feedback edges: (src, src_port, dst, dst_port), 0-based ports.
    feedback: Vec<(NodeId, usize, NodeId, usize)>,
    /// Each edge's (src, src_port, dst, dst_port), to find duplicates.
    edge_ids: std::collections::HashMap<(NodeId, usize, NodeId, usize), EdgeId>,
    names: NameMap,
    deadline: Option<f64>,
}

/// Why [`GraphBuilder::build`] failed: the fault, and an edge that shows it when there is one
/// (for a cycle, an edge on the cycle), so that readers can point at a place in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildError {
    /// The fault.
    pub error: GraphError,
    /// An edge on the fault, if any.
    pub edge: Option<EdgeId>,
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node; fails if its name is taken, empty or blank, or holds a control character or a bidirectional mark, if it has more than [`crate::MAX_NODE_ATTRS`] attributes, or its cost is
    /// invalid.
    pub fn add_node(&mut self, node: Node) -> Result<NodeId, GraphError> {
        if !is_cost(node.cost) {
            return Err(GraphError::BadCost {
                what: format!("node `{}`", node.name),
                value: node.cost,
            });
        }
        if let Some(c) = node.name.chars().find(|&c| crate::error::unprintable(c)) {
            return Err(GraphError::ControlInName {
                shown: format!("{:?}", node.name),
                code: u32::from(c),
            });
        }
        if node.name.trim().is_empty() {
            return Err(GraphError::BlankName { shown: node.name });
        }
        if node.attrs.len() > crate::MAX_NODE_ATTRS {
            return Err(GraphError::TooManyAttributes {
                name: node.name,
                count: node.attrs.len(),
            });
        }
        if self.names.contains_key(&node.name) {
            return Err(GraphError::DuplicateNode {
                name: node.name,
                first: None,
            });
        }
        let id = self.nodes.len();
        self.names.insert(node.name.clone(), id);
        self.nodes.push(node);
        Ok(id)
    }

    /// The id of the node called `name`.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied()
    }

    /// The nodes added so far.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// How many edges were added so far (feedback edges not counted).
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Mutable access to a node added earlier (ports and costs may still change).
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id]
    }

    /// Sets the graph's deadline (`deadline = ...` in `.ag`).
    pub fn set_deadline(&mut self, deadline: f64) {
        self.deadline = Some(deadline);
    }

    /// The edge already added between these 0-based ports, if any.
    pub fn find_edge(
        &self,
        src: NodeId,
        src_port: usize,
        dst: NodeId,
        dst_port: usize,
    ) -> Option<EdgeId> {
        self.edge_ids.get(&(src, src_port, dst, dst_port)).copied()
    }

    /// Sets the communication cost of an edge added earlier (a reader merging a repeated
    /// edge, as DOT's `strict` asks).
    pub fn set_edge_comm(&mut self, id: EdgeId, comm: f64) {
        self.edges[id].comm = comm;
    }

    /// Adds an edge between 0-based ports; checks the ports against declared counts, and
    /// refuses an edge between the same ports as one added before
    /// ([`GraphError::DuplicateEdge`], `first` left for the reader to fill).
    pub fn add_edge(
        &mut self,
        src: NodeId,
        src_port: usize,
        dst: NodeId,
        dst_port: usize,
        comm: f64,
    ) -> Result<EdgeId, GraphError> {
        if !is_cost(comm) {
            return Err(GraphError::BadCost {
                what: format!(
                    "edge `{}` -> `{}`",
                    self.nodes[src].name, self.nodes[dst].name
                ),
                value: comm,
            });
        }
        self.check_ports(src, src_port, dst, dst_port)?;
        if self.find_edge(src, src_port, dst, dst_port).is_some() {
            return Err(self.written_twice((src, src_port, dst, dst_port), "->"));
        }
        let id = self.edges.len();
        self.edge_ids.insert((src, src_port, dst, dst_port), id);
        self.edges.push(Edge {
            src,
            src_port,
            dst,
            dst_port,
            comm,
        });
        Ok(id)
    }

    /// The error of an edge written twice (`first` left for the reader to fill).
    /// `arrow`: `->`, or `~>` for a feedback edge.
    fn written_twice(
        &self,
        (src, src_port, dst, dst_port): (NodeId, usize, NodeId, usize),
        arrow: &'static str,
    ) -> GraphError {
        GraphError::DuplicateEdge {
            edge: Box::new((
                self.nodes[src].name.clone(),
                src_port + 1,
                self.nodes[dst].name.clone(),
                dst_port + 1,
            )),
            arrow,
            first: None,
        }
    }

    /// Refuses ports beyond the counts the two nodes declare.
    fn check_ports(
        &self,
        src: NodeId,
        src_port: usize,
        dst: NodeId,
        dst_port: usize,
    ) -> Result<(), GraphError> {
        for (node, port, dir) in [
            (src, src_port, Direction::Output),
            (dst, dst_port, Direction::Input),
        ] {
            let n = &self.nodes[node];
            let declared = match dir {
                Direction::Input => n.declared_inputs,
                Direction::Output => n.declared_outputs,
            };
            if let Some(declared) = declared {
                if port >= declared {
                    return Err(GraphError::PortOutOfRange {
                        node: n.name.clone(),
                        port: port + 1,
                        direction: dir,
                        declared,
                    });
                }
            }
        }
        Ok(())
    }

    /// The index, in the order they were added, of the feedback edge from output `src_port`
    /// of `src` to input `dst_port` of `dst` (ports from 0), if there is one.
    pub fn find_feedback(
        &self,
        src: NodeId,
        src_port: usize,
        dst: NodeId,
        dst_port: usize,
    ) -> Option<usize> {
        self.feedback
            .iter()
            .position(|&k| k == (src, src_port, dst, dst_port))
    }

    /// Adds a feedback edge between 0-based ports (`a.1 ~> b.1`, see [`Feedback`]); checks
    /// the ports as [`GraphBuilder::add_edge`] does and refuses one written twice.
    pub fn add_feedback(
        &mut self,
        src: NodeId,
        src_port: usize,
        dst: NodeId,
        dst_port: usize,
    ) -> Result<(), GraphError> {
        self.check_ports(src, src_port, dst, dst_port)?;
        let key = (src, src_port, dst, dst_port);
        if self.feedback.contains(&key) {
            return Err(self.written_twice(key, "~>"));
        }
        self.feedback.push(key);
        Ok(())
    }

    /// Validates the graph (acyclic once the feedback edges are set aside) and computes its
    /// adjacency and topological order. Each feedback edge becomes its two nodes and three
    /// edges ([`Feedback`]), after the graph's own.
    pub fn build(mut self) -> Result<TaskGraph, BuildError> {
        let mut feedback = Vec::with_capacity(self.feedback.len());
        for (i, &(src, sp, dst, dp)) in std::mem::take(&mut self.feedback).iter().enumerate() {
            let written = format!(
                "{}.{}~>{}.{}",
                self.nodes[src].name,
                sp + 1,
                self.nodes[dst].name,
                dp + 1
            );
            // A node of the graph may already have the name (a quoted DOT name can): the
            // pair then takes the first free `NAME #k`. Each try is refused by at most one
            // node, so the nodes' count bounds the search.
            let free =
                |n: &str| self.find(n).is_none() && self.find(&format!("{n} (kept)")).is_none();
            let name = (1..=self.nodes.len() + 1)
                .map(|k| match k {
                    1 => written.clone(),
                    k => format!("{written} #{k}"),
                })
                .find(|n| free(n))
                .expect("one of the names is free");
            let hidden = |node: Node| node.with_cost(0.0).with_attr("pair", Value::Int(i as i64));
            let read = self
                .add_node(hidden(
                    Node::new(name.clone(), FEEDBACK_READ).with_ports(0, 2),
                ))
                .map_err(|error| BuildError { error, edge: None })?;
            let write = self
                .add_node(hidden(
                    Node::new(format!("{name} (kept)"), FEEDBACK_WRITE).with_ports(2, 0),
                ))
                .map_err(|error| BuildError { error, edge: None })?;
            for (a, ap, b, bp) in [(src, sp, write, 0), (read, 0, dst, dp), (read, 1, write, 1)] {
                self.add_edge(a, ap, b, bp, 0.0)
                    .map_err(|error| BuildError { error, edge: None })?;
            }
            feedback.push(Feedback {
                src,
                src_port: sp,
                dst,
                dst_port: dp,
                read,
                write,
            });
        }
        let mut g = TaskGraph::from_parts(self.nodes, self.edges, self.names, self.deadline)?;
        g.feedback = feedback;
        Ok(g)
    }
}

/// A validated, acyclic task graph.
///
/// Nodes and edges keep the order in which they were declared. Besides per-edge adjacency,
/// the graph keeps per-pair adjacency ([`TaskGraph::preds`], [`TaskGraph::succs`]) where
/// parallel edges between two nodes are merged and their communication costs summed: that is
/// the view the schedulers use (all the data one task sends another).
#[derive(Clone, Debug)]
pub struct TaskGraph {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    names: NameMap,
    deadline: Option<f64>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    out_edges: Vec<Vec<EdgeId>>,
    in_edges: Vec<Vec<EdgeId>>,
    succs: Vec<Vec<(NodeId, f64)>>,
    preds: Vec<Vec<(NodeId, f64)>>,
    topo: Vec<NodeId>,
    /// The folder of the file the graph was read from.
    folder: Option<PathBuf>,
    /// Where the file writes each node (shared by clones).
    places: Option<std::sync::Arc<SourcePlaces>>,
    /// The feedback edges, each with its two nodes.
    feedback: Vec<Feedback>,
}

impl PartialEq for TaskGraph {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes && self.edges == other.edges && self.deadline == other.deadline
    }
}

impl TaskGraph {
    fn from_parts(
        nodes: Vec<Node>,
        edges: Vec<Edge>,
        names: NameMap,
        deadline: Option<f64>,
    ) -> Result<TaskGraph, BuildError> {
        let n = nodes.len();
        let mut out_edges = vec![Vec::new(); n];
        let mut in_edges = vec![Vec::new(); n];
        let mut inputs: Vec<usize> = nodes
            .iter()
            .map(|x| x.declared_inputs.unwrap_or(0))
            .collect();
        let mut outputs: Vec<usize> = nodes
            .iter()
            .map(|x| x.declared_outputs.unwrap_or(0))
            .collect();
        for (i, e) in edges.iter().enumerate() {
            out_edges[e.src].push(i);
            in_edges[e.dst].push(i);
            inputs[e.dst] = inputs[e.dst].max(e.dst_port + 1);
            outputs[e.src] = outputs[e.src].max(e.src_port + 1);
        }
        // Per-pair adjacency: parallel edges merged, costs summed. `slot[o]` remembers where
        // neighbour `o` sits in the list being built, stamped with the owner
        // (node id for successor lists, n + node id for predecessor lists) to avoid clearing.
        let mut slot: Vec<(usize, usize)> = vec![(usize::MAX, 0); n];
        let mut merge = |owner: NodeId, list: &[EdgeId], outgoing: bool| {
            let mut v: Vec<(NodeId, f64)> = Vec::with_capacity(list.len());
            for &ei in list {
                let e = &edges[ei];
                let o = if outgoing { e.dst } else { e.src };
                if slot[o].0 == owner {
                    v[slot[o].1].1 += e.comm;
                } else {
                    slot[o] = (owner, v.len());
                    v.push((o, e.comm));
                }
            }
            v
        };
        let succs: Vec<Vec<(NodeId, f64)>> = out_edges
            .iter()
            .enumerate()
            .map(|(u, l)| merge(u, l, true))
            .collect();
        let preds: Vec<Vec<(NodeId, f64)>> = in_edges
            .iter()
            .enumerate()
            .map(|(u, l)| merge(n + u, l, false))
            .collect();

        // Kahn's algorithm, FIFO in declaration order: deterministic.
        let mut indeg: Vec<usize> = preds.iter().map(Vec::len).collect();
        let mut topo: Vec<NodeId> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut head = 0;
        while head < topo.len() {
            let u = topo[head];
            head += 1;
            for &(s, _) in &succs[u] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    topo.push(s);
                }
            }
        }
        if topo.len() < n {
            let (cycle, edge) = find_cycle(&indeg, &out_edges, &edges);
            return Err(BuildError {
                error: GraphError::Cycle {
                    nodes: cycle.iter().map(|&i| nodes[i].name.clone()).collect(),
                    feedback: crate::error::FEEDBACK_AG,
                },
                edge: Some(edge),
            });
        }
        Ok(TaskGraph {
            nodes,
            edges,
            names,
            deadline,
            inputs,
            outputs,
            out_edges,
            in_edges,
            succs,
            preds,
            topo,
            folder: None,
            places: None,
            feedback: Vec::new(),
        })
    }

    /// All nodes, in declaration order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// One node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// Sets attribute `key` of node `id` to `value` (adds it when the node has none): the
    /// attributes are no part of the graph's structure, which stays as it is.
    pub fn set_attr(&mut self, id: NodeId, key: &str, value: Value) {
        self.nodes[id].set_attr(key, value);
    }

    /// Removes every attribute `key` of node `id` (the attributes are no part of the
    /// graph's structure).
    pub fn remove_attr(&mut self, id: NodeId, key: &str) {
        self.nodes[id].attrs.retain(|(k, _)| k != key);
    }

    /// All edges, in declaration order.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The id of the node called `name`.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied()
    }

    /// The deadline the file declares, if any.
    pub fn deadline(&self) -> Option<f64> {
        self.deadline
    }

    /// The feedback edges (`a.1 ~> b.1`), in the order written, each with its two nodes.
    pub fn feedback_edges(&self) -> &[Feedback] {
        &self.feedback
    }

    /// Feedback edge `f` as the file writes it, for messages and reports: `a.1 ~> b.2`.
    pub fn feedback_text(&self, f: &Feedback) -> String {
        format!(
            "{}.{} ~> {}.{}",
            self.node(f.src).name,
            f.src_port + 1,
            self.node(f.dst).name,
            f.dst_port + 1
        )
    }

    /// Whether node `v` is one of a feedback edge's two nodes ([`Feedback`]).
    pub fn is_feedback_node(&self, v: NodeId) -> bool {
        // The pairs are made by `GraphBuilder::build` in order, after the graph's own nodes:
        // their ids increase, so a search finds one in O(log n) (called once per node by
        // the reports, a scan made them quadratic in the feedback edges).
        let at = self.feedback.partition_point(|f| f.write < v);
        self.feedback
            .get(at)
            .is_some_and(|f| f.read == v || f.write == v)
    }

    /// The nodes as the file writes them: [`TaskGraph::len`] less each feedback edge's two
    /// nodes.
    pub fn written_nodes(&self) -> usize {
        self.len() - 2 * self.feedback.len()
    }

    /// The edges as the file writes them: `->` edges, and each feedback edge (`~>`) once
    /// instead of the three edges of its pair of nodes ([`Feedback`]).
    pub fn written_edges(&self) -> usize {
        self.edges().len() - 2 * self.feedback.len()
    }

    /// The folder of the file the graph was read from ([`crate::read_file`] sets it), against
    /// which a node's file attribute is resolved; `None` for a graph made in memory. It is no
    /// part of the graph's equality.
    pub fn folder(&self) -> Option<&Path> {
        self.folder.as_deref()
    }

    /// Sets the folder that a node's file attribute is resolved against (see
    /// [`TaskGraph::folder`]): what a caller that reads the graph's text itself says.
    pub fn set_folder(&mut self, folder: Option<PathBuf>) {
        self.folder = folder;
    }

    /// Where the file the graph was read from writes each node, its kind and attributes
    /// (`.ag` files; `None` for other formats and graphs made in memory). It is no part of the
    /// graph's equality.
    pub fn places(&self) -> Option<&SourcePlaces> {
        self.places.as_deref()
    }

    /// Sets the places of the graph's declarations (see [`TaskGraph::places`]).
    pub fn set_places(&mut self, places: Option<SourcePlaces>) {
        self.places = places.map(std::sync::Arc::new);
    }

    /// Number of input ports of a node: the declared count, or one past the highest port used.
    pub fn inputs(&self, id: NodeId) -> usize {
        self.inputs[id]
    }

    /// Number of output ports of a node: the declared count, or one past the highest port used.
    pub fn outputs(&self, id: NodeId) -> usize {
        self.outputs[id]
    }

    /// Edges leaving a node, in declaration order.
    pub fn out_edges(&self, id: NodeId) -> &[EdgeId] {
        &self.out_edges[id]
    }

    /// Edges entering a node, in declaration order.
    pub fn in_edges(&self, id: NodeId) -> &[EdgeId] {
        &self.in_edges[id]
    }

    /// Distinct successors with the summed communication cost of the edges to each.
    pub fn succs(&self, id: NodeId) -> &[(NodeId, f64)] {
        &self.succs[id]
    }

    /// Distinct predecessors with the summed communication cost of the edges from each.
    pub fn preds(&self, id: NodeId) -> &[(NodeId, f64)] {
        &self.preds[id]
    }

    /// A topological order (Kahn's algorithm, FIFO, declaration order among ready nodes).
    pub fn topo_order(&self) -> &[NodeId] {
        &self.topo
    }

    /// Nodes without predecessors, in declaration order.
    pub fn sources(&self) -> Vec<NodeId> {
        (0..self.len())
            .filter(|&i| self.preds[i].is_empty())
            .collect()
    }

    /// Nodes without successors, in declaration order.
    pub fn sinks(&self) -> Vec<NodeId> {
        (0..self.len())
            .filter(|&i| self.succs[i].is_empty())
            .collect()
    }

    /// Computation costs of all nodes, indexed by node.
    pub fn costs(&self) -> Vec<f64> {
        self.nodes.iter().map(|n| n.cost).collect()
    }

    /// Replaces the computation cost of every node (e.g. by measured costs).
    ///
    /// # Panics
    /// If `costs` has not one entry per node, or an entry is negative or not finite.
    pub fn set_costs(&mut self, costs: &[f64]) {
        assert_eq!(costs.len(), self.nodes.len(), "one cost per node");
        for (n, &c) in self.nodes.iter_mut().zip(costs) {
            assert!(is_cost(c), "cost must be from 0 to MAX_COST");
            n.cost = c;
            n.cost_declared = true;
        }
    }

    /// Sets the communication cost of every edge to `comm` (per edge; parallel edges add up).
    pub fn set_comm_costs(&mut self, comm: f64) {
        assert!(is_cost(comm), "cost must be from 0 to MAX_COST");
        for e in &mut self.edges {
            e.comm = comm;
        }
        for list in self.succs.iter_mut().chain(self.preds.iter_mut()) {
            for item in list.iter_mut() {
                item.1 = 0.0;
            }
        }
        for e in &self.edges {
            if let Some(x) = self.succs[e.src].iter_mut().find(|x| x.0 == e.dst) {
                x.1 += comm;
            }
            if let Some(x) = self.preds[e.dst].iter_mut().find(|x| x.0 == e.src) {
                x.1 += comm;
            }
        }
    }

    /// A builder holding this graph's nodes, edges, feedback edges and deadline (to edit and
    /// rebuild). A feedback edge's two nodes come after every other node
    /// ([`GraphBuilder::build`] adds them last): the builder holds the feedback edge instead,
    /// and the other nodes keep their ids.
    pub fn to_builder(&self) -> GraphBuilder {
        let hidden = |v: NodeId| self.is_feedback_node(v);
        let kept = self.nodes.len() - (0..self.nodes.len()).filter(|&v| hidden(v)).count();
        debug_assert!(
            (kept..self.nodes.len()).all(hidden),
            "feedback nodes come last"
        );
        let edges: Vec<Edge> = self
            .edges
            .iter()
            .filter(|e| !hidden(e.src) && !hidden(e.dst))
            .cloned()
            .collect();
        let mut names = self.names.clone();
        for n in &self.nodes[kept..] {
            names.remove(&n.name);
        }
        GraphBuilder {
            nodes: self.nodes[..kept].to_vec(),
            edge_ids: edges
                .iter()
                .enumerate()
                .map(|(i, e)| ((e.src, e.src_port, e.dst, e.dst_port), i))
                .collect(),
            edges,
            feedback: self
                .feedback
                .iter()
                .map(|f| (f.src, f.src_port, f.dst, f.dst_port))
                .collect(),
            names,
            deadline: self.deadline,
        }
    }
}

/// Finds one cycle among the nodes Kahn's algorithm could not order (`indeg > 0`).
fn find_cycle(indeg: &[usize], out_edges: &[Vec<EdgeId>], edges: &[Edge]) -> (Vec<NodeId>, EdgeId) {
    let n = indeg.len();
    let start = (0..n).find(|&i| indeg[i] > 0).expect("a node is left");
    // Every node left by Kahn's algorithm has a predecessor that is also left (its in-degree
    // counts them), so walking backwards through such predecessors must repeat a node.
    let mut pred_of = vec![usize::MAX; n];
    for (i, e) in edges.iter().enumerate() {
        if indeg[e.src] > 0 && indeg[e.dst] > 0 && pred_of[e.dst] == usize::MAX {
            pred_of[e.dst] = i;
        }
    }
    let mut seen = vec![usize::MAX; n];
    let mut path = Vec::new();
    let mut u = start;
    while seen[u] == usize::MAX {
        seen[u] = path.len();
        path.push(u);
        u = edges[pred_of[u]].src;
    }
    let mut cycle: Vec<NodeId> = path[seen[u]..].to_vec();
    cycle.reverse(); // forward direction
    let a = cycle[0];
    let b = cycle[1 % cycle.len()];
    let edge = out_edges[a]
        .iter()
        .copied()
        .find(|&ei| edges[ei].dst == b)
        .expect("edge on cycle");
    (cycle, edge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_attr_changes_the_value_attr_reads() {
        let mut n = Node::new("o", "osc")
            .with_attr("freq", Value::Int(1))
            .with_attr("freq", Value::Int(2));
        n.set_attr("freq", Value::Float(3.0));
        assert_eq!(n.attr("freq"), Some(&Value::Float(3.0)));
        n.set_attr("volume", Value::Float(0.5));
        assert_eq!(n.attr("volume"), Some(&Value::Float(0.5)));
    }
}
