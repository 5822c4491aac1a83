//! `fugue run GRAPH --backend jack|clocked`: real-time runs, measured per cycle.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fugue_engine::{Backend, Deadline, EndReason, RunOptions, StatsOptions, Summary};

use crate::output::Output;
use crate::signals;
use crate::util;

/// Arguments of `fugue run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph to run (.ag, .stg or .dot).
    pub graph: PathBuf,
    /// The graph's format, instead of guessing it from the extension: ag, stg or dot.
    #[arg(long, value_parser = util::parse_format)]
    pub format: Option<fugue_graph::Format>,
    /// jack (a JACK client; the server's rate and buffer size) or clocked (no audio server:
    /// cycles paced by absolute-time sleeps at --rate and --buffer, outputs discarded).
    #[arg(long, default_value = "jack", value_parser = ["jack", "clocked"])]
    pub backend: String,
    /// Sample rate in Hz (clocked backend; JACK uses the server's) [default: 48000].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: Option<u32>,
    /// Frames per cycle (clocked backend; JACK uses the server's) [default: 256].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: Option<u64>,
    /// Stop after this many seconds of wall time [default: run until Ctrl-C, SIGTERM or
    /// SIGHUP]. The clocked backend runs round(seconds × rate / buffer) cycles, fewer when
    /// cycles overran: it stops when the time is up.
    #[arg(long, visible_alias = "duration")]
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
    /// Name of the JACK client.
    #[arg(long, default_value = "fugue")]
    pub client_name: String,
    /// Run nodes of unknown kind as silence (with a warning) instead of failing.
    #[arg(long)]
    pub placeholder: bool,
    /// Collect the per-node, per-worker profile (node times, wake-ups, busy and idle time,
    /// the slowest cycles) and print it to standard error; `--profile=DIR` also writes the
    /// report into the folder DIR (as `fugue profile -o DIR`).
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "DIR")]
    pub profile: Option<Option<PathBuf>>,
    /// Fail (exit code 1) on a warning about the graph: an attribute no kind reads, a node
    /// that reaches no sink.
    #[arg(long)]
    pub strict: bool,
    /// Print the report as one JSON object on standard output instead of the summary line:
    /// the cycle statistics, and under `auto` what the automatic choice chose, why, and every
    /// candidate's mean trial cycle.
    #[arg(long)]
    pub json: bool,
    /// The executor that runs the cycles.
    #[command(flatten)]
    pub exec: crate::exec_args::ExecArgs,
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

/// One line of statistics (with the threads' wake-up latency when other threads took part).
fn line(s: &Summary) -> String {
    let wake = if s.woken > 0 {
        format!(
            ", wake-up median {}, p99 {}",
            us(s.wake_median_ns as f64),
            us(s.wake_p99_ns as f64)
        )
    } else {
        String::new()
    };
    format!(
        "cycles {}, mean {}, median {}, p99 {}, max {}, deadline misses {} ({:.2} %){wake}",
        s.cycles,
        us(s.mean_ns),
        us(s.median_ns as f64),
        us(s.p99_ns as f64),
        us(s.max_ns as f64),
        s.misses,
        s.miss_rate() * 100.0
    )
}

/// Runs `fugue run`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let graph = util::read_graph(&args.graph, args.format)?;
    // With --strict, fail before running; otherwise the warnings are said after a run that
    // started (one that fails says only why).
    let mut graph_warnings = crate::warn::graph_warnings(&graph, &args.graph);
    graph_warnings.extend(args.exec.warnings(crate::exec_args::Executor::Auto));
    if args.backend == "jack" {
        for (flag, given) in [
            ("--rate", args.rate.is_some()),
            ("--buffer", args.buffer.is_some()),
        ] {
            if given {
                graph_warnings.push(format!(
                    "{flag} applies to the clocked backend only; the JACK backend runs at the server's rate and buffer size"
                ));
            }
        }
    }
    if args.strict {
        crate::warn::report(&graph_warnings, true)?;
    }
    let rate = args.rate.unwrap_or(48_000);
    let buffer = args.buffer.unwrap_or(256);
    // The clocked backend's cycle is known before the run; JACK's is the server's, unknown
    // until connected: any length above zero is accepted there.
    let cycle = format!("one cycle of {buffer} frames at {rate} Hz");
    let unit = (args.backend != "jack").then(|| (buffer as f64 / f64::from(rate), &*cycle));
    if let Some(d) = args.seconds {
        util::check_seconds(d, 604_800.0, unit)?;
    }
    let duration = args.seconds.map(Duration::from_secs_f64);
    // The JACK server chooses its buffer: checked when the plan is compiled.
    let known_buffer = (args.backend != "jack").then_some(buffer as usize);
    crate::exec_args::check_pipeline(args.exec.pipeline, known_buffer, args.profile.is_some())?;
    let profile_dir = crate::cmd::render::profile_dir(&args.profile, args.force)?;
    let stats_out = match &args.stats {
        Some(p) => Some(Output::check(p, args.force, &[args.graph.as_path()])?),
        None => None,
    };
    let tmp = match &stats_out {
        Some(o) => Some(o.temp()?),
        None => None,
    };
    let backend = if args.backend == "jack" {
        Backend::Jack {
            connect: args.connect,
            client_name: args.client_name.clone(),
        }
    } else {
        Backend::Clocked {
            rate,
            block: buffer as usize,
        }
    };
    let options = RunOptions {
        backend,
        executor: {
            let mut c = args
                .exec
                .choice_or(crate::exec_args::Executor::Auto, args.profile.is_some());
            c.pin = args.exec.pin_for(true);
            c
        },
        duration,
        deadline: if args.deadline == "double" {
            Deadline::Double
        } else {
            Deadline::Period
        },
        stats: StatsOptions {
            csv: tmp.as_ref().map(|t| t.path().to_path_buf()),
            keep_records: false,
            hash_outputs: false,
        },
        stop: Some(signals::stop_flag()),
        placeholder: args.placeholder,
        profile: args.profile.is_some(),
        registry: crate::util::registry(),
    };
    let terminal = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let mut shown = false;
    let result = fugue_engine::run(&graph, &options, |s| {
        if terminal && last.elapsed() >= Duration::from_secs(1) {
            eprint!("\r\x1b[2K{}", line(s));
            let _ = std::io::stderr().flush();
            last = Instant::now();
            shown = true;
        }
    });
    if shown {
        eprint!("\r\x1b[2K");
    }
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            drop(tmp);
            return Err(
                anyhow::Error::new(e).context(format!("cannot run {}", args.graph.display()))
            );
        }
    };
    crate::warn::report(&graph_warnings, false)?;
    if let Some(a) = &report.auto {
        if args.exec.says_auto(a) {
            eprintln!("fugue: {}", a.line());
        }
    }
    for w in &report.warnings {
        crate::util::warning(w);
    }
    for p in &report.panics {
        util::warning(format_args!(
            "node `{}` failed ({}); its output was silenced",
            p.node, p.message
        ));
    }
    let s = &report.summary;
    let xruns = if args.backend == "jack" {
        // Cycles the server's clock went through while the client was active but did not
        // run it (it fell behind real time); only exact when the buffer size did not change.
        let skipped = report
            .server_cycles()
            .map_or(0, |c| c.saturating_sub(report.cycles_run()));
        if skipped > 0 {
            format!(
                ", JACK xruns {} ({skipped} server cycles skipped)",
                report.xruns
            )
        } else {
            format!(", JACK xruns {}", report.xruns)
        }
    } else {
        format!(", overruns {}", report.xruns)
    };
    let dropped = if s.dropped > 0 {
        format!(", {} records dropped (statistics ring full)", s.dropped)
    } else {
        String::new()
    };
    let changes = if report.buffer_changes > 0 {
        format!(
            ", {} buffer-size change(s), {} silent cycle(s)",
            report.buffer_changes, report.silent_cycles
        )
    } else {
        String::new()
    };
    let (kind, threads) = crate::exec_args::played(&options.executor, report.auto.as_ref());
    if args.json {
        let us = |ns: f64| ns / 1000.0;
        let json = serde_json::json!({
            "graph": args.graph.display().to_string(),
            "backend": args.backend,
            "sample_rate": report.sample_rate,
            "buffer": report.block,
            "executor": kind.to_string(),
            "threads": threads,
            "deadline": args.deadline,
            "deadline_us": us(s.deadline_ns as f64),
            "cycles": s.cycles,
            "mean_us": us(s.mean_ns),
            "median_us": us(s.median_ns as f64),
            "p99_us": us(s.p99_ns as f64),
            "max_us": us(s.max_ns as f64),
            "misses": s.misses,
            "miss_rate": s.miss_rate(),
            "overruns": report.xruns,
            "dropped": s.dropped,
            "steals": s.steals,
            "wake_median_us": us(s.wake_median_ns as f64),
            "wake_p99_us": us(s.wake_p99_ns as f64),
            "buffer_changes": report.buffer_changes,
            "silent_cycles": report.silent_cycles,
            "auto": report.auto.as_ref().map(crate::exec_args::auto_json),
        });
        println!("{json}");
    } else {
        println!(
            "{} at {} Hz, {} frames ({} deadline {}): {}{xruns}{dropped}{changes}",
            args.graph.display(),
            report.sample_rate,
            report.block,
            args.deadline,
            us(s.deadline_ns as f64),
            line(s),
        );
    }
    // The per-cycle statistics, after the summary: a file that cannot be written (a full
    // disk) loses no more than the file.
    let mut stats_note = String::new();
    if let (Some(out), Some(t)) = (&stats_out, tmp) {
        let shown = out.path().display();
        if let Some(e) = &report.csv_error {
            drop(t);
            let why = if fugue_bench::report::is_disk_full(e) {
                format!("the disk is full ({e})")
            } else {
                e.to_string()
            };
            anyhow::bail!(
                "cannot write the per-cycle statistics to {shown}: {why}; the summary above is complete"
            );
        }
        out.commit(t)?;
        stats_note = format!("; per-cycle statistics in {shown}");
    }
    crate::cmd::profile::emit(
        report.profile.as_ref(),
        profile_dir.as_deref(),
        &format!(
            "{}, {} with {} thread(s), {} frames at {} Hz, {} backend",
            args.graph.display(),
            kind,
            threads,
            report.block,
            report.sample_rate,
            args.backend
        ),
    )?;
    match &report.end {
        EndReason::ServerGone(reason) => {
            let why = if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            };
            anyhow::bail!(
                "the JACK server stopped{why} after {} cycles; the statistics so far were kept{stats_note}",
                s.cycles
            )
        }
        EndReason::Stopped => {
            signals::say(&format!(
                "{} after {} cycles{stats_note}",
                signals::interrupted(),
                s.cycles
            ));
            Ok(())
        }
        EndReason::Duration => Ok(()),
    }
}
