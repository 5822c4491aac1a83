//! Benchmark on the Standard Task Graph Set (50 and 100 tasks, P = 2, 4, 8, 16): every
//! algorithm's makespan against the known optimum (`optimal.csv`), every schedule verified.
//!
//! ```text
//! cargo run --release -p fugue-bench --example stg_bench -- --time-limit 10 [--sizes 50,100]
//!     [--limit-100 SECONDS] [--threads 2] [--out bench-results/sched]
//! ```
//! Writes `raw.csv` (one row per graph, P and algorithm) and `summary.csv` (per size and
//! algorithm) in the output folder, and prints the summary. Fails (exit 1) when a schedule is
//! invalid, when a non-duplicating algorithm goes below a proven optimum, or when the exact
//! search returns a schedule longer than `best`'s.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fugue_sched::{Algorithm, Options};

struct Row {
    size: usize,
    graph: String,
    procs: usize,
    algorithm: &'static str,
    makespan: f64,
    lower: f64,
    upper: f64,
    proven: Option<bool>,
    seconds: f64,
    duplicates: bool,
    time_limit: f64,
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("stg_bench: {e}");
        std::process::exit(1);
    }
}

fn real_main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let limit: f64 = arg(&args, "--time-limit")
        .map_or(Ok(10.0), |s| s.parse())
        .map_err(|e| format!("--time-limit: {e}"))?;
    let limit_100: f64 = arg(&args, "--limit-100")
        .map_or(Ok(limit), |s| s.parse())
        .map_err(|e| format!("--limit-100: {e}"))?;
    let threads: usize = arg(&args, "--threads")
        .map_or(Ok(2), |s| s.parse())
        .map_err(|e| format!("--threads: {e}"))?;
    let sizes: Vec<usize> = arg(&args, "--sizes")
        .unwrap_or_else(|| "50,100".into())
        .split(',')
        .map(|s| s.parse().map_err(|e| format!("--sizes: {e}")))
        .collect::<Result<_, _>>()?;
    let out = PathBuf::from(arg(&args, "--out").unwrap_or_else(|| "bench-results/sched".into()));
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/stg");
    let opt_text = std::fs::read_to_string(data.join("optimal.csv"))
        .map_err(|e| format!("{}: {e}", data.join("optimal.csv").display()))?;
    let mut known: HashMap<(String, usize), (f64, f64)> = HashMap::new();
    for (i, line) in opt_text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || format!("optimal.csv:{}: bad row", i + 1);
        if f.len() != 4 {
            return Err(bad());
        }
        let p: usize = f[1].parse().map_err(|_| bad())?;
        let lo: f64 = f[2].parse().map_err(|_| bad())?;
        let hi: f64 = f[3].parse().map_err(|_| bad())?;
        known.insert((f[0].to_string(), p), (lo, hi));
    }
    let mut jobs = Vec::new();
    for &size in &sizes {
        for i in 0..60 {
            let name = format!("{size}/rand{i:04}.stg");
            for p in [2usize, 4, 8, 16] {
                jobs.push((size, name.clone(), p));
            }
        }
    }
    let next = AtomicUsize::new(0);
    let rows: Mutex<Vec<Row>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let t0 = Instant::now();
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1) {
            sc.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some((size, name, p)) = jobs.get(j) else {
                    break;
                };
                let lim = if *size >= 100 { limit_100 } else { limit };
                match run_one(&data, *size, name, *p, lim, &known) {
                    Ok(mut r) => {
                        if j.is_multiple_of(20) {
                            eprintln!(
                                "[{:>4.0} s] {j}/{} {name} P={p}",
                                t0.elapsed().as_secs_f64(),
                                jobs.len()
                            );
                        }
                        rows.lock().unwrap().append(&mut r);
                    }
                    Err(e) => errors.lock().unwrap().push(e),
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by(|a, b| {
        (a.size, &a.graph, a.procs, a.algorithm).cmp(&(b.size, &b.graph, b.procs, b.algorithm))
    });
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut raw = String::from("size,graph,procs,algorithm,makespan,opt_lower,opt_upper,proven,seconds,time_limit,duplicates\n");
    for r in &rows {
        let _ = writeln!(
            raw,
            "{},{},{},{},{},{},{},{},{:.6},{},{}",
            r.size,
            r.graph,
            r.procs,
            r.algorithm,
            r.makespan,
            r.lower,
            r.upper,
            r.proven.map_or("".to_string(), |b| b.to_string()),
            r.seconds,
            r.time_limit,
            r.duplicates
        );
    }
    std::fs::write(out.join("raw.csv"), raw).map_err(|e| e.to_string())?;
    let summary = summarize(&rows);
    std::fs::write(out.join("summary.csv"), &summary).map_err(|e| e.to_string())?;
    print!("{summary}");
    eprintln!("total {:.0} s", t0.elapsed().as_secs_f64());
    if !errors.is_empty() {
        return Err(format!("{} failures:\n{}", errors.len(), errors.join("\n")));
    }
    Ok(())
}

fn run_one(
    data: &Path,
    size: usize,
    name: &str,
    p: usize,
    limit: f64,
    known: &HashMap<(String, usize), (f64, f64)>,
) -> Result<Vec<Row>, String> {
    let g = fugue_graph::read_file(&data.join(name), None).map_err(|e| e.to_string())?;
    let &(lower, upper) = known
        .get(&(name.to_string(), p))
        .ok_or_else(|| format!("{name} P={p}: not in optimal.csv"))?;
    let opts = Options {
        processors: p,
        seed: 1,
        time_limit: Duration::from_secs_f64(limit),
    };
    let mut rows = Vec::new();
    let mut best_ms = f64::INFINITY;
    for alg in [
        Algorithm::Hlfet,
        Algorithm::Etf,
        Algorithm::Cpfd,
        Algorithm::Random,
        Algorithm::Best,
        Algorithm::Optimal,
    ] {
        let t = Instant::now();
        let o = fugue_sched::run(&g, alg, &opts).map_err(|e| e.to_string())?;
        let secs = t.elapsed().as_secs_f64();
        let s = &o.schedule;
        fugue_sched::verify(&g, s)
            .map_err(|e| format!("{name} P={p} {alg}: invalid schedule: {e}"))?;
        if s.num_processors() > p {
            return Err(format!(
                "{name} P={p} {alg}: {} processors",
                s.num_processors()
            ));
        }
        let ms = s.makespan();
        let dup = s.has_duplicates();
        if !dup && lower == upper && ms < lower - 1e-9 {
            return Err(format!(
                "{name} P={p} {alg}: makespan {ms} below the proven optimum {lower}"
            ));
        }
        if !dup && ms < lower - 1e-9 {
            return Err(format!(
                "{name} P={p} {alg}: makespan {ms} below the known lower bound {lower}"
            ));
        }
        if alg == Algorithm::Best {
            best_ms = ms;
        }
        if alg == Algorithm::Optimal {
            if ms > best_ms + 1e-9 {
                return Err(format!(
                    "{name} P={p}: optimal {ms} is worse than best {best_ms}"
                ));
            }
            if o.optimal == Some(true) && upper < ms - 1e-9 {
                return Err(format!(
                    "{name} P={p}: claims {ms} optimal but {upper} is known"
                ));
            }
        }
        rows.push(Row {
            size,
            graph: name.to_string(),
            procs: p,
            algorithm: alg.name(),
            makespan: ms,
            lower,
            upper,
            proven: o.optimal,
            seconds: secs,
            duplicates: dup,
            time_limit: limit,
        });
    }
    Ok(rows)
}

fn summarize(rows: &[Row]) -> String {
    let mut s = String::from("size,algorithm,instances,mean_ratio,worst_ratio,at_optimum,proven_instances,mean_seconds,max_seconds,proved_optimal\n");
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        for alg in ["hlfet", "etf", "cpfd", "random", "best", "optimal"] {
            let rs: Vec<&Row> = rows
                .iter()
                .filter(|r| r.size == size && r.algorithm == alg)
                .collect();
            if rs.is_empty() {
                continue;
            }
            // ratio against the proven optimum where known, against the lower bound otherwise
            let ratios: Vec<f64> = rs.iter().map(|r| r.makespan / r.lower).collect();
            let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
            let worst = ratios.iter().copied().fold(0.0, f64::max);
            let at_opt = rs
                .iter()
                .filter(|r| r.lower == r.upper && (r.makespan - r.upper).abs() < 1e-9)
                .count();
            let proven_inst = rs.iter().filter(|r| r.lower == r.upper).count();
            let secs: Vec<f64> = rs.iter().map(|r| r.seconds).collect();
            let mean_s = secs.iter().sum::<f64>() / secs.len() as f64;
            let max_s = secs.iter().copied().fold(0.0, f64::max);
            let proved = rs.iter().filter(|r| r.proven == Some(true)).count();
            let _ = writeln!(
                s,
                "{size},{alg},{},{mean:.5},{worst:.5},{at_opt},{proven_inst},{mean_s:.4},{max_s:.4},{}",
                rs.len(),
                if alg == "optimal" { proved.to_string() } else { String::new() }
            );
        }
    }
    s
}
