//! Real-time backends: [`clocked`] (cycles paced by absolute-time sleeps, no audio server)
//! and [`jack`] (a JACK client). Both run the same measured cycle body, [`CycleBody::run`],
//! which never allocates, locks or blocks.

pub mod clocked;
pub mod jack;

use std::time::Instant;

use fugue_dsp::Registry;
use fugue_exec::exec::{Placement, WorkStealing};
use fugue_exec::{CompileOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;

use crate::executor::{make_executor, ExecutorChoice};
use crate::run::RunError;
use crate::stats::{CycleMeter, CycleRecord};

/// An executor, with its counters when it has some.
pub enum RunExecutor {
    /// Work stealing: steals are counted.
    Ws(WorkStealing),
    /// Any other executor.
    Other(Box<dyn Executor + Send>),
}

impl std::fmt::Debug for RunExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunExecutor::Ws(_) => "RunExecutor::Ws",
            RunExecutor::Other(_) => "RunExecutor::Other",
        })
    }
}

impl RunExecutor {
    /// Runs one cycle.
    #[inline]
    pub fn run_cycle(&mut self, plan: &mut Plan) {
        match self {
            RunExecutor::Ws(e) => e.run_cycle(plan),
            RunExecutor::Other(e) => e.run_cycle(plan),
        }
    }

    /// Steals since the executor was built (0 when it does not steal).
    #[inline]
    pub fn steals(&self) -> u64 {
        match self {
            RunExecutor::Ws(e) => e.steals(),
            RunExecutor::Other(_) => 0,
        }
    }
}

/// A compiled plan and the executor built for it: what the audio thread runs, and what a
/// buffer-size change replaces as a whole.
#[derive(Debug)]
pub struct Engine {
    /// The plan.
    pub plan: Plan,
    /// Its executor.
    pub executor: RunExecutor,
    /// The executor's steal count after the previous cycle.
    last_steals: u64,
}

impl Engine {
    /// Compiles `graph` at `rate` and `block` and builds the executor of `choice` for it
    /// (control thread; allocates). Returns the engine and the warnings to say once.
    pub fn build(
        graph: &TaskGraph,
        rate: f64,
        block: usize,
        choice: &ExecutorChoice,
        placeholder: bool,
    ) -> Result<(Engine, Vec<String>), RunError> {
        let mut plan = Plan::compile(
            graph,
            &Registry::with_builtin_kinds(),
            &CompileOptions {
                sample_rate: rate,
                block,
                placeholder,
            },
        )?;
        plan.set_merge_chains(choice.merge_chains);
        let (executor, warnings) =
            if matches!(choice.kind, ExecutorKind::Ws | ExecutorKind::WsAffinity) {
                let mut opts = choice.options.clone();
                let mut warnings = Vec::new();
                if choice.pin {
                    opts.placement = Placement {
                        cores: fugue_exec::exec::thread::allowed_cores().to_vec(),
                        rt_priority: opts.placement.rt_priority,
                    };
                }
                if let Some(p) = choice.rt {
                    opts.placement.rt_priority = Some(p.clamp(1, 98));
                }
                let e = if choice.kind == ExecutorKind::Ws {
                    WorkStealing::new(&plan, choice.threads.max(1), &opts)
                } else {
                    WorkStealing::with_affinity(&plan, choice.threads.max(1), &opts)
                };
                warnings.extend(e.warnings().iter().cloned());
                (RunExecutor::Ws(e), warnings)
            } else {
                let b = make_executor(graph, &plan, choice)?;
                (RunExecutor::Other(b.executor), b.warnings)
            };
        let last_steals = executor.steals();
        Ok((
            Engine {
                plan,
                executor,
                last_steals,
            },
            warnings,
        ))
    }
}

/// The measured cycle body shared by the backends: inputs in, one cycle of the plan, outputs
/// out, one [`CycleRecord`] pushed. Never allocates, locks or blocks (tested under a counting
/// allocator in `tests/no_alloc_run.rs`).
#[derive(Debug)]
pub struct CycleBody {
    /// The statistics meter.
    pub meter: CycleMeter,
    /// Deadline as a multiple of the buffer period (1 or 2).
    pub deadline_periods: u32,
}

impl CycleBody {
    /// Runs one cycle of `engine` for `frames` frames at `rate` Hz. `fill_input(ch, buf)`
    /// fills engine input channel `ch`; `take_output(ch, buf)` receives output channel `ch`.
    /// `started` is when the cycle began (taken by the caller before anything else), `late_ns`
    /// how late that was against the schedule. Returns the record pushed.
    #[inline]
    pub fn run(
        &mut self,
        engine: &mut Engine,
        frames: usize,
        started: Instant,
        late_ns: u64,
        mut fill_input: impl FnMut(usize, &mut [f32]),
        mut take_output: impl FnMut(usize, &[f32]),
    ) -> CycleRecord {
        let plan = &mut engine.plan;
        for ch in 0..plan.n_inputs() {
            fill_input(ch, plan.input_mut(ch));
        }
        engine.executor.run_cycle(plan);
        for ch in 0..plan.n_outputs() {
            take_output(ch, plan.output(ch));
        }
        let end = Instant::now();
        let steals = engine.executor.steals();
        let delta = steals.wrapping_sub(engine.last_steals);
        engine.last_steals = steals;
        let duration_ns = end.saturating_duration_since(started).as_nanos() as u64;
        let deadline_ns =
            (frames as f64 * 1e9 / plan.sample_rate()) as u64 * self.deadline_periods.max(1) as u64;
        let record = CycleRecord {
            cycle: 0,
            start_ns: started
                .saturating_duration_since(self.meter.origin())
                .as_nanos() as u64,
            duration_ns,
            deadline_ns,
            late_ns,
            steals: delta,
            frames: frames as u32,
            missed: duration_ns > deadline_ns,
        };
        self.meter.push(record);
        CycleRecord {
            cycle: self.meter.cycle() - 1,
            ..record
        }
    }
}
