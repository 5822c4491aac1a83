//! Speed of the schedulers on the 300-node, ~22,000-edge graphs of `ag/random-big`, P = 4.
//!
//! ```text
//! cargo run --release -p fugue-bench --example speed_bench -- [--runs 11] [--graphs 3]
//!     [--out bench-results/sched]
//! ```
//! Every schedule is verified before its time counts. Writes `speed_raw.csv` (one row per run)
//! and `speed_summary.csv` (median, min, max per graph and algorithm) and prints the summary.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("speed_bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = arg(&args, "--runs")
        .map_or(Ok(11), |s| s.parse())
        .map_err(|e| format!("--runs: {e}"))?;
    let graphs: usize = arg(&args, "--graphs")
        .map_or(Ok(3), |s| s.parse())
        .map_err(|e| format!("--graphs: {e}"))?;
    let out = PathBuf::from(arg(&args, "--out").unwrap_or_else(|| "bench-results/sched".into()));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ag/random-big");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ag"))
        .collect();
    files.sort();
    files.truncate(graphs);
    let p = 4;
    let mut raw = String::from("graph,nodes,edges,algorithm,run,seconds,makespan\n");
    let mut summary =
        String::from("graph,nodes,edges,algorithm,runs,median_ms,min_ms,max_ms,makespan\n");
    for f in &files {
        let g = fugue_graph::read_file(f, None).map_err(|e| e.to_string())?;
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        type Alg = fn(&fugue_graph::TaskGraph, usize) -> fugue_sched::Schedule;
        let algs: [(&str, Alg, usize); 3] = [
            ("hlfet", fugue_sched::hlfet, runs),
            ("etf", fugue_sched::etf, runs),
            ("cpfd", fugue_sched::cpfd, runs.min(5)),
        ];
        for (alg, fun, n) in algs {
            let mut times = Vec::new();
            let mut ms = 0.0;
            for r in 0..n {
                let t = Instant::now();
                let s = fun(&g, p);
                let secs = t.elapsed().as_secs_f64();
                fugue_sched::verify(&g, &s)
                    .map_err(|e| format!("{name} {alg}: invalid schedule: {e}"))?;
                if s.num_processors() > p {
                    return Err(format!("{name} {alg}: {} processors", s.num_processors()));
                }
                ms = s.makespan();
                let _ = writeln!(
                    raw,
                    "{name},{},{},{alg},{r},{secs:.6},{ms}",
                    g.len(),
                    g.edges().len()
                );
                times.push(secs * 1e3);
            }
            times.sort_by(f64::total_cmp);
            let _ = writeln!(
                summary,
                "{name},{},{},{alg},{n},{:.3},{:.3},{:.3},{ms}",
                g.len(),
                g.edges().len(),
                times[times.len() / 2],
                times[0],
                times[times.len() - 1]
            );
        }
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out.join("speed_raw.csv"), raw).map_err(|e| e.to_string())?;
    std::fs::write(out.join("speed_summary.csv"), &summary).map_err(|e| e.to_string())?;
    print!("{summary}");
    Ok(())
}
