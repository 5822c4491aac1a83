//! [`Engine`]: a compiled plan and the executor built for it, the one way every part of
//! fugue (offline render, real-time backends, calibration runs, benchmarks, the host) turns a
//! graph and an [`ExecutorChoice`] into something that runs cycles.

use fugue_dsp::Registry;
use fugue_exec::{CompileOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;

use crate::executor_choice::{BuildError, ExecutorChoice};
use crate::profile::{ProfileReport, Profiler};
use crate::schedule::static_lists;
use fugue_exec::trace::{now, now_ordered, Calibration};

/// A compiled plan and its executor: what the audio thread runs, and what a buffer-size
/// change replaces as a whole.
pub struct Engine {
    /// The plan (inputs are set and outputs read between cycles).
    pub plan: Plan,
    executor: Box<dyn Executor + Send>,
    /// The executor's steal count when [`Engine::new_steals`] was last called.
    last_steals: u64,
    /// The profile, when on ([`Engine::enable_profile`]).
    profiler: Option<Box<Profiler>>,
    /// The per-cycle wake-up latency, when on ([`Engine::track_wakes`]).
    wakes: Option<Box<WakeTracker>>,
    /// What the automatic choice measured, when it chose the executor.
    auto: Option<crate::auto::AutoReport>,
    /// The trials still to run as the run's first cycles
    /// ([`ExecutorChoice::trials_in_run`]); `executor` is seq until they end.
    trial: Option<Box<crate::auto::InRun>>,
}

/// Measures, cycle by cycle, how long after the cycle's start the last of the executor's
/// other threads began on it.
#[derive(Debug)]
struct WakeTracker {
    /// Scratch for [`Executor::worker_wakes`].
    wakes: Box<[Option<u64>]>,
    calibration: Calibration,
    ns_per_tick: f64,
    cycles: u64,
    last_ns: u32,
}

impl WakeTracker {
    /// Ticks to nanoseconds is measured again every this many cycles (the longer the
    /// interval since the tracker started, the closer the figure).
    const RECALIBRATE_EVERY: u64 = 256;

    /// Folds in the cycle that ran from `start` to `end` ticks. Never allocates, locks or
    /// blocks.
    #[inline]
    fn record(&mut self, exec: &dyn Executor, start: u64, end: u64) {
        if self.cycles.is_multiple_of(Self::RECALIBRATE_EVERY) {
            self.ns_per_tick = self.calibration.ns_per_tick();
        }
        self.cycles += 1;
        exec.worker_wakes(&mut self.wakes);
        let last = self
            .wakes
            .iter()
            .flatten()
            // A thread that noticed the cycle only after its end did not take part in it.
            .filter(|&&at| at <= end)
            .map(|&at| at.saturating_sub(start))
            .max();
        self.last_ns = match last {
            // At least 1 ns: 0 means that no other thread took part.
            Some(ticks) => {
                ((ticks as f64 * self.ns_per_tick) as u64).clamp(1, u32::MAX as u64) as u32
            }
            None => 0,
        };
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Compiles `graph` at `rate` Hz and `block` frames, its nodes built by the kinds of
    /// `registry` (nodes of unknown kind as silence when `placeholder`), and builds the
    /// executor of `choice` for it, with its static schedule when it has one. Control thread; allocates. Returns the engine and the
    /// warnings to say once (pinning or priority refused for the workers). The calling
    /// thread is not placed: the thread that will run the cycles calls
    /// [`place_audio_thread`](crate::place_audio_thread).
    pub fn build(
        graph: &TaskGraph,
        registry: &Registry,
        rate: f64,
        block: usize,
        choice: &ExecutorChoice,
        placeholder: bool,
    ) -> Result<(Engine, Vec<String>), BuildError> {
        // A feedback edge delays by one block: a plan of two blocks per cycle would delay it
        // by two. Such a graph never runs cycles as one (pipelining keeps the block).
        let mut own = choice.clone();
        // What the choice asked for and the graph refused, said once.
        let mut refused = Vec::new();
        if !graph.feedback_edges().is_empty() {
            if own.overlap > 1 && !own.auto {
                refused.push(format!(
                    "overlap {}: the graph has a feedback edge (it delays by one block), so it runs one block per cycle",
                    own.overlap
                ));
            }
            own.overlap = 1;
            own.auto_overlap = false;
        }
        let choice = &own;
        // A plan of `overlap` blocks per cycle, cut into `pipeline * overlap` sub-blocks and
        // chains into `threads` segments.
        let compile = |pipeline: usize, overlap: usize, threads: usize| {
            Plan::compile(
                graph,
                registry,
                &CompileOptions {
                    sample_rate: rate,
                    block: block * overlap,
                    placeholder,
                    merge_chains: choice.merge_chains,
                    pipeline: pipeline * overlap,
                    pipeline_segments: threads,
                },
            )
            .map_err(BuildError::from)
        };
        // The plan of a choice that does not measure: its overlap falls back to none when the
        // plan refuses to be pipelined (a graph that changes rates, a node whose samples
        // depend on how a block is cut), with the plan's reason.
        let settled = |c: &ExecutorChoice| -> Result<(Plan, Option<String>), BuildError> {
            let overlap = c.overlap.max(1);
            let sub = match c.pipeline {
                crate::Pipeline::Sub(n) => n,
                crate::Pipeline::Auto => {
                    let plain = compile(1, 1, c.threads)?;
                    match c.pipeline.choose(&plain, c.threads) {
                        1 if overlap == 1 => return Ok((plain, None)),
                        n => n,
                    }
                }
            };
            let plan = compile(sub, overlap, c.threads)?;
            if overlap > 1 && plan.pipeline() != sub * overlap {
                let why = plan.pipeline_refusal().map(str::to_string);
                return Ok((compile(sub, 1, c.threads)?, why));
            }
            Ok((plan, None))
        };
        if !choice.auto {
            let (plan, why) = settled(choice)?;
            // A plan of several blocks per cycle is pipelined by block: a graph that
            // changes rates, or has a node that cannot be cut, refuses, and runs one block
            // per cycle.
            if choice.overlap > 1 && plan.block() != block * choice.overlap {
                let why = why.unwrap_or_else(|| {
                    "the graph changes sample rates (its plan cannot be cut by block)".to_string()
                });
                refused.push(format!(
                    "overlap {}: {why}, so it runs one block per cycle",
                    choice.overlap
                ));
            }
            let (engine, mut warnings) = Engine::with_plan(graph, registry, plan, choice)?;
            warnings.extend(refused);
            return Ok((engine, warnings));
        }
        // The graph's plain plan, compiled once: the trials in the run, or else `choose`,
        // start from it, and it plays when nothing else is chosen (no other plan's processors
        // are made before it).
        let mut plain = None;
        if choice.trials_in_run && choice.options.period.is_none() {
            let p = plain.insert(compile(1, 1, 1)?);
            // With overlap allowed, the plan that plays runs OVERLAP blocks per cycle (and
            // every parallel candidate with it), unless the graph refuses to be pipelined.
            // (Not beyond the largest block: a plan of OVERLAP blocks must still be one.)
            let overlapped = if choice.auto_overlap
                && block.saturating_mul(crate::auto::OVERLAP) <= fugue_exec::MAX_BLOCK
                && crate::auto::in_run_fits(choice, crate::auto::OVERLAP)
            {
                let k = crate::auto::OVERLAP;
                let most = fugue_exec::placement::available_cores()
                    .min(crate::auto::MAX_THREADS)
                    .min(choice.auto_threads.unwrap_or(usize::MAX));
                let p = compile(1, k, most)?;
                (p.pipeline() == k).then_some((p, k))
            } else {
                None
            };
            let trial = match &overlapped {
                Some((o, k)) => crate::auto::InRun::new(graph, registry, p, o, *k, choice)?,
                None => crate::auto::InRun::new(graph, registry, p, p, 1, choice)?,
            };
            if let Some((trial, mut warnings)) = trial {
                let plain = plain.take().expect("compiled above");
                let plan = overlapped.map_or(plain, |(p, _)| p);
                let seq = ExecutorChoice {
                    kind: ExecutorKind::Seq,
                    threads: 1,
                    auto: false,
                    ..choice.clone()
                };
                let (mut engine, w) = Engine::with_plan(graph, registry, plan, &seq)?;
                warnings.extend(w);
                warnings.sort();
                warnings.dedup();
                engine.trial = Some(Box::new(trial));
                return Ok((engine, warnings));
            }
        }
        // The trials run on plans of their own: the one that plays starts fresh.
        let plain = match plain {
            Some(p) => p,
            None => compile(1, 1, 1)?,
        };
        let (chosen, report) = crate::auto::choose(graph, registry, &compile, &plain, choice)?;
        let plan = if chosen.overlap <= 1 && chosen.pipeline == crate::Pipeline::Sub(1) {
            plain
        } else {
            settled(&chosen)?.0
        };
        let (mut engine, warnings) = Engine::with_plan(graph, registry, plan, &chosen)?;
        engine.auto = Some(report);
        Ok((engine, warnings))
    }

    /// What [`ExecutorChoice::auto`] measured and chose, when it was asked for (with
    /// trials in the run, once they are over: `None` before).
    pub fn auto_report(&self) -> Option<&crate::auto::AutoReport> {
        self.auto.as_ref()
    }

    /// Builds the executor of `choice` for `plan`, compiled from `graph` with the kinds of
    /// `registry` (a static schedule's costs come from the graph, or are measured on a plan
    /// of its own built by the same kinds).
    pub fn with_plan(
        graph: &TaskGraph,
        registry: &Registry,
        plan: Plan,
        choice: &ExecutorChoice,
    ) -> Result<(Engine, Vec<String>), BuildError> {
        let (executor, warnings) = build_executor(graph, registry, &plan, choice)?;
        let last_steals = executor.steals();
        Ok((
            Engine {
                plan,
                executor,
                last_steals,
                profiler: None,
                wakes: None,
                auto: None,
                trial: None,
            },
            warnings,
        ))
    }

    /// Runs one cycle of the plan, and records it in the profile when that is on. Never
    /// allocates, locks or blocks.
    #[inline]
    pub fn run_cycle(&mut self) {
        if let Some(t) = self.trial.as_deref_mut() {
            if t.run_cycle(&mut self.plan) {
                self.end_trials();
            }
            return;
        }
        if self.profiler.is_none() && self.wakes.is_none() {
            self.executor.run_cycle(&mut self.plan);
            return;
        }
        let start = now_ordered();
        self.executor.run_cycle(&mut self.plan);
        let end = now_ordered();
        if let Some(p) = self.profiler.as_deref_mut() {
            p.record(&mut self.plan, self.executor.as_ref(), start, end);
            p.add_own(now().saturating_sub(end));
        }
        if let Some(w) = self.wakes.as_deref_mut() {
            w.record(self.executor.as_ref(), start, end);
        }
    }

    /// The trials are over: the chosen executor runs from the next cycle on, the others end
    /// (their threads are joined: the run is offline).
    #[cold]
    fn end_trials(&mut self) {
        if let Some(t) = self.trial.take() {
            let (exec, _, report) = t.finish();
            self.executor = exec;
            self.last_steals = self.executor.steals();
            self.auto = Some(report);
        }
    }

    /// Turns the per-cycle wake-up latency on ([`Engine::last_wake_ns`]; control thread,
    /// allocates). It costs each thread one clock reading per cycle.
    pub fn track_wakes(&mut self) {
        if self.wakes.is_none() {
            self.executor.set_profiling(true);
            self.wakes = Some(Box::new(WakeTracker {
                wakes: vec![None; self.executor.threads().max(1)].into_boxed_slice(),
                calibration: Calibration::start(),
                ns_per_tick: 1.0,
                cycles: 0,
                last_ns: 0,
            }));
        }
    }

    /// The wake-up latency of the last cycle, ns: how long after its start the last of the
    /// executor's other threads began on it. 0 when no other thread took part, or when
    /// [`Engine::track_wakes`] is off.
    #[inline]
    pub fn last_wake_ns(&self) -> u32 {
        self.wakes.as_ref().map_or(0, |w| w.last_ns)
    }

    /// Turns the per-node, per-worker profile on (control thread; allocates what the
    /// profile will use). Every later [`Engine::run_cycle`] is recorded. A pipelined plan
    /// ([`fugue_exec::Plan::pipeline`]` > 1`) is not profiled: its tasks run once per
    /// sub-block with one record each, so the profile stays off ([`Engine::profile_report`]
    /// returns `None`); the command line refuses `--profile` with `--pipeline`. Refused,
    /// before anything is allocated, when the profile and the plan together would hold more
    /// than [`fugue_exec::MEMORY_LIMIT`] (the sentence says how much).
    pub fn enable_profile(&mut self) -> Result<(), String> {
        if self.profiler.is_none() && self.plan.pipeline() == 1 {
            let (needed, nodes) = Profiler::bytes_for(&self.plan, self.executor.threads().max(1));
            let plan = self.plan.memory();
            if needed.saturating_add(plan) > fugue_exec::MEMORY_LIMIT {
                return Err(format!(
                    "profiling this graph needs about {} MiB (a histogram for each of its {} nodes) beside the plan's {} MiB, more than the {} MiB a run may hold; profile a smaller graph, or run it without the profile",
                    needed.div_ceil(1 << 20),
                    nodes,
                    plan.div_ceil(1 << 20),
                    fugue_exec::MEMORY_LIMIT >> 20
                ));
            }
            self.profiler = Some(Box::new(Profiler::new(
                &mut self.plan,
                self.executor.as_mut(),
            )));
        }
        Ok(())
    }

    /// The profile of the cycles run since [`Engine::enable_profile`] (control side;
    /// allocates), or `None` when it is off.
    pub fn profile_report(&self) -> Option<ProfileReport> {
        self.profiler.as_ref().map(|p| {
            let mut r = p.report();
            r.readings = self.readings();
            r
        })
    }

    /// What the plan's processors report beside their audio after the last cycle
    /// ([`fugue_dsp::Processor::readings`]: an LV2 plugin's control outputs), by node.
    /// Control side; allocates.
    pub fn readings(&self) -> Vec<(String, Vec<(String, f32)>)> {
        // SAFETY: the executors run the plan's tasks only inside `run_cycle`, which takes
        // the engine by `&mut`: while this `&self` lives, no task runs.
        unsafe { self.plan.readings() }
    }

    /// Steals since the previous call (or since the engine was built).
    #[inline]
    pub fn new_steals(&mut self) -> u64 {
        let steals = self.executor.steals();
        let delta = steals.wrapping_sub(self.last_steals);
        self.last_steals = steals;
        delta
    }
}

/// The executor of `choice` for `plan`, compiled from `graph` with the kinds of `registry`,
/// and the warnings to say once: what [`Engine::with_plan`] builds, for callers that run
/// several executors on one plan in turn (the benchmarks).
pub fn build_executor(
    graph: &TaskGraph,
    registry: &Registry,
    plan: &Plan,
    choice: &ExecutorChoice,
) -> Result<(Box<dyn Executor + Send>, Vec<String>), BuildError> {
    let threads = choice.threads.max(1);
    let mut opts = choice.options.clone();
    if choice.pin {
        opts.placement.cores = fugue_exec::placement::allowed_cores().to_vec();
    }
    if let Some(p) = choice.rt {
        opts.placement.rt_priority = Some(p.clamp(1, 98));
    }
    let (lists, note) = if choice.kind == ExecutorKind::Static {
        let (lists, note) = static_lists(graph, registry, plan, choice, threads)?;
        (Some(lists), note)
    } else {
        (None, None)
    };
    let executor = fugue_exec::build(choice.kind, plan, threads, lists, &opts)?;
    let mut warnings = executor.warnings().to_vec();
    warnings.extend(note);
    if let Some(note) = plan.pipeline_note() {
        warnings.push(note.to_string());
    }
    warnings.sort();
    warnings.dedup();
    Ok((executor, warnings))
}
