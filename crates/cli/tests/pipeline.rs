//! `--pipeline` through the binary: a value that does not divide the buffer, 0, or with
//! `--profile` is one sentence and exit code 2; a pipelined render writes the same file as an
//! unpipelined one.

mod common;

use common::{example, fugue, stderr};

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
    let plain = dir.join("plain.wav");
    let o = fugue(&[
        "render",
        &g,
        "-o",
        &plain.to_string_lossy(),
        "--buffer",
        "256",
        "--seconds",
        "0.5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = std::fs::read(&plain).unwrap();
    for (exec, n) in [
        ("seq", "4"),
        ("ws", "8"),
        ("static", "2"),
        ("levels", "auto"),
    ] {
        let f = dir.join(format!("{exec}-{n}.wav"));
        let o = fugue(&[
            "render",
            &g,
            "-o",
            &f.to_string_lossy(),
            "--buffer",
            "256",
            "--seconds",
            "0.5",
            "-e",
            exec,
            "-t",
            "2",
            "--pipeline",
            n,
        ]);
        assert!(o.status.success(), "{exec} {n}: {}", stderr(&o));
        assert!(
            std::fs::read(&f).unwrap() == plain,
            "{exec} --pipeline {n} wrote other samples"
        );
    }
}
