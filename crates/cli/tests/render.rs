//! `fugue render` through the binary: determinism, bad input, safe output.

mod common;

use common::{example, fugue, stderr};
use std::path::Path;
use std::process::{Command, Output};

/// A fresh folder for one test.
fn folder(name: &str) -> std::path::PathBuf {
    common::folder("render-cli", name)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// The files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Two renders of the same graph give byte-identical files.
#[test]
fn rendering_twice_gives_identical_files() {
    let d = folder("twice");
    for ex in ["pluck.ag", "synth.ag", "rake.ag"] {
        let (a, b) = (d.join(format!("a-{ex}.wav")), d.join(format!("b-{ex}.wav")));
        for out in [&a, &b] {
            let o = fugue(&[
                "render",
                &example(ex),
                "-o",
                out.to_str().unwrap(),
                "--seconds",
                "1",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            let line = String::from_utf8_lossy(&o.stdout);
            assert!(
                line.contains("48000 frames, 2 channels") && line.contains("x real time"),
                "{line}"
            );
        }
        let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        assert!(x.len() > 48_000 * 2 * 4);
        assert!(x == y, "{ex}: the two renders differ");
    }
}

/// Work stealing renders the same bytes as seq whatever the least work worth a steal.
#[test]
fn work_stealing_renders_seq_bytes_at_any_steal_threshold() {
    let d = folder("steal-threshold");
    let render = |name: &str, extra: &[&str]| {
        let out = d.join(name);
        let mut a = vec![
            "render",
            "--force",
            "--seconds",
            "0.5",
            "--buffer",
            "64",
            "-o",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        let g = example("rake.ag");
        a.insert(1, &g);
        let o = fugue(&a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        std::fs::read(&out).unwrap()
    };
    let seq = render("seq.wav", &[]);
    for min in ["0", "1", "50"] {
        let ws = render(
            &format!("ws-{min}.wav"),
            &["--executor", "ws", "--threads", "3", "--min-steal-us", min],
        );
        assert!(ws == seq, "--min-steal-us {min}: differs from seq");
    }
}

fn assert_clean_failure(o: &Output, dir: &Path, before: &[String], needle: &str) {
    assert!(!o.status.success());
    let err = stderr(o);
    assert!(err.contains(needle), "expected `{needle}` in: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    assert_eq!(listing(dir), before, "no output or temporary file is left");
}

#[test]
fn bad_graphs_fail_with_one_clear_sentence_and_no_file() {
    let d = folder("bad");
    let cases = [
        ("unknown.ag", r#"a = { kind: "theremin", }; s = { kind: "sink", }; a.1 -> s.1;"#, "unknown kind `theremin`; known kinds: biquad, delay, faust, gain, karplus, load, lv2, mix, mod, noise, osc, resampler, reverb, sink, source"),
        ("missing.ag", r#"a = { kind: "osc", }; s = { kind: "sink", }; a.1 -> s.1;"#, "node `a` (osc) needs the attribute `freq`"),
        ("nan.ag", r#"a = { kind: "osc", freq: "high", }; s = { kind: "sink", }; a.1 -> s.1;"#, "attribute `freq` = `high` is not a number"),
        ("lonely.ag", r#"a = { kind: "osc", freq: 1, }; s = { kind: "sink", in: 1, };"#, "node `s` (sink) has no input"),
        ("nosink.ag", r#"a = { kind: "osc", freq: 1, };"#, "has no sink node"),
        ("rates.ag", r#"a = { kind: "osc", freq: 1, }; r = { kind: "resampler", ratio: 2, }; m = { kind: "mix", }; s = { kind: "sink", }; a.1 -> r.1 -> m.1; a.1 -> m.2; m.1 -> s.1;"#, "node `m` receives inputs at different rates"),
        ("feedback-rate.ag", r#"a = { kind: "osc", freq: 1, }; up = { kind: "resampler", ratio: 2, }; m = { kind: "mix", }; s = { kind: "sink", }; a.1 -> up.1; a.1 -> m.1; up.1 ~> m.2; m.1 -> s.1;"#, "feedback-rate.ag:1:32: feedback edge `up.1 ~> m.2` leaves node `up` at 96000 Hz, but a feedback edge carries its block at the graph's rate, 48000 Hz"),
    ];
    for (name, text, needle) in cases {
        let g = write(&d, name, text);
        let before = listing(&d);
        let out = d.join("out.wav");
        let o = fugue(&["render", &g, "-o", out.to_str().unwrap(), "--seconds", "1"]);
        assert_clean_failure(&o, &d, &before, needle);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(
            stderr(&o).contains(name),
            "the message names the file: {}",
            stderr(&o)
        );
    }
}

#[test]
fn an_odd_buffer_under_a_resampler_says_which_buffers_work() {
    let d = folder("odd");
    let g = write(
        &d,
        "half.ag",
        r#"a = { kind: "osc", freq: 1, }; r = { kind: "resampler", ratio: 0.5, }; s = { kind: "sink", }; a.1 -> r.1 -> s.1;"#,
    );
    let before = listing(&d);
    let o = fugue(&[
        "render",
        &g,
        "-o",
        d.join("o.wav").to_str().unwrap(),
        "--buffer",
        "511",
    ]);
    assert_clean_failure(
        &o,
        &d,
        &before,
        "choose a buffer size that is a multiple of 2",
    );
}

#[test]
fn an_existing_file_is_kept_unless_forced() {
    let d = folder("exists");
    let out = d.join("out.wav");
    std::fs::write(&out, b"precious").unwrap();
    let before = listing(&d);
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.1",
    ]);
    assert_clean_failure(&o, &d, &before, "already exists; pass --force");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.1",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&out).unwrap()[..4], b"RIFF");
    assert_eq!(listing(&d), before);
}

#[test]
fn an_unwritable_output_fails_cleanly() {
    let d = folder("unwritable");
    let before = listing(&d);
    let missing = d.join("no-such-folder").join("out.wav");
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        missing.to_str().unwrap(),
        "--seconds",
        "0.1",
    ]);
    assert_clean_failure(&o, &d, &before, "does not exist");
    // A path whose "folder" is a file.
    let file = d.join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let before = listing(&d);
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        file.join("out.wav").to_str().unwrap(),
        "--seconds",
        "0.1",
    ]);
    assert!(!o.status.success());
    assert!(!stderr(&o).contains("panicked"));
    assert_eq!(listing(&d), before);
    // A folder as the output.
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        d.to_str().unwrap(),
        "--force",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is a directory"), "{}", stderr(&o));
}

#[test]
fn bits_placeholder_and_input() {
    let d = folder("options");
    let loud = write(
        &d,
        "loud.ag",
        r#"a = { kind: "osc", freq: 1000, volume: 1.5, }; x = { kind: "theremin", }; s = { kind: "sink", }; a.1 -> s.1; x.1 -> s.2;"#,
    );
    let out = d.join("loud.wav");
    let o = fugue(&[
        "render",
        &loud,
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--bits",
        "16",
        "--placeholder",
        "--rate",
        "44100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Named at its place in the file, as the other warnings of a node are.
    assert!(
        stderr(&o).contains("loud.ag:1:48: node `x` has an unknown kind `theremin`"),
        "{}",
        stderr(&o)
    );
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.contains("22050 frames, 2 channels, 44100 Hz 16-bit")
            && line.contains("samples clipped"),
        "{line}"
    );
    let r = hound::WavReader::open(&out).unwrap();
    assert_eq!(
        (
            r.spec().bits_per_sample,
            r.spec().sample_rate,
            r.spec().channels
        ),
        (16, 44_100, 2)
    );

    let o = fugue(&[
        "render",
        &loud,
        "-o",
        d.join("x.wav").to_str().unwrap(),
        "--bits",
        "8",
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad flag value is a usage error"
    );

    // --input feeds the sources, and its length is the default length.
    let input = d.join("in.wav");
    fugue_testkit::wav::write_i16(&input, 1, 4800, |k| ((k % 100) * 100) as i16);
    let thru = write(
        &d,
        "thru.ag",
        r#"i = { kind: "source", out: 1, }; g = { kind: "gain", gain: 0.5, }; s = { kind: "sink", }; i.1 -> g.1 -> s.1;"#,
    );
    let out = d.join("thru.wav");
    let o = fugue(&[
        "render",
        &thru,
        "-o",
        out.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got: Vec<f32> = hound::WavReader::open(&out)
        .unwrap()
        .samples::<f32>()
        .map(|s| s.unwrap())
        .collect();
    assert_eq!(got.len(), 4800);
    for (k, &y) in got.iter().enumerate() {
        assert_eq!(y, ((k % 100) * 100) as f32 / 32768.0 * 0.5);
    }
    // An input at another rate is refused with the fix.
    let o = fugue(&[
        "render",
        &thru,
        "-o",
        d.join("r.wav").to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--rate",
        "44100",
    ]);
    assert!(stderr(&o).contains("pass --rate 48000"), "{}", stderr(&o));
}

/// Ctrl-C stops the render and removes its temporary file.
#[cfg(unix)]
#[test]
fn ctrl_c_leaves_no_file() {
    let d = folder("ctrl-c");
    let out = d.join("long.wav");
    let child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "render",
            &example("rake.ag"),
            "-o",
            out.to_str().unwrap(),
            // Long (about 3.8 GB of samples, under what a WAV file can hold).
            "--seconds",
            "10000",
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the temporary file exists: the render is under way.
    let start = std::time::Instant::now();
    while !listing(&d).iter().any(|n| n.ends_with(".part")) {
        assert!(start.elapsed().as_secs() < 30, "the render did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
}

/// A render whose length comes from an input that holds no audio is refused in a sentence
/// (it wrote an empty file and said nothing); with `--tail` or `--seconds` it renders.
#[test]
fn an_empty_input_is_refused_as_the_length_of_a_render() {
    let d = folder("empty-input");
    let g = write(
        &d,
        "src.ag",
        "i = { kind: \"source\", };\ns = { kind: \"sink\", };\ni.1 -> s.1;\n",
    );
    let input = d.join("empty.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    hound::WavWriter::create(&input, spec)
        .unwrap()
        .finalize()
        .unwrap();
    let out = d.join("out.wav");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "render".to_string(),
            g.clone(),
            "--input".into(),
            input.display().to_string(),
            "-o".into(),
            out.display().to_string(),
            "--force".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fugue(&a)
    };
    let o = run(args(&[]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("empty.wav holds no audio (0 frames)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // A tail of less than a sample leaves it as empty: refused too, naming both.
    for tail in ["0", "0.00001"] {
        let o = run(args(&["--tail", tail]));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "empty.wav and --tail {tail} make less than one sample at 48000 Hz, so the render would be empty"
            )),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
    let o = run(args(&["--tail", "0.1"]));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A graph with more channels than a WAV header can describe (a frame's bytes are a 16-bit
/// field) is refused before rendering, with the most the format holds; 16-bit samples, half
/// the bytes, take the same channels.
#[test]
fn more_channels_than_a_wav_header_holds_are_refused() {
    let d = folder("wide");
    let g = write(
        &d,
        "wide.ag",
        r#"o = { kind: "osc", freq: 1000, }; out = { kind: "sink", in: 20000, }; o.1 -> out.1;"#,
    );
    let before = listing(&d);
    let out = d.join("wide.wav");
    let args = [
        "render",
        &g,
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.001",
        "--buffer",
        "16",
    ];
    let o = fugue(&args);
    assert_clean_failure(
        &o,
        &d,
        &before,
        "20000 channels are too many for a WAV file of 32-bit samples at 48000 Hz, which holds at most 16383",
    );
    assert_eq!(o.status.code(), Some(1));
    let o = fugue(&[&args[..], &["--bits", "16"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let h = std::fs::read(&out).unwrap();
    let align = u16::from_le_bytes([h[32], h[33]]);
    assert_eq!(align, 40_000, "a frame's bytes in the header");
}

/// A string's pitch bound follows the rate at its node; at a rate where no pitch fits, the
/// message says so instead of naming an empty range ("between 20 and 0.5 Hz").
#[test]
fn a_string_at_a_rate_too_low_for_any_pitch_says_so() {
    let d = folder("karplus-rate");
    let g = write(
        &d,
        "string.ag",
        r#"k = { kind: "karplus", freq: 220, }; s = { kind: "sink", }; k.1 -> s.1;"#,
    );
    let out = d.join("out.wav");
    let render = |rate: &str| {
        fugue(&[
            "render",
            &g,
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "2",
            "--rate",
            rate,
            "--force",
        ])
    };
    let o = render("1");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot be played at 1 Hz")
            && stderr(&o).contains("must be above 40 Hz")
            && !stderr(&o).contains("between 20 and 0.5"),
        "{}",
        stderr(&o)
    );
    let o = render("400");
    assert!(
        stderr(&o).contains("must be between 20 and 200 Hz (half the rate at this node)"),
        "{}",
        stderr(&o)
    );
}

/// An input WAV whose format chunk comes after its samples (valid RIFF, which the reader
/// cannot follow) is refused with that said, not as a header that both lacks and names a
/// format.
#[test]
fn an_input_with_its_format_after_its_samples_says_so() {
    let d = folder("fmt-after-data");
    let g = write(
        &d,
        "src.ag",
        "i = { kind: \"source\", };\ns = { kind: \"sink\", };\ni.1 -> s.1;\n",
    );
    let samples: Vec<u8> = (0..8i16).flat_map(|s| s.to_le_bytes()).collect();
    let mut fmt = Vec::new();
    for v in [1u16, 1] {
        fmt.extend(v.to_le_bytes());
    }
    fmt.extend(48_000u32.to_le_bytes());
    fmt.extend(96_000u32.to_le_bytes());
    fmt.extend(2u16.to_le_bytes());
    fmt.extend(16u16.to_le_bytes());
    let mut body = b"WAVEdata".to_vec();
    body.extend((samples.len() as u32).to_le_bytes());
    body.extend(&samples);
    body.extend(b"fmt ");
    body.extend((fmt.len() as u32).to_le_bytes());
    body.extend(&fmt);
    let mut file = b"RIFF".to_vec();
    file.extend((body.len() as u32).to_le_bytes());
    file.extend(body);
    let input = d.join("late-fmt.wav");
    std::fs::write(&input, file).unwrap();
    let out = d.join("out.wav");
    let o = fugue(&[
        "render",
        &g,
        "--input",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "late-fmt.wav: its format chunk (of 16-bit integer samples) comes after its samples"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("though it names"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// `-o /dev/stdout` (a path that is standard output) writes what `-o -` writes: the WAV
/// alone, the summary on standard error.
#[test]
fn a_path_that_is_standard_output_gets_the_wav_alone() {
    let pluck = example("pluck.ag");
    let run = |to: &str| {
        let o = fugue(&["render", &pluck, "-o", to, "--seconds", "0.05", "-e", "seq"]);
        assert!(o.status.success(), "{to}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("0.05 s of audio"),
            "{to}: {}",
            stderr(&o)
        );
        o.stdout
    };
    let dash = run("-");
    assert!(dash.starts_with(b"RIFF"));
    assert_eq!(run("/dev/stdout"), dash);
}
