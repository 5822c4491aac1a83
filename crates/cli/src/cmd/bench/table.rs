//! `fugue bench table`: every executor × the line / diamond / rake graphs of the corpus ×
//! buffer sizes, with real DSP, rendered offline (cycles run directly on the plan, outputs
//! discarded). Reports the median and p99 cycle time and the speedup against `seq`, each
//! configuration repeated (interleaved runs), with medians and spread over runs.
//!
//! Correctness before timing: every cycle of every run of every executor is compared with
//! the same cycle of `seq` (a hash of the bits of every output sample); a difference fails
//! the benchmark.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use fugue_engine::Costs;
use fugue_exec::{CompileOptions, Executor, ExecutorKind, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use super::capacity::{self, Capacity};
use super::overhead::{
    build_executor, load_average, median, parse_runners, spread_pct, Runner, Spec, Stats,
    TuningArgs,
};
use crate::util::{self, usage};

/// The speedup of `runs` against `seq`: the median over `i` of `seq[i].median / runs[i].median`.
/// Run `i` of every executor is measured right after run `i` of seq (interleaved), so each
/// ratio compares two measurements taken under the same machine load; the median of the
/// ratios is much steadier on a shared machine than the ratio of the two medians.
pub fn paired_speedup(seq: &[Stats], runs: &[Stats]) -> f64 {
    median_or_nan(&paired_ratios(seq, runs).collect::<Vec<_>>())
}

/// Per run `i`: `seq[i].median / runs[i].median`.
fn paired_ratios<'a>(seq: &'a [Stats], runs: &'a [Stats]) -> impl Iterator<Item = f64> + 'a {
    seq.iter().zip(runs).map(|(a, b)| a.median_ns / b.median_ns)
}

/// The median, or NaN when there is nothing.
fn median_or_nan(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        median(v)
    }
}

/// Arguments of `fugue bench table`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Graphs, comma-separated: line (ligne/ligne100.ag), diamond (losange/losange156.ag),
    /// rake (rateau/rateau101.ag), or paths of graph files.
    #[arg(long, default_value = "line,diamond,rake")]
    pub shapes: String,
    /// Buffer sizes (frames per cycle), comma-separated.
    #[arg(long, default_value = "64,128,512,2048")]
    pub buffers: String,
    /// Executors, comma-separated (seq, static, ws, ws-affinity, share, share-spin, levels, rayon), or
    /// `all` (every one, and the rayon peer). `seq` is always run: it is the reference.
    #[arg(long, default_value = "all")]
    pub executors: String,
    /// Threads, the calling thread included.
    #[arg(long, short = 't', default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Audio seconds rendered per run.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Runs per configuration (interleaved across executors).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub runs: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// The corpus folder holding ligne/, losange/ and rateau/.
    #[arg(long, default_value = "../shared/data/ag")]
    pub corpus: PathBuf,
    /// Static schedule algorithm (for static).
    #[arg(long, default_value = "hlfet", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,
    /// Costs of the static schedule: measured (calibrated at each buffer size) or declared.
    #[arg(long, default_value = "measured", value_parser = ["measured", "declared"])]
    pub costs: String,
    /// Wait budgets, unit grouping and pinning.
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// Write README.md, raw.csv, summary.csv and table.md into this folder.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse::<Algorithm>().map_err(|e| e.to_string())
}

/// The corpus file of a shape name, or the path itself.
fn graph_path(corpus: &Path, shape: &str) -> PathBuf {
    match shape {
        "line" => corpus.join("ligne/ligne100.ag"),
        "diamond" => corpus.join("losange/losange156.ag"),
        "rake" => corpus.join("rateau/rateau101.ag"),
        other => PathBuf::from(other),
    }
}

fn parse_list<T: std::str::FromStr>(s: &str, flag: &str) -> anyhow::Result<Vec<T>> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse::<T>()
                .map_err(|_| usage(format!("`{x}` in {flag} is not a valid value")))
        })
        .collect()
}

/// A hash of the bits of every output sample of the last cycle.
fn output_hash(plan: &Plan) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in 0..plan.n_outputs() {
        for &x in plan.output(c) {
            h ^= u64::from(x.to_bits());
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Runs `cycles` cycles from a reset plan, timing each; checks each cycle's output against
/// `reference` (or fills it when empty).
fn timed_run(
    exec: &mut dyn Executor,
    plan: &mut Plan,
    cycles: usize,
    reference: &mut Vec<u64>,
) -> Result<Vec<u64>, usize> {
    plan.reset();
    let fill = reference.is_empty();
    let mut samples = Vec::with_capacity(cycles);
    for c in 0..cycles {
        let t0 = Instant::now();
        exec.run_cycle(plan);
        samples.push(t0.elapsed().as_nanos() as u64);
        let h = output_hash(plan);
        if fill {
            reference.push(h);
        } else if reference[c] != h {
            return Err(c);
        }
    }
    Ok(samples)
}

struct Cell {
    shape: String,
    graph: PathBuf,
    nodes: usize,
    buffer: usize,
    runner: Runner,
    runs: Vec<Stats>,
    /// The machine's capacity probed in each round (empty when not probed).
    capacity: Vec<f64>,
}

/// The median over rounds `i` of `speedup_i / capacity_i`: how much of the parallel capacity
/// the machine offered in that round the executor turned into speedup.
fn of_capacity(seq: &[Stats], runs: &[Stats], capacity: &[f64]) -> f64 {
    let r: Vec<f64> = paired_ratios(seq, runs)
        .zip(capacity)
        .map(|(s, c)| s / c)
        .collect();
    median_or_nan(&r)
}

/// `median (min-max)` of the probed capacities, or `-`.
fn capacity_text(capacity: &[f64]) -> String {
    if capacity.is_empty() {
        return "-".into();
    }
    let lo = capacity.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = capacity.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{:.2} ({lo:.2}-{hi:.2})", median(capacity))
}

/// Runs `fugue bench table`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let shapes: Vec<String> = parse_list(&args.shapes, "--shapes")?;
    let buffers: Vec<usize> = parse_list(&args.buffers, "--buffers")?;
    if shapes.is_empty() || buffers.is_empty() {
        return Err(usage("--shapes and --buffers need at least one value each"));
    }
    if let Some(&b) = buffers.iter().find(|&&b| b == 0 || b > 1 << 20) {
        return Err(usage(format!("buffer {b} is out of range (1 to 1048576)")));
    }
    if !(args.seconds.is_finite() && args.seconds > 0.0) {
        return Err(usage("--seconds must be positive"));
    }
    let mut runners = parse_runners(&args.executors, &[Runner::Rayon])?;
    runners.retain(|&r| r != Runner::Fugue(ExecutorKind::Seq));
    runners.insert(0, Runner::Fugue(ExecutorKind::Seq));
    if let Some(dir) = &args.output {
        for f in ["README.md", "raw.csv", "summary.csv", "table.md"] {
            let p = dir.join(f);
            if p.exists() && !args.force {
                return Err(usage(format!(
                    "{} already exists; pass --force to overwrite it",
                    p.display()
                )));
            }
        }
    }
    let mut graphs: Vec<(String, PathBuf, TaskGraph)> = Vec::new();
    for s in &shapes {
        let p = graph_path(&args.corpus, s);
        if !p.is_file() {
            bail!(
                "graph {} (for `{s}`) not found; give --corpus DIR (the folder with ligne/, losange/, rateau/) or a graph path",
                p.display()
            );
        }
        let g = util::read_graph(&p, None)?;
        graphs.push((s.clone(), p, g));
    }
    let threads = args.threads as usize;
    let options = args.tuning.options();
    // The cores whose side-by-side speed bounds the speedup (none to probe with one thread).
    let probe_cores = if threads > 1 {
        capacity::probe_cores(threads)
    } else {
        Vec::new()
    };
    let probing = probe_cores.len() > 1;
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let load_before = load_average();
    let started = Instant::now();
    let mut cells: Vec<Cell> = Vec::new();
    let mut warnings = Vec::new();
    for (shape, path, graph) in &graphs {
        for &buffer in &buffers {
            let cycles = ((args.seconds * f64::from(args.rate)) / buffer as f64).ceil() as usize;
            let cycles = cycles.max(10);
            let opts = CompileOptions {
                sample_rate: f64::from(args.rate),
                block: buffer,
                placeholder: false,
                merge_chains: !args.tuning.no_merge_chains,
            };
            let costs = if args.costs == "declared" {
                Costs::Declared
            } else {
                Costs::Measured
            };
            // One plan for every runner (reset before each run): the runners then work on the
            // same memory, and no one gains or loses by where its buffers happen to lie.
            let mut plan = Plan::compile(graph, &reg, &opts)
                .with_context(|| format!("cannot compile {}", path.display()))?;
            let mut execs = Vec::new();
            for &r in &runners {
                let spec = Spec {
                    threads,
                    algorithm: args.algorithm,
                    costs: costs.clone(),
                    pin: args.tuning.pin,
                    options: options.clone(),
                };
                let (e, w) = build_executor(r, graph, &plan, &spec)
                    .with_context(|| format!("{} on {}", r.name(), path.display()))?;
                warnings.extend(w);
                execs.push((r, e));
            }
            let mut probe_plans = if probing {
                capacity::plans_for(graph, &opts, probe_cores.len())
                    .with_context(|| format!("cannot compile {}", path.display()))?
            } else {
                Vec::new()
            };
            let mut caps: Vec<f64> = Vec::new();
            let mut reference = Vec::new();
            let mut per: Vec<Vec<Stats>> = vec![Vec::new(); execs.len()];
            // The reference run of seq (untimed): every executor's cycles must equal its.
            {
                let (_, e) = &mut execs[0];
                timed_run(e.as_mut(), &mut plan, cycles, &mut reference)
                    .map_err(|c| anyhow::anyhow!("seq diverged from itself at cycle {c}"))?;
            }
            let skip = super::overhead::warm_up(cycles);
            for _ in 0..args.runs {
                for (k, (r, e)) in execs.iter_mut().enumerate() {
                    super::overhead::settle();
                    let mut s = timed_run(e.as_mut(), &mut plan, cycles, &mut reference).map_err(
                        |c| {
                            anyhow::anyhow!(
                                "executor {} produced output different from seq on {} at buffer {buffer} (cycle {c}); its times do not count",
                                r.name(),
                                path.display()
                            )
                        },
                    )?;
                    let wall: u64 = s.iter().sum();
                    let st = Stats::of(&mut s[skip..]).context("no cycle timed")?;
                    per[k].push(st);
                    if k == 0 && probing {
                        // The capacity of this round: every core runs seq side by side for
                        // as long as seq's run took.
                        let d = Duration::from_nanos(wall)
                            .clamp(Duration::from_millis(10), Duration::from_secs(2));
                        super::overhead::settle();
                        let c: Capacity = capacity::probe(&mut probe_plans, &probe_cores, d)?;
                        caps.push(c.value());
                    }
                }
            }
            let nodes = graph.len();
            let seq_runs = per[0].clone();
            let mut line = format!("{shape} ({nodes} nodes) buffer {buffer}:");
            for ((r, _), runs) in execs.iter().zip(per) {
                let m = median(&runs.iter().map(|s| s.median_ns).collect::<Vec<_>>());
                let _ = write!(
                    line,
                    " {} {:.1} µs ({:.2}x)",
                    r.name(),
                    m / 1e3,
                    paired_speedup(&seq_runs, &runs)
                );
                if probing && r != &Runner::Fugue(ExecutorKind::Seq) {
                    let _ = write!(
                        line,
                        " [{:.0} %]",
                        100.0 * of_capacity(&seq_runs, &runs, &caps)
                    );
                }
                cells.push(Cell {
                    shape: shape.clone(),
                    graph: path.clone(),
                    nodes,
                    buffer,
                    runner: *r,
                    runs,
                    capacity: caps.clone(),
                });
            }
            if probing {
                let _ = write!(line, "; capacity {}", capacity_text(&caps));
            }
            eprintln!("{line}");
        }
    }
    warnings.sort();
    warnings.dedup();
    for w in &warnings {
        eprintln!("fugue: warning: {w}");
    }
    let load_after = load_average();
    let wall = started.elapsed();

    // Summary rows.
    let seq_of = |shape: &str, buffer: usize| -> &[Stats] {
        cells
            .iter()
            .find(|c| {
                c.shape == shape
                    && c.buffer == buffer
                    && c.runner == Runner::Fugue(ExecutorKind::Seq)
            })
            .map(|c| &c.runs[..])
            .unwrap_or(&[])
    };
    let mut raw = String::from(
        "shape,graph,nodes,buffer,executor,threads,run,cycles,median_ns,p99_ns,max_ns,mean_ns,min_ns,capacity,verified\n",
    );
    let mut summary = String::from(
        "shape,graph,nodes,buffer,executor,threads,runs,median_ns,median_spread_pct,p99_ns,max_ns,mean_ns,speedup_vs_seq,capacity,speedup_of_capacity,verified\n",
    );
    let thr = |r: Runner| {
        if r == Runner::Fugue(ExecutorKind::Seq) {
            1
        } else {
            threads
        }
    };
    for c in &cells {
        for (i, s) in c.runs.iter().enumerate() {
            let _ = writeln!(
                raw,
                "{},{},{},{},{},{},{},{},{:.0},{:.0},{:.0},{:.0},{:.0},{},true",
                c.shape,
                c.graph.display(),
                c.nodes,
                c.buffer,
                c.runner.name(),
                thr(c.runner),
                i + 1,
                s.cycles,
                s.median_ns,
                s.p99_ns,
                s.max_ns,
                s.mean_ns,
                s.min_ns,
                c.capacity
                    .get(i)
                    .map_or(String::new(), |x| format!("{x:.3}"))
            );
        }
        let meds: Vec<f64> = c.runs.iter().map(|s| s.median_ns).collect();
        let m = median(&meds);
        let _ = writeln!(
            summary,
            "{},{},{},{},{},{},{},{:.0},{:.1},{:.0},{:.0},{:.0},{:.3},{},{},true",
            c.shape,
            c.graph.display(),
            c.nodes,
            c.buffer,
            c.runner.name(),
            thr(c.runner),
            c.runs.len(),
            m,
            spread_pct(&meds),
            median(&c.runs.iter().map(|s| s.p99_ns).collect::<Vec<_>>()),
            c.runs.iter().map(|s| s.max_ns).fold(0.0, f64::max),
            median(&c.runs.iter().map(|s| s.mean_ns).collect::<Vec<_>>()),
            paired_speedup(seq_of(&c.shape, c.buffer), &c.runs),
            if c.capacity.is_empty() {
                String::new()
            } else {
                format!("{:.3}", median(&c.capacity))
            },
            if c.capacity.is_empty() {
                String::new()
            } else {
                format!(
                    "{:.3}",
                    of_capacity(seq_of(&c.shape, c.buffer), &c.runs, &c.capacity)
                )
            }
        );
    }
    let mut md = String::new();
    for (shape, path, g) in &graphs {
        let _ = writeln!(
            md,
            "### {shape}: {} ({} nodes), {threads} threads\n",
            path.display(),
            g.len()
        );
        let _ = write!(md, "| buffer |");
        if probing {
            let _ = write!(md, " capacity |");
        }
        for r in &runners {
            let _ = write!(md, " {} |", r.name());
        }
        let _ = write!(md, "\n|---:|");
        if probing {
            let _ = write!(md, "---:|");
        }
        for _ in &runners {
            let _ = write!(md, "---:|");
        }
        md.push('\n');
        for &b in &buffers {
            let _ = write!(md, "| {b} |");
            let seq = seq_of(shape, b);
            let caps: &[f64] = cells
                .iter()
                .find(|c| &c.shape == shape && c.buffer == b)
                .map_or(&[], |c| &c.capacity[..]);
            if probing {
                let _ = write!(md, " {} |", capacity_text(caps));
            }
            for r in &runners {
                if let Some(c) = cells
                    .iter()
                    .find(|c| &c.shape == shape && c.buffer == b && c.runner == *r)
                {
                    let meds: Vec<f64> = c.runs.iter().map(|s| s.median_ns).collect();
                    let m = median(&meds);
                    let p99 = median(&c.runs.iter().map(|s| s.p99_ns).collect::<Vec<_>>());
                    let _ = write!(
                        md,
                        " {:.1} / {:.1} µs, **{:.2}×** ±{:.0} %",
                        m / 1e3,
                        p99 / 1e3,
                        paired_speedup(seq, &c.runs),
                        spread_pct(&meds) / 2.0
                    );
                    if probing && *r != Runner::Fugue(ExecutorKind::Seq) {
                        let _ = write!(
                            md,
                            ", {:.0} % of capacity",
                            100.0 * of_capacity(seq, &c.runs, caps)
                        );
                    }
                    md.push_str(" |");
                }
            }
            md.push('\n');
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Each cell: median / p99 cycle time (medians over {} runs of {} s of audio at {} Hz), speedup against seq (the median over runs of seq's run median / the executor's run median, run i of each measured back to back), ± half the spread of the run medians ((max - min) / 2 / median). Every cycle of every run was checked bit-identical to seq.{}",
        args.runs,
        args.seconds,
        args.rate,
        if probing {
            format!(
                " Capacity: after each round's seq run, cores {:?} ran seq side by side (one plan copy each, pinned) for as long; capacity = the sum over cores of the fastest core's median cycle time / this core's (2.00 = two equal cores; a core at half speed gives 1.50): the bound of any speedup in that round. Median (min-max) over rounds. \"% of capacity\": the median over rounds of speedup / capacity.",
                probe_cores
            )
        } else {
            String::new()
        }
    );
    print!("{md}");
    if let Some(dir) = &args.output {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let cmdline: Vec<String> = std::env::args().collect();
        let readme = format!(
            "# fugue bench table\n\n\
             Command: `{}`\n\n\
             - commit: {}\n- date (UTC): {}\n- machine: {}\n- fugue {}; {}\n\
             - load average before: {}, after: {} (the machine is shared: other builds ran beside this)\n\
             - wall time: {:.0} s\n\n\
             Files: `raw.csv` (one row per run: cycle-time statistics of that run, the first tenth of the cycles (at most 50) left out as warm-up), \
             `summary.csv` (per configuration: median of the run medians, their spread (max - min) / median, median p99, speedup against seq), \
             `table.md` (the table below).\n\n{}",
            cmdline.join(" "),
            command_output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into()),
            command_output("date", &["-u", "+%Y-%m-%d %H:%M"]).unwrap_or_else(|| "unknown".into()),
            machine(),
            env!("CARGO_PKG_VERSION"),
            command_output("rustc", &["-V"]).unwrap_or_else(|| "rustc unknown".into()),
            load_before.as_deref().unwrap_or("?"),
            load_after.as_deref().unwrap_or("?"),
            wall.as_secs_f64(),
            md
        );
        util::write_atomic(&dir.join("README.md"), true, readme.as_bytes())?;
        util::write_atomic(&dir.join("raw.csv"), true, raw.as_bytes())?;
        util::write_atomic(&dir.join("summary.csv"), true, summary.as_bytes())?;
        util::write_atomic(&dir.join("table.md"), true, md.as_bytes())?;
        eprintln!("wrote {}", dir.display());
    }
    Ok(())
}

/// The first line of a command's output, if it ran.
pub fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8_lossy(&out.stdout);
    s.lines().next().map(|l| l.trim().to_string())
}

/// The CPU model, core count and kernel.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|x| x.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!(
        "{model}, {} cores available, kernel {}",
        fugue_exec::placement::available_cores(),
        command_output("uname", &["-r"]).unwrap_or_else(|| "?".into())
    )
}
