//! Reading speed of the `.ag` reader on the 300-node, ~22,000-edge graphs of the corpus.
//!
//! `cargo run --release -p fugue-bench --example read_bench [-- DIR [REPEATS]]`
//!
//! For each file: parse it REPEATS times from memory, check the node and edge counts against
//! an independent count of the text, and report MB/s (median, min, max over the repeats).

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "../shared/data/ag/random-big".into()),
    );
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(30);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ag"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .ag files in {}", dir.display());
    println!("file,bytes,nodes,edges,median_mb_s,min_mb_s,max_mb_s,median_ms");
    let mut all = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let edges = text.matches("->").count();
        let nodes = text.matches("= {").count();
        let mut rates = Vec::with_capacity(repeats);
        let mut times = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            let t = Instant::now();
            let g = fugue_graph::read::ag::parse(&text, "bench.ag").expect("parses");
            let dt = t.elapsed().as_secs_f64();
            assert_eq!(
                (g.len(), g.edges().len()),
                (nodes, edges),
                "{}",
                f.display()
            );
            rates.push(text.len() as f64 / dt / 1e6);
            times.push(dt * 1e3);
        }
        rates.sort_by(f64::total_cmp);
        times.sort_by(f64::total_cmp);
        let med = rates[rates.len() / 2];
        all.push(med);
        println!(
            "{},{},{},{},{:.1},{:.1},{:.1},{:.3}",
            f.file_name().unwrap().to_string_lossy(),
            text.len(),
            nodes,
            edges,
            med,
            rates[0],
            rates[rates.len() - 1],
            times[times.len() / 2]
        );
    }
    all.sort_by(f64::total_cmp);
    println!(
        "# median over files of the per-file median: {:.1} MB/s ({} files, {} repeats each)",
        all[all.len() / 2],
        all.len(),
        repeats
    );
}
