//! Inputs at the edges of what fugue accepts: each is refused in one sentence that names the
//! file and the place (or, in the host's shell, one error line while it goes on), never with
//! a panic, an abort or memory committed beyond the limits; and output that went wrong (NaN,
//! infinities) is said for what it is.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};

use common::{folder, fugue, stderr, stdout};

/// Writes `text` as `name` in a fresh folder of this file's tests; returns its path.
fn write(name: &str, text: &str) -> String {
    let dir = folder("bounds", name);
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Asserts that `o` failed with exit code `code`, one line on standard error containing every
/// one of `want`, and no panic.
fn refused(o: &std::process::Output, code: i32, want: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in want {
        assert!(err.contains(w), "wanted `{w}` in: {err}");
    }
}

/// Levels and gains that would overflow the samples are refused where they are written, in
/// a graph file and in the host's `set`.
#[test]
fn levels_beyond_80_db_are_refused() {
    for (name, node, want) in [
        (
            "volume.ag",
            "o = { kind: \"osc\", freq: 220, volume: 1e308, };",
            "attribute `volume` = `1e308` is out of range",
        ),
        (
            "freq.ag",
            "o = { kind: \"osc\", freq: 1e18, };",
            "attribute `freq` = `1e18` is out of range: a sine's frequency lies within -1e9 to 1e9 Hz",
        ),
        (
            "seed.ag",
            "o = { kind: \"noise\", seed: 1.5, };",
            "attribute `seed` = `1.5` must be a whole number from 0 to 9007199254740992 (2^53)",
        ),
        (
            "seed-past.ag",
            "o = { kind: \"noise\", seed: 9007199254740993, };",
            "attribute `seed` = `9007199254740993` must be a whole number from 0 to 9007199254740992 (2^53)",
        ),
        (
            "modfreq.ag",
            "o = { kind: \"mod\", freq: -1e300, };",
            "attribute `freq` = `-1e300` is out of range",
        ),
        (
            "db.ag",
            "o = { kind: \"gain\", db: 1e10, };",
            "attribute `db` = `10000000000` is out of range",
        ),
        (
            "wet.ag",
            "o = { kind: \"delay\", wet: -20000, };",
            "attribute `wet` = `-20000` is out of range",
        ),
    ] {
        let g = write(
            name,
            &format!("{node}\ns = {{ kind: \"sink\", }};\no.1 -> s.1;\n"),
        );
        let out = folder("bounds", "levels-out").join("x.wav");
        let o = fugue(&[
            "render",
            &g,
            "-o",
            &out.to_string_lossy(),
            "--force",
            "--seconds",
            "0.1",
        ]);
        refused(&o, 1, &[name, want]);
    }
    // At the limit: accepted.
    let g = write(
        "edge.ag",
        "o = { kind: \"osc\", freq: 220, volume: 10000, };\ng = { kind: \"gain\", db: 80, gain: -1e4, };\ns = { kind: \"sink\", };\no.1 -> g.1 -> s.1;\n",
    );
    let o = fugue(&["check", &g]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Costs beyond 1e12 µs are refused at their place in every format and in a costs file, so
/// that schedules never meet an infinite sum (which made `schedule` panic).
#[test]
fn costs_beyond_1e12_are_refused_at_their_place() {
    let ag = write(
        "costs.ag",
        "a = { wcet: 1e308, };\nb = { wcet: 1e308, };\na.1 -> b.1;\n",
    );
    refused(
        &fugue(&["schedule", &ag, "-p", "2"]),
        1,
        &["costs.ag:1:13:", "from 0 to 1e12"],
    );
    let stg = write("costs.stg", "2\n0 0 0\n1 1e308 1 0\n2 0 1 1\n3 0 1 2\n");
    refused(
        &fugue(&["info", &stg]),
        1,
        &["costs.stg:3", "from 0 to 1e12"],
    );
    let dot = write("costs.dot", "digraph { a [Weight=1e308]; b; a -> b; }\n");
    refused(&fugue(&["info", &dot]), 1, &["costs.dot", "from 0 to 1e12"]);
    let g = write(
        "ok.ag",
        "a = { wcet: 1e12, };\nb = { wcet: 1e12, };\na.1 -> b.1;\n",
    );
    let csv = write("huge.csv", "node,cost\na,1e308\nb,1\n");
    refused(
        &fugue(&["schedule", &g, "-p", "2", "--costs", &csv]),
        1,
        &["huge.csv:2:3: the cost `1e308`", "from 0 to 1e12"],
    );
    let o = fugue(&["schedule", &g, "-p", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Resamplers in a chain multiply their ratios: past 4096 times the engine's rate, or past
/// the largest block, the node is refused before anything is allocated for it (it took
/// gigabytes and aborted).
#[test]
fn chained_resamplers_beyond_the_largest_rate_are_refused() {
    let g = write(
        "resamplers.ag",
        "o = { kind: \"osc\", freq: 440, };\nr = { kind: \"resampler\", ratio: 4096, };\nr2 = { kind: \"resampler\", ratio: 4096, };\ns = { kind: \"sink\", };\no.1 -> r.1 -> r2.1 -> s.1;\n",
    );
    let out = folder("bounds", "resamplers-out").join("x.wav");
    let out = out.to_string_lossy();
    for buffer in ["256", "64"] {
        let o = fugue(&[
            "render",
            &g,
            "-o",
            &out,
            "--force",
            "--seconds",
            "0.1",
            "--buffer",
            buffer,
        ]);
        refused(
            &o,
            1,
            &["resamplers.ag", "a node may run at most 4096 times"],
        );
    }
}

/// A float input holding NaN renders, and the render says how many samples are not finite
/// instead of calling the file silent; `--strict` refuses it.
#[test]
fn non_finite_samples_are_said_not_called_silence() {
    let dir = folder("bounds", "nan");
    let n = 4800;
    let mut data = Vec::new();
    for i in 0..n {
        let x = if i % 100 == 0 { f32::NAN } else { 0.0 };
        data.extend_from_slice(&x.to_le_bytes());
    }
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    for v in [3u16, 1] {
        wav.extend_from_slice(&v.to_le_bytes());
    }
    wav.extend_from_slice(&48_000u32.to_le_bytes());
    wav.extend_from_slice(&(48_000u32 * 4).to_le_bytes());
    for v in [4u16, 32] {
        wav.extend_from_slice(&v.to_le_bytes());
    }
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(data.len() as u32).to_le_bytes());
    wav.extend_from_slice(&data);
    let input = dir.join("nan.wav");
    std::fs::write(&input, wav).unwrap();
    let g = write(
        "pass.ag",
        "m = { kind: \"source\", out: 1, };\ns = { kind: \"sink\", };\nm.1 -> s.1;\n",
    );
    let out = dir.join("out.wav");
    let args = [
        "render",
        &g,
        "--input",
        &input.to_string_lossy(),
        "-o",
        &out.to_string_lossy(),
        "--force",
    ];
    let o = fugue(&args);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("48 samples are not finite numbers") && !err.contains("silent"),
        "{err}"
    );
    let mut strict = args.to_vec();
    strict.push("--strict");
    refused(&fugue(&strict), 1, &["48 samples are not finite numbers"]);
    // The JSON report counts them: its peak is `null` as for silence, and `non_finite` tells
    // the two apart.
    let mut json = args.to_vec();
    json.push("--json");
    let o = fugue(&json);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["non_finite"], 48, "{v}");
}

/// A `faust` node's `file` is a regular file read up to 16 MiB: a larger one is refused
/// without reading on, and a device or a named pipe (which would wait for a writer) without
/// being opened.
#[test]
fn a_faust_file_is_read_bounded() {
    let dir = folder("bounds", "faust-file");
    let big = dir.join("big.dsp");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let pipe = dir.join("pipe.dsp");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    for (file, says) in [
        (
            big.display().to_string(),
            "larger than 16 MiB, the most a Faust program may have",
        ),
        (
            "/dev/zero".to_string(),
            "it is a named pipe, a socket or a device, not a file",
        ),
        (
            pipe.display().to_string(),
            "it is a named pipe, a socket or a device, not a file",
        ),
        (dir.display().to_string(), "it is a folder, not a file"),
    ] {
        let g = write(
            "faust-file.ag",
            &format!("a = {{ kind: \"faust\", file: \"{file}\", }};\ns = {{ kind: \"sink\", }};\na.1 -> s.1;\n"),
        );
        refused(&fugue(&["check", &g]), 1, &["faust-file.ag:1:", says]);
    }
    // A program given inline (`code`) has the same bound.
    let long = format!("process = 0;{}", " ".repeat((16 << 20) + 1));
    let g = write(
        "faust-code.ag",
        &format!("a = {{ kind: \"faust\", code: \"{long}\", }};\ns = {{ kind: \"sink\", }};\na.1 -> s.1;\n"),
    );
    refused(
        &fugue(&["check", &g]),
        1,
        &[
            "faust-code.ag:1:",
            "is 17 MiB long, more than the 16 MiB a Faust program may have",
        ],
    );
}

/// `fugue host --backend offline ARGS` given a line of 100 KB, then `rest`, on its standard
/// input.
fn host_after_a_long_line(args: &[&str], rest: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["host", "--backend", "offline"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&vec![b'x'; 100_000]).unwrap();
        stdin.write_all(rest).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// The host's standard input is read a bounded line at a time: a line of 100 KB is one error
/// line, and the commands after it run.
#[test]
fn a_long_line_on_the_hosts_input_is_one_error() {
    let o = host_after_a_long_line(&[], b"\nlist\nquit\n");
    let out = stdout(&o);
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    assert!(
        out.contains("error: line 1 of standard input: the line is longer than 65536 bytes"),
        "{out}"
    );
    assert!(out.contains("bye"), "{out}");
    // With --json, such a line (and one that is not UTF-8) is a JSON reply like the others.
    let o = host_after_a_long_line(&["--json"], b"\n\xff\xfe\nlist\nquit\n");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0]["ok"], false, "{out}");
    assert!(lines[0]["error"]
        .as_str()
        .unwrap()
        .contains("longer than 65536 bytes"));
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("not valid UTF-8"));
}

/// A Faust program's state is sized from its compiled code before any instance is made:
/// one beyond what a node may hold is refused in one sentence (a delay of 2^30 samples made
/// libfaust's 32-bit size wrap and its initialisation crash), and the state of every node
/// counts in the plan's memory, for programs compiled now and read back from the disk cache.
#[test]
fn faust_state_is_bounded_before_an_instance_is_made() {
    let dir = folder("bounds", "faust-state");
    let cache = dir.join("cache");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(args)
            .env("FUGUE_FAUST_CACHE", &cache)
            .output()
            .unwrap()
    };
    let big = dir.join("big.dsp");
    std::fs::write(&big, "process = @(1000000000);\n").unwrap();
    refused(
        &run(&["check", &big.to_string_lossy()]),
        1,
        &[
            "big.dsp needs 4097 MiB of state per instance",
            "64 MiB a node may hold",
        ],
    );
    // The interpreter's state (its heaps) is bounded alike: a delay of 10^8 samples (a heap
    // of 2^27 reals) is refused before its 512 MiB are committed.
    let interp = dir.join("interp.ag");
    std::fs::write(
        &interp,
        "a = { kind: \"faust\", code: \"process = _ @ 100000000;\", backend: \"interp\", };\ns = { kind: \"sink\", };\na.1 -> s.1;\n",
    )
    .unwrap();
    refused(
        &run(&["check", &interp.to_string_lossy()]),
        1,
        &[
            "needs 513 MiB of state per instance",
            "64 MiB a node may hold",
        ],
    );
    // Twelve programs of 32 MiB each, counted twice (the node and its processor): past the
    // plan's 512 MiB, compiled and then read back; and with the interpreter.
    for backend in ["llvm", "interp"] {
        let mut g = String::new();
        for i in 1..=12 {
            g += &format!("n{i} = {{ kind: \"faust\", code: \"process = @(5000000+{i});\", backend: \"{backend}\", }};\n");
        }
        g += "s = { kind: \"sink\", in: 12, };\n";
        for i in 1..=12 {
            g += &format!("n{i}.1 -> s.{i};\n");
        }
        let graph = dir.join("many.ag");
        std::fs::write(&graph, g).unwrap();
        let out = dir.join("many.wav");
        for _ in 0..2 {
            refused(
                &run(&[
                    "render",
                    &graph.to_string_lossy(),
                    "-o",
                    &out.to_string_lossy(),
                    "--seconds",
                    "0.1",
                ]),
                1,
                &["more than the limit of 512 MiB"],
            );
        }
        assert!(!out.exists());
    }
}

/// A render longer than a WAV file can hold is refused before anything is rendered or
/// written.
#[test]
fn a_render_beyond_4_gib_is_refused_at_once() {
    let g = write(
        "long.ag",
        "a = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", in: 8, };\na.1 -> s.1;\n",
    );
    let out = folder("bounds", "long-out").join("long.wav");
    let start = std::time::Instant::now();
    let render = |seconds: &str| {
        fugue(&[
            "render",
            &g,
            "-o",
            &out.to_string_lossy(),
            "-e",
            "seq",
            "--seconds",
            seconds,
            "--rate",
            "96000",
        ])
    };
    // 16-bit samples would make 13 GiB: not suggested.
    let o = render("86400");
    refused(
        &o,
        1,
        &["a WAV file can hold (4 GiB less 1 KiB for its header)"],
    );
    assert!(!stderr(&o).contains("--bits"), "{}", stderr(&o));
    // 16-bit samples would fit: suggested.
    refused(
        &render("1500"),
        1,
        &[
            "a WAV file can hold (4 GiB less 1 KiB for its header)",
            "--bits 16",
        ],
    );
    assert!(start.elapsed().as_secs() < 20);
    assert!(!out.exists());
}

/// The graphs a host plays share one memory budget (half of what the process may use): a
/// load past it is one error line, before its memory is allocated, and the host plays on.
#[test]
fn the_hosts_graphs_share_one_memory_budget() {
    let dir = folder("bounds", "host-memory");
    let mut g = String::new();
    for i in 0..10 {
        g += &format!("d{i} = {{ kind: \"delay\", time: 60, max_time: 60, }};\n");
    }
    g += "o = { kind: \"osc\", freq: 220, };\nm = { kind: \"mix\", in: 10, };\ns = { kind: \"sink\", };\n";
    for i in 0..10 {
        g += &format!("o.1 -> d{i}.1;\nd{i}.1 -> m.{};\n", i + 1);
    }
    g += "m.1 -> s.1;\n";
    std::fs::write(dir.join("big.ag"), g).unwrap();
    let mut script = String::new();
    for i in 1..=6 {
        script += &format!("load m{i} big.ag\n");
    }
    script += "wait 0.05\nlist\n";
    std::fs::write(dir.join("loads.txt"), script).unwrap();
    // An address space of 2,000,000 KiB: the budget is half of it, room for four graphs of
    // 230 MiB (ten delay lines of a minute, counted twice).
    let o = Command::new("sh")
        .current_dir(&dir)
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec '{}' host --backend offline --script loads.txt",
            env!("CARGO_BIN_EXE_fugue")
        ))
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    let refusals = err
        .lines()
        .filter(|l| l.contains("the host's graphs may hold together"))
        .count();
    assert!((1..=3).contains(&refusals), "{out}\n{err}");
    assert!(out.contains("loaded m1") && out.contains("m1"), "{out}");
}

/// An `--input` that is not a regular file (a pipe, which the render would read twice, or
/// block on) is refused at once, without opening it.
#[test]
fn an_input_that_is_a_pipe_is_refused_at_once() {
    let dir = folder("bounds", "fifo");
    let fifo = dir.join("in.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        common::skip(
            "an_input_that_is_a_pipe_is_refused_at_once",
            "mkfifo is not available",
        );
        return;
    }
    let g = write(
        "pass.ag",
        "m = { kind: \"source\", out: 1, };\ns = { kind: \"sink\", };\nm.1 -> s.1;\n",
    );
    let out = dir.join("out.wav");
    refused(
        &fugue(&[
            "render",
            &g,
            "--input",
            &fifo.to_string_lossy(),
            "-o",
            &out.to_string_lossy(),
        ]),
        1,
        &["in.fifo is not a regular file", "save it to a file first"],
    );
    // `-` is standard input for no input: said as such, not as a missing file named `-`.
    refused(
        &fugue(&["render", &g, "--input", "-", "-o", &out.to_string_lossy()]),
        1,
        &["--input - would be standard input", "save it to a file"],
    );
}

/// A resampler's ratio may be written as the fraction it is (`"1/2"`): the same samples as
/// `0.5`; a ratio out of range names the range and both ways to write it.
#[test]
fn a_ratio_may_be_written_as_a_fraction() {
    let dir = folder("bounds", "fraction");
    let graph = |ratio: &str| {
        write(
            &format!("r{}.ag", ratio.len()),
            &format!("o = {{ kind: \"osc\", freq: 440, volume: 0.5, }};\nr = {{ kind: \"resampler\", ratio: {ratio}, }};\ns = {{ kind: \"sink\", }};\no.1 -> r.1 -> s.1;\n"),
        )
    };
    let render = |g: &str, name: &str| {
        let out = dir.join(name);
        let o = fugue(&[
            "render",
            g,
            "-o",
            &out.to_string_lossy(),
            "--force",
            "--seconds",
            "0.1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    assert!(render(&graph("\"1/2\""), "a.wav") == render(&graph("0.5"), "b.wav"));
    refused(
        &fugue(&["check", &graph("\"1e9\"")]),
        1,
        &[
            "attribute `ratio` = `1000000000` is not a fraction from 1e-6 to 1e6",
            "\"N/D\"",
        ],
    );
}

/// A port number beyond the most ports a node may have is refused where it is written, before
/// any buffer is laid out (an input port of 4e9 once asked for gigabytes).
#[test]
fn port_numbers_beyond_the_limit_are_refused_at_their_place() {
    for (name, text, want) in [
        (
            "inport.ag",
            "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\no.1 -> s.4000000000;\n",
            "inport.ag:3:10: port 4000000000 of `s`: a node has at most 1000000 ports",
        ),
        (
            "outport.ag",
            "i = { kind: \"source\", };\ns = { kind: \"sink\", };\ni.1000001 -> s.1;\n",
            "outport.ag:3:3: port 1000001 of `i`: a node has at most 1000000 ports",
        ),
    ] {
        let g = write(name, text);
        let out = folder("bounds", "ports-out").join("x.wav");
        for args in [
            vec!["check", g.as_str()],
            vec!["render", &g, "-o", &out.to_string_lossy(), "--force"],
        ] {
            refused(&fugue(&args), 1, &[want]);
        }
    }
}

/// The benchmarks' counts and times are bounded before anything starts (threads, memory,
/// sleeps), each refused in one sentence; a graph the overhead benchmark cannot probe (one
/// with a feedback edge) too, with what measures it instead.
#[test]
fn benchmark_counts_and_times_are_bounded() {
    let spec = |name: &str, extra: &str| {
        write(
            name,
            &format!("graphs = [\"gen:line:4\"]\nexecutors = [\"seq\"]\nloads = [\"busy\"]\nseconds = 0.1\nrepeats = 1\n{extra}"),
        )
    };
    let comb = write(
        "comb.ag",
        "o = { kind: \"osc\", freq: 220, };\nm = { kind: \"mix\", volume: 0.5, };\nout = { kind: \"sink\", in: 1, };\no.1 -> m.1;\nm.1 ~> m.2;\nm.1 -> out.1;\n",
    );
    // Each a usage error of the benchmark (exit 2), as its other flags' are.
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec![
                "bench".into(),
                "ring".into(),
                "-n".into(),
                "10".into(),
                "--producers".into(),
                "100000".into(),
            ],
            2,
            "--producers must be from 1 to 1024, not 100000",
        ),
        (
            vec![
                "bench".into(),
                "ring".into(),
                "-n".into(),
                "10".into(),
                "--pin".into(),
                "0,4096".into(),
            ],
            2,
            "--pin 4096: this process may run on cores",
        ),
        (
            vec![
                "bench".into(),
                "table".into(),
                "--seconds".into(),
                "1e9".into(),
            ],
            2,
            "is not a number of seconds above 0 and at most 3600",
        ),
        (
            vec![
                "bench".into(),
                "capacity".into(),
                "--seconds".into(),
                "1e12".into(),
            ],
            2,
            "is not a number of seconds above 0 and at most 86400",
        ),
        (
            vec![
                "bench".into(),
                "overhead".into(),
                "--idle-us".into(),
                "99999999999".into(),
            ],
            2,
            "--idle-us",
        ),
        (
            vec![
                "bench".into(),
                "overhead".into(),
                "--graph".into(),
                comb.clone(),
                "--cycles".into(),
                "10".into(),
            ],
            2,
            "the overhead benchmark runs graphs without feedback edges",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec("threads.toml", "threads = [100000]\nbuffers = [256]\n"),
                "--dry-run".into(),
            ],
            1,
            "threads.toml:6: threads must be from 1 to 256, not 100000",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec("buffers.toml", "threads = [1]\nbuffers = [99999999]\n"),
                "--dry-run".into(),
            ],
            1,
            "buffers.toml:7: buffers must be from 1 to 1048576 frames, not 99999999",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec(
                    "busy.toml",
                    "threads = [1]\nbuffers = [256]\nbusy_threads = 100000\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "busy_threads must be at most 1024, not 100000",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec("rate.toml", "threads = [1]\nbuffers = [256]\nrate = 0\n"),
                "--dry-run".into(),
            ],
            1,
            "rate must be from 1 to 1536000 Hz, not 0",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec(
                    "busy0.toml",
                    "threads = [1]\nbuffers = [256]\nbusy_threads = 0\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "the busy load with busy_threads = 0 would be idle",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec("slow.toml", "threads = [1]\nbuffers = [256]\nrate = 20\n"),
                "--dry-run".into(),
            ],
            1,
            "seconds 0.1 is shorter than one cycle of 256 frames at 20 Hz (12.8 s)",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "many.toml",
                    &format!(
                        "graphs = [\"gen:line:4\"]\nexecutors = [\"seq\", \"ws\"]\nloads = [\"idle\"]\nseconds = 0.1\nrepeats = 1\nthreads = [{}]\nbuffers = [{}]\n",
                        (1..=256).map(|t| t.to_string()).collect::<Vec<_>>().join(","),
                        (1..=1000).map(|b| b.to_string()).collect::<Vec<_>>().join(",")
                    ),
                ),
                "--dry-run".into(),
            ],
            1,
            "the spec asks for 257000 runs (257000 configurations of graph, executor, threads, buffer and load, once each), more than the limit of 100000",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec(
                    "hist.toml",
                    "threads = [1]\nbuffers = [256]\nhistogram_buffer = 999\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "histogram_buffer 999 is not among the buffers [256]",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                spec("twice.toml", "threads = [1]\nbuffers = [256, 256]\n"),
                "--dry-run".into(),
            ],
            1,
            "twice.toml:7: `buffers` names 256 twice",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "noseq.toml",
                    "graphs = [\"gen:line:4\"]\nexecutors = [\"ws\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "`executors` must name seq",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "cycles.toml",
                    "graphs = [\"gen:line:4\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [1]\nloads = [\"idle\"]\nseconds = 3600\nrate = 1536000\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "cycles per run, more than the 8388608 a run may keep",
        ),
        (
            vec![
                "bench".into(),
                "table".into(),
                "--shapes".into(),
                "line".into(),
                "--buffers".into(),
                "1".into(),
                "--rate".into(),
                "1536000".into(),
                "--seconds".into(),
                "3600".into(),
            ],
            2,
            "make 5529600000 cycles per run, more than the 8388608 a run may keep",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "labels.toml",
                    &format!(
                        "graphs = [\"gen:line:4\", \"{}\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
                        write(
                            "line4.ag",
                            "o = { kind: \"osc\", freq: 220, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n"
                        )
                    ),
                ),
                "--dry-run".into(),
            ],
            1,
            "line4.ag` are both labelled `line4`",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "line1.toml",
                    "graphs = [\"gen:line:1\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
                ),
                "--dry-run".into(),
            ],
            1,
            "graph `gen:line:1`: a line has at least 2 nodes",
        ),
        (
            vec![
                "bench".into(),
                "study".into(),
                write(
                    "nosink.toml",
                    &format!(
                        "graphs = [\"{}\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
                        write("lone.ag", "out = { kind: \"sink\", };\n")
                    ),
                ),
                "--dry-run".into(),
            ],
            1,
            "lone.ag` cannot run at 256 frames and 44100 Hz: node `out` (sink) has no input",
        ),
        (
            vec![
                "bench".into(),
                "pool".into(),
                "--threads".into(),
                "1,1".into(),
            ],
            2,
            "--threads names 1 twice",
        ),
        (
            vec![
                "bench".into(),
                "table".into(),
                "--shapes".into(),
                "rake,line,rake".into(),
            ],
            2,
            "--shapes names rake twice",
        ),
        (
            vec![
                "bench".into(),
                "profile-cost".into(),
                "--executor".into(),
                "auto".into(),
            ],
            2,
            "--executor auto: the profile's cost is measured on one executor",
        ),
        (
            vec![
                "bench".into(),
                "profile-cost".into(),
                "--executor".into(),
                "ws".into(),
                "--pipeline".into(),
                "2".into(),
            ],
            2,
            "--pipeline 2: the profile records whole cycles",
        ),
        (
            vec![
                "bench".into(),
                "profile-cost".into(),
                "--graph".into(),
                "gen:line:5".into(),
                "--pairs".into(),
                "100000".into(),
                "--cycles".into(),
                "10000000".into(),
            ],
            2,
            "make 2000000001000 cycles with the two engines' --warmup, more than the limit of 100000000",
        ),
    ];
    for (args, code, want) in cases {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = fugue(&words);
        refused(&o, code, &[want]);
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }
}

/// `--control -` is refused in one sentence (it made a socket named `-` in the current
/// folder), and a feedback edge written twice is said with its own arrow.
#[test]
fn a_control_socket_named_dash_and_a_feedback_edge_written_twice() {
    let synth = write(
        "tone.ag",
        "o = { kind: \"osc\", freq: 220, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n",
    );
    let o = fugue(&[
        "run",
        &synth,
        "--backend",
        "clocked",
        "--seconds",
        "0.1",
        "--control",
        "-",
    ]);
    refused(
        &o,
        1,
        &["--control takes the path of a Unix socket to create, not `-`"],
    );
    assert!(!std::path::Path::new("-").exists());
    let dup = write(
        "dup.ag",
        "a = { kind: \"mix\", };\nb = { kind: \"sink\", };\na.1 -> b.1;\na.1 ~> a.2;\na.1 ~> a.2;\n",
    );
    let o = fugue(&["check", &dup]);
    refused(
        &o,
        1,
        &["dup.ag:5:", "edge `a`.1 ~> `a`.2 is written twice"],
    );
}

/// `calibrate` keeps one time per node and cycle: cycles that would take more than its
/// 256 MiB are refused at once, with the most it takes, before any is measured.
#[test]
fn calibrate_refuses_cycles_beyond_its_memory() {
    // Ten nodes: an oscillator, eight gains, a sink.
    let mut text = String::from("a = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\n");
    let mut chain = String::from("a.1");
    for i in 0..8 {
        text += &format!("g{i} = {{ kind: \"gain\", }};\n");
        chain += &format!(" -> g{i}.1");
    }
    text += &format!("{chain} -> s.1;\n");
    let g = write("calib.ag", &text);
    let start = std::time::Instant::now();
    refused(
        &fugue(&["calibrate", &g, "--buffer", "1", "--cycles", "10000000"]),
        1,
        &[
            "--cycles 10000000",
            "would take 763 MiB, more than its 256 MiB; ask at most 3355443 cycles",
        ],
    );
    assert!(start.elapsed().as_secs() < 20);
}

/// A study whose spec is one of the files it writes, in its output folder (`README.md`),
/// is refused even with --force, and the spec is kept.
#[test]
fn a_study_never_writes_over_its_spec() {
    let dir = folder("bounds", "study-spec");
    let spec = dir.join("README.md");
    let text = "graphs = [\"gen:line:4\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\nrepeats = 1\n";
    std::fs::write(&spec, text).unwrap();
    refused(
        &fugue(&[
            "bench",
            "study",
            spec.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "--force",
        ]),
        1,
        &["the study writes its own README.md", "over its spec"],
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), text);
    // The same spec through a symbolic link from elsewhere.
    let link = folder("bounds", "study-spec-link").join("spec.toml");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&spec, &link).unwrap();
    refused(
        &fugue(&[
            "bench",
            "study",
            link.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "--force",
        ]),
        1,
        &["the study writes its own README.md", "over its spec"],
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), text);
}

/// What the graph readers refuse is quoted as written and placed where it is written.
#[test]
fn readers_quote_and_place_what_is_written() {
    let two = "a = { kind: \"osc\", freq: 440, };\nb = { kind: \"sink\", };\n";
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "port.ag",
            format!("{two}a.1 -> b.99999999999999999999;\n"),
            vec![":3:10:", "found number `99999999999999999999`"],
        ),
        (
            "ports.ag",
            "b = { kind: \"sink\", in: 12345678901234567891, };\n".to_string(),
            vec![":1:25:", "not 12345678901234567891"],
        ),
        (
            "huge.ag",
            "a = { kind: \"osc\", freq: 1e309, };\n".to_string(),
            vec![":1:26:", "`1e309` is too large a number"],
        ),
        (
            "lone.ag",
            format!("{two}c = {{ kind: \"biquad\", type: \"low\\ud800pass\", }};\n"),
            vec![":3:33:", "first half of a surrogate pair"],
        ),
        (
            "twice.ag",
            "m = { kind: \"mix\", in: 2, };\nm.1 ~> m.2;\nm.1 ~> m.2;\n".to_string(),
            vec![":3:1:", "is written twice (first at line 2)"],
        ),
        (
            "comments.stg",
            "# only\n# comments\n".to_string(),
            vec![":1:1:", "no task before the first `#` line"],
        ),
        (
            "edge.dot",
            "digraph { a; b; a -> b [Weight=3, Weight=4]; }\n".to_string(),
            vec![":1:35:", "attribute `Weight` of the edge is given twice"],
        ),
        (
            "cost.dot",
            "digraph { a [wcet=5, Weight=3]; }\n".to_string(),
            vec![":1:14:", "gives its cost twice"],
        ),
    ];
    for (name, text, want) in cases {
        let g = write(name, &text);
        let o = fugue(&["check", &g]);
        refused(&o, 1, &want);
    }
    // A surrogate pair is one character.
    let g = write(
        "pair.ag",
        &format!("{two}a.1 -> b.1;\nc = {{ kind: \"gain\", db: 0, note: \"\\ud83d\\ude00\", }};\n"),
    );
    let o = fugue(&["info", &g]);
    assert!(!stderr(&o).contains("surrogate"), "{}", stderr(&o));
    // `wcet` is a node's cost in .dot as in .ag.
    let g = write("wcet.dot", "digraph { a [wcet=5]; b [wcet=2]; a -> b; }\n");
    let o = fugue(&["info", &g]);
    assert!(stdout(&o).contains("total work     7"), "{}", stdout(&o));
    // A folder is no graph file, whatever its name.
    let d = folder("bounds", "folder.ag");
    let o = fugue(&["check", &d.to_string_lossy()]);
    refused(&o, 1, &["it is a folder, not a file"]);
}
