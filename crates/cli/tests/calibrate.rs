//! `fugue calibrate` through the binary: the costs file it writes is read by `fugue schedule
//! --costs` and `fugue render --executor static --costs`; it never overwrites without --force.

mod common;

use common::{example, fugue};
use std::path::Path;

/// A fresh folder for one test.
fn folder(name: &str) -> std::path::PathBuf {
    common::folder("calibrate-cli", name)
}

#[test]
fn costs_file_is_read_by_schedule_and_render() {
    let d = folder("roundtrip");
    let graph = example("rake.ag");
    let costs = d.join("costs.csv");
    let c = costs.to_str().unwrap();
    let o = fugue(&[
        "calibrate",
        &graph,
        "--buffer",
        "128",
        "--cycles",
        "50",
        "-o",
        c,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("median µs") && stdout.contains("p99 µs"),
        "{stdout}"
    );
    // The table: per node, its kind, median and 99th percentile, in the graph's order.
    let g = fugue_graph::read_file(Path::new(&graph), None).unwrap();
    let table: Vec<(String, String, f64, f64)> = stdout
        .lines()
        .skip(1)
        .take(g.len())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "{l}");
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect();
    for (name, _, median, p99) in &table {
        assert!(
            median.is_finite() && *median > 0.0 && median <= p99,
            "{name}: median {median} µs, p99 {p99} µs"
        );
    }
    // What the times measure: the reverb does far more per sample than an oscillator, a
    // gain stage, the mix or the sink (tens of µs against a few per 128 frames); the medians
    // say so whatever the machine's load.
    let median = |n: &str| table.iter().find(|r| r.0 == n).unwrap().2;
    for (name, kind, m, _) in &table {
        if name != "room" {
            assert!(
                median("room") > 2.0 * m,
                "the reverb's median ({} µs) is not above twice that of {name} ({kind}, {m} µs)",
                median("room")
            );
        }
    }

    // The file: one row per node, in order, holding the table's 99th percentile.
    let text = std::fs::read_to_string(&costs).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("node,cost"));
    let rows: Vec<(String, f64)> = lines
        .map(|l| {
            let (n, v) = l.split_once(',').unwrap();
            (n.to_string(), v.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), g.len());
    for (i, (name, cost)) in rows.iter().enumerate() {
        assert_eq!(name, &g.node(i).name);
        assert_eq!(name, &table[i].0);
        assert!(
            (cost - table[i].3).abs() <= 0.001,
            "{name}: the file says {cost}, the table's p99 {}",
            table[i].3
        );
    }

    // `schedule --costs` schedules with those costs: every task lasts its cost.
    let o = fugue(&["schedule", &graph, "-a", "hlfet", "-p", "2", "--costs", c]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut scheduled = 0;
    for l in out.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let [task, start, finish] = f[..] {
            let (Ok(start), Ok(finish)) = (start.parse::<f64>(), finish.parse::<f64>()) else {
                continue;
            };
            let cost = rows.iter().find(|r| r.0 == task).unwrap().1;
            assert!(
                (finish - start - cost).abs() <= 0.002,
                "{task} lasts {} in the schedule, its cost is {cost}\n{out}",
                finish - start
            );
            scheduled += 1;
        }
    }
    assert_eq!(scheduled, g.len(), "{out}");

    // The static executor on the schedule of those costs renders what seq renders, bit for bit.
    let render = |name: &str, extra: &[&str]| {
        let wav = d.join(name);
        let mut args = vec![
            "render",
            &graph,
            "-o",
            wav.to_str().unwrap(),
            "--seconds",
            "0.2",
            "--buffer",
            "128",
        ];
        args.extend_from_slice(extra);
        let o = fugue(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        hound::WavReader::open(&wav)
            .unwrap()
            .into_samples::<f32>()
            .map(|x| x.unwrap())
            .collect::<Vec<f32>>()
    };
    let got = render(
        "static.wav",
        &["--executor", "static", "--threads", "2", "--costs", c],
    );
    let want = render("seq.wav", &["--executor", "seq"]);
    assert_eq!(want.len(), 2 * 9600, "0.2 s of stereo at 48 kHz");
    if let Some((i, a, b)) = fugue_testkit::bits::first_difference(&got, &want) {
        panic!("the static render differs from seq at sample {i}: {a:?} against {b:?}");
    }
}

#[test]
fn refuses_to_overwrite_without_force() {
    let d = folder("force");
    let costs = d.join("costs.csv");
    std::fs::write(&costs, "keep me\n").unwrap();
    let graph = example("rake.ag");
    let c = costs.to_str().unwrap();
    let o = fugue(&["calibrate", &graph, "--cycles", "5", "-o", c]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&costs).unwrap(), "keep me\n");
    let o = fugue(&["calibrate", &graph, "--cycles", "5", "-o", c, "--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&costs)
        .unwrap()
        .starts_with("node,cost\n"));
}

#[test]
fn bad_graph_is_one_clear_error() {
    let d = folder("bad");
    let g = d.join("bad.ag");
    std::fs::write(&g, "a = { kind: \"nosuchkind\", };\n").unwrap();
    let o = fugue(&["calibrate", g.to_str().unwrap(), "--cycles", "5"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("bad.ag") && e.contains("nosuchkind"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

/// A node that cannot be built is named at its place in the file, by `calibrate` and by
/// `schedule --costs measured` as by `render`.
#[test]
fn a_node_that_cannot_be_built_is_named_at_its_place() {
    let d = folder("place");
    let g = d.join("bq.ag");
    std::fs::write(
        &g,
        "a = { kind: \"osc\", freq: 440, };\nb = { kind: \"biquad\", freq: 30000, };\n\
         out = { kind: \"sink\", };\na.1 -> b.1 -> out.1;\n",
    )
    .unwrap();
    let g = g.to_str().unwrap();
    for (args, head) in [
        (vec!["calibrate", g, "--cycles", "5"], "cannot calibrate "),
        (
            vec!["schedule", g, "--costs", "measured"],
            "cannot measure the node costs of ",
        ),
    ] {
        let o = fugue(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains(&format!("{head}{g}:2:23")) && e.contains("attribute `freq` = `30000`"),
            "{args:?}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    }
    // A graph that does not compile (a sink with no input): its node's place.
    let s = d.join("sink.ag");
    std::fs::write(&s, "out = { kind: \"sink\", };\n").unwrap();
    let o = fugue(&["calibrate", s.to_str().unwrap(), "--cycles", "5"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("sink.ag:1:1: node `out` (sink) has no input"),
        "{e}"
    );
}

/// `-o -` is refused (standard output carries the table), and no file named `-` is made.
#[test]
fn calibrate_refuses_dash_as_output() {
    let dir = std::env::temp_dir().join(format!("fugue-cal-dash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let g = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rake.ag");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["calibrate", g, "-o", "-"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("-o -: standard output carries the table"), "{e}");
    assert!(!dir.join("-").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A feedback edge's two tasks, which `calibrate` costs beside the nodes, are counted apart
/// where `--costs` gives them: the nodes a file names are said as the nodes, never as none.
#[test]
fn the_tasks_of_a_feedback_edge_are_said_apart_from_the_nodes() {
    let d = folder("feedback-tasks");
    let g = d.join("fb.ag");
    std::fs::write(
        &g,
        "a = { kind: \"mix\", }; b = { kind: \"sink\", };\na.1 ~> a.1; a.1 -> b.1;\n",
    )
    .unwrap();
    let costs = d.join("fb.csv");
    std::fs::write(&costs, "node,cost\na.1~>a.1 (kept),1000\n").unwrap();
    let o = fugue(&[
        "schedule",
        g.to_str().unwrap(),
        "--costs",
        costs.to_str().unwrap(),
        "-p",
        "1",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = out.lines().find(|l| l.starts_with("costs")).unwrap();
    assert!(
        line.contains("for 0 of 2 nodes")
            && line.contains("and 1 of the 2 tasks its feedback edges make"),
        "{line}"
    );
    // calibrate's whole file: every node and both tasks.
    let o = fugue(&[
        "calibrate",
        g.to_str().unwrap(),
        "--cycles",
        "5",
        "-o",
        costs.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = fugue(&[
        "schedule",
        g.to_str().unwrap(),
        "--costs",
        costs.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("costs")).unwrap();
    assert!(
        line.contains(
            "as fugue calibrate writes them); and 2 of the 2 tasks its feedback edges make"
        ),
        "{line}"
    );
}

/// `--executor auto --costs FILE` reads and checks the file whatever the run's length: a run
/// too short for auto to try the static candidates (which use it), or one thread, still says
/// a missing or malformed file, in `render` as in `profile`.
#[test]
fn auto_checks_a_costs_file_it_may_not_use() {
    let d = folder("auto-short");
    let graph = example("comb.ag");
    let missing = d.join("missing.csv");
    let bad = d.join("bad.csv");
    std::fs::write(&bad, "node,cost\nnot-a-node,3\n").unwrap();
    let out = d.join("out.wav");
    let o = out.to_str().unwrap();
    for (costs, said) in [(&missing, "cannot read costs file"), (&bad, "not-a-node")] {
        let c = costs.to_str().unwrap();
        for extra in [
            vec!["--seconds", "0.1"],
            vec!["--seconds", "5", "--threads", "1"],
        ] {
            let mut args = vec![
                "render", &graph, "-o", o, "--force", "-e", "auto", "--costs", c,
            ];
            args.extend(&extra);
            let r = fugue(&args);
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(said) && err.contains(c), "{args:?}: {err}");
            assert!(!out.exists(), "{args:?}");
        }
        let r = fugue(&[
            "profile",
            &graph,
            "--backend",
            "offline",
            "--seconds",
            "0.1",
            "-e",
            "auto",
            "--costs",
            c,
        ]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{err}");
        assert!(err.contains(said), "{err}");
    }
}
