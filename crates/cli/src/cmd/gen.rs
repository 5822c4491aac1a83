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
    /// rounded to the nearest size 5*2^d-4 (6, 16, 36, ...) that the node limit allows.
    Diamond,
    /// `--branches` chains `osc -> mod -> mod` merged by one mix (the corpus's `rateau`).
    Rake,
    /// `--layers` layers of `--width` nodes, edges between consecutive layers with probability `--probability` (each node after the first layer gets one predecessor at least).
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
    /// Branches of a rake [default: 4].
    #[arg(long, short = 'k')]
    pub branches: Option<usize>,
    /// Layers of a layered graph [default: 5].
    #[arg(long)]
    pub layers: Option<usize>,
    /// Nodes per layer of a layered graph [default: 4].
    #[arg(long)]
    pub width: Option<usize>,
    /// Edge probability (layered, random) [default: 0.3].
    #[arg(long = "probability", visible_alias = "p")]
    pub p: Option<f64>,
    /// Seed of the random generators (layered, random) [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Smallest and largest node cost (wcet, microseconds) of random graphs (layered,
    /// random), as `LO,HI` [default: 1,20].
    #[arg(long)]
    pub costs: Option<String>,
    /// Overwrite the output file if it exists (the size limits, 1,000,000 nodes and
    /// 10,000,000 edges expected, hold with it too: docs/limits.md).
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue gen`.
pub fn run(a: Args) -> anyhow::Result<()> {
    unread(&a)?;
    let p = a.p.unwrap_or(0.3);
    if !(0.0..=1.0).contains(&p) {
        return Err(util::usage(format!(
            "--probability {} is not a probability between 0 and 1",
            fugue_engine::report::shown(p)
        )));
    }
    let costs: CostRange = a
        .costs
        .as_deref()
        .unwrap_or("1,20")
        .parse()
        .map_err(util::usage)?;
    let shape = shape(&a, costs)?;
    // The size, checked before anything is generated (--force only overwrites).
    shape
        .check_size()
        .map_err(|e| util::usage(format!("{e} (docs/limits.md)")))?;
    let out =
        fugue_engine::output::OutputFile::check_format(&a.output, a.force, &[], "ag", || {
            format!(
                "{}: the output of fugue gen is an .ag file",
                a.output.display()
            )
        })?;
    let g = shape.generate();
    // A random draw may leave no edge at all: every node a source, nothing to render.
    if !g.nodes().iter().any(|n| n.kind == "sink") {
        return Err(util::usage(format!(
            "the graph drawn ({}) has no edge, so no sink: nothing of it could be rendered; raise --probability, or change --seed",
            fugue_engine::report::counted(g.len(), "node")
        )));
    }
    let text = fugue_graph::write::to_ag(&g);
    // What no command of fugue would read back is not written.
    let limit = fugue_graph::read::MAX_FILE_BYTES;
    if text.len() as u64 > limit {
        return Err(util::usage(format!(
            "this graph ({} nodes, {} edges) takes {} MiB as an .ag file, more than the {} MiB a graph file may have (docs/limits.md); ask for fewer nodes or edges",
            g.len(),
            g.edges().len(),
            (text.len() as u64).div_ceil(1 << 20),
            limit >> 20
        )));
    }
    out.write(text.as_bytes())?;
    eprintln!(
        "wrote {} ({}, {})",
        a.output.display(),
        fugue_engine::report::counted(g.len(), "node"),
        fugue_engine::report::counted(g.edges().len(), "edge")
    );
    // A random draw may leave nodes whose outputs reach no sink: said in one line (check
    // names them, and --strict refuses the file).
    let unheard: usize = fugue_engine::lint::lint(&g, &util::registry(), 48_000.0)
        .iter()
        .map(|w| match w {
            fugue_engine::lint::Warning::Unheard { .. } => 1,
            fugue_engine::lint::Warning::UnheardMore { more } => *more,
            _ => 0,
        })
        .sum();
    if unheard > 0 {
        let (reach, them) = if unheard == 1 {
            ("reaches", "it")
        } else {
            ("reach", "them")
        };
        util::warning(format!(
            "{} of the graph drawn {reach} no sink: computed every cycle and never heard (`fugue check {}` names {them}, and --strict refuses the file); change --seed or raise --probability for a graph without {them}",
            fugue_engine::report::counted(unheard, "node"),
            a.output.display(),
        ));
    }
    Ok(())
}

/// Refuses a flag that the shape does not read (`gen rake --nodes 50` would otherwise
/// give a rake of the default 4 branches without a word): a usage error naming those it reads.
fn unread(a: &Args) -> anyhow::Result<()> {
    let given = [
        ("--nodes", a.nodes.is_some()),
        ("--depth", a.depth.is_some()),
        ("--branches", a.branches.is_some()),
        ("--layers", a.layers.is_some()),
        ("--width", a.width.is_some()),
        ("--probability", a.p.is_some()),
        ("--seed", a.seed.is_some()),
        ("--costs", a.costs.is_some()),
    ];
    let (name, reads): (&str, &[&str]) = match a.shape {
        Shape::Line => ("line", &["--nodes"]),
        Shape::Diamond => ("diamond", &["--depth", "--nodes"]),
        Shape::Rake => ("rake", &["--branches"]),
        Shape::Layered => (
            "layered",
            &["--layers", "--width", "--probability", "--seed", "--costs"],
        ),
        Shape::Random => ("random", &["--nodes", "--probability", "--seed", "--costs"]),
    };
    match given
        .iter()
        .find(|(flag, set)| *set && !reads.contains(flag))
    {
        Some((flag, _)) => Err(util::usage(format!(
            "fugue gen {name} does not read {flag}; it reads {}{}",
            reads.join(", "),
            match a.shape {
                Shape::Rake => " (a rake of k branches has 3k + 2 nodes)",
                Shape::Layered => " (layers x width nodes)",
                _ => "",
            }
        ))),
        None => Ok(()),
    }
}

/// The shape the flags ask for (usage errors for what is missing or out of range).
fn shape(a: &Args, costs: CostRange) -> anyhow::Result<gen::Shape> {
    let (p, seed) = (a.p.unwrap_or(0.3), a.seed.unwrap_or(1));
    Ok(match a.shape {
        Shape::Line => gen::Shape::Line {
            nodes: need(a.nodes, "--nodes", 2)?,
        },
        Shape::Diamond => {
            let depth = match (a.depth, a.nodes) {
                (Some(_), Some(_)) => {
                    return Err(util::usage(
                        "fugue gen diamond takes --depth D or --nodes N, not both (the depth sets the size)",
                    ))
                }
                (Some(d), None) => d,
                (None, Some(0)) => {
                    return Err(util::usage(
                        "--nodes 0 is too small: a diamond has 6 nodes at least",
                    ))
                }
                (None, Some(n)) => gen::nearest_diamond(n),
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
            gen::Shape::Diamond { depth }
        }
        Shape::Rake if a.branches == Some(0) => {
            return Err(util::usage("--branches must be at least 1"))
        }
        Shape::Rake => gen::Shape::Rake {
            branches: a.branches.unwrap_or(4),
        },
        Shape::Layered => gen::Shape::Layered {
            // One layer is sources alone: no sink, nothing to hear.
            layers: at_least(a.layers.unwrap_or(5), "--layers", 2)?,
            width: at_least(a.width.unwrap_or(4), "--width", 1)?,
            p,
            costs,
            seed,
        },
        // No edge can be drawn: no sink, nothing to render (said before anything is drawn).
        Shape::Random if p == 0.0 => {
            return Err(util::usage(
                "--probability 0 draws no edge, so the graph would have no sink and nothing of it could be rendered; give a probability above 0",
            ))
        }
        Shape::Random => gen::Shape::Random {
            nodes: need(a.nodes, "--nodes", 2)?,
            p,
            costs,
            seed,
        },
    })
}

/// `v` when it is at least `min`; a usage error naming `flag` otherwise.
fn at_least(v: usize, flag: &str, min: usize) -> anyhow::Result<usize> {
    need(Some(v), flag, min)
}

/// The value of `flag`, which this shape needs, when it is at least `min`.
fn need(v: Option<usize>, flag: &str, min: usize) -> anyhow::Result<usize> {
    match v {
        Some(n) if n >= min => Ok(n),
        Some(n) => Err(util::usage(format!(
            "{flag} {n} is too small (at least {min})"
        ))),
        None => Err(util::usage(format!("this shape needs {flag}"))),
    }
}
