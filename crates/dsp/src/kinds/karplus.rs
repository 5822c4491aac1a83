//! `karplus`: a Karplus–Strong plucked string (K. Karplus, A. Strong, "Digital synthesis of
//! plucked-string and drum timbres", Computer Music Journal, 1983).
//!
//! A delay line of `n` frames is filled with seeded white noise at each pluck; every frame
//! the line's output is averaged with the frame after it (a delay of `n - ½` frames round the
//! loop), scaled by `decay`, passed through a first-order all-pass filter that adds the
//! fraction of a frame left (D. Jaffe, J. O. Smith, "Extensions of the Karplus-Strong
//! plucked-string algorithm", Computer Music Journal, 1983) and fed back. The all-pass's
//! coefficient gives its phase delay exactly at `freq`, so that the string sounds at `freq`
//! (within a cent) from the lowest pitch to the highest, where a whole number of frames
//! would be up to half a frame off (a quarter of a tone at 4 kHz).
//!
//! - Ports: the sum of the inputs, if any, is added into the string (an excitation); every
//!   output port carries the string's output times `volume`.
//! - `freq` (required): pitch in Hz, `20 <= freq < rate / 2`.
//! - `decay` (default 0.996): loss per trip round the string, `0 < decay <= 1`.
//! - `period` (default 1.0 without input; no self-plucking with input unless given): seconds
//!   between plucks; 0 plucks once.
//! - `offset` (default 0): seconds before the first pluck.
//! - `seed` (default: a hash of the node's name), `volume` (default 1.0).
//!
//! Values below 1e-25 fed back into the string are flushed to zero (no subnormal numbers).

use crate::fast::Rng;
use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `karplus` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let rate = ctx.sample_rate;
    let freq = attrs::required(ctx, "freq", "a pitch in Hz")?;
    attrs::check(
        ctx,
        "freq",
        freq,
        (20.0..rate / 2.0).contains(&freq),
        &if rate > 40.0 {
            format!(
                "must be between 20 and {} Hz (half the rate at this node)",
                rate / 2.0
            )
        } else {
            // No pitch fits: the string needs at least 20 Hz below half the rate.
            format!(
                "cannot be played at {rate} Hz: a string's pitch is at least 20 Hz and below half the rate, so the rate at this node must be above 40 Hz"
            )
        },
    )?;
    let decay = attrs::or(ctx, "decay", 0.996)?;
    attrs::check(
        ctx,
        "decay",
        decay,
        decay > 0.0 && decay <= 1.0,
        "must be in (0, 1]",
    )?;
    let default_period = if ctx.in_edges == 0 { Some(1.0) } else { None };
    let period = attrs::number(ctx, "period")?.or(default_period);
    if let Some(p) = period {
        attrs::check(
            ctx,
            "period",
            p,
            (0.0..=3600.0).contains(&p),
            "must be a time in seconds between 0 and 3600",
        )?;
    }
    let offset = attrs::or(ctx, "offset", 0.0)?;
    attrs::check(
        ctx,
        "offset",
        offset,
        (0.0..=3600.0).contains(&offset),
        "must be a time in seconds between 0 and 3600",
    )?;
    let seed = attrs::seed(ctx)?;
    let volume = attrs::volume(ctx)?;
    let (len, allpass) = tuning(rate, freq);
    let (first, every) = match period {
        None => (u64::MAX, u64::MAX),
        Some(p) => {
            let every = if p == 0.0 {
                u64::MAX
            } else {
                ((p * rate).round() as u64).max(1)
            };
            ((offset * rate).round() as u64, every)
        }
    };
    super::simple(
        ctx,
        Karplus {
            line: vec![0.0; len],
            pos: 0,
            allpass,
            ap_in: 0.0,
            ap_out: 0.0,
            decay: (decay * 0.5) as f32,
            first,
            every,
            countdown: first,
            seed,
            rng: Rng::new(seed),
            volume,
            buf: vec![0.0; ctx.block],
        },
    )
}

/// The string's loop for a pitch of `freq` Hz at `rate`: the delay line's length `n` and the
/// coefficient of the all-pass filter that adds the rest of the period. The period is
/// `P = rate / freq` frames: the line and the averaging give `n - ½`, the all-pass
/// `Δ = P + ½ - n`, kept in `[0.1, 1.1)` (where a first-order all-pass delays evenly).
/// The coefficient `sin((1 - Δ)ω/2) / sin((1 + Δ)ω/2)`, with `ω` the pitch in radians a
/// frame, gives a phase delay of exactly `Δ` at `ω`; it is below 1 in magnitude (stable)
/// for every `freq` below `rate / 2`.
fn tuning(rate: f64, freq: f64) -> (usize, f32) {
    let period = rate / freq;
    let len = ((period + 0.4).floor() as usize).max(2);
    let frac = period + 0.5 - len as f64;
    let w = std::f64::consts::TAU / period;
    let c = ((1.0 - frac) * w / 2.0).sin() / ((1.0 + frac) * w / 2.0).sin();
    (len, c as f32)
}

/// The `karplus` processor.
#[derive(Clone, Debug)]
pub struct Karplus {
    line: Vec<f32>,
    pos: usize,
    /// The all-pass filter's coefficient ([`tuning`]).
    allpass: f32,
    /// The all-pass filter's last input and output.
    ap_in: f32,
    ap_out: f32,
    /// `decay / 2`: the averaging filter's gain.
    decay: f32,
    first: u64,
    every: u64,
    countdown: u64,
    seed: u64,
    rng: Rng,
    volume: f32,
    buf: Vec<f32>,
}

impl Karplus {
    fn pluck(&mut self) {
        for x in &mut self.line {
            *x = self.rng.bipolar();
        }
    }
}

impl Processor for Karplus {
    fn memory(&self) -> usize {
        (self.line.len() + self.buf.len()) * std::mem::size_of::<f32>()
    }

    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        // The frames of this call: those of the outputs (or of the inputs, with no output).
        let frames = outputs
            .first()
            .map(|o| o.len())
            .or_else(|| inputs.first().map(|i| i.len()))
            .unwrap_or(self.buf.len());
        sum_inputs(inputs, &mut self.buf[..frames]);
        let n = self.line.len();
        for k in 0..frames {
            if self.countdown == 0 {
                self.pluck();
                self.countdown = self.every;
            }
            self.countdown = self.countdown.saturating_sub(1);
            let next_pos = if self.pos + 1 == n { 0 } else { self.pos + 1 };
            let y = self.line[self.pos];
            let avg = self.decay * (y + self.line[next_pos]);
            let tuned = super::flush(self.allpass * (avg - self.ap_out) + self.ap_in);
            self.ap_in = avg;
            self.ap_out = tuned;
            self.line[self.pos] = super::flush(tuned + self.buf[k]);
            self.pos = next_pos;
            self.buf[k] = y * self.volume;
        }
        let Some(o) = outputs.first_mut() else { return };
        o.copy_from_slice(&self.buf[..frames]);
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.line.fill(0.0);
        self.pos = 0;
        self.ap_in = 0.0;
        self.ap_out = 0.0;
        self.countdown = self.first;
        self.rng = Rng::new(self.seed);
    }

    /// 0: `decay` (from the next frame on), 1: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        match param {
            0 => self.decay = (value * 0.5) as f32,
            1 => self.volume = value as f32,
            _ => {}
        }
    }
}
