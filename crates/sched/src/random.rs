//! Random list scheduling: the baseline that shows what the heuristics earn.
//!
//! Every task gets a random priority drawn from a seeded generator (a random permutation); the
//! list scheduler then repeatedly takes the ready task of the highest random priority and puts
//! it on the processor where it starts earliest, with the **non-insertion** (append) approach.
//! The order is thus a random topological order; the same seed gives the same schedule.

use fugue_graph::TaskGraph;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::list;
use crate::schedule::Schedule;

/// Schedules `g` on `p` processors with random priorities drawn from `seed`.
pub fn random(g: &TaskGraph, p: usize, seed: u64) -> Schedule {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.shuffle(&mut rng);
    list::by_rank(g, p, &list::ranks(&order))
}
