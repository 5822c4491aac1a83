//! Help, completions, the man page and the list of node kinds, all from the same definitions.

mod common;

use common::{folder, fugue, stderr, stdout};

/// Every command and subcommand, as argument lists.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["info"],
    &["check"],
    &["dot"],
    &["gen"],
    &["bench"],
    &["bench", "ring"],
    &["bench", "overhead"],
    &["bench", "table"],
    &["bench", "study"],
    &["bench", "capacity"],
    &["bench", "pool"],
    &["schedule"],
    &["render"],
    &["run"],
    &["pool"],
    &["pool", "quicksort"],
    &["pool", "mandelbrot"],
    &["pool", "voronoi"],
    &["calibrate"],
    &["kinds"],
    &["plugins"],
    &["completions"],
    &["man"],
];

#[test]
fn every_help_has_an_example_and_the_exit_codes() {
    for c in COMMANDS {
        let mut args: Vec<&str> = c.to_vec();
        args.push("--help");
        let o = fugue(&args);
        assert!(o.status.success(), "{c:?}: {}", stderr(&o));
        let h = stdout(&o);
        let examples = h
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{c:?}: no examples:\n{h}"));
        // Each example runs the command it documents.
        let first = examples.lines().next().unwrap().trim();
        assert!(
            first.starts_with(&format!("fugue {}", c.join(" ")).trim_end().to_string()),
            "{c:?}: {first}"
        );
        assert!(
            h.contains(
                "Exit codes: 0 success; 1 bad input or a failure while running; 2 usage error;\n130, 143, 129: stopped by SIGINT (Ctrl-C), SIGTERM, SIGHUP."
            ),
            "{c:?}"
        );
    }
}

#[test]
fn renamed_and_defaulted_flags() {
    // --seconds everywhere, --duration accepted as its alias.
    for c in ["render", "run"] {
        let h = stdout(&fugue(&[c, "--help"]));
        assert!(
            h.contains("--seconds <SECONDS>") && h.contains("[alias: --duration]"),
            "{c}: {h}"
        );
    }
    let h = stdout(&fugue(&["schedule", "--help"]));
    assert!(h.contains("[default: best]"), "{h}");
    assert!(h.contains("[default: the cores this"), "{h}");
    // -p means processors only.
    for c in [&["gen"][..], &["bench", "ring"]] {
        let mut a = c.to_vec();
        a.push("--help");
        assert!(!stdout(&fugue(&a)).contains("  -p,"), "{c:?}");
    }
}

#[test]
fn completions_and_man_pages_are_generated() {
    for (shell, mark) in [
        ("bash", "_fugue()"),
        ("zsh", "#compdef fugue"),
        ("fish", "complete -c fugue"),
    ] {
        let o = fugue(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let s = stdout(&o);
        assert!(
            s.contains(mark) && s.contains("render") && s.contains("kinds"),
            "{shell}"
        );
    }
    let o = fugue(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    let man = stdout(&fugue(&["man"]));
    assert!(
        man.starts_with(".ie") && man.contains(".TH fugue 1") && man.contains("render"),
        "{man}"
    );
    let d = folder("help", "man");
    let o = fugue(&["man", "--dir", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for page in [
        "fugue.1",
        "fugue-render.1",
        "fugue-bench-study.1",
        "fugue-pool-voronoi.1",
    ] {
        let text = std::fs::read_to_string(d.join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    assert!(
        !d.join("fugue-bench-ring-producer.1").exists(),
        "hidden commands have no page"
    );
    // Nothing is overwritten without --force.
    let o = fugue(&["man", "--dir", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    // A file is not a folder; a missing folder is none.
    let file = d.join("fugue.1");
    let o = fugue(&["man", "--dir", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fugue.1: is not a folder"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&["man", "--dir", d.join("nope").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nope: no such folder"),
        "{}",
        stderr(&o)
    );
    // One page already there (a later one in the listing) is refused before any page is
    // written: the folder is left as it was.
    let one = folder("help", "man-one");
    std::fs::write(one.join("fugue-run.1"), "mine").unwrap();
    let o = fugue(&["man", "--dir", one.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("fugue-run.1"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&one).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(
        std::fs::read_to_string(one.join("fugue-run.1")).unwrap(),
        "mine"
    );
    // `run --stats -` is refused: standard output carries the run's report (it wrote a file
    // named `-`).
    let o = fugue(&[
        "run",
        &common::example("synth.ag"),
        "--backend",
        "clocked",
        "--seconds",
        "0.1",
        "--stats",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--stats -: standard output carries the run's report"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_committed_list_of_kinds_is_the_commands_output() {
    let o = fugue(&["kinds", "--markdown"]);
    assert!(o.status.success());
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/nodes.md"),
    )
    .unwrap();
    assert_eq!(
        committed,
        stdout(&o),
        "docs/nodes.md is stale: run `fugue kinds --markdown > docs/nodes.md`"
    );
    let text = stdout(&fugue(&["kinds"]));
    for kind in [
        "osc",
        "mod",
        "mix",
        "sink",
        "source",
        "resampler",
        "gain",
        "biquad",
        "delay",
        "noise",
        "karplus",
        "reverb",
        "load",
    ] {
        assert!(
            text.contains(&format!("\n{kind}: ")) || text.starts_with(&format!("{kind}: ")),
            "{kind}"
        );
    }
}
