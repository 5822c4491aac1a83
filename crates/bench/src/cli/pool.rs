//! `fugue bench pool`: the task pool's policies × thread counts × workloads against the
//! sequential program and rayon ([`crate::pool::bench`]).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use fugue_pool::Policy;

use super::{count, Env};
use crate::error::BenchError;
use crate::pool::bench::{default_threads, default_workloads, PoolBenchConfig};
use crate::Progress;

/// Arguments of `fugue bench pool`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Policies to measure, comma-separated (default: all seven).
    #[arg(long, value_delimiter = ',')]
    pub policies: Option<Vec<Policy>>,
    /// Thread counts, comma-separated (default: 1, 2, 4, ... up to the cores, and the cores).
    #[arg(long, short = 't', value_delimiter = ',', allow_negative_numbers = true, value_parser = count(u64::MAX))]
    pub threads: Option<Vec<u64>>,
    /// Workloads, comma-separated: quicksort, mandelbrot, voronoi, spawn-tree (default: all).
    #[arg(long, value_delimiter = ',', value_parser = ["quicksort", "mandelbrot", "voronoi", "spawn-tree"])]
    pub workloads: Option<Vec<String>>,
    /// Runs per configuration (the summary gives medians and spread).
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = count(1000))]
    pub runs: u64,
    /// Divide the workloads' sizes by this (1: quicksort of 10 million, Mandelbrot 1024x768,
    /// Voronoi 2048x2048, a tree of a million tasks), for a quick look.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = count(1024))]
    pub scale: u64,
    /// Milliseconds each idle pool is watched for its CPU use.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true, value_parser = count(60_000))]
    pub idle_ms: u64,
    /// Output folder.
    #[arg(short, long, default_value = "pool-bench")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue bench pool`.
pub fn run(a: Args, env: &Env, progress: &mut dyn Progress) -> Result<String, BenchError> {
    super::once_each("--policies", a.policies.as_deref())?;
    super::once_each("--threads", a.threads.as_deref())?;
    super::once_each("--workloads", a.workloads.as_deref())?;
    let cores = fugue_pool::default_threads();
    let threads: Vec<usize> = match a.threads {
        Some(t) => t.into_iter().map(|x| x as usize).collect(),
        None => default_threads(cores),
    };
    if let Some(&t) = threads.iter().find(|&&t| t > fugue_pool::MAX_THREADS) {
        return Err(BenchError::Config(format!(
            "--threads {t}: more than the pool's limit of {} threads",
            fugue_pool::MAX_THREADS
        )));
    }
    let mut workloads = default_workloads(a.scale as usize);
    if let Some(names) = &a.workloads {
        workloads.retain(|w| names.iter().any(|n| n == w.name()));
    }
    let config = PoolBenchConfig {
        policies: a.policies.unwrap_or_else(|| Policy::ALL.to_vec()),
        threads,
        workloads,
        runs: a.runs as usize,
        idle: Duration::from_millis(a.idle_ms),
        output: a.output,
        force: a.force,
        command: env.command.clone(),
    };
    let bench = crate::pool::bench::run(&config, progress)?;
    bench.write(&config)?;
    let t = if bench.thread_counts().contains(&2) {
        2
    } else {
        cores
    };
    let mut out = String::new();
    for target in bench.targets(t) {
        let (what, measured, met) = (&target.what, &target.measured, target.verdict());
        let _ = writeln!(out, "{what}: {measured} (met: {met})");
    }
    let _ = writeln!(out, "{}", bench.sentence(&config));
    Ok(out)
}
