//! The host and the user's files: `--record` replaces nothing without `--force`, never a file
//! the host reads, never writes a file named `-`; `--control` removes only a stale socket; a
//! recording killed with SIGKILL reads as the audio written; a recording into a named pipe
//! streams (no seek back at the end).

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{example, folder, stderr, stdout};

/// Runs fugue with `args` in the folder `dir`.
fn fugue_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run fugue")
}

/// A script that loads `graph` and plays a little.
fn script(dir: &Path, graph: &str) -> String {
    let s = dir.join("s.txt");
    std::fs::write(&s, format!("load a {graph}\nwait 0.05\nquit\n")).unwrap();
    s.to_string_lossy().into_owned()
}

/// The frames a 32-bit float stereo WAV's header says it holds.
fn declared_seconds(wav: &[u8], rate: f64) -> f64 {
    let hound = hound::WavReader::new(std::io::Cursor::new(wav)).expect("a readable WAV");
    hound.duration() as f64 / rate
}

#[test]
fn record_refuses_an_existing_file_without_force() {
    let d = folder("host_files", "existing");
    let s = script(&d, &example("pluck.ag"));
    std::fs::write(d.join("existing.wav"), "mine").unwrap();
    let o = fugue_in(
        &d,
        &[
            "host",
            "--backend",
            "offline",
            "--script",
            &s,
            "--record",
            "existing.wav",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("existing.wav already exists") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(std::fs::read(d.join("existing.wav")).unwrap(), b"mine");
    // With --force it is replaced by the recording.
    let o = fugue_in(
        &d,
        &[
            "host",
            "--backend",
            "offline",
            "--script",
            &s,
            "--record",
            "existing.wav",
            "--force",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        &std::fs::read(d.join("existing.wav")).unwrap()[..4],
        b"RIFF"
    );
}

#[test]
fn record_never_replaces_a_file_the_host_reads() {
    let d = folder("host_files", "victim");
    std::fs::copy(example("pluck.ag"), d.join("victim.ag")).unwrap();
    let before = std::fs::read(d.join("victim.ag")).unwrap();
    let s = script(&d, "victim.ag");
    for record in ["victim.ag", s.as_str()] {
        let o = fugue_in(
            &d,
            &[
                "host",
                "--backend",
                "offline",
                "--script",
                &s,
                "--record",
                record,
                "--force",
            ],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("is the input file"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert_eq!(std::fs::read(d.join("victim.ag")).unwrap(), before);
    // A `load` of the recording, typed once the host runs, is refused with a sentence.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "offline", "--record", "rec.wav"])
        .current_dir(&d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"load a rec.wav\nquit\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = common::stdout(&o);
    assert!(
        out.contains("rec.wav is the file the host records to"),
        "{out}{}",
        stderr(&o)
    );
    // A graph file that standard input will load later cannot be known at the start: a
    // recording must be named .wav, so that a graph is never taken for it, even with --force.
    let o = fugue_in(
        &d,
        &[
            "host",
            "--backend",
            "offline",
            "--record",
            "victim.ag",
            "--force",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--record victim.ag: the recording is a WAV file; name it with .wav"),
        "{e}"
    );
    assert_eq!(std::fs::read(d.join("victim.ag")).unwrap(), before);
    // Standard input, read as commands without a script, is a file the host reads too: the
    // recording cannot replace it, even with --force.
    let commands = d.join("commands.wav");
    std::fs::write(&commands, "load a victim.ag\nwait 0.05\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "offline",
            "--record",
            "commands.wav",
            "--force",
        ])
        .current_dir(&d)
        .stdin(std::fs::File::open(&commands).unwrap())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("commands.wav is the input file /dev/stdin"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(
        std::fs::read_to_string(&commands).unwrap(),
        "load a victim.ag\nwait 0.05\n"
    );
    // The recording and the control socket at one path (new, or spelled two ways): refused
    // before anything is made.
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for (record, control) in [
        ("same.wav", "same.wav"),
        ("same.wav", "./same.wav"),
        ("sub/../same.wav", "same.wav"),
    ] {
        let o = fugue_in(
            &d,
            &[
                "host",
                "--backend",
                "offline",
                "--script",
                &s,
                "--record",
                record,
                "--control",
                control,
            ],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains(&format!("--record and --control both name {record}")),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(!d.join("same.wav").exists());
    }
}

/// The control socket serves its clients while the script plays (it is made before the
/// script's first line): a `list` sent during the script's `wait` is answered at once, and
/// the `quit` sent after it ends the host, its recording closed whole.
#[test]
fn the_socket_is_served_while_the_script_plays() {
    let d = folder("host_files", "socket-during-script");
    std::fs::copy(example("pluck.ag"), d.join("p.ag")).unwrap();
    std::fs::write(d.join("s.txt"), "load a p.ag\nwait 2\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "clocked",
            "--script",
            "s.txt",
            "--record",
            "r.wav",
            "--control",
            "c.sock",
        ])
        .current_dir(&d)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let asked = std::time::Instant::now();
    let o = fugue_in(&d, &["ctl", "c.sock", "list"]);
    let took = asked.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("1 loaded: a (id 1"),
        "{}",
        stdout(&o)
    );
    // Answered during the script's wait, not after it.
    assert!(took < std::time::Duration::from_millis(1200), "{took:?}");
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let o = fugue_in(&d, &["ctl", "c.sock", "quit"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("host: "), "{e}");
    let wav = std::fs::read(d.join("r.wav")).unwrap();
    // The script's two seconds played, less any time the clocked backend skipped when its
    // thread was kept off its core (it restarts its clock instead of catching up).
    assert!(declared_seconds(&wav, 48_000.0) > 1.0);
    let mut reader = hound::WavReader::new(std::io::Cursor::new(&wav)).unwrap();
    let declared = reader.duration() as usize * reader.spec().channels as usize;
    let read = reader.samples::<f32>().filter(|s| s.is_ok()).count();
    assert_eq!(read, declared);
    assert!(!d.join("c.sock").exists());
}

#[test]
fn record_to_dash_is_refused_and_writes_no_file() {
    let d = folder("host_files", "dash");
    let s = script(&d, &example("pluck.ag"));
    let o = fugue_in(
        &d,
        &[
            "host",
            "--backend",
            "offline",
            "--script",
            &s,
            "--record",
            "-",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--record -") && e.contains("standard output"),
        "{e}"
    );
    assert!(!d.join("-").exists());
}

#[test]
fn control_never_removes_a_file_that_is_not_a_socket() {
    let d = folder("host_files", "control");
    std::fs::write(d.join("notes.txt"), "my notes").unwrap();
    let o = fugue_in(
        &d,
        &["host", "--backend", "offline", "--control", "notes.txt"],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("notes.txt exists and is not a socket"), "{e}");
    assert_eq!(std::fs::read(d.join("notes.txt")).unwrap(), b"my notes");
    // Said before anything starts: the script does not play, the recording the --force
    // would replace is kept, and none is made.
    std::fs::write(d.join("take.wav"), "my take").unwrap();
    std::fs::write(
        d.join("s.txt"),
        format!("load a {}\nwait 0.1\n", example("pluck.ag")),
    )
    .unwrap();
    for record in ["take.wav", "new.wav"] {
        let o = fugue_in(
            &d,
            &[
                "host",
                "--backend",
                "offline",
                "--script",
                "s.txt",
                "--control",
                "notes.txt",
                "--record",
                record,
                "--force",
            ],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("notes.txt exists and is not a socket"), "{e}");
        assert!(!stdout(&o).contains("loaded"), "{}", stdout(&o));
    }
    assert_eq!(std::fs::read(d.join("take.wav")).unwrap(), b"my take");
    assert!(!d.join("new.wav").exists());
    // A folder that does not exist, and a path too long for a socket's address.
    let long = format!("{}.sock", "s".repeat(120));
    for (path, said) in [
        ("no/such/fugue.sock", "the folder no/such does not exist"),
        (long.as_str(), "a socket's path holds at most 107"),
    ] {
        let o = fugue_in(&d, &["host", "--backend", "offline", "--control", path]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(said), "{e}");
    }
}

#[test]
fn a_recording_killed_with_sigkill_reads_as_the_audio_written() {
    let d = folder("host_files", "sigkill");
    let s = d.join("long.txt");
    std::fs::write(
        &s,
        format!("load a {}\nwait 60\nquit\n", example("pluck.ag")),
    )
    .unwrap();
    let wav = d.join("k.wav");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "clocked", "--threads", "1", "--script"])
        .arg(&s)
        .arg("--record")
        .arg(&wav)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The load's reply: the host plays and records from here on.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("loaded a"), "{line}");
    // Killed once 2.5 s of audio stand in the file (a loaded machine may record slower
    // than real time).
    let want = 58 + (2.5 * 8.0 * 48_000.0) as u64;
    let start = std::time::Instant::now();
    while std::fs::metadata(&wav).map_or(0, |m| m.len()) < want
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let bytes = std::fs::read(&wav).unwrap();
    let declared = declared_seconds(&bytes, 48_000.0);
    let on_disk = (bytes.len() - 58) as f64 / (8.0 * 48_000.0);
    assert!(on_disk >= 2.5, "only {on_disk} s written");
    assert!(declared >= 2.2, "the header says {declared} s");
    // The header is at most a quarter of a second behind what was written.
    assert!(
        on_disk - declared <= 0.3,
        "{on_disk} s written, {declared} s said"
    );
}

#[test]
fn a_recording_into_a_named_pipe_streams() {
    let d = folder("host_files", "fifo");
    let fifo = d.join("rec.fifo");
    let status = Command::new("mkfifo").arg(&fifo).status();
    if !status.is_ok_and(|s| s.success()) {
        common::skip("a_recording_into_a_named_pipe_streams", "mkfifo failed");
        return;
    }
    let s = script(&d, &example("pluck.ag"));
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "offline", "--script", &s, "--record"])
        .arg(&fifo)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("Illegal seek"), "{e}");
    let bytes = reader.join().unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    assert!(bytes.len() > 58 + 8 * 256, "{} bytes", bytes.len());
}

/// A recording that cannot be written (here `/dev/full`) is said as soon as the host sees it,
/// in one line, while the host plays on and answers the next commands; the host then ends
/// with the error (exit status 1). In real time (`clocked`): offline, the cycles of the
/// script's waits can all run before the writer thread first tries to write, and the failure
/// is then first seen when the host stops.
#[test]
fn a_recording_that_cannot_be_written_is_said_while_the_host_plays_on() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let d = folder("host_files", "full");
    let s = d.join("s.txt");
    std::fs::write(
        &s,
        format!(
            "load a {}\nwait 1\nstats\nwait 0.5\nlist\nquit\n",
            example("pluck.ag")
        ),
    )
    .unwrap();
    let o = fugue_in(
        &d,
        &[
            "host",
            "--backend",
            "clocked",
            "--script",
            s.to_str().unwrap(),
            "--record",
            "/dev/full",
        ],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let said: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("cannot write the recording /dev/full"))
        .collect();
    assert_eq!(said.len(), 1, "said once: {e}");
    assert!(said[0].contains("playback goes on"), "{e}");
    // The commands after it were answered: the host went on to `quit`.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("waited 0.5 s") && out.contains("bye"), "{out}");
    // The summary of what the host did is said all the same, with where the recording
    // stopped.
    assert!(
        e.contains("host: ")
            && e.contains(
                "recorded 0 frames to /dev/full, where the recording stopped: the disk is full"
            ),
        "{e}"
    );
}

/// A recording into a named pipe whose reader goes away is a write error said while the
/// host plays on (SIGPIPE ended the host without a word, exit code 141).
#[test]
fn a_recording_pipe_whose_reader_leaves_is_said_while_the_host_plays_on() {
    let d = folder("host_files", "fifo_reader");
    let fifo = d.join("rec.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let s = d.join("s.txt");
    std::fs::write(
        &s,
        format!("load a {}\nwait 1.5\nlist\nquit\n", example("pluck.ag")),
    )
    .unwrap();
    let host = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(&d)
        .args(["host", "--backend", "clocked", "--script"])
        .arg(&s)
        .arg("--record")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader reads a little of the recording, then goes away while the host plays.
    {
        use std::io::Read as _;
        let mut reader = std::fs::File::open(&fifo).unwrap();
        let mut head = [0u8; 4096];
        reader.read_exact(&mut head).unwrap();
        assert_eq!(&head[..4], b"RIFF");
    }
    let o = host.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("cannot write the recording ")
            && e.contains("rec.fifo (Broken pipe")
            && e.contains("playback goes on"),
        "{e}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("waited 1.5 s") && out.contains("bye"), "{out}");
    assert!(e.contains("where the recording stopped"), "{e}");
}
