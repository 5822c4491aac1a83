//! What `fugue host` reads its commands from, and `fugue ctl`'s own checks: a line the shell
//! refuses (not UTF-8, too long) counts for `--strict`; standard input that cannot be read
//! fails the host; a byte-order mark before the first command is skipped; a JSON error names
//! its line; `fugue ctl` reads a one-argument `load` as the host would, refuses a blank
//! command and names the socket that gave no reply; `--control` in a folder where no socket
//! can be made is refused before anything plays; a `wait` of standard input, with a clock,
//! leaves the control socket served; a line a socket client sent that the socket refuses
//! counts for `--strict`.

mod common;

use std::io::Write;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{example, folder, fugue, stderr, stdout};
use fugue_testkit::host::Running;

/// `fugue host ARGS` given `input` on its standard input.
fn host_with_input(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .arg("host")
        .args(args)
        .env_remove(common::FAULT_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fugue");
    // The host may stop (strict) before it has read everything: a broken pipe is no failure.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// The replies of a `--json` run, one object per line.
fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A line of standard input that is not UTF-8, or is over 64 KiB, is refused by the shell
/// before it reaches the host: it fails as an unknown command does, so `--strict` stops there
/// (exit status 1, the `wait` after it not run); without `--strict` the host goes on.
#[test]
fn strict_stops_at_a_line_the_shell_refuses() {
    let pluck = example("pluck.ag");
    let mut not_utf8 = format!("load a {pluck}\n").into_bytes();
    not_utf8.extend_from_slice(b"\xff\xfe bad\nwait 0.01\nquit\n");
    let mut long = format!("load a {pluck}\n").into_bytes();
    long.extend(std::iter::repeat_n(b'x', 70_000));
    long.extend_from_slice(b"\nwait 0.01\nquit\n");
    for (input, said) in [
        (
            &not_utf8,
            "error: line 2 of standard input: the line is not valid UTF-8",
        ),
        (
            &long,
            "error: line 2 of standard input: the line is longer than 65536 bytes",
        ),
    ] {
        let o = host_with_input(&["--backend", "offline", "--strict"], input);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{out}{err}");
        assert!(out.contains(said), "{out}");
        assert!(!out.contains("waited"), "the wait after it ran: {out}");
        assert!(err.contains("--strict stops there"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // Without --strict: said, the host plays on, and the run fails as it ends.
        let o = host_with_input(&["--backend", "offline"], input);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stdout(&o).contains(said) && stdout(&o).contains("waited"));
        assert!(
            stderr(&o).contains("the command at line 2 of standard input failed"),
            "{}",
            stderr(&o)
        );
    }
    // As an unknown command at the same place does.
    let unknown = format!("load a {pluck}\nfrob\nwait 0.01\nquit\n");
    let o = host_with_input(&["--backend", "offline", "--strict"], unknown.as_bytes());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("waited"), "{}", stdout(&o));
}

/// Standard input that cannot be read (a folder) is not taken for its end: the host stops,
/// says why in one sentence naming standard input, and fails (exit status 1), with or
/// without `--strict`.
#[test]
fn standard_input_that_cannot_be_read_fails_the_host() {
    let dir = folder("host-input", "stdin-folder");
    for strict in [false, true] {
        let mut args = vec!["host", "--backend", "offline"];
        if strict {
            args.push("--strict");
        }
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(&args)
            .env_remove(common::FAULT_VAR)
            .stdin(Stdio::from(std::fs::File::open(&dir).unwrap()))
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "strict {strict}: {err}");
        assert!(
            err.contains("cannot read line 1 of standard input: Is a directory"),
            "strict {strict}: {err}"
        );
        // The summary is said too: the host stopped in order.
        assert!(err.contains("host: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A byte-order mark at the start of a script or of standard input (some editors write one)
/// is skipped: the first command runs.
#[test]
fn a_byte_order_mark_before_the_first_command_is_skipped() {
    let dir = folder("host-input", "bom");
    let session = format!("\u{feff}load a {}\nwait 0.01\nquit\n", example("pluck.ag"));
    let script = dir.join("s.txt");
    std::fs::write(&script, &session).unwrap();
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--strict",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("loaded a"), "{}", stdout(&o));
    let o = host_with_input(&["--backend", "offline", "--strict"], session.as_bytes());
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("loaded a"), "{}", stdout(&o));
}

/// With `--json`, a failure of a script's or of standard input's command names its place, as
/// the text does: `line` and `source` beside the reply's own fields (a failed `load` keeps
/// its `file`).
#[test]
fn a_json_error_names_its_line() {
    let dir = folder("host-input", "json-place");
    let session = "list\nfrob\nload a /nonexistent/x.ag\nquit\n";
    let script = dir.join("s1.txt");
    std::fs::write(&script, session).unwrap();
    let path = script.to_str().unwrap();
    let o = fugue(&["host", "--backend", "offline", "--json", "--script", path]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 commands of the script"),
        "{}",
        stderr(&o)
    );
    let from_script = json_lines(&stdout(&o));
    let o = host_with_input(&["--backend", "offline", "--json"], session.as_bytes());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 commands of standard input failed, the first at line 2"),
        "{}",
        stderr(&o)
    );
    let from_input = json_lines(&stdout(&o));
    for (lines, source) in [(from_script, path), (from_input, "standard input")] {
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[0]["ok"], true);
        assert!(lines[0].get("line").is_none(), "{}", lines[0]);
        assert_eq!(lines[1]["ok"], false);
        assert_eq!(lines[1]["line"], 2, "{}", lines[1]);
        assert_eq!(lines[1]["source"], source, "{}", lines[1]);
        assert!(lines[1]["error"].as_str().unwrap().contains("frob"));
        assert_eq!(lines[2]["line"], 3, "{}", lines[2]);
        assert_eq!(lines[2]["source"], source, "{}", lines[2]);
        assert_eq!(lines[2]["file"], "/nonexistent/x.ag", "{}", lines[2]);
        assert_eq!(lines[2]["name"], "a", "{}", lines[2]);
    }
    // A line the shell refuses is placed too.
    let o = host_with_input(&["--backend", "offline", "--json"], b"list\n\xff\nquit\n");
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines[1]["line"], 2, "{}", lines[1]);
    assert_eq!(lines[1]["source"], "standard input", "{}", lines[1]);
}

/// A host on a control socket in `dir`, offline, fed nothing on standard input.
fn start(dir: &Path) -> Running {
    let socket = dir.join("ctl.sock");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fugue"));
    cmd.args([
        "host",
        "--backend",
        "offline",
        "--threads",
        "1",
        "--control",
    ])
    .arg(&socket)
    .current_dir(dir)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    Running::start(cmd, &socket)
}

/// `fugue ctl SOCKET 'load NAME FILE'` (the command as one argument) reads a relative FILE
/// from where `fugue ctl` runs, as the words given apart do, not from the host's folder.
#[test]
fn ctl_load_as_one_argument_reads_a_relative_file_from_where_ctl_runs() {
    let dir = folder("host-input", "ctl-one-argument");
    let mut h = start(&dir);
    let here = dir.join("elsewhere");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::copy(example("pluck.ag"), here.join("tone.ag")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(&here)
        .arg("ctl")
        .arg(&h.socket)
        .arg("load t tone.ag")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("loaded t"), "{}", stdout(&o));
    let o = fugue(&["ctl", h.socket.to_str().unwrap(), "quit"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let start = Instant::now();
    while h.child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the host did not quit"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command of blanks only is refused by `fugue ctl` before it connects, as a comment is
/// (not sent as a command named ``); a listener that closes without a reply is named.
#[test]
fn ctl_refuses_a_blank_command_and_names_a_socket_that_gave_no_reply() {
    let dir = folder("host-input", "ctl-blank");
    let nowhere = dir.join("none.sock");
    for words in [&[""][..], &["  "], &["", ""]] {
        let mut args = vec!["ctl", nowhere.to_str().unwrap()];
        args.extend_from_slice(words);
        let o = fugue(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{words:?}: {e}");
        assert!(
            e.contains("no command to send") && e.lines().count() == 1,
            "{words:?}: {e}"
        );
    }
    let socket = dir.join("closing.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    // Every connection read to its end and closed, with no reply.
    std::thread::spawn(move || {
        for mut c in listener.incoming().flatten() {
            let _ = std::io::Read::read_to_end(&mut c, &mut Vec::new());
        }
    });
    let o = fugue(&["ctl", socket.to_str().unwrap(), "stats"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "the host at {} closed the connection without a reply",
            socket.display()
        )) && e.lines().count() == 1,
        "{e}"
    );
}

/// `--control` in a folder where no socket can be made is refused before the script plays
/// and the recording is made: a "folder" that is a regular file and, as an unprivileged user
/// (root may write anywhere; run through `setpriv` when the tests run as root), a folder the
/// user may not write.
#[test]
fn control_in_a_folder_where_no_socket_can_be_made_is_refused_at_once() {
    let dir = folder("host-input", "control-folder");
    let script = dir.join("s.txt");
    std::fs::write(
        &script,
        format!("load a {}\nwait 0.1\n", example("pluck.ag")),
    )
    .unwrap();
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let wav = dir.join("out.wav");
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        script.to_str().unwrap(),
        "--record",
        wav.to_str().unwrap(),
        "--control",
        file.join("x.sock").to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("is not a folder") && e.lines().count() == 1,
        "{e}"
    );
    assert!(!wav.exists(), "the recording was made");
    assert!(stdout(&o).is_empty(), "the script ran: {}", stdout(&o));

    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        common::skip(
            "control_in_a_folder_where_no_socket_can_be_made_is_refused_at_once (unwritable folder)",
            "not root, or no setpriv to become another user",
        );
        return;
    }
    use std::os::unix::fs::PermissionsExt as _;
    let (shut, open) = (dir.join("shut"), dir.join("open"));
    for (d, mode) in [(&shut, 0o555), (&open, 0o777)] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let wav = open.join("out.wav");
    let o = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "offline", "--script"])
        .arg(&script)
        .arg("--record")
        .arg(&wav)
        .arg("--control")
        .arg(shut.join("x.sock"))
        .env_remove(common::FAULT_VAR)
        .output()
        .unwrap();
    let e = stderr(&o);
    if e.contains("setpriv:") {
        common::skip(
            "control_in_a_folder_where_no_socket_can_be_made_is_refused_at_once (unwritable folder)",
            &format!("setpriv cannot change the user here: {e}"),
        );
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "no file can be made in the folder {}: Permission denied",
            shut.display()
        )) && e.lines().count() == 1,
        "{e}"
    );
    assert!(!wav.exists(), "the recording was made");
}

/// With a clock, a `wait` read from standard input is waited in the shell's own thread, as a
/// socket client's is: the control socket's clients are answered meanwhile (not after the
/// wait), and the `wait` still replies with the time it waited and the cycle reached.
#[test]
fn a_wait_of_standard_input_leaves_the_control_socket_served() {
    let dir = folder("host-input", "shell-wait-aside");
    let socket = dir.join("ctl.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "clocked",
            "--threads",
            "1",
            "--control",
        ])
        .arg(&socket)
        .env_remove(common::FAULT_VAR)
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fugue");
    let mut input = child.stdin.take().unwrap();
    fugue_testkit::host::wait_for_socket(&socket);
    writeln!(input, "wait 4").unwrap();
    input.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    let o = fugue(&["ctl", socket.to_str().unwrap(), "list"]);
    let took = asked.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        took < Duration::from_millis(2500),
        "the socket's `list` waited {took:?} for the shell's `wait`"
    );
    writeln!(input, "quit").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("waited 4 s; at cycle "), "{text}");
    let cycle: u64 = first.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(cycle > 0, "{text}");
}

/// A line that the control socket refuses itself (not UTF-8 here) fails as a command that
/// failed does: its client gets the reason, and a `--strict` host stops there, exit status 1.
#[test]
fn strict_stops_at_a_line_the_control_socket_refuses() {
    use std::io::{BufRead, BufReader};
    let dir = folder("host-input", "socket-refused-strict");
    let socket = dir.join("ctl.sock");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fugue"));
    cmd.args(["host", "--backend", "offline", "--threads", "1", "--strict"])
        .arg("--control")
        .arg(&socket)
        .env_remove(common::FAULT_VAR)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut h = Running::start(cmd, &socket);
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    stream.write_all(b"list \xff\xfe\n").unwrap();
    let mut reply = String::new();
    BufReader::new(&stream).read_line(&mut reply).unwrap();
    assert!(reply.contains("not valid UTF-8"), "{reply}");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = h.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the strict host did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(1));
    let mut err = String::new();
    std::io::Read::read_to_string(h.child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("--strict"), "{err}");
}

/// `fugue ctl --timeout` says which way a number it refuses is out of range: a usage error
/// before it connects.
#[test]
fn ctl_says_why_a_time_limit_is_refused() {
    let dir = folder("host-input", "ctl-timeout");
    let nowhere = dir.join("none.sock");
    for (t, words) in [
        ("1e10", "`1e10` is too many seconds for a time limit"),
        ("0.01", "`0.01` is too short a time limit"),
        ("0", "`0` is too short a time limit"),
        ("soon", "`soon` is not a time limit"),
        ("NaN", "`NaN` is not a time limit"),
    ] {
        let o = fugue(&["ctl", "--timeout", t, nowhere.to_str().unwrap(), "stats"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{t}: {e}");
        assert!(e.contains(words) && e.contains("0.1 to 86400"), "{t}: {e}");
    }
}
