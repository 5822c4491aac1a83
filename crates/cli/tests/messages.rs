//! Error messages that say the right thing: the flag they suggest exists, the limit they
//! enforce is named, the refusal is said once, the file and place are given, and user text
//! quoted in them is cut to a readable length.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{example, fugue, stderr, stdout};

fn folder(name: &str) -> PathBuf {
    common::folder("messages-cli", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A graph file without a known extension: every command that reads one says to use
/// --format, and accepts it; a benchmark, which has no --format, names the extensions.
#[test]
fn an_unknown_extension_suggests_a_flag_that_exists() {
    let d = folder("format");
    let g = d.join("graph.txt");
    std::fs::copy(example("rake.ag"), &g).unwrap();
    let wav = d.join("out.wav");
    let csv = d.join("costs.csv");
    let cases: [Vec<&str>; 4] = [
        vec!["render", s(&g), "-o", s(&wav), "--seconds", "0.05"],
        vec!["run", s(&g), "--backend", "clocked", "--seconds", "0.05"],
        vec!["calibrate", s(&g), "--cycles", "5", "-o", s(&csv)],
        vec!["profile", s(&g), "--seconds", "0.05"],
    ];
    for args in &cases {
        let o = fugue(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("graph.txt: unknown graph format `.txt`") && e.contains("--format"),
            "{args:?}: {e}"
        );
        let mut with = args.clone();
        with.extend(["--format", "ag"]);
        let o = fugue(&with);
        assert!(o.status.success(), "{with:?}: {}", stderr(&o));
    }
    // A benchmark has no --format: its sentence names the extensions only.
    let table = d.join("table");
    let o = fugue(&["bench", "table", "--shapes", s(&g), "-o", s(&table)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("graph.txt: unknown graph format `.txt`") && !e.contains("--format"),
        "{e}"
    );
}

/// A JACK client name longer than JACK allows (or empty, or holding the `:` of a port's
/// name) is said to be so, not taken for a missing server.
#[test]
fn a_long_client_name_names_the_limit() {
    let run = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["run", &example("rake.ag"), "--seconds", "1"])
            .args(["--client-name", name])
            .env(
                "JACK_DEFAULT_SERVER",
                format!("fugue-absent-{}", std::process::id()),
            )
            .output()
            .unwrap()
    };
    // A usage error, as the flag's other bad values: empty, or with the port separator.
    for (name, said) in [
        (
            "c".repeat(64),
            "a JACK client's name holds at most 63 bytes, and this one has 64",
        ),
        (String::new(), "a JACK client needs a name"),
        (
            "a:b".to_string(),
            "`a:b` holds a `:`, which separates a JACK port's client from its own name",
        ),
    ] {
        let o = run(&name);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(said), "{e}");
    }
    // 63 bytes pass the check (and then find no server).
    let e = stderr(&run(&"c".repeat(63)));
    assert!(!e.contains("JACK allows"), "{e}");
}

/// A port count above the limit says the limit.
#[test]
fn too_many_ports_names_the_limit() {
    let d = folder("ports");
    let g = d.join("ports.ag");
    std::fs::write(&g, "a = { kind: \"osc\", out: 2000000, };\n").unwrap();
    let o = fugue(&["info", s(&g)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("ports.ag:1:") && e.contains("must be at most 1000000 ports, not 2000000"),
        "{e}"
    );
}

/// A length under one sample (render) or one cycle (run, profile) is refused as 0 is, with
/// the shortest length; nothing is written.
#[test]
fn lengths_under_one_sample_or_cycle_are_refused() {
    let d = folder("seconds");
    let wav = d.join("out.wav");
    let g = example("rake.ag");
    for seconds in ["1e-9", "0", "-1"] {
        let o = fugue(&["render", &g, "-o", s(&wav), "--seconds", seconds]);
        assert_eq!(o.status.code(), Some(2), "{seconds}: {}", stderr(&o));
        assert!(!wav.exists());
    }
    let o = fugue(&["render", &g, "-o", s(&wav), "--seconds", "1e-9"]);
    assert!(
        stderr(&o).contains(
            "--seconds 1e-9 is shorter than one sample at 48000 Hz; the shortest length is 0.0000209 s"
        ),
        "{}",
        stderr(&o)
    );
    // A tiny length is echoed as written short, not as 300 digits.
    let o = fugue(&["render", &g, "-o", s(&wav), "--seconds", "1e-300"]);
    assert!(
        stderr(&o).contains("--seconds 1e-300 is shorter than one sample"),
        "{}",
        stderr(&o)
    );
    // The shortest length said is accepted: one sample.
    let o = fugue(&["render", &g, "-o", s(&wav), "--seconds", "0.0000209"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        common::stdout(&o).contains(": 1 frames"),
        "{}",
        common::stdout(&o)
    );
    for cmd in [
        &["run", &g, "--backend", "clocked", "--seconds", "0.001"][..],
        &["profile", &g, "--seconds", "0.001"][..],
    ] {
        let o = fugue(cmd);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {e}");
        assert!(e.contains("is shorter than one cycle of"), "{cmd:?}: {e}");
    }
}

/// Whether this test runs as root with setpriv (util-linux) at hand, which it needs `why`;
/// says the test is skipped when not.
fn root_with_setpriv(test: &str, why: &str) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() == 0 };
    let setpriv = Command::new("setpriv").arg("--help").output().is_ok();
    if !root || !setpriv {
        common::skip(test, &format!("needs root and setpriv (util-linux) {why}"));
    }
    root && setpriv
}

/// Refused real-time priority is said once, not once per thread or priority. Needs root to
/// take the capability away from the child.
#[test]
fn a_real_time_refusal_is_said_once() {
    if !root_with_setpriv(
        "a_real_time_refusal_is_said_once",
        "to run fugue without CAP_SYS_NICE",
    ) {
        return;
    }
    let d = folder("rt");
    let wav = d.join("out.wav");
    let g = example("rake.ag");
    for args in [
        &["run", &g, "--backend", "clocked", "--seconds", "0.05"][..],
        &["render", &g, "-o", s(&wav), "--seconds", "0.05", "--force"][..],
    ] {
        let o = Command::new("setpriv")
            .args(["--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"])
            .args(["--", env!("CARGO_BIN_EXE_fugue")])
            .args(args)
            .args(["--rt", "--executor", "ws", "--threads", "2"])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(o.status.success(), "{args:?}: {e}");
        let said = e.matches("real-time priority").count();
        if said == 0 {
            eprintln!("note: {args:?}: real-time priority was granted here; nothing to count");
        }
        assert!(said <= 1, "{args:?}: {e}");
    }
}

/// An input WAV of a format that cannot be read says the file, its format, and what is
/// accepted.
#[test]
fn an_unreadable_input_format_is_described() {
    let d = folder("wav");
    let f64_wav = d.join("f64.wav");
    // A 64-bit float WAV: 100 frames of silence, one channel, 48 kHz.
    let data = vec![0u8; 800];
    let mut fmt = Vec::new();
    fmt.extend(3u16.to_le_bytes());
    fmt.extend(1u16.to_le_bytes());
    fmt.extend(48_000u32.to_le_bytes());
    fmt.extend((48_000u32 * 8).to_le_bytes());
    fmt.extend(8u16.to_le_bytes());
    fmt.extend(64u16.to_le_bytes());
    let mut body = b"WAVEfmt ".to_vec();
    body.extend((fmt.len() as u32).to_le_bytes());
    body.extend(&fmt);
    body.extend(b"data");
    body.extend((data.len() as u32).to_le_bytes());
    body.extend(&data);
    let mut file = b"RIFF".to_vec();
    file.extend((body.len() as u32).to_le_bytes());
    file.extend(body);
    std::fs::write(&f64_wav, file).unwrap();
    let o = fugue(&[
        "render",
        &example("echo.ag"),
        "--input",
        s(&f64_wav),
        "-o",
        s(&d.join("out.wav")),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "cannot read input {}: it is a WAV file of 64-bit float samples; the input must be a WAV file of 8, 16, 24 or 32-bit integer or 32-bit float samples",
            f64_wav.display()
        )),
        "{e}"
    );
}

/// A study spec's TOML error gives the file, line and column, in one line, with exit code 1.
#[test]
fn a_study_spec_error_has_its_place() {
    let d = folder("toml");
    let spec = d.join("s.toml");
    std::fs::write(&spec, "name = \"x\"\ngraphs = [\n  \"a.ag\",\n  3 x\n]\n").unwrap();
    let o = fugue(&["bench", "study", s(&spec), "--dry-run"]);
    let e = stderr(&o);
    // Bad input, not a usage error.
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.starts_with(&format!("fugue: {}:4:5: ", spec.display())),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// Quoted user text is cut: a megabyte-long name or token gives a short, one-line error.
#[test]
fn quoted_text_is_cut() {
    let d = folder("long");
    let cases = [
        (
            "big.ag",
            format!("a = {{ kind: \"osc\", {} }}\n", "x".repeat(1_000_000)),
        ),
        ("big.stg", format!("1\n{} 1 0\n", "z".repeat(1_000_000))),
        (
            "kind.ag",
            format!("a = {{ kind: \"{}\", }};\n", "k".repeat(1_000_000)),
        ),
    ];
    for (name, text) in cases {
        let f = d.join(name);
        std::fs::write(&f, text).unwrap();
        // info reads no kinds: an unknown one is an error for render only.
        let cmds: &[&str] = if name == "kind.ag" {
            &["render"]
        } else {
            &["info", "render"]
        };
        for &cmd in cmds {
            let out = d.join("out.wav");
            let args: Vec<&str> = if cmd == "info" {
                vec!["info", s(&f)]
            } else {
                vec!["render", s(&f), "-o", s(&out), "--seconds", "0.05"]
            };
            let o = fugue(&args);
            let e = stderr(&o);
            assert!(!o.status.success(), "{name} {cmd}");
            assert!(e.len() < 600, "{name} {cmd}: {} bytes", e.len());
            assert!(e.contains('…'), "{name} {cmd}: {e}");
            assert_eq!(e.lines().count(), 1, "{name} {cmd}: {e}");
        }
    }
}

#[test]
fn render_and_run_place_a_node_that_cannot_be_built_as_check_does() {
    let d = common::folder("messages", "places");
    let g = d.join("g.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, };\nf = { kind: \"biquad\", freq: 90000, };\ns = { kind: \"sink\", };\no.1 -> f.1 -> s.1;\n",
    )
    .unwrap();
    let g = g.to_str().unwrap();
    let out = d.join("g.wav");
    let o = common::fugue(&["render", g, "-o", out.to_str().unwrap(), "--seconds", "0.1"]);
    assert_eq!(o.status.code(), Some(1));
    let e = common::stderr(&o);
    assert!(
        e.contains("cannot render ")
            && e.contains("g.ag:2:23: node `f` (biquad): attribute `freq` = `90000`"),
        "{e}"
    );
    let o = common::fugue(&["run", g, "--backend", "clocked", "--seconds", "0.1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("g.ag:2:23: node `f`"),
        "{}",
        common::stderr(&o)
    );
    let o = common::fugue(&["check", g]);
    assert!(
        common::stderr(&o).contains("g.ag:2:23: node `f`"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn ctl_to_a_file_and_a_huge_task_count_are_said_as_what_they_are() {
    let d = common::folder("messages", "ctl");
    let f = d.join("notes.txt");
    std::fs::write(&f, "not a socket\n").unwrap();
    let o = common::fugue(&["ctl", f.to_str().unwrap(), "quit"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o)
            .contains("notes.txt is not a socket, so no `fugue host --control` listens there"),
        "{}",
        common::stderr(&o)
    );
    let g = d.join("big.stg");
    std::fs::write(&g, "99999999999999999999\n").unwrap();
    let o = common::fugue(&["info", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o)
            .contains("big.stg:1:1: the number of tasks 99999999999999999999 is too large"),
        "{}",
        common::stderr(&o)
    );
}

/// A worker thread that the system refuses (a process limit) is one sentence and exit code
/// 1 for `run` and `render`, and an error line for the host's `load` (separate mode) or the
/// host's start (its pool): never a panic. Needs root and setpriv, to run fugue as another
/// user under `ulimit -u`.
#[test]
fn a_refused_worker_thread_is_one_sentence() {
    if !root_with_setpriv(
        "a_refused_worker_thread_is_one_sentence",
        "to run fugue as another user with few processes",
    ) {
        return;
    }
    // The binary, the examples and the test's folder must be reachable by that user (a
    // checkout under /root is not).
    let reachable = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_fugue"))
        .args(["info", &example("rake.ag")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !reachable {
        common::skip(
            "a_refused_worker_thread_is_one_sentence",
            "the fugue binary or the examples cannot be read by user 65534",
        );
        return;
    }
    let d = folder("threads-refused");
    let script = d.join("load.txt");
    std::fs::write(
        &script,
        format!("load a {}\nwait 0.05\nquit\n", example("pluck.ag")),
    )
    .unwrap();
    let g = example("rake.ag");
    let limited = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["bash", "-c", "ulimit -u 8 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_fugue"))
            .args(args)
            .output()
            .unwrap()
    };
    for (args, said) in [
        (
            &[
                "run",
                &g,
                "--backend",
                "clocked",
                "--seconds",
                "0.05",
                "--executor",
                "ws",
            ][..],
            "cannot run",
        ),
        (
            &[
                "render",
                &g,
                "-o",
                "-",
                "--seconds",
                "0.05",
                "--executor",
                "levels",
            ][..],
            "cannot render",
        ),
        (
            &["host", "--backend", "offline", "--script", s(&script)][..],
            "cannot start the host's thread",
        ),
    ] {
        let o = limited(&[args, &["--threads", "12"]].concat());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(
            e.contains(said) && e.contains("thread") && e.contains("os error"),
            "{args:?}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    }
    // Separate mode: each graph has its own executor, refused at its load; the host plays on.
    let o = limited(&[
        "host",
        "--backend",
        "offline",
        "--mode",
        "separate",
        "--executor",
        "ws",
        "--threads",
        "12",
        "--script",
        s(&script),
    ]);
    let e = stderr(&o);
    assert!(!e.contains("panicked"), "{e}");
    assert!(
        e.contains("load.txt:1: error: cannot load") && e.contains("cannot start worker thread"),
        "{e}"
    );
    assert!(stdout(&o).contains("waited 0.05 s"), "{}", stdout(&o));
}

/// A success line names its file with the control characters escaped, as an error does: a
/// file name cannot drive the terminal.
#[test]
fn a_success_line_escapes_the_control_characters_of_a_path() {
    let d = folder("we\u{1b}[31mird");
    let g = d.join("s.ag");
    std::fs::copy(example("synth.ag"), &g).unwrap();
    let o = fugue(&["check", s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        !out.contains('\u{1b}') && out.contains("we\\u{1b}[31mird/s.ag: ok"),
        "{out}"
    );
    let wav = d.join("o\u{7}.wav");
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&wav),
        "--seconds",
        "0.02",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        !out.contains('\u{7}') && out.contains("o\\u{7}.wav: "),
        "{out}"
    );
}

/// A study through JACK with no server running is refused before any run, in one sentence
/// (not after the library's messages at its first run), and writes nothing.
#[test]
fn a_jack_study_without_a_server_is_refused_before_it_runs() {
    if !fugue_testkit::jackd::has("jack_wait") {
        common::skip(
            "a_jack_study_without_a_server_is_refused_before_it_runs",
            "jack_wait is not installed",
        );
        return;
    }
    let d = folder("jack-study");
    let spec = d.join("j.toml");
    std::fs::write(
        &spec,
        format!(
            "graphs = [\"{}\"]\nexecutors = [\"seq\", \"ws\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nbackend = \"jack\"\nseconds = 0.05\nrepeats = 1\n",
            example("rake.ag")
        ),
    )
    .unwrap();
    let out = d.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["bench", "study", s(&spec), "-o", s(&out)])
        // A server of this name runs nowhere.
        .env(
            "JACK_DEFAULT_SERVER",
            format!("fugue-none-{}", std::process::id()),
        )
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("backend = \"jack\", but no JACK server is running") && e.lines().count() == 1,
        "{e}"
    );
    assert!(!out.exists(), "a refused study wrote {}", out.display());
}

/// A study through JACK sets the server's buffer size for its runs and back to what it was
/// when it ends (a server of the test's own: the buffer size of a shared one would change
/// under the other tests).
#[test]
fn a_jack_study_gives_the_server_its_buffer_size_back() {
    let server = match fugue_testkit::jackd::DummyServer::start("study-size", 48000, 128) {
        Ok(s) => s,
        Err(why) => {
            common::skip("a_jack_study_gives_the_server_its_buffer_size_back", &why);
            return;
        }
    };
    let d = folder("jack-study-size");
    let spec = d.join("j.toml");
    std::fs::write(
        &spec,
        format!(
            "graphs = [\"{}\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nbackend = \"jack\"\nseconds = 0.1\nrepeats = 1\n",
            example("rake.ag")
        ),
    )
    .unwrap();
    let out = d.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["bench", "study", s(&spec), "-o", s(&out)])
        .env("JACK_DEFAULT_SERVER", server.name())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Read until a client of the (busy) server gets an answer, 10 s at most.
    let start = std::time::Instant::now();
    let size = loop {
        let o = Command::new("jack_bufsize")
            .env("JACK_DEFAULT_SERVER", server.name())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stdout).trim().to_string();
        if (o.status.success() && !said.is_empty()) || start.elapsed().as_secs() >= 10 {
            break said;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(size, "128");
}

/// A refused number is shown as it reads, not as its 301 digits: `1e300`.
#[test]
fn a_huge_refused_number_is_shown_short() {
    let g = example("echo.ag");
    let dir = folder("huge-number");
    for (args, said) in [
        (
            vec!["schedule", g.as_str(), "--comm-cost", "1e300"],
            "--comm-cost must be a number from 0 to 1e12, not 1e300",
        ),
        (
            vec![
                "gen",
                "random",
                "--probability",
                "1e300",
                "-o",
                s(&dir.join("g.ag")),
            ],
            "--probability 1e300 is not a probability between 0 and 1",
        ),
    ] {
        let o = fugue(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(said), "{args:?}: {e}");
    }
}

/// A sink's refusals say what is wrong in words: a rate it cannot convert back from (not the
/// converter's error's name), and an `out` count it was given (not edges that do not exist).
#[test]
fn a_sink_says_why_in_words() {
    let dir = folder("sink-words");
    let slow = dir.join("slow.ag");
    std::fs::write(
        &slow,
        "a = { kind: \"osc\", freq: 1 };\nr = { kind: \"resampler\", ratio: \"1/5000\", conv: \"zero_hold\" };\nb = { kind: \"sink\" };\na.1 -> r.1;\nr.1 -> b.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", s(&slow), "--buffer", "5000"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("it runs at 1/5000 of the engine rate, and converting back takes more than the 4096 phases"),
        "{e}"
    );
    assert!(!e.contains("TooManyPhases"), "{e}");
    let out = dir.join("out.ag");
    std::fs::write(
        &out,
        "a = { kind: \"osc\", freq: 440 };\nb = { kind: \"sink\", out: 5 };\na.1 -> b.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", s(&out)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("remove its `out: 5`"), "{e}");
}

/// A flag's number that does not parse, or lies outside the flag's range, is said in plain
/// words (not the number parser's "invalid digit found in string"), with exit status 2.
#[test]
fn a_bad_number_for_a_flag_is_said_plainly() {
    let g = example("rake.ag");
    let g = g.as_str();
    let cases: [(&[&str], &str); 5] = [
        (
            &["render", g, "--buffer", "-5"],
            "'-5' for '--buffer <BUFFER>': cannot be negative",
        ),
        (
            &["render", g, "--buffer", "12k"],
            "'12k' for '--buffer <BUFFER>': expected a whole number (digits only)",
        ),
        (
            &["render", g, "--seconds", "ten"],
            "'ten' for '--seconds <SECONDS>': expected a number",
        ),
        (
            &["host", "--threads", "0"],
            "'0' for '--threads <THREADS>': out of range: it must be from 1 to 256",
        ),
        (
            &["render", g, "--buffer", "99999999999999999999999"],
            "--buffer <BUFFER>': too large",
        ),
    ];
    for (args, want) in cases {
        let o = fugue(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(
            !e.contains("found in string") && !e.contains("is not in"),
            "{args:?}: {e}"
        );
    }
}
