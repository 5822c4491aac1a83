//! A graph's summary and a static schedule of it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use fugue_graph::{analysis, TaskGraph};
use fugue_sched::{Algorithm, Metrics, Outcome};
use serde::Serialize;

use super::trimmed;
use crate::costs::CostOrigin;

/// A graph's summary: nodes, edges, sources, sinks, kinds, work, critical path, depth and
/// width (`fugue info`; `Display` is its text).
#[derive(Serialize)]
pub struct GraphInfo {
    /// The graph file.
    pub file: String,
    /// Nodes, as the file writes them (not a feedback edge's pair of nodes).
    pub nodes: usize,
    /// Edges, as the file writes them (each feedback edge once).
    pub edges: usize,
    /// Nodes without predecessors (the text says "no edge in").
    pub sources: usize,
    /// Nodes without successors (the text says "no edge out"; not the nodes of kind `sink`).
    pub sinks: usize,
    /// Nodes per kind (`(none)` for nodes without one).
    pub kinds: BTreeMap<String, usize>,
    /// The sum of the node costs.
    pub total_work: f64,
    /// The costs' origin: `declared`, `default`, `mixed`, `measured` or `file`.
    pub costs: &'static str,
    /// Where the costs come from, in words.
    pub cost_source: String,
    /// Their unit.
    pub cost_unit: &'static str,
    /// The critical path's length (computation only).
    pub critical_path: f64,
    /// The critical path's length with the edges' communication costs.
    pub critical_path_with_comm: f64,
    /// The tasks on the critical path: its nodes, and a feedback edge's tasks where they are
    /// on it (named as [`fugue_graph::FEEDBACK_TASKS`] says), whose costs the length counts.
    pub critical_path_nodes: Vec<String>,
    /// How many of `critical_path_nodes` are a feedback edge's tasks.
    pub critical_path_feedback: usize,
    /// Levels of the graph.
    pub depth: usize,
    /// The most nodes that can run at once (or the widest level, a lower bound).
    pub width: usize,
    /// Whether `width` is exact.
    pub width_exact: bool,
    /// Total work over the critical path (`None`, JSON `null`, when the graph has no work).
    pub parallelism: Option<f64>,
    /// The deadline the file declares.
    pub deadline: Option<f64>,
    /// The feedback edges (`a.1 ~> b.1`), as written.
    pub feedback: Vec<String>,
    /// What nodes say of themselves beyond their kind and ports (an LV2 plugin's controls
    /// and control outputs), by node ([`GraphInfo::with_details`]).
    pub details: Vec<NodeDetails>,
    /// The first sources' and sinks' names, for the text.
    #[serde(skip)]
    names: [String; 2],
}

/// What one node says of itself ([`crate::check::details`]).
#[derive(Serialize)]
pub struct NodeDetails {
    /// The node.
    pub node: String,
    /// Its lines.
    pub lines: Vec<String>,
}

/// The names of the first eight of `ids`, then `...` when there are more.
fn names(g: &TaskGraph, ids: &[usize]) -> String {
    let mut s: Vec<&str> = ids
        .iter()
        .take(8)
        .map(|&i| g.node(i).name.as_str())
        .collect();
    if ids.len() > 8 {
        s.push("...");
    }
    s.join(", ")
}

impl GraphInfo {
    /// The summary of `g` (read from `file`, its costs from `origin`).
    pub fn new(g: &TaskGraph, file: &Path, origin: &CostOrigin) -> GraphInfo {
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for n in (0..g.len())
            .filter(|&v| !g.is_feedback_node(v))
            .map(|v| g.node(v))
        {
            let kind = if n.kind.is_empty() { "(none)" } else { &n.kind };
            *kinds.entry(kind.to_string()).or_default() += 1;
        }
        let work = analysis::total_work(g);
        let (cp, cp_nodes) = analysis::critical_path(g, false);
        let (width, method) = analysis::width(g);
        // The feedback edges' nodes are edges to the reader: a node fed only through `~>` is
        // no source, one read only through `~>` no sink.
        let written = |ids: Vec<usize>| -> Vec<usize> {
            ids.into_iter()
                .filter(|&v| !g.is_feedback_node(v))
                .collect()
        };
        let (sources, sinks) = (written(g.sources()), written(g.sinks()));
        GraphInfo {
            file: file.display().to_string(),
            nodes: g.written_nodes(),
            edges: g.written_edges(),
            sources: sources.len(),
            sinks: sinks.len(),
            kinds,
            total_work: work,
            costs: origin.kind,
            cost_source: origin.source.clone(),
            cost_unit: origin.unit,
            critical_path: cp,
            critical_path_with_comm: analysis::critical_path(g, true).0,
            critical_path_nodes: cp_nodes.iter().map(|&i| g.node(i).name.clone()).collect(),
            critical_path_feedback: cp_nodes.iter().filter(|&&i| g.is_feedback_node(i)).count(),
            depth: analysis::depth(g),
            width,
            width_exact: method == analysis::WidthMethod::Exact,
            parallelism: (cp > 0.0).then(|| work / cp),
            deadline: g.deadline(),
            details: Vec::new(),
            feedback: g
                .feedback_edges()
                .iter()
                .map(|f| g.feedback_text(f))
                .collect(),
            names: [names(g, &sources), names(g, &sinks)],
        }
    }

    /// This summary with what the nodes say of themselves (`(node, lines)`, from
    /// [`crate::check::details`]).
    pub fn with_details(mut self, details: Vec<(String, Vec<String>)>) -> GraphInfo {
        self.details = details
            .into_iter()
            .map(|(node, lines)| NodeDetails { node, lines })
            .collect();
        self
    }
}

impl fmt::Display for GraphInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let num = |x: f64| trimmed(x, 3);
        let unit = self.cost_unit;
        writeln!(f, "file           {}", self.file)?;
        writeln!(f, "nodes          {}", self.nodes)?;
        writeln!(f, "edges          {}", self.edges)?;
        // Said by their edges: a node of kind `sink` is another thing (a node that reaches
        // none is warned about).
        writeln!(f, "no edge in     {} ({})", self.sources, self.names[0])?;
        writeln!(f, "no edge out    {} ({})", self.sinks, self.names[1])?;
        let k: Vec<String> = self.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        writeln!(f, "kinds          {}", k.join(", "))?;
        writeln!(f, "costs          {}", self.cost_source)?;
        writeln!(f, "total work     {} {unit}", num(self.total_work))?;
        let comm = if self.critical_path_with_comm != self.critical_path {
            format!("; {} with communication", num(self.critical_path_with_comm))
        } else {
            String::new()
        };
        let feedback = match self.critical_path_feedback {
            0 => String::new(),
            n => format!(" and {}", counted(n, "feedback task")),
        };
        writeln!(
            f,
            "critical path  {} {unit} ({}{feedback}{comm})",
            num(self.critical_path),
            counted(
                self.critical_path_nodes.len() - self.critical_path_feedback,
                "node"
            ),
        )?;
        if let Some(p) = self.parallelism {
            writeln!(f, "parallelism    {p:.3} (total work / critical path)")?;
        } else {
            // No work: the ratio has no value (as `schedule` says of its speedup).
            writeln!(f, "parallelism    n/a (the graph has no work)")?;
        }
        writeln!(f, "depth          {}", self.depth)?;
        let bound = if self.width_exact {
            ""
        } else {
            " (widest level; a lower bound)"
        };
        writeln!(f, "width          {}{bound}", self.width)?;
        if let Some(d) = self.deadline {
            writeln!(f, "deadline       {d}")?;
        }
        if !self.feedback.is_empty() {
            writeln!(
                f,
                "feedback       {} (one block late, counted among the edges above): {}",
                self.feedback.len(),
                self.feedback.join(", ")
            )?;
        }
        for d in &self.details {
            for (i, line) in d.lines.iter().enumerate() {
                let head = if i == 0 { d.node.as_str() } else { "" };
                writeln!(f, "  {head:<12} {line}")?;
            }
        }
        Ok(())
    }
}

/// One task of a schedule: on which processor, from when to when.
#[derive(Serialize)]
pub struct ScheduledTask {
    /// The node's name.
    pub task: String,
    /// The processor.
    pub processor: usize,
    /// Start time.
    pub start: f64,
    /// Finish time.
    pub finish: f64,
}

/// A static schedule with its metrics (`fugue schedule`; `Display` is its text).
#[derive(Serialize)]
pub struct ScheduleReport {
    /// The graph file.
    pub file: String,
    /// The algorithm asked for.
    pub algorithm: &'static str,
    /// The one whose schedule was kept (`best` keeps the shortest).
    pub chosen: &'static str,
    /// Processors available.
    pub processors: usize,
    /// Processors the schedule uses.
    pub processors_used: usize,
    /// The schedule's length.
    pub makespan: f64,
    /// A lower bound on the makespan of every schedule of the graph on these processors
    /// (copies of tasks included): the computation-only critical path, the work over the
    /// processors.
    pub lower_bound: f64,
    /// Normalized schedule length.
    pub nsl: Option<f64>,
    /// Total work over makespan.
    pub speedup: Option<f64>,
    /// Speedup per processor.
    pub efficiency: Option<f64>,
    /// Whether the schedule is proven optimal (`None`: a heuristic), among the schedules
    /// [`ScheduleReport::optimal_among`] says.
    pub optimal: Option<bool>,
    /// The schedules the schedule is proven optimal among, when it is: `every schedule` (its
    /// makespan equals the lower bound), or `schedules that run each task once` (the exact
    /// search's, which copies no task: a schedule with copies, as cpfd makes, may be shorter).
    pub optimal_among: Option<&'static str>,
    /// The critical path's length, communication included.
    pub critical_path: f64,
    /// The critical path's length, computation only.
    pub critical_path_computation_only: f64,
    /// The nodes on the critical path.
    pub critical_path_nodes: Vec<String>,
    /// The sum of the node costs.
    pub total_work: f64,
    /// Whether a task runs more than once (CPFD duplicates).
    pub duplicates: bool,
    /// The costs' unit.
    pub time_unit: &'static str,
    /// The costs' origin.
    pub costs: &'static str,
    /// Where the costs come from, in words.
    pub cost_source: String,
    /// Every task copy, processor by processor in start order.
    pub tasks: Vec<ScheduledTask>,
    /// The rest of the text.
    #[serde(skip)]
    text: Text,
}

/// What the text of a schedule says beside the figures.
struct Text {
    /// Processors in the schedule.
    lanes: usize,
    /// The graph's tasks.
    tasks: usize,
    /// Its edges.
    edges: usize,
    /// The width of the task column.
    width: usize,
    /// The search's time limit, s.
    time_limit: f64,
    /// The search's own lower bound.
    search_bound: f64,
    /// The graph's feedback edges (each is two of its tasks).
    feedback: usize,
}

impl ScheduleReport {
    /// The report of `out`, a schedule of `g` (read from `file`, costs from `origin`) on
    /// `processors` processors, searched within `time_limit` seconds.
    pub fn new(
        g: &TaskGraph,
        file: &Path,
        out: &Outcome,
        processors: usize,
        time_limit: f64,
        origin: &CostOrigin,
    ) -> ScheduleReport {
        let s = &out.schedule;
        let m = Metrics::new(g, s, processors);
        let (cp_len, cp) = analysis::critical_path(g, true);
        let width = g
            .nodes()
            .iter()
            .map(|n| n.name.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 40);
        // Proven for every schedule when the makespan meets the bound that holds for all;
        // the exact search's own proof (its finish, or its bound) holds for the schedules
        // that run each task once.
        let (optimal, optimal_among) = if meets(m.makespan, m.lower_bound) {
            (Some(true), Some(EVERY_SCHEDULE))
        } else {
            match out.optimal {
                Some(true) => (Some(true), Some(EACH_TASK_ONCE)),
                Some(false) if meets(m.makespan, out.lower_bound) => {
                    (Some(true), Some(EACH_TASK_ONCE))
                }
                o => (o, None),
            }
        };
        ScheduleReport {
            file: file.display().to_string(),
            algorithm: out.algorithm.name(),
            chosen: out.chosen.name(),
            processors,
            processors_used: s.used_processors(),
            makespan: m.makespan,
            lower_bound: m.lower_bound,
            nsl: m.nsl,
            speedup: m.speedup,
            efficiency: m.efficiency,
            optimal,
            optimal_among,
            critical_path: cp_len,
            critical_path_computation_only: m.cp_length,
            critical_path_nodes: cp.iter().map(|&n| g.node(n).name.clone()).collect(),
            total_work: m.total_work,
            duplicates: s.has_duplicates(),
            time_unit: origin.unit,
            costs: origin.kind,
            cost_source: origin.source.clone(),
            tasks: s
                .slots()
                .map(|(p, sl)| ScheduledTask {
                    task: g.node(sl.task).name.clone(),
                    processor: p,
                    start: sl.start,
                    finish: sl.finish,
                })
                .collect(),
            text: Text {
                lanes: s.processors.len(),
                tasks: g.len(),
                edges: g.edges().len(),
                width,
                time_limit,
                search_bound: out.lower_bound,
                feedback: g.feedback_edges().len(),
            },
        }
    }

    /// The title of the schedule's Gantt chart.
    pub fn gantt_title(&self) -> String {
        let name = Path::new(&self.file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!(
            "{name} — {}{} on {} processors — makespan {}",
            self.algorithm,
            self.kept(" ({})"),
            self.processors,
            trimmed(self.makespan, 6)
        )
    }

    /// `how` around the kept algorithm's name when `best` chose, else nothing.
    fn kept(&self, how: &str) -> String {
        if self.algorithm == Algorithm::Best.name() {
            how.replace("{}", self.chosen)
        } else {
            String::new()
        }
    }
}

/// [`ScheduleReport::optimal_among`]: the makespan equals the bound that holds for all.
const EVERY_SCHEDULE: &str = "every schedule";

/// [`ScheduleReport::optimal_among`]: the exact search, which copies no task, proved it.
const EACH_TASK_ONCE: &str = "schedules that run each task once";

/// Whether a makespan equals its lower bound (to rounding): the schedule is then optimal.
fn meets(makespan: f64, lower_bound: f64) -> bool {
    makespan - lower_bound <= 1e-9 * makespan.abs().max(1.0)
}

/// `makespan` and `lower_bound` written with the same number of decimals: 6, or more when they
/// differ but would read the same, so that equal figures always mean a proven optimum.
fn same_precision(makespan: f64, lower_bound: f64) -> (String, String) {
    let mut decimals = 6;
    while decimals < 12
        && !meets(makespan, lower_bound)
        && trimmed(makespan, decimals) == trimmed(lower_bound, decimals)
    {
        decimals += 1;
    }
    (trimmed(makespan, decimals), trimmed(lower_bound, decimals))
}

impl fmt::Display for ScheduleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let num = |x: f64| trimmed(x, 6);
        let opt = |x: Option<f64>| x.map_or("n/a".into(), |v| format!("{v:.4}"));
        let Text {
            lanes,
            tasks,
            edges,
            width,
            time_limit,
            search_bound,
            feedback,
        } = self.text;
        let unit = self.time_unit;
        writeln!(
            f,
            "file           {} ({}, {})",
            self.file,
            counted(tasks, "task"),
            counted(edges, "edge")
        )?;
        writeln!(
            f,
            "algorithm      {}{}",
            self.algorithm,
            self.kept(" (kept {})")
        )?;
        writeln!(
            f,
            "processors     {} ({} used)",
            self.processors, self.processors_used
        )?;
        writeln!(f, "costs          {}", self.cost_source)?;
        if feedback > 0 {
            writeln!(
                f,
                "feedback       {}, each two of the tasks: {}",
                counted(feedback, "edge"),
                fugue_graph::FEEDBACK_TASKS
            )?;
        }
        // Each processor's tasks, in one pass (not one pass over the tasks per processor).
        let mut by_proc: Vec<Vec<&ScheduledTask>> = vec![Vec::new(); lanes];
        for t in &self.tasks {
            if let Some(v) = by_proc.get_mut(t.processor) {
                v.push(t);
            }
        }
        // A run of processors without a task is one line (a schedule on 4096 processors of a
        // small graph would otherwise list thousands).
        let mut idle_from: Option<usize> = None;
        let idle = |f: &mut std::fmt::Formatter<'_>, from: usize, to: usize| {
            writeln!(f)?;
            if from == to {
                writeln!(f, "P{from}  (no task)")
            } else {
                writeln!(f, "P{from} to P{to}  (no task)")
            }
        };
        let n = by_proc.len();
        for (p, slots) in by_proc.into_iter().enumerate() {
            if slots.is_empty() {
                idle_from.get_or_insert(p);
                if p + 1 == n {
                    idle(f, idle_from.take().unwrap_or(p), p)?;
                }
                continue;
            }
            if let Some(from) = idle_from.take() {
                idle(f, from, p - 1)?;
            }
            writeln!(f)?;
            writeln!(f, "P{p}  ({})", counted(slots.len(), "task"))?;
            writeln!(f, "  {:<width$}  {:>12}  {:>12}", "task", "start", "finish")?;
            for t in slots {
                writeln!(
                    f,
                    "  {:<width$}  {:>12}  {:>12}",
                    t.task,
                    num(t.start),
                    num(t.finish)
                )?;
            }
        }
        writeln!(f)?;
        let (makespan, lower_bound) = same_precision(self.makespan, self.lower_bound);
        writeln!(f, "makespan       {makespan} {unit}")?;
        writeln!(f, "lower bound    {lower_bound} {unit}")?;
        writeln!(f, "NSL            {}", opt(self.nsl))?;
        writeln!(f, "speedup        {}", opt(self.speedup))?;
        writeln!(f, "efficiency     {}", opt(self.efficiency))?;
        let optimal = match (self.optimal, self.optimal_among) {
            (Some(true), Some(EVERY_SCHEDULE)) => {
                "proven (the makespan equals the lower bound)".to_string()
            }
            (Some(true), _) => "proven among schedules that run each task once (the exact search's); one that copies a task onto several processors (cpfd, best) may be shorter".to_string(),
            (None, _) => "not known (a heuristic, above the lower bound)".to_string(),
            (Some(false), _) => format!(
                "not proven within {time_limit} s (the search's own lower bound, for schedules that run each task once, is {})",
                num(search_bound)
            ),
        };
        writeln!(f, "optimal        {optimal}")?;
        if self.duplicates {
            writeln!(
                f,
                "duplicates     yes ({} for {})",
                match self.tasks.len() {
                    1 => "1 copy".to_string(),
                    n => format!("{n} copies"),
                },
                counted(tasks, "task")
            )?;
        }
        Ok(())
    }
}

/// `n` and `noun`, in the plural unless `n` is 1: "1 task", "3 tasks".
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_makespan_and_its_bound_read_equal_only_when_they_are() {
        // Equal: the same figure twice, and the schedule counts as optimal.
        assert_eq!(same_precision(12.5, 12.5), ("12.5".into(), "12.5".into()));
        assert!(meets(12.5, 12.5));
        assert!(meets(3.0 + 1e-12, 3.0));
        // Different beyond the sixth decimal: more decimals until they differ.
        let (m, b) = same_precision(1.000_000_3, 1.000_000_1);
        assert_ne!(m, b);
        assert_eq!((m.as_str(), b.as_str()), ("1.0000003", "1.0000001"));
        assert!(!meets(1.000_000_3, 1.000_000_1));
        // Far apart: six decimals at most, trimmed.
        assert_eq!(same_precision(7.25, 6.0), ("7.25".into(), "6".into()));
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(counted(1, "task"), "1 task");
        assert_eq!(counted(0, "task"), "0 tasks");
        assert_eq!(counted(7, "edge"), "7 edges");
    }
}
