//! The peers: what fugue is measured against, and the checks they share with it.
//!
//! - [`probe`]: a node kind that does no DSP but checks, at every run, that the executor runs
//!   each task exactly once per cycle and after all of its predecessors; [`probe::Probe`]
//!   rewrites any graph so that every node is such an empty, checking node.
//! - [`rayon_dag`]: the same DAG run by rayon (a `rayon::scope` per cycle, a task spawned when
//!   its activation counter reaches zero), as an [`Executor`](fugue_exec::Executor) so that it
//!   runs the same [`Plan`] and is checked the same way.
//! - [`edge_list`]: the plan's DAG as a plain text edge list, the input of the oneTBB
//!   flow-graph harness (`benches/peers/tbb/`, built by `scripts/bench-peers.sh`), and
//!   [`tbb`], the driver that runs that harness and reads its result;
//! - [`queues`]: the peer queues of the ring benchmark (crossbeam `ArrayQueue`, `rtrb`,
//!   `std::sync::mpsc::sync_channel`) behind one interface.

pub mod probe;
pub mod queues;
pub mod rayon_dag;
pub mod tbb;

use fugue_exec::Plan;

/// The plan's DAG as text: a first line `fugue-dag 1`, then `TASKS EDGES`, then one line
/// `SRC DST` per edge between distinct tasks (task indices of the plan, which are in
/// topological order). This is what the oneTBB harness reads.
///
/// ```
/// let g = fugue_graph::gen::line(3);
/// let reg = fugue_dsp::Registry::with_builtin_kinds();
/// let plan = fugue_exec::Plan::compile(&g, &reg, &Default::default()).unwrap();
/// assert_eq!(fugue_bench::peers::edge_list(&plan), "fugue-dag 1\n3 2\n0 1\n1 2\n");
/// ```
pub fn edge_list(plan: &Plan) -> String {
    let m: usize = (0..plan.len()).map(|i| plan.successors(i).len()).sum();
    let mut s = format!("fugue-dag 1\n{} {}\n", plan.len(), m);
    for i in 0..plan.len() {
        for &j in plan.successors(i) {
            s.push_str(&format!("{i} {j}\n"));
        }
    }
    s
}
