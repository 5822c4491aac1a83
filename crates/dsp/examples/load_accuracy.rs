//! How closely a `load` node keeps its declared cost: for each `wcet`, `CALLS` calls of its
//! processor, timed from outside; prints the median, p99 and maximum of the measured time over
//! the declared one. The output (the inputs' sum) is checked on every call.
//!
//! `cargo run --release -p fugue-dsp --example load_accuracy -- [CALLS]`

use std::time::Instant;

use fugue_dsp::{NodeContext, Ratio, Registry};
use fugue_graph::Node;

fn main() {
    let calls: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 2000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("load_accuracy: CALLS must be a positive whole number");
            std::process::exit(2);
        }
    };
    let reg = Registry::with_builtin_kinds();
    println!("wcet_us  median  p99     max     (measured / declared, {calls} calls each)");
    for wcet in [5.0, 20.0, 100.0, 300.0, 1000.0] {
        let node = Node::new("busy", "load").with_cost(wcet);
        let ctx = NodeContext {
            node: &node,
            inputs: 2,
            outputs: 1,
            in_edges: 2,
            sample_rate: 48_000.0,
            block: 64,
            rate: Ratio::ONE,
            engine_rate: 48_000.0,
            engine_block: 64,
            folder: None,
        };
        let Some(build) = reg.get("load") else {
            eprintln!("load_accuracy: the `load` kind is not registered");
            std::process::exit(1);
        };
        let mut p = match build(&ctx) {
            Ok(n) => n.processor(),
            Err(e) => {
                eprintln!("load_accuracy: {e}");
                std::process::exit(1);
            }
        };
        let (a, b) = (vec![0.25f32; 64], vec![0.5f32; 64]);
        let mut o = vec![0.0f32; 64];
        let mut r: Vec<f64> = Vec::with_capacity(calls);
        for _ in 0..calls {
            let t = Instant::now();
            p.process(&[&a, &b], &mut [&mut o]);
            r.push(t.elapsed().as_secs_f64() * 1e6 / wcet);
            if o.iter().any(|&x| x != 0.75) {
                eprintln!("load_accuracy: wrong output at wcet {wcet}");
                std::process::exit(1);
            }
        }
        r.sort_by(f64::total_cmp);
        println!(
            "{wcet:>7}  {:.3}   {:.3}   {:.3}",
            r[r.len() / 2],
            r[(r.len() * 99 / 100).min(r.len() - 1)],
            r[r.len() - 1]
        );
    }
}
