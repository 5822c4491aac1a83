//! Shared machinery of the list schedulers without duplication (HLFET, ETF, random, the exact
//! search): placement of tasks on processors, data-ready times, priority keys.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fugue_graph::{NodeId, TaskGraph};

use crate::schedule::{Schedule, Slot};

/// The processors' available times in a tree of minima, so that the processor where a task
/// starts earliest is found in `O((k + 1) log P)` for a task of `k` predecessors, not by a
/// scan of all `P` processors (which made a list schedule of 200,000 tasks on 4,096
/// processors take seconds past its time limit).
pub(crate) struct Avail {
    /// Leaves from `size`; `tree[i]` is the least of its two children.
    tree: Vec<f64>,
    size: usize,
}

impl Avail {
    fn new(n: usize) -> Avail {
        let size = n.next_power_of_two();
        let mut tree = vec![f64::INFINITY; 2 * size];
        tree[size..size + n].fill(0.0);
        for i in (1..size).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        Avail { tree, size }
    }

    /// Processor `p`'s available time.
    pub fn get(&self, p: usize) -> f64 {
        self.tree[self.size + p]
    }

    fn set(&mut self, p: usize, v: f64) {
        let mut i = self.size + p;
        self.tree[i] = v;
        while i > 1 {
            i /= 2;
            self.tree[i] = self.tree[2 * i].min(self.tree[2 * i + 1]);
        }
    }

    /// The lowest processor whose available time is at most `x`.
    fn lowest_at_most(&self, x: f64) -> Option<usize> {
        // (A NaN bound finds nothing either.)
        if self.tree[1]
            .partial_cmp(&x)
            .is_none_or(|o| o == std::cmp::Ordering::Greater)
        {
            return None;
        }
        let mut i = 1;
        while i < self.size {
            i = if self.tree[2 * i] <= x {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some(i - self.size)
    }

    /// The earliest available time and the lowest processor that has it.
    fn least(&self) -> (usize, f64) {
        let mut i = 1;
        while i < self.size {
            i = if self.tree[2 * i] <= self.tree[2 * i + 1] {
                2 * i
            } else {
                2 * i + 1
            };
        }
        (i - self.size, self.tree[i])
    }
}

/// When a task's data is ready on each processor: `others` on every processor that runs
/// none of its predecessors (the latest predecessor's finish plus its communication cost),
/// and, for each processor that runs some, the time there (its own predecessors' data costs
/// nothing to move).
#[derive(Clone, Debug, Default)]
pub(crate) struct Dat {
    pub others: f64,
    pub own: Vec<(usize, f64)>,
}

/// A schedule under construction without duplication, with the *append* (non-insertion)
/// policy: a task goes after the last task of its processor.
pub(crate) struct Placer<'g> {
    pub g: &'g TaskGraph,
    pub avail: Avail,
    pub proc_of: Vec<usize>,
    pub finish: Vec<f64>,
    pub schedule: Schedule,
    /// Number of unscheduled predecessors of each task.
    pub missing: Vec<usize>,
}

impl<'g> Placer<'g> {
    pub fn new(g: &'g TaskGraph, p: usize) -> Self {
        let p = p.max(1);
        Placer {
            g,
            avail: Avail::new(p),
            proc_of: vec![usize::MAX; g.len()],
            finish: vec![0.0; g.len()],
            schedule: Schedule::new(p),
            missing: (0..g.len()).map(|t| g.preds(t).len()).collect(),
        }
    }

    /// Data-ready times of `t` (all its predecessors must be placed): on processor `p`, the
    /// latest of its predecessors' finish times, plus their communication costs for those on
    /// other processors (0 with none).
    pub fn dat(&self, t: NodeId, out: &mut Dat) {
        out.own.clear();
        let preds = self.g.preds(t);
        out.others = preds
            .iter()
            .map(|&(q, c)| self.finish[q] + c)
            .fold(0.0, f64::max);
        for &(q, _) in preds {
            let pq = self.proc_of[q];
            debug_assert!(pq != usize::MAX, "predecessor placed");
            if out.own.iter().any(|&(p, _)| p == pq) {
                continue;
            }
            let d = preds
                .iter()
                .map(|&(r, c)| {
                    if self.proc_of[r] == pq {
                        self.finish[r]
                    } else {
                        self.finish[r] + c
                    }
                })
                .fold(0.0, f64::max);
            out.own.push((pq, d));
        }
    }

    /// The processor where a task of data-ready times `dat` starts earliest, and that start
    /// (ties to the lowest processor index).
    pub fn earliest(&mut self, dat: &Dat) -> (usize, f64) {
        // The processors of no predecessor: left out of the tree for the query.
        for &(p, _) in &dat.own {
            self.avail.set(p, f64::INFINITY);
        }
        let mut best = match self.avail.lowest_at_most(dat.others) {
            Some(p) => (p, dat.others),
            None => match self.avail.least() {
                (p, a) if a.is_finite() => (p, a),
                _ => (usize::MAX, f64::INFINITY),
            },
        };
        // Back in: a processor's available time is the finish of its last task (`place`).
        for &(p, _) in &dat.own {
            let a = self.schedule.processors[p].last().map_or(0.0, |s| s.finish);
            self.avail.set(p, a);
        }
        for &(p, d) in &dat.own {
            let s = self.avail.get(p).max(d);
            if s < best.1 || (s == best.1 && p < best.0) {
                best = (p, s);
            }
        }
        best
    }

    /// Places `t` on `p` at `start` (appended); returns the tasks that became ready.
    pub fn place(&mut self, t: NodeId, p: usize, start: f64, newly_ready: &mut Vec<NodeId>) {
        let finish = start + self.g.node(t).cost;
        self.proc_of[t] = p;
        self.finish[t] = finish;
        self.avail.set(p, finish);
        self.schedule.processors[p].push(Slot {
            task: t,
            start,
            finish,
        });
        for &(s, _) in self.g.succs(t) {
            self.missing[s] -= 1;
            if self.missing[s] == 0 {
                newly_ready.push(s);
            }
        }
    }
}

/// Quantizes levels for tie comparisons: values equal up to ~1e-12 of the largest become equal
/// integers (sums of fractional costs differ in their last bits depending on the order).
pub(crate) fn quantize(values: &[f64]) -> Vec<i64> {
    let scale = values
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-300);
    values
        .iter()
        .map(|v| (v / scale * 1e12).round() as i64)
        .collect()
}

/// List scheduling by a fixed priority order, append policy: repeatedly take the ready task of
/// the smallest `rank` and put it on the processor where it starts earliest (ties to the lowest
/// processor index). The ready tasks wait in a binary heap by rank (ranks are distinct): each
/// step costs `O(log n + (k + 1) log P)` for a task of `k` predecessors (and their edges
/// squared in the worst case), whatever the number of ready tasks.
pub(crate) fn by_rank(g: &TaskGraph, p: usize, rank: &[usize]) -> Schedule {
    let mut pl = Placer::new(g, p);
    let mut ready: BinaryHeap<Reverse<(usize, NodeId)>> = g
        .sources()
        .into_iter()
        .map(|t| Reverse((rank[t], t)))
        .collect();
    let mut dat = Dat::default();
    let mut fresh = Vec::new();
    while let Some(Reverse((_, t))) = ready.pop() {
        pl.dat(t, &mut dat);
        let (proc_, start) = pl.earliest(&dat);
        fresh.clear();
        pl.place(t, proc_, start, &mut fresh);
        ready.extend(fresh.iter().map(|&s| Reverse((rank[s], s))));
    }
    pl.schedule
}

/// Turns an order (task ids, first = highest priority) into ranks indexed by task.
pub(crate) fn ranks(order: &[NodeId]) -> Vec<usize> {
    let mut r = vec![0; order.len()];
    for (i, &t) in order.iter().enumerate() {
        r[t] = i;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_graph::gen::{self, CostRange};

    /// `by_rank` as it was before the tree of minima: every processor scanned for every task,
    /// with its data-ready time computed in full.
    fn by_rank_scanning(g: &TaskGraph, p: usize, rank: &[usize]) -> Vec<(usize, f64)> {
        let p = p.max(1);
        let mut avail = vec![0.0f64; p];
        let mut proc_of = vec![usize::MAX; g.len()];
        let mut finish = vec![0.0f64; g.len()];
        let mut missing: Vec<usize> = (0..g.len()).map(|t| g.preds(t).len()).collect();
        let mut ready: BinaryHeap<Reverse<(usize, NodeId)>> = g
            .sources()
            .into_iter()
            .map(|t| Reverse((rank[t], t)))
            .collect();
        let mut out = vec![(usize::MAX, 0.0); g.len()];
        while let Some(Reverse((_, t))) = ready.pop() {
            let mut best = (0, f64::INFINITY);
            for (q, &a) in avail.iter().enumerate() {
                let mut d = 0.0f64;
                for &(r, c) in g.preds(t) {
                    let x = if proc_of[r] == q {
                        finish[r]
                    } else {
                        finish[r] + c
                    };
                    if x > d {
                        d = x;
                    }
                }
                let s = a.max(d);
                if s < best.1 {
                    best = (q, s);
                }
            }
            let (q, s) = best;
            proc_of[t] = q;
            finish[t] = s + g.node(t).cost;
            avail[q] = finish[t];
            out[t] = (q, s);
            for &(v, _) in g.succs(t) {
                missing[v] -= 1;
                if missing[v] == 0 {
                    ready.push(Reverse((rank[v], v)));
                }
            }
        }
        out
    }

    /// The tree of minima places every task where the full scan did, at the same start.
    #[test]
    fn the_tree_of_minima_places_as_the_full_scan() {
        for seed in 0..40u64 {
            let mut g = gen::random_dag(
                30 + seed as usize,
                0.15,
                CostRange { lo: 0.5, hi: 9.0 },
                seed,
            );
            if seed % 2 == 1 {
                g.set_comm_costs(3.0);
            }
            let order: Vec<NodeId> = (0..g.len()).rev().collect();
            let rank = ranks(&order);
            for p in [1, 2, 3, 5, 16, 64] {
                let s = by_rank(&g, p, &rank);
                let want = by_rank_scanning(&g, p, &rank);
                for (q, slots) in s.processors.iter().enumerate() {
                    for slot in slots {
                        assert_eq!(
                            want[slot.task],
                            (q, slot.start),
                            "seed {seed}, P={p}, task {}",
                            slot.task
                        );
                    }
                }
            }
        }
    }
}
