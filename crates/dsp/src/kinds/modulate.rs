//! `mod`: ring modulation by a sine.
//!
//! - Ports: the sum of the input ports (usually one) is the input; every output port carries
//!   `volume * input * sin(2π (phase + n * freq / rate))`.
//! - `freq` (required): modulator frequency in Hz, within ±1e9.
//! - `volume` (default 1.0), `phase` (default 0.0, turns): as for `osc`.

use crate::fast::Phasor;
use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `mod` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let freq = attrs::sine_freq(ctx)?;
    let volume = attrs::volume(ctx)?;
    let phase = attrs::or(ctx, "phase", 0.0)?;
    let start = Phasor::new(freq, ctx.sample_rate, phase);
    super::simple(
        ctx,
        Mod {
            start,
            phasor: start,
            volume,
            rate: ctx.sample_rate,
            buf: vec![0.0; ctx.block],
        },
    )
}

/// The `mod` processor.
#[derive(Clone, Debug)]
pub struct Mod {
    start: Phasor,
    phasor: Phasor,
    volume: f32,
    rate: f64,
    buf: Vec<f32>,
}

impl Processor for Mod {
    fn memory(&self) -> usize {
        self.buf.len() * std::mem::size_of::<f32>()
    }

    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        if let [single] = inputs {
            self.phasor.modulate(single, o, self.volume);
        } else {
            let n = o.len();
            sum_inputs(inputs, &mut self.buf[..n]);
            self.phasor.modulate(&self.buf[..n], o, self.volume);
        }
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.phasor = self.start;
    }

    /// 0: `freq` (the phase goes on from where it is), 1: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        match param {
            0 => self.phasor.retune(&mut self.start, value, self.rate),
            1 => self.volume = value as f32,
            _ => {}
        }
    }
}
