//! `fugue run GRAPH --backend auto|jack|alsa|clocked`: real-time runs, measured per cycle.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fugue_engine::host::GraphExecutor;
use fugue_engine::report::{cycles_line, RunSummary};
use fugue_engine::{Backend, Deadline, RunError, RunOptions, RunReport, StatsOptions};

use crate::signals;
use crate::util;
use fugue_engine::output::OutputFile;

/// Arguments of `fugue run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph to run (.ag, .stg, .dot, or a Faust program .dsp).
    pub graph: PathBuf,
    /// The graph's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<fugue_graph::Format>,
    /// auto (JACK when a server is running, else ALSA's --device), jack (a JACK client; the
    /// server's rate and buffer size), alsa (an ALSA playback device: --device, asked for
    /// --rate and --buffer, the run at what it grants) or clocked (no audio server: cycles
    /// paced by absolute-time sleeps at --rate and --buffer, outputs discarded).
    #[arg(long, default_value = "auto", value_parser = ["auto", "jack", "alsa", "clocked"])]
    pub backend: String,
    /// The ALSA playback device (alsa backend, and auto without a JACK server): `default`
    /// (the desktop's sound server or the first card), `hw:0`, `plughw:1,0`, `null` (plays
    /// nothing, paced by the clock)... `aplay -L` lists them.
    #[arg(long, default_value = "default")]
    pub device: String,
    /// Periods in the ALSA device's buffer asked (its latency: periods × buffer frames).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=16))]
    pub periods: u32,
    /// Sample rate in Hz (clocked backend; asked of the ALSA device; JACK uses the server's)
    /// [default: 48000].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: Option<u32>,
    /// Frames per cycle (clocked backend; the period asked of the ALSA device; JACK uses the
    /// server's) [default: 256].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: Option<u64>,
    /// Stop after this many seconds of wall time from the first cycle [default: run until
    /// Ctrl-C, SIGTERM or SIGHUP] (`--executor auto`'s trials, sized to 0.6 s, come before).
    /// The clocked and ALSA backends run round(seconds × rate / buffer) cycles, fewer when
    /// cycles overran: they stop when the time is up.
    #[arg(long, allow_negative_numbers = true, visible_alias = "duration")]
    pub seconds: Option<f64>,
    /// Write one CSV row per cycle to this file (written on Ctrl-C, SIGTERM or SIGHUP and
    /// when the server stops too). A named pipe or a character device is written directly.
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Overwrite the --stats file if it exists.
    #[arg(long)]
    pub force: bool,
    /// A cycle's deadline: period (the buffer period, default) or double (twice the period,
    /// the 2019 study's rule, as JACK double-buffers).
    #[arg(long, default_value = "period", value_parser = ["period", "double"])]
    pub deadline: String,
    /// Connect the output ports to the system playback ports (jack backend).
    #[arg(long)]
    pub connect: bool,
    /// Name of the JACK client (not empty, no `:`, at most 63 bytes).
    #[arg(long, default_value = "fugue", value_parser = crate::util::jack_client_name)]
    pub client_name: String,
    /// Run nodes of unknown kind as silence (with a warning) instead of failing.
    #[arg(long)]
    pub placeholder: bool,
    /// Collect the per-node, per-worker profile (node times, wake-ups, busy and idle time,
    /// the slowest cycles) and print it to standard error; `--profile=DIR` also writes the
    /// report into the folder DIR (as `fugue profile -o DIR`).
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "DIR")]
    pub profile: Option<Option<PathBuf>>,
    /// Fail (exit code 1) on any warning: about the graph (an attribute no kind reads, a node
    /// that reaches no sink, a `source` node playing silence), about the flags (one the
    /// executor does not read), or output samples that were not finite numbers.
    #[arg(long)]
    pub strict: bool,
    /// Print the report as one JSON object on standard output instead of the summary line:
    /// the cycle statistics, and under `auto` what the automatic choice chose, why, and every
    /// candidate's mean trial cycle.
    #[arg(long)]
    pub json: bool,
    /// Take live changes on this Unix socket while the graph plays: `fugue ctl SOCKET set
    /// NAME NODE ATTR VALUE` (NAME: the graph file's name without its extension, each
    /// character other than an ASCII letter, digit, `_`, `-` or `.` written `_`, at most
    /// 64; ATTR a live attribute, `fugue kinds` marks them) sets it from the next cycle;
    /// `wait SECONDS` answers after that long; `quit` stops the run; `help` says so.
    #[arg(long, value_name = "SOCKET")]
    pub control: Option<PathBuf>,
    /// The executor that runs the cycles.
    #[command(flatten)]
    pub exec: fugue_engine::flags::ExecArgs,
}

/// Runs `fugue run`: the flags checked, the options made, one run, its report printed.
pub fn run(args: Args) -> anyhow::Result<()> {
    let graph = util::read_graph(&args.graph, args.format)?;
    // With --strict, fail before running; otherwise the warnings are said after a run that
    // started (one that fails says only why). JACK's rate is the server's and an ALSA
    // device's what it grants, known once connected: 48 kHz (or the rate asked) until then,
    // and the graph checked again at the rate that played if it differs.
    let asked_rate = args.rate.unwrap_or(48_000);
    let warnings = warnings(&args, &graph, asked_rate);
    if args.strict {
        crate::warn::report(&warnings, true)?;
    }
    // The nodes `--placeholder` plays as silence: said, not a mistake (it was asked), so
    // --strict does not refuse them.
    if args.placeholder {
        if let Some(w) = crate::warn::placeholders(&graph, &args.graph, "plays") {
            util::warning(w);
        }
    }
    let mut options = options(&args)?;
    let quit = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // One path for two files: the socket would be made, then refused as the statistics'
    // output.
    if let (Some(control), Some(stats)) = (&args.control, &args.stats) {
        if fugue_engine::output::one_path(control, stats) {
            return Err(util::usage(format!(
                "--stats and --control both name {}: the statistics and the control socket need paths of their own",
                stats.display()
            )));
        }
    }
    let _control = match &args.control {
        Some(path) => {
            let queue = fugue_engine::live::queue();
            options.live = Some(queue.clone());
            let name = fugue_engine::host::control::live::run_name(&args.graph);
            let asked = (
                args.rate.unwrap_or(48_000),
                args.buffer.unwrap_or(256) as usize,
            );
            // The backend says what it granted (JACK's rate, an ALSA device's period).
            let granted = std::sync::Arc::new(fugue_engine::live::Granted::default());
            options.granted = Some(granted.clone());
            // The changes kept for a recompilation (JACK, at a new buffer size).
            let live_graph: fugue_engine::live::LiveGraph =
                std::sync::Arc::new(std::sync::Mutex::new(graph.clone()));
            options.live_graph = Some(live_graph.clone());
            Some(fugue_engine::host::control::live::serve_run(
                path,
                (live_graph, &name, util::registry()),
                (asked, granted),
                queue,
                (signals::stop_flag(), quit.clone()),
            )?)
        }
        None => None,
    };
    let mut inputs = vec![args.graph.as_path()];
    if let fugue_engine::Costs::File(p) = &args.exec.costs {
        inputs.push(p);
    }
    let outputs: Vec<&Path> = [&args.stats, &args.control]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
        .filter(|o| o.as_os_str() != "-")
        .collect();
    let profile_dir =
        crate::cmd::render::profile_dir(&args.profile, args.force, &inputs, &outputs)?;
    let stats_out = match &args.stats {
        // `-` is standard output elsewhere (render -o -), which carries the run's report.
        Some(p) if p.as_os_str() == "-" => {
            return Err(util::usage(
                "--stats -: standard output carries the run's report; name a file for the per-cycle rows (or a named pipe, or /dev/stderr)",
            ))
        }
        Some(p) => Some(util::check_output_of(
            p,
            args.force,
            &args.graph,
            &graph,
            &inputs[1..],
        )?),
        None => None,
    };
    let tmp = stats_out.as_ref().map(OutputFile::temp).transpose()?;
    options.stats.csv = tmp.as_ref().map(|t| t.path().to_path_buf());
    let report = match play(&graph, &options) {
        Ok(r) => r,
        Err(e) => {
            drop(tmp);
            let at = fugue_engine::check::error_at(&graph, &e);
            let e = anyhow::Error::new(e);
            return Err(e.context(format!("cannot run {}{at}", args.graph.display())));
        }
    };
    let warnings = match report.sample_rate {
        r if r != asked_rate && r > 0 => self::warnings(&args, &graph, r),
        _ => warnings,
    };
    // The backend that `auto` found: one without inputs plays the sources silent.
    let no_input = (args.backend == "auto")
        .then(|| no_input(&graph, &args.graph, report.backend))
        .flatten();
    // Said now, whatever fails later; under --strict, what only the granted rate or the
    // backend found shows (what the asked rate showed failed before the run) fails once the
    // run's report is said, as a non-finite sample does.
    crate::warn::report(&warnings, false)?;
    crate::warn::report(no_input.as_slice(), false)?;
    let strict_late = match (&no_input, warnings.len()) {
        _ if !args.strict => None,
        (_, n) if n > 0 => Some(format!(
            "{} at the {} Hz the run played (said above); --strict makes warnings errors",
            match n {
                1 => "a warning".to_string(),
                n => format!("{n} warnings"),
            },
            report.sample_rate
        )),
        (Some(w), _) => Some(format!("{w} (said above); --strict makes warnings errors")),
        (None, _) => None,
    };
    let exec = args.exec.request();
    let says_auto = report.auto.as_ref().is_some_and(|a| exec.says_auto(a));
    // A run too short to measure, with auto as the default, says so once its outputs are
    // written (a run whose statistics cannot be written says only why).
    let short_later = says_auto
        && args.exec.executor.is_none()
        && report
            .auto
            .as_ref()
            .is_some_and(|a| a.candidates.len() == 1);
    crate::warn::engine_notes(
        says_auto && !short_later,
        report.auto.as_ref(),
        &report.warnings,
        (&[], &graph, &args.graph),
        &report.panics,
    );
    let played = options.executor.played(report.auto.as_ref());
    let summary = RunSummary::new(&args.graph, report.backend, &args.deadline, &report, played);
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!("{}", util::one_line(&summary.to_string()));
    }
    // The per-cycle statistics, after the summary: a file that cannot be written (a full
    // disk) loses no more than the file.
    let mut stats_note = String::new();
    if let (Some(out), Some(t)) = (&stats_out, tmp) {
        let shown = out.path().display();
        if let Some(e) = &report.csv_error {
            drop(t);
            let why = if fugue_engine::output::is_disk_full(e) {
                format!("the disk is full ({e})")
            } else {
                e.to_string()
            };
            anyhow::bail!(
                "cannot write the per-cycle statistics to {shown}: {why}; the summary above is complete"
            );
        }
        signals::not_polled();
        out.commit(t)?;
        stats_note = format!("; per-cycle statistics in {shown}");
    }
    if let Some(a) = report.auto.as_ref().filter(|_| short_later) {
        eprintln!("fugue: {}", a.line());
    }
    let (kind, threads) = played;
    let what = format!(
        "{}, {kind} with {threads} thread(s), {} frames at {} Hz, {} backend",
        args.graph.display(),
        report.block,
        report.sample_rate,
        report.backend
    );
    crate::cmd::profile::emit(report.profile.as_ref(), profile_dir.as_deref(), &what)?;
    // Said as a warning here; under --strict an error once the run's own end is said (a
    // server or device that went away is the first thing to know).
    let non_finite =
        (report.non_finite > 0).then(|| non_finite_line(&args.graph, report.non_finite));
    if let Some(said) = non_finite.as_deref().filter(|_| !args.strict) {
        util::warning(said);
    }
    // Relaxed: set by the control thread, which is done with it.
    if quit.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "fugue: stopped by `quit` on the control socket after {}{stats_note}",
            fugue_engine::report::counted(report.summary.cycles as usize, "cycle")
        );
    } else {
        end(&report, &stats_note)?;
    }
    if let Some(e) = strict_late {
        if let Some(said) = &non_finite {
            util::warning(said);
        }
        anyhow::bail!(e);
    }
    match non_finite.filter(|_| args.strict) {
        Some(said) => anyhow::bail!("{said}; --strict makes warnings errors"),
        None => Ok(()),
    }
}

/// What the flags and the graph suggest is a mistake: the graph's lints at `rate` Hz, flags
/// the executor ignores, `--rate` and `--buffer` under JACK.
fn warnings(args: &Args, graph: &fugue_graph::TaskGraph, rate: u32) -> Vec<String> {
    let mut warnings = crate::warn::graph_warnings(graph, &args.graph, false, rate);
    if args.backend != "auto" {
        warnings.extend(no_input(graph, &args.graph, &args.backend));
    }
    warnings.extend(args.exec.request().warnings(GraphExecutor::Auto));
    if args.backend == "jack" {
        for (flag, given) in [
            ("--rate", args.rate.is_some()),
            ("--buffer", args.buffer.is_some()),
        ] {
            if given {
                warnings.push(format!(
                    "{flag} applies to the clocked and ALSA backends only; the JACK backend runs at the server's rate and buffer size"
                ));
            }
        }
    }
    let alsa = matches!(args.backend.as_str(), "alsa" | "auto");
    for (flag, given) in [
        ("--device", args.device != "default"),
        ("--periods", args.periods != 2),
    ] {
        if given && !alsa {
            warnings.push(format!(
                "{flag} applies to the ALSA backend only (--backend alsa, or auto without a JACK server)"
            ));
        }
    }
    let jack = matches!(args.backend.as_str(), "jack" | "auto");
    for (flag, given) in [
        ("--connect", args.connect),
        ("--client-name", args.client_name != "fugue"),
    ] {
        if given && !jack {
            warnings.push(format!(
                "{flag} applies to the JACK backend only (--backend jack, or auto with a JACK server)"
            ));
        }
    }
    warnings
}

/// The `source` nodes of `graph` (read from `file`) on `backend`, which has no inputs (but
/// JACK's): each plays silence, said once for all of them.
fn no_input(graph: &fugue_graph::TaskGraph, file: &Path, backend: &str) -> Option<String> {
    if backend == "jack" {
        return None;
    }
    let sources: Vec<&str> = graph
        .nodes()
        .iter()
        .filter(|n| n.kind == "source")
        .map(|n| n.name.as_str())
        .collect();
    let first = sources.first()?;
    let at = fugue_engine::lint::node_place(graph, first, None)
        .map(|l| format!("{}:{l}: ", file.display()))
        .unwrap_or_default();
    let more = match sources.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "{at}`source` node `{first}`{more} plays silence: the {backend} backend has no inputs (the JACK backend gives each source port one to connect; `fugue render --input` reads a WAV)"
    ))
}

/// The run's options from the flags (checked); the statistics file is set by the caller.
fn options(args: &Args) -> anyhow::Result<RunOptions> {
    let rate = args.rate.unwrap_or(48_000);
    let buffer = args.buffer.unwrap_or(256);
    let clocked = args.backend == "clocked";
    // The clocked backend's cycle is known before the run; JACK's is the server's and an
    // ALSA device's what it grants, unknown until connected: any length above zero is
    // accepted there.
    let cycle = format!("one cycle of {buffer} frames at {rate} Hz");
    let unit = clocked.then(|| (buffer as f64 / f64::from(rate), &*cycle));
    if let Some(d) = args.seconds {
        util::check_seconds(d, 604_800.0, unit)?;
    }
    // The JACK server and the ALSA device choose the buffer: checked when the plan is
    // compiled.
    let known_buffer = clocked.then_some(buffer as usize);
    let profile = args.profile.is_some();
    crate::util::check_pipeline(args.exec.pipeline, known_buffer, profile)?;
    let exec = args.exec.request();
    let mut executor = exec.choice_or(GraphExecutor::Auto, profile);
    executor.pin = exec.pin_for(true);
    Ok(RunOptions {
        backend: match args.backend.as_str() {
            "jack" => Backend::Jack {
                connect: args.connect,
                client_name: args.client_name.clone(),
            },
            "alsa" => Backend::Alsa {
                device: args.device.clone(),
                rate,
                block: buffer as usize,
                periods: args.periods,
            },
            "auto" => Backend::Auto {
                connect: args.connect,
                client_name: args.client_name.clone(),
                device: args.device.clone(),
                rate,
                block: buffer as usize,
                periods: args.periods,
            },
            _ => Backend::Clocked {
                rate,
                block: buffer as usize,
            },
        },
        executor,
        duration: args.seconds.map(Duration::from_secs_f64),
        deadline: if args.deadline == "double" {
            Deadline::Double
        } else {
            Deadline::Period
        },
        stats: StatsOptions::default(),
        stop: Some(signals::stop_flag()),
        placeholder: args.placeholder,
        profile,
        registry: crate::util::registry(),
        live: None,
        granted: None,
        live_graph: None,
        announce: Some(|line| eprintln!("fugue: {line}")),
    })
}

/// Runs `graph`, the statistics so far on one line of a terminal, redrawn every second.
fn play(graph: &fugue_graph::TaskGraph, options: &RunOptions) -> Result<RunReport, RunError> {
    let terminal = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let mut shown = false;
    let result = fugue_engine::run(graph, options, |s| {
        if terminal && last.elapsed() >= Duration::from_secs(1) {
            eprint!("\r\x1b[2K{}", cycles_line(s));
            let _ = std::io::stderr().flush();
            last = Instant::now();
            shown = true;
        }
    });
    if shown {
        eprint!("\r\x1b[2K");
    }
    result
}

/// What a run says of output samples that were not finite numbers: `n` of them, played as
/// silence.
fn non_finite_line(graph: &std::path::Path, n: u64) -> String {
    format!(
        "{}: {n} output {} (NaN or infinity) and played as silence: a node's output overflowed; look for a level, gain or feedback that is too large",
        graph.display(),
        if n == 1 {
            "sample was not a finite number"
        } else {
            "samples were not finite numbers"
        }
    )
}

/// How the run ended: an error when the JACK server or the device went away, a line after
/// a signal.
fn end(report: &RunReport, stats_note: &str) -> anyhow::Result<()> {
    let said = report.end.said(report.summary.cycles, stats_note);
    if let Some(line) = said.map_err(|e| anyhow::anyhow!(e))? {
        signals::say(&format!("{} {line}", signals::interrupted()));
    }
    Ok(())
}
