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

use crate::list::{self, Placer};
use crate::schedule::{le, lt, Schedule};

/// Schedules `g` on `p` processors (at least 1) with ETF.
pub fn etf(g: &TaskGraph, p: usize) -> Schedule {
    etf_within(g, p, Deadline::NONE).expect("no deadline")
}

/// [`etf`], or `None` when `deadline` passes first (checked at every task placed).
pub fn etf_within(g: &TaskGraph, p: usize, deadline: Deadline) -> Option<Schedule> {
    let sl = list::quantize(&analysis::static_levels(g));
    let mut pl = Placer::new(g, p);
    let np = pl.avail.len();
    // ready tasks and their data-ready times (np per task, in `dats`)
    let mut ready: Vec<NodeId> = Vec::new();
    let mut dats: Vec<f64> = Vec::new();
    let mut tmp = Vec::new();
    let mut fresh: Vec<NodeId> = g.sources();
    loop {
        for &t in &fresh {
            pl.dat(t, &mut tmp);
            ready.push(t);
            dats.extend_from_slice(&tmp);
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
            let d = &dats[i * np..i * np + np];
            let (proc_, s) = pl.earliest(d);
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
        // keep `dats` aligned with `ready` (swap_remove moved the last entry to i)
        let last = ready.len();
        if i != last {
            let (a, b) = dats.split_at_mut(last * np);
            a[i * np..i * np + np].copy_from_slice(&b[..np]);
        }
        dats.truncate(last * np);
        fresh.clear();
        pl.place(t, proc_, s, &mut fresh);
    }
    Some(pl.schedule)
}
