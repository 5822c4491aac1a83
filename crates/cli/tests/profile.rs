//! `fugue profile`, `run --profile` and `render --profile`: the report's files and their
//! contents, refusal to overwrite a report, and bad flags.

mod common;

use common::{example, folder, fugue, stderr, stdout};

#[test]
fn profile_writes_the_report_files() {
    let dir = folder("profile", "report");
    let out = dir.join("rake");
    let o = fugue(&[
        "profile",
        &example("rake.ag"),
        "--executor",
        "ws",
        "--threads",
        "2",
        "--buffer",
        "128",
        "--seconds",
        "0.3",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("total (nodes)") && text.contains("slowest cycles"),
        "{text}"
    );
    for f in [
        "profile.txt",
        "nodes.csv",
        "profile.json",
        "median-cycle.svg",
        "slowest-cycle.svg",
    ] {
        let p = out.join(f);
        assert!(p.is_file(), "{} missing", p.display());
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("profile.json")).unwrap()).unwrap();
    // 0.3 s at 48 kHz in blocks of 128: 113 cycles; `--seconds` is wall time, and a cycle
    // held off its core past a period (a loaded machine) drops the cycles due meanwhile:
    // never more than 113, most of them still.
    let cycles = json["cycles"].as_u64().unwrap();
    assert!((57..=113).contains(&cycles), "{cycles} cycles");
    assert_eq!(json["threads"], 2);
    let nodes = json["nodes"].as_array().unwrap();
    let csv = std::fs::read_to_string(out.join("nodes.csv")).unwrap();
    assert_eq!(csv.lines().count(), nodes.len() + 1);
    assert!(nodes.iter().all(|n| n["calls"] == cycles));
    assert!(json["slowest_cycles"]
        .as_array()
        .is_some_and(|v| !v.is_empty()));
    assert!(json["threads_detail"][1]["wake_p99_ns"].is_u64());
    // The nodes by share of the work, the critical path and the conclusion.
    let means: Vec<f64> = nodes
        .iter()
        .map(|n| n["mean_ns"].as_f64().unwrap())
        .collect();
    assert!(means.windows(2).all(|w| w[0] >= w[1]), "{means:?}");
    assert!(json["critical_path_ns"].as_f64().unwrap() > 0.0);
    assert!(!json["critical_path"].as_array().unwrap().is_empty());
    let conclusion = json["conclusion"].as_str().unwrap();
    assert!(
        conclusion.contains("on any number of threads"),
        "{conclusion}"
    );
    let text = std::fs::read_to_string(out.join("profile.txt")).unwrap();
    assert!(text.trim_end().ends_with(conclusion), "{text}");
    let svg = std::fs::read_to_string(out.join("slowest-cycle.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("thread 1"));

    // A second run into the same folder is refused (exit 2), then allowed with --force.
    let again = [
        "profile",
        &example("rake.ag"),
        "--seconds",
        "0.1",
        "--backend",
        "offline",
        "-o",
        out.to_str().unwrap(),
    ];
    let o = fugue(&again);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("already exists; pass --force"),
        "{}",
        stderr(&o)
    );
    let mut forced = again.to_vec();
    forced.push("--force");
    let o = fugue(&forced);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn run_and_render_print_or_write_the_profile() {
    let dir = folder("profile", "flags");
    let o = fugue(&[
        "run",
        &example("rake.ag"),
        "--backend",
        "clocked",
        "--buffer",
        "256",
        "--duration",
        "0.2",
        "--profile",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("total (nodes)"), "{}", stderr(&o));
    let wav = dir.join("out.wav");
    let report = dir.join("render-profile");
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        wav.to_str().unwrap(),
        "--seconds",
        "0.5",
        "--executor",
        "ws",
        "--threads",
        "2",
        &format!("--profile={}", report.display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(wav.is_file() && report.join("profile.json").is_file());
    // A file where the report's folder should be: refused before rendering anything.
    let not_dir = dir.join("file");
    std::fs::write(&not_dir, "x").unwrap();
    let wav2 = dir.join("out2.wav");
    let o = fugue(&[
        "render",
        &example("rake.ag"),
        "-o",
        wav2.to_str().unwrap(),
        &format!("--profile={}", not_dir.display()),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a folder"), "{}", stderr(&o));
    assert!(!wav2.exists());
    assert_eq!(std::fs::read_to_string(&not_dir).unwrap(), "x");
}

#[test]
fn bad_profile_flags_are_usage_errors() {
    let rake = example("rake.ag");
    for args in [
        vec!["profile", "missing.ag"],
        vec!["profile", &rake, "--seconds", "0"],
        vec!["profile", &rake, "--backend", "jack"],
        vec!["profile", &rake, "--buffer", "0"],
    ] {
        let o = fugue(&args);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        let e = stderr(&o);
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(
            e.starts_with("fugue: ") || e.starts_with("error: "),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn a_report_folder_never_replaces_an_input_even_with_force() {
    // The graph, named as one of the report's files, in the report's folder.
    let dir = folder("profile", "inputs");
    let graph = dir.join("profile.txt");
    std::fs::copy(example("synth.ag"), &graph).unwrap();
    let before = std::fs::read(&graph).unwrap();
    let g = graph.to_str().unwrap();
    let d = dir.to_str().unwrap();
    let out = dir.join("y.wav");
    let profile_arg = format!("--profile={d}");
    for args in [
        vec![
            "profile",
            g,
            "--format",
            "ag",
            "-o",
            d,
            "--force",
            "--seconds",
            "0.1",
        ],
        vec![
            "render",
            g,
            "--format",
            "ag",
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.1",
            profile_arg.as_str(),
            "--force",
        ],
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("profile.txt is the input file")
                && stderr(&o).contains("name another folder"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(&graph).unwrap(),
            before,
            "{args:?} replaced the graph"
        );
    }
}

/// `profile --executor auto` says what auto chose, and its header names the executor and
/// threads that played, whatever auto chose (it chose among candidates that record whole
/// cycles: a pipelined one recorded no profile).
#[test]
fn profile_with_auto_names_what_played() {
    // A line of nodes: auto's one parallel candidate there was a pipelined one.
    let g = folder("profile", "auto").join("line.ag");
    let o = fugue(&[
        "gen",
        "line",
        "-n",
        "100",
        "-o",
        g.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let g = g.to_string_lossy().into_owned();
    for threads in ["1", "2"] {
        let o = fugue(&[
            "profile",
            &g,
            "--executor",
            "auto",
            "--threads",
            threads,
            "--buffer",
            "512",
            "--seconds",
            "3",
            "--backend",
            "offline",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("executor auto: chose "),
            "{}",
            stderr(&o)
        );
        let text = stdout(&o);
        let header = text.lines().next().unwrap_or_default();
        let played = text.lines().nth(1).unwrap_or_default();
        assert!(header.contains(", auto: "), "{header}");
        // The header's threads are the ones the cycles ran on.
        let t = header
            .split(" with ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_default();
        assert!(
            played.contains(&format!("on {t} thread(s)")),
            "{header}\n{played}"
        );
        if threads == "1" {
            assert!(header.contains("auto: seq with 1 thread(s)"), "{header}");
        }
    }
}

/// A node that cannot be built is said at its place in the file, as render says it, and the
/// graph's warnings (an attribute no kind reads, a node that reaches no sink) are said after
/// a profile that succeeded, at theirs.
#[test]
fn profile_says_places_and_the_graphs_warnings() {
    let dir = folder("profile", "places");
    let bad = dir.join("bad.ag");
    std::fs::write(
        &bad,
        "a = { kind: \"delay\", time: 100000.0, };\nout = { kind: \"sink\", };\na.1 -> out.1;\n",
    )
    .unwrap();
    for backend in ["offline", "clocked"] {
        let o = fugue(&[
            "profile",
            bad.to_str().unwrap(),
            "--seconds",
            "0.1",
            "--backend",
            backend,
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("cannot profile "), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("bad.ag:1:22: node `a` (delay)"),
            "{}",
            stderr(&o)
        );
    }
    let warn = dir.join("warn.ag");
    std::fs::write(
        &warn,
        "b = { kind: \"osc\", freq: 440, bogus: 1, };\nc = { kind: \"osc\", freq: 3, };\nout = { kind: \"sink\", };\nb.1 -> out.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "profile",
        warn.to_str().unwrap(),
        "--seconds",
        "0.1",
        "--backend",
        "offline",
    ]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("warn.ag:1:31: node `b` has attribute `bogus`"),
        "{e}"
    );
    assert!(
        e.contains("warn.ag:2:1: node `c` (osc) reaches no sink"),
        "{e}"
    );
    let _ = stdout(&o);
}

/// The profile's memory (a histogram per task, about 10 KB) counts against the run's limit,
/// before anything is allocated: a 60,000-node chain profiles as one sentence of refusal, for
/// `profile` and `render --profile`, where it took gigabytes (a million nodes aborted).
#[test]
fn a_profile_too_large_for_the_memory_limit_is_refused() {
    let dir = folder("profile", "too-large");
    let g = dir.join("line.ag");
    let o = fugue(&[
        "gen",
        "line",
        "-n",
        "60000",
        "-o",
        g.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let wav = dir.join("o.wav");
    for args in [
        &["profile", g.to_str().unwrap(), "--backend", "offline"][..],
        &[
            "render",
            g.to_str().unwrap(),
            "-o",
            wav.to_str().unwrap(),
            "--profile",
            "--force",
        ][..],
    ] {
        let o = fugue(
            &[
                args,
                &["--seconds", "0.01", "--buffer", "16", "--executor", "seq"],
            ]
            .concat(),
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("profiling this graph needs about")
                && e.contains("a histogram for each of its 60000 nodes")
                && e.contains("more than the 512 MiB a run may hold"),
            "{args:?}: {e}"
        );
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    }
    assert!(!wav.exists());
}
