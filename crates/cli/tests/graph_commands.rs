//! `fugue info`, `fugue dot`, `fugue gen`: outputs, exit codes and error messages.

mod common;

use common::{fugue, stderr};
use std::path::PathBuf;
use std::process::Command;

/// `../shared/data/rel`, or `None` after a counted skip.
fn data(rel: &str) -> Option<PathBuf> {
    fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), rel, rel)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fugue-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn info_json_has_the_documented_keys() {
    let Some(f) = data("ag/losange/losange156.ag") else {
        return;
    };
    let o = fugue(&["info", "--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "nodes",
        "edges",
        "sources",
        "sinks",
        "total_work",
        "critical_path",
        "depth",
        "width",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["nodes"], 156);
    assert_eq!(v["edges"], 186);
    assert_eq!(v["sources"], 1);
    assert_eq!(v["sinks"], 1);
    assert_eq!(v["depth"], 21);
    assert_eq!(v["width"], 32);
    let text = fugue(&["info", f.to_str().unwrap()]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("critical path"));
}

#[test]
fn malformed_files_exit_1_with_a_place_and_no_panic() {
    let d = tmpdir("bad");
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "truncated.ag",
            b"a = {\n  kind: \"osc\",\n",
            "truncated.ag:3:1:",
        ),
        (
            "nosemi.ag",
            b"a = { kind: \"osc\", }\nb = { kind: \"sink\", };\n",
            "nosemi.ag:2:1:",
        ),
        (
            "nocomma.ag",
            b"a = { kind: \"osc\" freq: 1.0 };\n",
            "nocomma.ag:1:19:",
        ),
        (
            "badport.ag",
            b"a = { kind: \"osc\", };\nb = { kind: \"sink\", };\na.x -> b.1;\n",
            "badport.ag:3:3:",
        ),
        (
            "unknown.ag",
            b"a = { kind: \"osc\", };\na.1 -> b.1;\n",
            "unknown.ag:2:8:",
        ),
        (
            "cycle.ag",
            b"a = { kind: \"mix\", };\nb = { kind: \"mix\", };\na.1 -> b.1;\nb.1 -> a.1;\n",
            "cycle.ag:",
        ),
        (
            "garbage.ag",
            &[0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0xff, 0x00, 0x00],
            "garbage.ag:1:",
        ),
        ("garbage.stg", &[0xde, 0xad, 0xbe, 0xef], "garbage.stg:1:2:"),
        ("empty.stg", b"", "empty.stg:1:1:"),
        ("empty.dot", b"", "empty.dot:1:1:"),
    ];
    for (name, bytes, want) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = fugue(&["info", p.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: one line: {err}");
    }
    let o = fugue(&["info", d.join("cycle.ag").to_str().unwrap()]);
    assert!(
        stderr(&o).contains("cycle: a -> b -> a") || stderr(&o).contains("cycle: b -> a -> b"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_errors_exit_2() {
    let d = tmpdir("usage");
    let p = d.join("g.txt");
    std::fs::write(&p, "x").unwrap();
    let o = fugue(&["info", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--format"), "{}", stderr(&o));
    let o = fugue(&["info", "--no-such-flag", "x.ag"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fugue(&["gen", "line", "-o", d.join("l.ag").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "needs --nodes: {}", stderr(&o));
    // A missing file is bad input: 1.
    let o = fugue(&["info", d.join("missing.ag").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.ag"), "{}", stderr(&o));
}

#[test]
fn format_override() {
    let d = tmpdir("fmt");
    let p = d.join("graph.txt");
    std::fs::write(&p, "digraph { a -> b [Weight=2]; }").unwrap();
    let o = fugue(&["info", "--json", "--format", "dot", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"], 2);
}

#[test]
fn gen_writes_readable_graphs_and_never_overwrites() {
    let d = tmpdir("gen");
    let out = d.join("r.ag");
    let o = fugue(&[
        "gen",
        "rake",
        "--branches",
        "33",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info = fugue(&["info", "--json", out.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(v["nodes"], 101);
    let before = std::fs::read(&out).unwrap();
    let o = fugue(&["gen", "line", "--nodes", "5", "-o", out.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "existing file untouched"
    );
    let o = fugue(&[
        "gen",
        "random",
        "--nodes",
        "30",
        "--probability",
        "0.2",
        "--seed",
        "7",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o2 = fugue(&[
        "gen",
        "random",
        "--nodes",
        "30",
        "--p",
        "0.2",
        "--seed",
        "7",
        "-o",
        d.join("r2.ag").to_str().unwrap(),
    ]);
    assert!(o2.status.success());
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(d.join("r2.ag")).unwrap(),
        "seeded: same file"
    );
    for shape in [
        &["diamond", "--depth", "3"][..],
        &["layered", "--layers", "4", "--width", "3"][..],
    ] {
        let f = d.join(format!("{}.ag", shape[0]));
        let mut args = vec!["gen"];
        args.extend_from_slice(shape);
        args.extend_from_slice(&["-o", f.to_str().unwrap()]);
        let o = fugue(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(fugue(&["info", f.to_str().unwrap()]).status.success());
    }
    // A size flag the shape does not read is refused, naming those it reads.
    let o = fugue(&[
        "gen",
        "rake",
        "--nodes",
        "50",
        "-o",
        d.join("k.ag").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fugue gen rake does not read --nodes; it reads --branches"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("k.ag").exists());
    // A diamond's size is its depth or a node count, not both.
    let o = fugue(&[
        "gen",
        "diamond",
        "--depth",
        "2",
        "--nodes",
        "5",
        "-o",
        d.join("k.ag").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("takes --depth D or --nodes N, not both"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("k.ag").exists());
    // No temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(left.is_empty());
}

#[test]
fn dot_prints_and_draws() {
    let Some(f) = data("sched/kwok-ahmad-9.dot") else {
        return;
    };
    let o = fugue(&["dot", f.to_str().unwrap()]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("digraph"));
    assert_eq!(text.matches("->").count(), 12);
    let d = tmpdir("dot");
    let svg = d.join("k.svg");
    let o = fugue(&["dot", f.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
    let have_dot = Command::new("dot").arg("-V").output().is_ok();
    if have_dot {
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    } else {
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains("install Graphviz"), "{}", stderr(&o));
        assert!(!svg.exists());
    }
    let o = fugue(&[
        "dot",
        f.to_str().unwrap(),
        "-o",
        d.join("k.bmpx").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// Graphviz ends with fugue: a `fugue dot -o big.svg` ended by SIGTERM (which ends the
/// command at once) leaves no `dot` drawing on its own.
#[test]
fn graphviz_ends_with_fugue() {
    if Command::new("dot").arg("-V").output().is_err() {
        return;
    }
    let d = tmpdir("dot-orphan");
    let g = d.join("big.ag");
    let o = fugue(&[
        "gen",
        "random",
        "-n",
        "3000",
        "--probability",
        "0.01",
        "-o",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "dot",
            g.to_str().unwrap(),
            "-o",
            d.join("big.svg").to_str().unwrap(),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let start = std::time::Instant::now();
    let dot = loop {
        if let Some(&c) = children(child.id()).first() {
            break c;
        }
        assert!(start.elapsed().as_secs() < 20, "no Graphviz child");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // SAFETY: kill with a live child's pid and a signal number.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(143));
    let start = std::time::Instant::now();
    // Gone, or a zombie that init reaps.
    while std::fs::read_to_string(format!("/proc/{dot}/stat"))
        .is_ok_and(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
    {
        assert!(
            start.elapsed().as_secs() < 5,
            "Graphviz ({dot}) drew on after fugue ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What `fugue dot` writes is a graph fugue reads: rendered, it gives the bytes of the graph
/// it was written from, with no warning about Graphviz's drawing attributes; and Graphviz
/// draws it.
#[test]
fn dot_output_reads_back_and_renders_the_same() {
    let d = tmpdir("dot-back");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for g in ["examples/pluck.ag", "examples/comb.ag", "examples/synth.ag"] {
        let src = root.join(g);
        let dot = d.join("g.dot");
        let o = fugue(&[
            "dot",
            src.to_str().unwrap(),
            "-o",
            dot.to_str().unwrap(),
            "--force",
        ]);
        assert!(o.status.success(), "{g}: {}", stderr(&o));
        let mut wavs = Vec::new();
        for (input, out) in [(&src, "a.wav"), (&dot, "b.wav")] {
            let wav = d.join(out);
            let o = fugue(&[
                "render",
                input.to_str().unwrap(),
                "-o",
                wav.to_str().unwrap(),
                "--seconds",
                "1",
                "-e",
                "seq",
                "--force",
            ]);
            assert!(o.status.success(), "{g} ({out}): {}", stderr(&o));
            assert!(
                !stderr(&o).contains("warning"),
                "{g} ({out}): {}",
                stderr(&o)
            );
            wavs.push(std::fs::read(&wav).unwrap());
        }
        assert!(wavs[0] == wavs[1], "{g}: the DOT copy renders other bytes");
        if Command::new("dot").arg("-V").output().is_ok() {
            let o = Command::new("dot")
                .args(["-Tsvg", "-o"])
                .arg(d.join("g.svg"))
                .arg(&dot)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{g}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                o.stderr.is_empty(),
                "{g}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

#[test]
fn structural_errors_are_said_once() {
    let d = tmpdir("once");
    let p = d.join("u.ag");
    std::fs::write(&p, "a = { kind: \"osc\", };\na.1 -> b.1;\n").unwrap();
    let o = fugue(&["info", p.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(err.matches("unknown node").count(), 1, "{err}");
}

/// `fugue schedule FILE` with the options every schedule test shares, and `more`.
fn schedule(
    file: &std::path::Path,
    algorithm: &str,
    processors: &str,
    more: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "schedule",
        file.to_str().unwrap(),
        "-a",
        algorithm,
        "-p",
        processors,
        "--time-limit",
        "2",
        "--json",
    ];
    args.extend_from_slice(more);
    fugue(&args)
}

#[test]
fn schedule_writes_a_gantt_chart_and_refuses_to_overwrite_it() {
    let Some(f) = data("sched/kwok-ahmad-9.dot") else {
        return;
    };
    let dir = tmpdir("schedule-gantt");
    let out = dir.join("g.svg");
    let gantt = out.to_str().unwrap();
    let o = schedule(&f, "cpfd", "4", &["--gantt", gantt]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("<svg") && svg.contains(">n9<") && svg.contains("critical-path task"));
    let o = schedule(&f, "hlfet", "2", &["--gantt", gantt]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = schedule(&f, "hlfet", "2", &["--gantt", gantt, "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn schedule_bad_arguments_and_costs_are_reported() {
    let Some(f) = data("sched/kwok-ahmad-9.dot") else {
        return;
    };
    assert_eq!(schedule(&f, "etf", "0", &[]).status.code(), Some(2));
    assert_eq!(
        schedule(&f, "etf", "2", &["--comm-cost=-1"]).status.code(),
        Some(2)
    );
    let dir = tmpdir("schedule-costs");
    let csv = dir.join("c.csv");
    std::fs::write(&csv, "node,cost\nn1,2\nnope,3\n").unwrap();
    let costs = csv.to_str().unwrap();
    let o = schedule(&f, "etf", "2", &["--costs", costs]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("c.csv:3:1: the graph has no node `nope`"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&csv, "n1,0.5\n").unwrap();
    let o = schedule(&f, "optimal", "3", &["--costs", costs, "--comm-cost", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn info_and_check_count_a_feedback_edge_as_the_file_writes_it() {
    // A loop o -> m -> g -> out with g's output fed back to m's second input: four nodes and
    // four edges as written; the feedback edge's pair of nodes is not the user's.
    let d = tmpdir("feedback-counts");
    let f = d.join("loop.ag");
    std::fs::write(
        &f,
        "o = { kind: \"osc\", freq: 220, };\n\
         g = { kind: \"gain\", gain: 0.5, };\n\
         m = { kind: \"mix\", in: 2, };\n\
         out = { kind: \"sink\", in: 1, };\n\
         o.1 -> m.1;\nm.1 -> g.1;\ng.1 ~> m.2;\ng.1 -> out.1;\n",
    )
    .unwrap();
    let o = fugue(&["info", "--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"], 4, "{v}");
    assert_eq!(v["edges"], 4, "{v}");
    assert_eq!(v["sources"], 1, "{v}");
    assert_eq!(v["sinks"], 1, "{v}");
    assert_eq!(v["depth"], 4, "{v}");
    assert_eq!(v["width"], 1, "{v}");
    assert!(v["kinds"].get("feedback-read").is_none(), "{v}");
    assert_eq!(v["feedback"][0], "g.1 ~> m.2", "{v}");
    let o = fugue(&["check", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("ok, 4 nodes, 4 edges"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// A task graph (DOT nodes with no kind) with a feedback edge is still a task graph: `info`
/// summarises it, with no complaint about kinds or a missing sink.
#[test]
fn info_of_a_task_graph_with_a_feedback_edge_needs_no_kinds() {
    let d = tmpdir("task-feedback");
    let f = d.join("fb.dot");
    std::fs::write(&f, "digraph g { a -> b; a -> b [feedback=true]; }\n").unwrap();
    let o = fugue(&["info", "--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"], 2, "{v}");
}

/// The DOT text of a graph whose Faust nodes name their programs relative to the graph's
/// folder renders the same from another folder: `dot -o` names them from where it writes
/// (unchanged in the graph's own folder), `dot` on standard output absolutely.
#[test]
fn dot_output_elsewhere_still_finds_the_faust_programs() {
    if !fugue_faust::available_for("dot_output_elsewhere_still_finds_the_faust_programs") {
        return;
    }
    let d = tmpdir("dot-faust");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/faust");
    for f in ["chain.ag", "synth.dsp", "effects.dsp"] {
        std::fs::copy(root.join(f), d.join(f)).unwrap();
    }
    std::fs::create_dir_all(d.join("sub")).unwrap();
    let render = |graph: &str, out: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["render", graph, "-o", out, "--seconds", "0.5", "-e", "seq"])
            .current_dir(&d)
            .env_remove(common::FAULT_VAR)
            .output()
            .unwrap();
        assert!(o.status.success(), "{graph}: {}", stderr(&o));
        std::fs::read(d.join(out)).unwrap()
    };
    let want = render("chain.ag", "a.wav");
    for (dot, reads) in [("sub/c.dot", "/synth.dsp"), ("c.dot", "\"synth.dsp\"")] {
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["dot", "chain.ag", "-o", dot])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{dot}: {}", stderr(&o));
        let text = std::fs::read_to_string(d.join(dot)).unwrap();
        assert!(text.contains(reads), "{dot}: {text}");
        assert!(render(dot, &format!("{dot}.wav")) == want, "{dot}");
    }
    // On standard output the text may be written anywhere (`> sub/o.dot`): the programs
    // are named absolutely (they were left relative to the graph's folder).
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["dot", "chain.ag"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(d.join("sub/o.dot"), &o.stdout).unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("/synth.dsp") && !text.contains("\"synth.dsp\""),
        "{text}"
    );
    assert!(render("sub/o.dot", "o.wav") == want);
}

/// A schedule of a graph with a feedback edge says what its two extra tasks are.
#[test]
fn a_schedule_names_the_tasks_of_a_feedback_edge() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let comb = root.join("examples/comb.ag");
    let o = fugue(&["schedule", comb.to_str().unwrap(), "-p", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("(7 tasks, 8 edges)"), "{text}");
    assert!(
        text.contains("feedback       1 edge, each two of the tasks"),
        "{text}"
    );
    assert!(text.contains("g.1~>mix.2 (kept)"), "{text}");
    // calibrate costs them beside the nodes, and says so.
    let o = fugue(&["calibrate", comb.to_str().unwrap(), "--cycles", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("7 tasks (5 nodes, and the two of each feedback edge"),
        "{text}"
    );
}

/// `-o -`: DOT text on standard output for `dot` (as with no `-o`); refused in one sentence
/// for `profile`, whose output is a folder, and no folder named `-` is made.
#[test]
fn dash_as_the_output() {
    let dir = tmpdir("dash-output");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let rake = common::example("rake.ag");
    let o = run(&["dot", &rake, "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        common::stdout(&o).starts_with("digraph"),
        "{}",
        common::stdout(&o)
    );
    let o = run(&["profile", &rake, "--seconds", "0.05", "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the profile is a folder of files"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("-").exists());
}

/// Costs that are times (`wcet`, µs) stay times through `fugue dot` and back: the DOT file
/// gives them as `wcet`, which reads as µs, while DOT's `Weight` and `.stg` times are in the
/// file's own units.
#[test]
fn wcet_stays_a_time_through_dot() {
    let d = tmpdir("wcet-dot");
    let ag = d.join("w.ag");
    std::fs::write(
        &ag,
        "a = { kind: \"osc\", freq: 440, wcet: 12.5, };\nb = { kind: \"sink\", wcet: 0, };\na.1 -> b.1;\n",
    )
    .unwrap();
    let dot = d.join("w.dot");
    let o = fugue(&[
        "dot",
        ag.to_str().unwrap(),
        "-o",
        dot.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(
        text.contains("wcet=12.5") && !text.contains("Weight=12.5"),
        "{text}"
    );
    let costs = |p: &std::path::Path| {
        let o = fugue(&["info", p.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.starts_with("costs"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(costs(&ag).contains("(wcet, µs)"), "{}", costs(&ag));
    assert!(costs(&dot).contains("(wcet, µs)"), "{}", costs(&dot));
    let weight = d.join("units.dot");
    std::fs::write(&weight, "digraph { a [Weight=3]; b [Weight=2]; a -> b; }\n").unwrap();
    assert!(
        costs(&weight).contains("its own units"),
        "{}",
        costs(&weight)
    );
}

/// Measured costs are bounded in time: a node of 100 ms a cycle is measured over the cycles
/// that fit in half of `schedule`'s time limit (not 200 cycles, 20 s), and the costs' line
/// says how many.
#[test]
fn measured_costs_fit_in_the_time_limit() {
    let d = tmpdir("measured-budget");
    let p = d.join("slow.ag");
    std::fs::write(
        &p,
        "o = { kind: \"osc\", freq: 1, };\nl = { kind: \"load\", wcet: 100000, };\ns = { kind: \"sink\", };\no.1 -> l.1 -> s.1;\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let o = fugue(&[
        "schedule",
        p.to_str().unwrap(),
        "--costs",
        "measured",
        "--time-limit",
        "1",
    ]);
    let took = t.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("cycles (of 200: the 0.5 s that measuring may take ran out)"),
        "{out}"
    );
    // About 0.5 s of measuring; 20 s if it were not bounded.
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}
