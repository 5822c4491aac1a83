//! `fugue run`: clocked runs with their statistics, Ctrl-C, no JACK server, and the JACK
//! server dying while a run plays (a private server, started here when jackd is installed).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fugue() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fugue-cli-run-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn example_graph() -> PathBuf {
    let p = tmp("rake.ag");
    if !p.exists() {
        let st = fugue()
            .args(["gen", "rake", "--branches", "10", "-o"])
            .arg(&p)
            .status()
            .unwrap();
        if !st.success() {
            // Fall back to writing a small rake by hand.
            std::fs::write(
                &p,
                "o = { kind: \"osc\", freq: 440, };\nm = { kind: \"mod\", freq: 55, };\ns = { kind: \"sink\", };\no.1 -> m.1 -> s.1;\n",
            )
            .unwrap();
        }
    }
    p
}

/// `DIR/tone.ag`: a sine at 0.5 into a sink (the folder made first).
fn tone_graph(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let graph = dir.join("tone.ag");
    std::fs::write(
        &graph,
        "o = { kind: \"osc\", freq: 440, volume: 0.5, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n",
    )
    .unwrap();
    graph
}

fn rows(csv: &Path) -> usize {
    std::fs::read_to_string(csv).unwrap().lines().count() - 1
}

fn wait_timeout(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn cycles_in(stdout: &str) -> usize {
    let i = stdout.find("cycles ").expect("a summary line") + 7;
    stdout[i..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn clocked_run_writes_stats_and_refuses_to_overwrite() {
    let g = example_graph();
    let csv = tmp("clocked.csv");
    let _ = std::fs::remove_file(&csv);
    let out = fugue()
        .arg("run")
        .arg(&g)
        .args(["--backend", "clocked", "--rate", "48000", "--buffer", "480"])
        .args([
            "--executor",
            "ws",
            "--threads",
            "2",
            "--duration",
            "0.5",
            "--stats",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 0.5 s × 48000 / 480 = 50 cycles.
    assert_eq!(cycles_in(&stdout), 50, "{stdout}");
    assert_eq!(rows(&csv), 50);
    for w in [
        "mean",
        "median",
        "p99",
        "max",
        "deadline misses",
        "overruns",
    ] {
        assert!(stdout.contains(w), "{w} missing from {stdout}");
    }
    let again = fugue()
        .arg("run")
        .arg(&g)
        .args(["--backend", "clocked", "--duration", "0.1", "--stats"])
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
}

#[test]
fn ctrl_c_writes_the_statistics_so_far() {
    let g = example_graph();
    let csv = tmp("ctrlc.csv");
    let _ = std::fs::remove_file(&csv);
    let mut child = fugue()
        .arg("run")
        .arg(&g)
        .args(["--backend", "clocked", "--buffer", "256", "--stats"])
        .arg(&csv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    signal(child.id(), "-INT");
    let st = wait_timeout(&mut child, Duration::from_secs(10));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 128 + SIGINT, as a shell reports a program that Ctrl-C stopped.
    assert_eq!(st.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    let n = cycles_in(&stdout);
    assert!(n > 10, "{stdout}");
    assert_eq!(rows(&csv), n);
}

#[test]
fn no_jack_server_is_one_clear_sentence() {
    let g = example_graph();
    let out = fugue()
        .arg("run")
        .arg(&g)
        .args(["--backend", "jack", "--duration", "1"])
        .env(
            "JACK_DEFAULT_SERVER",
            format!("fugue-absent-{}", std::process::id()),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The server JACK_DEFAULT_SERVER names is the one said, with how to start it.
    let name = format!("fugue-absent-{}", std::process::id());
    assert!(
        stderr.contains(&format!(
            "no JACK server named `{name}` (JACK_DEFAULT_SERVER) is running; start it with `jackd -n {name} -d dummy"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("--backend clocked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn jackd_dying_ends_the_run_cleanly_with_statistics() {
    let have = Command::new("sh")
        .args([
            "-c",
            "command -v jackd >/dev/null && command -v jack_wait >/dev/null",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        println!("skipped: jackd is not installed");
        return;
    }
    let server = format!("fugue-kill-{}", std::process::id());
    let mut jackd = Command::new("jackd")
        .args(["-n", &server, "-d", "dummy", "-r", "44100", "-p", "256"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let up = Command::new("jack_wait")
        .args(["-s", &server, "-w", "-t", "5"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !up {
        let _ = jackd.kill();
        let _ = jackd.wait();
        println!("skipped: jackd did not start");
        return;
    }
    let g = example_graph();
    let csv = tmp("killed.csv");
    let _ = std::fs::remove_file(&csv);
    let mut child = fugue()
        .arg("run")
        .arg(&g)
        .args([
            "--backend",
            "jack",
            "--executor",
            "ws",
            "--threads",
            "2",
            "--stats",
        ])
        .arg(&csv)
        .env("JACK_DEFAULT_SERVER", &server)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(jackd.id(), "-TERM");
    let _ = wait_timeout(&mut jackd, Duration::from_secs(10));
    let st = wait_timeout(&mut child, Duration::from_secs(10));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(st.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("the JACK server stopped"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let n = cycles_in(&stdout);
    assert!(n > 20, "{stdout}");
    assert_eq!(rows(&csv), n);
}

/// `fugue run` with `args` and no JACK server (a server name nobody runs).
fn run_without_jack(args: &[&str]) -> std::process::Output {
    let g = example_graph();
    fugue()
        .arg("run")
        .arg(&g)
        .args(args)
        .env(
            "JACK_DEFAULT_SERVER",
            format!("fugue-absent-{}", std::process::id()),
        )
        .output()
        .unwrap()
}

#[test]
fn alsa_null_run_plays_its_seconds_and_says_what_the_device_granted() {
    let csv = tmp("alsa.csv");
    let _ = std::fs::remove_file(&csv);
    let start = Instant::now();
    let out = run_without_jack(&[
        "--backend",
        "alsa",
        "--device",
        "null",
        "--seconds",
        "1",
        "--stats",
        csv.to_str().unwrap(),
    ]);
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // round(1 s × 48000 / 256) = 188 cycles, paced by the clock.
    assert_eq!(cycles_in(&stdout), 188, "{stdout}");
    assert_eq!(rows(&csv), 188);
    assert!(took >= Duration::from_millis(950), "{took:?}");
    assert!(
        stderr.contains("ALSA device null: asked 48000 Hz, 256-frame periods, 2 periods")
            && stderr.contains("granted 48000 Hz"),
        "{stderr}"
    );
    // (On one core auto has one candidate, and says nothing.)
    if fugue_exec::placement::available_cores() >= 2 {
        assert!(stderr.contains("executor auto:"), "{stderr}");
    }
}

/// A run of `--seconds S` lasts S seconds of wall time also when its periods are long: the
/// device's first periods, written at once to fill its buffer, and the last cycle's period
/// are played out before it ends (clocked: the last period passes).
#[test]
fn a_run_with_long_periods_lasts_its_seconds() {
    for backend in [
        &["--backend", "clocked"][..],
        &["--backend", "alsa", "--device", "null"],
    ] {
        let start = Instant::now();
        let mut args = backend.to_vec();
        args.extend(["--buffer", "24000", "--seconds", "2", "-e", "seq"]);
        let out = run_without_jack(&args);
        let took = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{backend:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(cycles_in(&stdout), 4, "{backend:?}: {stdout}");
        // Before, 1.5 s clocked (its last period not waited for) and 1.0 s on ALSA (two of
        // its four periods filled the buffer at once).
        assert!(took >= Duration::from_millis(1950), "{backend:?}: {took:?}");
        assert!(took < Duration::from_secs(6), "{backend:?}: {took:?}");
    }
}

/// `--rt` takes its priority only as `--rt=N`: the word after a bare `--rt` is the graph.
#[test]
fn a_bare_rt_flag_leaves_the_next_word_to_the_graph() {
    let g = example_graph();
    let out = fugue()
        .args(["run", "--rt"])
        .arg(&g)
        .args(["--backend", "clocked", "--seconds", "0.1", "-e", "seq"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(cycles_in(&String::from_utf8_lossy(&out.stdout)), 19);
}

#[test]
fn the_auto_backend_plays_on_alsa_when_no_jack_server_runs() {
    let out = run_without_jack(&["--device", "null", "--seconds", "0.3", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["backend"], "alsa", "{v}");
    assert!(v["cycles"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn no_jack_server_and_no_alsa_device_is_one_sentence_saying_what_to_do() {
    for args in [
        &["--device", "fugue-no-such-device", "--seconds", "1"][..],
        &[
            "--backend",
            "alsa",
            "--device",
            "fugue-no-such-device",
            "--seconds",
            "1",
        ],
    ] {
        let out = run_without_jack(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("ALSA playback device \"fugue-no-such-device\" cannot be opened"),
            "{stderr}"
        );
        if args[0] == "--device" {
            assert!(
                stderr.contains("no JACK server is running")
                    && stderr.contains("--backend clocked"),
                "{stderr}"
            );
        }
    }
}

/// `fugue run GRAPH --backend clocked -e seq FLAGS`, then again with `--strict`: each run's
/// output, the second's after the first's.
fn clocked_and_strict(graph: &Path, flags: &[&str]) -> [std::process::Output; 2] {
    [false, true].map(|strict| {
        let mut c = fugue();
        c.arg("run")
            .arg(graph)
            .args(["--backend", "clocked", "-e", "seq"])
            .args(flags);
        if strict {
            c.arg("--strict");
        }
        c.output().unwrap()
    })
}

/// A feedback loop with a gain of 2 overflows within a second: the run plays those samples
/// as silence, says how many there were, and fails under `--strict` (after its summary).
#[test]
fn a_run_says_what_it_played_as_silence_for_not_being_finite() {
    let g = tmp("blow.ag");
    std::fs::write(
        &g,
        "a = { kind: \"osc\", freq: 100, };\nm = { kind: \"mix\", volume: 2, };\nout = { kind: \"sink\", in: 1, };\na.1 -> m.1;\nm.1 ~> m.2;\nm.1 -> out.1;\n",
    )
    .unwrap();
    let runs = clocked_and_strict(&g, &["--seconds", "0.5", "--buffer", "16"]);
    for (strict, o) in [false, true].into_iter().zip(runs) {
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(if strict { 1 } else { 0 }), "{e}");
        assert!(
            e.contains(
                "output samples were not finite numbers (NaN or infinity) and played as silence"
            ),
            "{e}"
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("cycles"),
            "the summary first"
        );
    }
}

/// An audio graph without a sink plays silence: said as a warning (and refused by
/// `--strict`), while a task graph (no kinds) is run for its cycles without one, its nodes
/// played as silence (`--placeholder`) said in one warning.
#[test]
fn a_run_of_an_audio_graph_without_a_sink_says_it_plays_silence() {
    let g = tmp("nosink.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 100, };\ng = { kind: \"gain\", };\no.1 -> g.1;\n",
    )
    .unwrap();
    let runs = clocked_and_strict(&g, &["--seconds", "0.1"]);
    for (strict, o) in [false, true].into_iter().zip(runs) {
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(if strict { 1 } else { 0 }), "{e}");
        assert!(
            e.contains("the graph has no sink node, so none of it is heard"),
            "{e}"
        );
    }
    let t = tmp("tasks.stg");
    std::fs::write(&t, "2\n0 0 0\n1 5 1 0\n2 5 1 0\n3 0 2 1 2\n").unwrap();
    let o = fugue()
        .arg("run")
        .arg(&t)
        .args([
            "--backend",
            "clocked",
            "--seconds",
            "0.1",
            "-e",
            "seq",
            "--placeholder",
            "--strict",
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!e.contains("no sink"), "{e}");
    // Its tasks, of no kind, play as silence: said once for them all, as render says it,
    // and not refused by --strict (the silence was asked for).
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("node `0` has an unknown kind `task`; it plays as silence (--placeholder) (and 3 more nodes of unknown kind: `1`, `2`, `3`)"),
        "{e}"
    );
    let o = fugue()
        .arg("run")
        .arg(&t)
        .args([
            "--backend",
            "clocked",
            "--seconds",
            "0.1",
            "-e",
            "seq",
            "--placeholder",
        ])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert_eq!(e.matches("has an unknown kind").count(), 1, "{e}");
}

/// Under JACK with pinned threads, JACK's process thread (SCHED_FIFO, the one that runs the
/// cycles) is pinned to the first core at its first callback, the workers being pinned to the
/// others: left where JACK puts it, it may sit on a worker's core, which then never runs
/// while a cycle waits for it.
#[test]
fn jacks_process_thread_is_pinned_to_the_audio_core() {
    use fugue_testkit::jackd::DummyServer;
    let server = match DummyServer::start("cli-pin", 48_000, 256) {
        Ok(s) => s,
        Err(why) => {
            common::skip("jacks_process_thread_is_pinned_to_the_audio_core", &why);
            return;
        }
    };
    let allowed = |status: &str| -> Option<String> {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
    };
    let own = allowed(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap();
    if !own.contains(['-', ',']) {
        common::skip(
            "jacks_process_thread_is_pinned_to_the_audio_core",
            "this process may use one core only",
        );
        return;
    }
    let first = own.split([',', '-']).next().unwrap().trim().to_string();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "run",
            &common::example("synth.ag"),
            "--backend",
            "jack",
            "--seconds",
            "2",
            "-e",
            "ws",
            "-t",
            "2",
        ])
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    // The threads at SCHED_FIFO (policy 1, the 41st field of `stat`) and their cores.
    let mut fifo = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .unwrap()
        .flatten()
    {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // After the command's name in parentheses, fields from the 3rd on.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(38) == Some(&"1") {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            fifo.push(allowed(&status).unwrap_or_default());
        }
    }
    let status = child.wait_with_output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    if fifo.is_empty() {
        common::skip(
            "jacks_process_thread_is_pinned_to_the_audio_core",
            "the JACK server gives its clients no real-time thread here",
        );
        return;
    }
    assert_eq!(fifo, vec![first], "JACK's process thread's cores");
}

/// A live `set` to a JACK run stays when the server changes its buffer size: the run compiles
/// the graph again as the changes left it, not as the file gave it (every tenth of a second
/// recorded plays the tone at the volume set, the run still playing at the end).
#[test]
fn a_live_set_stays_through_a_jack_buffer_size_change() {
    use fugue_testkit::jackd::{has, DummyServer};
    if !has("jack_rec") || !has("jack_bufsize") {
        common::skip(
            "a_live_set_stays_through_a_jack_buffer_size_change",
            "jack_rec or jack_bufsize is not installed (Debian package jackd2)",
        );
        return;
    }
    let server = match DummyServer::start("cli-live-resize", 48_000, 256) {
        Ok(s) => s,
        Err(why) => {
            common::skip("a_live_set_stays_through_a_jack_buffer_size_change", &why);
            return;
        }
    };
    let dir = tmp("live-resize");
    let graph = tone_graph(&dir);
    let socket = dir.join("t.sock");
    let _ = std::fs::remove_file(&socket);
    let client = format!("fugue-live-{}", std::process::id());
    let mut run = fugue()
        .arg("run")
        .arg(&graph)
        .args([
            "--backend",
            "jack",
            "--seconds",
            "4",
            "-e",
            "seq",
            "--control",
        ])
        .arg(&socket)
        .args(["--client-name", &client])
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    fugue_testkit::host::wait_for_socket(&socket);
    let o = fugue()
        .args([
            "ctl",
            socket.to_str().unwrap(),
            "set",
            "tone",
            "o",
            "volume",
            "0.25",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    std::thread::sleep(Duration::from_millis(200));
    let rec = dir.join("rec.wav");
    let _ = std::fs::remove_file(&rec);
    let mut recorder = Command::new("jack_rec")
        .arg("-f")
        .arg(&rec)
        .args(["-d", "1.5", "-b", "16", &format!("{client}:out_1")])
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    server.set_buffer(128).unwrap();
    assert!(recorder.wait().unwrap().success(), "jack_rec failed");
    // Still playing (not ended by a failed recompilation), then stopped.
    assert!(run.try_wait().unwrap().is_none(), "the run ended early");
    let _ = run.kill();
    let _ = run.wait();
    // jack_rec writes 16-bit integers: the tone at 0.25 peaks near 8192, at the file's 0.5
    // near 16384.
    let samples: Vec<i16> = hound::WavReader::open(&rec)
        .unwrap()
        .into_samples::<i16>()
        .map(|x| x.unwrap())
        .collect();
    assert!(samples.len() > 24_000, "{} samples recorded", samples.len());
    // Every 0.1 s of the recording (before and after the change) plays the tone at 0.25.
    for (i, part) in samples.chunks(4800).filter(|c| c.len() == 4800).enumerate() {
        let peak = part.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
        assert!(
            (7_500..=8_800).contains(&peak),
            "0.1 s part {i} peaks at {peak}: not the tone at 0.25 (the file's 0.5 is about 16384)"
        );
    }
}

/// `--stats` and `--control` naming one path (however spelled) is a usage error before
/// anything is made there.
#[test]
fn stats_and_control_on_one_path_are_refused() {
    let dir = tmp("one-path");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("same.x");
    let _ = std::fs::remove_file(&p);
    let o = fugue()
        .arg("run")
        .arg(example_graph())
        .args([
            "--backend",
            "clocked",
            "--seconds",
            "0.2",
            "-e",
            "seq",
            "--control",
        ])
        .arg(&p)
        .arg("--stats")
        .arg(dir.join(".").join("same.x"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--stats and --control both name") && e.lines().count() == 1,
        "{e}"
    );
    assert!(!p.exists(), "something was made at {}", p.display());
}

/// The run's control socket, as the host's: a line with no command (blank, a comment) gets
/// no reply, and a `wait` that the run's end cuts short names no cycle (a run counts none
/// for its replies).
#[test]
fn the_run_socket_skips_blank_lines_and_a_cut_wait_names_no_cycle() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixStream;
    let dir = tmp("run-socket-lines");
    let graph = tone_graph(&dir);
    let socket = dir.join("r.sock");
    let _ = std::fs::remove_file(&socket);
    let mut run = fugue()
        .arg("run")
        .arg(&graph)
        .args([
            "--backend",
            "clocked",
            "--seconds",
            "30",
            "-e",
            "seq",
            "--control",
        ])
        .arg(&socket)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    fugue_testkit::host::wait_for_socket(&socket);
    let mut s = UnixStream::connect(&socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"\n   \n# a comment\nset tone o volume 0.25\n")
        .unwrap();
    let mut lines = BufReader::new(s.try_clone().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(
        first == "tone: o volume = 0.25 from the next cycle",
        "the first reply is the set's: {first}"
    );
    // A wait cut short by the run's end (a quit from another client).
    s.write_all(b"wait 20\n").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let q = fugue()
        .args(["ctl", socket.to_str().unwrap(), "quit"])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stdout));
    let waited = lines.next().unwrap().unwrap();
    assert!(
        waited.starts_with("waited ") && !waited.contains("cycle"),
        "{waited}"
    );
    let st = run.wait().unwrap();
    assert!(st.success(), "{st:?}");
}

/// A graph with `source` nodes run on a backend without inputs (clocked): they play silence,
/// said once with the first source's place in the file, and refused by `--strict`.
#[test]
fn sources_on_a_backend_without_inputs_are_said_to_play_silence() {
    let g = tmp("sources.ag");
    std::fs::write(
        &g,
        "mic = { kind: \"source\", out: 2, };\nout = { kind: \"sink\", in: 2, };\nmic.1 -> out.1;\nmic.2 -> out.2;\n",
    )
    .unwrap();
    let runs = clocked_and_strict(&g, &["--seconds", "0.1"]);
    for (strict, o) in [false, true].into_iter().zip(runs) {
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(if strict { 1 } else { 0 }), "{e}");
        assert!(
            e.contains("sources.ag:1:1: `source` node `mic` plays silence: the clocked backend has no inputs"),
            "{e}"
        );
    }
}

/// A client name the server already has: the second client is renamed (`NAME-01`), said in
/// a warning; where the name is too long for a suffix, the server's refusal is said as
/// such, not as a server that is not running (which would send `--backend auto` to ALSA).
#[test]
fn a_jack_client_name_taken_is_said() {
    let server = match fugue_testkit::jackd::DummyServer::start("name-taken", 48000, 256) {
        Ok(s) => s,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let g = example_graph();
    let long = "b".repeat(63);
    for (name, renamed) in [("dup", true), (long.as_str(), false)] {
        let mut first = fugue()
            .arg("run")
            .arg(&g)
            .args([
                "--backend",
                "jack",
                "--executor",
                "seq",
                "--client-name",
                name,
            ])
            .args(["--seconds", "3"])
            .env("JACK_DEFAULT_SERVER", server.name())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Until the first client's port is there (10 s at most).
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            let lsp = Command::new("jack_lsp")
                .env("JACK_DEFAULT_SERVER", server.name())
                .output()
                .unwrap();
            if String::from_utf8_lossy(&lsp.stdout).contains(&format!("{name}:")) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let second = fugue()
            .arg("run")
            .arg(&g)
            .args([
                "--backend",
                "jack",
                "--executor",
                "seq",
                "--client-name",
                name,
            ])
            .args(["--seconds", "0.2"])
            .env("JACK_DEFAULT_SERVER", server.name())
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&second.stderr);
        if renamed {
            assert!(second.status.success(), "{e}");
            assert!(
                e.contains("another JACK client is named `dup`: this one is `dup-01`"),
                "{e}"
            );
        } else {
            assert_eq!(second.status.code(), Some(1), "{e}");
            assert!(
                e.contains("JACK: the server refused the client") && !e.contains("no JACK server"),
                "{e}"
            );
        }
        let _ = first.kill();
        let _ = first.wait();
    }
}

/// A JACK buffer size the graph cannot run at (a resampler whose ratio does not divide it)
/// ends the run as a lost server does: said with the size and the reason, exit status 1,
/// the summary printed and the statistics kept.
#[test]
fn a_jack_buffer_size_the_graph_cannot_run_at_ends_the_run_with_its_statistics() {
    let server = match fugue_testkit::jackd::DummyServer::start("unplayable", 48000, 256) {
        Ok(s) => s,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let dir = tmp("unplayable");
    let _ = std::fs::create_dir_all(&dir);
    let g = dir.join("resamp.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 220, };\nr = { kind: \"resampler\", ratio: 0.015625, };\nu = { kind: \"resampler\", ratio: 64, };\ns = { kind: \"sink\", };\no.1 -> r.1 -> u.1 -> s.1;\n",
    )
    .unwrap();
    let csv = dir.join("rs.csv");
    let _ = std::fs::remove_file(&csv);
    let child = fugue()
        .arg("run")
        .arg(&g)
        .args(["--backend", "jack", "--executor", "seq", "--seconds", "20"])
        .arg("--stats")
        .arg(&csv)
        .env("JACK_DEFAULT_SERVER", server.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    server.set_buffer(32).unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("the JACK server changed its buffer size to 32 frames, at which the graph cannot run (node `r` (resampler)")
            && stderr.contains("the statistics so far were kept"),
        "{stderr}"
    );
    let n = cycles_in(&stdout);
    assert!(n > 0, "{stdout}");
    assert_eq!(rows(&csv), n);
}

/// A clocked run whose cycles take longer than the period says that it did not keep pace
/// and how many periods ran no cycle; its cycles and those periods make up the run's length.
/// `--threads` ignored by seq is not reported as the threads that played.
#[test]
fn a_clocked_run_that_falls_behind_says_the_periods_it_skipped() {
    let dir = tmp("behind");
    std::fs::create_dir_all(&dir).unwrap();
    let graph = dir.join("slow.ag");
    // 100 µs of work in each period of 1 frame (20.8 µs at 48 kHz).
    std::fs::write(
        &graph,
        "l = { kind: \"load\", wcet: 100, };\nout = { kind: \"sink\", in: 1, };\nl.1 -> out.1;\n",
    )
    .unwrap();
    let v = clocked_json(&graph, "1", "0.3", &["-e", "seq", "-t", "2"]);
    assert_eq!(v["threads"], 1, "{v}");
    let (cycles, overruns, skipped) = (
        v["cycles"].as_u64().unwrap(),
        v["overruns"].as_u64().unwrap(),
        v["skipped_periods"].as_u64().unwrap(),
    );
    assert!(overruns > 0 && skipped > cycles, "{v}");
    // 0.3 s is 14,400 periods: each ran a cycle or was skipped (a few around the start).
    let all = cycles + skipped;
    assert!((13_000..=14_500).contains(&all), "{cycles} + {skipped}");
    let o = clocked(&graph, "1", "0.3", &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("the run did not keep pace") && out.contains("periods ran no cycle"),
        "{out}"
    );
}

/// `run --json` says the sub-blocks each cycle was cut into, as `render --json` does.
#[test]
fn run_json_says_the_pipeline_that_played() {
    let graph = example_graph();
    for (pipeline, want) in [("4", 4), ("1", 1)] {
        let v = clocked_json(
            &graph,
            "256",
            "0.2",
            &["-e", "ws", "-t", "2", "--pipeline", pipeline],
        );
        assert_eq!(v["pipeline"], want, "{v}");
    }
}

/// `fugue run --backend clocked --buffer BUFFER --seconds SECONDS EXTRA... GRAPH`.
fn clocked(graph: &Path, buffer: &str, seconds: &str, extra: &[&str]) -> std::process::Output {
    fugue()
        .args([
            "run",
            "--backend",
            "clocked",
            "--buffer",
            buffer,
            "--seconds",
            seconds,
        ])
        .args(extra)
        .arg(graph)
        .output()
        .unwrap()
}

/// [`clocked`] with `--json`, which must succeed: its report.
fn clocked_json(graph: &Path, buffer: &str, seconds: &str, extra: &[&str]) -> serde_json::Value {
    let o = clocked(graph, buffer, seconds, &[extra, &["--json"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}
