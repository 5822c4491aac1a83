//! `--pipeline` through the binary: a value that does not divide the buffer, 0, or with
//! `--profile` is one sentence and exit code 2; a pipelined render writes the same file as an
//! unpipelined one.

mod common;

use common::{example, fugue, stderr};

/// Renders `graph` to `out` at 256 frames for `seconds`, with the flags `extra`; checks that
/// it succeeded and returns the file's bytes and the standard error.
fn render(graph: &str, out: &std::path::Path, seconds: &str, extra: &[&str]) -> (Vec<u8>, String) {
    let out_s = out.to_string_lossy();
    let mut args = vec![
        "render",
        graph,
        "-o",
        &out_s,
        "--buffer",
        "256",
        "--seconds",
        seconds,
    ];
    args.extend_from_slice(extra);
    let o = fugue(&args);
    assert!(o.status.success(), "{graph} {extra:?}: {}", stderr(&o));
    (std::fs::read(out).unwrap(), stderr(&o))
}

#[test]
fn bad_pipelines_are_usage_errors_in_one_sentence() {
    let g = example("synth.ag");
    let out = common::folder("pipeline-cli", "bad").join("x.wav");
    let out = out.to_string_lossy();
    for (extra, want) in [
        (
            &["--pipeline", "3"][..],
            "--pipeline 3 does not divide the buffer of 128 frames",
        ),
        (
            &["--pipeline", "0"][..],
            "`0` is not a number of sub-blocks",
        ),
        (
            &["--pipeline", "x"][..],
            "`x` is not a number of sub-blocks",
        ),
        (
            &["--pipeline", "4", "--profile"][..],
            "--profile cannot be used with --pipeline",
        ),
    ] {
        let mut args = vec![
            "render",
            &g,
            "-o",
            &out,
            "--buffer",
            "128",
            "--seconds",
            "0.1",
        ];
        args.extend_from_slice(extra);
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    let o = fugue(&[
        "run",
        &g,
        "--backend",
        "clocked",
        "--buffer",
        "96",
        "--pipeline",
        "64",
        "--seconds",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not divide the buffer of 96 frames"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_pipelined_render_writes_the_same_file() {
    let dir = common::folder("pipeline-cli", "same");
    let g = example("rake.ag");
    let (plain, _) = render(&g, &dir.join("plain.wav"), "0.5", &[]);
    for (exec, n) in [
        ("seq", "4"),
        ("ws", "8"),
        ("static", "2"),
        ("levels", "auto"),
    ] {
        let f = dir.join(format!("{exec}-{n}.wav"));
        let (got, _) = render(&g, &f, "0.5", &["-e", exec, "-t", "2", "--pipeline", n]);
        assert!(got == plain, "{exec} --pipeline {n} wrote other samples");
    }
}

/// `--overlap`: every executor writes the same file as one block per cycle (also with a
/// pipeline and a length that ends inside a cycle); with auto or `--profile`, or a cycle
/// beyond the largest block, one sentence and exit code 2 (0 or 17: clap's range error).
#[test]
fn overlapped_renders_write_the_same_file_and_bad_overlaps_are_refused() {
    let dir = common::folder("pipeline-cli", "overlap");
    let g = example("rake.ag");
    let (plain, _) = render(&g, &dir.join("plain.wav"), "0.51", &["-e", "seq"]);
    for (exec, n, pipeline) in [
        ("seq", "2", "1"),
        ("ws", "2", "1"),
        ("ws", "3", "2"),
        ("static", "4", "1"),
        ("levels", "2", "1"),
    ] {
        let f = dir.join(format!("{exec}-{n}-{pipeline}.wav"));
        let extra = [
            "-e",
            exec,
            "-t",
            "2",
            "--overlap",
            n,
            "--pipeline",
            pipeline,
        ];
        let (got, _) = render(&g, &f, "0.51", &extra);
        assert!(
            got == plain,
            "{exec} --overlap {n} --pipeline {pipeline} wrote other samples"
        );
    }
    let out = dir.join("bad.wav");
    let out = out.to_string_lossy();
    for (extra, want) in [
        (
            &["--overlap", "2"][..],
            "--overlap 2 needs an executor other than auto",
        ),
        (
            &["--overlap", "2", "-e", "ws", "--profile"][..],
            "--profile cannot be used with --overlap 2",
        ),
        (&["--overlap", "0", "-e", "ws"][..], "--overlap"),
        (&["--overlap", "17", "-e", "ws"][..], "--overlap"),
        (
            &["--overlap", "16", "-e", "ws", "--buffer", "131072"][..],
            "makes cycles of more than 1048576 frames",
        ),
    ] {
        let mut args = vec!["render", &g, "-o", &out, "--seconds", "0.1"];
        args.extend_from_slice(extra);
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(want), "{extra:?}: {err}");
        // (clap's own range errors add a line pointing at --help.)
        if want != "--overlap" {
            assert_eq!(err.trim().lines().count(), 1, "{extra:?}: {err}");
        }
    }
}

/// A graph with a feedback edge, or one that changes rates, runs `--overlap` as one block per
/// cycle: the same file as seq, and a warning that says why.
#[test]
fn overlap_refused_by_the_graph_is_said_and_changes_nothing() {
    let dir = common::folder("pipeline-cli", "overlap-refused");
    let rates = dir.join("rates.ag");
    std::fs::write(
        &rates,
        "o = { kind: \"osc\", freq: 440, volume: 0.5, };  r = { kind: \"resampler\", ratio: 2, };  s = { kind: \"sink\", };  o.1 -> r.1;  r.1 -> s.1;\n",
    )
    .unwrap();
    let comb = example("comb.ag");
    for (g, why) in [
        (comb.as_str(), "the graph has a feedback edge"),
        (
            &*rates.to_string_lossy(),
            "node `r` (resampler) changes the rate",
        ),
    ] {
        let (want, _) = render(g, &dir.join("seq.wav"), "0.3", &["--force", "-e", "seq"]);
        let ws = ["--force", "-e", "ws", "-t", "2", "--overlap", "2"];
        let (got, err) = render(g, &dir.join("ws.wav"), "0.3", &ws);
        assert!(got == want, "{g}: other samples with --overlap 2");
        assert!(
            err.contains(&format!("overlap 2: {why}")) && err.contains("one block per cycle"),
            "{g}: {err}"
        );
        // An option the engine could not apply fails a strict render, nothing written.
        let strict = dir.join("strict.wav");
        let mut args = vec![
            "render",
            g,
            "-o",
            strict.to_str().unwrap(),
            "--seconds",
            "0.1",
        ];
        args.extend_from_slice(&ws[1..]);
        args.push("--strict");
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{g}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{g}: {}", stderr(&o));
        assert!(!strict.exists(), "{g}");
    }
}

/// A node that cannot be built for the block `--overlap` makes (N buffers as one) says that
/// block came from `--overlap`, not from the buffer asked for.
#[test]
fn a_node_refusing_the_overlapped_block_names_the_overlap() {
    let dir = common::folder("pipeline-cli", "overlap-block");
    let g = dir.join("rs.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, };\nup = { kind: \"resampler\", ratio: \"3/2\", };\n\
         dn = { kind: \"resampler\", ratio: \"2/3\", };\nout = { kind: \"sink\", };\n\
         o.1 -> up.1 -> dn.1 -> out.1;\n",
    )
    .unwrap();
    let g = g.to_str().unwrap();
    let out = dir.join("x.wav");
    let o = fugue(&[
        "render",
        g,
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.1",
        "--buffer",
        "3",
        "-e",
        "ws",
        "-t",
        "2",
        "--overlap",
        "3",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "cannot render {g}:2:27 (--overlap 3 runs 3 blocks of 3 frames as one of 9)"
        )) && e.contains("block of 9 frames"),
        "{e}"
    );
    assert!(!out.exists());
}

/// `render --json` says how the plan that played ran its blocks: `blocks_per_cycle` from
/// `--overlap` (1 where the graph refused it) and `pipeline` from `--pipeline`.
#[test]
fn the_json_report_says_blocks_per_cycle_and_sub_blocks() {
    let dir = common::folder("pipeline-cli", "json");
    let rake = example("rake.ag");
    let comb = example("comb.ag");
    for (g, extra, blocks, subs) in [
        (&rake, &["-e", "ws"][..], 1, 1),
        (
            &rake,
            &["-e", "ws", "--overlap", "3", "--pipeline", "2"][..],
            3,
            2,
        ),
        (&rake, &["-e", "static", "--pipeline", "4"][..], 1, 4),
        (&comb, &["-e", "ws", "--overlap", "2"][..], 1, 1),
    ] {
        let out = dir.join("out.wav");
        let out = out.to_string_lossy();
        let mut args = vec![
            "render",
            g,
            "-o",
            &out,
            "--force",
            "--buffer",
            "256",
            "--seconds",
            "0.2",
            "-t",
            "2",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = fugue(&args);
        assert!(o.status.success(), "{g} {extra:?}: {}", stderr(&o));
        let json: serde_json::Value =
            serde_json::from_slice(&o.stdout).expect("one JSON object on standard output");
        assert_eq!(json["blocks_per_cycle"], blocks, "{g} {extra:?}: {json}");
        assert_eq!(json["pipeline"], subs, "{g} {extra:?}: {json}");
    }
}
