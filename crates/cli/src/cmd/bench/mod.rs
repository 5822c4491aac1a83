//! `fugue bench <subcommand>`: the flags of each benchmark become its configuration in
//! fugue-bench, which measures (checking results before their time counts); this module
//! prints the results and the progress.

pub mod capacity;
pub mod overhead;
pub mod ring;
pub mod study;
pub mod table;

use fugue_bench::{Event, Progress};

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

/// The command line, for the READMEs of results folders.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Shows a benchmark's progress: lines and warnings on standard error, capacity windows on
/// standard output (unless JSON is printed), steps as a progress bar.
#[derive(Default)]
struct Terminal {
    json: bool,
    bar: Option<indicatif::ProgressBar>,
}

impl Progress for Terminal {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Line(l) => eprintln!("{l}"),
            Event::Warning(w) => eprintln!("fugue: warning: {w}"),
            Event::Window { at_s, capacity } if !self.json => {
                println!("{}", fugue_bench::capacity::window_line(at_s, capacity));
            }
            Event::Window { .. } => {}
            Event::Start { total } => {
                let bar = indicatif::ProgressBar::new(total);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "study {bar:40} {pos}/{len} runs  {elapsed} (about {eta} left)  {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                self.bar = Some(bar);
            }
            Event::Step(m) => self.bar.iter().for_each(|b| b.set_message(m.to_string())),
            Event::StepDone => self.bar.iter().for_each(|b| b.inc(1)),
            Event::Finished => self.bar.take().iter().for_each(|b| b.finish_and_clear()),
        }
    }
}

impl Drop for Terminal {
    /// A bar left by a failed or interrupted run stays as it was.
    fn drop(&mut self) {
        self.bar.take().iter().for_each(|b| b.abandon());
    }
}

/// The flags that tune the executors, shared by `bench overhead` and `bench table`.
#[derive(clap::Args, Debug)]
pub struct TuningArgs {
    /// Between cycles, how long workers spin before parking, in µs [default: the executors'].
    #[arg(long)]
    pub idle_spin_us: Option<u64>,
    /// Inside a cycle, how long a thread with nothing to do spins before sleeping, in µs
    /// [default: the executors'].
    #[arg(long)]
    pub steal_spin_us: Option<u64>,
    /// Busy-wait iterations (CPU relax hint) before a waiting thread starts yielding
    /// (sched_yield) for the rest of its budget [default: the executors'].
    #[arg(long)]
    pub spins: Option<u32>,
    /// Work stealing's threshold.
    #[command(flatten)]
    pub steal: crate::exec_args::StealArgs,
    /// Schedule the graph node by node instead of merging chains of nodes into units.
    #[arg(long)]
    pub no_merge_chains: bool,
    /// Pin thread i to core i (the calling thread to core 0), for fugue's executors and the
    /// peers alike (rayon's pool thread i to core i mod cores, oneTBB's arena slot i to core
    /// i mod cores).
    #[arg(long)]
    pub pin: bool,
}

impl TuningArgs {
    /// The library's tuning.
    pub fn tuning(&self) -> fugue_bench::runner::Tuning {
        fugue_bench::runner::Tuning {
            idle_spin_us: self.idle_spin_us,
            steal_spin_us: self.steal_spin_us,
            spins: self.spins,
            min_steal_us: self.steal.min_steal_us,
            merge_chains: !self.no_merge_chains,
            pin: self.pin,
        }
    }
}
