//! The profile's figures ([`ProfileReport`] and its rows) and their text and CSV forms.

use std::fmt::Write as _;

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

pub(super) fn us(ns: f64) -> String {
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
