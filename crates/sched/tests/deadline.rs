//! The heuristics stop at a passed deadline and `run` falls back to HLFET, saying so.

use std::time::Duration;

use fugue_graph::gen;
use fugue_sched::{cpfd_within, etf_within, run, verify, Algorithm, Deadline, Options};

#[test]
fn a_passed_deadline_stops_etf_and_cpfd_and_run_falls_back() {
    let g = gen::line(200);
    let past = Deadline::after(Duration::ZERO);
    assert!(etf_within(&g, 2, past).is_none());
    assert!(cpfd_within(&g, 2, past).is_none());
    assert!(cpfd_within(&g, 2, Deadline::NONE).is_some());
    let opts = Options {
        processors: 2,
        seed: 0,
        time_limit: Duration::ZERO,
    };
    for a in [
        Algorithm::Etf,
        Algorithm::Cpfd,
        Algorithm::Best,
        Algorithm::Optimal,
    ] {
        let o = run(&g, a, &opts).unwrap();
        verify(&g, &o.schedule).unwrap();
        assert!(o.note.is_some(), "{a}");
    }
    let o = run(&g, Algorithm::Cpfd, &opts).unwrap();
    assert_eq!(o.chosen, Algorithm::Hlfet);
}

/// The time limit counts from the start `run_since` is given: a limit already spent by the
/// caller (reading the graph) leaves the heuristics no time, and the fallback is said.
#[test]
fn the_time_limit_counts_from_the_callers_start() {
    let g = gen::layered(40, 8, 0.3, gen::CostRange { lo: 1.0, hi: 9.0 }, 3);
    let opts = Options {
        processors: 2,
        seed: 0,
        time_limit: Duration::from_millis(50),
    };
    let started = std::time::Instant::now() - Duration::from_secs(1);
    let o = fugue_sched::run_since(&g, Algorithm::Cpfd, &opts, started).unwrap();
    assert_eq!(o.chosen, Algorithm::Hlfet);
    assert!(o.note.unwrap().contains("0.05 s"));
    verify(&g, &o.schedule).unwrap();
}

/// On a wide graph (hundreds of tasks ready at once) the list schedulers and the CPN-dominant
/// sequence keep their ready tasks in heaps: a 60,000-task graph takes well under the time
/// that a scan of the ready tasks at every step takes (minutes in a debug build).
#[test]
fn wide_graphs_schedule_in_n_log_n() {
    let g = gen::layered(600, 100, 0.02, gen::CostRange::default(), 1);
    let start = std::time::Instant::now();
    let s = fugue_sched::hlfet(&g, 4);
    let r = fugue_sched::random(&g, 4, 1);
    let order = fugue_sched::cpfd::cpn_dominant_sequence(&g);
    let took = start.elapsed();
    verify(&g, &s).unwrap();
    verify(&g, &r).unwrap();
    assert_eq!(order.len(), g.len());
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// The exact search on a graph of thousands of tasks runs on a thread with a stack for one
/// level per task: a long search cannot overflow the caller's stack.
#[test]
fn the_exact_search_on_a_large_graph_gives_a_valid_schedule() {
    let g = gen::layered(1500, 2, 0.5, gen::CostRange { lo: 1.0, hi: 20.0 }, 5);
    let o = fugue_sched::optimal(&g, 2, Duration::from_secs(2));
    verify(&g, &o.schedule).unwrap();
    assert!(o.schedule.makespan() >= o.lower_bound - 1e-9);
}

/// CPFD puts a task in an idle gap before another slot only when it starts no later than
/// that slot: at times where the comparisons' relative tolerance exceeds a task's length (a
/// source of 1e12, or costs of 1e-12), it put a zero-cost task inside a slot it had started
/// after, and the schedule failed its own verification.
#[test]
fn cpfd_fills_no_gap_it_starts_after_at_any_scale() {
    let graphs = [
        "digraph {\n s [Weight=1000000000000];\n a [Weight=1];\n b [Weight=1000];\n c [Weight=0];\n s -> a;\n s -> b;\n a -> c;\n}\n",
        "digraph {\n a [Weight=\"1e-12\"];\n b [Weight=\"1e-9\"];\n c [Weight=0];\n a -> c;\n}\n",
    ];
    for text in graphs {
        let g = fugue_graph::read::dot::parse(text, "g.dot").unwrap();
        for p in 1..=3 {
            let s = cpfd_within(&g, p, Deadline::NONE).unwrap();
            verify(&g, &s).unwrap_or_else(|e| panic!("{p} processors: {e}"));
        }
    }
}

/// The exact search does not start when the time left cannot pay for one bound of its root
/// (about `n p log p` steps): the incumbent is kept, unproven, and no node is searched; and
/// an incumbent that meets the graph's lower bound (a line) is proven with no search at all,
/// however many tasks and processors.
#[test]
fn the_exact_search_starts_only_when_its_first_bound_fits() {
    let line = gen::line(50_000);
    let o = fugue_sched::optimal::optimal_from(
        &line,
        1024,
        Duration::from_millis(100),
        fugue_sched::hlfet(&line, 1024),
    );
    assert!(o.proven);
    assert_eq!(o.nodes, 0);
    verify(&line, &o.schedule).unwrap();
    // A wide graph: 20,000 tasks on 64 processors, about 8 ms a bound; 1 ms is left.
    let wide = gen::layered(200, 100, 0.05, gen::CostRange { lo: 1.0, hi: 9.0 }, 3);
    let o = fugue_sched::optimal::optimal_from(
        &wide,
        64,
        Duration::from_millis(1),
        fugue_sched::hlfet(&wide, 64),
    );
    assert_eq!(o.nodes, 0);
    assert!(!o.proven || o.lower_bound >= o.schedule.makespan(), "{o:?}");
    verify(&wide, &o.schedule).unwrap();
}
