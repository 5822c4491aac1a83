//! Schedule metrics: makespan, lower bounds, NSL, speedup, efficiency.
//!
//! Definitions of Kwok & Ahmad (ACM Computing Surveys 31(4), 1999, section 6): the normalized
//! schedule length (NSL) divides the schedule length by the sum of the computation costs of the
//! nodes on the critical path (the critical path computed with communication costs).

use fugue_graph::{analysis, TaskGraph};

use crate::schedule::Schedule;

/// The lower bound on the makespan of any schedule of `g` on `p` processors:
/// `max(computation-only critical path, total work / p)`.
///
/// It holds with or without duplication (duplicates only add work, and no copy of a task can
/// start before its computation-only t-level).
pub fn lower_bound(g: &TaskGraph, p: usize) -> f64 {
    let (cp, _) = analysis::critical_path(g, false);
    let work = analysis::total_work(g);
    cp.max(work / p.max(1) as f64)
}

/// Metrics of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// The finish time of the last task.
    pub makespan: f64,
    /// [`lower_bound`] for the number of processors.
    pub lower_bound: f64,
    /// Computation-only critical-path length.
    pub cp_length: f64,
    /// Total work: the sum of all computation costs.
    pub total_work: f64,
    /// Makespan / sum of the computation costs on the critical path (computed with
    /// communication costs); `None` when that sum is 0.
    pub nsl: Option<f64>,
    /// Total work / makespan; `None` for a zero makespan.
    pub speedup: Option<f64>,
    /// Speedup / number of processors.
    pub efficiency: Option<f64>,
    /// Number of processors the metrics count (the schedule's, or those asked for).
    pub processors: usize,
}

impl Metrics {
    /// Computes the metrics of `s` for `g`, counting `p` processors (use
    /// `s.num_processors()` for a schedule on unbounded processors).
    pub fn new(g: &TaskGraph, s: &Schedule, p: usize) -> Metrics {
        let p = p.max(1);
        let makespan = s.makespan();
        let (cp_length, _) = analysis::critical_path(g, false);
        let total_work = analysis::total_work(g);
        let (_, cp_nodes) = analysis::critical_path(g, true);
        let cp_comp: f64 = cp_nodes.iter().map(|&n| g.node(n).cost).sum();
        let nsl = (cp_comp > 0.0).then(|| makespan / cp_comp);
        let speedup = (makespan > 0.0).then(|| total_work / makespan);
        Metrics {
            makespan,
            lower_bound: cp_length.max(total_work / p as f64),
            cp_length,
            total_work,
            nsl,
            speedup,
            efficiency: speedup.map(|s| s / p as f64),
            processors: p,
        }
    }
}
