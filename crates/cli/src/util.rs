//! Helpers shared by the commands: reading graphs, error kinds and exit codes, safe output.

use std::path::Path;

use fugue_engine::output::OutputError;
use fugue_graph::{Format, ReadError, TaskGraph};

/// The node kinds every command builds graphs with: the built-in ones (kinds loaded at run
/// time register here).
pub fn registry() -> fugue_dsp::Registry {
    let mut registry = fugue_dsp::Registry::with_builtin_kinds();
    fugue_faust::register(&mut registry);
    fugue_lv2::register(&mut registry, |w| warning(w));
    registry
}

/// Sets the costs of `g`, read from `file`, as `costs` says
/// ([`fugue_engine::Costs::apply`]), and says where they came from. A graph
/// that cannot be built to measure its costs is named with the place in `file` of the node
/// at fault, as `render` names it.
pub fn apply_costs(
    costs: &fugue_engine::Costs,
    g: &mut TaskGraph,
    file: &Path,
    at: (u32, u64),
) -> anyhow::Result<fugue_engine::costs::CostOrigin> {
    apply_costs_within(costs, g, file, at, fugue_engine::costs::MEASURE_BUDGET)
}

/// [`apply_costs`], measured costs taking at most `budget`
/// ([`fugue_engine::Costs::apply_within`]).
pub fn apply_costs_within(
    costs: &fugue_engine::Costs,
    g: &mut TaskGraph,
    file: &Path,
    (rate, buffer): (u32, u64),
    budget: std::time::Duration,
) -> anyhow::Result<fugue_engine::costs::CostOrigin> {
    use fugue_engine::costs::CostsError;
    match costs.apply_within(g, f64::from(rate), buffer as usize, &registry(), budget) {
        Ok(origin) => Ok(origin),
        Err(CostsError::Measure(e)) => {
            let at = fugue_engine::check::error_at(g, &*e);
            Err(anyhow::Error::new(*e).context(format!(
                "cannot measure the node costs of {}{at} (--costs measured)",
                file.display()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// A usage error: exit code 2.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Whether `path` names the file that standard output is (`/dev/stdout`, `/proc/self/fd/1`,
/// or a path to the same file or pipe): the same device and inode.
pub fn is_standard_output(path: &std::path::Path) -> bool {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::MetadataExt as _;
    let Ok(named) = std::fs::metadata(path) else {
        return false;
    };
    let stdout = std::io::stdout();
    let Ok(fd) = stdout.as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == named.dev() && m.ino() == named.ino())
}

/// Returns a usage error (exit code 2) with this message.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(msg.into()))
}

/// The exit code for an error: 128 + the signal's number after SIGINT, SIGTERM or SIGHUP;
/// 2 for usage errors (an output file that exists without `--force`, a benchmark's configuration errors included), 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if let Some(sig) = crate::signals::received() {
        (128 + sig) as u8
    } else if e.chain().any(|c| c.downcast_ref::<Usage>().is_some())
        || e.chain().any(|c| {
            matches!(
                c.downcast_ref::<OutputError>(),
                Some(OutputError::Exists(_) | OutputError::Format(_))
            )
        })
        || e.chain().any(|c| {
            c.downcast_ref::<fugue_bench::BenchError>()
                .is_some_and(|b| b.is_config())
        })
        || e.chain().any(|c| {
            matches!(
                c.downcast_ref::<ReadError>(),
                Some(ReadError::UnknownFormat { .. })
            )
        })
    {
        2
    } else {
        1
    }
}

/// A command's error given to a benchmark: a usage error stays one.
pub fn bench_error(e: anyhow::Error) -> fugue_bench::BenchError {
    let msg = format!("{e:#}");
    if exit_code(&e) == 2 {
        fugue_bench::BenchError::Config(msg)
    } else {
        fugue_bench::BenchError::Failed(msg)
    }
}

/// The error's message: its causes joined with `: ` (a cause that the message already says,
/// as many errors' own sentences end with their cause, only once), user text quoted in it cut
/// to a readable length ([`fugue_graph::error::shorten_quotes`]), and so is any very long word
/// in it, a path say ([`shorten_words`]).
pub fn message(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if text.is_empty() {
            text = c;
        } else if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    one_line(&shorten_words(&fugue_graph::error::shorten_quotes(
        text.trim_end(),
    )))
}

/// `text` as one printable line: its control characters and bidirectional marks written as
/// escapes ([`fugue_graph::error::printable`]), a line break (a path's, a program's message)
/// too, so that a file name read from the command line cannot drive the terminal or split
/// a summary.
pub fn one_line(text: &str) -> String {
    fugue_graph::error::printable(text).replace('\n', "\\n")
}

pub use fugue_graph::error::{shorten_words, WORD_MAX};

/// Parses a `--format` value.
pub fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(&s.to_ascii_lowercase())
        .ok_or_else(|| format!("unknown format `{s}`; expected ag, stg or dot"))
}

/// [`OutputFile::check`](fugue_engine::output::OutputFile::check) of `output` for a command
/// that reads `graph` from `path`: never the graph file, nor a file its nodes read
/// ([`fugue_engine::output::graph_files`]), nor one of `also` (the command's other inputs: a costs file).
pub fn check_output_of(
    output: &Path,
    force: bool,
    path: &Path,
    graph: &TaskGraph,
    also: &[&Path],
) -> anyhow::Result<fugue_engine::output::OutputFile> {
    let files = fugue_engine::output::graph_files(path, graph);
    let mut read = vec![path];
    read.extend(files.iter().map(std::path::PathBuf::as_path));
    read.extend_from_slice(also);
    Ok(fugue_engine::output::OutputFile::check(
        output, force, &read,
    )?)
}

/// Refuses `output` when it is one of the files `graph` (read from `path`) makes its nodes
/// read ([`fugue_engine::output::graph_files`]), with or without --force: for a command that checks its output
/// before it reads the graph.
pub fn refuse_graph_files(output: &Path, path: &Path, graph: &TaskGraph) -> anyhow::Result<()> {
    match graph_file_at(output, path, graph) {
        Some(input) => Err(fugue_engine::output::OutputError::IsInput {
            path: output.to_path_buf(),
            input,
        }
        .into()),
        None => Ok(()),
    }
}

/// The file among those `graph` (read from `path`) makes its nodes read
/// ([`fugue_engine::output::graph_files`]) that `output` is (the same file by another name
/// too), if any.
pub fn graph_file_at(output: &Path, path: &Path, graph: &TaskGraph) -> Option<std::path::PathBuf> {
    let files = fugue_engine::output::graph_files(path, graph);
    let refs: Vec<&Path> = files.iter().map(std::path::PathBuf::as_path).collect();
    fugue_engine::output::same_file(output, &refs).map(Path::to_path_buf)
}

/// Reads a graph file (format from `format`, the command's `--format`, or the extension).
pub fn read_graph(path: &Path, format: Option<Format>) -> anyhow::Result<TaskGraph> {
    read_graph_hinted(path, format, true)
}

/// Reads a graph file named by a command that has no `--format` (the benchmarks'): the
/// format from the extension, and an unknown one's sentence names only the extensions.
pub fn read_graph_by_extension(path: &Path) -> anyhow::Result<TaskGraph> {
    read_graph_hinted(path, None, false)
}

/// [`read_graph`]; an unknown format's sentence offers `--format` when `format_flag`.
fn read_graph_hinted(
    path: &Path,
    format: Option<Format>,
    format_flag: bool,
) -> anyhow::Result<TaskGraph> {
    // A Faust program is a graph of one `faust` node.
    if format.is_none() && fugue_faust::is_dsp(path) {
        return Ok(fugue_faust::dsp_graph(path)?);
    }
    fugue_graph::read_file(path, format).map_err(|e| match e {
        ReadError::UnknownFormat { .. } => usage(format!(
            "{e}; name the file with one of these extensions (a Faust program must end in .dsp){}",
            if format_flag {
                ", or give a graph's format with --format ag, stg or dot"
            } else {
                ""
            }
        )),
        e => e.into(),
    })
}

/// Checks a `--seconds` value ([`fugue_engine::check_seconds`]): a usage error.
pub fn check_seconds(s: f64, max: f64, unit: Option<(f64, &str)>) -> anyhow::Result<()> {
    fugue_engine::check_seconds(s, max, unit).map_err(usage)
}

/// A progress bar of `total` steps on standard error, drawn with `template`.
pub fn progress_bar(total: u64, template: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// A spinner on standard error saying `what` and the time spent, ticking on its own thread
/// (hidden when standard error is not a terminal); `finish_and_clear` removes it.
pub fn spinner(what: &str) -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg}: {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(what.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// Prints a warning on standard error, user text quoted in it cut to a readable length.
pub fn warning(w: impl std::fmt::Display) {
    eprintln!(
        "fugue: warning: {}",
        one_line(&shorten_words(&fugue_graph::error::shorten_quotes(
            &w.to_string()
        )))
    );
}

/// Checks `--pipeline` ([`fugue_engine::check_pipeline`]): a usage error.
pub fn check_pipeline(
    pipeline: Option<fugue_engine::Pipeline>,
    buffer: Option<usize>,
    profile: bool,
) -> anyhow::Result<()> {
    fugue_engine::check_pipeline(pipeline, buffer, profile).map_err(usage)
}

/// Reads `--client-name`: the JACK client's name, which prefixes its ports (`NAME:out_1`):
/// not empty, without the `:` that separates the two, and at most
/// [`fugue_engine::JACK_CLIENT_NAME_MAX`] bytes.
pub fn jack_client_name(s: &str) -> Result<String, String> {
    let max = fugue_engine::JACK_CLIENT_NAME_MAX;
    if s.is_empty() {
        Err("a JACK client needs a name: its ports are named NAME:out_1, ...".to_string())
    } else if s.contains(':') {
        Err(format!("`{s}` holds a `:`, which separates a JACK port's client from its own name (NAME:out_1); choose a name without it"))
    } else if s.len() > max {
        Err(format!(
            "a JACK client's name holds at most {max} bytes, and this one has {}",
            s.len()
        ))
    } else {
        Ok(s.to_string())
    }
}

/// The reasons Rust's number parsers give, as a user reads them: `(parser's words, ours)`.
const NUMBER_REASONS: [(&str, &str); 6] = [
    (
        "invalid digit found in string",
        "expected a whole number (digits only)",
    ),
    (
        "cannot parse integer from empty string",
        "empty; expected a whole number",
    ),
    ("number too large to fit in target type", "too large"),
    ("number too small to fit in target type", "too small"),
    (
        "invalid float literal",
        "expected a number (such as 2, 0.5 or 1e-3)",
    ),
    (
        "cannot parse float from empty string",
        "empty; expected a number",
    ),
];

/// A command-line value error (`invalid value 'V' for '--flag <F>': REASON`) with the
/// number parser's reason said in plain words: a negative value for a count says it cannot
/// be negative, `N is not in A..=B` says the range as `from A to B`. `None` when the message
/// has no such reason (it is printed as it is).
pub fn plain_value_error(message: &str) -> Option<String> {
    let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
    let (head, reason) = first.rsplit_once("': ")?;
    let value = head
        .strip_prefix("error: invalid value '")
        .and_then(|v| v.split_once("' for '"))
        .map(|(v, _)| v)?;
    let negative = value
        .strip_prefix('-')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    let plain = if let Some((_, ours)) = NUMBER_REASONS.iter().find(|(r, _)| *r == reason) {
        if negative && reason == NUMBER_REASONS[0].0 {
            "cannot be negative".to_string()
        } else {
            ours.to_string()
        }
    } else {
        let (n, range) = reason.split_once(" is not in ")?;
        let (low, high) = range.split_once("..=")?;
        let number = |s: &str| {
            !s.is_empty()
                && s.trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
        };
        if !(number(n) && number(low) && number(high)) {
            return None;
        }
        format!("out of range: it must be from {low} to {high}")
    };
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!("\n{rest}")
    };
    Some(format!("{head}': {plain}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::plain_value_error;

    const MORE: &str = "\n\nFor more information, try '--help'.\n";

    fn said(value: &str, reason: &str) -> Option<String> {
        plain_value_error(&format!(
            "error: invalid value '{value}' for '--buffer <BUFFER>': {reason}{MORE}"
        ))
    }

    #[test]
    fn number_parsers_reasons_are_said_plainly() {
        let head = "error: invalid value 'abc' for '--buffer <BUFFER>': ";
        assert_eq!(
            said("abc", "invalid digit found in string").unwrap(),
            format!("{head}expected a whole number (digits only){MORE}")
        );
        assert!(said("-5", "invalid digit found in string")
            .unwrap()
            .contains("'-5' for '--buffer <BUFFER>': cannot be negative\n"));
        assert!(said("-", "invalid digit found in string")
            .unwrap()
            .contains("expected a whole number"));
        assert!(said("", "cannot parse integer from empty string")
            .unwrap()
            .contains("'' for '--buffer <BUFFER>': empty; expected a whole number"));
        assert!(said(
            "9".repeat(30).as_str(),
            "number too large to fit in target type"
        )
        .unwrap()
        .contains(": too large\n"));
        assert!(said("x", "invalid float literal")
            .unwrap()
            .contains(": expected a number (such as 2, 0.5 or 1e-3)\n"));
        assert!(said("99999999", "99999999 is not in 1..=1048576")
            .unwrap()
            .contains(
                "'99999999' for '--buffer <BUFFER>': out of range: it must be from 1 to 1048576\n"
            ));
    }

    #[test]
    fn other_reasons_are_left_alone() {
        assert_eq!(said("x", "must be a power of two"), None);
        assert_eq!(said("x", "a is not in b..=c"), None);
        assert_eq!(
            plain_value_error("error: unexpected argument '--x' found\n"),
            None
        );
    }
}
