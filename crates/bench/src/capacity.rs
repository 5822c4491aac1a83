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
//! The table benchmark probes once per round, right after the round's `seq` run, and reports
//! each executor's speedup as a fraction of the capacity of its round; [`run`] follows the
//! capacity over time.

use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::TaskGraph;

use crate::error::{config, BenchError};
use crate::progress::{Event, Progress};
use crate::stats::{percentile, warm_up, CycleStats};

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
pub fn probe(
    plans: &mut [Plan],
    cores: &[usize],
    duration: Duration,
) -> Result<Capacity, BenchError> {
    if plans.len() != cores.len() || plans.is_empty() {
        return config("one plan per probed core is needed");
    }
    let start = Barrier::new(plans.len());
    let results: Vec<Result<f64, BenchError>> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter_mut()
            .zip(cores)
            .map(|(plan, &core)| {
                let start = &start;
                s.spawn(move || -> Result<f64, BenchError> {
                    let pinned = fugue_exec::placement::pin_current(core).map_err(|e| {
                        BenchError::Failed(format!("cannot pin a probe thread to core {core}: {e}"))
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
                    CycleStats::of(&mut samples[skip..])
                        .map(|s| s.median_ns)
                        .ok_or_else(|| BenchError::Failed("no cycle timed".into()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BenchError::Failed("a probe thread panicked".into())))
            })
            .collect()
    });
    let median_ns = results
        .into_iter()
        .collect::<Result<Vec<f64>, BenchError>>()?;
    Ok(Capacity {
        cores: cores.to_vec(),
        median_ns,
    })
}

/// One copy of `graph`'s plan per probed core.
pub fn plans_for(
    graph: &TaskGraph,
    registry: &fugue_dsp::Registry,
    options: &CompileOptions,
    cores: usize,
) -> Result<Vec<Plan>, BenchError> {
    (0..cores)
        .map(|_| Plan::compile(graph, registry, options).map_err(BenchError::from))
        .collect()
}

/// The capacity benchmark's configuration: follow the capacity over time.
#[derive(Clone, Debug)]
pub struct CapacityConfig {
    /// The graph whose DSP the cores run: a file, `gen:SHAPE:N`, or a 2019 shape (`line`,
    /// `diamond`, `rake`, generated: see [`crate::shapes`]).
    pub graph: String,
    /// Frames per cycle.
    pub buffer: usize,
    /// Sample rate in Hz.
    pub rate: u32,
    /// Cores probed side by side (the first ones this process may use).
    pub threads: usize,
    /// How long to follow the capacity, in seconds.
    pub seconds: f64,
    /// Length of one probe.
    pub window: Duration,
    /// The kinds the graph's nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// The probes over time.
#[derive(Clone, Debug)]
pub struct CapacityResult {
    /// The cores probed.
    pub cores: Vec<usize>,
    /// Each probe, with its start in seconds.
    pub probes: Vec<(f64, Capacity)>,
    /// When the last probe ended, in seconds from the start: the probes run back to back,
    /// so each one lasted until the next one's start (the last, until this).
    pub ended_s: f64,
}

/// Probes the capacity window after window for `seconds`; each window goes to `progress`.
pub fn run(c: &CapacityConfig, progress: &mut dyn Progress) -> Result<CapacityResult, BenchError> {
    if !(c.seconds.is_finite() && c.seconds > 0.0) {
        return config("--seconds must be positive");
    }
    let graph = crate::shapes::load(&c.graph, None, Path::new(""))?.graph;
    let cores = probe_cores(c.threads);
    if cores.len() < c.threads {
        progress.event(Event::Warning(&format!(
            "only {} cores available; probing {}",
            cores.len(),
            cores.len()
        )));
    }
    let options = CompileOptions {
        sample_rate: f64::from(c.rate),
        block: c.buffer,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut plans = plans_for(&graph, &c.registry, &options, cores.len())
        .map_err(|e| e.at_node(format!("cannot compile {}", c.graph), &graph))?;
    let started = Instant::now();
    let mut probes: Vec<(f64, Capacity)> = Vec::new();
    // One window at least, however short the time asked: the result is made of them.
    loop {
        let at = started.elapsed().as_secs_f64();
        let cap = probe(&mut plans, &cores, c.window)?;
        progress.event(Event::Window {
            at_s: at,
            capacity: &cap,
        });
        probes.push((at, cap));
        if started.elapsed().as_secs_f64() >= c.seconds {
            break;
        }
    }
    let ended_s = started.elapsed().as_secs_f64();
    Ok(CapacityResult {
        cores,
        probes,
        ended_s,
    })
}

impl CapacityResult {
    /// The `p`-quantile of the windows' capacities.
    pub fn quantile(&self, p: f64) -> f64 {
        let mut caps: Vec<f64> = self.probes.iter().map(|(_, c)| c.value()).collect();
        caps.sort_by(f64::total_cmp);
        percentile(&caps, p)
    }

    /// 95 % of the cores' count: the capacity of cores whose speeds, each over the fastest's,
    /// average at least 95 % (every core at 95 % gives it; so do one core at 90 % and
    /// another at 100 %).
    pub fn full(&self) -> f64 {
        self.cores.len() as f64 * 0.95
    }

    /// The share of windows at [`full`](Self::full) capacity or more.
    pub fn fraction_at_full(&self) -> f64 {
        let full = self.full();
        let n = self
            .probes
            .iter()
            .filter(|(_, c)| c.value() >= full)
            .count();
        n as f64 / self.probes.len() as f64
    }

    /// How long each probe lasted, in seconds: until the next one's start. A window runs 20
    /// cycles at least, so with long cycles it lasts longer than asked.
    pub fn window_s(&self) -> Vec<f64> {
        let ends = self
            .probes
            .iter()
            .skip(1)
            .map(|(at, _)| *at)
            .chain([self.ended_s]);
        self.probes
            .iter()
            .zip(ends)
            .map(|((at, _), end)| (end - at).max(0.0))
            .collect()
    }

    /// The result as one JSON object (`config` says what was probed): `window_ms` is the
    /// length asked, each window's `lasted_ms` the one it lasted.
    pub fn to_json(&self, c: &CapacityConfig) -> serde_json::Value {
        let windows: Vec<serde_json::Value> = self
            .probes
            .iter()
            .zip(self.window_s())
            .map(|((at, c), w)| serde_json::json!({"at_s": at, "lasted_ms": w * 1e3, "median_ns": c.median_ns, "capacity": c.value()}))
            .collect();
        serde_json::json!({
            "graph": c.graph,
            "buffer": c.buffer,
            "cores": self.cores,
            "window_ms": c.window.as_millis() as u64,
            "windows": windows,
            "capacity_p10": self.quantile(0.10),
            "capacity_median": self.quantile(0.50),
            "capacity_p90": self.quantile(0.90),
            "fraction_at_full": self.fraction_at_full(),
        })
    }

    /// The summary in one sentence.
    pub fn sentence(&self, c: &CapacityConfig) -> String {
        let asked = c.window.as_secs_f64() * 1e3;
        let mean = self.window_s().iter().sum::<f64>() * 1e3 / self.probes.len().max(1) as f64;
        // Said as it was when the cycles made the windows much longer than asked.
        let window = if mean > asked * 1.5 {
            format!(
                "{mean:.0} ms on average (asked {} ms: a window runs 20 cycles at least)",
                c.window.as_millis()
            )
        } else {
            format!("{} ms", c.window.as_millis())
        };
        format!(
            "capacity of {} cores over {} window{} of {window} ({} at buffer {}): p10 {:.2}, median {:.2}, p90 {:.2}; {:.0} % of windows at >= {:.2} (the cores' speeds averaging at least 95 % of the fastest's)",
            self.cores.len(),
            self.probes.len(),
            if self.probes.len() == 1 { "" } else { "s" },
            c.graph,
            c.buffer,
            self.quantile(0.10),
            self.quantile(0.50),
            self.quantile(0.90),
            100.0 * self.fraction_at_full(),
            self.full()
        )
    }
}

/// A probe as one line: each core's median and the capacity, `at_s` seconds after the start.
pub fn window_line(at_s: f64, c: &Capacity) -> String {
    let per: Vec<String> = c
        .cores
        .iter()
        .zip(&c.median_ns)
        .map(|(k, m)| format!("core {k} {:.1} µs", m / 1e3))
        .collect();
    format!(
        "{at_s:6.2} s  {}  capacity {:.2}",
        per.join("  "),
        c.value()
    )
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
    fn a_short_run_reports_its_windows() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rake.ag");
        let c = CapacityConfig {
            graph: path.display().to_string(),
            buffer: 64,
            rate: 48_000,
            threads: 2,
            seconds: 0.05,
            window: Duration::from_millis(10),
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        };
        let r = run(&c, &mut crate::progress::NoProgress).unwrap();
        assert!(!r.probes.is_empty());
        // A time shorter than a window still gives one.
        let tiny = CapacityConfig {
            seconds: 1e-300,
            ..c.clone()
        };
        let t = run(&tiny, &mut crate::progress::NoProgress).unwrap();
        assert_eq!(t.probes.len(), 1);
        assert!(
            t.sentence(&tiny).contains("over 1 window of"),
            "{}",
            t.sentence(&tiny)
        );
        let q = r.quantile(0.5);
        assert!(q >= 1.0 - 1e-12 && q <= r.cores.len() as f64 + 1e-12, "{q}");
        let v = r.to_json(&c);
        assert_eq!(v["windows"].as_array().unwrap().len(), r.probes.len());
        // The windows as asked, or (a loaded machine) as long as they were, saying so.
        let said = r.sentence(&c);
        assert!(
            said.contains("windows of 10 ms") || said.contains("(asked 10 ms: a window runs"),
            "{said}"
        );
        let lasted = r.window_s();
        assert_eq!(lasted.len(), r.probes.len());
        assert!(lasted.iter().all(|&w| w >= 0.009), "{lasted:?}");
        // Cycles of 2 ms make windows of 20 cycles at least, far longer than 1 ms.
        let slow =
            std::env::temp_dir().join(format!("fugue-capacity-slow-{}.ag", std::process::id()));
        std::fs::write(
            &slow,
            "w = { kind: \"load\", wcet: 2000, };\ns = { kind: \"sink\", };\nw.1 -> s.1;\n",
        )
        .unwrap();
        let long = CapacityConfig {
            graph: slow.display().to_string(),
            threads: 1,
            seconds: 1e-3,
            window: Duration::from_millis(1),
            ..c.clone()
        };
        let l = run(&long, &mut crate::progress::NoProgress).unwrap();
        assert!(
            l.sentence(&long)
                .contains("(asked 1 ms: a window runs 20 cycles at least)"),
            "{}",
            l.sentence(&long)
        );
        let _ = std::fs::remove_file(&slow);
    }

    #[test]
    fn a_probe_times_every_core() {
        let g = fugue_graph::gen::line(4);
        let options = CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            placeholder: false,
            merge_chains: true,
            ..Default::default()
        };
        let cores = probe_cores(2);
        let mut plans = plans_for(
            &g,
            &fugue_dsp::Registry::with_builtin_kinds(),
            &options,
            cores.len(),
        )
        .unwrap();
        let c = probe(&mut plans, &cores, Duration::from_millis(5)).unwrap();
        assert_eq!(c.median_ns.len(), cores.len());
        assert!(c.median_ns.iter().all(|&m| m > 0.0));
        let v = c.value();
        assert!(v >= 1.0 - 1e-12 && v <= cores.len() as f64 + 1e-12, "{v}");
    }
}
