//! Loading and admission: a graph compiled at the host's block, checked against the room
//! left (graphs, units, threads of a partition), measured, given its executor, admitted
//! against the period, and handed to the audio thread; and its removal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fugue_exec::executors::multi::MAX_TENANTS;
use fugue_exec::{CompileOptions, Executor as _, ExecutorKind, Plan, SeqExecutor, Tenant};
use fugue_graph::TaskGraph;

use super::audio::{FromAudio, Slot, ToAudio};
use super::report::executor_label;
use super::stats::GraphStats;
use super::{
    Driver, GraphExecutor, Host, HostBackend, HostError, HostEvent, LoadReport, Mode, UnloadReport,
};
use crate::{ExecutorChoice, Pipeline};

/// A loaded graph, as the control thread keeps it.
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) id: u32,
    pub(super) file: String,
    pub(super) gain_db: f64,
    pub(super) tasks: usize,
    pub(super) units: usize,
    pub(super) channels: usize,
    pub(super) cost_ns: u64,
    pub(super) adopted: u64,
    pub(super) stats: Arc<GraphStats>,
    pub(super) pipeline: usize,
    /// The graph, to compile again at a new buffer size.
    pub(super) graph: TaskGraph,
    /// Its own executor and threads (`separate` mode).
    pub(super) executor: Option<(ExecutorKind, usize)>,
    /// Its critical path's share of its work ([`span_share`]).
    pub(super) span: f64,
    /// Bytes of its plan ([`Plan::memory`]) and, offline, of its outputs' capture, counted
    /// against [`memory_limit`].
    pub(super) memory: usize,
    /// Whether a notice said that it panicked, and that its output held samples that were
    /// not finite numbers ([`Host::take_notices`]): each is said once.
    pub(super) told: (bool, bool),
}

/// The most memory the plans of all loaded graphs may take together: half the machine's
/// memory, and half the process's address space where it is limited (`ulimit -v`), at
/// least one plan's [`fugue_exec::MEMORY_LIMIT`]. A load that would pass it is refused
/// before its memory is allocated.
pub(crate) fn memory_limit() -> usize {
    fugue_dsp::memory::half_of_memory().max(fugue_exec::MEMORY_LIMIT)
}

/// A graph compiled and measured, ready for the audio thread ([`Host::build_slot`]).
pub(super) struct Built {
    pub(super) slot: Box<Slot>,
    pub(super) cost_ns: u64,
    pub(super) tasks: usize,
    pub(super) units: usize,
    pub(super) channels: usize,
    pub(super) pipeline: usize,
    pub(super) pipeline_note: Option<String>,
    /// Its own executor and threads.
    pub(super) executor: Option<(ExecutorKind, usize)>,
    /// What the automatic choice measured, when it chose.
    pub(super) auto: Option<String>,
    /// Its critical path's share of its work ([`span_share`]).
    pub(super) span: f64,
    /// Bytes of its plan.
    pub(super) memory: usize,
}

/// How a graph gets its executor ([`Host::build_slot`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum ExecutorPlan {
    /// None of its own: it runs on the host's pool.
    Pool,
    /// This one, on this many threads.
    Fixed(ExecutorKind, usize),
    /// Measured now ([`GraphExecutor::Auto`]).
    Measure,
}

impl ExecutorPlan {
    /// The same executor again (compiled again at a new buffer size: not measured again).
    pub(super) fn again(chosen: Option<(ExecutorKind, usize)>) -> ExecutorPlan {
        match chosen {
            Some((k, t)) => ExecutorPlan::Fixed(k, t),
            None => ExecutorPlan::Pool,
        }
    }
}

/// Cycles run to measure a graph's cost at load, at most.
const CALIBRATION_CYCLES: usize = 9;

/// Time the measurement of a graph's cost goes on for at most: once its cycles have taken
/// this long it stops (after one cycle at least), so that a graph whose cycle takes seconds
/// holds the control loop for one cycle, not nine.
const CALIBRATION_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

impl Host {
    /// [`Host::load_graph`]: admits `graph` as `name` and hands it to the audio thread.
    pub(super) fn add(
        &mut self,
        name: &str,
        graph: &TaskGraph,
        file: &str,
    ) -> Result<LoadReport, HostError> {
        self.poll()?;
        self.check_name(name)?;
        self.check_room()?;
        let threads = self.threads_of_new_graph();
        let plan = match (self.options.mode, self.options.executor) {
            (Mode::Shared | Mode::Partitioned, _) => ExecutorPlan::Pool,
            (Mode::Separate, GraphExecutor::Auto) => ExecutorPlan::Measure,
            (Mode::Separate, GraphExecutor::Kind(k)) => {
                ExecutorPlan::Fixed(k, if k == ExecutorKind::Seq { 1 } else { threads })
            }
        };
        let stats = Arc::new(GraphStats::new());
        let id = self.next_id;
        let mut built = self.build_slot(graph, id, threads, plan, stats.clone())?;
        // Nodes of unknown kind that play as silence (`--placeholder`), said as render says
        // them.
        let placeholders: Vec<String> = built
            .slot
            .tenant
            .plan()
            .placeholders()
            .iter()
            .map(|n| crate::lint::placeholder(graph, n, "plays"))
            .collect();
        let executor = ExecutorPlan::again(built.executor);
        let period_ns = self.options.period_ns();
        let (predicted_ns, warning) =
            self.admit(name, built.cost_ns, built.executor, built.span)?;
        built.slot.ports = self.register_ports(name, built.channels)?;
        self.next_id += 1;
        let started = Instant::now();
        let timeout = self.answer_timeout();
        let mut slot = built.slot;
        let cycle = loop {
            self.send(ToAudio::Load(slot))?;
            if let Driver::Offline(audio) = &self.driver {
                // Adopted at the start of the next cycle run.
                break audio.cycle;
            }
            let back = loop {
                match self.answer()? {
                    FromAudio::Adopted { id: got, cycle } if got == id => break Ok(cycle),
                    FromAudio::Stale(back) if back.id == id => break Err(back),
                    ev @ FromAudio::Refused(_) => {
                        self.release(ev);
                        return Err(HostError::Full(format!(
                            "the host holds at most {MAX_TENANTS} graphs; unload one first"
                        )));
                    }
                    ev => self.release(ev),
                }
            };
            match back {
                Ok(cycle) => break cycle,
                // Compiled at a buffer size that does not play now: a JACK buffer-size change
                // crossed the load. Once the host follows it, compile again at the new size
                // (or resend, when the new size's set is still on its way).
                Err(back) => {
                    if started.elapsed() > timeout {
                        self.release(FromAudio::Refused(back));
                        return Err(HostError::AudioGone);
                    }
                    std::thread::sleep(Duration::from_millis(1));
                    self.poll()?;
                    slot = if back.tenant.plan().block() == self.options.block {
                        back
                    } else {
                        let mut back = back;
                        let ports = std::mem::take(&mut back.ports);
                        drop(back);
                        let mut again =
                            self.build_slot(graph, id, threads, executor, stats.clone())?;
                        again.slot.ports = ports;
                        built.cost_ns = again.cost_ns;
                        built.pipeline = again.pipeline;
                        built.pipeline_note = again.pipeline_note;
                        again.slot
                    };
                }
            }
        };
        self.note(HostEvent::Adopted {
            name: name.to_string(),
            id,
            cycle,
        });
        self.graphs.push(Entry {
            name: name.to_string(),
            id,
            file: file.to_string(),
            gain_db: 0.0,
            tasks: built.tasks,
            units: built.units,
            channels: built.channels,
            cost_ns: built.cost_ns,
            adopted: cycle,
            stats,
            pipeline: built.pipeline,
            graph: graph.clone(),
            executor: built.executor,
            span: built.span,
            memory: built.memory,
            told: (false, false),
        });
        // The graph's lints, as `render` and `run` say them: offline, without those that
        // matter only in real time.
        let offline = matches!(self.driver, Driver::Offline(_));
        let lints: Vec<String> =
            crate::lint::lint_run(graph, &self.registry, offline, f64::from(self.options.rate))
                .iter()
                .map(ToString::to_string)
                .chain(placeholders)
                .collect();
        let warning = match (warning, lints.is_empty()) {
            (w, true) => w,
            (None, false) => Some(lints.join("; ")),
            (Some(w), false) => Some(format!("{w}; {}", lints.join("; "))),
        };
        Ok(LoadReport {
            id,
            cycle,
            cost_ns: built.cost_ns,
            predicted_ns,
            period_ns,
            warning,
            pipeline: built.pipeline,
            pipeline_note: built.pipeline_note,
            executor: built.executor.map(|(k, t)| executor_label(k, t)),
            auto: built.auto,
        })
    }

    /// Refuses a graph more when the host holds as many as it can, or (`partitioned`) as
    /// many as it has threads.
    fn check_room(&self) -> Result<(), HostError> {
        if self.graphs.len() >= MAX_TENANTS {
            return Err(HostError::Full(format!(
                "the host holds at most {MAX_TENANTS} graphs; unload one first"
            )));
        }
        if self.options.mode == Mode::Partitioned && self.graphs.len() >= self.options.threads {
            return Err(HostError::Refused(format!(
                "partitioned mode gives each graph at least one thread of its own, and {} {} loaded on {}; unload one, add --threads, or use --mode shared",
                crate::report::counted(self.graphs.len(), "graph"),
                if self.graphs.len() == 1 { "is" } else { "are" },
                crate::report::counted(self.options.threads, "thread")
            )));
        }
        Ok(())
    }

    /// Admission of graph `name` of cost `cost_ns`: the cycle predicted with it, and the
    /// warning when that passes 80% of the period (a refusal with
    /// [`HostOptions::strict`](super::HostOptions::strict)).
    fn admit(
        &self,
        name: &str,
        cost_ns: u64,
        executor: Option<(ExecutorKind, usize)>,
        span: f64,
    ) -> Result<(u64, Option<String>), HostError> {
        let period_ns = self.options.period_ns();
        let predicted_ns = self.predict(cost_ns, executor, span);
        let warning = (predicted_ns as f64 > 0.8 * period_ns as f64).then(|| {
            format!(
                "with `{name}` the cycle is predicted to take {:.0} µs, {:.0}% of the {:.0} µs period",
                predicted_ns as f64 / 1e3,
                predicted_ns as f64 * 100.0 / period_ns as f64,
                period_ns as f64 / 1e3
            )
        });
        if let (true, Some(w)) = (self.options.strict, &warning) {
            return Err(HostError::Refused(format!("{w}; not loaded (--strict)")));
        }
        Ok((predicted_ns, warning))
    }

    /// Compiles `graph` as graph `id` at the host's block for `threads` threads, checks that
    /// the pool has room for its units, measures its cost (then resets it: it starts fresh)
    /// and builds its own executor when it has one (`separate` mode; chosen by measuring
    /// with [`ExecutorPlan::Measure`]): what the audio thread adopts. Control thread.
    pub(super) fn build_slot(
        &mut self,
        graph: &TaskGraph,
        id: u32,
        threads: usize,
        executor: ExecutorPlan,
        stats: Arc<GraphStats>,
    ) -> Result<Built, HostError> {
        let mut plan = self.compile(graph, id, threads)?;
        let units: usize = self.others(id).map(|e| e.units).sum();
        if units + plan.n_units() > self.options.unit_capacity {
            return Err(HostError::Full(format!(
                "the host's pool holds {} units and this graph has {} more than the room left; unload a graph first",
                self.options.unit_capacity,
                units + plan.n_units() - self.options.unit_capacity
            )));
        }
        let cost_ns = measure_cost(&mut plan);
        let span = span_share(&plan);
        let (chosen, auto) = match executor {
            ExecutorPlan::Pool => (None, None),
            ExecutorPlan::Fixed(k, t) => (Some((k, t)), None),
            ExecutorPlan::Measure => {
                let (k, t, line) = self.measure_executors(graph, threads, cost_ns)?;
                (Some((k, t)), Some(line))
            }
        };
        let executor = match chosen {
            Some((kind, threads)) => {
                let choice = ExecutorChoice {
                    kind,
                    threads,
                    options: self.options.exec_paced(),
                    ..ExecutorChoice::default()
                };
                let (e, warnings) =
                    crate::engine::build_executor(graph, &self.registry, &plan, &choice)?;
                // The pipeline's note goes in the load reply.
                let note = plan.pipeline_note();
                self.warnings
                    .extend(warnings.into_iter().filter(|w| Some(w.as_str()) != note));
                self.warnings.sort();
                self.warnings.dedup();
                Some(e)
            }
            None => None,
        };
        let mut tenant = Tenant::new(plan);
        // Bytes of the capture below, counted with the plan's against the host's limit.
        let mut capture = 0;
        if executor.is_none() && self.options.backend == HostBackend::Offline {
            // Offline, the pool runs several cycles in a row, each graph's outputs captured
            // (at most 2 MiB: `batch_cycles`).
            let (outputs, block) = (tenant.plan().n_outputs(), tenant.plan().block());
            let b = super::audio::batch_cycles(outputs, block);
            tenant.set_batch(b);
            if b > 1 {
                capture = b * outputs * block * std::mem::size_of::<f32>();
            }
        }
        let plan = tenant.plan();
        Ok(Built {
            cost_ns,
            memory: plan.memory() + capture,
            tasks: plan.len(),
            units: plan.n_units(),
            channels: plan.n_outputs(),
            pipeline: plan.pipeline(),
            pipeline_note: plan.pipeline_note().map(str::to_string),
            executor: chosen,
            auto,
            span,
            slot: Box::new(Slot {
                id,
                tenant,
                executor,
                gain: 1.0,
                silenced: false,
                stats,
                work_ticks: 0,
                ports: Vec::new(),
            }),
        })
    }

    /// [`GraphExecutor::Auto`]: measures the candidates on `graph` ([`crate::auto::choose`],
    /// on a plan compiled apart, so that the one that plays starts fresh), paced at the
    /// period under a clock, within [`HostOptions::auto_budget`], and keeps the fastest that
    /// runs on at most `threads` threads (seq unless another gains
    /// [`crate::auto::MIN_GAIN`]). Returns it with the line that says what was measured.
    /// `cost_ns` is the graph's sequential cycle.
    fn measure_executors(
        &self,
        graph: &TaskGraph,
        threads: usize,
        cost_ns: u64,
    ) -> Result<(ExecutorKind, usize, String), HostError> {
        let options = self.options.exec_paced();
        let per_cycle = options
            .period
            .map_or(0, |p| p.as_nanos() as u64)
            .max(cost_ns)
            .max(1);
        let budget = self.options.auto_budget;
        // The automatic choice spends, paced, at most the run it is told of, and offline a
        // twentieth of it: a run of one budget (whole periods of it: none when the period is
        // longer than the budget, and then no trial), or of twenty, in cycles of the graph's
        // cost (so that a graph too slow for its trials is given seq before anything is
        // compiled). The budget in time bounds the trials besides, as they run: offline, the
        // count alone runs over it when the cycles are slower than that cost.
        let cycles = match options.period {
            Some(_) => budget.as_nanos() / per_cycle as u128,
            None => (20 * budget.as_nanos() / per_cycle as u128).max(1),
        } as u64;
        let choice = ExecutorChoice {
            auto: true,
            auto_cycles: Some(cycles),
            auto_budget: Some(budget),
            // No candidate beyond the graph's threads: one it could not keep would take a
            // place among those a short budget can try.
            auto_threads: Some(threads),
            threads,
            options,
            ..ExecutorChoice::default()
        };
        // Every candidate's trial plan is the host's own compile of the graph (pipelined as
        // the host's --pipeline says) on the candidate's threads; the plan that decides which
        // candidates are worth trying is the one on the graph's threads, its sub-blocks cut
        // into as many segments (a pipelined line has their parallelism).
        let plain = self.compile(graph, u32::MAX, threads)?;
        let compile = |_: usize, _: usize, t: usize| {
            self.compile(graph, u32::MAX, t).map_err(|e| match e {
                HostError::Compile(e) => crate::BuildError::Compile(e),
                other => crate::BuildError::Executor(fugue_exec::BuildError::BadSchedule(
                    other.to_string(),
                )),
            })
        };
        let (_, mut report) =
            crate::auto::choose(graph, &self.registry, &compile, &plain, &choice)?;
        drop(plain);
        if let Some(u) = report.untried {
            let c = report.chosen();
            if u != crate::auto::Untried::Short {
                return Ok((c.kind, c.threads, report.line()));
            }
            return Ok((
                c.kind,
                c.threads,
                format!(
                    "executor auto: seq, not measured: {} cycles of {:.0} µs for each candidate do not fit in the {} ms the trials may take (name an executor to choose another)",
                    if choice.options.period.is_some() {
                        crate::auto::MIN_PACED_CYCLES
                    } else {
                        crate::auto::MIN_CYCLES
                    },
                    // Paced trials run at most MAX_TRIAL_PERIOD apart.
                    match choice.options.period {
                        Some(p) => (p.min(crate::auto::MAX_TRIAL_PERIOD).as_nanos() as u64)
                            .max(cost_ns) as f64
                            / 1e3,
                        None => per_cycle as f64 / 1e3,
                    },
                    budget.as_millis()
                ),
            ));
        }
        // Within the host's threads (as the candidates are: a guard).
        report.chosen = crate::auto::keep(&report.candidates, |c| c.threads <= threads);
        let c = report.chosen();
        Ok((c.kind, c.threads, report.line()))
    }

    /// The threads a graph loaded now runs on: the pool's (`shared`), its share of them
    /// (`partitioned`: the last of the graphs then loaded), or its executor's (`separate`).
    fn threads_of_new_graph(&self) -> usize {
        let t = self.options.threads.max(1);
        match self.options.mode {
            Mode::Shared | Mode::Separate => t,
            Mode::Partitioned => {
                let n = self.graphs.len() + 1;
                (t - (n - 1) * t / n).max(1)
            }
        }
    }

    /// The loaded graphs but graph `id` (all of them for an id not loaded).
    fn others(&self, id: u32) -> impl Iterator<Item = &Entry> {
        self.graphs.iter().filter(move |e| e.id != id)
    }

    /// Compiles `graph` at the host's rate and block, pipelined as
    /// [`HostOptions::pipeline`] says for a graph that runs on `threads` threads.
    fn compile(&self, graph: &TaskGraph, id: u32, threads: usize) -> Result<Plan, HostError> {
        // What the other graphs leave of the host's memory.
        let limit = memory_limit();
        let used: usize = self.others(id).map(|e| e.memory).sum();
        // Offline, the graph's capture comes on top of its plan (2 MiB at most).
        let capture = if self.options.backend == HostBackend::Offline
            && self.options.mode != Mode::Separate
        {
            super::audio::CAPTURE_BYTES
        } else {
            0
        };
        let left = limit.saturating_sub(used).saturating_sub(capture);
        let compile = |pipeline: usize| {
            Plan::compile_within(
                graph,
                &self.registry,
                &CompileOptions {
                    sample_rate: self.options.rate as f64,
                    block: self.options.block,
                    placeholder: self.options.placeholder,
                    merge_chains: true,
                    pipeline,
                    pipeline_segments: threads,
                },
                left,
            )
            .map_err(|e| match e {
                fugue_exec::CompileError::TooLarge { needed, .. }
                    if left < fugue_exec::MEMORY_LIMIT && needed <= fugue_exec::MEMORY_LIMIT =>
                {
                    HostError::Full(format!(
                        "the graphs loaded take {} MiB of the {} MiB the host's graphs may hold together (half the memory this process may use), and this one needs at least {} MiB more than is left; unload a graph first",
                        used >> 20,
                        limit >> 20,
                        needed.saturating_sub(left).div_ceil(1 << 20)
                    ))
                }
                e => e.into(),
            })
        };
        Ok(match self.pipeline {
            Pipeline::Sub(n) => compile(n)?,
            Pipeline::Auto => {
                let plain = compile(1)?;
                match Pipeline::Auto.choose(&plain, threads) {
                    1 => plain,
                    n => compile(n)?,
                }
            }
        })
    }

    /// The cycle predicted with one more graph of cost `cost_ns` (its sequential cycle), ns,
    /// which runs on `executor` (`separate` mode) and whose critical path is `span` of its
    /// work. In `separate` mode the graphs run one after the other, each on its own executor
    /// ([`own_cycle`]); on the pool they share its threads. Threads beyond the cores the
    /// process may use run no faster than the cores: the prediction counts the cores.
    fn predict(&self, cost_ns: u64, executor: Option<(ExecutorKind, usize)>, span: f64) -> u64 {
        let cores = fugue_exec::placement::available_cores().max(1);
        let t = self.options.threads.clamp(1, cores) as u64;
        let sum: u64 = self.graphs.iter().map(|e| e.cost_ns).sum::<u64>() + cost_ns;
        // No graph's cycle is shorter than its critical path, however many threads share
        // it: a chain runs on one thread at a time.
        let longest_path = self
            .graphs
            .iter()
            .map(|e| path_ns(e.cost_ns, e.span))
            .chain([path_ns(cost_ns, span)])
            .max()
            .unwrap_or(0);
        match self.options.mode {
            Mode::Separate => self
                .graphs
                .iter()
                .map(|e| own_cycle(e.cost_ns, e.executor, e.span, cores))
                .sum::<u64>()
                .saturating_add(own_cycle(cost_ns, executor, span, cores)),
            Mode::Shared => sum.div_ceil(t).max(longest_path),
            Mode::Partitioned => {
                // Each graph on about t / n threads.
                let n = self.graphs.len() as u64 + 1;
                let worst = self
                    .graphs
                    .iter()
                    .map(|e| e.cost_ns)
                    .chain([cost_ns])
                    .max()
                    .unwrap_or(0);
                (worst * n)
                    .div_ceil(t)
                    .max(worst.div_ceil(t))
                    .max(longest_path)
            }
        }
    }

    pub(super) fn check_name(&self, name: &str) -> Result<(), HostError> {
        if self.graphs.iter().any(|e| e.name == name) {
            return Err(HostError::NameTaken(name.to_string()));
        }
        Ok(())
    }

    pub(super) fn index(&self, name: &str) -> Result<usize, HostError> {
        self.graphs
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| self.unknown(name))
    }

    /// The error for graph `name`, not loaded, with the loaded name nearest to it.
    fn unknown(&self, name: &str) -> HostError {
        let near = fugue_graph::suggest::nearest(name, self.graphs.iter().map(|e| e.name.as_str()));
        HostError::UnknownName(name.to_string(), near.map(str::to_string))
    }

    /// [`Host::unload`]: removes graph `name` at the next cycle boundary and frees it here.
    pub(super) fn remove(&mut self, name: &str) -> Result<UnloadReport, HostError> {
        self.poll()?;
        let i = self.index(name)?;
        let id = self.graphs[i].id;
        self.send(ToAudio::Unload(id))?;
        let cycle = loop {
            if let Driver::Offline(audio) = &self.driver {
                // Removed at the start of the next cycle run.
                break audio.cycle;
            }
            match self.answer()? {
                FromAudio::Removed {
                    id: got,
                    cycle,
                    slot,
                } if got == id => {
                    self.release(FromAudio::Removed { id, cycle, slot });
                    break cycle;
                }
                FromAudio::Unknown { id: got } if got == id => return Err(self.unknown(name)),
                ev => self.release(ev),
            }
        };
        let e = self.graphs.remove(i);
        self.note(HostEvent::Removed {
            name: e.name,
            id,
            cycle,
        });
        Ok(UnloadReport {
            id,
            cycle,
            stats: e.stats.snapshot(),
        })
    }
}

/// The share of `plan`'s work on its critical path (by the units' cost estimates), in
/// `[0, 1]`: 1 when nothing can run in parallel.
fn span_share(plan: &Plan) -> f64 {
    let total = plan.total_cost();
    if total > 0.0 && total.is_finite() {
        (plan.critical_path_cost() / total).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// The critical path of a graph of sequential cycle `cost_ns` whose critical path is `span`
/// of its work ([`span_share`]), ns: no executor runs the graph's cycle in less.
fn path_ns(cost_ns: u64, span: f64) -> u64 {
    (cost_ns as f64 * span).ceil() as u64
}

/// The cycle of a graph of sequential cycle `cost_ns` on its own executor: the whole work
/// on `seq` (or one thread); else its work spread over the threads (at most `cores` of
/// them: more threads than cores run no faster), and never less than its critical path
/// (`span` of the work).
fn own_cycle(
    cost_ns: u64,
    executor: Option<(ExecutorKind, usize)>,
    span: f64,
    cores: usize,
) -> u64 {
    match executor {
        None | Some((ExecutorKind::Seq, _)) | Some((_, 0 | 1)) => cost_ns,
        Some((_, t)) => cost_ns
            .div_ceil(t.min(cores).max(1) as u64)
            .max(path_ns(cost_ns, span)),
    }
}

/// The median time of a few sequential cycles of `plan` (at most [`CALIBRATION_CYCLES`],
/// for at most [`CALIBRATION_BUDGET`]), ns; then the plan is reset, so that the graph starts
/// fresh when it is adopted.
fn measure_cost(plan: &mut Plan) -> u64 {
    let mut seq = SeqExecutor::new();
    let start = Instant::now();
    let mut times: Vec<u64> = Vec::with_capacity(CALIBRATION_CYCLES);
    while times.len() < CALIBRATION_CYCLES
        && (times.is_empty() || start.elapsed() < CALIBRATION_BUDGET)
    {
        let t = Instant::now();
        seq.run_cycle(plan);
        times.push(t.elapsed().as_nanos() as u64);
    }
    plan.reset();
    times.sort_unstable();
    times[times.len() / 2]
}
