//! Recording a profile ([`record`]), the profile ([`ProfileReport`]) as JSON, and the folder
//! that `fugue profile -o DIR`, `run --profile=DIR` and `render --profile=DIR` write:
//! [`FILES`].

use std::path::Path;

use serde::Serialize;

use crate::output::{write_atomic, OutputError};
use crate::profile::{Bar, ChainStep, NodeRow, Timeline, WorkerRow};
use crate::ProfileReport;

/// Files a profile folder holds.
pub const FILES: [&str; 5] = [
    "profile.txt",
    "nodes.csv",
    "profile.json",
    "median-cycle.svg",
    "slowest-cycle.svg",
];

/// Why a profile folder cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The path names something other than a folder.
    #[error("{} is not a folder; --profile and -o take a folder for the report", .0.display())]
    NotAFolder(std::path::PathBuf),
    /// The folder cannot be made there ([`crate::output::folder_can_be_made`]).
    #[error("{0}")]
    CannotMake(String),
    /// A report's file is there and replacing it was not asked for.
    #[error("{} already exists; pass --force to overwrite it", .0.display())]
    Exists(std::path::PathBuf),
    /// The folder, or one of the report's files, is also another output of the command
    /// (even with `--force`: one would replace the other).
    #[error("{} {} also the command's output {}; name another folder for the report", .path.display(), if *.folder { "is the report's folder and" } else { "is a file of the report and" }, .output.display())]
    IsOutput {
        /// The folder or the report's file.
        path: std::path::PathBuf,
        /// The other output.
        output: std::path::PathBuf,
        /// Whether `path` is the folder itself.
        folder: bool,
    },
    /// A report's file would replace one of the files the command reads (even with
    /// `--force`).
    #[error("{} is the input file {}; name another folder for the report", .path.display(), .input.display())]
    IsInput {
        /// The report's file.
        path: std::path::PathBuf,
        /// The input it is.
        input: std::path::PathBuf,
    },
}

/// Refuses a report folder that holds a report already (unless `force`), that is not a
/// folder, one of whose report files is one of `inputs` (the files the command reads: never
/// replaced, even with `force`), or that is, or holds as a report file, one of `outputs` (the
/// command's other outputs, which may not exist yet: compared by where they lie).
pub fn check_folder(
    dir: &Path,
    force: bool,
    inputs: &[&Path],
    outputs: &[&Path],
) -> Result<(), FolderError> {
    // The folder and its report's files, with where each lies (once), and whether it is the
    // folder.
    let places: Vec<(std::path::PathBuf, std::path::PathBuf, bool)> =
        std::iter::once((dir.to_path_buf(), true))
            .chain(FILES.iter().map(|f| (dir.join(f), false)))
            .map(|(p, folder)| (crate::output::lies_at(&p), p, folder))
            .collect();
    for &o in outputs {
        let o_at = crate::output::lies_at(o);
        let clash = places
            .iter()
            .find(|(at, _, _)| *at == o_at)
            .map(|(_, p, folder)| (p.clone(), *folder));
        if let Some((path, folder)) = clash {
            return Err(FolderError::IsOutput {
                path,
                output: o.to_path_buf(),
                folder,
            });
        }
    }
    // A symbolic link to nothing (`exists` follows it) is no folder either: creating the
    // folder there fails, after the run.
    let dangling = !dir.exists() && std::fs::symlink_metadata(dir).is_ok();
    if dangling || (dir.exists() && !dir.is_dir()) {
        return Err(FolderError::NotAFolder(dir.to_path_buf()));
    }
    crate::output::folder_can_be_made(dir).map_err(FolderError::CannotMake)?;
    for f in FILES {
        let path = dir.join(f);
        // A report's file that cannot be written is said now, not after the run (with
        // --force too): a folder, or a symbolic link to nothing.
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            let why = if path.is_dir() {
                Some("is a folder")
            } else if meta.file_type().is_symlink() && !path.exists() {
                Some("is a symbolic link to nothing")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(FolderError::CannotMake(format!(
                    "{} {why}, where the report writes its file {f}; remove it or name another folder",
                    path.display()
                )));
            }
        }
        if let Some(input) = crate::output::same_file(&path, inputs) {
            return Err(FolderError::IsInput {
                path,
                input: input.to_path_buf(),
            });
        }
    }
    match FILES.iter().map(|f| dir.join(f)).find(|p| p.exists()) {
        Some(p) if !force => Err(FolderError::Exists(p)),
        _ => Ok(()),
    }
}

/// Writes `report` into the folder `dir` ([`FILES`]), titled `what`, as one set
/// ([`crate::output::Together`]): a file that cannot be written leaves the folder's earlier
/// report whole, not half replaced.
pub fn write(report: &ProfileReport, dir: &Path, what: &str) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| OutputError::io(format!("cannot create {}", dir.display()), e))?;
    let together = crate::output::Together::open();
    write_files(report, dir, what)?;
    together.commit()
}

/// [`write`]'s files.
fn write_files(report: &ProfileReport, dir: &Path, what: &str) -> Result<(), OutputError> {
    let text = format!("{what}\n{}", report.text());
    write_atomic(&dir.join("profile.txt"), text.as_bytes())?;
    write_atomic(&dir.join("nodes.csv"), report.nodes_csv().as_bytes())?;
    let json = serde_json::to_string_pretty(&ProfileJson::new(report, what))
        .expect("a profile serializes");
    write_atomic(&dir.join("profile.json"), json.as_bytes())?;
    let figures = [
        (
            "median-cycle.svg",
            report.median.as_ref(),
            "close to the median",
        ),
        ("slowest-cycle.svg", report.slowest.first(), "the slowest"),
    ];
    for (file, timeline, which) in figures {
        if let Some(t) = timeline {
            let title = format!(
                "{what}: cycle {} ({:.1} µs, {which})",
                t.index,
                t.duration_ns as f64 / 1e3
            );
            write_atomic(&dir.join(file), report.gantt_svg(t, &title).as_bytes())?;
        }
    }
    Ok(())
}

/// A node's row.
#[derive(Serialize)]
struct NodeJson<'a> {
    node: &'a str,
    kind: &'a str,
    calls: u64,
    min_ns: u64,
    mean_ns: f64,
    p99_ns: u64,
    max_ns: u64,
    seq_mean_ns: Option<f64>,
}

impl<'a> From<&'a NodeRow> for NodeJson<'a> {
    fn from(n: &'a NodeRow) -> Self {
        NodeJson {
            node: &n.name,
            kind: &n.kind,
            calls: n.calls,
            min_ns: n.min_ns,
            mean_ns: n.mean_ns,
            p99_ns: n.p99_ns,
            max_ns: n.max_ns,
            seq_mean_ns: n.seq_mean_ns,
        }
    }
}

/// A thread's row.
#[derive(Serialize)]
struct ThreadJson {
    thread: usize,
    woke: u64,
    ran: u64,
    wake_median_ns: u64,
    wake_p99_ns: u64,
    wake_max_ns: u64,
    first_task_median_ns: u64,
    first_task_p99_ns: u64,
    busy_mean_ns: f64,
    idle_mean_ns: f64,
    steals: u64,
}

impl From<&WorkerRow> for ThreadJson {
    fn from(w: &WorkerRow) -> Self {
        ThreadJson {
            thread: w.worker,
            woke: w.woke,
            ran: w.ran,
            wake_median_ns: w.wake_median_ns,
            wake_p99_ns: w.wake_p99_ns,
            wake_max_ns: w.wake_max_ns,
            first_task_median_ns: w.first_median_ns,
            first_task_p99_ns: w.first_p99_ns,
            busy_mean_ns: w.busy_mean_ns,
            idle_mean_ns: w.idle_mean_ns,
            steals: w.steals,
        }
    }
}

/// A task's bar in a cycle's timeline.
#[derive(Serialize)]
struct BarJson<'a> {
    node: &'a str,
    thread: usize,
    start_ns: u64,
    end_ns: u64,
}

impl<'a> From<&'a Bar> for BarJson<'a> {
    fn from(b: &'a Bar) -> Self {
        BarJson {
            node: &b.node,
            thread: b.worker,
            start_ns: b.start_ns,
            end_ns: b.end_ns,
        }
    }
}

/// A step of a cycle's critical chain.
#[derive(Serialize)]
struct StepJson<'a> {
    node: &'a str,
    thread: usize,
    start_ns: u64,
    run_ns: u64,
    wait_ns: u64,
    wait_cause: &'static str,
    thread_woke_ns: Option<u64>,
}

impl<'a> From<&'a ChainStep> for StepJson<'a> {
    fn from(c: &'a ChainStep) -> Self {
        StepJson {
            node: &c.node,
            thread: c.worker,
            start_ns: c.start_ns,
            run_ns: c.run_ns,
            wait_ns: c.wait_ns,
            wait_cause: c.wait_cause(),
            thread_woke_ns: c.worker_woke_ns,
        }
    }
}

/// One cycle's timeline.
#[derive(Serialize)]
struct TimelineJson<'a> {
    cycle: u64,
    duration_ns: u64,
    tail_ns: u64,
    wakes_ns: &'a [Option<u64>],
    tasks: Vec<BarJson<'a>>,
    chain: Vec<StepJson<'a>>,
}

impl<'a> From<&'a Timeline> for TimelineJson<'a> {
    fn from(t: &'a Timeline) -> Self {
        TimelineJson {
            cycle: t.index,
            duration_ns: t.duration_ns,
            tail_ns: t.tail_ns,
            wakes_ns: &t.wakes,
            tasks: t.bars.iter().map(BarJson::from).collect(),
            chain: t.chain.iter().map(StepJson::from).collect(),
        }
    }
}

/// [`crate::profile::Pacing`] in `profile.json`.
#[derive(Serialize)]
struct PacingJson {
    cycles_asked: u64,
    cycles_late: u64,
    deadline_misses: u64,
}

/// The profile as `profile.json` holds it.
#[derive(Serialize)]
pub struct ProfileJson<'a> {
    run: &'a str,
    threads: usize,
    cycles: u64,
    cycle_mean_ns: f64,
    cycle_median_ns: u64,
    cycle_p99_ns: u64,
    cycle_max_ns: u64,
    nodes_total_ns: f64,
    seq_nodes_total_ns: Option<f64>,
    node_time_inflation: Option<f64>,
    overhead_ns: f64,
    before_first_task_ns: f64,
    after_last_task_ns: f64,
    profile_own_ns: f64,
    worker_wake_p99_ns: u64,
    process_cpu_cores: f64,
    /// A paced run's cycles asked, started late and missed (`null` offline).
    pacing: Option<PacingJson>,
    nodes: Vec<NodeJson<'a>>,
    critical_path_ns: f64,
    critical_path: Vec<&'a str>,
    conclusion: String,
    threads_detail: Vec<ThreadJson>,
    median_cycle: Option<TimelineJson<'a>>,
    slowest_cycles: Vec<TimelineJson<'a>>,
    readings: std::collections::BTreeMap<&'a str, std::collections::BTreeMap<&'a str, f32>>,
}

impl<'a> ProfileJson<'a> {
    /// The JSON of `r`, a profile of the run `what`.
    pub fn new(r: &'a ProfileReport, what: &'a str) -> Self {
        ProfileJson {
            run: what,
            threads: r.threads,
            cycles: r.cycles,
            cycle_mean_ns: r.cycle_mean_ns,
            cycle_median_ns: r.cycle_median_ns,
            cycle_p99_ns: r.cycle_p99_ns,
            cycle_max_ns: r.cycle_max_ns,
            nodes_total_ns: r.work_mean_ns,
            seq_nodes_total_ns: r.seq_work_mean_ns,
            node_time_inflation: r.inflation(),
            overhead_ns: r.overhead_mean_ns(),
            before_first_task_ns: r.head_mean_ns,
            after_last_task_ns: r.tail_mean_ns,
            profile_own_ns: r.own_mean_ns,
            worker_wake_p99_ns: r.worker_wake_p99_ns(),
            process_cpu_cores: r.cpu_cores,
            pacing: r.pacing.map(|p| PacingJson {
                cycles_asked: p.asked,
                cycles_late: p.late,
                deadline_misses: p.misses,
            }),
            nodes: r.nodes.iter().map(NodeJson::from).collect(),
            critical_path_ns: r.critical_path_ns(),
            critical_path: r.critical_path.iter().map(|s| s.task.as_str()).collect(),
            conclusion: r.conclusion(),
            threads_detail: r.workers.iter().map(ThreadJson::from).collect(),
            median_cycle: r.median.as_ref().map(TimelineJson::from),
            slowest_cycles: r.slowest.iter().map(TimelineJson::from).collect(),
            readings: r
                .readings
                .iter()
                .map(|(node, values)| {
                    let v = values.iter().map(|(n, x)| (n.as_str(), *x)).collect();
                    (node.as_str(), v)
                })
                .collect(),
        }
    }
}

/// A run made to record a profile: offline (cycles back to back, as a render runs them) or
/// clocked (paced at the buffer period, as a backend runs them).
#[derive(Clone, Debug)]
pub struct Recording {
    /// Offline rather than clocked.
    pub offline: bool,
    /// Sample rate, Hz.
    pub rate: u32,
    /// Frames per cycle.
    pub buffer: usize,
    /// Seconds of audio.
    pub seconds: f64,
    /// Nodes of unknown kind played as silence.
    pub placeholder: bool,
    /// The executor.
    pub executor: crate::ExecutorChoice,
    /// A request to stop early.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The kinds the graph's nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// Why a recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The offline render failed.
    #[error(transparent)]
    Render(#[from] crate::RenderError),
    /// The clocked run failed.
    #[error(transparent)]
    Run(#[from] crate::RunError),
}

/// The longest each of the two sequential reference runs of [`record`] takes, in seconds of
/// audio.
pub const REFERENCE_SECONDS: f64 = 1.0;

/// What [`record`] gives: the profile (`None` if no cycle was recorded), the engine's
/// warnings, and what `auto` measured and chose when it chose.
pub type Recorded = (
    Option<ProfileReport>,
    Vec<String>,
    Option<crate::auto::AutoReport>,
);

/// Runs `graph` as `r` says with the profile on; returns the profile (`None` if no cycle
/// was recorded), the engine's warnings and `auto`'s choice ([`Recorded`]). When the executor is not seq on one thread, a
/// sequential run of the same graph (seq on one thread, the same backend, at most
/// [`REFERENCE_SECONDS`]) just before the profiled run and another just after are the
/// reference of the report's node-time inflation ([`ProfileReport::with_seq_reference`]):
/// the one whose nodes took less time, so that a moment when the machine ran slow does not
/// pass for the nodes' own time.
pub fn record(graph: &fugue_graph::TaskGraph, r: &Recording) -> Result<Recorded, RecordError> {
    let parallel = r.executor.auto
        || r.executor.kind != fugue_exec::ExecutorKind::Seq
        || r.executor.threads > 1;
    let reference = parallel.then(|| {
        let mut seq = r.executor.clone();
        seq.kind = fugue_exec::ExecutorKind::Seq;
        seq.auto = false;
        seq.threads = 1;
        seq.pipeline = crate::Pipeline::Sub(1);
        seq.overlap = 1;
        Recording {
            seconds: r.seconds.min(REFERENCE_SECONDS),
            executor: seq,
            ..r.clone()
        }
    });
    let before = match &reference {
        Some(rf) => record_one(graph, rf)?.0,
        None => None,
    };
    let (mut report, warnings, auto) = record_one(graph, r)?;
    let stopped = r
        .stop
        .as_ref()
        .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
    if let (Some(rf), false, Some(rep)) = (&reference, stopped, report.as_mut()) {
        let after = record_one(graph, rf)?.0;
        let least = [before, after]
            .into_iter()
            .flatten()
            .min_by(|a, b| a.work_mean_ns.total_cmp(&b.work_mean_ns));
        if let Some(s) = least {
            rep.with_seq_reference(&s);
        }
    }
    Ok((report, warnings, auto))
}

/// One run of [`record`].
fn record_one(graph: &fugue_graph::TaskGraph, r: &Recording) -> Result<Recorded, RecordError> {
    if r.offline {
        let options = crate::RenderOptions {
            sample_rate: r.rate,
            block: r.buffer,
            seconds: Some(r.seconds),
            output: crate::Output::Discard,
            placeholder: r.placeholder,
            cancel: r.stop.clone(),
            executor: r.executor.clone(),
            profile: true,
            registry: r.registry.clone(),
            ..crate::RenderOptions::default()
        };
        return match crate::render(graph, &options, |_| {}) {
            Ok(s) => Ok((s.profile, s.warnings, s.auto)),
            // Stopped early: the profile of the cycles it ran, as a clocked run gives it.
            Err(crate::RenderError::Cancelled { partial: Some(s) })
                if s.profile.as_ref().is_some_and(|p| p.cycles > 0) =>
            {
                Ok((s.profile, s.warnings, s.auto))
            }
            Err(e) => Err(e.into()),
        };
    }
    let options = crate::RunOptions {
        backend: crate::Backend::Clocked {
            rate: r.rate,
            block: r.buffer,
        },
        executor: r.executor.clone(),
        duration: Some(std::time::Duration::from_secs_f64(r.seconds)),
        stop: r.stop.clone(),
        placeholder: r.placeholder,
        profile: true,
        registry: r.registry.clone(),
        ..crate::RunOptions::default()
    };
    let report = crate::run(graph, &options, |_| {})?;
    let mut profile = report.profile;
    // Of a run that ran its length (one stopped early ran fewer cycles for that reason).
    if let (Some(p), crate::EndReason::Duration) = (profile.as_mut(), &report.end) {
        p.with_pacing(crate::profile::Pacing {
            asked: (r.seconds * f64::from(r.rate) / r.buffer as f64).round() as u64,
            late: report.xruns,
            misses: report.summary.misses,
        });
    }
    Ok((profile, report.warnings, report.auto))
}
