//! ETF (Earliest Time First), Hwang, Chow, Anger & Lee (1989), as described by Kwok & Ahmad,
//! "Static scheduling algorithms for allocating directed task graphs to multiprocessors", ACM
//! Computing Surveys 31(4), 1999, section 5.1.4.
//!
//! 1. Compute the static level (SL) of every node.
//! 2. The pool of ready nodes initially holds the entry nodes.
//! 3. Repeatedly compute the earliest start time of every ready node on every processor and
//!    schedule the node-processor pair with the earliest start, with the **non-insertion**
//!    (append) approach. Ties go to the node with the higher SL, then to the smaller node index,
//!    then to the lower processor index.
//!
//! A ready node's data-ready time on each processor is fixed once its last predecessor is
//! placed, so it is computed once; a step then costs `O(ready x P)`.

use crate::Deadline;
use fugue_graph::{analysis, NodeId, TaskGraph};

use crate::list::{self, Dat, Placer};
use crate::schedule::{le, lt, Schedule};

/// Schedules `g` on `p` processors (at least 1) with ETF.
pub fn etf(g: &TaskGraph, p: usize) -> Schedule {
    etf_within(g, p, Deadline::NONE).expect("no deadline")
}

/// [`etf`], or `None` when `deadline` passes first (checked at every task placed).
pub fn etf_within(g: &TaskGraph, p: usize, deadline: Deadline) -> Option<Schedule> {
    let sl = list::quantize(&analysis::static_levels(g));
    let mut pl = Placer::new(g, p);
    // ready tasks and their data-ready times (in `dats`, aligned), a few numbers per task
    let mut ready: Vec<NodeId> = Vec::new();
    let mut dats: Vec<Dat> = Vec::new();
    let mut fresh: Vec<NodeId> = g.sources();
    loop {
        for &t in &fresh {
            let mut d = Dat::default();
            pl.dat(t, &mut d);
            ready.push(t);
            dats.push(d);
        }
        if ready.is_empty() {
            break;
        }
        if deadline.passed() {
            return None;
        }
        // (index in ready, processor, start)
        let mut best: Option<(usize, usize, f64)> = None;
        for (i, &t) in ready.iter().enumerate() {
            let (proc_, s) = pl.earliest(&dats[i]);
            let better = match best {
                None => true,
                Some((bi, _, bs)) => {
                    let bt = ready[bi];
                    lt(s, bs) || (le(s, bs) && (sl[t] > sl[bt] || (sl[t] == sl[bt] && t < bt)))
                }
            };
            if better {
                best = Some((i, proc_, s));
            }
        }
        let (i, proc_, s) = best.expect("ready is not empty");
        let t = ready.swap_remove(i);
        // `dats` stays aligned with `ready`.
        dats.swap_remove(i);
        fresh.clear();
        pl.place(t, proc_, s, &mut fresh);
    }
    Some(pl.schedule)
}
