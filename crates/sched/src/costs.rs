//! Measured computation costs from a CSV file `node,cost`.

use fugue_graph::TaskGraph;
use thiserror::Error;

/// A fault in a costs file, with its place.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CostsError {
    /// A row is not `node,cost`.
    #[error("{file}:{line}:{column}: expected `node,cost`, found `{text}`")]
    BadRow {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// Column of the row's first character, from 1.
        column: usize,
        /// The row.
        text: String,
    },
    /// The cost is not a number from 0 to [`fugue_graph::MAX_COST`].
    #[error("{file}:{line}:{column}: the cost `{value}` of node `{node}` is not a number from 0 to 1e12")]
    BadCost {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// Column of the cost, from 1.
        column: usize,
        /// The node.
        node: String,
        /// The value as written.
        value: String,
    },
    /// The node is not in the graph.
    #[error("{file}:{line}:{column}: the graph has no node `{node}`")]
    UnknownNode {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// Column of the node's name, from 1.
        column: usize,
        /// The node.
        node: String,
    },
    /// The file gives no node a cost (no row `node,cost`).
    #[error("{file}: no node is given a cost (no row `node,cost`); fugue calibrate writes one for every node")]
    Empty {
        /// File name.
        file: String,
    },
    /// A row does not read as costs in a file named as a graph (`.ag`, `.stg`, `.dot`,
    /// `.gv`): most likely the graph given where its costs were asked for.
    #[error("{file}:{line}: this is a graph file (.{ext}), not costs: a costs file has rows `node,cost` (fugue calibrate GRAPH -o costs.csv writes one)")]
    GraphFile {
        /// File name.
        file: String,
        /// Line number, from 1, of the first row that is not `node,cost` of the graph.
        line: usize,
        /// The file's extension, as written.
        ext: String,
    },
    /// The node was given a cost twice.
    #[error("{file}:{line}:{column}: node `{node}` already has a cost on line {first}")]
    Duplicate {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// Column of the node's name, from 1.
        column: usize,
        /// The node.
        node: String,
        /// The line of its first cost.
        first: usize,
    },
}

impl CostsError {
    /// The error said of a file named `file` as a graph is (`.ag`, `.stg`, `.dot`, `.gv`):
    /// a row that is not `node,cost` of the graph, an unknown node or a cost that is not a
    /// number becomes [`CostsError::GraphFile`]; any other error is kept.
    pub fn in_graph_named_file(self, file: &std::path::Path) -> CostsError {
        let (Some(_), Some(ext)) = (
            fugue_graph::Format::from_path(file),
            file.extension().and_then(|e| e.to_str()),
        ) else {
            return self;
        };
        match self {
            CostsError::BadRow { file, line, .. }
            | CostsError::BadCost { file, line, .. }
            | CostsError::UnknownNode { file, line, .. } => CostsError::GraphFile {
                file,
                line,
                ext: ext.to_string(),
            },
            other => other,
        }
    }
}

/// The two fields of a costs row `node,cost` (the row trimmed), and whether the name was
/// quoted: a name in double quotes (`""` a quote inside) is taken as written, spaces, commas
/// and a leading `#` included, as [`csv_name`] writes it; an unquoted one is trimmed and holds
/// no comma. `None` when the row is not two such fields.
fn split_row(row: &str) -> Option<(String, &str, bool)> {
    if let Some(rest) = row.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            if c != '"' {
                name.push(c);
                continue;
            }
            if rest[i + 1..].starts_with('"') {
                name.push('"');
                chars.next();
                continue;
            }
            let cost = rest[i + 1..].trim_start().strip_prefix(',')?.trim();
            return (!cost.contains(',')).then_some((name, cost, true));
        }
        return None;
    }
    let (name, cost) = row.split_once(',')?;
    let cost = cost.trim();
    (!cost.contains(',')).then(|| (name.trim().trim_matches('"').to_string(), cost, false))
}

/// A node's name as a costs file's first field: as it is, or in double quotes (a quote
/// inside written twice) where it would not read back as itself (a comma, a quote, spaces
/// at either end, a leading `#` that reads as a comment, a line break, or nothing).
pub fn csv_name(name: &str) -> String {
    let plain = !name.is_empty()
        && name.trim() == name
        && !name.starts_with('#')
        && !name.contains([',', '"', '\n', '\r']);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Reads costs `node,cost` (one per line) and returns one cost per node of `g`: the file's
/// where it gives one, the graph's otherwise (a file that gives none is refused). Blank lines and lines starting with `#` are
/// skipped, and so is a first row `node,cost` (a header) and a byte-order mark. A name may
/// be quoted ([`csv_name`]). `file` names the text in errors.
pub fn parse_costs(text: &str, file: &str, g: &TaskGraph) -> Result<Vec<f64>, CostsError> {
    parse_costs_given(text, file, g).map(|(costs, _)| costs)
}

/// [`parse_costs`], with whether the file gives each node its cost.
pub fn parse_costs_given(
    text: &str,
    file: &str,
    g: &TaskGraph,
) -> Result<(Vec<f64>, Vec<bool>), CostsError> {
    let mut costs = g.costs();
    let mut seen = vec![0usize; g.len()];
    let mut first_row = true;
    // A byte-order mark before the first row is no part of it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let row = raw.trim();
        if row.is_empty() || row.starts_with('#') {
            continue;
        }
        // Where the row's first field starts (its name), in characters from 1.
        let row_column = raw.len() - raw.trim_start().len();
        let row_column = raw[..row_column].chars().count() + 1;
        let fields = split_row(row);
        let header = first_row
            && fields.as_ref().is_some_and(|(name, cost, quoted)| {
                !quoted && name.eq_ignore_ascii_case("node") && cost.eq_ignore_ascii_case("cost")
            });
        first_row = false;
        if header {
            continue;
        }
        let Some((name, cost, _)) = fields.filter(|(name, _, _)| !name.is_empty()) else {
            return Err(CostsError::BadRow {
                file: file.into(),
                line,
                column: row_column,
                text: raw.into(),
            });
        };
        let name = name.as_str();
        let Some(id) = g.find(name) else {
            return Err(CostsError::UnknownNode {
                file: file.into(),
                line,
                column: row_column,
                node: name.into(),
            });
        };
        let value: f64 = match cost.parse::<f64>() {
            Ok(v) if fugue_graph::is_cost(v) => v,
            _ => {
                // The cost is the row's last field.
                let at = raw.trim_end().rfind(cost).unwrap_or(0);
                return Err(CostsError::BadCost {
                    file: file.into(),
                    line,
                    column: raw[..at].chars().count() + 1,
                    node: name.into(),
                    value: cost.into(),
                });
            }
        };
        if seen[id] != 0 {
            return Err(CostsError::Duplicate {
                file: file.into(),
                line,
                column: row_column,
                node: name.into(),
                first: seen[id],
            });
        }
        seen[id] = line;
        costs[id] = value;
    }
    if seen.iter().all(|&l| l == 0) && (0..g.len()).any(|v| !g.is_feedback_node(v)) {
        return Err(CostsError::Empty { file: file.into() });
    }
    Ok((costs, seen.iter().map(|&l| l != 0).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_graph::{GraphBuilder, Node};

    fn graph() -> TaskGraph {
        let mut b = GraphBuilder::new();
        let a = b.add_node(Node::new("a", "").with_cost(2.0)).unwrap();
        let c = b.add_node(Node::new("c", "").with_cost(5.0)).unwrap();
        b.add_edge(a, 0, c, 0, 0.0).unwrap();
        b.build().unwrap()
    }

    /// Names that a plain row would not read back (a leading `#`, a comma, a quote, spaces
    /// at an end) are written quoted and read back as themselves; a byte-order mark before
    /// the header is no part of it.
    #[test]
    fn odd_names_round_trip_through_quotes() {
        let names = ["#s", "a,b", " sp ", "say \"hi\"", "plain"];
        let mut b = GraphBuilder::new();
        for n in names {
            b.add_node(Node::new(n, "").with_cost(1.0)).unwrap();
        }
        let g = b.build().unwrap();
        let mut text = String::from("\u{feff}node,cost\n");
        for (i, n) in names.iter().enumerate() {
            text += &format!("{},{}\n", csv_name(n), i + 2);
        }
        assert_eq!(csv_name("plain"), "plain");
        assert_eq!(csv_name("#s"), "\"#s\"");
        assert_eq!(csv_name("say \"hi\""), "\"say \"\"hi\"\"\"");
        let c = parse_costs(&text, "m.csv", &g).unwrap();
        assert_eq!(c, vec![2.0, 3.0, 4.0, 5.0, 6.0]);
        // An unquoted row with a comma too many is still refused, and an unclosed quote.
        for bad in ["a,b,2\n", "\"a,2\n"] {
            let e = parse_costs(bad, "m.csv", &g).unwrap_err();
            assert!(matches!(e, CostsError::BadRow { .. }), "{bad:?}: {e}");
        }
    }

    #[test]
    fn overrides_named_nodes() {
        let g = graph();
        let c = parse_costs("node,cost\n# measured\na, 0.25\n\n", "m.csv", &g).unwrap();
        assert_eq!(c, vec![0.25, 5.0]);
    }

    #[test]
    fn a_file_that_gives_no_cost_is_refused() {
        let g = graph();
        for text in ["", "node,cost\n", "# nothing\n\n"] {
            let e = parse_costs(text, "m.csv", &g).unwrap_err();
            assert_eq!(
                e,
                CostsError::Empty {
                    file: "m.csv".into()
                },
                "{text:?}"
            );
        }
        let (_, given) = parse_costs_given("c,1\n", "m.csv", &g).unwrap();
        assert_eq!(given, vec![false, true]);
    }

    #[test]
    fn a_graph_given_as_costs_is_named_as_such() {
        let g = graph();
        let graph_text = "// a comment\na = { kind: \"osc\", };\n";
        for (file, ext) in [("g.ag", "ag"), ("G.DOT", "DOT"), ("x.stg", "stg")] {
            let e = parse_costs(graph_text, file, &g)
                .unwrap_err()
                .in_graph_named_file(std::path::Path::new(file));
            assert_eq!(
                e.to_string(),
                format!("{file}:1: this is a graph file (.{ext}), not costs: a costs file has rows `node,cost` (fugue calibrate GRAPH -o costs.csv writes one)")
            );
        }
        // A CSV keeps its own error, and so does a graph-named file that is only empty.
        let e = parse_costs(graph_text, "m.csv", &g)
            .unwrap_err()
            .in_graph_named_file(std::path::Path::new("m.csv"));
        assert!(matches!(e, CostsError::BadRow { .. }), "{e}");
        let e = parse_costs("", "g.ag", &g)
            .unwrap_err()
            .in_graph_named_file(std::path::Path::new("g.ag"));
        assert!(matches!(e, CostsError::Empty { .. }), "{e}");
    }

    #[test]
    fn errors_name_file_and_line() {
        let g = graph();
        let e = parse_costs("node,cost\nb,1\n", "m.csv", &g).unwrap_err();
        assert_eq!(e.to_string(), "m.csv:2:1: the graph has no node `b`");
        let e = parse_costs("a,1\na,-3\n", "m.csv", &g).unwrap_err();
        assert!(e.to_string().starts_with("m.csv:2:3: the cost `-3`"), "{e}");
        let e = parse_costs("a,1,2\n", "m.csv", &g).unwrap_err();
        assert!(matches!(e, CostsError::BadRow { line: 1, .. }));
        let e = parse_costs("a,1\nc,2\na,3\n", "m.csv", &g).unwrap_err();
        assert!(matches!(
            e,
            CostsError::Duplicate {
                line: 3,
                first: 1,
                ..
            }
        ));
    }
}
