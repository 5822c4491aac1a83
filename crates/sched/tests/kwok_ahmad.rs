//! The 9-node example graph of Kwok & Ahmad (ACM Computing Surveys, 1999): levels, the
//! CPN-dominant sequence and the schedule lengths of `shared/data/README.md`.
//!
//! ```text
//!              n1 (2)
//!      4 /  1/  1|  1\  10\
//!      n2(3) n3(3) n4(4) n5(5)  |
//!     1/ 1\    1\   /1          |
//!   n6(4)  n7(4) <--------------+
//!      \5   |6   n8(4)
//!       \   |   /5
//!         n9 (1)
//! ```
//! All values agree with the data set's README: HLFET 19 and ETF 19 on 3 processors, CPFD 15
//! on unbounded processors with 5 processors used, optimum without duplication 30 / 17 / 16 on
//! 1 / 2 / 3 processors.

use std::time::Duration;

use fugue_graph::{analysis, TaskGraph};
use fugue_sched::{verify, Algorithm, Options};

fn graph() -> Option<TaskGraph> {
    let path = fugue_testkit::corpus::dir(
        env!("CARGO_MANIFEST_DIR"),
        "sched/kwok-ahmad-9.dot",
        "kwok-ahmad tests",
    )?;
    Some(fugue_graph::read_file(&path, None).expect("the example graph loads"))
}

fn by_name(g: &TaskGraph, values: &[f64]) -> Vec<f64> {
    (1..=9)
        .map(|i| values[g.find(&format!("n{i}")).expect("node")])
        .collect()
}

#[test]
fn levels_match_the_paper() {
    let Some(g) = graph() else { return };
    let l = analysis::levels(&g, true);
    assert_eq!(
        by_name(&g, &l.static_level),
        [11., 8., 8., 9., 5., 5., 5., 5., 1.]
    );
    assert_eq!(
        by_name(&g, &l.b_level),
        [23., 15., 14., 15., 5., 10., 11., 10., 1.]
    );
    assert_eq!(
        by_name(&g, &l.t_level),
        [0., 6., 3., 3., 3., 10., 12., 8., 22.]
    );
    let (len, cp) = analysis::critical_path(&g, true);
    assert_eq!(len, 23.0);
    let names: Vec<&str> = cp.iter().map(|&n| g.node(n).name.as_str()).collect();
    assert_eq!(names, ["n1", "n7", "n9"]);
}

#[test]
fn cpn_dominant_sequence_matches_the_paper() {
    let Some(g) = graph() else { return };
    let seq: Vec<&str> = fugue_sched::cpfd::cpn_dominant_sequence(&g)
        .iter()
        .map(|&n| g.node(n).name.as_str())
        .collect();
    assert_eq!(seq, ["n1", "n2", "n7", "n4", "n3", "n8", "n6", "n9", "n5"]);
}

#[test]
fn heuristic_schedule_lengths() {
    let Some(g) = graph() else { return };
    let h = fugue_sched::hlfet(&g, 3);
    let e = fugue_sched::etf(&g, 3);
    verify(&g, &h).unwrap();
    verify(&g, &e).unwrap();
    assert_eq!(h.makespan(), 19.0);
    assert_eq!(e.makespan(), 19.0);
    let c = fugue_sched::cpfd_unbounded(&g);
    verify(&g, &c).unwrap();
    assert_eq!(c.makespan(), 15.0);
    assert_eq!(c.used_processors(), 5);
    assert!(c.has_duplicates(), "CPFD reaches 15 by duplicating n1");
    // Mapped onto P processors: never more than P, and 15 is kept from P = 4 on.
    for p in 1..=6 {
        let s = fugue_sched::cpfd(&g, p);
        verify(&g, &s).unwrap();
        assert!(s.num_processors() <= p);
        if p >= 4 {
            assert_eq!(s.makespan(), 15.0, "P = {p}");
        }
    }
}

#[test]
fn exact_optimum() {
    let Some(g) = graph() else { return };
    for (p, want) in [(1, 30.0), (2, 17.0), (3, 16.0), (4, 16.0)] {
        let o = fugue_sched::optimal(&g, p, Duration::from_secs(20));
        verify(&g, &o.schedule).unwrap();
        assert!(o.proven, "P = {p}: optimality proven");
        assert!(!o.schedule.has_duplicates());
        assert_eq!(o.schedule.makespan(), want, "P = {p}");
        assert_eq!(o.lower_bound, want);
    }
}

#[test]
fn best_and_run() {
    let Some(g) = graph() else { return };
    let opts = Options {
        processors: 3,
        seed: 3,
        time_limit: Duration::from_secs(5),
    };
    let b = fugue_sched::run(&g, Algorithm::Best, &opts).unwrap();
    verify(&g, &b.schedule).unwrap();
    assert_eq!(b.optimal, None);
    // CPFD's duplicating schedule (15) beats every non-duplicating one on 3 processors.
    assert_eq!(b.chosen, Algorithm::Cpfd);
    assert_eq!(
        b.schedule.makespan(),
        16.0_f64.min(fugue_sched::cpfd(&g, 3).makespan())
    );
    let o = fugue_sched::run(&g, Algorithm::Optimal, &opts).unwrap();
    assert_eq!(o.optimal, Some(true));
    assert_eq!(o.schedule.makespan(), 16.0);
}
