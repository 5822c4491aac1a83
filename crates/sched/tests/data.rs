//! Every schedule of every algorithm passes `verify` on every graph of `shared/data` (ag, stg,
//! dot), for P = 1, 2, 3, 4, 8, 16. The normal run samples the large sets and bounds the exact
//! search; `cargo test -p fugue-sched --release -- --ignored` runs everything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fugue_graph::TaskGraph;
use fugue_sched::{metrics, verify, Algorithm, Options};

const PS: [usize; 6] = [1, 2, 3, 4, 8, 16];

fn data(test: &str) -> Option<PathBuf> {
    fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), "", test)
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("ag" | "stg" | "dot")
        ) {
            out.push(p);
        }
    }
}

/// Loads every graph; returns them and the files that failed to load.
fn load_all(d: &Path) -> (Vec<(PathBuf, TaskGraph)>, Vec<PathBuf>) {
    let mut paths = Vec::new();
    files(d, &mut paths);
    let mut ok = Vec::new();
    let mut failed = Vec::new();
    for p in paths {
        match fugue_graph::read_file(&p, None) {
            Ok(g) => ok.push((p, g)),
            Err(_) => failed.push(p),
        }
    }
    (ok, failed)
}

fn check(path: &Path, g: &TaskGraph, alg: Algorithm, p: usize, limit: Duration) {
    let opts = Options {
        processors: p,
        seed: 11,
        time_limit: limit,
    };
    let o = fugue_sched::run(g, alg, &opts).unwrap();
    let s = &o.schedule;
    if let Err(e) = verify(g, s) {
        panic!("{} {alg} P={p}: {e}", path.display());
    }
    assert!(
        s.num_processors() <= p,
        "{} {alg} P={p}: {} processors",
        path.display(),
        s.num_processors()
    );
    let lb = metrics::lower_bound(g, p);
    assert!(
        fugue_sched::le(lb, s.makespan()),
        "{} {alg} P={p}: below the lower bound",
        path.display()
    );
    if alg != Algorithm::Cpfd && alg != Algorithm::Best {
        assert!(!s.has_duplicates(), "{} {alg}: duplicates", path.display());
    }
    assert_eq!(o.optimal.is_some(), alg == Algorithm::Optimal);
}

fn run_all(sample: bool) {
    let Some(d) = data(if sample {
        "every schedule verifies (sample)"
    } else {
        "every schedule verifies"
    }) else {
        return;
    };
    let (graphs, failed) = load_all(&d);
    // Two corpus .ag files do not load (they are broken in the 2019 corpus).
    assert!(failed.len() <= 2, "graphs that fail to load: {failed:?}");
    assert!(graphs.len() > 700);
    for (i, (path, g)) in graphs.iter().enumerate() {
        let big = g.edges().len() > 5000;
        let keep = !sample
            || (i % 7 == 0 && (g.len() <= 60 || i % 21 == 0))
            || path.to_string_lossy().contains("sched/");
        // the 746 ten-node graphs: one in five in the sampled run
        if sample && path.to_string_lossy().contains("random-small") && i % 5 != 0 {
            continue;
        }
        for &p in &PS {
            for alg in [Algorithm::Hlfet, Algorithm::Etf, Algorithm::Random] {
                check(path, g, alg, p, Duration::ZERO);
            }
            if keep && (!sample || !big) {
                check(path, g, Algorithm::Cpfd, p, Duration::ZERO);
                check(path, g, Algorithm::Best, p, Duration::ZERO);
            }
            if keep && g.len() <= 40 {
                check(
                    path,
                    g,
                    Algorithm::Optimal,
                    p,
                    Duration::from_millis(if sample { 20 } else { 500 }),
                );
            }
        }
    }
}

#[test]
fn every_algorithm_verifies_on_the_data_set_sampled() {
    run_all(true);
}

#[test]
#[ignore = "minutes in a debug build; scripts/long-tests.sh runs it in release"]
fn every_algorithm_verifies_on_the_data_set_full() {
    run_all(false);
}

#[test]
fn optimal_is_never_worse_than_best_on_small_graphs() {
    let Some(d) = data("optimal_is_never_worse_than_best_on_small_graphs") else {
        return;
    };
    let (graphs, _) = load_all(&d.join("ag/random-small"));
    for (path, g) in graphs.iter().step_by(40) {
        for p in [2, 3] {
            let (_, b) = fugue_sched::best(g, p, 0);
            let o = fugue_sched::optimal(g, p, Duration::from_millis(200));
            verify(g, &o.schedule).unwrap();
            if !b.has_duplicates() {
                assert!(
                    fugue_sched::le(o.schedule.makespan(), b.makespan()),
                    "{}",
                    path.display()
                );
            }
            assert!(fugue_sched::le(o.lower_bound, o.schedule.makespan()));
        }
    }
}
