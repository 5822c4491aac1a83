//! `fugue check` and `fugue info` on near-miss graphs: each message names the file, the line
//! and column, and the valid name the graph probably meant; render says the same names.

mod common;

use common::{example, folder, fugue, stderr, stdout};

/// Ten graphs, each with one near miss: (file, text, the place, the suggestion).
const NEAR_MISSES: &[(&str, &str, &str, &str)] = &[
    (
        "kind.ag",
        "a = { kind: \"oscc\", freq: 220.0 };\nb = { kind: \"sink\", in: 1 };\na.1 -> b.1;\n",
        "kind.ag:1:13:",
        "unknown kind `oscc`; did you mean `osc`?",
    ),
    (
        "sink.ag",
        "a = { kind: \"osc\", freq: 220.0 };\nb = { kind: \"sinc\", in: 1 };\na.1 -> b.1;\n",
        "sink.ag:2:13:",
        "unknown kind `sinc`; did you mean `sink`?",
    ),
    (
        "biquad.ag",
        "a = { kind: \"noise\" };\nf = {\n  kind: \"biqaud\",\n  freq: 800.0,\n};\nb = { kind: \"sink\" };\na.1 -> f.1 -> b.1;\n",
        "biquad.ag:3:9:",
        "unknown kind `biqaud`; did you mean `biquad`?",
    ),
    (
        "frequency.ag",
        "a = { kind: \"osc\", frequency: 220.0 };\nb = { kind: \"sink\", in: 1 };\na.1 -> b.1;\n",
        "frequency.ag:1:20:",
        "attribute `frequency`, which kind osc does not read; did you mean `freq`?",
    ),
    (
        "feedback.ag",
        "a = { kind: \"noise\" };\nd = { kind: \"delay\", time: 0.3, feedbak: 0.5 };\nb = { kind: \"sink\" };\na.1 -> d.1 -> b.1;\n",
        "feedback.ag:2:33:",
        "attribute `feedbak`, which kind delay does not read; did you mean `feedback`?",
    ),
    (
        "volume.ag",
        "a = { kind: \"osc\", freq: 220.0, volum: 0.5 };\nb = { kind: \"sink\" };\na.1 -> b.1;\n",
        "volume.ag:1:33:",
        "attribute `volum`, which kind osc does not read; did you mean `volume`?",
    ),
    (
        "node.ag",
        "osc1 = { kind: \"osc\", freq: 220.0 };\nout = { kind: \"sink\" };\nosc.1 -> out.1;\n",
        "node.ag:3:1:",
        "unknown node `osc`; did you mean `osc1`?",
    ),
    (
        "dest.ag",
        "osc1 = { kind: \"osc\", freq: 220.0 };\nout = { kind: \"sink\" };\nosc1.1 -> otu.1;\n",
        "dest.ag:3:11:",
        "unknown node `otu`; did you mean `out`?",
    ),
    (
        "port.ag",
        "a = { kind: \"osc\", freq: 220.0 };\nb = { kind: \"sink\", in: 2 };\na.1 -> b.3;\n",
        "port.ag:3:8:",
        "input port 3 of node `b` is out of range: the node declares 2 input port(s), numbered from 1; did you mean `b.2`?",
    ),
    (
        "zero.ag",
        "a = { kind: \"osc\", freq: 220.0, out: 1 };\nb = { kind: \"sink\", in: 2 };\na.0 -> b.1;\n",
        "zero.ag:3:3:",
        "did you mean `a.1`?",
    ),
];

#[test]
fn check_names_the_place_and_the_nearest_valid_name_of_ten_near_misses() {
    let d = folder("check", "check-near-misses");
    for (name, text, place, hint) in NEAR_MISSES {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        let o = fugue(&["check", p.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains(hint))
            .unwrap_or_else(|| panic!("{name}: no `{hint}` in:\n{err}"));
        assert!(
            line.contains(&format!("{}", d.join(place).display())),
            "{name}: the place {place} in: {line}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn check_accepts_the_examples_and_task_graphs() {
    for name in ["echo.ag", "pluck.ag", "rake.ag", "synth.ag"] {
        let o = fugue(&["check", &example(name)]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("every kind, attribute and port checked"),
            "{name}: {}",
            stdout(&o)
        );
    }
    let d = folder("check", "check-task-graph");
    let stg = d.join("t.stg");
    std::fs::write(&stg, "3\n0 0 0\n1 5 1 0\n2 0 1 1\n").unwrap();
    let o = fugue(&["check", stg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("a task graph"), "{}", stdout(&o));
    // A node that reaches no sink is a warning; --strict makes it fail.
    let ag = d.join("unheard.ag");
    std::fs::write(&ag, "a = { kind: \"osc\", freq: 1.0 };\nn = { kind: \"noise\" };\nb = { kind: \"sink\" };\na.1 -> b.1;\n").unwrap();
    let o = fugue(&["check", ag.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unheard.ag:2:1: node `n` (noise) reaches no sink"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&["check", ag.to_str().unwrap(), "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn info_refuses_what_render_refuses_and_render_suggests_the_same_names() {
    let d = folder("check", "check-info-render");
    let kind = d.join("kind.ag");
    std::fs::write(&kind, NEAR_MISSES[0].1).unwrap();
    let o = fugue(&["info", kind.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kind.ag:1:13: node `a` has unknown kind `oscc`; did you mean `osc`?"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let wav = d.join("o.wav");
    let wav = wav.to_str().unwrap();
    let o = fugue(&[
        "render",
        kind.to_str().unwrap(),
        "-o",
        wav,
        "--seconds",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown kind `oscc` (did you mean `osc`?)"),
        "{}",
        stderr(&o)
    );
    // A misspelt required attribute: render names the one the node gives.
    let freq = d.join("frequency.ag");
    std::fs::write(&freq, NEAR_MISSES[3].1).unwrap();
    let o = fugue(&[
        "render",
        freq.to_str().unwrap(),
        "-o",
        wav,
        "--seconds",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("the node gives `frequency`: did you mean `freq`?"),
        "{}",
        stderr(&o)
    );
    // A misspelt optional attribute: render warns with the suggestion, info too.
    let vol = d.join("volume.ag");
    std::fs::write(&vol, NEAR_MISSES[5].1).unwrap();
    let o = fugue(&[
        "render",
        vol.to_str().unwrap(),
        "-o",
        wav,
        "--seconds",
        "0.1",
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`volum`, which kind osc does not read; did you mean `volume`?"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&["info", vol.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("did you mean `volume`?"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// A DOT graph's problems have their line and column too, and a node that an edge made
/// without a kind (a typo in an edge) is said to give none, not to be of a kind `task`.
#[test]
fn dot_problems_have_places_and_a_node_without_kind_is_named_so() {
    let d = folder("check", "check-dot");
    let p = d.join("typo.dot");
    std::fs::write(
        &p,
        "digraph g {\n o [kind=osc, freq=440, volme=2];\n s [kind=sink];\n o -> x -> s;\n}\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("typo.dot:2:25: node `o` has attribute `volme`, which kind osc does not read; did you mean `volume`?"),
        "{err}"
    );
    assert!(
        err.contains("typo.dot:4:7: node `x` gives no kind (`task`, a node of a task graph"),
        "{err}"
    );
    let wav = d.join("t.wav");
    let o = fugue(&["render", p.to_str().unwrap(), "-o", wav.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("typo.dot:4:7: node `x` gives no kind"),
        "{err}"
    );
}

/// A DOT attribute that neither fugue nor Graphviz reads (a misspelt edge port, cost or
/// feedback mark, a graph's deadline, a task node's cost) is said at its place with the key
/// it probably meant: an error for `check`, a warning for `info` and `schedule`. Graphviz's
/// own attributes and a task node's other data are not; past 32, the rest are counted.
#[test]
fn dot_attributes_read_by_no_one_are_said_where_they_are() {
    let d = folder("check", "dot-unread");
    let audio = d.join("audio.dot");
    std::fs::write(
        &audio,
        "digraph {\n  rankdir=LR; dedline=5;\n  edge [arrowhead=none, wieght=2];\n  a [kind=osc, freq=440];\n  b [kind=sink, in=2];\n  a -> b [headlable=2, color=red, feedbak=false];\n}\n",
    )
    .unwrap();
    let o = fugue(&["check", audio.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for said in [
        "audio.dot:2:15: attribute `dedline` of the graph is read neither by fugue nor by Graphviz, so it is left out; did you mean `deadline`?",
        "audio.dot:3:25: attribute `wieght` of the edge defaults is read neither by fugue nor by Graphviz, so it is left out; did you mean `Weight`?",
        "audio.dot:6:11: attribute `headlable` of an edge is read neither by fugue nor by Graphviz, so it is left out; did you mean `headlabel`?",
        "audio.dot:6:35: attribute `feedbak` of an edge",
        "audio.dot: 4 problems",
    ] {
        assert!(err.contains(said), "{said}\n{err}");
    }
    assert!(
        !err.contains("rankdir") && !err.contains("arrowhead") && !err.contains("color"),
        "{err}"
    );
    let o = fugue(&["info", audio.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: ") && err.contains("audio.dot:6:11: attribute `headlable`"),
        "{err}"
    );
    // `schedule` says them too: an edge's misspelt cost changes the schedule.
    let o = fugue(&["schedule", audio.to_str().unwrap(), "-p", "2"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("audio.dot:3:25: attribute `wieght` of the edge defaults"),
        "{err}"
    );
    // A task graph: `Wieght` is a misspelling, `owner` the file's own data.
    let task = d.join("task.dot");
    std::fs::write(
        &task,
        "digraph {\n  a [Wieght=3, owner=\"me\", shape=box];\n  a -> b;\n}\n",
    )
    .unwrap();
    let o = fugue(&["check", task.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("task.dot:2:6: attribute `Wieght` of node `a`")
            && err.contains("did you mean `Weight`?"),
        "{err}"
    );
    assert!(!err.contains("owner") && !err.contains("shape"), "{err}");
    // Forty misspelt edges: 32 named, 8 counted.
    let mut many = String::from("digraph {\n");
    for i in 0..40 {
        many.push_str(&format!("  n{i} -> m{i} [colour=red];\n"));
    }
    many.push_str("}\n");
    let many_file = d.join("many.dot");
    std::fs::write(&many_file, many).unwrap();
    let o = fugue(&["check", many_file.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("attribute `colour` of an edge").count(),
        32,
        "{err}"
    );
    assert!(
        err.contains("8 more attributes read neither by fugue nor by Graphviz"),
        "{err}"
    );
}

/// `check --rate` checks the ranges that depend on the rate at the rate the graph will run
/// at.
#[test]
fn check_checks_rate_dependent_ranges_at_the_rate_given() {
    let d = folder("check", "check-rate");
    let p = d.join("f.ag");
    std::fs::write(
        &p,
        "n = { kind: \"noise\", };\nf = { kind: \"biquad\", freq: 30000, };\ns = { kind: \"sink\", };\nn.1 -> f.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("must be above 0 and below 24000 Hz"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&["check", p.to_str().unwrap(), "--rate", "96000"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Every bad value of a node is said in one run, each at its place, a required one
/// (biquad's `freq`) too; a value refused only against one that is itself refused (delay's
/// `max_time` below a bad `time`) is not said, since it may be right beside the value the
/// user will write; render still stops at the first.
#[test]
fn check_says_every_bad_value_of_a_node() {
    let d = folder("check", "check-every-value");
    let p = d.join("g.ag");
    std::fs::write(
        &p,
        "n = { kind: \"noise\", };\nb = { kind: \"biquad\", freq: 90000.0, q: -1.0, };\nr = { kind: \"reverb\", room: 2.0, damp: 5.0, wet: 0.3, };\nd = { kind: \"delay\", time: -1.0, max_time: 0.1, feedback: 3.0, };\ns = { kind: \"sink\", };\nn.1 -> b.1 -> r.1 -> d.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = error_lines(&o);
    let want = [
        "g.ag:2:23: node `b` (biquad): attribute `freq` = `90000` must be above 0",
        "g.ag:2:38: node `b` (biquad): attribute `q` = `-1`",
        "g.ag:3:23: node `r` (reverb): attribute `room` = `2`",
        "g.ag:3:34: node `r` (reverb): attribute `damp` = `5`",
        "g.ag:4:22: node `d` (delay): attribute `time` = `-1`",
        "g.ag:4:49: node `d` (delay): attribute `feedback` = `3`",
    ];
    assert_eq!(lines.len(), want.len(), "{}", stderr(&o));
    for (line, w) in lines.iter().zip(want) {
        assert!(line.contains(w), "{line}\nwanted: {w}");
    }
    assert!(stderr(&o).contains("6 problems"), "{}", stderr(&o));
    let o = fugue(&[
        "render",
        p.to_str().unwrap(),
        "-o",
        d.join("g.wav").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("attribute `freq` = `90000`"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("`q`"), "{}", stderr(&o));
}

/// The error lines of a command's standard error (one per problem).
fn error_lines(o: &std::process::Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("fugue: error:"))
        .map(String::from)
        .collect()
}

/// Nodes behind resamplers are checked at their own rate and block, as render builds them:
/// check and render agree on each graph (both accept it, or both refuse it with the same
/// sentence), and a refused rate is said once, not again at every node after it.
#[test]
fn check_follows_the_rates_of_resamplers_as_render_does() {
    let d = folder("check", "check-resampled");
    let chain = |ratios: (&str, &str), node: &str| {
        format!(
            "o = {{ kind: \"osc\", freq: 440, }};\nr1 = {{ kind: \"resampler\", ratio: {}, }};\nb = {node};\nr2 = {{ kind: \"resampler\", ratio: {}, }};\ns = {{ kind: \"sink\", }};\no.1 -> r1.1 -> b.1 -> r2.1 -> s.1;\n",
            ratios.0, ratios.1
        )
    };
    let biquad = |f: u32| format!("{{ kind: \"biquad\", freq: {f}, }}");
    let gain = "{ kind: \"gain\", volume: 1, }";
    // (file, text, what check and render both say; None: both accept it)
    let cases: Vec<(&str, String, Option<&str>)> = vec![
        // 30 kHz is below half of 96 kHz, the rate after a resampler of 2.
        ("up.ag", chain(("2", "\"1/2\""), &biquad(30_000)), None),
        // 20 kHz is above half of 24 kHz.
        ("down.ag", chain(("\"1/2\"", "2"), &biquad(20_000)), Some("below 12000 Hz")),
        // 2/3 divides the block of 768 frames that 3/2 makes of 512.
        ("thirds.ag", chain(("\"3/2\"", "\"2/3\""), gain), None),
        // Two ratios of 4096 go past the highest rate.
        ("high.ag", chain(("\"4096/1\"", "\"4096/1\""), gain), Some("4096 times the engine's rate")),
        (
            "mixed.ag",
            "a = { kind: \"osc\", freq: 1, };\nr = { kind: \"resampler\", ratio: 2, };\nm = { kind: \"mix\", };\ns = { kind: \"sink\", };\na.1 -> r.1 -> m.1;\na.1 -> m.2;\nm.1 -> s.1;\n".into(),
            Some("node `m` receives inputs at different rates (48000 Hz, 96000 Hz)"),
        ),
    ];
    for (file, text, refused) in cases {
        let p = d.join(file);
        std::fs::write(&p, &text).unwrap();
        let path = p.to_str().unwrap();
        let check = fugue(&["check", path]);
        let wav = d.join(format!("{file}.wav"));
        let render = fugue(&[
            "render",
            path,
            "-o",
            wav.to_str().unwrap(),
            "--seconds",
            "0.05",
            "--force",
        ]);
        match refused {
            None => {
                assert!(check.status.success(), "{file}: {}", stderr(&check));
                assert!(render.status.success(), "{file}: {}", stderr(&render));
            }
            Some(said) => {
                assert_eq!(check.status.code(), Some(1), "{file}: {}", stderr(&check));
                assert_eq!(render.status.code(), Some(1), "{file}: {}", stderr(&render));
                let errors = error_lines(&check);
                assert_eq!(errors.len(), 1, "{file}: {errors:?}");
                assert!(errors[0].contains(said), "{file}: {errors:?}");
                assert!(
                    stderr(&render).contains(said),
                    "{file}: {}",
                    stderr(&render)
                );
            }
        }
    }
    // After a node that cannot be built or a refused rate, what follows is not refused for
    // it: a resampler with a bad `conv` still doubles the rate (its ratio is read), one with
    // a misspelt `ratio` leaves the rate unknown, and so do inputs at different rates; the
    // nodes after them are checked for their kinds and attributes, not for values that
    // depend on the rate. Each graph: one error, the one render says first.
    let after = |up: &str, tail: &str| {
        format!(
            "a = {{ kind: \"osc\", freq: 440, }};\nup = {{ kind: \"resampler\", ratio: 2, }};\nup2 = {up};\nm = {{ kind: \"mix\", }};\nb = {{ kind: \"biquad\", freq: 30000, }};\ndown = {{ kind: \"resampler\", ratio: \"1/2\", }};\ns = {{ kind: \"sink\", }};\na.1 -> up.1 -> m.1;\n{tail}\nm.1 -> b.1 -> down.1 -> s.1;\n"
        )
    };
    for (file, text, said) in [
        (
            "conv.ag",
            after(
                "{ kind: \"resampler\", ratio: 2, conv: \"bogus\", }",
                "a.1 -> up2.1 -> m.2;",
            ),
            "`conv`",
        ),
        (
            "ratoi.ag",
            after("{ kind: \"resampler\", ratoi: 2, }", "a.1 -> up2.1 -> m.2;"),
            "`ratoi`",
        ),
        (
            "mixed-then.ag",
            after("{ kind: \"gain\", volume: 1, }", "a.1 -> up2.1 -> m.2;"),
            "receives inputs at different rates",
        ),
        // A feedback edge from a node whose rate is not known: its two hidden nodes are not
        // the registry's kinds, and are not said to be.
        (
            "feedback.ag",
            "a = { kind: \"osc\", freq: 440, };\nm = { kind: \"mix\", };\nup = { kind: \"resampler\", ratoi: 2, };\ns = { kind: \"sink\", };\na.1 -> m.1 -> up.1 -> s.1;\nup.1 ~> m.2;\n".to_string(),
            "`ratoi`",
        ),
    ] {
        let p = d.join(file);
        std::fs::write(&p, &text).unwrap();
        let o = fugue(&["check", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", stderr(&o));
        let errors = error_lines(&o);
        assert_eq!(errors.len(), 1, "{file}: {errors:?}");
        assert!(errors[0].contains(said), "{file}: {errors:?}");
    }
    // The block at a resampler follows --buffer: 1/3 divides 513 frames, not 512.
    let p = d.join("third.ag");
    std::fs::write(
        &p,
        "o = { kind: \"osc\", freq: 440, };\nr = { kind: \"resampler\", ratio: \"1/3\", };\ns = { kind: \"sink\", };\no.1 -> r.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("multiple of 3"), "{}", stderr(&o));
    let o = fugue(&["check", p.to_str().unwrap(), "--buffer", "513"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// An audio graph with no sink is said (render refuses it; run and the host play silence):
/// a warning, which --strict makes an error; a task graph, sinkless by nature, is not.
#[test]
fn an_audio_graph_without_a_sink_is_said_and_strict_refuses_it() {
    let d = folder("check", "nosink");
    let g = d.join("nosink.ag");
    std::fs::write(&g, "o = { kind: \"osc\", freq: 220, };\n").unwrap();
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the graph has no sink node"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("(1 warning)"), "{}", stdout(&o));
    let o = fugue(&["check", g.to_str().unwrap(), "--strict"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = d.join("tasks.dot");
    std::fs::write(&t, "digraph { a -> b; }\n").unwrap();
    let o = fugue(&["check", t.to_str().unwrap(), "--strict"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("no sink"), "{}", stderr(&o));
}

/// A problem that many nodes share (the same sentence but for the node) is said in full
/// once, the other nodes named with their places on one line; the count is of them all.
#[test]
fn a_problem_many_nodes_share_is_said_once_with_the_others_named() {
    let d = folder("check", "shared-problem");
    let g = d.join("many.ag");
    let mut text = String::new();
    for i in 1..=15 {
        text.push_str(&format!("o{i} = {{ kind: \"osc\", frequency: 220.0 }};\n"));
    }
    text.push_str("m = { kind: \"mix\" };\ns = { kind: \"sink\" };\n");
    for i in 1..=15 {
        text.push_str(&format!("o{i}.1 -> m.{i};\n"));
    }
    text.push_str("m.1 -> s.1;\n");
    std::fs::write(&g, text).unwrap();
    let o = fugue(&["check", g.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("did you mean `freq`").count(), 1, "{err}");
    assert!(
        err.contains("many.ag:1:21: node `o1` has attribute `frequency`"),
        "{err}"
    );
    assert!(
        err.contains("many.ag: the same for 14 more nodes: `o2` (2:21), `o3` (3:21)"),
        "{err}"
    );
    assert!(err.contains("`o13` (13:22), and 2 more\n"), "{err}");
    assert!(err.contains("15 problems"), "{err}");
    // Two nodes with the same problem are said one by one.
    let two = d.join("two.ag");
    std::fs::write(
        &two,
        "a = { kind: \"osc\", frequency: 1 };\nb = { kind: \"osc\", frequency: 2 };\nm = { kind: \"mix\" };\ns = { kind: \"sink\" };\na.1 -> m.1;\nb.1 -> m.2;\nm.1 -> s.1;\n",
    )
    .unwrap();
    let err = stderr(&fugue(&["check", two.to_str().unwrap()]));
    assert_eq!(err.matches("did you mean `freq`").count(), 2, "{err}");
    assert!(!err.contains("the same for"), "{err}");
}

/// The nodes' memory is summed as render sums it: a graph of long delays that render refuses
/// for its memory is refused by check with the same sentence, placed at the node where the
/// sum passed the limit, and a graph under it passes both.
#[test]
fn check_sums_the_nodes_memory_as_render_does() {
    let d = folder("check", "check-memory");
    let graph = |delays: usize| {
        let mut text =
            String::from("o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\n");
        for i in 1..=delays {
            text += &format!("d{i} = {{ kind: \"delay\", time: 60, max_time: 60, }};\no.1 -> d{i}.1;\nd{i}.1 -> s.1;\n");
        }
        text
    };
    // A 60-s line at 48 kHz is 11 MiB, counted twice: 24 of them pass 512 MiB at the 24th.
    let big = d.join("big.ag");
    std::fs::write(&big, graph(24)).unwrap();
    let o = fugue(&["check", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines = error_lines(&o);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("big.ag:72:1:"), "{lines:?}");
    let out = d.join("big.wav");
    let r = fugue(&[
        "render",
        big.to_str().unwrap(),
        "--seconds",
        "0.01",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let said = "the graph needs 528 MiB of memory at 512 frames per cycle (delay lines, work buffers and tables of its nodes, counted up to node `d24`), more than the limit of 512 MiB";
    assert!(lines[0].contains(said), "{lines:?}");
    assert!(stderr(&r).contains(said), "{}", stderr(&r));
    // At the same place as check's.
    assert!(
        stderr(&r).contains(&format!("cannot render {}:72:1: ", big.display())),
        "{}",
        stderr(&r)
    );
    let small = d.join("small.ag");
    std::fs::write(&small, graph(23)).unwrap();
    let o = fugue(&["check", small.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The audio buffers of the ports count too: a node of a million output ports (or a sink of
/// 300000 channels) is refused by check, at the node, as render refuses it, and passes at a
/// buffer size where they fit.
#[test]
fn check_counts_the_ports_buffers_as_render_does() {
    let d = folder("check", "check-ports-memory");
    for (name, text, said) in [
        (
            "outputs.ag",
            "a = { kind: \"osc\", freq: 1, out: 1000000, };\nb = { kind: \"sink\", };\na.1000000 -> b.1;\n",
            "outputs.ag:1:1: the graph needs 1954 MiB of memory at 512 frames per cycle (audio buffers of the nodes' ports, the limit passed at node `a`, whose 1000000 output port(s) take 1954 MiB)",
        ),
        (
            "channels.ag",
            "a = { kind: \"osc\", freq: 1, };\nb = { kind: \"sink\", in: 300000, };\na.1 -> b.300000;\n",
            "channels.ag:2:1: the graph needs 586 MiB of memory at 512 frames per cycle (audio buffers of the nodes' ports, the limit passed at node `b`, whose 300000 engine channel(s) take 586 MiB)",
        ),
    ] {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        let o = fugue(&["check", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let lines = error_lines(&o);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(said), "{lines:?}");
        let r = fugue(&[
            "render",
            p.to_str().unwrap(),
            "-o",
            d.join("out.wav").to_str().unwrap(),
        ]);
        assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
        assert!(
            stderr(&r).contains("the graph needs") && stderr(&r).contains("MiB of memory"),
            "{}",
            stderr(&r)
        );
        // A node's ports at the same place as check's; the engine's channels are counted
        // for all sources and sinks together (docs/limits.md).
        if name == "outputs.ag" {
            assert!(
                stderr(&r).contains(&format!("cannot render {}:1:1: ", p.display())),
                "{}",
                stderr(&r)
            );
        }
        let o = fugue(&["check", p.to_str().unwrap(), "--buffer", "64"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// The two sides of a feedback edge (`~>`) are the graph's own nodes: a file that gives their
/// kinds itself (an unordered pair sharing a block by `pair`) is refused by render, as check
/// refuses it, at the node's kind.
#[test]
fn a_file_cannot_give_the_kinds_of_a_feedback_edges_sides() {
    let d = folder("check", "check-feedback-kinds");
    let p = d.join("fb.ag");
    std::fs::write(
        &p,
        "n = { kind: \"noise\", seed: 3, };\nw = { kind: \"feedback-write\", pair: 0, };\nr = { kind: \"feedback-read\", pair: 0, };\ns = { kind: \"sink\", };\nn.1 -> w.1;\nr.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fb.ag:2:13: node `w` has unknown kind `feedback-write`"),
        "{}",
        stderr(&o)
    );
    let out = d.join("fb.wav");
    for cmd in ["render", "profile"] {
        let mut args = vec![cmd, p.to_str().unwrap(), "--seconds", "0.05"];
        if cmd == "render" {
            args.extend(["-o", out.to_str().unwrap()]);
        } else {
            args.extend(["--backend", "offline"]);
        }
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("unknown kind `feedback-"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
    assert!(!out.exists());
    // A feedback edge written as one still plays.
    let ok = d.join("loop.ag");
    std::fs::write(
        &ok,
        "n = { kind: \"noise\", seed: 3, };\ng = { kind: \"mix\", in: 2, };\ns = { kind: \"sink\", };\nn.1 -> g.1;\ng.1 ~> g.2;\ng.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        ok.to_str().unwrap(),
        "--seconds",
        "0.05",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A feedback edge that leaves a node at another rate than the graph's is placed at that
/// node, in `check` and `info` as in `render` (its own two nodes have no place in the file).
#[test]
fn a_feedback_edge_at_another_rate_is_placed_at_the_node_it_leaves() {
    let dir = folder("check", "feedback-rate");
    let g = dir.join("resfb.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, volume: 0.1, };\nm = { kind: \"mix\", };\nrs = { kind: \"resampler\", ratio: 2, };\ng = { kind: \"gain\", gain: 0.5, };\nrs2 = { kind: \"resampler\", ratio: \"1/2\", };\nout = { kind: \"sink\", in: 1, };\no.1 -> m.1;\nm.1 -> rs.1 -> g.1;\ng.1 ~> m.2;\ng.1 -> rs2.1 -> out.1;\n",
    )
    .unwrap();
    for command in ["check", "info"] {
        let o = fugue(&[command, g.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{command}: {}", stderr(&o));
        assert!(
            stderr(&o)
                .contains("resfb.ag:4:1: feedback edge `g.1 ~> m.2` leaves node `g` at 96000 Hz"),
            "{command}: {}",
            stderr(&o)
        );
    }
}

/// A loop wholly at a doubled rate: its feedback edge brings its block into `m` at the
/// graph's rate, said as the edge's (not as `m`'s inputs at two rates), with its place.
#[test]
fn a_feedback_edge_into_a_node_at_another_rate_is_said_as_the_edges() {
    let dir = folder("check", "feedback-into");
    let g = dir.join("resfb2.ag");
    std::fs::write(
        &g,
        "o = { kind: \"osc\", freq: 440, volume: 0.1, };\nrs = { kind: \"resampler\", ratio: 2, };\nm = { kind: \"mix\", };\ng = { kind: \"gain\", gain: 0.5, };\nrs2 = { kind: \"resampler\", ratio: \"1/2\", };\nout = { kind: \"sink\", in: 1, };\no.1 -> rs.1 -> m.1;\nm.1 -> g.1;\ng.1 ~> m.2;\ng.1 -> rs2.1 -> out.1;\n",
    )
    .unwrap();
    let out = dir.join("resfb2.wav");
    for args in [
        vec!["check", g.to_str().unwrap()],
        vec![
            "render",
            g.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--force",
        ],
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("resfb2.ag:3:1: feedback edge `g.1 ~> m.2` brings its block into node `m` at the graph's rate, 48000 Hz, but the node's other inputs come at 96000 Hz"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A resampler's ratio that does not divide the block is quoted as the file writes it
/// (`1/3`), not as its decimal expansion.
#[test]
fn a_ratio_is_quoted_as_written() {
    let d = folder("check", "ratio-as-written");
    let p = d.join("r.ag");
    std::fs::write(
        &p,
        "n = { kind: \"noise\", };\nr = { kind: \"resampler\", ratio: \"1/3\", };\ns = { kind: \"sink\", };\nn.1 -> r.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("r.ag:2:26: node `r` (resampler): attribute `ratio` = `1/3` does not divide the block of 512 frames"),
        "{}",
        stderr(&o)
    );
}
