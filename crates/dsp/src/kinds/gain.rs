//! `gain`: a fixed gain.
//!
//! - Ports: the sum of the inputs, times the gain, on every output port.
//! - `gain` (default 1.0): linear factor; `db` (default 0): decibels, multiplied in;
//!   `volume` (default 1.0), multiplied in as well.

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `gain` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let g = attrs::level(ctx, "gain", 1.0)?;
    let db = attrs::decibels(ctx, "db", 0.0)?;
    let volume = attrs::volume(ctx)?;
    let factor = factor(g, db, volume);
    super::frame_parallel(
        ctx,
        Gain {
            factor,
            parts: [g, db, f64::from(volume)],
        },
    )
}

/// The factor of `gain`, `db` and `volume`.
fn factor(gain: f64, db: f64, volume: f32) -> f32 {
    (gain * 10f64.powf(db / 20.0)) as f32 * volume
}

/// The `gain` processor.
#[derive(Clone, Debug)]
pub struct Gain {
    factor: f32,
    /// `gain`, `db` and `volume`, the live parameters 0, 1 and 2.
    parts: [f64; 3],
}

impl Processor for Gain {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        sum_inputs(inputs, o);
        super::scale(o, self.factor);
        fan_out(outputs);
    }

    fn reset(&mut self) {}

    fn set_param(&mut self, param: usize, value: f64) {
        if let Some(p) = self.parts.get_mut(param) {
            *p = value;
            let [g, db, volume] = self.parts;
            self.factor = factor(g, db, volume as f32);
        }
    }
}
