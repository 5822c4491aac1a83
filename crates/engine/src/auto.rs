//! The executor that chooses itself ([`ExecutorChoice::auto`]): before the first cycle, each
//! candidate (seq; work stealing and the HLFET static schedule at each thread count from 2 to
//! the cores this process may use, at most [`MAX_THREADS`]) runs the real plan for a bounded
//! time, and the fastest is kept, unless it gains less than [`MIN_GAIN`] over seq (then seq:
//! a graph too small to gain stays sequential).
//!
//! The trials run on a plan compiled apart from the one that will play, so the played audio
//! starts from the first sample exactly as the chosen executor alone would make it. With a
//! known period ([`fugue_exec::ExecOptions::period`]: the real-time backends) the trial
//! cycles are paced at it, as they will run (workers waking for each cycle); offline they run
//! back to back. Rounds are interleaved (every candidate once, then again), so that a slow
//! spell of the machine falls on all of them; the figure of a candidate is the median of its
//! cycle times.

use std::time::{Duration, Instant};

use fugue_exec::{ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::choice::{BuildError, ExecutorChoice};
use crate::engine::build_executor;

/// The most threads a candidate gets.
pub const MAX_THREADS: usize = 8;

/// A parallel candidate must be at least this much faster than seq (median cycle time) to be
/// chosen: 3 %.
pub const MIN_GAIN: f64 = 0.03;

/// How long all trials together take at most (paced trials at long periods excepted: every
/// candidate runs at least [`MIN_CYCLES`] cycles).
pub const BUDGET: Duration = Duration::from_millis(600);

/// Cycles each candidate runs at least (over all rounds).
pub const MIN_CYCLES: usize = 24;

/// Rounds over the candidates.
const ROUNDS: usize = 3;

/// One candidate's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// `seq`, `ws 2t`, `static 2t`...
    pub label: String,
    /// Its executor.
    pub kind: ExecutorKind,
    /// Its threads.
    pub threads: usize,
    /// Median cycle time, ns.
    pub median_ns: f64,
    /// Cycles timed.
    pub cycles: usize,
}

/// What the automatic choice measured and chose.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoReport {
    /// The candidates, in the order they were tried.
    pub candidates: Vec<Candidate>,
    /// Index of the chosen one in `candidates`.
    pub chosen: usize,
    /// Whether the trial cycles were paced at the period.
    pub paced: bool,
    /// How long the trials took.
    pub took: Duration,
}

impl AutoReport {
    /// The chosen candidate.
    pub fn chosen(&self) -> &Candidate {
        &self.candidates[self.chosen]
    }

    /// One line: what was chosen and why.
    pub fn line(&self) -> String {
        let c = self.chosen();
        let seq = &self.candidates[0];
        let others: Vec<String> = self
            .candidates
            .iter()
            .map(|k| format!("{} {:.1} µs", k.label, k.median_ns / 1000.0))
            .collect();
        let why = if self.candidates.len() == 1 {
            "the run is too short (or the machine too small) to measure the others".to_string()
        } else if self.chosen == 0 {
            match self.candidates[1..]
                .iter()
                .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
            {
                Some(best) => format!(
                    "no parallel executor gained {:.0} % over it (best {}: x{:.2})",
                    MIN_GAIN * 100.0,
                    best.label,
                    seq.median_ns / best.median_ns
                ),
                None => "no other candidate".to_string(),
            }
        } else {
            format!("x{:.2} over seq", seq.median_ns / c.median_ns)
        };
        format!(
            "executor auto: chose {}, {why}; median cycle over {:.2} s of {} trials: {}",
            c.label,
            self.took.as_secs_f64(),
            if self.paced { "paced" } else { "back-to-back" },
            others.join(", ")
        )
    }
}

/// The candidates for `choice` on a machine with `cores` cores.
fn candidates(choice: &ExecutorChoice, cores: usize) -> Vec<(String, ExecutorChoice)> {
    let base = ExecutorChoice {
        auto: false,
        ..choice.clone()
    };
    let mut out = vec![(
        "seq".to_string(),
        ExecutorChoice {
            kind: ExecutorKind::Seq,
            threads: 1,
            ..base.clone()
        },
    )];
    for t in 2..=cores.min(MAX_THREADS) {
        out.push((
            format!("ws {t}t"),
            ExecutorChoice {
                kind: ExecutorKind::Ws,
                threads: t,
                ..base.clone()
            },
        ));
        out.push((
            format!("static {t}t"),
            ExecutorChoice {
                kind: ExecutorKind::Static,
                threads: t,
                algorithm: Algorithm::Hlfet,
                ..base.clone()
            },
        ));
    }
    out
}

/// Measures the candidates on `trial` (a plan compiled from `graph` apart from the one that
/// will play) and returns the choice to build, with the report. Control thread; allocates.
pub fn choose(
    graph: &TaskGraph,
    trial: &mut Plan,
    choice: &ExecutorChoice,
) -> Result<(ExecutorChoice, AutoReport), BuildError> {
    let started = Instant::now();
    let cores = fugue_exec::placement::available_cores();
    let cands = candidates(choice, cores);
    let period = choice.options.period;
    let paced = period.is_some();
    let mut execs = Vec::with_capacity(cands.len());
    for (_, c) in &cands {
        execs.push(build_executor(graph, trial, c)?.0);
    }
    // Cycles per candidate per round: from one cycle's time (seq's), within the budget.
    let t0 = Instant::now();
    execs[0].run_cycle(trial);
    let one = t0.elapsed().max(Duration::from_micros(1));
    let per_cycle = period.map_or(one, |p| p.max(one));
    // The budget: BUDGET, or a tenth of the run when its length is known.
    let mut budget = BUDGET.as_secs_f64();
    if let Some(n) = choice.auto_cycles {
        budget = budget.min(n as f64 * per_cycle.as_secs_f64() / 10.0);
    }
    let total = (budget / per_cycle.as_secs_f64()) as usize;
    if total < MIN_CYCLES * cands.len() || cands.len() == 1 {
        // Too short a run to measure (or nothing to choose from): seq, untried.
        let report = AutoReport {
            candidates: vec![Candidate {
                label: cands[0].0.clone(),
                kind: cands[0].1.kind,
                threads: 1,
                median_ns: one.as_nanos() as f64,
                cycles: 1,
            }],
            chosen: 0,
            paced,
            took: started.elapsed(),
        };
        return Ok((cands[0].1.clone(), report));
    }
    let per_round = (total / (cands.len() * ROUNDS)).clamp(MIN_CYCLES.div_ceil(ROUNDS), 2000);
    let mut times: Vec<Vec<u64>> = vec![Vec::with_capacity(per_round * ROUNDS); cands.len()];
    for _ in 0..ROUNDS {
        for (k, exec) in execs.iter_mut().enumerate() {
            // Two untimed cycles: the workers start or wake, the caches fill.
            for _ in 0..2 {
                exec.run_cycle(trial);
            }
            let mut next = Instant::now();
            for _ in 0..per_round {
                if let Some(p) = period {
                    next += p;
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep(next - now);
                    } else {
                        next = now;
                    }
                }
                let t = Instant::now();
                exec.run_cycle(trial);
                times[k].push(t.elapsed().as_nanos() as u64);
            }
        }
    }
    let mut out: Vec<Candidate> = Vec::with_capacity(cands.len());
    for ((label, c), mut ts) in cands.iter().zip(times) {
        ts.sort_unstable();
        let n = ts.len();
        let median_ns = if n % 2 == 1 {
            ts[n / 2] as f64
        } else {
            (ts[n / 2 - 1] + ts[n / 2]) as f64 / 2.0
        };
        out.push(Candidate {
            label: label.clone(),
            kind: c.kind,
            threads: c.threads,
            median_ns,
            cycles: n,
        });
    }
    let best = (0..out.len())
        .min_by(|&a, &b| out[a].median_ns.total_cmp(&out[b].median_ns))
        .unwrap_or(0);
    let chosen = if best != 0 && out[best].median_ns <= out[0].median_ns * (1.0 - MIN_GAIN) {
        best
    } else {
        0
    };
    let report = AutoReport {
        chosen,
        candidates: out,
        paced,
        took: started.elapsed(),
    };
    Ok((cands[chosen].1.clone(), report))
}
