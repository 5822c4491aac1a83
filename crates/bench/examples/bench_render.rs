//! Times the sequential render of a graph without writing audio, and checks the result first.
//!
//! ```text
//! cargo run --release -p fugue-bench --example bench_render -- GRAPH [--rate 44100]
//!     [--buffer 512] [--seconds 30] [--runs 7] [--csv FILE]
//! ```
//!
//! Each run compiles the graph, then runs `seconds` of cycles with the sequential executor,
//! reading every sink channel after each cycle (as the render does) but writing nothing.
//! Before any time counts, the output is checked: finite, not silent, identical in every run,
//! and equal (within 1e-6) to a render with a 64-frame buffer. Prints one line per run and
//! the median, min and max in multiples of real time; `--csv` appends one row per run.

use std::io::Write as _;
use std::time::Instant;

use fugue_dsp::Registry;
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};

struct Args {
    graph: String,
    rate: u32,
    buffer: usize,
    seconds: f64,
    runs: usize,
    csv: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut a = Args {
        graph: String::new(),
        rate: 44_100,
        buffer: 512,
        seconds: 30.0,
        runs: 7,
        csv: None,
    };
    while let Some(x) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match x.as_str() {
            "--rate" => a.rate = val("--rate")?.parse().map_err(|e| format!("--rate: {e}"))?,
            "--buffer" => {
                a.buffer = val("--buffer")?
                    .parse()
                    .map_err(|e| format!("--buffer: {e}"))?
            }
            "--seconds" => {
                a.seconds = val("--seconds")?
                    .parse()
                    .map_err(|e| format!("--seconds: {e}"))?
            }
            "--runs" => a.runs = val("--runs")?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--csv" => a.csv = Some(val("--csv")?),
            g if !g.starts_with("--") && a.graph.is_empty() => a.graph = g.to_string(),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    if a.graph.is_empty() {
        return Err("usage: bench_render GRAPH [--rate R] [--buffer B] [--seconds S] [--runs N] [--csv FILE]".into());
    }
    Ok(a)
}

/// Renders `frames` frames; returns the time of the cycles and a digest of the output
/// (plus the first `keep` frames of channel 0 for comparison).
fn run(plan: &mut Plan, frames: u64, keep: usize) -> (f64, u64, Vec<f32>, f32) {
    let mut ex = SeqExecutor::new();
    let block = plan.block() as u64;
    let mut done = 0u64;
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    let mut kept = Vec::with_capacity(keep);
    let mut peak = 0.0f32;
    let start = Instant::now();
    while done < frames {
        ex.run_cycle(plan);
        for c in 0..plan.n_outputs() {
            let out = plan.output(c);
            // A cheap (vectorisable) digest of every sample, so that the work cannot be skipped
            // and runs can be compared bit for bit; position-weighted so that order counts.
            let mut sum = 0u64;
            let mut m = 0.0f32;
            for (k, &x) in out.iter().enumerate() {
                sum = sum.wrapping_add((x.to_bits() as u64).wrapping_mul(k as u64 | 1));
                m = m.max(x.abs());
            }
            digest = (digest ^ sum).wrapping_mul(0x0000_0100_0000_01b3);
            peak = peak.max(m);
            if c == 0 && kept.len() < keep {
                let n = (keep - kept.len()).min(out.len());
                kept.extend_from_slice(&out[..n]);
            }
        }
        done += block;
    }
    (start.elapsed().as_secs_f64(), digest, kept, peak)
}

fn main() {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench_render: {e}");
            std::process::exit(2);
        }
    };
    let graph = match fugue_graph::read_file(std::path::Path::new(&a.graph), None) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("bench_render: {e}");
            std::process::exit(1);
        }
    };
    let reg = Registry::with_builtin_kinds();
    let compile = |block: usize| {
        Plan::compile(
            &graph,
            &reg,
            &CompileOptions {
                sample_rate: a.rate as f64,
                block,
                placeholder: false,
                merge_chains: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| {
            eprintln!("bench_render: {e}");
            std::process::exit(1);
        })
    };
    let frames = (a.seconds * a.rate as f64).round() as u64;
    let keep = (a.rate as usize).min(frames as usize);

    // Reference: a 64-frame buffer.
    let (_, _, reference, _) = run(&mut compile(64), keep as u64, keep);
    let mut times = Vec::new();
    let mut first_digest = None;
    for r in 0..a.runs {
        let mut plan = compile(a.buffer);
        let (t, digest, kept, peak) = run(&mut plan, frames, keep);
        let worst = kept
            .iter()
            .zip(&reference)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        let ok = peak.is_finite()
            && peak > 0.0
            && worst <= 1e-6
            && *first_digest.get_or_insert(digest) == digest;
        if !ok {
            eprintln!("bench_render: run {r}: wrong output (peak {peak}, differs from buffer 64 by {worst}, digest {digest:x})");
            std::process::exit(1);
        }
        let x = a.seconds / t;
        println!(
            "run {r}: {:.2} s of audio in {:.4} s: {x:.1}x real time (output checked)",
            a.seconds, t
        );
        if let Some(path) = &a.csv {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("open csv");
            writeln!(
                f,
                "{},{},{},{},{},{:.6},{:.2},ok",
                a.graph, a.rate, a.buffer, a.seconds, r, t, x
            )
            .expect("write csv");
        }
        times.push(x);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}: {} Hz, buffer {}, sequential, no WAV: median {:.1}x real time (min {:.1}, max {:.1}, {} runs)",
        a.graph,
        a.rate,
        a.buffer,
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        times.len()
    );
}
