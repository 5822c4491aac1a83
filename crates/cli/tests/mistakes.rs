//! Mistakes that used to be accepted silently: refused with file:line:col where the result
//! cannot be what was meant (a repeated attribute or edge), warned about otherwise (`--strict`
//! makes the warnings errors); and inputs that used to be refused and are valid (a UTF-8
//! byte-order mark, DOT `#` lines, `strict digraph` repeating an edge).

mod common;

use std::path::PathBuf;

use common::{example, folder, fugue, stderr, stdout};

fn write(name: &str, file: &str, text: &str) -> PathBuf {
    let p = folder("mistakes", name).join(file);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_repeated_attribute_is_an_error_at_its_place() {
    let g = write(
        "attr",
        "g.ag",
        "o = { kind: \"osc\", freq: 440,\n  freq: 220, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
    );
    let o = fugue(&["info", s(&g)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(
            "g.ag:2:3: attribute `freq` of node `o` is given twice (first at line 1, column 20)"
        ),
        "{e}"
    );
}

#[test]
fn a_repeated_edge_is_an_error_at_its_place() {
    let g = write(
        "edge",
        "g.ag",
        "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\no.1 -> s.1;\no.1 -> s.1;\n",
    );
    let o = fugue(&["info", s(&g)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("g.ag:4:1:"), "{e}");
    assert!(
        e.contains("edge `o`.1 -> `s`.1 is written twice (first at line 3)"),
        "{e}"
    );
    // Two edges on different ports stay distinct edges.
    let g2 = write(
        "edge2",
        "g.ag",
        "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", in: 2, };\no.1 -> s.1;\no.1 -> s.2;\n",
    );
    assert!(fugue(&["info", s(&g2)]).status.success());
    // DOT: an error, unless the graph is strict, where the edge is merged as Graphviz does.
    let d = write(
        "edge3",
        "g.dot",
        "digraph g {\n a -> b;\n a -> b [Weight=3];\n}\n",
    );
    let o = fugue(&["info", s(&d)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("g.dot:3:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("strict digraph"), "{}", stderr(&o));
    let d = write(
        "edge4",
        "g.dot",
        "strict digraph g {\n a -> b;\n a -> b [Weight=3];\n}\n",
    );
    let o = fugue(&["info", s(&d), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["edges"], 1, "{v}");
}

#[test]
fn a_byte_order_mark_and_dot_hash_lines_are_accepted() {
    let g = write(
        "bom",
        "g.ag",
        "\u{feff}o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
    );
    let o = fugue(&["info", s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = write(
        "hash",
        "g.dot",
        "\u{feff}# 1 \"g.dot.in\"\ndigraph g {\n  # 3 \"g.dot.in\"\n a -> b;\n}\n",
    );
    let o = fugue(&["info", s(&d)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_empty_graph_has_total_work_0() {
    let g = write("empty", "g.ag", "// nothing\n");
    let o = fugue(&["info", s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("-0"), "{}", stdout(&o));
}

#[test]
fn input_mistakes_are_warned_about_and_strict_refuses_them() {
    let d = folder("mistakes", "input");
    let out = d.join("x.wav");
    // A mono input.
    let input = d.join("mono.wav");
    fugue_testkit::wav::write_i16(&input, 1, 4800, |i| ((i % 100) * 100) as i16);
    // No source in the graph: the input is never read.
    let o = fugue(&[
        "render",
        &example("synth.ag"),
        "-o",
        s(&out),
        "--seconds",
        "0.1",
        "--input",
        s(&input),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the graph has no source node, so the file is not read (without --seconds, its length still sets the render's)"),
        "{}",
        stderr(&o)
    );
    // A source of no port: said as such, not as no source.
    let g = d.join("portless.ag");
    std::fs::write(
        &g,
        "i = { kind: \"source\", out: 0, };\no = { kind: \"osc\", freq: 100, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&out),
        "--force",
        "--seconds",
        "0.1",
        "--input",
        s(&input),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the graph's source node has no output port in use (no edge leaves it, or it says `out: 0`)"),
        "{}",
        stderr(&o)
    );
    // An output named `.wav` alone: a hidden file's name, said as such.
    let o = fugue(&[
        "render",
        &example("synth.ag"),
        "-o",
        ".wav",
        "--seconds",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a name of .wav alone is a hidden file's name without an extension"),
        "{}",
        stderr(&o)
    );
    // A two-port source fed a mono file.
    let g = d.join("stereo.ag");
    std::fs::write(
        &g,
        "i = { kind: \"source\", out: 2, };\ns = { kind: \"sink\", in: 2, };\ni.1 -> s.1;\ni.2 -> s.2;\n",
    )
    .unwrap();
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&out),
        "--force",
        "--input",
        s(&input),
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "has 1 channel but the graph's source nodes have 2 ports; port 2 reads silence"
        ),
        "{}",
        stderr(&o)
    );
    // A three-channel file into those two ports: its third channel is not read.
    let three = d.join("three.wav");
    fugue_testkit::wav::write_i16(&three, 3, 480, |_| 0);
    let o = fugue(&[
        "render",
        s(&g),
        "-o",
        s(&out),
        "--force",
        "--input",
        s(&three),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "has 3 channels but the graph's source nodes have 2 ports; channel 3 is not read"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn flags_that_do_nothing_are_warned_about() {
    let d = folder("mistakes", "flags");
    let out = d.join("x.wav");
    let o = fugue(&[
        "render",
        &example("synth.ag"),
        "-o",
        s(&out),
        "--seconds",
        "0.1",
        "--algorithm",
        "cpfd",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--algorithm cpfd applies to --executor static only"),
        "{}",
        stderr(&o)
    );
    // seq runs on one thread, whatever --threads says.
    let o = fugue(&[
        "render",
        &example("synth.ag"),
        "-o",
        s(&out),
        "--force",
        "--seconds",
        "0.1",
        "-e",
        "seq",
        "-t",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "--threads 3 is ignored with --executor seq, which runs every node on one thread"
        ),
        "{}",
        stderr(&o)
    );
    // JACK takes the server's rate and buffer: with --strict the warning stops the run first.
    let o = fugue(&[
        "run",
        &example("synth.ag"),
        "--backend",
        "jack",
        "--buffer",
        "128",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--buffer applies to the clocked and ALSA backends only"),
        "{}",
        stderr(&o)
    );
    // JACK's own flags given to the clocked backend are said, as ALSA's are.
    let o = fugue(&[
        "run",
        &example("synth.ag"),
        "--backend",
        "clocked",
        "--connect",
        "--client-name",
        "foo",
        "--strict",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--connect applies to the JACK backend only"),
        "{}",
        stderr(&o)
    );
    let o = fugue(&[
        "run",
        &example("synth.ag"),
        "--backend",
        "clocked",
        "--client-name",
        "foo",
        "--seconds",
        "0.05",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--client-name applies to the JACK backend only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_gantt_chart_not_named_svg_is_refused() {
    let d = folder("mistakes", "gantt");
    let png = d.join("g.png");
    let o = fugue(&["schedule", &example("rake.ag"), "--gantt", s(&png)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("drawn as SVG only"), "{}", stderr(&o));
    assert!(!png.exists());
}

/// Control characters read from a file (an escape sequence in a kind, an attribute, a name)
/// are printed as escapes, never as themselves: a message cannot drive the terminal.
#[test]
fn control_characters_from_a_file_are_printed_as_escapes() {
    let cases = [
        (
            "kind",
            "digraph g {\n a [kind=\"os\u{1b}[31mc\"];\n s [kind=sink];\n a -> s;\n}\n",
            "unknown kind `os\\u{1b}[31mc`",
        ),
        (
            "attr",
            "digraph g {\n a [kind=osc, \"fr\u{1b}eq\"=3];\n s [kind=sink];\n a -> s;\n}\n",
            "`fr\\u{1b}eq`",
        ),
        (
            "name",
            "digraph g {\n \"a\u{7}b\" [kind=osc];\n s [kind=sink];\n \"a\u{7}b\" -> s;\n}\n",
            "node name \"a\\u{7}b\" holds the control character U+0007",
        ),
    ];
    for (name, text, said) in cases {
        let g = write(&format!("control-{name}"), "g.dot", text);
        let o = fugue(&["info", s(&g), "--strict"]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(said), "{name}: {e:?}");
        assert!(
            !e.chars().any(|c| c.is_control() && c != '\n'),
            "{name}: {e:?}"
        );
    }
}

/// `bench table --corpus` with shapes that none reads from it is refused, not ignored.
#[test]
fn a_corpus_no_shape_reads_is_refused() {
    let o = fugue(&[
        "bench",
        "table",
        "--corpus",
        "/nonexistent",
        "--shapes",
        "gen:rake:4",
        "--buffers",
        "512",
        "--executors",
        "ws",
        "--runs",
        "1",
        "--seconds",
        "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--shapes names none of them"),
        "{}",
        stderr(&o)
    );
}

/// `bench host --graphs`: two files of one name are refused (they would be one row of the
/// report, their figures merged), a graph that cannot play is said with its file and place
/// before anything runs, and a Faust program is read as the other commands read it.
#[test]
fn bench_host_refuses_two_graphs_of_one_name_and_says_where_a_graph_fails() {
    let dir = folder("mistakes", "bench-host-graphs");
    for (sub, shape, size) in [("a", "line", ["-n", "8"]), ("b", "rake", ["-k", "3"])] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        let p = dir.join(sub).join("g.ag");
        let o = fugue(&["gen", shape, size[0], size[1], "-o", s(&p), "--force"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let out = dir.join("out");
    let run = |graphs: &str| {
        fugue(&[
            "bench",
            "host",
            "--graphs",
            graphs,
            "--instances",
            "1",
            "--threads",
            "1",
            "--modes",
            "shared",
            "--offline-only",
            "--offline-seconds",
            "0.05",
            "--repeats",
            "1",
            "-o",
            s(&out),
            "--force",
        ])
    };
    let a = dir.join("a").join("g.ag");
    let b = dir.join("b").join("g.ag");
    let o = run(&format!("{},{}", s(&a), s(&b)));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("are both named `g` in the report") && e.lines().count() == 1,
        "{e}"
    );
    assert!(!out.exists(), "a refused study wrote its folder");
    let bad = dir.join("bad.ag");
    std::fs::write(
        &bad,
        "o = { kind: \"osc\", freq: 440, };\nx = { kind: \"oscx\", };\ns = { kind: \"sink\", };\no.1 -> s.1;\nx.1 -> s.1;\n",
    )
    .unwrap();
    // Exit status 1, as for a graph file that does not read: bad input, not a usage error.
    let o = run(s(&bad));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--graphs: cannot play")
            && e.contains("bad.ag:2:13: node `x` has unknown kind `oscx`")
            && !e.contains("ceiling"),
        "{e}"
    );
    if fugue_faust::available_for("bench_host_reads_a_faust_program") {
        let o = run(&example("faust/string.dsp"));
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        assert!(summary.contains("\nstring,shared,1,"), "{summary}");
        // And by the table, as render reads it (a graph of one `faust` node).
        let table = dir.join("table");
        let o = fugue(&[
            "bench",
            "table",
            "--shapes",
            &example("faust/string.dsp"),
            "--executors",
            "ws",
            "--buffers",
            "256",
            "--seconds",
            "0.05",
            "--runs",
            "1",
            "-o",
            s(&table),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// `bench faust --param NAME=VALUE` with a name the program does not have is refused in one
/// sentence before any build.
/// Lists with an empty name are refused as such (not as a name given twice), and a point
/// too short to hold cycles is refused before anything runs, its number shown short.
#[test]
fn bench_refuses_empty_names_and_points_too_short() {
    for (args, said) in [
        (
            vec!["bench", "host", "--graphs", ",", "--offline-only"],
            "--graphs holds an empty name",
        ),
        (
            vec!["bench", "table", "--shapes", "line,,rake"],
            "--shapes holds an empty name",
        ),
        (
            vec![
                "bench",
                "host",
                "--offline-only",
                "--offline-seconds",
                "1e-7",
            ],
            "--offline-seconds must be from 0.01 to 3600 seconds, not 1e-7",
        ),
        (
            vec![
                "bench",
                "host",
                "--offline-only",
                "--offline-seconds",
                "1e300",
            ],
            "--offline-seconds must be from 0.01 to 3600 seconds, not 1e300",
        ),
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn bench_faust_refuses_a_parameter_the_program_does_not_have() {
    if !fugue_faust::available_for("bench_faust_refuses_a_parameter_the_program_does_not_have") {
        return;
    }
    let out = folder("mistakes", "bench-faust-param").join("out");
    let with_param = |param: &str| {
        fugue(&[
            "bench",
            "faust",
            "--dsp",
            &example("faust/string.dsp"),
            "--graph",
            &example("rake.ag"),
            "--param",
            param,
            "--seconds",
            "0.05",
            "--runs",
            "1",
            "--threads",
            "1",
            "-o",
            s(&out),
        ])
    };
    let o = with_param("fraq=220");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--param fraq=220: the Faust program")
            && e.contains("has no parameter `fraq`")
            && e.lines().count() == 1,
        "{e}"
    );
    assert!(!out.exists());
    // `volume` is the node's own gain in fugue, not a parameter of the program.
    let o = with_param("volume=0.5");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has no parameter `volume`"),
        "{}",
        stderr(&o)
    );
}

/// The benchmarks that build a graph file's nodes say where the file writes the node they
/// could not build (`FILE:LINE:COLUMN`), as `profile` does; and `bench profile-cost` says
/// which of its flags the executor ignores, as `profile` does.
#[test]
fn benchmarks_place_a_node_they_cannot_build_and_say_ignored_flags() {
    let p = write(
        "bench-typo",
        "typo.ag",
        "a = { kind: \"oscc\", freq: 1, };\nb = { kind: \"sink\", };\na.1 -> b.1;\n",
    );
    let d = p.parent().unwrap().to_path_buf();
    let table = d.join("table");
    for (args, said) in [
        (
            vec!["bench", "profile-cost", "--graph", s(&p), "--pairs", "1"],
            "cannot profile",
        ),
        (
            vec!["bench", "capacity", "--graph", s(&p), "--seconds", "0.1"],
            "cannot compile",
        ),
        (
            vec![
                "bench",
                "table",
                "--shapes",
                s(&p),
                "--seconds",
                "0.1",
                "--runs",
                "1",
                "-o",
                s(&table),
            ],
            "cannot compile",
        ),
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let want = format!("{said} {}:1:13: node `a` has unknown kind `oscc`", s(&p));
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    }
    let o = fugue(&[
        "bench",
        "profile-cost",
        "--pairs",
        "1",
        "--cycles",
        "20",
        "--warmup",
        "5",
        "--costs=no-such-file.csv",
        "--threads",
        "8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for w in [
        "--threads 8 is ignored with --executor seq (the default)",
        "--costs applies to --executor static",
    ] {
        assert!(stderr(&o).contains(w), "{}", stderr(&o));
    }
}

/// `bench faust --graph` is read and checked before any of Faust's builds: a graph with a
/// node of an unknown kind, or a file that is not text, is said at its place at once.
#[test]
fn bench_faust_checks_its_graph_before_building() {
    if !fugue_faust::available_for("bench_faust_checks_its_graph_before_building") {
        return;
    }
    let typo = write(
        "bench-faust-graph",
        "typo.ag",
        "a = { kind: \"oscc\", freq: 1, };\nb = { kind: \"sink\", };\na.1 -> b.1;\n",
    );
    let d = typo.parent().unwrap().to_path_buf();
    let garbage = d.join("garbage.ag");
    std::fs::write(&garbage, [0xffu8, 0xfe, 0x00, 0x80]).unwrap();
    let out = d.join("out");
    for (graph, said) in [
        (
            &typo,
            format!(
                "--graph {}:1:13: node `a` has unknown kind `oscc`",
                s(&typo)
            ),
        ),
        (
            &garbage,
            format!("{}:1:1: the file is not text", s(&garbage)),
        ),
    ] {
        let o = fugue(&[
            "bench",
            "faust",
            "--dsp",
            &example("faust/string.dsp"),
            "--graph",
            s(graph),
            "--seconds",
            "0.05",
            "--runs",
            "1",
            "--threads",
            "1",
            "-o",
            s(&out),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(&said), "{}", stderr(&o));
        assert!(!out.exists());
        // Said as the check says it, not as a render that measures the graph would.
        assert!(!stderr(&o).contains("warm-up render"), "{}", stderr(&o));
    }
}

/// A graph file of no node is refused by every benchmark that reads one (bad input, exit
/// code 1), where each used to report figures of nothing.
#[test]
fn benchmarks_refuse_a_graph_of_no_node() {
    let p = write("bench-empty", "empty.ag", "");
    let d = p.parent().unwrap().to_path_buf();
    let out = d.join("out");
    for args in [
        vec!["bench", "capacity", "--graph", s(&p), "--seconds", "0.1"],
        vec!["bench", "profile-cost", "--graph", s(&p), "--pairs", "1"],
        vec!["bench", "overhead", "--graph", s(&p)],
        vec![
            "bench",
            "host",
            "--graphs",
            s(&p),
            "--offline-only",
            "--offline-seconds",
            "0.05",
            "-o",
            s(&out),
        ],
        vec![
            "bench",
            "table",
            "--shapes",
            s(&p),
            "--seconds",
            "0.1",
            "--runs",
            "1",
            "-o",
            s(&out),
        ],
    ] {
        let o = fugue(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(
                "empty.ag: the graph has no node, so a benchmark of it would measure nothing"
            ),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!out.exists(), "{args:?}");
    }
}

/// A negative number given to an option is that option's value, refused by its own range,
/// not an unknown flag whose advice (`use '-- -1'`) leads nowhere.
#[test]
fn a_negative_number_is_an_options_value() {
    for (flag, value) in [("--buffer", "-1"), ("--threads", "-2"), ("--rate", "-5")] {
        let o = fugue(&[
            "render",
            &example("pluck.ag"),
            "-o",
            "never.wav",
            flag,
            value,
        ]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(&format!("'{value}' for '{flag}")), "{e}");
        assert!(
            !e.contains("unexpected argument") && !e.contains("-- "),
            "{e}"
        );
    }
}
