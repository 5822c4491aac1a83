//! Work stealing with and without the choice of steals by the work they bring
//! (`ExecOptions::min_steal`), in one process: one executor with two threads, the option
//! toggled between batches of cycles (in alternating order), so that both meet the same
//! phases of a noisy machine; and a one-thread executor between them for reference. Prints
//! the medians over rounds of each batch's median cycle time, the ratio per round, and the
//! steals per cycle. Empty probe nodes (each checked to run once per cycle, after its
//! predecessors) unless `AB_DSP=BLOCK` asks for the graph's real DSP at that block size.
//! Every timed cycle is checked after its time is taken: the probes' order and count, or
//! with real DSP the output bit for bit against a second plan run by `seq` in step. A failed
//! check ends the probe with exit code 1 before any figure is printed.
//!
//! `cargo run --release -p fugue-bench --example ab_ws -- [DEPTH] [ROUNDS] [CYCLES] [GRAPH]`:
//! a diamond of depth `DEPTH` (4: 76 nodes), or with `DEPTH` 0 the graph file `GRAPH`.
use std::time::Instant;

use fugue_bench::check::SeqReference;
use fugue_bench::peers::probe::Probe;
use fugue_exec::executors::WorkStealing;
use fugue_exec::{CompileOptions, ExecOptions, Executor, Plan};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let per: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(500);
    let g = if depth == 0 {
        let Some(path) = args.get(4) else {
            eprintln!("ab_ws: with DEPTH 0, give a graph file");
            std::process::exit(2);
        };
        match fugue_graph::read_file(std::path::Path::new(path), None) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("ab_ws: {e}");
                std::process::exit(1);
            }
        }
    } else {
        fugue_graph::gen::diamond(depth)
    };
    let dsp = std::env::var("AB_DSP")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let (probe, pg) = Probe::new(&g);
    let (reg, gg, block) = match dsp {
        Some(b) => (fugue_dsp::Registry::with_builtin_kinds(), &g, b),
        None => (Probe::registry(), &pg, 1),
    };
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut plan = Plan::compile(gg, &reg, &opts).unwrap();
    let mut reference = SeqReference::new(gg, &reg, &opts).unwrap();
    let mut verify = |plan: &Plan, who: &str| {
        let res = if dsp.is_some() {
            reference.check(plan, who).map_err(|e| e.to_string())
        } else {
            probe.check_cycle().map_err(|e| format!("{who}: {e}"))
        };
        if let Err(e) = res {
            eprintln!("ab_ws: {e}");
            std::process::exit(1);
        }
    };
    let mut ws = WorkStealing::new(&plan, 2, &ExecOptions::default()).unwrap();
    for _ in 0..2000 {
        probe.begin_cycle();
        ws.run_cycle(&mut plan);
        verify(&plan, "ws warm-up");
    }
    let mut one = WorkStealing::new(&plan, 1, &ExecOptions::default()).unwrap();
    let mut ones = Vec::new();
    let mut meds = [Vec::new(), Vec::new()];
    let mut ratios = Vec::new();
    let mut steals = [0u64; 2];
    for r in 0..rounds {
        let mut m = [0.0f64; 2];
        for k in 0..2 {
            let v = if r % 2 == 0 { k } else { 1 - k };
            ws.set_min_steal(if v == 1 {
                fugue_exec::executors::DEFAULT_MIN_STEAL
            } else {
                std::time::Duration::ZERO
            });
            let mut ts = Vec::with_capacity(per);
            let s0 = ws.steals();
            for _ in 0..per {
                probe.begin_cycle();
                let t = Instant::now();
                ws.run_cycle(&mut plan);
                ts.push(t.elapsed().as_nanos() as u64);
                verify(&plan, "ws on two threads");
            }
            steals[v] += ws.steals() - s0;
            ts.sort_unstable();
            m[v] = ts[per / 2] as f64;
        }
        let mut ts = Vec::with_capacity(per);
        for _ in 0..per {
            probe.begin_cycle();
            let t = Instant::now();
            one.run_cycle(&mut plan);
            ts.push(t.elapsed().as_nanos() as u64);
            verify(&plan, "ws on one thread");
        }
        ts.sort_unstable();
        ones.push(ts[per / 2] as f64);
        meds[0].push(m[0]);
        meds[1].push(m[1]);
        ratios.push(m[1] / m[0]);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 4], v[v.len() / 2], v[3 * v.len() / 4])
    };
    let cyc = (rounds * per) as f64;
    println!(
        "steals per cycle: off {:.2} on {:.2}",
        steals[0] as f64 / cyc,
        steals[1] as f64 / cyc
    );
    let faster = ratios.iter().filter(|&&x| x < 1.0).count();
    let (a, b, c) = med(&mut ones);
    println!("one thread: {a:.0} {b:.0} {c:.0} ns");
    let (a, b, c) = med(&mut meds[0]);
    println!("off: {a:.0} {b:.0} {c:.0} ns (p25 median p75 of batch medians)");
    let (a, b, c) = med(&mut meds[1]);
    println!("on:  {a:.0} {b:.0} {c:.0} ns");
    let n = ratios.len();
    let (a, b, c) = med(&mut ratios);
    println!("on/off per round: {a:.3} {b:.3} {c:.3}; on faster in {faster} of {n}");
}
