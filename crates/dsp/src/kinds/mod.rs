//! The node kinds, one module each.
//!
//! | kind | inputs | outputs | attributes |
//! |---|---|---|---|
//! | [`osc`] | 0 | any | `freq` (required), `volume`, `phase` |
//! | [`mod@modulate`] (`mod`) | summed | any | `freq` (required), `volume`, `phase` |
//! | [`mix`] | summed | any | `volume` |
//! | [`sink`] | each port → one render channel | 0 | `volume` |
//! | [`source`] | 0 | each port ← one engine input channel | `volume` |
//! | [`resampler`] | summed | any (changed rate) | `ratio` (required), `conv`, `volume` |
//! | [`gain`] | summed | any | `gain`, `db`, `volume` |
//! | [`biquad`] | summed | any | `type`, `freq` (required), `q`, `volume` |
//! | [`delay`] | summed | any | `time`, `feedback`, `wet`, `dry`, `volume` |
//! | [`noise`] | 0 | any | `seed`, `volume` |
//! | [`karplus`] | summed (excitation) | any | `freq` (required), `decay`, `period`, `offset`, `seed`, `volume` |
//! | [`reverb`] | summed | 1 (mono) or 2+ (left, right, ...) | `room`, `damp`, `wet`, `dry`, `width`, `volume` |
//! | [`load`] | summed | any | `wcet` (required, µs), `volume` |
//!
//! "summed": the kind processes the sum of its input ports ([`sum_inputs`](crate::sum_inputs):
//! left to right up to 8 ports, in groups of 8 beyond, see there); "any": every output port carries
//! the same result. [`placeholder`] stands in for unknown kinds when asked.

use crate::{DspNode, Io, Processor, Ratio};
use crate::{NodeContext, NodeError};

pub mod biquad;
pub mod delay;
pub mod doc;
pub mod gain;
pub mod karplus;
pub mod load;
pub mod mix;
pub mod modulate;
pub mod noise;
pub mod osc;
pub mod placeholder;
pub mod resampler;
pub mod reverb;
pub mod sink;
pub mod source;

/// The constructor of a built-in kind: a plain function (a [`Registry`](crate::Registry) wraps
/// it into a shared [`Constructor`](crate::Constructor)).
pub type Build = fn(&NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError>;

/// Every built-in kind: name and constructor. Adding a kind is one module and one line here.
pub const BUILTIN: &[(&str, Build)] = &[
    ("biquad", biquad::build),
    ("delay", delay::build),
    ("gain", gain::build),
    ("karplus", karplus::build),
    ("load", load::build),
    ("mix", mix::build),
    ("mod", modulate::build),
    ("noise", noise::build),
    ("osc", osc::build),
    ("resampler", resampler::build),
    ("reverb", reverb::build),
    ("sink", sink::build),
    ("source", source::build),
];

/// A control-side node that clones a prototype processor.
struct Simple<P> {
    /// The kind's live attributes ([`doc::KindDoc::live`]), in parameter order.
    live: &'static [doc::Text],
    inputs: usize,
    outputs: usize,
    io: Io,
    ratio: Ratio,
    frame_parallel: bool,
    proto: P,
}

impl<P: Processor + Clone + 'static> DspNode for Simple<P> {
    fn inputs(&self) -> usize {
        self.inputs
    }
    fn outputs(&self) -> usize {
        self.outputs
    }
    fn rate_ratio(&self) -> Ratio {
        self.ratio
    }
    fn io(&self) -> Io {
        self.io
    }
    fn frame_parallel(&self) -> bool {
        self.frame_parallel
    }
    fn sums_inputs(&self) -> bool {
        // The frame-parallel kinds (mix, gain) scale the sum of their inputs.
        self.frame_parallel
    }
    fn memory(&self) -> usize {
        self.proto.memory()
    }
    fn processor(&self) -> Box<dyn Processor> {
        let mut p = self.proto.clone();
        p.reset();
        crate::isolated(p)
    }
    fn live_param(&self, attr: &str) -> Option<usize> {
        self.live.iter().position(|a| *a == attr)
    }
    fn live_max(&self, param: usize) -> Option<f64> {
        self.proto.live_max(param)
    }
}

/// An ordinary node with the graph's port counts.
fn simple<P: Processor + Clone + 'static>(
    ctx: &NodeContext<'_>,
    proto: P,
) -> Result<Box<dyn DspNode>, NodeError> {
    ordinary(ctx, proto, false)
}

/// An ordinary node whose processor computes each output frame from the same frame of the
/// inputs alone (see [`DspNode::frame_parallel`]).
fn frame_parallel<P: Processor + Clone + 'static>(
    ctx: &NodeContext<'_>,
    proto: P,
) -> Result<Box<dyn DspNode>, NodeError> {
    ordinary(ctx, proto, true)
}

/// The live attributes of the built-in kind `kind` (none for a kind of another name).
fn live_of(kind: &str) -> &'static [doc::Text] {
    match doc::builtin_doc(kind) {
        Some(d) => match &d.live {
            std::borrow::Cow::Borrowed(l) => l,
            std::borrow::Cow::Owned(_) => &[],
        },
        None => &[],
    }
}

fn ordinary<P: Processor + Clone + 'static>(
    ctx: &NodeContext<'_>,
    proto: P,
    frame_parallel: bool,
) -> Result<Box<dyn DspNode>, NodeError> {
    Ok(Box::new(Simple {
        live: live_of(ctx.kind()),
        inputs: ctx.inputs,
        outputs: ctx.outputs,
        io: Io::None,
        ratio: Ratio::ONE,
        frame_parallel,
        proto,
    }))
}

/// Flushes values below 1e-25 to zero, so that feedback loops decaying in silence never reach
/// subnormal numbers (which are many times slower on most CPUs). A select, not a branch.
#[inline(always)]
fn flush(x: f32) -> f32 {
    if x.abs() < 1e-25 {
        0.0
    } else {
        x
    }
}

/// Multiplies a buffer by `g` unless `g` is 1.
#[inline]
fn scale(buf: &mut [f32], g: f32) {
    if g != 1.0 {
        for x in buf {
            *x *= g;
        }
    }
}
