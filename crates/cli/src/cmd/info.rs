//! `fugue info FILE [--json]`.

use std::path::PathBuf;

use fugue_engine::check::What;
use fugue_engine::report::GraphInfo;
use fugue_engine::Costs;
use fugue_graph::Format;

use crate::util;

/// Arguments of `fugue info`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg, .dot, or a Faust program .dsp).
    pub file: PathBuf,
    /// Print one JSON object instead of text. Its `sources` and `sinks` count the nodes with
    /// no edge in and no edge out (the graph's ends, whatever their kinds), as the text's
    /// "no edge in" and "no edge out".
    #[arg(long)]
    pub json: bool,
    /// The file's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
    /// Node costs behind the work and critical path: declared (from the file; 1 per node
    /// where it gives none), measured (calibrated now at --buffer and --rate), or a CSV file
    /// `node,cost` written by `fugue calibrate`.
    #[arg(long, default_value = "declared")]
    pub costs: Costs,
    /// Frames per cycle: of --costs measured, and the block the graph's nodes are checked at
    /// (a resampler's ratio must give a whole block at its node).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz: of --costs measured, and the rate the graph's nodes are checked at
    /// (a filter's frequency below half of it, a Faust program above 192 kHz).
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: u32,
    /// Fail (exit code 1) on a warning about the graph: an attribute no kind reads, a node
    /// that reaches no sink.
    #[arg(long)]
    pub strict: bool,
}

/// Runs `fugue info`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let mut g = util::read_graph(&a.file, a.format)?;
    // What rendering would refuse (an unknown kind, a node its kind cannot build) is an error
    // here too, said as `fugue check` says it.
    let refused: Vec<_> = fugue_engine::check::check_with(
        &g,
        &util::registry(),
        f64::from(a.rate),
        a.buffer as usize,
    )
    .into_iter()
    .filter(|p| matches!(p.what, What::Kind | What::Node))
    .collect();
    if !refused.is_empty() {
        crate::cmd::check::say(&refused, &a.file);
        anyhow::bail!(
            "{}: the graph cannot be rendered as written ({} problem{} listed above; `fugue check` lists every one)",
            a.file.display(),
            refused.len(),
            if refused.len() == 1 { "" } else { "s" }
        );
    }
    crate::warn::report(
        &crate::warn::graph_warnings(&g, &a.file, false, a.rate),
        a.strict,
    )?;
    let origin = util::apply_costs(&a.costs, &mut g, &a.file, (a.rate, a.buffer))?;
    let details =
        fugue_engine::check::details(&g, &util::registry(), f64::from(a.rate), a.buffer as usize);
    let info = GraphInfo::new(&g, &a.file, &origin).with_details(details);
    if a.json {
        println!("{}", serde_json::to_string(&info)?);
    } else {
        // Names read from files (a plugin's, a program's parameters) may hold control
        // characters: printed as escapes.
        print!("{}", fugue_graph::error::printable(&info.to_string()));
    }
    Ok(())
}
