//! `fugue profile GRAPH`: runs a graph for a while with the profile on and writes the
//! report (nodes sorted by worst case, threads, the slowest cycles' breakdown, per-thread
//! timelines of the median and the slowest cycle). Also the writer of `run --profile` and
//! `render --profile`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use fugue_engine::report::profile;
use fugue_engine::ProfileReport;

use crate::util;

/// Arguments of `fugue profile`.
#[derive(clap::Args, Debug)]
#[command(after_help = examples!(
    "fugue profile examples/rake.ag --executor ws --threads 2 --buffer 128 -o rake-profile",
))]
// The profile records whole cycles: no pipelining (refused if given), so not offered.
#[command(mut_arg("pipeline", |a| a.hide(true)))]
pub struct Args {
    /// The graph to profile (.ag, .stg, .dot, or a Faust program .dsp).
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
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: u32,
    /// Frames per cycle.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// How long to run, in seconds of audio.
    #[arg(long, allow_negative_numbers = true, default_value_t = 5.0)]
    pub seconds: f64,
    /// Run nodes of unknown kind as silence (with a warning) instead of failing.
    #[arg(long)]
    pub placeholder: bool,
    /// The executor that runs the cycles.
    #[command(flatten)]
    pub exec: fugue_engine::flags::ExecArgs,
}

/// Runs `fugue profile`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // The profile records whole cycles: a pipelined plan has none to record.
    if let Some(p) = args
        .exec
        .pipeline
        .filter(|p| *p != fugue_engine::Pipeline::Sub(1))
    {
        let shown = match p {
            fugue_engine::Pipeline::Sub(n) => n.to_string(),
            fugue_engine::Pipeline::Auto => "auto".to_string(),
        };
        return Err(util::usage(format!(
            "--pipeline {shown}: the profile records whole cycles, which a pipelined run does not have; profile without --pipeline (fugue run --pipeline {shown} measures the pipelined cycles)"
        )));
    }
    let graph = util::read_graph(&args.graph, args.format)?;
    let offline = args.backend == "offline";
    let (unit_seconds, unit) = if offline {
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
        let mut inputs = vec![args.graph.as_path()];
        if let fugue_engine::Costs::File(p) = &args.exec.costs {
            inputs.push(p);
        }
        check_dir(dir, args.force, &inputs, &[])?;
    }
    let exec = args.exec.request();
    // Flags the executor ignores (profile's default is seq).
    for w in exec.warnings(fugue_engine::host::GraphExecutor::Kind(
        fugue_exec::ExecutorKind::Seq,
    )) {
        crate::util::warning(&w);
    }
    // A profile records whole cycles: auto tries no pipelined candidate.
    let mut executor = exec.choice_or(
        fugue_engine::host::GraphExecutor::Kind(fugue_exec::ExecutorKind::Seq),
        true,
    );
    executor.pin = exec.pin_for(!offline);
    // What played: the choice, or what auto chose (known after the run).
    let what = |auto: Option<&fugue_engine::auto::AutoReport>| {
        let (kind, threads) = executor.played(auto);
        format!(
            "{}, {}{kind} with {} thread(s), {} frames at {} Hz, {}",
            args.graph.display(),
            if executor.auto { "auto: " } else { "" },
            // seq runs on the calling thread, whatever --threads says.
            if kind == fugue_exec::ExecutorKind::Seq {
                1
            } else {
                threads
            },
            args.buffer,
            args.rate,
            args.backend
        )
    };
    let recording = profile::Recording {
        offline,
        rate: args.rate,
        buffer: args.buffer as usize,
        seconds: args.seconds,
        placeholder: args.placeholder,
        executor: executor.clone(),
        stop: Some(crate::signals::stop_flag_within(crate::signals::STOP_GRACE)),
        registry: util::registry(),
    };
    let recorded = profile::record(&graph, &recording);
    // The run is over: what follows writes its report, which a signal's grace must not cut.
    crate::signals::not_polled();
    let (report, warnings, auto) = recorded.map_err(|e| {
        // Stopped by a signal: said as a profile's, not a render's.
        if matches!(
            e,
            profile::RecordError::Render(fugue_engine::RenderError::Cancelled { .. })
        ) {
            anyhow::anyhow!(
                "the profile of {} was interrupted: no report",
                args.graph.display()
            )
        } else {
            // The place in the file of a node that could not be built, as render gives it.
            let cause: &(dyn std::error::Error + 'static) = match &e {
                profile::RecordError::Render(r) => r,
                profile::RecordError::Run(r) => r,
            };
            let at = fugue_engine::check::error_at(&graph, cause);
            anyhow::Error::new(e).context(format!("cannot profile {}{at}", args.graph.display()))
        }
    })?;
    // The graph's own warnings (an attribute no kind reads, a node that reaches no sink),
    // as render and run say them, after a profile that succeeded.
    for w in crate::warn::graph_warnings(&graph, &args.graph, offline, args.rate) {
        crate::util::warning(w);
    }
    if args.placeholder {
        if let Some(w) = crate::warn::placeholders(&graph, &args.graph, "played") {
            crate::util::warning(w);
        }
    }
    for w in &warnings {
        crate::util::warning(w);
    }
    if let Some(a) = &auto {
        eprintln!("fugue: {}", a.line());
    }
    let report = report.context("the run recorded no profile")?;
    let mut what = what(auto.as_ref());
    // A run stopped by a signal ends with what it recorded: said in the report's title (on
    // standard output and in every file of the folder) and in the one line the signal
    // gets, so that a report of a few cycles is not taken for the length asked.
    let stopped = crate::signals::received().map(|_| {
        format!(
            "the run was stopped before its end: the report covers its first {} cycles ({:.2} s of the {} s asked)",
            report.cycles,
            report.cycles as f64 * args.buffer as f64 / f64::from(args.rate),
            args.seconds
        )
    });
    if let Some(s) = &stopped {
        what = format!("{what}; {s}");
    }
    print!("{what}\n{}", report.text());
    if let Some(s) = &stopped {
        crate::signals::say(&format!("{}; {s}", crate::signals::interrupted()));
    }
    if let Some(dir) = &args.output {
        profile::write(&report, dir, &what)?;
        println!("report written to {}", dir.display());
    }
    Ok(())
}

/// Refuses a report folder that holds a report already (unless `force`), that is not a
/// folder, or that would replace one of `inputs` ([`profile::check_folder`]): a usage error,
/// or for an input the command reads, an error.
pub fn check_dir(
    dir: &Path,
    force: bool,
    inputs: &[&Path],
    outputs: &[&Path],
) -> anyhow::Result<()> {
    if dir == Path::new("-") {
        return Err(util::usage(
            "-: the profile is a folder of files, not a stream; name a folder (the report is printed to standard error either way)",
        ));
    }
    profile::check_folder(dir, force, inputs, outputs).map_err(|e| match e {
        profile::FolderError::IsInput { .. } => anyhow::anyhow!(e),
        e => util::usage(e.to_string()),
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
        profile::write(report, dir, what)?;
        eprintln!("profile written to {}", dir.display());
    }
    Ok(())
}
