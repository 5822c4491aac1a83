//! HLFET (Highest Level First with Estimated Times), Adam, Chandy & Dickson (1974), as
//! described by Kwok & Ahmad, "Static scheduling algorithms for allocating directed task graphs
//! to multiprocessors", ACM Computing Surveys 31(4), 1999, section 5.1.1.
//!
//! 1. Compute the static level (SL: b-level without communication) of every node.
//! 2. The ready list holds the nodes whose predecessors are all scheduled, by decreasing SL.
//! 3. Repeatedly schedule the first node of the ready list on the processor that allows its
//!    earliest start time, with the **non-insertion** (append) approach: a task goes after the
//!    last task of its processor, idle gaps are not filled.
//!
//! Ties in SL follow CP/MISF (Kasahara & Narita, 1984): the node with more immediate successors
//! first, then the node of the smaller index (declaration order). Ties in start time between
//! processors go to the lowest processor index.

use fugue_graph::{analysis, TaskGraph};

use crate::list;
use crate::schedule::Schedule;

/// The HLFET priority order: tasks by decreasing static level, then more immediate successors,
/// then node index. Exposed for tests and for the exact search's branching order.
pub fn priority_order(g: &TaskGraph) -> Vec<usize> {
    let sl = list::quantize(&analysis::static_levels(g));
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.sort_by(|&a, &b| {
        sl[b]
            .cmp(&sl[a])
            .then(g.succs(b).len().cmp(&g.succs(a).len()))
            .then(a.cmp(&b))
    });
    order
}

/// Schedules `g` on `p` processors (at least 1) with HLFET.
pub fn hlfet(g: &TaskGraph, p: usize) -> Schedule {
    let rank = list::ranks(&priority_order(g));
    list::by_rank(g, p, &rank)
}
