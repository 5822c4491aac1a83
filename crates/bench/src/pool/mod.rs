//! The task pool's workloads and benchmark: the sequential program, fugue's pool under each
//! [`Policy`] and rayon run the same code ([`work`]), each result checked before its time
//! counts; [`mod@bench`] runs them over policies × threads × workloads and writes the results
//! folder; [`image`] writes the demos' pictures (PNG, animated GIF) and [`animate`] draws the
//! Voronoi demo's frames.

pub mod animate;
pub mod bench;
pub mod demo;
pub mod image;
mod plot;
pub mod work;

use std::time::{Duration, Instant};

use fugue_pool::{Policy, Pool, Stats};

use crate::error::{BenchError, Context as _};
use work::{Canvas, Inline, Leaves, Mandelbrot, Voronoi, VoronoiAlgorithm};

/// Who runs a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PoolKind {
    /// The sequential program: every spawn is a call.
    Serial,
    /// rayon's thread pool (`scope`/`spawn`).
    Rayon,
    /// fugue's pool under a policy.
    Fugue(Policy),
}

impl PoolKind {
    /// `serial`, `rayon` or the policy's name.
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Serial => "serial",
            PoolKind::Rayon => "rayon",
            PoolKind::Fugue(p) => p.name(),
        }
    }
}

/// Runs `$body` with `$s` bound to the runner's scope (or [`Inline`]) and measures it: wall
/// time, process CPU time and, for fugue's pool, its statistics.
macro_rules! in_scope {
    ($runner:expr, |$s:ident| $body:expr) => {
        match $runner {
            Runner::Serial => measure(|| {
                let $s = &Inline;
                $body
            }),
            Runner::Rayon(p) => measure(|| p.scope(|$s| $body)),
            Runner::Fugue(p) => {
                let ((), st) = p.scope_with_stats(|$s| $body);
                Outcome {
                    wall: st.wall,
                    cpu: st.cpu(),
                    stats: Some(st),
                }
            }
        }
    };
}

/// A started pool (or the sequential runner).
pub enum Runner {
    /// The sequential program.
    Serial,
    /// fugue's pool.
    Fugue(Pool),
    /// rayon's pool.
    Rayon(rayon::ThreadPool),
}

impl Runner {
    /// Starts `kind` with `threads` threads (ignored by [`PoolKind::Serial`]).
    pub fn start(kind: PoolKind, threads: usize) -> Result<Runner, BenchError> {
        Ok(match kind {
            PoolKind::Serial => Runner::Serial,
            PoolKind::Fugue(p) => Runner::Fugue(Pool::new(threads, p)?),
            PoolKind::Rayon => Runner::Rayon(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| BenchError::Failed(format!("cannot start rayon's pool: {e}")))?,
            ),
        })
    }

    /// Makes sure every thread has started and run a task (a small spawn tree), so that a
    /// timed run does not include the threads' start-up.
    pub fn warm_up(&self) {
        let leaves = Leaves::new(64);
        let _ = in_scope!(self, |s| work::spawn_tree(s, 8, &leaves));
    }

    /// What runs.
    pub fn kind(&self) -> PoolKind {
        match self {
            Runner::Serial => PoolKind::Serial,
            Runner::Fugue(p) => PoolKind::Fugue(p.policy()),
            Runner::Rayon(_) => PoolKind::Rayon,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// CPU time of the whole process (user + system) over the run.
    pub cpu: Duration,
    /// fugue's pool statistics (tasks, spawns, steals, sleeps, idle time per thread).
    pub stats: Option<Stats>,
}

impl Outcome {
    /// CPU time over wall time: the number of cores kept busy on average.
    pub fn cores_busy(&self) -> f64 {
        self.cpu.as_secs_f64() / self.wall.as_secs_f64().max(1e-9)
    }
}

fn measure(f: impl FnOnce()) -> Outcome {
    let (u0, s0) = fugue_pool::process_cpu_time();
    let t0 = Instant::now();
    f();
    let wall = t0.elapsed();
    let (u1, s1) = fugue_pool::process_cpu_time();
    Outcome {
        wall,
        cpu: (u1 + s1).saturating_sub(u0 + s0),
        stats: None,
    }
}

/// A workload of the benchmark and the demos.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Quicksort of `n` pseudo-random `u32`s, both halves spawned, serial below `cutoff`.
    Quicksort {
        /// Elements.
        n: usize,
        /// The largest slice sorted serially.
        cutoff: usize,
    },
    /// The Mandelbrot set, bands of rows as tasks.
    Mandelbrot(Mandelbrot),
    /// A Voronoi diagram.
    Voronoi {
        /// The seeds and the size.
        diagram: Voronoi,
        /// How it is drawn.
        algorithm: VoronoiAlgorithm,
    },
    /// A binary tree of empty tasks of this depth.
    SpawnTree {
        /// Depth (2^(depth+1) - 2 tasks).
        depth: u32,
    },
}

impl Workload {
    /// `quicksort`, `mandelbrot`, `voronoi` or `spawn-tree`.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Quicksort { .. } => "quicksort",
            Workload::Mandelbrot(_) => "mandelbrot",
            Workload::Voronoi { .. } => "voronoi",
            Workload::SpawnTree { .. } => "spawn-tree",
        }
    }

    /// The workload and its size, in a few words.
    pub fn describe(&self) -> String {
        match self {
            Workload::Quicksort { n, cutoff } => {
                format!("quicksort of {n} u32, both halves spawned, serial cutoff {cutoff}")
            }
            Workload::Mandelbrot(m) => format!(
                "Mandelbrot {}x{}, {} iterations, bands of {} rows",
                m.width,
                m.height,
                m.iterations,
                work::BAND_ROWS
            ),
            Workload::Voronoi { diagram, algorithm } => format!(
                "Voronoi {}x{}, {} seeds, {} algorithm",
                diagram.width,
                diagram.height,
                diagram.seeds.len(),
                algorithm.name()
            ),
            Workload::SpawnTree { depth } => format!(
                "spawn tree of depth {depth} ({} empty tasks)",
                (1u64 << (depth + 1)) - 2
            ),
        }
    }

    /// The input and the expected result, computed once (serially, by other code where there
    /// is one: the standard library's sort).
    pub fn prepare(&self) -> Prepared {
        match self {
            Workload::Quicksort { n, .. } => {
                let input = work::quicksort_input(*n);
                let mut sorted = input.clone();
                sorted.sort_unstable();
                let sorted = Sorted::Full(sorted);
                Prepared::Sort { input, sorted }
            }
            Workload::Mandelbrot(m) => {
                let c = Canvas::new(m.width, m.height);
                work::mandelbrot(&Inline, m, &c);
                Prepared::Image(c)
            }
            Workload::Voronoi { diagram, .. } => {
                // The reference is the per-pixel algorithm, whatever the workload's algorithm.
                let c = Canvas::new(diagram.width, diagram.height);
                work::voronoi(&Inline, diagram, &c, VoronoiAlgorithm::Pixel);
                Prepared::Image(c)
            }
            Workload::SpawnTree { depth } => Prepared::Leaves(1u64 << depth),
        }
    }

    /// The input and only the checks that cost little (the demos): the sort is checked for
    /// order and against the input's sum and xor; images are not compared.
    pub fn prepare_light(&self) -> Prepared {
        match self {
            Workload::Quicksort { n, .. } => {
                let input = work::quicksort_input(*n);
                let sorted = Sorted::Digest(digest(&input));
                Prepared::Sort { input, sorted }
            }
            Workload::Mandelbrot(_) | Workload::Voronoi { .. } => Prepared::Unchecked,
            Workload::SpawnTree { depth } => Prepared::Leaves(1u64 << depth),
        }
    }

    /// Runs the workload once on `runner` and checks the result against `prepared` (from
    /// [`prepare`](Self::prepare)); the image, when there is one, is handed back.
    pub fn run(
        &self,
        runner: &Runner,
        threads: usize,
        prepared: &Prepared,
    ) -> Result<(Outcome, Option<Canvas>), BenchError> {
        let what = || format!("{} on {}", self.name(), runner.kind().name());
        match (self, prepared) {
            (Workload::Quicksort { cutoff, .. }, Prepared::Sort { input, sorted }) => {
                let mut v = input.clone();
                let cutoff = *cutoff;
                let out = in_scope!(runner, |s| work::quicksort(s, &mut v, cutoff));
                match sorted {
                    Sorted::Full(sorted) => work::check_sorted(&v, sorted),
                    Sorted::Digest(d) => work::check_order(&v).and_then(|()| {
                        if digest(&v) == *d {
                            Ok(())
                        } else {
                            Err(
                                "sorted, but not a permutation of the input (sum or xor differ)"
                                    .into(),
                            )
                        }
                    }),
                }
                .map_err(|e| BenchError::Failed(format!("{}: {e}", what())))?;
                Ok((out, None))
            }
            (Workload::Mandelbrot(m), Prepared::Image(reference)) => {
                let c = Canvas::new(m.width, m.height);
                let out = in_scope!(runner, |s| work::mandelbrot(s, m, &c));
                same_image(&c, reference).with_context(what)?;
                Ok((out, Some(c)))
            }
            (Workload::Mandelbrot(m), Prepared::Unchecked) => {
                let c = Canvas::new(m.width, m.height);
                let out = in_scope!(runner, |s| work::mandelbrot(s, m, &c));
                Ok((out, Some(c)))
            }
            (Workload::Voronoi { diagram, algorithm }, Prepared::Unchecked) => {
                let c = Canvas::new(diagram.width, diagram.height);
                let alg = *algorithm;
                let out = in_scope!(runner, |s| work::voronoi(s, diagram, &c, alg));
                Ok((out, Some(c)))
            }
            (Workload::Voronoi { diagram, algorithm }, Prepared::Image(reference)) => {
                let c = Canvas::new(diagram.width, diagram.height);
                let alg = *algorithm;
                let out = in_scope!(runner, |s| work::voronoi(s, diagram, &c, alg));
                same_image(&c, reference).with_context(what)?;
                Ok((out, Some(c)))
            }
            (Workload::SpawnTree { depth }, Prepared::Leaves(expected)) => {
                let leaves = Leaves::new(threads);
                let depth = *depth;
                let out = in_scope!(runner, |s| work::spawn_tree(s, depth, &leaves));
                if leaves.total() != *expected {
                    return Err(BenchError::Failed(format!(
                        "{}: {} leaves counted, {expected} expected",
                        what(),
                        leaves.total()
                    )));
                }
                Ok((out, None))
            }
            _ => Err(BenchError::Failed(format!(
                "{}: prepared for another workload",
                what()
            ))),
        }
    }
}

/// A workload's input and expected result.
#[derive(Debug)]
pub enum Prepared {
    /// The input of a sort and what its result must be.
    Sort {
        /// The input.
        input: Vec<u32>,
        /// The expected result.
        sorted: Sorted,
    },
    /// The expected image.
    Image(Canvas),
    /// An image that is not compared.
    Unchecked,
    /// The expected leaf count.
    Leaves(u64),
}

/// What a sort's result is checked against.
#[derive(Debug)]
pub enum Sorted {
    /// The input sorted by the standard library: compared element by element.
    Full(Vec<u32>),
    /// The input's wrapping sum and xor: a result in order must have the same.
    Digest((u64, u32)),
}

fn digest(v: &[u32]) -> (u64, u32) {
    v.iter().fold((0u64, 0u32), |(s, x), &e| {
        (s.wrapping_add(u64::from(e)), x ^ e)
    })
}

fn same_image(c: &Canvas, reference: &Canvas) -> Result<(), BenchError> {
    match c.first_difference(reference) {
        None => Ok(()),
        Some((x, y, got, want)) => Err(BenchError::Failed(format!(
            "pixel ({x}, {y}) is {got}, the sequential program drew {want}"
        ))),
    }
}

/// The process's CPU use while `runner` has no work for `idle` (after a short job that wakes
/// every thread): CPU time over wall time (0: no core busy; 1: a whole core).
pub fn idle_cpu(runner: &Runner, idle: Duration) -> f64 {
    runner.warm_up();
    // Let the threads finish looking for work and go to sleep, as they would between jobs.
    std::thread::sleep(Duration::from_millis(50));
    measure(|| std::thread::sleep(idle)).cores_busy()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wrong result fails the run, whoever ran it: the checks are live.
    #[test]
    fn a_wrong_result_fails_the_run() {
        let runners = [
            Runner::Serial,
            Runner::start(PoolKind::Fugue(Policy::Steal), 2).unwrap(),
            Runner::start(PoolKind::Rayon, 2).unwrap(),
        ];
        let set = Mandelbrot {
            width: 40,
            height: 30,
            iterations: 100,
            ..Mandelbrot::default()
        };
        let w = Workload::Mandelbrot(set);
        let Prepared::Image(good) = w.prepare() else {
            panic!("an image")
        };
        let bad = Canvas::new(40, 30);
        for r in &runners {
            // A reference of another size, or an empty image: both fail.
            assert!(w.run(r, 2, &Prepared::Image(Canvas::new(0, 0))).is_err());
            let e = w
                .run(r, 2, &Prepared::Image(Canvas::new(40, 30)))
                .unwrap_err();
            assert!(format!("{e:#}").contains("mandelbrot"), "{e}");
            let (out, img) = w.run(r, 2, &Prepared::Image(same(&good))).unwrap();
            assert!(out.wall > Duration::ZERO);
            assert_eq!(img.unwrap().first_difference(&good), None);
            assert!(bad.first_difference(&good).is_some());
        }
        let q = Workload::Quicksort { n: 1000, cutoff: 8 };
        let Prepared::Sort { input, .. } = q.prepare() else {
            panic!("a sort")
        };
        let mut wrong = input.clone();
        wrong.sort_unstable();
        wrong[500] = wrong[500].wrapping_add(1);
        wrong.sort_unstable();
        for r in &runners {
            let p = Prepared::Sort {
                input: input.clone(),
                sorted: Sorted::Full(wrong.clone()),
            };
            assert!(q.run(r, 2, &p).is_err());
            let p = Prepared::Sort {
                input: input.clone(),
                sorted: Sorted::Digest((1, 2)),
            };
            assert!(q.run(r, 2, &p).is_err());
            assert!(q.run(r, 2, &q.prepare_light()).is_ok());
            let t = Workload::SpawnTree { depth: 6 };
            assert!(t.run(r, 2, &Prepared::Leaves(63)).is_err());
            assert!(t.run(r, 2, &t.prepare()).is_ok());
        }
    }

    fn same(c: &Canvas) -> Canvas {
        let out = Canvas::new(c.width, c.height);
        for (i, v) in c.pixels().into_iter().enumerate() {
            out.set(i % c.width, i / c.width, v);
        }
        out
    }
}
