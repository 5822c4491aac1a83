//! `fugue host`: a scripted session with the clocked backend (and on ALSA's null device, and
//! JACK's when a server runs) records, sample for sample, the
//! sum of each graph's solo `fugue render` over the cycles it was loaded; bad input is one
//! clear line and the host plays on; `--strict` stops at the first failure with a valid
//! recording; the control socket survives bad clients; `--pipeline` records the same mix as
//! without it, in every mode, and one that does not divide the buffer is refused.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{folder, fugue, stderr, stdout};
use fugue_testkit::host::{expected_mix, Running, Span};
use fugue_testkit::wav;
use serde_json::Value;

/// The graphs of the sessions ([`fugue_testkit::host::graphs`]): mono, duo, synth, pluck.
fn small_graphs(dir: &Path) -> Vec<PathBuf> {
    fugue_testkit::host::graphs(dir)
        .into_iter()
        .map(|(_, f)| f)
        .collect()
}

#[test]
fn scripted_clocked_session_records_the_sum_of_the_solo_renders() {
    session("session", &["--backend", "clocked", "--buffer", "512"]);
}

/// The same session played on ALSA's null device (paced by the clock, no sound card).
#[test]
fn scripted_alsa_session_records_the_sum_of_the_solo_renders() {
    session(
        "alsa-session",
        &["--backend", "alsa", "--device", "null", "--buffer", "512"],
    );
}

#[test]
fn an_alsa_host_on_a_device_that_does_not_exist_is_one_sentence() {
    let o = fugue(&[
        "host",
        "--backend",
        "alsa",
        "--device",
        "fugue-no-such-device",
        "--script",
        "/dev/null",
    ]);
    let e = stderr(&o);
    // A device that cannot be opened is a failure of the backend (exit 1), as for `fugue run`;
    // only the host's options are usage errors.
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("ALSA playback device \"fugue-no-such-device\" cannot be opened"),
        "{e}"
    );
}

fn jack_server_running() -> bool {
    jack::set_logger(jack::LoggerType::None);
    jack::Client::new("fugue-probe", jack::ClientOptions::NO_START_SERVER).is_ok()
}

#[test]
fn scripted_jack_session_records_the_sum_of_the_solo_renders() {
    if !jack_server_running() {
        eprintln!("SKIPPED scripted_jack_session_records_the_sum_of_the_solo_renders: no JACK server is running (scripts/test.sh starts one with the dummy driver)");
        return;
    }
    session(
        "jack-session",
        &["--backend", "jack", "--client-name", "fugue-host-cli-test"],
    );
}

/// The script of the session of the specification, on the graphs `g`: three graphs loaded,
/// one unloaded, another loaded, 50 load/unload pairs while playing. Returns it with the
/// file of each name.
fn session_script(g: &[PathBuf]) -> (String, HashMap<String, PathBuf>) {
    let mut script = String::new();
    let mut files: HashMap<String, PathBuf> = HashMap::new();
    let mut load = |script: &mut String, name: &str, f: &PathBuf| {
        files.insert(name.to_string(), f.clone());
        script.push_str(&format!("load {name} {}\n", f.display()));
    };
    load(&mut script, "mono", &g[0]);
    script.push_str("wait 0.05\n");
    load(&mut script, "duo", &g[1]);
    load(&mut script, "synth", &g[2]);
    script.push_str("wait 0.05\nunload duo\nwait 0.03\n");
    load(&mut script, "pluck", &g[3]);
    script.push_str("wait 0.05\n");
    for i in 0..50 {
        let name = format!("x{i}");
        load(&mut script, &name, &g[[0, 1, 0, 1, 3][i % 5]]);
        if i % 3 == 0 {
            script.push_str("wait 0.02\n");
        }
        script.push_str(&format!("unload {name}\n"));
    }
    script.push_str("wait 0.05\nstats\nmode\nquit\n");
    (script, files)
}

/// The session of the specification through `fugue host --script` with `backend` (flags).
fn session(test: &str, backend: &[&str]) {
    let dir = folder("host", test);
    let g = small_graphs(&dir);
    let (script, files) = session_script(&g);
    let script_path = dir.join("session.txt");
    std::fs::write(&script_path, &script).unwrap();
    let mix = dir.join("mix.wav");
    let mut args = vec!["host"];
    args.extend_from_slice(backend);
    args.extend_from_slice(&[
        "--threads",
        "2",
        "--script",
        script_path.to_str().unwrap(),
        "--record",
        mix.to_str().unwrap(),
        "--json",
    ]);
    let o = fugue(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    // (id, name, adopted, removed)
    let mut spans: Vec<(u64, String, u64, Option<u64>)> = Vec::new();
    let mut host_stats = None;
    let mut mode = None;
    for line in stdout(&o).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["ok"], true, "{line}");
        match v["command"].as_str().unwrap() {
            "load" => spans.push((
                v["id"].as_u64().unwrap(),
                v["name"].as_str().unwrap().to_string(),
                v["cycle"].as_u64().unwrap(),
                None,
            )),
            "unload" => {
                let id = v["id"].as_u64().unwrap();
                spans.iter_mut().find(|s| s.0 == id).unwrap().3 =
                    Some(v["cycle"].as_u64().unwrap());
            }
            "stats" => host_stats = Some(v),
            "mode" => mode = Some(v),
            _ => {}
        }
    }
    assert_eq!(spans.len(), 54);
    let st = host_stats.unwrap();
    let mode = mode.unwrap();
    let block = mode["buffer"].as_u64().unwrap() as usize;
    let rate = mode["rate"].as_u64().unwrap();
    let swaps = (st["swap_cycles"].as_u64(), st["swap_misses"].as_u64());
    let (Some(cycles), Some(misses)) = swaps else {
        panic!("{st}")
    };
    if let Err(e) = fugue_testkit::host::swaps_met(cycles, misses, 50) {
        panic!("{e}: {st}");
    }
    assert_eq!(st["record_drops"], 0, "{st}");
    let got = wav::channels(&mix);
    let cycles = got[0].len() / block;
    assert_eq!(got[0].len(), cycles * block);
    // Each file's solo render, long enough for its longest span.
    let mut solos: HashMap<PathBuf, Vec<Vec<f32>>> = HashMap::new();
    for (_, name, from, to) in &spans {
        let n = to.unwrap_or(cycles as u64) - from;
        let f = &files[name];
        let have = solos.get(f).map_or(0, |s| s[0].len() / block);
        if have < n as usize {
            let out = dir.join("solo.wav");
            let seconds = ((n + 2) as f64 * block as f64 / rate as f64).to_string();
            let r = fugue(&[
                "render",
                f.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--buffer",
                &block.to_string(),
                "--rate",
                &rate.to_string(),
                "--seconds",
                &seconds,
                "--force",
            ]);
            assert!(r.status.success(), "{}", stderr(&r));
            solos.insert(f.clone(), wav::channels(&out));
        }
    }
    let with_solos: Vec<(Span, &[Vec<f32>])> = spans
        .iter()
        .map(|(id, name, from, to)| {
            let span = Span {
                id: *id,
                from: *from,
                to: to.unwrap_or(cycles as u64),
            };
            (span, solos[&files[name]].as_slice())
        })
        .collect();
    let want = expected_mix(&with_solos, cycles as u64, block, 2);
    for ch in 0..2 {
        if let Some((i, a, b)) = fugue_testkit::bits::first_difference(&got[ch], &want[ch]) {
            panic!(
                "channel {ch}, frame {i} (cycle {}): recorded {a}, expected {b}",
                i / block
            );
        }
    }
    assert!(got[0].iter().any(|&x| x != 0.0));
}

#[test]
fn bad_input_is_one_clear_line_and_the_host_plays_on() {
    let dir = folder("host", "bad");
    let g = small_graphs(&dir);
    let bad = dir.join("bad.ag");
    std::fs::write(
        &bad,
        "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\",, };\n",
    )
    .unwrap();
    let script = format!(
        "load a {}\nload b {}\nfrobnicate\nload c\nunload zz\ngain a loud\nwait 0.05\nload d {}\nstats a\nlist\n",
        g[0].display(),
        bad.display(),
        g[1].display()
    );
    let s = dir.join("s.txt");
    std::fs::write(&s, &script).unwrap();
    let mix = dir.join("mix.wav");
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        s.to_str().unwrap(),
        "--record",
        mix.to_str().unwrap(),
    ]);
    // The host played on, and the failures fail the run as it ends, in one last line.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.contains("5 commands of the script")
                && l.contains("failed, the first at line 2")),
        "{err}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(lines.len(), 5, "{err}");
    assert!(
        lines[0].contains("s.txt:2:") && lines[0].contains("bad.ag:2:"),
        "{err}"
    );
    assert!(lines[1].contains("unknown command `frobnicate`"), "{err}");
    assert!(lines[2].contains("`load` takes a NAME and a FILE"), "{err}");
    assert!(lines[3].contains("no graph named `zz`"), "{err}");
    assert!(lines[4].contains("`loud` is not a gain"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = stdout(&o);
    assert!(out.contains("loaded d (id 2)"), "{out}");
    assert!(out.contains("2 loaded: a"), "{out}");
    let w = wav::channels(&mix);
    assert!(w[0].len() >= 9 * 256 && w[0].iter().any(|&x| x != 0.0));

    // --strict: stops at the first failure, exit status 1, the recording valid.
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        s.to_str().unwrap(),
        "--record",
        mix.to_str().unwrap(),
        // The first run's recording is replaced (an existing file needs --force).
        "--force",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stdout(&o).contains("loaded d"));
    let w = wav::channels(&mix);
    assert_eq!(w.len(), 2);
}

/// `fugue host --backend clocked --control DIR/ctl.sock EXTRA...`.
fn start_host(dir: &Path, extra: &[&str]) -> Running {
    let socket = dir.join("ctl.sock");
    let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
    c.args(["host", "--backend", "clocked", "--control"])
        .arg(&socket)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Running::start(c, &socket)
}

fn ctl(sock: &Path, words: &[&str]) -> (bool, String) {
    let mut args = vec!["ctl", sock.to_str().unwrap()];
    args.extend_from_slice(words);
    let o = fugue(&args);
    (o.status.success(), stdout(&o).trim().to_string())
}

fn cycles(sock: &Path) -> u64 {
    let (ok, r) = ctl(sock, &["stats"]);
    assert!(ok, "{r}");
    r.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_control_socket_survives_bad_clients() {
    let dir = folder("host", "socket");
    let g = small_graphs(&dir);
    let h = start_host(&dir, &["--buffer", "256"]);
    let (ok, r) = ctl(&h.socket, &["load", "a", g[0].to_str().unwrap()]);
    assert!(ok && r.starts_with("loaded a"), "{r}");
    // 1 MB without a newline, then a newline: one refusal, then the client goes on.
    {
        let mut s = UnixStream::connect(&h.socket).unwrap();
        s.write_all(&vec![b'x'; 1 << 20]).unwrap();
        s.write_all(b"\nlist\n").unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        let lines: Vec<&str> = reply.lines().collect();
        assert_eq!(lines.len(), 2, "{reply}");
        assert!(lines[0].contains("longer than"), "{reply}");
        assert!(lines[1].starts_with("1 loaded: a"), "{reply}");
    }
    // Invalid UTF-8.
    {
        let mut s = UnixStream::connect(&h.socket).unwrap();
        s.write_all(b"load \xff\xfe b\n").unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert!(reply.contains("not valid UTF-8"), "{reply}");
    }
    // Disconnects mid-command, and mid-megabyte.
    for _ in 0..3 {
        let mut s = UnixStream::connect(&h.socket).unwrap();
        s.write_all(b"load b ").unwrap();
        drop(s);
        let mut s = UnixStream::connect(&h.socket).unwrap();
        let _ = s.write_all(&vec![b'y'; 300_000]);
        drop(s);
    }
    let before = cycles(&h.socket);
    std::thread::sleep(Duration::from_millis(300));
    let after = cycles(&h.socket);
    assert!(after > before + 20, "playback stalled: {before} -> {after}");
    let (ok, r) = ctl(&h.socket, &["list"]);
    assert!(ok && r.starts_with("1 loaded: a"), "{r}");
    let (ok, r) = ctl(&h.socket, &["frob"]);
    assert!(!ok && r.contains("unknown command"), "{r}");
    let (ok, r) = ctl(&h.socket, &["quit"]);
    assert!(ok && r == "bye", "{r}");
    let mut h = h;
    let status = h.child.wait().unwrap();
    assert!(status.success());
    assert!(!h.socket.exists(), "the socket file is left behind");
}

#[test]
fn ctrl_c_stops_cleanly_and_keeps_the_recording_valid() {
    let dir = folder("host", "sigint");
    let g = small_graphs(&dir);
    let mix = dir.join("mix.wav");
    let mut h = start_host(&dir, &["--record", mix.to_str().unwrap()]);
    let (ok, r) = ctl(&h.socket, &["load", "a", g[0].to_str().unwrap()]);
    assert!(ok, "{r}");
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(h.child.id() as i32, libc::SIGINT) };
    let status = h.child.wait().unwrap();
    // Stopped by a signal: the conventional 128 + 2, the recording complete.
    assert_eq!(status.code(), Some(130), "{status:?}");
    let w = wav::channels(&mix);
    assert!(w[0].len() > 4800 && w[0].iter().any(|&x| x != 0.0));
}

/// A script whose command failed, stopped by SIGINT during a later `wait`: the signal is what
/// ended it (status 130, said as such), not the failure, and the script's rest did not run.
#[test]
fn a_signal_after_a_failed_command_is_said_as_the_signal() {
    let dir = folder("host", "sigint-failed");
    let script = dir.join("s.txt");
    std::fs::write(&script, "gain x 1\nwait 30\nlist\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "clocked", "--script"])
        .arg(&script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the failure is said, the host has its signal handlers and waits.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let mut err = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        err += &line;
        err.push('\n');
        if line.contains("s.txt:1: error") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    for line in lines {
        err += &line.unwrap();
        err.push('\n');
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("s.txt:1: error: no graph named `x`"), "{err}");
    assert!(err.contains("stopped by SIGINT"), "{err}");
    assert!(!err.contains("the host ran the others"), "{err}");
    assert!(!stdout(&o).contains("no graph is loaded"), "{}", stdout(&o));
}

/// The session recorded with `--pipeline 4` and `--pipeline auto` is, sample for sample, the
/// session recorded without pipelining, in every mode (offline backend: the same cycles).
#[test]
fn pipelined_sessions_record_the_unpipelined_mix() {
    let dir = folder("host", "pipelined");
    let g = small_graphs(&dir);
    let (script, _) = session_script(&g);
    let script_path = dir.join("session.txt");
    std::fs::write(&script_path, &script).unwrap();
    for (mode, threads) in [("shared", "2"), ("partitioned", "4"), ("separate", "2")] {
        let mut plain: Option<Vec<Vec<f32>>> = None;
        for pipeline in ["1", "4", "auto"] {
            let mix = dir.join(format!("{mode}-{pipeline}.wav"));
            let o = fugue(&[
                "host",
                "--backend",
                "offline",
                "--buffer",
                "128",
                "--mode",
                mode,
                "--threads",
                threads,
                "--pipeline",
                pipeline,
                "--script",
                script_path.to_str().unwrap(),
                "--record",
                mix.to_str().unwrap(),
                "--json",
            ]);
            assert!(o.status.success(), "{mode} {pipeline}: {}", stderr(&o));
            let subs: Vec<u64> = stdout(&o)
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|v| v["command"] == "load")
                .map(|v| v["pipeline"].as_u64().unwrap())
                .collect();
            assert_eq!(subs.len(), 54, "{mode} {pipeline}");
            match pipeline {
                "1" => assert!(subs.iter().all(|&n| n == 1)),
                "4" => assert!(subs.iter().all(|&n| n == 4), "{mode}: {subs:?}"),
                _ => assert!(subs.iter().any(|&n| n > 1), "{mode}: {subs:?}"),
            }
            let got = wav::channels(&mix);
            match &plain {
                None => {
                    assert!(got[0].iter().any(|&x| x != 0.0), "{mode}: silence");
                    plain = Some(got);
                }
                Some(want) => {
                    assert_eq!(got.len(), want.len());
                    for ch in 0..want.len() {
                        if let Some((i, a, b)) =
                            fugue_testkit::bits::first_difference(&got[ch], &want[ch])
                        {
                            panic!(
                                "{mode}, --pipeline {pipeline}: channel {ch}, frame {i}: {a}, unpipelined {b}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_pipeline_that_does_not_divide_the_buffer_is_refused() {
    for (p, want) in [
        ("3", "--pipeline 3 does not divide the buffer of 256 frames"),
        ("0", "`0` is not a number of sub-blocks"),
    ] {
        let o = fugue(&[
            "host",
            "--backend",
            "offline",
            "--buffer",
            "256",
            "--pipeline",
            p,
        ]);
        assert_eq!(o.status.code(), Some(2), "{p}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(want), "{p}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `fugue host --backend jack` follows a buffer-size change while it waits for commands
/// (`jack_bufsize 256` on a JACK server of the test's own): `mode` says the new size, the
/// cycles go on, standard error says what was done, and the recording is not silent after
/// the change.
#[test]
fn a_jack_host_follows_a_buffer_size_change_while_idle() {
    use fugue_testkit::jackd::{has, DummyServer};
    if !has("jack_bufsize") {
        common::skip(
            "a_jack_host_follows_a_buffer_size_change_while_idle",
            "jack_bufsize is not installed (Debian package jackd2)",
        );
        return;
    }
    let server = match DummyServer::start("cli-resize", 44_100, 128) {
        Ok(s) => s,
        Err(why) => {
            common::skip("a_jack_host_follows_a_buffer_size_change_while_idle", &why);
            return;
        }
    };
    let dir = folder("host", "jack-resize");
    let g = small_graphs(&dir);
    let socket = dir.join("ctl.sock");
    let mix = dir.join("mix.wav");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"));
    child
        .args(["host", "--backend", "jack"])
        .args(["--client-name", "fugue-cli-resize"])
        .args(["--threads", "2", "--pipeline", "4", "--control"])
        .arg(&socket)
        .arg("--record")
        .arg(&mix)
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Killed if the test fails half-way.
    let mut h = Running::start(child, &socket);
    let (ok, r) = ctl(&socket, &["load", "a", g[0].to_str().unwrap()]);
    assert!(ok && r.contains("pipelined in 4 sub-blocks"), "{r}");
    let (ok, r) = ctl(&socket, &["load", "b", g[1].to_str().unwrap()]);
    assert!(ok, "{r}");
    let (_, r) = ctl(&socket, &["mode"]);
    assert!(r.contains("128 frames"), "{r}");
    std::thread::sleep(Duration::from_millis(200));
    server.set_buffer(256).unwrap();
    // No command for a while: the host follows the change on its own.
    std::thread::sleep(Duration::from_millis(600));
    let (_, r) = ctl(&socket, &["mode"]);
    assert!(r.contains("256 frames"), "{r}");
    let before = cycles(&socket);
    std::thread::sleep(Duration::from_millis(300));
    let after = cycles(&socket);
    assert!(after > before + 10, "playback stalled: {before} -> {after}");
    let (ok, r) = ctl(&socket, &["stats"]);
    assert!(ok && r.contains("1 buffer-size change followed"), "{r}");
    let (ok, r) = ctl(&socket, &["list"]);
    assert!(
        ok && r.starts_with("2 loaded: a") && r.contains("4 sub-blocks"),
        "{r}"
    );
    let (ok, _) = ctl(&socket, &["quit"]);
    assert!(ok);
    let (status, err) = common::stderr_at_exit(&mut h.child);
    assert!(status.success(), "{status}: {err}");
    assert!(
        err.contains("host: JACK buffer size 128 -> 256 frames: 2 graphs compiled again"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let w = wav::channels(&mix);
    let tail = &w[0][w[0].len() - 8820..];
    assert!(tail.iter().any(|&x| x != 0.0), "silence after the change");
}

/// A JACK host whose server stops ends by itself at once, says why in one sentence and exits
/// with status 1, though its standard input stays open and no command comes.
#[test]
fn a_jack_host_ends_when_its_server_stops() {
    use fugue_testkit::jackd::DummyServer;
    let server = match DummyServer::start("cli-gone", 48_000, 256) {
        Ok(s) => s,
        Err(why) => {
            common::skip("a_jack_host_ends_when_its_server_stops", &why);
            return;
        }
    };
    let dir = folder("host", "jack-gone");
    let g = small_graphs(&dir);
    let socket = dir.join("ctl.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"));
    child
        .args(["host", "--backend", "jack"])
        .args(["--client-name", "fugue-cli-gone", "--control"])
        .arg(&socket)
        .env("JACK_DEFAULT_SERVER", server.name())
        // Kept open: the host does not end for want of commands.
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut h = Running::start(child, &socket);
    let (ok, r) = ctl(&socket, &["load", "a", g[0].to_str().unwrap()]);
    assert!(ok, "{r}");
    // A client's wait, cut short by the server's end: it did not play its time, and fails.
    let waiter = {
        let socket = socket.clone();
        std::thread::spawn(move || {
            let o = fugue(&["ctl", socket.to_str().unwrap(), "wait", "20"]);
            (o.status.code(), format!("{}{}", stdout(&o), stderr(&o)))
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = h.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the host still runs 10 s after its server stopped"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    h.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("fugue: the JACK server stopped (")
            && err.contains("the host cannot play on and ends"),
        "{err}"
    );
    assert_eq!(err.matches("JACK server stopped").count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let (code, r) = waiter.join().unwrap();
    assert_eq!(code, Some(1), "{r}");
    assert!(
        r.contains("the JACK server stopped")
            && r.contains("the wait ended after")
            && r.contains("of 20 s"),
        "{r}"
    );
}

/// `--executor auto` in separate mode says at each load what it measured and chose (a JSON
/// field too); a named executor in the shared or partitioned mode is one sentence and exit
/// status 2, and auto there is the pool.
#[test]
fn host_executors_in_separate_mode_and_refused_in_the_pool_modes() {
    let dir = folder("host", "executor");
    let g = small_graphs(&dir);
    let s = dir.join("s.txt");
    std::fs::write(
        &s,
        format!(
            "load a {}\nload b {}\nwait 0.05\nmode\nlist\n",
            g[2].display(),
            g[0].display()
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "host",
            "--backend",
            "offline",
            "--threads",
            "2",
            "--script",
            s.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        fugue(&args)
    };
    let o = run(&["--mode", "separate"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("loaded a") && first.contains("; executor auto: chose "),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("mode separate") && l.ends_with("executor auto")),
        "{out}"
    );
    let o = run(&["--mode", "separate", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let loads: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["command"] == "load")
        .collect();
    assert_eq!(loads.len(), 2);
    for v in &loads {
        let chosen = v["executor"].as_str().unwrap();
        let line = v["auto"].as_str().unwrap();
        assert!(line.contains(&format!("chose {chosen},")), "{v}");
    }
    let o = run(&["--mode", "separate", "--executor", "static", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("\"executor\":\"static 2t\""),
        "{}",
        stdout(&o)
    );

    for mode in ["shared", "partitioned"] {
        let o = run(&["--mode", mode, "--executor", "ws"]);
        assert_eq!(o.status.code(), Some(2), "{mode}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("executor ws does not apply to {mode} mode")),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let o = run(&["--mode", mode, "--executor", "auto"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("executor pool"), "{}", stdout(&o));
    }
}

/// The scheduling policy of each thread of process `pid`, by thread name (field 41 of
/// `/proc/PID/task/TID/stat`: 0 normal, 1 SCHED_FIFO).
fn thread_policies(pid: u32) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let stat = std::fs::read_to_string(t.unwrap().path().join("stat")).unwrap_or_default();
        // `pid (name) state ...`: the name may hold spaces; the fields follow its `)`.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        // Field 41 of the whole line is the 39th after the name (fields 3.. from 0).
        if let Some(p) = fields.get(38).and_then(|f| f.parse().ok()) {
            out.push((name, p));
        }
    }
    out
}

/// `--rt`: the pool's workers run at SCHED_FIFO, and the clocked audio thread too, where the
/// system grants it; where it refuses, the host says so once and plays on.
#[test]
fn rt_runs_the_pool_and_the_audio_thread_at_real_time_priority() {
    if common::one_core("rt_runs_the_pool_and_the_audio_thread_at_real_time_priority") {
        return;
    }
    let dir = folder("host", "rt");
    let g = small_graphs(&dir);
    let h = start_host(&dir, &["--threads", "2", "--rt=10"]);
    let (ok, r) = ctl(&h.socket, &["load", "a", g[0].to_str().unwrap()]);
    assert!(ok, "{r}");
    std::thread::sleep(Duration::from_millis(200));
    let policies = thread_policies(h.child.id());
    let of = |name: &str| policies.iter().find(|(n, _)| n == name).map(|(_, p)| *p);
    let (ok, r) = ctl(&h.socket, &["stats"]);
    assert!(ok, "{r}");
    let (ok, r) = ctl(&h.socket, &["quit"]);
    assert!(ok, "{r}");
    let mut h = h;
    let (status, err) = common::stderr_at_exit(&mut h.child);
    assert!(status.success(), "{err}");
    if err.contains("real-time priority (SCHED_FIFO) was refused") {
        assert_eq!(err.matches("real-time priority").count(), 1, "{err}");
        eprintln!("note: real-time priority refused here; the refusal was said once");
    } else {
        assert_eq!(of("fugue-worker-1"), Some(1), "{policies:?}");
        assert_eq!(of("fugue-host"), Some(1), "{policies:?}");
    }
}

/// `--rt` where it cannot apply is said once and dropped: offline (no deadline), with more
/// threads than cores (a worker spinning at SCHED_FIFO could keep the thread it waits for off
/// every core), and in separate mode (each graph's executor would hold the next one's cores).
#[test]
fn rt_where_it_cannot_apply_is_said_and_dropped() {
    let dir = folder("host", "rt-dropped");
    let g = small_graphs(&dir);
    let script = dir.join("s.txt");
    std::fs::write(
        &script,
        format!("load a {}\nwait 0.05\nquit\n", g[0].display()),
    )
    .unwrap();
    let cores = fugue_exec::placement::available_cores();
    let more = (cores + 1).to_string();
    for (args, said) in [
        (
            vec!["--backend", "offline", "--rt"],
            "--rt applies to the clocked, ALSA and JACK backends".to_string(),
        ),
        (
            vec!["--backend", "clocked", "--rt", "--threads", &more],
            format!("more threads ({more}) than cores ({cores})"),
        ),
        (
            vec!["--backend", "clocked", "--rt", "--mode", "separate"],
            "--rt applies to the shared and partitioned pools".to_string(),
        ),
    ] {
        let mut all = vec!["host", "--script", script.to_str().unwrap()];
        all.extend(args.iter().copied());
        let o = fugue(&all);
        let e = stderr(&o);
        assert!(o.status.success(), "{args:?}: {e}");
        assert_eq!(e.matches(&said).count(), 1, "{args:?}: {e}");
        assert!(!e.contains("SCHED_FIFO) was refused"), "{args:?}: {e}");
    }
}

/// A JACK host runs at the server's rate and buffer size: `--rate` and `--buffer` given are
/// said to be unread, as `run` says them, not passed over.
#[test]
fn a_jack_host_says_it_does_not_read_rate_and_buffer() {
    use fugue_testkit::jackd::DummyServer;
    let server = match DummyServer::start("cli-rate", 44_100, 256) {
        Ok(s) => s,
        Err(why) => {
            common::skip("a_jack_host_says_it_does_not_read_rate_and_buffer", &why);
            return;
        }
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "jack",
            "--client-name",
            "fugue-cli-rate",
        ])
        .args(["--rate", "96000", "--buffer", "64"])
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"quit\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    for flag in ["--rate", "--buffer"] {
        assert!(
            err.contains(&format!("warning: {flag} applies to the clocked, ALSA and offline backends (JACK runs at the server's rate and buffer size); the jack backend does not read it")),
            "{err}"
        );
    }
}
