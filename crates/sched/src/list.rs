//! Shared machinery of the list schedulers without duplication (HLFET, ETF, random, the exact
//! search): placement of tasks on processors, data-ready times, priority keys.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fugue_graph::{NodeId, TaskGraph};

use crate::schedule::{Schedule, Slot};

/// A schedule under construction without duplication, with the *append* (non-insertion)
/// policy: a task goes after the last task of its processor.
pub(crate) struct Placer<'g> {
    pub g: &'g TaskGraph,
    pub avail: Vec<f64>,
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
            avail: vec![0.0; p],
            proc_of: vec![usize::MAX; g.len()],
            finish: vec![0.0; g.len()],
            schedule: Schedule::new(p),
            missing: (0..g.len()).map(|t| g.preds(t).len()).collect(),
        }
    }

    /// Data-ready time of `t` on every processor (all its predecessors must be placed).
    pub fn dat(&self, t: NodeId, out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.avail.len(), 0.0);
        for &(q, c) in self.g.preds(t) {
            let (pq, f) = (self.proc_of[q], self.finish[q]);
            debug_assert!(pq != usize::MAX, "predecessor placed");
            for (p, d) in out.iter_mut().enumerate() {
                let a = if p == pq { f } else { f + c };
                if a > *d {
                    *d = a;
                }
            }
        }
    }

    /// The processor where `t` starts earliest given its data-ready times, and that start
    /// (ties to the lowest processor index).
    pub fn earliest(&self, dat: &[f64]) -> (usize, f64) {
        let mut best = (0, f64::INFINITY);
        for (p, (&a, &d)) in self.avail.iter().zip(dat).enumerate() {
            let s = a.max(d);
            if s < best.1 {
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
        self.avail[p] = finish;
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
/// step costs `O(log n + P)` plus the task's edges, whatever the number of ready tasks.
pub(crate) fn by_rank(g: &TaskGraph, p: usize, rank: &[usize]) -> Schedule {
    let mut pl = Placer::new(g, p);
    let mut ready: BinaryHeap<Reverse<(usize, NodeId)>> = g
        .sources()
        .into_iter()
        .map(|t| Reverse((rank[t], t)))
        .collect();
    let mut dat = Vec::new();
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
