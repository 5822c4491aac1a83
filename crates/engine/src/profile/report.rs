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
    /// Its mean in the sequential reference run, ns, when one was made
    /// ([`ProfileReport::with_seq_reference`]).
    pub seq_mean_ns: Option<f64>,
}

/// One task of the critical path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathStep {
    /// The task, named as in [`Bar::node`].
    pub task: String,
    /// Its mean time per cycle, ns.
    pub mean_ns: f64,
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

/// What [`crate::profile::Profiler::report`] gives.
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
    /// Nodes, the largest share of the work (mean time per cycle) first.
    pub nodes: Vec<NodeRow>,
    /// The critical path of the tasks' mean times, first task first: the chain of tasks
    /// whose total no number of threads can make a cycle shorter than.
    pub critical_path: Vec<PathStep>,
    /// Threads.
    pub workers: Vec<WorkerRow>,
    /// A cycle whose time is close to the median.
    pub median: Option<Timeline>,
    /// The slowest cycles, the slowest first.
    pub slowest: Vec<Timeline>,
    /// The nodes' total per cycle in a sequential run of the same graph on one thread, ns,
    /// when one was made ([`ProfileReport::with_seq_reference`]).
    pub seq_work_mean_ns: Option<f64>,
    /// What the nodes report beside their audio after the last cycle (an LV2 plugin's
    /// control outputs): `(node, [(name, value)])`, in task order.
    pub readings: Vec<(String, Vec<(String, f32)>)>,
    /// How a run paced at the period kept pace, when the profile is of one
    /// ([`ProfileReport::with_pacing`]).
    pub pacing: Option<Pacing>,
}

/// How a run paced at the buffer period (clocked) kept pace: the cycles it was asked to run,
/// the cycles that started more than a period late (the clock then skips the periods they
/// missed, so fewer cycles run in the time), and the cycles longer than their deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacing {
    /// Cycles the run's length holds at the period.
    pub asked: u64,
    /// Cycles that started more than one period late and were rescheduled.
    pub late: u64,
    /// Cycles longer than their deadline.
    pub misses: u64,
}

/// The most steps of a chain that [`Timeline::breakdown`] lists.
pub const CHAIN_SHOWN: usize = 12;

pub(super) fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

impl ProfileReport {
    /// Adds how the paced run that was profiled kept pace ([`Pacing`]).
    pub fn with_pacing(&mut self, pacing: Pacing) {
        self.pacing = Some(pacing);
    }

    /// A sentence on the cycles a paced run did not run or finished late, when there were
    /// any: `None` when it kept pace.
    pub fn pacing_note(&self) -> Option<String> {
        let p = self.pacing?;
        if p.late == 0 && p.misses == 0 && self.cycles >= p.asked {
            return None;
        }
        Some(format!(
            "paced at the period, the run did not keep pace: {} of the {} cycles asked ran ({} started more than a period late, and the clock skipped the periods they missed), {} missed its deadline; the machine was busy or the graph too heavy for the period",
            self.cycles, p.asked, p.late, p.misses
        ))
    }

    /// Adds the figures of `seq`, a profile of the same graph run by seq on one thread (the
    /// reference that [`crate::report::profile::record`] makes):
    /// the nodes' total per cycle, and each node's mean (matched by name), so that the
    /// report states node-time inflation ([`ProfileReport::inflation`]).
    pub fn with_seq_reference(&mut self, seq: &ProfileReport) {
        self.seq_work_mean_ns = Some(seq.work_mean_ns);
        // By name through a map: a search of the reference's list for every node would be
        // quadratic in the graph's size.
        let means: std::collections::HashMap<&str, f64> = seq
            .nodes
            .iter()
            .map(|s| (s.name.as_str(), s.mean_ns))
            .collect();
        for r in &mut self.nodes {
            r.seq_mean_ns = means.get(r.name.as_str()).copied();
        }
    }

    /// Node-time inflation: the nodes' total time per cycle over their total in the
    /// sequential reference run (1: the nodes run as fast as on one thread alone; above:
    /// they slow each other down, through caches, memory or the machine), when one was made.
    pub fn inflation(&self) -> Option<f64> {
        self.seq_work_mean_ns
            .filter(|&s| s > 0.0)
            .map(|s| self.work_mean_ns / s)
    }

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

    /// The critical path's length: the sum of its tasks' mean times, ns.
    pub fn critical_path_ns(&self) -> f64 {
        self.critical_path.iter().map(|s| s.mean_ns).sum()
    }

    /// What the profile says a user can do, in two sentences: how much of the work the
    /// critical path is and so the most that threads can gain, then what limits the cycles
    /// measured (the graph's shape, the number of threads, or overhead and waits).
    pub fn conclusion(&self) -> String {
        let (work, cp, cycle) = (
            self.work_mean_ns,
            self.critical_path_ns(),
            self.cycle_mean_ns,
        );
        if work <= 0.0 || cp <= 0.0 {
            return "conclusion: no task time was recorded, so nothing bounds the cycle but the executor itself.".into();
        }
        let bound = work / cp;
        let mut o = format!(
            "conclusion: the critical path ({} task{}, {} µs) is {:.0} % of the work ({} µs per cycle): at most {:.1}x on any number of threads.",
            self.critical_path.len(),
            if self.critical_path.len() == 1 { "" } else { "s" },
            us(cp),
            100.0 * cp / work,
            us(work),
            bound
        );
        let longest = {
            let mut steps: Vec<&PathStep> = self.critical_path.iter().collect();
            steps.sort_by(|a, b| b.mean_ns.total_cmp(&a.mean_ns));
            let v: Vec<String> = steps
                .iter()
                .take(2)
                .map(|s| format!("{} ({} µs)", s.task, us(s.mean_ns)))
                .collect();
            v.join(", ")
        };
        let t = self.threads.max(1) as f64;
        // The shortest cycle this many threads allow: the path, or the work shared out.
        let floor = cp.max(work / t);
        let limit = if bound < 1.1 {
            format!(" The graph is a chain: more threads cannot help; run it on one thread, or shorten the path's longest tasks: {longest}.")
        } else if self.threads == 1 {
            format!(" On 1 thread the cycle ({} µs) is the whole work plus overhead: more threads can make it up to {bound:.1}x shorter.", us(cycle))
        } else if cycle <= 1.15 * floor && work / t > cp {
            format!(
                " The cycles ({} µs) are close to the work shared among the {} threads ({} µs): the number of threads limits them; more threads can go up to {bound:.1}x.",
                us(cycle),
                self.threads,
                us(work / t)
            )
        } else if cycle <= 1.15 * floor {
            format!(
                " The cycles ({} µs) are close to the critical path: the graph's shape limits them, not the threads; to go faster, shorten the path's longest tasks: {longest}.",
                us(cycle)
            )
        } else {
            format!(
                " The cycles ({} µs) take {:.1}x the shortest that {} threads allow ({} µs): overhead and waits limit them ({} µs of thread time per cycle; {} µs before the first task, {} µs after the last), not the graph; fewer threads or another executor may do better (see the slowest cycles' chains above).",
                us(cycle),
                cycle / floor,
                self.threads,
                us(floor),
                us(self.overhead_mean_ns()),
                us(self.head_mean_ns),
                us(self.tail_mean_ns)
            )
        };
        o.push_str(&limit);
        o
    }

    /// The report as text: summary, nodes table, threads table, slowest cycles, conclusion.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{} cycles on {} thread(s): cycle mean {} µs, median {} µs, p99 {} µs, max {} µs (the executor's call: a run's summary also counts the backend's inputs, outputs and statistics); process CPU {:.2} cores",
            self.cycles,
            self.threads,
            us(self.cycle_mean_ns),
            us(self.cycle_median_ns as f64),
            us(self.cycle_p99_ns as f64),
            us(self.cycle_max_ns as f64),
            self.cpu_cores
        );
        if let Some(note) = self.pacing_note() {
            let _ = writeln!(o, "{note}");
        }
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
        if let (Some(seq), Some(f)) = (self.seq_work_mean_ns, self.inflation()) {
            let why = if f > 1.1 {
                "the nodes run slower here than alone on one thread: they share caches and memory, or move between cores"
            } else if f < 0.9 {
                "the nodes run faster here than alone on one thread (their data fits the caches of several cores)"
            } else {
                "the nodes run about as fast as alone on one thread"
            };
            let _ = writeln!(
                o,
                "node-time inflation: {f:.2}x, nodes {} µs per cycle here against {} µs in a sequential run of the same graph on one thread (the faster of one just before and one just after): {why}",
                us(self.work_mean_ns),
                us(seq),
            );
        }
        let _ = writeln!(
            o,
            "the profile itself: {} µs per cycle on the audio thread after each cycle, folding the records",
            us(self.own_mean_ns)
        );
        let _ = writeln!(o);
        let seq = self.seq_work_mean_ns.is_some();
        // Columns as wide as the longest name and kind, so that the figures stay aligned.
        let nw = self
            .nodes
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(24);
        let kw = self
            .nodes
            .iter()
            .map(|r| r.kind.chars().count())
            .max()
            .unwrap_or(0)
            .max(10);
        let _ = writeln!(
            o,
            "{:<nw$} {:<kw$} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7}{}",
            "node",
            "kind",
            "calls",
            "min µs",
            "mean µs",
            "p99 µs",
            "max µs",
            "work %",
            if seq { "  vs seq" } else { "" }
        );
        for r in &self.nodes {
            let vs = match (seq, r.seq_mean_ns) {
                (true, Some(s)) if s > 0.0 => format!(" {:>7.2}x", r.mean_ns / s),
                (true, _) => format!(" {:>8}", "?"),
                (false, _) => String::new(),
            };
            let _ = writeln!(
                o,
                "{:<nw$} {:<kw$} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7.1}{vs}",
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
            "{:<nw$} {:<kw$} {:>8} {:>9} {:>9}",
            "total (nodes)",
            "",
            "",
            "",
            us(self.work_mean_ns)
        );
        let _ = writeln!(
            o,
            "{:<nw$} {:<kw$} {:>8} {:>9} {:>9}",
            "overhead and waits",
            "",
            "",
            "",
            us(self.overhead_mean_ns())
        );
        if !self.readings.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(o, "what the nodes report after the last cycle:");
            for (node, values) in &self.readings {
                let v: Vec<String> = values.iter().map(|(n, x)| format!("{n} {x}")).collect();
                let _ = writeln!(o, "  {node:<22} {}", v.join(", "));
            }
        }
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
        let _ = writeln!(o);
        let _ = writeln!(o, "{}", self.conclusion());
        o
    }

    /// The nodes table as CSV (times in ns).
    pub fn nodes_csv(&self) -> String {
        let mut o = String::from("node,kind,calls,min_ns,mean_ns,p99_ns,max_ns,seq_mean_ns\n");
        for r in &self.nodes {
            let _ = writeln!(
                o,
                "{},{},{},{},{:.0},{},{},{}",
                csv_field(&r.name),
                csv_field(&r.kind),
                r.calls,
                r.min_ns,
                r.mean_ns,
                r.p99_ns,
                r.max_ns,
                r.seq_mean_ns.map_or(String::new(), |s| format!("{s:.0}"))
            );
        }
        o
    }
}

impl Timeline {
    /// The cycle's breakdown in a few lines: its time, then the chain of tasks and waits that
    /// ended it, in time order (a long chain: its [`CHAIN_SHOWN`] largest steps).
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
        // The chain in time order; a long one shows its largest steps (still in order).
        let shown: Vec<&ChainStep> = if self.chain.len() <= CHAIN_SHOWN {
            self.chain.iter().collect()
        } else {
            let mut big: Vec<(usize, &ChainStep)> = self.chain.iter().enumerate().collect();
            big.sort_by_key(|(_, c)| std::cmp::Reverse(c.run_ns + c.wait_ns));
            big.truncate(CHAIN_SHOWN);
            big.sort_by_key(|&(i, _)| i);
            big.into_iter().map(|(_, c)| c).collect()
        };
        for c in &shown {
            let _ = write!(o, "    at {:>7} µs: ", us(c.start_ns as f64));
            if c.wait_ns > 0 {
                let _ = write!(
                    o,
                    "after a wait of {} µs ({}{}), ",
                    us(c.wait_ns as f64),
                    c.wait_cause(),
                    c.worker_woke_ns
                        .map(|w| format!("; thread woke at {} µs", us(w as f64)))
                        .unwrap_or_default()
                );
            }
            let _ = writeln!(
                o,
                "{} on thread {} ran {} µs",
                c.node,
                c.worker,
                us(c.run_ns as f64)
            );
        }
        if shown.len() < self.chain.len() {
            let _ = writeln!(
                o,
                "    ({} shorter steps of the chain not shown)",
                self.chain.len() - shown.len()
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
    use super::*;

    fn step(node: &str, start_ns: u64, run_ns: u64, wait_ns: u64) -> ChainStep {
        ChainStep {
            node: node.into(),
            worker: 1,
            start_ns,
            run_ns,
            wait_ns,
            worker_woke_ns: None,
        }
    }

    fn report(
        threads: usize,
        cycle_mean_ns: f64,
        path: &[(&str, f64)],
        work: f64,
    ) -> ProfileReport {
        ProfileReport {
            threads,
            cycles: 100,
            cycle_mean_ns,
            cycle_median_ns: cycle_mean_ns as u64,
            cycle_p99_ns: cycle_mean_ns as u64,
            cycle_max_ns: cycle_mean_ns as u64,
            work_mean_ns: work,
            head_mean_ns: 1_000.0,
            tail_mean_ns: 2_000.0,
            own_mean_ns: 0.0,
            cpu_cores: 1.0,
            nodes: Vec::new(),
            critical_path: path
                .iter()
                .map(|&(task, mean_ns)| PathStep {
                    task: task.into(),
                    mean_ns,
                })
                .collect(),
            workers: Vec::new(),
            median: None,
            slowest: Vec::new(),
            seq_work_mean_ns: None,
            pacing: None,
            readings: Vec::new(),
        }
    }

    /// A paced run that ran fewer cycles than asked, or late, says so in the report's text;
    /// one that kept pace, or an offline one, says nothing of it.
    #[test]
    fn a_paced_run_that_fell_behind_says_so() {
        let mut r = report(1, 1000.0, &[("a", 900.0)], 900.0);
        r.cycles = 475;
        assert_eq!(r.pacing_note(), None);
        r.with_pacing(Pacing {
            asked: 475,
            late: 0,
            misses: 0,
        });
        assert_eq!(r.pacing_note(), None);
        r.with_pacing(Pacing {
            asked: 480,
            late: 4,
            misses: 1,
        });
        let note = r.pacing_note().unwrap();
        assert!(
            note.contains("475 of the 480 cycles asked ran (4 started more than a period late")
                && note.contains("1 missed its deadline"),
            "{note}"
        );
        assert!(r.text().contains(&note));
    }

    #[test]
    fn the_chain_is_listed_in_time_order() {
        // The longest task (b) comes second, the largest wait before c: still said in order.
        let t = Timeline {
            index: 7,
            duration_ns: 100_000,
            tail_ns: 1_000,
            bars: Vec::new(),
            wakes: Vec::new(),
            chain: vec![
                step("a", 0, 10_000, 0),
                step("b", 10_000, 50_000, 0),
                step("c", 80_000, 19_000, 20_000),
            ],
        };
        let text = t.breakdown();
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} in {text}"));
        assert!(at(" a on thread") < at(" b on thread"), "{text}");
        assert!(at(" b on thread") < at("after a wait of 20.0 µs"), "{text}");
        assert!(at("after a wait of 20.0 µs") < at(" c on thread"), "{text}");
        // A long chain keeps its largest steps, in time order, and says how many it left out.
        let chain: Vec<ChainStep> = (0..30)
            .map(|i| {
                step(
                    &format!("n{i}"),
                    i * 1_000,
                    if i % 5 == 0 { 900 } else { 10 },
                    0,
                )
            })
            .collect();
        let t = Timeline { chain, ..t };
        let text = t.breakdown();
        let shown: Vec<usize> = (0..30)
            .filter(|i| text.contains(&format!(" n{i} on thread")))
            .collect();
        assert_eq!(shown.len(), CHAIN_SHOWN, "{text}");
        for big in [0, 5, 10, 15, 20, 25] {
            assert!(shown.contains(&big), "n{big}: {text}");
        }
        let places: Vec<usize> = shown
            .iter()
            .map(|i| text.find(&format!(" n{i} on thread")).unwrap())
            .collect();
        assert!(
            places.windows(2).all(|w| w[0] < w[1]),
            "in time order: {text}"
        );
        assert!(
            text.contains("(18 shorter steps of the chain not shown)"),
            "{text}"
        );
    }

    #[test]
    fn the_conclusion_gives_the_bound_and_what_limits_the_cycles() {
        // The example of a newcomer: a path of 61 % of the work.
        let r = report(
            4,
            70_000.0,
            &[("osc", 30_000.0), ("mix", 31_000.0)],
            100_000.0,
        );
        let c = r.conclusion();
        assert!(
            c.starts_with("conclusion: the critical path (2 tasks, 61.0 µs) is 61 % of the work (100.0 µs per cycle): at most 1.6x on any number of threads."),
            "{c}"
        );
        // 70 µs against a floor of 61 µs on 4 threads: the graph's shape is the limit.
        assert!(c.contains("the graph's shape limits them"), "{c}");
        assert!(c.contains("mix (31.0 µs), osc (30.0 µs)"), "{c}");
        // Cycles far above the floor: overhead and waits.
        let r = report(
            4,
            200_000.0,
            &[("osc", 30_000.0), ("mix", 31_000.0)],
            100_000.0,
        );
        assert!(
            r.conclusion().contains(
                "3.3x the shortest that 4 threads allow (61.0 µs): overhead and waits limit them"
            ),
            "{}",
            r.conclusion()
        );
        // Few threads for a wide graph: the threads are the limit.
        let r = report(2, 52_000.0, &[("a", 10_000.0)], 100_000.0);
        assert!(
            r.conclusion().contains("at most 10.0x"),
            "{}",
            r.conclusion()
        );
        assert!(
            r.conclusion().contains("the number of threads limits them"),
            "{}",
            r.conclusion()
        );
        // One thread, and a chain.
        let r = report(1, 110_000.0, &[("a", 25_000.0)], 100_000.0);
        assert!(
            r.conclusion().contains("up to 4.0x shorter"),
            "{}",
            r.conclusion()
        );
        let r = report(4, 110_000.0, &[("a", 50_000.0), ("b", 50_000.0)], 100_000.0);
        assert!(
            r.conclusion().contains("at most 1.0x") && r.conclusion().contains("is a chain"),
            "{}",
            r.conclusion()
        );
        // The text ends with it.
        assert!(r.text().trim_end().ends_with(&r.conclusion()));
        assert!(report(1, 1.0, &[], 0.0)
            .conclusion()
            .contains("no task time"));
    }
}
