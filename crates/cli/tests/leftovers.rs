//! What a stopped or refused command leaves and says: no temporary file after SIGTERM, one
//! exact sentence up front instead of a late or self-contradicting one, long paths cut in
//! messages.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{example, folder, fugue, stderr};

/// The temporary files in `d`.
fn parts(d: &std::path::Path) -> usize {
    std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .count()
}

/// `fugue pool voronoi` of 100,000 frames of 64 x 64 pixels into `output` (in `d`), stopped
/// by `sig` once `parts_first` temporary files stand in `d`.
fn stopped_voronoi(
    d: &std::path::Path,
    output: &str,
    extra: &[&str],
    parts_first: usize,
    sig: i32,
) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "pool", "voronoi", "--frames", "100000", "--width", "64", "--height", "64", "-o",
            output,
        ])
        .args(extra)
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while parts(d) < parts_first && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(parts(d) >= parts_first, "no temporary file appeared");
    // SAFETY: kill sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait_with_output().unwrap()
}

#[test]
fn voronoi_stopped_by_sigterm_leaves_no_temporary_file() {
    let d = folder("leftovers", "voronoi");
    let o = stopped_voronoi(&d, "v.gif", &[], 1, libc::SIGTERM);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// PNG frames are one output: a run stopped midway leaves none of them (nor any temporary
/// file), keeps the frames an earlier run wrote, and says which were not written; a run that
/// ends writes them all.
#[test]
fn voronoi_png_frames_stopped_by_sigint_leave_none() {
    let d = folder("leftovers", "voronoi-png");
    let old = d.join("v-000001.png");
    std::fs::write(&old, b"an earlier frame").unwrap();
    let o = stopped_voronoi(&d, "v.png", &["--force"], 3, libc::SIGINT);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(
        e.contains("v-000001.png .. v-100000.png not written"),
        "{e}"
    );
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["v-000001.png"], "left behind: {left:?}");
    assert_eq!(std::fs::read(&old).unwrap(), b"an earlier frame");
    // Three frames, to the end: all three written.
    let o = fugue(&[
        "pool",
        "voronoi",
        "--frames",
        "3",
        "--width",
        "32",
        "--height",
        "32",
        "-o",
        d.join("w.png").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 1..=3 {
        assert!(d.join(format!("w-000{i}.png")).is_file());
    }
    assert_eq!(parts(&d), 0);
}

#[test]
fn profile_refuses_a_pipeline_up_front() {
    let start = Instant::now();
    let o = fugue(&["profile", &example("synth.ag"), "--pipeline", "2"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--pipeline 2") && e.contains("whole cycles"),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// A 16-bit PCM WAV file at 48 kHz: a header saying `channels` channels and `data_len`
/// bytes of samples, followed by `data` (which may be shorter than the header says).
fn pcm16(channels: u16, data_len: u32, data: &[u8]) -> Vec<u8> {
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&channels.to_le_bytes());
    wav.extend_from_slice(&48_000u32.to_le_bytes());
    wav.extend_from_slice(&96_000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.extend_from_slice(data);
    wav
}

/// `fugue render examples/echo.ag -o OUT --input INPUT`, which must fail (exit code 1): its
/// standard error.
fn echo_refuses(input: &std::path::Path, out: &std::path::Path) -> String {
    let o = fugue(&[
        "render",
        &example("echo.ag"),
        "-o",
        out.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    e
}

#[test]
fn a_wav_input_whose_header_lies_is_named_exactly() {
    let d = folder("leftovers", "lie");
    let input = d.join("lie.wav");
    std::fs::write(&input, pcm16(1, 20_000, &[0u8; 2000])).unwrap();
    let e = echo_refuses(&input, &d.join("e.wav"));
    assert!(
        e.contains("lie.wav") && e.contains("promises 10000 samples but the file ends after 1000"),
        "{e}"
    );
}

/// A header with no channels names what is wrong with it, not a format the input may have;
/// a file that ends inside its header says so.
#[test]
fn a_broken_wav_header_is_named_for_what_it_is() {
    let d = folder("leftovers", "broken-header");
    let wav = pcm16(0, 200, &[0u8; 200]);
    let out = d.join("e.wav");
    for (name, bytes, words) in [
        ("zero.wav", &wav[..], "header is not valid"),
        ("cut.wav", &wav[..30], "the file ends inside its header"),
    ] {
        let input = d.join(name);
        std::fs::write(&input, bytes).unwrap();
        let e = echo_refuses(&input, &out);
        assert!(e.contains(name) && e.contains(words), "{e}");
        assert!(!e.contains("the input must be"), "{e}");
    }
    // Not a WAV file: the reader's reason, in fugue's sentence, without the reader's own
    // "Ill-formed WAVE file" heading.
    let input = d.join("riff.wav");
    std::fs::write(&input, b"RIFF\x10\x00\x00\x00WAVX").unwrap();
    let e = echo_refuses(&input, &out);
    assert!(
        e.contains("riff.wav: it is not a WAV file (no WAVE tag found)"),
        "{e}"
    );
    assert!(!e.contains("Ill-formed"), "{e}");
}

#[test]
fn a_megabyte_path_is_cut_in_messages() {
    // As long as one argument may be (the system refuses 128 KiB).
    let long = format!("/nowhere/{}/g.ag", "p".repeat(120_000));
    let o = fugue(&["info", &long]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{}", e.len());
    assert!(e.len() < 2000, "{} bytes of message", e.len());
    assert!(
        e.contains("/nowhere/ppp") && e.contains('…') && e.contains("ppp/g.ag"),
        "{e}"
    );
}

#[test]
fn gen_layered_refuses_zero_layers_and_width() {
    let d = folder("leftovers", "layers");
    let out = d.join("l.ag");
    for flag in ["--layers", "--width"] {
        let o = fugue(&["gen", "layered", flag, "0", "-o", out.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("{flag} 0 is too small")), "{e}");
        assert!(!out.exists());
    }
}

/// A long argument in a usage error, or a long path in a host command, is cut in the message
/// as a long path is elsewhere.
#[test]
fn long_words_are_cut_in_usage_errors_and_host_replies() {
    let long = "p".repeat(100_000);
    let o = fugue(&["info", &example("rake.ag"), &long]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}", e.len());
    assert!(e.len() < 2000, "{} bytes of message", e.len());
    assert!(e.contains("unexpected argument") && e.contains('…'), "{e}");
    let d = folder("leftovers", "long-load");
    let script = d.join("s.txt");
    std::fs::write(&script, format!("load a /nowhere/{long}.ag\nquit\n")).unwrap();
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        script.to_str().unwrap(),
    ]);
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(all.len() < 2000, "{} bytes of replies", all.len());
    assert!(all.contains("/nowhere/ppp") && all.contains('…'), "{all}");
}
