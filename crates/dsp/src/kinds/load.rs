//! `load`: a synthetic node that computes for a fixed time each cycle, so that scheduling
//! experiments can use exact costs.
//!
//! - Ports: every output port carries the sum of the inputs times `volume` (default 1.0), so
//!   that the audio is the same whatever the timing.
//! - `wcet` (required): the time to compute each cycle, in microseconds (the node's cost). A
//!   call on part of the block (a pipelined cycle cuts it into sub-blocks) computes for that
//!   fraction of the time.
//!
//! It computes, it does not sleep: a chain of dependent multiply-adds behind
//! [`std::hint::black_box`] (which the optimiser cannot remove) runs in batches of 64 until
//! [`Instant::now`] says that `wcet` has passed. Reading the clock is a vDSO call on Linux,
//! not a blocking system call, and allocates nothing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `load` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let wcet = if ctx.node.cost_declared {
        ctx.node.cost
    } else {
        attrs::required(
            ctx,
            "wcet",
            "its computation time per cycle, in microseconds",
        )?
    };
    attrs::check(
        ctx,
        "wcet",
        wcet,
        wcet.is_finite() && (0.0..=1e6).contains(&wcet),
        "must be between 0 and 1000000 microseconds",
    )?;
    let volume = attrs::volume(ctx)?;
    super::simple(
        ctx,
        Load {
            budget: Duration::from_nanos((wcet * 1000.0).round() as u64),
            block: ctx.block.max(1),
            acc: 1.0,
            volume,
        },
    )
}

/// The `load` processor.
#[derive(Clone, Debug)]
pub struct Load {
    budget: Duration,
    /// Frames of a whole cycle (the budget's).
    block: usize,
    acc: f64,
    volume: f32,
}

impl Load {
    /// Computes until `budget` has passed; returns the number of batches run.
    fn burn(&mut self, budget: Duration) -> u64 {
        let start = Instant::now();
        let mut batches = 0;
        let mut acc = self.acc;
        loop {
            for _ in 0..64 {
                acc = black_box(acc * 0.999_999_9 + 1e-7);
            }
            batches += 1;
            if start.elapsed() >= budget {
                break;
            }
        }
        self.acc = acc;
        batches
    }
}

impl Processor for Load {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        if !self.budget.is_zero() {
            // The share of the cycle's budget for the frames of this call.
            let frames = outputs
                .first()
                .map(|o| o.len())
                .or_else(|| inputs.first().map(|i| i.len()))
                .unwrap_or(self.block);
            let budget = if frames >= self.block {
                self.budget
            } else {
                self.budget.mul_f64(frames as f64 / self.block as f64)
            };
            black_box(self.burn(budget));
        }
        let Some(o) = outputs.first_mut() else { return };
        sum_inputs(inputs, o);
        super::scale(o, self.volume);
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.acc = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_graph::Node;

    #[test]
    fn load_computes_for_its_wcet_and_passes_its_inputs() {
        let node = Node::new("busy", "load").with_cost(300.0);
        let ctx = NodeContext {
            node: &node,
            inputs: 2,
            outputs: 1,
            in_edges: 2,
            sample_rate: 48_000.0,
            block: 64,
            rate: crate::Ratio::ONE,
            engine_rate: 48_000.0,
            engine_block: 64,
            folder: None,
        };
        let mut p = build(&ctx).unwrap().processor();
        let (a, b) = (vec![0.25f32; 64], vec![0.5f32; 64]);
        let mut o = vec![0.0f32; 64];
        let mut fastest = Duration::MAX;
        for _ in 0..20 {
            let t = Instant::now();
            p.process(&[&a, &b], &mut [&mut o]);
            fastest = fastest.min(t.elapsed());
        }
        assert!(o.iter().all(|&x| x == 0.75));
        // Never less than its cost (it computes until the clock says so). How little it
        // overshoots is a timing, measured by `examples/load_accuracy.rs`, not asserted here.
        assert!(fastest >= Duration::from_micros(300), "{fastest:?}");
        let missing = Node::new("lazy", "load");
        let err = build(&NodeContext {
            node: &missing,
            ..ctx
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("`wcet`"), "{err}");
    }
}
