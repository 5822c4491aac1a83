//! `mix`: a mixer.
//!
//! - Ports: any number of inputs; every output port carries `volume * (sum of the inputs)`,
//!   summed by [`sum_inputs`] (in groups of 8 beyond 8 inputs, so that the
//!   engine can sum the groups of a wide mix on several threads: see [`group`] and
//!   [`group_after`]).
//!   (The 2019 corpus declares `in`/`out` counts: `in: 2, out: 1` sums two inputs.)
//! - `volume` (default 1.0).

use crate::node::{fan_out, sum_after, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `mix` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let volume = attrs::volume(ctx)?;
    super::frame_parallel(ctx, Mix { volume })
}

/// The node that sums one group of a wide join's input ports ([`DspNode::sums_inputs`]):
/// `inputs` ports, one output, no scaling. Not a kind of the registry: the engine makes these
/// when it splits a join.
pub fn group(inputs: usize) -> Box<dyn DspNode> {
    group_node(inputs, Mix { volume: 1.0 })
}

/// The node that computes the second half of a pair sum of a wide join ([`sum_inputs`]):
/// `inputs` ports, one output; port 0 carries the first half's sum (from a [`group`] node),
/// the others the second half's inputs, and the output is port 0 plus the [`sum_inputs`] of
/// the others. Not a kind of the registry.
pub fn group_after(inputs: usize) -> Box<dyn DspNode> {
    group_node(inputs, SumAfter)
}

/// A node of a split sum: `inputs` ports, one output, frame-parallel, run by `proto`.
fn group_node<P: Processor + Clone + 'static>(inputs: usize, proto: P) -> Box<dyn DspNode> {
    Box::new(super::Simple {
        live: &[],
        inputs,
        outputs: 1,
        io: crate::Io::None,
        ratio: crate::Ratio::ONE,
        frame_parallel: true,
        proto,
    })
}

/// The processor of [`group_after`].
#[derive(Clone, Debug)]
struct SumAfter;

impl Processor for SumAfter {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        if let Some(o) = outputs.first_mut() {
            sum_after(inputs, o);
        }
    }

    fn reset(&mut self) {}
}

/// The `mix` processor.
#[derive(Clone, Debug)]
pub struct Mix {
    volume: f32,
}

impl Processor for Mix {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        sum_inputs(inputs, o);
        super::scale(o, self.volume);
        fan_out(outputs);
    }

    fn reset(&mut self) {}

    /// 0: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        if param == 0 {
            self.volume = value as f32;
        }
    }
}
