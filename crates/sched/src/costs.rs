//! Measured computation costs from a CSV file `node,cost`.

use fugue_graph::TaskGraph;
use thiserror::Error;

/// A fault in a costs file, with its place.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CostsError {
    /// A row is not `node,cost`.
    #[error("{file}:{line}: expected `node,cost`, found `{text}`")]
    BadRow {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// The row.
        text: String,
    },
    /// The cost is not a number from 0 to [`fugue_graph::MAX_COST`].
    #[error("{file}:{line}: the cost `{value}` of node `{node}` is not a number from 0 to 1e12")]
    BadCost {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// The node.
        node: String,
        /// The value as written.
        value: String,
    },
    /// The node is not in the graph.
    #[error("{file}:{line}: the graph has no node `{node}`")]
    UnknownNode {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// The node.
        node: String,
    },
    /// The file gives no node a cost (no row `node,cost`).
    #[error("{file}: no node is given a cost (no row `node,cost`); fugue calibrate writes one for every node")]
    Empty {
        /// File name.
        file: String,
    },
    /// The node was given a cost twice.
    #[error("{file}:{line}: node `{node}` already has a cost on line {first}")]
    Duplicate {
        /// File name.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// The node.
        node: String,
        /// The line of its first cost.
        first: usize,
    },
}

/// Reads costs `node,cost` (one per line) and returns one cost per node of `g`: the file's
/// where it gives one, the graph's otherwise (a file that gives none is refused). Blank lines and lines starting with `#` are
/// skipped, and so is a first row `node,cost` (a header). `file` names the text in errors.
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
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let row = raw.trim();
        if row.is_empty() || row.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        let header = first_row
            && fields.len() == 2
            && fields[0].eq_ignore_ascii_case("node")
            && fields[1].eq_ignore_ascii_case("cost");
        first_row = false;
        if header {
            continue;
        }
        if fields.len() != 2 || fields[0].is_empty() {
            return Err(CostsError::BadRow {
                file: file.into(),
                line,
                text: raw.into(),
            });
        }
        let name = fields[0].trim_matches('"');
        let Some(id) = g.find(name) else {
            return Err(CostsError::UnknownNode {
                file: file.into(),
                line,
                node: name.into(),
            });
        };
        let value: f64 = match fields[1].parse::<f64>() {
            Ok(v) if fugue_graph::is_cost(v) => v,
            _ => {
                return Err(CostsError::BadCost {
                    file: file.into(),
                    line,
                    node: name.into(),
                    value: fields[1].into(),
                })
            }
        };
        if seen[id] != 0 {
            return Err(CostsError::Duplicate {
                file: file.into(),
                line,
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
    fn errors_name_file_and_line() {
        let g = graph();
        let e = parse_costs("node,cost\nb,1\n", "m.csv", &g).unwrap_err();
        assert_eq!(e.to_string(), "m.csv:2: the graph has no node `b`");
        let e = parse_costs("a,1\na,-3\n", "m.csv", &g).unwrap_err();
        assert!(e.to_string().starts_with("m.csv:2: the cost `-3`"), "{e}");
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
