//! `reverb`: a Freeverb-style reverb (Jezar at Dreampoint, "Freeverb", 2000; the public-domain
//! Schroeder–Moorer design: eight parallel low-pass-feedback comb filters and four series
//! all-pass filters per channel, the right channel's delays 23 frames longer).
//!
//! - Ports: the sum of the inputs is reverberated. With one output port it carries the mono
//!   mix of both channels; with two or more, port 1 is left, port 2 right, port 3 left, ...
//! - `room` (default 0.5): room size in `[0, 1]` (comb feedback `0.7 + 0.28 * room`).
//! - `damp` (default 0.5): high-frequency damping in `[0, 1]`.
//! - `wet` (default 0.3), `dry` (default 0.7): output gains; `width` (default 1.0): stereo
//!   width in `[0, 1]`; `volume` (default 1.0).
//!
//! Delay lengths are the original ones at 44.1 kHz, scaled to the node's rate. Feedback values
//! below 1e-25 are flushed to zero (no subnormal numbers in the tail).

use crate::node::sum_inputs;
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

const COMBS: [usize; 8] = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617];
const ALLPASSES: [usize; 4] = [556, 441, 341, 225];
const SPREAD: usize = 23;
const INPUT_GAIN: f32 = 0.015;

/// Builds a `reverb` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let unit = |attr: &str, default: f64| -> Result<f32, NodeError> {
        let v = attrs::or(ctx, attr, default)?;
        Ok(attrs::check(
            ctx,
            attr,
            v,
            (0.0..=1.0).contains(&v),
            "must be between 0 and 1",
        )? as f32)
    };
    let room = unit("room", 0.5)?;
    let damp = unit("damp", 0.5)?;
    let width = unit("width", 1.0)?;
    let wet = attrs::level(ctx, "wet", 0.3)? as f32;
    let dry = attrs::level(ctx, "dry", 0.7)? as f32;
    let volume = attrs::volume(ctx)?;
    let scale = ctx.sample_rate / 44_100.0;
    let len = |n: usize| ((n as f64 * scale).round() as usize).max(1);
    let channel = |spread: usize| Channel {
        combs: COMBS
            .iter()
            .map(|&n| Comb {
                buf: vec![0.0; len(n + spread)],
                pos: 0,
                store: 0.0,
            })
            .collect(),
        allpasses: ALLPASSES
            .iter()
            .map(|&n| Allpass {
                buf: vec![0.0; len(n + spread)],
                pos: 0,
            })
            .collect(),
    };
    let mut reverb = Reverb {
        left: channel(0),
        right: channel(SPREAD),
        parts: [room, damp, wet, dry, width, volume],
        feedback: 0.0,
        damp: 0.0,
        wet1: 0.0,
        wet2: 0.0,
        dry: 0.0,
        buf: vec![0.0; ctx.block],
        out_l: vec![0.0; ctx.block],
        out_r: vec![0.0; ctx.block],
    };
    reverb.derive();
    super::simple(ctx, reverb)
}

#[derive(Clone, Debug)]
struct Comb {
    buf: Vec<f32>,
    pos: usize,
    store: f32,
}

#[derive(Clone, Debug)]
struct Allpass {
    buf: Vec<f32>,
    pos: usize,
}

#[derive(Clone, Debug)]
struct Channel {
    combs: Vec<Comb>,
    allpasses: Vec<Allpass>,
}

impl Channel {
    fn reset(&mut self) {
        for c in &mut self.combs {
            c.buf.fill(0.0);
            c.pos = 0;
            c.store = 0.0;
        }
        for a in &mut self.allpasses {
            a.buf.fill(0.0);
            a.pos = 0;
        }
    }
}

/// The `reverb` processor.
#[derive(Clone, Debug)]
pub struct Reverb {
    left: Channel,
    right: Channel,
    /// `room`, `damp`, `wet`, `dry`, `width`, `volume` as set; the gains below are derived
    /// from them ([`Reverb::derive`]).
    parts: [f32; 6],
    feedback: f32,
    damp: f32,
    wet1: f32,
    wet2: f32,
    dry: f32,
    buf: Vec<f32>,
    out_l: Vec<f32>,
    out_r: Vec<f32>,
}

impl Reverb {
    /// The comb feedback, damping and output gains from [`Reverb::parts`].
    fn derive(&mut self) {
        let [room, damp, wet, dry, width, volume] = self.parts;
        self.feedback = 0.7 + 0.28 * room;
        self.damp = 0.4 * damp;
        self.wet1 = volume * wet * (width / 2.0 + 0.5);
        self.wet2 = volume * wet * ((1.0 - width) / 2.0);
        self.dry = volume * dry;
    }
}

impl Processor for Reverb {
    fn memory(&self) -> usize {
        let lines = |c: &Channel| {
            c.combs.iter().map(|x| x.buf.len()).sum::<usize>()
                + c.allpasses.iter().map(|x| x.buf.len()).sum::<usize>()
        };
        (lines(&self.left) + lines(&self.right) + 3 * self.buf.len()) * std::mem::size_of::<f32>()
    }

    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        // The frames of this call: those of the outputs (or of the inputs, with no output).
        let frames = outputs
            .first()
            .map(|o| o.len())
            .or_else(|| inputs.first().map(|i| i.len()))
            .unwrap_or(self.buf.len());
        sum_inputs(inputs, &mut self.buf[..frames]);
        let (out_l, out_r) = (&mut self.out_l[..frames], &mut self.out_r[..frames]);
        // Each channel runs in place on the scaled input; `buf` keeps the dry signal.
        for (l, &x) in out_l.iter_mut().zip(&self.buf) {
            *l = x * INPUT_GAIN;
        }
        out_r.copy_from_slice(out_l);
        let (fb, damp) = (self.feedback, self.damp);
        run_in_place(&mut self.left, out_l, fb, damp);
        run_in_place(&mut self.right, out_r, fb, damp);
        let (wet1, wet2, dry) = (self.wet1, self.wet2, self.dry);
        let n = outputs.len();
        for (j, o) in outputs.iter_mut().enumerate() {
            let right = j % 2 == 1;
            for (k, y) in o.iter_mut().enumerate() {
                let (l, r, x) = (self.out_l[k], self.out_r[k], self.buf[k]);
                let ol = wet1 * l + wet2 * r + dry * x;
                let or = wet1 * r + wet2 * l + dry * x;
                *y = if n == 1 {
                    0.5 * (ol + or)
                } else if right {
                    or
                } else {
                    ol
                };
            }
        }
    }

    fn reset(&mut self) {
        self.left.reset();
        self.right.reset();
    }

    /// 0: `room`, 1: `damp`, 2: `wet`, 3: `dry`, 4: `width`, 5: `volume` (from the next block
    /// on; the tail in the combs goes on).
    fn set_param(&mut self, param: usize, value: f64) {
        if let Some(p) = self.parts.get_mut(param) {
            *p = value as f32;
            self.derive();
        }
    }
}

/// Runs a channel on `io` in place: the parallel combs (sample by sample, so that each input
/// frame is read before the combs' sum replaces it), then the series all-passes.
fn run_in_place(ch: &mut Channel, io: &mut [f32], feedback: f32, damp: f32) {
    for x in io.iter_mut() {
        let input = *x;
        let mut acc = 0.0;
        for c in &mut ch.combs {
            let y = c.buf[c.pos];
            c.store = super::flush(y * (1.0 - damp) + c.store * damp);
            c.buf[c.pos] = input + c.store * feedback;
            c.pos = if c.pos + 1 == c.buf.len() {
                0
            } else {
                c.pos + 1
            };
            acc += y;
        }
        *x = acc;
    }
    for a in &mut ch.allpasses {
        let n = a.buf.len();
        for o in io.iter_mut() {
            let b = a.buf[a.pos];
            let x = *o;
            a.buf[a.pos] = super::flush(x + b * 0.5);
            a.pos = if a.pos + 1 == n { 0 } else { a.pos + 1 };
            *o = b - x;
        }
    }
}
