//! `best`: runs the heuristics and keeps the shortest valid schedule.

use fugue_graph::TaskGraph;

use crate::schedule::{lt, Schedule};
use crate::{Algorithm, Deadline};

/// Runs HLFET, ETF, CPFD (on at most `p` processors) and random (with `seed`) and returns the
/// shortest schedule that passes [`crate::verify`], with the algorithm that made it (ties go to
/// the first in that order).
pub fn best(g: &TaskGraph, p: usize, seed: u64) -> (Algorithm, Schedule) {
    let (a, s, _, _) = best_within(g, p, seed, Deadline::NONE);
    (a, s)
}

/// [`best`] within `deadline`: HLFET and random always run; ETF and CPFD run until the
/// deadline, and those that did not finish are left out and returned; also what the
/// deadline cut short of CPFD's schedule, when it was made all the same.
pub fn best_within(
    g: &TaskGraph,
    p: usize,
    seed: u64,
    deadline: Deadline,
) -> (Algorithm, Schedule, Vec<Algorithm>, Option<crate::CpfdCut>) {
    let mut missed = Vec::new();
    let mut runs = vec![(Algorithm::Hlfet, crate::hlfet(g, p))];
    match crate::etf_within(g, p, deadline) {
        Some(s) => runs.push((Algorithm::Etf, s)),
        None => missed.push(Algorithm::Etf),
    }
    let mut cut = None;
    match crate::cpfd_within_cut(g, p, deadline) {
        Some((s, c)) => {
            runs.push((Algorithm::Cpfd, s));
            cut = c;
        }
        None => missed.push(Algorithm::Cpfd),
    }
    runs.push((Algorithm::Random, crate::random(g, p, seed)));
    let (a, s) = shortest(g, runs);
    (a, s, missed, cut)
}

/// The shortest schedule without duplication among HLFET, ETF, random and CPFD (when CPFD's
/// schedule duplicates nothing), those of ETF and CPFD only when they finish by `deadline`:
/// the exact search's first incumbent; also the heuristics that did not finish.
pub(crate) fn best_without_duplication_within(
    g: &TaskGraph,
    p: usize,
    seed: u64,
    deadline: Deadline,
) -> (Schedule, Vec<Algorithm>) {
    let mut missed = Vec::new();
    let mut runs = vec![(Algorithm::Hlfet, crate::hlfet(g, p))];
    match crate::etf_within(g, p, deadline) {
        Some(s) => runs.push((Algorithm::Etf, s)),
        None => missed.push(Algorithm::Etf),
    }
    runs.push((Algorithm::Random, crate::random(g, p, seed)));
    match crate::cpfd_within(g, p, deadline) {
        Some(c) if !c.has_duplicates() => runs.push((Algorithm::Cpfd, c)),
        Some(_) => {}
        None => missed.push(Algorithm::Cpfd),
    }
    (shortest(g, runs).1, missed)
}

fn shortest(
    g: &TaskGraph,
    runs: impl IntoIterator<Item = (Algorithm, Schedule)>,
) -> (Algorithm, Schedule) {
    let mut best: Option<(Algorithm, Schedule)> = None;
    for (a, s) in runs {
        if crate::verify(g, &s).is_err() {
            continue;
        }
        let better = match &best {
            None => true,
            Some((_, b)) => lt(s.makespan(), b.makespan()),
        };
        if better {
            best = Some((a, s));
        }
    }
    // HLFET's schedule is always valid (the tests check it); fall back to it regardless.
    best.unwrap_or_else(|| (Algorithm::Hlfet, crate::hlfet(g, 1)))
}
