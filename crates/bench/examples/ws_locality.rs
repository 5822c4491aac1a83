//! Where the chain of a line runs under work stealing: the number of tasks stolen per cycle
//! and the cycle time, against seq, on a graph file with real DSP.
//!
//! `cargo run --release -p fugue-bench --example ws_locality -- GRAPH [BUFFER] [CYCLES]`

use std::time::Instant;

use fugue_exec::executors::WorkStealing;
use fugue_exec::{CompileOptions, ExecOptions, Executor, Plan, SeqExecutor};

fn median(mut v: Vec<u64>) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: ws_locality GRAPH [BUFFER] [CYCLES]");
        std::process::exit(2);
    };
    let block: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(128);
    let cycles: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3000);
    let g = match fugue_graph::read_file(std::path::Path::new(path), None) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("ws_locality: {e}");
            std::process::exit(1);
        }
    };
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut a = Plan::compile(&g, &reg, &opts).expect("the graph compiles");
    let mut b = Plan::compile(&g, &reg, &opts).expect("the graph compiles");
    let mut seq = SeqExecutor::new();
    let mut ws = WorkStealing::new(&b, 2, &ExecOptions::default()).unwrap();
    // seq alone, then seq while another thread spins (as an idle worker does).
    for spinner in [false, true, false, true] {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let h = spinner.then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        });
        let mut ts = Vec::new();
        for _ in 0..cycles {
            let t = Instant::now();
            seq.run_cycle(&mut a);
            ts.push(t.elapsed().as_nanos() as u64);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = h {
            h.join().expect("the spinner ends");
        }
        println!(
            "seq {}: {:.2} µs",
            if spinner {
                "with a spinning thread"
            } else {
                "alone"
            },
            median(ts)
        );
    }
    a.reset();
    for round in 0..3 {
        let (mut ts, mut tw) = (Vec::new(), Vec::new());
        let s0 = ws.steals();
        for _ in 0..cycles {
            let t = Instant::now();
            seq.run_cycle(&mut a);
            ts.push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            ws.run_cycle(&mut b);
            tw.push(t.elapsed().as_nanos() as u64);
            for c in 0..a.n_outputs() {
                assert!(
                    a.output(c)
                        .iter()
                        .zip(b.output(c))
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "ws differs from seq"
                );
            }
        }
        let steals = (ws.steals() - s0) as f64 / cycles as f64;
        let (ms, mw) = (median(ts), median(tw));
        println!(
            "round {round}: seq {ms:.2} µs, ws {mw:.2} µs ({:.2}x of seq's speed), {steals:.2} tasks stolen per cycle",
            ms / mw
        );
    }
}
