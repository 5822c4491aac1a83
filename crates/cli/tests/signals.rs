//! SIGINT, SIGTERM and SIGHUP stop fugue alike: temporary files removed, what was complete
//! kept, one line on standard error, exit code 128 + the signal's number.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::example;

fn folder(name: &str) -> PathBuf {
    common::folder("signals-cli", name)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .env_remove(common::FAULT_VAR)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn send(child: &Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our own child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Waits (at most 30 s) until `ready` holds.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The exit code, standard output and standard error of a child, killed after 30 s.
fn finish(mut child: Child) -> (Option<i32>, String, String) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("fugue did not stop within 30 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const SIGNALS: [(i32, &str); 3] = [
    (libc::SIGINT, "SIGINT"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGHUP, "SIGHUP"),
];

/// A render of 10,000 s of rake.ag into `out` (in folder `d`), over a file of the user's
/// that it is to replace, with the `extra` flags; returned once its temporary file exists.
fn long_render(d: &Path, out: &Path, extra: &[&str]) -> Child {
    std::fs::write(out, "the user's file").unwrap();
    let mut args = vec![
        "render".to_string(),
        example("rake.ag"),
        "-o".into(),
        out.to_str().unwrap().into(),
        "--seconds".into(),
        "10000".into(),
        "--force".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let child = spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    wait_for("the render did not start", || {
        listing(d).iter().any(|n| n.ends_with(".part"))
    });
    child
}

/// A render stopped by any of the three signals leaves no temporary file, keeps the file it
/// was to replace, says so in one line and exits with 128 + the signal.
#[test]
fn a_stopped_render_keeps_the_old_file() {
    for (sig, name) in SIGNALS {
        let d = folder(name);
        let out = d.join("out.wav");
        let child = long_render(&d, &out, &[]);
        send(&child, sig);
        let (code, _, err) = finish(child);
        assert_eq!(code, Some(128 + sig), "{name}: {err}");
        assert_eq!(
            err.trim(),
            format!(
                "fugue: interrupted by {name}; {} was not written",
                out.display()
            ),
            "{name}"
        );
        assert_eq!(listing(&d), ["out.wav"], "{name}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "the user's file");
    }
}

/// A render stops between two cycles; one whose cycle takes long (twenty `load` nodes of a
/// second each) does not keep the process past the stop's grace: it ends as at a second
/// signal, the file it was to replace kept, no temporary file left.
#[test]
fn a_long_cycle_does_not_hold_a_stop() {
    let d = folder("long-cycle");
    let g = slow_graph(&d);
    let out = d.join("out.wav");
    std::fs::write(&out, "the user's file").unwrap();
    let child = spawn(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "1",
        "--executor",
        "seq",
        "--force",
    ]);
    wait_for("the render did not start", || {
        listing(&d).iter().any(|n| n.ends_with(".part"))
    });
    let signalled = Instant::now();
    send(&child, libc::SIGTERM);
    let (code, _, err) = finish(child);
    // A cycle takes 20 s: the stop came well before its end.
    assert!(signalled.elapsed() < Duration::from_secs(15), "{err}");
    assert_eq!(code, Some(128 + libc::SIGTERM), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "fugue: stopped by SIGTERM: the step in progress (a cycle) did not end within 2 s; {} not written",
            out.display()
        )
    );
    assert_eq!(listing(&d), ["out.wav", "slow.ag"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "the user's file");
}

/// A graph whose one cycle takes 20 s (twenty `load` nodes of a second each), in `d`.
fn slow_graph(d: &Path) -> PathBuf {
    let g = d.join("slow.ag");
    let mut text = String::from("o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\n");
    for i in 0..20 {
        text += &format!("l{i} = {{ kind: \"load\", wcet: 1000000, }};\n");
    }
    text += "o.1";
    for i in 0..20 {
        text += &format!(" -> l{i}.1");
    }
    text += " -> s.1;\n";
    std::fs::write(&g, text).unwrap();
    g
}

/// A profile stops between two cycles, as a render does; a cycle that takes long does not
/// keep the process past the stop's grace, and its report folder is not written.
#[test]
fn a_long_cycle_does_not_hold_a_profiles_stop() {
    let d = folder("long-cycle-profile");
    let g = slow_graph(&d);
    let report = d.join("report");
    let child = spawn(&[
        "profile",
        g.to_str().unwrap(),
        "--seconds",
        "1",
        "-o",
        report.to_str().unwrap(),
    ]);
    // The profile is in its first cycle well within a second (the graph compiles at once).
    std::thread::sleep(Duration::from_millis(800));
    let signalled = Instant::now();
    send(&child, libc::SIGTERM);
    let (code, _, err) = finish(child);
    assert!(signalled.elapsed() < Duration::from_secs(15), "{err}");
    assert_eq!(code, Some(128 + libc::SIGTERM), "{err}");
    assert!(
        err.contains(
            "fugue: stopped by SIGTERM: the step in progress (a cycle) did not end within 2 s"
        ),
        "{err}"
    );
    assert_eq!(listing(&d), ["slow.ag"]);
}

/// A signal delivered twice at once (`timeout` signals its command, then the command's
/// process group) is one request: a recording host still stops cleanly, its recording
/// closed whole and its summary said; it ended the process at once (the recording cut at
/// its last header update, nothing said but "stopped by SIGINT").
#[test]
fn a_signal_delivered_twice_is_one_request() {
    let d = folder("twice");
    let rec = d.join("rec.wav");
    let _ = std::fs::remove_file(&rec);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "clocked", "--record"])
        .arg(&rec)
        .env_remove(common::FAULT_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "load a {}", example("pluck.ag")).unwrap();
    }
    wait_for("the recording did not start", || {
        std::fs::metadata(&rec).is_ok_and(|m| m.len() > 44)
    });
    send(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(5));
    send(&child, libc::SIGINT);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("host: ") && err.contains("recorded"), "{err}");
    assert!(err.contains("what was complete was kept"), "{err}");
    let wav = std::fs::read(&rec).unwrap();
    let r = hound::WavReader::new(std::io::Cursor::new(&wav)).unwrap();
    let declared = r.duration() as usize * r.spec().channels as usize;
    assert_eq!(
        r.into_samples::<f32>().filter(|s| s.is_ok()).count(),
        declared
    );
}

/// A render with `--profile=DIR` stopped by a signal keeps the old output file and writes
/// the profile of the cycles it rendered.
#[test]
fn a_stopped_profiled_render_keeps_its_profile() {
    let d = folder("profiled-render");
    let out = d.join("out.wav");
    let report = d.join("report");
    let profile = format!("--profile={}", report.display());
    let child = long_render(&d, &out, &["--executor", "seq", &profile]);
    std::thread::sleep(Duration::from_millis(300));
    send(&child, libc::SIGINT);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("offline render stopped after"), "{err}");
    assert!(
        err.trim_end().ends_with(&format!(
            "fugue: interrupted by SIGINT; {} was not written",
            out.display()
        )),
        "{err}"
    );
    assert!(report.join("profile.txt").is_file(), "{:?}", listing(&d));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "the user's file");
}

/// `run` stopped by any of the three signals prints its summary and writes its statistics,
/// on the clocked backend and on ALSA's null device.
#[test]
fn a_stopped_run_keeps_its_statistics() {
    let backends: [&[&str]; 2] = [
        &["--backend", "clocked"],
        &["--backend", "alsa", "--device", "null"],
    ];
    for (backend, (sig, name)) in backends
        .into_iter()
        .flat_map(|b| SIGNALS.into_iter().map(move |s| (b, s)))
    {
        let d = folder(&format!("run-{}-{name}", backend[1]));
        let csv = d.join("cycles.csv");
        let graph = example("rake.ag");
        let mut args = vec!["run", &graph];
        args.extend_from_slice(backend);
        args.extend_from_slice(&["--buffer", "256", "--stats", csv.to_str().unwrap()]);
        let child = spawn(&args);
        // The statistics' temporary file is there before the run starts; it holds a record
        // (its header and a row, flushed every fifth of a second) once cycles have run.
        wait_for("the run did not start", || {
            listing(&d).iter().any(|n| {
                n.ends_with(".part")
                    && std::fs::read_to_string(d.join(n)).is_ok_and(|t| t.lines().count() >= 2)
            })
        });
        send(&child, sig);
        let (code, out, err) = finish(child);
        assert_eq!(code, Some(128 + sig), "{name}: {err}");
        assert!(out.contains("cycles "), "{name}: {out}");
        let cycles: usize = out
            .split("cycles ")
            .nth(1)
            .and_then(|t| t.split(',').next())
            .and_then(|n| n.parse().ok())
            .expect("a cycle count");
        assert!(cycles > 0, "{out}");
        assert!(
            err.contains(&format!(
                "interrupted by {name} after {cycles} cycle{}",
                if cycles == 1 { "" } else { "s" }
            )) && err.contains("per-cycle statistics in"),
            "{name}: {err}"
        );
        let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
        assert_eq!(rows, cycles, "{name}");
        assert_eq!(listing(&d), ["cycles.csv"], "{name}");
    }
}

/// A command that does not stop on request (calibrate) ends at once on SIGTERM, with the
/// same exit code and a line that says why.
#[test]
fn a_command_without_a_stop_request_ends_at_once() {
    let d = folder("calibrate");
    let out = d.join("costs.csv");
    let child = spawn(&[
        "calibrate",
        &example("rake.ag"),
        // Within calibrate's memory for the rake's 15 nodes, and tens of seconds long.
        "--cycles",
        "2000000",
        "-o",
        out.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(500));
    send(&child, libc::SIGTERM);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(143), "{err}");
    assert_eq!(err.trim(), "fugue: stopped by SIGTERM");
    assert!(listing(&d).is_empty());
}

/// A study spec read from a named pipe that no one writes: SIGTERM ends `bench study` at
/// once, as it ends the other commands that read a graph from one.
#[test]
fn a_study_spec_that_never_comes_is_stopped_by_a_signal() {
    let d = folder("study-fifo");
    let fifo = d.join("spec.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo has no other precondition.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = spawn(&["bench", "study", fifo.to_str().unwrap(), "--dry-run"]);
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    send(&child, libc::SIGTERM);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(143), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(err.contains("SIGTERM"), "{err}");
}

/// A signal stops a clocked run and a clocked host within a moment even when a period lasts
/// seconds (8,192 frames at 1,000 Hz: 8.2 s): the audio thread's sleep looks at the stop
/// request, it does not end the period first.
#[test]
fn a_long_period_does_not_delay_a_stop() {
    let d = folder("long-period");
    let g = d.join("n.ag");
    std::fs::write(
        &g,
        "n = { kind: \"noise\", };\ns = { kind: \"sink\", };\nn.1 -> s.1;\n",
    )
    .unwrap();
    let slow = ["--backend", "clocked", "--rate", "1000", "--buffer", "8192"];
    let mut run = vec!["run", g.to_str().unwrap(), "-e", "seq"];
    run.extend(slow);
    let mut host = vec!["host"];
    host.extend(slow);
    for args in [run, host] {
        let child = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(&args)
            .env_remove(common::FAULT_VAR)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Within the first period.
        std::thread::sleep(Duration::from_millis(800));
        send(&child, libc::SIGINT);
        let t = Instant::now();
        let (code, _, err) = finish(child);
        assert_eq!(code, Some(130), "{args:?}: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "{args:?} took {:?} to stop",
            t.elapsed()
        );
    }
}

/// `bench faust` stopped while it builds Faust's programs removes its working folder (the
/// builds' sources and binaries were left in the temporary folder).
#[test]
fn a_stopped_faust_benchmark_leaves_no_working_folder() {
    if !fugue_faust::available_for("a_stopped_faust_benchmark_leaves_no_working_folder")
        || std::process::Command::new("faust")
            .arg("--version")
            .output()
            .is_err()
    {
        return;
    }
    let out = folder("bench-faust-stopped");
    let child = spawn(&[
        "bench",
        "faust",
        "--programs",
        "karplus32",
        "--threads",
        "1",
        "--seconds",
        "0.1",
        "--runs",
        "1",
        "-o",
        out.join("out").to_str().unwrap(),
    ]);
    let work = std::env::temp_dir().join(format!("fugue-bench-faust-{}", child.id()));
    wait_for("the working folder", || work.is_dir());
    send(&child, libc::SIGINT);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(!work.exists(), "{} left behind", work.display());
}

/// A clocked profile stopped by a signal prints the report of what it ran and says that it
/// covers only those cycles (it read as a run of the length asked).
#[test]
fn a_stopped_profile_says_what_its_report_covers() {
    let child = spawn(&[
        "profile",
        &example("rake.ag"),
        "--seconds",
        "20",
        "--buffer",
        "256",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    send(&child, libc::SIGINT);
    let (code, out, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(out.contains("cycles on"), "{out}");
    assert!(
        err.contains("the run was stopped before its end: the report covers its first")
            && err.contains("of the 20 s asked"),
        "{err}"
    );
    // One line, and the report's title says it too.
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("fugue: interrupted by SIGINT; the run was stopped"),
        "{err}"
    );
    assert!(
        out.contains("; the run was stopped before its end"),
        "{out}"
    );
}

/// An offline profile stopped by a signal does the same: the report of the cycles it ran,
/// written to its folder, and what it covers.
#[test]
fn a_stopped_offline_profile_keeps_its_report() {
    let dir = folder("offline-profile");
    let report = dir.join("report");
    let child = spawn(&[
        "profile",
        &example("rake.ag"),
        "--backend",
        "offline",
        "--seconds",
        "36000",
        "--buffer",
        "256",
        "-o",
        report.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    send(&child, libc::SIGINT);
    let (code, out, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(out.contains("cycles on"), "{out}");
    assert!(
        err.contains("the run was stopped before its end: the report covers its first")
            && err.contains("of the 36000 s asked"),
        "{err}"
    );
    assert!(report.join("profile.txt").is_file(), "{:?}", listing(&dir));
    // Every file of the folder says what it covers.
    for file in ["profile.txt", "profile.json"] {
        let text = std::fs::read_to_string(report.join(file)).unwrap();
        assert!(
            text.contains("the run was stopped before its end: the report covers its first")
                && text.contains("of the 36000 s asked"),
            "{file}: {text}"
        );
    }
}

/// `bench pool`, stopped by a signal while it measures, leaves no output folder where it
/// made one (the folder is made before the runs, its files written at the end).
#[test]
fn a_stopped_pool_benchmark_leaves_no_empty_folder() {
    let d = folder("pool-folder");
    let out = d.join("out");
    let child = spawn(&[
        "bench",
        "pool",
        "--policies",
        "steal",
        "--workloads",
        "quicksort",
        "--runs",
        "1000",
        "-o",
        out.to_str().unwrap(),
    ]);
    wait_for("the output folder", || out.is_dir());
    std::thread::sleep(Duration::from_millis(200));
    send(&child, libc::SIGINT);
    let (code, _, err) = finish(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(!out.exists(), "{:?}", listing(&out));
}
