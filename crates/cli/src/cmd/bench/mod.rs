//! `fugue bench <subcommand>`: measurements that check their results before their time
//! counts.

pub mod capacity;
pub mod overhead;
pub mod ring;
mod ring_sweep;
pub mod study;
pub mod table;

/// Arguments of `fugue bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to measure.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// The benchmarks.
#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Throughput of the ordered ring against a mutex/condvar ring and peer queues; `--sweep`
    /// runs the whole grid and writes CSV, plots and a README.
    Ring(ring::Args),
    /// Per-cycle cost of running a graph of empty (checking) nodes, for each executor and
    /// the peers (rayon, oneTBB flow graph).
    Overhead(overhead::Args),
    /// Every executor x line/diamond/rake x buffer sizes with real DSP: cycle times and
    /// speedup against seq, outputs checked bit-identical to seq.
    Table(table::Args),
    /// The scheduling study: graphs x executors x threads x buffer sizes x load, run in real
    /// time; writes summary.csv, raw data, plots (SVG, PNG) and report.html.
    Study(study::Args),
    /// The machine's parallel capacity over time: each core's speed at running a graph's DSP
    /// while every core runs it, in units of the fastest (the bound of any speedup).
    Capacity(capacity::Args),
    /// (internal) A producer process of `fugue bench ring --processes`.
    #[command(hide = true)]
    RingProducer(ring::ProducerArgs),
}

/// Runs `fugue bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Ring(a) => ring::run(a),
        BenchCommand::Overhead(a) => overhead::run(a),
        BenchCommand::Table(a) => table::run(a),
        BenchCommand::Study(a) => study::run(a),
        BenchCommand::Capacity(a) => capacity::run(a),
        BenchCommand::RingProducer(a) => ring::run_producer(a),
    }
}
