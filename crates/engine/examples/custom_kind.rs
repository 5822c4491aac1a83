//! A node kind of your own, without editing fugue: register it in a [`Registry`], compile
//! the graph with that registry, and build the engine on the plan.
//!
//! The kind here, `fold`, is a wave folder: its input, times `drive`, folded back into
//! [-1, 1] each time it crosses ±1.
//!
//! ```sh
//! cargo run --release -p fugue-engine --example custom_kind
//! ```

use fugue_dsp::kinds::doc::KindDoc;
use fugue_dsp::{attrs, sum_inputs, DspNode, NodeContext, NodeError, Processor, Registry};
use fugue_engine::{Engine, ExecutorChoice};
use fugue_exec::{CompileOptions, Plan};

/// The control-side node: built on the control thread (it may allocate and fail).
struct Fold {
    inputs: usize,
    outputs: usize,
    /// Frames per cycle at this node: the processor's memory is sized when it is made.
    block: usize,
    drive: f32,
}

/// The processor: runs on the audio path, so it never allocates, locks or blocks.
struct FoldProcessor {
    drive: f32,
    sum: Vec<f32>,
}

fn fold(x: f32) -> f32 {
    // A triangle of period 4: identity on [-1, 1], mirrored beyond.
    let y = (x + 1.0).rem_euclid(4.0);
    if y < 2.0 {
        y - 1.0
    } else {
        3.0 - y
    }
}

impl Processor for FoldProcessor {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let n = outputs.first().map_or(0, |o| o.len());
        let sum = &mut self.sum[..n];
        sum_inputs(inputs, sum);
        for out in outputs.iter_mut() {
            for (y, &x) in out.iter_mut().zip(sum.iter()) {
                *y = fold(x * self.drive);
            }
        }
    }

    fn reset(&mut self) {}
}

impl DspNode for Fold {
    fn inputs(&self) -> usize {
        self.inputs
    }
    fn outputs(&self) -> usize {
        self.outputs
    }
    fn processor(&self) -> Box<dyn Processor> {
        Box::new(FoldProcessor {
            drive: self.drive,
            sum: vec![0.0; self.block],
        })
    }
}

/// The constructor the registry calls for every node of kind `fold`.
fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let drive = attrs::or(ctx, "drive", 2.0)?;
    if drive.is_nan() || drive <= 0.0 {
        return Err(attrs::bad(
            ctx,
            "drive",
            &drive.to_string(),
            "must be above 0",
        ));
    }
    Ok(Box::new(Fold {
        inputs: ctx.inputs,
        outputs: ctx.outputs.max(1),
        block: ctx.block,
        drive: drive as f32 * attrs::volume(ctx)?,
    }))
}

/// Its description: what `drive` means (an attribute it does not list would be reported as
/// unread by the tools that check graphs).
fn doc() -> KindDoc {
    KindDoc::new(
        "fold",
        "a wave folder",
        "summed",
        "any number, each the folded signal",
    )
    .attribute("drive", "gain before folding, > 0 (default 2.0)")
    .attribute("volume", "multiplied into drive (default 1.0)")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = Registry::with_builtin_kinds();
    registry.register_documented(build, doc());
    let graph = fugue_graph::read::ag::parse(
        r#"o = { kind: "osc", freq: 100, };  f = { kind: "fold", drive: 3.0, };  s = { kind: "sink", };
           o.1 -> f.1 -> s.1;"#,
        "fold.ag",
    )?;
    let options = CompileOptions {
        sample_rate: 48_000.0,
        block: 480,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let plan = Plan::compile(&graph, &registry, &options)?;
    let (mut engine, _) = Engine::with_plan(&graph, &registry, plan, &ExecutorChoice::default())?;
    engine.run_cycle();
    let out = engine.plan.output(0);
    let peak = out.iter().fold(0.0f32, |p, x| p.max(x.abs()));
    // A 100 Hz sine driven 3x and folded: never beyond ±1, and full scale reached.
    assert!(peak <= 1.0 + 1e-6 && peak > 0.99, "{peak}");
    println!("`fold` ran inside the engine: 480 frames, peak {peak:.3} (a 3x sine folded into ±1)");
    Ok(())
}
