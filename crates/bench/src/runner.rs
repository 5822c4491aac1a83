//! The executors under test of `overhead` and `table`: one of fugue's, or a peer; how to
//! build one for a plan, and the tuning they share.

use std::time::Duration;

use fugue_engine::{Costs, ExecutorChoice};
use fugue_exec::executors::SpinBudget;
use fugue_exec::{ExecOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::error::{config, failed, BenchError};
use crate::peers::rayon_dag::RayonDag;

/// An executor under test: one of fugue's, or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// A fugue executor.
    Fugue(ExecutorKind),
    /// The rayon scope peer.
    Rayon,
    /// The oneTBB flow-graph peer (a separate process).
    Tbb,
}

impl Runner {
    /// The reference: fugue's sequential executor.
    pub const SEQ: Runner = Runner::Fugue(ExecutorKind::Seq);

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Fugue(k) => k.name(),
            Runner::Rayon => "rayon",
            Runner::Tbb => "tbb",
        }
    }

    /// `N threads` (or `1 thread`) that it runs with when asked for `threads`, for messages.
    pub fn threads_text(self, threads: usize) -> String {
        match self.threads(threads) {
            1 => "1 thread".into(),
            n => format!("{n} threads"),
        }
    }

    /// The threads it runs with when asked for `threads` (seq always runs one).
    pub fn threads(self, threads: usize) -> usize {
        if self == Runner::SEQ {
            1
        } else {
            threads
        }
    }
}

/// Parses a comma-separated executor list (`all` = fugue's executors, then `extra`, the peers
/// available), given as option `flag`: an executor named twice (or named beside `all`, which
/// holds it) is refused, as the other lists' repeated values are.
pub fn parse_runners(flag: &str, s: &str, extra: &[Runner]) -> Result<Vec<Runner>, BenchError> {
    let mut v: Vec<Runner> = Vec::new();
    let mut all = false;
    let twice = |name: &str, all: bool| {
        config(format!(
            "{flag} names {name} twice{}; name each executor once",
            if all { " (all holds it)" } else { "" }
        ))
    };
    for name in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        if name == "all" {
            if all {
                return twice("all", false);
            }
            all = true;
            for r in ExecutorKind::ALL
                .iter()
                .map(|&k| Runner::Fugue(k))
                .chain(extra.iter().copied())
            {
                if v.contains(&r) {
                    return twice(r.name(), true);
                }
                v.push(r);
            }
            continue;
        }
        let r = match name {
            "rayon" => Runner::Rayon,
            "tbb" => Runner::Tbb,
            _ => match ExecutorKind::from_name(name) {
                Some(k) => Runner::Fugue(k),
                None => {
                    let mut names: Vec<&str> = ExecutorKind::ALL.iter().map(|k| k.name()).collect();
                    names.push("rayon");
                    if extra.contains(&Runner::Tbb) {
                        names.push("tbb");
                    }
                    return config(format!(
                        "unknown executor `{name}` in {flag}; expected {} or all",
                        names.join(", ")
                    ));
                }
            },
        };
        if (r == Runner::Tbb) && !extra.contains(&Runner::Tbb) {
            return config("the tbb peer runs empty graphs only (fugue bench overhead)");
        }
        if v.contains(&r) {
            return twice(name, all);
        }
        v.push(r);
    }
    if v.is_empty() {
        return config(format!("{flag} names no executor"));
    }
    Ok(v)
}

/// The wait budgets and the steal threshold, each `None` for the executors' default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    /// Between cycles, how long workers spin before parking, in µs.
    pub idle_spin_us: Option<u64>,
    /// Inside a cycle, how long a thread with nothing to do spins before sleeping, in µs.
    pub steal_spin_us: Option<u64>,
    /// Busy-wait iterations before a waiting thread starts yielding.
    pub spins: Option<u32>,
    /// Work stealing: the least work, in µs, a stolen task must bring.
    pub min_steal_us: Option<u64>,
    /// Merge chains of nodes into units.
    pub merge_chains: bool,
    /// Pin thread i to core i, for fugue's executors and the peers alike.
    pub pin: bool,
    /// With cycles paced at a period: how long before the expected start workers wake, in
    /// µs (0: they sleep until the cycle wakes them).
    pub wake_lead_us: Option<u64>,
}

impl Tuning {
    /// The executor options.
    pub fn options(&self) -> ExecOptions {
        let mut o = ExecOptions::default();
        if let Some(n) = self.spins {
            o.idle_budget.spins = n;
            o.steal_budget.spins = n;
        }
        let budget = |us: u64, base: SpinBudget| SpinBudget {
            spins: if us == 0 { 0 } else { base.spins },
            time: Duration::from_micros(us),
        };
        if let Some(us) = self.idle_spin_us {
            o.idle_budget = budget(us, o.idle_budget);
        }
        if let Some(us) = self.steal_spin_us {
            o.steal_budget = budget(us, o.steal_budget);
        }
        if let Some(us) = self.min_steal_us {
            o.min_steal = Duration::from_micros(us);
        }
        if let Some(us) = self.wake_lead_us {
            o.wake_lead = Duration::from_micros(us);
        }
        o
    }
}

/// How to build an executor besides its kind.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Threads, the calling thread included (seq always uses one).
    pub threads: usize,
    /// Static schedule algorithm.
    pub algorithm: Algorithm,
    /// Static schedule costs.
    pub costs: Costs,
    /// Pin threads to cores.
    pub pin: bool,
    /// Wait budgets.
    pub options: ExecOptions,
    /// The kinds the plan's nodes were built by (a static schedule of measured costs builds
    /// them again).
    pub registry: fugue_dsp::Registry,
}

/// An executor built for a plan, and the warnings to say once.
pub type Built = (Box<dyn Executor + Send>, Vec<String>);

/// Builds an in-process executor (a fugue executor or the rayon peer) for `plan`; broken on
/// purpose when the test-only switch [`fugue_exec::fault::FAULT_VAR`] names it.
pub fn build_executor(
    runner: Runner,
    graph: &TaskGraph,
    plan: &Plan,
    spec: &Spec,
) -> Result<Built, BenchError> {
    match runner {
        Runner::Fugue(kind) => {
            let choice = ExecutorChoice {
                kind,
                threads: runner.threads(spec.threads),
                algorithm: spec.algorithm,
                costs: spec.costs.clone(),
                pin: spec.pin,
                options: spec.options.clone(),
                ..ExecutorChoice::default()
            };
            Ok(fugue_engine::build_executor(
                graph,
                &spec.registry,
                plan,
                &choice,
            )?)
        }
        Runner::Rayon => match RayonDag::with_pinning(plan, spec.threads, spec.pin) {
            Ok(r) => {
                let e = fugue_exec::fault::inject(runner.name(), Box::new(r))
                    .map_err(|e| BenchError::Failed(e.to_string()))?;
                let warnings = e.warnings().to_vec();
                Ok((e, warnings))
            }
            Err(e) => failed(format!("cannot start the rayon pool: {e}")),
        },
        Runner::Tbb => failed("the tbb peer runs in its own process"),
    }
}

/// Pause between two runs: the threads of the runner measured before (fugue's workers spin
/// for their idle budget, rayon's for its own) park before the next run starts, so that no
/// runner is measured beside another one's spinning threads.
pub fn settle() {
    std::thread::sleep(Duration::from_millis(20));
}
