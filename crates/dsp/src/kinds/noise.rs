//! `noise`: seeded white noise.
//!
//! - Ports: no input; every output port carries the same noise.
//! - `seed` (default: a hash of the node's name, so every render is identical and two noise
//!   nodes differ); `volume` (default 1.0): samples are uniform in `[-volume, volume)`.

use crate::fast::Rng;
use crate::node::fan_out;
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `noise` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    attrs::no_inputs(ctx)?;
    let seed = attrs::seed(ctx)?;
    let volume = attrs::volume(ctx)?;
    super::simple(
        ctx,
        Noise {
            seed,
            rng: Rng::new(seed),
            volume,
        },
    )
}

/// The `noise` processor.
#[derive(Clone, Debug)]
pub struct Noise {
    seed: u64,
    rng: Rng,
    volume: f32,
}

impl Processor for Noise {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        for x in o.iter_mut() {
            *x = self.volume * self.rng.bipolar();
        }
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.rng = Rng::new(self.seed);
    }

    /// 0: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        if param == 0 {
            self.volume = value as f32;
        }
    }
}
