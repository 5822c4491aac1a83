//! Analyses of a task graph: levels, critical path, depth, width, total work.
//!
//! Definitions follow Kwok & Ahmad, "Static scheduling algorithms for allocating directed
//! task graphs to multiprocessors", ACM Computing Surveys 31(4), 1999, section 4.1:
//! - t-level(n): length of the longest path from an entry node to `n`, excluding `n`'s cost;
//! - b-level(n): length of the longest path from `n` to an exit node, including `n`'s cost;
//! - static level (SL): the b-level computed without communication costs;
//! - ALAP(n): the latest start time that does not lengthen the critical path,
//!   `CP - b-level(n)`;
//! - critical path (CP): the longest entry-to-exit path; its length is `max(t + b)`.
//!
//! Path lengths sum node costs and, where `with_comm` is asked for, edge communication costs
//! (per node pair: the sum over parallel edges, see [`TaskGraph::succs`]).

use crate::model::{NodeId, TaskGraph};

/// All levels of all nodes, indexed by node.
#[derive(Clone, Debug, PartialEq)]
pub struct Levels {
    /// t-level (with communication costs when asked).
    pub t_level: Vec<f64>,
    /// b-level (with communication costs when asked).
    pub b_level: Vec<f64>,
    /// Static level: b-level without communication.
    pub static_level: Vec<f64>,
    /// As-late-as-possible start time: critical-path length minus b-level.
    pub alap: Vec<f64>,
    /// Critical-path length (with communication costs when asked).
    pub cp_length: f64,
}

/// t-levels: longest path from an entry node to each node, excluding the node's own cost.
pub fn t_levels(g: &TaskGraph, with_comm: bool) -> Vec<f64> {
    let mut t = vec![0.0f64; g.len()];
    for &n in g.topo_order() {
        let mut best = 0.0f64;
        for &(p, c) in g.preds(n) {
            let c = if with_comm { c } else { 0.0 };
            best = best.max(t[p] + g.node(p).cost + c);
        }
        t[n] = best;
    }
    t
}

/// b-levels: longest path from each node to an exit node, including the node's own cost.
pub fn b_levels(g: &TaskGraph, with_comm: bool) -> Vec<f64> {
    let mut b = vec![0.0f64; g.len()];
    for &n in g.topo_order().iter().rev() {
        let mut best = 0.0f64;
        for &(s, c) in g.succs(n) {
            let c = if with_comm { c } else { 0.0 };
            best = best.max(b[s] + c);
        }
        b[n] = g.node(n).cost + best;
    }
    b
}

/// Static levels: b-levels without communication costs.
pub fn static_levels(g: &TaskGraph) -> Vec<f64> {
    b_levels(g, false)
}

/// Computes every level at once.
pub fn levels(g: &TaskGraph, with_comm: bool) -> Levels {
    let t_level = t_levels(g, with_comm);
    let b_level = b_levels(g, with_comm);
    let static_level = if with_comm {
        static_levels(g)
    } else {
        b_level.clone()
    };
    let cp_length = (0..g.len())
        .map(|i| t_level[i] + b_level[i])
        .fold(0.0, f64::max);
    let alap = b_level.iter().map(|b| cp_length - b).collect();
    Levels {
        t_level,
        b_level,
        static_level,
        alap,
        cp_length,
    }
}

/// The critical path: its length and its nodes from entry to exit. Ties go to the node
/// declared first. An empty graph has length 0 and no nodes.
pub fn critical_path(g: &TaskGraph, with_comm: bool) -> (f64, Vec<NodeId>) {
    let b = b_levels(g, with_comm);
    let Some(start) = g
        .sources()
        .into_iter()
        .max_by(|&x, &y| b[x].total_cmp(&b[y]).then(y.cmp(&x)))
    else {
        return (0.0, Vec::new());
    };
    let mut path = vec![start];
    let mut n = start;
    loop {
        let target = b[n] - g.node(n).cost;
        let next = g
            .succs(n)
            .iter()
            .filter(|&&(s, c)| {
                let c = if with_comm { c } else { 0.0 };
                (b[s] + c - target).abs() <= 1e-9 * target.abs().max(1.0)
            })
            .map(|&(s, _)| s)
            .min();
        match next {
            Some(s) => {
                path.push(s);
                n = s;
            }
            None => break,
        }
    }
    (b[start], path)
}

/// Topological level of each node: 0 for entry nodes, else one more than the deepest predecessor.
pub fn topo_levels(g: &TaskGraph) -> Vec<usize> {
    let mut lv = vec![0usize; g.len()];
    for &n in g.topo_order() {
        lv[n] = g
            .preds(n)
            .iter()
            .map(|&(p, _)| lv[p] + 1)
            .max()
            .unwrap_or(0);
    }
    lv
}

/// Depth: the number of nodes on the longest path counted in nodes (0 for an empty graph),
/// as the file writes the graph: a feedback edge's two nodes are not counted, and a feedback
/// edge does not order its ends.
pub fn depth(g: &TaskGraph) -> usize {
    let mut lv = vec![0usize; g.len()];
    let mut deepest = 0;
    for &n in g.topo_order() {
        if g.is_feedback_node(n) {
            continue;
        }
        lv[n] = g
            .preds(n)
            .iter()
            .filter(|&&(p, _)| !g.is_feedback_node(p))
            .map(|&(p, _)| lv[p] + 1)
            .max()
            .unwrap_or(0);
        deepest = deepest.max(lv[n] + 1);
    }
    deepest
}

/// Sum of all node costs (0 for a graph without nodes: `Iterator::sum` of no `f64` is -0,
/// which a report would print as `-0.0`).
pub fn total_work(g: &TaskGraph) -> f64 {
    g.nodes().iter().fold(0.0, |w, n| w + n.cost)
}

/// Graphs up to this many nodes get an exact width; larger ones the widest topological level.
pub const EXACT_WIDTH_LIMIT: usize = 2000;

/// How [`width`] was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WidthMethod {
    /// Maximum antichain, exact (Dilworth's theorem through bipartite matching).
    Exact,
    /// The size of the widest topological level: a lower bound on the maximum antichain.
    WidestLevel,
}

/// Width: the largest number of nodes no two of which are ordered by a path (maximum
/// antichain), the most tasks that can ever run at once. A feedback edge's two nodes (which
/// do no work of their own) are not counted.
///
/// Exact for graphs up to [`EXACT_WIDTH_LIMIT`] nodes: by Dilworth's theorem the maximum
/// antichain equals `n` minus a maximum matching in the bipartite graph of the transitive
/// closure (minimum path cover). Beyond it, the widest topological level, which is a lower
/// bound (the nodes of one level are pairwise unordered).
pub fn width(g: &TaskGraph) -> (usize, WidthMethod) {
    let n = g.len();
    if g.written_nodes() == 0 {
        return (0, WidthMethod::Exact);
    }
    let hidden: Vec<bool> = (0..n).map(|v| g.is_feedback_node(v)).collect();
    if n > EXACT_WIDTH_LIMIT {
        let lv = topo_levels(g);
        let mut counts = vec![0usize; lv.iter().max().map_or(0, |m| m + 1)];
        for (v, l) in lv.into_iter().enumerate() {
            if !hidden[v] {
                counts[l] += 1;
            }
        }
        return (
            counts.into_iter().max().unwrap_or(0),
            WidthMethod::WidestLevel,
        );
    }
    // Transitive closure as bitsets, in reverse topological order.
    let words = n.div_ceil(64);
    let mut reach = vec![0u64; n * words];
    let mut tmp = vec![0u64; words];
    for &u in g.topo_order().iter().rev() {
        for &(s, _) in g.succs(u) {
            tmp.copy_from_slice(&reach[s * words..s * words + words]);
            if !hidden[s] {
                tmp[s / 64] |= 1 << (s % 64);
            }
            for (d, t) in reach[u * words..u * words + words].iter_mut().zip(&tmp) {
                *d |= t;
            }
        }
    }
    // Maximum bipartite matching u -> v for v reachable from u (Kuhn's algorithm with a
    // greedy start), iterative to stay off the call stack.
    let mut match_of_v = vec![usize::MAX; n];
    let mut match_of_u = vec![usize::MAX; n];
    let neighbors = |u: usize| {
        let row = &reach[u * words..u * words + words];
        row.iter().enumerate().flat_map(|(wi, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let t = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(wi * 64 + t)
            })
        })
    };
    for (u, mu) in match_of_u.iter_mut().enumerate() {
        if hidden[u] {
            continue;
        }
        if let Some(v) = neighbors(u).find(|&v| match_of_v[v] == usize::MAX) {
            match_of_v[v] = u;
            *mu = v;
        }
    }
    let mut visited = vec![0u32; n];
    let mut stamp = 0u32;
    for root in 0..n {
        if match_of_u[root] != usize::MAX || hidden[root] {
            continue;
        }
        stamp += 1;
        // DFS stack of (u, candidate list)
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(root, neighbors(root).collect())];
        while let Some((u, cands)) = stack.last_mut() {
            let u = *u;
            let Some(v) = cands.pop() else {
                stack.pop();
                continue;
            };
            if visited[v] == stamp {
                continue;
            }
            visited[v] = stamp;
            let w = match_of_v[v];
            if w == usize::MAX {
                // augment along the stack
                let mut v = v;
                let mut u = u;
                loop {
                    let prev = match_of_u[u];
                    match_of_u[u] = v;
                    match_of_v[v] = u;
                    stack.pop();
                    if prev == usize::MAX {
                        break;
                    }
                    v = prev;
                    u = stack.last().expect("augmenting path").0;
                }
                break;
            }
            stack.push((w, neighbors(w).collect()));
        }
    }
    let matched = match_of_u.iter().filter(|&&v| v != usize::MAX).count();
    (g.written_nodes() - matched, WidthMethod::Exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph without nodes has no work: 0, not -0 (printed `-0.0` in a report).
    #[test]
    fn an_empty_graphs_work_is_zero() {
        let w = total_work(&crate::GraphBuilder::new().build().unwrap());
        assert_eq!(w.to_bits(), 0.0f64.to_bits());
    }
}
