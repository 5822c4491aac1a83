//! Wide sums split into groups: the graph a plan is compiled from.
//!
//! A join of many branches (a `mix` of 33 inputs) is a task that every branch waits for and
//! that reads every branch's buffer: on several threads, it runs after the last branch, alone,
//! and pulls half of the branches' buffers from other cores' caches. A node whose kind sees its
//! inputs only through their sum ([`DspNode::sums_inputs`]) is computed instead as a tree of
//! sums, in the order of [`fugue_dsp::sum_inputs`]: its inputs in blocks of `2G` consecutive
//! ports (`G` = [`SUM_GROUP`]), each block's sum that of its two halves, `S(first G) +
//! S(the others)`. The first half becomes a `sum` node ([`fugue_dsp::kinds::mix::group`]),
//! the second a `sum+` node ([`fugue_dsp::kinds::mix::group_after`]) that sums its ports and
//! adds the first half's sum: the block's sum leaves it as one buffer. Blocks of blocks follow
//! while there are more than `2G` values; the node keeps at most `G` inputs, or two (the sums
//! of its halves). A group becomes ready when its branches end and runs where the last of them
//! ran, on data still in that core's cache; the two halves of a block usually run on the same
//! core (their branches are neighbours), and only the blocks' sums cross cores.
//!
//! The samples do not change: the sum of the groups' sums, by the rule, is the node's own sum,
//! bit for bit, whether the node was split or not, and whichever thread runs which group.

use fugue_dsp::{DspNode, NodeContext, Ratio, Registry, SUM_GROUP};
use fugue_graph::{EdgeId, GraphBuilder, Node, NodeId, TaskGraph};

use crate::CompileOptions;

/// The kind of a group that sums its ports left to right ([`fugue_dsp::kinds::mix::group`]).
const SUM: &str = "sum";
/// The kind of a group that adds port 0 to the sum of the others
/// ([`fugue_dsp::kinds::mix::group_after`]).
const SUM_AFTER: &str = "sum+";

/// The processor node of a group node of a [`Regrouped`] graph (of kind `sum` or `sum+`, with
/// `inputs` input ports).
pub(crate) fn group_node(kind: &str, inputs: usize) -> Box<dyn DspNode> {
    debug_assert!(kind == SUM || kind == SUM_AFTER, "not a group kind: {kind}");
    if kind == SUM_AFTER {
        fugue_dsp::kinds::mix::group_after(inputs)
    } else {
        fugue_dsp::kinds::mix::group(inputs)
    }
}

/// A graph with its wide sums split, and how it maps to the graph it came from.
pub(crate) struct Regrouped {
    /// The new graph: the original nodes (same ids; a split node's input count changed), then
    /// the group nodes; the original edges that do not enter a split node, in their order,
    /// then for each split node the edges into its groups (the original ones, moved, in their
    /// order), from group to group, and into the node.
    pub graph: TaskGraph,
    /// For each node of `graph`: the original node it computes (a group: the split node).
    pub origin: Vec<NodeId>,
    /// For each node of `graph`: its share of the original node's cost (1 for an unsplit
    /// node; a split node and its groups share it in proportion to the inputs each sums).
    pub share: Vec<f64>,
    /// For each edge of `graph`: the original edge whose communication cost it carries (a
    /// group's output edge: one of the edges into the group; `None` for a group fed by none).
    pub edge_origin: Vec<Option<EdgeId>>,
}

/// One input of a node being split: the edges that feed it (an input port's edges, or the
/// output of a group made for it) as `(source, source port, original edge)`; the original
/// edge gives the communication cost (a group's output: one of the edges into the group).
type Slot = Vec<(NodeId, usize, Option<EdgeId>)>;

/// Splits the wide sums of `graph`, or returns `None` when it has none: nodes with more than
/// [`SUM_GROUP`] input ports and more than [`SUM_GROUP`] input edges whose kind (built through
/// `registry`) declares [`DspNode::sums_inputs`].
pub(crate) fn regroup(
    graph: &TaskGraph,
    registry: &Registry,
    options: &CompileOptions,
) -> Option<Regrouped> {
    let n = graph.len();
    let wide: Vec<NodeId> = (0..n)
        .filter(|&v| {
            graph.inputs(v) > SUM_GROUP
                && graph.in_edges(v).len() > SUM_GROUP
                && sums_inputs(graph, v, registry, options)
        })
        .collect();
    if wide.is_empty() {
        return None;
    }
    let mut is_wide = vec![false; n];
    for &v in &wide {
        is_wide[v] = true;
    }
    let comm = |e: Option<EdgeId>| e.map_or(0.0, |e| graph.edges()[e].comm);

    // Every original node, the wide ones with their new input counts (set below).
    let mut nodes: Vec<Node> = graph.nodes().to_vec();
    let mut origin: Vec<NodeId> = (0..n).collect();
    let mut share = vec![1.0; n];
    let mut names: std::collections::HashSet<String> =
        nodes.iter().map(|x| x.name.clone()).collect();
    // Edges `(source, source port, destination, destination port, original edge)`: the
    // originals that do not enter a split node, in their order, then those made below.
    let mut edges: Vec<(NodeId, usize, NodeId, usize, Option<EdgeId>)> = graph
        .edges()
        .iter()
        .enumerate()
        .filter(|(_, e)| !is_wide[e.dst])
        .map(|(i, e)| (e.src, e.src_port, e.dst, e.dst_port, Some(i)))
        .collect();

    for &v in &wide {
        let k = graph.inputs(v);
        // Level 0: one slot per input port, holding the edges into it in declaration order.
        let mut slots: Vec<Slot> = vec![Vec::new(); k];
        // The original port range each slot covers (1-based, for the groups' names).
        let mut ranges: Vec<(usize, usize)> = (1..=k).map(|p| (p, p)).collect();
        for &e in graph.in_edges(v) {
            let ed = &graph.edges()[e];
            slots[ed.dst_port].push((ed.src, ed.src_port, Some(e)));
        }
        let mut groups = Groups {
            v,
            name: &graph.node(v).name,
            nodes: &mut nodes,
            origin: &mut origin,
            names: &mut names,
            edges: &mut edges,
            made: Vec::new(),
        };
        // Levels: blocks of 2G values, each one value (its pair sum), while more than 2G.
        while slots.len() > 2 * SUM_GROUP {
            let mut next_slots = Vec::new();
            let mut next_ranges = Vec::new();
            for (block, rs) in slots
                .chunks(2 * SUM_GROUP)
                .zip(ranges.chunks(2 * SUM_GROUP))
            {
                let range = span(rs);
                let half = block.len().min(SUM_GROUP);
                let (left, right) = block.split_at(half);
                let left_range = span(&rs[..half]);
                next_slots.push(if right.is_empty() {
                    groups.sum(left, left_range)
                } else {
                    groups.pair(left, right, left_range, range)
                });
                next_ranges.push(range);
            }
            slots = next_slots;
            ranges = next_ranges;
        }
        // The node's own pair sum (more than G values): its halves' sums as its two inputs.
        if slots.len() > SUM_GROUP {
            let (left, right) = slots.split_at(SUM_GROUP);
            let (lr, rr) = ranges.split_at(SUM_GROUP);
            slots = vec![groups.sum(left, span(lr)), groups.sum(right, span(rr))];
        }
        let made = groups.made;
        // The node itself now sums the top level's values, one per port.
        for (port, slot) in slots.iter().enumerate() {
            for &(src, src_port, orig) in slot {
                edges.push((src, src_port, v, port, orig));
            }
        }
        nodes[v].declared_inputs = Some(slots.len());
        let total: usize = made.iter().map(|&(_, m)| m).sum::<usize>() + slots.len();
        share.resize(nodes.len(), 0.0);
        for &(id, m) in &made {
            share[id] = m as f64 / total as f64;
        }
        share[v] = slots.len() as f64 / total as f64;
    }

    let mut b = GraphBuilder::new();
    for node in nodes {
        b.add_node(node).expect("names are unique");
    }
    if let Some(d) = graph.deadline() {
        b.set_deadline(d);
    }
    for &(src, sp, dst, dp, orig) in &edges {
        b.add_edge(src, sp, dst, dp, comm(orig))
            .expect("ports within the counts set above");
    }
    let edge_origin = edges.iter().map(|e| e.4).collect();
    let graph = b.build().expect("splitting a sum keeps the graph acyclic");
    Some(Regrouped {
        graph,
        origin,
        share,
        edge_origin,
    })
}

/// The group nodes being made for one split node `v`, added to the new graph's nodes and edges.
struct Groups<'a> {
    v: NodeId,
    /// `v`'s name (the groups are named after it and the ports they cover).
    name: &'a str,
    nodes: &'a mut Vec<Node>,
    origin: &'a mut Vec<NodeId>,
    names: &'a mut std::collections::HashSet<String>,
    edges: &'a mut Vec<(NodeId, usize, NodeId, usize, Option<EdgeId>)>,
    /// The groups made, with the number of inputs each sums (for the cost shares).
    made: Vec<(NodeId, usize)>,
}

impl Groups<'_> {
    /// A slot carrying the sum left to right of `slots` (at most [`SUM_GROUP`], covering the
    /// original ports `range`): the one slot itself, nothing when all are silent (their sum
    /// is silence, +0.0, as a silent input is), or a `sum` group of them.
    fn sum(&mut self, slots: &[Slot], range: (usize, usize)) -> Slot {
        if slots.len() == 1 {
            slots[0].clone()
        } else if silent(slots) {
            Vec::new()
        } else {
            self.group(SUM, slots, range)
        }
    }

    /// A slot carrying the pair sum `S(left) + S(right)` ([`fugue_dsp::sum_inputs`]) of a
    /// block: [`SUM_GROUP`] slots `left` (covering `left_range`), one or more `right`.
    ///
    /// When both halves need a group, the right one is a `sum+` group that adds the left
    /// one's output to its own sum (one task depends on the other, usually on the same core
    /// as the branches of a block are neighbours; only the block's sum leaves it). When the
    /// right half is one input or silence, the left group sums it last (`S(left) + x` is
    /// the left-to-right sum of `left` and `x`; `S(left) + 0.0` of `left` and a silent
    /// port). When the left half is silence, a `sum+` group adds +0.0 to the right's sum.
    fn pair(
        &mut self,
        left: &[Slot],
        right: &[Slot],
        left_range: (usize, usize),
        range: (usize, usize),
    ) -> Slot {
        if silent(left) && silent(right) {
            return Vec::new();
        }
        if silent(left) || (right.len() > 1 && !silent(right)) {
            // Port 0: the left half's sum (silence when it is silent).
            let first = if silent(left) {
                Vec::new()
            } else {
                self.group(SUM, left, left_range)
            };
            let ports: Vec<Slot> = std::iter::once(first)
                .chain(right.iter().cloned())
                .collect();
            self.group(SUM_AFTER, &ports, range)
        } else {
            // One input, or silence (one silent port: adding +0.0 once or several times is
            // the same).
            let last = if right.len() == 1 {
                right[0].clone()
            } else {
                Vec::new()
            };
            let ports: Vec<Slot> = left.iter().cloned().chain([last]).collect();
            self.group(SUM, &ports, range)
        }
    }

    /// A new group node of kind `kind` (`sum` or `sum+`), one input port per slot, named
    /// after `v` and the original ports `range`; returns the slot of its output.
    fn group(&mut self, kind: &str, ports: &[Slot], (a, b): (usize, usize)) -> Slot {
        let id = self.nodes.len();
        let name = unique(self.names, format!("{}[{a}-{b}]", self.name));
        self.nodes
            .push(Node::new(name, kind).with_ports(ports.len(), 1));
        self.origin.push(self.v);
        self.made.push((id, ports.len()));
        let mut first_edge = None;
        for (port, slot) in ports.iter().enumerate() {
            for &(src, src_port, orig) in slot {
                self.edges.push((src, src_port, id, port, orig));
                first_edge = first_edge.or(orig);
            }
        }
        vec![(id, 0, first_edge)]
    }
}

/// The original ports covered by consecutive slots covering `ranges`: from the first one's
/// first port to the last one's last.
fn span(ranges: &[(usize, usize)]) -> (usize, usize) {
    (ranges[0].0, ranges[ranges.len() - 1].1)
}

/// Whether no edge feeds any of `slots`.
fn silent(slots: &[Slot]) -> bool {
    slots.iter().all(|slot| slot.is_empty())
}

/// `name`, or `name` with the first free suffix `#2`, `#3`, ...; recorded as taken.
fn unique(names: &mut std::collections::HashSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut k = 2;
    while names.contains(&candidate) {
        candidate = format!("{name}#{k}");
        k += 1;
    }
    names.insert(candidate.clone());
    candidate
}

/// Whether node `v`'s kind sums its inputs ([`DspNode::sums_inputs`]), asked of a node built
/// at the engine's rate (the answer is the kind's, not the rate's); a node that cannot be
/// built is not split (compiling it reports why).
fn sums_inputs(
    graph: &TaskGraph,
    v: NodeId,
    registry: &Registry,
    options: &CompileOptions,
) -> bool {
    let ctx = NodeContext {
        node: graph.node(v),
        inputs: graph.inputs(v),
        outputs: graph.outputs(v),
        in_edges: graph.in_edges(v).len(),
        sample_rate: options.sample_rate,
        block: options.block,
        rate: Ratio::ONE,
        engine_rate: options.sample_rate,
        engine_block: options.block,
        folder: graph.folder(),
    };
    registry
        .build(&ctx, false)
        .is_ok_and(|(d, _): (Box<dyn DspNode>, bool)| d.sums_inputs())
}
