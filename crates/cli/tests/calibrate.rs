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
        stdout.contains("median µs") && stdout.contains("WCET µs"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&costs).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("node,cost"));
    let g = fugue_graph::read_file(Path::new(&graph), None).unwrap();
    let rows: Vec<(String, f64)> = lines
        .map(|l| {
            let (n, v) = l.split_once(',').unwrap();
            (n.to_string(), v.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), g.len());
    for (i, (name, cost)) in rows.iter().enumerate() {
        assert_eq!(name, &g.node(i).name);
        assert!(cost.is_finite() && *cost >= 0.0);
        assert!(stdout.contains(name.as_str()));
    }
    assert!(rows.iter().any(|(_, c)| *c > 0.0), "every cost is zero");

    let o = fugue(&["schedule", &graph, "-a", "hlfet", "-p", "2", "--costs", c]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let wav = d.join("out.wav");
    let o = fugue(&[
        "render",
        &graph,
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "0.2",
        "--buffer",
        "128",
        "--executor",
        "static",
        "--threads",
        "2",
        "--costs",
        c,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(wav.is_file());
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
