//! `fugue host --backend offline`: `wait` counts audio time, so a script records exactly
//! the length it asks for, and the same bytes at every run.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{example, folder, fugue, stderr, stdout};
use fugue_testkit::wav;

/// Runs `fugue host ARGS` with `input` on standard input.
fn host_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .arg("host")
        .args(args)
        .env_remove(common::FAULT_VAR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fugue");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Frames in the WAV file at `path` (per channel).
fn frames(path: &Path) -> usize {
    wav::channels(path)[0].len()
}

/// The issue's own session, from standard input: `wait 2` records 2 s of audio exactly
/// (375 cycles of 256 frames at 48 kHz), the same bytes twice.
#[test]
fn an_offline_wait_records_exactly_its_audio_time_and_the_same_bytes_twice() {
    let dir = folder("host-offline", "stdin");
    let script = format!("load a {}\nwait 2\nquit\n", example("pluck.ag"));
    let mut recordings = Vec::new();
    for run in 0..2 {
        let out = dir.join(format!("off{run}.wav"));
        let o = host_with_input(
            &["--backend", "offline", "--record", out.to_str().unwrap()],
            &script,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("waited 2 s; at cycle 375"),
            "{}",
            stdout(&o)
        );
        assert!(
            stderr(&o).contains("recorded 96000 frames"),
            "{}",
            stderr(&o)
        );
        assert_eq!(frames(&out), 96_000);
        recordings.push(std::fs::read(&out).unwrap());
    }
    assert!(
        recordings[0] == recordings[1],
        "two runs of the same script recorded different bytes"
    );
    assert!(wav::channels(&dir.join("off0.wav"))[0]
        .iter()
        .any(|&x| x != 0.0));
}

/// Waits add up in audio time: the host plays up to the cycle nearest to their sum, whatever
/// each one's rounding; loads, gains and unloads between them apply at the next cycle; the
/// recording is the same bytes at every run, in every mode.
#[test]
fn offline_waits_add_up_and_commands_apply_at_the_next_cycle() {
    let dir = folder("host-offline", "script");
    let script = format!(
        "load a {}\nwait 0.2\nload b {}\ngain a -6\nwait 0.3\nunload a\nwait 0.25\nquit\n",
        example("pluck.ag"),
        example("synth.ag"),
    );
    let path = dir.join("s.txt");
    std::fs::write(&path, &script).unwrap();
    // 0.2 s: cycle round(37.5) = 38; 0.5 s: 94 (93.75); 0.75 s: 141 (140.625).
    for mode in ["shared", "separate"] {
        let mut first: Option<Vec<u8>> = None;
        for run in 0..2 {
            let out = dir.join(format!("{mode}{run}.wav"));
            let o = fugue(&[
                "host",
                "--backend",
                "offline",
                "--mode",
                mode,
                "--threads",
                "2",
                "--executor",
                if mode == "separate" { "ws" } else { "auto" },
                "--script",
                path.to_str().unwrap(),
                "--record",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{mode}: {}", stderr(&o));
            let text = stdout(&o);
            for want in [
                "waited 0.2 s; at cycle 38",
                "loaded b (id 2) at cycle 38",
                "waited 0.3 s; at cycle 94",
                "unloaded a (id 1) at cycle 94 after 94 cycles",
                "waited 0.25 s; at cycle 141",
            ] {
                assert!(text.contains(want), "{mode}: {want}: {text}");
            }
            assert_eq!(frames(&out), 141 * 256, "{mode}");
            let bytes = std::fs::read(&out).unwrap();
            match &first {
                None => first = Some(bytes),
                Some(f) => assert!(*f == bytes, "{mode}: two runs recorded different bytes"),
            }
        }
    }
}

/// The line that ends the host names the cycles that missed their deadline (the first ten,
/// and how many in all).
#[test]
fn the_end_of_the_host_names_the_missed_cycles() {
    let dir = folder("host-offline", "misses");
    let slow = dir.join("slow.ag");
    // 25 ms of work in a 1024-frame cycle (21.3 ms): every cycle with it misses.
    std::fs::write(
        &slow,
        "w = { kind: \"load\", wcet: 25000, };\ns = { kind: \"sink\", };\nw.1 -> s.1;\n",
    )
    .unwrap();
    let script = format!(
        "wait 0.064\nload slow {}\nwait 0.32\nquit\n",
        slow.display()
    );
    let o = host_with_input(
        &["--backend", "offline", "--buffer", "1024", "--threads", "1"],
        &script,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "host: 18 cycles, 15 deadline misses, the first 10 at cycles 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ("
        ),
        "{}",
        stderr(&o)
    );
}

/// `set` while the host plays offline: a script sets an oscillator's frequency to three
/// values at three cycles, and the recording is the same bytes at every run and the samples
/// of the same graph run cycle by cycle with the frequency set at the same cycles.
#[test]
fn set_changes_a_live_attribute_at_the_next_cycle_the_same_way_every_time() {
    let dir = folder("host-offline", "set");
    let graph = dir.join("tone.ag");
    let text = "o = { kind: \"osc\", freq: 220, volume: 0.5, };\nf = { kind: \"biquad\", freq: 3000, };\nout = { kind: \"sink\", in: 1, };\no.1 -> f.1 -> out.1;\n";
    std::fs::write(&graph, text).unwrap();
    // 256-frame cycles at 48 kHz: the waits end at cycles 19, 38 and 56 (round(T x 187.5)).
    let script = format!(
        "load a {}\nwait 0.1\nset a o freq 330\nwait 0.1\nset a o freq 440.5\nset a f q 2\nwait 0.1\nset a o freq 110\nwait 0.1\nquit\n",
        graph.display()
    );
    let mut recordings = Vec::new();
    for run in 0..2 {
        let out = dir.join(format!("set{run}.wav"));
        let o = host_with_input(
            &["--backend", "offline", "--record", out.to_str().unwrap()],
            &script,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("a: o freq = 330 from the next cycle"),
            "{}",
            stdout(&o)
        );
        recordings.push(std::fs::read(&out).unwrap());
    }
    assert!(
        recordings[0] == recordings[1],
        "two runs recorded different bytes"
    );
    let recorded = &wav::channels(&dir.join("set0.wav"))[0];
    assert_eq!(recorded.len(), 75 * 256);

    // The same graph, cycle by cycle, the values set between the same cycles.
    let g = fugue_graph::read_file(&graph, None).unwrap();
    let seq = || {
        fugue_engine::Engine::build(
            &g,
            &fugue_engine::Registry::with_builtin_kinds(),
            48_000.0,
            256,
            &fugue_engine::ExecutorChoice::default(),
            false,
        )
        .unwrap()
        .0
    };
    let mut engine = seq();
    let live = |kind: &str, attr: &str| {
        fugue_dsp::kinds::doc::builtin_doc(kind)
            .unwrap()
            .live
            .iter()
            .position(|a| a == attr)
            .unwrap()
    };
    let (o, f) = (g.find("o").unwrap(), g.find("f").unwrap());
    let mut expected = Vec::new();
    for cycle in 0..75 {
        match cycle {
            19 => engine.plan.set_param(o, live("osc", "freq"), 330.0),
            38 => {
                engine.plan.set_param(o, live("osc", "freq"), 440.5);
                engine.plan.set_param(f, live("biquad", "q"), 2.0);
            }
            56 => engine.plan.set_param(o, live("osc", "freq"), 110.0),
            _ => {}
        }
        engine.run_cycle();
        expected.extend_from_slice(engine.plan.output(0));
    }
    assert_eq!(recorded.len(), expected.len());
    for (k, (a, b)) in recorded.iter().zip(&expected).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "frame {k} (cycle {})", k / 256);
    }
    // And the frequency did change: the cycles after each set differ from a run without.
    let mut plain = seq();
    let mut unchanged = Vec::new();
    for _ in 0..75 {
        plain.run_cycle();
        unchanged.extend_from_slice(plain.plan.output(0));
    }
    assert_eq!(unchanged[..19 * 256], expected[..19 * 256]);
    assert_ne!(unchanged[19 * 256..20 * 256], expected[19 * 256..20 * 256]);
}

/// What `set` refuses, one line each, the host playing on.
#[test]
fn set_refuses_what_cannot_change_in_one_line_each() {
    let dir = folder("host-offline", "set-errors");
    let graph = dir.join("tone.ag");
    std::fs::write(
        &graph,
        "o = { kind: \"osc\", freq: 220, };\nf = { kind: \"biquad\", freq: 3000, };\nd = { kind: \"delay\", time: 0.5, };\ne = { kind: \"delay\", time: 0.5, max_time: 1.0, };\nout = { kind: \"sink\", };\no.1 -> f.1 -> d.1 -> e.1 -> out.1;\n",
    )
    .unwrap();
    // A delay's time changes live up to its line (`max_time`, 1 s here), after a change too.
    let script = format!(
        "load a {}\nset b o freq 3\nset a x freq 3\nset a o frq 3\nset a o phase 0.5\nset a f freq 100000\nset a o freq abc\nset a o freq\nset a d time 0.8\nset a d time 0.2\nset a d time 1.5\nset a f type 3\nset a f out 2\nset a f type highpass\nset a y freq abc\nset a o frq abc\nset aa o freq 3\nset a f freq 1e9\nset a e time 2\nwait 0.1\nquit\n",
        graph.display()
    );
    let o = host_with_input(&["--backend", "offline"], &script);
    // Replies and errors, wherever the host writes them for standard input.
    let err = format!("{}{}", stdout(&o), stderr(&o));
    for expected in [
        "no graph named `b` is loaded",
        "set a x freq: the graph has no node `x`",
        "node `o` (kind osc) has no attribute `frq`; did you mean `freq`?",
        "attribute `phase` of node `o` cannot change while the graph plays (the live attributes of kind osc: freq, volume)",
        "must be above 0 and below 24000 Hz",
        "`abc` is not a number",
        "set NAME NODE ATTR VALUE; something is missing",
        "`time` of node `d` can be set up to 1 while the graph plays",
        // Not live: said so, whatever the value (not that 3 is not a type).
        "attribute `type` of node `f` cannot change while the graph plays (the live attributes of kind biquad: freq, q, volume)",
        "attribute `out` of node `f` cannot change while the graph plays",
        // A value that is no number is said only once the node and attribute are right.
        "set a f type: attribute `type` of node `f` cannot change while the graph plays",
        "set a y freq: the graph has no node `y`",
        "set a o frq: node `o` (kind osc) has no attribute `frq`",
        "no graph named `aa` is loaded (did you mean `a`?)",
        // The value quoted as typed, not as the number is written back.
        "attribute `freq` = `1e9` must be above 0",
        // Past a bound the graph gives (`max_time`), the bound is said, not blamed.
        "set a e time: `time` of node `e` can be set up to 1 while the graph plays",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        16,
        "{err}"
    );
    // The host played on to the end of the script.
    assert!(stdout(&o).contains("waited 0.1 s"), "{}", stdout(&o));
}

/// A `load` whose graph has a node that cannot be built names the file, the node's place in
/// it and the reason, as `check` and `render` do; the host goes on.
#[test]
fn a_refused_load_names_the_place_of_the_node() {
    let d = folder("host-offline", "load-place");
    let g = d.join("brange.ag");
    std::fs::write(
        &g,
        "n = { kind: \"noise\", };\np = { kind: \"biquad\", freq: 30000, };\ns = { kind: \"sink\", };\nn.1 -> p.1 -> s.1;\n",
    )
    .unwrap();
    let o = host_with_input(
        &["--backend", "offline"],
        &format!("load c {}\nlist\nquit\n", g.display()),
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(out.contains("no graph is loaded"), "{out}");
    assert!(
        out.contains(&format!(
            "error: line 1 of standard input: cannot load {}:2:23: node `p` (biquad): attribute `freq` = `30000`",
            g.display()
        )),
        "{out}"
    );
    assert!(out.contains("no graph is loaded"), "{out}");
}

/// A graph whose output overflows (a feedback loop with a gain of 2) is mixed as silence
/// where its samples are not finite, beside a graph that plays on: the recording holds no
/// such sample and the other graph's sound, `stats` counts them, and a notice names the
/// graph once.
#[test]
fn samples_that_are_not_finite_are_mixed_as_silence_and_said_once() {
    let dir = folder("host-offline", "non-finite");
    let blow = dir.join("blow.ag");
    std::fs::write(
        &blow,
        "a = { kind: \"osc\", freq: 100, };\nm = { kind: \"mix\", volume: 2, };\nout = { kind: \"sink\", in: 1, };\na.1 -> m.1;\nm.1 ~> m.2;\nm.1 -> out.1;\n",
    )
    .unwrap();
    let tone = dir.join("tone.ag");
    std::fs::write(
        &tone,
        "o = { kind: \"osc\", freq: 440, volume: 0.5, };\nout = { kind: \"sink\", in: 1, };\no.1 -> out.1;\n",
    )
    .unwrap();
    let rec = dir.join("rec.wav");
    let script = format!(
        "load b {}\nload t {}\nwait 1\nstats b\nwait 0.5\nquit\n",
        blow.display(),
        tone.display()
    );
    let o = host_with_input(
        &[
            "--backend",
            "offline",
            "--buffer",
            "16",
            "--record",
            rec.to_str().unwrap(),
            "--force",
        ],
        &script,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("samples not finite (mixed as silence)"),
        "{out}"
    );
    let err = stderr(&o);
    assert_eq!(
        err.matches("graph b: its output holds samples that are not finite numbers")
            .count(),
        1,
        "{err}"
    );
    let left = &wav::channels(&rec)[0];
    assert!(
        left.iter().all(|x| x.is_finite()),
        "a sample that is not finite was recorded"
    );
    // The tone goes on at the end, where the loop has long overflowed.
    assert!(left[left.len() - 4800..].iter().any(|&x| x.abs() > 0.4));
}

/// Commands read from a script (standard input that is not a terminal): a failed one names
/// its line, blank lines counted, and the host goes on to the next.
#[test]
fn a_scripts_failed_command_names_its_line() {
    let o = host_with_input(
        &["--backend", "offline"],
        "list\n\nfrobnicate\nload a /nonexistent/x.ag\nquit\n",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 commands of standard input failed, the first at line 3"),
        "{}",
        stderr(&o)
    );
    assert!(
        out.contains("error: line 3 of standard input: unknown command `frobnicate`"),
        "{out}"
    );
    assert!(
        out.contains("error: line 4 of standard input: cannot read /nonexistent/x.ag"),
        "{out}"
    );
    assert!(out.contains("bye"), "{out}");
}

/// An empty graph and a node of unknown kind played as silence (`--placeholder`) load with
/// a warning in the reply, as `run` and `render` say them, not silently.
#[test]
fn an_empty_graph_and_a_placeholder_load_with_a_warning() {
    let dir = folder("host-offline", "silent-loads");
    let empty = dir.join("empty.ag");
    std::fs::write(&empty, "").unwrap();
    let unknown = dir.join("unknown.ag");
    std::fs::write(
        &unknown,
        "u = { kind: \"wobble\", };\ns = { kind: \"sink\", };\nu.1 -> s.1;\n",
    )
    .unwrap();
    let script = format!(
        "load a {}\nload u {}\nset u u speed 2\nquit\n",
        empty.display(),
        unknown.display()
    );
    let o = host_with_input(&["--backend", "offline", "--placeholder"], &script);
    let out = stdout(&o);
    assert!(
        out.contains("warning: the graph has no node, so it is silent"),
        "{out}"
    );
    assert!(
        out.contains(
            "warning: node `u` has an unknown kind `wobble`; it plays as silence (--placeholder)"
        ),
        "{out}"
    );
    // A `set` on it says what it is, not to give the --placeholder it was given.
    assert!(
        out.contains("node `u` has the unknown kind `wobble` and plays as silence (--placeholder): it has no attribute to change"),
        "{out}"
    );
    assert!(!out.contains("take --placeholder"), "{out}");
}

/// A live `set` tries the changed node at the node's own rate, as its plan plays it: after a
/// resampler that doubles the rate, a filter may go up to the doubled rate's half.
#[test]
fn set_checks_a_value_at_the_nodes_own_rate() {
    let dir = folder("host-offline", "set-rate");
    let graph = dir.join("up.ag");
    std::fs::write(
        &graph,
        "n = { kind: \"noise\", };\nup = { kind: \"resampler\", ratio: 2, };\nf = { kind: \"biquad\", freq: 3000, };\ndown = { kind: \"resampler\", ratio: \"1/2\", };\nout = { kind: \"sink\", };\nn.1 -> up.1 -> f.1 -> down.1 -> out.1;\n",
    )
    .unwrap();
    let script = format!(
        "load a {}\nset a f freq 30000\nset a f freq 50000\nwait 0.05\nquit\n",
        graph.display()
    );
    let o = host_with_input(&["--backend", "offline"], &script);
    let err = format!("{}{}", stdout(&o), stderr(&o));
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("set a f freq") && errors[0].contains("below 48000 Hz"),
        "{err}"
    );
}

/// A flag that the chosen backend or mode does not read is said as a warning, not passed
/// over; the host plays on.
#[test]
fn flags_the_backend_does_not_read_are_said() {
    let o = host_with_input(
        &[
            "--backend",
            "offline",
            "--ports",
            "per-graph",
            "--device",
            "hw:9",
            "--mode",
            "separate",
            "--grain",
            "whole",
        ],
        "quit\n",
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "warning: --ports applies to the jack backend; the offline backend does not read it"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning: --device applies to the alsa backend"),
        "{err}"
    );
    assert!(
        err.contains("warning: --grain applies to the shared and partitioned pools"),
        "{err}"
    );
    // Nothing said when the flags are the backend's own, or left as they are.
    let o = host_with_input(&["--backend", "offline"], "quit\n");
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

/// A file that a loaded graph's node reads (a Faust program) is never the recording: named by
/// a graph of the script, the host refuses to start and the file is kept whole (`--force`
/// included); named by a graph loaded from standard input, that `load` is refused.
#[test]
fn a_file_a_graph_reads_is_never_the_recording() {
    let dir = folder("host-offline", "record-read");
    let program = dir.join("prog.dsp");
    let text = "process = _;\n";
    std::fs::write(&program, text).unwrap();
    std::fs::write(
        dir.join("g.ag"),
        "f = { kind: \"faust\", file: \"prog.dsp\", };\nout = { kind: \"sink\", };\nf.1 -> out.1;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.txt"),
        format!("load a {}\nwait 0.1\n", dir.join("g.ag").display()),
    )
    .unwrap();
    let record = dir.join("rec.wav");
    std::os::unix::fs::symlink(&program, &record).unwrap();
    let script = dir.join("s.txt");
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--force",
        "--script",
        script.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&program).unwrap(), text);
    // Loaded from standard input, unknown when the host starts: refused at its load.
    std::fs::write(
        dir.join("h.ag"),
        "f = { kind: \"faust\", file: \"live.wav\", };\nout = { kind: \"sink\", };\nf.1 -> out.1;\n",
    )
    .unwrap();
    let live = dir.join("live.wav");
    let o = host_with_input(
        &["--backend", "offline", "--record", live.to_str().unwrap()],
        &format!("load b {}\nquit\n", dir.join("h.ag").display()),
    );
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        said.contains("live.wav is the file the host records to"),
        "{said}"
    );
}
