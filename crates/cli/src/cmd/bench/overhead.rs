//! `fugue bench overhead`: the per-cycle cost of a graph of empty, checking nodes for each
//! executor and the peers ([`fugue_bench::overhead`]).

use std::path::PathBuf;

use fugue_bench::overhead::{GraphSource, OverheadConfig, Shape};
use fugue_sched::Algorithm;

use super::{Terminal, TuningArgs};
use crate::exec_args::parse_algorithm;

/// Arguments of `fugue bench overhead`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A generated graph: line, diamond or rake (with --nodes).
    #[arg(long, value_parser = ["line", "diamond", "rake"], conflicts_with = "graph", required_unless_present = "graph")]
    pub shape: Option<String>,
    /// Nodes of the generated graph (a line has exactly N; a diamond the nearest of
    /// 5*2^d-4 = 6, 16, 36, 76, 156, 316...; a rake the nearest of 3k+2).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub nodes: u64,
    /// A graph file instead: its DAG, every node replaced by an empty one.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Threads, the calling thread included.
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Executors, comma-separated: seq, static, ws, ws-affinity, share, share-spin, levels, and the peers
    /// rayon and tbb; `all` for every one (tbb when its harness is built).
    #[arg(long, short = 'e', default_value = "ws")]
    pub executor: String,
    /// Static schedule algorithm (for static): hlfet, etf, cpfd, random, optimal, best.
    #[arg(long, default_value = "hlfet", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,
    /// Sleep this long between cycles (as an audio thread waits for the next period), in µs.
    #[arg(long, default_value_t = 0)]
    pub idle_us: u64,
    /// Timed cycles per run.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub cycles: u64,
    /// Untimed cycles before each run.
    #[arg(long, default_value_t = 1000)]
    pub warmup: u64,
    /// Runs per executor (interleaved); medians and spread are over runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// The oneTBB harness [default: $FUGUE_TBB_HARNESS, else target/peers/tbb-flow].
    #[arg(long)]
    pub tbb: Option<PathBuf>,
    /// Print one JSON object per executor instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue bench overhead`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let graph = match (&args.graph, args.shape.as_deref()) {
        (Some(path), _) => GraphSource::File(path.clone()),
        (None, Some("line")) => GraphSource::Shape(Shape::Line, args.nodes as usize),
        (None, Some("rake")) => GraphSource::Shape(Shape::Rake, args.nodes as usize),
        (None, Some("diamond")) => GraphSource::Shape(Shape::Diamond, args.nodes as usize),
        _ => return Err(crate::util::usage("give --shape line|diamond|rake or --graph FILE")),
    };
    let config = OverheadConfig {
        graph,
        threads: args.threads as usize,
        executors: args.executor,
        algorithm: args.algorithm,
        idle_us: args.idle_us,
        cycles: args.cycles as usize,
        warmup: args.warmup as usize,
        runs: args.runs as usize,
        tuning: args.tuning.tuning(),
        tbb: args.tbb,
    };
    let result = fugue_bench::overhead::run(&config, &mut Terminal::default())?;
    if args.json {
        result.to_json().iter().for_each(|v| println!("{v}"));
    } else {
        print!("{}", result.text());
    }
    Ok(())
}
