//! `fugue dot FILE [-o OUT]`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use fugue_graph::Format;

use crate::output::Output;
use crate::util;

/// Arguments of `fugue dot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg or .dot).
    pub file: PathBuf,
    /// Output file: .dot/.gv writes DOT text; .svg, .png or .pdf draws it with Graphviz. A
    /// named pipe or a character device is written directly (DOT text unless its name ends
    /// in .svg, .png or .pdf).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// The input's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
}

/// Runs `fugue dot`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let g = util::read_graph(&a.file, a.format)?;
    let name = a
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "graph".into());
    let text = fugue_graph::write::to_dot(&g, &name);
    let Some(path) = a.output else {
        print!("{text}");
        return Ok(());
    };
    let mut ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let out = Output::check(&path, a.force, &[a.file.as_path()])?;
    if out.is_stream() && !["svg", "png", "pdf"].contains(&ext.as_str()) {
        // A pipe or a device named without a known extension gets DOT text.
        ext = "dot".into();
    }
    match ext.as_str() {
        "dot" | "gv" => out.write(text.as_bytes()),
        "svg" | "png" | "pdf" => {
            let tmp = out.temp()?;
            let child = Command::new("dot")
                .arg(format!("-T{ext}"))
                .arg("-o")
                .arg(tmp.path())
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn();
            let mut child = match child {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
                    "Graphviz's `dot` program was not found; install Graphviz (Debian/Ubuntu: `sudo apt-get install graphviz`, macOS: `brew install graphviz`) or write DOT text with `-o {}.dot`",
                    path.with_extension("").display()
                ),
                Err(e) => return Err(e).context("cannot run Graphviz's `dot`"),
            };
            child
                .stdin
                .take()
                .expect("piped")
                .write_all(text.as_bytes())
                .context("cannot send the graph to Graphviz")?;
            let res = child
                .wait_with_output()
                .context("Graphviz's `dot` failed")?;
            if !res.status.success() {
                anyhow::bail!(
                    "Graphviz's `dot` failed: {}",
                    String::from_utf8_lossy(&res.stderr).trim()
                );
            }
            out.commit(tmp)
        }
        _ => Err(util::usage(format!(
            "{}: unknown output type `{ext}`; expected .dot, .gv, .svg, .png or .pdf",
            path.display()
        ))),
    }
}
