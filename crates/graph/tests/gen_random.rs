//! `random_dag` on sparse probabilities: the gaps between edges are drawn, so that a million
//! nodes take time linear in nodes plus edges, and the edges keep their distribution.

use std::time::{Duration, Instant};

use fugue_graph::gen::{random_dag, CostRange, SPARSE_BELOW};

#[test]
fn a_sparse_random_dag_has_the_expected_number_of_edges_in_every_part() {
    let n = 100_000usize;
    let p = 2e-4;
    let g = random_dag(n, p, CostRange::default(), 3);
    assert_eq!(g.len(), n);
    let expected = p * (n * (n - 1) / 2) as f64;
    let got = g.edges().len() as f64;
    // About 1e6 edges: the standard deviation is about 1e3.
    assert!(
        (got - expected).abs() < 0.01 * expected,
        "{got} edges, {expected} expected"
    );
    // Node j of the random order has about p * j predecessors: the later half of the order
    // holds about three quarters of the edges. Nodes are numbered in the random order.
    let late = g.edges().iter().filter(|e| e.dst >= n / 2).count() as f64;
    assert!((late / got - 0.75).abs() < 0.01, "{late} of {got}");
    assert!(
        g.edges().iter().all(|e| e.src < e.dst),
        "forward edges only"
    );
}

#[test]
fn sparse_probabilities_take_linear_time() {
    let start = Instant::now();
    let g = random_dag(300_000, 1e-5, CostRange::default(), 1);
    let took = start.elapsed();
    assert_eq!(g.len(), 300_000);
    // About 4.5e5 edges expected (n^2 p / 2).
    let e = g.edges().len() as f64;
    assert!((e - 4.5e5).abs() < 5e3, "{e} edges");
    // One draw per pair is 4.5e10 draws: minutes. The gaps take a fraction of a second of
    // CPU in an optimised build (the bound leaves room for a loaded machine).
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn dense_probabilities_keep_one_draw_per_pair() {
    // The same seed, the same graph (the corpus's generator), and every edge forward.
    let a = random_dag(300, SPARSE_BELOW, CostRange::default(), 9);
    let b = random_dag(300, SPARSE_BELOW, CostRange::default(), 9);
    assert_eq!(a.edges().len(), b.edges().len());
    let expected = SPARSE_BELOW * (300.0 * 299.0 / 2.0);
    let got = a.edges().len() as f64;
    assert!(
        (got - expected).abs() < 0.25 * expected,
        "{got} vs {expected}"
    );
}
