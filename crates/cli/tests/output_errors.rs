//! Standard output that cannot be written: a full device (`/dev/full`) is said in one
//! sentence with exit code 1, never a panic or a silent success; a pipe whose reader stopped
//! ends the command with exit code 141 and nothing on standard error.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};

use common::{example, stderr};

/// Runs fugue with `args`, standard output into `/dev/full`, `stdin` on standard input.
fn to_full(args: &[&str], stdin: &str) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fugue");
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait for fugue")
}

#[test]
fn a_full_standard_output_is_one_sentence_and_exit_code_1() {
    if !std::path::Path::new("/dev/full").exists() {
        common::skip("a_full_standard_output", "no /dev/full on this system");
        return;
    }
    let rake = example("rake.ag");
    let cases: Vec<Vec<&str>> = vec![
        vec!["info", &rake],
        vec!["kinds"],
        vec!["dot", &rake],
        vec!["schedule", &rake],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["calibrate", &rake],
        vec!["bench", "ring", "--json"],
        vec!["--help"],
        vec!["info", "--help"],
        vec!["host", "--backend", "offline"],
    ];
    for args in cases {
        let o = to_full(&args, "list\nquit\n");
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("cannot write to standard output") && e.contains("No space left"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

#[test]
fn a_closed_pipe_ends_with_141_and_no_message() {
    // `kinds` writes more than one pipe buffer's worth once its reader has gone.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["completions", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fugue");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait for fugue");
    use std::os::unix::process::ExitStatusExt as _;
    // Killed by SIGPIPE (a shell reports 141), or exit code 141.
    assert!(
        o.status.signal() == Some(libc_sigpipe()) || o.status.code() == Some(141),
        "{:?}: {}",
        o.status,
        stderr(&o)
    );
    assert_eq!(stderr(&o), "");
}

/// SIGPIPE's number on Linux.
fn libc_sigpipe() -> i32 {
    13
}

/// The temporary files left in `dir` (the hidden `.fugue-*` names).
fn temporaries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".fugue-") || n.starts_with("fugue-"))
        .collect()
}

/// A render into standard output or into a named pipe whose reader stops early ends with 141
/// and no message, as one ended by SIGPIPE, and leaves no temporary file behind (the render
/// is written whole to a temporary file first: in the system's temporary folder for these).
#[test]
fn a_render_whose_reader_stops_leaves_no_temporary_file() {
    let dir = common::folder("output-errors", "reader-stops");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let graph = example("synth.ag");
    let fifo = dir.join("f.wav");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    for to in ["-", fifo.to_str().unwrap()] {
        // A reader that takes 100 bytes and goes, with 4 seconds (1.5 MB) to come.
        let reader = if to == "-" {
            None
        } else {
            Some(
                std::process::Command::new("head")
                    .args(["-c", "100"])
                    .arg(&fifo)
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("head"),
            )
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["render", &graph, "--seconds", "4", "-e", "seq", "-o", to])
            .env("TMPDIR", &tmp)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run fugue");
        let mut out = child.stdout.take().unwrap();
        if to == "-" {
            let mut first = [0u8; 100];
            std::io::Read::read_exact(&mut out, &mut first).unwrap();
            assert_eq!(&first[..4], b"RIFF");
        }
        drop(out);
        let o = child.wait_with_output().expect("wait for fugue");
        if let Some(mut r) = reader {
            r.wait().unwrap();
        }
        assert_eq!(o.status.code(), Some(141), "{to}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{to}");
        assert_eq!(temporaries(&tmp), Vec::<String>::new(), "{to}");
    }
}
