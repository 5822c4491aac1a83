//! Helpers shared by the plan and executor tests.

use fugue_dsp::{DspNode, NodeContext, NodeError, Processor, Registry};

/// The built-in kinds with `mix` and `gain` not declaring `sums_inputs`: compiled whole.
pub fn whole_sums_registry() -> Registry {
    struct Whole(Box<dyn DspNode>);
    impl DspNode for Whole {
        fn inputs(&self) -> usize {
            self.0.inputs()
        }
        fn outputs(&self) -> usize {
            self.0.outputs()
        }
        fn frame_parallel(&self) -> bool {
            self.0.frame_parallel()
        }
        fn processor(&self) -> Box<dyn Processor> {
            self.0.processor()
        }
    }
    fn mix(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
        Ok(Box::new(Whole(fugue_dsp::kinds::mix::build(ctx)?)))
    }
    fn gain(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
        Ok(Box::new(Whole(fugue_dsp::kinds::gain::build(ctx)?)))
    }
    let mut r = Registry::with_builtin_kinds();
    r.register("mix", mix);
    r.register("gain", gain);
    r
}
