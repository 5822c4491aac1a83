//! `fugue info FILE [--json]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use fugue_engine::Costs;
use fugue_graph::{analysis, Format};

use crate::util;

/// Arguments of `fugue info`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg or .dot).
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// The file's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
    /// Node costs behind the work and critical path: declared (from the file; 1 per node
    /// where it gives none), measured (calibrated now at --buffer and --rate), or a CSV file
    /// `node,cost` written by `fugue calibrate`.
    #[arg(long, default_value = "declared", value_parser = crate::exec_args::parse_costs)]
    pub costs: Costs,
    /// Frames per cycle of --costs measured.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz of --costs measured.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Fail (exit code 1) on a warning about the graph: an attribute no kind reads, a node
    /// that reaches no sink.
    #[arg(long)]
    pub strict: bool,
}

/// Runs `fugue info`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let mut g = util::read_graph(&a.file, a.format)?;
    crate::warn::report(&crate::warn::graph_warnings(&g, &a.file), a.strict)?;
    let format = a.format.or_else(|| Format::from_path(&a.file));
    let origin = a
        .costs
        .apply(&mut g, format, f64::from(a.rate), a.buffer as usize)?;
    let unit = origin.unit;
    let sources = g.sources();
    let sinks = g.sinks();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for n in g.nodes() {
        *kinds
            .entry(if n.kind.is_empty() {
                "(none)".into()
            } else {
                n.kind.clone()
            })
            .or_default() += 1;
    }
    let work = analysis::total_work(&g);
    let (cp, cp_nodes) = analysis::critical_path(&g, false);
    let (cp_comm, _) = analysis::critical_path(&g, true);
    let depth = analysis::depth(&g);
    let (width, method) = analysis::width(&g);
    let exact = method == analysis::WidthMethod::Exact;
    let cp_names: Vec<&str> = cp_nodes.iter().map(|&i| g.node(i).name.as_str()).collect();
    if a.json {
        let v = serde_json::json!({
            "file": a.file.display().to_string(),
            "nodes": g.len(),
            "edges": g.edges().len(),
            "sources": sources.len(),
            "sinks": sinks.len(),
            "kinds": kinds,
            "total_work": work,
            "costs": origin.kind,
            "cost_source": origin.source,
            "cost_unit": unit,
            "critical_path": cp,
            "critical_path_with_comm": cp_comm,
            "critical_path_nodes": cp_names,
            "depth": depth,
            "width": width,
            "width_exact": exact,
            "parallelism": if cp > 0.0 { work / cp } else { 0.0 },
            "deadline": g.deadline(),
        });
        println!("{v}");
    } else {
        let names = |ids: &[usize]| {
            let mut s: Vec<&str> = ids
                .iter()
                .take(8)
                .map(|&i| g.node(i).name.as_str())
                .collect();
            if ids.len() > 8 {
                s.push("...");
            }
            s.join(", ")
        };
        println!("file           {}", a.file.display());
        println!("nodes          {}", g.len());
        println!("edges          {}", g.edges().len());
        println!("sources        {} ({})", sources.len(), names(&sources));
        println!("sinks          {} ({})", sinks.len(), names(&sinks));
        let k: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("kinds          {}", k.join(", "));
        println!("costs          {}", origin.source);
        println!("total work     {} {unit}", num(work));
        println!(
            "critical path  {} {unit} ({} nodes{})",
            num(cp),
            cp_nodes.len(),
            if cp_comm != cp {
                format!("; {} with communication", num(cp_comm))
            } else {
                String::new()
            }
        );
        println!(
            "parallelism    {:.3} (total work / critical path)",
            if cp > 0.0 { work / cp } else { 0.0 }
        );
        println!("depth          {depth}");
        println!(
            "width          {width}{}",
            if exact {
                ""
            } else {
                " (widest level; a lower bound)"
            }
        );
        if let Some(d) = g.deadline() {
            println!("deadline       {d}");
        }
    }
    Ok(())
}

/// A cost without trailing zeros (`15`, `12.5`, `0.125`).
fn num(x: f64) -> String {
    // `+ 0.0` turns -0 into 0 (an empty sum is -0 in IEEE arithmetic).
    let s = format!("{:.3}", x + 0.0);
    match s.trim_end_matches('0').trim_end_matches('.') {
        "-0" => "0".to_string(),
        t => t.to_string(),
    }
}
