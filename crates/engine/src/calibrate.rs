//! Measured node costs for static schedules.

use std::time::{Duration, Instant};

use fugue_dsp::Registry;
use fugue_exec::{CompileOptions, Plan};
use fugue_graph::TaskGraph;

use crate::executor_choice::BuildError;

/// One node's measured cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The node's name.
    pub node: String,
    /// Median time per cycle, in microseconds.
    pub median_us: f64,
    /// The WCET estimate: the 99th percentile, in microseconds.
    pub wcet_us: f64,
}

/// Measures each node's processing time at `block` frames, the nodes built by the kinds of
/// `registry`: the whole graph runs
/// sequentially for `cycles` cycles (after a warm-up of `cycles / 10 + 1`), each task timed on
/// its own. Returns, in graph node order, the median and the 99th percentile (the WCET
/// estimate that static schedules use).
pub fn calibrate(
    graph: &TaskGraph,
    registry: &Registry,
    sample_rate: f64,
    block: usize,
    cycles: usize,
) -> Result<Vec<Calibration>, BuildError> {
    Ok(calibrate_within(graph, registry, sample_rate, block, cycles, Duration::MAX)?.0)
}

/// [`calibrate`] within `budget` of measuring: the warm-up ends once it has taken a tenth of
/// it, the measured cycles once the whole of it is spent (a graph whose cycle takes seconds,
/// a `load` node of a long `wcet`), after one cycle of each at least. Returns the
/// calibrations and the cycles measured.
pub fn calibrate_within(
    graph: &TaskGraph,
    registry: &Registry,
    sample_rate: f64,
    block: usize,
    cycles: usize,
    budget: Duration,
) -> Result<(Vec<Calibration>, usize), BuildError> {
    let plan = Plan::compile(
        graph,
        registry,
        &CompileOptions {
            sample_rate,
            block,
            placeholder: false,
            merge_chains: true,
            ..CompileOptions::default()
        },
    )?;
    // Per graph node (a sum split into groups is several tasks: their times add up).
    let n = graph.len();
    let cycles = cycles.max(1);
    let mut samples = vec![Vec::with_capacity(cycles); n];
    let mut cycle = vec![0.0f64; n];
    // As the executors run them: denormals flushed (`fugue_exec::denormals`).
    let _flush = fugue_exec::denormals::FlushDenormals::new();
    let started = Instant::now();
    let spent = |part: u32| started.elapsed() >= budget / part;
    let mut run = |timed: bool| {
        cycle.fill(0.0);
        for t in 0..plan.len() {
            let t0 = Instant::now();
            // SAFETY: tasks run in topological order on this thread only (as the sequential
            // executor does); no reference to the plan's buffers is alive.
            unsafe { plan.run_task(t) };
            cycle[plan.node_of(t)] += t0.elapsed().as_secs_f64() * 1e6;
        }
        if timed {
            for (s, &dt) in samples.iter_mut().zip(&cycle) {
                s.push(dt);
            }
        }
    };
    for w in 0..cycles / 10 + 1 {
        if w > 0 && spent(10) {
            break;
        }
        run(false);
    }
    let mut measured = 0;
    while measured < cycles && (measured == 0 || !spent(1)) {
        run(true);
        measured += 1;
    }
    let mut out = Vec::with_capacity(n);
    for (node, mut s) in samples.into_iter().enumerate() {
        s.sort_by(f64::total_cmp);
        let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        out.push(Calibration {
            node: graph.node(node).name.clone(),
            median_us: pick(0.5),
            wcet_us: pick(0.99),
        });
    }
    Ok((out, measured))
}
