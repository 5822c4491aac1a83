//! The recorder: a [`Profiler`] made on the control thread, fed after each cycle on the
//! audio thread without allocating, and turned into a [`ProfileReport`].

use std::time::Duration;

use fugue_exec::trace::{Calibration, TaskTime};
use fugue_exec::{Executor, Plan};

use super::critical::{critical_path, sort_by_work};
use super::histogram::histogram;
use super::report::{Bar, ChainStep, NodeRow, PathStep, ProfileReport, Timeline, WorkerRow};
use super::SLOWEST_KEPT;
use crate::histogram::Histogram;

/// How many cycles between two updates of the running median that picks the median trace.
const MEDIAN_EVERY: u64 = 64;

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
    /// Each cell's total time over the cycles, ticks (for the critical path of mean times).
    cell_sum: Vec<u64>,
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
    /// About the memory a profiler of `plan` run by `threads` threads holds, and the graph
    /// nodes it profiles: a histogram per node (about 10 KB each) and two per thread, each
    /// task's and cell's records and names, each dependency's. Known before anything is
    /// allocated.
    pub fn bytes_for(plan: &Plan, threads: usize) -> (usize, usize) {
        let hist = histogram().bytes();
        // A node's tasks (a split sum's groups) share its histogram.
        let nodes = (0..plan.len())
            .filter(|&t| plan.task_of(plan.node_of(t)) == t)
            .count();
        let names: usize = (0..plan.len()).map(|t| plan.name(t).len()).sum();
        let edges: usize = (0..plan.len()).map(|t| plan.successors(t).len()).sum();
        let bytes = nodes.saturating_mul(hist + 128)
            + plan.len().saturating_mul(128)
            + plan.n_cells().saturating_mul(256)
            + names.saturating_mul(3)
            + edges.saturating_mul(8)
            + (2 * threads + 1) * hist;
        (bytes, nodes)
    }

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
            cell_sum: vec![0; n_cells],
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
        let cur = &mut self.current;
        let cells = &mut cur.cells;
        plan.task_times(|c, t| {
            if let Some(slot) = cells.get_mut(c) {
                *slot = t;
            }
        });
        // The cycle ends no earlier than its last task: the tasks' ends are read on other
        // cores, whose counters may run a few ticks ahead of this one's.
        let end = cur.cells.iter().map(|t| t.end).fold(end, u64::max);
        let (start_ns, end_ns) = (start, end);
        cur.start = start;
        cur.end = end;
        cur.index = self.cycles;
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
            self.cell_sum[c] += d;
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
            acc.hist.record(d.max(1));
        }
        for (w, acc) in self.worker_acc.iter_mut().enumerate() {
            acc.busy += self.busy_scratch[w];
            acc.steals += self.steals_now[w].wrapping_sub(self.steals_before[w]);
            if self.first_scratch[w] != u64::MAX {
                acc.ran += 1;
                acc.first
                    .record(self.first_scratch[w].saturating_sub(start_ns).max(1));
            }
            if let Some(at) = cur.wakes.get(w).copied().flatten() {
                acc.woke += 1;
                acc.wake.record(at.saturating_sub(start_ns).max(1));
            }
        }
        std::mem::swap(&mut self.steals_before, &mut self.steals_now);
        self.cycles += 1;
        self.cycle_hist.record(duration.max(1));
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
                seq_mean_ns: None,
            })
            .collect();
        sort_by_work(&mut nodes);
        let cell_means: Vec<f64> = self
            .cell_sum
            .iter()
            .map(|&t| t as f64 * k / n as f64)
            .collect();
        let critical_path = critical_path(&cell_means, &self.cell_preds)
            .into_iter()
            .map(|c| PathStep {
                task: self.cell_labels[c].clone(),
                mean_ns: cell_means[c],
            })
            .collect();
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
            critical_path,
            workers,
            median: self.median.is_set().then(|| self.timeline(&self.median, k)),
            slowest: slowest.into_iter().map(|t| self.timeline(t, k)).collect(),
            seq_work_mean_ns: None,
            pacing: None,
            readings: Vec::new(),
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
        // In time order, each step starts no earlier than the one before it ended (the task
        // it waited for, read on another core, whose counter may run a few ticks ahead of
        // this one's), so that the runs and waits add up to the last task's end exactly.
        let mut before = 0;
        for step in chain.iter_mut() {
            let end = step.start_ns + step.run_ns;
            step.start_ns = step.start_ns.max(before);
            step.run_ns = end.max(step.start_ns) - step.start_ns;
            step.wait_ns = step.start_ns - before.min(step.start_ns);
            before = step.start_ns + step.run_ns;
        }
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
