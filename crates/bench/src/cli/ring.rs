//! `fugue bench ring`: the ordered ring's throughput against the mutex/condvar ring and peer
//! queues, one configuration or `--sweep` ([`crate::ring`]).

use std::path::PathBuf;

use fugue_ring::Padding;

use super::Env;
use crate::error::BenchError;
use crate::ring::producers::Plan;
use crate::ring::sweep::SweepConfig;
use crate::ring::{Impl, Point, ProducerCommand, RingConfig};
use crate::Progress;

/// Arguments of `fugue bench ring`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of producer threads (or processes).
    #[arg(long, default_value_t = 1)]
    pub producers: usize,
    /// Slots in the ring.
    #[arg(long, short = 'c', default_value_t = 1024)]
    pub capacity: usize,
    /// Implementation: the ordered ring's wait strategy, the mutex/condvar baseline, or a peer.
    #[arg(long, short = 's', default_value = "yield", value_parser = Impl::ALL.map(Impl::name))]
    pub strategy: String,
    /// Items to transfer.
    #[arg(long, short = 'n', default_value_t = 1_000_000)]
    pub items: u64,
    /// Bytes per item (at least 8; the peers accept 8, 16, 32, 64, 128, 256, 512, 1024, 4096).
    #[arg(long, default_value_t = 8)]
    pub item_size: usize,
    /// Slot padding of the ordered ring.
    #[arg(long, default_value = "cacheline", value_parser = ["cacheline", "none"])]
    pub padding: String,
    /// Run the producers as separate processes over the shared-memory ring.
    #[arg(long)]
    pub processes: bool,
    /// Pin threads to cores: the consumer's core, then the producers' (cycled), e.g. `0,1`.
    #[arg(long, value_delimiter = ',')]
    pub pin: Option<Vec<usize>>,
    /// Repeat the measurement and report the median (and the spread), 1 to 1000 times.
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub repeat: usize,
    /// Print one JSON object instead of a sentence.
    #[arg(long)]
    pub json: bool,
    /// Run the whole grid (capacities 1..65536 x implementations x 1-3 producers) and the
    /// producers experiment (spin, yield, park and mutex at `--producer-counts`), write
    /// raw.csv, summary.csv, plots and README.md into `-o DIR`.
    #[arg(long)]
    pub sweep: bool,
    /// Output folder of `--sweep` (one configuration writes no folder).
    #[arg(short, long, default_value = "ring-sweep", requires = "sweep")]
    pub output: PathBuf,
    /// Seconds each sweep point aims to last (items are scaled to it).
    #[arg(long, default_value_t = 0.25, requires = "sweep")]
    pub point_seconds: f64,
    /// Replace the files of an existing `--sweep` output folder.
    #[arg(long, requires = "sweep")]
    pub force: bool,
    /// Seconds a run may take: a run that has not transferred `--items` by then stops and is
    /// reported as not finished, with the items it did (threads only). Default: unbounded for
    /// one configuration, 10 for the sweep's producers experiment.
    #[arg(long, allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
    /// Producer counts of the sweep's producers experiment, e.g. `1,2,4,8,15` (default: 1, 2,
    /// 3, the powers of two below the cores, and the cores minus one).
    #[arg(long, value_delimiter = ',', requires = "sweep")]
    pub producer_counts: Option<Vec<usize>>,
    /// With `--sweep`: run only the producers experiment (`--items` items per run at
    /// `--capacity`, each run bounded by `--max-seconds`).
    #[arg(long, requires = "sweep")]
    pub only_producers: bool,
}

/// The run's time budget of `--max-seconds`, checked.
fn max_seconds(v: Option<f64>) -> Result<Option<std::time::Duration>, BenchError> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s <= 1e9 => {
            Ok(Some(std::time::Duration::from_secs_f64(s)))
        }
        Some(s) => Err(BenchError::Config(format!(
            "--max-seconds must be a positive number of seconds, at most 1e9, not {}",
            fugue_graph::short_number(s)
        ))),
    }
}

/// This binary as `fugue bench ring-producer`.
fn producer_command() -> Result<ProducerCommand, BenchError> {
    Ok(ProducerCommand {
        program: std::env::current_exe()
            .map_err(|e| BenchError::io("cannot find the fugue binary to re-run", e))?,
        args: vec!["bench".into(), "ring-producer".into()],
    })
}

/// Runs `fugue bench ring`.
pub fn run(a: Args, env: &Env, progress: &mut dyn Progress) -> Result<String, BenchError> {
    super::once_each("--producer-counts", a.producer_counts.as_deref())?;
    let padding = match a.padding.as_str() {
        "none" => Padding::None,
        _ => Padding::CacheLine,
    };
    let max_seconds = max_seconds(a.max_seconds)?;
    if a.sweep {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let producers = Plan {
            counts: a
                .producer_counts
                .unwrap_or_else(|| crate::ring::producers::default_counts(cores)),
            capacity: a.capacity,
            items: a.items,
            max_seconds: max_seconds.map_or(10.0, |d| d.as_secs_f64()),
        };
        let config = SweepConfig {
            item_size: a.item_size,
            padding,
            repeat: a.repeat,
            point_seconds: a.point_seconds,
            output: a.output,
            force: a.force,
            command: env.command.clone(),
            producer: producer_command()?,
            producers,
            only_producers: a.only_producers,
        };
        let sweep = crate::ring::sweep::run(&config, progress)?;
        sweep.write(&config)?;
        return Ok(format!("{}\n", sweep.sentence(&config)));
    }
    let point = Point {
        imp: Impl::from_name(&a.strategy).expect("a possible value"),
        producers: a.producers,
        capacity: a.capacity,
        item_size: a.item_size,
        items: a.items,
        padding,
        processes: a.processes.then(producer_command).transpose()?,
        pin: a.pin,
        cap: max_seconds,
    };
    let r = crate::ring::run(&RingConfig {
        point,
        repeat: a.repeat,
    })?;
    if a.json {
        return Ok(format!("{}\n", r.to_json()));
    }
    Ok(format!("{}\n", r.sentence()))
}
