//! `osc`: a sine oscillator.
//!
//! - Ports: no input; every output port carries the sine.
//! - `freq` (required): frequency in Hz, within ±1e9 (may be negative or above Nyquist: it
//!   aliases).
//! - `volume` (default 1.0): amplitude.
//! - `phase` (default 0.0): initial phase in turns (0.25 starts at the crest).
//!
//! Output sample `n` (counted from the start or the last reset) is
//! `volume * sin(2π (phase + n * freq / rate))`, within 1e-6 at any time: the phase is kept
//! in `f64` turns and wrapped to `[0, 1)` at fixed sample indices, so it does not drift, and the sine is
//! evaluated by [`crate::fast::sin_turns`] (never beyond ±1). A frequency beyond the rate
//! is its alias's, within what `freq / rate` rounded to an `f64` allows (1e-5 over two
//! seconds at 1e9 Hz).

use crate::fast::Phasor;
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds an `osc` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    attrs::no_inputs(ctx)?;
    let freq = attrs::sine_freq(ctx)?;
    let volume = attrs::volume(ctx)?;
    let phase = attrs::or(ctx, "phase", 0.0)?;
    let start = Phasor::new(freq, ctx.sample_rate, phase);
    super::simple(
        ctx,
        Osc {
            start,
            phasor: start,
            volume,
            rate: ctx.sample_rate,
        },
    )
}

/// The `osc` processor.
#[derive(Clone, Debug)]
pub struct Osc {
    start: Phasor,
    phasor: Phasor,
    volume: f32,
    rate: f64,
}

impl Processor for Osc {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        match outputs.first_mut() {
            Some(o) => self.phasor.sine(o, self.volume),
            None => return,
        }
        crate::node::fan_out(outputs);
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
