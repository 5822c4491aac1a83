//! A benchmark that produces a wrong result fails: `fugue bench table`, `study` and
//! `overhead` through the binary, each once with an executor broken on purpose (the test-only
//! switch `FUGUE_TEST_FAULT`, see `fugue_exec::fault`) and once without. Broken, each exits 1
//! with one error naming the executor, its configuration, the cycle and the output channel
//! and sample (the node, for the empty nodes of `overhead`), prints no figure and leaves no
//! file in its output folder; unbroken, the same command succeeds.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{example, fugue_with_fault, stderr, stdout};

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    common::folder("bench-checks-cli", name)
}

/// The files under `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(d) => d
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The run failed its check: exit status 1, one error line on standard error that holds
/// every one of `parts`, nothing on standard output. Prints the error line (kept in the test
/// log as the evidence of what a broken executor looks like).
fn assert_failed_check(o: &Output, parts: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("fugue: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    for p in parts {
        assert!(errors[0].contains(p), "`{p}` not in: {}", errors[0]);
    }
    assert!(stdout(o).is_empty(), "{}", stdout(o));
    println!("{}", errors[0]);
}

fn table_args(out: &Path) -> Vec<String> {
    [
        "bench",
        "table",
        "--shapes",
        &example("synth.ag"),
        "--buffers",
        "64",
        "--executors",
        "ws,levels",
        "--threads",
        "2",
        "--seconds",
        "0.05",
        "--runs",
        "2",
        "--costs",
        "declared",
        "-o",
        &out.to_string_lossy(),
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn table_fails_on_a_wrong_output_and_writes_nothing() {
    let dir = folder("table");
    let out = dir.join("out");
    let args = table_args(&out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // One bit of cycle 20 of the first run (every cycle is checked, not only the first ones).
    let o = fugue_with_fault(&args, Some("flip:ws@20"));
    assert_failed_check(
        &o,
        &[
            "bench table: executor ws (2 threads) on ",
            "synth.ag at buffer 64, run 1: cycle 20 differs from seq at output channel 0, sample 32",
            "no result is reported",
        ],
    );
    assert_eq!(files(&out), Vec::<String>::new());
    // Seq is checked too, against a reference run of its own (never broken): a whole cycle
    // skipped (cycle 43 of its life, in the untimed cycles that start each run, which are
    // checked as well: how many there are depends on the time they take).
    let o = fugue_with_fault(&args, Some("skip:seq@43"));
    assert_failed_check(
        &o,
        &[
            "bench table: executor seq (1 thread) on ",
            "differs from seq at output channel 0",
        ],
    );
    assert_eq!(files(&out), Vec::<String>::new());
    // The same command, nothing broken.
    let o = fugue_with_fault(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut written = files(&out);
    written.sort();
    assert_eq!(written, ["README.md", "raw.csv", "summary.csv", "table.md"]);
}

/// A study of one generated graph, seq and ws at one buffer size, 0.1 s each.
fn write_spec(dir: &Path) -> PathBuf {
    let spec = dir.join("tiny.toml");
    std::fs::write(
        &spec,
        "graphs = [\"gen:diamond:2\"]\nexecutors = [\"seq\", \"ws\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\nrate = 48000\n",
    )
    .unwrap();
    spec
}

#[test]
fn study_fails_on_a_wrong_output_and_writes_nothing() {
    let dir = folder("study");
    let spec = write_spec(&dir);
    let out = dir.join("out");
    let (spec, out_s) = (spec.to_string_lossy(), out.to_string_lossy());
    let args = ["bench", "study", &spec, "-o", &out_s];
    // The timed real-time run itself is checked: cycle 10 of its 19.
    let o = fugue_with_fault(&args, Some("flip:ws@10"));
    assert_failed_check(
        &o,
        &[
            "bench study: executor ws (2 threads) on diamond16 at buffer 256, idle load, repeat 1: cycle 10 differs from seq at output channel 0, sample 128",
            "no result is written",
        ],
    );
    assert!(!out.exists(), "{:?}", files(&out));
    let o = fugue_with_fault(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    // Two configurations, each run 3 times (the default repeats), 19 cycles a run, every
    // one checked but for a cycle the clock dropped because it began a period late (an
    // overrun, on a machine busy with other jobs, or whose host takes its CPU for a while:
    // 8 of 114 were dropped once on a virtual machine): a few a run at most.
    let said = stdout(&o);
    assert!(said.contains("6 runs (2 configurations)"), "{said}");
    let checked: u64 = said
        .split(" timed cycles checked")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!((114 - 3 * 6..=114).contains(&checked), "{said}");
    for f in ["summary.csv", "report.html", "README.md", "raw.csv.gz"] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

/// A study whose spec asks for more threads than the process has cores says so once, and
/// runs; one whose only executor runs on one thread says nothing of them.
#[test]
fn study_says_when_its_threads_outnumber_the_cores() {
    let dir = folder("study-threads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = cores + 1;
    if t > 256 {
        // A spec's threads are at most 256.
        return;
    }
    let spec = dir.join("many.toml");
    std::fs::write(
        &spec,
        format!("graphs = [\"gen:diamond:2\"]\nexecutors = [\"seq\", \"ws\"]\nthreads = [{t}]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.05\nrate = 48000\nrepeats = 1\n"),
    )
    .unwrap();
    let out = dir.join("out");
    let o = fugue_with_fault(
        &[
            "bench",
            "study",
            &spec.to_string_lossy(),
            "-o",
            &out.to_string_lossy(),
        ],
        None,
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let said = format!(
        "threads {t} in {} is more than the {cores} cores this process may use",
        spec.display()
    );
    assert_eq!(err.matches(&said).count(), 1, "{err}");
    // seq alone: one thread, whatever the spec's threads.
    std::fs::write(
        &spec,
        format!("graphs = [\"gen:diamond:2\"]\nexecutors = [\"seq\"]\nthreads = [{t}]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.05\nrate = 48000\nrepeats = 1\n"),
    )
    .unwrap();
    let o = fugue_with_fault(
        &[
            "bench",
            "study",
            &spec.to_string_lossy(),
            "-o",
            &out.to_string_lossy(),
            "--force",
        ],
        None,
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("is more than the"), "{err}");
}

/// A study whose `busy_command` ends before its run does fails, naming the spec's line of
/// that command, and writes nothing: the run was not under the load it is labelled with.
#[test]
fn a_busy_command_that_ends_is_said_at_its_line() {
    let dir = folder("study-busy-command");
    let spec = dir.join("busy.toml");
    std::fs::write(
        &spec,
        "graphs = [\"gen:line:4\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"busy\"]\nseconds = 0.05\nrepeats = 1\nbusy_command = \"true\"\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = fugue_with_fault(
        &[
            "bench",
            "study",
            &spec.to_string_lossy(),
            "-o",
            &out.to_string_lossy(),
        ],
        None,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}:8: the busy load's command ended before the run did",
            spec.display()
        )),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn overhead_fails_on_a_skipped_task_and_prints_nothing() {
    let args = [
        "bench",
        "overhead",
        "--shape",
        "diamond",
        "--nodes",
        "16",
        "--executor",
        "seq,ws,rayon",
        "--threads",
        "2",
        "--cycles",
        "200",
        "--warmup",
        "20",
        "--runs",
        "1",
        "--json",
    ];
    // A timed cycle (past the 20 warm-up ones) of ws runs no task.
    let o = fugue_with_fault(&args, Some("skip:ws@50"));
    assert_failed_check(
        &o,
        &[
            "bench overhead: executor ws (2 threads) on diamond of depth 2 (16 nodes, nearest to 16), run 1",
            "the first in cycle 50 at node",
        ],
    );
    // The rayon peer is reached by the switch as well.
    let o = fugue_with_fault(&args, Some("skip:rayon@100"));
    assert_failed_check(
        &o,
        &[
            "bench overhead: executor rayon",
            "the first in cycle 100 at node",
        ],
    );
    let o = fugue_with_fault(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
}

/// `bench profile-cost` checks every cycle of the executor it measures against seq's, not
/// only the profiled engine against the plain one (both would carry the same fault).
#[test]
fn profile_cost_fails_on_a_wrong_output() {
    let args = [
        "bench",
        "profile-cost",
        "--graph",
        "gen:rake:10",
        "--executor",
        "ws",
        "--threads",
        "2",
        "--pairs",
        "2",
        "--cycles",
        "10",
    ];
    for fault in ["flip:ws", "flip:ws@30"] {
        let o = fugue_with_fault(&args, Some(fault));
        assert_eq!(o.status.code(), Some(1), "{fault}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("ws's output differs from seq's"),
            "{fault}: {}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "", "{fault}");
    }
    let o = fugue_with_fault(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("identical to seq's"), "{}", stdout(&o));
}

#[test]
fn a_malformed_fault_value_is_refused() {
    let o = fugue_with_fault(
        &[
            "bench", "overhead", "--shape", "line", "--nodes", "4", "--cycles", "10", "--warmup",
            "0",
        ],
        Some("flip-ws"),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("FUGUE_TEST_FAULT=`flip-ws`: expected flip:EXECUTOR[@CYCLE]"),
        "{}",
        stderr(&o)
    );
}
