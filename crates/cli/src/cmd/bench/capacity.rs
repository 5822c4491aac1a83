//! The machine's parallel capacity: how much work T cores do side by side, in units of the
//! fastest of them, measured with the graph's own DSP.
//!
//! A speedup of T threads over one is bounded by this capacity, not by T: on a virtual
//! machine the virtual cores are threads of the host, and one of them may run at a fraction
//! of the other's speed for seconds at a time (when the host runs something else on the same
//! physical core). The probe runs `seq` cycles of one copy of the plan per core, every copy
//! at once, each thread pinned to its core, and takes each core's median cycle time `m_k`:
//! capacity = Σ_k min_j(m_j) / m_k. Two equal cores give 2; a second core at half speed gives
//! 1.5, and no executor can then reach more than 1.5× against `seq` on the faster core.
//!
//! `fugue bench table` probes once per round, right after the round's `seq` run, and reports
//! each executor's speedup as a fraction of the capacity of its round; `fugue bench capacity`
//! follows the capacity over time.

use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::TaskGraph;

use super::overhead::{warm_up, Stats};
use crate::util::{self, usage};

/// One probe: the median cycle time of each core running the graph at the same time.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    /// The cores probed.
    pub cores: Vec<usize>,
    /// Per core: the median time of a `seq` cycle while every core ran one.
    pub median_ns: Vec<f64>,
}

impl Capacity {
    /// Σ_k fastest / m_k: the work the cores did side by side, in units of the fastest core's.
    pub fn value(&self) -> f64 {
        let fastest = self.median_ns.iter().copied().fold(f64::INFINITY, f64::min);
        if !(fastest.is_finite() && fastest > 0.0) {
            return f64::NAN;
        }
        self.median_ns.iter().map(|m| fastest / m).sum()
    }
}

/// The cores a probe for `threads` threads uses: the first `threads` cores this process may
/// run on (fewer if the machine has fewer).
pub fn probe_cores(threads: usize) -> Vec<usize> {
    let allowed = fugue_exec::placement::allowed_cores();
    allowed.iter().copied().take(threads.max(1)).collect()
}

/// Runs `seq` cycles on every plan at once, plan `k` on a thread pinned to `cores[k]`, each
/// for `duration` of wall time (at least 20 cycles), and returns the cores' medians. The
/// plans are reset first.
pub fn probe(plans: &mut [Plan], cores: &[usize], duration: Duration) -> anyhow::Result<Capacity> {
    anyhow::ensure!(
        plans.len() == cores.len() && !plans.is_empty(),
        "one plan per probed core is needed"
    );
    let start = Barrier::new(plans.len());
    let results: Vec<anyhow::Result<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter_mut()
            .zip(cores)
            .map(|(plan, &core)| {
                let start = &start;
                s.spawn(move || -> anyhow::Result<f64> {
                    let pinned = fugue_exec::placement::pin_current(core).map_err(|e| {
                        anyhow::anyhow!("cannot pin a probe thread to core {core}: {e}")
                    });
                    plan.reset();
                    let mut exec = SeqExecutor::new();
                    let mut samples: Vec<u64> = Vec::with_capacity(4096);
                    start.wait();
                    pinned?;
                    let t0 = Instant::now();
                    while samples.len() < 20 || t0.elapsed() < duration {
                        let c = Instant::now();
                        exec.run_cycle(plan);
                        samples.push(c.elapsed().as_nanos() as u64);
                    }
                    let skip = warm_up(samples.len());
                    Stats::of(&mut samples[skip..])
                        .map(|s| s.median_ns)
                        .ok_or_else(|| anyhow::anyhow!("no cycle timed"))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a probe thread panicked")))
            })
            .collect()
    });
    let median_ns = results.into_iter().collect::<anyhow::Result<Vec<f64>>>()?;
    Ok(Capacity {
        cores: cores.to_vec(),
        median_ns,
    })
}

/// One copy of `graph`'s plan per probed core.
pub fn plans_for(
    graph: &TaskGraph,
    options: &CompileOptions,
    cores: usize,
) -> anyhow::Result<Vec<Plan>> {
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    (0..cores)
        .map(|_| Plan::compile(graph, &reg, options).map_err(anyhow::Error::from))
        .collect()
}

/// Arguments of `fugue bench capacity`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The graph whose DSP the cores run.
    #[arg(long, default_value = "../shared/data/ag/rateau/rateau101.ag")]
    pub graph: PathBuf,
    /// Frames per cycle.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub buffer: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Cores probed side by side (the first ones this process may use).
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// How long to follow the capacity, in seconds.
    #[arg(long, default_value_t = 20.0)]
    pub seconds: f64,
    /// Length of one probe, in milliseconds.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(5..=60_000))]
    pub window_ms: u64,
    /// Print one JSON object (per-window values and the summary) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue bench capacity`.
pub fn run(args: Args) -> anyhow::Result<()> {
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        return Err(usage("--seconds must be positive"));
    }
    let graph = util::read_graph(&args.graph, None)?;
    let cores = probe_cores(args.threads as usize);
    if cores.len() < args.threads as usize {
        eprintln!(
            "fugue: warning: only {} cores available; probing {}",
            cores.len(),
            cores.len()
        );
    }
    let options = CompileOptions {
        sample_rate: f64::from(args.rate),
        block: args.buffer as usize,
        placeholder: false,
        merge_chains: true,
    };
    let mut plans = plans_for(&graph, &options, cores.len())
        .with_context(|| format!("cannot compile {}", args.graph.display()))?;
    let window = Duration::from_millis(args.window_ms);
    let started = Instant::now();
    let mut probes: Vec<(f64, Capacity)> = Vec::new();
    while started.elapsed().as_secs_f64() < args.seconds {
        let at = started.elapsed().as_secs_f64();
        let c = probe(&mut plans, &cores, window)?;
        if !args.json {
            let per: Vec<String> = c
                .cores
                .iter()
                .zip(&c.median_ns)
                .map(|(k, m)| format!("core {k} {:.1} µs", m / 1e3))
                .collect();
            println!("{at:6.2} s  {}  capacity {:.2}", per.join("  "), c.value());
        }
        probes.push((at, c));
    }
    let mut caps: Vec<f64> = probes.iter().map(|(_, c)| c.value()).collect();
    caps.sort_by(f64::total_cmp);
    let q = |p: f64| caps[((p * caps.len() as f64).ceil() as usize).clamp(1, caps.len()) - 1];
    let full = cores.len() as f64 * 0.95;
    let at_full = caps.iter().filter(|&&c| c >= full).count() as f64 / caps.len() as f64;
    if args.json {
        let windows: Vec<serde_json::Value> = probes
            .iter()
            .map(|(at, c)| {
                serde_json::json!({
                    "at_s": at,
                    "median_ns": c.median_ns,
                    "capacity": c.value(),
                })
            })
            .collect();
        let v = serde_json::json!({
            "graph": args.graph.display().to_string(),
            "buffer": args.buffer,
            "cores": cores,
            "window_ms": args.window_ms,
            "windows": windows,
            "capacity_p10": q(0.10),
            "capacity_median": q(0.50),
            "capacity_p90": q(0.90),
            "fraction_at_full": at_full,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "capacity of {} cores over {} windows of {} ms ({} at buffer {}): p10 {:.2}, median {:.2}, p90 {:.2}; {:.0} % of windows at >= {:.2} (every core at 95 % of the fastest or better)",
            cores.len(),
            caps.len(),
            args.window_ms,
            args.graph.display(),
            args.buffer,
            q(0.10),
            q(0.50),
            q(0.90),
            100.0 * at_full,
            full
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_counts_each_core_in_units_of_the_fastest() {
        let c = Capacity {
            cores: vec![0, 1],
            median_ns: vec![100.0, 200.0],
        };
        assert!((c.value() - 1.5).abs() < 1e-12);
        let c = Capacity {
            cores: vec![0, 1, 2],
            median_ns: vec![50.0, 50.0, 100.0],
        };
        assert!((c.value() - 2.5).abs() < 1e-12);
        let c = Capacity {
            cores: vec![0],
            median_ns: vec![0.0],
        };
        assert!(c.value().is_nan());
    }

    #[test]
    fn a_probe_times_every_core() {
        let g = fugue_graph::gen::line(4);
        let options = CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            placeholder: false,
            merge_chains: true,
        };
        let cores = probe_cores(2);
        let mut plans = plans_for(&g, &options, cores.len()).unwrap();
        let c = probe(&mut plans, &cores, Duration::from_millis(5)).unwrap();
        assert_eq!(c.median_ns.len(), cores.len());
        assert!(c.median_ns.iter().all(|&m| m > 0.0));
        let v = c.value();
        assert!(v >= 1.0 - 1e-12 && v <= cores.len() as f64 + 1e-12, "{v}");
    }
}
