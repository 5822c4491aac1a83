//! The `faust` kind through the engine: 32 nodes of one program compile once, parameters
//! are set by label and by path, unknown ones are found by `lint`, the executors agree bit
//! for bit, and libfaust opened from a file that does not exist is one sentence naming the
//! package.

use std::path::Path;

use fugue_engine::{render, ExecutorChoice, Output, Registry, RenderOptions};
use fugue_exec::ExecutorKind;
use fugue_faust::Faust;

/// The tests of this file one at a time: the first counts the process's compilations.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn registry() -> Registry {
    let mut r = Registry::with_builtin_kinds();
    fugue_faust::register(&mut r);
    r
}

/// Renders `text` (an .ag graph) for `seconds` with `executor`; returns the channels.
fn rendered(text: &str, test: &str, seconds: f64, executor: ExecutorChoice) -> Vec<Vec<f32>> {
    let g = fugue_graph::read::ag::parse(text, "t.ag").unwrap();
    let wav = std::env::temp_dir().join(format!(
        "fugue-faust-kind-{}-{test}.wav",
        std::process::id()
    ));
    let s = render(
        &g,
        &RenderOptions {
            seconds: Some(seconds),
            output: Output::Wav(wav.clone()),
            registry: registry(),
            executor,
            ..RenderOptions::default()
        },
        |_| {},
    )
    .unwrap();
    assert!(s.panics.is_empty(), "{:?}", s.panics);
    let out = fugue_testkit::wav::channels(&wav);
    let _ = std::fs::remove_file(&wav);
    out
}

#[test]
fn thirty_two_nodes_of_one_program_compile_once_and_the_executors_agree() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !fugue_faust::available_for("thirty_two_nodes_of_one_program_compile_once") {
        return;
    }
    // A program no other test compiles.
    let code = "import(\\\"stdfaust.lib\\\"); f = hslider(\\\"freq\\\", 100, 10, 1000, 1); process = os.osc(f) * 0.01 + 0.001234;";
    let mut text = String::new();
    for i in 0..32 {
        text.push_str(&format!(
            "s{i} = {{ kind: \"faust\", code: \"{code}\", freq: {}, }};\n",
            100 + 10 * i,
        ));
    }
    text.push_str("m = { kind: \"mix\", in: 32, };\nout = { kind: \"sink\", };\nm.1 -> out.1;\n");
    for i in 0..32 {
        text.push_str(&format!("s{i}.1 -> m.{};\n", i + 1));
    }
    let faust = Faust::shared().unwrap();
    let before = faust.compilations();
    let seq = rendered(&text, "seq", 0.1, ExecutorChoice::default());
    assert_eq!(
        faust.compilations() - before,
        1,
        "one compilation for 32 nodes"
    );
    assert!(seq[0].iter().any(|&x| x != 0.0));
    for kind in [ExecutorKind::Ws, ExecutorKind::Static, ExecutorKind::Levels] {
        let par = rendered(
            &text,
            kind.name(),
            0.1,
            ExecutorChoice {
                kind,
                threads: 2,
                ..ExecutorChoice::default()
            },
        );
        fugue_testkit::bits::assert_same_channels(&par, &seq, kind.name());
    }
    // Built again: found in the cache.
    rendered(&text, "again", 0.01, ExecutorChoice::default());
    assert_eq!(faust.compilations() - before, 1);
}

#[test]
fn parameters_are_set_by_label_and_path_and_unknown_ones_are_listed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !fugue_faust::available_for("parameters_are_set_by_label_and_path") {
        return;
    }
    // Two constant outputs: the two sliders' values.
    let code = "process = vgroup(\\\"box\\\", hslider(\\\"a\\\", 0.25, 0, 1, 0.001), hslider(\\\"b\\\", 0.5, 0, 1, 0.001));";
    let graph = |attrs: &str| {
        format!(
            "p = {{ kind: \"faust\", code: \"{code}\", {attrs} }};\nout = {{ kind: \"sink\", in: 2, }};\np.1 -> out.1; p.2 -> out.2;\n"
        )
    };
    let out = rendered(&graph(""), "defaults", 0.01, ExecutorChoice::default());
    assert_eq!((out[0][0], out[1][7]), (0.25, 0.5));
    let text = graph("a: 0.125, \"/box/b\": 0.75, volume: 2,");
    let out = rendered(&text, "set", 0.01, ExecutorChoice::default());
    assert_eq!((out[0][3], out[1][100]), (0.25, 1.5));
    let g = fugue_graph::read::ag::parse(&text, "t.ag").unwrap();
    assert!(
        fugue_faust::lint(&g, 48_000.0).is_empty(),
        "{:?}",
        fugue_faust::lint(&g, 48_000.0)
    );
    let g = fugue_graph::read::ag::parse(&graph("c: 1, \"box/a\": 0.5,"), "t.ag").unwrap();
    let w = fugue_faust::lint(&g, 48_000.0);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("attribute `c`") && w[0].contains("/box/a, /box/b"),
        "{}",
        w[0]
    );
    // The interpreter computes the same.
    let text = graph("a: 0.125, backend: \"interp\",");
    let out = rendered(&text, "interp", 0.01, ExecutorChoice::default());
    assert_eq!((out[0][3], out[1][100]), (0.125, 0.5));
}

#[test]
fn a_program_bounded_to_the_library_rate_is_warned_about_above_it() {
    if !fugue_faust::available_for("a_program_bounded_to_the_library_rate") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Node `p` of program `code` (its attributes `attrs`), wired in -> p -> out at the
    // engine's rate, or behind resamplers (`via`: in -> down -> p -> up -> out).
    let graph = |code: &str, attrs: &str, via: Option<(&str, &str)>| {
        let mut text = format!(
            "src = {{ kind: \"noise\", }};\np = {{ kind: \"faust\", code: \"{code}\", {attrs} }};\nout = {{ kind: \"sink\", in: 1, }};\n"
        );
        match via {
            None => text += "src.1 -> p.1;\np.1 -> out.1;\n",
            Some((down, up)) => {
                text += &format!(
                    "down = {{ kind: \"resampler\", ratio: {down}, }};\nup = {{ kind: \"resampler\", ratio: {up}, }};\nsrc.1 -> down.1 -> p.1;\np.1 -> up.1 -> out.1;\n"
                );
            }
        }
        fugue_graph::read::ag::parse(&text, "t.ag").unwrap()
    };
    let warned = |g: &fugue_graph::TaskGraph, rate: f64| {
        let w: Vec<String> = fugue_engine::lint::lint(g, &registry(), rate)
            .iter()
            .map(ToString::to_string)
            .collect();
        (w.iter().any(|w| w.contains("as if at 192000 Hz")), w)
    };
    // An oscillator of the standard library: its frequency is computed with ma.SR.
    let osc = graph(
        "import(\\\"stdfaust.lib\\\"); process = _ * 0 + os.osc(440);",
        "",
        None,
    );
    let (said, w) = warned(&osc, 384_000.0);
    assert!(said, "{w:?}");
    assert!(
        w.iter()
            .any(|w| w.contains("at 384000 Hz") && w.contains("2.000")),
        "{w:?}"
    );
    assert!(!warned(&osc, 192_000.0).0);
    // Behind resamplers that bring it to 192 kHz, the program runs at the bound: nothing to
    // say; brought to 768 kHz, it is said at that rate.
    let down = graph(
        "import(\\\"stdfaust.lib\\\"); process = _ * 0 + os.osc(440);",
        "",
        Some(("0.5", "2")),
    );
    assert!(
        !warned(&down, 384_000.0).0,
        "{:?}",
        warned(&down, 384_000.0).1
    );
    let up = graph(
        "import(\\\"stdfaust.lib\\\"); process = _ * 0 + os.osc(440);",
        "",
        Some(("2", "0.5")),
    );
    let (said, w) = warned(&up, 384_000.0);
    assert!(
        said && w.iter().any(|w| w.contains("at 768000 Hz")),
        "{w:?}"
    );
    // Silent at its defaults (gain 0): the node's own setting is what is tried.
    let gain = "import(\\\"stdfaust.lib\\\"); process = _ * 0 + os.osc(440) * hslider(\\\"gain\\\", 0, 0, 1, 0.01);";
    assert!(!warned(&graph(gain, "", None), 384_000.0).0);
    assert!(warned(&graph(gain, "gain: 0.5,", None), 384_000.0).0);
    // A delay of 0.3 s (its first echo long after the first blocks).
    let echo = graph(
        "import(\\\"stdfaust.lib\\\"); process = ef.echo(1, 0.3, 0.35);",
        "",
        None,
    );
    assert!(warned(&echo, 384_000.0).0);
    // The rate read without the library's bound, and a program whose output does not depend
    // on the rate: nothing to say.
    let own = graph(
        "process = _ * 0 + 1.0 / fconstant(int fSamplingFreq, <math.h>);",
        "",
        None,
    );
    assert!(!warned(&own, 384_000.0).0);
    assert!(!warned(&graph("process = *(0.5);", "", None), 384_000.0).0);
}

#[test]
fn libfaust_from_a_file_that_does_not_exist_names_the_package() {
    let e = Faust::open(Path::new("/nonexistent/libfaust.so.2")).unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("libfaust could not be loaded") && s.contains("libfaust2"),
        "{s}"
    );
    assert!(s.contains("/nonexistent/libfaust.so.2"), "{s}");
}
