//! `mix`: a mixer.
//!
//! - Ports: any number of inputs; every output port carries `volume * (sum of the inputs)`.
//!   (The 2019 corpus declares `in`/`out` counts: `in: 2, out: 1` sums two inputs.)
//! - `volume` (default 1.0).

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `mix` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let volume = attrs::volume(ctx)?;
    super::frame_parallel(ctx, Mix { volume })
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
}
