//! How long a render lasts: `--tail` after an input's end, and negative lengths refused with
//! a sentence (not clap's tip about `--`).

mod common;

use common::{example, folder, fugue, stderr};

/// A mono WAV of `seconds` at 48 kHz: a burst of clicks, then silence.
fn input(path: &std::path::Path, seconds: f64) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    let n = (seconds * 48_000.0) as usize;
    for i in 0..n {
        let v: i16 = if i < 4_800 && i % 480 == 0 { 20_000 } else { 0 };
        w.write_sample(v).unwrap();
    }
    w.finalize().unwrap();
}

fn frames_and_tail_peak(path: &std::path::Path, after: usize) -> (usize, f32) {
    let mut r = hound::WavReader::open(path).unwrap();
    let channels = r.spec().channels as usize;
    let samples: Vec<f32> = r.samples::<f32>().map(Result::unwrap).collect();
    let peak = samples
        .iter()
        .skip(after * channels)
        .fold(0.0f32, |m, s| m.max(s.abs()));
    (samples.len() / channels, peak)
}

#[test]
fn tail_renders_past_the_input_so_the_echo_is_heard_out() {
    let d = folder("lengths", "tail");
    let voice = d.join("voice.wav");
    input(&voice, 0.5);
    let (voice, echo) = (voice.to_str().unwrap(), example("echo.ag"));
    let cut = d.join("cut.wav");
    let o = fugue(&[
        "render",
        &echo,
        "--input",
        voice,
        "-o",
        cut.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (frames, _) = frames_and_tail_peak(&cut, 0);
    assert_eq!(frames, 24_000, "without --tail: the input's length");
    let long = d.join("long.wav");
    let o = fugue(&[
        "render",
        &echo,
        "--input",
        voice,
        "--tail",
        "1.5",
        "-o",
        long.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (frames, peak) = frames_and_tail_peak(&long, 24_000);
    assert_eq!(frames, 96_000, "the input's 0.5 s and a tail of 1.5 s");
    assert!(
        peak > 0.01,
        "the echo rings on after the input: peak {peak}"
    );
    // --tail needs --input, and does not go with --seconds.
    for args in [
        vec!["--tail", "1"],
        vec!["--input", voice, "--tail", "1", "--seconds", "2"],
    ] {
        let mut all = vec!["render", echo.as_str(), "-o", "x.wav"];
        all.extend(args.iter().copied());
        let o = fugue(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    let o = fugue(&[
        "render", &echo, "--input", voice, "--tail", "-1", "-o", "x.wav",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--tail must be a number of seconds from 0 to 86400, not -1"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn a_negative_length_is_refused_with_a_sentence() {
    let g = example("pluck.ag");
    for args in [
        vec!["render", g.as_str(), "-o", "x.wav", "--seconds", "-1"],
        vec!["profile", g.as_str(), "--seconds", "-1"],
        vec!["run", g.as_str(), "--backend", "clocked", "--seconds", "-1"],
    ] {
        let o = fugue(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--seconds must be a number of seconds above 0"),
            "{args:?}: {err}"
        );
        assert!(err.contains("not -1"), "{args:?}: {err}");
        assert!(!err.contains("-- -1"), "{args:?}: {err}");
    }
}
