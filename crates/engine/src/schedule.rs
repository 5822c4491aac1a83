//! Static schedules for the static executor: the node costs (declared, measured now, or read
//! from a file), a schedule of the plan's unit graph from `fugue-sched`, and the adapter from
//! that schedule to the executor's per-thread unit lists.

use fugue_dsp::Registry;
use fugue_exec::Plan;
use fugue_graph::TaskGraph;

use crate::executor_choice::{BuildError, ExecutorChoice};

/// A static schedule of `plan` (compiled from `graph` with the kinds of `registry`) on
/// `threads` threads as `choice` asks: the per-thread unit lists, and a warning when the
/// time limit ([`ExecutorChoice::time_limit`]) cut the algorithm short, made it give way to
/// HLFET, or ended the exact search before it proved its schedule optimal.
pub(crate) fn static_lists(
    graph: &TaskGraph,
    registry: &Registry,
    plan: &Plan,
    choice: &ExecutorChoice,
    threads: usize,
) -> Result<(Vec<Vec<u32>>, Option<String>), BuildError> {
    let mut g = graph.clone();
    choice
        .costs
        .apply(&mut g, plan.sample_rate(), plan.block(), registry)?;
    // The schedulers see the unit graph: chains are one task each, at the sum of their
    // costs (they run back to back on one thread whatever the schedule says).
    let ug = plan.unit_graph(&g, &g.costs());
    let out = fugue_sched::run(
        &ug,
        choice.algorithm,
        &fugue_sched::Options {
            processors: threads,
            seed: choice.seed,
            time_limit: choice.time_limit,
        },
    )?;
    let mut lists = lists_from_unit_schedule(&out.schedule, plan);
    lists.resize(threads, Vec::new());
    // The exact search cut short returns the best schedule it found, which may not be
    // optimal: said as the heuristics' cuts are.
    let unproven = (out.optimal == Some(false)).then(|| {
        format!(
            "optimal did not prove its schedule optimal within the time limit of {} s, and its best schedule found is used",
            choice.time_limit.as_secs_f64()
        )
    });
    let cut: Vec<String> = out.note.into_iter().chain(unproven).collect();
    let note = (!cut.is_empty()).then(|| {
        format!("the static schedule: {} (this limit is fixed for the static executor; --algorithm hlfet always finishes within it)", cut.join("; "))
    });
    Ok((lists, note))
}

/// Per-thread unit lists of `plan` from a static schedule of its unit graph
/// ([`Plan::unit_graph`]: schedule task `u` is unit `u`).
///
/// Processor `p` of the schedule becomes thread `p` (thread 0 is the caller). Each list is in
/// start-time order. A unit the schedule duplicates (CPFD) is kept once: on the processor
/// whose copy finishes first (ties: the lower processor); its other copies are dropped.
/// Because every copy starts after its predecessors' earliest copies finish, the lists stay
/// free of deadlock; the static executor checks it anyway. Schedule tasks that are not
/// units of `plan` are ignored.
pub fn lists_from_unit_schedule(schedule: &fugue_sched::Schedule, plan: &Plan) -> Vec<Vec<u32>> {
    let n = plan.n_units();
    let unit = |u: usize| (u < n).then_some(u);
    let mut best: Vec<Option<(f64, usize)>> = vec![None; n];
    for (p, slots) in schedule.processors.iter().enumerate() {
        for s in slots {
            let Some(t) = unit(s.task) else { continue };
            if best[t].is_none_or(|(f, _)| s.finish < f) {
                best[t] = Some((s.finish, p));
            }
        }
    }
    let mut lists: Vec<Vec<(f64, u32)>> = vec![Vec::new(); schedule.processors.len().max(1)];
    for (p, slots) in schedule.processors.iter().enumerate() {
        for s in slots {
            let Some(t) = unit(s.task) else { continue };
            if best[t].is_some_and(|(f, q)| q == p && f == s.finish) {
                lists[p].push((s.start, t as u32));
                best[t] = Some((f64::NEG_INFINITY, usize::MAX)); // taken: later equal copies skip
            }
        }
    }
    lists
        .into_iter()
        .map(|mut l| {
            // Start-time order; ties by unit index, which is a topological order.
            l.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            l.into_iter().map(|(_, t)| t).collect()
        })
        .collect()
}
