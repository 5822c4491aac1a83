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
