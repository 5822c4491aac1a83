//! Sample-rate converters with a fixed number of frames in and out per cycle.
//!
//! A converter changes the rate by an exact [`Ratio`] `L/M` (output frames per input frame).
//! Each call takes `n_in` input frames and produces `n_out = n_in * L / M` output frames,
//! which must be a whole number: the phase pattern then repeats every cycle, and output
//! frame `r` of a cycle lies at input position `r * M / L` (plus the converter's latency).
//!
//! - [`Conv::ZeroHold`]: each output frame repeats the latest input frame at or before it
//!   (no latency; not band-limited: images and aliasing).
//! - [`Conv::Linear`]: linear interpolation between the two input frames around it (latency
//!   one input frame; mild low-pass, not band-limited).
//! - [`Conv::Sinc`] (the default): band-limited interpolation with a Kaiser-windowed sinc
//!   (β = 8, 16 zero crossings each side), cut off at 0.9 × the lower of the two Nyquist
//!   frequencies; each of the `L` phases is normalised to unit DC gain and precomputed. Its
//!   latency is `W` input frames, where `W = ceil(16 / (2 fc))` is the half-width of the
//!   kernel (18 frames when doubling, 36 when halving). A kernel of this length has a
//!   transition band of about 0.76-1.04 × Nyquist around its cut-off: measured through a
//!   `resampler` (a tone's level by a least-squares sine fit), the passband is flat to within
//!   0.002 dB up to 0.75 × Nyquist, -0.04 dB at 0.78 ×, -0.15 dB at 0.8 ×; images and
//!   aliases are attenuated by about 80 dB from 1.05 × Nyquist on, less just above it (-40 dB
//!   at 1.01 ×, -54 dB at 1.025 ×, -70 dB at 1.04 ×).

use std::f64::consts::PI;

use crate::Ratio;

/// How a converter interpolates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// Sample and hold.
    ZeroHold,
    /// Linear interpolation.
    Linear,
    /// Band-limited windowed-sinc interpolation (the default).
    Sinc,
}

impl Conv {
    /// The converter used when a `resampler` gives no `conv`, and by sinks that are not at
    /// the engine's rate.
    pub const DEFAULT: Conv = Conv::Sinc;

    /// The names accepted by the `conv` attribute, in the order of [`Conv::from_name`].
    pub const NAMES: [&'static str; 3] = ["zero_hold", "linear", "sinc"];

    /// The converter called `name` (`zero_hold`, `linear`, `sinc`; case-insensitive).
    pub fn from_name(name: &str) -> Option<Conv> {
        match name.trim().to_ascii_lowercase().as_str() {
            "zero_hold" => Some(Conv::ZeroHold),
            "linear" => Some(Conv::Linear),
            "sinc" => Some(Conv::Sinc),
            _ => None,
        }
    }
}

/// Most phases (the numerator `L` of the ratio) a sinc converter precomputes.
pub const MAX_PHASES: u64 = 4096;

/// Zero crossings of the sinc kernel on each side.
const ZEROS: f64 = 16.0;
/// Kaiser window parameter.
const BETA: f64 = 8.0;
/// Cut-off relative to the lower Nyquist frequency.
const ROLLOFF: f64 = 0.9;

/// A streaming sample-rate converter (one channel). All memory is allocated by
/// [`Converter::new`]; [`Converter::process`] never allocates.
#[derive(Clone, Debug)]
pub struct Converter {
    conv: Conv,
    l: usize,
    m: usize,
    n_in: usize,
    n_out: usize,
    /// Past input frames (`past` of them) followed by the current cycle's input.
    hist: Vec<f32>,
    past: usize,
    /// Sinc: `l` rows of `taps` coefficients.
    table: Vec<f32>,
    taps: usize,
}

/// Why a converter cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConvError {
    /// `n_in * ratio` is not a whole number.
    NotDivisible,
    /// The ratio's numerator exceeds [`MAX_PHASES`] for a sinc converter.
    TooManyPhases,
}

fn bessel_i0(x: f64) -> f64 {
    let mut sum = 1.0;
    let mut term = 1.0;
    let q = x * x / 4.0;
    for k in 1..64 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    sum
}

impl Converter {
    /// A converter by `ratio` (output rate / input rate) taking `n_in` frames per cycle.
    pub fn new(conv: Conv, ratio: Ratio, n_in: usize) -> Result<Converter, ConvError> {
        let n_out = ratio.scale(n_in).ok_or(ConvError::NotDivisible)?;
        let (l, m) = (ratio.num() as usize, ratio.den() as usize);
        let (past, taps, table) = match conv {
            Conv::ZeroHold => (0, 0, Vec::new()),
            Conv::Linear => (1, 0, Vec::new()),
            Conv::Sinc => {
                if ratio.num() > MAX_PHASES {
                    return Err(ConvError::TooManyPhases);
                }
                let fc = 0.5 * ROLLOFF * ratio.as_f64().min(1.0); // cycles per input frame
                let w = (ZEROS / (2.0 * fc)).ceil() as usize;
                let taps = 2 * w;
                let i0b = bessel_i0(BETA);
                let mut table = vec![0.0f32; l * taps];
                for p in 0..l {
                    let row = &mut table[p * taps..(p + 1) * taps];
                    let mut h = vec![0.0f64; taps];
                    for (mi, hv) in h.iter_mut().enumerate() {
                        let t = p as f64 / l as f64 + w as f64 - 1.0 - mi as f64;
                        let u = t / w as f64;
                        let win = if u.abs() >= 1.0 {
                            0.0
                        } else {
                            bessel_i0(BETA * (1.0 - u * u).sqrt()) / i0b
                        };
                        let x = 2.0 * fc * t;
                        let sinc = if x == 0.0 {
                            1.0
                        } else {
                            (PI * x).sin() / (PI * x)
                        };
                        *hv = 2.0 * fc * sinc * win;
                    }
                    let sum: f64 = h.iter().sum();
                    for (r, hv) in row.iter_mut().zip(&h) {
                        *r = (hv / sum) as f32;
                    }
                }
                (taps, taps, table)
            }
        };
        Ok(Converter {
            conv,
            l,
            m,
            n_in,
            n_out,
            hist: vec![0.0; past + n_in],
            past,
            table,
            taps,
        })
    }

    /// Bytes this converter holds (its filter table and its history).
    pub fn memory(&self) -> usize {
        (self.table.len() + self.hist.len()) * std::mem::size_of::<f32>()
    }

    /// Input frames per cycle.
    pub fn n_in(&self) -> usize {
        self.n_in
    }

    /// Output frames per cycle.
    pub fn n_out(&self) -> usize {
        self.n_out
    }

    /// Latency in input frames: output frame `r` of a cycle is the input signal at position
    /// `r * M / L - latency` relative to the cycle's first input frame.
    pub fn latency(&self) -> usize {
        match self.conv {
            Conv::ZeroHold => 0,
            Conv::Linear => 1,
            Conv::Sinc => self.taps / 2,
        }
    }

    /// Converts one cycle: `input` has `n_in` frames, `out` gets `n_out` frames.
    pub fn process(&mut self, input: &[f32], out: &mut [f32]) {
        let past = self.past;
        self.hist[past..past + self.n_in].copy_from_slice(&input[..self.n_in]);
        let (l, m) = (self.l, self.m);
        match self.conv {
            Conv::ZeroHold => {
                for (r, o) in out[..self.n_out].iter_mut().enumerate() {
                    *o = self.hist[r * m / l];
                }
            }
            Conv::Linear => {
                let inv_l = 1.0 / l as f32;
                for (r, o) in out[..self.n_out].iter_mut().enumerate() {
                    let (i, p) = ((r * m) / l, (r * m) % l);
                    let f = p as f32 * inv_l;
                    // Position i - 1 + f: hist index past + i - 1 = i.
                    let (a, b) = (self.hist[i], self.hist[i + 1]);
                    *o = a + (b - a) * f;
                }
            }
            Conv::Sinc => {
                let taps = self.taps;
                for (r, o) in out[..self.n_out].iter_mut().enumerate() {
                    let (i, p) = ((r * m) / l, (r * m) % l);
                    // Taps cover input frames i - taps + 1 ..= i: hist indices i + 1 ..= i + taps.
                    let x = &self.hist[i + 1..i + 1 + taps];
                    let h = &self.table[p * taps..(p + 1) * taps];
                    *o = dot(x, h);
                }
            }
        }
        if past > 0 {
            self.hist.copy_within(self.n_in..self.n_in + past, 0);
        }
    }

    /// Forgets the past input (silence before the next cycle).
    pub fn reset(&mut self) {
        self.hist.fill(0.0);
    }
}

/// A dot product in eight independent lanes (so that it vectorises without reassociation).
#[inline]
fn dot(x: &[f32], h: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let xc = x.chunks_exact(8);
    let hc = h.chunks_exact(8);
    let (xr, hr) = (xc.remainder(), hc.remainder());
    for (a, b) in xc.zip(hc) {
        for ((s, x), y) in acc.iter_mut().zip(a).zip(b) {
            *s += x * y;
        }
    }
    let mut s = 0.0;
    for (a, b) in xr.iter().zip(hr) {
        s += a * b;
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        conv: Conv,
        ratio: Ratio,
        n_in: usize,
        cycles: usize,
        f: impl Fn(usize) -> f32,
    ) -> Vec<f32> {
        let mut c = Converter::new(conv, ratio, n_in).unwrap();
        let mut out = vec![0.0; c.n_out()];
        let mut all = Vec::new();
        for cy in 0..cycles {
            let input: Vec<f32> = (0..n_in).map(|k| f(cy * n_in + k)).collect();
            c.process(&input, &mut out);
            all.extend_from_slice(&out);
        }
        all
    }

    #[test]
    fn lengths_follow_the_ratio() {
        let half = Ratio::new(1, 2).unwrap();
        let two = Ratio::new(2, 1).unwrap();
        for conv in [Conv::ZeroHold, Conv::Linear, Conv::Sinc] {
            assert_eq!(run(conv, half, 64, 5, |_| 0.0).len(), 160);
            assert_eq!(run(conv, two, 64, 5, |_| 0.0).len(), 640);
        }
        assert_eq!(
            Converter::new(Conv::Sinc, half, 63).unwrap_err(),
            ConvError::NotDivisible
        );
    }

    #[test]
    fn dc_passes_unchanged_after_latency() {
        for conv in [Conv::ZeroHold, Conv::Linear, Conv::Sinc] {
            for ratio in [
                Ratio::new(1, 2).unwrap(),
                Ratio::new(2, 1).unwrap(),
                Ratio::new(147, 160).unwrap(),
            ] {
                let out = run(conv, ratio, 160, 6, |_| 0.5);
                for &y in &out[out.len() / 2..] {
                    assert!((y - 0.5).abs() < 1e-6, "{conv:?} {ratio}: {y}");
                }
            }
        }
    }

    #[test]
    fn zero_hold_and_linear_interpolate_a_ramp() {
        let two = Ratio::new(2, 1).unwrap();
        let zh = run(Conv::ZeroHold, two, 8, 2, |k| k as f32);
        assert_eq!(&zh[..6], &[0.0, 0.0, 1.0, 1.0, 2.0, 2.0]);
        let lin = run(Conv::Linear, two, 8, 2, |k| k as f32);
        // Latency one input frame: output r is the ramp at r/2 - 1.
        assert_eq!(&lin[2..8], &[0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
    }
}
