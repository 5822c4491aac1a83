//! `fugue schedule` prints the makespan and the lower bound at the same precision, and a
//! schedule that meets its bound reads as proven optimal.

mod common;

use common::{folder, fugue, stderr, stdout};

fn line<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{text}"))[key.len()..]
        .trim()
}

#[test]
fn a_schedule_that_meets_its_lower_bound_reads_as_proven() {
    let d = folder("schedule-bound", "chain");
    // A chain of thirds: its critical path (1.0000001) is the bound every schedule meets.
    let g = d.join("chain.ag");
    std::fs::write(
        &g,
        "a = { kind: \"load\", wcet: 0.3333333 };\nb = { kind: \"load\", wcet: 0.3333334 };\nc = { kind: \"load\", wcet: 0.3333334 };\nd = { kind: \"sink\", wcet: 0 };\na.1 -> b.1 -> c.1 -> d.1;\n",
    )
    .unwrap();
    for algorithm in ["hlfet", "etf", "optimal", "best"] {
        let o = fugue(&["schedule", g.to_str().unwrap(), "-a", algorithm, "-p", "2"]);
        assert!(o.status.success(), "{algorithm}: {}", stderr(&o));
        let text = stdout(&o);
        assert_eq!(
            line(&text, "makespan"),
            line(&text, "lower bound"),
            "{algorithm}:\n{text}"
        );
        assert_eq!(
            line(&text, "optimal"),
            "proven (the makespan equals the lower bound)",
            "{algorithm}:\n{text}"
        );
    }
    // A heuristic above the bound says so.
    let g2 = d.join("fork.ag");
    std::fs::write(
        &g2,
        "a = { kind: \"load\", wcet: 1 };\nb = { kind: \"load\", wcet: 1 };\nc = { kind: \"load\", wcet: 1 };\nd = { kind: \"sink\", wcet: 0 };\na.1 -> d.1;\nb.1 -> d.1;\nc.1 -> d.1;\n",
    )
    .unwrap();
    let o = fugue(&["schedule", g2.to_str().unwrap(), "-a", "hlfet", "-p", "2"]);
    let text = stdout(&o);
    assert_ne!(
        line(&text, "makespan"),
        line(&text, "lower bound"),
        "{text}"
    );
    assert_eq!(
        line(&text, "optimal"),
        "not known (a heuristic, above the lower bound)",
        "{text}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// The exact search copies no task: where copying one onto two processors is shorter (a
/// task whose two successors each pay a large communication cost), `optimal` is said proven
/// among the schedules that run each task once, its makespan above the lower bound that
/// holds for all, which `best` (through cpfd) meets; text and JSON agree.
#[test]
fn optimal_is_proven_among_schedules_without_copies_only() {
    let d = folder("schedule-bound", "copies");
    let g = d.join("dup.dot");
    std::fs::write(
        &g,
        "digraph {\n a [Weight=1];\n b [Weight=5];\n c [Weight=5];\n a -> b [Weight=10];\n a -> c [Weight=10];\n}\n",
    )
    .unwrap();
    let o = fugue(&["schedule", g.to_str().unwrap(), "-a", "optimal", "-p", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(line(&text, "makespan"), "11 cost units", "{text}");
    assert_eq!(line(&text, "lower bound"), "6 cost units", "{text}");
    assert!(
        line(&text, "optimal").starts_with("proven among schedules that run each task once"),
        "{text}"
    );
    let o = fugue(&["schedule", g.to_str().unwrap(), "-a", "best", "-p", "2"]);
    let text = stdout(&o);
    assert_eq!(line(&text, "makespan"), "6 cost units", "{text}");
    assert_eq!(
        line(&text, "optimal"),
        "proven (the makespan equals the lower bound)",
        "{text}"
    );
    for (algorithm, among) in [
        ("optimal", "schedules that run each task once"),
        ("best", "every schedule"),
    ] {
        let o = fugue(&[
            "schedule",
            g.to_str().unwrap(),
            "-a",
            algorithm,
            "-p",
            "2",
            "--json",
        ]);
        let j = stdout(&o);
        assert!(j.contains("\"optimal\":true"), "{j}");
        assert!(j.contains(&format!("\"optimal_among\":\"{among}\"")), "{j}");
    }
    std::fs::remove_dir_all(d).unwrap();
}
