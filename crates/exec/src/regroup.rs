//! Wide sums split into groups: the graph a plan is compiled from.
//!
//! A join of many branches (a `mix` of 33 inputs) is a task that every branch waits for and
//! that reads every branch's buffer: on several threads, it runs after the last branch, alone,
//! and pulls half of the branches' buffers from other cores' caches. A node whose kind sees its
//! inputs only through their sum ([`DspNode::sums_inputs`]) is computed instead as a tree of
//! sums: groups of [`SUM_GROUP`] consecutive input ports become nodes of their own (each
//! summing its ports, [`fugue_dsp::kinds::mix::group`]) that feed the node in their place, in
//! levels until the node has at most [`SUM_GROUP`] inputs. A group becomes ready when its
//! branches end and runs where the last of them ran, on data still in that core's cache; only
//! the groups' sums cross cores, and the node itself reads a handful of buffers.
//!
//! The samples do not change: [`fugue_dsp::sum_inputs`] sums more than [`SUM_GROUP`] inputs as
//! exactly this tree (groups of consecutive ports summed left to right, then their sums), so
//! the sum of the groups' sums is the node's own sum, bit for bit, whether the node was split
//! or not, and whichever thread runs which group.

use fugue_dsp::{DspNode, NodeContext, Ratio, Registry, SUM_GROUP};
use fugue_graph::{EdgeId, GraphBuilder, Node, NodeId, TaskGraph};

use crate::CompileOptions;

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
        // Group nodes made for `v`, with the number of inputs each sums (for the cost shares).
        let mut made: Vec<(NodeId, usize)> = Vec::new();
        while slots.len() > SUM_GROUP {
            let mut next_slots = Vec::new();
            let mut next_ranges = Vec::new();
            for (chunk, rs) in slots.chunks(SUM_GROUP).zip(ranges.chunks(SUM_GROUP)) {
                let (a, b) = (rs[0].0, rs[rs.len() - 1].1);
                if chunk.len() == 1 || chunk.iter().all(|slot| slot.is_empty()) {
                    // The sum of one input is that input: its edges feed the next level
                    // directly (a port's several edges are summed in the same order there).
                    // The sum of silent inputs is silence (+0.0, as a silent input is): an
                    // input with no edge at the next level (no node whose rate would be the
                    // engine's while its neighbours' may differ).
                    next_slots.push(if chunk.len() == 1 {
                        chunk[0].clone()
                    } else {
                        Vec::new()
                    });
                    next_ranges.push((a, b));
                    continue;
                }
                let id = nodes.len();
                let name = unique(&mut names, format!("{}[{a}-{b}]", graph.node(v).name));
                nodes.push(Node::new(name, "sum").with_ports(chunk.len(), 1));
                origin.push(v);
                made.push((id, chunk.len()));
                let mut first_edge = None;
                for (port, slot) in chunk.iter().enumerate() {
                    for &(src, src_port, orig) in slot {
                        edges.push((src, src_port, id, port, orig));
                        first_edge = first_edge.or(orig);
                    }
                }
                next_slots.push(vec![(id, 0, first_edge)]);
                next_ranges.push((a, b));
            }
            slots = next_slots;
            ranges = next_ranges;
        }
        // The node itself now sums the top-level groups' outputs, one per port.
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
    };
    registry
        .build(&ctx, false)
        .is_ok_and(|(d, _): (Box<dyn DspNode>, bool)| d.sums_inputs())
}
