//! Test-only fault injection: makes one named executor compute a wrong result, so that tests
//! can show that the benchmarks' checks catch it, through the real command-line binary.
//!
//! **Never set this outside a test.** The switch is the environment variable
//! [`FAULT_VAR`] (`FUGUE_TEST_FAULT`), read by [`build`](crate::build) (and by callers that
//! build their own executors through [`inject`]) each time an executor is built, on the
//! control thread; it is never read while cycles run. Its value is
//!
//! ```text
//! MODE:EXECUTOR[@CYCLE]
//! ```
//!
//! - `EXECUTOR` is the name of the executor to break, exactly as on the command line (`ws`,
//!   `levels`, `static`, ..., `rayon` for the benchmarks' rayon peer). Executors of other
//!   names are built as usual, with no wrapper and no cost.
//! - `CYCLE` is the cycle, counted from 1 since the executor was built, that goes wrong
//!   ([`DEFAULT_CYCLE`] when left out). Only that one cycle is touched.
//! - `MODE` is `flip`: the cycle runs, then the lowest bit of one sample of output channel 0
//!   (frame `block / 2`) is flipped (a plan without output channels has no sample to flip:
//!   the cycle is skipped instead); or `skip`: the cycle runs no task at all (every output
//!   keeps the previous cycle's samples, every processor falls one cycle behind).
//!
//! A value that does not parse makes the build fail (a typo must not leave a test believing
//! it injected a fault). A broken executor also says so in its [`Executor::warnings`]. The
//! reference of every check, the sequential executor run by the checker itself
//! ([`SeqExecutor`](crate::SeqExecutor) built directly), is never wrapped.

use crate::executors::BuildError;
use crate::{Executor, Plan};

/// The environment variable that injects a fault: `MODE:EXECUTOR[@CYCLE]` (test-only).
pub const FAULT_VAR: &str = "FUGUE_TEST_FAULT";

/// The cycle that goes wrong when the value names none: the fifth, past the first few.
pub const DEFAULT_CYCLE: u64 = 5;

/// How the broken executor goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultMode {
    /// Runs the cycle, then flips the lowest bit of one output sample.
    Flip,
    /// Runs no task in the cycle.
    Skip,
}

/// A parsed fault: which executor goes wrong, how, and in which cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// How.
    pub mode: FaultMode,
    /// The executor's name.
    pub executor: String,
    /// The cycle, from 1.
    pub cycle: u64,
}

impl Fault {
    /// Parses `MODE:EXECUTOR[@CYCLE]`.
    pub fn parse(s: &str) -> Result<Fault, String> {
        let bad = || {
            format!("{FAULT_VAR}=`{s}`: expected flip:EXECUTOR[@CYCLE] or skip:EXECUTOR[@CYCLE]")
        };
        let (mode, rest) = s.split_once(':').ok_or_else(bad)?;
        let mode = match mode {
            "flip" => FaultMode::Flip,
            "skip" => FaultMode::Skip,
            _ => return Err(bad()),
        };
        let (executor, cycle) = match rest.split_once('@') {
            Some((e, c)) => (e, c.parse::<u64>().ok().filter(|&c| c > 0).ok_or_else(bad)?),
            None => (rest, DEFAULT_CYCLE),
        };
        if executor.is_empty() {
            return Err(bad());
        }
        Ok(Fault {
            mode,
            executor: executor.to_string(),
            cycle,
        })
    }

    /// The fault the environment asks for, if any.
    pub fn from_env() -> Result<Option<Fault>, String> {
        match std::env::var(FAULT_VAR) {
            Ok(v) => Fault::parse(&v).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{FAULT_VAR} is not UTF-8")),
        }
    }
}

/// `executor`, named `name`, broken as [`FAULT_VAR`] asks when it names `name`; else
/// `executor` itself. Control thread (reads the environment, allocates).
pub fn inject(
    name: &str,
    executor: Box<dyn Executor + Send>,
) -> Result<Box<dyn Executor + Send>, BuildError> {
    match Fault::from_env().map_err(BuildError::Fault)? {
        Some(f) if f.executor == name => {
            let mut warnings = executor.warnings().to_vec();
            warnings.push(format!(
                "{FAULT_VAR}: executor {name} is broken on purpose ({} in cycle {}); a test-only switch",
                match f.mode {
                    FaultMode::Flip => "one output bit flipped",
                    FaultMode::Skip => "every task skipped",
                },
                f.cycle
            ));
            Ok(Box::new(Faulty {
                inner: executor,
                mode: f.mode,
                at: f.cycle,
                cycles: 0,
                warnings,
            }))
        }
        _ => Ok(executor),
    }
}

/// An executor that goes wrong in one cycle.
struct Faulty {
    inner: Box<dyn Executor + Send>,
    mode: FaultMode,
    /// The cycle that goes wrong, from 1.
    at: u64,
    /// Cycles run so far.
    cycles: u64,
    warnings: Vec<String>,
}

impl Executor for Faulty {
    fn run_cycle(&mut self, plan: &mut Plan) {
        self.cycles += 1;
        if self.cycles != self.at {
            self.inner.run_cycle(plan);
            return;
        }
        if self.mode == FaultMode::Flip && plan.n_outputs() > 0 {
            self.inner.run_cycle(plan);
            let out = plan.output_mut(0);
            let i = out.len() / 2;
            if let Some(x) = out.get_mut(i) {
                *x = f32::from_bits(x.to_bits() ^ 1);
            }
        }
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn steals(&self) -> u64 {
        self.inner.steals()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_exactly() {
        assert_eq!(
            Fault::parse("flip:ws").unwrap(),
            Fault {
                mode: FaultMode::Flip,
                executor: "ws".into(),
                cycle: DEFAULT_CYCLE
            }
        );
        assert_eq!(
            Fault::parse("skip:levels@12").unwrap(),
            Fault {
                mode: FaultMode::Skip,
                executor: "levels".into(),
                cycle: 12
            }
        );
        for bad in [
            "",
            "ws",
            "flip",
            "flip:",
            "Flip:ws",
            "flip:ws@0",
            "flip:ws@x",
            "drop:ws",
        ] {
            assert!(Fault::parse(bad).is_err(), "{bad}");
        }
    }

    /// A wrapped seq: the flipped cycle differs from a clean seq in exactly one bit; the
    /// skipped cycle leaves the plan a cycle behind.
    #[test]
    fn the_broken_cycle_differs_and_only_it_for_flip() {
        let g = fugue_graph::gen::diamond(2);
        let reg = fugue_dsp::Registry::with_builtin_kinds();
        let opts = crate::CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            ..Default::default()
        };
        for mode in [FaultMode::Flip, FaultMode::Skip] {
            let mut a = Plan::compile(&g, &reg, &opts).unwrap();
            let mut b = Plan::compile(&g, &reg, &opts).unwrap();
            let mut clean = crate::SeqExecutor::new();
            let mut broken = Faulty {
                inner: Box::new(crate::SeqExecutor::new()),
                mode,
                at: 3,
                cycles: 0,
                warnings: Vec::new(),
            };
            for cycle in 1..=4u64 {
                clean.run_cycle(&mut a);
                broken.run_cycle(&mut b);
                let differs = (0..a.n_outputs()).any(|c| {
                    a.output(c)
                        .iter()
                        .zip(b.output(c))
                        .any(|(x, y)| x.to_bits() != y.to_bits())
                });
                match (mode, cycle) {
                    (_, 1 | 2) | (FaultMode::Flip, 4) => assert!(!differs, "{mode:?} {cycle}"),
                    _ => assert!(differs, "{mode:?} {cycle}"),
                }
            }
        }
    }
}
