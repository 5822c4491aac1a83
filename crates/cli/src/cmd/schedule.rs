//! `fugue schedule FILE --algorithm A --processors P [...]`: a static schedule of a graph,
//! printed as tables per processor (or JSON), with its metrics and an optional Gantt chart.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use fugue_engine::report::ScheduleReport;
use fugue_engine::Costs;
use fugue_graph::{analysis, Format};
use fugue_sched::{gantt, Algorithm, Options};

use crate::util;
use fugue_engine::output::OutputFile;

/// Arguments of `fugue schedule`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph file (.ag, .stg, .dot, or a Faust program .dsp).
    pub file: PathBuf,
    /// The algorithm: hlfet, etf, cpfd, random, optimal (exact branch-and-bound among the schedules that run each task once) or best (the
    /// shortest of the heuristics).
    #[arg(long, short = 'a', default_value = "best")]
    pub algorithm: Algorithm,
    /// Number of processors, 1 to 4096 (the schedule uses at most this many) [default: the
    /// cores this process may use].
    #[arg(long, short = 'p', value_parser = fugue_bench::cli::count(MAX_PROCESSORS))]
    pub processors: Option<u64>,
    /// Seed of the random priorities (random, and the random run inside best and optimal)
    /// [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time limit, in seconds, counted from the start (reading the graph included): the exact
    /// search returns the best schedule it found by then; ETF or CPFD that run out of time give
    /// way to HLFET (best leaves them out), and a warning says so.
    #[arg(long, default_value_t = 10.0)]
    pub time_limit: f64,
    /// Communication cost of every edge, paid when its two tasks run on different processors
    /// (replaces the costs of the file; without it, .dot edge weights are used, else 0).
    #[arg(long)]
    pub comm_cost: Option<f64>,
    /// Computation costs: declared (from the file; 1 per node where it gives none), measured
    /// (calibrated now at --buffer and --rate), or a CSV file of `node,cost` rows (written by
    /// `fugue calibrate`) that override the costs of the nodes it names.
    #[arg(long, default_value = "declared")]
    pub costs: Costs,
    /// Frames per cycle of --costs measured [default: 512].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: Option<u64>,
    /// Sample rate in Hz of --costs measured [default: 48000].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: Option<u32>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Draw the schedule as a Gantt chart into this SVG file.
    #[arg(long, value_name = "OUT.svg")]
    pub gantt: Option<PathBuf>,
    /// Overwrite the Gantt file if it exists.
    #[arg(long)]
    pub force: bool,
    /// The file's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<Format>,
}

/// The most processors a schedule is made for (docs/limits.md): the algorithms keep state
/// per processor.
pub const MAX_PROCESSORS: u64 = 4096;

/// Runs `fugue schedule`.
pub fn run(a: Args) -> anyhow::Result<()> {
    // The time limit counts from here: reading and preparing the graph count against it.
    let started = Instant::now();
    let processors = a
        .processors
        .map(|p| p as usize)
        .unwrap_or_else(fugue_exec::placement::available_cores);
    if processors == 0 {
        return Err(util::usage("--processors must be at least 1"));
    }
    if !(a.time_limit.is_finite() && a.time_limit >= 0.0) {
        return Err(util::usage(format!(
            "--time-limit must be a number of seconds >= 0, not {}",
            fugue_engine::report::shown(a.time_limit)
        )));
    }
    if let Some(c) = a.comm_cost {
        if !fugue_graph::is_cost(c) {
            return Err(util::usage(format!(
                "--comm-cost must be a number from 0 to 1e12, not {}",
                fugue_engine::report::shown(c)
            )));
        }
    }
    // Flags the schedule asked for does not read, said (they would change nothing).
    if a.seed.is_some()
        && !matches!(
            a.algorithm,
            Algorithm::Random | Algorithm::Best | Algorithm::Optimal
        )
    {
        util::warning(format!(
            "--seed applies to --algorithm random, best or optimal only; it is ignored with --algorithm {}",
            a.algorithm
        ));
    }
    for (flag, given) in [
        ("--buffer", a.buffer.is_some()),
        ("--rate", a.rate.is_some()),
    ] {
        if given && !matches!(a.costs, Costs::Measured) {
            util::warning(format!(
                "{flag} applies to --costs measured only (the costs measured now); it is ignored here"
            ));
        }
    }
    if a.force && a.gantt.is_none() {
        util::warning("--force applies to --gantt's file only; no file is written here");
    }
    // Fail before a long search rather than after it.
    // The destination first (a directory, a device or a pipe is said as such), then the
    // name: a file named for another format is refused.
    let gantt_out = match &a.gantt {
        Some(p) => {
            let mut inputs = vec![a.file.as_path()];
            if let Costs::File(c) = &a.costs {
                inputs.push(c);
            }
            Some(OutputFile::check_format(
                p,
                a.force,
                &inputs,
                "svg",
                || {
                    format!(
                    "--gantt {}: the Gantt chart is drawn as SVG only; name the file with .svg (convert it with e.g. `rsvg-convert` for PNG)",
                    p.display()
                )
                },
            )?)
        }
        None => None,
    };
    let time_limit = Duration::try_from_secs_f64(a.time_limit).map_err(|_| {
        util::usage(format!(
            "--time-limit {} is out of range",
            fugue_dsp::attrs::short_number(a.time_limit)
        ))
    })?;
    let mut g = util::read_graph(&a.file, a.format)?;
    // Attributes read by no one (a misspelt `Weight`): the schedule would differ.
    let unread = fugue_engine::lint::unread_keys(&g);
    crate::warn::report(&fugue_engine::lint::placed(&g, &a.file, &unread), false)?;
    // Measured costs take at most half the time limit (the schedule the rest).
    let origin = util::apply_costs_within(
        &a.costs,
        &mut g,
        &a.file,
        (a.rate.unwrap_or(48_000), a.buffer.unwrap_or(512)),
        time_limit / 2,
    )?;
    if let Some(c) = a.comm_cost {
        g.set_comm_costs(c);
    }
    let opts = Options {
        processors,
        seed: a.seed.unwrap_or(0),
        time_limit,
    };
    let spinner = util::spinner(&format!(
        "scheduling {} nodes with {} (time limit {} s)",
        g.len(),
        a.algorithm,
        a.time_limit
    ));
    // What follows the schedule (its verification, the report) takes about a microsecond per
    // node and edge: the algorithms stop that much earlier (at most a quarter of the limit).
    let reserve = Duration::from_micros((g.len() + g.edges().len()) as u64).min(time_limit / 4);
    let from = started.checked_sub(reserve).unwrap_or(started);
    let out = fugue_sched::run_since(&g, a.algorithm, &opts, from)?;
    spinner.finish_and_clear();
    if let Some(note) = &out.note {
        util::warning(format!("{note} (raise --time-limit to give it the time)"));
    }
    fugue_sched::verify(&g, &out.schedule).context("internal error: the schedule is invalid")?;
    let report = ScheduleReport::new(&g, &a.file, &out, processors, a.time_limit, &origin);
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{report}");
    }
    if let (Some(path), Some(o)) = (&a.gantt, &gantt_out) {
        let critical = analysis::critical_path(&g, true).1;
        let svg = gantt::svg(
            &g,
            &out.schedule,
            &gantt::GanttOptions {
                title: report.gantt_title(),
                unit: origin.unit.to_string(),
                critical,
            },
        );
        o.write(svg.as_bytes())?;
        if !a.json {
            println!("gantt chart    {}", path.display());
        }
    }
    Ok(())
}
