//! `delay`: a feedback delay (echo).
//!
//! - Ports: the sum of the inputs `x` is delayed; every output port carries
//!   `volume * (dry * x + wet * d)`, where `d` is the delay line's output and the line is fed
//!   `x + feedback * d`.
//! - `time` (default 0.25): delay in seconds, `0 < time <= 60`; rounded to whole frames at the
//!   node's rate, at least one.
//! - `feedback` (default 0.4): `-1 < feedback < 1`.
//! - `wet` (default 0.5), `dry` (default 1.0), `volume` (default 1.0).
//!
//! Values below 1e-25 fed back into the line are flushed to zero (no subnormal numbers).

use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, NodeContext, NodeError, Processor};

/// Builds a `delay` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let time = attrs::or(ctx, "time", 0.25)?;
    attrs::check(
        ctx,
        "time",
        time,
        time > 0.0 && time <= 60.0,
        "must be a time in seconds between 0 and 60",
    )?;
    let feedback = attrs::or(ctx, "feedback", 0.4)?;
    attrs::check(
        ctx,
        "feedback",
        feedback,
        feedback.abs() < 1.0,
        "must be between -1 and 1 (exclusive)",
    )?;
    let wet = attrs::or(ctx, "wet", 0.5)? as f32;
    let dry = attrs::or(ctx, "dry", 1.0)? as f32;
    let volume = attrs::volume(ctx)?;
    let len = ((time * ctx.sample_rate).round() as usize).max(1);
    let bytes = len.saturating_add(ctx.block) * std::mem::size_of::<f32>();
    if bytes > crate::MAX_NODE_MEMORY {
        return Err(attrs::bad(
            ctx,
            "time",
            &time.to_string(),
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
            line: vec![0.0; len],
            pos: 0,
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
    line: Vec<f32>,
    pos: usize,
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
        sum_inputs(inputs, &mut self.buf[..o.len()]);
        let n = self.line.len();
        let mut k = 0;
        // Walk the ring in runs that do not wrap, so the inner loop has no branch.
        while k < o.len() {
            let run = (n - self.pos).min(o.len() - k);
            let line = &mut self.line[self.pos..self.pos + run];
            for ((y, &x), d) in o[k..k + run]
                .iter_mut()
                .zip(&self.buf[k..k + run])
                .zip(line)
            {
                let out = *d;
                *d = super::flush(x + self.feedback * out);
                *y = self.dry * x + self.wet * out;
            }
            k += run;
            self.pos += run;
            if self.pos == n {
                self.pos = 0;
            }
        }
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.line.fill(0.0);
        self.pos = 0;
    }

    /// 0: `feedback`, 1: `wet`, 2: `dry`, 3: `volume`.
    fn set_param(&mut self, param: usize, value: f64) {
        match param {
            0 => self.feedback = value as f32,
            1..=3 => {
                self.parts[param - 1] = value as f32;
                let [wet, dry, volume] = self.parts;
                self.wet = wet * volume;
                self.dry = dry * volume;
            }
            _ => {}
        }
    }
}
