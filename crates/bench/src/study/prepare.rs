//! Reading a study's spec: its values checked, its graphs loaded, its configurations listed,
//! and each executor's name turned into the choice a run plays.

use std::path::{Path, PathBuf};

use fugue_engine::{Deadline, ExecutorChoice};
use fugue_exec::ExecutorKind;
use fugue_graph::TaskGraph;

use super::spec::{self, Config, Exec, Spec};
use super::{StudyConfig, AUTO, DEFAULT_REPEATS, DEFAULT_SPEC, DEFAULT_SPEC_TEXT};
use crate::error::{config, BenchError};
use crate::report;

/// The executor names a spec accepts.
fn executor_names() -> String {
    let mut v: Vec<String> = ExecutorKind::ALL
        .iter()
        .filter(|k| **k != ExecutorKind::Static)
        .map(|k| k.name().to_string())
        .collect();
    v.push("static-ALGORITHM (static-hlfet, static-etf, static-cpfd, static-random, static-optimal, static-best)".into());
    v.push(format!(
        "{AUTO} (chooses among seq, ws and static by measuring them first)"
    ));
    v.join(", ")
}

/// Whether the executor of this name runs on threads of its own choosing (one configuration
/// per graph, buffer and load, whatever the spec's thread counts): seq (one) and auto.
pub(super) fn single(name: &str) -> bool {
    name == "seq" || name == AUTO
}

/// The executor choice that plays the spec's executor `name` on `threads` threads.
pub(super) fn choice_for(
    name: &str,
    threads: usize,
    rt: bool,
    pin: bool,
) -> Result<ExecutorChoice, BenchError> {
    if name == AUTO {
        // Measures its candidates (paced at the run's period) before the run, and plays the
        // one it keeps; pipelined ones too when the graph is short of parallelism. Its
        // candidates use at most `threads` threads (the spec's largest count).
        return Ok(ExecutorChoice {
            auto: true,
            threads: 1,
            auto_threads: Some(threads.max(1)),
            pipeline: fugue_engine::Pipeline::Auto,
            rt: rt.then_some(80),
            pin,
            ..ExecutorChoice::default()
        });
    }
    let (kind, algo) = match name.strip_prefix("static-") {
        Some(a) => (ExecutorKind::Static, Some(a)),
        None => (
            match ExecutorKind::from_name(name) {
                Some(ExecutorKind::Static) => {
                    return config(
                        "executor `static` in the spec: name its algorithm, as static-hlfet",
                    )
                }
                Some(k) => k,
                None => {
                    return config(format!(
                        "unknown executor `{name}` in the spec; expected one of {}",
                        executor_names()
                    ))
                }
            },
            None,
        ),
    };
    let mut c = ExecutorChoice {
        kind,
        threads: if kind == ExecutorKind::Seq {
            1
        } else {
            threads
        },
        rt: rt.then_some(80),
        pin,
        ..ExecutorChoice::default()
    };
    if let Some(a) = algo {
        c.algorithm = a
            .parse()
            .map_err(|e| BenchError::Config(format!("executor `{name}` in the spec: {e}")))?;
    }
    Ok(c)
}

/// Returns `Err(BenchError::Input(msg))`: the spec file holds a value the study cannot use.
fn invalid<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Input(msg.into()))
}

/// A spec read and checked, with its graphs loaded and its configurations listed.
pub(super) struct Prepared {
    /// The spec.
    pub spec: Spec,
    /// Its text.
    pub text: String,
    /// The spec's path, or `built-in studies/default.toml`.
    pub label: String,
    /// The graphs, with their labels.
    pub graphs: Vec<(String, TaskGraph)>,
    /// Where each graph came from.
    pub sources: Vec<String>,
    /// The configurations, in the order they run.
    pub configs: Vec<Config>,
    /// Runs of each configuration.
    pub repeats: usize,
    /// Whether the runs play through JACK (else the clocked backend).
    pub jack: bool,
    /// The deadline of a cycle.
    pub deadline: Deadline,
}

impl Prepared {
    /// The buffer size of the histograms: the spec's, or its middle buffer size.
    pub fn hist_buffer(&self) -> usize {
        self.spec
            .histogram_buffer
            .unwrap_or(self.spec.buffers[self.spec.buffers.len() / 2])
    }

    /// The estimated wall time of one run: its seconds and what a run costs beyond them.
    pub fn per_run(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.spec.seconds) + super::RUN_OVERHEAD
    }
}

/// The largest study spec read (a spec is a few lines of TOML).
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// The most runs a study may ask for (configurations times repeats): counted from the spec
/// before its configurations are listed.
pub const MAX_RUNS: usize = 100_000;

/// Reads the study spec `path`, at most [`MAX_SPEC_BYTES`] of it.
pub fn read_spec(path: &Path) -> Result<String, BenchError> {
    fugue_graph::read::read_text_bounded(path, MAX_SPEC_BYTES, "a study spec")
        .map_err(|e| BenchError::io(format!("cannot read study spec {}", path.display()), e))
}

/// Reads and checks the spec of `args` and lists its configurations.
pub(super) fn prepare(args: &StudyConfig) -> Result<Prepared, BenchError> {
    let (text, label, spec_dir) = match &args.spec {
        Some(p) => (
            match &args.spec_text {
                Some(t) => t.clone(),
                None => read_spec(p)?,
            },
            p.display().to_string(),
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
        ),
        None if Path::new(DEFAULT_SPEC).is_file() => {
            let p = Path::new(DEFAULT_SPEC);
            (
                read_spec(p)?,
                DEFAULT_SPEC.to_string(),
                p.parent().map(Path::to_path_buf).unwrap_or_default(),
            )
        }
        None => (
            DEFAULT_SPEC_TEXT.to_string(),
            format!("built-in {DEFAULT_SPEC}"),
            PathBuf::new(),
        ),
    };
    let spec = spec::parse(&text, &label).map_err(BenchError::Input)?;
    let file = &label;
    // Where the spec gives a field, for the errors of its values.
    let at = |key: &str| spec::place(&text, file, key);
    if !(spec.seconds > 0.0 && spec.seconds <= 3600.0) {
        let file = &at("seconds");
        return invalid(format!(
            "{file}: seconds must be above 0 and at most 3600, not {}",
            fugue_graph::short_number(spec.seconds)
        ));
    }
    for (field, empty) in [
        ("graphs", spec.graphs.is_empty()),
        ("executors", spec.executors.is_empty()),
        ("threads", spec.threads.is_empty()),
        ("buffers", spec.buffers.is_empty()),
        ("loads", spec.loads.is_empty()),
    ] {
        if empty {
            let file = &at(field);
            return invalid(format!("{file}: `{field}` needs at least one value"));
        }
    }
    // The bounds of the command line's --threads and --buffer, checked before any run (and
    // by --dry-run): a study stopped in its middle by a value it cannot run wastes the runs
    // made before it.
    if let Some(t) = spec.threads.iter().find(|&&t| !(1..=256).contains(&t)) {
        let file = &at("threads");
        return invalid(format!("{file}: threads must be from 1 to 256, not {t}"));
    }
    if let Some(b) = spec
        .buffers
        .iter()
        .find(|&&b| !(1..=1_048_576).contains(&b))
    {
        let file = &at("buffers");
        return invalid(format!(
            "{file}: buffers must be from 1 to 1048576 frames, not {b}"
        ));
    }
    if !(1..=fugue_engine::MAX_RATE).contains(&spec.rate) {
        let file = &at("rate");
        return invalid(format!(
            "{file}: rate must be from 1 to {} Hz, not {}",
            fugue_engine::MAX_RATE,
            spec.rate
        ));
    }
    for &b in &spec.buffers {
        crate::check_cycles_per_run(&at("seconds"), spec.seconds, spec.rate, b)
            .map_err(|e| BenchError::Input(e.to_string()))?;
        // A run is whole cycles: one shorter than a cycle would still last a whole one.
        let period = b as f64 / f64::from(spec.rate);
        if spec.seconds < period {
            let file = &at("seconds");
            return invalid(format!(
                "{file}: seconds {} is shorter than one cycle of {b} frames at {} Hz ({} s); give at least that, or a smaller buffer or a higher rate",
                spec.seconds,
                spec.rate,
                fugue_graph::short_number(period)
            ));
        }
    }
    if let Some(h) = spec.histogram_buffer {
        if !spec.buffers.contains(&h) {
            let file = &at("histogram_buffer");
            return invalid(format!(
                "{file}: histogram_buffer {h} is not among the buffers {:?}: the histograms are of the runs at one of them",
                spec.buffers
            ));
        }
    }
    for (field, twice) in [
        ("graphs", report::first_twice(&spec.graphs)),
        ("executors", report::first_twice(&spec.executors)),
        ("threads", report::first_twice(&spec.threads)),
        ("buffers", report::first_twice(&spec.buffers)),
        ("loads", report::first_twice(&spec.loads)),
    ] {
        if let Some(v) = twice {
            let file = &at(field);
            return invalid(format!("{file}: `{field}` names {v} twice"));
        }
    }
    if spec.busy_threads > 1024 {
        let file = &at("busy_threads");
        return invalid(format!(
            "{file}: busy_threads must be at most 1024, not {}",
            spec.busy_threads
        ));
    }
    if spec.loads.iter().any(|l| l == "busy")
        && spec.busy_command.is_none()
        && spec.busy_threads == 0
    {
        let file = &at("busy_threads");
        return invalid(format!(
            "{file}: the busy load with busy_threads = 0 would be idle; give busy_threads of 1 or more, or a busy_command"
        ));
    }
    if let Some(c) = spec.busy_command.as_deref().filter(|c| c.trim().is_empty()) {
        let file = &at("busy_command");
        return invalid(format!(
            "{file}: busy_command `{c}` is empty; name a command that keeps the machine busy until stopped, or leave it out (busy_threads then compute)"
        ));
    }
    for l in &spec.loads {
        if l != "idle" && l != "busy" {
            let file = &at("loads");
            return invalid(format!("{file}: unknown load `{l}` (idle or busy)"));
        }
    }
    let jack = match spec.backend.as_str() {
        "clocked" => false,
        "jack" => true,
        b => {
            let file = &at("backend");
            return invalid(format!("{file}: unknown backend `{b}` (clocked or jack)"));
        }
    };
    let deadline = match spec.deadline.as_str() {
        "period" => Deadline::Period,
        "double" => Deadline::Double,
        d => {
            let file = &at("deadline");
            return invalid(format!("{file}: unknown deadline `{d}` (period or double)"));
        }
    };
    if let Some(m) = spec.max_spread_pct {
        if !(m.is_finite() && m > 0.0) {
            let file = &at("max_spread_pct");
            return invalid(format!("{file}: max_spread_pct must be a positive number"));
        }
    }
    if !spec.executors.iter().any(|e| e == "seq") {
        let file = &at("executors");
        return invalid(format!(
            "{file}: `executors` must name seq: every other executor's speedup is measured against the seq run beside it"
        ));
    }
    let repeats = args.repeats.or(spec.repeats).unwrap_or(DEFAULT_REPEATS);
    if repeats == 0 || repeats > 1000 {
        let file = &at("repeats");
        return invalid(format!(
            "{file}: repeats must be between 1 and 1000, not {repeats}"
        ));
    }
    // The runs the spec asks for, counted before anything is loaded or listed.
    let per_graph: u128 = spec
        .executors
        .iter()
        .map(|e| threads_of(e, &spec).len() as u128)
        .sum::<u128>()
        * spec.buffers.len() as u128
        * spec.loads.len() as u128;
    let configs_n = per_graph * spec.graphs.len() as u128;
    let runs = configs_n * repeats as u128;
    if runs > MAX_RUNS as u128 {
        let times = if repeats == 1 {
            "once".to_string()
        } else {
            format!("{repeats} times")
        };
        return invalid(format!(
            "{file}: the spec asks for {runs} runs ({configs_n} configurations of graph, executor, threads, buffer and load, {times} each), more than the limit of {MAX_RUNS}; name fewer graphs, executors, threads, buffers or loads, or fewer repeats"
        ));
    }
    let root = spec_dir.join(spec.root.clone().unwrap_or_else(|| ".".into()));
    let mut graphs = Vec::new();
    let mut sources = Vec::new();
    for g in &spec.graphs {
        let l = crate::shapes::load(g, None, &root)
            .map_err(|e| BenchError::Input(format!("{}: {e}", at("graphs"))))?;
        // Two graphs of one label would be one in every file the study writes.
        if let Some(i) = graphs.iter().position(|(label, _)| *label == l.label) {
            let file = &at("graphs");
            return invalid(format!(
                "{file}: graphs `{}` and `{g}` are both labelled `{}` (the name its figures and files take); keep one",
                spec.graphs[i], l.label
            ));
        }
        // A graph that cannot be built at a buffer of the study is said now (and by
        // --dry-run), not at its first run, hours into the study.
        for &b in &spec.buffers {
            fugue_engine::Engine::build(
                &l.graph,
                &args.registry,
                f64::from(spec.rate),
                b,
                &ExecutorChoice::default(),
                false,
            )
            .map_err(|e| {
                BenchError::Input(format!(
                    "{}: graph `{g}` cannot run at {b} frames and {} Hz: {}",
                    at("graphs"),
                    spec.rate,
                    fugue_engine::host::session::message(&e)
                ))
            })?;
        }
        graphs.push((l.label, l.graph));
        sources.push(l.source);
    }
    let execs: Vec<Exec> = spec
        .executors
        .iter()
        .enumerate()
        .map(|(order, name)| {
            choice_for(name, 2, false, false).map(|_| Exec {
                order,
                name: name.clone(),
                later_threads: false,
            })
        })
        .collect::<Result<_, BenchError>>()
        .map_err(|e| BenchError::Input(format!("{}: {e}", at("executors"))))?;
    // The configurations: seq and auto once per graph/buffer/load, others once per thread
    // count.
    let mut configs = Vec::new();
    for gi in 0..graphs.len() {
        for e in &execs {
            for t in threads_of(&e.name, &spec) {
                for &b in &spec.buffers {
                    for l in &spec.loads {
                        configs.push(Config {
                            graph: gi,
                            exec: e.clone(),
                            threads: t,
                            buffer: b,
                            load: l.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(Prepared {
        spec,
        text,
        label,
        graphs,
        sources,
        configs,
        repeats,
        jack,
        deadline,
    })
}

/// The thread counts a study runs executor `name` at: seq and auto once per graph, buffer
/// and load (auto's candidates bounded by the spec's largest thread count), the others at
/// each of the spec's.
fn threads_of(name: &str, spec: &Spec) -> Vec<usize> {
    if name == AUTO {
        vec![spec.threads.iter().copied().max().unwrap_or(1)]
    } else if single(name) {
        vec![1]
    } else {
        spec.threads.clone()
    }
}

/// A configuration in one line: graph, executor, threads, buffer, load.
pub(super) fn describe(graphs: &[(String, TaskGraph)], c: &Config) -> String {
    format!(
        "{} {} t{} b{} {}",
        graphs[c.graph].0, c.exec.name, c.threads, c.buffer, c.load
    )
}
