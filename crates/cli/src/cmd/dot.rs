//! `fugue dot FILE [-o OUT]`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use fugue_graph::Format;

use crate::util;

/// Arguments of `fugue dot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg or .dot).
    pub file: PathBuf,
    /// Output file: .dot/.gv writes DOT text; .svg, .png or .pdf draws it with Graphviz.
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
    let Some(out) = a.output else {
        print!("{text}");
        return Ok(());
    };
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "dot" | "gv" => util::write_atomic(&out, a.force, text.as_bytes()),
        "svg" | "png" | "pdf" => {
            let tmp = util::temp_path(&out, a.force)?;
            let child = Command::new("dot")
                .arg(format!("-T{ext}"))
                .arg("-o")
                .arg(&tmp)
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn();
            let mut child = match child {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
                    "Graphviz's `dot` program was not found; install Graphviz (Debian/Ubuntu: `sudo apt-get install graphviz`, macOS: `brew install graphviz`) or write DOT text with `-o {}.dot`",
                    out.with_extension("").display()
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
                let _ = std::fs::remove_file(&tmp);
                anyhow::bail!(
                    "Graphviz's `dot` failed: {}",
                    String::from_utf8_lossy(&res.stderr).trim()
                );
            }
            std::fs::rename(&tmp, &out).with_context(|| format!("cannot write {}", out.display()))
        }
        _ => Err(util::usage(format!(
            "{}: unknown output type `{ext}`; expected .dot, .gv, .svg, .png or .pdf",
            out.display()
        ))),
    }
}
