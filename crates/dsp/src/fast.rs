//! Fast, exact-enough building blocks: a sine approximation, phase accumulators, a seeded
//! random generator.
//!
//! The sine is a degree-11 odd polynomial (Taylor series of `sin(2πy)`) on `y ∈ [-¼, ¼]`,
//! after folding `x ∈ [-½, ½]` with `sin(π - θ) = sin θ`; its truncation error is below
//! 6e-8, so with `f32` rounding the result is within about 3e-7 of the true sine. Phases are
//! kept in `f64` turns wrapped to `[0, 1)` at fixed sample indices, so that an oscillator stays
//! exact after hours. Every eighth sample's phase (at fixed sample indices too) is computed as
//! `phase + k * increment` in `f64` (no error accumulates) and reduced to `[-½, ½]`; the seven
//! samples after it add `j * increment` in `f32` and are reduced again. Each sample's value
//! depends only on its index: a block computed in one call or in several gives the same bits.
//! The loops have no per-sample branch and
//! vectorise (eight `f32` lanes with AVX2, chosen at run time).

/// 1.5 * 2^52: adding and subtracting it rounds an `f64` of magnitude below 2^51 to the
/// nearest integer (ties to even), without a call to `round`.
const ROUND64: f64 = 6_755_399_441_055_744.0;

// Taylor coefficients of sin(2πy): (-1)^n (2π)^(2n+1) / (2n+1)!.
const C1: f32 = std::f32::consts::TAU;
#[allow(clippy::excessive_precision)]
const C3: f32 = -41.341_702;
#[allow(clippy::excessive_precision)]
const C5: f32 = 81.605_25;
#[allow(clippy::excessive_precision)]
const C7: f32 = -76.705_86;
#[allow(clippy::excessive_precision)]
const C9: f32 = 42.058_693;
#[allow(clippy::excessive_precision)]
const C11: f32 = -15.094_643;

/// `sin(2πx)` for `x ∈ [-½, ½]` (turns), within 3e-7 of the exact value and never beyond ±1.
#[inline(always)]
pub fn sin_turns(x: f32) -> f32 {
    let a = x.abs();
    let b = 0.5 - a;
    // Fold to [0, ¼] (sin(π - θ) = sin θ); a comparison and select, not a branch.
    let m = if a < b { a } else { b };
    let y = m.copysign(x);
    let z = y * y;
    // The polynomial's rounding can pass 1 by a unit in the last place near the crest: a
    // full-scale sine would then clip a 16-bit file and fail `--strict`.
    (y * (C1 + z * (C3 + z * (C5 + z * (C7 + z * (C9 + z * C11)))))).clamp(-1.0, 1.0)
}

/// The fractional part of `p` relative to the nearest integer: `p - round(p) ∈ [-½, ½]`.
#[inline(always)]
fn centred(p: f64) -> f64 {
    p - ((p + ROUND64) - ROUND64)
}

/// Wraps a phase in turns to `[0, 1)`.
#[inline]
pub fn wrap(p: f64) -> f64 {
    let w = p - p.floor();
    if w >= 1.0 {
        0.0
    } else {
        w
    }
}

/// Samples per phase epoch: the phase of sample `m` of epoch `e` is `base_e + m * inc`, and
/// `base_(e+1) = wrap(base_e + EPOCH * inc)`. Epochs start at absolute sample indices (multiples
/// of `EPOCH` counted from the start or the last reset), so the phase of every sample depends
/// only on its index, never on how the samples were cut into calls; and `m * inc` stays small
/// enough (below 2^20 turns at Nyquist) that the `f64` phase is exact to about 1e-10 turns
/// after any time.
const EPOCH: u32 = 1 << 20;

/// A sine phase accumulator in turns, kept in `f64` and wrapped to `[0, 1)` at every epoch
/// (see `EPOCH`). The phase of each sample is a function of its index alone: a block
/// processed in one call or in any number of consecutive calls gives the same bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phasor {
    /// Phase at the start of the current epoch, turns in `[0, 1)`.
    pub base: f64,
    /// Samples since the start of the current epoch (below `EPOCH`).
    pub pos: u32,
    /// Phase increment per sample, turns: `freq / sample_rate` less its nearest whole
    /// number of turns (the same phases), in `[-½, ½]`, so that the `f32` steps between
    /// anchors stay as exact above Nyquist as below (`ANCHOR`).
    pub inc: f64,
}

impl Phasor {
    /// A phasor at `phase` turns, advancing `freq / sample_rate` turns per sample.
    pub fn new(freq: f64, sample_rate: f64, phase: f64) -> Self {
        Phasor {
            base: wrap(phase),
            pos: 0,
            inc: centred(freq / sample_rate),
        }
    }

    /// Changes the frequency from the next sample on, the phase going on from where it is:
    /// a new epoch starts here.
    pub fn set_freq(&mut self, freq: f64, sample_rate: f64) {
        self.base = self.phase();
        self.pos = 0;
        self.inc = centred(freq / sample_rate);
    }

    /// A live change of frequency ([`Phasor::set_freq`]), with `start` (the phasor a reset
    /// returns to) taking the same frequency, so that the value set stays after a reset.
    pub fn retune(&mut self, start: &mut Phasor, freq: f64, sample_rate: f64) {
        self.set_freq(freq, sample_rate);
        start.inc = self.inc;
    }

    /// The phase of the next sample, turns in `[0, 1)`.
    pub fn phase(&self) -> f64 {
        wrap(self.base + f64::from(self.pos) * self.inc)
    }

    /// Advances by `n` samples, which do not cross the end of the epoch.
    #[inline]
    fn step(&mut self, n: usize) {
        self.pos += n as u32;
        if self.pos == EPOCH {
            self.base = wrap(self.base + f64::from(EPOCH) * self.inc);
            self.pos = 0;
        }
    }

    /// How many of `n` samples fit before the end of the current epoch.
    #[inline]
    fn room(&self, n: usize) -> usize {
        ((EPOCH - self.pos) as usize).min(n)
    }

    /// Writes `gain * sin(2π phase_k)` for the next `out.len()` samples and advances.
    #[inline]
    pub fn sine(&mut self, mut out: &mut [f32], gain: f32) {
        // The usual call, within one epoch: one loop, no split (short calls, as a pipelined
        // cycle makes, pay no more per sample than long ones).
        if (self.pos as usize) + out.len() < EPOCH as usize {
            self.sine_within(out, gain);
            return;
        }
        while !out.is_empty() {
            let (now, later) = out.split_at_mut(self.room(out.len()));
            let (p0, start) = (self.base, self.pos as usize);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                unsafe { sine_avx2(p0, self.inc, start, now, gain) };
                self.step(now.len());
                out = later;
                continue;
            }
            sine_body(p0, self.inc, start, now, gain);
            self.step(now.len());
            out = later;
        }
    }

    /// Writes `gain * input_k * sin(2π phase_k)` (ring modulation) for the next
    /// `min(input.len(), out.len())` samples and advances by as many.
    #[inline]
    pub fn modulate(&mut self, mut input: &[f32], mut out: &mut [f32], gain: f32) {
        let n = input.len().min(out.len());
        (input, out) = (&input[..n], &mut out[..n]);
        // The usual call, within one epoch (see `sine`).
        if (self.pos as usize) + n < EPOCH as usize {
            self.modulate_within(input, out, gain);
            return;
        }
        while !out.is_empty() {
            let k = self.room(out.len());
            let (now, later) = out.split_at_mut(k);
            let (x, rest) = input.split_at(k);
            let (p0, start) = (self.base, self.pos as usize);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                unsafe { modulate_avx2(p0, self.inc, start, x, now, gain) };
                self.step(k);
                (input, out) = (rest, later);
                continue;
            }
            modulate_body(p0, self.inc, start, x, now, gain);
            self.step(k);
            (input, out) = (rest, later);
        }
    }

    /// [`Phasor::sine`] of samples that end before the epoch does.
    #[inline]
    fn sine_within(&mut self, out: &mut [f32], gain: f32) {
        let (p0, start) = (self.base, self.pos as usize);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { sine_avx2(p0, self.inc, start, out, gain) };
            self.pos += out.len() as u32;
            return;
        }
        sine_body(p0, self.inc, start, out, gain);
        self.pos += out.len() as u32;
    }

    /// [`Phasor::modulate`] of samples that end before the epoch does (`input` and `out` of
    /// one length).
    #[inline]
    fn modulate_within(&mut self, input: &[f32], out: &mut [f32], gain: f32) {
        let (p0, start) = (self.base, self.pos as usize);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { modulate_avx2(p0, self.inc, start, input, out, gain) };
            self.pos += out.len() as u32;
            return;
        }
        modulate_body(p0, self.inc, start, input, out, gain);
        self.pos += out.len() as u32;
    }
}

// The loops are written once and compiled twice: for the baseline target and, chosen at run
// time, with AVX2 (eight lanes instead of four). Without fast-math the compiler neither
// reorders nor fuses the operations, so both versions give bit-identical results.

/// Samples per phase anchor: each run of `ANCHOR` samples that starts at a multiple of
/// `ANCHOR` within its epoch takes its phase from one value computed in `f64` (the *anchor*),
/// and its samples add `k * inc` (`k < ANCHOR`) in `f32`, so that the per-sample work is all
/// `f32` (eight lanes with AVX2) while the phase error stays below `ANCHOR * |inc| * 6e-8`
/// turns (2.4e-7 at Nyquist, 1e-8 for 440 Hz at 48 kHz). Anchors sit at fixed sample indices,
/// so a call that starts or ends inside a run computes the same values as one that covers it.
const ANCHOR: usize = 8;

/// 1.5 * 2^23: rounds an `f32` of magnitude below 2^22 to the nearest integer.
const ROUND32: f32 = 12_582_912.0;

#[inline(always)]
fn centred32(x: f32) -> f32 {
    x - ((x + ROUND32) - ROUND32)
}

/// The phase of the anchor at sample `a` of an epoch that starts at phase `p0`, centred.
#[inline(always)]
fn anchor(p0: f64, inc: f64, a: usize) -> f32 {
    centred(p0 + f64::from(a as i32) * inc) as f32
}

/// The centred phases of the [`ANCHOR`] samples of the run whose anchor phase is `a`.
#[inline(always)]
fn run_phases(a: f32, steps: &[f32; ANCHOR]) -> [f32; ANCHOR] {
    std::array::from_fn(|k| centred32(a + steps[k]))
}

/// Calls `f(k, ph)` for consecutive pieces of the samples `0..n`, samples `start + k..` of
/// their epoch (which starts at phase `p0`): `ph` holds the phases of samples `k..k +
/// ph.len()`, centred to `[-½, ½]` turns, each the anchor of its run of [`ANCHOR`] plus its
/// offset in the run, so that a sample's phase does not depend on `start` or `n`. The whole
/// runs in the middle come as arrays of [`ANCHOR`] phases, so that the callers' loops over
/// them have a fixed length and vectorise; the call costs the same per sample whatever its
/// length (a pipelined cycle cuts blocks into short calls).
#[inline(always)]
fn phases(p0: f64, inc: f64, start: usize, n: usize, mut f: impl FnMut(usize, &[f32])) {
    let inc32 = inc as f32;
    let steps: [f32; ANCHOR] = std::array::from_fn(|k| k as f32 * inc32);
    let lead = start % ANCHOR;
    // The first run, entered in its middle.
    let head = if lead == 0 { 0 } else { (ANCHOR - lead).min(n) };
    if head > 0 {
        let ph = run_phases(anchor(p0, inc, start - lead), &steps);
        f(0, &ph[lead..lead + head]);
    }
    let whole = (n - head) / ANCHOR;
    for r in 0..whole {
        let j = head + r * ANCHOR;
        let ph = run_phases(anchor(p0, inc, start + j), &steps);
        f(j, &ph);
    }
    // The last run, left in its middle.
    let tail = head + whole * ANCHOR;
    if tail < n {
        let ph = run_phases(anchor(p0, inc, start + tail), &steps);
        f(tail, &ph[..n - tail]);
    }
}

#[inline(always)]
fn sine_body(p0: f64, inc: f64, start: usize, out: &mut [f32], gain: f32) {
    let n = out.len();
    phases(p0, inc, start, n, |k, ph| {
        for (o, &p) in out[k..k + ph.len()].iter_mut().zip(ph) {
            *o = gain * sin_turns(p);
        }
    });
}

#[inline(always)]
fn modulate_body(p0: f64, inc: f64, start: usize, input: &[f32], out: &mut [f32], gain: f32) {
    let n = out.len().min(input.len());
    let (input, out) = (&input[..n], &mut out[..n]);
    phases(p0, inc, start, n, |k, ph| {
        let (o, x) = (&mut out[k..k + ph.len()], &input[k..k + ph.len()]);
        for ((o, &x), &p) in o.iter_mut().zip(x).zip(ph) {
            *o = gain * x * sin_turns(p);
        }
    });
}

/// [`sine_body`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sine_avx2(p0: f64, inc: f64, start: usize, out: &mut [f32], gain: f32) {
    sine_body(p0, inc, start, out, gain);
}

/// [`modulate_body`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn modulate_avx2(
    p0: f64,
    inc: f64,
    start: usize,
    input: &[f32],
    out: &mut [f32],
    gain: f32,
) {
    modulate_body(p0, inc, start, input, out, gain);
}

/// The small seeded random generator (xorshift64*) of the noise processors: fast,
/// deterministic, never allocates. It is fugue-sync's, shared with the task pool.
pub use fugue_sync::Rng;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sine_approximation_is_within_3e7() {
        let mut worst = 0.0f64;
        for i in 0..=200_000 {
            let x = -0.5 + i as f64 / 200_000.0;
            let err = (sin_turns(x as f32) as f64 - (2.0 * std::f64::consts::PI * x).sin()).abs();
            worst = worst.max(err);
        }
        assert!(worst < 3e-7, "worst error {worst}");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_and_baseline_loops_agree_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            println!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        let mut rng = Rng::new(3);
        for _ in 0..200 {
            let p0 = (rng.bipolar() as f64 + 1.0) / 2.0;
            let inc = rng.bipolar() as f64 * 0.6;
            let input: Vec<f32> = (0..509).map(|_| rng.bipolar()).collect();
            let (mut a, mut b) = (vec![0.0f32; 509], vec![0.0f32; 509]);
            let start = (rng.next_u64() % 64) as usize;
            sine_body(p0, inc, start, &mut a, 0.7);
            // SAFETY: AVX2 is present (checked above).
            unsafe { sine_avx2(p0, inc, start, &mut b, 0.7) };
            assert_eq!(a, b);
            modulate_body(p0, inc, start, &input, &mut a, 0.7);
            // SAFETY: as above.
            unsafe { modulate_avx2(p0, inc, start, &input, &mut b, 0.7) };
            assert_eq!(a, b);
        }
    }

    /// Every `f32` phase near the crest and the trough gives a sine within ±1.
    #[test]
    fn the_sine_never_passes_full_scale() {
        for centre in [0.25f32, -0.25] {
            let mut x = centre - 1e-3;
            while x < centre + 1e-3 {
                assert!(
                    sin_turns(x).abs() <= 1.0,
                    "sin_turns({x}) = {}",
                    sin_turns(x)
                );
                x = x.next_up();
            }
        }
    }

    /// A frequency far above the rate gives its alias's sine: within 1e-5 over 2 s, what
    /// `1e9 / 48000` rounded to an `f64` (2e-12 turns a sample) allows; the increment's
    /// whole turns added in `f32` between anchors made errors of 0.1.
    #[test]
    fn a_frequency_above_the_rate_is_its_alias() {
        let n = 100_000;
        let (mut hi, mut alias) = (vec![0.0f32; n], vec![0.0f32; n]);
        Phasor::new(1e9, 48_000.0, 0.1).sine(&mut hi, 1.0);
        // 1e9 = 20833 * 48000 + 16000.
        Phasor::new(16_000.0, 48_000.0, 0.1).sine(&mut alias, 1.0);
        let worst = hi
            .iter()
            .zip(&alias)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-5, "1e9 Hz differs from its alias by {worst}");
    }

    #[test]
    fn centred_rounds_to_nearest() {
        assert_eq!(centred(0.25), 0.25);
        assert_eq!(centred(0.75), -0.25);
        assert_eq!(centred(3.1), 3.1 - 3.0);
        assert_eq!(centred(-2.75), 0.25);
    }

    #[test]
    fn rng_is_bipolar_and_seeded() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let (mut lo, mut hi, mut same) = (0.0f32, 0.0f32, 0);
        for _ in 0..10_000 {
            let x = a.bipolar();
            assert_eq!(x, b.bipolar());
            same += (x == c.bipolar()) as u32;
            lo = lo.min(x);
            hi = hi.max(x);
        }
        assert!((-1.0..-0.99).contains(&lo) && (0.99..1.0).contains(&hi));
        assert!(same < 10);
    }
}
