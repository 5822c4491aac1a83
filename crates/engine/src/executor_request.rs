//! What a user asks of the executor, before defaults are filled in: [`ExecutorRequest`], each
//! field as given or absent, made into an [`ExecutorChoice`] by [`ExecutorRequest::choice_or`]
//! with the defaults of the command (auto for a render or a run, seq for a profile or a
//! benchmark). The names the user writes are read here too: [`GraphExecutor`]'s, a
//! [`Pipeline`]'s and the [`Costs`]' (`FromStr`).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use fugue_exec::{ExecOptions, ExecutorKind};
use fugue_sched::Algorithm;

use crate::auto::{AutoReport, Untried};
use crate::host::GraphExecutor;
use crate::{Costs, ExecutorChoice, Pipeline};

/// The seed of the random schedule when none is given (`--seed`).
pub const DEFAULT_SEED: u64 = 1;

/// The executor's settings as asked, `None` where the user said nothing.
#[derive(Clone, Debug)]
pub struct ExecutorRequest {
    /// The executor named (`auto` included).
    pub executor: Option<GraphExecutor>,
    /// Threads, the audio thread included.
    pub threads: Option<usize>,
    /// The static schedule's algorithm.
    pub algorithm: Option<Algorithm>,
    /// The static schedule's costs.
    pub costs: Costs,
    /// The random schedule's seed.
    pub seed: u64,
    /// Pin threads (always).
    pub pin: bool,
    /// Do not pin threads in real time.
    pub no_pin: bool,
    /// Schedule node by node instead of merging chains into units.
    pub no_merge_chains: bool,
    /// Real-time priority of the workers.
    pub rt: Option<i32>,
    /// Work stealing's threshold, µs.
    pub min_steal_us: Option<u64>,
    /// How long before a cycle sleeping workers wake, µs.
    pub wake_lead_us: Option<u64>,
    /// Sub-blocks per cycle.
    pub pipeline: Option<Pipeline>,
}

impl Default for ExecutorRequest {
    fn default() -> Self {
        Self {
            executor: None,
            threads: None,
            algorithm: None,
            costs: Costs::Declared,
            seed: DEFAULT_SEED,
            pin: false,
            no_pin: false,
            no_merge_chains: false,
            rt: None,
            min_steal_us: None,
            wake_lead_us: None,
            pipeline: None,
        }
    }
}

impl ExecutorRequest {
    /// Settings the chosen executor ignores, one sentence each: `--algorithm` without
    /// `--executor static`, more than one thread with `--executor seq`, more threads than
    /// cores, `--costs` without a static schedule, `--seed` without a seeded algorithm. `default` is the
    /// executor used when none is named.
    pub fn warnings(&self, default: GraphExecutor) -> Vec<String> {
        let e = self.executor.unwrap_or(default);
        let how = if self.executor.is_none() {
            " (the default)"
        } else {
            ""
        };
        let mut out = Vec::new();
        if let Some(a) = self.algorithm {
            if e != GraphExecutor::Kind(ExecutorKind::Static) {
                out.push(format!(
                    "--algorithm {a} applies to --executor static only; it is ignored with --executor {e}{how}"
                ));
            }
        }
        if let Some(t) = self.threads.filter(|&t| t > 1) {
            let cores = fugue_exec::placement::available_cores();
            if e == GraphExecutor::Kind(ExecutorKind::Seq) {
                out.push(format!(
                    "--threads {t} is ignored with --executor {e}{how}, which runs every node on one thread; name a parallel executor (ws, static, ...) or auto to use {t}"
                ));
            } else if e == GraphExecutor::Auto && t > cores {
                out.push(format!(
                    "--threads {t} is more than the {cores} {} this process may use: auto tries candidates of at most {cores} thread(s)",
                    if cores == 1 { "core" } else { "cores" },
                ));
            } else if t > cores {
                out.push(format!(
                    "--threads {t} is more than the {cores} {} this process may use: the threads take turns on {}, and a cycle waits for a thread that is not running; --threads {cores} at most uses the machine whole",
                    if cores == 1 { "core" } else { "cores" },
                    if cores == 1 { "it" } else { "them" },
                ));
            }
        }
        let is_static = e == GraphExecutor::Kind(ExecutorKind::Static);
        // Auto's static candidates are scheduled with the costs asked.
        if !matches!(self.costs, Costs::Declared) && !is_static && e != GraphExecutor::Auto {
            out.push(format!(
                "--costs applies to --executor static (and auto's static candidates) only; it is ignored with --executor {e}{how}"
            ));
        }
        let seeded = matches!(
            self.algorithm,
            Some(Algorithm::Random | Algorithm::Best | Algorithm::Optimal)
        );
        if self.seed != DEFAULT_SEED && !(is_static && seeded) {
            out.push(format!(
                "--seed applies to --executor static with --algorithm random, best or optimal only; it is ignored with --executor {e}{how}{}",
                match self.algorithm {
                    Some(a) if is_static => format!(" --algorithm {a}"),
                    _ => String::new(),
                }
            ));
        }
        out
    }

    /// Whether threads are pinned: always with `pin`; in real time (`realtime`) unless
    /// `no_pin`.
    pub fn pin_for(&self, realtime: bool) -> bool {
        self.pin || (realtime && !self.no_pin)
    }

    /// Whether to say what the automatic choice chose: always when `auto` was named; as the
    /// default, when it measured something or kept seq because the run is too short to
    /// measure (a graph with nothing to choose from stays with seq without a word).
    pub fn says_auto(&self, report: &AutoReport) -> bool {
        self.executor == Some(GraphExecutor::Auto)
            || report.candidates.len() > 1
            || report.untried == Some(Untried::Short)
    }

    /// The executor's options: the defaults with the thresholds asked.
    pub fn options(&self) -> ExecOptions {
        let mut o = ExecOptions::default();
        if let Some(us) = self.min_steal_us {
            o.min_steal = Duration::from_micros(us);
        }
        if let Some(us) = self.wake_lead_us {
            o.wake_lead = Duration::from_micros(us);
        }
        o
    }

    /// The choice, seq when no executor was named (a profile, a benchmark).
    pub fn choice(&self) -> ExecutorChoice {
        self.choice_or(GraphExecutor::Kind(ExecutorKind::Seq), false)
    }

    /// The choice, `default` when no executor was named. Under `auto` the pipelining is
    /// tried both ways unless asked, except with `profile` (a profiled run, which needs
    /// whole tasks). Threads: 1 for seq and auto, else one per core, unless asked.
    pub fn choice_or(&self, default: GraphExecutor, profile: bool) -> ExecutorChoice {
        let executor = self.executor.unwrap_or(default);
        let kind = match executor {
            GraphExecutor::Auto => ExecutorKind::Seq,
            GraphExecutor::Kind(k) => k,
        };
        let pipeline = match (self.pipeline, executor) {
            (Some(p), _) => p,
            (None, GraphExecutor::Auto) if !profile => Pipeline::Auto,
            (None, _) => Pipeline::Sub(1),
        };
        let threads = match (self.threads, executor) {
            (Some(t), _) => t,
            (None, GraphExecutor::Kind(ExecutorKind::Seq) | GraphExecutor::Auto) => 1,
            (None, _) => fugue_exec::placement::available_cores(),
        };
        ExecutorChoice {
            kind,
            auto: executor == GraphExecutor::Auto,
            auto_cycles: None,
            auto_budget: None,
            threads,
            algorithm: self.algorithm.unwrap_or(Algorithm::Hlfet),
            costs: self.costs.clone(),
            seed: self.seed,
            time_limit: Duration::from_secs(2),
            pin: self.pin,
            rt: self.rt,
            merge_chains: !self.no_merge_chains,
            pipeline,
            overlap: 1,
            auto_overlap: false,
            trials_in_run: false,
            auto_threads: self.threads.filter(|_| executor == GraphExecutor::Auto),
            options: self.options(),
            stop: None,
        }
    }
}

impl ExecutorChoice {
    /// The executor and threads that played: the ones `auto` chose when it chose, else this
    /// choice's.
    pub fn played(&self, auto: Option<&AutoReport>) -> (ExecutorKind, usize) {
        // seq runs on one thread whatever `--threads` says (said as ignored).
        let threads = if self.kind == ExecutorKind::Seq {
            1
        } else {
            self.threads
        };
        auto.map_or((self.kind, threads), |a| {
            (a.chosen().kind, a.chosen().threads)
        })
    }
}

/// Checks pipelining against the buffer (when known before the run) and the profile: one
/// sentence when the sub-blocks do not divide the buffer, or when a pipelined run is to be
/// profiled.
pub fn check_pipeline(
    pipeline: Option<Pipeline>,
    buffer: Option<usize>,
    profile: bool,
) -> Result<(), String> {
    let Some(pipeline) = pipeline else {
        return Ok(());
    };
    if let (Pipeline::Sub(n), Some(buffer)) = (pipeline, buffer) {
        if n > 1 && !buffer.is_multiple_of(n) {
            return Err(format!(
                "--pipeline {n} does not divide the buffer of {buffer} frames; choose a divisor of the buffer (1 turns pipelining off) or auto"
            ));
        }
    }
    if profile && pipeline != Pipeline::Sub(1) {
        return Err("--profile cannot be used with --pipeline: a pipelined task runs once per sub-block and the profile keeps one record per task; profile without --pipeline".into());
    }
    Ok(())
}

impl FromStr for GraphExecutor {
    type Err = String;

    /// `auto`, or an executor's name.
    fn from_str(s: &str) -> Result<GraphExecutor, String> {
        if s == "auto" {
            return Ok(GraphExecutor::Auto);
        }
        ExecutorKind::from_name(s)
            .map(GraphExecutor::Kind)
            .ok_or_else(|| {
                let names: Vec<&str> = ExecutorKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown executor `{s}`; expected one of {}, auto",
                    names.join(", ")
                )
            })
    }
}

impl FromStr for Pipeline {
    type Err = String;

    /// A number of sub-blocks (at least 1) or `auto`.
    fn from_str(s: &str) -> Result<Pipeline, String> {
        if s == "auto" {
            return Ok(Pipeline::Auto);
        }
        match s.parse::<usize>() {
            Ok(n) if (1..=fugue_exec::MAX_PIPELINE).contains(&n) => Ok(Pipeline::Sub(n)),
            _ => Err(format!(
                "`{s}` is not a number of sub-blocks: give a whole number from 1 to {} (1 turns pipelining off) that divides the buffer, or auto",
                fugue_exec::MAX_PIPELINE
            )),
        }
    }
}

impl FromStr for Costs {
    type Err = std::convert::Infallible;

    /// `declared`, `measured`, or the path of a costs file.
    fn from_str(s: &str) -> Result<Costs, Self::Err> {
        Ok(match s {
            "declared" => Costs::Declared,
            "measured" => Costs::Measured,
            path => Costs::File(PathBuf::from(path)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipeline is 1 to `MAX_PIPELINE` sub-blocks, or auto.
    #[test]
    fn pipelines_are_bounded() {
        assert_eq!("4".parse::<Pipeline>(), Ok(Pipeline::Sub(4)));
        let most = fugue_exec::MAX_PIPELINE;
        assert_eq!(
            most.to_string().parse::<Pipeline>(),
            Ok(Pipeline::Sub(most))
        );
        for bad in ["0", "-1", "x", &(most + 1).to_string(), "1048576"] {
            let e = bad.parse::<Pipeline>().unwrap_err();
            assert!(e.contains("from 1 to 256"), "{bad}: {e}");
        }
        // The plan compiler bounds the sub-blocks of a pipeline times the cycles overlapped
        // (a library's options).
        let g = fugue_graph::gen::line(3);
        let compile = |pipeline| {
            fugue_exec::Plan::compile(
                &g,
                &fugue_dsp::Registry::with_builtin_kinds(),
                &fugue_exec::CompileOptions {
                    block: 1 << 16,
                    pipeline,
                    ..Default::default()
                },
            )
        };
        compile(256 * 16).unwrap();
        let e = compile(2 * 256 * 16).unwrap_err();
        assert!(e.to_string().contains("more than the 4096"), "{e}");
    }

    #[test]
    fn names_read_back() {
        assert_eq!("auto".parse::<GraphExecutor>(), Ok(GraphExecutor::Auto));
        assert_eq!(
            "ws".parse::<GraphExecutor>(),
            Ok(GraphExecutor::Kind(ExecutorKind::Ws))
        );
        assert!("wss".parse::<GraphExecutor>().unwrap_err().contains("auto"));
        assert_eq!("4".parse::<Pipeline>(), Ok(Pipeline::Sub(4)));
        assert_eq!("auto".parse::<Pipeline>(), Ok(Pipeline::Auto));
        assert!("0".parse::<Pipeline>().is_err());
        assert_eq!(
            "c.csv".parse::<Costs>(),
            Ok(Costs::File(PathBuf::from("c.csv")))
        );
    }

    #[test]
    fn defaults_follow_the_executor() {
        let r = ExecutorRequest::default();
        let seq = r.choice();
        assert_eq!(
            (seq.kind, seq.threads, seq.auto),
            (ExecutorKind::Seq, 1, false)
        );
        assert_eq!(seq.pipeline, Pipeline::Sub(1));
        let auto = r.choice_or(GraphExecutor::Auto, false);
        assert!(auto.auto);
        assert_eq!(auto.pipeline, Pipeline::Auto);
        assert_eq!(
            r.choice_or(GraphExecutor::Auto, true).pipeline,
            Pipeline::Sub(1)
        );
        let ws = ExecutorRequest {
            executor: Some(GraphExecutor::Kind(ExecutorKind::Ws)),
            algorithm: Some(Algorithm::Etf),
            min_steal_us: Some(7),
            ..ExecutorRequest::default()
        };
        assert_eq!(
            ws.choice().threads,
            fugue_exec::placement::available_cores()
        );
        assert_eq!(ws.choice().options.min_steal, Duration::from_micros(7));
        assert_eq!(ws.warnings(GraphExecutor::Auto).len(), 1);
        assert!(ws.pin_for(true) && !ws.pin_for(false));
        // More than one thread for seq, named or the default: said; one thread: nothing.
        let cores = fugue_exec::placement::available_cores();
        for (executor, threads, said) in [
            (Some(GraphExecutor::Kind(ExecutorKind::Seq)), 3, 1),
            (None, 2, 1),
            (Some(GraphExecutor::Kind(ExecutorKind::Seq)), 1, 0),
            (Some(GraphExecutor::Kind(ExecutorKind::Ws)), cores, 0),
            // More threads than cores: said (auto tries no more than the cores, which it says).
            (Some(GraphExecutor::Kind(ExecutorKind::Ws)), cores + 1, 1),
            (Some(GraphExecutor::Auto), cores + 1, 1),
            (Some(GraphExecutor::Auto), cores, 0),
        ] {
            let r = ExecutorRequest {
                executor,
                threads: Some(threads),
                ..ExecutorRequest::default()
            };
            let w = r.warnings(GraphExecutor::Kind(ExecutorKind::Seq));
            assert_eq!(w.len(), said, "{executor:?} {threads}: {w:?}");
        }
    }

    #[test]
    fn costs_and_seed_are_said_where_no_schedule_reads_them() {
        let kind = |k| Some(GraphExecutor::Kind(k));
        for (executor, algorithm, costs, seed, said) in [
            (
                kind(ExecutorKind::Ws),
                None,
                Costs::Measured,
                DEFAULT_SEED,
                1,
            ),
            (
                kind(ExecutorKind::Static),
                None,
                Costs::Measured,
                DEFAULT_SEED,
                0,
            ),
            (
                Some(GraphExecutor::Auto),
                None,
                Costs::Measured,
                DEFAULT_SEED,
                0,
            ),
            (kind(ExecutorKind::Ws), None, Costs::Declared, 7, 1),
            (kind(ExecutorKind::Static), None, Costs::Declared, 7, 1),
            (
                kind(ExecutorKind::Static),
                Some(Algorithm::Etf),
                Costs::Declared,
                7,
                1,
            ),
            (
                kind(ExecutorKind::Static),
                Some(Algorithm::Random),
                Costs::Declared,
                7,
                0,
            ),
            (
                kind(ExecutorKind::Static),
                Some(Algorithm::Best),
                Costs::Declared,
                7,
                0,
            ),
            (kind(ExecutorKind::Ws), None, Costs::Measured, 7, 2),
        ] {
            let r = ExecutorRequest {
                executor,
                algorithm,
                costs: costs.clone(),
                seed,
                ..ExecutorRequest::default()
            };
            let w = r.warnings(GraphExecutor::Auto);
            assert_eq!(
                w.len(),
                said,
                "{executor:?} {algorithm:?} {costs:?} {seed}: {w:?}"
            );
        }
    }

    #[test]
    fn pipelining_is_checked() {
        assert!(check_pipeline(Some(Pipeline::Sub(3)), Some(512), false).is_err());
        assert!(check_pipeline(Some(Pipeline::Sub(4)), Some(512), false).is_ok());
        assert!(check_pipeline(Some(Pipeline::Auto), None, true).is_err());
        assert!(check_pipeline(None, Some(7), true).is_ok());
    }
}
