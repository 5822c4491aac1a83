//! A node kind whose processor panics (feature `dsp`): for the tests that prove a panicking
//! processor is silenced while the rest of the graph, or the other graphs, play on.

use fugue_dsp::{DspNode, NodeContext, NodeError, Processor, Registry};

/// Copies its input to its output, and panics with `boom` at the cycles `panics_at` says.
struct Bomb {
    cycle: u32,
    panics_at: fn(u32) -> bool,
}

impl Processor for Bomb {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        self.cycle += 1;
        if (self.panics_at)(self.cycle) {
            panic!("boom");
        }
        outputs[0].copy_from_slice(inputs[0]);
    }
    fn reset(&mut self) {
        self.cycle = 0;
    }
}

/// One input, one output.
struct Node(fn(u32) -> bool);

impl DspNode for Node {
    fn inputs(&self) -> usize {
        1
    }
    fn outputs(&self) -> usize {
        1
    }
    fn processor(&self) -> Box<dyn Processor> {
        Box::new(Bomb {
            cycle: 0,
            panics_at: self.0,
        })
    }
}

/// The built-in kinds and `bomb`, whose processor panics at the cycles (counted from 1 since
/// its last reset) for which `panics_at` is true.
pub fn registry(panics_at: fn(u32) -> bool) -> Registry {
    let mut r = Registry::with_builtin_kinds();
    r.register(
        "bomb",
        move |_: &NodeContext<'_>| -> Result<Box<dyn DspNode>, NodeError> {
            Ok(Box::new(Node(panics_at)))
        },
    );
    r
}
