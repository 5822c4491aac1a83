//! The table benchmark: every executor × graphs (the corpus's line / diamond / rake, or files)
//! × buffer sizes, with real DSP, rendered offline (cycles run directly on the plan, outputs
//! discarded). Reports the median and p99 cycle time and the speedup against `seq`, each
//! configuration repeated (interleaved runs), with medians and spread over runs.
//!
//! Correctness before timing: every cycle of every run of every executor (seq's included) is
//! compared with the same cycle of a reference seq run on its own plan (the hash of the bits
//! of every output sample, [`Plan::output_hash`], taken after the cycle's time); the first
//! difference fails the benchmark before anything is printed or written, with the executor,
//! graph, buffer, run, cycle, output channel and sample.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fugue_engine::Costs;
use fugue_exec::{CompileOptions, Executor, Plan};
use fugue_graph::TaskGraph;
use fugue_sched::Algorithm;

use crate::capacity::{self, Capacity};
use crate::check::{locate, SeqReference};
use crate::error::{config, BenchError, Context as _};
use crate::machine::{load_average, Machine, Versions};
use crate::progress::{Event, Progress};
use crate::report::{folder, opt, Align, Csv, Existing, Folder, Table};
use crate::runner::{build_executor, parse_runners, settle, Runner, Spec, Tuning};
use crate::stats::{median, min_max, paired_ratios, spread_pct, warm_up, CycleStats, Runs as _};

/// The files of the output folder.
pub const FILES: [&str; 4] = ["README.md", "raw.csv", "summary.csv", "table.md"];

/// The table benchmark's configuration.
#[derive(Clone, Debug)]
pub struct TableConfig {
    /// Graphs: `line` (ligne/ligne100.ag), `diamond` (losange/losange156.ag), `rake`
    /// (rateau/rateau101.ag) of the 2019 corpus (generated, or read from `corpus`),
    /// `gen:SHAPE:N`, or paths of graph files (see [`crate::shapes`]).
    pub shapes: Vec<String>,
    /// Buffer sizes (frames per cycle).
    pub buffers: Vec<usize>,
    /// Executors, comma-separated, or `all` (with the rayon peer); seq is always run first.
    pub executors: String,
    /// Threads, the calling thread included.
    pub threads: usize,
    /// Audio seconds rendered per run.
    pub seconds: f64,
    /// Runs per configuration (interleaved across executors).
    pub runs: usize,
    /// Sample rate in Hz.
    pub rate: u32,
    /// The corpus folder holding ligne/, losange/ and rateau/; without it the three shapes
    /// are generated ([`crate::shapes`]).
    pub corpus: Option<PathBuf>,
    /// Static schedule algorithm (for static).
    pub algorithm: Algorithm,
    /// Costs of the static schedule: measured (calibrated at each buffer size) or declared.
    pub costs: Costs,
    /// Budgets, unit grouping and pinning.
    pub tuning: Tuning,
    /// The folder [`TableResult::write`] will write (checked before running), if any.
    pub output: Option<PathBuf>,
    /// Overwrite the files of an existing output folder.
    pub force: bool,
    /// Sub-blocks per cycle for every executor but seq (pipelining; seq, the baseline, runs
    /// the plan unpipelined): `Sub(1)` for none.
    pub pipeline: fugue_engine::Pipeline,
    /// The kinds the graphs' nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// One configuration: a graph, a buffer size, an executor, and its runs.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The shape's name as given.
    pub shape: String,
    /// Where the graph came from (a file, or generated).
    pub graph: String,
    /// Its nodes.
    pub nodes: usize,
    /// Frames per cycle.
    pub buffer: usize,
    /// The executor.
    pub runner: Runner,
    /// Its runs (warm-up left out), all checked against seq.
    pub runs: Vec<CycleStats>,
    /// The machine's capacity probed in each round (empty when not probed).
    pub capacity: Vec<f64>,
    /// The most nodes that can run at once in this configuration (its threads, and the
    /// graph's width when the plan is not pipelined): a speedup above it was disturbed
    /// ([`Cell::above_bound`]). `None` for seq.
    pub bound: Option<usize>,
}

/// How far above [`Cell::bound`] a speedup must be to be flagged (timing's own noise).
const BOUND_SLACK: f64 = 1.02;

impl Cell {
    /// The bound that speedup `sp` passes, if it does: a figure that more parallel work
    /// than the configuration can do would give, so the timing was disturbed (seq slowed
    /// in its runs, say).
    pub fn above_bound(&self, sp: f64) -> Option<usize> {
        self.bound.filter(|&b| sp > b as f64 * BOUND_SLACK)
    }
}

/// The table benchmark's result.
#[derive(Clone, Debug)]
pub struct TableResult {
    /// The configuration.
    pub config: TableConfig,
    /// The graphs: shape name, where it came from (a file, or generated), nodes.
    pub graphs: Vec<(String, String, usize)>,
    /// The executors, seq first.
    pub runners: Vec<Runner>,
    /// Every configuration.
    pub cells: Vec<Cell>,
    /// The cores probed for capacity (none with one thread).
    pub probe_cores: Vec<usize>,
    /// Load average before and after.
    pub load: (Option<String>, Option<String>),
    /// Wall time of the benchmark.
    pub wall: Duration,
}

/// How long each timed run first runs untimed cycles ([`timed_run`]).
const WARM_WALL: Duration = Duration::from_millis(50);

/// Runs `reference.len()` cycles from a reset plan (after untimed ones, see the body), timing each; after each cycle's time is
/// taken, compares the hash of its output with `reference`'s (seq's, cycle by cycle).
/// `Err(cycle)`: the first cycle (from 1) that differed; the plan still holds its output.
fn timed_run(exec: &mut dyn Executor, plan: &mut Plan, reference: &[u64]) -> Result<Vec<u64>, u64> {
    // Untimed cycles first, for at least `WARM_WALL`: the workers parked during `settle`, and
    // the kernel may wake one on the core of the thread that woke it, where it waits for that
    // thread's time slice (milliseconds) before the balancer moves it. A run of short cycles
    // (a 30 µs cycle, 2 s of audio: 6 ms in all) would measure that transient, not the
    // executor.
    // They are checked too, as many passes over the reference as the time takes.
    let warm = Instant::now();
    let mut n = 0;
    while n < 10 || warm.elapsed() < WARM_WALL {
        let c = n % reference.len().max(1);
        if c == 0 {
            plan.reset();
        }
        exec.run_cycle(plan);
        if reference.get(c).is_some_and(|&h| plan.output_hash() != h) {
            return Err(c as u64 + 1);
        }
        n += 1;
    }
    plan.reset();
    let mut samples = Vec::with_capacity(reference.len());
    for (c, &expected) in reference.iter().enumerate() {
        let t0 = Instant::now();
        exec.run_cycle(plan);
        samples.push(t0.elapsed().as_nanos() as u64);
        if plan.output_hash() != expected {
            return Err(c as u64 + 1);
        }
    }
    Ok(samples)
}

/// The output hash of each of seq's first `cycles` cycles on `graph`.
fn reference_hashes(
    graph: &TaskGraph,
    reg: &fugue_dsp::Registry,
    opts: &CompileOptions,
    cycles: usize,
) -> Result<Vec<u64>, BenchError> {
    let mut r = SeqReference::new(graph, reg, opts)?;
    Ok((0..cycles)
        .map(|_| {
            r.advance();
            r.hash()
        })
        .collect())
}

/// The error of a timed run whose cycle `cycle` (from 1) differed from seq: where (output
/// channel and sample), found by running seq again up to that cycle beside the timed plan,
/// which still holds the cycle's output.
fn wrong_output(
    graph: &TaskGraph,
    reg: &fugue_dsp::Registry,
    opts: &CompileOptions,
    plan: &Plan,
    cycle: u64,
    who: &str,
) -> BenchError {
    let e = match locate(graph, reg, opts, plan, cycle, who) {
        Ok(Some(e)) => e,
        Ok(None) | Err(_) => BenchError::Failed(format!(
            "{who}: cycle {cycle}'s output hash differs from seq's"
        )),
    };
    BenchError::Failed(format!("{e}; the output is wrong, no result is reported"))
}

/// The speedup of `runs` against `seq`: the median over `i` of `seq[i].median / runs[i].median`.
/// Run `i` of every executor is measured right after run `i` of seq (interleaved), so each
/// ratio compares two measurements taken under the same machine load; the median of the
/// ratios is much steadier on a shared machine than the ratio of the two medians.
pub fn paired_speedup(seq: &[CycleStats], runs: &[CycleStats]) -> f64 {
    median(&paired_ratios(seq, runs))
}

/// The median over rounds `i` of `speedup_i / capacity_i`: how much of the parallel capacity
/// the machine offered in that round the executor turned into speedup.
fn of_capacity(seq: &[CycleStats], runs: &[CycleStats], capacity: &[f64]) -> f64 {
    let r: Vec<f64> = paired_ratios(seq, runs)
        .iter()
        .zip(capacity)
        .map(|(s, c)| s / c)
        .collect();
    median(&r)
}

/// `median (min-max)` of the probed capacities, or `-`.
fn capacity_text(capacity: &[f64]) -> String {
    if capacity.is_empty() {
        return "-".into();
    }
    let (lo, hi) = min_max(capacity);
    format!("{:.2} ({lo:.2}-{hi:.2})", median(capacity))
}

/// What the README adds to the runs' length when it is shorter than [`MIN_RUN_CYCLES`] at
/// some buffer size: how long those runs were (`; at least 10 cycles: 0.106667 s at 512
/// frames`), or nothing.
fn floored(c: &TableConfig) -> String {
    let said: Vec<String> = c
        .buffers
        .iter()
        .filter(|&&b| c.seconds * f64::from(c.rate) / (b as f64) < MIN_RUN_CYCLES as f64)
        .map(|&b| {
            let s = MIN_RUN_CYCLES as f64 * b as f64 / f64::from(c.rate);
            format!("{} s at {b} frames", fugue_engine::report::trimmed(s, 6))
        })
        .collect();
    if said.is_empty() {
        String::new()
    } else {
        format!("; at least {MIN_RUN_CYCLES} cycles: {}", said.join(", "))
    }
}

/// The fewest cycles a run of the table has (a shorter `--seconds` runs this many).
pub const MIN_RUN_CYCLES: usize = 10;

/// Runs the table benchmark: one line per graph and buffer to `progress`, then the warnings.
pub fn run(c: &TableConfig, progress: &mut dyn Progress) -> Result<TableResult, BenchError> {
    if c.shapes.is_empty() || c.buffers.is_empty() {
        return config("--shapes and --buffers need at least one value each");
    }
    if let Some(&b) = c.buffers.iter().find(|&&b| b == 0 || b > 1 << 20) {
        return config(format!("buffer {b} is out of range (1 to 1048576)"));
    }
    if !(c.seconds.is_finite() && c.seconds > 0.0) {
        return config("--seconds must be positive");
    }
    if let fugue_engine::Pipeline::Sub(n) = c.pipeline {
        if let Some(&b) = c.buffers.iter().find(|&&b| n == 0 || !b.is_multiple_of(n)) {
            return config(format!(
                "--pipeline {n} does not divide the buffer of {b} frames; choose a divisor of every buffer (1 turns pipelining off) or auto"
            ));
        }
    }
    for &buffer in &c.buffers {
        crate::check_cycles_per_run("bench table", c.seconds, c.rate, buffer)?;
    }
    let mut runners = parse_runners("--executors", &c.executors, &[Runner::Rayon])?;
    runners.retain(|&r| r != Runner::SEQ);
    runners.insert(0, Runner::SEQ);
    if let Some(dir) = &c.output {
        folder::check(dir, Existing::Files(&FILES), c.force)?;
    }
    // A corpus that no shape reads would be ignored without a word.
    if let Some(dir) = &c.corpus {
        if !c
            .shapes
            .iter()
            .any(|s| ["line", "diamond", "rake"].contains(&s.as_str()))
        {
            return config(format!(
                "--corpus {}: it is read for the shapes line, diamond and rake, and --shapes names none of them",
                dir.display()
            ));
        }
    }
    let mut graphs: Vec<(String, String, TaskGraph)> = Vec::new();
    for s in &c.shapes {
        let l = crate::shapes::load(s, c.corpus.as_deref(), Path::new(""))?;
        graphs.push((s.clone(), l.source, l.graph));
    }
    let threads = c.threads;
    let options = c.tuning.options();
    // The cores whose side-by-side speed bounds the speedup (none to probe with one thread).
    let probe_cores = if threads > 1 {
        capacity::probe_cores(threads)
    } else {
        Vec::new()
    };
    let probing = probe_cores.len() > 1;
    let reg = &c.registry;
    let load_before = load_average();
    let started = Instant::now();
    let mut cells: Vec<Cell> = Vec::new();
    let mut warnings = Vec::new();
    for (shape, path, graph) in &graphs {
        // No more nodes than this can run at once (known exactly for most graphs).
        let width = match fugue_graph::analysis::width(graph) {
            (w, fugue_graph::analysis::WidthMethod::Exact) => Some(w),
            _ => None,
        };
        // Nor more threads than the cores this process may run on.
        let cores = fugue_exec::placement::allowed_cores().len().max(1);
        for &buffer in &c.buffers {
            let cycles = ((c.seconds * f64::from(c.rate)) / buffer as f64).ceil() as usize;
            // At least MIN_RUN_CYCLES, so that a median and a 99th percentile mean something
            // (the README says how long such runs were).
            let cycles = cycles.max(MIN_RUN_CYCLES);
            let opts = CompileOptions {
                sample_rate: f64::from(c.rate),
                block: buffer,
                placeholder: false,
                merge_chains: c.tuning.merge_chains,
                ..Default::default()
            };
            // One plan for every runner (reset before each run): the runners then work on the
            // same memory, and no one gains or loses by where its buffers happen to lie.
            let mut plan = Plan::compile(graph, reg, &opts).map_err(|e| {
                BenchError::from(e).at_node(format!("cannot compile {path}"), graph)
            })?;
            // The other runners' plan when pipelined (seq keeps the plain one: the baseline).
            let sub_blocks = c.pipeline.choose(&plan, threads);
            let mut piped =
                if sub_blocks > 1 {
                    let o = CompileOptions {
                        pipeline: sub_blocks,
                        pipeline_segments: threads,
                        ..opts.clone()
                    };
                    Some(Plan::compile(graph, reg, &o).map_err(|e| {
                        BenchError::Config(format!("{path} at buffer {buffer}: {e}"))
                    })?)
                } else {
                    None
                };
            let spec = Spec {
                threads,
                algorithm: c.algorithm,
                costs: c.costs.clone(),
                pin: c.tuning.pin,
                options: options.clone(),
                registry: reg.clone(),
            };
            let mut execs = Vec::new();
            for &r in &runners {
                let p = match &piped {
                    Some(p) if r != Runner::SEQ => p,
                    _ => &plan,
                };
                let (e, w) = build_executor(r, graph, p, &spec)
                    .with_context(|| format!("{} on {path}", r.name()))?;
                warnings.extend(w);
                execs.push((r, e));
            }
            let mut probe_plans = if probing {
                capacity::plans_for(graph, reg, &opts, probe_cores.len())
                    .with_context(|| format!("cannot compile {path}"))?
            } else {
                Vec::new()
            };
            let mut caps: Vec<f64> = Vec::new();
            let mut per: Vec<Vec<CycleStats>> = vec![Vec::new(); execs.len()];
            // Seq's output hash of every cycle, on its own plan (untimed): every executor's
            // cycles must equal it.
            let reference = reference_hashes(graph, reg, &opts, cycles)
                .with_context(|| format!("cannot compile {path}"))?;
            let skip = warm_up(cycles);
            for run in 1..=c.runs {
                for (k, (r, e)) in execs.iter_mut().enumerate() {
                    settle();
                    let p = match &mut piped {
                        Some(p) if *r != Runner::SEQ => p,
                        _ => &mut plan,
                    };
                    let mut s = match timed_run(e.as_mut(), p, &reference) {
                        Ok(s) => s,
                        Err(cycle) => {
                            let who = format!(
                                "bench table: executor {} ({}) on {} at buffer {buffer}, run {run}",
                                r.name(),
                                r.threads_text(threads),
                                path
                            );
                            return Err(wrong_output(graph, reg, &opts, p, cycle, &who));
                        }
                    };
                    let wall: u64 = s.iter().sum();
                    let st = CycleStats::of(&mut s[skip..])
                        .ok_or_else(|| BenchError::Failed("no cycle timed".into()))?;
                    per[k].push(st);
                    if k == 0 && probing {
                        // The capacity of this round: every core runs seq side by side for
                        // as long as seq's run took.
                        let d = Duration::from_nanos(wall)
                            .clamp(Duration::from_millis(10), Duration::from_secs(2));
                        settle();
                        let cap: Capacity = capacity::probe(&mut probe_plans, &probe_cores, d)?;
                        caps.push(cap.value());
                    }
                }
            }
            let nodes = graph.written_nodes();
            let seq_runs = per[0].clone();
            let mut line = format!("{shape} ({nodes} nodes) buffer {buffer}:");
            if sub_blocks > 1 {
                let _ = write!(line, " (pipelined: {sub_blocks} sub-blocks but seq)");
            }
            for ((r, _), runs) in execs.iter().zip(per) {
                let sp = paired_speedup(&seq_runs, &runs);
                let _ = write!(
                    line,
                    " {} {:.1} µs ({sp:.2}x)",
                    r.name(),
                    runs.median_of(|s| s.median_ns) / 1e3,
                );
                // A pipelined plan overlaps its sub-blocks: only the threads bound it.
                let bound = (*r != Runner::SEQ).then(|| match width {
                    Some(w) if sub_blocks <= 1 => w.min(threads).min(cores),
                    _ => threads.min(cores),
                });
                if probing && *r != Runner::SEQ {
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
                    bound,
                });
                if let Some(b) = cells.last().and_then(|c| c.above_bound(sp)) {
                    let _ = write!(
                        line,
                        " [above {b}, the most that can run at once: likely disturbed]"
                    );
                }
            }
            if probing {
                let _ = write!(line, "; capacity {}", capacity_text(&caps));
            }
            progress.event(Event::Line(&line));
        }
    }
    warnings.sort();
    warnings.dedup();
    for w in &warnings {
        progress.event(Event::Warning(w));
    }
    Ok(TableResult {
        config: c.clone(),
        graphs: graphs
            .into_iter()
            .map(|(s, p, g)| (s, p, g.written_nodes()))
            .collect(),
        runners,
        cells,
        probe_cores,
        load: (load_before, load_average()),
        wall: started.elapsed(),
    })
}

impl TableResult {
    fn probing(&self) -> bool {
        self.probe_cores.len() > 1
    }

    fn cell(&self, shape: &str, buffer: usize, runner: Runner) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.shape == shape && c.buffer == buffer && c.runner == runner)
    }

    /// Seq's runs at a shape and buffer.
    fn seq_of(&self, shape: &str, buffer: usize) -> &[CycleStats] {
        self.cell(shape, buffer, Runner::SEQ)
            .map_or(&[], |c| &c.runs[..])
    }

    /// raw.csv: one row per run.
    pub fn raw_csv(&self) -> Csv {
        let mut raw = Csv::new(&[
            "shape",
            "graph",
            "nodes",
            "buffer",
            "executor",
            "threads",
            "run",
            "cycles",
            "median_ns",
            "p99_ns",
            "max_ns",
            "mean_ns",
            "min_ns",
            "capacity",
            "verified",
        ]);
        for c in &self.cells {
            for (i, s) in c.runs.iter().enumerate() {
                raw.row([
                    c.shape.clone(),
                    c.graph.clone(),
                    c.nodes.to_string(),
                    c.buffer.to_string(),
                    c.runner.name().into(),
                    c.runner.threads(self.config.threads).to_string(),
                    (i + 1).to_string(),
                    s.cycles.to_string(),
                    format!("{:.0}", s.median_ns),
                    format!("{:.0}", s.p99_ns),
                    format!("{:.0}", s.max_ns),
                    format!("{:.0}", s.mean_ns),
                    format!("{:.0}", s.min_ns),
                    opt(c.capacity.get(i).copied(), 3),
                    // A result holds only runs whose every cycle equalled seq's: the first
                    // difference makes `run` fail.
                    "true".into(),
                ]);
            }
        }
        raw
    }

    /// summary.csv: one row per configuration.
    pub fn summary_csv(&self) -> Csv {
        let mut summary = Csv::new(&[
            "shape",
            "graph",
            "nodes",
            "buffer",
            "executor",
            "threads",
            "runs",
            "median_ns",
            "median_spread_pct",
            "p99_ns",
            "max_ns",
            "mean_ns",
            "speedup_vs_seq",
            "capacity",
            "speedup_of_capacity",
            "verified",
        ]);
        for c in &self.cells {
            let seq = self.seq_of(&c.shape, c.buffer);
            let probed = !c.capacity.is_empty();
            summary.row([
                c.shape.clone(),
                c.graph.clone(),
                c.nodes.to_string(),
                c.buffer.to_string(),
                c.runner.name().into(),
                c.runner.threads(self.config.threads).to_string(),
                c.runs.len().to_string(),
                format!("{:.0}", c.runs.median_of(|s| s.median_ns)),
                format!("{:.1}", spread_pct(&c.runs.medians())),
                format!("{:.0}", c.runs.median_of(|s| s.p99_ns)),
                format!("{:.0}", c.runs.max_ns()),
                format!("{:.0}", c.runs.median_of(|s| s.mean_ns)),
                format!("{:.3}", paired_speedup(seq, &c.runs)),
                opt(probed.then(|| median(&c.capacity)), 3),
                opt(probed.then(|| of_capacity(seq, &c.runs, &c.capacity)), 3),
                // Every run of the result was checked (see `raw_csv`).
                "true".into(),
            ]);
        }
        summary
    }

    /// table.md: per graph, a table of buffers × executors, and what the cells mean.
    pub fn markdown(&self) -> String {
        let c = &self.config;
        let probing = self.probing();
        let mut md = String::new();
        let mut disturbed = false;
        for (shape, path, nodes) in &self.graphs {
            let _ = writeln!(
                md,
                "### {shape}: {} ({nodes} nodes), {} threads\n",
                path, c.threads
            );
            let mut columns = vec![("buffer", Align::Right)];
            if probing {
                columns.push(("capacity", Align::Right));
            }
            columns.extend(self.runners.iter().map(|r| (r.name(), Align::Right)));
            let mut t = Table::new(columns);
            for &b in &c.buffers {
                let seq = self.seq_of(shape, b);
                let caps: &[f64] = self
                    .cells
                    .iter()
                    .find(|x| &x.shape == shape && x.buffer == b)
                    .map_or(&[], |x| &x.capacity[..]);
                let mut row = vec![b.to_string()];
                if probing {
                    row.push(capacity_text(caps));
                }
                for &r in &self.runners {
                    let Some(cell) = self.cell(shape, b, r) else {
                        row.push("–".into());
                        continue;
                    };
                    let sp = paired_speedup(seq, &cell.runs);
                    let mut s = format!(
                        "{:.1} / {:.1} µs, **{sp:.2}×** ±{:.0} %",
                        cell.runs.median_of(|s| s.median_ns) / 1e3,
                        cell.runs.median_of(|s| s.p99_ns) / 1e3,
                        spread_pct(&cell.runs.medians()) / 2.0
                    );
                    if let Some(b) = cell.above_bound(sp) {
                        disturbed = true;
                        let _ = write!(s, " ⚠ above {b}");
                    }
                    if probing && r != Runner::SEQ {
                        let _ = write!(
                            s,
                            ", {:.0} % of capacity",
                            100.0 * of_capacity(seq, &cell.runs, caps)
                        );
                    }
                    row.push(s);
                }
                t.row(row);
            }
            let _ = writeln!(md, "{}", t.markdown());
        }
        let _ = writeln!(
            md,
            "Each cell: median / p99 cycle time (medians over {} of {} s of audio at {} Hz{}), speedup against seq (the median over runs of seq's run median / the executor's run median, run i of each measured back to back), ± half the spread of the run medians ((max - min) / 2 / median). Every cycle of every run was checked bit-identical to seq.{}",
            fugue_engine::report::counted(c.runs, "run"),
            c.seconds,
            c.rate,
            floored(c),
            if probing {
                format!(
                    " Capacity: after each round's seq run, cores {:?} ran seq side by side (one plan copy each, pinned) for as long; capacity = the sum over cores of the fastest core's median cycle time / this core's (2.00 = two equal cores; a core at half speed gives 1.50): the bound of any speedup in that round. Median (min-max) over rounds. \"% of capacity\": the median over rounds of speedup / capacity.",
                    self.probe_cores
                )
            } else {
                String::new()
            }
        );
        if disturbed {
            let _ = writeln!(
                md,
                "\n⚠ above N: a speedup above the most nodes that the configuration can run at once (its threads, the cores, and the graph's width when its plan is not pipelined): more than its parallelism gives, so its runs or seq's beside them were most likely disturbed (another process, a core slowed by its host), unless the nodes ran faster than under seq (their data spread over more cores' caches); measure again on a quiet machine."
            );
        }
        md
    }

    /// Writes README.md (with `command`, the command line), raw.csv, summary.csv and table.md
    /// into `dir`.
    pub fn write(&self, dir: &Path, command: &str) -> Result<(), BenchError> {
        crate::report::folder::as_one_set(dir, || self.write_files(dir, command))
    }

    /// [`Self::write`]'s files, each given its name when the set is.
    fn write_files(&self, dir: &Path, command: &str) -> Result<(), BenchError> {
        let dir = Folder::open(dir)?;
        let md = self.markdown();
        let v = Versions::detect();
        let readme = format!(
            "# fugue bench table\n\n\
             Command: `{command}`\n\n\
             - commit: {}\n- date (UTC): {}\n- machine: {}\n- fugue {}; {}\n\
             - load average before: {}, after: {} (the machine is shared: other builds ran beside this)\n\
             - wall time: {:.0} s\n\n\
             Files: `raw.csv` (one row per run: cycle-time statistics of that run, the first tenth of the cycles (at most 50) left out as warm-up), \
             `summary.csv` (per configuration: median of the run medians, their spread (max - min) / median, median p99, speedup against seq), \
             `table.md` (the table below).\n\n{md}",
            v.commit,
            v.date,
            Machine::detect(),
            v.fugue,
            v.rustc,
            self.load.0.as_deref().unwrap_or("?"),
            self.load.1.as_deref().unwrap_or("?"),
            self.wall.as_secs_f64(),
        );
        dir.text("README.md", &readme)?;
        dir.csv("raw.csv", &self.raw_csv())?;
        dir.csv("summary.csv", &self.summary_csv())?;
        dir.text("table.md", &md)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn line_and_diamond_rows_are_checked_against_seq() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let c = TableConfig {
            shapes: vec![
                dir.join("synth.ag").display().to_string(),
                dir.join("rake.ag").display().to_string(),
            ],
            buffers: vec![64],
            executors: "ws,levels,rayon".into(),
            threads: 2,
            seconds: 0.02,
            runs: 2,
            rate: 48_000,
            corpus: None,
            algorithm: Algorithm::Hlfet,
            costs: Costs::Declared,
            tuning: Tuning {
                merge_chains: true,
                ..Tuning::default()
            },
            output: None,
            force: false,
            pipeline: fugue_engine::Pipeline::Sub(1),
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        };
        let r = run(&c, &mut NoProgress).unwrap();
        assert_eq!(r.runners[0], Runner::SEQ);
        assert_eq!(r.cells.len(), 2 * 4);
        let summary = r.summary_csv();
        let rows: Vec<&str> = summary.as_str().lines().skip(1).collect();
        assert_eq!(rows.len(), 8);
        assert!(rows.iter().all(|r| r.ends_with(",true")));
        for row in rows.iter().filter(|r| r.contains(",seq,")) {
            let speedup: f64 = row.split(',').nth(12).unwrap().parse().unwrap();
            assert!((speedup - 1.0).abs() < 1e-9, "{row}");
        }
        assert_eq!(r.raw_csv().as_str().lines().count(), 1 + 8 * 2);
        let md = r.markdown();
        assert!(
            md.contains("| buffer |") && md.contains("**1.00×**"),
            "{md}"
        );
        // A parallel cell is bounded by the threads and the graph's width (both graphs are
        // at least two wide); seq has no bound.
        for cell in &r.cells {
            let cores = fugue_exec::placement::allowed_cores().len();
            let want = (cell.runner != Runner::SEQ).then_some(cores.clamp(1, 2));
            assert_eq!(cell.bound, want, "{} {}", cell.shape, cell.runner.name());
            if let Some(b) = want {
                assert_eq!(cell.above_bound(b as f64 * 1.01), None);
                assert_eq!(cell.above_bound(b as f64 * 1.1), Some(b));
            }
        }
        // A line's width is one: any speedup past 1.02 there was disturbed.
        let line = Cell {
            bound: Some(1),
            ..r.cells[1].clone()
        };
        assert_eq!(line.above_bound(1.24), Some(1));
    }

    #[test]
    fn bad_configurations_are_config_errors() {
        let c = TableConfig {
            shapes: vec!["line".into()],
            buffers: vec![0],
            executors: "all".into(),
            threads: 2,
            seconds: 1.0,
            runs: 1,
            rate: 48_000,
            corpus: None,
            algorithm: Algorithm::Hlfet,
            costs: Costs::Declared,
            tuning: Tuning::default(),
            output: None,
            force: false,
            pipeline: fugue_engine::Pipeline::Sub(1),
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        };
        assert!(run(&c, &mut NoProgress).unwrap_err().is_config());
    }
}
