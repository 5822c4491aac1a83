//! The benchmarks from a plain checkout: with the current folder somewhere that has no
//! `../shared` (no corpus beside it) and no `studies/`, the default study, `bench table` and
//! `bench capacity` run on the generated 2019 shapes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{folder, stderr, stdout};

/// Runs `fugue` with `args` in the folder `cwd`, standard error not a terminal.
fn fugue_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(args)
        .current_dir(cwd)
        .env_remove(common::FAULT_VAR)
        .output()
        .expect("run fugue")
}

/// A fresh folder with neither `studies/` nor `../shared` around it.
fn bare(name: &str) -> std::path::PathBuf {
    let d = folder("fresh-clone", name);
    assert!(!d.join("../shared").exists() && !d.join("studies").exists());
    d
}

#[test]
fn the_default_study_lists_its_runs_without_the_corpus() {
    let d = bare("dry-run");
    let o = fugue_in(&d, &["bench", "study", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // 3 graphs x (seq + 7 executors x 2 thread counts) x 4 buffers x 2 loads, 3 repeats.
    assert!(
        out.contains("built-in studies/default.toml: 360 configurations x 3 repeats = 1080 runs"),
        "{out}"
    );
    assert!(out.contains("ligne100 seq t1 b64 idle"), "{out}");
    assert!(out.contains("rateau101 levels t3 b2048 busy"), "{out}");
    // Nothing was written.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
    let o = fugue_in(&d, &["bench", "study", "--dry-run", "--repeats", "5"]);
    assert!(
        stdout(&o).contains("x 5 repeats = 1800 runs"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_short_study_repeats_each_run_and_says_one_line_per_run() {
    let d = bare("short-study");
    std::fs::write(
        d.join("quick.toml"),
        "graphs = [\"line\", \"rake\"]\nexecutors = [\"seq\", \"ws\"]\nthreads = [2]\nbuffers = [512]\nloads = [\"idle\"]\nseconds = 0.1\n",
    )
    .unwrap();
    let o = fugue_in(&d, &["bench", "study", "quick.toml", "-o", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Standard error is a pipe here: one line per run (2 graphs x 2 configurations x 3).
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(", repeat ")).collect();
    assert_eq!(lines.len(), 12, "{err}");
    assert!(
        lines[0].starts_with("[1/12] ligne100 seq t1 b512 idle, repeat 1/3, about "),
        "{err}"
    );
    // Every progress line ends with the time left.
    assert!(
        lines
            .iter()
            .all(|l| l.contains(", about ") && l.ends_with(" s left")),
        "{err}"
    );
    // Seq and the executor it is compared with run one after the other (a block of one
    // graph, buffer size and load), ws first in the second round.
    assert!(
        lines[1].starts_with("[2/12] ligne100 ws t2 b512 idle, repeat 1/3"),
        "{err}"
    );
    assert!(
        lines[4].starts_with("[5/12] ligne100 ws t2 b512 idle, repeat 2/3"),
        "{err}"
    );
    // The closing line: how many figures are trusted, and how to trust more of them (or
    // that all are).
    let out = stdout(&o);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.contains("figures are trusted")
            && (last.starts_with("All ") || last.contains("--repeats 6")),
        "{out}"
    );
    let summary = std::fs::read_to_string(d.join("out/summary.csv")).unwrap();
    let header: Vec<&str> = summary.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for row in summary.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[col("repeats")], "3", "{row}");
        // The wake-up latency: none with one thread, or on the line (which every executor
        // runs on the calling thread alone). (With two threads on the rake, the worker's
        // wake-ups are recorded when it woke inside the cycle; on a loaded machine it may
        // wake after each of the few cycles of a repeat, and none is.)
        let wake: f64 = f[col("wake_p99_us")].parse().unwrap();
        if f[col("executor")] == "seq" || f[col("graph")] == "ligne100" {
            assert_eq!(wake, 0.0, "{row}");
        }
        // A speedup above the thread count is never marked as trusted.
        if let Ok(s) = f[col("speedup_vs_seq")].parse::<f64>() {
            let threads: f64 = f[col("threads")].parse().unwrap();
            if s > threads {
                assert_eq!(f[col("trusted")], "false", "{row}");
            }
        }
    }
    let html = std::fs::read_to_string(d.join("out/report.html")).unwrap();
    assert!(html.contains("Paced, not back to back"), "{html}");
    assert!(html.contains("ran 3 times"), "{html}");
    assert!(!html.contains("0 parallel configuration(s)"), "{html}");
    assert!(!html.contains("Commit ."), "{html}");
    assert!(html.contains("<h2>Wake-up latency</h2>"), "{html}");
    // Readings compare at one buffer size, in whole sentences.
    assert!(html.contains("At 512 frames, load idle, "), "{html}");
    assert!(!html.contains("fastest mean cycle"), "{html}");
    assert!(!html.contains("): .") && !html.contains(": . "), "{html}");
    assert!(
        html.contains("<b>How far to trust these figures.</b>"),
        "{html}"
    );
    assert!(html.contains(last), "{html}");
    let readme = std::fs::read_to_string(d.join("out/README.md")).unwrap();
    let wake = readme
        .split("## Wake-up latency")
        .nth(1)
        .expect("a wake-up section");
    assert!(
        wake.lines()
            .any(|l| l.starts_with("| ws ") && l.contains("| idle ")),
        "{wake}"
    );
    assert!(
        readme.contains("generated (gen:rake:33, node for node rateau/rateau101.ag"),
        "{readme}"
    );
}

#[test]
fn bench_table_and_capacity_run_on_the_generated_shapes() {
    let d = bare("table");
    let o = fugue_in(
        &d,
        &[
            "bench",
            "table",
            "--executors",
            "ws",
            "--buffers",
            "512",
            "--seconds",
            "0.05",
            "--runs",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for (shape, nodes) in [("line", 100), ("diamond", 156), ("rake", 101)] {
        assert!(
            out.contains(&format!("### {shape}: generated"))
                && out.contains(&format!("({nodes} nodes)")),
            "{out}"
        );
    }
    let o = fugue_in(
        &d,
        &["bench", "capacity", "--seconds", "0.2", "--window-ms", "20"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("(rake at buffer 512)"),
        "{}",
        stdout(&o)
    );
    // --corpus names a folder that lacks the files: one sentence that says what to do.
    let o = fugue_in(
        &d,
        &["bench", "table", "--corpus", "nowhere", "--runs", "1"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("leave it out to use the generated shapes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn spec_mistakes_are_named_at_once() {
    let d = bare("spec-errors");
    std::fs::write(d.join("bad.toml"), "graphs = [\"line\"]\nvolume = 3\n").unwrap();
    let o = fugue_in(&d, &["bench", "study", "bad.toml", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "bad input, not a usage error");
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml:2: missing required field(s) executors, threads, buffers, loads, seconds; unknown field(s) volume"),
        "{e}"
    );
    std::fs::write(
        d.join("wsx.toml"),
        "graphs = [\"line\"]\nexecutors = [\"seq\", \"wsx\"]\nthreads = [2]\nbuffers = [64]\nloads = [\"idle\"]\nseconds = 1\n",
    )
    .unwrap();
    let o = fugue_in(&d, &["bench", "study", "wsx.toml", "--dry-run"]);
    assert_eq!(o.status.code(), Some(1), "bad input, not a usage error");
    let e = stderr(&o);
    assert!(
        e.contains(
            "wsx.toml:2: unknown executor `wsx` in the spec; expected one of seq, ws, ws-affinity"
        ),
        "{e}"
    );
    // A value of the wrong type names its field, and the type in words.
    for (value, says) in [
        ("threads = [-1]", "neg.toml:3:12: field `threads`: invalid value: integer `-1`, expected a whole number, 0 or more"),
        ("seconds = \"1\"", "neg.toml:3:11: field `seconds`: invalid type: string \"1\", expected a number"),
        ("threads = 2", "neg.toml:3:11: field `threads`: invalid type: integer `2`, expected a list in brackets, such as [1, 2]"),
    ] {
        std::fs::write(
            d.join("neg.toml"),
            format!("graphs = [\"line\"]\nexecutors = [\"seq\"]\n{value}\nbuffers = [64]\nloads = [\"idle\"]\n{}\n",
                if value.starts_with("threads") { "seconds = 1" } else { "threads = [2]" }),
        )
        .unwrap();
        let o = fugue_in(&d, &["bench", "study", "neg.toml", "--dry-run"]);
        assert_eq!(o.status.code(), Some(1), "{value}");
        let e = stderr(&o);
        assert!(e.contains(says), "{value}: {e}");
        assert!(!e.contains("usize") && !e.contains("f64"), "{e}");
    }
}
