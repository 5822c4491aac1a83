//! Errors of the task-graph crate.

use std::fmt;

/// A place in a source file: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Line, counted from 1.
    pub line: usize,
    /// Column in characters, counted from 1.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Whether a port is an input or an output of its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// An input port (destination of an edge).
    Input,
    /// An output port (source of an edge).
    Output,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Input => "input",
            Direction::Output => "output",
        })
    }
}

/// A structural fault of a graph, found while it is built or validated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// An edge names a node that the graph does not declare, or declares only after the
    /// edge (`.ag` declares nodes before their edges).
    #[error("{}", unknown_node_text(name, nearest.as_deref(), *later))]
    UnknownNode {
        /// The name that was not found.
        name: String,
        /// The declared name closest to it, when one is a likely misspelling
        /// ([`crate::suggest::nearest`]).
        nearest: Option<String>,
        /// Where the node is declared, when that is after the edge.
        later: Option<Location>,
    },
    /// A node's name holds a control character (a line break, an escape), a bidirectional
    /// mark or a character that shows as nothing ([`unprintable`]): names are printed in reports, messages and drawings, where
    /// such a character breaks the line or the terminal, or reorders what is shown.
    #[error(
        "node name {shown} holds the {} U+{code:04X}: a name must be printable",
        match char::from_u32(*code) {
            Some(c) if c.is_control() => "control character",
            Some('\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}') => "invisible character",
            _ => "invisible bidirectional mark",
        }
    )]
    ControlInName {
        /// The name, its control characters written as escapes (`"a\u{1}b"`).
        shown: String,
        /// The first control character.
        code: u32,
    },
    /// A node's name is empty or only white space (a quoted DOT name can be): no message,
    /// schedule or control command could name it.
    #[error("a node's name is {}: give it one that a command can name", if shown.is_empty() { "empty".to_string() } else { format!("only white space ({shown:?})") })]
    BlankName {
        /// The name.
        shown: String,
    },
    /// A node has more attributes than [`crate::MAX_NODE_ATTRS`].
    #[error(
        "node `{name}` has {count} attributes, more than the {} a node may have",
        crate::MAX_NODE_ATTRS
    )]
    TooManyAttributes {
        /// The node.
        name: String,
        /// Its attributes.
        count: usize,
    },
    /// A graph file declares more nodes or edges than a file may
    /// ([`crate::read::MAX_FILE_NODES`], [`crate::read::MAX_FILE_EDGES`]).
    #[error("the file declares more than {max} {what}, the most a graph file may hold (as many as `fugue gen` makes); reading stopped here")]
    TooMany {
        /// `nodes` or `edges`.
        what: &'static str,
        /// The limit.
        max: usize,
    },
    /// Two nodes carry the same name.
    #[error("node `{name}` is declared twice{}", first.map(|l| format!(" (first at line {})", l.line)).unwrap_or_default())]
    DuplicateNode {
        /// The duplicated name.
        name: String,
        /// Where the first declaration was, when known.
        first: Option<Location>,
    },
    /// A port number is 0 or beyond the count the node declares with `in`/`out`.
    #[error("{direction} port {port} of node `{node}` is out of range: the node declares {declared} {direction} port(s), numbered from 1{}", if *declared > 0 { format!("; did you mean `{node}.{declared}`?") } else { String::new() })]
    PortOutOfRange {
        /// The node's name.
        node: String,
        /// The port as written (1-based).
        port: usize,
        /// Input or output.
        direction: Direction,
        /// How many ports the node declares.
        declared: usize,
    },
    /// A port number 0 (ports are numbered from 1).
    #[error("port 0 of node `{node}` does not exist: ports are numbered from 1")]
    PortZero {
        /// The node's name.
        node: String,
    },
    /// The graph has a cycle; the names are the nodes on it, in order.
    #[error("the graph has a cycle: {}; a signal that loops back must pass a feedback edge (it carries the previous cycle's block), {}", cycle_text(.nodes), .feedback)]
    Cycle {
        /// Node names along the cycle; the last one leads back to the first.
        nodes: Vec<String>,
        /// How the graph's format writes a feedback edge, in words ([`FEEDBACK_AG`] for a
        /// graph made in memory).
        feedback: &'static str,
    },
    /// The same edge (same ports of the same two nodes) written twice: its signal would be
    /// summed twice (+6 dB).
    #[error("edge `{}`.{} {} `{}`.{} is written twice{}; a second edge between the same ports adds the signal again (+6 dB): remove one", .edge.0, .edge.1, .arrow, .edge.2, .edge.3, first.map(|l| format!(" (first at line {})", l.line)).unwrap_or_default())]
    DuplicateEdge {
        /// Source node, its output port (from 1), destination node, its input port (from 1).
        edge: Box<(String, usize, String, usize)>,
        /// `->`, or `~>` for a feedback edge.
        arrow: &'static str,
        /// Where the first one was, when known.
        first: Option<Location>,
    },
    /// A cost that is negative, not finite or above [`crate::MAX_COST`].
    #[error("cost {value} of {what} is not a number from 0 to 1e12")]
    BadCost {
        /// What carries the cost (a node or edge description).
        what: String,
        /// The offending value.
        value: f64,
    },
}

/// How an `.ag` file writes a feedback edge (see [`GraphError::Cycle`]).
pub const FEEDBACK_AG: &str = "written `~>` instead of `->`";
/// How a DOT file writes a feedback edge.
pub const FEEDBACK_DOT: &str = "written as an edge marked `[feedback=true]`";
/// What an `.stg` file can do of a feedback edge: nothing.
pub const FEEDBACK_STG: &str =
    "which an .stg file cannot hold: write the graph as .ag, with `~>` for that edge";

/// The message of [`GraphError::UnknownNode`]: a node declared after the edge says where,
/// else the likely misspelling, if any.
fn unknown_node_text(name: &str, nearest: Option<&str>, later: Option<Location>) -> String {
    match (later, nearest) {
        (Some(l), _) => format!(
            "edge refers to node `{name}`, which is declared later (line {}); declare nodes before their edges",
            l.line
        ),
        (None, Some(n)) => format!("edge refers to unknown node `{name}`; did you mean `{n}`?"),
        (None, None) => format!("edge refers to unknown node `{name}`"),
    }
}

/// Nodes of a cycle named before "... N more".
const CYCLE_NAMES: usize = 12;

/// The cycle `a -> b -> ... -> a`, its first [`CYCLE_NAMES`] nodes named and the others
/// counted (a cycle through a million nodes is one short line, not a list of them all).
fn cycle_text(nodes: &[String]) -> String {
    let mut s = nodes[..nodes.len().min(CYCLE_NAMES)].join(" -> ");
    if nodes.len() > CYCLE_NAMES {
        s.push_str(&format!(" -> ... {} more", nodes.len() - CYCLE_NAMES));
    }
    if let Some(first) = nodes.first() {
        s.push_str(" -> ");
        s.push_str(first);
    }
    s
}

/// An error while reading a graph file: always names the file and, where there is one, the place.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file is larger than [`crate::read::MAX_FILE_BYTES`].
    #[error("{file} is larger than {} MiB, the most a graph file may have; is it a graph file?", .limit >> 20)]
    TooLarge {
        /// The file.
        file: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file could not be opened or read.
    #[error("cannot read {file}")]
    Io {
        /// The file.
        file: String,
        /// The system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The text does not follow the format's grammar, or the graph it describes is invalid.
    #[error("{file}:{location}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// Where the problem is.
        location: Location,
        /// What was found and what was expected.
        message: String,
    },
    /// The graph is structurally invalid (e.g. a cycle) at a place in the file.
    #[error("{file}:{location}: {error}")]
    Graph {
        /// The file.
        file: String,
        /// Where the offending declaration is (for a cycle: an edge on it).
        location: Location,
        /// The structural fault (part of the message, so not also reported as a source).
        error: GraphError,
    },
    /// The file's extension does not name a known format.
    #[error("{file}: {}; known formats are .ag, .stg, .dot and .dsp (a Faust program, played as one node)", if ext.is_empty() { "the file's name has no extension to tell its graph format".to_string() } else { format!("unknown graph format `.{ext}`") })]
    UnknownFormat {
        /// The file.
        file: String,
        /// Its extension (may be empty).
        ext: String,
    },
}

/// The most characters of user text (a name, a token, a value) that an error message quotes;
/// longer text is cut there and ended with `…`.
pub const QUOTE_MAX: usize = 80;

/// `message` with every backquoted span of more than [`QUOTE_MAX`] characters cut to that
/// length and ended with `…` (an unclosed one too), so that an error quoting a megabyte-long
/// line or name stays one readable line.
///
/// ```
/// use fugue_graph::error::{shorten_quotes, QUOTE_MAX};
/// let long = "x".repeat(1000);
/// let message = format!("unknown kind `{long}` at 1:1");
/// let m = shorten_quotes(&message);
/// assert_eq!(m, format!("unknown kind `{}…` at 1:1", "x".repeat(QUOTE_MAX)));
/// assert_eq!(shorten_quotes("node `a` twice"), "node `a` twice");
/// ```
///
/// Control characters other than line breaks and tabs (an escape sequence in a name read from
/// a file) and bidirectional marks ([`unprintable`]) are written as Rust escapes, so that a
/// message cannot drive the terminal or reorder what it shows:
///
/// ```
/// use fugue_graph::error::shorten_quotes;
/// assert_eq!(shorten_quotes("kind `os\x1b[31mc`"), "kind `os\\u{1b}[31mc`");
/// ```
pub fn shorten_quotes(message: &str) -> std::borrow::Cow<'_, str> {
    // Shortened before the escapes are written, so that no escape is cut in half.
    match shorten_quotes_of(message) {
        std::borrow::Cow::Owned(text) => std::borrow::Cow::Owned(printable(&text).into_owned()),
        std::borrow::Cow::Borrowed(_) => printable(message),
    }
}

/// `text` with its control characters other than line breaks and tabs, and its bidirectional
/// marks ([`unprintable`]), written as Rust escapes (`\u{1b}`), for text read from files (a plugin's name, a program's parameter)
/// printed to a terminal.
///
/// ```
/// use fugue_graph::error::printable;
/// assert_eq!(printable("a\x07b\tc\n"), "a\\u{7}b\tc\n");
/// ```
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| unprintable(c) && c != '\n' && c != '\t';
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `c` is a control character, one of the invisible marks that reorder the text
/// around them on a terminal (Unicode's bidirectional embeddings, overrides, isolates and
/// marks), or a character that shows as nothing (zero-width spaces and joiners, the word
/// joiner, the byte-order mark): any of them can make a name read as another.
///
/// ```
/// use fugue_graph::error::unprintable;
/// assert!(unprintable('\x1b') && unprintable('\u{202e}') && !unprintable('é'));
/// assert!(unprintable('\u{feff}') && unprintable('\u{200b}'));
/// ```
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// [`shorten_quotes`]' shortening.
fn shorten_quotes_of(message: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let mut out: Option<String> = None;
    let (mut inside, mut count) = (false, 0usize);
    let mut i = 0;
    while i < message.len() {
        // One character, or one escape written by `printable` (`\u{1b}`), counted as one
        // and never cut: a message shortened twice keeps its escapes whole.
        let rest = &message[i..];
        let len = match rest.strip_prefix("\\u{").and_then(|r| r.find('}')) {
            Some(close) if close <= 6 => close + 4,
            _ => rest.chars().next().map_or(1, char::len_utf8),
        };
        let unit = &message[i..i + len];
        if unit == "`" {
            if inside && count > QUOTE_MAX {
                if let Some(o) = out.as_mut() {
                    o.push('…');
                }
            }
            inside = !inside;
            count = 0;
        } else if inside {
            count += 1;
            if count == QUOTE_MAX + 1 && out.is_none() {
                out = Some(message[..i].to_string());
            }
        }
        if let Some(o) = out.as_mut() {
            if !(inside && count > QUOTE_MAX) {
                o.push_str(unit);
            }
        }
        i += len;
    }
    match out {
        Some(mut o) => {
            if inside && count > QUOTE_MAX {
                o.push('…');
            }
            Cow::Owned(o)
        }
        None => Cow::Borrowed(message),
    }
}

/// The longest word (a run of characters without a space: a path, a number) a message shows
/// whole.
pub const WORD_MAX: usize = 200;

/// `message` with every word of more than [`WORD_MAX`] characters cut to its first and last
/// 80 characters with `…` between, so that a megabyte-long path stays one readable line that
/// still shows where it starts and how it ends.
pub fn shorten_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let n = word.chars().count();
        if n <= WORD_MAX {
            out.push_str(word);
        } else {
            out.extend(word.chars().take(80));
            out.push('…');
            out.extend(word.chars().skip(n - 80));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_keep_their_start_and_end() {
        let path = format!("/tmp/{}/end.ag", "d".repeat(1_000_000));
        let m = shorten_words(&format!("cannot read {path}: No such file"));
        assert!(m.len() < 400, "{}", m.len());
        assert!(m.starts_with("cannot read /tmp/ddd"), "{m}");
        assert!(
            m.contains('…') && m.ends_with("ddd/end.ag: No such file"),
            "{m}"
        );
        assert_eq!(shorten_words("a short one"), "a short one");
    }

    #[test]
    fn a_long_quote_is_cut_before_its_escapes_are_written() {
        // 79 letters then escapes: the quote is cut at 80 characters of the name, and every
        // escape shown is whole.
        let name = format!("{}\x1b\x1b\x1b\u{202e}z", "a".repeat(79));
        let message = format!("node `{name}` is unknown");
        let m = shorten_quotes(&message);
        assert_eq!(m, format!("node `{}\\u{{1b}}…` is unknown", "a".repeat(79)));
        let m = shorten_quotes("kind `a\u{202e}b\u{2066}c`");
        assert_eq!(m, "kind `a\\u{202e}b\\u{2066}c`");
        // Shortened twice (a reader's message, then the command's): the escapes stay whole.
        for letters in 60..82 {
            let name = format!("{}\x1b\x1b\x1b{}", "x".repeat(letters), "y".repeat(10));
            let once = shorten_quotes(&format!("found `{name}` here")).into_owned();
            assert_eq!(shorten_quotes(&once), once, "{letters}");
            assert!(!once.contains("\\u{1…") && !once.contains("\\u…"), "{once}");
        }
    }

    #[test]
    fn a_bidirectional_mark_in_a_name_is_refused() {
        let mut g = crate::model::GraphBuilder::new();
        let e = g
            .add_node(crate::Node::new("ab\u{202e}cd", "osc"))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "node name \"ab\\u{202e}cd\" holds the invisible bidirectional mark U+202E: a name must be printable"
        );
        let e = g.add_node(crate::Node::new("a\u{7}", "osc")).unwrap_err();
        assert!(e.to_string().contains("control character U+0007"), "{e}");
    }

    /// A cycle through many nodes names the first twelve and counts the others.
    #[test]
    fn a_long_cycle_is_said_in_one_short_line() {
        let nodes: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
        let text = cycle_text(&nodes);
        assert!(text.starts_with("n0 -> n1 -> "), "{text}");
        assert!(text.ends_with("n11 -> ... 988 more -> n0"), "{text}");
        assert!(text.len() < 200, "{text}");
        let short: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        assert_eq!(cycle_text(&short), "a -> b -> a");
    }
}
