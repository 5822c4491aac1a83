//! Faust programs through the command line: `render`, `info` and the host's `load` of a
//! `.dsp` file, the examples of `examples/faust/`, and what a user gets wrong (a syntax
//! error, a missing file, an unknown parameter, libfaust absent).

mod common;

use std::path::Path;
use std::process::Command;

use common::{example, folder, fugue, stderr, stdout};
use fugue_testkit::wav;

/// Renders `graph` for `seconds` into `out`; returns the output's channels and the standard
/// error.
fn render(graph: &str, out: &Path, seconds: &str, env: Option<(&str, &str)>) -> (bool, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
    c.args([
        "render",
        graph,
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        seconds,
        "--force",
    ]);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (o.status.success(), stderr(&o))
}

/// Finite, and not silent.
fn check_sound(channels: &[Vec<f32>], what: &str) {
    assert!(
        channels.iter().flatten().all(|x| x.is_finite()),
        "{what}: a sample is not finite"
    );
    assert!(
        channels.iter().flatten().any(|&x| x != 0.0),
        "{what}: silent"
    );
}

#[test]
fn a_dsp_file_renders_as_a_graph_of_one_node() {
    if !fugue_faust::available_for("a_dsp_file_renders_as_a_graph_of_one_node") {
        return;
    }
    let dir = folder("faust", "dsp");
    let out = dir.join("string.wav");
    let (ok, err) = render(&example("faust/string.dsp"), &out, "1", None);
    assert!(ok, "{err}");
    let ch = wav::channels(&out);
    assert_eq!(ch.len(), 1, "one output, one channel");
    assert_eq!(ch[0].len(), 48_000);
    check_sound(&ch, "string.dsp");
    // A program with inputs reads them from --input (here: the string's own render).
    let echoed = dir.join("effects.wav");
    let o = fugue(&[
        "render",
        &example("faust/effects.dsp"),
        "--input",
        out.to_str().unwrap(),
        "-o",
        echoed.to_str().unwrap(),
        "--seconds",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ch = wav::channels(&echoed);
    assert_eq!(ch.len(), 2);
    check_sound(&ch, "effects.dsp");
    // `run` plays it (the clocked backend needs no audio server).
    let o = fugue(&[
        "run",
        &example("faust/string.dsp"),
        "--backend",
        "clocked",
        "--seconds",
        "0.2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // `info` describes the graph: a source, the program's node, a sink.
    let o = fugue(&["info", &example("faust/effects.dsp")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("faust 1, sink 1, source 1"), "{text}");
    // Of a graph that sets parameters, `info` gives the values set, beside the program's
    // defaults, and the defaults of the others.
    let o = fugue(&["info", &example("faust/chain.ag")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("/effects/time 0.25 as set (0.01 to 1, the program's default 0.3)"),
        "{text}"
    );
    assert!(
        text.contains("/effects/damp (0 to 1, initially 0.4)"),
        "{text}"
    );
}

#[test]
fn the_examples_render() {
    if !fugue_faust::available_for("the_examples_render") {
        return;
    }
    let dir = folder("faust", "examples");
    for (g, channels) in [
        ("ensemble.ag", 2),
        ("chain.ag", 2),
        ("strings32.ag", 1),
        ("karplus32/karplus32.ag", 2),
    ] {
        let out = dir.join(g.replace('/', "-")).with_extension("wav");
        let (ok, err) = render(&example(&format!("faust/{g}")), &out, "2", None);
        assert!(ok, "{g}: {err}");
        assert!(!err.contains("warning"), "{g}: {err}");
        let ch = wav::channels(&out);
        assert_eq!(ch.len(), channels, "{g}");
        check_sound(&ch, g);
    }
}

#[test]
fn a_syntax_error_is_the_files_line_and_fausts_message() {
    if !fugue_faust::available_for("a_syntax_error_is_the_files_line_and_fausts_message") {
        return;
    }
    let dir = folder("faust", "syntax");
    let bad = dir.join("bad.dsp");
    std::fs::write(
        &bad,
        "import(\"stdfaust.lib\");\nprocess = os.osc(440) +;\n",
    )
    .unwrap();
    let (ok, err) = render(bad.to_str().unwrap(), &dir.join("o.wav"), "1", None);
    assert!(!ok);
    assert!(err.contains("bad.dsp:2: syntax error"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The same program named by a graph: the node, the file, the line.
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "p = { kind: \"faust\", file: \"bad.dsp\", }; out = { kind: \"sink\", }; p.1 -> out.1;",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        dir.join("g.wav").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("node `p`") && err.contains("bad.dsp:2: syntax error"),
        "{err}"
    );
}

#[test]
fn a_missing_file_and_an_unknown_parameter() {
    if !fugue_faust::available_for("a_missing_file_and_an_unknown_parameter") {
        return;
    }
    let dir = folder("faust", "mistakes");
    std::fs::copy(example("faust/string.dsp"), dir.join("string.dsp")).unwrap();
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "p = { kind: \"faust\", file: \"nope.dsp\", }; out = { kind: \"sink\", }; p.1 -> out.1;",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        dir.join("g.wav").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("nope.dsp") && err.contains("cannot be read"),
        "{err}"
    );
    // A missing .dsp given to render directly.
    let o = fugue(&[
        "render",
        dir.join("none.dsp").to_str().unwrap(),
        "-o",
        dir.join("n.wav").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("none.dsp"), "{}", stderr(&o));
    // A parameter that the program does not have: a warning that lists those it has; the
    // others are set (a string at 440 Hz has a period of about 109 frames).
    std::fs::write(
        &g,
        "p = { kind: \"faust\", file: \"string.dsp\", freqq: 440, gain: 0.25, }; out = { kind: \"sink\", }; p.1 -> out.1;",
    )
    .unwrap();
    let out = dir.join("w.wav");
    let (ok, err) = render(g.to_str().unwrap(), &out, "0.1", None);
    assert!(ok, "{err}");
    assert!(
        err.contains("attribute `freqq`") && err.contains("/freq") && err.contains("/gain"),
        "{err}"
    );
    assert!(!err.contains("`gain`"), "gain is a parameter: {err}");
    // --strict makes it an error.
    let o = fugue(&[
        "render",
        g.to_str().unwrap(),
        "-o",
        dir.join("s.wav").to_str().unwrap(),
        "--strict",
    ]);
    assert!(!o.status.success());
    // `check` counts it as an error, as an attribute a built-in kind does not read.
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: ")
            && stderr(&o).contains("g.ag:1:42: node `p` has attribute `freqq`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn without_libfaust_a_faust_node_names_the_package() {
    let dir = folder("faust", "absent");
    let missing = ("FUGUE_LIBFAUST", "/nonexistent/libfaust.so.2");
    let (ok, err) = render(
        &example("faust/string.dsp"),
        &dir.join("a.wav"),
        "0.1",
        Some(missing),
    );
    assert!(!ok);
    assert!(
        err.contains("libfaust could not be loaded") && err.contains("libfaust2"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    let (ok, err) = render(
        &example("faust/chain.ag"),
        &dir.join("b.wav"),
        "0.1",
        Some(missing),
    );
    assert!(!ok);
    assert!(
        err.contains("node `pad`") && err.contains("libfaust2"),
        "{err}"
    );
    // A graph without Faust nodes does not need it.
    let (ok, err) = render(
        &example("synth.ag"),
        &dir.join("c.wav"),
        "0.1",
        Some(missing),
    );
    assert!(ok, "{err}");
}

#[test]
fn the_host_loads_and_unloads_faust_graphs_while_it_plays() {
    if !fugue_faust::available_for("the_host_loads_and_unloads_faust_graphs_while_it_plays") {
        return;
    }
    let dir = folder("faust", "host");
    let script = dir.join("session.txt");
    let mut text = String::from("load base ");
    text.push_str(&example("synth.ag"));
    text.push_str("\nwait 0.1\n");
    for i in 0..4 {
        text.push_str(&format!(
            "load s{i} {}\nwait 0.05\nload e{i} {}\nwait 0.05\nunload s{i}\nunload e{i}\nwait 0.02\n",
            example("faust/string.dsp"),
            example("faust/ensemble.ag"),
        ));
    }
    text.push_str("stats\nquit\n");
    std::fs::write(&script, text).unwrap();
    let o = fugue(&[
        "host",
        "--backend",
        "clocked",
        "--threads",
        "2",
        "--script",
        script.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut loads = 0;
    let mut stats = None;
    for line in stdout(&o).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["ok"], true, "{line}");
        match v["command"].as_str().unwrap() {
            "load" => loads += 1,
            "stats" => stats = Some(v),
            _ => {}
        }
    }
    assert_eq!(loads, 9);
    let st = stats.unwrap();
    let swaps = (st["swap_cycles"].as_u64(), st["swap_misses"].as_u64());
    let (Some(cycles), Some(misses)) = swaps else {
        panic!("{st}")
    };
    if let Err(e) = fugue_testkit::host::swaps_met(cycles, misses, 16) {
        panic!("{e}: {st}");
    }
}

#[test]
fn the_host_warns_of_a_parameter_the_program_does_not_have() {
    if !fugue_faust::available_for("the_host_warns_of_a_parameter_the_program_does_not_have") {
        return;
    }
    let dir = folder("faust", "host-warning");
    std::fs::copy(example("faust/string.dsp"), dir.join("string.dsp")).unwrap();
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "p = { kind: \"faust\", file: \"string.dsp\", freqq: 440, gain: 0.25, }; out = { kind: \"sink\", }; p.1 -> out.1;",
    )
    .unwrap();
    let script = dir.join("session.txt");
    std::fs::write(
        &script,
        format!(
            "load a {}\nwait 0.05\nset a p gain 0.1\nset a p /string/freq 330\nset a p freqq 1\nwait 0.05\nquit\n",
            g.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        script.to_str().unwrap(),
        "--json",
    ]);
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    let load: serde_json::Value = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["command"] == "load")
        .unwrap();
    assert_eq!(load["ok"], true, "{load}");
    let w = load["warning"].as_str().unwrap_or_default();
    assert!(
        w.contains("attribute `freqq`") && w.contains("/freq") && !w.contains("`gain`"),
        "{load}"
    );
    // The program's parameters are live; a name that is none of them is refused.
    let replies: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["command"] == "set")
        .collect();
    assert_eq!(replies.len(), 3, "{}", stdout(&o));
    assert_eq!(replies[0]["ok"], true, "{:?}", replies[0]);
    assert_eq!(replies[1]["ok"], true, "{:?}", replies[1]);
    assert_eq!(replies[2]["ok"], false, "{:?}", replies[2]);
    let e = replies[2]["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("node `p` cannot set `freqq`, which its Faust program does not have as a parameter (its parameters: ")
            && e.contains("/freq"),
        "{e}"
    );
}

/// A live `set` of a parameter by its path replaces what the graph gave it by its label, and
/// one parameter of a label that several share is set alone (the others keep the label's
/// value): no "give it once" refusal, and the sound follows each change.
#[test]
fn a_live_set_by_path_replaces_the_graphs_label() {
    if !fugue_faust::available_for("a_live_set_by_path_replaces_the_graphs_label") {
        return;
    }
    let dir = folder("faust", "live-path");
    std::fs::write(
        dir.join("ab.dsp"),
        "a = hgroup(\"a\", hslider(\"gain\", 0.5, 0, 1, 0.01));\nb = hgroup(\"b\", hslider(\"gain\", 0.5, 0, 1, 0.01));\nf = hgroup(\"grp\", hslider(\"freq\", 100, 20, 2000, 1));\nprocess = a * b + f * 0.0001;\n",
    )
    .unwrap();
    let g = dir.join("ab.ag");
    std::fs::write(
        &g,
        "p = { kind: \"faust\", file: \"ab.dsp\", freq: 200, gain: 0.2, };\nout = { kind: \"sink\", };\np.1 -> out.1;\n",
    )
    .unwrap();
    let script = dir.join("s.txt");
    std::fs::write(
        &script,
        format!(
            "load g {}\nwait 0.05\nset g p /ab/grp/freq 1000\nset g p a/gain 0.9\nwait 0.05\nset g p /ab/b/gain 0.5\nwait 0.05\nquit\n",
            g.display()
        ),
    )
    .unwrap();
    let wav = dir.join("ab.wav");
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        script.to_str().unwrap(),
        "--record",
        wav.to_str().unwrap(),
        "--force",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.contains("error"), "{out}");
    let bytes = std::fs::read(&wav).unwrap();
    let data = bytes.windows(4).position(|w| w == b"data").unwrap() + 8;
    let mut levels: Vec<f32> = Vec::new();
    for c in bytes[data..].chunks_exact(4) {
        let x = (f32::from_le_bytes(c.try_into().unwrap()) * 1e4).round() / 1e4;
        if levels.last() != Some(&x) {
            levels.push(x);
        }
    }
    // 0.2 * 0.2 + 200e-4; then a = 0.9 (b keeps the label's 0.2) + 1000e-4; then b = 0.5.
    assert_eq!(levels, [0.06, 0.28, 0.55], "{out}");
}

/// Whether `bench faust` can run here: libfaust, and the `faust` and `g++` programs it
/// compiles Faust's own modes with. When one is missing the test is skipped, unless
/// `FUGUE_REQUIRE_FAUST` is set (CI), where that fails it.
fn bench_faust_can_run(test: &str) -> bool {
    if !fugue_faust::available_for(test) {
        return false;
    }
    for tool in ["faust", "g++"] {
        if Command::new(tool).arg("--version").output().is_err() {
            assert!(
                std::env::var_os("FUGUE_REQUIRE_FAUST").is_none(),
                "FUGUE_REQUIRE_FAUST is set, but {tool} is not installed"
            );
            common::skip(test, &format!("{tool} is not installed"));
            return false;
        }
    }
    true
}

#[test]
fn bench_faust_runs_fausts_modes_and_fugue_and_checks_their_outputs() {
    if !bench_faust_can_run("bench_faust_runs_fausts_modes_and_fugue") {
        return;
    }
    let dir = folder("faust", "bench");
    let out = dir.join("report");
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "bench",
            "faust",
            "--seconds",
            "0.2",
            "--runs",
            "2",
            "--threads",
            "1,2",
            "-o",
            out.to_str().unwrap(),
            "--force",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<Vec<&str>> = summary
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // Both programs: the four Faust modes (sch and omp at 1 and 2 threads) and fugue's seq,
    // ws and static (at 2).
    assert_eq!(rows.len(), 2 * 9, "{summary}");
    for r in &rows {
        assert_eq!(r[3], "2", "two runs each: {r:?}");
        let block: f64 = r[4].parse().unwrap();
        assert!(block > 0.0 && block.is_finite(), "{r:?}");
        if r[1].starts_with("fugue") {
            // fugue's outputs are its seq's, bit for bit.
            assert_eq!(r[12].parse::<f64>().unwrap(), 0.0, "{r:?}");
        }
    }
    for p in ["karplus32", "mixer"] {
        let base = rows
            .iter()
            .find(|r| r[0] == p && r[1] == "fugue seq")
            .unwrap();
        assert_eq!(base[7], "1.000", "seq is its own base: {base:?}");
    }
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme.contains("## karplus32") && readme.contains("## mixer"),
        "{readme}"
    );
    assert!(
        readme.contains("faust -vec -sch") && readme.contains("fugue ws"),
        "{readme}"
    );
    assert!(out.join("speedup.svg").is_file() && out.join("raw.csv").is_file());
    // The folder is not overwritten without --force.
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "bench",
            "faust",
            "--seconds",
            "0.1",
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
}

#[test]
fn a_parameter_is_kept_in_its_range_and_what_will_not_play_is_said() {
    if !fugue_faust::available_for("a_parameter_is_kept_in_its_range") {
        return;
    }
    let dir = folder("faust", "ranges");
    std::fs::write(
        dir.join("w.dsp"),
        "import(\"stdfaust.lib\");\n\
         gain = hslider(\"gain\", 0.5, 0, 1, 0.01);\n\
         freq = nentry(\"freq\", 440, 20, 2000, 1);\n\
         vol = vgroup(\"vol\", hslider(\"volume\", 0.1, 0, 1, 0.01));\n\
         process = os.osc(freq) * gain * vol;\n",
    )
    .unwrap();
    let g = dir.join("g.ag");
    let run = |graph: &str, extra: &[&str]| {
        std::fs::write(&g, graph).unwrap();
        let out = dir.join("g.wav");
        let mut args = vec![
            "render",
            g.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.05",
            "--force",
        ];
        args.extend_from_slice(extra);
        fugue(&args)
    };
    // Beyond the slider's range: refused, with the range, as the built-in kinds refuse.
    let o = run(
        "d = { kind: \"faust\", file: \"w.dsp\", gain: 5, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("attribute `gain` = `5` is outside the range of parameter `/w/gain` of its Faust program: 0 to 1"),
        "{}",
        stderr(&o)
    );
    // A check box or a button is off or on: a value between is refused (it would scale
    // what the program multiplies by it), 0 and 1 are let through.
    std::fs::write(
        dir.join("sw.dsp"),
        "import(\"stdfaust.lib\");\n\
         process = os.osc(440) * checkbox(\"on\") * (1 - button(\"mute\")) * 0.5;\n",
    )
    .unwrap();
    for (attrs, said) in [
        ("on: 0.5,", "attribute `on` = `0.5` is not 0 or 1: parameter `/sw/on` of its Faust program is a check box, off (0) or on (1)"),
        ("mute: 0.25,", "attribute `mute` = `0.25` is not 0 or 1: parameter `/sw/mute` of its Faust program is a button, off (0) or on (1)"),
    ] {
        let o = run(
            &format!("d = {{ kind: \"faust\", file: \"sw.dsp\", {attrs} }};\nout = {{ kind: \"sink\", }};\nd.1 -> out.1;\n"),
            &[],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
    }
    let o = run(
        "d = { kind: \"faust\", file: \"sw.dsp\", on: 1, mute: 0, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // One parameter by its label and by its path: refused when the values differ (the later
    // one was kept without a word), let through when they agree.
    let o = run(
        "d = { kind: \"faust\", file: \"w.dsp\", gain: 0.2, \"/w/gain\": 0.3, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("attribute `/w/gain` = `0.3` sets parameter `/w/gain` of its Faust program, which `gain` sets to 0.2 already; give it once"),
        "{}",
        stderr(&o)
    );
    let o = run(
        "d = { kind: \"faust\", file: \"w.dsp\", gain: 0.2, \"/w/gain\": 0.2, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The bounds themselves are let through; a text for an attribute that names no
    // parameter is a warning (with its place), as a number is; an attribute of the node's own
    // that a parameter also has is said.
    let o = run(
        "d = { kind: \"faust\", file: \"w.dsp\", gain: 1, freq: 2000, volume: 0.5, options: \"-double\", };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "g.ag:1:71: node `d` has attribute `options`, which its Faust program does not have"
        ),
        "{e}"
    );
    assert!(
        e.contains("g.ag:1:58: node `d`: attribute `volume` is the node's own (the node's output gain), not its program's parameter `/w/vol/volume`"),
        "{e}"
    );
    // Sliders labelled `in` and `wcet`: the graph reads those attributes (ports, cost), and
    // says so when given; the path still sets the slider.
    std::fs::write(
        dir.join("io.dsp"),
        "process = hslider(\"in\", 0.5, 0, 1, 0.1) * hslider(\"wcet\", 0.5, 0, 1, 0.1);\n",
    )
    .unwrap();
    let o = run(
        "d = { kind: \"faust\", file: \"io.dsp\", in: 0, wcet: 0, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("node `d`: attribute `in` is the graph's (the node's input ports), not its program's parameter `/io/in`, which it leaves at 0.5; write \"/io/in\" to set that one")
            && e.contains("node `d`: attribute `wcet` is the graph's (the node's cost in µs), not its program's parameter `/io/wcet`"),
        "{e}"
    );
    let o = run(
        "d = { kind: \"faust\", file: \"io.dsp\", wcet: 3, \"/io/wcet\": 0, };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("is the graph's"), "{}", stderr(&o));
    // A slider labelled `file`: a `.dsp` rendered alone (a node whose `file` names it) says
    // nothing of it, even under --strict.
    std::fs::write(
        dir.join("coll.dsp"),
        "f = hslider(\"file\", 0.5, 0, 1, 0.01);\nprocess = f * 0.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", dir.join("coll.dsp").to_str().unwrap(), "--strict"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // A sound file, which fugue does not load.
    std::fs::write(
        dir.join("sf.dsp"),
        "import(\"stdfaust.lib\");\nprocess = 0, ba.period(1000) : soundfile(\"snd[url:{'snd.wav'}]\", 2) : !,!,_,_;\n",
    )
    .unwrap();
    let o = fugue(&["check", dir.join("sf.dsp").to_str().unwrap()]);
    assert!(
        stderr(&o).contains("reads the sound file `snd` (soundfile), which fugue does not load"),
        "{}",
        stderr(&o)
    );
    // Faust's messages without their noise: an empty program, a program without `process`,
    // a library that cannot be found (with the line that imports it).
    for (name, text, said) in [
        (
            "empty.dsp",
            "",
            "empty.dsp: the program is empty: it defines no `process`",
        ),
        (
            "noproc.dsp",
            "import(\"stdfaust.lib\");\nfoo = 1;\n",
            "noproc.dsp: undefined symbol : process",
        ),
        (
            "nolib.dsp",
            "process = 1;\nimport(\"nosuch.lib\");\n",
            "nolib.dsp:2: unable to open file nosuch.lib",
        ),
    ] {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let o = fugue(&["check", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stderr(&o).contains(said), "{name}: {}", stderr(&o));
        assert!(!stderr(&o).contains("????"), "{name}: {}", stderr(&o));
    }
}

#[test]
fn an_import_is_found_beside_the_program_before_the_graphs_folder() {
    if !fugue_faust::available_for("an_import_is_found_beside_the_program") {
        return;
    }
    // The graph's folder and the program's own both hold a `level.lib`: the program's is read.
    let dir = folder("faust", "imports");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("level.lib"), "lvl = 0.5;\n").unwrap();
    std::fs::write(dir.join("sub/level.lib"), "lvl = 0.125;\n").unwrap();
    std::fs::write(
        dir.join("sub/m.dsp"),
        "import(\"level.lib\");\nprocess = lvl;\n",
    )
    .unwrap();
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "d = { kind: \"faust\", file: \"sub/m.dsp\", };\nout = { kind: \"sink\", };\nd.1 -> out.1;\n",
    )
    .unwrap();
    let out = dir.join("g.wav");
    let (ok, err) = render(
        g.to_str().unwrap(),
        &out,
        "0.01",
        Some(("FUGUE_FAUST_CACHE", "off")),
    );
    assert!(ok, "{err}");
    let ch = wav::channels(&out);
    assert!(ch[0].iter().all(|&x| x == 0.125), "{:?}", &ch[0][..4]);
}

/// A compilation that crashes (here a helper that dies as libfaust does, by a segmentation
/// fault) is the program's error, said in one sentence, and leaves no output; a helper that
/// cannot be run, or none (`off`), compiles in the process as before.
#[test]
fn a_crash_while_compiling_is_the_programs_error() {
    if !fugue_faust::available_for("a_crash_while_compiling_is_the_programs_error") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = folder("faust", "crash");
    let helper = dir.join("crashing-helper.sh");
    std::fs::write(&helper, "#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n").unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prog = dir.join("tone.dsp");
    std::fs::write(
        &prog,
        "import(\"stdfaust.lib\");\nprocess = os.osc(440) * 0.1;\n",
    )
    .unwrap();
    let run = |helper: &str, out: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args([
                "render",
                prog.to_str().unwrap(),
                "-o",
                out,
                "--seconds",
                "0.1",
            ])
            .env("FUGUE_FAUST_CACHE", "off")
            .env(fugue_faust::HELPER_ENV, helper)
            .output()
            .unwrap();
        (o.status.code(), stderr(&o))
    };
    let out = dir.join("crashed.wav");
    let (code, err) = run(helper.to_str().unwrap(), out.to_str().unwrap());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("libfaust crashed while compiling")
            && err.contains("tone.dsp")
            && err.contains("segmentation fault, signal 11"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !out.exists(),
        "a crashed compilation left {}",
        out.display()
    );
    // A helper that reads none of its job, for a program longer than a pipe holds: the
    // job's write fails (EPIPE, not a SIGPIPE that would end fugue) and fugue compiles.
    let long = format!(
        "// {}\n{}",
        "x".repeat(200_000),
        std::fs::read_to_string(&prog).unwrap()
    );
    std::fs::write(&prog, long).unwrap();
    for (helper, name) in [
        ("off", "off.wav"),
        ("/nonexistent/helper", "missing.wav"),
        ("/bin/true", "true.wav"),
    ] {
        let out = dir.join(name);
        let (code, err) = run(helper, out.to_str().unwrap());
        assert_eq!(code, Some(0), "helper {helper}: {err}");
        let channels = wav::channels(&out);
        check_sound(&channels, helper);
    }
}

/// A program on which libfaust itself crashes (Faust 2.54 on `2dKirchhoffThinPlate.dsp`, after
/// about 18 s of compiling) is refused by the host's `load` while the audio plays on, and the
/// host loads the next program.
#[test]
fn the_host_plays_on_when_libfaust_crashes_on_a_program() {
    if !fugue_faust::available_for("the_host_plays_on_when_libfaust_crashes_on_a_program") {
        return;
    }
    let crasher =
        Path::new("/usr/share/faust/examples/physicalModeling/fds/2dKirchhoffThinPlate.dsp");
    if !crasher.exists() {
        eprintln!("skipped: {} is not installed", crasher.display());
        return;
    }
    let dir = folder("faust", "host-crash");
    let script = dir.join("session.txt");
    std::fs::write(
        &script,
        format!(
            "load base {}\nwait 0.05\nload k {}\nload s {}\nwait 0.05\nstats\nquit\n",
            example("synth.ag"),
            crasher.display(),
            example("faust/string.dsp"),
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "clocked",
            "--threads",
            "2",
            "--script",
            script.to_str().unwrap(),
            "--json",
        ])
        .env("FUGUE_FAUST_CACHE", dir.join("cache"))
        .output()
        .unwrap();
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    let replies: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The replies to the three loads, in order: base, k, s.
    let loads: Vec<&serde_json::Value> =
        replies.iter().filter(|v| v["command"] == "load").collect();
    assert_eq!(loads.len(), 3, "{}", stdout(&o));
    assert_eq!(loads[0]["ok"], true, "{}", loads[0]);
    assert_eq!(loads[1]["ok"], false, "{}", loads[1]);
    assert_eq!(loads[1]["name"], "k", "{}", loads[1]);
    assert!(
        loads[1]["file"]
            .as_str()
            .unwrap_or_default()
            .ends_with("2dKirchhoffThinPlate.dsp"),
        "{}",
        loads[1]
    );
    let e = loads[1]["error"].as_str().unwrap_or_default();
    assert!(e.contains("libfaust crashed while compiling"), "{e}");
    assert_eq!(loads[2]["ok"], true, "{}", loads[2]);
    assert_eq!(loads[2]["name"], "s", "{}", loads[2]);
    let stats = replies.iter().find(|v| v["command"] == "stats").unwrap();
    assert!(stats["cycles"].as_u64().unwrap_or(0) > 0, "{stats}");
}

/// A compilation that runs past the time limit (`FUGUE_FAUST_TIME_LIMIT`, 1 s here, for a
/// program of 20,000 filters in series, which takes minutes) is stopped: the host says so
/// in one line, plays on and takes the next command.
#[test]
fn a_compilation_past_the_time_limit_is_stopped_and_the_host_plays_on() {
    if !fugue_faust::available_for("a_compilation_past_the_time_limit_is_stopped") {
        return;
    }
    let dir = folder("faust", "time-limit");
    let slow = dir.join("slow.dsp");
    std::fs::write(
        &slow,
        "import(\"stdfaust.lib\");\nprocess = seq(i, 20000, fi.lowpass(2, 1000 + i));\n",
    )
    .unwrap();
    let script = dir.join("session.txt");
    std::fs::write(
        &script,
        format!(
            "load base {}\nload slow {}\nwait 0.05\nlist\nquit\n",
            example("synth.ag"),
            slow.display(),
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "host",
            "--backend",
            "offline",
            "--script",
            script.to_str().unwrap(),
        ])
        .env("FUGUE_FAUST_CACHE", "off")
        .env("FUGUE_FAUST_TIME_LIMIT", "1")
        .output()
        .unwrap();
    // A command failed: the host played on, and the run fails as it ends.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(" failed") && stderr(&o).contains("the host ran the others"),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    let err = stderr(&o);
    assert!(
        err.contains("session.txt:2: error: compiling ")
            && err.contains("slow.dsp took longer than 1 s, the limit, and was stopped"),
        "{err}"
    );
    assert!(stdout(&o).contains("1 loaded: base"), "{}", stdout(&o));
}

/// A program whose tables LLVM would allocate with its code (a table of 200 million samples:
/// 860 MiB) is refused once its compilation passes the memory a compilation may use (set to
/// 512 MiB), in one sentence, without the process taking that memory; so is one whose
/// compiler needs more than 64 MiB; and a helper that starts a process
/// of its own (a script that does not `exec`) is stopped whole at the time limit: no
/// process of it is left, and the compilation ends at the limit.
#[test]
fn a_compilation_is_bounded_in_memory_and_stopped_whole() {
    if !fugue_faust::available_for("a_compilation_is_bounded_in_memory_and_stopped_whole") {
        return;
    }
    let dir = folder("faust", "bounded");
    let big = dir.join("big.dsp");
    std::fs::write(&big, "process = rdtable(200000000, 0, 0);\n").unwrap();
    // `fugue check` of `dsp`, compiled anew with at most `mib` MiB.
    let check_within = |dsp: &std::path::Path, mib: &str| {
        Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["check", dsp.to_str().unwrap()])
            .env("FUGUE_FAUST_CACHE", "off")
            .env("FUGUE_FAUST_MEMORY_LIMIT", mib)
            .output()
            .unwrap()
    };
    let o = check_within(&big, "512");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("big.dsp needs more than the 512 MiB of memory a compilation may use"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A limit below what the helper needs to start is raised to that, and said.
    let small = dir.join("small.dsp");
    std::fs::write(&small, "process = _;\n").unwrap();
    let o = check_within(&small, "10");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("FUGUE_FAUST_MEMORY_LIMIT=10: below the 64 MiB a Faust compilation needs")
            && err.contains("Faust compilations may use 64 MiB"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A program whose compilation itself needs more than the limit (the compiler's memory,
    // not the program's state: 600 filters in a row) is refused for memory too (the C++
    // runtime's std::bad_alloc, or the C library's words, read on the child's standard
    // error), in one sentence; or, when libfaust read the null pointer of a refused
    // allocation instead (now and then), as a crash: either way the child's limit held, and
    // the program was not compiled in this process without it.
    let long = dir.join("long.dsp");
    std::fs::write(
        &long,
        "import(\"stdfaust.lib\");\nprocess = seq(i, 600, fi.lowpass(1, 1000 + i));\n",
    )
    .unwrap();
    let o = check_within(&long, "64");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        (err.contains("long.dsp needs more than the 64 MiB of memory a compilation may use")
            && err.contains("FUGUE_FAUST_MEMORY_LIMIT=MIB sets another limit"))
            || err.contains("libfaust crashed while compiling"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The helper's child process: a marker in its command line names it for pgrep.
    let marker = format!("fugue-test-helper-{}", std::process::id());
    let helper = dir.join("helper.sh");
    std::fs::write(
        &helper,
        format!("#!/bin/sh\nsh -c 'sleep 600; : {marker}'\n"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let program = dir.join("p.dsp");
    std::fs::write(&program, "process = _ * 0.5;\n").unwrap();
    let started = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args(["check", program.to_str().unwrap()])
        .env("FUGUE_FAUST_CACHE", "off")
        .env("FUGUE_FAUST_HELPER", &helper)
        .env("FUGUE_FAUST_TIME_LIMIT", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr(&o).contains("took longer than 1 s, the limit"),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A program in a folder whose path has a quote (which libfaust writes unescaped into the
/// program's description, and then fails or crashes) is refused in one sentence that names
/// the folder; a quote in the file's own name is harmless. The interpreter's programs compile
/// in the child too, and play as they do compiled in the process.
#[test]
fn odd_paths_and_the_interpreter_through_the_child() {
    if !fugue_faust::available_for("odd_paths_and_the_interpreter_through_the_child") {
        return;
    }
    let dir = folder("faust", "odd-paths");
    let quoted = dir.join("quo\"te");
    std::fs::create_dir_all(&quoted).unwrap();
    let code = "import(\"stdfaust.lib\");\nprocess = os.osc(440) * 0.1;\n";
    std::fs::write(quoted.join("p.dsp"), code).unwrap();
    std::fs::write(dir.join("a\"b.dsp"), code).unwrap();
    let out = dir.join("o.wav");
    let (ok, err) = render(
        quoted.join("p.dsp").to_str().unwrap(),
        &out,
        "0.1",
        Some(("FUGUE_FAUST_CACHE", "off")),
    );
    assert!(!ok);
    assert!(
        err.contains("libfaust cannot use the folder") && err.contains("quo\\\"te"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // Run from inside the folder, the program's folder is `.`: named as the path it stands
    // for, where the quote is.
    let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "render",
            "p.dsp",
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.1",
        ])
        .current_dir(&quoted)
        .env("FUGUE_FAUST_CACHE", "off")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("cannot use the folder") && e.contains("quo\\\"te"),
        "{e}"
    );
    assert!(!e.contains("folder \".\""), "{e}");
    let (ok, err) = render(
        dir.join("a\"b.dsp").to_str().unwrap(),
        &out,
        "0.1",
        Some(("FUGUE_FAUST_CACHE", "off")),
    );
    assert!(ok, "{err}");
    // Control characters in a program's own name (the graph made of it quotes them), and a
    // name that is not UTF-8 (said, not read as a missing file).
    for name in ["c\u{1}x.dsp", "c\u{1b}x.dsp", "c\u{7f}x.dsp"] {
        std::fs::write(dir.join(name), code).unwrap();
        let (ok, err) = render(dir.join(name).to_str().unwrap(), &out, "0.1", None);
        assert!(ok, "{name:?}: {err}");
    }
    {
        use std::os::unix::ffi::OsStrExt;
        let bad = dir.join(std::ffi::OsStr::from_bytes(b"bad\xffname.dsp"));
        std::fs::write(&bad, code).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .arg("check")
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("its file name is not UTF-8 text"),
            "{}",
            stderr(&o)
        );
    }
    // A string, and a reverb (whose constants the interpreter's code, as libfaust writes it
    // to a file, kept to 7 digits: it played other delays through the child).
    let reverb = dir.join("reverb.dsp");
    std::fs::write(
        &reverb,
        "import(\"stdfaust.lib\");\nprocess = os.osc(440) * 0.1 <: re.stereo_freeverb(0.8, 0.5, 0.5, 23) :> _;\n",
    )
    .unwrap();
    for (k, program) in [
        example("faust/string.dsp"),
        reverb.to_string_lossy().into_owned(),
    ]
    .iter()
    .enumerate()
    {
        let g = dir.join(format!("interp-{k}.ag"));
        std::fs::write(
            &g,
            format!(
                "s = {{ kind: \"faust\", file: {program:?}, backend: \"interp\", }};\no = {{ kind: \"sink\", }};\ns.1 -> o.1;\n",
            ),
        )
        .unwrap();
        interp_plays_alike_through_the_child(&dir, &g);
    }
}

/// `g`, a graph of interpreted Faust nodes, renders the same samples compiled in the process
/// alone and through the child.
fn interp_plays_alike_through_the_child(dir: &Path, g: &Path) {
    let mut outputs = Vec::new();
    for helper in ["off", ""] {
        let out = dir.join(format!("interp-{}.wav", outputs.len()));
        let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
        c.args(["render", g.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--seconds", "1", "-e", "seq", "--force"])
            .env("FUGUE_FAUST_CACHE", "off");
        if helper.is_empty() {
            c.env_remove(fugue_faust::HELPER_ENV);
        } else {
            c.env(fugue_faust::HELPER_ENV, helper);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert!(
        outputs[0] == outputs[1],
        "{}: the interpreter's program played differently through the child",
        g.display()
    );
}

/// `check` counts a Faust node's output ports as the render does: an edge from a port the
/// program does not have is an error at the node, exit status 1.
#[test]
fn check_counts_a_programs_output_ports() {
    if !fugue_faust::available_for("check_counts_a_programs_output_ports") {
        return;
    }
    let dir = folder("faust", "check-ports");
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "a = { kind: \"faust\", code: \"import(\\\"stdfaust.lib\\\"); process = os.osc(440);\", };\nout = { kind: \"sink\", };\na.3 -> out.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("g.ag:1:1: node `a` (faust) has 1 output(s) but the graph uses 3"),
        "{e}"
    );
}

/// A compiled program's tables are made once for all the nodes that run it, and counted
/// once: ten nodes of one program with a table of 53 MiB pass `check` and render, ten
/// programs of such a table each (535 MiB) are refused. (1024 `os.osc` nodes of one program,
/// its sine table counted for each, were refused as needing 513 MiB; they play in 85 MB.) A
/// graph whose nodes' own memory passes the limit is not told to use a smaller buffer.
#[test]
fn a_programs_tables_are_counted_once_for_all_its_nodes() {
    if !fugue_faust::available_for("a_programs_tables_are_counted_once_for_all_its_nodes") {
        return;
    }
    let dir = folder("faust", "shared-tables");
    // Ten nodes, of one program (`same`) or of ten (`k` in each program's text).
    let graph = |one: bool| {
        let mut g = String::new();
        for i in 0..10 {
            let k = if one { 3 } else { i };
            g.push_str(&format!(
                "n{i} = {{ kind: \"faust\", code: \"import(\\\"stdfaust.lib\\\"); process = rdtable(14000000, ba.time + {k}, ba.time % 14000000) * 1e-9;\", }};\n"
            ));
        }
        g.push_str("m = { kind: \"mix\", };\nout = { kind: \"sink\", };\nm.1 -> out.1;\n");
        for i in 0..10 {
            g.push_str(&format!("n{i}.1 -> m.{};\n", i + 1));
        }
        g
    };
    let same = dir.join("same.ag");
    std::fs::write(&same, graph(true)).unwrap();
    let o = fugue(&["check", same.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (ok, err) = render(same.to_str().unwrap(), &dir.join("same.wav"), "0.01", None);
    assert!(ok, "{err}");
    let ten = dir.join("ten.ag");
    std::fs::write(&ten, graph(false)).unwrap();
    let o = fugue(&["check", ten.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("ten.ag:10:1: the graph needs 535 MiB of memory")
            && e.contains("tables of its nodes, counted up to node `n9`"),
        "{e}"
    );
    // Nodes whose own state passes the limit (a delay of 2^22 samples each): the advice
    // names what the nodes hold first.
    let mut g = String::new();
    for i in 0..40 {
        g.push_str(&format!(
            "d{i} = {{ kind: \"faust\", code: \"process = @(4194000);\", }};\n"
        ));
    }
    g.push_str("out = { kind: \"sink\", };\nd0.1 -> out.1;\n");
    let path = dir.join("long.ag");
    std::fs::write(&path, &g).unwrap();
    let o = fugue(&["check", path.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("delay lines, work buffers and tables of its nodes")
            && e.contains("; use fewer nodes, shorter delays or smaller tables, or a smaller buffer size where the nodes' work buffers take it"),
        "{e}"
    );
}

/// An error in a library that the program imports names the library with the folder it was
/// read from, not only as the `import` writes it.
#[test]
fn an_error_in_an_imported_library_names_its_folder() {
    if !fugue_faust::available_for("an_error_in_an_imported_library_names_its_folder") {
        return;
    }
    let dir = folder("faust", "lib-error");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("mine.lib"), "gain = *(0.5);\nbroken = +(;\n").unwrap();
    std::fs::write(
        sub.join("p.dsp"),
        "import(\"mine.lib\");\nprocess = _ : gain;\n",
    )
    .unwrap();
    let (ok, err) = render(
        sub.join("p.dsp").to_str().unwrap(),
        &dir.join("o.wav"),
        "0.1",
        None,
    );
    assert!(!ok);
    let want = format!("{}:2:", sub.join("mine.lib").display());
    assert!(err.contains(&want), "{want} in: {err}");
}

/// A program that calls C functions outside the math library (`abort`, `exit` through
/// Faust's `ffunction`) is refused in one sentence before any instance runs them: render,
/// info and check say so with exit 1 (the process is not ended by the program), and one
/// that calls the math library's (`sinh`) renders.
#[test]
fn foreign_functions_outside_the_math_library_are_refused() {
    if !fugue_faust::available_for("foreign_functions_outside_the_math_library_are_refused") {
        return;
    }
    let dir = folder("faust", "foreign");
    for (name, text, function) in [
        (
            "ab.dsp",
            "a = ffunction(int abort(), <stdlib.h>, \"\");\nprocess = a;\n",
            "abort",
        ),
        (
            "ex.dsp",
            "f = ffunction(int exit(int), <stdlib.h>, \"\");\nprocess = f(11);\n",
            "exit",
        ),
        // A math function that writes through a pointer, given a number as its address.
        (
            "frexp.dsp",
            "f = ffunction(float frexpf(float, int), <math.h>, \"\");\nprocess = f(0.5, 4096);\n",
            "frexpf",
        ),
        // Called with a constant (libfaust itself refuses it, in its own words, as it does
        // for piano.dsp of Faust's examples).
        (
            "fx.dsp",
            "f = ffunction(float getValueX(float), <piano.h>, \"\");\nprocess = f(0.5) * 0.1;\n",
            "getValueX",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        for cmd in ["render", "info", "check"] {
            let mut args = vec![cmd, p.to_str().unwrap()];
            let out = dir.join("out.wav");
            if cmd == "render" {
                args.extend(["-o", out.to_str().unwrap(), "--force", "--seconds", "0.1"]);
            }
            let o = fugue(&args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{cmd} {name}: {e}");
            assert!(
                e.contains(&format!(
                    "calls `{function}`, a function of C outside the math library"
                )),
                "{cmd} {name}: {e}"
            );
        }
    }
    let ok = dir.join("sinh.dsp");
    std::fs::write(
        &ok,
        "f = ffunction(float sinhf|sinh|sinhl (float), <math.h>, \"\");\nprocess = f(0.5) * 0.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        ok.to_str().unwrap(),
        "-o",
        dir.join("sinh.wav").to_str().unwrap(),
        "--force",
        "--seconds",
        "0.1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A math function that Faust's interpreter does not call (`erf`) is not said to be
    // outside the math library: the LLVM backend runs it.
    std::fs::write(
        dir.join("erf.dsp"),
        "import(\"stdfaust.lib\");\nprocess = ma.erf(0.5) * 0.1;\n",
    )
    .unwrap();
    let g = dir.join("erf.ag");
    std::fs::write(
        &g,
        "e = { kind: \"faust\", file: \"erf.dsp\", backend: \"interp\", };\nout = { kind: \"sink\", };\ne.1 -> out.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", g.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("Faust's interpreter does not call `erff` of the C math library")
            && e.contains("use `backend: \"llvm\"`")
            && !e.contains("outside the math library"),
        "{e}"
    );
}

/// A program that reads a C constant or variable fugue cannot give it (Faust's `fconstant`,
/// `fvariable`; LLVM read them as 0, the interpreter refuses them) is refused in one sentence
/// naming them; `fSamplingFreq`, the sample rate, is given and renders.
#[test]
fn foreign_constants_are_refused_but_the_sample_rate() {
    if !fugue_faust::available_for("foreign_constants_are_refused_but_the_sample_rate") {
        return;
    }
    let dir = folder("faust", "foreign-constants");
    for (name, text, says) in [
        (
            "k.dsp",
            "k = fconstant(float mysteryK, <mystery.h>);\nprocess = k + 1.0;\n",
            "reads `mysteryK`, a constant or variable of C",
        ),
        (
            "v.dsp",
            "process = fvariable(float myvar, <x.h>) + fconstant(float M_PI, <math.h>);\n",
            "a constant or variable of C (Faust's `fconstant` or `fvariable`)",
        ),
        // The sample rate read as a variable: 0 under LLVM, so refused as the others.
        (
            "srv.dsp",
            "process = fvariable(int fSamplingFreq, <math.h>) / 96000.0;\n",
            "reads `fSamplingFreq`, a constant or variable of C",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        for backend in ["llvm", "interp"] {
            let g = dir.join(format!("{backend}-{name}.ag"));
            std::fs::write(
                &g,
                format!("a = {{ kind: \"faust\", file: \"{name}\", backend: \"{backend}\", }};\ns = {{ kind: \"sink\", }};\na.1 -> s.1;\n"),
            )
            .unwrap();
            let o = fugue(&["check", g.to_str().unwrap()]);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{backend} {name}: {e}");
            if backend == "llvm" {
                assert!(e.contains(says), "{name}: {e}");
            } else {
                assert!(e.contains("foreign"), "{name}: {e}");
            }
            assert!(!e.contains("panicked"), "{e}");
        }
    }
    let sr = dir.join("sr.dsp");
    std::fs::write(
        &sr,
        "process = fconstant(int fSamplingFreq, <math.h>) / 96000.0;\n",
    )
    .unwrap();
    let wav = dir.join("sr.wav");
    let o = fugue(&[
        "render",
        sr.to_str().unwrap(),
        "-o",
        wav.to_str().unwrap(),
        "--force",
        "--seconds",
        "0.01",
        "--rate",
        "48000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&wav).unwrap();
    let last = f32::from_le_bytes(bytes[bytes.len() - 4..].try_into().unwrap());
    assert_eq!(last, 0.5);
}

/// A program that reads the block's length (`ma.BS`, which `si.bsmooth` uses) gives other
/// samples when a cycle is cut into sub-blocks: a plan that holds it is not pipelined, and
/// its render is seq's, bit for bit; a program that does not is pipelined as before.
#[test]
fn a_program_that_reads_the_blocks_length_is_not_pipelined() {
    if !fugue_faust::available_for("a_program_that_reads_the_blocks_length_is_not_pipelined") {
        return;
    }
    let dir = folder("faust", "block-length");
    for (name, text, pipelined) in [
        (
            "bs.dsp",
            "import(\"stdfaust.lib\");\nprocess = ma.BS / 1024.0;\n",
            false,
        ),
        (
            "bsmooth.dsp",
            "import(\"stdfaust.lib\");\nprocess = os.osc(440) * (hslider(\"g\", 0.5, 0, 1, 0.01) : si.bsmooth);\n",
            false,
        ),
        (
            "osc.dsp",
            "import(\"stdfaust.lib\");\nprocess = os.osc(440) * hslider(\"g\", 0.5, 0, 1, 0.01);\n",
            true,
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let render = |out: &str, exec: &[&str]| {
            let wav = dir.join(out);
            let mut args = vec![
                "render",
                p.to_str().unwrap(),
                "-o",
                wav.to_str().unwrap(),
                "--force",
                "--seconds",
                "0.2",
            ];
            args.extend(exec);
            let o = fugue(&args);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            (std::fs::read(wav).unwrap(), stderr(&o))
        };
        let (seq, _) = render("seq.wav", &["-e", "seq"]);
        let (piped, e) = render("piped.wav", &["-e", "ws", "--threads", "2", "--pipeline", "4"]);
        assert!(seq == piped, "{name}: the pipelined render differs from seq's");
        assert_eq!(
            e.contains("gives other samples when a block is cut into shorter calls"),
            !pipelined,
            "{name}: {e}"
        );
    }
}

/// An output is never a file the graph's nodes read (a Faust program), even with --force:
/// `run --stats synth.dsp --force` replaced the program with the statistics.
#[test]
fn an_output_is_never_a_program_the_graph_reads() {
    if !fugue_faust::available_for("an_output_is_never_a_program_the_graph_reads") {
        return;
    }
    let dir = folder("faust", "output_is_program");
    let program = "import(\"stdfaust.lib\");\nprocess = os.osc(440) * 0.1;\n";
    std::fs::write(dir.join("tone.dsp"), program).unwrap();
    let g = dir.join("g.ag");
    std::fs::write(
        &g,
        "t = { kind: \"faust\", file: \"tone.dsp\", };\nout = { kind: \"sink\", };\nt.1 -> out.1;\n",
    )
    .unwrap();
    let stats = dir.join("tone.dsp");
    let o = fugue(&[
        "run",
        g.to_str().unwrap(),
        "--backend",
        "clocked",
        "--seconds",
        "0.1",
        "--stats",
        stats.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is the input file"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&stats).unwrap(), program);
    // `render -o -` with standard output opened on the program (`>> tone.dsp`): refused
    // before anything is written to it.
    let onto = std::fs::OpenOptions::new()
        .append(true)
        .open(&stats)
        .unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "render",
            g.to_str().unwrap(),
            "-o",
            "-",
            "--seconds",
            "0.05",
        ])
        .stdout(onto)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "standard output is the input file {}",
            stats.display()
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&stats).unwrap(), program);
}

/// A program that reads a `soundfile`, run by the interpreter (which crashes running it
/// without the file), is refused in one sentence before any block runs, exit 1, whether a
/// child process compiles it first or fugue's own (`FUGUE_FAUST_HELPER=off`, where it ended
/// fugue); the LLVM backend plays it, silent there, with a warning.
#[test]
fn the_interpreter_refuses_a_soundfile_without_crashing() {
    if !fugue_faust::available_for("the_interpreter_refuses_a_soundfile_without_crashing") {
        return;
    }
    let dir = folder("faust", "soundfile");
    std::fs::write(
        dir.join("sf.dsp"),
        "snd = soundfile(\"snd\", 1);\nprocess = 0,0 : snd : !,!,_;\n",
    )
    .unwrap();
    let out = dir.join("o.wav");
    for (backend, ok, helper) in [
        (", backend: \"interp\"", false, None),
        (", backend: \"interp\"", false, Some("off")),
        ("", true, None),
    ] {
        let g = dir.join("sf.ag");
        std::fs::write(
            &g,
            format!("sf = {{ kind: \"faust\", file: \"sf.dsp\"{backend}, }};\nout = {{ kind: \"sink\", }};\nsf.1 -> out.1;\n"),
        )
        .unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args(["render", g.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .args(["--seconds", "0.01", "--force"])
            .env("FUGUE_FAUST_CACHE", "off")
            .env(fugue_faust::HELPER_ENV, helper.unwrap_or(""))
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.success(), ok, "{backend}: {e}");
        if ok {
            assert!(e.contains("reads the sound file `snd`"), "{e}");
        } else {
            assert_eq!(o.status.code(), Some(1), "{helper:?}: {e}");
            assert!(
                e.contains("sf.dsp reads the sound file `snd`, which fugue does not load and Faust's interpreter cannot run without"),
                "{helper:?}: {e}"
            );
            assert_eq!(e.trim().lines().count(), 1, "{e}");
        }
    }
}

/// A program whose file starts with a UTF-8 byte-order mark renders, as a graph file with one
/// does (Faust's parser took the mark for text: "syntax error ... EXTRA").
#[test]
fn a_program_with_a_byte_order_mark_renders() {
    if !fugue_faust::available_for("a_program_with_a_byte_order_mark_renders") {
        return;
    }
    let dir = folder("faust", "bom");
    let p = dir.join("bom.dsp");
    std::fs::write(&p, "\u{feff}process = 0.25;\n").unwrap();
    let out = dir.join("bom.wav");
    let o = fugue(&[
        "render",
        p.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.01",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ch = wav::channels(&out);
    assert!(ch[0].iter().all(|&x| x == 0.25), "{:?}", &ch[0][..4]);
}

#[test]
fn a_program_above_the_librarys_rate_is_said_out_of_tune() {
    if !fugue_faust::available_for("a_program_above_the_librarys_rate") {
        return;
    }
    let dir = folder("faust", "high-rate");
    let out = dir.join("string.wav");
    let program = example("faust/string.dsp");
    let said = |o: &std::process::Output| stderr(o).contains("as if at 192000 Hz");
    // At 192 kHz it computes as written; at 384 kHz the render succeeds and says why it is
    // off, once, naming the program's file; with --strict it fails before rendering.
    let args = |rate: &'static str| -> Vec<String> {
        [
            "render",
            &program,
            "-o",
            out.to_str().unwrap(),
            "--seconds",
            "0.05",
            "--force",
            "--rate",
            rate,
        ]
        .map(String::from)
        .to_vec()
    };
    let a = args("192000");
    let o = fugue(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success() && !said(&o), "{}", stderr(&o));
    let a = args("384000");
    let o = fugue(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(said(&o), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("as if at 192000 Hz").count(),
        1,
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("string.dsp"), "{}", stderr(&o));
    let mut strict = a.clone();
    strict.push("--strict".into());
    std::fs::remove_file(&out).unwrap();
    let o = fugue(&strict.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!o.status.success() && said(&o), "{}", stderr(&o));
    assert!(!out.exists(), "--strict renders nothing");
}

/// Several nodes whose program computes as if at 192 kHz are said as one warning and one
/// line naming the others, by `check` as by `render`.
#[test]
fn the_rate_warning_of_many_nodes_is_said_once() {
    if !fugue_faust::available_for("the_rate_warning_of_many_nodes_is_said_once") {
        return;
    }
    let dir = folder("faust", "high-rate-many");
    let program = dir.join("sine.dsp");
    std::fs::write(
        &program,
        "import(\"stdfaust.lib\");\nprocess = os.osc(440) * 0.1;\n",
    )
    .unwrap();
    let graph = dir.join("ens.ag");
    let mut text =
        String::from("bus = { kind: \"mix\", in: 4, };\nout = { kind: \"sink\", in: 1, };\n");
    for i in 1..=4 {
        text.push_str(&format!(
            "s{i} = {{ kind: \"faust\", file: \"sine.dsp\", }};\ns{i}.1 -> bus.{i};\n"
        ));
    }
    text.push_str("bus.1 -> out.1;\n");
    std::fs::write(&graph, text).unwrap();
    let g = graph.to_str().unwrap();
    let out = dir.join("ens.wav");
    for args in [
        vec!["check", g, "--rate", "384000"],
        vec![
            "render",
            g,
            "--rate",
            "384000",
            "--seconds",
            "0.01",
            "--force",
            "-o",
            out.to_str().unwrap(),
        ],
    ] {
        let o = fugue(&args);
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        assert_eq!(
            err.matches("as if at 192000 Hz").count(),
            1,
            "{args:?}: {err}"
        );
        assert!(
            err.contains("ens.ag:3:1: node `s1`: at 384000 Hz")
                && err.contains(
                    "ens.ag: the same for 3 more nodes: `s2` (5:1), `s3` (7:1), `s4` (9:1)"
                ),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_run_under_jack_checks_the_program_at_the_servers_rate() {
    use fugue_testkit::jackd::DummyServer;
    let name = "a_run_under_jack_checks_the_program_at_the_servers_rate";
    if !fugue_faust::available_for(name) {
        return;
    }
    // The server's rate is known once connected: the run's warnings are the ones of the
    // rate that played, not of the 48 kHz assumed before.
    let server = match DummyServer::start("cli-rate", 384_000, 1024) {
        Ok(s) => s,
        Err(why) => {
            common::skip(name, &why);
            return;
        }
    };
    let program = example("faust/string.dsp");
    let run = |strict: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fugue"));
        c.args(["run", &program, "--backend", "jack", "--seconds", "0.2"])
            .args(["--executor", "seq", "--client-name", "fugue-cli-rate"])
            .env("JACK_DEFAULT_SERVER", server.name());
        if strict {
            c.arg("--strict");
        }
        c.output().unwrap()
    };
    let o = run(false);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains("at 384000 Hz its Faust program computes as if at 192000 Hz"),
        "{said}"
    );
    assert_eq!(said.matches("as if at 192000 Hz").count(), 1, "{said}");
    assert!(said.contains("string.dsp:1:1"), "{said}");
    // --strict: the run's report, then the error.
    let o = run(true);
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("at 384000 Hz"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("--strict makes warnings errors"),
        "{}",
        stderr(&o)
    );
}

/// An integer division by zero in a program (a `%` whose right side a parameter within its
/// range makes 0) traps on x86-64; the node fails, said once, and the process plays on:
/// `render` and `run` with a warning, the host silencing that graph only (the other plays
/// on).
#[test]
fn an_integer_division_by_zero_fails_the_node_not_the_process() {
    if !fugue_faust::available_for("an_integer_division_by_zero_fails_the_node_not_the_process") {
        return;
    }
    let dir = folder("faust", "division");
    std::fs::write(
        dir.join("modn.dsp"),
        "import(\"stdfaust.lib\");\nprocess = (ba.time % int(hslider(\"n\", 4, 0, 8, 1))) / 8.0;\n",
    )
    .unwrap();
    let said = "node `p` failed (its Faust program divided an integer by zero";
    for backend in ["llvm", "interp"] {
        for (n, fails) in [(0, true), (3, false)] {
            let graph = dir.join(format!("modn-{backend}-{n}.ag"));
            std::fs::write(
                &graph,
                format!("p = {{ kind: \"faust\", file: \"modn.dsp\", backend: \"{backend}\", n: {n}, }};\nout = {{ kind: \"sink\", }};\np.1 -> out.1;\n"),
            )
            .unwrap();
            for exec in [&["-e", "seq"][..], &["-e", "ws", "-t", "2"]] {
                let out = dir.join(format!("modn-{backend}-{n}.wav"));
                let mut args = vec![
                    "render",
                    graph.to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                    "--seconds",
                    "0.05",
                    "--force",
                ];
                args.extend_from_slice(exec);
                let o = fugue(&args);
                let e = stderr(&o);
                let what = format!("{backend}, n = {n}, {exec:?}");
                assert!(o.status.success(), "{what}: {e}");
                assert!(!e.contains("panicked"), "{what}: {e}");
                assert_eq!(e.contains(said), fails, "{what}: {e}");
                let samples = wav::channels(&out);
                assert_eq!(
                    samples.iter().flatten().all(|&x| x == 0.0),
                    fails,
                    "{what}: silent or not"
                );
            }
        }
    }
    let graph = dir.join("modn-llvm-0.ag");
    let o = fugue(&[
        "run",
        graph.to_str().unwrap(),
        "--backend",
        "clocked",
        "--seconds",
        "0.2",
    ]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains(said) && !e.contains("panicked"), "{e}");
    // The host: the graph that fails is silenced, the other plays on to the end.
    let ok = dir.join("modn-llvm-3.ag");
    let script = dir.join("session.txt");
    std::fs::write(
        &script,
        format!(
            "load a {}\nload b {}\nwait 0.05\nset b p n 0\nwait 0.05\nset b p n 3\nwait 0.05\nstats\nquit\n",
            example("synth.ag"),
            ok.display()
        ),
    )
    .unwrap();
    let o = fugue(&[
        "host",
        "--backend",
        "offline",
        "--script",
        script.to_str().unwrap(),
    ]);
    let (out, e) = (stdout(&o), stderr(&o));
    let both = format!("{out}{e}");
    assert!(
        both.contains("graph b: its node `p` failed (its Faust program divided an integer by zero")
            && !both.contains("panicked at"),
        "{both}"
    );
    // A set to the silenced graph would not be heard: refused at its line, the host playing
    // on to the script's end, which then exits 1 for that line.
    assert!(
        both.contains(
            "session.txt:6: error: set b p n: graph b is silenced since a node of it failed"
        ),
        "{both}"
    );
    assert_eq!(both.matches("waited 0.05 s").count(), 3, "{both}");
    assert_eq!(o.status.code(), Some(1), "{both}");
}

/// `bench faust --param`: a value that is not a number is refused before any build, and a
/// program path that is a folder is said to be one.
#[test]
fn bench_faust_refuses_a_value_that_is_not_a_number() {
    if !fugue_faust::available_for("bench_faust_refuses_a_value_that_is_not_a_number") {
        return;
    }
    let dir = folder("faust", "bench-param");
    let graph = dir.join("string.ag");
    std::fs::write(
        &graph,
        format!(
            "s = {{ kind: \"faust\", file: \"{}\", }};\nout = {{ kind: \"sink\", }};\ns.1 -> out.1;\n",
            example("faust/string.dsp")
        ),
    )
    .unwrap();
    let out = dir.join("report");
    let run = |dsp: &str, param: &str| {
        fugue(&[
            "bench",
            "faust",
            "--dsp",
            dsp,
            "--graph",
            graph.to_str().unwrap(),
            "--param",
            param,
            "-o",
            out.to_str().unwrap(),
            "--force",
        ])
    };
    for value in ["abc", "nan", ""] {
        let o = run(&example("faust/string.dsp"), &format!("freq={value}"));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {e}");
        assert!(
            e.contains(&format!("--param freq={value}: `{value}` is not a number")),
            "{e}"
        );
    }
    let o = run(dir.to_str().unwrap(), "freq=220");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("it is a folder, not a file"), "{e}");
    assert!(!out.exists());
}

/// `bench faust --dsp P --graph G` with a graph of other music (32 strings against one) fails
/// at the first run, naming both files, and writes nothing: the times of two different
/// pieces of music do not compare (it exited 0 with a largest difference of 0.51 in its
/// README).
#[test]
fn bench_faust_refuses_a_graph_of_other_music() {
    if !bench_faust_can_run("bench_faust_refuses_a_graph_of_other_music") {
        return;
    }
    let out = folder("faust", "bench-other-music").join("report");
    let o = fugue(&[
        "bench",
        "faust",
        "--dsp",
        &example("faust/string.dsp"),
        "--graph",
        &example("faust/strings32.ag"),
        "--seconds",
        "0.1",
        "--runs",
        "1",
        "--threads",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("strings32.ag differs from Faust's scalar build of")
            && e.contains("the graph does not play the program's music"),
        "{e}"
    );
    assert!(!out.exists(), "nothing is written");
}

/// A SIGFPE that another program sends keeps its default action once foreign code's
/// divisions are guarded: the process ends by it, as it would without the guard (the
/// handler passes on what is not a division that trapped inside a foreign call).
#[test]
fn a_sigfpe_sent_by_another_program_keeps_its_action() {
    use std::os::unix::process::ExitStatusExt as _;
    if !fugue_faust::available_for("a_sigfpe_sent_by_another_program_keeps_its_action") {
        return;
    }
    let dir = folder("faust", "sigfpe");
    std::fs::write(
        dir.join("modn.dsp"),
        "import(\"stdfaust.lib\");\nprocess = (ba.time % int(hslider(\"n\", 4, 0, 8, 1))) / 8.0;\n",
    )
    .unwrap();
    let graph = dir.join("modn.ag");
    std::fs::write(
        &graph,
        "p = { kind: \"faust\", file: \"modn.dsp\", n: 3, };\nout = { kind: \"sink\", };\np.1 -> out.1;\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fugue"))
        .args([
            "run",
            graph.to_str().unwrap(),
            "--backend",
            "clocked",
            "--seconds",
            "20",
            "-e",
            "seq",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once the graph plays (its instance made, the handler installed).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGFPE) };
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            panic!("the run went on after SIGFPE");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGFPE), "{status:?}");
}

/// A program that seeds its noise at random (`no.rnoise`) plays other samples at every run:
/// said as a warning naming the node (an error under --strict); a noise of fixed seed
/// (`no.noise`) renders the same bytes every time, without a word.
#[test]
fn a_program_seeded_at_random_is_warned_about() {
    if !fugue_faust::available_for("a_program_seeded_at_random_is_warned_about") {
        return;
    }
    let dir = folder("faust", "random-seed");
    let random = dir.join("rn.dsp");
    std::fs::write(
        &random,
        "import(\"stdfaust.lib\");\nprocess = no.rnoise * 0.1;\n",
    )
    .unwrap();
    let fixed = dir.join("n.dsp");
    std::fs::write(
        &fixed,
        "import(\"stdfaust.lib\");\nprocess = no.noise * 0.1;\n",
    )
    .unwrap();
    let said = "rn.dsp:1:1: node `dsp`: its Faust program gives other samples at every instance (it seeds its noise at random, as `no.rnoise` does)";
    let out = dir.join("rn.wav");
    let (ok, err) = render(random.to_str().unwrap(), &out, "0.05", None);
    assert!(ok, "{err}");
    assert!(err.contains("fugue: warning: "), "{err}");
    assert!(err.contains(said), "{err}");
    let o = fugue(&[
        "render",
        random.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--seconds",
        "0.05",
        "--force",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let (a, b) = (dir.join("a.wav"), dir.join("b.wav"));
    for w in [&a, &b] {
        let (ok, err) = render(fixed.to_str().unwrap(), w, "0.05", None);
        assert!(ok, "{err}");
        assert!(!err.contains("warning"), "{err}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

/// A live `set` that would make a node of a pipelined graph depend on how a block is cut (a
/// checkbox that turns to `si.bsmooth`) is refused in one sentence, and the graph plays on
/// unchanged; unpipelined, the same `set` is taken.
#[test]
fn a_set_that_would_break_a_pipelined_graphs_output_is_refused() {
    if !fugue_faust::available_for("a_set_that_would_break_a_pipelined_graphs_output_is_refused") {
        return;
    }
    let dir = folder("faust", "pipelined-set");
    std::fs::write(
        dir.join("bsc.dsp"),
        "import(\"stdfaust.lib\");\nprocess = _ + os.osc(100) <: select2(checkbox(\"bs\"), _, si.bsmooth);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("g.ag"),
        "src = { kind: \"noise\", };\np = { kind: \"faust\", file: \"bsc.dsp\", };\nout = { kind: \"sink\", in: 1, };\nsrc.1 -> p.1;\np.1 -> out.1;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("s.txt"),
        "load a g.ag\nwait 0.05\nset a p bs 1\nwait 0.05\nquit\n",
    )
    .unwrap();
    let host = |pipeline: &str| {
        Command::new(env!("CARGO_BIN_EXE_fugue"))
            .args([
                "host",
                "--backend",
                "offline",
                "--mode",
                "separate",
                "--executor",
                "ws",
                "--threads",
                "2",
                "--pipeline",
                pipeline,
                "--script",
                "s.txt",
            ])
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let o = host("4");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("s.txt:3: error: set a p bs: with `bs` at 1, node `p` gives other samples when a block is cut into shorter calls, and the graph plays pipelined"),
        "{e}"
    );
    let o = host("1");
    assert!(o.status.success(), "{}", stderr(&o));
}
