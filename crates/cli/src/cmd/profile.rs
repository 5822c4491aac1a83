//! `fugue profile GRAPH`: runs a graph for a while with the profile on and writes the
//! report (nodes sorted by worst case, threads, the slowest cycles' breakdown, per-thread
//! timelines of the median and the slowest cycle). Also the writer of `run --profile` and
//! `render --profile`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use fugue_engine::{Backend, Output, ProfileReport, RenderOptions, RunOptions, StatsOptions};

use crate::util;

/// Files a profile folder holds.
pub const FILES: [&str; 5] = [
    "profile.txt",
    "nodes.csv",
    "profile.json",
    "median-cycle.svg",
    "slowest-cycle.svg",
];

/// Arguments of `fugue profile`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  fugue profile examples/rake.ag --executor ws --threads 2 --buffer 128 -o rake-profile\n\nExit codes: 0 success, 1 failure while running or writing, 2 usage error; 130, 143, 129: stopped by SIGINT (Ctrl-C), SIGTERM, SIGHUP."
)]
pub struct Args {
    /// The graph to profile (.ag, .stg or .dot).
    pub graph: PathBuf,
    /// The graph's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<fugue_graph::Format>,
    /// Folder for the report (profile.txt, nodes.csv, profile.json, median-cycle.svg,
    /// slowest-cycle.svg) [default: print the text report only].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the report's files if they exist.
    #[arg(long)]
    pub force: bool,
    /// clocked (real time, cycles paced at the buffer period, as a backend runs them) or
    /// offline (cycles back to back, as a render runs them).
    #[arg(long, default_value = "clocked", value_parser = ["clocked", "offline"])]
    pub backend: String,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Frames per cycle.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// How long to run, in seconds of audio.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Run nodes of unknown kind as silence (with a warning) instead of failing.
    #[arg(long)]
    pub placeholder: bool,
    /// The executor that runs the cycles.
    #[command(flatten)]
    pub exec: crate::exec_args::ExecArgs,
}

/// Runs `fugue profile`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let graph = util::read_graph(&args.graph, args.format)?;
    let (unit_seconds, unit) = if args.backend == "offline" {
        (
            1.0 / f64::from(args.rate),
            format!("one sample at {} Hz", args.rate),
        )
    } else {
        (
            args.buffer as f64 / f64::from(args.rate),
            format!("one cycle of {} frames at {} Hz", args.buffer, args.rate),
        )
    };
    util::check_seconds(args.seconds, 86_400.0, Some((unit_seconds, &unit)))?;
    if let Some(dir) = &args.output {
        check_dir(dir, args.force)?;
    }
    let mut choice = args.exec.choice();
    choice.pin = args.exec.pin_for(args.backend != "offline");
    let what = format!(
        "{}, {} with {} thread(s), {} frames at {} Hz, {}",
        args.graph.display(),
        choice.kind,
        choice.threads,
        args.buffer,
        args.rate,
        args.backend
    );
    let (report, warnings) = if args.backend == "offline" {
        let options = RenderOptions {
            sample_rate: args.rate,
            block: args.buffer as usize,
            seconds: Some(args.seconds),
            output: Output::Discard,
            placeholder: args.placeholder,
            cancel: Some(crate::signals::stop_flag()),
            executor: choice,
            profile: true,
            ..RenderOptions::default()
        };
        let s = fugue_engine::render(&graph, &options, |_| {})
            .with_context(|| format!("cannot profile {}", args.graph.display()))?;
        (s.profile, s.warnings)
    } else {
        let options = RunOptions {
            backend: Backend::Clocked {
                rate: args.rate,
                block: args.buffer as usize,
            },
            executor: choice,
            duration: Some(Duration::from_secs_f64(args.seconds)),
            stats: StatsOptions::default(),
            stop: Some(crate::signals::stop_flag()),
            placeholder: args.placeholder,
            profile: true,
            ..RunOptions::default()
        };
        let r = fugue_engine::run(&graph, &options, |_| {})
            .with_context(|| format!("cannot profile {}", args.graph.display()))?;
        (r.profile, r.warnings)
    };
    for w in &warnings {
        crate::util::warning(w);
    }
    let report = report.context("the run recorded no profile")?;
    print!("{what}\n{}", report.text());
    if let Some(dir) = &args.output {
        write(&report, dir, &what)?;
        println!("report written to {}", dir.display());
    }
    Ok(())
}

/// Refuses a report folder that holds a report already (unless `force`) or that is not a
/// folder.
pub fn check_dir(dir: &Path, force: bool) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(util::usage(format!(
            "{} is not a folder; --profile and -o take a folder for the report",
            dir.display()
        )));
    }
    fugue_bench::report::refuse_existing(dir, &FILES, force).map_err(|e| util::usage(e.to_string()))
}

/// Writes `report` into `dir` ([`FILES`]), titled `what`.
pub fn write(report: &ProfileReport, dir: &Path, what: &str) -> anyhow::Result<()> {
    use fugue_bench::report::{create_dir, write_atomic};
    create_dir(dir)?;
    write_atomic(
        &dir.join("profile.txt"),
        format!("{what}\n{}", report.text()).as_bytes(),
    )?;
    write_atomic(&dir.join("nodes.csv"), report.nodes_csv().as_bytes())?;
    let json = serde_json::to_string_pretty(&to_json(report, what))?;
    write_atomic(&dir.join("profile.json"), json.as_bytes())?;
    if let Some(t) = &report.median {
        let title = format!(
            "{what}: cycle {} ({:.1} µs, close to the median)",
            t.index,
            t.duration_ns as f64 / 1e3
        );
        write_atomic(
            &dir.join("median-cycle.svg"),
            report.gantt_svg(t, &title).as_bytes(),
        )?;
    }
    if let Some(t) = report.slowest.first() {
        let title = format!(
            "{what}: cycle {} ({:.1} µs, the slowest)",
            t.index,
            t.duration_ns as f64 / 1e3
        );
        write_atomic(
            &dir.join("slowest-cycle.svg"),
            report.gantt_svg(t, &title).as_bytes(),
        )?;
    }
    Ok(())
}

/// The report as JSON.
pub fn to_json(r: &ProfileReport, what: &str) -> serde_json::Value {
    let timeline = |t: &fugue_engine::profile::Timeline| {
        serde_json::json!({
            "cycle": t.index,
            "duration_ns": t.duration_ns,
            "tail_ns": t.tail_ns,
            "wakes_ns": t.wakes,
            "tasks": t.bars.iter().map(|b| serde_json::json!({
                "node": b.node, "thread": b.worker, "start_ns": b.start_ns, "end_ns": b.end_ns,
            })).collect::<Vec<_>>(),
            "chain": t.chain.iter().map(|c| serde_json::json!({
                "node": c.node, "thread": c.worker, "start_ns": c.start_ns, "run_ns": c.run_ns,
                "wait_ns": c.wait_ns, "wait_cause": c.wait_cause(), "thread_woke_ns": c.worker_woke_ns,
            })).collect::<Vec<_>>(),
        })
    };
    serde_json::json!({
        "run": what,
        "threads": r.threads,
        "cycles": r.cycles,
        "cycle_mean_ns": r.cycle_mean_ns,
        "cycle_median_ns": r.cycle_median_ns,
        "cycle_p99_ns": r.cycle_p99_ns,
        "cycle_max_ns": r.cycle_max_ns,
        "nodes_total_ns": r.work_mean_ns,
        "overhead_ns": r.overhead_mean_ns(),
        "before_first_task_ns": r.head_mean_ns,
        "after_last_task_ns": r.tail_mean_ns,
        "profile_own_ns": r.own_mean_ns,
        "worker_wake_p99_ns": r.worker_wake_p99_ns(),
        "process_cpu_cores": r.cpu_cores,
        "nodes": r.nodes.iter().map(|n| serde_json::json!({
            "node": n.name, "kind": n.kind, "calls": n.calls, "min_ns": n.min_ns,
            "mean_ns": n.mean_ns, "p99_ns": n.p99_ns, "max_ns": n.max_ns,
        })).collect::<Vec<_>>(),
        "threads_detail": r.workers.iter().map(|w| serde_json::json!({
            "thread": w.worker, "woke": w.woke, "ran": w.ran,
            "wake_median_ns": w.wake_median_ns, "wake_p99_ns": w.wake_p99_ns,
            "wake_max_ns": w.wake_max_ns, "first_task_median_ns": w.first_median_ns,
            "first_task_p99_ns": w.first_p99_ns, "busy_mean_ns": w.busy_mean_ns,
            "idle_mean_ns": w.idle_mean_ns, "steals": w.steals,
        })).collect::<Vec<_>>(),
        "median_cycle": r.median.as_ref().map(timeline),
        "slowest_cycles": r.slowest.iter().map(timeline).collect::<Vec<_>>(),
    })
}

/// What `run --profile` and `render --profile` do with the report: print it to standard
/// error, and write it into `dir` when one was given.
pub fn emit(report: Option<&ProfileReport>, dir: Option<&Path>, what: &str) -> anyhow::Result<()> {
    let Some(report) = report else {
        return Ok(());
    };
    eprint!("{what}\n{}", report.text());
    if let Some(dir) = dir {
        write(report, dir, what)?;
        eprintln!("profile written to {}", dir.display());
    }
    Ok(())
}
