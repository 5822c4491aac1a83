//! Times a few cycles of each executor on one graph (a quick diagnostic).
//!
//! `cargo run --release -p fugue-bench --example exec_probe -- GRAPH`
use fugue_exec::{build, CompileOptions, ExecOptions, ExecutorKind, Plan};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).expect("graph");
    let g = fugue_graph::read_file(std::path::Path::new(&path), None).unwrap();
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    for kind in ExecutorKind::ALL {
        for threads in 1..=4 {
            let mut plan = Plan::compile(
                &g,
                &reg,
                &CompileOptions {
                    sample_rate: 8000.0,
                    block: 64,
                    placeholder: false,
                    merge_chains: true,
                    ..Default::default()
                },
            )
            .unwrap();
            let lists = (kind == ExecutorKind::Static).then(|| {
                let mut l = vec![Vec::new(); threads];
                for t in 0..plan.n_units() {
                    l[t % threads].push(t as u32);
                }
                l
            });
            let t0 = Instant::now();
            let mut e = build(kind, &plan, threads, lists, &ExecOptions::default()).unwrap();
            let t1 = Instant::now();
            for _ in 0..3 {
                e.run_cycle(&mut plan);
            }
            let t2 = Instant::now();
            drop(e);
            eprintln!(
                "{kind} x{threads}: build {:?} run {:?} drop {:?}",
                t1 - t0,
                t2 - t1,
                t2.elapsed()
            );
        }
    }
}
