//! The WAV files fugue writes have headers that common readers accept without a warning:
//! `sox --i` on every format (32-bit float, 16 and 24-bit), Python's `wave` on 16-bit files
//! (it reads PCM only). A reader that is not installed is skipped, visibly.

mod common;

use std::process::Command;

use common::{example, folder, fugue, stderr};

/// Whether `program` runs (`program ARG` exits, whatever its status).
fn installed(program: &str, arg: &str) -> bool {
    Command::new(program).arg(arg).output().is_ok()
}

/// Renders the synth to `name` with `--bits bits` and returns its path.
fn render(dir: &std::path::Path, name: &str, bits: &str) -> String {
    let out = dir.join(name);
    let out = out.to_string_lossy().into_owned();
    let o = fugue(&[
        "render",
        &example("synth.ag"),
        "-o",
        &out,
        "--seconds",
        "0.2",
        "--bits",
        bits,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// A host recording (32-bit float) of a short offline script, and its path.
fn record(dir: &std::path::Path) -> String {
    let s = dir.join("s.txt");
    std::fs::write(
        &s,
        format!("load a {}\nwait 0.05\nquit\n", example("pluck.ag")),
    )
    .unwrap();
    let out = dir.join("rec.wav").to_string_lossy().into_owned();
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        s.to_str().unwrap(),
        "--record",
        &out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn sox_reads_every_format_without_a_warning() {
    if !installed("sox", "--version") {
        common::skip(
            "sox_reads_every_format_without_a_warning",
            "sox is not installed",
        );
        return;
    }
    let d = folder("wav_headers", "sox");
    let files = [
        render(&d, "f32.wav", "32"),
        render(&d, "i16.wav", "16"),
        render(&d, "i24.wav", "24"),
        record(&d),
    ];
    for f in &files {
        let o = Command::new("sox").args(["--i", f]).output().unwrap();
        let e = stderr(&o);
        assert!(o.status.success(), "{f}: {e}");
        assert!(e.trim().is_empty(), "{f}: sox said {e}");
        let info = common::stdout(&o);
        assert!(info.contains("Channels       : 2"), "{f}: {info}");
    }
    let o = Command::new("sox")
        .args(["--i", "-e", &files[0]])
        .output()
        .unwrap();
    assert!(
        common::stdout(&o).contains("Floating Point"),
        "{}",
        common::stdout(&o)
    );
}

#[test]
fn python_wave_reads_16_bit_files() {
    if !installed("python3", "--version") {
        common::skip("python_wave_reads_16_bit_files", "python3 is not installed");
        return;
    }
    let d = folder("wav_headers", "python");
    let f = render(&d, "i16.wav", "16");
    let o = Command::new("python3")
        .args([
            "-c",
            "import sys, wave; w = wave.open(sys.argv[1]); print(w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes())",
            &f,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(common::stdout(&o).trim(), "2 2 48000 9600");
}
