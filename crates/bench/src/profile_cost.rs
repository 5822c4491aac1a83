//! `fugue bench profile-cost`: what the per-node, per-worker profile costs the cycle.
//!
//! Two engines of the same graph and executor, one with the profile on, run blocks of cycles
//! back to back, in the order off, on, on, off, off, on... (each pair's order alternates, so
//! that a drift of the machine's speed falls on both alike). The figure is, per pair of
//! blocks, the profiled block's mean cycle time over the plain one's; the median over the
//! pairs and their spread are reported. Both engines' outputs are compared after every
//! cycle: the profile must not change a sample.

use std::time::Instant;

use fugue_engine::{Engine, ExecutorChoice};
use fugue_graph::TaskGraph;

use crate::error::{failed, BenchError};
use crate::stats::{median, min_max};

/// Cycles one run may take in all (every pair's two blocks, and each engine's warm-up):
/// 100,000,000, about an hour at the 36 µs of rateau101's cycle on one core. Time, not
/// memory: each flag alone is bounded, their product here.
pub const MAX_CYCLES: u64 = 100_000_000;

/// What to measure.
#[derive(Clone, Debug)]
pub struct ProfileCostConfig {
    /// The executor (and its threads).
    pub choice: ExecutorChoice,
    /// Sample rate, Hz.
    pub rate: f64,
    /// Frames per cycle.
    pub buffer: usize,
    /// Pairs of blocks.
    pub pairs: usize,
    /// Cycles per block.
    pub cycles: usize,
    /// Untimed cycles of each engine before the first block.
    pub warmup: usize,
    /// The kinds the graph's nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// The result.
#[derive(Clone, Debug)]
pub struct ProfileCost {
    /// Mean cycle time of each plain block, ns.
    pub off_ns: Vec<f64>,
    /// Mean cycle time of each profiled block, ns (same order).
    pub on_ns: Vec<f64>,
    /// Profiled over plain, per pair.
    pub ratios: Vec<f64>,
    /// Cycles whose outputs were compared (all of them).
    pub checked: u64,
}

impl ProfileCost {
    /// The median ratio.
    pub fn median_ratio(&self) -> f64 {
        median(&self.ratios)
    }

    /// The smallest and largest ratio.
    pub fn range(&self) -> (f64, f64) {
        min_max(&self.ratios)
    }
}

/// Runs one engine for `n` cycles back to back; returns the mean cycle time in ns and the
/// hash of each cycle's output in `hashes`.
fn block(engine: &mut Engine, n: usize, hashes: &mut Vec<u64>) -> f64 {
    hashes.clear();
    let mut total = 0u128;
    for _ in 0..n {
        let t = Instant::now();
        engine.run_cycle();
        total += t.elapsed().as_nanos();
        hashes.push(engine.plan.output_hash());
    }
    total as f64 / n.max(1) as f64
}

/// Measures the profile's cost on `graph` (see the module documentation).
pub fn run(graph: &TaskGraph, cfg: &ProfileCostConfig) -> Result<ProfileCost, BenchError> {
    if cfg.pairs == 0 || cfg.cycles == 0 {
        return failed("--pairs and --cycles must be at least 1");
    }
    let build = |choice: &fugue_engine::ExecutorChoice| {
        Engine::build(graph, &cfg.registry, cfg.rate, cfg.buffer, choice, false)
            .map(|(e, _)| e)
            .map_err(|e| BenchError::Executor(Box::new(e)))
    };
    let (mut off, mut on) = (build(&cfg.choice)?, build(&cfg.choice)?);
    // Every cycle of both is checked against seq's (untimed), as every benchmark checks.
    let mut reference = build(&fugue_engine::ExecutorChoice::default())?;
    on.enable_profile().map_err(BenchError::Failed)?;
    let (mut h_off, mut h_on, mut h_seq) = (Vec::new(), Vec::new(), Vec::new());
    // The engines run the same cycles in step: cycle i of one against cycle i of the others.
    block(&mut off, cfg.warmup, &mut h_off);
    block(&mut on, cfg.warmup, &mut h_on);
    block(&mut reference, cfg.warmup, &mut h_seq);
    if h_off != h_seq {
        return failed(format!(
            "{}'s output differs from seq's",
            cfg.choice.kind.name()
        ));
    }
    if h_off != h_on {
        return failed("the profiled engine's output differs from the plain one's");
    }
    let mut out = ProfileCost {
        off_ns: Vec::new(),
        on_ns: Vec::new(),
        ratios: Vec::new(),
        checked: cfg.warmup as u64,
    };
    for pair in 0..cfg.pairs {
        let (a, b) = if pair % 2 == 0 {
            let a = block(&mut off, cfg.cycles, &mut h_off);
            (a, block(&mut on, cfg.cycles, &mut h_on))
        } else {
            let b = block(&mut on, cfg.cycles, &mut h_on);
            (block(&mut off, cfg.cycles, &mut h_off), b)
        };
        block(&mut reference, cfg.cycles, &mut h_seq);
        if let Some(i) = (0..h_off.len()).find(|&i| h_off[i] != h_seq[i]) {
            return failed(format!(
                "pair {}, cycle {i}: {}'s output differs from seq's",
                pair + 1,
                cfg.choice.kind.name()
            ));
        }
        if let Some(i) = (0..h_off.len()).find(|&i| h_off[i] != h_on[i]) {
            return failed(format!(
                "pair {}, cycle {i}: the profiled engine's output differs from the plain one's",
                pair + 1
            ));
        }
        out.checked += cfg.cycles as u64;
        out.off_ns.push(a);
        out.on_ns.push(b);
        out.ratios.push(b / a);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_exec::ExecutorKind;

    #[test]
    fn both_engines_agree_and_every_pair_is_measured() {
        let g = fugue_graph::gen::rake(4);
        let cfg = ProfileCostConfig {
            choice: ExecutorChoice {
                kind: ExecutorKind::Ws,
                threads: 2,
                ..ExecutorChoice::default()
            },
            rate: 48_000.0,
            buffer: 64,
            pairs: 3,
            cycles: 20,
            warmup: 5,
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        };
        let r = run(&g, &cfg).unwrap();
        assert_eq!(r.ratios.len(), 3);
        assert_eq!(r.checked, 65);
        assert!(r.ratios.iter().all(|x| x.is_finite() && *x > 0.0));
        let (lo, hi) = r.range();
        assert!(lo <= r.median_ratio() && r.median_ratio() <= hi);
    }
}

/// A measurement with what was measured: `bench profile-cost --json`'s object, and its text
/// (`Display`).
#[derive(Debug, serde::Serialize)]
pub struct ProfileCostReport<'a> {
    /// The graph's label.
    pub graph: &'a str,
    /// Where it came from.
    pub source: &'a str,
    /// The executor.
    pub executor: String,
    /// Its threads.
    pub threads: usize,
    /// Frames per cycle.
    pub buffer: usize,
    /// Pairs of blocks.
    pub pairs: usize,
    /// Cycles per block.
    pub cycles_per_block: usize,
    /// Median over the plain blocks of their mean cycle, µs.
    pub median_off_us: f64,
    /// Median over the profiled blocks of their mean cycle, µs.
    pub median_on_us: f64,
    /// Median of the per-pair ratios.
    pub median_ratio: f64,
    /// Smallest ratio.
    pub ratio_min: f64,
    /// Largest ratio.
    pub ratio_max: f64,
    /// Every pair's ratio.
    pub ratios: &'a [f64],
    /// Cycles whose outputs were compared.
    pub checked_cycles: u64,
}

impl<'a> ProfileCostReport<'a> {
    /// The report of `r`, measured as `cfg` says on the graph `label` (from `source`).
    pub fn new(
        r: &'a ProfileCost,
        cfg: &ProfileCostConfig,
        label: &'a str,
        source: &'a str,
    ) -> Self {
        let (ratio_min, ratio_max) = r.range();
        ProfileCostReport {
            graph: label,
            source,
            executor: cfg.choice.kind.to_string(),
            // seq runs on one thread whatever --threads says, as `fugue profile` reports it.
            threads: if cfg.choice.kind == fugue_exec::ExecutorKind::Seq {
                1
            } else {
                cfg.choice.threads.max(1)
            },
            buffer: cfg.buffer,
            pairs: cfg.pairs,
            cycles_per_block: cfg.cycles,
            median_off_us: median(&r.off_ns) / 1000.0,
            median_on_us: median(&r.on_ns) / 1000.0,
            median_ratio: r.median_ratio(),
            ratio_min,
            ratio_max,
            ratios: &r.ratios,
            checked_cycles: r.checked,
        }
    }
}

impl std::fmt::Display for ProfileCostReport<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} ({}), {} with {} thread(s), {} frames",
            self.graph, self.source, self.executor, self.threads, self.buffer
        )?;
        writeln!(
            f,
            "mean cycle, median of {} blocks of {} cycles: {:.2} µs plain, {:.2} µs profiled",
            self.pairs, self.cycles_per_block, self.median_off_us, self.median_on_us
        )?;
        let cost = if self.median_ratio >= 1.0 {
            format!(
                "the profile costs {:+.1} % of the cycle",
                (self.median_ratio - 1.0) * 100.0
            )
        } else {
            // Faster with the profile on: what these runs measured is their noise.
            format!(
                "the profile's cost is below what these runs measure (the profiled blocks ran {:.1} % faster: noise; more --pairs and --cycles narrow it)",
                (1.0 - self.median_ratio) * 100.0
            )
        };
        write!(
            f,
            "profiled / plain: median {:.3} (range {:.3}-{:.3}): {cost}; outputs identical, and identical to seq's, over {} cycles",
            self.median_ratio, self.ratio_min, self.ratio_max, self.checked_cycles
        )
    }
}
