//! Every example program that Faust installs (`/usr/share/faust/examples`) with at most two
//! inputs renders one second through fugue, without error, panic or a sample that is not
//! finite. The test counts them, and names those it skips and why (more than two inputs, no
//! output, a program Faust itself refuses, a program that needs a soundfile).

use std::path::{Path, PathBuf};

use fugue_engine::{render, Output, Registry, RenderOptions};
use fugue_faust::{Backend, Faust, Source};

const EXAMPLES: &str = "/usr/share/faust/examples";

/// The `.dsp` files under `dir`, sorted.
fn programs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            programs(&p, out);
        } else if fugue_faust::is_dsp(&p) {
            out.push(p);
        }
    }
    out.sort();
}

/// The graph of `file`: an oscillator into each of its `inputs` (so that an effect has
/// something to work on), its outputs into a sink.
fn graph_of(file: &Path, inputs: usize, outputs: usize) -> fugue_graph::TaskGraph {
    let mut text = format!(
        "dsp = {{ kind: \"faust\", file: {:?}, backend: {:?}, }};\nout = {{ kind: \"sink\", in: {outputs}, }};\n",
        file.display().to_string(),
        backend().name()
    );
    for i in 1..=inputs {
        text.push_str(&format!(
            "in{i} = {{ kind: \"osc\", freq: {}, volume: 0.5, }};\nin{i}.1 -> dsp.{i};\n",
            110 * i
        ));
    }
    for j in 1..=outputs {
        text.push_str(&format!("dsp.{j} -> out.{j};\n"));
    }
    fugue_graph::read::ag::parse(&text, "examples.ag").unwrap()
}

#[test]
fn every_installed_example_renders_a_second() {
    if !fugue_faust::available_for("every_installed_example_renders_a_second") {
        return;
    }
    let mut files = Vec::new();
    programs(Path::new(EXAMPLES), &mut files);
    if files.is_empty() {
        eprintln!("SKIPPED every_installed_example_renders_a_second: no {EXAMPLES}");
        return;
    }
    let faust = Faust::shared().unwrap();
    let mut registry = Registry::with_builtin_kinds();
    fugue_faust::register(&mut registry);
    let tmp = std::env::temp_dir().join(format!("fugue-faust-examples-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut rendered = 0;
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let started = std::time::Instant::now();
    for (k, file) in files.iter().enumerate() {
        let name = file
            .strip_prefix(EXAMPLES)
            .unwrap_or(file)
            .display()
            .to_string();
        let t0 = std::time::Instant::now();
        if std::env::var_os("FUGUE_FAUST_TRACE").is_some() {
            eprintln!("{name}");
        }
        let factory = match Source::file(file, None).and_then(|s| faust.factory(&s, backend())) {
            Ok(f) => f,
            Err(e) => {
                skipped.push((name, format!("Faust refuses it: {e}")));
                continue;
            }
        };
        if factory.inputs > 2 {
            skipped.push((name, format!("{} inputs", factory.inputs)));
            continue;
        }
        if factory.outputs == 0 {
            skipped.push((name, "no output".into()));
            continue;
        }
        let graph = graph_of(file, factory.inputs, factory.outputs);
        let wav = tmp.join(format!("{k}.wav"));
        let options = RenderOptions {
            seconds: Some(1.0),
            output: Output::Wav(wav.clone()),
            registry: registry.clone(),
            ..RenderOptions::default()
        };
        match render(&graph, &options, |_| {}) {
            Ok(s) if !s.panics.is_empty() => failed.push(format!("{name}: {:?}", s.panics)),
            Ok(s) => {
                assert_eq!(s.frames, 48_000, "{name}");
                let ch = fugue_testkit::wav::channels(&wav);
                match ch.iter().flatten().position(|x| !x.is_finite()) {
                    Some(i) => failed.push(format!("{name}: sample {i} is not finite")),
                    None => rendered += 1,
                }
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
        let _ = std::fs::remove_file(&wav);
        if std::env::var_os("FUGUE_FAUST_TRACE").is_some() {
            eprintln!("  {:.2} s", t0.elapsed().as_secs_f64());
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "{rendered} of {} example programs rendered one second each in {:.1} s; {} skipped:",
        files.len(),
        started.elapsed().as_secs_f64(),
        skipped.len()
    );
    for (name, why) in &skipped {
        eprintln!("  skipped {name}: {why}");
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    // Faust 2.54 installs about 250; nearly all have at most two inputs.
    assert!(
        rendered >= files.len() / 2,
        "only {rendered} of {} rendered",
        files.len()
    );
}

/// The backend the programs are compiled with: the interpreter unless
/// `FUGUE_FAUST_EXAMPLES_LLVM` is set (LLVM takes several times longer to compile them).
fn backend() -> Backend {
    if std::env::var_os("FUGUE_FAUST_EXAMPLES_LLVM").is_some() {
        Backend::Llvm
    } else {
        Backend::Interp
    }
}
