//! `fugue bench faust`: Faust's scalar, `-vec`, `-vec -sch` and `-vec -omp` builds of a
//! program against fugue on a graph of the same music ([`crate::faust`]).

use std::fmt::Write as _;
use std::path::PathBuf;

use super::Env;
use crate::error::BenchError;
use crate::faust::FaustBenchConfig;
use crate::{Event, Progress};

/// Arguments of `fugue bench faust`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Programs, comma-separated: karplus32 (32 strings), mixer (8 channel strips)
    /// [default: both, unless --dsp is given].
    #[arg(long, value_delimiter = ',', value_parser = ["karplus32", "mixer"])]
    pub programs: Option<Vec<String>>,
    /// Another Faust program to measure, against the fugue graph --graph.
    #[arg(long, requires = "graph")]
    pub dsp: Option<PathBuf>,
    /// The fugue graph of the same music as --dsp.
    #[arg(long, requires = "dsp")]
    pub graph: Option<PathBuf>,
    /// A parameter of --dsp's Faust builds, NAME=VALUE (repeatable), so that they play what
    /// the graph plays.
    #[arg(long = "param", requires = "dsp")]
    pub params: Vec<String>,
    /// Thread counts of the parallel contenders, comma-separated [default: 1 to the cores].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<Vec<u64>>,
    /// Seconds of audio of each run.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Frames per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=8192))]
    pub block: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(8_000..=384_000))]
    pub rate: u32,
    /// Runs of every contender (the tables give medians and ranges).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub runs: u64,
    /// The largest difference allowed between a Faust mode's samples and its scalar build's.
    #[arg(long, default_value_t = 1e-5)]
    pub tolerance: f64,
    /// Faust's examples folder (where karplus32 and mixer are).
    #[arg(long, default_value = "/usr/share/faust/examples")]
    pub faust_examples: PathBuf,
    /// Output folder.
    #[arg(short, long, default_value = "faust-bench")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue bench faust`.
pub fn run(a: Args, env: &Env, progress: &mut dyn Progress) -> Result<String, BenchError> {
    super::once_each("--programs", a.programs.as_deref())?;
    super::once_each("--threads", a.threads.as_deref())?;
    if !(a.seconds.is_finite() && a.seconds > 0.0 && a.seconds <= 600.0) {
        return Err(BenchError::Config(format!(
            "--seconds must be above 0 and at most 600, not {}",
            fugue_graph::short_number(a.seconds)
        )));
    }
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        return Err(BenchError::Config(format!(
            "--tolerance must be a number of at least 0, not {}",
            a.tolerance
        )));
    }
    let other = match (&a.dsp, &a.graph) {
        (Some(d), Some(g)) => Some((d.as_path(), g.as_path(), a.params.as_slice())),
        _ => None,
    };
    let programs = crate::faust::programs(a.programs.as_deref(), &a.faust_examples, other)?;
    if let (Some(dsp), false) = (&a.dsp, a.params.is_empty()) {
        params_named(dsp, &a.params, env)?;
    }
    if let Some(g) = &a.graph {
        graph_checked(g, a.rate, a.block as usize, env)?;
    }
    let cores = fugue_exec::placement::available_cores().max(1);
    let work = std::env::temp_dir().join(format!("fugue-bench-faust-{}", std::process::id()));
    let config = FaustBenchConfig {
        fugue: std::env::current_exe()
            .map_err(|e| BenchError::io("cannot find the fugue binary to re-run", e))?,
        programs,
        threads: match &a.threads {
            Some(t) => t.iter().map(|&t| t as usize).collect(),
            None => (1..=cores).collect(),
        },
        seconds: a.seconds,
        block: a.block as usize,
        rate: a.rate,
        runs: a.runs as usize,
        tolerance: a.tolerance,
        work: work.clone(),
    };
    crate::report::folder::check(
        &a.output,
        crate::report::Existing::Files(&crate::faust::FILES),
        a.force,
    )?;
    // Removed on a signal too (the builds of Faust's programs, a few megabytes).
    fugue_engine::output::register_temp_dir(&work);
    let result = crate::faust::run(&config, &mut |line| progress.event(Event::Line(line)));
    let _ = std::fs::remove_dir_all(&work);
    fugue_engine::output::forget_path(&work);
    let bench = result?;
    crate::faust::write(&a.output, &config, &bench, &env.command, a.force)?;
    let mut out = String::new();
    for line in crate::faust::findings(&bench, config.tolerance) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "wrote {}", a.output.display());
    Ok(out)
}

/// Reads and checks the graph `path` of `--graph` as `fugue check` does (at the benchmark's
/// rate and block), before any of Faust's builds: the renders that measure it would say
/// what is wrong with it only after them.
fn graph_checked(
    path: &std::path::Path,
    rate: u32,
    block: usize,
    env: &Env,
) -> Result<(), BenchError> {
    let graph = (env.read_graph)(path)?;
    let problems =
        fugue_engine::check::check_with(&graph, &(env.registry)(), f64::from(rate), block);
    match problems
        .iter()
        .find(|p| p.severity == fugue_engine::check::Severity::Error)
    {
        Some(p) => Err(BenchError::Input(format!(
            "--graph {}",
            p.line(&path.display().to_string())
        ))),
        None => Ok(()),
    }
}

/// Checks that each `--param NAME=VALUE` names a parameter of the Faust program `dsp` (read
/// and built as the front end does), before any build: Faust's own builds would only say
/// so in their output, after compiling.
fn params_named(dsp: &std::path::Path, params: &[String], env: &Env) -> Result<(), BenchError> {
    let graph = (env.read_graph)(dsp)?;
    let registry = (env.registry)();
    let Some(v) = (0..graph.len()).find(|&v| graph.node(v).kind == "faust") else {
        return Ok(());
    };
    let ctx = fugue_dsp::NodeContext::of(&graph, v, 48_000.0, 512);
    let (node, _) = registry
        .build(&ctx, false)
        .map_err(|e| BenchError::Config(format!("--dsp {}: {e}", dsp.display())))?;
    for p in params {
        // As Faust's builds take it: the name as written, and a parameter of the program
        // (not `volume`, the node's own gain in fugue).
        let name = p.split_once('=').map_or(p.as_str(), |(n, _)| n);
        let of_program = node
            .live_param(name)
            .is_some_and(|k| node.live_parts(k) != ["volume"]);
        if !of_program {
            return Err(BenchError::Config(format!(
                "--param {p}: the Faust program {} has no parameter `{name}` (`fugue info {}` lists them)",
                dsp.display(),
                dsp.display()
            )));
        }
    }
    Ok(())
}
