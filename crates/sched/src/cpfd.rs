//! CPFD (Critical Path Fast Duplication), Ahmad & Kwok (1998), as described by Kwok & Ahmad,
//! "Static scheduling algorithms for allocating directed task graphs to multiprocessors", ACM
//! Computing Surveys 31(4), 1999, section 5.4.6; and its mapping onto P real processors.
//!
//! # The algorithm (unbounded processors, as in the paper)
//! 1. **CPN-dominant sequence** ([`cpn_dominant_sequence`]): the critical-path nodes (CPNs, the
//!    critical path computed with communication costs) in path order, each preceded by its
//!    not-yet-listed ancestors, the in-branch nodes (IBNs): among the parents of a CPN, the one
//!    of the largest b-level first (ties: smaller t-level, then node index); the ancestors of
//!    such a parent recursively, the parent with the larger communication cost to its child
//!    first. Then the out-branch nodes (OBNs), by decreasing b-level (ties: smaller t-level,
//!    then node index) among those whose parents are all listed, so the sequence stays
//!    topological even with zero costs.
//! 2. For each node `n` of the sequence, try every processor that holds a copy of one of its
//!    parents, plus one empty processor. On a processor `P`, `n`'s start time is found by
//!    *attempt duplication*: find the very important parent (VIP), whose data arrive last; if
//!    it has no copy on `P`, duplicate it into the earliest idle slot of `P` that fits (its own
//!    start time found recursively the same way, duplicating its own ancestors); keep the
//!    duplicate if `n`'s start time decreases and repeat with the new VIP, else undo it and
//!    stop.
//! 3. Put `n` (with the duplicates that lowered its start) on the processor where it starts
//!    earliest; ties go to the processor already in use of the lowest index, an empty
//!    processor last.
//!
//! CPFD uses the **insertion** approach: tasks and duplicates go into the earliest idle gap of
//! a processor that is long enough, not only after its last task.
//!
//! # Mapping onto P processors
//! The paper assumes as many processors as needed. [`cpfd`] returns a schedule on at most `P`
//! processors, the shorter of two schedules (ties to the first):
//! - **bounded CPFD** ([`cpfd_bounded`]): the same algorithm where the candidate processors
//!   are all the processors in use, plus one empty processor while fewer than `P` are in use;
//! - **merged CPFD** ([`map_onto`]): the unbounded schedule's processors (clusters, each a
//!   task list with its duplicates) are assigned to `P` processors, the heaviest cluster first,
//!   each to the least loaded processor (LPT); on each processor, copies of the same task are
//!   merged into the earliest one; start times are recomputed by a list-scheduling pass over all
//!   copies in the order of their start times in the unbounded schedule (append policy, each copy
//!   at `max(processor free, data ready)`, data from the predecessor's copy that arrives first);
//!   then every duplicate whose removal does not lengthen the schedule is removed (latest copies
//!   first), so only the duplicates that are still useful remain.
//!
//! Both schedules pass [`crate::verify`]; the tests check it on every graph of the data set.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use fugue_graph::{analysis, NodeId, TaskGraph};

use crate::schedule::{arrival, le, lt, Schedule, Slot};
use crate::Deadline;

/// The CPN-dominant sequence of `g` (see the module documentation).
pub fn cpn_dominant_sequence(g: &TaskGraph) -> Vec<NodeId> {
    cpn_dominant_sequence_within(g, Deadline::NONE).expect("no deadline")
}

/// An out-branch node ready to be listed, ordered as the sequence takes them: the largest
/// b-level first, then the smallest t-level, then the smallest index.
struct OutBranch {
    b: f64,
    t: f64,
    x: NodeId,
}

impl PartialEq for OutBranch {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for OutBranch {}

impl PartialOrd for OutBranch {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for OutBranch {
    fn cmp(&self, o: &Self) -> Ordering {
        self.b
            .total_cmp(&o.b)
            .then(o.t.total_cmp(&self.t))
            .then(o.x.cmp(&self.x))
    }
}

/// [`cpn_dominant_sequence`], or `None` when `deadline` passes first (checked every
/// [`CHECK_EVERY`] nodes listed).
fn cpn_dominant_sequence_within(g: &TaskGraph, deadline: Deadline) -> Option<Vec<NodeId>> {
    let n = g.len();
    let t = analysis::t_levels(g, true);
    let b = analysis::b_levels(g, true);
    let (_, cp) = analysis::critical_path(g, true);
    let mut seq = Vec::with_capacity(n);
    let mut listed = vec![false; n];

    // Lists `x` after its unlisted ancestors. Explicit stack: (node, parent order by b-level?)
    fn include(
        g: &TaskGraph,
        x: NodeId,
        top: bool,
        t: &[f64],
        b: &[f64],
        listed: &mut [bool],
        seq: &mut Vec<NodeId>,
    ) {
        // `y`'s unlisted parents, the one to list first first: the largest by the order
        // (b-level, or the edge's cost then b-level), ties to the smaller t-level, then the
        // smaller id. The order is fixed, so the first still unlisted of this list is always
        // the largest of those left: one sort per node, not a scan of its parents at every
        // pick (a join of 100,000 parents took 10^10 comparisons).
        let parents = |y: NodeId, by_level: bool, listed: &[bool]| -> Vec<NodeId> {
            let mut ps: Vec<(NodeId, f64)> = g
                .preds(y)
                .iter()
                .copied()
                .filter(|&(q, _)| !listed[q])
                .collect();
            ps.sort_by(|&(q1, c1), &(q2, c2)| {
                let level = b[q1]
                    .total_cmp(&b[q2])
                    .then(t[q2].total_cmp(&t[q1]))
                    .then(q2.cmp(&q1));
                let order = if by_level {
                    level
                } else {
                    c1.total_cmp(&c2).then(level)
                };
                order.reverse()
            });
            ps.into_iter().map(|(q, _)| q).collect()
        };
        // stack of (node, its parents in listing order, how many of them were looked at)
        let mut stack = vec![(x, parents(x, top, listed), 0usize)];
        while let Some((y, ps, at)) = stack.last_mut() {
            let y = *y;
            if listed[y] {
                stack.pop();
                continue;
            }
            while *at < ps.len() && listed[ps[*at]] {
                *at += 1;
            }
            match ps.get(*at).copied() {
                Some(q) => {
                    *at += 1;
                    let qs = parents(q, false, listed);
                    stack.push((q, qs, 0));
                }
                None => {
                    listed[y] = true;
                    seq.push(y);
                    stack.pop();
                }
            }
        }
    }

    for (i, &c) in cp.iter().enumerate() {
        if i % CHECK_EVERY == 0 && deadline.passed() {
            return None;
        }
        include(g, c, true, &t, &b, &mut listed, &mut seq);
    }
    // Out-branch nodes: the ready one of the largest b-level first.
    let mut missing: Vec<usize> = (0..n)
        .map(|x| g.preds(x).iter().filter(|&&(q, _)| !listed[q]).count())
        .collect();
    let entry = |x: NodeId| OutBranch {
        b: b[x],
        t: t[x],
        x,
    };
    let mut ready: BinaryHeap<OutBranch> = (0..n)
        .filter(|&x| !listed[x] && missing[x] == 0)
        .map(entry)
        .collect();
    while let Some(OutBranch { x, .. }) = ready.pop() {
        if seq.len() % CHECK_EVERY == 0 && deadline.passed() {
            return None;
        }
        listed[x] = true;
        seq.push(x);
        for &(s, _) in g.succs(x) {
            if !listed[s] {
                missing[s] -= 1;
                if missing[s] == 0 {
                    ready.push(entry(s));
                }
            }
        }
    }
    debug_assert_eq!(seq.len(), n);
    Some(seq)
}

/// How many nodes the CPN-dominant sequence lists between two looks at the clock.
const CHECK_EVERY: usize = 256;

/// A tentative placement on one processor: its slots and the copies added to it.
#[derive(Clone)]
struct Trial {
    p: usize,
    slots: Vec<Slot>,
    local: Vec<(NodeId, f64)>,
}

struct Cpfd<'g> {
    g: &'g TaskGraph,
    procs: Vec<Vec<Slot>>,
    copies: Vec<Vec<(usize, f64)>>,
    bound: Option<usize>,
    deadline: Deadline,
}

/// Earliest start `>= ready` of a task of length `w` in the idle gaps of `slots` (sorted), and
/// the index where its slot goes. A gap before a slot is one only if the task starts no later
/// than that slot, exactly: the tolerance of [`le`] is relative to the times, and at large
/// times (or for tasks far shorter than the times) it would let a short task start inside
/// the slot it is put before.
fn earliest_gap(slots: &[Slot], ready: f64, w: f64) -> (f64, usize) {
    let mut prev = 0.0f64;
    for (i, s) in slots.iter().enumerate() {
        let st = ready.max(prev);
        if st <= s.start && le(st + w, s.start) {
            return (st, i);
        }
        prev = prev.max(s.finish);
    }
    (ready.max(prev), slots.len())
}

impl<'g> Cpfd<'g> {
    fn new(g: &'g TaskGraph, bound: Option<usize>, deadline: Deadline) -> Self {
        Cpfd {
            g,
            procs: Vec::new(),
            copies: vec![Vec::new(); g.len()],
            bound,
            deadline,
        }
    }

    fn arrival_on(&self, trial: &Trial, q: NodeId, c: f64) -> f64 {
        let mut a = arrival(&self.copies[q], trial.p, c);
        for &(x, f) in &trial.local {
            if x == q && f < a {
                a = f;
            }
        }
        a
    }

    fn has_copy_on(&self, trial: &Trial, q: NodeId) -> bool {
        self.copies[q].iter().any(|&(p, _)| p == trial.p)
            || trial.local.iter().any(|&(x, _)| x == q)
    }

    /// Data-ready time of `n` on the trial's processor, and its VIP when duplicating it could
    /// help (it has no copy there yet).
    fn data_ready(&self, trial: &Trial, n: NodeId) -> (f64, Option<NodeId>) {
        let mut dat = 0.0f64;
        let mut vip = None;
        for &(q, c) in self.g.preds(n) {
            let a = self.arrival_on(trial, q, c);
            if a > dat || vip.is_none() {
                dat = dat.max(a);
                vip = Some(q);
            }
        }
        let vip = vip.filter(|&q| !self.has_copy_on(trial, q));
        (dat, vip)
    }

    /// Places `n` on the trial's processor at its earliest start, duplicating ancestors while
    /// that lowers the start; returns the start.
    fn place(&self, trial: &mut Trial, n: NodeId) -> f64 {
        let w = self.g.node(n).cost;
        loop {
            let (dat, vip) = self.data_ready(trial, n);
            let (est, pos) = earliest_gap(&trial.slots, dat, w);
            if let Some(v) = vip {
                let saved_slots = trial.slots.clone();
                let saved_local = trial.local.len();
                self.place(trial, v);
                let (dat2, _) = self.data_ready(trial, n);
                let (est2, _) = earliest_gap(&trial.slots, dat2, w);
                if lt(est2, est) {
                    continue;
                }
                trial.slots = saved_slots;
                trial.local.truncate(saved_local);
            }
            trial.slots.insert(
                pos,
                Slot {
                    task: n,
                    start: est,
                    finish: est + w,
                },
            );
            trial.local.push((n, est + w));
            return est;
        }
    }

    fn candidates(&self, n: NodeId) -> Vec<usize> {
        let np = self.procs.len();
        let room = match self.bound {
            None => true,
            Some(b) => np < b,
        };
        let mut c: Vec<usize> = match self.bound {
            Some(_) => (0..np).collect(),
            None => {
                let mut v: Vec<usize> = self
                    .g
                    .preds(n)
                    .iter()
                    .flat_map(|&(q, _)| self.copies[q].iter().map(|&(p, _)| p))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            }
        };
        if room {
            c.push(np);
        }
        c
    }

    fn schedule_node(&mut self, n: NodeId) {
        let mut best: Option<(f64, Trial)> = None;
        for p in self.candidates(n) {
            let slots = self.procs.get(p).cloned().unwrap_or_default();
            let mut trial = Trial {
                p,
                slots,
                local: Vec::new(),
            };
            let s = self.place(&mut trial, n);
            let better = match &best {
                None => true,
                Some((bs, _)) => lt(s, *bs),
            };
            if better {
                best = Some((s, trial));
            }
        }
        let (_, trial) = best.expect("at least one candidate processor");
        if trial.p == self.procs.len() {
            self.procs.push(Vec::new());
        }
        for &(x, f) in &trial.local {
            self.copies[x].push((trial.p, f));
        }
        self.procs[trial.p] = trial.slots;
    }

    /// The schedule, or `None` when the deadline passed (checked at every node).
    fn run(mut self) -> Option<Schedule> {
        for n in cpn_dominant_sequence_within(self.g, self.deadline)? {
            if self.deadline.passed() {
                return None;
            }
            self.schedule_node(n);
        }
        let mut s = Schedule {
            processors: self.procs,
        };
        s.sort();
        Some(s)
    }
}

/// CPFD on an unbounded number of processors, as in the paper: the schedule uses as many
/// processors as the algorithm opens.
pub fn cpfd_unbounded(g: &TaskGraph) -> Schedule {
    Cpfd::new(g, None, Deadline::NONE)
        .run()
        .expect("no deadline")
}

/// CPFD restricted to at most `p` processors: every processor in use is a candidate, plus one
/// empty processor while fewer than `p` are in use.
pub fn cpfd_bounded(g: &TaskGraph, p: usize) -> Schedule {
    Cpfd::new(g, Some(p.max(1)), Deadline::NONE)
        .run()
        .expect("no deadline")
}

/// CPFD on at most `p` processors: the shorter of [`cpfd_bounded`] and [`map_onto`] applied to
/// [`cpfd_unbounded`] (see the module documentation).
pub fn cpfd(g: &TaskGraph, p: usize) -> Schedule {
    cpfd_within(g, p, Deadline::NONE).expect("no deadline")
}

/// What a deadline cut short of a CPFD schedule that was still made ([`cpfd_within_cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpfdCut {
    /// The schedule on unbounded processors was not complete: the schedule is the bounded
    /// phase's alone.
    Unbounded,
    /// The removal of useless duplicates from the merged schedule stopped before it tried
    /// them all: some may be left in it, or, when the bounded schedule is kept, the merged
    /// one might have been the shorter.
    Duplicates,
}

impl std::fmt::Display for CpfdCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CpfdCut::Unbounded => "its second phase (the schedule on unbounded processors, merged onto the processors) did not finish, and the schedule is its first phase's",
            CpfdCut::Duplicates => "its removal of useless duplicates from its second phase's schedule stopped before it tried them all",
        })
    }
}

/// [`cpfd`] within `deadline`: `None` when the bounded schedule is not complete by then;
/// when the unbounded one is not, the bounded schedule alone; when the removal of useless
/// duplicates is cut short, the merged schedule with the duplicates left in it.
pub fn cpfd_within(g: &TaskGraph, p: usize, deadline: Deadline) -> Option<Schedule> {
    cpfd_within_cut(g, p, deadline).map(|(s, _)| s)
}

/// [`cpfd_within`], with what the deadline cut short of the schedule returned, if anything.
pub fn cpfd_within_cut(
    g: &TaskGraph,
    p: usize,
    deadline: Deadline,
) -> Option<(Schedule, Option<CpfdCut>)> {
    let p = p.max(1);
    let bounded = Cpfd::new(g, Some(p), deadline).run()?;
    let Some(unbounded) = Cpfd::new(g, None, deadline).run() else {
        return Some((bounded, Some(CpfdCut::Unbounded)));
    };
    let (merged, cut) = map_onto_within(g, &unbounded, p, deadline);
    let kept = if lt(merged.makespan(), bounded.makespan()) {
        merged
    } else {
        bounded
    };
    Some((kept, cut.then_some(CpfdCut::Duplicates)))
}

/// A copy in the merged order: real processor, task, and its start in the unbounded schedule.
#[derive(Clone, Copy)]
struct Copy {
    proc_: usize,
    task: NodeId,
}

/// Recomputes start times of `order` (append policy, in that order) on `p` processors;
/// `None` when a copy's predecessor has no earlier copy.
fn simulate(g: &TaskGraph, order: &[Copy], skip: &[bool], p: usize) -> Option<Schedule> {
    let mut avail = vec![0.0f64; p];
    let mut done: Vec<Vec<(usize, f64)>> = vec![Vec::new(); g.len()];
    let mut s = Schedule::new(p);
    for (i, c) in order.iter().enumerate() {
        if skip[i] {
            continue;
        }
        let mut dat = 0.0f64;
        for &(q, cost) in g.preds(c.task) {
            if done[q].is_empty() {
                return None;
            }
            dat = dat.max(arrival(&done[q], c.proc_, cost));
        }
        let start = dat.max(avail[c.proc_]);
        let finish = start + g.node(c.task).cost;
        avail[c.proc_] = finish;
        done[c.task].push((c.proc_, finish));
        s.processors[c.proc_].push(Slot {
            task: c.task,
            start,
            finish,
        });
    }
    Some(s)
}

/// Maps a schedule on any number of processors (e.g. [`cpfd_unbounded`]'s) onto at most `p`
/// processors: LPT assignment of its processors, merging of copies, start times recomputed in
/// the original start order, useless duplicates removed (see the module documentation).
///
/// `s` must be a valid schedule of `g` (see [`crate::verify`]).
pub fn map_onto(g: &TaskGraph, s: &Schedule, p: usize) -> Schedule {
    map_onto_within(g, s, p, Deadline::NONE).0
}

/// [`map_onto`], whose removal of useless duplicates stops at `deadline` (the schedule stays
/// valid, with the duplicates not yet tried); also whether it stopped there.
fn map_onto_within(g: &TaskGraph, s: &Schedule, p: usize, deadline: Deadline) -> (Schedule, bool) {
    let p = p.max(1);
    let clusters: Vec<&Vec<Slot>> = s.processors.iter().filter(|v| !v.is_empty()).collect();
    let mut by_load: Vec<usize> = (0..clusters.len()).collect();
    let load = |c: &Vec<Slot>| c.iter().map(|x| x.finish - x.start).sum::<f64>();
    by_load.sort_by(|&a, &b| {
        load(clusters[b])
            .total_cmp(&load(clusters[a]))
            .then(a.cmp(&b))
    });
    let np = p.min(clusters.len()).max(1);
    let mut real_load = vec![0.0f64; np];
    let mut assign = vec![0usize; clusters.len()];
    for &c in &by_load {
        let (r, _) = real_load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .expect("at least one processor");
        assign[c] = r;
        real_load[r] += load(clusters[c]);
    }
    // Copies per real processor, one per task (the earliest).
    let mut topo_pos = vec![0usize; g.len()];
    for (i, &t) in g.topo_order().iter().enumerate() {
        topo_pos[t] = i;
    }
    let mut first: Vec<Vec<Option<f64>>> = vec![vec![None; g.len()]; np];
    for (ci, c) in clusters.iter().enumerate() {
        for sl in c.iter() {
            let e = &mut first[assign[ci]][sl.task];
            if e.is_none_or(|x| sl.start < x) {
                *e = Some(sl.start);
            }
        }
    }
    let mut keyed: Vec<(f64, usize, Copy)> = Vec::new();
    for (r, row) in first.iter().enumerate() {
        for (t, st) in row.iter().enumerate() {
            if let Some(st) = st {
                keyed.push((*st, topo_pos[t], Copy { proc_: r, task: t }));
            }
        }
    }
    keyed.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.proc_.cmp(&b.2.proc_))
    });
    let order: Vec<Copy> = keyed.into_iter().map(|k| k.2).collect();
    let mut skip = vec![false; order.len()];
    let mut best = simulate(g, &order, &skip, np).expect("a valid input schedule maps");
    // Remove useless duplicates, the latest copies first.
    let mut count = vec![0usize; g.len()];
    for c in &order {
        count[c.task] += 1;
    }
    let mut cut = false;
    for i in (0..order.len()).rev() {
        let t = order[i].task;
        if count[t] < 2 {
            continue;
        }
        if deadline.passed() {
            cut = true;
            break;
        }
        skip[i] = true;
        match simulate(g, &order, &skip, np) {
            Some(s2) if le(s2.makespan(), best.makespan()) => {
                best = s2;
                count[t] -= 1;
            }
            _ => skip[i] = false,
        }
    }
    best.drop_empty_processors();
    (best, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fork whose branches each get a copy of the root on unbounded processors: merged onto
    /// two, one processor holds two clusters and the copy of the root they both had is tried
    /// for removal, which a passed deadline stops (and says).
    #[test]
    fn a_passed_deadline_stops_the_removal_of_duplicates_and_says_so() {
        let mut b = fugue_graph::GraphBuilder::new();
        for (name, cost) in [("a", 1.0), ("b", 5.0), ("c", 5.0), ("d", 5.0)] {
            let mut n = fugue_graph::Node::new(name, "task");
            n.cost = cost;
            b.add_node(n).unwrap();
        }
        for d in 1..4 {
            b.add_edge(0, 0, d, 0, 10.0).unwrap();
        }
        let g = b.build().unwrap();
        let u = cpfd_unbounded(&g);
        assert!(u.has_duplicates());
        let (whole, cut) = map_onto_within(&g, &u, 2, Deadline::NONE);
        assert!(!cut);
        crate::verify(&g, &whole).unwrap();
        let past = Deadline::after(std::time::Duration::ZERO);
        let (s, cut) = map_onto_within(&g, &u, 2, past);
        assert!(cut);
        crate::verify(&g, &s).unwrap();
    }
}
