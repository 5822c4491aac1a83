//! Choosing and building an executor for a compiled plan, shared by every backend: the
//! executor kind, the number of threads, and for static schedules the algorithm and the
//! costs it schedules with (declared in the file, measured now, or read from a file).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fugue_dsp::Registry;
use fugue_exec::exec::lists_from_unit_schedule;
use fugue_exec::{build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;
use thiserror::Error;

/// Where a static schedule takes its node costs from.
#[derive(Clone, Debug, PartialEq)]
pub enum Costs {
    /// The costs the graph file declares (`wcet`, `.stg` times, `Weight`).
    Declared,
    /// Measured now by [`calibrate`] at the run's block size.
    Measured,
    /// A CSV file `node,cost` (as written by `fugue calibrate`).
    File(PathBuf),
}

/// Everything that selects an executor.
#[derive(Clone, Debug)]
pub struct ExecutorChoice {
    /// Which executor.
    pub kind: ExecutorKind,
    /// Threads, the calling (audio) thread included.
    pub threads: usize,
    /// The static schedule's algorithm (for [`ExecutorKind::Static`]).
    pub algorithm: Algorithm,
    /// The static schedule's costs.
    pub costs: Costs,
    /// Seed of the random schedule.
    pub seed: u64,
    /// Time limit of the exact scheduler.
    pub time_limit: Duration,
    /// Pin thread `i` to core `i mod cores`.
    pub pin: bool,
    /// SCHED_FIFO priority for the workers (the audio thread asks for one more where it can).
    pub rt: Option<i32>,
    /// Pool and wait budgets.
    pub options: ExecOptions,
    /// Merge chains of nodes into units (the default); `false` schedules the graph node by
    /// node, for comparing executors on the graph as written. Applied by the engine to the
    /// plans it compiles ([`fugue_exec::Plan::set_merge_chains`]).
    pub merge_chains: bool,
}

impl Default for ExecutorChoice {
    fn default() -> Self {
        ExecutorChoice {
            kind: ExecutorKind::Seq,
            threads: 1,
            algorithm: Algorithm::Hlfet,
            costs: Costs::Declared,
            seed: 1,
            time_limit: Duration::from_secs(2),
            pin: false,
            rt: None,
            options: ExecOptions::default(),
            merge_chains: true,
        }
    }
}

/// Why no executor could be built.
#[derive(Debug, Error)]
pub enum ExecutorError {
    /// The costs file could not be read.
    #[error("cannot read costs file {path}: {source}")]
    CostsIo {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The costs file is malformed.
    #[error(transparent)]
    Costs(#[from] fugue_sched::CostsError),
    /// The scheduler failed.
    #[error(transparent)]
    Sched(#[from] fugue_sched::SchedError),
    /// The executor refused the schedule or the options.
    #[error("{0}")]
    Build(String),
    /// Calibration failed (the graph does not compile).
    #[error(transparent)]
    Compile(#[from] fugue_exec::CompileError),
}

/// A built executor and what to tell the user once.
pub struct BuiltExecutor {
    /// The executor.
    pub executor: Box<dyn Executor + Send>,
    /// Warnings (pinning or priority refused, ...), each to be said once.
    pub warnings: Vec<String>,
    /// The static schedule's makespan in cost units, when one was computed.
    pub makespan: Option<f64>,
}

impl std::fmt::Debug for BuiltExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltExecutor")
            .field("warnings", &self.warnings)
            .field("makespan", &self.makespan)
            .finish_non_exhaustive()
    }
}

/// Builds the executor `choice` asks for, for `plan` compiled from `graph`.
pub fn make_executor(
    graph: &TaskGraph,
    plan: &Plan,
    choice: &ExecutorChoice,
) -> Result<BuiltExecutor, ExecutorError> {
    let threads = choice.threads.max(1);
    let mut opts = choice.options.clone();
    let mut warnings = Vec::new();
    if choice.pin {
        let cores = fugue_exec::exec::thread::allowed_cores();
        opts.placement.cores = cores.to_vec();
        if let Err(e) = fugue_exec::exec::thread::pin_current(cores[0]) {
            warnings.push(e);
        }
    }
    if let Some(p) = choice.rt {
        opts.placement.rt_priority = Some(p.clamp(1, 98));
    }
    let mut makespan = None;
    let lists = if choice.kind == ExecutorKind::Static {
        let mut g = graph.clone();
        match &choice.costs {
            Costs::Declared => {}
            Costs::Measured => {
                let c = calibrate(graph, plan.sample_rate(), plan.block(), 200)?;
                g.set_costs(&c.iter().map(|x| x.wcet_us).collect::<Vec<_>>());
            }
            Costs::File(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| ExecutorError::CostsIo {
                        path: path.clone(),
                        source,
                    })?;
                let c = fugue_sched::parse_costs(&text, &path.display().to_string(), &g)?;
                g.set_costs(&c);
            }
        }
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
        makespan = Some(out.schedule.makespan());
        let mut lists = lists_from_unit_schedule(&out.schedule, plan);
        lists.resize(threads, Vec::new());
        Some(lists)
    } else {
        None
    };
    let (executor, w) =
        build(choice.kind, plan, threads, lists, &opts).map_err(ExecutorError::Build)?;
    warnings.extend(w);
    warnings.sort();
    warnings.dedup();
    Ok(BuiltExecutor {
        executor,
        warnings,
        makespan,
    })
}

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

/// Measures each node's processing time at `block` frames: the whole graph runs
/// sequentially for `cycles` cycles (after a warm-up of `cycles / 10 + 1`), each task timed on
/// its own. Returns, in graph node order, the median and the 99th percentile (the WCET
/// estimate that static schedules use).
pub fn calibrate(
    graph: &TaskGraph,
    sample_rate: f64,
    block: usize,
    cycles: usize,
) -> Result<Vec<Calibration>, ExecutorError> {
    let reg = Registry::with_builtin_kinds();
    let plan = Plan::compile(
        graph,
        &reg,
        &CompileOptions {
            sample_rate,
            block,
            placeholder: false,
        },
    )?;
    // Per graph node (a sum split into groups is several tasks: their times add up).
    let n = graph.len();
    let cycles = cycles.max(1);
    let mut samples = vec![Vec::with_capacity(cycles); n];
    let mut cycle = vec![0.0f64; n];
    for c in 0..cycles + cycles / 10 + 1 {
        cycle.fill(0.0);
        for t in 0..plan.len() {
            let t0 = Instant::now();
            // SAFETY: tasks run in topological order on this thread only (as the sequential
            // executor does); no reference to the plan's buffers is alive.
            unsafe { plan.run_task(t) };
            cycle[plan.node_of(t)] += t0.elapsed().as_secs_f64() * 1e6;
        }
        if c > cycles / 10 {
            for (s, &dt) in samples.iter_mut().zip(&cycle) {
                s.push(dt);
            }
        }
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
    Ok(out)
}

/// The placement of the calling thread asked for by `choice`: a real-time priority one above
/// the workers'. Returns a warning when refused.
pub fn place_audio_thread(choice: &ExecutorChoice) -> Option<String> {
    let p = choice.rt?;
    fugue_exec::exec::thread::set_realtime_current((p + 1).clamp(2, 99)).err()
}
