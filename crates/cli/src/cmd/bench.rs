//! `fugue bench <subcommand>`: the benchmarks' command line ([`fugue_bench::cli`]), their
//! progress shown on the terminal and their results printed.

use std::io::IsTerminal as _;

use fugue_bench::cli::{BenchCommand, Env};
use fugue_bench::{Event, Progress};

use crate::{signals, util};

/// Arguments of `fugue bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// What to measure.
    #[command(subcommand)]
    pub command: BenchCommand,
}

/// Shows a benchmark's progress: lines and warnings on standard error, capacity windows on
/// standard output, steps as a progress bar.
#[derive(Default)]
struct Terminal {
    bar: Option<indicatif::ProgressBar>,
    /// Standard error is not a terminal: each step is one line instead of a bar.
    lines: bool,
}

impl Progress for Terminal {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Line(l) => eprintln!("{l}"),
            Event::Warning(w) => util::warning(w),
            Event::Window { at_s, capacity } => {
                println!("{}", fugue_bench::capacity::window_line(at_s, capacity));
            }
            Event::Start { total } => {
                self.lines = !std::io::stderr().is_terminal();
                if self.lines {
                    eprintln!("{total} runs");
                } else {
                    let template = "study {bar:40} {pos}/{len} runs  {elapsed}  {msg}";
                    self.bar = Some(util::progress_bar(total, template));
                }
            }
            Event::Step(m) if self.lines => eprintln!("{m}"),
            Event::Step(m) => self.bar.iter().for_each(|b| b.set_message(m.to_string())),
            Event::StepDone => self.bar.iter().for_each(|b| b.inc(1)),
            Event::Finished => self.bar.take().iter().for_each(|b| b.finish_and_clear()),
        }
    }
}

/// Runs `fugue bench`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let env = Env {
        registry: util::registry,
        stop: signals::stop_flag,
        blocking: |f| signals::blocking(f),
        read_graph: |p| util::read_graph_by_extension(p).map_err(util::bench_error),
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    let out = fugue_bench::cli::run(args.command, &env, &mut Terminal::default())?;
    print!("{out}");
    Ok(())
}
