//! `fugue bench capacity`: the machine's parallel capacity over time
//! ([`fugue_bench::capacity`]).

use std::path::PathBuf;
use std::time::Duration;

use fugue_bench::capacity::CapacityConfig;

use super::Terminal;

/// Arguments of `fugue bench capacity`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph whose DSP the cores run.
    #[arg(long, default_value = "../shared/data/ag/rateau/rateau101.ag")]
    pub graph: PathBuf,
    /// Frames per cycle.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Cores probed side by side (the first ones this process may use).
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// How long to follow the capacity, in seconds.
    #[arg(long, default_value_t = 20.0)]
    pub seconds: f64,
    /// Length of one probe, in milliseconds.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(5..=60_000))]
    pub window_ms: u64,
    /// Print one JSON object (per-window values and the summary) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue bench capacity`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let config = CapacityConfig {
        graph: args.graph,
        buffer: args.buffer as usize,
        rate: args.rate,
        threads: args.threads as usize,
        seconds: args.seconds,
        window: Duration::from_millis(args.window_ms),
    };
    let mut terminal = Terminal {
        json: args.json,
        bar: None,
    };
    let result = fugue_bench::capacity::run(&config, &mut terminal)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result.to_json(&config))?);
    } else {
        println!("{}", result.sentence(&config));
    }
    Ok(())
}
