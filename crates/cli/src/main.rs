//! The `fugue` command line. It parses arguments and calls the libraries; it is the only
//! place that prints to the terminal or chooses the exit code.
//!
//! Exit codes: 0 success; 1 bad input or a failure while running (unreadable or invalid
//! file, unwritable output, ...); 2 usage error (bad flag or value, unknown file type);
//! 130, 143, 129: stopped by SIGINT (Ctrl-C), SIGTERM, SIGHUP (128 + the signal's number);
//! 141: standard output is a pipe whose reader stopped (said by no message). A write error on
//! standard output or standard error (a full disk, `/dev/full`) is said in one sentence with
//! exit code 1 ([`stdio`]).

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

/// A command's `after_help`: its examples ([`with_exit_codes`] adds the exit codes).
macro_rules! examples {
    ($($line:literal),+ $(,)?) => { concat!("Examples:\n", $("  ", $line, "\n",)+) };
}

/// The exit codes, said at the end of every command's help.
const EXIT_CODES: &str = "\
Exit codes: 0 success; 1 bad input or a failure while running; 2 usage error;
130, 143, 129: stopped by SIGINT (Ctrl-C), SIGTERM, SIGHUP.
1 also when standard output cannot be written; 141 when its reader stopped (a pipe).";

/// `cmd` and every subcommand in it with the exit codes after their examples, and every
/// option that takes a value taking a negative number as its value (`--buffer -1` is then
/// refused by the option's own range, not taken for an unknown flag `-1`).
fn with_exit_codes(cmd: clap::Command) -> clap::Command {
    let help = match cmd.get_after_help() {
        Some(h) => format!("{h}\n{EXIT_CODES}"),
        None => EXIT_CODES.to_string(),
    };
    cmd.after_help(help)
        .mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(with_exit_codes)
}

mod cmd;
mod signals;
mod stdio;
mod terminal;
mod util;
mod warn;

/// Every plan's processors on cache lines of their own ([`fugue_exec::lines`]).
#[global_allocator]
static LINES: fugue_exec::lines::LineAllocator = fugue_exec::lines::LineAllocator;

/// fugue: a parallel real-time audio-graph engine.
#[derive(Parser, Debug)]
#[command(
    name = "fugue",
    version,
    about,
    propagate_version = true,
    after_help = examples!(
        "fugue render examples/pluck.ag -o pluck.wav --seconds 8   # render offline to WAV",
        "fugue run examples/synth.ag --backend clocked --seconds 5  # real-time cycles, measured",
        "fugue info examples/rake.ag --costs measured               # work, critical path, width",
        "fugue kinds                                                # every node kind",
        "fugue completions bash > ~/.local/share/bash-completion/completions/fugue",
    )
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print a summary of a graph: nodes, edges, sources, sinks, kinds, work, critical path, depth, width.
    #[command(after_help = examples!(
        "fugue info examples/rake.ag",
        "fugue info examples/rake.ag --costs measured --buffer 256",
        "fugue info graph.stg --json",
    ))]
    Info(cmd::info::Args),
    /// Check a graph against the node kinds: kinds, attributes, ports and edges, each problem with its place and the name it probably meant.
    #[command(after_help = examples!(
        "fugue check examples/echo.ag",
        "fugue check my.ag --strict        # warnings (a node that reaches no sink) fail too",
    ))]
    Check(cmd::check::Args),
    /// Print a graph as DOT, or draw it as SVG/PNG/PDF with Graphviz.
    #[command(after_help = examples!(
        "fugue dot examples/synth.ag                 # DOT text on standard output",
        "fugue dot examples/synth.ag -o synth.svg    # drawn by Graphviz",
    ))]
    Dot(cmd::dot::Args),
    /// Generate a graph (line, diamond, rake, layered or random) as an .ag file.
    #[command(after_help = examples!(
        "fugue gen rake --branches 33 -o rake101.ag     # the 2019 corpus's rateau101.ag",
        "fugue gen diamond --depth 5 -o diamond.ag      # losange156.ag's shape",
        "fugue gen random --nodes 30 --probability 0.2 --seed 7 -o r.ag",
    ))]
    Gen(cmd::gen::Args),
    /// Benchmarks: the ordered ring, executor overhead, the executor table, the scheduling study, capacity, the pool, the host, Faust, the profile's cost.
    #[command(after_help = examples!(
        "fugue bench study --dry-run",
        "fugue bench table --executors ws,levels --buffers 128,512",
        "fugue bench capacity --seconds 20",
    ))]
    Bench(cmd::bench::Args),
    /// Schedule a graph statically on P processors (HLFET, ETF, CPFD, random, optimal, best).
    #[command(after_help = examples!(
        "fugue schedule examples/rake.ag                       # best heuristic, every core",
        "fugue schedule graph.stg -a cpfd -p 4 --gantt g.svg",
        "fugue calibrate g.ag -o costs.csv && fugue schedule g.ag --costs costs.csv",
    ))]
    Schedule(cmd::schedule::Args),
    /// Render a graph offline to a WAV file (no audio server needed).
    #[command(after_help = examples!(
        "fugue render examples/pluck.ag -o pluck.wav --seconds 8",
        "fugue render examples/echo.ag -o echo.wav --input voice.wav --tail 3",
        "fugue render examples/synth.ag -o - | aplay      # WAV on standard output",
        "fugue render g.ag -o g.wav --executor ws --threads 2 --strict",
    ))]
    Render(cmd::render::Args),
    /// Run a graph in real time (JACK, ALSA, or clocked without an audio server), measured per cycle.
    #[command(after_help = examples!(
        "fugue run examples/synth.ag --backend clocked --buffer 128 --seconds 10",
        "fugue run examples/synth.ag --backend jack --executor ws --threads 2 --connect",
        "fugue run g.ag --backend clocked --seconds 30 --stats cycles.csv",
    ))]
    Run(cmd::run::Args),
    /// Many graphs on one pool of threads, loaded and unloaded while it plays, from a shell, a script or a socket.
    #[command(after_help = examples!(
        "fugue host                                     # an interactive prompt: load a examples/synth.ag, ...",
        "fugue host --script session.txt --record mix.wav",
        "fugue host --control /tmp/fugue.sock & fugue ctl /tmp/fugue.sock load a examples/pluck.ag",
        "fugue host --mode separate --threads 2 --backend offline --script s.txt --json",
        "fugue host --pipeline auto --buffer 512        # every graph pipelined where it helps",
        "fugue host --mode separate --executor ws       # each graph on its own work-stealing executor",
    ))]
    Host(cmd::host::Args),
    /// Send one command to a `fugue host --control SOCKET` and print its reply.
    #[command(after_help = examples!(
        "fugue ctl /tmp/fugue.sock list",
        "fugue ctl /tmp/fugue.sock gain a -6",
    ))]
    Ctl(cmd::host::CtlArgs),
    /// The task pool's demos: quicksort, Mandelbrot, Voronoi (time, tasks, steals, CPU use).
    #[command(after_help = examples!(
        "fugue pool quicksort -n 10000000 --policy steal --threads 2",
        "fugue pool mandelbrot -o mandelbrot.png",
    ))]
    Pool(fugue_bench::cli::demo::Args),
    /// Run a graph with the per-node, per-worker profile on and report why cycles take their time.
    Profile(cmd::profile::Args),
    /// Measure each node's processing time at a buffer size; write the costs file (node,cost).
    #[command(after_help = examples!(
        "fugue calibrate examples/rake.ag",
        "fugue calibrate g.ag --buffer 256 -o costs.csv",
    ))]
    Calibrate(cmd::calibrate::Args),
    /// List every node kind: its ports and attributes (--markdown: docs/nodes.md).
    #[command(after_help = examples!(
        "fugue kinds",
        "fugue kinds --markdown > docs/nodes.md",
    ))]
    Kinds(cmd::kinds::Args),
    /// List the installed LV2 plugins that an `lv2` node can use: URI, name, audio ports, controls.
    #[command(after_help = examples!(
        "fugue plugins",
        "fugue plugins reverb",
        "fugue plugins mda --json",
    ))]
    Plugins(cmd::plugins::Args),
    /// Print a shell completion script for fugue (bash, zsh, fish, elvish, powershell).
    #[command(after_help = examples!(
        "fugue completions bash > ~/.local/share/bash-completion/completions/fugue",
        "fugue completions zsh > ~/.zfunc/_fugue",
        "fugue completions fish > ~/.config/fish/completions/fugue.fish",
    ))]
    Completions(cmd::completions::Args),
    /// Print fugue's man page (roff), or write one page per command into a folder.
    #[command(after_help = examples!(
        "fugue man | man -l -",
        "fugue man --dir /usr/local/share/man/man1",
    ))]
    Man(cmd::completions::ManArgs),
}

fn main() -> ExitCode {
    // `fugue __faust-compile`: this program as the child that compiles a Faust program
    // before the parent loads it (a crash of libfaust then ends only the child).
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(fugue_faust::HELPER_ARG))
    {
        return fugue_faust::helper_main();
    }
    if let Ok(me) = std::env::current_exe() {
        fugue_faust::use_helper(me);
    }
    ignore_sigpipe();
    stdio::install();
    signals::install();
    let parsed = with_exit_codes(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // A megabyte-long argument is not echoed whole (the message, without colours).
            let plain = e.render().to_string();
            let plain_value = (e.kind() == clap::error::ErrorKind::ValueValidation)
                .then(|| util::plain_value_error(&plain))
                .flatten();
            let printed = if let Some(said) = plain_value {
                use std::io::Write as _;
                if said.len() > 4 * util::WORD_MAX {
                    writeln!(
                        std::io::stderr(),
                        "{}",
                        util::shorten_words(said.trim_end())
                    )
                } else {
                    write!(std::io::stderr(), "{said}")
                }
            } else if e.use_stderr() && plain.len() > 4 * util::WORD_MAX {
                use std::io::Write as _;
                writeln!(
                    std::io::stderr(),
                    "{}",
                    util::shorten_words(plain.trim_end())
                )
            } else {
                e.print()
            };
            if let Err(err) = printed {
                let stream = if e.use_stderr() {
                    "standard error"
                } else {
                    "standard output"
                };
                stdio::failed(stream, &err);
            }
            return ExitCode::from(code);
        }
    };
    let plays = matches!(cli.command, Command::Run(_) | Command::Host(_));
    let result = match cli.command {
        Command::Info(a) => cmd::info::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Dot(a) => cmd::dot::run(a),
        Command::Gen(a) => cmd::gen::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Schedule(a) => cmd::schedule::run(a),
        Command::Render(a) => cmd::render::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Host(a) => cmd::host::run(a),
        Command::Ctl(a) => cmd::host::ctl(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Pool(a) => fugue_bench::cli::demo::run(a)
            .map(|out| print!("{out}"))
            .map_err(Into::into),
        Command::Profile(a) => cmd::profile::run(a),
        Command::Kinds(a) => cmd::kinds::run(a),
        Command::Plugins(a) => cmd::plugins::run(a),
        Command::Completions(a) => {
            cmd::completions::completions(a, with_exit_codes(Cli::command()))
        }
        Command::Man(a) => cmd::completions::man(a, with_exit_codes(Cli::command())),
    };
    stdio::flush();
    match result {
        Ok(()) => match signals::received() {
            // The command finished its work; the signal came meanwhile.
            Some(sig) => {
                if !signals::said() {
                    eprintln!(
                        "fugue: stopped by {}; what was complete was kept",
                        signals::name(sig)
                    );
                }
                ExitCode::from((128 + sig) as u8)
            }
            None => ExitCode::SUCCESS,
        },
        Err(e) if !plays && stdio::reader_stopped(&e) => {
            // The reader of an output that is a named pipe stopped before the end: quietly,
            // as a process ended by SIGPIPE, but with its temporary files removed.
            fugue_engine::output::remove_temps();
            ExitCode::from(stdio::CLOSED_PIPE)
        }
        Err(e) => {
            eprintln!("fugue: {}", util::message(&e));
            ExitCode::from(util::exit_code(&e))
        }
    }
}

/// A write to a pipe whose reader stopped fails with EPIPE instead of ending the process on
/// SIGPIPE: `run` and `host` play on when a reader of theirs goes away (a recording into a
/// named pipe, a control client that hung up before its reply) and say it as a write error;
/// any other command ends quietly with 141, as Unix tools do (`fugue schedule ... | head`),
/// once its temporary files are removed ([`stdio`]). Spawned programs get SIGPIPE's default
/// back (the standard library restores it in the child).
fn ignore_sigpipe() {
    // SAFETY: changing the disposition of SIGPIPE has no memory-safety preconditions; no
    // handler is installed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
