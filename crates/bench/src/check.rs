//! Checking timed cycles against the sequential executor, bit for bit: a second plan run by
//! `seq` in step with the timed one ([`SeqReference`]), and, for runs whose outputs are not
//! kept, seq's output hash ([`Plan::output_hash`]) of every cycle against the one each cycle
//! recorded ([`check_hashes`]).
//!
//! The reference is always [`SeqExecutor`] built here, never through
//! [`fugue_exec::build`]: the test-only fault switch ([`fugue_exec::fault`]) cannot reach it.

use fugue_dsp::Registry;
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::TaskGraph;

use crate::error::BenchError;

/// The sequential executor on its own copy of a plan, one cycle per [`check`](Self::check):
/// the timed plan, whatever ran it, must hold the same output, bit for bit, cycle after
/// cycle.
pub struct SeqReference {
    plan: Plan,
    seq: SeqExecutor,
    cycles: u64,
}

impl SeqReference {
    /// Compiles `g` again with the same options as the timed plan.
    pub fn new(g: &TaskGraph, reg: &Registry, opts: &CompileOptions) -> Result<Self, BenchError> {
        let plan = Plan::compile(g, reg, opts)?;
        Ok(SeqReference {
            plan,
            seq: SeqExecutor::new(),
            cycles: 0,
        })
    }

    /// Runs the reference's next cycle without comparing it with anything.
    pub fn advance(&mut self) {
        self.seq.run_cycle(&mut self.plan);
        self.cycles += 1;
    }

    /// The output hash of the reference's last cycle.
    pub fn hash(&self) -> u64 {
        self.plan.output_hash()
    }

    /// Runs the reference's next cycle and compares its output with `timed`'s last cycle.
    /// The error names `who`, the cycle (from 1), the output channel and the sample.
    pub fn check(&mut self, timed: &Plan, who: &str) -> Result<(), BenchError> {
        self.advance();
        for c in 0..timed.n_outputs().max(self.plan.n_outputs()) {
            let empty: &[f32] = &[];
            let a = if c < timed.n_outputs() {
                timed.output(c)
            } else {
                empty
            };
            let b = if c < self.plan.n_outputs() {
                self.plan.output(c)
            } else {
                empty
            };
            if let Some(i) = a
                .iter()
                .zip(b)
                .position(|(x, y)| x.to_bits() != y.to_bits())
                .or((a.len() != b.len()).then_some(a.len().min(b.len())))
            {
                return Err(BenchError::Failed(format!(
                    "{who}: cycle {} differs from seq at output channel {c}, sample {i}: {} against {}",
                    self.cycles,
                    bits(a.get(i)),
                    bits(b.get(i))
                )));
            }
        }
        Ok(())
    }

    /// Cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}

/// A sample and its bits, or `none` past the end of a channel.
fn bits(x: Option<&f32>) -> String {
    match x {
        Some(x) => format!("{x:e} ({:#010x})", x.to_bits()),
        None => "none".into(),
    }
}

/// The first recorded cycle whose output hash differs from seq's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashMismatch {
    /// The cycle's index, from 0 (as [`fugue_engine::CycleRecord::cycle`]).
    pub cycle: u64,
    /// The hash the timed run recorded.
    pub timed: u64,
    /// Seq's.
    pub seq: u64,
}

/// Runs seq on `g` (compiled with `opts`, silent inputs) for as many cycles as the last of
/// `recorded` says, and compares the hash of each cycle with the one recorded for it:
/// `recorded` holds `(cycle index from 0, output hash)` pairs in increasing cycle order, as a
/// real-time run's records give them (a record dropped from the statistics leaves a gap: that
/// cycle's time does not count, and it is not compared). Returns the number of cycles
/// compared.
pub fn check_hashes(
    g: &TaskGraph,
    reg: &Registry,
    opts: &CompileOptions,
    recorded: impl IntoIterator<Item = (u64, u64)>,
) -> Result<Result<u64, HashMismatch>, BenchError> {
    let mut r = SeqReference::new(g, reg, opts)?;
    let mut compared = 0;
    for (cycle, timed) in recorded {
        if cycle < r.cycles() {
            return Err(BenchError::Failed(format!(
                "cycle {cycle} recorded twice or out of order"
            )));
        }
        while r.cycles() <= cycle {
            r.advance();
        }
        let seq = r.hash();
        if seq != timed {
            return Ok(Err(HashMismatch { cycle, timed, seq }));
        }
        compared += 1;
    }
    Ok(Ok(compared))
}

/// Finds where `timed`, which holds the output of its cycle `cycle` (from 1) since a reset
/// or its compilation, differs from seq's same cycle: the error of [`SeqReference::check`]
/// (channel and sample), or `None` if it does not differ.
pub fn locate(
    g: &TaskGraph,
    reg: &Registry,
    opts: &CompileOptions,
    timed: &Plan,
    cycle: u64,
    who: &str,
) -> Result<Option<BenchError>, BenchError> {
    let mut r = SeqReference::new(g, reg, opts)?;
    while r.cycles() + 1 < cycle {
        r.advance();
    }
    Ok(r.check(timed, who).err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_that_drifts_from_seq_is_caught() {
        let g = fugue_graph::gen::diamond(2);
        let reg = Registry::with_builtin_kinds();
        let opts = CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            placeholder: false,
            merge_chains: true,
            ..Default::default()
        };
        let mut timed = Plan::compile(&g, &reg, &opts).unwrap();
        let mut ws = fugue_exec::build(
            fugue_exec::ExecutorKind::Ws,
            &timed,
            2,
            None,
            &fugue_exec::ExecOptions::default(),
        )
        .unwrap();
        let mut r = SeqReference::new(&g, &reg, &opts).unwrap();
        for _ in 0..20 {
            ws.run_cycle(&mut timed);
            r.check(&timed, "ws").unwrap();
        }
        // One cycle skipped: the timed plan is a cycle behind, its audio differs.
        let e = r.check(&timed, "ws").unwrap_err().to_string();
        assert!(
            e.starts_with("ws: cycle 21 differs from seq at output channel 0, sample 0: "),
            "{e}"
        );
        assert_eq!(r.cycles(), 21);
        // Found again from scratch, and by the hashes of the cycles.
        let e = locate(&g, &reg, &opts, &timed, 21, "ws").unwrap().unwrap();
        assert!(e.to_string().starts_with("ws: cycle 21 differs"), "{e}");
        assert!(locate(&g, &reg, &opts, &timed, 20, "ws").unwrap().is_none());
        let mut seq = SeqReference::new(&g, &reg, &opts).unwrap();
        let mut recorded = Vec::new();
        for c in 0..20u64 {
            seq.advance();
            recorded.push((c, seq.hash()));
        }
        // Cycle 7's record dropped: still in step.
        recorded.remove(7);
        assert_eq!(
            check_hashes(&g, &reg, &opts, recorded.clone()).unwrap(),
            Ok(19)
        );
        recorded[10].1 ^= 1;
        assert_eq!(
            check_hashes(&g, &reg, &opts, recorded.clone()).unwrap(),
            Err(HashMismatch {
                cycle: 11,
                timed: recorded[10].1,
                seq: recorded[10].1 ^ 1
            })
        );
    }
}
