//! `delay`: a feedback delay (echo).
//!
//! - Ports: the sum of the inputs `x` is delayed; every output port carries
//!   `volume * (dry * x + wet * d)`, where `d` is the delay line's output and the line is fed
//!   `x + feedback * d`.
//! - `time` (default 0.25): delay in seconds, `0 < time <= max_time`; rounded to whole frames
//!   at the node's rate, at least one. Live: a change fades from the old delay to the new one
//!   over the next block (the node's block of frames, however the engine cuts it into calls).
//! - `max_time` (default `time`, at least [`DEFAULT_MAX_TIME`]): the delay line's length, the
//!   longest `time` a live change may set; at most 60 s.
//! - `feedback` (default 0.4): `-1 < feedback < 1`.
//! - `wet` (default 0.5), `dry` (default 1.0), `volume` (default 1.0).
//!
//! Values below 1e-25 fed back into the line are flushed to zero (no subnormal numbers).

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// The default of `max_time` when `time` is shorter: what a live change of `time` may reach
/// without the node being loaded again, in seconds.
pub const DEFAULT_MAX_TIME: f64 = 1.0;

/// Builds a `delay` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let time = attrs::or(ctx, "time", 0.25)?;
    attrs::check(
        ctx,
        "time",
        time,
        time > 0.0 && time <= 60.0,
        "must be a time in seconds above 0 and at most 60",
    )?;
    let max_time = attrs::or(ctx, "max_time", time.max(DEFAULT_MAX_TIME))?;
    attrs::check(
        ctx,
        "max_time",
        max_time,
        max_time >= time && max_time <= 60.0,
        "must be at least `time` and at most 60 seconds",
    )?;
    let feedback = attrs::or(ctx, "feedback", 0.4)?;
    attrs::check(
        ctx,
        "feedback",
        feedback,
        feedback.abs() < 1.0,
        "must be between -1 and 1 (exclusive)",
    )?;
    let wet = attrs::level(ctx, "wet", 0.5)? as f32;
    let dry = attrs::level(ctx, "dry", 1.0)? as f32;
    let volume = attrs::volume(ctx)?;
    let frames = |t: f64| ((t * ctx.sample_rate).round() as usize).max(1);
    let (len, cap) = (frames(time), frames(max_time));
    let bytes = cap.saturating_add(ctx.block) * std::mem::size_of::<f32>();
    if bytes > crate::MAX_NODE_MEMORY {
        let attr = if ctx.node.attr("max_time").is_some() {
            "max_time"
        } else {
            "time"
        };
        return Err(attrs::bad(
            ctx,
            attr,
            &max_time.to_string(),
            &format!(
                "needs a delay line of {} MiB at {} Hz, more than the limit of {} MiB per node; shorten the delay or lower the rate",
                bytes.div_ceil(1 << 20),
                ctx.sample_rate,
                crate::MAX_NODE_MEMORY >> 20
            ),
        ));
    }
    super::simple(
        ctx,
        Delay {
            line: vec![0.0; cap],
            pos: 0,
            len,
            from: None,
            faded: 0,
            rate: ctx.sample_rate,
            feedback: feedback as f32,
            wet: wet * volume,
            dry: dry * volume,
            parts: [wet, dry, volume],
            buf: vec![0.0; ctx.block],
        },
    )
}

/// The `delay` processor.
#[derive(Clone, Debug)]
pub struct Delay {
    /// The ring of past line inputs, `max_time` long; `pos` is where the next one goes.
    line: Vec<f32>,
    pos: usize,
    /// The delay in frames, `1..=line.len()`: a frame reads what went in `len` frames before.
    len: usize,
    /// The delay before a live change of `time`, for the block after it: the output fades
    /// from the old read position to the new one over that block's frames (no click), in one
    /// call or in several when the engine pipelines the block.
    from: Option<usize>,
    /// Frames of the fade already played (it ends when they make a block, `buf.len()`).
    faded: usize,
    rate: f64,
    feedback: f32,
    wet: f32,
    dry: f32,
    /// `wet`, `dry` and `volume` as set (the products above are what a sample uses).
    parts: [f32; 3],
    buf: Vec<f32>,
}

impl Processor for Delay {
    fn memory(&self) -> usize {
        (self.line.len() + self.buf.len()) * std::mem::size_of::<f32>()
    }

    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        let frames = o.len();
        sum_inputs(inputs, &mut self.buf[..frames]);
        let n = self.line.len();
        let mut w = self.pos;
        let mut r = (w + n - self.len) % n;
        match self.from.take() {
            None => {
                // Runs in which neither position wraps, so the inner loop has no branch.
                // Reading first and writing after, frame by frame, is what a ring as long
                // as the delay does (then `r == w`).
                let mut k = 0;
                while k < frames {
                    let run = (n - w).min(n - r).min(frames - k);
                    for i in 0..run {
                        let x = self.buf[k + i];
                        let out = self.line[r + i];
                        self.line[w + i] = super::flush(x + self.feedback * out);
                        o[k + i] = self.dry * x + self.wet * out;
                    }
                    k += run;
                    w = (w + run) % n;
                    r = (r + run) % n;
                }
            }
            Some(old) => {
                let block = self.buf.len();
                let mut q = (w + n - old) % n;
                // The same step and the same t for each frame of the block, whether the
                // block comes in one call or in sub-blocks.
                let step = 1.0 / block as f32;
                let fading = (block - self.faded).min(frames);
                for k in 0..frames {
                    let x = self.buf[k];
                    let out = if k < fading {
                        let t = (self.faded + k + 1) as f32 * step;
                        (1.0 - t) * self.line[q] + t * self.line[r]
                    } else {
                        self.line[r]
                    };
                    self.line[w] = super::flush(x + self.feedback * out);
                    o[k] = self.dry * x + self.wet * out;
                    w = if w + 1 == n { 0 } else { w + 1 };
                    r = if r + 1 == n { 0 } else { r + 1 };
                    q = if q + 1 == n { 0 } else { q + 1 };
                }
                self.faded += fading;
                if self.faded < block {
                    self.from = Some(old);
                } else {
                    self.faded = 0;
                }
            }
        }
        self.pos = w;
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.line.fill(0.0);
        self.pos = 0;
        self.from = None;
        self.faded = 0;
    }

    fn live_max(&self, param: usize) -> Option<f64> {
        (param == 4).then(|| self.line.len() as f64 / self.rate)
    }

    /// 0: `feedback`, 1: `wet`, 2: `dry`, 3: `volume`, 4: `time` (rounded to whole frames,
    /// within the line; the next block fades from the old delay to the new one).
    fn set_param(&mut self, param: usize, value: f64) {
        match param {
            0 => self.feedback = value as f32,
            1..=3 => {
                self.parts[param - 1] = value as f32;
                let [wet, dry, volume] = self.parts;
                self.wet = wet * volume;
                self.dry = dry * volume;
            }
            4 => {
                let len = ((value * self.rate).round() as usize).clamp(1, self.line.len());
                if len != self.len {
                    // Two changes before a block fade from the delay that played; a change
                    // within a fade (a block's calls cut by a change) starts a fade of its
                    // own from the delay it was fading to.
                    if self.faded > 0 {
                        self.from = Some(self.len);
                        self.faded = 0;
                    } else {
                        self.from.get_or_insert(self.len);
                    }
                    self.len = len;
                }
            }
            _ => {}
        }
    }
}
