//! `fugue gen line|diamond|rake|layered|random [options] -o FILE.ag`.

use std::path::PathBuf;

use fugue_graph::gen::{self, CostRange};

use crate::util;

/// The shape to generate.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Shape {
    /// `osc -> mod -> ... -> sink`, `--nodes` nodes (the corpus's `ligne`).
    Line,
    /// Split tree, `mod` branches, merge tree (the corpus's `losange`): `--depth`, or `--nodes`
    /// rounded to the nearest size 5*2^d-4.
    Diamond,
    /// `--branches` chains `osc -> mod -> mod` merged by one mix (the corpus's `rateau`).
    Rake,
    /// `--layers` layers of `--width` nodes, edges between consecutive layers with probability `--probability`.
    Layered,
    /// The corpus's random DAG: `--nodes` nodes in random order, each forward edge with probability `--probability`.
    Random,
}

/// Arguments of `fugue gen`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shape to generate.
    pub shape: Shape,
    /// Output .ag file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Number of nodes (line, random; diamond: rounded to a diamond size).
    #[arg(long, short = 'n')]
    pub nodes: Option<usize>,
    /// Depth of a diamond (levels of splits); 5 gives the 156-node diamond.
    #[arg(long)]
    pub depth: Option<usize>,
    /// Branches of a rake.
    #[arg(long, short = 'k', default_value_t = 4)]
    pub branches: usize,
    /// Layers of a layered graph.
    #[arg(long, default_value_t = 5)]
    pub layers: usize,
    /// Nodes per layer of a layered graph.
    #[arg(long, default_value_t = 4)]
    pub width: usize,
    /// Edge probability (layered, random).
    #[arg(long = "probability", visible_alias = "p", default_value_t = 0.3)]
    pub p: f64,
    /// Seed of the random generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Smallest and largest node cost (wcet, microseconds) of random graphs, as `LO,HI`.
    #[arg(long, default_value = "1,20")]
    pub costs: String,
    /// Overwrite the output file if it exists, and generate a graph larger than the limits
    /// (1,000,000 nodes, 10,000,000 edges expected).
    #[arg(long)]
    pub force: bool,
}

/// The most nodes `fugue gen` makes without `--force`.
pub const MAX_NODES: f64 = 1_000_000.0;
/// The most edges (expected, for random shapes) `fugue gen` makes without `--force`.
pub const MAX_EDGES: f64 = 10_000_000.0;

/// Refuses a graph of `nodes` nodes and `edges` (expected) edges beyond the limits unless
/// `force`.
fn check_size(nodes: f64, edges: f64, force: bool) -> anyhow::Result<()> {
    if force || (nodes <= MAX_NODES && edges <= MAX_EDGES) {
        return Ok(());
    }
    let (what, n, max) = if nodes > MAX_NODES {
        ("nodes", nodes, MAX_NODES)
    } else {
        ("edges (expected)", edges, MAX_EDGES)
    };
    Err(util::usage(format!(
        "this graph would have {n:.0} {what}, more than the limit of {max:.0}; pass --force to generate it anyway"
    )))
}

/// Runs `fugue gen`.
pub fn run(a: Args) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.p) {
        return Err(util::usage(format!(
            "-p {} is not a probability between 0 and 1",
            a.p
        )));
    }
    let costs = {
        let parts: Vec<Option<f64>> = a
            .costs
            .split(',')
            .map(|s| s.trim().parse::<f64>().ok())
            .collect();
        match parts.as_slice() {
            [Some(lo), Some(hi)] if *lo >= 0.0 && hi >= lo && hi.is_finite() => {
                CostRange { lo: *lo, hi: *hi }
            }
            _ => {
                return Err(util::usage(format!(
                    "--costs `{}` must be two numbers LO,HI with 0 <= LO <= HI",
                    a.costs
                )))
            }
        }
    };
    // The size, checked before anything is generated.
    let (nodes, edges) = match a.shape {
        Shape::Line => {
            let n = need(a.nodes, "--nodes", 2)? as f64;
            (n, n)
        }
        Shape::Diamond => match (a.depth, a.nodes) {
            (Some(d), _) if d <= 20 => {
                let n = gen::diamond_nodes(d) as f64;
                (n, 2.0 * n)
            }
            (_, Some(n)) => (n as f64, 2.0 * n as f64),
            _ => (0.0, 0.0),
        },
        Shape::Rake => {
            let n = 3.0 * a.branches as f64 + 2.0;
            (n, n)
        }
        Shape::Layered => {
            let n = a.layers as f64 * a.width as f64;
            (n, n * a.width as f64 * a.p)
        }
        Shape::Random => {
            let n = need(a.nodes, "--nodes", 1)? as f64;
            (n, n * (n - 1.0) / 2.0 * a.p)
        }
    };
    check_size(nodes, edges, a.force)?;
    let g = match a.shape {
        Shape::Line => gen::line(need(a.nodes, "--nodes", 2)?),
        Shape::Diamond => {
            let depth = match (a.depth, a.nodes) {
                (Some(d), _) => d,
                (None, Some(n)) => (1..=20)
                    .min_by_key(|&d| gen::diamond_nodes(d).abs_diff(n))
                    .unwrap_or(1),
                (None, None) => {
                    return Err(util::usage(
                        "fugue gen diamond needs --depth D or --nodes N",
                    ))
                }
            };
            if !(1..=20).contains(&depth) {
                return Err(util::usage(format!(
                    "--depth {depth} is out of range 1..=20"
                )));
            }
            gen::diamond(depth)
        }
        Shape::Rake => {
            if a.branches == 0 {
                return Err(util::usage("--branches must be at least 1"));
            }
            gen::rake(a.branches)
        }
        Shape::Layered => gen::layered(a.layers, a.width, a.p, costs, a.seed),
        Shape::Random => gen::random_dag(need(a.nodes, "--nodes", 1)?, a.p, costs, a.seed),
    };
    let out = fugue_engine::output::OutputFile::check(&a.output, a.force, &[])?;
    if a.output.extension().is_none_or(|e| e != "ag") && !out.is_stream() {
        return Err(util::usage(format!(
            "{}: the output of fugue gen is an .ag file",
            a.output.display()
        )));
    }
    out.write(fugue_graph::write::to_ag(&g).as_bytes())?;
    eprintln!(
        "wrote {} ({} nodes, {} edges)",
        a.output.display(),
        g.len(),
        g.edges().len()
    );
    Ok(())
}

fn need(v: Option<usize>, flag: &str, min: usize) -> anyhow::Result<usize> {
    match v {
        Some(n) if n >= min => Ok(n),
        Some(n) => Err(util::usage(format!(
            "{flag} {n} is too small (at least {min})"
        ))),
        None => Err(util::usage(format!("this shape needs {flag}"))),
    }
}
