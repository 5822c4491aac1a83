//! Graph generators: the shapes of the 2019 corpus (line, diamond, rake), layered random
//! graphs, and the corpus's random DAG. Random generators are seeded and reproducible.
//!
//! Every generated graph is a valid audio graph: `osc` sources, `mod`/`mix` inner nodes with
//! their ports declared, and `sink` exits.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::model::{GraphBuilder, Node, NodeId, TaskGraph, Value};

fn osc(name: String, freq: i64) -> Node {
    Node::new(name, "osc")
        .with_attr("volume", Value::Float(1.0))
        .with_attr("freq", Value::Int(freq))
}

fn modn(name: String, freq: i64) -> Node {
    Node::new(name, "mod")
        .with_attr("volume", Value::Float(1.0))
        .with_attr("freq", Value::Int(freq))
}

fn mix(name: String, inputs: usize, outputs: usize) -> Node {
    Node::new(name, "mix")
        .with_ports(inputs, outputs)
        .with_attr("volume", Value::Float(1.0))
}

/// A `mix` as the corpus's diamonds write it: ports declared, no `volume` (1.0 by default).
fn split_or_merge(name: String, inputs: usize, outputs: usize) -> Node {
    Node::new(name, "mix").with_ports(inputs, outputs)
}

fn sink(name: String) -> Node {
    Node::new(name, "sink").with_attr("volume", Value::Float(1.0))
}

struct B {
    g: GraphBuilder,
}

impl B {
    fn node(&mut self, n: Node) -> NodeId {
        self.g.add_node(n).expect("generated names are unique")
    }
    fn edge(&mut self, a: NodeId, ap: usize, b: NodeId, bp: usize) {
        self.g
            .add_edge(a, ap, b, bp, 0.0)
            .expect("generated ports are in range");
    }
    fn count(&self) -> usize {
        self.g.nodes().len()
    }
    fn build(self) -> TaskGraph {
        self.g.build().expect("generated graphs are acyclic")
    }
}

/// A line of `n >= 2` nodes, as `ligne/ligneN.ag`: `n1` osc (110 Hz) -> `n2`..`n(n-1)` mod
/// (55 Hz) -> `nN` sink.
pub fn line(n: usize) -> TaskGraph {
    let n = n.max(2);
    let mut b = B {
        g: GraphBuilder::new(),
    };
    let mut prev = b.node(osc("n1".into(), 110));
    for i in 2..n {
        let m = b.node(modn(format!("n{i}"), 55));
        b.edge(prev, 0, m, 0);
        prev = m;
    }
    let s = b.node(sink(format!("n{n}")));
    b.edge(prev, 0, s, 0);
    b.build()
}

/// Number of nodes of [`diamond`] at a given depth: `5 * 2^depth - 4` (6, 16, 36, 76, 156...).
pub fn diamond_nodes(depth: usize) -> usize {
    5 * (1usize << depth) - 4
}

/// A diamond of `depth >= 1`, as `losange/losangeN.ag`: an `osc` feeds a binary split tree of
/// `mix` nodes (1 input, 2 outputs) with a `mod` (55 Hz) on every branch, `2^depth` branches,
/// then a merge tree of `mix` nodes (2 inputs, 1 output) with a `mod` (110 Hz) after every
/// merge but the last, which feeds the `sink`. Names follow the corpus (`o1`, `mi2`, `mo3`...).
pub fn diamond(depth: usize) -> TaskGraph {
    let depth = depth.max(1);
    let mut b = B {
        g: GraphBuilder::new(),
    };
    let name = |b: &B, prefix: &str| format!("{prefix}{}", b.count() + 1);
    let nm = name(&b, "o");
    let root = b.node(osc(nm, 110));
    // Split levels.
    let mut frontier: Vec<(NodeId, usize)> = vec![(root, 0)];
    for _ in 0..depth {
        let mut splits = Vec::new();
        for &(src, port) in &frontier {
            let nm = name(&b, "mi");
            let m = b.node(split_or_merge(nm, 1, 2));
            b.edge(src, port, m, 0);
            splits.push(m);
        }
        let mut mods = Vec::new();
        for &m in &splits {
            for port in 0..2 {
                let nm = name(&b, "mo");
                let x = b.node(modn(nm, 55));
                b.edge(m, port, x, 0);
                mods.push((x, 0));
            }
        }
        frontier = mods;
    }
    // Merge levels.
    for level in 0..depth {
        let mut merges = Vec::new();
        for pair in frontier.chunks(2) {
            let nm = name(&b, "mi");
            let m = b.node(split_or_merge(nm, 2, 1));
            b.edge(pair[0].0, pair[0].1, m, 0);
            b.edge(pair[1].0, pair[1].1, m, 1);
            merges.push(m);
        }
        if level + 1 == depth {
            frontier = merges.into_iter().map(|m| (m, 0)).collect();
            break;
        }
        let mut mods = Vec::new();
        for &m in &merges {
            let nm = name(&b, "mo");
            let x = b.node(modn(nm, 110));
            b.edge(m, 0, x, 0);
            mods.push((x, 0));
        }
        frontier = mods;
    }
    let nm = name(&b, "s");
    let s = b.node(sink(nm));
    b.edge(frontier[0].0, frontier[0].1, s, 0);
    b.build()
}

/// A rake of `k >= 1` branches, as `rateau/rateauN.ag` (N = 3k + 2): each branch is
/// `osc` (110 Hz) -> `mod` -> `mod` (55 Hz); one `mix` with k inputs merges them into a `sink`.
pub fn rake(k: usize) -> TaskGraph {
    let k = k.max(1);
    let mut b = B {
        g: GraphBuilder::new(),
    };
    let mut ends = Vec::new();
    for _ in 0..k {
        let o = b.node(osc(format!("osc{}", b.count() + 1), 110));
        let m1 = b.node(modn(format!("mod{}", b.count() + 1), 55));
        let m2 = b.node(modn(format!("mod{}", b.count() + 1), 55));
        b.edge(o, 0, m1, 0);
        b.edge(m1, 0, m2, 0);
        ends.push(m2);
    }
    let m = b.node(mix(format!("mix{}", b.count() + 1), k, 1));
    for (i, &e) in ends.iter().enumerate() {
        b.edge(e, 0, m, i);
    }
    let s = b.node(sink(format!("s{}", b.count() + 1)));
    b.edge(m, 0, s, 0);
    b.build()
}

/// Costs drawn uniformly in `[lo, hi]` for random generators (microseconds, as `wcet`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostRange {
    /// Smallest cost.
    pub lo: f64,
    /// Largest cost.
    pub hi: f64,
}

impl Default for CostRange {
    fn default() -> Self {
        CostRange { lo: 1.0, hi: 20.0 }
    }
}

fn draw_cost(rng: &mut SmallRng, c: CostRange) -> f64 {
    let x = if c.hi > c.lo {
        rng.gen_range(c.lo..=c.hi)
    } else {
        c.lo
    };
    // Rounded to the nanosecond for short files, unless that leaves the range (a range below
    // a nanosecond, as `--costs 0.0001,0.0004`, rounded every cost to 0).
    let r = (x * 1000.0).round() / 1000.0;
    if (c.lo..=c.hi).contains(&r) {
        r
    } else {
        x
    }
}

/// Builds an audio graph from a DAG given as, for each node, its predecessor list (node
/// indices lower than its own): nodes without predecessors become `osc`, nodes without
/// successors `sink`, the others `mix` with one input port per predecessor and one output.
fn audio_from_dag(
    preds: &[Vec<usize>],
    names: &[String],
    costs: &[f64],
    rng: &mut SmallRng,
) -> TaskGraph {
    let n = preds.len();
    let mut has_succ = vec![false; n];
    for p in preds {
        for &x in p {
            has_succ[x] = true;
        }
    }
    let mut b = B {
        g: GraphBuilder::new(),
    };
    for i in 0..n {
        let node = if preds[i].is_empty() {
            let f = [110, 220, 330, 440, 550, 660][rng.gen_range(0..6)];
            osc(names[i].clone(), f)
        } else if !has_succ[i] {
            sink(names[i].clone()).with_ports(preds[i].len(), 0)
        } else {
            mix(names[i].clone(), preds[i].len(), 1)
        };
        b.node(node.with_cost(costs[i]));
    }
    for (i, p) in preds.iter().enumerate() {
        for (port, &x) in p.iter().enumerate() {
            b.edge(x, 0, i, port);
        }
    }
    b.build()
}

/// A layered random graph: `layers` layers of `width` nodes; each node of a layer has an edge
/// from each node of the previous layer with probability `p`, and at least one.
pub fn layered(layers: usize, width: usize, p: f64, costs: CostRange, seed: u64) -> TaskGraph {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (layers, width) = (layers.max(1), width.max(1));
    let mut preds = Vec::new();
    let mut names = Vec::new();
    for l in 0..layers {
        for w in 0..width {
            let mut ps = Vec::new();
            if l > 0 {
                let base = (l - 1) * width;
                for j in 0..width {
                    if rng.gen_bool(p.clamp(0.0, 1.0)) {
                        ps.push(base + j);
                    }
                }
                if ps.is_empty() {
                    ps.push(base + rng.gen_range(0..width));
                }
            }
            preds.push(ps);
            names.push(format!("l{l}n{w}"));
        }
    }
    let costs: Vec<f64> = (0..preds.len())
        .map(|_| draw_cost(&mut rng, costs))
        .collect();
    audio_from_dag(&preds, &names, &costs, &mut rng)
}

/// The random DAG of the 2019 corpus: `n` nodes in a random order, each forward edge (from an
/// earlier node to a later one in that order) present with probability `p`. Nodes are named
/// `id-K` by their place in the file, as in the corpus. Below [`SPARSE_BELOW`] the edges are
/// drawn by the gaps between them (linear in nodes plus edges; other graphs than one draw per
/// pair gives for the same seed), else one draw per pair.
pub fn random_dag(n: usize, p: f64, costs: CostRange, seed: u64) -> TaskGraph {
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = n.max(1);
    // order[i] = name index of the i-th node of the random order
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.gen_range(0..=i);
        order.swap(i, j);
    }
    let p = p.clamp(0.0, 1.0);
    let preds = if p >= SPARSE_BELOW {
        // One draw per pair: the graphs of the corpus's generator, seed for seed.
        let mut preds = vec![Vec::new(); n];
        for (j, pj) in preds.iter_mut().enumerate() {
            for i in 0..j {
                if rng.gen_bool(p) {
                    pj.push(i);
                }
            }
        }
        preds
    } else {
        sparse_preds(n, p, &mut rng)
    };
    let names: Vec<String> = order.iter().map(|k| format!("id-{k}")).collect();
    let costs: Vec<f64> = (0..n).map(|_| draw_cost(&mut rng, costs)).collect();
    audio_from_dag(&preds, &names, &costs, &mut rng)
}

/// Below this edge probability [`random_dag`] draws the gaps between edges
/// (`sparse_preds`) instead of one number per pair of nodes.
pub const SPARSE_BELOW: f64 = 1.0 / 64.0;

/// The forward edges of [`random_dag`], each present with probability `p`, as predecessor
/// lists (ascending), in time linear in nodes plus edges: the pairs `(i, j)`, `i < j`, are
/// taken in order (by `j`, then `i`), and the number of pairs skipped before the next edge is
/// drawn from its geometric distribution (Batagelj & Brandes, "Efficient generation of large
/// random networks", Physical Review E 71, 036113, 2005).
fn sparse_preds(n: usize, p: f64, rng: &mut SmallRng) -> Vec<Vec<usize>> {
    let mut preds = vec![Vec::new(); n];
    if p <= 0.0 || n < 2 {
        return preds;
    }
    // ln(1 - p), exact for small p.
    let ln_q = (-p).ln_1p();
    // The next pair to consider is (next, j): the `next`-th of row j.
    let (mut j, mut next) = (1usize, 0u64);
    loop {
        // 1 - u is in (0, 1]: its logarithm is finite.
        let u: f64 = rng.gen();
        let skip = ((1.0 - u).ln() / ln_q).floor();
        // A skip beyond the pairs left ends the draw (the cast saturates).
        let mut i = next.saturating_add(skip as u64);
        while j < n && i >= j as u64 {
            i -= j as u64;
            j += 1;
        }
        if j >= n {
            return preds;
        }
        preds[j].push(i as usize);
        next = i + 1;
    }
}

/// The most nodes a generator makes unless told to go beyond ([`Shape::check_size`]).
pub const MAX_NODES: f64 = 1_000_000.0;
/// The most edges (expected, for random shapes) a generator makes unless told to go beyond.
pub const MAX_EDGES: f64 = 10_000_000.0;

/// A shape to generate, with its sizes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// [`line()`] of `nodes` nodes.
    Line {
        /// Nodes (at least 2).
        nodes: usize,
    },
    /// [`diamond`] of this depth.
    Diamond {
        /// Levels of splits (1 to 20).
        depth: usize,
    },
    /// [`rake`] of this many branches.
    Rake {
        /// Branches (at least 1).
        branches: usize,
    },
    /// [`layered`].
    Layered {
        /// Layers.
        layers: usize,
        /// Nodes per layer.
        width: usize,
        /// Edge probability.
        p: f64,
        /// Node costs.
        costs: CostRange,
        /// Seed.
        seed: u64,
    },
    /// [`random_dag`].
    Random {
        /// Nodes (at least 1).
        nodes: usize,
        /// Edge probability.
        p: f64,
        /// Node costs.
        costs: CostRange,
        /// Seed.
        seed: u64,
    },
}

/// A graph larger than [`MAX_NODES`] or [`MAX_EDGES`].
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("this graph would have {} {what}, more than the limit of {max:.0}", count_text(*.count))]
pub struct TooLarge {
    /// `nodes` or `edges (expected)`.
    pub what: &'static str,
    /// How many.
    pub count: f64,
    /// The limit.
    pub max: f64,
}

/// A count as words can read it: whole below 10^15, else in scientific notation (`5.4e301`).
fn count_text(count: f64) -> String {
    if count < 1e15 {
        format!("{count:.0}")
    } else {
        format!("{count:.1e}")
    }
}

/// The depth of the diamond whose size is nearest to `nodes` (1 to 20); for `nodes` within
/// [`MAX_NODES`], among the diamonds within it (a million nodes gives the 655,356 of depth
/// 17, not the 1,310,716 of depth 18 that the limit refuses).
pub fn nearest_diamond(nodes: usize) -> usize {
    let within = nodes as f64 <= MAX_NODES;
    (1..=20)
        .filter(|&d| !within || diamond_nodes(d) as f64 <= MAX_NODES)
        .min_by_key(|&d| diamond_nodes(d).abs_diff(nodes))
        .unwrap_or(1)
}

impl Shape {
    /// Nodes and (expected, for random shapes) edges of the graph.
    pub fn size(&self) -> (f64, f64) {
        match *self {
            Shape::Line { nodes } => (nodes as f64, nodes as f64),
            Shape::Diamond { depth } => {
                // In floating point: a depth of 64 or more is a size, not an overflow (and one
                // above 1000 counts as 1000, a finite size far beyond any limit).
                let n = 5.0 * 2f64.powi(depth.min(1000) as i32) - 4.0;
                (n, 2.0 * n)
            }
            Shape::Rake { branches } => {
                let n = 3.0 * branches as f64 + 2.0;
                (n, n)
            }
            Shape::Layered {
                layers, width, p, ..
            } => {
                // Edges run between consecutive layers only; a node after the first layer has
                // at least one predecessor.
                let (layers, width) = (layers.max(1) as f64, width.max(1) as f64);
                (
                    layers * width,
                    (layers - 1.0) * width * (width * p).max(1.0),
                )
            }
            Shape::Random { nodes, p, .. } => {
                let n = nodes as f64;
                (n, n * (n - 1.0) / 2.0 * p)
            }
        }
    }

    /// Refuses a graph beyond [`MAX_NODES`] nodes or [`MAX_EDGES`] edges.
    pub fn check_size(&self) -> Result<(), TooLarge> {
        let (nodes, edges) = self.size();
        if nodes > MAX_NODES {
            Err(TooLarge {
                what: "nodes",
                count: nodes,
                max: MAX_NODES,
            })
        } else if edges > MAX_EDGES {
            Err(TooLarge {
                what: "edges (expected)",
                count: edges,
                max: MAX_EDGES,
            })
        } else {
            Ok(())
        }
    }

    /// The graph.
    pub fn generate(&self) -> TaskGraph {
        match *self {
            Shape::Line { nodes } => line(nodes),
            Shape::Diamond { depth } => diamond(depth),
            Shape::Rake { branches } => rake(branches),
            Shape::Layered {
                layers,
                width,
                p,
                costs,
                seed,
            } => layered(layers, width, p, costs, seed),
            Shape::Random {
                nodes,
                p,
                costs,
                seed,
            } => random_dag(nodes, p, costs, seed),
        }
    }
}

impl std::str::FromStr for CostRange {
    type Err = String;

    /// `LO,HI` with `0 <= LO <= HI`.
    fn from_str(s: &str) -> Result<CostRange, String> {
        let parts: Vec<Option<f64>> = s.split(',').map(|s| s.trim().parse().ok()).collect();
        match parts.as_slice() {
            [Some(lo), Some(hi)] if *lo >= 0.0 && hi >= lo && *hi <= crate::MAX_COST => {
                Ok(CostRange { lo: *lo, hi: *hi })
            }
            _ => Err(format!(
                "--costs `{s}` must be two numbers LO,HI with 0 <= LO <= HI <= 1e12"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diamond far beyond the limit says its size in figures (it said "inf nodes").
    #[test]
    fn a_huge_diamonds_size_is_a_figure() {
        let e = Shape::Diamond { depth: 1_000_000 }
            .check_size()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "this graph would have 5.4e301 nodes, more than the limit of 1000000"
        );
        let e = Shape::Diamond { depth: 18 }.check_size().unwrap_err();
        assert!(
            e.to_string()
                .starts_with("this graph would have 1310716 nodes"),
            "{e}"
        );
    }

    /// The nearest diamond to a size within the limit is within it; a size beyond it gets the
    /// nearest, which the limit refuses.
    #[test]
    fn the_nearest_diamond_of_a_size_within_the_limit_is_within_it() {
        assert_eq!(nearest_diamond(156), 5);
        assert_eq!(nearest_diamond(1_000_000), 17);
        assert_eq!(diamond_nodes(17), 655_356);
        assert_eq!(nearest_diamond(1_200_000), 18);
        assert_eq!(nearest_diamond(0), 1);
    }

    /// A layered graph's edges run between consecutive layers: one layer has none, and the
    /// expected count is what generating gives, within a few percent.
    #[test]
    fn a_layered_graphs_expected_edges_are_between_its_layers() {
        let shape = |layers, width, p| Shape::Layered {
            layers,
            width,
            p,
            costs: CostRange::default(),
            seed: 7,
        };
        assert_eq!(shape(1, 100_000, 0.3).size().1, 0.0);
        assert!(shape(1, 100_000, 0.3).check_size().is_ok());
        assert!(shape(2, 5000, 0.3).check_size().is_ok());
        let s = shape(5, 40, 0.25);
        let (nodes, edges) = s.size();
        let g = s.generate();
        let between = g
            .edges()
            .iter()
            .filter(|e| g.node(e.src).name.starts_with('l') && g.node(e.dst).name.starts_with('l'))
            .count() as f64;
        assert_eq!(nodes, 200.0);
        assert!(
            (between - edges).abs() < 0.15 * edges,
            "{between} against {edges}"
        );
    }
}
