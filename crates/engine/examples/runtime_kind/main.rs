//! A node kind registered at run time, whose constructor carries state and reads a file that
//! the graph names relative to its own folder: the way a kind compiled or loaded while the
//! program runs (a Faust program, an LV2 plugin) joins the built-in ones.
//!
//! The kind, `table` (see `table.rs`), plays the samples of a text file in a loop. The
//! example writes a graph and its table into a temporary folder, registers the kind in a
//! registry of the built-in kinds, and renders the graph through [`fugue_engine::render`]
//! with that registry.
//!
//! ```sh
//! cargo run --release -p fugue-engine --example runtime_kind
//! ```

mod table;

use fugue_engine::{render, Output, Registry, RenderOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("fugue-runtime-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    // A ramp of eight samples, and a graph that plays it at half volume.
    std::fs::write(
        dir.join("ramp.txt"),
        "0.0 0.125 0.25 0.375\n0.5 0.625 0.75 0.875\n",
    )?;
    let graph_file = dir.join("ramp.ag");
    std::fs::write(
        &graph_file,
        r#"t = { kind: "table", file: "ramp.txt", volume: 0.5, };  s = { kind: "sink", };
           t.1 -> s.1;"#,
    )?;

    let mut registry = Registry::with_builtin_kinds();
    let tables = table::Tables::register(&mut registry);
    // The reader records the graph's folder: `file: "ramp.txt"` is found beside it.
    let graph = fugue_graph::read_file(&graph_file, None)?;
    let wav = dir.join("ramp.wav");
    let summary = render(
        &graph,
        &RenderOptions {
            sample_rate: 48_000,
            block: 64,
            seconds: Some(0.01),
            output: Output::Wav(wav.clone()),
            registry,
            ..RenderOptions::default()
        },
        |_| {},
    )?;
    // One channel: sample `n` is the table's sample `n % 8` at half volume.
    let out = hound::WavReader::open(&wav)?
        .into_samples::<f32>()
        .collect::<Result<Vec<f32>, _>>()?;
    assert_eq!(out.len() as u64, summary.frames);
    for (n, &y) in out.iter().enumerate() {
        let want = (n % 8) as f32 * 0.125 * 0.5;
        assert_eq!(y, want, "frame {n}");
    }
    println!(
        "`table` rendered {} frames from {} (read once: {:?}), peak {:.4}",
        summary.frames,
        graph_file.display(),
        tables.files(),
        summary.peak
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
