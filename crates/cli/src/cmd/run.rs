//! `fugue run GRAPH --backend jack|clocked`: real-time runs, measured per cycle.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use fugue_engine::{Backend, Deadline, EndReason, RunOptions, StatsOptions, Summary};

use crate::util;

/// Arguments of `fugue run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph to run (.ag, .stg or .dot).
    pub graph: PathBuf,
    /// jack (a JACK client; the server's rate and buffer size) or clocked (no audio server:
    /// cycles paced by absolute-time sleeps at --rate and --buffer, outputs discarded).
    #[arg(long, default_value = "jack", value_parser = ["jack", "clocked"])]
    pub backend: String,
    /// Sample rate in Hz (clocked backend).
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Frames per cycle (clocked backend).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Stop after this many seconds [default: run until Ctrl-C].
    #[arg(long, visible_alias = "duration")]
    pub seconds: Option<f64>,
    /// Write one CSV row per cycle to this file (written on Ctrl-C and when the server stops too).
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
    let graph = util::read_graph(&args.graph, None)?;
    // With --strict, fail before running; otherwise the warnings are said after a run that
    // started (one that fails says only why).
    let graph_warnings = crate::warn::graph_warnings(&graph, &args.graph);
    if args.strict {
        crate::warn::report(&graph_warnings, true)?;
    }
    let duration = match args.seconds {
        Some(d) if !(d.is_finite() && d > 0.0 && d <= 604_800.0) => {
            return Err(util::usage(format!(
                "--seconds must be between 0 and 604800, not {d}"
            )))
        }
        Some(d) => Some(Duration::from_secs_f64(d)),
        None => None,
    };
    let profile_dir = crate::cmd::render::profile_dir(&args.profile, args.force)?;
    let tmp = match &args.stats {
        Some(p) => Some(util::temp_path(p, args.force)?),
        None => None,
    };
    let backend = if args.backend == "jack" {
        Backend::Jack {
            connect: args.connect,
            client_name: args.client_name.clone(),
        }
    } else {
        Backend::Clocked {
            rate: args.rate,
            block: args.buffer as usize,
        }
    };
    let options = RunOptions {
        backend,
        executor: args.exec.choice(),
        duration,
        deadline: if args.deadline == "double" {
            Deadline::Double
        } else {
            Deadline::Period
        },
        stats: StatsOptions {
            csv: tmp.clone(),
            keep_records: false,
            hash_outputs: false,
        },
        stop: Some(crate::util::ctrl_c_flag()),
        placeholder: args.placeholder,
        profile: args.profile.is_some(),
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
            if let Some(t) = &tmp {
                let _ = std::fs::remove_file(t);
            }
            return Err(
                anyhow::Error::new(e).context(format!("cannot run {}", args.graph.display()))
            );
        }
    };
    crate::warn::report(&graph_warnings, false)?;
    for w in &report.warnings {
        eprintln!("fugue: warning: {w}");
    }
    for p in &report.panics {
        eprintln!(
            "fugue: warning: node `{}` failed ({}); its output was silenced",
            p.node, p.message
        );
    }
    let mut stats_note = String::new();
    if let (Some(path), Some(t)) = (&args.stats, &tmp) {
        if let Some(e) = &report.csv_error {
            let _ = std::fs::remove_file(t);
            anyhow::bail!("{e}");
        }
        std::fs::rename(t, path).with_context(|| format!("cannot write {}", path.display()))?;
        stats_note = format!("; per-cycle statistics in {}", path.display());
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
    println!(
        "{} at {} Hz, {} frames ({} deadline {}): {}{xruns}{dropped}{changes}",
        args.graph.display(),
        report.sample_rate,
        report.block,
        args.deadline,
        us(s.deadline_ns as f64),
        line(s),
    );
    crate::cmd::profile::emit(
        report.profile.as_ref(),
        profile_dir.as_deref(),
        &format!(
            "{}, {} with {} thread(s), {} frames at {} Hz, {} backend",
            args.graph.display(),
            options.executor.kind,
            options.executor.threads,
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
            eprintln!("fugue: interrupted after {} cycles{stats_note}", s.cycles);
            Ok(())
        }
        EndReason::Duration => Ok(()),
    }
}
