//! `fugue bench table`: every executor × graphs × buffer sizes with real DSP, checked against
//! seq ([`fugue_bench::table`]).

use std::path::PathBuf;

use fugue_bench::table::TableConfig;
use fugue_engine::Costs;
use fugue_sched::Algorithm;

use super::{Terminal, TuningArgs};
use crate::exec_args::parse_algorithm;

/// Arguments of `fugue bench table`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Graphs, comma-separated: line (ligne/ligne100.ag), diamond (losange/losange156.ag),
    /// rake (rateau/rateau101.ag), or paths of graph files.
    #[arg(long, default_value = "line,diamond,rake", value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// Buffer sizes (frames per cycle), comma-separated.
    #[arg(long, default_value = "64,128,512,2048", value_delimiter = ',')]
    pub buffers: Vec<usize>,
    /// Executors, comma-separated (seq, static, ws, ws-affinity, share, share-spin, levels, rayon), or
    /// `all` (every one, and the rayon peer). `seq` is always run: it is the reference.
    #[arg(long, default_value = "all")]
    pub executors: String,
    /// Threads, the calling thread included.
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Audio seconds rendered per run.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Runs per configuration (interleaved across executors).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// The corpus folder holding ligne/, losange/ and rateau/.
    #[arg(long, default_value = "../shared/data/ag")]
    pub corpus: PathBuf,
    /// Static schedule algorithm (for static).
    #[arg(long, default_value = "hlfet", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,
    /// Costs of the static schedule: measured (calibrated at each buffer size) or declared.
    #[arg(long, default_value = "measured", value_parser = ["measured", "declared"])]
    pub costs: String,
    /// Wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// Write README.md, raw.csv, summary.csv and table.md into this folder.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue bench table`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let config = TableConfig {
        shapes: args.shapes.into_iter().filter(|s| !s.trim().is_empty()).collect(),
        buffers: args.buffers,
        executors: args.executors,
        threads: args.threads as usize,
        seconds: args.seconds,
        runs: args.runs as usize,
        rate: args.rate,
        corpus: args.corpus,
        algorithm: args.algorithm,
        costs: if args.costs == "declared" { Costs::Declared } else { Costs::Measured },
        tuning: args.tuning.tuning(),
        output: args.output,
        force: args.force,
    };
    let result = fugue_bench::table::run(&config, &mut Terminal::default())?;
    print!("{}", result.markdown());
    if let Some(dir) = &config.output {
        result.write(dir, &super::command_line())?;
        eprintln!("wrote {}", dir.display());
    }
    Ok(())
}
