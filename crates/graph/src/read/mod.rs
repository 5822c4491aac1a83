//! Readers for graph files: `.ag` (AudioGraph), `.stg` (Standard Task Graph Set) and weighted
//! `.dot`. Every error names `file:line:column` and what was expected; no input makes them panic.

pub mod ag;
pub mod dot;
pub mod stg;

use std::path::Path;

use crate::error::{Location, ReadError};
use crate::model::{EdgeId, GraphBuilder, TaskGraph};

/// A graph file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// The AudioGraph format of the 2019 corpus.
    Ag,
    /// The Standard Task Graph Set format.
    Stg,
    /// Graphviz DOT with `Weight` attributes.
    Dot,
}

impl Format {
    /// The format named by a file's extension (`ag`, `stg`, `dot`/`gv`), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Format::from_name(&ext)
    }

    /// The format with this name (`ag`, `stg`, `dot`, `gv`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "ag" => Some(Format::Ag),
            "stg" => Some(Format::Stg),
            "dot" | "gv" => Some(Format::Dot),
            _ => None,
        }
    }
}

/// Reads a graph file; the format comes from `format`, or else from the extension.
pub fn read_file(path: &Path, format: Option<Format>) -> Result<TaskGraph, ReadError> {
    let file = path.display().to_string();
    // `-` is no file here (a file of that name is read as any other).
    if path == Path::new("-") && !path.exists() {
        return Err(ReadError::Io {
            file,
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "a graph is read from a file, and standard input is named /dev/stdin, not - (with --format ag, dot or stg: it has no extension)",
            ),
        });
    }
    let format = match format.or_else(|| Format::from_path(path)) {
        Some(f) => f,
        None => {
            // A file that cannot be opened says so first: its name is likely mistyped. A
            // folder is not a graph file, whatever its name.
            if let Err(source) = open_file(path) {
                return Err(ReadError::Io { file, source });
            }
            return Err(ReadError::UnknownFormat {
                file,
                ext: path
                    .extension()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            });
        }
    };
    let io = |source| ReadError::Io {
        file: file.clone(),
        source,
    };
    let Some(bytes) = open_file(path)
        .and_then(|f| bytes_within(f, MAX_FILE_BYTES))
        .map_err(io)?
    else {
        return Err(ReadError::TooLarge {
            file,
            limit: MAX_FILE_BYTES,
        });
    };
    let mut graph = read_bytes(&bytes, format, &file)?;
    graph.set_folder(Some(folder_of(path).to_path_buf()));
    Ok(graph)
}

/// The folder that holds `path`: its parent, or `.` for a bare name (`g.ag` has the folder
/// "", the working directory, named as such).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Opens `path` for reading; a folder (which opens, and whose read fails with the system's
/// wording, "Is a directory") is refused with "it is a folder, not a file".
pub fn open_file(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::open(path)?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a folder, not a file",
        ));
    }
    Ok(file)
}

/// Reads the file at `path` whole, refusing one larger than `limit` bytes without reading
/// more than one byte past it (so `/dev/zero` or an endless pipe stops): the error then says
/// the limit and what the file should be (`what`: "a costs file").
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "it is larger than {}, the most {what} may have",
                size_text(limit)
            ),
        )
    };
    bytes_within(open_file(path)?, limit)?.ok_or_else(too_large)
}

/// The bytes of `file`, or `None` when it holds more than `limit`: a regular file is refused
/// from its size before a byte is read (a sparse file of gigabytes took 270 MB and a second
/// to read up to the limit); any other (a pipe, `/dev/zero`) is read one byte past the limit
/// at most.
fn bytes_within(file: std::fs::File, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > limit)
    {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// `limit` bytes as people write it: `64 MiB`, `512 KiB`, `100 bytes`.
fn size_text(limit: u64) -> String {
    if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else if limit >= 1 << 10 && limit.is_multiple_of(1 << 10) {
        format!("{} KiB", limit >> 10)
    } else {
        format!("{limit} bytes")
    }
}

/// [`read_bounded`] as text: bytes that are not UTF-8 are an error.
pub fn read_text_bounded(path: &Path, limit: u64, what: &str) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, limit, what)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is not UTF-8 text, as {what} is"),
        )
    })
}

/// The most nodes a graph file may declare (as many as `fugue gen` makes): the reader stops
/// at the next one, so that a file of tiny statements (11 bytes a node) cannot take
/// gigabytes of memory before anything is said.
pub const MAX_FILE_NODES: usize = 1_000_000;

/// The most edges a graph file may declare ([`MAX_FILE_NODES`]'s reason; `fugue gen`'s
/// limit too). A DOT file's links between subgraphs stop earlier ([`dot::MAX_EDGES`]).
pub const MAX_FILE_EDGES: usize = 10_000_000;

/// Whether `g` may take one more node of a file ([`MAX_FILE_NODES`]).
pub(crate) fn room_for_node(g: &crate::GraphBuilder) -> Result<(), crate::GraphError> {
    if g.nodes().len() >= MAX_FILE_NODES {
        return Err(crate::GraphError::TooMany {
            what: "nodes",
            max: MAX_FILE_NODES,
        });
    }
    Ok(())
}

/// Whether `g` may take one more edge of a file ([`MAX_FILE_EDGES`]).
pub(crate) fn room_for_edge(g: &crate::GraphBuilder) -> Result<(), crate::GraphError> {
    if g.edge_count() >= MAX_FILE_EDGES {
        return Err(crate::GraphError::TooMany {
            what: "edges",
            max: MAX_FILE_EDGES,
        });
    }
    Ok(())
}

/// The largest graph file [`read_file`] reads: 256 MiB (a line of a million nodes written by
/// `fugue gen` takes about 60 MB). Reading stops one byte past it.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads a graph from bytes; `file` is the name used in error messages. A UTF-8 byte-order
/// mark at the start is skipped; lines may end with `\n`, `\r\n` or a lone `\r` (the old
/// Mac convention, read as `\n`: one byte for one, so places in the text stay where they
/// are).
pub fn read_bytes(bytes: &[u8], format: Format, file: &str) -> Result<TaskGraph, ReadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // SAFETY-free: the prefix up to valid_up_to is valid UTF-8 by definition.
            let prefix = std::str::from_utf8(valid).unwrap_or("");
            return Err(syntax(
                file,
                location_of(prefix, prefix.len()),
                "the file is not text (invalid UTF-8 byte); expected a graph in text form".into(),
            ));
        }
    };
    let lone_cr =
        |i: usize| text.as_bytes()[i] == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n');
    let owned;
    let text = if (0..text.len()).any(lone_cr) {
        let b: Vec<u8> = (0..text.len())
            .map(|i| {
                if lone_cr(i) {
                    b'\n'
                } else {
                    text.as_bytes()[i]
                }
            })
            .collect();
        // One ASCII byte for another: still UTF-8.
        owned = String::from_utf8(b).expect("ASCII replaced by ASCII");
        owned.as_str()
    } else {
        text
    };
    match format {
        Format::Ag => ag::parse(text, file),
        Format::Stg => stg::parse(text, file),
        Format::Dot => dot::parse(text, file),
    }
}

/// The 1-based line and column of byte offset `pos` in `text`.
pub(crate) fn location_of(text: &str, pos: usize) -> Location {
    let pos = pos.min(text.len());
    let before = &text.as_bytes()[..pos];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = text
        .get(line_start..pos)
        .map_or(pos - line_start, |s| s.chars().count())
        + 1;
    Location { line, column }
}

pub(crate) fn syntax(file: &str, location: Location, message: String) -> ReadError {
    ReadError::Syntax {
        file: file.to_string(),
        location,
        message: crate::error::shorten_quotes(&message).into_owned(),
    }
}

/// Builds the graph and maps a structural error to the place of the edge that shows it.
/// A cycle's error says how the file's format writes a feedback edge (`feedback`, one of
/// `crate::error::FEEDBACK_*`).
pub(crate) fn finish(
    builder: GraphBuilder,
    file: &str,
    text: &str,
    edge_offsets: &[usize],
    feedback: &'static str,
) -> Result<TaskGraph, ReadError> {
    builder.build().map_err(|e| ReadError::Graph {
        file: file.to_string(),
        location: location_of(
            text,
            e.edge
                .and_then(|i: EdgeId| edge_offsets.get(i).copied())
                .unwrap_or(text.len()),
        ),
        error: match e.error {
            crate::error::GraphError::Cycle { nodes, .. } => {
                crate::error::GraphError::Cycle { nodes, feedback }
            }
            other => other,
        },
    })
}

/// Fills the place of the first edge into a [`GraphError::DuplicateEdge`] from the builder
/// (`offsets[i]`: where edge `i` is written in `text`; `feedback[i]`: where feedback edge `i`
/// is, for a format that has them).
pub(crate) fn with_first_edge(
    mut error: crate::error::GraphError,
    builder: &GraphBuilder,
    text: &str,
    offsets: &[usize],
    feedback: &[usize],
) -> crate::error::GraphError {
    if let crate::error::GraphError::DuplicateEdge {
        edge, first, arrow, ..
    } = &mut error
    {
        let (src, src_port, dst, dst_port) = &**edge;
        let (s, d) = (builder.find(src), builder.find(dst));
        if let (Some(s), Some(d)) = (s, d) {
            let (sp, dp) = (*src_port - 1, *dst_port - 1);
            let found = if *arrow == "~>" {
                builder
                    .find_feedback(s, sp, d, dp)
                    .and_then(|i| feedback.get(i))
            } else {
                builder.find_edge(s, sp, d, dp).and_then(|i| offsets.get(i))
            };
            *first = found.map(|&o| location_of(text, o));
        }
    }
    error
}
