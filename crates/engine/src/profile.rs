//! The per-node, per-worker profile: why a cycle took the time it took.
//!
//! A [`Profiler`] is made on the control thread for one plan and executor (it allocates all
//! it will use), then the audio thread calls [`Profiler::record`] after each cycle: it reads
//! the plan's per-task records ([`Plan::task_times`]) and the workers' wake-up records
//! ([`Executor::worker_wakes`]) and folds them into preallocated statistics, without
//! allocating, locking or blocking:
//! - per node: calls, min, mean, p99 and max of its time in a cycle (a node split into
//!   groups or frame parts counts the sum of its pieces);
//! - per worker: wake-up latency (cycle start to the moment the worker saw the cycle),
//!   latency of its first task, busy and idle time, steals;
//! - per cycle: its time, the time before the first task and after the last one (the
//!   executor's own start and end), and the trace of the slowest cycles and of one cycle
//!   whose time is closest to the running median.
//!
//! [`Profiler::report`] (control thread) turns them into a [`ProfileReport`]: tables, the
//! breakdown of the slowest cycles (the chain of tasks and waits that made each one end when
//! it did) and per-worker timelines ([`ProfileReport::gantt_svg`]).

use std::fmt::Write as _;
use std::time::Duration;

use fugue_exec::trace::{Calibration, TaskTime};
use fugue_exec::{Executor, Plan};
use fugue_sched::gantt::{esc, fmt_num, tick_step};

/// Traces of the slowest cycles kept.
pub const SLOWEST_KEPT: usize = 5;

/// How many cycles between two updates of the running median that picks the median trace.
const MEDIAN_EVERY: u64 = 64;

/// Highest time a histogram holds, in ticks (longer times count as this): a minute at up to
/// 16 ticks per ns.
const HIST_MAX_TICKS: u64 = 1_000_000_000_000;

fn histogram() -> Histogram {
    Histogram::new()
}

/// A log-linear histogram of tick counts, made for the audio thread: a value up to 63 has its
/// own bucket, a larger one falls into one of 32 buckets per power of two (so a quantile is
/// within 3.2 % of the exact value), counts are `u32` in one array of 1,152 (4.5 KiB), and
/// recording one value is a few instructions with no branch but the range check.
#[derive(Clone, Debug)]
struct Histogram {
    counts: Box<[u32]>,
    total: u64,
    max: u64,
}

impl Histogram {
    /// Bits of the sub-bucket index within a power of two.
    const SUB_BITS: u32 = 5;
    const SUB: usize = 1 << Self::SUB_BITS;
    /// Values below this have a bucket each.
    const LINEAR: u64 = 2 * Self::SUB as u64;
    const BUCKETS: usize = Self::index(HIST_MAX_TICKS) + 1;

    fn new() -> Histogram {
        Histogram {
            counts: vec![0; Self::BUCKETS].into_boxed_slice(),
            total: 0,
            max: 0,
        }
    }

    /// The bucket of `v` (at most `HIST_MAX_TICKS`).
    #[inline]
    const fn index(v: u64) -> usize {
        if v < Self::LINEAR {
            v as usize
        } else {
            let e = 63 - v.leading_zeros();
            let m = (v >> (e - Self::SUB_BITS)) as usize & (Self::SUB - 1);
            Self::LINEAR as usize + (e - Self::SUB_BITS - 1) as usize * Self::SUB + m
        }
    }

    /// The highest value of bucket `i`.
    fn highest(i: usize) -> u64 {
        if (i as u64) < Self::LINEAR {
            return i as u64;
        }
        let k = i - Self::LINEAR as usize;
        let e = (k / Self::SUB) as u32 + Self::SUB_BITS + 1;
        let m = (k % Self::SUB) as u64;
        let width = 1u64 << (e - Self::SUB_BITS);
        ((Self::SUB as u64 + m) << (e - Self::SUB_BITS)) + width - 1
    }

    /// Counts `v` (a value above `HIST_MAX_TICKS` counts as that). Never allocates.
    #[inline]
    fn saturating_record(&mut self, v: u64) {
        let v = v.min(HIST_MAX_TICKS);
        let c = &mut self.counts[Self::index(v)];
        *c = c.saturating_add(1);
        self.total += 1;
        self.max = self.max.max(v);
    }

    fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The largest value recorded (exact).
    fn max(&self) -> u64 {
        self.max
    }

    /// The value below which a fraction `q` of the values lie: the highest value of the
    /// bucket that holds the rank, at most the largest value recorded.
    fn value_at_quantile(&self, q: f64) -> u64 {
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return Self::highest(i).min(self.max);
            }
        }
        self.max
    }
}

/// The full record of one cycle.
#[derive(Clone, Debug)]
struct CycleTrace {
    /// Cycle number (0 = the first profiled cycle); `u64::MAX`: no trace kept yet.
    index: u64,
    /// Ticks.
    start: u64,
    /// Ticks.
    end: u64,
    cells: Vec<TaskTime>,
    wakes: Vec<Option<u64>>,
}

impl CycleTrace {
    fn new(cells: usize, threads: usize) -> Self {
        CycleTrace {
            index: u64::MAX,
            start: 0,
            end: 0,
            cells: vec![TaskTime::default(); cells],
            wakes: vec![None; threads],
        }
    }

    fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    fn is_set(&self) -> bool {
        self.index != u64::MAX
    }
}

#[derive(Clone, Debug)]
struct NodeAcc {
    min: u64,
    max: u64,
    sum: u64,
    hist: Histogram,
}

#[derive(Clone, Debug)]
struct WorkerAcc {
    wake: Histogram,
    first: Histogram,
    /// Cycles the worker woke for (workers only).
    woke: u64,
    /// Cycles in which it ran at least one task.
    ran: u64,
    busy: u64,
    steals: u64,
}

/// Collects the profile of a plan run by an executor (see the module documentation).
#[derive(Debug)]
pub struct Profiler {
    threads: usize,
    /// Node of each cell (index into `node_names`).
    cell_node: Vec<u32>,
    /// Predecessor cells of each cell (every part of each predecessor task).
    cell_preds: Vec<Vec<u32>>,
    /// Name of each cell in timelines: its task's (a group of a split sum has its own), with
    /// the part for the parts of a task split by frames.
    cell_labels: Vec<String>,
    node_names: Vec<String>,
    node_kinds: Vec<String>,
    node_acc: Vec<NodeAcc>,
    worker_acc: Vec<WorkerAcc>,
    /// This cycle's record (scratch).
    current: CycleTrace,
    node_scratch: Vec<u64>,
    busy_scratch: Vec<u64>,
    first_scratch: Vec<u64>,
    steals_before: Vec<u64>,
    steals_now: Vec<u64>,
    cycles: u64,
    cycle_hist: Histogram,
    cycle_sum: u64,
    work_sum: u64,
    head_sum: u64,
    tail_sum: u64,
    /// Ticks spent in [`Profiler::record`] itself (measured by [`Profiler::add_own`]).
    own_sum: u64,
    slowest: Vec<CycleTrace>,
    median: CycleTrace,
    median_estimate: u64,
    cpu_start: Duration,
    wall_start: u64,
    /// Ticks to nanoseconds: every time is recorded in [`fugue_exec::trace::now`] ticks.
    calibration: Calibration,
}

/// CPU time used by the process so far (user and system, every thread).
fn process_cpu() -> Duration {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

impl Profiler {
    /// A profiler for `plan` run by `exec` (control thread; allocates). Turns the plan's and
    /// the executor's records on.
    pub fn new(plan: &mut Plan, exec: &mut dyn Executor) -> Profiler {
        plan.set_profiling(true);
        exec.set_profiling(true);
        let threads = exec.threads().max(1);
        let n_cells = plan.n_cells();
        // Nodes: the graph nodes of the plan's tasks, in task order of first appearance.
        let mut node_index = std::collections::HashMap::new();
        let mut node_names = Vec::new();
        let mut node_kinds = Vec::new();
        let task_node: Vec<u32> = (0..plan.len())
            .map(|t| {
                let node = plan.node_of(t);
                *node_index.entry(node).or_insert_with(|| {
                    let main = plan.task_of(node);
                    node_names.push(plan.name(main).to_string());
                    node_kinds.push(plan.kind(main).to_string());
                    (node_names.len() - 1) as u32
                })
            })
            .collect();
        let mut task_cells: Vec<Vec<u32>> = vec![Vec::new(); plan.len()];
        for c in 0..n_cells {
            task_cells[plan.cell_task(c)].push(c as u32);
        }
        let mut task_preds: Vec<Vec<u32>> = vec![Vec::new(); plan.len()];
        for t in 0..plan.len() {
            for &s in plan.successors(t) {
                task_preds[s as usize].push(t as u32);
            }
        }
        let cell_node = (0..n_cells).map(|c| task_node[plan.cell_task(c)]).collect();
        let cell_preds = (0..n_cells)
            .map(|c| {
                task_preds[plan.cell_task(c)]
                    .iter()
                    .flat_map(|&p| task_cells[p as usize].iter().copied())
                    .collect()
            })
            .collect();
        let mut part_seen = vec![0u32; plan.len()];
        let cell_labels = (0..n_cells)
            .map(|c| {
                let t = plan.cell_task(c);
                if task_cells[t].len() > 1 {
                    part_seen[t] += 1;
                    format!("{} (part {})", plan.name(t), part_seen[t])
                } else {
                    plan.name(t).to_string()
                }
            })
            .collect();
        let n_nodes = node_names.len();
        let mut steals_before = vec![0; threads];
        exec.thread_steals(&mut steals_before);
        Profiler {
            threads,
            cell_node,
            cell_preds,
            cell_labels,
            node_names,
            node_kinds,
            node_acc: (0..n_nodes)
                .map(|_| NodeAcc {
                    min: u64::MAX,
                    max: 0,
                    sum: 0,
                    hist: histogram(),
                })
                .collect(),
            worker_acc: (0..threads)
                .map(|_| WorkerAcc {
                    wake: histogram(),
                    first: histogram(),
                    woke: 0,
                    ran: 0,
                    busy: 0,
                    steals: 0,
                })
                .collect(),
            current: CycleTrace::new(n_cells, threads),
            node_scratch: vec![0; n_nodes],
            busy_scratch: vec![0; threads],
            first_scratch: vec![0; threads],
            steals_before,
            steals_now: vec![0; threads],
            cycles: 0,
            cycle_hist: histogram(),
            cycle_sum: 0,
            work_sum: 0,
            head_sum: 0,
            tail_sum: 0,
            own_sum: 0,
            slowest: (0..SLOWEST_KEPT)
                .map(|_| CycleTrace::new(n_cells, threads))
                .collect(),
            median: CycleTrace::new(n_cells, threads),
            median_estimate: 0,
            cpu_start: process_cpu(),
            wall_start: fugue_exec::trace::now_ns(),
            calibration: Calibration::start(),
        }
    }

    /// Folds in the cycle that ran from `start` to `end` ([`fugue_exec::trace::now`] ticks,
    /// taken around [`Executor::run_cycle`]). Between cycles, on the thread that runs them;
    /// never allocates, locks or blocks.
    pub fn record(&mut self, plan: &mut Plan, exec: &dyn Executor, start: u64, end: u64) {
        let (start_ns, end_ns) = (start, end);
        let cur = &mut self.current;
        cur.start = start;
        cur.end = end;
        cur.index = self.cycles;
        let cells = &mut cur.cells;
        plan.task_times(|c, t| {
            if let Some(slot) = cells.get_mut(c) {
                *slot = t;
            }
        });
        exec.worker_wakes(&mut cur.wakes);
        // A worker that noticed the cycle only after its end did not take part in it.
        for wake in cur.wakes.iter_mut() {
            if wake.is_some_and(|at| at > end) {
                *wake = None;
            }
        }
        exec.thread_steals(&mut self.steals_now);
        let duration = end_ns.saturating_sub(start_ns);

        self.node_scratch.fill(0);
        self.busy_scratch.fill(0);
        self.first_scratch.fill(u64::MAX);
        let mut first = u64::MAX;
        let mut last = 0u64;
        let mut work = 0u64;
        for (c, t) in cur.cells.iter().enumerate() {
            let d = t.duration();
            work += d;
            self.node_scratch[self.cell_node[c] as usize] += d;
            let w = (t.worker as usize).min(self.threads - 1);
            self.busy_scratch[w] += d;
            self.first_scratch[w] = self.first_scratch[w].min(t.start);
            first = first.min(t.start);
            last = last.max(t.end);
        }
        for (acc, &d) in self.node_acc.iter_mut().zip(&self.node_scratch) {
            acc.min = acc.min.min(d);
            acc.max = acc.max.max(d);
            acc.sum += d;
            acc.hist.saturating_record(d.max(1));
        }
        for (w, acc) in self.worker_acc.iter_mut().enumerate() {
            acc.busy += self.busy_scratch[w];
            acc.steals += self.steals_now[w].wrapping_sub(self.steals_before[w]);
            if self.first_scratch[w] != u64::MAX {
                acc.ran += 1;
                acc.first
                    .saturating_record(self.first_scratch[w].saturating_sub(start_ns).max(1));
            }
            if let Some(at) = cur.wakes.get(w).copied().flatten() {
                acc.woke += 1;
                acc.wake
                    .saturating_record(at.saturating_sub(start_ns).max(1));
            }
        }
        std::mem::swap(&mut self.steals_before, &mut self.steals_now);
        self.cycles += 1;
        self.cycle_hist.saturating_record(duration.max(1));
        self.cycle_sum += duration;
        self.work_sum += work;
        if first != u64::MAX {
            self.head_sum += first.saturating_sub(start_ns);
            self.tail_sum += end_ns.saturating_sub(last);
        }

        // The slowest traces: replace the fastest of those kept (or an empty slot).
        let (k, kept) = self
            .slowest
            .iter()
            .enumerate()
            .map(|(k, t)| (k, if t.is_set() { t.duration() } else { 0 }))
            .min_by_key(|&(_, d)| d)
            .unwrap_or((0, u64::MAX));
        if duration > kept || !self.slowest[k].is_set() {
            copy_trace(&mut self.slowest[k], &self.current);
        }
        // The median trace: the cycle closest to the running median.
        if self.cycles % MEDIAN_EVERY == 1 {
            self.median_estimate = self.cycle_hist.value_at_quantile(0.5);
        }
        let m = self.median_estimate;
        if !self.median.is_set() || duration.abs_diff(m) < self.median.duration().abs_diff(m) {
            copy_trace(&mut self.median, &self.current);
        }
    }

    /// Adds the time [`Profiler::record`] took for the last cycle, in ticks (the caller
    /// reads the clock after it): the profile's own cost on the audio thread, reported.
    #[inline]
    pub fn add_own(&mut self, ticks: u64) {
        self.own_sum += ticks;
    }

    /// Cycles recorded so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The report of everything recorded (control thread; allocates).
    pub fn report(&self) -> ProfileReport {
        let n = self.cycles.max(1);
        let k = self.calibration.ns_per_tick();
        let ns = |ticks: u64| (ticks as f64 * k).round() as u64;
        let q = |h: &Histogram, p: f64| {
            if h.is_empty() {
                0
            } else {
                ns(h.value_at_quantile(p))
            }
        };
        let hmax = |h: &Histogram| if h.is_empty() { 0 } else { ns(h.max()) };
        let mut nodes: Vec<NodeRow> = self
            .node_acc
            .iter()
            .enumerate()
            .map(|(i, a)| NodeRow {
                name: self.node_names[i].clone(),
                kind: self.node_kinds[i].clone(),
                calls: self.cycles,
                min_ns: if self.cycles == 0 { 0 } else { ns(a.min) },
                mean_ns: a.sum as f64 * k / n as f64,
                p99_ns: q(&a.hist, 0.99),
                max_ns: ns(a.max),
            })
            .collect();
        nodes.sort_by(|a, b| {
            b.max_ns
                .cmp(&a.max_ns)
                .then(b.p99_ns.cmp(&a.p99_ns))
                .then(a.name.cmp(&b.name))
        });
        let cycle_mean = self.cycle_sum as f64 * k / n as f64;
        let workers = self
            .worker_acc
            .iter()
            .enumerate()
            .map(|(w, a)| {
                let busy = a.busy as f64 * k / n as f64;
                WorkerRow {
                    worker: w,
                    woke: a.woke,
                    ran: a.ran,
                    wake_median_ns: q(&a.wake, 0.5),
                    wake_p99_ns: q(&a.wake, 0.99),
                    wake_max_ns: hmax(&a.wake),
                    first_median_ns: q(&a.first, 0.5),
                    first_p99_ns: q(&a.first, 0.99),
                    busy_mean_ns: busy,
                    idle_mean_ns: (cycle_mean - busy).max(0.0),
                    steals: a.steals,
                }
            })
            .collect();
        let mut slowest: Vec<&CycleTrace> = self.slowest.iter().filter(|t| t.is_set()).collect();
        slowest.sort_by(|a, b| b.duration().cmp(&a.duration()).then(a.index.cmp(&b.index)));
        let wall = fugue_exec::trace::now_ns().saturating_sub(self.wall_start);
        let cpu = process_cpu().saturating_sub(self.cpu_start);
        ProfileReport {
            threads: self.threads,
            cycles: self.cycles,
            cycle_mean_ns: cycle_mean,
            cycle_median_ns: q(&self.cycle_hist, 0.5),
            cycle_p99_ns: q(&self.cycle_hist, 0.99),
            cycle_max_ns: hmax(&self.cycle_hist),
            work_mean_ns: self.work_sum as f64 * k / n as f64,
            head_mean_ns: self.head_sum as f64 * k / n as f64,
            tail_mean_ns: self.tail_sum as f64 * k / n as f64,
            own_mean_ns: self.own_sum as f64 * k / n as f64,
            cpu_cores: if wall > 0 {
                cpu.as_nanos() as f64 / wall as f64
            } else {
                0.0
            },
            nodes,
            workers,
            median: self.median.is_set().then(|| self.timeline(&self.median, k)),
            slowest: slowest.into_iter().map(|t| self.timeline(t, k)).collect(),
        }
    }

    /// A cycle's timeline and the chain that made it end when it did; `k` ns per tick.
    fn timeline(&self, t: &CycleTrace, k: f64) -> Timeline {
        // Every time relative to the cycle's start, in ns; differences are taken after
        // converting, so that the chain's runs and waits add up exactly.
        let rel = |x: u64| (x.saturating_sub(t.start) as f64 * k).round() as u64;
        let mut bars: Vec<Bar> = t
            .cells
            .iter()
            .enumerate()
            .map(|(c, tt)| Bar {
                node: self.cell_labels[c].clone(),
                worker: tt.worker as usize,
                start_ns: rel(tt.start),
                end_ns: rel(tt.end),
            })
            .collect();
        // The chain, backwards from the cell that ended last: each step goes to the
        // predecessor that ended last; the gap between it and the cell's start is a wait.
        let mut chain = Vec::new();
        let mut cur = t
            .cells
            .iter()
            .enumerate()
            .max_by_key(|(_, tt)| tt.end)
            .map(|(c, _)| c);
        let mut guard = t.cells.len() + 1;
        while let Some(c) = cur {
            guard -= 1;
            if guard == 0 {
                break;
            }
            let tt = t.cells[c];
            let pred = self.cell_preds[c]
                .iter()
                .map(|&p| p as usize)
                .max_by_key(|&p| t.cells[p].end);
            let ready = pred.map_or(0, |p| rel(t.cells[p].end));
            let worker = tt.worker as usize;
            let wake = t.wakes.get(worker).copied().flatten().map(rel);
            let (start, end) = (rel(tt.start), rel(tt.end));
            chain.push(ChainStep {
                node: self.cell_labels[c].clone(),
                worker,
                start_ns: start,
                run_ns: end.saturating_sub(start),
                wait_ns: start.saturating_sub(ready),
                worker_woke_ns: wake,
            });
            cur = pred;
        }
        chain.reverse();
        bars.sort_by_key(|b| (b.worker, b.start_ns));
        let last_end = bars.iter().map(|b| b.end_ns).max().unwrap_or(0);
        let duration = rel(t.end);
        Timeline {
            index: t.index,
            duration_ns: duration,
            tail_ns: duration.saturating_sub(last_end),
            bars,
            wakes: t.wakes.iter().map(|w| w.map(rel)).collect(),
            chain,
        }
    }
}

fn copy_trace(dst: &mut CycleTrace, src: &CycleTrace) {
    dst.index = src.index;
    dst.start = src.start;
    dst.end = src.end;
    dst.cells.copy_from_slice(&src.cells);
    dst.wakes.copy_from_slice(&src.wakes);
}

/// One node's times per cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRow {
    /// The node's name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Cycles it ran in.
    pub calls: u64,
    /// Shortest time in a cycle, ns.
    pub min_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// 99th percentile, ns (2 significant digits).
    pub p99_ns: u64,
    /// Longest, ns.
    pub max_ns: u64,
}

/// One thread's figures (thread 0 is the one that runs the cycles).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    /// Thread index.
    pub worker: usize,
    /// Cycles in which the worker woke for the cycle before its end (0 for thread 0).
    pub woke: u64,
    /// Cycles in which it ran at least one task.
    pub ran: u64,
    /// Wake-up latency (cycle start to the worker seeing the cycle), median, ns.
    pub wake_median_ns: u64,
    /// Wake-up latency, 99th percentile, ns.
    pub wake_p99_ns: u64,
    /// Wake-up latency, maximum, ns.
    pub wake_max_ns: u64,
    /// Cycle start to its first task, median, ns (cycles in which it ran one).
    pub first_median_ns: u64,
    /// Cycle start to its first task, 99th percentile, ns.
    pub first_p99_ns: u64,
    /// Mean time running tasks per cycle, ns.
    pub busy_mean_ns: f64,
    /// Mean cycle time minus mean busy time, ns.
    pub idle_mean_ns: f64,
    /// Tasks taken from another thread's queue.
    pub steals: u64,
}

/// One task run in a cycle's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The task: its node's name, or a group's (`mix100[1-8]`), or a part's.
    pub node: String,
    /// The thread.
    pub worker: usize,
    /// Start, ns after the cycle's start.
    pub start_ns: u64,
    /// End, ns after the cycle's start.
    pub end_ns: u64,
}

/// One step of the chain that ends a cycle: a wait, then a task.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainStep {
    /// The task, named as in [`Bar::node`].
    pub node: String,
    /// The thread that ran it.
    pub worker: usize,
    /// Start, ns after the cycle's start.
    pub start_ns: u64,
    /// How long it ran, ns.
    pub run_ns: u64,
    /// How long it waited after its last predecessor ended (after the cycle's start for a
    /// source), ns.
    pub wait_ns: u64,
    /// When its thread woke for the cycle, ns after the start (workers only).
    pub worker_woke_ns: Option<u64>,
}

impl ChainStep {
    /// Why the step waited, in words: the wake-up of its thread, or the thread being busy
    /// elsewhere (or the executor's own hand-over).
    pub fn wait_cause(&self) -> &'static str {
        let ready = self.start_ns.saturating_sub(self.wait_ns);
        match self.worker_woke_ns {
            Some(w) if w > ready => "wake-up of its thread",
            _ if ready == 0 && self.worker == 0 => "start of the cycle on the calling thread",
            _ => "hand-over (its thread was busy elsewhere or looking for work)",
        }
    }
}

/// One cycle's timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Cycle number, from 0.
    pub index: u64,
    /// Its time, ns.
    pub duration_ns: u64,
    /// From the end of the last task to the end of the cycle, ns.
    pub tail_ns: u64,
    /// Every task run, by thread then start.
    pub bars: Vec<Bar>,
    /// When each thread woke, ns after the start (`None`: thread 0, or not woken).
    pub wakes: Vec<Option<u64>>,
    /// The chain of tasks and waits that ends last, first step first.
    pub chain: Vec<ChainStep>,
}

impl Timeline {
    /// The chain's waits, the largest first.
    pub fn worst_waits(&self, k: usize) -> Vec<&ChainStep> {
        let mut v: Vec<&ChainStep> = self.chain.iter().filter(|s| s.wait_ns > 0).collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.wait_ns));
        v.truncate(k);
        v
    }

    /// The chain's tasks, the longest first.
    pub fn worst_tasks(&self, k: usize) -> Vec<&ChainStep> {
        let mut v: Vec<&ChainStep> = self.chain.iter().collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.run_ns));
        v.truncate(k);
        v
    }
}

/// What [`Profiler::report`] gives.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileReport {
    /// Threads, the one that runs the cycles included.
    pub threads: usize,
    /// Cycles recorded.
    pub cycles: u64,
    /// Mean cycle time, ns (from the call of the executor to its return).
    pub cycle_mean_ns: f64,
    /// Median cycle time, ns.
    pub cycle_median_ns: u64,
    /// 99th percentile cycle time, ns.
    pub cycle_p99_ns: u64,
    /// Longest cycle, ns.
    pub cycle_max_ns: u64,
    /// Mean total of the tasks' times per cycle (the nodes' table's total), ns.
    pub work_mean_ns: f64,
    /// Mean time from the cycle's start to its first task, ns.
    pub head_mean_ns: f64,
    /// Mean time from the end of its last task to the cycle's end, ns.
    pub tail_mean_ns: f64,
    /// Mean time the profile spent folding each cycle's records on the audio thread, ns
    /// (after the cycle; the two clock readings around each task are inside the nodes' times).
    pub own_mean_ns: f64,
    /// CPU time the whole process used per wall-clock second while profiling (cores).
    pub cpu_cores: f64,
    /// Nodes, the worst (longest maximum) first.
    pub nodes: Vec<NodeRow>,
    /// Threads.
    pub workers: Vec<WorkerRow>,
    /// A cycle whose time is close to the median.
    pub median: Option<Timeline>,
    /// The slowest cycles, the slowest first.
    pub slowest: Vec<Timeline>,
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

impl ProfileReport {
    /// The thread time per cycle not spent in tasks: `threads × mean cycle − work`, ns.
    pub fn overhead_mean_ns(&self) -> f64 {
        (self.threads as f64 * self.cycle_mean_ns - self.work_mean_ns).max(0.0)
    }

    /// The 99th percentile wake-up latency over every worker (thread 1 and above), ns:
    /// the largest of the workers' (0 with no worker).
    pub fn worker_wake_p99_ns(&self) -> u64 {
        self.workers
            .iter()
            .skip(1)
            .map(|w| w.wake_p99_ns)
            .max()
            .unwrap_or(0)
    }

    /// The report as text: summary, nodes table, threads table, slowest cycles.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{} cycles on {} thread(s): cycle mean {} µs, median {} µs, p99 {} µs, max {} µs; process CPU {:.2} cores",
            self.cycles,
            self.threads,
            us(self.cycle_mean_ns),
            us(self.cycle_median_ns as f64),
            us(self.cycle_p99_ns as f64),
            us(self.cycle_max_ns as f64),
            self.cpu_cores
        );
        let span = self.threads as f64 * self.cycle_mean_ns;
        let pct = |x: f64| if span > 0.0 { 100.0 * x / span } else { 0.0 };
        let _ = writeln!(
            o,
            "per cycle: nodes {} µs ({:.1} % of {} thread(s) x the cycle), overhead and waits {} µs ({:.1} %): {} µs before the first task, {} µs after the last",
            us(self.work_mean_ns),
            pct(self.work_mean_ns),
            self.threads,
            us(self.overhead_mean_ns()),
            pct(self.overhead_mean_ns()),
            us(self.head_mean_ns),
            us(self.tail_mean_ns)
        );
        let _ = writeln!(
            o,
            "the profile itself: {} µs per cycle on the audio thread after each cycle, folding the records",
            us(self.own_mean_ns)
        );
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{:<24} {:<10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7}",
            "node", "kind", "calls", "min µs", "mean µs", "p99 µs", "max µs", "work %"
        );
        for r in &self.nodes {
            let _ = writeln!(
                o,
                "{:<24} {:<10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7.1}",
                r.name,
                r.kind,
                r.calls,
                us(r.min_ns as f64),
                us(r.mean_ns),
                us(r.p99_ns as f64),
                us(r.max_ns as f64),
                if self.work_mean_ns > 0.0 {
                    100.0 * r.mean_ns / self.work_mean_ns
                } else {
                    0.0
                }
            );
        }
        let _ = writeln!(
            o,
            "{:<24} {:<10} {:>8} {:>9} {:>9}",
            "total (nodes)",
            "",
            "",
            "",
            us(self.work_mean_ns)
        );
        let _ = writeln!(
            o,
            "{:<24} {:<10} {:>8} {:>9} {:>9}",
            "overhead and waits",
            "",
            "",
            "",
            us(self.overhead_mean_ns())
        );
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{:<7} {:>7} {:>7} {:>10} {:>10} {:>10} {:>11} {:>11} {:>9} {:>9} {:>8}",
            "thread",
            "woke",
            "ran",
            "wake med",
            "wake p99",
            "wake max",
            "1st task md",
            "1st tsk p99",
            "busy µs",
            "idle µs",
            "steals"
        );
        for w in &self.workers {
            let wake = |x: u64| {
                if w.worker == 0 {
                    "-".to_string()
                } else {
                    us(x as f64)
                }
            };
            let _ = writeln!(
                o,
                "{:<7} {:>7} {:>7} {:>10} {:>10} {:>10} {:>11} {:>11} {:>9} {:>9} {:>8}",
                w.worker,
                if w.worker == 0 {
                    "-".to_string()
                } else {
                    w.woke.to_string()
                },
                w.ran,
                wake(w.wake_median_ns),
                wake(w.wake_p99_ns),
                wake(w.wake_max_ns),
                us(w.first_median_ns as f64),
                us(w.first_p99_ns as f64),
                us(w.busy_mean_ns),
                us(w.idle_mean_ns),
                w.steals
            );
        }
        let _ = writeln!(
            o,
            "wake: cycle start to the worker seeing the cycle (µs); 1st task: cycle start to the thread's first task (µs)"
        );
        if !self.slowest.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "slowest cycles (the chain of tasks and waits that ended last):"
            );
            for t in &self.slowest {
                let _ = writeln!(o, "{}", t.breakdown());
            }
        }
        o
    }

    /// The nodes table as CSV (times in ns).
    pub fn nodes_csv(&self) -> String {
        let mut o = String::from("node,kind,calls,min_ns,mean_ns,p99_ns,max_ns\n");
        for r in &self.nodes {
            let _ = writeln!(
                o,
                "{},{},{},{},{:.0},{},{}",
                csv_field(&r.name),
                csv_field(&r.kind),
                r.calls,
                r.min_ns,
                r.mean_ns,
                r.p99_ns,
                r.max_ns
            );
        }
        o
    }

    /// A per-thread timeline of `t` as SVG: one row per thread, a bar per task (the chain
    /// that ended the cycle in red), the thread's wake-up marked.
    pub fn gantt_svg(&self, t: &Timeline, title: &str) -> String {
        const LEFT: f64 = 80.0;
        const TOP: f64 = 50.0;
        const ROW: f64 = 36.0;
        const BAR: f64 = 24.0;
        const W: f64 = 1000.0;
        let rows = self.threads.max(1);
        let span = t.duration_ns.max(1) as f64;
        let x = |ns: u64| LEFT + ns as f64 / span * W;
        let height = TOP + rows as f64 * ROW + 70.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="11">"#,
            LEFT + W + 30.0
        );
        let _ = writeln!(
            s,
            r#"<rect width="100%" height="100%" fill="white"/><text x="{LEFT}" y="20" font-size="13">{}</text>"#,
            esc(title)
        );
        let on_chain: std::collections::HashSet<(&str, usize, u64)> = t
            .chain
            .iter()
            .map(|c| (c.node.as_str(), c.worker, c.start_ns))
            .collect();
        for r in 0..rows {
            let y = TOP + r as f64 * ROW;
            let _ = writeln!(
                s,
                r##"<text x="8" y="{}">thread {r}</text><line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#ddd"/>"##,
                y + BAR * 0.7,
                LEFT + W,
                y + BAR + 4.0,
                y + BAR + 4.0
            );
            if let Some(Some(w)) = t.wakes.get(r) {
                let _ = writeln!(
                    s,
                    r##"<rect x="{LEFT}" y="{}" width="{:.2}" height="{}" fill="#f3e3a0"><title>waking: {} µs</title></rect>"##,
                    y + BAR / 2.0 - 3.0,
                    (x(*w) - LEFT).max(0.5),
                    6.0,
                    us(*w as f64)
                );
            }
        }
        for b in &t.bars {
            let y = TOP + b.worker.min(rows - 1) as f64 * ROW;
            let crit = on_chain.contains(&(b.node.as_str(), b.worker, b.start_ns));
            let w = (x(b.end_ns) - x(b.start_ns)).max(0.5);
            let _ = writeln!(
                s,
                r##"<rect x="{:.2}" y="{y}" width="{w:.2}" height="{BAR}" fill="{}" stroke="white" stroke-width="0.5"><title>{}: {} to {} µs</title></rect>"##,
                x(b.start_ns),
                if crit { "#e0584f" } else { "#6f9fd8" },
                esc(&b.node),
                us(b.start_ns as f64),
                us(b.end_ns as f64)
            );
            if w > b.node.len() as f64 * 6.2 + 4.0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{}" fill="white">{}</text>"#,
                    x(b.start_ns) + 2.0,
                    y + BAR * 0.7,
                    esc(&b.node)
                );
            }
        }
        let axis_y = TOP + rows as f64 * ROW + 10.0;
        let step = tick_step(span / 1000.0);
        let mut tick = 0.0;
        while tick <= span / 1000.0 + 1e-9 {
            let xx = LEFT + tick * 1000.0 / span * W;
            let _ = writeln!(
                s,
                r#"<line x1="{xx:.2}" x2="{xx:.2}" y1="{axis_y}" y2="{}" stroke="black"/><text x="{xx:.2}" y="{}" text-anchor="middle">{}</text>"#,
                axis_y + 5.0,
                axis_y + 18.0,
                fmt_num(tick)
            );
            tick += step;
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle">µs after the cycle's start (red: the chain that ended the cycle; yellow: the thread waking)</text></svg>"##,
            LEFT + W / 2.0,
            axis_y + 36.0
        );
        s
    }
}

impl Timeline {
    /// The cycle's breakdown in a few lines: its time, the chain's longest tasks and
    /// largest waits, and what came after the last task.
    pub fn breakdown(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "  cycle {}: {} µs, chain of {} task(s)",
            self.index,
            us(self.duration_ns as f64),
            self.chain.len()
        );
        let run: u64 = self.chain.iter().map(|c| c.run_ns).sum();
        let wait: u64 = self.chain.iter().map(|c| c.wait_ns).sum();
        let _ = writeln!(
            o,
            ": {} µs running, {} µs waiting, {} µs after the last task",
            us(run as f64),
            us(wait as f64),
            us(self.tail_ns as f64)
        );
        for c in self.worst_tasks(3) {
            let _ = writeln!(
                o,
                "    node {} on thread {}: {} µs (from {} µs)",
                c.node,
                c.worker,
                us(c.run_ns as f64),
                us(c.start_ns as f64)
            );
        }
        for c in self.worst_waits(3) {
            let _ = writeln!(
                o,
                "    wait of {} µs before {} on thread {}: {}{}",
                us(c.wait_ns as f64),
                c.node,
                c.worker,
                c.wait_cause(),
                c.worker_woke_ns
                    .map(|w| format!(" (thread woke at {} µs)", us(w as f64)))
                    .unwrap_or_default()
            );
        }
        o.pop();
        o
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::Histogram;

    #[test]
    fn buckets_tile_the_range_in_order() {
        let mut prev = None;
        for i in 0..Histogram::BUCKETS {
            let hi = Histogram::highest(i);
            assert_eq!(Histogram::index(hi), i, "bucket {i}");
            if let Some(p) = prev {
                assert_eq!(Histogram::index(p + 1), i, "bucket {i} starts after {p}");
            }
            prev = Some(hi);
        }
        assert!(Histogram::highest(Histogram::BUCKETS - 1) >= super::HIST_MAX_TICKS);
    }

    #[test]
    fn quantiles_are_within_the_bucket_precision() {
        // A spread of values from 1 to about 10^9, deterministic.
        let mut rng = fugue_dsp::fast::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut values: Vec<u64> = (0..20_000)
            .map(|_| {
                let x = rng.next_u64();
                1 + (x % 1000) * (1 + (x >> 40) % 1_000_000)
            })
            .collect();
        let mut h = Histogram::new();
        for &v in &values {
            h.saturating_record(v);
        }
        values.sort_unstable();
        assert_eq!(h.max(), *values.last().unwrap());
        for q in [0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let exact = values[((q * values.len() as f64).ceil() as usize).max(1) - 1] as f64;
            let got = h.value_at_quantile(q) as f64;
            assert!(
                got >= exact && got <= exact * (1.0 + 1.0 / 32.0) + 1.0,
                "q {q}: {got} for {exact}"
            );
        }
        let mut small = Histogram::new();
        assert!(small.is_empty());
        for v in [3, 3, 5, 60] {
            small.saturating_record(v);
        }
        assert_eq!(small.value_at_quantile(0.5), 3);
        assert_eq!(small.value_at_quantile(0.75), 5);
        assert_eq!(small.value_at_quantile(0.99), 60);
        small.saturating_record(u64::MAX);
        assert_eq!(small.max(), super::HIST_MAX_TICKS);
    }
}
