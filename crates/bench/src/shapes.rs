//! The graphs the benchmarks run, named as the command line names them: the 2019 study's
//! three shapes (`line`, `diamond`, `rake`), a generated shape (`gen:SHAPE:N`), or a graph
//! file.
//!
//! The three shapes come from the generators of [`fugue_graph::gen`], which reproduce the
//! corpus files node for node and edge for edge (`crates/graph/tests/robust.rs` checks it
//! where the corpus is present), so the benchmarks run from a plain checkout. The one
//! difference: 69 of the diamond's 150 `mod` nodes have another frequency in the corpus file
//! (hand-picked there, by level); a `mod` costs the same at any frequency (rendering 1 s of
//! either takes the same instruction count within 0.05 %, callgrind). Given a corpus
//! folder (`--corpus DIR`, the folder holding `ligne/`, `losange/` and `rateau/`), the
//! shapes are read from its files instead.

use std::path::Path;

use fugue_graph::TaskGraph;

use crate::error::{config, failed, BenchError};

/// The 2019 study's shapes: name, the corpus file it stands for, and the generator's
/// argument that reproduces it.
pub const SHAPES: [(&str, &str); 3] = [
    ("line", "ligne/ligne100.ag"),
    ("diamond", "losange/losange156.ag"),
    ("rake", "rateau/rateau101.ag"),
];

/// A graph to run and where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// A short name for tables and figure labels (`ligne100`, `line12`, or the file's stem).
    pub label: String,
    /// Where it came from, for reports: `generated (gen:rake:33, as rateau/rateau101.ag)` or
    /// the file's path.
    pub source: String,
    /// The graph.
    pub graph: TaskGraph,
}

/// The generator's shape of `gen:SHAPE:N` (`line` of N nodes, `diamond` of depth N, `rake`
/// of N branches); `None` for an unknown shape.
pub fn gen_shape(shape: &str, n: usize) -> Option<fugue_graph::gen::Shape> {
    use fugue_graph::gen::Shape;
    Some(match shape {
        "line" => Shape::Line { nodes: n },
        "diamond" => Shape::Diamond { depth: n },
        "rake" => Shape::Rake { branches: n },
        _ => return None,
    })
}

/// The generated graph of `gen:SHAPE:N` ([`gen_shape`]), labelled by shape and node count;
/// `None` for an unknown shape. Its size is checked first, against the limits `fugue gen`
/// keeps ([`fugue_graph::gen::Shape::check_size`]).
pub fn generated(
    shape: &str,
    n: usize,
) -> Option<Result<(String, TaskGraph), fugue_graph::gen::TooLarge>> {
    let s = gen_shape(shape, n)?;
    Some(s.check_size().map(|()| {
        let g = s.generate();
        (format!("{shape}{}", g.len()), g)
    }))
}

/// The 2019 shape `name` (`line`, `diamond`, `rake`) as the generators make it: the corpus
/// file's label (`ligne100`) and the graph.
pub fn corpus_shape(name: &str) -> Option<Loaded> {
    let (_, file) = SHAPES.iter().find(|(n, _)| *n == name)?;
    let (shape, n) = match name {
        "line" => ("line", 100),
        "diamond" => ("diamond", 5),
        _ => ("rake", 33),
    };
    let (_, graph) = generated(shape, n)?.ok()?;
    let label = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let note = if name == "diamond" {
        "; some mod frequencies differ"
    } else {
        ""
    };
    Some(Loaded {
        label,
        source: format!(
            "generated (gen:{shape}:{n}, node for node {file} of the 2019 corpus{note})"
        ),
        graph,
    })
}

/// The N of `gen:SHAPE:N`: decimal digits and nothing else (no sign, no further `:`).
pub fn gen_size(size: &str) -> Option<usize> {
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    size.parse().ok()
}

/// Loads `name`: a 2019 shape (from `corpus` when given, else generated), `gen:SHAPE:N`, or a
/// graph file (relative paths against `base`).
pub fn load(name: &str, corpus: Option<&Path>, base: &Path) -> Result<Loaded, BenchError> {
    if let Some(g) = name.strip_prefix("gen:") {
        let (shape, size) = g.split_once(':').unwrap_or((g, ""));
        let most = fugue_graph::gen::MAX_NODES as usize;
        // N in digits only: `gen:line:5:x` or `gen:line:+5` is no name of `gen:line:5`.
        let n: usize = match gen_size(size) {
            Some(n) if (1..=most).contains(&n) => n,
            _ => {
                return config(format!(
                    "graph `{name}`: expected gen:SHAPE:N with N from 1 to {most} (docs/limits.md)"
                ))
            }
        };
        // A line is at least a source and a sink (`fugue gen line` refuses fewer).
        if shape == "line" && n < 2 {
            return config(format!(
                "graph `{name}`: a line has at least 2 nodes (a source and a sink)"
            ));
        }
        let (label, graph) = match generated(shape, n) {
            None => {
                return config(format!(
                    "graph `{name}`: unknown shape `{shape}`; expected line, diamond or rake"
                ))
            }
            Some(Err(e)) => return config(format!("graph `{name}`: {e}")),
            Some(Ok(g)) => g,
        };
        return Ok(Loaded {
            label,
            source: format!("generated ({name})"),
            graph,
        });
    }
    if let Some((_, file)) = SHAPES.iter().find(|(n, _)| *n == name) {
        return match corpus {
            None => Ok(corpus_shape(name).expect("a known shape")),
            Some(dir) => {
                let path = dir.join(file);
                if !path.is_file() {
                    return failed(format!(
                        "{} (for `{name}`) not found; --corpus names the folder that holds ligne/, losange/ and rateau/ (leave it out to use the generated shapes)",
                        path.display()
                    ));
                }
                read(&path)
            }
        };
    }
    let path = base.join(name);
    if !path.exists() {
        return failed(format!(
            "graph {} not found; give a graph file, gen:SHAPE:N, or line, diamond or rake (the 2019 shapes, generated)",
            path.display()
        ));
    }
    read(&path)
}

/// A reader of graph files.
pub type Reader = fn(&Path) -> Result<TaskGraph, BenchError>;

/// How a benchmark reads a graph file: [`use_reader`]'s, else [`fugue_graph::read_file`].
static READER: std::sync::OnceLock<Reader> = std::sync::OnceLock::new();

/// Makes `reader` read every graph file a benchmark names (the front end's: a Faust
/// program `.dsp` as a graph of one node). The first call wins.
pub fn use_reader(reader: Reader) {
    let _ = READER.set(reader);
}

/// Reads the graph file at `path` ([`use_reader`]); a file of no node is refused: a
/// benchmark of it would measure nothing and report figures all the same.
pub fn read_file(path: &Path) -> Result<TaskGraph, BenchError> {
    let graph = match READER.get() {
        Some(reader) => reader(path)?,
        None => fugue_graph::read_file(path, None)?,
    };
    not_empty(graph, path)
}

/// `graph`, read from `path`, unless it has no node (bad input: nothing to measure).
pub fn not_empty(graph: TaskGraph, path: &Path) -> Result<TaskGraph, BenchError> {
    if graph.is_empty() {
        return Err(BenchError::Input(format!(
            "{}: the graph has no node, so a benchmark of it would measure nothing; give it a node and a sink at least",
            path.display()
        )));
    }
    Ok(graph)
}

fn read(path: &Path) -> Result<Loaded, BenchError> {
    let graph = read_file(path)?;
    Ok(Loaded {
        label: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
        source: path.display().to_string(),
        graph,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_are_generated_without_a_corpus() {
        let sizes: Vec<(String, usize)> = ["line", "diamond", "rake"]
            .iter()
            .map(|s| {
                let l = load(s, None, Path::new(".")).unwrap();
                (l.label, l.graph.len())
            })
            .collect();
        assert_eq!(
            sizes,
            [
                ("ligne100".to_string(), 100),
                ("losange156".to_string(), 156),
                ("rateau101".to_string(), 101)
            ]
        );
        let g = load("gen:diamond:2", None, Path::new(".")).unwrap();
        assert_eq!((g.label.as_str(), g.graph.len()), ("diamond16", 16));
    }

    #[test]
    fn bad_names_say_what_is_accepted() {
        for junk in [
            "gen:line:5:x",
            "gen:line:+5",
            "gen:line:5:",
            "gen:line:",
            "gen:line",
        ] {
            let e = load(junk, None, Path::new(".")).unwrap_err();
            assert!(
                e.to_string().contains("expected gen:SHAPE:N"),
                "{junk}: {e}"
            );
        }
        let e = load("gen:star:3", None, Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("line, diamond or rake"), "{e}");
        assert!(e.is_config());
        let e = load("nope.ag", None, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("gen:SHAPE:N"), "{e}");
        let e = load("rake", Some(Path::new("/nonexistent")), Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("leave it out"), "{e}");
    }
}
