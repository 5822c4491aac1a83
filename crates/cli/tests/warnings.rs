//! Warnings where audio goes wrong (the render still succeeds), `--strict`, `-o -` and the
//! output extension.

mod common;

use common::{example, folder, fugue, stderr, stdout};

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn a_loud_float_render_warns_and_an_integer_one_counts_its_clipped_samples() {
    let d = folder("warnings", "loud");
    let g = write(
        &d,
        "loud.ag",
        "o = { kind: \"osc\", freq: 440, volume: 4.0, };  s = { kind: \"sink\", };  o.1 -> s.1;",
    );
    let out = d.join("loud.wav").display().to_string();
    let o = fugue(&["render", &g, "-o", &out, "--seconds", "0.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("loud.wav peaks at +12.0 dBFS: its samples beyond ±1.0 will clip"),
        "{}",
        stderr(&o)
    );
    let out16 = d.join("loud16.wav").display().to_string();
    let o = fugue(&[
        "render",
        &g,
        "-o",
        &out16,
        "--seconds",
        "0.1",
        "--bits",
        "16",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("samples were clipped to ±1.0"),
        "{}",
        stderr(&o)
    );
    // --strict: an error, and nothing written.
    let strict = d.join("strict.wav");
    let o = fugue(&[
        "render",
        &g,
        "-o",
        &strict.display().to_string(),
        "--seconds",
        "0.1",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--strict makes warnings errors"),
        "{}",
        stderr(&o)
    );
    assert!(!strict.exists());
}

#[test]
fn silence_without_input_is_said_with_its_cause() {
    let d = folder("warnings", "silent");
    let out = d.join("echo.wav").display().to_string();
    let o = fugue(&[
        "render",
        &example("echo.ag"),
        "-o",
        &out,
        "--seconds",
        "0.1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "is silent (every sample is 0); the graph's source nodes read silence without --input"
        ),
        "{}",
        stderr(&o)
    );
    // The examples themselves render without a warning.
    for g in ["pluck.ag", "synth.ag", "rake.ag"] {
        let out = d.join(g.replace(".ag", ".wav")).display().to_string();
        let o = fugue(&["render", &example(g), "-o", &out, "--seconds", "0.5"]);
        assert!(
            o.status.success() && !stderr(&o).contains("warning"),
            "{g}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn a_misspelt_attribute_and_an_unconnected_node_are_named() {
    let d = folder("warnings", "graph");
    let g = write(
        &d,
        "g.ag",
        "o = { kind: \"osc\", freq: 440, volme: 0.5, };\nlost = { kind: \"noise\", };\ns = { kind: \"sink\", };\no.1 -> s.1;",
    );
    let out = d.join("g.wav").display().to_string();
    let o = fugue(&["render", &g, "-o", &out, "--seconds", "0.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("g.ag:1:31: node `o` has attribute `volme`, which kind osc does not read; did you mean `volume`? (it reads freq, phase, volume)"),
        "{e}"
    );
    assert!(
        e.contains("g.ag:2:1: node `lost` (noise) reaches no sink"),
        "{e}"
    );
    // info says the same; --strict makes both commands fail before doing anything.
    let o = fugue(&["info", &g]);
    assert!(
        o.status.success() && stderr(&o).contains("`volme`"),
        "{}",
        stderr(&o)
    );
    for args in [
        vec!["info", g.as_str(), "--strict"],
        vec!["render", g.as_str(), "-o", "strict.wav", "--strict"],
        vec![
            "run",
            g.as_str(),
            "--backend",
            "clocked",
            "--seconds",
            "0.1",
            "--strict",
        ],
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("(and 1 more warning); --strict"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn dash_writes_the_wav_to_standard_output() {
    let o = fugue(&[
        "render",
        &example("pluck.ag"),
        "-o",
        "-",
        "--seconds",
        "0.25",
        "--rate",
        "16000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut r =
        hound::WavReader::new(std::io::Cursor::new(o.stdout.clone())).expect("a WAV on stdout");
    let spec = r.spec();
    assert_eq!((spec.sample_rate, spec.channels), (16000, 2));
    let samples: Vec<f32> = r.samples::<f32>().map(Result::unwrap).collect();
    assert_eq!(samples.len(), 2 * 4000);
    assert!(samples.iter().any(|&x| x != 0.0));
    // The summary went to standard error (after the line saying that a render this short
    // keeps seq), and no file named `-` was made.
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    let (last, before) = lines.split_last().expect("a summary");
    assert!(last.starts_with("standard output: 4000 frames"), "{err}");
    // One core: no candidate to measure, nothing said.
    assert!(before.len() <= 1, "{err}");
    assert!(
        before
            .iter()
            .all(|l| l.starts_with("fugue: executor auto: chose seq, the run is too short")),
        "{err}"
    );
    assert!(!std::path::Path::new("-").exists());
}

#[test]
fn outputs_other_than_wav_are_refused() {
    let d = folder("warnings", "ext");
    for name in ["y.mp3", "y", "y.wav.txt"] {
        let out = d.join(name);
        let o = fugue(&[
            "render",
            &example("pluck.ag"),
            "-o",
            &out.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(
            stderr(&o).contains(
                "render writes WAV files only; name the output with .wav, or - for standard output"
            ),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists() && stdout(&o).is_empty());
    }
    let o = fugue(&[
        "render",
        &example("pluck.ag"),
        "-o",
        &d.join("UP.WAV").display().to_string(),
        "--seconds",
        "0.1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
