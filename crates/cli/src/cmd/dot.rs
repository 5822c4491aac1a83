//! `fugue dot FILE [-o OUT]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fugue_engine::graphviz::{self, Drawing};
use fugue_graph::Format;

use crate::util;
use fugue_engine::output::OutputFile;

/// Arguments of `fugue dot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg, .dot, or a Faust program .dsp).
    pub file: PathBuf,
    /// Output file: .dot/.gv writes DOT text; .svg, .png or .pdf draws it with Graphviz. A
    /// named pipe or a character device is written directly (DOT text unless its name ends
    /// in .svg, .png or .pdf). Left out, or `-`: DOT text on standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// The input's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
    /// Seconds that Graphviz may take to draw the graph before it is stopped.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// Graphs with more nodes than this get a warning before Graphviz draws them: its layout is
/// worse than quadratic, and a few thousand nodes already take minutes.
pub const DRAW_WARN_NODES: usize = 2_000;

/// Runs `fugue dot`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let mut g = util::read_graph(&a.file, a.format)?;
    // The DOT text names the files its nodes read from where it is written (the output's
    // folder), as a render of it will read them; on standard output, where the text goes is
    // not known (`> ../g.dot`), so they are named absolutely.
    let written_in = a
        .output
        .as_deref()
        .map(|path| path.parent().unwrap_or(Path::new("")));
    rebase_files(&mut g, a.file.parent().unwrap_or(Path::new("")), written_in);
    let name = a
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "graph".into());
    let text = fugue_graph::write::to_dot(&g, &name);
    // `-o -` is standard output, as when `-o` is left out.
    let Some(path) = a.output.filter(|p| p != Path::new("-")) else {
        print!("{text}");
        return Ok(());
    };
    let mut ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let out = OutputFile::check(&path, a.force, &[a.file.as_path()])?;
    if out.is_stream() && !["svg", "png", "pdf"].contains(&ext.as_str()) {
        // A pipe or a device named without a known extension gets DOT text.
        ext = "dot".into();
    }
    match ext.as_str() {
        "dot" | "gv" => Ok(out.write(text.as_bytes())?),
        "svg" | "png" | "pdf" => {
            if g.len() > DRAW_WARN_NODES {
                util::warning(format!(
                    "{} has {} nodes; Graphviz may take minutes to draw more than {DRAW_WARN_NODES} (it is stopped after --timeout {} s); `-o {}.dot` writes the DOT text at once",
                    a.file.display(),
                    g.len(),
                    a.timeout,
                    path.with_extension("").display()
                ));
            }
            let tmp = out.temp()?;
            let spinner = util::spinner(&format!("Graphviz is drawing {} nodes", g.len()));
            let drawing = Drawing {
                dot: text,
                format: &ext,
                to: tmp.path(),
                file: &a.file,
                nodes: g.len(),
                output: &path,
                timeout: Duration::from_secs(a.timeout),
            };
            let drawn = graphviz::draw(drawing, crate::signals::received);
            spinner.finish_and_clear();
            drawn?;
            Ok(out.commit(tmp)?)
        }
        _ => Err(util::usage(format!(
            "{}: unknown output type `{ext}`; expected .dot, .gv, .svg, .png or .pdf",
            path.display()
        ))),
    }
}

/// Makes the `file` attributes of `graph` (read from folder `from`), which name files from
/// `from`, name them from folder `to`: unchanged when both are the same folder or the path is
/// absolute, else made absolute (a relative path from `to` could pass through a link); made
/// absolute too when `to` is not known (standard output).
fn rebase_files(graph: &mut fugue_graph::TaskGraph, from: &Path, to: Option<&Path>) {
    // A folder resolved (links followed); the empty path of a bare file name is `.`.
    let real = |dir: &Path| {
        std::fs::canonicalize(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
    };
    if let Some(to) = to {
        if matches!((real(from), real(to)), (Ok(a), Ok(b)) if a == b) {
            return;
        }
    }
    for v in 0..graph.len() {
        let Some(fugue_graph::Value::Str(f)) = graph.node(v).attr("file").cloned() else {
            continue;
        };
        let path = Path::new(&f);
        if path.is_absolute() || f.is_empty() {
            continue;
        }
        let joined = from.join(path);
        // The file's folder resolved where it exists (the file itself may be missing: then
        // a render says so, as it would have from the graph).
        let absolute = match (joined.parent(), joined.file_name()) {
            (Some(dir), Some(name)) => real(dir)
                .map(|d| d.join(name))
                .or_else(|_| std::path::absolute(&joined)),
            _ => std::path::absolute(&joined),
        };
        match absolute.as_ref().map(|a| a.to_str()) {
            Ok(Some(text)) => {
                graph.set_attr(v, "file", fugue_graph::Value::Str(text.to_string()));
            }
            // A folder whose name is not UTF-8 cannot be written in a graph's text.
            _ => util::warning(format!(
                "node `{}`: its file `{f}` is left as the graph names it, relative to {}, which the DOT text cannot name from where it is written",
                graph.node(v).name,
                if from.as_os_str().is_empty() { ".".to_string() } else { from.display().to_string() }
            )),
        }
    }
}
