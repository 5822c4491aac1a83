//! `fugue host`'s interactive shell on a terminal (a pseudo-terminal here): its banner, Tab
//! completion of a command and of a graph file, `help COMMAND`, and the history it keeps in
//! `$XDG_STATE_HOME/fugue/history`.

mod common;

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::folder;

/// A pseudo-terminal: (master, slave).
fn pty() -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes the two descriptors into the integers given; the name, termios
    // and window-size pointers may be null.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

/// Waits until what the terminal showed contains `text`; panics after 60 s.
fn wait_for(screen: &Mutex<String>, text: &str) {
    let start = Instant::now();
    while !screen.lock().unwrap().contains(text) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the shell never showed `{text}`:\n{}",
            screen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `fugue host --backend offline` on a pseudo-terminal (in `dir`, its history under
/// `state`): the child, the terminal's master side, what the terminal showed so far (kept
/// up to date by the returned reader thread).
fn shell(
    dir: &std::path::Path,
    state: &std::path::Path,
) -> (
    std::process::Child,
    std::fs::File,
    Arc<Mutex<String>>,
    std::thread::JoinHandle<()>,
) {
    let (child, master, screen, reader, _) = shell_with(dir, state, &[]);
    (child, master, screen, reader)
}

/// [`shell`] with more arguments to the host, and the terminal's slave side kept (to read
/// its settings).
#[allow(clippy::type_complexity)]
fn shell_with(
    dir: &std::path::Path,
    state: &std::path::Path,
    extra: &[&str],
) -> (
    std::process::Child,
    std::fs::File,
    Arc<Mutex<String>>,
    std::thread::JoinHandle<()>,
    OwnedFd,
) {
    let (master, slave) = pty();
    let kept = slave.try_clone().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "offline"])
        .args(extra)
        .current_dir(dir)
        .env("XDG_STATE_HOME", state)
        .env("TERM", "xterm")
        .env_remove(common::FAULT_VAR)
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let screen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let mut master = master.try_clone().unwrap();
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with an error (EIO) once the host has closed the terminal.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                screen
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    (child, master, screen, reader, kept)
}

/// The local modes of the terminal whose side `fd` is.
fn local_modes(fd: &OwnedFd) -> libc::tcflag_t {
    use std::os::fd::AsRawFd as _;
    // SAFETY: a zeroed termios is a valid buffer for tcgetattr, which fills it.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(fd.as_raw_fd(), &mut t), 0);
        t.c_lflag
    }
}

/// A host ended while its prompt waits (by a `quit` of its control socket, or by SIGTERM)
/// gives the terminal back as it found it: line editing, echo and signal keys on, bracketed
/// paste off, and its last words on a line of their own.
#[test]
fn a_host_ended_while_its_prompt_waits_restores_the_terminal() {
    for how in ["ctl", "sigterm"] {
        let state = folder("host-shell", &format!("restore-{how}"));
        let sock = state.join("h.sock");
        let (mut child, master, screen, reader, slave) =
            shell_with(&state, &state, &["--control", sock.to_str().unwrap()]);
        let before = local_modes(&slave);
        let wanted = libc::ICANON | libc::ECHO | libc::ISIG;
        assert_eq!(before & wanted, wanted, "{how}");
        wait_for(&screen, "`help COMMAND` says what one does");
        wait_for(&screen, "fugue> ");
        assert_ne!(
            local_modes(&slave) & wanted,
            wanted,
            "{how}: the prompt's raw mode"
        );
        if how == "ctl" {
            let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
                .args(["ctl", sock.to_str().unwrap(), "quit"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{o:?}");
        } else {
            // SAFETY: kill takes plain integers; the child is alive until waited below.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let (status, err) = common::stderr_at_exit(&mut child);
        let code = if how == "ctl" { 0 } else { 143 };
        assert_eq!(status.code(), Some(code), "{how}: {err}");
        assert_eq!(local_modes(&slave), before, "{how}");
        drop(master);
        drop(slave);
        let _ = reader.join();
        let shown = screen.lock().unwrap().clone();
        let last = shown.rfind("\x1b[?2004h").unwrap_or(0);
        assert!(shown[last..].contains("\x1b[?2004l"), "{how}: {shown:?}");
    }
}

#[test]
fn the_shell_completes_helps_and_keeps_its_history() {
    let state = folder("host-shell", "state");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (mut child, mut master, screen, reader) = shell(root, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    // `lo` + Tab completes to `load ` (a second Tab keeps it), `examples/plu` + Tab to
    // `examples/pluck.ag `.
    master.write_all(b"lo\t\t").unwrap();
    wait_for(&screen, "load");
    master.write_all(b"a examples/plu\t").unwrap();
    wait_for(&screen, "examples/pluck.ag");
    master.write_all(b"\r").unwrap();
    wait_for(&screen, "loaded a (id 1)");
    master.write_all(b"help wa\t\r").unwrap();
    wait_for(&screen, "wait SECONDS: lets the host play");
    master.write_all(b"quit\r").unwrap();
    let (status, err) = common::stderr_at_exit(&mut child);
    assert!(status.success(), "{err}");
    drop(master);
    let _ = reader.join();
    let shown = screen.lock().unwrap().clone();
    // The banner once, and not the list of commands that `help` gives.
    assert_eq!(
        shown.matches("fugue host: `help` lists").count(),
        1,
        "{shown}"
    );
    assert!(!shown.contains("commands: load NAME FILE |"), "{shown}");
    let history = std::fs::read_to_string(state.join("fugue/history")).unwrap();
    assert_eq!(
        history, "load a examples/pluck.ag\nhelp wait\nquit\n",
        "{shown}"
    );
}

/// Ctrl-C at the shell's prompt (a key to the line editor, not a signal) stops the host as
/// SIGINT does: its line on standard error and exit status 130.
#[test]
fn ctrl_c_at_the_prompt_stops_the_host_as_sigint() {
    let state = folder("host-shell", "state-ctrl-c");
    let (mut child, mut master, screen, reader) = shell(&state, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    master.write_all(b"unload a").unwrap();
    wait_for(&screen, "unload a");
    master.write_all(b"\x03").unwrap();
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("stopped by SIGINT"), "{err}");
    assert!(
        !err.contains("no graph named"),
        "the half-typed line ran: {err}"
    );
}

/// Lines that reach the terminal together (typed ahead while a command runs, or pasted) all
/// run, in order, and a Ctrl-D after them ends the host: none is dropped between two reads
/// of the prompt.
#[test]
fn lines_typed_ahead_at_the_prompt_all_run() {
    let state = folder("host-shell", "state-ahead");
    let (mut child, mut master, screen, reader) = shell(&state, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    master.write_all(b"mode\rhelp quit\rlist\r\x04").unwrap();
    wait_for(&screen, "no graph is loaded");
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert!(status.success(), "{err}");
    let shown = screen.lock().unwrap().clone();
    let at = |t: &str| {
        shown
            .find(t)
            .unwrap_or_else(|| panic!("`{t}` never shown:\n{shown}"))
    };
    assert!(at("mode shared") < at("quit: stops the host"), "{shown}");
    assert!(
        at("quit: stops the host") < at("no graph is loaded"),
        "{shown}"
    );
}

/// A paste of several lines at the prompt (bracketed paste: the terminal marks it, and the
/// line editor keeps its line breaks in one edit) runs each line as a command, in order;
/// they were one command, refused as `load` with a word too many.
#[test]
fn a_pasted_block_of_lines_runs_each_line() {
    let state = folder("host-shell", "state-paste");
    let (mut child, mut master, screen, reader) = shell(&state, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    let pluck = common::example("pluck.ag");
    master
        .write_all(format!("\x1b[200~load a {pluck}\nlist\n\x1b[201~\r").as_bytes())
        .unwrap();
    wait_for(&screen, "1 loaded: a");
    master.write_all(b"\x04").unwrap();
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert!(status.success(), "{err}");
    let shown = screen.lock().unwrap().clone();
    assert!(shown.contains("loaded a (id 1)"), "{shown}");
    assert!(!shown.contains("one word too many"), "{shown}");
}

/// A byte that is not UTF-8 typed at the prompt (a terminal set to Latin-1 typing `é`) is
/// one error line, and the host plays on: the next command runs, and `quit` ends it with
/// status 0.
#[test]
fn a_byte_that_is_not_utf8_at_the_prompt_is_an_error_line() {
    let state = folder("host-shell", "state-latin1");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (mut child, mut master, screen, reader) = shell(root, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    master.write_all(b"load a examples/pluck.ag\r").unwrap();
    wait_for(&screen, "loaded a (id 1)");
    master.write_all(b"caf\xe9\r").unwrap();
    wait_for(&screen, "error: a byte that is not UTF-8 was typed");
    master.write_all(b"list\r").unwrap();
    wait_for(&screen, "1 loaded: a (id 1");
    master.write_all(b"quit\r").unwrap();
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert!(status.success(), "{err}");
    assert!(err.contains("host: "), "{err}");
}

/// A line longer than 64 KiB at the prompt (a paste) is one error line, as on standard input
/// and the socket, and the host plays on.
#[test]
fn a_line_longer_than_64_kib_at_the_prompt_is_an_error_line() {
    let state = folder("host-shell", "state-long");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (mut child, mut master, screen, reader) = shell(root, &state);
    wait_for(&screen, "`help COMMAND` says what one does");
    // A bracketed paste: the line editor takes it whole, as a terminal pastes it.
    let mut paste = b"\x1b[200~".to_vec();
    paste.extend(std::iter::repeat_n(b'x', 70_000));
    paste.extend_from_slice(b"\x1b[201~\r");
    master.write_all(&paste).unwrap();
    wait_for(&screen, "the line is longer than 65536 bytes");
    master.write_all(b"load a examples/pluck.ag\r").unwrap();
    wait_for(&screen, "loaded a (id 1)");
    master.write_all(b"quit\r").unwrap();
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert!(status.success(), "{err}");
}

/// Under `--strict`, a line the prompt refuses (a byte that is not UTF-8) is a failed command
/// like any other: the host stops there, exit status 1.
#[test]
fn strict_stops_at_a_line_the_prompt_refuses() {
    let state = folder("host-shell", "state-strict");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let (mut child, mut master, screen, reader, _) = shell_with(root, &state, &["--strict"]);
    wait_for(&screen, "`help COMMAND` says what one does");
    master.write_all(b"caf\xe9\r").unwrap();
    wait_for(&screen, "error: a byte that is not UTF-8 was typed");
    // It ends by itself (a host that plays on is killed, and the test fails).
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the host played on after the refused line");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, err) = common::stderr_at_exit(&mut child);
    drop(master);
    let _ = reader.join();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("--strict stops there"), "{err}");
}
