//! `fugue bench study [SPEC.toml] [-o DIR]`: the scheduling study ([`fugue_bench::study`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fugue_bench::study::{StudyConfig, DEFAULT_SPEC};

use super::Terminal;

/// Arguments of `fugue bench study`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The study spec (TOML) [default: studies/default.toml].
    pub spec: Option<PathBuf>,
    /// Output folder.
    #[arg(short, long, default_value = "bench-results/study")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue bench study`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let _ = ctrlc::set_handler(move || s.store(true, Ordering::Relaxed));
    let config = StudyConfig {
        spec: args.spec.unwrap_or_else(|| PathBuf::from(DEFAULT_SPEC)),
        output: args.output,
        force: args.force,
        command: super::command_line(),
        stop,
    };
    let r = fugue_bench::study::run(&config, &mut Terminal::default())?;
    println!(
        "{}: {} runs in {:.0} s; summary.csv, report.html, {} figures (SVG and PNG), raw.csv.gz",
        r.output.display(),
        r.runs,
        r.seconds,
        r.figures
    );
    if r.unverified > 0 {
        anyhow::bail!(
            "{} configuration(s) did not compute the same output as seq (see the verified column of summary.csv)",
            r.unverified
        );
    }
    Ok(())
}
