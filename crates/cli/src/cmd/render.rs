//! `fugue render GRAPH -o OUT.wav`: offline rendering, no audio server needed.

use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use fugue_engine::host::GraphExecutor;
use fugue_engine::report::RenderReport;
use fugue_engine::{Bits, Progress, RenderError, RenderOptions};

use crate::signals;
use crate::util;
use fugue_engine::output::{OutputFile, Temp};

/// Arguments of `fugue render`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph to render (.ag, .stg, .dot, or a Faust program .dsp).
    pub graph: PathBuf,
    /// The graph's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<fugue_graph::Format>,
    /// The WAV file to write (one channel per sink input port: sinks in file order, then
    /// ports); `-` writes it to standard output. A named pipe or a character device is
    /// written directly (no --force needed), never replaced.
    #[arg(short, long, value_name = "OUT.wav")]
    pub output: PathBuf,
    /// Length in seconds [default: the --input file's length (plus --tail), else 10].
    #[arg(long, visible_alias = "duration", allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// With --input: render this many seconds past the input's end, so that an echo's or a
    /// reverb's tail is heard out instead of cut where the input stops (the length is then the
    /// input's plus SECONDS).
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "input",
        conflicts_with = "seconds",
        allow_negative_numbers = true
    )]
    pub tail: Option<f64>,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
    pub rate: u32,
    /// Frames per cycle (the engine's buffer size).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Output sample format: 16 or 24-bit integers (times 2^15 or 2^23, rounded, clipped
    /// to the integers' range, clipping beyond ±1 reported; an integer input's samples come
    /// back unchanged) or 32-bit float.
    #[arg(long, default_value_t = 32, value_parser = parse_bits)]
    pub bits: u16,
    /// A WAV file whose channels feed the graph's `source` nodes (sources in file order, then
    /// ports); it must have the render's sample rate.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Render nodes of unknown kind as silence (with a warning) instead of failing.
    #[arg(long)]
    pub placeholder: bool,
    /// Collect the per-node, per-worker profile (node times, wake-ups, busy and idle time,
    /// the slowest cycles) and print it to standard error; `--profile=DIR` also writes the
    /// report into the folder DIR (as `fugue profile -o DIR`).
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "DIR")]
    pub profile: Option<Option<PathBuf>>,
    /// Fail (exit code 1, nothing written) on any warning: an attribute no kind reads, a node
    /// that reaches no sink, a peak above 0 dBFS, clipped samples, silent output.
    #[arg(long)]
    pub strict: bool,
    /// Print the report as one JSON object instead of the summary line (on standard error
    /// when the audio goes to standard output): the figures, and under `auto` what the
    /// automatic choice chose, why, and every candidate's mean trial cycle.
    #[arg(long)]
    pub json: bool,
    /// Run N blocks as one cycle (offline, where no deadline holds): a block's first nodes
    /// start while the block before finishes its last ones, so that the threads wait less at
    /// each cycle's end. The same samples as without; not with `--executor auto` (which tries
    /// 2 itself) nor `--profile`; a graph that changes rates, has a feedback edge or a node
    /// whose samples depend on how a block is cut (some LV2 plugins) runs without it, with
    /// a warning that names why. From 1 to 16.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub overlap: u64,
    /// The executor that runs the cycles.
    #[command(flatten)]
    pub exec: fugue_engine::flags::ExecArgs,
}

/// Parses `--bits`.
fn parse_bits(s: &str) -> Result<u16, String> {
    match s {
        "16" => Ok(16),
        "24" => Ok(24),
        "32" => Ok(32),
        _ => Err(format!("`{s}` is not 16, 24 or 32")),
    }
}

/// Shows a progress bar on a terminal once a render has taken more than a moment.
fn show_progress(start: Instant, bar: &mut Option<indicatif::ProgressBar>, p: Progress) {
    let late = start.elapsed() > Duration::from_millis(300) && p.frames_done < p.frames_total;
    if bar.is_none() && late && std::io::stderr().is_terminal() {
        let template = "rendering {bar:40} {percent:>3}%  {elapsed} (eta {eta})";
        *bar = Some(util::progress_bar(p.frames_total, template));
    }
    bar.iter().for_each(|b| b.set_position(p.frames_done));
}

/// The path of this process's standard output, whose metadata is that of the file it is
/// open on.
const STDOUT: &str = "/dev/stdout";

/// `-o -` refused: standard output is open on `input`, a file the render reads.
fn stdout_is_input(input: &Path) -> fugue_engine::output::OutputError {
    fugue_engine::output::OutputError::IsInput {
        path: PathBuf::from("standard output"),
        input: input.to_path_buf(),
    }
}

/// Where the WAV goes: standard output (`-o -`, `None`) or a checked output file: a
/// regular file named `.wav`, or a named pipe or a character device written directly.
fn check_output(args: &Args) -> anyhow::Result<Option<OutputFile>> {
    let output = &args.output;
    if output.as_os_str() == "-" {
        if std::io::stdout().is_terminal() {
            return Err(util::usage(
                "-o - writes WAV data to standard output, which is a terminal here; pipe it (fugue render GRAPH -o - | aplay) or give a .wav file",
            ));
        }
        // Standard output opened on a file the render reads (`>> in.wav`, `1<> in.wav`):
        // written while it is read, which `--force` does not allow either.
        if let Some(input) = fugue_engine::output::same_file(Path::new(STDOUT), &inputs(args)) {
            return Err(stdout_is_input(input).into());
        }
        return Ok(None);
    }
    let out = OutputFile::check_format(output, args.force, &inputs(args), "wav", || {
        format!(
            "cannot write {}: render writes WAV files only; name the output with .wav, or - for standard output",
            output.display()
        )
    })?;
    Ok(Some(out))
}

/// While it lives, panics print nothing: a processor that panics is silenced by the engine
/// and reported after the render in one line. A panic that unwinds through the render itself
/// (a bug) is said when it passes, and the previous hook comes back. A failed write to
/// standard output or error still ends the process as everywhere ([`crate::stdio`]).
struct QuietPanics {
    last: std::sync::Arc<std::sync::Mutex<String>>,
    previous: Option<PanicHook>,
}

/// A panic hook, as `std::panic::take_hook` returns it.
type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

impl QuietPanics {
    fn install() -> QuietPanics {
        let last = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let keep = last.clone();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            crate::stdio::on_panic(info);
            *keep.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
        }));
        QuietPanics {
            last,
            previous: Some(previous),
        }
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            std::panic::set_hook(previous);
        }
        if std::thread::panicking() {
            let msg = self.last.lock().unwrap_or_else(|e| e.into_inner());
            eprintln!("fugue: internal error: {msg}");
        }
    }
}

/// Refuses an `--input` that is not a regular file (a pipe, a device, `/dev/stdin`): the
/// render reads its header, then its samples, opening it more than once, and a pipe read
/// once is empty (or blocks) the second time. Checked without opening it.
fn check_input(input: &std::path::Path) -> anyhow::Result<()> {
    match std::fs::metadata(input) {
        // `-` names standard input only for the output (`-o -`); with no file of that name
        // here, the input is said to be a file.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && input.as_os_str() == "-" => {
            Err(anyhow::anyhow!(
                "--input - would be standard input, which the render cannot read: it reads a WAV file more than once; save it to a file and name that file"
            ))
        }
        Ok(m) if !m.is_file() => Err(anyhow::anyhow!(
            "--input {} is not a regular file (a pipe, a device or a folder); the render reads a WAV file more than once: save it to a file first",
            input.display()
        )),
        // A missing file is said where it is read, with the reason.
        _ => Ok(()),
    }
}

/// Runs `fugue render`: the flags checked, the options made, one render, the WAV given its
/// name, the report printed.
pub fn run(args: Args) -> anyhow::Result<()> {
    let out = check_output(&args)?;
    // The audio goes to standard output with `-o -`, and with a path that is it
    // (`/dev/stdout`, `/proc/self/fd/1`): the summary then goes to standard error.
    let audio_on_stdout = out
        .as_ref()
        .is_none_or(|o| util::is_standard_output(o.path()));
    if let Some(input) = &args.input {
        check_input(input)?;
    }
    let graph = util::read_graph(&args.graph, args.format)?;
    if args.output.as_os_str() != "-" {
        util::refuse_graph_files(&args.output, &args.graph, &graph)?;
    } else {
        // Standard output on one of the files the graph's nodes read (a Faust program).
        if let Some(input) = util::graph_file_at(Path::new(STDOUT), &args.graph, &graph) {
            return Err(stdout_is_input(&input).into());
        }
    }
    // With --strict, fail before rendering; otherwise the warnings are said after a render
    // that succeeded (a render that fails says only why).
    let mut warnings = crate::warn::graph_warnings(&graph, &args.graph, true, args.rate);
    warnings.extend(args.exec.request().warnings(GraphExecutor::Auto));
    if let Some(input) = &args.input {
        let lints = fugue_engine::lint::input(&graph, input);
        warnings.extend(lints.iter().map(|w| w.to_string()));
    }
    if args.strict {
        crate::warn::report(&warnings, true)?;
    }
    let bits =
        Bits::from_bits(args.bits).ok_or_else(|| util::usage("--bits must be 16, 24 or 32"))?;
    let mut options = options(&args, bits)?;
    let outputs: Vec<&Path> = Some(args.output.as_path())
        .filter(|o| o.as_os_str() != "-")
        .into_iter()
        .collect();
    let profile_dir = profile_dir(&args.profile, args.force, &inputs(&args), &outputs)?;
    // The temporary file exists from here on, registered for removal on a signal; the
    // render writes over it and never creates it again.
    let tmp = match &out {
        None => {
            let path = fugue_engine::output::temp_path_in(&std::env::temp_dir());
            Temp::create(path, Path::new("standard output"))
                .context("cannot create a temporary file for standard output")?
                .0
        }
        Some(o) => o.temp()?,
    };
    let shown = match &out {
        None => "standard output".to_string(),
        Some(_) => args.output.display().to_string(),
    };
    options.output = fugue_engine::Output::Wav(tmp.path().to_path_buf());
    let (start, mut bar) = (Instant::now(), None);
    let quiet = QuietPanics::install();
    let result = fugue_engine::render(&graph, &options, |p| show_progress(start, &mut bar, p));
    drop(quiet);
    bar.iter().for_each(|b| b.finish_and_clear());
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            drop(tmp);
            return Err(match e {
                RenderError::Write { reason, .. } => {
                    anyhow::anyhow!("cannot write {shown}: {reason}")
                }
                RenderError::Cancelled { partial } => {
                    let stopped = format!("{}; {shown} was not written", signals::interrupted());
                    // The profile of the cycles rendered before the stop is kept, as `fugue
                    // profile` keeps it; the audio is not.
                    let profile = partial.and_then(|s| s.profile).filter(|p| p.cycles > 0);
                    if let Some(p) = &profile {
                        let what = format!(
                            "{}, {} frames at {} Hz, offline render stopped after {}",
                            args.graph.display(),
                            args.buffer,
                            args.rate,
                            fugue_engine::report::counted(p.cycles as usize, "cycle")
                        );
                        crate::cmd::profile::emit(Some(p), profile_dir.as_deref(), &what)
                            .map_err(|e| e.context(stopped.clone()))?;
                    }
                    anyhow::anyhow!(stopped)
                }
                e => {
                    // The place in the file of a node that could not be built, as `check`
                    // gives it.
                    let at = fugue_engine::check::error_at(&graph, &e);
                    // A node's error about the block it was built for names that block:
                    // with --overlap, not the buffer asked for.
                    let n = args.overlap;
                    let overlap = if !at.is_empty()
                        && n > 1
                        && fugue_engine::host::session::message(&e).contains("block of")
                    {
                        format!(
                            " (--overlap {n} runs {n} blocks of {} frames as one of {})",
                            args.buffer,
                            args.buffer.saturating_mul(n)
                        )
                    } else {
                        String::new()
                    };
                    anyhow::Error::new(e).context(format!(
                        "cannot render {}{at}{overlap}",
                        args.graph.display()
                    ))
                }
            });
        }
    };
    let had_input = args.input.is_some();
    let lints = fugue_engine::lint::audio(&summary, bits, &shown, &graph, had_input);
    warnings.extend(lints.iter().map(|w| w.to_string()));
    // The engine's own (an option it could not apply, a thread it could not place) fail a
    // strict render too; otherwise they are said below, with the executor's choice.
    if args.strict {
        warnings.extend(summary.warnings.iter().cloned());
    }
    if let Err(e) = crate::warn::report(&warnings, args.strict) {
        return Err(e.context(format!("{shown} was not written")));
    }
    write_out(out.as_ref(), tmp)?;
    let says_auto = summary
        .auto
        .as_ref()
        .is_some_and(|a| args.exec.request().says_auto(a));
    crate::warn::engine_notes(
        says_auto,
        summary.auto.as_ref(),
        &summary.warnings,
        (&summary.placeholders, &graph, &args.graph),
        &summary.panics,
    );
    let (kind, threads) = options.executor.played(summary.auto.as_ref());
    let what = format!(
        "{}, {kind} with {threads} thread(s), {} frames at {} Hz, offline render",
        args.graph.display(),
        args.buffer,
        args.rate
    );
    crate::cmd::profile::emit(summary.profile.as_ref(), profile_dir.as_deref(), &what)?;
    let report = RenderReport::new(
        &args.graph,
        &shown,
        args.buffer,
        bits,
        &summary,
        (kind, threads),
    );
    let line = if args.json {
        serde_json::to_string(&report)?
    } else {
        util::one_line(&report.to_string())
    };
    // With the audio on standard output, the summary goes to standard error.
    if audio_on_stdout {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    Ok(())
}

/// The render's options from the flags (checked); the WAV's path is set by the caller.
fn options(args: &Args, bits: Bits) -> anyhow::Result<RenderOptions> {
    if let Some(s) = args.seconds {
        let unit = format!("one sample at {} Hz", args.rate);
        util::check_seconds(s, 86_400.0, Some((1.0 / f64::from(args.rate), &unit)))?;
    }
    let profile = args.profile.is_some();
    crate::util::check_pipeline(args.exec.pipeline, Some(args.buffer as usize), profile)?;
    let mut executor = args.exec.request().choice_or(GraphExecutor::Auto, profile);
    // Offline, cycles may overlap (same samples): auto tries it where it may gain
    // (`overlap_worth`: enough cores, blocks not too large), unless profiled; its trials are
    // the render's first cycles (the profile wants one executor from the start).
    executor.auto_overlap = !profile && fugue_engine::auto::overlap_worth(args.buffer as usize);
    executor.trials_in_run = !profile;
    if args.overlap > 1 {
        let n = args.overlap;
        if executor.auto {
            return Err(util::usage(format!(
                "--overlap {n} needs an executor other than auto (auto tries {} blocks per cycle itself); name one with --executor",
                fugue_engine::auto::OVERLAP
            )));
        }
        if profile {
            return Err(util::usage(format!(
                "--profile cannot be used with --overlap {n}: the profile keeps one record per task and block; profile without --overlap"
            )));
        }
        if args.buffer.saturating_mul(n) > fugue_exec::MAX_BLOCK as u64 {
            return Err(util::usage(format!(
                "--overlap {n} with a buffer of {} frames makes cycles of more than {} frames; use a smaller buffer or overlap",
                args.buffer,
                fugue_exec::MAX_BLOCK
            )));
        }
        executor.overlap = n as usize;
    }
    let seconds = match (args.tail, &args.input) {
        (Some(tail), Some(input)) => {
            let seconds = fugue_engine::tail_seconds(input, tail).map_err(util::usage)?;
            // An empty input and a tail of less than a sample would make an empty file.
            if seconds.is_some_and(|s| (s * f64::from(args.rate)).round() < 1.0) {
                return Err(util::usage(format!(
                    "--input {} and --tail {tail} make less than one sample at {} Hz, so the render would be empty; give a longer --tail or --seconds",
                    input.display(),
                    args.rate
                )));
            }
            seconds
        }
        _ => args.seconds,
    };
    Ok(RenderOptions {
        sample_rate: args.rate,
        block: args.buffer as usize,
        seconds,
        bits,
        input: args.input.clone(),
        output: fugue_engine::Output::Discard,
        placeholder: args.placeholder,
        cancel: Some(signals::stop_flag_within(signals::STOP_GRACE)),
        executor,
        profile,
        registry: crate::util::registry(),
    })
}

/// Gives the finished WAV `tmp` its name, or copies it to standard output (`out` is `None`).
fn write_out(out: Option<&OutputFile>, tmp: Temp) -> anyhow::Result<()> {
    signals::not_polled();
    let Some(o) = out else {
        let copied = std::fs::File::open(tmp.path()).and_then(|mut f| {
            let mut out = std::io::stdout().lock();
            std::io::copy(&mut f, &mut out)?;
            out.flush()
        });
        drop(tmp);
        if let Err(e) = &copied {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                // Its reader stopped: quietly, 141 (the temporary file is gone already).
                crate::stdio::failed("standard output", e);
            }
        }
        return copied.context("cannot write the WAV data to standard output");
    };
    Ok(o.commit(tmp)?)
}

/// The files a render reads (the graph, the input, a costs file): never an output's.
fn inputs(args: &Args) -> Vec<&Path> {
    let mut inputs = vec![args.graph.as_path()];
    inputs.extend(args.input.as_deref());
    if let fugue_engine::Costs::File(p) = &args.exec.costs {
        inputs.push(p);
    }
    inputs
}

/// The folder of `--profile=DIR` (`None` for a bare `--profile`), checked before running
/// (never over one of `inputs`, the files the command reads).
pub fn profile_dir(
    arg: &Option<Option<PathBuf>>,
    force: bool,
    inputs: &[&Path],
    outputs: &[&Path],
) -> anyhow::Result<Option<PathBuf>> {
    match arg {
        Some(Some(d)) => {
            crate::cmd::profile::check_dir(d, force, inputs, outputs)?;
            Ok(Some(d.clone()))
        }
        _ => Ok(None),
    }
}
