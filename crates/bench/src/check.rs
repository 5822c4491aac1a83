//! Checking timed cycles against the sequential executor: a hash of the bits of a cycle's
//! output ([`output_hash`]), and a second plan run by `seq` in step with the timed one
//! ([`SeqReference`]), for probes that advance one plan through several executors.

use fugue_dsp::Registry;
use fugue_exec::{build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;

use crate::error::BenchError;

/// A hash (FNV-1a over the bits) of every output sample of the plan's last cycle.
pub fn output_hash(plan: &Plan) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in 0..plan.n_outputs() {
        for &x in plan.output(c) {
            h ^= u64::from(x.to_bits());
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The sequential executor on its own copy of a plan, one cycle per [`check`](Self::check):
/// the timed plan, whatever ran it, must hold the same output, bit for bit, cycle after
/// cycle.
pub struct SeqReference {
    plan: Plan,
    seq: Box<dyn Executor + Send>,
    cycles: u64,
}

impl SeqReference {
    /// Compiles `g` again with the same options as the timed plan.
    pub fn new(g: &TaskGraph, reg: &Registry, opts: &CompileOptions) -> Result<Self, BenchError> {
        let plan = Plan::compile(g, reg, opts)?;
        let seq = build(ExecutorKind::Seq, &plan, 1, None, &ExecOptions::default())
            .map_err(|e| BenchError::Failed(format!("cannot build seq: {e}")))?;
        Ok(SeqReference {
            plan,
            seq,
            cycles: 0,
        })
    }

    /// Runs the reference's next cycle and compares its output with `timed`'s last cycle.
    pub fn check(&mut self, timed: &Plan, who: &str) -> Result<(), BenchError> {
        self.seq.run_cycle(&mut self.plan);
        self.cycles += 1;
        for c in 0..timed.n_outputs().max(self.plan.n_outputs()) {
            let (a, b) = (timed.output(c), self.plan.output(c));
            if let Some(i) = a
                .iter()
                .zip(b)
                .position(|(x, y)| x.to_bits() != y.to_bits())
                .or((a.len() != b.len()).then_some(a.len().min(b.len())))
            {
                return Err(BenchError::Failed(format!(
                    "{who}: cycle {} differs from seq at output {c}, sample {i}: {:?} against {:?}",
                    self.cycles,
                    a.get(i),
                    b.get(i)
                )));
            }
        }
        Ok(())
    }

    /// Cycles checked so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
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
        };
        let mut timed = Plan::compile(&g, &reg, &opts).unwrap();
        let mut ws = build(ExecutorKind::Ws, &timed, 2, None, &ExecOptions::default()).unwrap();
        let mut r = SeqReference::new(&g, &reg, &opts).unwrap();
        for _ in 0..20 {
            ws.run_cycle(&mut timed);
            r.check(&timed, "ws").unwrap();
        }
        // One cycle skipped: the timed plan is a cycle behind, its audio differs.
        r.check(&timed, "ws").unwrap_err();
        assert_eq!(r.cycles(), 21);
    }
}
