//! Property tests on generated graphs: every algorithm's schedule verifies, for P = 1, 2, 3,
//! 4, 8, 16, with and without communication costs; the exact search is never worse than the
//! heuristics and never below the lower bound.

use std::time::Duration;

use fugue_graph::gen::{self, CostRange};
use fugue_graph::TaskGraph;
use fugue_sched::{le, metrics, verify, Algorithm, Options};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn graph(kind: u8, a: usize, b: usize, p: f64, seed: u64, comm: f64) -> TaskGraph {
    let costs = CostRange { lo: 0.5, hi: 20.0 };
    let mut g = if kind == 0 {
        gen::layered(a, b, p, costs, seed)
    } else {
        gen::random_dag(a * b, p, costs, seed)
    };
    if comm > 0.0 {
        g.set_comm_costs(comm);
    }
    g
}

proptest! {
    // 48 cases by default; PROPTEST_CASES=N for a longer run.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_schedule_verifies(kind in 0u8..2, a in 1usize..7, b in 1usize..7, p in 0.1f64..0.9,
                               seed in any::<u64>(), comm in prop_oneof![Just(0.0), 0.5f64..15.0]) {
        let g = graph(kind, a, b, p, seed, comm);
        for procs in [1usize, 2, 3, 4, 8, 16] {
            let opts = Options { processors: procs, seed, time_limit: Duration::from_millis(5) };
            let lb = metrics::lower_bound(&g, procs);
            for alg in Algorithm::ALL {
                let o = fugue_sched::run(&g, alg, &opts).unwrap();
                if let Err(e) = verify(&g, &o.schedule) {
                    panic!("{alg} P={procs}: {e}");
                }
                prop_assert!(o.schedule.num_processors() <= procs);
                prop_assert!(le(lb, o.schedule.makespan()));
            }
            let u = fugue_sched::cpfd_unbounded(&g);
            verify(&g, &u).unwrap();
            prop_assert!(le(metrics::lower_bound(&g, u.num_processors()), u.makespan()));
            // the merge mapping alone, too
            let m = fugue_sched::cpfd::map_onto(&g, &u, procs);
            verify(&g, &m).unwrap();
            prop_assert!(m.num_processors() <= procs);
            if u.num_processors() <= procs {
                prop_assert!(le(m.makespan(), u.makespan()));
            }
        }
    }

    #[test]
    fn exact_search_is_never_worse(a in 1usize..5, b in 1usize..4, p in 0.2f64..0.8, seed in any::<u64>(),
                                   comm in prop_oneof![Just(0.0), 1.0f64..8.0], procs in 1usize..4) {
        let g = graph(0, a, b, p, seed, comm);
        let o = fugue_sched::optimal(&g, procs, Duration::from_secs(2));
        verify(&g, &o.schedule).unwrap();
        prop_assert!(!o.schedule.has_duplicates());
        prop_assert!(le(o.lower_bound, o.schedule.makespan()));
        for s in [fugue_sched::hlfet(&g, procs), fugue_sched::etf(&g, procs), fugue_sched::random(&g, procs, seed)] {
            prop_assert!(le(o.schedule.makespan(), s.makespan()));
            if o.proven {
                // nothing without duplication can beat a proven optimum
                prop_assert!(le(o.schedule.makespan(), s.makespan()));
            }
        }
        if o.proven {
            prop_assert!(le(o.lower_bound, o.schedule.makespan()) && le(o.schedule.makespan(), o.lower_bound));
        }
    }

    #[test]
    fn exact_matches_brute_force_on_tiny_graphs(n in 1usize..7, p in 0.2f64..0.8, seed in any::<u64>(),
                                               comm in prop_oneof![Just(0.0), 1.0f64..8.0], procs in 1usize..4) {
        let g = graph(1, n, 1, p, seed, comm);
        let o = fugue_sched::optimal(&g, procs, Duration::from_secs(5));
        prop_assert!(o.proven);
        let brute = brute_force(&g, procs);
        prop_assert!((o.schedule.makespan() - brute).abs() < 1e-6, "b&b {} brute {}", o.schedule.makespan(), brute);
    }

    /// Tasks of cost 0 (what a feedback edge's ends become, or a DOT node of weight 0): a
    /// task of cost 0 and the task after it on its processor start at one time, in the
    /// order of the processor, not of their indices.
    #[test]
    fn exact_matches_brute_force_with_tasks_of_cost_0(n in 2usize..7, p in 0.2f64..0.8, seed in any::<u64>(),
                                                      zeros in 1u8..=255, comm in prop_oneof![Just(0.0), 1.0f64..8.0],
                                                      procs in 1usize..4) {
        let g = reversed(&graph(1, n, 1, p, seed, comm), zeros);
        let o = fugue_sched::optimal(&g, procs, Duration::from_secs(5));
        verify(&g, &o.schedule).unwrap();
        prop_assert!(o.proven);
        let brute = brute_force(&g, procs);
        prop_assert!((o.schedule.makespan() - brute).abs() < 1e-6, "b&b {} brute {}", o.schedule.makespan(), brute);
    }
}

/// `g` with its nodes in the reverse order (edges then go from higher indices to lower, so
/// that a task's successors may have lower indices), node `t` of cost 0 where bit `t mod 8`
/// of `zeros` is set.
fn reversed(g: &TaskGraph, zeros: u8) -> TaskGraph {
    let n = g.len();
    let mut b = fugue_graph::GraphBuilder::new();
    for t in (0..n).rev() {
        let mut node = g.node(t).clone();
        if (zeros >> (t % 8)) & 1 == 1 {
            node.cost = 0.0;
        }
        b.add_node(node).unwrap();
    }
    for e in g.edges() {
        b.add_edge(n - 1 - e.src, e.src_port, n - 1 - e.dst, e.dst_port, e.comm)
            .unwrap();
    }
    b.build().unwrap()
}

/// The best makespan over every topological order and every processor assignment, each task
/// appended at its earliest start (the left-shifted schedules contain an optimum).
fn brute_force(g: &TaskGraph, p: usize) -> f64 {
    fn rec(
        g: &TaskGraph,
        p: usize,
        done: &mut Vec<Option<(usize, f64)>>,
        avail: &mut Vec<f64>,
        best: &mut f64,
    ) {
        let n = g.len();
        if done.iter().all(Option::is_some) {
            let ms = done.iter().map(|d| d.unwrap().1).fold(0.0, f64::max);
            *best = best.min(ms);
            return;
        }
        for t in 0..n {
            if done[t].is_some() || g.preds(t).iter().any(|&(q, _)| done[q].is_none()) {
                continue;
            }
            for q in 0..p {
                let dat = g
                    .preds(t)
                    .iter()
                    .map(|&(x, c)| {
                        let (px, fx) = done[x].unwrap();
                        if px == q {
                            fx
                        } else {
                            fx + c
                        }
                    })
                    .fold(0.0, f64::max);
                let s = dat.max(avail[q]);
                let f = s + g.node(t).cost;
                let old = avail[q];
                avail[q] = f;
                done[t] = Some((q, f));
                rec(g, p, done, avail, best);
                done[t] = None;
                avail[q] = old;
            }
        }
    }
    let mut best = f64::INFINITY;
    rec(g, p, &mut vec![None; g.len()], &mut vec![0.0; p], &mut best);
    best
}

/// A task of cost 0 (`r`, last) that must run just before its successor of a lower index
/// (`b`) on one processor: the optimum on two processors is the one-processor schedule, 4,
/// where the search had proven 8 (r alone on the second processor).
#[test]
fn a_task_of_cost_0_runs_before_a_lower_index_on_its_processor() {
    let mut b = fugue_graph::GraphBuilder::new();
    for (name, cost) in [("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0), ("r", 0.0)] {
        let mut node = fugue_graph::Node::new(name, "task");
        node.cost = cost;
        b.add_node(node).unwrap();
    }
    for (s, d) in [(0, 1), (1, 2), (1, 3), (4, 1)] {
        b.add_edge(s, 0, d, 0, 5.0).unwrap();
    }
    let g = b.build().unwrap();
    for procs in [1, 2, 3] {
        let o = fugue_sched::optimal(&g, procs, Duration::from_secs(5));
        verify(&g, &o.schedule).unwrap();
        assert!(o.proven);
        assert_eq!(o.schedule.makespan(), 4.0, "P={procs}");
    }
}
