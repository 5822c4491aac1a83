//! `fugue calibrate GRAPH`: measures each node's processing time at a buffer size and writes
//! the costs file (`node,cost`, cost = the 99th percentile of its time per cycle, in µs: not a
//! worst case, which a finite measurement cannot give) that `fugue schedule --costs`
//! and `fugue render --executor static --costs` read.

use std::path::PathBuf;

use fugue_engine::report::calibration;

use crate::util;

/// Arguments of `fugue calibrate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph to measure (.ag, .stg, .dot, or a Faust program .dsp; its nodes must be of
    /// known kinds).
    pub graph: PathBuf,
    /// The graph's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<fugue_graph::Format>,
    /// Frames per cycle (the buffer size the costs are for).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: u32,
    /// Measured cycles (after a warm-up of a tenth as many): each node is timed once per cycle.
    /// At most 10,000,000, and 256 MiB ÷ (8 × the graph's nodes) (the times kept).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub cycles: u64,
    /// Write the costs as CSV (`node,cost`, the 99th percentile in µs) to this file (a named
    /// pipe or a character device is written directly).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The most memory the measured times may take: 256 MiB.
const MAX_SAMPLE_BYTES: u64 = 256 << 20;

/// Runs `fugue calibrate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let graph = util::read_graph(&args.graph, args.format)?;
    // Refuse before measuring, not after.
    if args.output.as_ref().is_some_and(|o| o.as_os_str() == "-") {
        return Err(util::usage(
            "-o -: standard output carries the table of costs; name a CSV file (or /dev/stdout to mix them)",
        ));
    }
    // One time per node and measured cycle is kept (the percentiles need them all).
    let per_cycle = graph.len().max(1) as u64 * std::mem::size_of::<f64>() as u64;
    if per_cycle.saturating_mul(args.cycles) > MAX_SAMPLE_BYTES {
        return Err(anyhow::anyhow!(
            "--cycles {}: calibrate keeps one time per node and cycle, and {} cycles of the {} nodes of {} would take {} MiB, more than its {} MiB; ask at most {} cycles",
            args.cycles,
            args.cycles,
            graph.len(),
            args.graph.display(),
            per_cycle.saturating_mul(args.cycles).div_ceil(1 << 20),
            MAX_SAMPLE_BYTES >> 20,
            MAX_SAMPLE_BYTES / per_cycle
        ));
    }
    let out = match &args.output {
        Some(o) => Some(crate::util::check_output_of(
            o,
            args.force,
            &args.graph,
            &graph,
            &[],
        )?),
        None => None,
    };
    let cal = fugue_engine::calibrate(
        &graph,
        &crate::util::registry(),
        f64::from(args.rate),
        args.buffer as usize,
        args.cycles as usize,
    )
    .map_err(|e| {
        // The place in the file of a node that could not be built, as `render` gives it.
        let at = fugue_engine::check::error_at(&graph, &e);
        anyhow::Error::new(e).context(format!("cannot calibrate {}{at}", args.graph.display()))
    })?;
    print!("{}", calibration::table(&graph, &cal));
    // A feedback edge's two tasks (the block played, the block kept) are costed beside the
    // nodes, as a schedule counts them.
    let tasks = if graph.feedback_edges().is_empty() {
        format!("{} nodes", cal.len())
    } else {
        format!(
            "{} tasks ({} nodes, and the two of each feedback edge: {})",
            cal.len(),
            graph.written_nodes(),
            fugue_graph::FEEDBACK_TASKS
        )
    };
    println!(
        "{tasks}, buffer {} at {} Hz, {}; the costs are the 99th percentiles (not worst cases: the longest cycle is not measured)",
        args.buffer,
        args.rate,
        fugue_engine::report::counted(args.cycles as usize, "cycle")
    );
    if let Some(out) = &out {
        out.write(calibration::costs_csv(&cal).as_bytes())?;
        println!("wrote {}", out.path().display());
    }
    Ok(())
}
