//! The host's control socket and its waits: a client's `wait` holds that client only and says
//! how long it really waited when SIGTERM or a `quit` cuts it short; the clients are bounded
//! (the one idle longest makes room, or a new one is refused in one line); running out of file
//! descriptors neither spins nor stops the other clients; a `load` of a named pipe with no
//! writer, or a `--record` into one with no reader, is ended by SIGTERM at once.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{folder, fugue, stderr, stdout};
use fugue_testkit::host::Running;

/// The most clients the host serves at once (`MAX_CLIENTS`, docs/host.md).
const MAX_CLIENTS: usize = 64;

/// `fugue host --backend BACKEND --control DIR/ctl.sock`, started under a limit of `files`
/// file descriptors when given.
fn start(dir: &Path, backend: &str, files: Option<u32>) -> Running {
    let socket = dir.join("ctl.sock");
    let bin = env!("CARGO_BIN_EXE_fugue");
    let mut cmd = match files {
        Some(n) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                .arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.args(["host", "--backend", backend, "--threads", "1", "--control"])
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Running::start(cmd, &socket)
}

/// `fugue ctl SOCKET WORDS`: whether it succeeded, its reply, how long it took.
fn ctl(sock: &Path, words: &[&str]) -> (bool, String, Duration) {
    let mut args = vec!["ctl", sock.to_str().unwrap()];
    args.extend_from_slice(words);
    let start = Instant::now();
    let o = fugue(&args);
    (
        o.status.success(),
        stdout(&o).trim().to_string(),
        start.elapsed(),
    )
}

/// A client that sent `line` and has not read its reply yet.
fn send(sock: &Path, line: &str) -> UnixStream {
    let mut s = UnixStream::connect(sock).unwrap();
    writeln!(s, "{line}").unwrap();
    s
}

/// The next line a client gets (at most 30 s).
fn reply(s: &UnixStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

/// The seconds in a `waited S s; at cycle C` reply.
fn waited(r: &str) -> f64 {
    r.strip_prefix("waited ")
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("not a wait's reply: {r}"))
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Waits at most `limit` for the child to end; its exit code and how long it took.
fn exit_within(child: &mut Child, limit: Duration) -> (Option<i32>, Duration) {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return (s.code(), start.elapsed());
        }
        assert!(start.elapsed() < limit, "still running after {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// CPU time the process `pid` used so far (user and system), from /proc/PID/stat.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's name (which may hold spaces), from field 3 on.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // utime and stime are fields 14 and 15 (11 and 12 here).
    Duration::from_secs_f64((f[11] + f[12]) as f64 / hz)
}

/// The share of a core the process used over `d`.
fn load_over(pid: u32, d: Duration) -> f64 {
    let before = cpu(pid);
    std::thread::sleep(d);
    (cpu(pid) - before).as_secs_f64() / d.as_secs_f64()
}

#[test]
fn a_wait_holds_only_its_own_client_and_a_quit_cuts_it_short() {
    let dir = folder("host_socket", "wait");
    let mut h = start(&dir, "clocked", None);
    let a = send(&h.socket, "wait 20");
    std::thread::sleep(Duration::from_millis(200));
    // The other clients get their answers at once.
    for _ in 0..3 {
        let (ok, r, took) = ctl(&h.socket, &["list"]);
        assert!(ok && r == "no graph is loaded", "{r}");
        assert!(took < Duration::from_secs(3), "list took {took:?}");
    }
    let (ok, r, _) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let r = reply(&a);
    let w = waited(&r);
    assert!(w > 0.1 && w < 15.0, "{r}");
    assert!(r.contains("; at cycle "), "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// A client that sent a `wait` and went away frees its place at once: the host's every
/// place taken by such clients, the next client is still answered (clocked); offline, where
/// the wait plays in the control loop, it stops playing for no one, and the next `wait`
/// plays its own seconds only.
#[test]
fn a_wait_whose_client_went_away_ends_there() {
    let dir = folder("host_socket", "wait-gone");
    let mut h = start(&dir, "clocked", None);
    for _ in 0..MAX_CLIENTS {
        drop(send(&h.socket, "wait 600"));
    }
    std::thread::sleep(Duration::from_millis(300));
    let (ok, r, took) = ctl(&h.socket, &["list"]);
    assert!(ok && r == "no graph is loaded", "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let (ok, r, _) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));

    let dir = folder("host_socket", "wait-gone-offline");
    let mut h = start(&dir, "offline", None);
    let pluck = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/pluck.ag");
    let (ok, r, _) = ctl(&h.socket, &["load", "p", pluck]);
    assert!(ok, "{r}");
    drop(send(&h.socket, "wait 86400"));
    std::thread::sleep(Duration::from_millis(300));
    // Idle once more: the control loop answers, and uses no core meanwhile.
    let (ok, r, took) = ctl(&h.socket, &["list"]);
    assert!(ok && r.contains('p'), "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let load = load_over(h.child.id(), Duration::from_millis(500));
    assert!(load < 0.5, "{load:.2} of a core while no wait runs");
    // `wait 1` plays one second of audio from where the host is (not the rest of the day).
    let (ok, r, took) = ctl(&h.socket, &["wait", "1"]);
    assert!(ok && waited(&r) == 1.0, "{r}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let (ok, r, _) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// Offline, a `wait` plays in the control loop: a `quit` of another client ends it there
/// (its reply says how much it played), and is served at once.
#[test]
fn offline_a_quit_cuts_another_clients_wait_short() {
    let dir = folder("host_socket", "offline-quit");
    let mut h = start(&dir, "offline", None);
    let pluck = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/pluck.ag");
    let (ok, r, _) = ctl(&h.socket, &["load", "p", pluck]);
    assert!(ok, "{r}");
    let a = send(&h.socket, "wait 86400");
    std::thread::sleep(Duration::from_millis(300));
    let (ok, r, took) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let r = reply(&a);
    let w = waited(&r);
    assert!(w > 0.0 && w < 86400.0, "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

#[test]
fn sigterm_cuts_a_wait_short_and_its_reply_says_how_long_it_waited() {
    let dir = folder("host_socket", "sigterm");
    let mut h = start(&dir, "clocked", None);
    let a = send(&h.socket, "wait 20");
    std::thread::sleep(Duration::from_millis(500));
    signal(&h.child, libc::SIGTERM);
    let r = reply(&a);
    let w = waited(&r);
    assert!((0.3..10.0).contains(&w), "{r}");
    let (code, took) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(143));
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn the_clients_are_bounded() {
    let dir = folder("host_socket", "bounded");
    // Every client busy in a wait: one more is refused in one line and closed.
    let mut h = start(&dir, "clocked", None);
    let busy: Vec<UnixStream> = (0..MAX_CLIENTS)
        .map(|_| send(&h.socket, "wait 30"))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let mut extra = UnixStream::connect(&h.socket).unwrap();
    // The host may have closed it already: the refusal is there to read all the same.
    let _ = writeln!(extra, "list");
    extra
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut all = String::new();
    let _ = extra.read_to_string(&mut all);
    assert_eq!(all.lines().count(), 1, "{all}");
    assert!(
        all.starts_with(
            "error: the host serves at most 64 clients at once and all of them are busy"
        ),
        "{all}"
    );
    // `fugue ctl` says that refusal, every time, whether its command was sent before the host
    // closed or not (never a silent end).
    for _ in 0..10 {
        let mut args = vec!["ctl", h.socket.to_str().unwrap(), "list"];
        args.truncate(3);
        let o = fugue(&args);
        let said = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{said}");
        assert!(said.contains("all of them are busy"), "{said}");
    }
    signal(&h.child, libc::SIGTERM);
    for s in &busy[..3] {
        assert!(waited(&reply(s)) < 20.0);
    }
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(143));
    drop(h);

    // Every client idle: a new one is served, and the one idle longest is closed, told why.
    let h = start(&dir, "clocked", None);
    let idle: Vec<UnixStream> = (0..MAX_CLIENTS)
        .map(|_| UnixStream::connect(&h.socket).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let (ok, r, took) = ctl(&h.socket, &["list"]);
    assert!(ok && r == "no graph is loaded", "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let closed = idle
        .iter()
        .map(|s| {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            let mut line = String::new();
            let _ = BufReader::new(s).read_line(&mut line);
            line
        })
        .filter(|l| l.contains("this one was idle longest"))
        .count();
    // The control socket that found the host up counts as one more client too.
    assert!((1..=2).contains(&closed), "{closed} clients closed");
}

#[test]
fn running_out_of_file_descriptors_neither_spins_nor_stops_the_clients() {
    let dir = folder("host_socket", "emfile");
    // 40 descriptors: far fewer than the clients that come. The idle ones make room.
    let h = start(&dir, "offline", Some(40));
    let idle: Vec<UnixStream> = (0..100)
        .map(|_| UnixStream::connect(&h.socket).unwrap())
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let (ok, r, took) = ctl(&h.socket, &["list"]);
    assert!(ok && r == "no graph is loaded", "{r}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let load = load_over(h.child.id(), Duration::from_secs(2));
    assert!(
        load < 0.25,
        "the idle host used {:.0}% of a core",
        load * 100.0
    );
    drop(idle);
    drop(h);

    // Every client busy (in a wait), and more coming: the host backs off instead of
    // spinning, and stops at once on SIGTERM.
    let mut h = start(&dir, "clocked", Some(40));
    let busy: Vec<UnixStream> = (0..50).map(|_| send(&h.socket, "wait 30")).collect();
    let pending: Vec<UnixStream> = (0..50)
        .filter_map(|_| UnixStream::connect(&h.socket).ok())
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    // 50 clients in a clocked `wait`, each looking every 10 ms whether its client left,
    // take a tenth of a core here, more where the machine's host takes its CPU (25 % once
    // in CI); a spinning accept loop takes the whole core.
    let load = load_over(h.child.id(), Duration::from_secs(2));
    assert!(
        load < 0.5,
        "the host out of descriptors used {:.0}% of a core",
        load * 100.0
    );
    signal(&h.child, libc::SIGTERM);
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(143));
    drop((busy, pending));
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn sigterm_ends_a_load_of_a_named_pipe_without_a_writer() {
    let dir = folder("host_socket", "fifo-load");
    let fifo = dir.join("g.ag");
    mkfifo(&fifo);
    let mut h = start(&dir, "clocked", None);
    let _a = send(&h.socket, &format!("load g {}", fifo.display()));
    std::thread::sleep(Duration::from_millis(500));
    signal(&h.child, libc::SIGTERM);
    let (code, took) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(143));
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Its socket is removed on this way out too.
    assert!(!h.socket.exists());
}

#[test]
fn sigterm_ends_a_host_whose_recording_pipe_has_no_reader() {
    let dir = folder("host_socket", "fifo-record");
    let fifo = dir.join("rec.wav");
    mkfifo(&fifo);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "clocked", "--record"])
        .arg(&fifo)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    signal(&child, libc::SIGTERM);
    let (code, took) = exit_within(&mut child, Duration::from_secs(10));
    let mut err = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    // Stopped while it waited for a reader (143), or refused the pipe (1): never stuck.
    assert!(matches!(code, Some(143) | Some(1)), "{code:?}: {err}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// `fugue ctl SOCKET set ...` on a clocked host: three frequencies set while it plays, each
/// answered, and no cycle missed its deadline, the cycles that changed a value included.
#[test]
fn ctl_sets_a_live_attribute_on_a_clocked_host_without_a_miss() {
    let dir = folder("host-socket", "set");
    let host = start(&dir, "clocked", None);
    let graph = dir.join("tone.ag");
    std::fs::write(
        &graph,
        "o = { kind: \"osc\", freq: 220, volume: 0.3, };\nf = { kind: \"biquad\", freq: 3000, };\nout = { kind: \"sink\", in: 1, };\no.1 -> f.1 -> out.1;\n",
    )
    .unwrap();
    let (ok, r, _) = ctl(&host.socket, &["load", "a", graph.to_str().unwrap()]);
    assert!(ok, "{r}");
    for (freq, q) in [("330", "1"), ("440", "2"), ("550.5", "0.8")] {
        let (ok, r, _) = ctl(&host.socket, &["set", "a", "o", "freq", freq]);
        assert!(ok, "{r}");
        assert_eq!(r, format!("a: o freq = {freq} from the next cycle"));
        let (ok, r, _) = ctl(&host.socket, &["set", "a", "f", "q", q]);
        assert!(ok, "{r}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (ok, r, _) = ctl(&host.socket, &["set", "a", "o", "phase", "0.5"]);
    assert!(
        !ok && r.contains("cannot change while the graph plays"),
        "{r}"
    );
    // `a: N cycles, ...; M deadline misses, P panics`
    let (ok, r, _) = ctl(&host.socket, &["stats", "a"]);
    assert!(ok, "{r}");
    let cycles: u64 = r
        .strip_prefix("a: ")
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{r}"));
    assert!(cycles > 20, "{r}");
    assert!(
        r.contains("; 0 deadline misses"),
        "a cycle missed its deadline: {r}"
    );
}

/// `fugue run DIR/NAME.ag` (the graph `text`) for 30 s with seq, `--control DIR/run.sock`
/// and `backend` (flags and environment), started and listening: the run and its socket.
fn start_run(
    dir: &Path,
    (name, text): (&str, &str),
    backend: &[&str],
    env: Option<(&str, &str)>,
) -> (std::process::Child, std::path::PathBuf) {
    let graph = dir.join(format!("{name}.ag"));
    std::fs::write(&graph, text).unwrap();
    let socket = dir.join("run.sock");
    let _ = std::fs::remove_file(&socket);
    let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
    c.args([
        "run",
        graph.to_str().unwrap(),
        "--seconds",
        "30",
        "-e",
        "seq",
    ])
    .args(backend)
    .arg("--control")
    .arg(&socket)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let child = c.spawn().unwrap();
    fugue_testkit::host::wait_for_socket(&socket);
    (child, socket)
}

/// `fugue run GRAPH --control SOCKET`: `set` changes a live attribute of the one graph it
/// plays (named by its file), other commands and wrong names are refused in one line, `quit`
/// stops the run, which says so and had no miss.
#[test]
fn a_single_run_takes_live_changes_on_its_control_socket() {
    let dir = folder("host-socket", "run-control");
    let tone = "o = { kind: \"osc\", freq: 220, volume: 0.3, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n";
    let (child, socket) = start_run(&dir, ("tone", tone), &["--backend", "clocked"], None);
    for freq in ["330", "440", "550"] {
        let (ok, r, _) = ctl(&socket, &["set", "tone", "o", "freq", freq]);
        assert!(ok, "{r}");
        assert_eq!(r, format!("tone: o freq = {freq} from the next cycle"));
        std::thread::sleep(Duration::from_millis(30));
    }
    for (words, expected) in [
        (
            &["set", "other", "o", "freq", "1"][..],
            "this run plays one graph, `tone`",
        ),
        (
            &["set", "tone", "o", "phase", "1"][..],
            "cannot change while the graph plays",
        ),
        (
            &["set", "tone", "o", "freq", "-1e400"][..],
            "is too far below zero",
        ),
        (
            &["load", "a", "b.ag"][..],
            "`load` is a command of `fugue host`",
        ),
    ] {
        let (ok, r, _) = ctl(&socket, words);
        assert!(!ok && r.contains(expected), "{words:?}: {r}");
    }
    // A `wait` says how long it waited, and no cycle (the run's socket counts none: it said
    // "at cycle 0" whatever the run had played).
    let (ok, r, _) = ctl(&socket, &["wait", "0.2"]);
    assert!(
        ok && r.starts_with("waited 0.2") && !r.contains("cycle"),
        "{r}"
    );
    let (ok, r, _) = ctl(&socket, &["quit"]);
    assert!(ok, "{r}");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("stopped by `quit` on the control socket"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("deadline misses 0 (0.00 %)"),
        "{}",
        stdout(&o)
    );
    assert!(!socket.exists(), "the socket is removed at the end");
}

/// Under JACK the run plays at the server's rate, not the one asked: `set` checks a value
/// against the rate granted (a biquad's frequency below half of 44.1 kHz, not of the default
/// 48 kHz).
#[test]
fn a_single_run_checks_live_values_at_the_rate_the_server_granted() {
    let server = match fugue_testkit::jackd::DummyServer::start("cli-run-granted", 44_100, 256) {
        Ok(s) => s,
        Err(why) => {
            common::skip(
                "a_single_run_checks_live_values_at_the_rate_the_server_granted",
                &why,
            );
            return;
        }
    };
    let dir = folder("host-socket", "run-granted");
    let filtered = "n = { kind: \"noise\", volume: 0.1, };\nf = { kind: \"biquad\", type: \"lowpass\", freq: 1000.0, };\nout = { kind: \"sink\", };\nn.1 -> f.1 -> out.1;\n";
    let (child, socket) = start_run(
        &dir,
        ("filtered", filtered),
        &["--backend", "jack", "--client-name", "fugue-run-granted"],
        Some(("JACK_DEFAULT_SERVER", server.name())),
    );
    // Accepted at 48 kHz (below 24,000), refused at the 44.1 kHz the server runs at.
    let (ok, r, _) = ctl(&socket, &["set", "filtered", "f", "freq", "23000"]);
    assert!(!ok && r.contains("22050"), "{r}");
    let (ok, r, _) = ctl(&socket, &["set", "filtered", "f", "freq", "21000"]);
    assert!(ok, "{r}");
    let (ok, r, _) = ctl(&socket, &["quit"]);
    assert!(ok, "{r}");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `fugue ctl` takes the command as words or as one quoted argument; one with a line break
/// (two commands) is refused before anything is sent.
#[test]
fn ctl_takes_a_command_as_words_or_as_one_argument() {
    let dir = folder("host_socket", "ctl-forms");
    std::fs::create_dir_all(dir.join("my dir")).unwrap();
    let g = dir.join("my dir/p.ag");
    std::fs::copy(common::example("pluck.ag"), &g).unwrap();
    let mut h = start(&dir, "offline", None);
    let (ok, r, _) = ctl(&h.socket, &["load", "a", g.to_str().unwrap()]);
    assert!(ok && r.starts_with("loaded a"), "{r}");
    let (ok, r, _) = ctl(&h.socket, &["unload a"]);
    assert!(ok && r.starts_with("unloaded a"), "{r}");
    let o = fugue(&["ctl", h.socket.to_str().unwrap(), "list\nquit"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("one command"), "{}", stderr(&o));
    let (ok, r, _) = ctl(&h.socket, &["list"]);
    assert!(ok && r == "no graph is loaded", "{r}");
    let (ok, r, _) = ctl(&h.socket, &["quit"]);
    assert!(ok, "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// The control socket of `fugue run` on a file whose name is no graph name (`my tone.ag`):
/// `set` names it as `help` says (`my_tone`), `help` answers, a last line without a newline
/// is a command, the lines after a `quit` are not run, and a control character of a command
/// comes back as `?`, the reply one line.
#[test]
fn a_single_run_of_a_file_named_with_spaces_is_controlled_by_its_written_name() {
    let dir = folder("host-socket", "run-name");
    let tone = "o = { kind: \"osc\", freq: 220, volume: 0.3, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n";
    let (child, socket) = start_run(&dir, ("my tone", tone), &["--backend", "clocked"], None);
    let (ok, r, _) = ctl(&socket, &["help"]);
    assert!(ok && r.contains("set NAME NODE ATTR VALUE"), "{r}");
    let (ok, r, _) = ctl(&socket, &["set", "other", "o", "freq", "1"]);
    assert!(
        !ok && r.contains("this run plays one graph, `my_tone`: set my_tone NODE ATTR VALUE"),
        "{r}"
    );
    let (ok, r, _) = ctl(&socket, &["set", "my_tone", "o", "freq", "330"]);
    assert!(ok, "{r}");
    // No newline at the end, the client's side shut: still a command.
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"set my_tone o freq 440").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(reply(&s), "my_tone: o freq = 440 from the next cycle");
    let s = send(&socket, "set my_tone o\u{0} freq 1");
    let r = reply(&s);
    assert!(r.starts_with("error: ") && r.contains("`o?`"), "{r}");
    // A quit and a change after it on one connection: only the quit is answered.
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"quit\nset my_tone o freq 550\n").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut all = String::new();
    std::io::Read::read_to_string(&mut s, &mut all).unwrap();
    assert_eq!(all.trim_end(), "bye", "{all}");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `fugue ctl` waits for a reply at most `--timeout` seconds (a `wait` command gets its own
/// seconds more): a listener that accepts and never answers gets one sentence, exit 1.
#[test]
fn ctl_gives_up_on_a_socket_that_never_answers() {
    let dir = folder("host-socket", "ctl-timeout");
    let socket = dir.join("mute.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for (words, limit) in [(&["stats"][..], 0.5), (&["wait", "0.5"][..], 1.0)] {
        let mut args = vec!["ctl", "--timeout", "0.5", socket.to_str().unwrap()];
        args.extend_from_slice(words);
        let start = Instant::now();
        let o = fugue(&args);
        let took = start.elapsed().as_secs_f64();
        assert_eq!(o.status.code(), Some(1), "{words:?}");
        let e = stderr(&o);
        assert!(
            e.contains(&format!(
                "no reply from {} within {limit} s",
                socket.display()
            )) && e.contains("--timeout")
                && e.lines().count() == 1,
            "{words:?}: {e}"
        );
        assert!((limit..limit + 10.0).contains(&took), "{words:?}: {took} s");
    }
    drop(listener);
}

/// A line that holds no command (a comment, blanks) is refused by `fugue ctl` itself, in
/// one sentence, before it connects; a listener that floods bytes with no line's end is
/// said to be no host, exit 1, its bytes not printed.
#[test]
fn ctl_refuses_an_empty_command_and_a_reply_that_is_no_line() {
    let dir = folder("host-socket", "ctl-no-line");
    let socket = dir.join("flood.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // Before connecting: a path where nothing listens says the same.
    let nowhere = dir.join("none.sock");
    for (words, at) in [
        (&["# comment"][..], &socket),
        (&["  # indented"][..], &socket),
        (&["# comment"][..], &nowhere),
    ] {
        let mut args = vec!["ctl", at.to_str().unwrap()];
        args.extend_from_slice(words);
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{words:?}");
        let e = stderr(&o);
        assert!(
            e.contains("no command to send: the line is empty or a comment")
                && e.lines().count() == 1,
            "{words:?}: {e}"
        );
    }
    // Every connection flooded until its client goes (the thread ends with the test).
    std::thread::spawn(move || {
        use std::io::Write as _;
        for mut c in listener.incoming().flatten() {
            let chunk = vec![b'A'; 64 << 10];
            while c.write_all(&chunk).is_ok() {}
        }
    });
    let o = fugue(&["ctl", socket.to_str().unwrap(), "stats"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{} bytes printed", o.stdout.len());
    let e = stderr(&o);
    assert!(
        e.contains("is over 1024 KiB with no line's end") && e.lines().count() == 1,
        "{e}"
    );
}

/// A host that stops removes its socket only while it is still its own: a second host that
/// made its socket at the same path after the first one's was removed keeps it (and its
/// clients) when the first one quits.
#[test]
fn a_host_that_quits_leaves_another_hosts_socket_in_place() {
    let a_dir = folder("host_socket", "two_hosts");
    let mut a = start(&a_dir, "clocked", None);
    std::fs::remove_file(&a.socket).unwrap();
    let mut b = start(&a_dir, "clocked", None);
    let (ok, r, _) = ctl(&b.socket, &["list"]);
    assert!(ok && r == "no graph is loaded", "{r}");
    // The first host's file is gone: it is stopped by a signal.
    signal(&a.child, libc::SIGTERM);
    let (code, _) = exit_within(&mut a.child, Duration::from_secs(10));
    assert!(code.is_some(), "the first host did not stop");
    assert!(
        b.socket.exists(),
        "the first host removed the second one's socket"
    );
    let (ok, r, _) = ctl(&b.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let (code, _) = exit_within(&mut b.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// `fugue ctl SOCKET load NAME FILE` reads a relative FILE from where `fugue ctl` runs, not
/// from the host's folder.
#[test]
fn ctl_load_reads_a_relative_file_from_where_ctl_runs() {
    let dir = folder("host_socket", "ctl_relative");
    let mut h = start(&dir, "clocked", None);
    let here = dir.join("elsewhere");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::write(
        here.join("tone.ag"),
        "o = { kind: \"osc\", freq: 220, volume: 0.2, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(&here)
        .args(["ctl"])
        .arg(&h.socket)
        .args(["load", "t", "tone.ag"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("loaded t"), "{}", stdout(&o));
    let (ok, r, _) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let (code, _) = exit_within(&mut h.child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// A `--control` path ending in `/` (a folder's name) is refused before anything plays or
/// is recorded; `ctl` gives a path too long for a socket, and a reply that is not text, one
/// sentence each that names the socket.
#[test]
fn socket_paths_that_cannot_be_are_said_before_anything_plays() {
    let dir = folder("host-socket", "bad-paths");
    let script = dir.join("s.txt");
    std::fs::write(&script, "wait 0.1\n").unwrap();
    let rec = dir.join("rec.wav");
    let _ = std::fs::remove_file(&rec);
    let slash = format!("{}/", dir.join("t.sock").display());
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--control",
        &slash,
        "--script",
        script.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("ends with `/`") && !stdout(&o).contains("waited") && !rec.exists(),
        "{e}"
    );
    let long = format!("{}/{}.sock", dir.display(), "a".repeat(120));
    let o = fugue(&["ctl", &long, "list"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("bytes long, and a socket's path holds at most 107") && e.lines().count() == 1,
        "{e}"
    );
    // A server that answers bytes that are not UTF-8.
    let socket = dir.join("latin.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for mut c in listener.incoming().flatten() {
            // The request is read first: a socket closed with unread bytes resets the
            // connection, and the client would read that instead of the reply.
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(
                &mut std::io::BufReader::new(c.try_clone().unwrap()),
                &mut line,
            );
            let _ = c.write_all(b"\xff\xfe ok\n");
        }
    });
    let o = fugue(&["ctl", socket.to_str().unwrap(), "list"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!("cannot read the reply from {}", socket.display()))
            && e.lines().count() == 1,
        "{e}"
    );
}

/// A burst of sets larger than the run's queue of changes (256) waits for room, as the
/// host's do: none is refused while the run plays (periods of 171 ms here, so that a cycle
/// takes the queue's worth at most every period).
#[test]
fn a_single_run_takes_a_burst_of_sets_larger_than_its_queue() {
    let dir = folder("host-socket", "run-burst");
    let tone = "o = { kind: \"osc\", freq: 220, volume: 0.3, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n";
    let (mut child, socket) = start_run(
        &dir,
        ("tone", tone),
        &["--backend", "clocked", "--buffer", "8192"],
        None,
    );
    let mut s = UnixStream::connect(&socket).unwrap();
    let burst: String = (0..600)
        .map(|i| format!("set tone o freq {}\n", 200 + i))
        .collect();
    s.write_all(burst.as_bytes()).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut replies = String::new();
    s.read_to_string(&mut replies).unwrap();
    let refused: Vec<&str> = replies.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(replies.lines().count(), 600, "{replies}");
    assert!(
        refused.is_empty(),
        "{} refused: {:?}",
        refused.len(),
        refused.first()
    );
    let (ok, r, _) = ctl(&socket, &["quit"]);
    assert!(ok, "{r}");
    let (code, _) = exit_within(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// `fugue host --control S & fugue ctl S ...` (the help's example): the client, started
/// before the host has made its socket, tries again and reaches it; with no host at all it
/// fails after its grace of 2 s, in one sentence.
#[test]
fn ctl_reaches_a_host_started_just_before() {
    let d = folder("host_socket", "started-just-before");
    let sock = d.join("late.sock");
    let _ = std::fs::remove_file(&sock);
    let mut host = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "offline",
            "--threads",
            "1",
            "--control",
        ])
        .arg(&sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (ok, said, _) = ctl(&sock, &["load", "a", &common::example("pluck.ag")]);
    assert!(ok && said.starts_with("loaded a"), "{said}");
    let (ok, said, _) = ctl(&sock, &["quit"]);
    assert!(ok, "{said}");
    assert!(host.wait().unwrap().success());
    let absent = d.join("absent.sock");
    let start = Instant::now();
    let o = fugue(&["ctl", absent.to_str().unwrap(), "list"]);
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot connect to"), "{}", stderr(&o));
    assert!(took >= Duration::from_secs(2), "{took:?}");
}

/// An option put after the socket (`fugue ctl S --json list`) is not sent as a command: one
/// sentence says where fugue ctl's option goes, exit status 2.
#[test]
fn an_option_after_the_socket_is_said_not_sent() {
    let d = folder("host_socket", "option-after");
    let sock = d.join("nobody.sock");
    let o = fugue(&["ctl", sock.to_str().unwrap(), "--json", "list"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("`--json` is not a command of the host: fugue ctl's one option, --timeout SECONDS, comes before the socket"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}
