//! `placeholder`: stands in for a node of unknown kind when the user asks for it
//! (`--placeholder`): it keeps the node's ports and writes silence to every output.

use crate::{DspNode, NodeContext, NodeError, Processor};

/// Builds a placeholder for the node of `ctx`, whatever its kind.
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    super::simple(ctx, Placeholder)
}

/// The placeholder processor: silence.
#[derive(Clone, Copy, Debug)]
pub struct Placeholder;

impl Processor for Placeholder {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        for o in outputs {
            o.fill(0.0);
        }
    }

    fn reset(&mut self) {}
}
