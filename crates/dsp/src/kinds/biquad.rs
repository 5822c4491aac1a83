//! `biquad`: a second-order filter (R. Bristow-Johnson, "Cookbook formulae for audio
//! equalizer biquad filter coefficients").
//!
//! - Ports: the sum of the inputs is filtered; every output port carries the result.
//! - `type` (default `lowpass`): `lowpass`, `highpass`, `bandpass` (constant 0 dB peak gain)
//!   or `notch`.
//! - `freq` (required): cut-off or centre frequency in Hz, `0 < freq < rate / 2`.
//! - `q` (default 0.7071, Butterworth): quality factor, `> 0`.
//! - `volume` (default 1.0).
//!
//! Transposed direct form II with `f64` state, so that low cut-offs stay accurate; state
//! below 1e-30 is flushed to zero every [`FLUSH_FRAMES`] frames of the stream (no denormals
//! in silence), at the same frames however the stream is cut into calls, so that a block run
//! as sub-blocks (pipelining) gives the same samples.

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Filter responses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Low-pass.
    Lowpass,
    /// High-pass.
    Highpass,
    /// Band-pass, 0 dB at the centre.
    Bandpass,
    /// Notch (band-stop).
    Notch,
}

/// Normalised coefficients `[b0, b1, b2, a1, a2]` (`a0 = 1`) of the RBJ filter.
pub fn coefficients(shape: Shape, freq: f64, q: f64, rate: f64) -> [f64; 5] {
    let w0 = 2.0 * std::f64::consts::PI * freq / rate;
    let (s, c) = w0.sin_cos();
    let alpha = s / (2.0 * q);
    let (b0, b1, b2) = match shape {
        Shape::Lowpass => ((1.0 - c) / 2.0, 1.0 - c, (1.0 - c) / 2.0),
        Shape::Highpass => ((1.0 + c) / 2.0, -(1.0 + c), (1.0 + c) / 2.0),
        Shape::Bandpass => (alpha, 0.0, -alpha),
        Shape::Notch => (1.0, -2.0 * c, 1.0),
    };
    let a0 = 1.0 + alpha;
    [b0 / a0, b1 / a0, b2 / a0, -2.0 * c / a0, (1.0 - alpha) / a0]
}

/// Builds a `biquad` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let shape = match attrs::choice(
        ctx,
        "type",
        &["lowpass", "highpass", "bandpass", "notch"],
        "lowpass",
    )? {
        "highpass" => Shape::Highpass,
        "bandpass" => Shape::Bandpass,
        "notch" => Shape::Notch,
        _ => Shape::Lowpass,
    };
    let nyquist = ctx.sample_rate / 2.0;
    let freq = attrs::required(ctx, "freq", "a frequency in Hz")?;
    attrs::check(
        ctx,
        "freq",
        freq,
        freq > 0.0 && freq < nyquist,
        &format!("must be above 0 and below {nyquist} Hz (half the rate at this node)"),
    )?;
    let q = attrs::or(ctx, "q", std::f64::consts::FRAC_1_SQRT_2)?;
    attrs::check(ctx, "q", q, q > 0.0, "must be positive")?;
    let volume = attrs::volume(ctx)?;
    let c = coefficients(shape, freq, q, ctx.sample_rate);
    super::simple(
        ctx,
        Biquad {
            c,
            z: [0.0; 2],
            volume: volume as f64,
            buf: vec![0.0; ctx.block],
            shape,
            freq,
            q,
            rate: ctx.sample_rate,
            since_flush: 0,
        },
    )
}

/// Frames between two flushes of the filter's tiny state, counted along the stream.
pub const FLUSH_FRAMES: usize = 64;

/// The `biquad` processor.
#[derive(Clone, Debug)]
pub struct Biquad {
    c: [f64; 5],
    z: [f64; 2],
    volume: f64,
    buf: Vec<f32>,
    shape: Shape,
    freq: f64,
    q: f64,
    rate: f64,
    /// Frames since the last flush (below [`FLUSH_FRAMES`]).
    since_flush: usize,
}

impl Processor for Biquad {
    fn memory(&self) -> usize {
        self.buf.len() * std::mem::size_of::<f32>()
    }

    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        let n = o.len();
        sum_inputs(inputs, &mut self.buf[..n]);
        let [b0, b1, b2, a1, a2] = self.c;
        let [mut z1, mut z2] = self.z;
        let mut start = 0;
        while start < n {
            let end = (start + FLUSH_FRAMES - self.since_flush).min(n);
            for (y, &x) in o[start..end].iter_mut().zip(&self.buf[start..end]) {
                let x = x as f64;
                let out = b0 * x + z1;
                z1 = b1 * x - a1 * out + z2;
                z2 = b2 * x - a2 * out;
                *y = (out * self.volume) as f32;
            }
            self.since_flush += end - start;
            if self.since_flush == FLUSH_FRAMES {
                self.since_flush = 0;
                for z in [&mut z1, &mut z2] {
                    if z.abs() < 1e-30 {
                        *z = 0.0;
                    }
                }
            }
            start = end;
        }
        self.z = [z1, z2];
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.z = [0.0; 2];
        self.since_flush = 0;
    }

    /// 0: `freq`, 1: `q` (new coefficients, the filter's memory going on), 2: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        match param {
            0 => self.freq = value,
            1 => self.q = value,
            2 => self.volume = value,
            _ => return,
        }
        self.c = coefficients(self.shape, self.freq, self.q, self.rate);
    }
}
