//! `sink`: an output of the render.
//!
//! - Ports: each input port is one output channel of the render, times `volume` (default 1.0).
//!   Channels are numbered over all sinks: sinks in file order, then port order. A port that
//!   no edge feeds is a silent channel; a sink that no edge feeds at all is an error, as is a
//!   sink with an outgoing edge.
//! - A sink downstream of resamplers may run at a rate other than the engine's. Its input is
//!   then converted back to the engine's rate by the default converter
//!   ([`Conv::DEFAULT`](crate::convert::Conv::DEFAULT), band-limited sinc, with its latency),
//!   so that every channel of the output file has the engine's rate and length.

use crate::convert::{Conv, Converter};
use crate::{attrs, DspNode, Io, NodeContext, NodeError, Processor, Ratio};

/// Builds a `sink` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    if ctx.in_edges == 0 {
        return Err(attrs::bad_ports(
            ctx,
            "has no input: connect an edge to it, or remove it",
        ));
    }
    if ctx.outputs > 0 {
        return Err(attrs::bad_ports(
            ctx,
            match ctx.node.declared_outputs {
                // Declared: an `out` count, whether or not an edge leaves it.
                Some(n) if n > 0 => format!(
                    "is an output of the graph and has no output port: remove its `out: {n}` (and any edge that leaves it)"
                ),
                _ => "is an output of the graph and has no output port: remove the edges that leave it".to_string(),
            },
        ));
    }
    let volume = attrs::volume(ctx)?;
    let channels = ctx.inputs;
    let mut converters = Vec::new();
    if ctx.rate != Ratio::ONE {
        for _ in 0..channels {
            let c = Converter::new(Conv::DEFAULT, ctx.rate.recip(), ctx.block).map_err(|e| {
                let why = match e {
                    crate::convert::ConvError::NotDivisible => format!(
                        "its block of {} frames does not convert to a whole number of the engine's frames",
                        ctx.block
                    ),
                    crate::convert::ConvError::TooManyPhases => format!(
                        "it runs at {} of the engine rate, and converting back takes more than the {} phases a sinc converter may have; give the resampler before it a simpler ratio",
                        ctx.rate,
                        crate::convert::MAX_PHASES
                    ),
                };
                attrs::bad_ports(
                    ctx,
                    format!("cannot be converted back to the engine rate: {why}"),
                )
            })?;
            converters.push(c);
        }
    }
    Ok(Box::new(SinkNode {
        channels,
        proto: Sink { volume, converters },
    }))
}

struct SinkNode {
    channels: usize,
    proto: Sink,
}

impl DspNode for SinkNode {
    fn inputs(&self) -> usize {
        self.channels
    }
    fn outputs(&self) -> usize {
        self.channels
    }
    fn io(&self) -> Io {
        Io::Sink {
            channels: self.channels,
        }
    }
    fn memory(&self) -> usize {
        self.proto.converters.iter().map(Converter::memory).sum()
    }
    fn processor(&self) -> Box<dyn Processor> {
        let mut p = self.proto.clone();
        p.reset();
        crate::isolated(p)
    }
}

/// The `sink` processor: copies (or converts) its inputs to the engine's output channels.
#[derive(Clone, Debug)]
pub struct Sink {
    volume: f32,
    /// One per channel when the sink is not at the engine's rate.
    converters: Vec<Converter>,
}

impl Processor for Sink {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        for (ch, (i, o)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            match self.converters.get_mut(ch) {
                Some(c) => c.process(i, o),
                None => o.copy_from_slice(&i[..o.len()]),
            }
            super::scale(o, self.volume);
        }
    }

    fn reset(&mut self) {
        for c in &mut self.converters {
            c.reset();
        }
    }
}
