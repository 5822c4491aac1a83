//! Runs the exact search on one graph and prints what it found (a diagnostic).
//!
//! ```text
//! cargo run --release -p fugue-bench --example exact_probe -- FILE P SECONDS
//! ```
fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        eprintln!("usage: exact_probe FILE P SECONDS");
        std::process::exit(2);
    }
    let g = match fugue_graph::read_file(std::path::Path::new(&a[1]), None) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("probe: {e}");
            std::process::exit(1);
        }
    };
    let p: usize = a[2].parse().unwrap_or(2);
    let secs: f64 = a[3].parse().unwrap_or(1.0);
    let (alg, b) = fugue_sched::best(&g, p, 0);
    let o = fugue_sched::optimal(&g, p, std::time::Duration::from_secs_f64(secs));
    println!(
        "best {} ({alg}) optimal {} proven {} lower {} trivial lower {} nodes {} in {:.3} s",
        b.makespan(),
        o.schedule.makespan(),
        o.proven,
        o.lower_bound,
        fugue_sched::metrics::lower_bound(&g, p),
        o.nodes,
        o.elapsed.as_secs_f64()
    );
}
