//! The graph tools' flags and figures: `gen` refuses a flag its shape does not read,
//! `schedule` says the flags its schedule does not read (and its idle processors in one line), `info` names every task its critical
//! path counts, `check` counts the nodes its summary line stands for, and a profile folder
//! whose report file cannot be written is refused before the run.

mod common;

use common::{example, folder, fugue, stderr, stdout};

#[test]
fn gen_refuses_the_seed_and_costs_of_a_shape_without_randomness() {
    let dir = folder("graph-tools", "gen");
    let out = dir.join("l.ag");
    for (shape, flag, value) in [
        ("line", "--seed", "9"),
        ("rake", "--costs", "1,2"),
        ("diamond", "--seed", "3"),
    ] {
        let mut args = vec!["gen", shape, flag, value, "-o", out.to_str().unwrap()];
        match shape {
            "line" => args.extend(["-n", "3"]),
            "diamond" => args.extend(["--depth", "1"]),
            _ => {}
        }
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(2), "{shape} {flag}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("fugue gen {shape} does not read {flag}")),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
    // Read by the random shapes, and named among what they read.
    let o = fugue(&[
        "gen",
        "random",
        "-n",
        "5",
        "--seed",
        "4",
        "--costs",
        "1,3",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fugue(&["gen", "random", "--depth", "2", "-o", out.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("it reads --nodes, --probability, --seed, --costs"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&["gen", "diamond", "-n", "0", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A generated graph always has a sink: sizes that cannot make one are refused before the
/// draw, and a draw with no edge is refused after it; no file is written.
#[test]
fn gen_writes_no_graph_without_a_sink() {
    let dir = folder("graph-tools", "gen-sink");
    let out = dir.join("g.ag");
    let _ = std::fs::remove_file(&out);
    let o_ = out.to_str().unwrap();
    for (args, said) in [
        (
            vec!["random", "-n", "1"],
            "--nodes 1 is too small (at least 2)",
        ),
        (
            vec!["layered", "--layers", "1", "--width", "3"],
            "--layers 1 is too small (at least 2)",
        ),
        (
            vec!["random", "-n", "1000000", "--probability", "0"],
            "--probability 0 draws no edge, so the graph would have no sink",
        ),
        (
            vec!["random", "-n", "3", "--probability", "1e-9"],
            "the graph drawn (3 nodes) has no edge, so no sink",
        ),
    ] {
        let mut all = vec!["gen"];
        all.extend(&args);
        all.extend(["-o", o_]);
        let o = fugue(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
        assert!(!out.exists(), "{args:?}");
    }
    let o = fugue(&["gen", "layered", "--layers", "2", "--width", "1", "-o", o_]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fugue(&["check", o_]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A draw whose nodes do not all reach the sink is written, with one warning that counts
    // them, as many as `check` names.
    let o = fugue(&[
        "gen",
        "random",
        "-n",
        "40",
        "--probability",
        "0.1",
        "--seed",
        "1",
        "-o",
        o_,
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("fugue: warning: 1 node of the graph drawn reaches no sink")
            && e.contains("--strict refuses the file"),
        "{e}"
    );
    let o = fugue(&["check", o_]);
    assert_eq!(
        stderr(&o).matches("reaches no sink").count(),
        1,
        "{}",
        stderr(&o)
    );
}

#[test]
fn schedule_says_the_flags_it_does_not_read() {
    let rake = example("rake.ag");
    let rake = rake.as_str();
    let o = fugue(&[
        "schedule", rake, "-a", "hlfet", "-p", "2", "--seed", "5", "--buffer", "256", "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    for said in [
        "--seed applies to --algorithm random, best or optimal only; it is ignored with --algorithm hlfet",
        "--buffer applies to --costs measured only",
        "--force applies to --gantt's file only",
    ] {
        assert!(e.contains(said), "{said}: {e}");
    }
    // Read: nothing said.
    let o = fugue(&["schedule", rake, "-a", "random", "-p", "2", "--seed", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // The rake's four branches on 8 processors: the idle ones in one line.
    let o = fugue(&["schedule", rake, "-a", "hlfet", "-p", "8"]);
    assert!(
        stdout(&o).contains("\nP4 to P7  (no task)\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn info_names_the_feedback_task_its_critical_path_counts() {
    let dir = folder("graph-tools", "info");
    let g = dir.join("loop.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 100, wcet: 1, };\nm = { kind: \"mix\", wcet: 1, };\ng = { kind: \"gain\", wcet: 1, };\nout = { kind: \"sink\", wcet: 1, };\no.1 -> m.1;\nm.1 -> g.1;\ng.1 ~> m.2;\ng.1 -> out.1;\n",
    )
    .unwrap();
    // The feedback edge's kept block costs 5 (a costs file), more than the sink's 1.
    let costs = dir.join("costs.csv");
    std::fs::write(&costs, "node,cost\ng.1~>m.2 (kept),5\n").unwrap();
    let args = [
        "info",
        g.to_str().unwrap(),
        "--costs",
        costs.to_str().unwrap(),
    ];
    let o = fugue(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let path: Vec<&str> = v["critical_path_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(path, ["o", "m", "g", "g.1~>m.2 (kept)"]);
    assert_eq!(v["critical_path"].as_f64(), Some(8.0));
    let text = stdout(&fugue(&args));
    assert!(
        text.contains("critical path  8 µs (3 nodes and 1 feedback task)"),
        "{text}"
    );
    // A graph without work has no parallelism: null, as the text's n/a.
    let empty = dir.join("empty.ag");
    std::fs::write(&empty, "").unwrap();
    let o = fugue(&["info", empty.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["parallelism"].is_null(), "{v}");
}

#[test]
fn check_counts_every_node_its_warnings_stand_for() {
    let dir = folder("graph-tools", "check");
    let g = dir.join("deaf.ag");
    let mut text =
        String::from("a = { kind: \"osc\", freq: 3, };\ns = { kind: \"sink\", };\na.1 -> s.1;\n");
    for i in 0..30 {
        text += &format!("o{i} = {{ kind: \"osc\", freq: 3, }};\n");
    }
    std::fs::write(&g, text).unwrap();
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(30 warnings)"), "{}", stdout(&o));
    let o = fugue(&["check", g.to_str().unwrap(), "--strict"]);
    assert!(stderr(&o).contains("30 problems"), "{}", stderr(&o));
}

#[test]
fn a_profile_folder_whose_file_is_a_folder_is_refused_before_the_run() {
    let dir = folder("graph-tools", "profile");
    let report = dir.join("report");
    std::fs::create_dir_all(report.join("nodes.csv")).unwrap();
    let o = fugue(&[
        "profile",
        &example("rake.ag"),
        "--seconds",
        "0.1",
        "-o",
        report.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nodes.csv is a folder, where the report writes its file nodes.csv"),
        "{}",
        stderr(&o)
    );
    assert!(!report.join("profile.txt").exists());
}

/// The nodes `--placeholder` makes silent are said by `render` as by `run`, and `--strict`
/// refuses neither for them (the silence was asked for).
#[test]
fn placeholders_are_said_not_refused_by_strict() {
    let dir = folder("graph-tools", "placeholder");
    let g = dir.join("unknown.ag");
    std::fs::write(
        &g,
        "a = { kind: \"osc\", freq: 440, };\nu = { kind: \"wobble\", };\nm = { kind: \"mix\", in: 2, };\nout = { kind: \"sink\", };\na.1 -> m.1;\nu.1 -> m.2;\nm.1 -> out.1;\n",
    )
    .unwrap();
    let wav = dir.join("u.wav");
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "0.1",
        "--placeholder",
        "--strict",
        "-e",
        "seq",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("node `u` has an unknown kind `wobble`; it was rendered as silence"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&[
        "run",
        g.to_str().unwrap(),
        "--backend",
        "clocked",
        "--seconds",
        "0.1",
        "--placeholder",
        "--strict",
        "-e",
        "seq",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("node `u` has an unknown kind `wobble`; it plays as silence"),
        "{}",
        stderr(&o)
    );
}

/// `-` as a graph is said to be no file, naming what standard input is called instead; that
/// name, with `--format`, reads the graph from standard input.
#[test]
fn a_dash_as_the_graph_names_standard_input() {
    let o = fugue(&["check", "-"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("standard input is named /dev/stdin, not -") && e.lines().count() == 1,
        "{e}"
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["check", "/dev/stdin", "--format", "ag"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"o = { kind: \"osc\", freq: 220, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}
