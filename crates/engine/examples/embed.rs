//! Embedding the engine in a program: read a graph, build an engine with a parallel
//! executor, feed its input channel and read its output channel cycle by cycle, as an audio
//! callback would.
//!
//! ```sh
//! cargo run --release -p fugue-engine --example embed
//! ```

use fugue_engine::{Engine, ExecutorChoice, Registry};
use fugue_exec::ExecutorKind;

/// An echo on a sine: `source` (the program's input) -> `delay` -> `sink` (its output), and
/// an oscillator mixed in.
const GRAPH: &str = r#"
    input = { kind: "source", };
    tone  = { kind: "osc", freq: 220, volume: 0.2, };
    echo  = { kind: "delay", time: 0.01, feedback: 0.5, wet: 0.5, };
    mix   = { kind: "mix", };
    out   = { kind: "sink", };
    input.1 -> echo.1 -> mix.1;
    tone.1 -> mix.2;
    mix.1 -> out.1;
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let graph = fugue_graph::read::ag::parse(GRAPH, "embedded.ag")?;
    let (rate, block) = (48_000.0, 256);
    // Work stealing on two threads (the thread that calls run_cycle is one of them).
    let choice = ExecutorChoice {
        kind: ExecutorKind::Ws,
        threads: 2,
        ..ExecutorChoice::default()
    };
    let (mut engine, warnings) = Engine::build(
        &graph,
        &Registry::with_builtin_kinds(),
        rate,
        block,
        &choice,
        false,
    )?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    // The audio thread: once per buffer, write the input, run one cycle, read the output.
    // (A real-time program calls fugue_engine::place_audio_thread() first on that thread.)
    let click: Vec<f32> = (0..block).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
    let silence = vec![0.0f32; block];
    let mut peak = 0.0f32;
    for cycle in 0..200 {
        engine
            .plan
            .set_input(0, if cycle == 0 { &click } else { &silence });
        engine.run_cycle();
        let out = engine.plan.output(0);
        peak = out.iter().fold(peak, |p, x| p.max(x.abs()));
    }
    println!(
        "200 cycles of {block} frames at {rate} Hz with {} on {} threads; output peak {peak:.3}",
        choice.kind.name(),
        choice.threads
    );
    Ok(())
}
