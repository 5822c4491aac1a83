//! `fugue bench host`: N instances of a graph on one host in each mode
//! ([`crate::host`]): offline throughput and fairness, real-time misses and the largest
//! N each mode holds.

use std::fmt::Write as _;
use std::path::PathBuf;

use fugue_engine::host::Mode;

use super::Env;
use crate::error::BenchError;
use crate::host::{default_graphs, named_graph, HostBenchConfig};
use crate::Progress;

/// Arguments of `fugue bench host`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Graphs, comma-separated: rateau101 (the corpus's rake of 101 nodes, generated),
    /// heavyK (K chains of noise, biquads and a reverb), gen:SHAPE:N, or a graph file
    /// [default: rateau101,heavy6].
    #[arg(long, value_delimiter = ',')]
    pub graphs: Option<Vec<String>>,
    /// Largest instance count (N runs from 1).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub max_instances: u64,
    /// Instance counts, comma-separated, instead of 1 to --max-instances (`--instances 8,16`).
    #[arg(long, value_delimiter = ',', conflicts_with = "max_instances",
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub instances: Option<Vec<u64>>,
    /// Repeats of the offline part: each measures every point again, beside its ceiling; the
    /// README gives medians and ranges over them.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub repeats: u64,
    /// How the host's pool runs the graphs (see `fugue host --grain`): units, whole,
    /// balanced or auto.
    #[arg(long, default_value = "auto", value_parser = ["units", "whole", "balanced", "auto"])]
    pub grain: String,
    /// The real-time runs' threads at real-time priority (SCHED_FIFO PRIORITY, default 80;
    /// the audio thread one above), as `fugue host --rt` runs them; when refused, said once.
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "PRIORITY", default_missing_value = "80", value_parser = clap::value_parser!(i32).range(1..=98))]
    pub rt: Option<i32>,
    /// Modes, comma-separated [default: shared,partitioned,separate].
    #[arg(long, value_delimiter = ',', value_parser = ["shared", "partitioned", "separate"])]
    pub modes: Option<Vec<String>>,
    /// Threads of the pool (of each instance in separate mode), comma-separated: the study
    /// runs at each, with its ceiling [default: one per core].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<Vec<u64>>,
    /// Wall seconds of each offline point, and as many of the ceiling beside it, in
    /// alternating slices of about 50 ms (0.01 to 3600; a point runs 20 cycles at least,
    /// so a graph of slow cycles takes longer).
    #[arg(long, default_value_t = 1.0)]
    pub offline_seconds: f64,
    /// Buffer sizes of the real-time runs (clocked backend), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "128,512")]
    pub buffers: Vec<u64>,
    /// Seconds of each real-time run.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Leave out the real-time part.
    #[arg(long)]
    pub offline_only: bool,
    /// Output folder.
    #[arg(short, long, default_value = "host-bench")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// Runs `fugue bench host`.
pub fn run(a: Args, env: &Env, progress: &mut dyn Progress) -> Result<String, BenchError> {
    super::once_each("--graphs", a.graphs.as_deref())?;
    super::once_each("--instances", a.instances.as_deref())?;
    super::once_each("--modes", a.modes.as_deref())?;
    super::once_each("--threads", a.threads.as_deref())?;
    super::once_each("--buffers", Some(&a.buffers))?;
    // At least 10 ms: a shorter window holds a few cycles at most, and the ceiling's engines
    // may not even start (its fractions were 1.8, or 10^15 where one ran none).
    for (flag, v) in [
        ("--offline-seconds", a.offline_seconds),
        ("--seconds", a.seconds),
    ] {
        if !(v.is_finite() && (0.01..=3600.0).contains(&v)) {
            return Err(BenchError::Config(format!(
                "{flag} must be from 0.01 to 3600 seconds, not {}",
                super::shown(v)
            )));
        }
    }
    if a.buffers.iter().any(|&b| b == 0 || b > 65_536) {
        return Err(BenchError::Config(
            "--buffers: each size must be between 1 and 65536".into(),
        ));
    }
    let cores = fugue_exec::placement::available_cores().max(1);
    if let Some(&t) = a.threads.iter().flatten().find(|&&t| t as usize > cores) {
        progress.event(crate::progress::Event::Warning(&format!(
            "--threads {t} is more than the {cores} cores this process may use: the ceiling's {t} sequential engines share cores instead of running one per core, so it and the fractions of it are not a {t}-core machine's"
        )));
    }
    let graphs = match &a.graphs {
        None => default_graphs(),
        Some(names) => names
            .iter()
            .map(|n| named_graph(n, &env.read_graph))
            .collect::<Result<Vec<_>, _>>()?,
    };
    // Each graph is a row of the report, by its name: two files of one name would be merged.
    for (i, (label, _)) in graphs.iter().enumerate() {
        if let Some(j) = graphs[..i].iter().position(|(l, _)| l == label) {
            let given = |k: usize| {
                a.graphs
                    .as_ref()
                    .and_then(|n| n.get(k))
                    .cloned()
                    .unwrap_or_else(|| label.clone())
            };
            return Err(BenchError::Config(format!(
                "--graphs: `{}` and `{}` are both named `{label}` in the report (a file is named by its name without the extension); give each graph once, or rename one",
                given(j),
                given(i)
            )));
        }
    }
    let registry = (env.registry)();
    let config = HostBenchConfig {
        instances: match &a.instances {
            Some(list) => {
                let mut v: Vec<usize> = list.iter().map(|&n| n as usize).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            None => (1..=a.max_instances as usize).collect(),
        },
        repeats: a.repeats as usize,
        grain: fugue_engine::host::TenantGrain::from_name(&a.grain).expect("clap checks the grain"),
        modes: match &a.modes {
            Some(m) => m.iter().filter_map(|m| Mode::from_name(m)).collect(),
            None => Mode::ALL.to_vec(),
        },
        threads: match &a.threads {
            Some(t) => t.iter().map(|&t| t as usize).collect(),
            None => vec![fugue_exec::placement::available_cores().max(1)],
        },
        offline_seconds: a.offline_seconds,
        buffers: if a.offline_only {
            Vec::new()
        } else {
            a.buffers.iter().map(|&b| b as usize).collect()
        },
        rt_seconds: a.seconds,
        rt_priority: a.rt,
        registry,
        ..HostBenchConfig::default()
    };
    // Every graph compiled once before anything runs (the ceiling first builds it on every
    // thread): one that cannot play is said with its file and place, not minutes later.
    for ((label, g), name) in graphs.iter().zip(
        a.graphs
            .iter()
            .flatten()
            .map(Some)
            .chain(std::iter::repeat(None)),
    ) {
        let options = fugue_exec::CompileOptions {
            sample_rate: f64::from(config.rate),
            block: config.offline_buffer,
            ..Default::default()
        };
        if let Err(e) = fugue_exec::Plan::compile(g, &config.registry, &options) {
            let file = name.cloned().unwrap_or_else(|| label.clone());
            let at = fugue_engine::check::error_at(g, &e);
            // Bad input, as a graph file that does not read is: not a usage error.
            return Err(BenchError::Input(format!(
                "--graphs: cannot play {file}{at}: {}",
                fugue_engine::host::session::message(&e)
            )));
        }
    }
    // The folder is checked before the run, which may take minutes.
    crate::report::folder::check(
        &a.output,
        crate::report::Existing::Files(&crate::host::FILES),
        a.force,
    )?;
    let bench = crate::host::run(&config, &graphs, progress)?;
    if let Some(why) = crate::host::all_refused(&bench) {
        return Err(BenchError::Failed(why));
    }
    crate::host::write(&a.output, &config, &bench, &env.command, a.force)?;
    let mut out = String::new();
    for w in &bench.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for line in crate::host::findings(&bench) {
        let _ = writeln!(out, "{line}");
    }
    for ((g, t, m, buf), n) in bench.max_held() {
        let _ = if n == 0 {
            writeln!(
                out,
                "{g}: {m} on {t} threads holds no N at {buf} frames: the first run, of the fewest instances, missed"
            )
        } else {
            writeln!(
                out,
                "{g}: {m} on {t} threads holds N={n} at {buf} frames with no miss"
            )
        };
    }
    let _ = writeln!(out, "wrote {}", a.output.display());
    Ok(out)
}
