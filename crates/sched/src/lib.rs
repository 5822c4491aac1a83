//! fugue-sched: static scheduling of task graphs onto P identical processors.
//!
//! The algorithms and their definitions are those of Kwok & Ahmad, "Static scheduling
//! algorithms for allocating directed task graphs to multiprocessors", ACM Computing Surveys
//! 31(4), 1999 (levels from [`fugue_graph::analysis`]):
//!
//! | algorithm | module | idle gaps | duplication |
//! |---|---|---|---|
//! | HLFET with CP/MISF ties | [`hlfet`](mod@hlfet) | append (non-insertion) | no |
//! | ETF | [`etf`](mod@etf) | append (non-insertion) | no |
//! | CPFD, mapped onto P processors | [`cpfd`](mod@cpfd) | insertion | yes |
//! | random priorities | [`random`](mod@random) | append (non-insertion) | no |
//! | exact branch-and-bound | [`optimal`](mod@optimal) | append (left-shifted schedules) | no |
//! | best of the heuristics | [`best`](mod@best) | — | as chosen |
//!
//! A [`Schedule`] lists each processor's time slots; [`verify`] checks it against the graph
//! (every task placed, no overlap, precedence with communication delays); [`Metrics`] gives
//! makespan, lower bound, NSL, speedup and efficiency; [`gantt`] draws it as SVG.
//!
//! ```
//! use fugue_graph::gen::{self, CostRange};
//! let g = gen::layered(4, 3, 0.5, CostRange { lo: 1.0, hi: 5.0 }, 7);
//! let s = fugue_sched::hlfet(&g, 2);
//! fugue_sched::verify(&g, &s).unwrap();
//! assert!(s.makespan() >= fugue_sched::metrics::lower_bound(&g, 2));
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use fugue_graph::TaskGraph;
use thiserror::Error;

pub mod best;
pub mod costs;
pub mod cpfd;
pub mod etf;
pub mod gantt;
pub mod hlfet;
mod list;
pub mod metrics;
pub mod optimal;
pub mod random;
mod schedule;

pub use best::best;
pub use costs::{csv_name, parse_costs, parse_costs_given, CostsError};
pub use cpfd::{cpfd, cpfd_bounded, cpfd_unbounded, cpfd_within, cpfd_within_cut, CpfdCut};
pub use etf::{etf, etf_within};
pub use hlfet::hlfet;
pub use metrics::Metrics;
pub use optimal::{optimal, OptimalOutcome};
pub use random::random;
pub use schedule::{le, lt, verify, Schedule, ScheduleError, Slot, EPS};

/// A scheduling algorithm, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// [`hlfet()`].
    Hlfet,
    /// [`etf()`].
    Etf,
    /// [`cpfd()`].
    Cpfd,
    /// [`random()`].
    Random,
    /// [`optimal()`].
    Optimal,
    /// [`best()`].
    Best,
}

impl Algorithm {
    /// Every algorithm, in a fixed order.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Hlfet,
        Algorithm::Etf,
        Algorithm::Cpfd,
        Algorithm::Random,
        Algorithm::Optimal,
        Algorithm::Best,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Hlfet => "hlfet",
            Algorithm::Etf => "etf",
            Algorithm::Cpfd => "cpfd",
            Algorithm::Random => "random",
            Algorithm::Optimal => "optimal",
            Algorithm::Best => "best",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown algorithm name.
#[derive(Clone, Debug, Error, PartialEq)]
#[error("unknown algorithm `{0}`; expected hlfet, etf, cpfd, random, optimal or best")]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

/// The moment after which a scheduler stops and gives what it has: see [`run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// No deadline: run to the end.
    pub const NONE: Deadline = Deadline(None);

    /// `limit` from now (no deadline when that is beyond the clock's range).
    pub fn after(limit: Duration) -> Deadline {
        Deadline(Instant::now().checked_add(limit))
    }

    /// Whether the deadline has passed.
    #[inline]
    pub fn passed(self) -> bool {
        self.0.is_some_and(|d| Instant::now() >= d)
    }

    /// The instant, if any.
    pub fn instant(self) -> Option<Instant> {
        self.0
    }
}

/// Parameters of [`run`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Number of processors (at least 1).
    pub processors: usize,
    /// Seed of the random priorities (random, and the random run inside best and optimal).
    pub seed: u64,
    /// Time limit of every algorithm (see [`run`]).
    pub time_limit: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            processors: 2,
            seed: 0,
            time_limit: Duration::from_secs(10),
        }
    }
}

/// Why [`run`] refused.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum SchedError {
    /// Zero processors were asked for.
    #[error("the number of processors must be at least 1")]
    NoProcessors,
}

/// A schedule and what is known about it.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The algorithm asked for.
    pub algorithm: Algorithm,
    /// For [`Algorithm::Best`], the heuristic whose schedule was kept; else the algorithm.
    pub chosen: Algorithm,
    /// The schedule, on at most `processors` processors.
    pub schedule: Schedule,
    /// `None` for heuristics; for the exact search, whether optimality was proven.
    pub optimal: Option<bool>,
    /// The best known lower bound on the makespan: the search's for [`Algorithm::Optimal`],
    /// else [`metrics::lower_bound`].
    pub lower_bound: f64,
    /// What the time limit cut short, in a sentence, when it did: which algorithm did not
    /// finish and whose schedule was returned instead, or what part of CPFD's it cut short
    /// when its schedule is kept ([`CpfdCut`]).
    pub note: Option<String>,
}

/// Runs one algorithm on `g` within `opts.time_limit`.
///
/// HLFET and random are the fallbacks (`O(e + n log n)`) and always finish. ETF and CPFD
/// check the clock at every task they place; one that runs out of time gives way to HLFET's
/// schedule, and [`Outcome::note`] says so. [`Algorithm::Best`] keeps the shortest schedule of
/// the heuristics that finished in time. [`Algorithm::Optimal`] gives half the limit to its
/// first incumbent (the heuristics, as for best) and searches until the limit; it returns the
/// best schedule found. Checks are frequent enough that the call ends within a small fraction
/// of the limit past it, plus the fallback's time (HLFET's list scheduling keeps its ready
/// tasks in a heap: `O((n + e) log n + e P)`, a fraction of a second on 200,000 tasks).
pub fn run(g: &TaskGraph, algorithm: Algorithm, opts: &Options) -> Result<Outcome, SchedError> {
    run_since(g, algorithm, opts, Instant::now())
}

/// [`run`], with the time limit counted from `start` (when the caller began: reading and
/// preparing the graph count against the limit too).
pub fn run_since(
    g: &TaskGraph,
    algorithm: Algorithm,
    opts: &Options,
    start: Instant,
) -> Result<Outcome, SchedError> {
    let p = opts.processors;
    if p == 0 {
        return Err(SchedError::NoProcessors);
    }
    let deadline = Deadline(start.checked_add(opts.time_limit));
    let lb = metrics::lower_bound(g, p);
    let limit = opts.time_limit.as_secs_f64();
    let fell_back = |a: Algorithm| {
        format!("{a} did not finish within the time limit of {limit} s; the schedule is HLFET's")
    };
    let mut note = None;
    let (chosen, schedule, optimal, lower_bound) = match algorithm {
        Algorithm::Hlfet => (algorithm, hlfet(g, p), None, lb),
        Algorithm::Etf => match etf_within(g, p, deadline) {
            Some(s) => (algorithm, s, None, lb),
            None => {
                note = Some(fell_back(algorithm));
                (Algorithm::Hlfet, hlfet(g, p), None, lb)
            }
        },
        Algorithm::Cpfd => match cpfd_within_cut(g, p, deadline) {
            Some((s, cut)) => {
                note =
                    cut.map(|c| format!("cpfd was cut short by the time limit of {limit} s: {c}"));
                (algorithm, s, None, lb)
            }
            None => {
                note = Some(fell_back(algorithm));
                (Algorithm::Hlfet, hlfet(g, p), None, lb)
            }
        },
        Algorithm::Random => (algorithm, random(g, p, opts.seed), None, lb),
        Algorithm::Best => {
            let (a, s, missed, cut) = best::best_within(g, p, opts.seed, deadline);
            note = missed_note(&missed, &format!("the time limit of {limit} s"));
            if let (Algorithm::Cpfd, Some(c)) = (a, cut) {
                let said = format!("cpfd, whose schedule is kept, was cut short by the time limit of {limit} s: {c}");
                note = Some(match note {
                    Some(n) => format!("{n}; {said}"),
                    None => said,
                });
            }
            (a, s, None, lb)
        }
        Algorithm::Optimal => {
            let (inc, missed) = best::best_without_duplication_within(
                g,
                p,
                opts.seed,
                Deadline(start.checked_add(opts.time_limit / 2)),
            );
            note = missed_note(
                &missed,
                &format!(
                    "{} s, the half of the time limit of {limit} s that the heuristics get",
                    limit / 2.0
                ),
            )
            .map(|n| format!("{n}; the exact search started from the others"));
            let left = opts.time_limit.saturating_sub(start.elapsed());
            let o = optimal::optimal_from(g, p, left, inc);
            (algorithm, o.schedule, Some(o.proven), o.lower_bound.max(lb))
        }
    };
    Ok(Outcome {
        algorithm,
        chosen,
        schedule,
        optimal,
        lower_bound,
        note,
    })
}

/// "etf and cpfd did not finish within `within` ..." when some heuristics of best ran out of
/// time.
fn missed_note(missed: &[Algorithm], within: &str) -> Option<String> {
    if missed.is_empty() {
        return None;
    }
    let names: Vec<&str> = missed.iter().map(|a| a.name()).collect();
    Some(format!(
        "{} did not finish within {within}, and {} left out",
        names.join(" and "),
        if missed.len() == 1 { "was" } else { "were" }
    ))
}
