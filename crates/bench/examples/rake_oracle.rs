//! How fast can two threads run `rateau101.ag` at 512 frames on this machine? Alternating
//! rounds, in one process: `seq`, `ws`, and a hand-made split with the least synchronisation
//! there is (the *oracle*): the calling thread runs branches 1-16 and 33, the groups of
//! branches 1-8 and 9-16 (the second adds the first's sum), then, after one flag from the
//! other thread, the mix and the sink; the other thread runs branches 17-32 and their two
//! groups. No counters, no deques, no ranges:
//! one store and one spin per cycle each way. Each round prints the three medians and the
//! speedups against `seq` of the same round. Every timed cycle's output is compared, bit for
//! bit, with a second copy of the plan run by `seq` in step (outside the timed region); a
//! difference ends the probe with exit code 1 before any figure of that round is printed.
//!
//! `cargo run --release -p fugue-bench --example rake_oracle -- ../shared/data/ag/rateau/rateau101.ag [ROUNDS]`
use fugue_bench::check::SeqReference;
use fugue_exec::{build, CompileOptions, ExecOptions, ExecutorKind, Plan};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: rake_oracle GRAPH [ROUNDS]");
    let rounds: usize = args.next().map_or(30, |s| s.parse().expect("ROUNDS"));
    let g = fugue_graph::read_file(std::path::Path::new(&path), None).expect("a graph");
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block: 512,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut plan = Plan::compile(&g, &reg, &opts).expect("compiles");
    let mut reference = SeqReference::new(&g, &reg, &opts).expect("compiles");
    let mut check = |plan: &Plan, who: &str| {
        if let Err(e) = reference.check(plan, who) {
            eprintln!("rake_oracle: {e}");
            std::process::exit(1);
        }
    };
    // rateau101: 33 branch units (0..33); the groups of branches 1-8 (33) and 17-24 (34);
    // those of branches 9-16 and 25-32, which add the sums of 33 and 34 to theirs (35, 36);
    // the mix with the sink (37).
    assert_eq!(plan.n_units(), 38, "a rake of 33 branches (rateau101.ag)");
    let mine: Vec<usize> = (0..16).chain([32, 33, 35]).collect();
    let theirs: Vec<usize> = (16..32).chain([34, 36]).collect();
    for u in 0..32 {
        let group = [33, 35, 34, 36][u / 8];
        assert_eq!(plan.unit_successors(u), &[group]);
    }
    assert_eq!(plan.unit_successors(33), &[35]);
    assert_eq!(plan.unit_successors(34), &[36]);
    let mut ws = build(ExecutorKind::Ws, &plan, 2, None, &ExecOptions::default()).unwrap();
    let mut seq = build(ExecutorKind::Seq, &plan, 1, None, &ExecOptions::default()).unwrap();
    let (go, done) = (AtomicU64::new(0), AtomicU64::new(0));
    let per = 3000;
    let mut ratios = (Vec::new(), Vec::new());
    let mut cycle = 0u64;
    for _ in 0..rounds {
        let (mut ts, mut tw, mut to) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..per {
            let t = Instant::now();
            seq.run_cycle(&mut plan);
            ts.push(t.elapsed().as_nanos() as u64);
            check(&plan, "seq");
        }
        for _ in 0..per {
            let t = Instant::now();
            ws.run_cycle(&mut plan);
            tw.push(t.elapsed().as_nanos() as u64);
            check(&plan, "ws");
        }
        let p: &Plan = &plan;
        std::thread::scope(|s| {
            let (go, done, theirs) = (&go, &done, &theirs);
            let start = cycle;
            s.spawn(move || {
                let mut seen = start;
                loop {
                    let c = loop {
                        let c = go.load(Ordering::Acquire);
                        if c != seen {
                            break c;
                        }
                        std::hint::spin_loop();
                    };
                    seen = c;
                    if c == u64::MAX {
                        return;
                    }
                    for &u in theirs {
                        // SAFETY: this thread alone runs these units in this cycle, after the
                        // cycle's start (Acquire above); the calling thread runs the others
                        // and reads their outputs only after `done` (Release below).
                        unsafe { p.run_unit(u) };
                    }
                    done.store(c, Ordering::Release);
                }
            });
            for _ in 0..per {
                cycle += 1;
                let t = Instant::now();
                go.store(cycle, Ordering::Release);
                for &u in &mine {
                    // SAFETY: the calling thread alone runs these units; their predecessors
                    // are its own earlier units.
                    unsafe { p.run_unit(u) };
                }
                while done.load(Ordering::Acquire) != cycle {
                    std::hint::spin_loop();
                }
                // SAFETY: every group is done (the other thread's by `done`, Acquire).
                unsafe { p.run_unit(37) };
                to.push(t.elapsed().as_nanos() as u64);
                check(p, "the oracle");
            }
            go.store(u64::MAX, Ordering::Release);
        });
        go.store(cycle, Ordering::Release);
        let (s, w, o) = (median(&mut ts), median(&mut tw), median(&mut to));
        println!(
            "seq {:.2} µs  ws {:.2} µs ({:.3}x)  oracle {:.2} µs ({:.3}x)",
            s / 1e3,
            w / 1e3,
            s / w,
            o / 1e3,
            s / o
        );
        ratios.0.push(s / w);
        ratios.1.push(s / o);
    }
    for (name, v) in [("ws", &mut ratios.0), ("oracle", &mut ratios.1)] {
        v.sort_by(f64::total_cmp);
        println!(
            "{name}: speedup median {:.3}, best {:.3} over {rounds} rounds",
            v[v.len() / 2],
            v[v.len() - 1]
        );
    }
}
