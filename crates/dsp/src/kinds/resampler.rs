//! `resampler`: changes the sample rate, as in Donat-Bouillud, Giavitto, Jacquemard,
//! "Optimization of audio graphs by resampling" (DAFx-19).
//!
//! - Ports: the sum of the inputs is converted; every output port carries the result.
//! - `ratio` (required): output rate / input rate, e.g. `0.5` (downsample by 2), `2.` or
//!   `"147/160"`; it must be a fraction from 1e-6 to 1e6 with a denominator of at most 100000.
//! - `conv` (default `sinc`): the converter, `zero_hold`, `linear` or `sinc`
//!   (band-limited; see [`crate::convert`] for each one's latency and quality).
//! - `volume` (default 1.0).
//!
//! Every node downstream runs at `rate * ratio` with blocks of `block * ratio` frames: the
//! compiler gives their constructors that rate and block size. The block must come out
//! whole: a ratio of 1/2 needs an even block at this node. Otherwise building fails with an
//! error that says which engine buffer sizes work (the render's `--buffer` must be a multiple
//! of the product of the denominators upstream). A node whose inputs arrive at different
//! rates is refused by the compiler.

use crate::convert::{Conv, ConvError, Converter, MAX_PHASES};
use crate::node::{fan_out, sum_inputs};
use crate::{attrs, DspNode, Io, NodeContext, NodeError, Processor, Ratio};

/// Builds a `resampler` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let ratio = ratio_of(ctx)?;
    build_rest(ctx, ratio)
}

/// The ratio (output rate / input rate) that the `resampler` node of `ctx` gives, from its
/// `ratio` attribute (a number, or a fraction written `"N/D"`).
pub fn ratio_of(ctx: &NodeContext<'_>) -> Result<Ratio, NodeError> {
    // A fraction may be written as one: `ratio: "147/160"`.
    let written = ctx.node.attr("ratio").map(|v| v.as_str().into_owned());
    let fraction = written.as_deref().and_then(|t| {
        let (n, d) = t.split_once('/')?;
        Some((n.trim().parse::<u64>().ok()?, d.trim().parse::<u64>().ok()?))
    });
    let (ratio, shown) = match fraction {
        Some((n, d)) => (
            Ratio::new(n, d)
                .filter(|q| q.as_f64() >= 1e-6 && q.as_f64() <= 1e6 && q.den() <= Ratio::MAX_DEN),
            format!("{n}/{d}"),
        ),
        None => {
            let r = attrs::required(
                ctx,
                "ratio",
                "output rate / input rate, e.g. 0.5, 2 or \"147/160\"",
            )?;
            (Ratio::from_f64(r), attrs::short_number(r))
        }
    };
    ratio.ok_or_else(|| {
        attrs::bad(
            ctx,
            "ratio",
            &shown,
            "is not a fraction from 1e-6 to 1e6 with a denominator of at most 100000 (a number, or \"N/D\")",
        )
    })
}

/// Builds the rest of a `resampler` node, its ratio read.
fn build_rest(ctx: &NodeContext<'_>, ratio: Ratio) -> Result<Box<dyn DspNode>, NodeError> {
    let r = ratio.as_f64();
    let conv = match ctx.node.attr("conv") {
        None => Conv::DEFAULT,
        Some(v) => Conv::from_name(&v.as_str()).ok_or_else(|| {
            attrs::bad(
                ctx,
                "conv",
                &v.as_str(),
                &format!("is not one of: {}", Conv::NAMES.join(", ")),
            )
        })?,
    };
    let volume = attrs::volume(ctx)?;
    let conv = Converter::new(conv, ratio, ctx.block).map_err(|e| match e {
        ConvError::NotDivisible => {
            let multiple = ctx.rate.checked_mul(ratio).map(|x| x.den()).unwrap_or(0);
            // The value as the file writes it (`"1/3"`, not its decimal expansion).
            let written = ctx
                .node
                .attr("ratio")
                .map_or_else(|| ratio.to_string(), |v| v.as_str().to_string());
            attrs::bad(
                ctx,
                "ratio",
                &written,
                &format!(
                    "does not divide the block of {} frames at this node; choose a buffer size that is a multiple of {multiple}",
                    ctx.block
                ),
            )
        }
        ConvError::TooManyPhases => attrs::bad(
            ctx,
            "ratio",
            &r.to_string(),
            &format!("has a numerator above {MAX_PHASES}; use conv: \"linear\" or a simpler ratio"),
        ),
    })?;
    let buf = vec![0.0; ctx.block];
    Ok(Box::new(ResamplerNode {
        inputs: ctx.inputs,
        outputs: ctx.outputs,
        ratio,
        proto: Resampler { conv, buf, volume },
    }))
}

struct ResamplerNode {
    inputs: usize,
    outputs: usize,
    ratio: Ratio,
    proto: Resampler,
}

impl DspNode for ResamplerNode {
    fn inputs(&self) -> usize {
        self.inputs
    }
    fn outputs(&self) -> usize {
        self.outputs
    }
    fn rate_ratio(&self) -> Ratio {
        self.ratio
    }
    fn memory(&self) -> usize {
        self.proto.conv.memory() + self.proto.buf.len() * std::mem::size_of::<f32>()
    }
    fn io(&self) -> Io {
        Io::None
    }
    fn processor(&self) -> Box<dyn Processor> {
        let mut p = self.proto.clone();
        p.reset();
        crate::isolated(p)
    }
}

/// The `resampler` processor.
#[derive(Clone, Debug)]
pub struct Resampler {
    conv: Converter,
    buf: Vec<f32>,
    volume: f32,
}

impl Processor for Resampler {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some(o) = outputs.first_mut() else { return };
        sum_inputs(inputs, &mut self.buf);
        self.conv.process(&self.buf, o);
        super::scale(o, self.volume);
        fan_out(outputs);
    }

    fn reset(&mut self) {
        self.conv.reset();
    }
}
