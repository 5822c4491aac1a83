//! `source`: an input of the engine.
//!
//! - Ports: no input port; each output port is one engine input channel, times `volume`
//!   (default 1.0). Channels are numbered over all sources: sources in file order, then port
//!   order. Offline, the channels come from the `--input` WAV file (channel `c` of the file;
//!   channels the file lacks are silence), or are silence.

use crate::{attrs, DspNode, Io, NodeContext, NodeError, Processor};

/// Builds a `source` node.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    attrs::no_inputs(ctx)?;
    let volume = attrs::volume(ctx)?;
    Ok(Box::new(SourceNode {
        channels: ctx.outputs,
        proto: Source { volume },
    }))
}

struct SourceNode {
    channels: usize,
    proto: Source,
}

impl DspNode for SourceNode {
    fn inputs(&self) -> usize {
        self.channels
    }
    fn outputs(&self) -> usize {
        self.channels
    }
    fn io(&self) -> Io {
        Io::Source {
            channels: self.channels,
        }
    }
    fn processor(&self) -> Box<dyn Processor> {
        crate::isolated(self.proto.clone())
    }
}

/// The `source` processor: copies the engine's input channels to its output ports.
#[derive(Clone, Debug)]
pub struct Source {
    volume: f32,
}

impl Processor for Source {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        for (i, o) in inputs.iter().zip(outputs.iter_mut()) {
            o.copy_from_slice(&i[..o.len()]);
            super::scale(o, self.volume);
        }
    }

    fn reset(&mut self) {}
}
