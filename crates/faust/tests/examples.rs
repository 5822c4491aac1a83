//! Every example program that Faust installs (`/usr/share/faust/examples`) with at most two
//! inputs renders one second through fugue, without error, panic or a sample that is not
//! finite. The test counts them, and names those it skips and why (more than two inputs, no
//! output, a program Faust itself refuses).
//!
//! Faust's own compiler takes seconds on some of them (the `faust` command as much as
//! libfaust; over two minutes in all on a loaded two-core machine): those of [`SLOW`] are
//! skipped, named, unless `FUGUE_FAUST_EXAMPLES_ALL` is set, which renders every one.

use std::path::{Path, PathBuf};

use fugue_engine::{render, Output, Registry, RenderOptions};
use fugue_faust::{Backend, Faust, FaustError, Source};

const EXAMPLES: &str = "/usr/share/faust/examples";

/// Programs whose output is not finite by design: `statespace.dsp`'s default matrices make
/// an unstable system (Faust's own C build of it, run on an oscillator, gives infinities from
/// its 203rd sample as fugue's render does).
const UNSTABLE: &[&str] = &["misc/statespace.dsp"];

/// The programs (under [`EXAMPLES`]) on which the `faust` command itself took more than
/// 2.5 s (on a loaded two-core machine; most take 0.1 to 0.5 s).
const SLOW: &[&str] = &[
    "SAM/effects/effects.dsp",
    "SAM/virtualAnalog/virtualAnalog.dsp",
    "SAM/virtualAnalog/virtualAnalogForBrowser.dsp",
    "SAM/virtualAnalog/virtualAnalogWithEffectsForBrowser.dsp",
    "analysis/FFT.dsp",
    "analysis/spectralLevel.dsp",
    "analysis/spectralTiltLab.dsp",
    "dynamic/gateCompressor.dsp",
    "filtering/filterBank.dsp",
    "filtering/graphicEqLab.dsp",
    "filtering/parametricEqLab.dsp",
    "filtering/vcfWahLab.dsp",
    "filtering/vocoder.dsp",
    "gameaudio/insects.dsp",
    "generator/virtualAnalogLab.dsp",
    "misc/guitarix.dsp",
    "phasing/phaserFlangerLab.dsp",
    "physicalModeling/brassMIDI.dsp",
    "physicalModeling/churchBell.dsp",
    "physicalModeling/clarinetMIDI.dsp",
    "physicalModeling/elecGuitarMIDI.dsp",
    "physicalModeling/englishBell.dsp",
    "physicalModeling/faust-stk/NLFeks.dsp",
    "physicalModeling/faust-stk/piano.dsp",
    "physicalModeling/fds/1dDampedWaveEquation.dsp",
    "physicalModeling/fds/2dKirchhoffThinPlate.dsp",
    "physicalModeling/fds/BowedString.dsp",
    "physicalModeling/fds/ControllableNonPhysicalString.dsp",
    "physicalModeling/fds/HammeredString.dsp",
    "physicalModeling/fds/PianoHammeredString.dsp",
    "physicalModeling/fds/StiffString.dsp",
    "physicalModeling/fluteMIDI.dsp",
    "physicalModeling/frenchBell.dsp",
    "physicalModeling/germanBell.dsp",
    "physicalModeling/guitarMIDI.dsp",
    "physicalModeling/marimbaMIDI.dsp",
    "physicalModeling/mi-faust/10_PluckedString/pluckedString.dsp",
    "physicalModeling/mi-faust/11_BowedString/bowedString.dsp",
    "physicalModeling/mi-faust/13_Construction/construction.dsp",
    "physicalModeling/modularInterpInstrMIDI.dsp",
    "physicalModeling/nylonGuitarMIDI.dsp",
    "physicalModeling/russianBell.dsp",
    "physicalModeling/standardBell.dsp",
    "physicalModeling/violin.dsp",
    "physicalModeling/violinMIDI.dsp",
    "physicalModeling/vocalBP.dsp",
    "physicalModeling/vocalBPMIDI.dsp",
    "physicalModeling/vocalFOF.dsp",
    "physicalModeling/vocalFOFMIDI.dsp",
    "quantizing/quantizedChords.dsp",
    "reverb/fdnRev.dsp",
    "reverb/greyhole.dsp",
    "reverb/jprev.dsp",
    "reverb/reverbDesigner.dsp",
    "reverb/zitaRev.dsp",
    "smartKeyboard/acGuitar.dsp",
    "smartKeyboard/associatedEffects/elecGuitarEffect.dsp",
    "smartKeyboard/associatedEffects/myEffect.dsp",
    "smartKeyboard/bells.dsp",
    "smartKeyboard/brass.dsp",
    "smartKeyboard/clarinet.dsp",
    "smartKeyboard/elecGuitar.dsp",
    "smartKeyboard/violin.dsp",
    "smartKeyboard/violin2.dsp",
    "smartKeyboard/vocal.dsp",
];

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
fn graph_of(
    file: &Path,
    backend: Backend,
    inputs: usize,
    outputs: usize,
) -> fugue_graph::TaskGraph {
    let mut text = format!(
        "dsp = {{ kind: \"faust\", file: {:?}, backend: {:?}, }};\nout = {{ kind: \"sink\", in: {outputs}, }};\n",
        file.display().to_string(),
        backend.name()
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
    let all = std::env::var_os("FUGUE_FAUST_EXAMPLES_ALL").is_some();
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
        if !all && SLOW.contains(&name.trim_start_matches('/')) {
            skipped.push((
                name,
                "Faust's compiler takes seconds on it (FUGUE_FAUST_EXAMPLES_ALL=1 renders it)"
                    .into(),
            ));
            continue;
        }
        if std::env::var_os("FUGUE_FAUST_TRACE").is_some() {
            eprintln!("{name}");
        }
        if UNSTABLE.contains(&name.trim_start_matches('/')) {
            skipped.push((name, "unstable by design (see UNSTABLE)".into()));
            continue;
        }
        // The interpreter calls no foreign function: such a program is compiled by LLVM.
        let compiled = Source::file(file, None).and_then(|s| {
            faust.factory(&s, backend()).or_else(|e| match e {
                FaustError::Compile { ref message, .. } if message.contains("foreign function") => {
                    faust.factory(&s, Backend::Llvm)
                }
                e => Err(e),
            })
        });
        let factory = match compiled {
            Ok(f) => f,
            Err(e) if e.to_string().contains("foreign function") => {
                skipped.push((
                    name,
                    format!("it calls a C function, which libfaust cannot link at run time: {e}"),
                ));
                continue;
            }
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
        let graph = graph_of(file, factory.backend(), factory.inputs, factory.outputs);
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
