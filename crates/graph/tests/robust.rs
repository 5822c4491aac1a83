//! No input makes a reader panic; malformed inputs give errors with a place; `.ag` written by
//! the writer reads back to the same graph.

use std::path::PathBuf;

use fugue_graph::gen::{self, CostRange};
use fugue_graph::read::{ag, read_bytes, Format};
use fugue_graph::{write, GraphError, ReadError, Value};
use proptest::prelude::*;

/// The sample files, read once (a missing corpus is one counted skip, not one per case).
fn corpus_samples() -> &'static [Vec<u8>] {
    static SAMPLES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    SAMPLES.get_or_init(read_samples)
}

fn read_samples() -> Vec<Vec<u8>> {
    let Some(d) =
        fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), "", "robustness corpus samples")
    else {
        return Vec::new();
    };
    let files: Vec<PathBuf> = [
        "ag/seq_test.ag",
        "ag/work_stealing_test.ag",
        "ag/losange/losange16.ag",
        "ag/random-small/rand-10-node-graph-0-ex-0.ag",
        "stg/50/rand0000.stg",
        "stg/robot.stg",
        "sched/kwok-ahmad-9.dot",
    ]
    .iter()
    .map(|f| d.join(f))
    .collect();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn all_formats(bytes: &[u8]) {
    for f in [Format::Ag, Format::Stg, Format::Dot] {
        let _ = read_bytes(bytes, f, "fuzz");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        all_formats(&bytes);
    }

    #[test]
    fn random_ascii_never_panics(s in "[a-z0-9 .;:,={}\"\\->/*#\\[\\]\n\t_+e]{0,300}") {
        all_formats(s.as_bytes());
    }

    #[test]
    fn mutated_corpus_files_never_panic(
        which in 0usize..7,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..8),
    ) {
        let samples = corpus_samples();
        if samples.is_empty() {
            // The shared corpus is not beside this checkout: nothing to mutate.
            return Ok(());
        }
        let mut bytes = samples[which % samples.len()].clone();
        for (idx, byte, op) in edits {
            if bytes.is_empty() { break; }
            let i = idx.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                2 => bytes.insert(i, byte),
                _ => bytes.truncate(i),
            }
        }
        all_formats(&bytes);
    }

    #[test]
    fn ag_writer_round_trips(seed in any::<u64>(), n in 1usize..40, p in 0.0f64..0.6, layered in any::<bool>()) {
        let g = if layered {
            gen::layered(1 + n / 8, 1 + n % 6, p, CostRange { lo: 0.5, hi: 30.0 }, seed)
        } else {
            gen::random_dag(n, p, CostRange::default(), seed)
        };
        let text = write::to_ag(&g);
        let back = ag::parse(&text, "roundtrip.ag").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&back, &g);
        // DOT writer output reads back as the same graph.
        let dot = write::to_dot(&g, "g");
        let d = read_bytes(dot.as_bytes(), Format::Dot, "g.dot").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&d, &g);
    }
}

#[test]
fn shapes_round_trip_and_match_the_corpus_sizes() {
    for g in [gen::line(100), gen::diamond(5), gen::rake(33)] {
        let back = ag::parse(&write::to_ag(&g), "x.ag").unwrap();
        assert_eq!(back, g);
    }
    assert_eq!(gen::diamond(5).len(), 156);
    assert_eq!(gen::diamond(5).edges().len(), 186);
    assert_eq!(gen::rake(33).len(), 101);
    assert_eq!(gen::line(100).len(), 100);
}

#[test]
fn generated_shapes_equal_corpus_files() {
    let Some(d) = fugue_testkit::corpus::dir(
        env!("CARGO_MANIFEST_DIR"),
        "ag",
        "generated_shapes_equal_corpus_files",
    ) else {
        return;
    };
    // The same nodes (names, kinds, attributes, declared ports, costs) and edges as the
    // corpus's files: the study and the benchmarks use the generated shapes in their place.
    // One exception: the corpus's diamonds give their `mod` nodes hand-picked frequencies
    // (55, 110, 220 or 330 Hz, by level with exceptions) where the generator gives 55 Hz on
    // the split side and 110 Hz on the merge side; a `mod` costs the same at any frequency.
    let cases = [
        ("losange/losange156.ag", gen::diamond(5)),
        ("losange/losange6.ag", gen::diamond(1)),
        ("rateau/rateau101.ag", gen::rake(33)),
        ("rateau/rateau11.ag", gen::rake(3)),
        ("ligne/ligne100.ag", gen::line(100)),
    ];
    for (f, g) in cases {
        let c = fugue_graph::read_file(&d.join(f), None).unwrap();
        assert_eq!(c.len(), g.len(), "{f}");
        // `volume: 1.0` is the default: written or not, the node is the same (losange6.ag
        // writes it on its last mix, the other diamonds do not).
        let norm = |n: &fugue_graph::Node| {
            let mut n = n.clone();
            n.attrs
                .retain(|(k, v)| !(k == "volume" && v.as_f64() == Some(1.0)));
            n
        };
        let without_freq = |n: &fugue_graph::Node| {
            let mut n = norm(n);
            n.attrs.retain(|(k, _)| k != "freq");
            n
        };
        let mut freqs_differ = 0;
        for (a, b) in c.nodes().iter().zip(g.nodes()) {
            if f.starts_with("losange") && a.kind == "mod" {
                assert_eq!(without_freq(a), without_freq(b), "{f}");
                freqs_differ += usize::from(norm(a) != norm(b));
            } else {
                assert_eq!(norm(a), norm(b), "{f}");
            }
        }
        let expected = match f {
            "losange/losange156.ag" => 69,
            _ => 0,
        };
        assert_eq!(freqs_differ, expected, "{f}: mod nodes whose freq differs");
        let key = |x: &fugue_graph::TaskGraph| {
            let mut v: Vec<(String, usize, String, usize)> = x
                .edges()
                .iter()
                .map(|e| {
                    (
                        x.node(e.src).name.clone(),
                        e.src_port,
                        x.node(e.dst).name.clone(),
                        e.dst_port,
                    )
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(key(&c), key(&g), "{f}");
    }
}

fn err_of(text: &str) -> ReadError {
    ag::parse(text, "t.ag").expect_err("must fail")
}

fn place(e: &ReadError) -> (usize, usize) {
    match e {
        ReadError::Syntax { location, .. } | ReadError::Graph { location, .. } => {
            (location.line, location.column)
        }
        other => panic!("no place in {other}"),
    }
}

#[test]
fn malformed_ag_inputs_name_the_place() {
    let ok = "a = {\n  kind: \"osc\",\n};\nb = {\n  kind: \"sink\",\n  in: 1,\n};\na.1 -> b.1;\n";
    assert!(ag::parse(ok, "t.ag").is_ok());
    // missing `;` after a node
    let e = err_of("a = {\n  kind: \"osc\",\n}\nb = { kind: \"sink\", };");
    assert_eq!(place(&e), (4, 1));
    assert!(e.to_string().starts_with("t.ag:4:1: expected `;`"), "{e}");
    // missing comma between two attributes
    let e = err_of("a = {\n  kind: \"osc\"\n  freq: 220.0,\n};");
    assert_eq!(place(&e), (3, 3));
    assert!(e.to_string().contains("expected `,` or `}`"), "{e}");
    // bad port: 0, and beyond the declared count
    let e = err_of("a = { kind: \"osc\", };\nb = { kind: \"sink\", in: 1, };\na.1 -> b.0;");
    assert_eq!(place(&e), (3, 10));
    let e = err_of("a = { kind: \"osc\", };\nb = { kind: \"sink\", in: 1, };\na.1 -> b.2;");
    assert!(
        matches!(
            e,
            ReadError::Graph {
                error: GraphError::PortOutOfRange { port: 2, .. },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(place(&e), (3, 8));
    // unknown node
    let e = err_of("a = { kind: \"osc\", };\na.1 -> zz.1;");
    assert!(
        matches!(&e, ReadError::Graph { error: GraphError::UnknownNode { name, .. }, .. } if name == "zz")
    );
    assert_eq!(place(&e), (2, 8));
    // cycle, with the names on it
    let e = err_of("a = { kind: \"mix\", };\nb = { kind: \"mix\", };\nc = { kind: \"mix\", };\na.1 -> b.1;\nb.1 -> c.1;\nc.1 -> a.1;");
    match &e {
        ReadError::Graph {
            error: GraphError::Cycle { nodes, .. },
            ..
        } => {
            let mut n = nodes.clone();
            n.sort();
            assert_eq!(n, ["a", "b", "c"]);
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("cycle"), "{e}");
    // duplicate node
    let e = err_of("a = { kind: \"osc\", };\na = { kind: \"osc\", };");
    assert_eq!(place(&e), (2, 1));
    assert!(e.to_string().contains("first at line 1"), "{e}");
    // truncated file
    let e = err_of("a = {\n  kind: \"os");
    assert_eq!(place(&e), (2, 9));
    let e = err_of("a = {\n  kind: \"osc\",\n");
    assert!(e.to_string().contains("end of the file"), "{e}");
    // binary garbage
    let e = read_bytes(&[0x61, 0x20, 0xff, 0xfe, 0x00], Format::Ag, "bin.ag").unwrap_err();
    assert_eq!(place(&e), (1, 3));
    let e = err_of("\u{1}\u{2}garbage");
    assert_eq!(place(&e), (1, 1));
}

#[test]
fn empty_files() {
    // An empty .ag file is an empty graph (a file of zero statements); .stg and .dot need content.
    assert_eq!(ag::parse("", "e.ag").unwrap().len(), 0);
    assert!(read_bytes(b"", Format::Stg, "e.stg").is_err());
    assert!(read_bytes(b"", Format::Dot, "e.dot").is_err());
}

#[test]
fn ag_extensions_are_accepted() {
    let text = "// comment\n/* block\ncomment */\nosc_1 = { kind: \"osc\", freq: \"440\", volume: -1.5e-1, gain: 2., };\n\
                s-2 = { kind: \"sink\", };\nosc_1.1->s-2.1;\ndeadline = 1.5;\n";
    let g = ag::parse(text, "x.ag").unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g.node(0).attr("freq").unwrap().as_f64(), Some(440.0));
    assert_eq!(g.node(0).attr("volume").unwrap().as_f64(), Some(-0.15));
    assert_eq!(g.node(0).attr("gain").unwrap().as_f64(), Some(2.0));
    assert_eq!(g.deadline(), Some(1.5));
}

#[test]
fn parallel_edges_are_distinct() {
    let g = ag::parse(
        "a = { kind: \"mix\", out: 2, };\nb = { kind: \"mix\", in: 2, };\na.1 -> b.1;\na.2 -> b.2;\na.1 -> b.2;",
        "p.ag",
    )
    .unwrap();
    assert_eq!(g.edges().len(), 3);
    assert_eq!(g.succs(0).len(), 1);
    assert_eq!(g.in_edges(1).len(), 3);
}

#[test]
fn stg_rows_agree_with_the_first_line() {
    // The first line counts the tasks without the two dummies (the standard), or with them
    // (some copies): either reads; another count is a file cut short or a wrong count.
    for first in ["1", "3"] {
        let text = format!("{first}\n0 0 0\n1 5 1 0\n2 0 1 1\n# comment\n");
        let g = read_bytes(text.as_bytes(), Format::Stg, "s.stg").unwrap();
        assert_eq!(g.len(), 3);
    }
    for first in ["0", "2", "4", "99"] {
        let text = format!("{first}\n0 0 0\n1 5 1 0\n2 0 1 1\n# comment\n");
        let e = read_bytes(text.as_bytes(), Format::Stg, "s.stg").unwrap_err();
        assert_eq!(place(&e), (1, 1), "{e}");
        assert!(
            e.to_string().contains(&format!(
                "the first line gives {first} tasks ({} rows with the dummy entry and exit tasks), but the file has 3 task row(s) before its first `#` line",
                first.parse::<usize>().unwrap() + 2
            )),
            "{e}"
        );
    }
    let text = "99\n0 0 0\n1 5 1 0\n2 0 1 1\n# comment\n".replace("99", "1");
    let g = read_bytes(text.as_bytes(), Format::Stg, "s.stg").unwrap();
    assert_eq!(g.len(), 3);
    // Each task's place is its row's id, for the messages about it.
    let places = g.places().expect("a task graph's places");
    let at = |id| places.node(id).map(|l| (l.line, l.column));
    assert_eq!((at(0), at(2)), (Some((2, 1)), Some((4, 1))));
    let e = read_bytes(b"3\n0 0 0\n1 5 2 0\n", Format::Stg, "s.stg").unwrap_err();
    assert!(e.to_string().starts_with("s.stg:3:"), "{e}");
    let e = read_bytes(b"0\n0 0 0\n1 5 1 7\n", Format::Stg, "s.stg").unwrap_err();
    assert_eq!(place(&e), (3, 7));
}

#[test]
fn dot_errors_and_implicit_nodes() {
    let g = read_bytes(
        b"digraph { a -> b [Weight=3]; b [Weight=2]; }",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g.node(1).cost, 2.0);
    assert_eq!(g.edges()[0].comm, 3.0);
    // At the value, as for `in` and `out`.
    let e = read_bytes(b"digraph {\n a [Weight=x];\n}", Format::Dot, "d.dot").unwrap_err();
    assert_eq!(place(&e), (2, 12));
    let e = read_bytes(b"graph { a -- b }", Format::Dot, "d.dot").unwrap_err();
    assert!(e.to_string().contains("digraph"), "{e}");
    let e = read_bytes(b"digraph { a -> b; b -> a; }", Format::Dot, "d.dot").unwrap_err();
    assert!(e.to_string().contains("cycle"), "{e}");
}

/// A name that holds a control character (an escape, a line break) is refused where it is
/// declared, shown with its escapes: names are printed in messages, reports and drawings.
#[test]
fn names_with_control_characters_are_refused_at_their_place() {
    for (text, code) in [
        (&b"digraph {\n \"a\x1b[2Jb\" [kind=osc];\n}"[..], "U+001B"),
        (b"digraph {\n x -> \"line\nbreak\";\n}", "U+000A"),
    ] {
        let e = read_bytes(text, Format::Dot, "d.dot").unwrap_err();
        let m = e.to_string();
        assert_eq!(place(&e).0, 2, "{m}");
        assert!(
            m.contains(code) && !m.chars().any(char::is_control),
            "{m:?}"
        );
    }
    // A label may span lines: only names are refused.
    let g = read_bytes(
        b"digraph {\n a [label=\"two\nlines\"];\n}",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    assert_eq!(g.node(0).name, "a");
}

#[test]
fn huge_numbers_do_not_overflow() {
    let e = read_bytes(b"3\n0 0 18446744073709551615\n", Format::Stg, "s.stg").unwrap_err();
    assert_eq!(place(&e), (2, 5));
    assert!(ag::parse("a = { in: 99999999999999999999, };", "h.ag").is_err());
    assert!(ag::parse(
        "a = { kind: \"x\", };\na.99999999999999999999 -> a.1;",
        "h.ag"
    )
    .is_err());
}

/// A graph read from a file knows the file's folder (a node's file attribute is found
/// there); one read from bytes knows none, and the folder is no part of equality.
#[test]
fn a_graph_read_from_a_file_knows_its_folder() {
    let dir = std::env::temp_dir().join(format!("fugue-graph-folder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "o = { kind: \"osc\", freq: 440, }; s = { kind: \"sink\", }; o.1 -> s.1;";
    let file = dir.join("g.ag");
    std::fs::write(&file, text).unwrap();
    let g = fugue_graph::read_file(&file, None).unwrap();
    assert_eq!(g.folder(), Some(dir.as_path()));
    let inline = read_bytes(text.as_bytes(), Format::Ag, "inline.ag").unwrap();
    assert_eq!(inline.folder(), None);
    assert_eq!(g, inline);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_comma_after_the_last_attribute_is_optional() {
    let with = "a = { kind: \"osc\", freq: 220.0, };\nb = {\n  kind: \"sink\",\n  in: 1,\n};\na.1 -> b.1;\n";
    let without =
        "a = { kind: \"osc\", freq: 220.0 };\nb = {\n  kind: \"sink\",\n  in: 1\n};\na.1 -> b.1;\n";
    let g1 = ag::parse(with, "with.ag").expect("trailing commas");
    let g2 = ag::parse(without, "without.ag").expect("no comma after the last attribute");
    assert_eq!(write::to_ag(&g1), write::to_ag(&g2));
    let a = &g2.nodes()[0];
    assert_eq!(a.kind, "osc");
    assert_eq!(a.attrs, [("freq".to_string(), Value::Float(220.0))]);
    assert_eq!(g2.nodes()[1].declared_inputs, Some(1));
    // The writer's output (a comma after every attribute) reads back to the same graph.
    let again = ag::parse(&write::to_ag(&g2), "again.ag").expect("the writer's output");
    assert_eq!(write::to_ag(&again), write::to_ag(&g2));
    // An empty node and a node whose only attribute has no comma.
    assert!(ag::parse("a = {};\nb = { kind: \"osc\" };", "t.ag").is_ok());
    // A comma alone, or two, is still an error that names the place.
    let e = err_of("a = { kind: \"osc\",, };");
    assert_eq!(place(&e), (1, 19));
    let e = err_of("a = { , };");
    assert_eq!(place(&e), (1, 7));
}

#[test]
fn the_ag_reader_records_where_nodes_kinds_and_attributes_are() {
    let text = "// a comment\nosc1 = { freq: 220.0, kind: \"osc\", volume: 0.5 };\n  out = {\n    kind: \"sink\",\n  };\nosc1.1 -> out.1;\n";
    let g = ag::parse(text, "t.ag").unwrap();
    let places = g.places().expect("an .ag graph has places");
    let loc = |l: Option<fugue_graph::Location>| l.map(|l| (l.line, l.column));
    assert_eq!(loc(places.node(0)), Some((2, 1)));
    assert_eq!(loc(places.kind(0)), Some((2, 29)), "the kind's value");
    assert_eq!(loc(places.attr(0, 0)), Some((2, 10)), "freq");
    assert_eq!(loc(places.attr(0, 1)), Some((2, 36)), "volume");
    assert_eq!(loc(places.node(1)), Some((3, 3)));
    assert_eq!(loc(places.kind(1)), Some((4, 11)));
    assert_eq!(places.node(2), None);
    // Places are no part of equality, and a graph made in memory has none.
    let again = ag::parse(&write::to_ag(&g), "again.ag").unwrap();
    assert_eq!(again, g);
    assert!(fugue_graph::GraphBuilder::new()
        .build()
        .unwrap()
        .places()
        .is_none());
}

#[test]
fn edges_to_near_miss_names_and_ports_suggest_the_valid_one() {
    let e = err_of("osc1 = { kind: \"osc\" };\nout = { kind: \"sink\", in: 2 };\nosc.1 -> out.1;");
    assert_eq!(place(&e), (3, 1));
    assert!(
        e.to_string()
            .ends_with("unknown node `osc`; did you mean `osc1`?"),
        "{e}"
    );
    let e = err_of("osc1 = { kind: \"osc\" };\nout = { kind: \"sink\", in: 2 };\nosc1.1 -> out.3;");
    assert_eq!(place(&e), (3, 11));
    assert!(e.to_string().ends_with("did you mean `out.2`?"), "{e}");
    let e = err_of("osc1 = { kind: \"osc\" };\nout = { kind: \"sink\", in: 2 };\nosc1.0 -> out.1;");
    assert_eq!(place(&e), (3, 6));
    assert!(e.to_string().ends_with("did you mean `osc1.1`?"), "{e}");
    // A name far from every declared one gets no guess.
    let e = err_of("osc1 = { kind: \"osc\" };\nout = { kind: \"sink\" };\nzzzzzz.1 -> out.1;");
    assert!(e.to_string().ends_with("unknown node `zzzzzz`"), "{e}");
}

/// An attribute's name may be quoted (a parameter path, `"/synth/gain": 0.5`); the writer
/// quotes such a name, and the file reads back the same.
#[test]
fn quoted_attribute_names_are_read_and_written() {
    let g = fugue_graph::read::ag::parse(
        "p = { kind: \"faust\", \"/synth/gain\": 0.5, freq: 220, };",
        "q.ag",
    )
    .unwrap();
    let n = g.node(0);
    assert_eq!(n.attr("/synth/gain").and_then(|v| v.as_f64()), Some(0.5));
    let text = fugue_graph::write::to_ag(&g);
    assert!(text.contains("\"/synth/gain\": 0.5,"), "{text}");
    let again = fugue_graph::read::ag::parse(&text, "q.ag").unwrap();
    assert_eq!(again.node(0).attrs, n.attrs);
    // Given twice, quoted or not, it is refused.
    let e = fugue_graph::read::ag::parse("p = { \"freq\": 1, freq: 2, };", "q.ag").unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
}

#[test]
fn a_cycle_is_told_how_its_own_format_writes_a_feedback_edge() {
    for (name, text, hint) in [
        (
            "c.ag",
            "a = { kind: \"mix\", };\nb = { kind: \"mix\", };\na.1 -> b.1;\nb.1 -> a.1;\n",
            "written `~>` instead of `->`",
        ),
        (
            "c.dot",
            "digraph g { a -> b; b -> a; }\n",
            "written as an edge marked `[feedback=true]`",
        ),
        (
            "c.stg",
            "2\n0 1 1 1\n1 1 1 0\n",
            "which an .stg file cannot hold: write the graph as .ag",
        ),
    ] {
        let format = fugue_graph::read::Format::from_path(std::path::Path::new(name)).unwrap();
        let e = fugue_graph::read::read_bytes(text.as_bytes(), format, name)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the graph has a cycle") && e.contains(hint),
            "{name}: {e}"
        );
    }
}

/// Every example graph (and a sample of the corpus) written by the DOT writer reads back as
/// the graph it was written from: kinds, attributes, declared ports, edge ports, feedback
/// edges and the deadline.
#[test]
fn the_dot_writer_round_trips_the_examples() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("examples")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "ag") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 7, "{files:?}");
    for f in &files {
        let g = ag::parse(&std::fs::read_to_string(f).unwrap(), "x.ag").unwrap();
        let dot = write::to_dot(&g, "g");
        let back = read_bytes(dot.as_bytes(), Format::Dot, "g.dot")
            .unwrap_or_else(|e| panic!("{}: {e}\n{dot}", f.display()));
        assert_eq!(back, g, "{}:\n{dot}", f.display());
    }
    // Values that need care: an exponent, a backslash, a quote, a line break, a negative
    // number, a string that looks like a number, a deadline.
    let text = "n = { kind: \"osc\", freq: 1e-7, big: 1e300, s: \"a\\\\b\\\"c\\nd\", neg: -2.5, \
                num: \"12\", i: -3, };\nm = { kind: \"sink\", in: 2, };\nn.1 -> m.2;\n\
                deadline = 1.5;\n";
    let g = ag::parse(text, "v.ag").unwrap();
    let dot = write::to_dot(&g, "g");
    let back = read_bytes(dot.as_bytes(), Format::Dot, "g.dot").unwrap();
    assert_eq!(back, g, "{dot}");
}

/// Graphviz's display attributes are not a node's parameters; `in`, `out` and numbered
/// edge labels are, and a bad one is said with its place.
#[test]
fn dot_display_attributes_ports_and_their_errors() {
    let g = read_bytes(
        b"digraph {\n a [kind=osc, label=\"A\", shape=box, color=red, freq=220];\n b [kind=sink, in=2];\n a -> b [headlabel=\"2\", label=\"x\"];\n}\n",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    assert_eq!(g.node(0).attrs, vec![("freq".to_string(), Value::Int(220))]);
    assert_eq!(g.node(1).declared_inputs, Some(2));
    assert_eq!((g.edges()[0].src_port, g.edges()[0].dst_port), (0, 1));
    let e = read_bytes(
        b"digraph {\n a -> b [headlabel=0];\n}",
        Format::Dot,
        "d.dot",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("d.dot:2:20: the `headlabel` of edge `a` -> `b` names its port"),
        "{e}"
    );
    // A label in words is a drawing's, at a node of one port; at a node that declares
    // several, it names none of them.
    let g = read_bytes(
        b"digraph {\n a -> b [taillabel=\"left\", headlabel=\"in 2\"];\n}",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    assert_eq!((g.edges()[0].src_port, g.edges()[0].dst_port), (0, 0));
    let e = read_bytes(
        b"digraph {\n a [out=3];\n a -> b [taillabel=\"out 2\"];\n}",
        Format::Dot,
        "d.dot",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.dot:3:20: the `taillabel` of edge `a` -> `b` is `out 2`, which names no port, and the node at that end declares 3 output ports; give the port's number, from 1 to 3"
    );
    let e = read_bytes(b"digraph {\n a [in=1.5];\n}", Format::Dot, "d.dot").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("d.dot:2:8: attribute `in` of node `a` must be a whole number"),
        "{e}"
    );
    let e = read_bytes(b"digraph {\n deadline = -1;\n}", Format::Dot, "d.dot").unwrap_err();
    assert!(
        e.to_string()
            .contains("d.dot:2:13: the deadline must be a positive number"),
        "{e}"
    );
}

/// Subgraphs group nodes: their nodes and edges are the graph's, their node defaults hold
/// inside them only, and a subgraph in an edge stands for each of its nodes.
#[test]
fn dot_subgraphs_and_html_labels() {
    let g = read_bytes(
        b"digraph {\n node [Weight=2];\n subgraph cluster_a {\n  label=<<b>A</b>>;\n  node [Weight=5];\n  a1; a2 [label=<x<i>y</i>>];\n }\n s -> {a1 a2} -> t;\n { rank=same; u; }\n}\n",
        Format::Dot,
        "s.dot",
    )
    .unwrap();
    let names: Vec<&str> = g.nodes().iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["a1", "a2", "s", "t", "u"]);
    let costs: Vec<f64> = g.nodes().iter().map(|n| n.cost).collect();
    assert_eq!(costs, [5.0, 5.0, 2.0, 2.0, 2.0]);
    let edges: Vec<(&str, &str)> = g
        .edges()
        .iter()
        .map(|e| (g.node(e.src).name.as_str(), g.node(e.dst).name.as_str()))
        .collect();
    assert_eq!(edges, [("s", "a1"), ("s", "a2"), ("a1", "t"), ("a2", "t")]);
    assert!(g.node(1).attrs.is_empty(), "{:?}", g.node(1).attrs);
    let e = read_bytes(b"digraph {\n subgraph x {\n a;\n", Format::Dot, "s.dot").unwrap_err();
    assert!(
        e.to_string().contains("expected `}` to close a subgraph"),
        "{e}"
    );
    let e = read_bytes(b"digraph { a [label=<b]; }", Format::Dot, "s.dot").unwrap_err();
    assert!(e.to_string().contains("unterminated HTML string"), "{e}");
    let deep = format!("digraph {{ {} a {} }}", "{".repeat(100), "}".repeat(100));
    let e = read_bytes(deep.as_bytes(), Format::Dot, "s.dot").unwrap_err();
    assert!(
        e.to_string().contains("subgraphs nest deeper than 64"),
        "{e}"
    );
    // A product of subgraphs is bounded before the edges are made.
    let mut text = String::from("digraph { {");
    for i in 0..2100 {
        text.push_str(&format!(" a{i}"));
    }
    text.push_str(" } -> {");
    for i in 0..2100 {
        text.push_str(&format!(" b{i}"));
    }
    text.push_str(" } }");
    let e = read_bytes(text.as_bytes(), Format::Dot, "s.dot").unwrap_err();
    assert!(e.to_string().contains("more than 4000000 edges"), "{e}");
}

/// Lines that end with a lone `\r` (the old Mac convention) are lines: a `//` comment ends
/// there, and an error is placed on its line.
#[test]
fn lone_carriage_returns_end_lines() {
    let text = "o = { kind: \"osc\", freq: 440, };\r// a comment\rs = { kind: \"sink\", };\ro.1 -> s.1;\rx.1 -> s.1;\r";
    let e = read_bytes(text.as_bytes(), Format::Ag, "cr.ag").unwrap_err();
    assert!(e.to_string().starts_with("cr.ag:5:1: "), "{e}");
    let g = read_bytes(&text.as_bytes()[..text.len() - 12], Format::Ag, "cr.ag").unwrap();
    assert_eq!(g.len(), 2);
    let dot = "digraph {\r // a comment\r a -> b;\r a -> c [Weight=x];\r}\r";
    let e = read_bytes(dot.as_bytes(), Format::Dot, "cr.dot").unwrap_err();
    assert!(e.to_string().starts_with("cr.dot:4:"), "{e}");
}

/// What the review of the DOT reader found: subgraphs in edges nest within the depth bound; a
/// node listed twice in a subgraph is one node of it; quoted keywords are names; a product
/// of subgraphs holds no copy of the names per edge.
#[test]
fn dot_subgraphs_in_edges_are_bounded_and_quoted_keywords_are_names() {
    let deep = format!("digraph {{ {} }}", "a -> {".repeat(200) + &"}".repeat(200));
    let e = read_bytes(deep.as_bytes(), Format::Dot, "d.dot").unwrap_err();
    assert!(
        e.to_string().contains("subgraphs nest deeper than 64"),
        "{e}"
    );
    let g = read_bytes(
        b"digraph { {a -> b; b -> c} -> d; {x x} -> y }",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    assert_eq!(g.edges().len(), 2 + 3 + 1);
    let g = read_bytes(
        b"digraph { \"node\" [kind=osc, freq=440]; \"edge\" [kind=sink]; \"node\" -> \"edge\"; }",
        Format::Dot,
        "d.dot",
    )
    .unwrap();
    let names: Vec<&str> = g.nodes().iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["node", "edge"]);
    assert_eq!(g.node(1).kind, "sink");
    // An attribute named like DOT's cost is left out of `fugue dot`'s text, and said.
    let ag = "a = { kind: \"osc\", freq: 1, weight: 7, wcet: 2, };\n";
    let g = ag::parse(ag, "w.ag").unwrap();
    let dot = write::to_dot(&g, "g");
    assert!(dot.contains("// not written: attributes of a"), "{dot}");
    let back = read_bytes(dot.as_bytes(), Format::Dot, "g.dot").unwrap();
    assert_eq!(back.node(0).cost, 2.0);
}

/// Generated costs stay in the range asked, also below a nanosecond (they were rounded to
/// the nanosecond, so a range of 0.0001 to 0.0004 µs gave every node the cost 0).
#[test]
fn generated_costs_stay_in_their_range_at_any_scale() {
    for (lo, hi) in [(0.0001, 0.0004), (1.0, 20.0), (1.0004, 1.0006), (5.0, 5.0)] {
        let g = gen::random_dag(30, 0.3, CostRange { lo, hi }, 7);
        let costs: Vec<f64> = g
            .nodes()
            .iter()
            .filter(|n| n.cost_declared && n.kind != "sink")
            .map(|n| n.cost)
            .collect();
        assert!(!costs.is_empty());
        for c in costs {
            assert!((lo..=hi).contains(&c), "{c} outside {lo}..{hi}");
        }
    }
}

/// A DOT weight written as a number with a signed exponent reads as that number, unquoted as
/// quoted (`1e-12` stopped at its minus: "expected '=' after attribute '-12'"); an arrow right
/// after an identifier ending in `e` stays an arrow.
#[test]
fn dot_numbers_with_signed_exponents_read_unquoted() {
    let g = fugue_graph::read::dot::parse(
        "digraph { a [Weight=1e-3]; b [Weight=2.5E+2]; e -> b; a -> e; }\n",
        "t.dot",
    );
    let g = match g {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    };
    let cost = |n: &str| g.node(g.find(n).unwrap()).cost;
    assert_eq!(cost("a"), 1e-3);
    assert_eq!(cost("b"), 250.0);
    assert_eq!(g.edges().len(), 2);
}

/// The DOT defaults are copied into every node declared after them: bounded in all
/// (`MAX_DEFAULT_COPIES`), with the place where the bound is passed; drawing attributes and
/// edge attributes the graph does not read are not kept as defaults at all.
#[test]
fn dot_defaults_copied_into_many_nodes_are_bounded() {
    use fugue_graph::read::dot::{parse, MAX_DEFAULT_COPIES};
    // About 200 kB of defaults before 20,000 nodes: 4 GB of copies, refused.
    let defaults: Vec<String> = (0..2000)
        .map(|i| format!("k{i}=\"{}\"", "v".repeat(100)))
        .collect();
    let nodes: String = (0..20_000).map(|i| format!("n{i}; ")).collect();
    let text = format!("digraph g {{ node [{}]; {nodes}}}\n", defaults.join(", "));
    let e = parse(&text, "d.dot").unwrap_err().to_string();
    assert!(
        e.starts_with("d.dot:1:")
            && e.contains(&format!("more than {} MiB", MAX_DEFAULT_COPIES >> 20)),
        "{e}"
    );
    // Drawing defaults on many nodes, and edge defaults no edge reads, cost nothing.
    let drawing = format!("shape=box, label=\"{}\"", "v".repeat(100_000));
    let chain: String = (0..20_000)
        .map(|i| format!("n{i} -> n{};\n", i + 1))
        .collect();
    let text = format!(
        "digraph g {{ node [{drawing}, kind=\"osc\"]; edge [{drawing}, weight=2]; {chain}}}\n"
    );
    let g = parse(&text, "d.dot").unwrap();
    assert_eq!(g.len(), 20_001);
    let n = g.node(g.find("n5").unwrap());
    assert_eq!(n.kind, "osc");
    assert!(n.attrs.is_empty(), "{:?}", n.attrs);
    assert!(g.edges().iter().all(|e| e.comm == 2.0));
}

/// A node of more attributes than `MAX_NODE_ATTRS` is refused at its place, in both formats
/// that give attributes.
#[test]
fn a_node_of_too_many_attributes_is_refused() {
    let n = fugue_graph::MAX_NODE_ATTRS + 1;
    let attrs: String = (0..n).map(|i| format!("x{i}: 1, ")).collect();
    let e = ag::parse(&format!("a = {{ kind: \"osc\", {attrs}}};\n"), "a.ag")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("a.ag:1:1: node `a` has 4097 attributes, more than the 4096"),
        "{e}"
    );
    let attrs: Vec<String> = (0..n).map(|i| format!("x{i}=1")).collect();
    let e = fugue_graph::read::dot::parse(
        &format!("digraph {{ a [{}]; }}\n", attrs.join(", ")),
        "a.dot",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("a.dot:1:") && e.contains("has more than the 4096 attributes"),
        "{e}"
    );
}

/// An attribute a DOT node gives twice (a default it overrides apart), a second `.ag`
/// deadline, and a DOT `feedback` that is neither true nor false are refused at their place.
#[test]
fn attributes_given_twice_and_unclear_feedback_are_refused() {
    let dot = |t: &str| fugue_graph::read::dot::parse(t, "t.dot");
    let e = dot("digraph { a [kind=osc, freq=1, freq=2]; }\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.dot:1:32: attribute `freq` of node `a` is given twice (first at line 1, column 24); keep one"
    );
    let e = dot("digraph { a [freq=1];\n a [freq=2]; }\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.dot:2:5: attribute `freq`"), "{e}");
    // A default overridden by the node, and the same key in two nodes: fine.
    let g = dot("digraph { node [freq=1]; a [freq=2]; b [freq=3]; a -> b; }\n").unwrap();
    assert_eq!(g.node(g.find("a").unwrap()).attrs.len(), 1);
    let e = dot("digraph { a -> b [feedback=yes]; }\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.dot:1:28: attribute `feedback` of edge `a` -> `b` must be true or false, found `yes`"
    );
    assert!(dot("digraph { a -> b [feedback=FALSE]; }\n").is_ok());
    let e = ag::parse("deadline = 2;\ndeadline = 1;\n", "t.ag")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.ag:2:1: the deadline is given twice (first at line 1, column 1); keep one"
    );
}

/// `strict digraph`: the edges between the same two ports are one edge, their attributes
/// merged, `feedback` among them: a repeated feedback edge, or a plain edge repeated with
/// `feedback=true`, is one feedback edge (no cycle); a later `feedback=false` makes it plain.
#[test]
fn strict_dot_merges_feedback_with_the_other_attributes() {
    let dot = |t: &str| fugue_graph::read::dot::parse(t, "t.dot");
    let g = dot("strict digraph { a -> b; b -> a [feedback=true]; b -> a [feedback=true]; }\n")
        .unwrap();
    assert_eq!((g.edges().len(), g.feedback_edges().len()), (4, 1));
    let g = dot("strict digraph { a -> b [feedback=true]; b -> a; a -> b; }\n").unwrap();
    assert_eq!(g.feedback_edges().len(), 1);
    assert_eq!(g.feedback_text(&g.feedback_edges()[0]), "a.1 ~> b.1");
    let g = dot("strict digraph { a -> a; a -> a [feedback=true]; }\n").unwrap();
    assert_eq!(g.feedback_edges().len(), 1);
    let g = dot("strict digraph { b -> a [feedback=true]; b -> a [Weight=3]; a -> b; }\n").unwrap();
    assert_eq!(g.feedback_edges().len(), 1);
    // The last word: plain again, and a cycle.
    let e = dot("strict digraph { a -> b [feedback=true]; b -> a; a -> b [feedback=false]; }\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("the graph has a cycle"), "{e}");
    // Weight: the last given, where the first is written.
    let g = dot(
        "strict digraph { a -> b [Weight=2]; c -> b [headlabel=2]; a -> b; a -> b [Weight=5]; }\n",
    )
    .unwrap();
    assert_eq!(g.edges().len(), 2);
    assert_eq!(g.edges()[0].comm, 5.0);
    // Not strict: a repeat is refused at its place, naming the first.
    let e = dot("digraph { b -> a [feedback=true];\n b -> a [feedback=true]; }\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.dot:2:2:") && e.contains("written twice"),
        "{e}"
    );
}

/// A `-` that starts no number is said as what it likely was: an arrow written apart, or a
/// sign before infinity or NaN, which no attribute takes.
#[test]
fn a_sign_without_digits_says_what_it_likely_was() {
    let ag = |t: &str| ag::parse(t, "t.ag").unwrap_err().to_string();
    for (edge, at) in [("a.1 - > b.1", "t.ag:3:5:"), ("a.1-->b.1", "t.ag:3:4:")] {
        let e = ag(&format!(
            "a = {{ kind: \"osc\", freq: 1, }};\nb = {{ kind: \"sink\", }};\n{edge};\n"
        ));
        assert!(
            e.starts_with(at) && e.contains("neither a number nor an arrow"),
            "{e}"
        );
    }
    let e = ag("a = { kind: \"osc\", freq: -inf, };\n");
    assert!(e.contains("infinity and NaN are not values"), "{e}");
    let e = ag("a = { kind: \"osc\", freq: -x, };\n");
    assert!(
        e.ends_with("expected digits after the sign of a number"),
        "{e}"
    );
}

/// A quoted DOT name that is empty or only white space is refused at its place: no command
/// could name the node.
#[test]
fn a_blank_dot_name_is_refused() {
    let dot = |t: &str| fugue_graph::read::dot::parse(t, "t.dot");
    let e = dot("digraph {\n  \"\" [kind=osc]; }\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t.dot:2:") && e.contains("a node's name is empty"),
        "{e}"
    );
    let e = dot("digraph { a -> \" \"; }\n").unwrap_err().to_string();
    assert!(
        e.starts_with("t.dot:1:") && e.contains("only white space (\" \")"),
        "{e}"
    );
}

/// A DOT node named as a feedback edge's own nodes are (`m.1~>m.1`, `m.1~>m.1 (kept)`) is a
/// node like any other: the edge's pair takes the next free name, and the graph is written
/// back as it was read.
#[test]
fn a_node_named_like_a_feedback_pair_keeps_its_name() {
    let text = "digraph g {\n  m [kind=gain];\n  \"m.1~>m.1\" [kind=sink, in=1];\n  \"m.1~>m.1 #2 (kept)\";\n  m -> \"m.1~>m.1\";\n  m -> m [feedback=true];\n}\n";
    let g = fugue_graph::read::dot::parse(text, "t.dot").unwrap();
    let f = &g.feedback_edges()[0];
    assert_eq!(g.node(f.read).name, "m.1~>m.1 #3");
    assert_eq!(g.node(f.write).name, "m.1~>m.1 #3 (kept)");
    assert_eq!(g.node(g.find("m.1~>m.1").unwrap()).kind, "sink");
    assert_eq!(g.feedback_text(f), "m.1 ~> m.1");
    let again = fugue_graph::read::dot::parse(&write::to_dot(&g, "g"), "t.dot").unwrap();
    assert_eq!(write::to_dot(&again, "g"), write::to_dot(&g, "g"));
    assert_eq!(
        again.node(again.feedback_edges()[0].read).name,
        "m.1~>m.1 #3"
    );
}

/// A node's attributes given over many statements are checked for repeats in time linear in
/// the file (100,000 statements of one node), a drawing attribute may be given again, and a
/// second DOT deadline is refused as in `.ag`.
#[test]
fn dot_repeats_are_checked_in_linear_time() {
    let dot = |t: &str| fugue_graph::read::dot::parse(t, "t.dot");
    let many: String = (0..4000).map(|i| format!("a [k{i}=1];\n")).collect();
    let plain: String = "a;\n".repeat(100_000);
    let t0 = std::time::Instant::now();
    let g = dot(&format!("digraph {{\n{many}{plain}}}\n")).unwrap();
    assert_eq!(g.node(g.find("a").unwrap()).attrs.len(), 4000);
    // Linear: well under a second here; the quadratic check took minutes.
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t0.elapsed()
    );
    let e = dot(&format!(
        "digraph {{\n{}}}\n",
        (0..5000)
            .map(|i| format!("a [k{i}=1];\n"))
            .collect::<String>()
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("t.dot:4098:4: node `a` has more than the 4096"),
        "{e}"
    );
    assert!(dot("digraph { a [label=x]; a [label=y, color=red]; a [color=blue]; }\n").is_ok());
    let e = dot("digraph { deadline=2; deadline=3; }\n")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "t.dot:1:23: the deadline is given twice; keep one");
}

/// `\u` escapes in `.ag` strings are JSON's: a surrogate pair is one character, a lone half
/// is an error at its escape, as are bad digits in the pair's second half.
#[test]
fn surrogate_pairs_in_ag_strings() {
    let with = |s: &str| format!("a = {{ kind: \"k\", note: \"{s}\", }};\n");
    let g = ag::parse(&with(r"x\ud83d\ude00y"), "s.ag").unwrap();
    assert_eq!(g.node(0).attr("note"), Some(&Value::Str("x😀y".into())));
    // The string's text starts at column 25.
    for (text, col, want) in [
        (r"\uD83D\uZZZZ", 31, "expected four hex digits"),
        (r"\uD83D", 25, "first half of a surrogate pair"),
        (r"\uD83Dx", 25, "first half of a surrogate pair"),
        (r"\uD83D\u0041", 25, "first half of a surrogate pair"),
        (r"ab\uDE00", 27, "second half of a surrogate pair"),
        (r"\u+041", 25, "expected four hex digits"),
    ] {
        let e = ag::parse(&with(text), "s.ag").unwrap_err();
        assert_eq!(place(&e), (1, col), "{text}: {e}");
        assert!(e.to_string().contains(want), "{text}: {e}");
    }
}

/// `.dot`: `wcet` is a node's cost as in `.ag`; the node's own cost key wins over a default's,
/// a node may not give both itself; an edge refuses a key it is read for given twice, not a
/// drawing one; a feedback edge written twice names the first.
#[test]
fn dot_costs_and_repeated_keys() {
    let cost = |t: &str| read_bytes(t.as_bytes(), Format::Dot, "d.dot").map(|g| g.node(0).cost);
    assert_eq!(cost("digraph { a [wcet=5]; }").unwrap(), 5.0);
    assert_eq!(
        cost("digraph { node [Weight=1]; a [wcet=5]; }").unwrap(),
        5.0
    );
    assert_eq!(
        cost("digraph { node [wcet=2]; a [Weight=3]; }").unwrap(),
        3.0
    );
    assert_eq!(cost("digraph { node [wcet=2]; a; }").unwrap(), 2.0);
    let e = cost("digraph { a [wcet=5, Weight=3]; }").unwrap_err();
    assert!(e.to_string().contains("gives its cost twice"), "{e}");
    let e = cost("digraph { a [Weight=1, weight=2]; }").unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    let edge = |t: &str| read_bytes(t.as_bytes(), Format::Dot, "d.dot");
    assert!(edge("digraph { a -> b [arrowhead=dot, arrowhead=vee]; }").is_ok());
    let e = edge("digraph { a -> b [taillabel=1, taillabel=1]; }").unwrap_err();
    assert!(e.to_string().contains("given twice"), "{e}");
    let e = edge("digraph {\na -> a [feedback=true];\na -> a [feedback=true];\n}").unwrap_err();
    assert!(e.to_string().contains("(first at line 2)"), "{e}");
}

/// `.stg` numbers are written in digits only: a sign, which Rust's number parsing takes, is
/// refused at its place in every numeric field (`+1` was a task apart from `1`, and a
/// predecessor `+1` did not find task `1`); leading zeros still name the same task.
#[test]
fn stg_numbers_are_digits_only() {
    let stg = |t: &str| read_bytes(t.as_bytes(), Format::Stg, "s.stg");
    let msg = |t: &str| stg(t).unwrap_err().to_string();
    assert_eq!(
        msg("3\n0 0 0\n+1 5 1 0\n1 5 1 0\n2 1 2 +1 1\n"),
        "s.stg:3:1: expected a task id (a whole number >= 0, in digits only), found `+1`"
    );
    assert_eq!(
        msg("3\n0 0 0\n1 5 1 0\n2 1 1 +1\n"),
        "s.stg:4:7: expected a predecessor id (a whole number >= 0, in digits only), found `+1`"
    );
    assert_eq!(
        msg("3\n0 0 0\n1 5 +1 0\n"),
        "s.stg:3:5: expected the number of predecessors (a whole number >= 0, in digits only), found `+1`"
    );
    assert!(
        msg("+3\n0 0 0\n").starts_with("s.stg:1:1: expected the number of tasks on the first line"),
        "{}",
        msg("+3\n0 0 0\n")
    );
    for time in ["+5", "-0", "1e3", "inf", "NaN", "."] {
        let m = msg(&format!("3\n0 0 0\n1 {time} 1 0\n"));
        assert!(
            m.starts_with("s.stg:3:3: expected a processing time"),
            "{time}: {m}"
        );
    }
    assert!(msg("3\n0 0 0\n1 99999999999999999999 1 0\n").contains("s.stg:3:3:"));
    let m = msg("3\n0 0 99999999999999999999\n");
    assert_eq!(
        m,
        "s.stg:2:5: the number of predecessors `99999999999999999999` is too large"
    );
    // Leading zeros and a decimal time are fine: `01` is task 1.
    let g = stg("3\n0 0 0\n01 2.5 1 000\n2 1 1 1\n").unwrap();
    assert_eq!((g.len(), g.edges().len()), (3, 2));
    assert_eq!(g.node(g.find("1").unwrap()).cost, 2.5);
}

/// DOT graph attributes in `graph [...]` are the graph's, as `key = value` statements are
/// (the deadline was dropped); a subgraph's, which Graphviz scopes to the subgraph, may not
/// set the whole graph's deadline, and is refused at its place.
#[test]
fn dot_graph_attribute_statements_set_the_deadline() {
    let dot = |t: &str| fugue_graph::read::dot::parse(t, "t.dot");
    assert_eq!(
        dot("digraph { graph [deadline=5]; a -> b }")
            .unwrap()
            .deadline(),
        Some(5.0)
    );
    assert_eq!(
        dot("digraph { GRAPH [label=x, deadline=\"2.5\"] a -> b }")
            .unwrap()
            .deadline(),
        Some(2.5)
    );
    assert_eq!(
        dot("digraph { deadline=5; a -> b }").unwrap().deadline(),
        Some(5.0)
    );
    let e = dot("digraph { deadline=2; graph [deadline=3]; }")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "t.dot:1:30: the deadline is given twice; keep one");
    let e = dot("digraph {\n graph [deadline=-1];\n}")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.dot:2:18: the deadline must be a positive number up to 1e12 (the bound of a cost), found `-1`"
    );
    for (text, place) in [
        (
            "digraph {\n subgraph cluster_a { deadline=5; a }\n a -> b\n}",
            "2:23",
        ),
        ("digraph {\n { graph [deadline=5] a }\n a -> b\n}", "2:11"),
        ("digraph {\n a -> { deadline=5; b }\n}", "2:9"),
    ] {
        let e = dot(text).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "t.dot:{place}: a `deadline` inside a subgraph would hold for the subgraph only"
            )),
            "{text}: {e}"
        );
    }
    // A subgraph's other graph attributes (drawing ones) are left out, as at the top level.
    let g =
        dot("digraph { subgraph cluster_a { label=\"A\"; graph [color=red] a } a -> b }").unwrap();
    assert_eq!((g.len(), g.deadline()), (2, None));
}

/// An `.ag` edge that names a node declared later in the file says where, and that nodes
/// come before their edges (it said "unknown node"); an undeclared one is still unknown.
#[test]
fn ag_edge_before_its_node_names_the_declaration() {
    let e = ag::parse(
        "i = { kind: \"osc\", };\ni.1 -> o.1;\n// o comes\no = { kind: \"sink\", };\n",
        "fwd.ag",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "fwd.ag:2:8: edge refers to node `o`, which is declared later (line 4); declare nodes before their edges"
    );
    assert!(matches!(
        &e,
        ReadError::Graph { error: GraphError::UnknownNode { later: Some(l), .. }, .. } if l.line == 4
    ));
    // The source too; `o = {` only as a declaration (not an attribute, a string or a port).
    let e = ag::parse(
        "o.1 -> s.1;\ns = { kind: \"sink\", o: 1, t: \"o = {\", };\no = { kind: \"osc\", };\n",
        "fwd.ag",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "fwd.ag:1:1: edge refers to node `o`, which is declared later (line 3); declare nodes before their edges"
    );
    let e = ag::parse(
        "s = { kind: \"sink\", o: 1, t: \"o = {\", };\no.1 -> s.1;\n",
        "fwd.ag",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "fwd.ag:2:1: edge refers to unknown node `o`");
}

/// A graph file may declare at most a million nodes and ten million edges, and a DOT file
/// hold at most 32 million tokens: the reader stops at the one past the limit and says where
/// (in every format), before the rest of the file takes memory; a file at the limit reads.
#[test]
fn files_beyond_the_node_edge_and_token_limits_stop_where_they_pass_them() {
    use fugue_graph::read::{dot::MAX_TOKENS, MAX_FILE_NODES};
    let nodes = |n: usize| -> String { (0..n).map(|i| format!("n{i}={{}};\n")).collect() };
    let at_limit = nodes(MAX_FILE_NODES);
    let g = read_bytes(at_limit.as_bytes(), Format::Ag, "ok.ag").unwrap();
    assert_eq!(g.len(), MAX_FILE_NODES);
    let over = nodes(MAX_FILE_NODES + 2);
    let e = read_bytes(over.as_bytes(), Format::Ag, "many.ag").unwrap_err();
    let said = e.to_string();
    assert!(
        said.starts_with("many.ag:1000001:1: the file declares more than 1000000 nodes"),
        "{said}"
    );
    // A task graph of as many tasks, one a line (`.stg`: the count, then `id cost preds`).
    let mut stg = format!("{}\n", MAX_FILE_NODES + 1);
    for i in 0..=MAX_FILE_NODES {
        stg.push_str(&format!("{i} 1 0\n"));
    }
    let e = read_bytes(stg.as_bytes(), Format::Stg, "many.stg").unwrap_err();
    assert!(e.to_string().contains("more than 1000000 nodes"), "{e}");
    let semis = format!("digraph g {{{}}}", ";".repeat(MAX_TOKENS + 5));
    let e = read_bytes(semis.as_bytes(), Format::Dot, "semi.dot").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("semi.dot:1:32000009: the file holds more than 32000000 tokens"),
        "{e}"
    );
}
