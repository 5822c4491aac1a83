//! The `fugue` command line. It parses arguments and calls the libraries; it is the only
//! place that prints to the terminal or chooses the exit code.
//!
//! Exit codes: 0 success; 1 bad input or a failure while running (unreadable or invalid
//! file, unwritable output, ...); 2 usage error (bad flag or value, unknown file type).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod costs;
mod exec_args;
mod util;
mod warn;

/// fugue: a parallel real-time audio-graph engine.
#[derive(Parser, Debug)]
#[command(name = "fugue", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print a summary of a graph: nodes, edges, sources, sinks, kinds, work, critical path, depth, width.
    Info(cmd::info::Args),
    /// Print a graph as DOT, or draw it as SVG/PNG/PDF with Graphviz.
    Dot(cmd::dot::Args),
    /// Generate a graph (line, diamond, rake, layered or random) as an .ag file.
    Gen(cmd::gen::Args),
    /// Benchmarks: the ordered ring, executor overhead, the executor table, the scheduling study.
    Bench(cmd::bench::Args),
    /// Schedule a graph statically on P processors (HLFET, ETF, CPFD, random, exact, best).
    Schedule(cmd::schedule::Args),
    /// Render a graph offline to a WAV file (no audio server needed).
    Render(cmd::render::Args),
    /// Run a graph in real time (JACK, or clocked without an audio server), measured per cycle.
    Run(cmd::run::Args),
    /// The task pool's demos: quicksort, Mandelbrot, Voronoi (time, tasks, steals, CPU use).
    Pool(cmd::pool::Args),
    /// Measure each node's processing time at a buffer size; write the costs file (node,cost).
    Calibrate(cmd::calibrate::Args),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Dot(a) => cmd::dot::run(a),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Schedule(a) => cmd::schedule::run(a),
        Command::Render(a) => cmd::render::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Pool(a) => cmd::pool::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fugue: {}", util::message(&e));
            ExitCode::from(util::exit_code(&e))
        }
    }
}

/// Output piped into a program that stops reading (`fugue schedule ... | head`) ends the
/// process quietly, as Unix tools do, instead of failing on a write error.
fn restore_sigpipe() {
    // SAFETY: setting the disposition of SIGPIPE to its default before any thread is started
    // has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
