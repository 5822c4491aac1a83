//! Small files that ask for huge resources are refused before anything large is allocated or
//! read, with the figure and the limit (docs/limits.md): buffers and delay lines against the
//! plan's memory budget, graph and WAV files against their size limits, `gen` against its
//! size limits.

mod common;

use std::time::{Duration, Instant};

use common::{folder, fugue, stderr};

/// Fails unless `o` exited with `code` and its only line of standard error contains every
/// one of `words`.
fn refused(o: &std::process::Output, code: i32, words: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    for w in words {
        assert!(e.contains(w), "`{w}` not in {e}");
    }
}

#[test]
fn a_million_ports_are_refused_with_the_figure_and_the_limit() {
    let d = folder("resource_limits", "ports");
    let g = d.join("big.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, out: 1000000, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
    )
    .unwrap();
    let g = g.to_str().unwrap();
    let out = d.join("x.wav");
    let out = out.to_str().unwrap();
    let start = Instant::now();
    for (cmd, extra) in [
        ("render", vec!["-o", out, "--seconds", "1"]),
        ("calibrate", vec![]),
        ("run", vec!["--backend", "clocked", "--seconds", "1"]),
    ] {
        for buffer in ["512", "8192"] {
            let mut args = vec![cmd, g, "--buffer", buffer];
            args.extend(&extra);
            let o = fugue(&args);
            refused(
                &o,
                1,
                &["big.ag", "MiB of memory", "limit of 512 MiB", "node `o`"],
            );
        }
    }
    assert!(!std::path::Path::new(out).exists());
    assert!(start.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_wide_mix_at_a_huge_buffer_is_refused() {
    let d = folder("resource_limits", "wide");
    let g = d.join("rake.ag");
    let o = fugue(&[
        "gen",
        "rake",
        "--branches",
        "3333",
        "-o",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = d.join("x.wav");
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--buffer",
        "1048576",
        "--seconds",
        "30",
    ]);
    refused(&o, 1, &["rake.ag", "1048576 frames", "limit of 512 MiB"]);
}

/// Input ports that nothing feeds take no memory (they read the plan's one block of
/// silence) but are read every cycle: a mix of 100,000 declared inputs at 32,768 frames would
/// read 3.3e9 samples a cycle, and is refused before anything runs, by `render`, `run` and
/// the measured costs of `schedule`; at 256 frames it renders.
#[test]
fn unconnected_inputs_count_against_the_reads_of_a_cycle() {
    let d = folder("resource_limits", "reads");
    let g = d.join("wide.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, };\nm = { kind: \"mix\", in: 100000, };\ns = { kind: \"sink\", };\no.1 -> m.1;\nm.1 -> s.1;\n",
    )
    .unwrap();
    let g = g.to_str().unwrap();
    let out = d.join("x.wav");
    let out = out.to_str().unwrap();
    let words = [
        "wide.ag:2:1",
        "would read 3276800000 input samples per cycle at 32768 frames, more than the limit of 1073741824",
        "node `m`, whose 100000 input port(s) (99999 of them unconnected",
    ];
    for args in [
        vec![
            "render",
            g,
            "-o",
            out,
            "--seconds",
            "0.01",
            "--buffer",
            "32768",
        ],
        vec![
            "run",
            g,
            "--backend",
            "clocked",
            "--seconds",
            "1",
            "--buffer",
            "32768",
        ],
        vec!["schedule", g, "--costs", "measured", "--buffer", "32768"],
    ] {
        refused(&fugue(&args), 1, &words);
    }
    // `check` and `info` count the reads as the compiler does, and say so among their
    // problems.
    for cmd in ["check", "info"] {
        let o = fugue(&[cmd, g, "--buffer", "32768"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        for w in words {
            assert!(stderr(&o).contains(w), "{cmd}: `{w}` not in {}", stderr(&o));
        }
    }
    let o = fugue(&["check", g]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!std::path::Path::new(out).exists());
    let o = fugue(&["render", g, "-o", out, "--seconds", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn long_delay_lines_count_against_the_budget() {
    let d = folder("resource_limits", "delays");
    let mut text = String::from("o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\n");
    for i in 0..100 {
        text +=
            &format!("d{i} = {{ kind: \"delay\", time: 60, }};\no.1 -> d{i}.1;\nd{i}.1 -> s.1;\n");
    }
    let g = d.join("delays.ag");
    std::fs::write(&g, text).unwrap();
    let out = d.join("x.wav");
    let o = fugue(&["render", g.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    refused(&o, 1, &["delays.ag", "delay lines", "limit of 512 MiB"]);
    // One delay line alone beyond the per-node limit (60 s at 1.5 MHz): the attribute is named.
    let g1 = d.join("one.ag");
    std::fs::write(
        &g1,
        "o = { kind: \"osc\", freq: 440, };\nd = { kind: \"delay\", time: 60, };\ns = { kind: \"sink\", };\no.1 -> d.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        g1.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--rate",
        "1536000",
    ]);
    refused(&o, 1, &["node `d`", "`time`", "limit of 64 MiB per node"]);
}

#[test]
fn an_endless_graph_file_is_read_only_up_to_the_limit() {
    let start = Instant::now();
    let o = fugue(&["info", "--format", "ag", "/dev/zero"]);
    refused(&o, 1, &["/dev/zero", "larger than 256 MiB"]);
    assert!(start.elapsed() < Duration::from_secs(30));
    // A regular file is refused from its size (a sparse one: no disk used), a graph or a
    // costs file alike.
    let d = folder("resource_limits", "sparse");
    let big = d.join("big.ag");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    refused(
        &fugue(&["info", big.to_str().unwrap()]),
        1,
        &["big.ag", "larger than 256 MiB"],
    );
    let costs = d.join("big.csv");
    std::fs::File::create(&costs)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    refused(
        &fugue(&[
            "info",
            &common::example("rake.ag"),
            "--costs",
            costs.to_str().unwrap(),
        ]),
        1,
        &[
            "big.csv",
            "larger than 256 MiB, the most a costs file may have",
        ],
    );
    std::fs::remove_file(&big).unwrap();
    std::fs::remove_file(&costs).unwrap();
}

#[test]
fn an_endless_wav_input_is_refused() {
    let d = folder("resource_limits", "wav");
    let out = d.join("x.wav");
    let o = fugue(&[
        "render",
        &common::example("echo.ag"),
        "-o",
        out.to_str().unwrap(),
        "--input",
        "/dev/zero",
    ]);
    refused(&o, 1, &["/dev/zero", "is not a regular file"]);
    // A header that claims more samples than the limit: refused before reading them.
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&u32::MAX.to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&48_000u32.to_le_bytes());
    wav.extend_from_slice(&96_000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(u32::MAX - 1).to_le_bytes());
    // One second of samples after the header.
    wav.extend(std::iter::repeat_n(0u8, 96_000));
    let input = d.join("huge.wav");
    std::fs::write(&input, wav).unwrap();
    let render = |seconds: Option<&str>| {
        let mut args = vec![
            "render".to_string(),
            common::example("echo.ag"),
            "-o".into(),
            out.to_str().unwrap().into(),
            "--input".into(),
            input.to_str().unwrap().into(),
            "--force".into(),
        ];
        if let Some(s) = seconds {
            args.extend(["--seconds".into(), s.into()]);
        }
        fugue(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    refused(
        &render(None),
        1,
        &[
            "huge.wav",
            "header promises 2147483647 samples, more than the limit of 134217728",
            "give --seconds",
        ],
    );
    // The limit bounds what a render reads: half a second of it plays, whatever the header
    // promises beyond.
    let o = render(Some("0.5"));
    assert!(o.status.success(), "{}", stderr(&o));
    // A minute is within the limit too: the file ends after its second.
    refused(
        &render(Some("60")),
        1,
        &[
            "huge.wav",
            "promises 2147483647 samples but the file ends after 48000",
        ],
    );
    // More than the limit of what is read: refused before reading.
    refused(
        &render(Some("3600")),
        1,
        &["huge.wav", "the render would read 172800000 of its samples"],
    );
}

#[test]
fn gen_refuses_huge_sizes_even_with_force() {
    let d = folder("resource_limits", "gen");
    let out = d.join("x.ag");
    let out = out.to_str().unwrap();
    for args in [
        vec!["gen", "line", "-n", "1000000000", "-o", out],
        vec!["gen", "random", "-n", "100000", "-o", out],
        vec!["gen", "diamond", "--depth", "20", "-o", out],
        vec!["gen", "rake", "--branches", "100000000", "-o", out],
        vec![
            "gen", "layered", "--layers", "100000", "--width", "1000", "-o", out,
        ],
    ] {
        // --force overwrites an output; it does not lift the limits.
        for force in [false, true] {
            let mut args = args.clone();
            if force {
                args.push("--force");
            }
            let o = fugue(&args);
            refused(&o, 2, &["more than the limit of", "docs/limits.md"]);
            assert!(!std::path::Path::new(out).exists());
        }
    }
}

#[test]
fn endless_inputs_are_read_up_to_their_limit() {
    let g = common::example("rake.ag");
    let start = Instant::now();
    for (args, words) in [
        (
            vec!["host", "--backend", "offline", "--script", "/dev/zero"],
            [
                "/dev/zero",
                "larger than 16 MiB, the most a host script may have",
            ],
        ),
        (
            vec!["info", &g, "--costs", "/dev/zero"],
            [
                "/dev/zero",
                "larger than 256 MiB, the most a costs file may have",
            ],
        ),
        (
            vec!["bench", "study", "/dev/zero", "--dry-run"],
            [
                "/dev/zero",
                "larger than 1 MiB, the most a study spec may have",
            ],
        ),
    ] {
        let o = fugue(&args);
        refused(&o, 1, &words);
    }
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn generated_shapes_and_sizes_in_benchmarks_are_bounded() {
    let d = folder("resource_limits", "bench");
    let out = d.join("out");
    let out = out.to_str().unwrap();
    for (args, code, words) in [
        (
            vec!["bench", "capacity", "--graph", "gen:diamond:40"],
            2,
            vec!["gen:diamond:40", "more than the limit of 1000000"],
        ),
        (
            vec!["bench", "table", "--shapes", "gen:diamond:40", "-o", out],
            2,
            vec!["gen:diamond:40", "more than the limit of 1000000"],
        ),
        (
            vec!["bench", "host", "--graphs", "heavy100000000", "-o", out],
            2,
            vec!["heavy100000000", "between 1 and 1000", "512 MiB"],
        ),
        (
            vec!["bench", "host", "--graphs", "heavy1001", "-o", out],
            2,
            vec!["heavy1001", "between 1 and 1000"],
        ),
        (
            vec!["bench", "table", "--shapes", "gen:line:2000000", "-o", out],
            2,
            vec!["gen:line:2000000", "from 1 to 1000000"],
        ),
        (
            vec!["bench", "host", "--graphs", "gen:diamond:40", "-o", out],
            2,
            vec!["gen:diamond:40", "more than the limit of 1000000"],
        ),
        (
            vec!["bench", "ring", "--capacity", "1099511627776"],
            2,
            vec![
                "--capacity 1099511627776",
                "64 TiB",
                "more than the limit of 1 GiB",
            ],
        ),
        (
            vec!["bench", "ring", "--item-size", "1073741824"],
            2,
            vec!["--item-size 1073741824", "more than the limit of 1 GiB"],
        ),
        (
            vec!["bench", "ring", "--capacity", "18446744073709551615"],
            2,
            vec!["18446744073709551615", "more than the limit of 1 GiB"],
        ),
    ] {
        let o = fugue(&args);
        refused(&o, code, &words);
        assert!(!std::path::Path::new(out).exists(), "{args:?}");
    }
    // clap's refusal of a value out of range takes more than one line (its usage tip).
    let o = fugue(&["schedule", &common::example("rake.ag"), "-p", "4294967296"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("must be at most 4096 (got 4294967296)"), "{e}");
}

/// The largest buffer is a buffer like the others for the automatic choice: it renders, with
/// no candidate of two blocks per cycle (that would be twice the largest).
#[test]
fn the_largest_buffer_renders_with_auto() {
    let d = folder("resource_limits", "largest-buffer");
    let out = d.join("x.wav");
    let g = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rake.ag");
    let o = fugue(&[
        "render",
        g,
        "-o",
        out.to_str().unwrap(),
        "--buffer",
        "1048576",
        "--seconds",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("2097152"), "{}", stderr(&o));
}

/// The blocks on their way from the computing thread to the WAV writer are bounded with the
/// plan: two of a thousand channels of 65,536 frames (sixteen took 4 GiB, and a process
/// under `ulimit -v` aborted on the allocation) are refused in one sentence under a limit
/// they pass, and the same graph at 256 frames renders under it.
#[test]
fn the_blocks_in_flight_to_the_writer_count_against_the_memory() {
    let d = folder("resource_limits", "ring");
    let mut g =
        String::from("n = { kind: \"noise\", out: 1000, };\ns = { kind: \"sink\", in: 1000, };\n");
    for i in 1..=1000 {
        g += &format!("n.{i} -> s.{i};\n");
    }
    std::fs::write(d.join("wide.ag"), g).unwrap();
    let bin = env!("CARGO_BIN_EXE_fugue");
    let under_limit = |buffer: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 1000000 && exec '{bin}' render wide.ag -o w.wav --seconds 0.01 --buffer {buffer} --executor seq --force"
            ))
            .current_dir(&d)
            .output()
            .unwrap()
    };
    let o = under_limit("65536");
    refused(
        &o,
        1,
        &[
            "wide.ag: the render would hold 1001 MiB: its plan 501 MiB and the blocks on their way to the output (2 blocks of 1000 channels of 65536 frames each) 501 MiB, more than the limit of",
            "use a smaller buffer size (--buffer) or fewer output channels",
        ],
    );
    assert!(!d.join("w.wav").exists());
    let o = under_limit("256");
    assert!(o.status.success(), "{}", stderr(&o));
}
