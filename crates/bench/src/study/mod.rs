//! The scheduling study: sweeps graphs × executors × threads × buffer sizes × machine load,
//! runs each configuration in real time (clocked or JACK backend) for a few seconds, and
//! writes a folder: README.md, raw per-cycle data (gzipped CSV), summary.csv, plots (SVG and
//! PNG) and report.html.
//!
//! Correctness before timing: each timed cycle's record carries the hash of that cycle's
//! output ([`fugue_engine::StatsOptions::hash_outputs`], taken on the audio thread after the
//! cycle's end time, so outside its measured duration but inside its period); after each run,
//! seq runs the same number of cycles on its own plan (silent inputs, as the clocked backend
//! feeds them and as the study's unconnected JACK input ports read) and every recorded hash
//! must equal seq's for the same cycle ([`crate::check::check_hashes`]). The first difference
//! fails the study before anything but the temporary raw file, which is removed, is written;
//! the configuration is then run again offline, cycle by cycle beside seq, to name the output
//! channel and sample.
//!
//! By job: `prepare` reads and checks the spec and lists the configurations, `measure` runs
//! and checks them and writes raw.csv.gz, `rows` puts the repeats together (summary.csv and
//! the plotted series), `figures` draws the figures and `page` writes README.md and
//! report.html; [`run`] calls them in that order.

mod figures;
mod findings;
mod measure;
pub use measure::stop_busy_load;
mod page;
mod prepare;
pub use prepare::{read_spec, MAX_SPEC_BYTES};
mod rows;
pub mod spec;
pub mod trust;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use self::measure::measure;
use self::prepare::{describe, prepare};
use self::rows::{aggregate, summary_csv, Series};
use self::spec::PlotCtx;
use crate::error::BenchError;
use crate::machine::{Machine, Versions};
use crate::progress::Progress;
use crate::report::{Existing, Folder};

/// The default spec, relative to the repository.
pub const DEFAULT_SPEC: &str = "studies/default.toml";

/// The default spec's text, built in: what runs when no spec is given and
/// [`DEFAULT_SPEC`] is not in the current folder (its graphs are generated, so it needs no
/// file).
pub const DEFAULT_SPEC_TEXT: &str = include_str!("../../../../studies/default.toml");

/// Runs of each configuration when neither the spec nor the command line says.
pub const DEFAULT_REPEATS: usize = 3;

/// The largest spread of a configuration's repeats (percent of the median) under which its
/// figures are stated as findings, when the spec does not say.
pub const DEFAULT_MAX_SPREAD_PCT: f64 = 20.0;

/// Time a run costs beyond its seconds (building the engine, starting the load, checking the
/// outputs against seq), for the estimate of [`plan`].
pub(crate) const RUN_OVERHEAD: Duration = Duration::from_millis(100);

/// The study's configuration.
#[derive(Clone, Debug)]
pub struct StudyConfig {
    /// The spec (TOML); `None`: [`DEFAULT_SPEC`] when it is there, else the built-in
    /// [`DEFAULT_SPEC_TEXT`].
    pub spec: Option<PathBuf>,
    /// The text of `spec`, when the caller read it already (a command line reads it where a
    /// signal can stop the read: a named pipe may never deliver it); `None`: read here.
    pub spec_text: Option<String>,
    /// The output folder.
    pub output: PathBuf,
    /// Replace the files of an existing, non-empty output folder.
    pub force: bool,
    /// Runs of each configuration, overriding the spec's `repeats`.
    pub repeats: Option<usize>,
    /// The command line, for the README.
    pub command: String,
    /// Set to stop: the current run ends early and the study is not written.
    pub stop: Arc<AtomicBool>,
    /// The kinds the graphs' nodes are built by.
    pub registry: fugue_dsp::Registry,
}

/// What the study did.
#[derive(Clone, Debug)]
pub struct StudyResult {
    /// The folder written.
    pub output: PathBuf,
    /// Runs made (configurations × repeats).
    pub runs: usize,
    /// Configurations.
    pub configurations: usize,
    /// Seconds it took.
    pub seconds: f64,
    /// Figures written (each as SVG and PNG).
    pub figures: usize,
    /// Cycles whose output was compared with seq's, over every run.
    pub checked_cycles: u64,
    /// Figures flagged as not to be trusted (not stated as findings).
    pub doubtful: usize,
    /// How many figures are trusted and how to trust more of them: the report's closing
    /// line.
    pub trust: String,
}

impl StudyResult {
    /// What the study did, in one sentence.
    pub fn sentence(&self) -> String {
        format!(
            "{}: {} runs ({} configurations) in {:.0} s, {} timed cycles checked bit-identical to seq; {} figure(s) flagged as not to be trusted; summary.csv, report.html, {} figures (SVG and PNG), raw.csv.gz",
            self.output.display(),
            self.runs,
            self.configurations,
            self.seconds,
            self.checked_cycles,
            self.doubtful,
            self.figures
        )
    }
}

/// What a study would run: [`plan`]'s answer, for `--dry-run`.
#[derive(Clone, Debug)]
pub struct StudyPlan {
    /// The spec read (a path, or `built-in studies/default.toml`).
    pub spec: String,
    /// One line per configuration: graph, executor, threads, buffer, load.
    pub configurations: Vec<String>,
    /// Runs of each configuration.
    pub repeats: usize,
    /// Seconds per run.
    pub seconds: f64,
    /// The estimated wall time of the whole study.
    pub estimate: Duration,
}

impl StudyPlan {
    /// The plan as text: the runs, then their number and the estimated time.
    pub fn text(&self) -> String {
        let mut t = String::new();
        for (i, c) in self.configurations.iter().enumerate() {
            t.push_str(&format!("{:>4}  {c}\n", i + 1));
        }
        let runs = self.configurations.len() * self.repeats;
        t.push_str(&format!(
            "{}: {} x {} = {} of {} s; about {} in all\n",
            self.spec,
            fugue_engine::report::counted(self.configurations.len(), "configuration"),
            fugue_engine::report::counted(self.repeats, "repeat"),
            fugue_engine::report::counted(runs, "run"),
            self.seconds,
            duration_text(self.estimate)
        ));
        t
    }
}

/// `1 h 05 min`, `13 min 20 s`, `42 s`.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// The spec's name of the executor that chooses itself ([`fugue_engine::ExecutorChoice::auto`]).
pub(crate) const AUTO: &str = "auto";

/// What [`run`] would run, without running it: the configurations, the repeats and the
/// estimated time. Checks the spec as `run` does.
pub fn plan(args: &StudyConfig) -> Result<StudyPlan, BenchError> {
    let p = prepare(args)?;
    let runs = (p.configs.len() * p.repeats) as u32;
    Ok(StudyPlan {
        spec: p.label.clone(),
        configurations: p.configs.iter().map(|c| describe(&p.graphs, c)).collect(),
        repeats: p.repeats,
        seconds: p.spec.seconds,
        estimate: p.per_run() * runs,
    })
}

/// Refuses, even with `--force`, an output folder where the study would write over its own
/// spec (a spec named `README.md`, `summary.csv`, a figure's name, in that folder).
fn refuse_replacing_spec(spec: &Path, output: &Path) -> Result<(), BenchError> {
    // The file itself, through any symbolic link to it (a link elsewhere to the output's
    // README.md is that README.md).
    let real = std::fs::canonicalize(spec).unwrap_or_else(|_| spec.to_path_buf());
    let folder = fugue_graph::read::folder_of(&real);
    let same = std::fs::canonicalize(folder)
        .ok()
        .is_some_and(|f| std::fs::canonicalize(output).is_ok_and(|o| o == f));
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned());
    let written = name.as_deref().is_some_and(|n| {
        ["README.md", "report.html", "summary.csv", "raw.csv.gz"].contains(&n)
            || n.ends_with(".svg")
            || n.ends_with(".png")
    });
    if same && written {
        return Err(BenchError::Input(format!(
            "the study writes its own {} into {}, over its spec {}; keep the spec outside the output folder, or name it otherwise",
            name.unwrap_or_default(),
            output.display(),
            spec.display()
        )));
    }
    Ok(())
}

/// The largest `summary.csv` of an earlier study read for the graphs it ran (a study's has a
/// few hundred rows; one far larger is not a study's).
const EARLIER_SUMMARY_MAX: u64 = 16 << 20;

/// The graphs an earlier study in `dir` ran, as its `summary.csv` names them (none when there
/// is no such file, or it is not a study's summary).
fn earlier_graphs(dir: &Path) -> Vec<String> {
    let path = dir.join("summary.csv");
    let small =
        std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= EARLIER_SUMMARY_MAX);
    let Some(text) = small.then(|| std::fs::read_to_string(&path).ok()).flatten() else {
        return Vec::new();
    };
    if !text.starts_with("graph,executor,") {
        return Vec::new();
    }
    let mut graphs = crate::report::first_column(&text);
    graphs.sort();
    graphs.dedup();
    graphs
}

/// Removes the histograms an earlier study left in `dir` (written over with `--force`) for
/// graphs this one did not run: `histogram-GRAPH.svg`/`.png` of each graph of `earlier` (the
/// graphs the earlier study's summary names) whose figure is not in `written`. Nothing else
/// is touched (a file of the same pattern that no study wrote stays); a file that cannot be
/// removed stays.
fn remove_stale_histograms(dir: &Path, earlier: &[String], written: &[String]) {
    for g in earlier {
        let stem = format!("histogram-{g}");
        if !written.contains(&stem) && !stem.contains(['/', '\\']) {
            crate::report::folder::remove_figure(dir, &stem);
        }
    }
}

/// Runs the study and writes its folder: raw.csv.gz as the runs go, then summary.csv, the
/// figures, README.md and report.html. Every configuration runs `repeats` times, the repeats
/// interleaved (all configurations once, then again), so that a slow spell of the machine
/// falls on every configuration rather than on one. Progress: one step per run.
pub fn run(args: &StudyConfig, progress: &mut dyn Progress) -> Result<StudyResult, BenchError> {
    let p = prepare(args)?;
    if let Some(spec) = &args.spec {
        refuse_replacing_spec(spec, &args.output)?;
    }
    if p.jack {
        measure::jack_server_answers()?;
    }
    // Set back when this function returns, whether the study ran to its end or not.
    let _kept = p.jack.then(measure::JackBufferKept::now);
    let cores = fugue_exec::placement::available_cores().max(1);
    // The configurations' own counts: seq runs on one thread whatever the spec's threads.
    if let Some(t) = p.configs.iter().map(|c| c.threads).find(|&t| t > cores) {
        progress.event(crate::progress::Event::Warning(&format!(
            "threads {t} in {} is more than the {cores} cores this process may use: those configurations' threads take turns on the cores, and their figures are not a {t}-core machine's",
            p.label
        )));
    }
    let dir = Folder::create(&args.output, Existing::Anything, args.force)?;
    // Read before this study's summary replaces it.
    let earlier = earlier_graphs(dir.path());
    let started = Instant::now();
    // The study's files are one set: a failure midway leaves the folder's earlier files as
    // they were; on any failure nothing new is left in the output folder (the temporary raw
    // file and the set's files are removed, and the folder too when this run created it).
    let written = crate::report::folder::as_one_set(dir.path(), || {
        let m = measure(&p, &dir, &args.stop, progress)?;
        let max_spread = p.spec.max_spread_pct.unwrap_or(DEFAULT_MAX_SPREAD_PCT);
        let rows = aggregate(&p.configs, &m.runs, &p.graphs, cores, max_spread);
        let names: Vec<String> = p.graphs.iter().map(|(n, _)| n.clone()).collect();
        dir.csv("summary.csv", &summary_csv(&rows, &names))?;
        // Before the relabelling: names as the spec gives them, with their thread counts apart.
        let auto = page::auto_check(&rows, &names);
        let series = Series::of(&p.configs, &p.spec.threads, &rows, &m.samples);
        let ctx = PlotCtx {
            rows: &series.rows,
            names: &names,
            execs: &series.execs,
            colors: &series.colors,
            buffers: &p.spec.buffers,
            loads: &p.spec.loads,
            threads: &p.spec.threads,
            cores,
        };
        let figures = figures::write_all(&dir, &ctx, &series.samples, p.hist_buffer())?;
        remove_stale_histograms(dir.path(), &earlier, &figures);
        let versions = Versions::detect();
        let commit = Some(versions.short_commit).filter(|c| !c.is_empty() && c != "unknown");
        let hw = Machine::detect();
        let machine = format!("{}, {} cores", hw.cpu, hw.cores);
        let wake = page::wake_table(&series.rows);
        let trust = findings::trust_line(
            &series.rows,
            &findings::TrustContext {
                spec_label: &p.label,
                repeats: p.repeats,
                seconds: p.spec.seconds,
                max_spread,
                rt: p.spec.rt,
                debug_build: cfg!(debug_assertions),
            },
        );
        let info = page::Info {
            command: &args.command,
            commit: commit.as_deref(),
            machine: &machine,
            rustc: &versions.rustc,
            spec: &p.spec,
            spec_label: &p.label,
            spec_text: &p.text,
            sources: &p.sources,
            names: &names,
            repeats: p.repeats,
            max_spread,
            configurations: p.configs.len(),
            took: started.elapsed(),
            hist_buffer: p.hist_buffer(),
            wake: &wake,
            auto: auto.as_ref(),
            trust: &trust,
        };
        dir.text("README.md", &page::readme(&info))?;
        dir.text("report.html", &page::report_html(&ctx, &figures, &info))?;
        Ok(StudyResult {
            output: args.output.clone(),
            runs: p.configs.len() * p.repeats,
            configurations: p.configs.len(),
            seconds: started.elapsed().as_secs_f64(),
            figures: figures.len(),
            checked_cycles: m.checked_cycles,
            doubtful: series.rows.iter().filter(|r| r.doubt.is_some()).count(),
            trust,
        })
    });
    written.inspect_err(|_| dir.remove_if_created())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    /// A study of `spec` into `dir`/out, `repeats` times.
    fn test_config(spec: std::path::PathBuf, dir: &Path, repeats: usize) -> StudyConfig {
        StudyConfig {
            spec: Some(spec),
            spec_text: None,
            output: dir.join("out"),
            force: false,
            repeats: Some(repeats),
            command: "test".into(),
            stop: Arc::new(AtomicBool::new(false)),
            registry: fugue_dsp::Registry::with_builtin_kinds(),
        }
    }

    /// A graph whose file name holds a comma is one quoted cell in raw.csv.gz, as in
    /// summary.csv: every row has the header's fields.
    #[test]
    fn raw_rows_quote_a_graph_name_with_a_comma() {
        use std::io::Read as _;
        let dir = std::env::temp_dir().join(format!("fugue-study-quote-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a,b.ag"),
            "o = { kind: \"osc\", freq: 440, };\ns = { kind: \"sink\", };\no.1 -> s.1;\n",
        )
        .unwrap();
        let spec = dir.join("spec.toml");
        std::fs::write(
            &spec,
            "graphs = [\"a,b.ag\"]\nexecutors = [\"seq\"]\nthreads = [1]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.05\n",
        )
        .unwrap();
        let r = run(&test_config(spec, &dir, 1), &mut NoProgress).unwrap();
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(r.output.join("raw.csv.gz")).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let mut lines = text.lines();
        let fields = lines.next().unwrap().split(',').count();
        let mut rows = 0;
        for line in lines {
            let rest = line
                .strip_prefix("\"a,b\",seq,")
                .unwrap_or_else(|| panic!("{line}"));
            assert_eq!(rest.split(',').count() + 2, fields, "{line}");
            rows += 1;
        }
        assert!(rows > 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_tiny_study_writes_its_summary() {
        let dir = std::env::temp_dir().join(format!("fugue-study-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let spec = dir.join("spec.toml");
        std::fs::write(
            &spec,
            "graphs = [\"gen:line:6\"]\nexecutors = [\"seq\", \"ws\", \"auto\"]\nthreads = [2]\nbuffers = [256]\nloads = [\"idle\"]\nseconds = 0.1\n",
        )
        .unwrap();
        let config = test_config(spec, &dir, 2);
        let r = run(&config, &mut NoProgress).unwrap();
        assert_eq!((r.runs, r.configurations), (6, 3));
        // 0.1 s at the default 44.1 kHz and 256 frames: 17 cycles a run, each checked, but
        // for a cycle the clock dropped because it began a period late (an overrun, on a
        // machine busy with other tests): at most one such a run here.
        assert!(
            (6 * 17 - 6..=6 * 17).contains(&r.checked_cycles),
            "{}",
            r.checked_cycles
        );
        let summary = std::fs::read_to_string(r.output.join("summary.csv")).unwrap();
        let rows: Vec<&str> = summary.lines().skip(1).collect();
        assert_eq!(rows.len(), 3, "{summary}");
        // The last column, `chose`, is auto's alone.
        assert!(
            rows[0].starts_with("line6,seq,1,256,idle,5804.99,2,") && rows[0].ends_with(",true,"),
            "{summary}"
        );
        assert!(rows[1].starts_with("line6,ws,2,256,idle,"), "{summary}");
        // auto's row names its choice in each of the two repeats. What it chooses in a run
        // of 17 clocked cycles depends on trials timed on this machine (seq, or a parallel
        // candidate that measured 5 % faster), so the test checks that each repeat names one
        // of the candidates, not which.
        assert!(rows[2].starts_with("line6,auto,"), "{summary}");
        let mut fields = rows[2].rsplit(',');
        let chose: Vec<&str> = fields.next().unwrap().split("; ").collect();
        // The column before, `verified`: every cycle matched seq's.
        assert_eq!(fields.next(), Some("true"), "{summary}");
        assert_eq!(chose.len(), 2, "{summary}");
        for c in chose {
            assert!(
                c == "seq" || c.starts_with("ws ") || c.starts_with("static "),
                "auto chose {c:?}: {summary}"
            );
        }
        let readme = std::fs::read_to_string(r.output.join("README.md")).unwrap();
        assert!(readme.contains("## auto against the others"), "{readme}");
        assert!(readme.contains("| line6 | 256 | idle |"), "{readme}");
        for f in [
            "README.md",
            "report.html",
            "raw.csv.gz",
            "speedup.svg",
            "histogram-line6.png",
        ] {
            assert!(r.output.join(f).is_file(), "{f}");
        }
        let html = std::fs::read_to_string(r.output.join("report.html")).unwrap();
        assert!(html.contains("<table><tr><th>executor</th>"), "{html}");
        // Written over with --force: an earlier study's histograms of another graph (one its
        // summary names) go; files of the user's stay, even named as a histogram.
        let summary = r.output.join("summary.csv");
        let mut text = std::fs::read_to_string(&summary).unwrap();
        let row = text.lines().nth(1).unwrap().to_string();
        text.push_str(&format!("old9{}\n", &row[row.find(',').unwrap()..]));
        std::fs::write(&summary, text).unwrap();
        for f in [
            "histogram-old9.svg",
            "histogram-old9.png",
            "notes.txt",
            "histogram-mine.png",
        ] {
            std::fs::write(r.output.join(f), "x").unwrap();
        }
        let config = StudyConfig {
            force: true,
            ..config
        };
        let r = run(&config, &mut NoProgress).unwrap();
        assert!(!r.output.join("histogram-old9.svg").exists());
        assert!(!r.output.join("histogram-old9.png").exists());
        assert!(r.output.join("notes.txt").is_file());
        assert!(r.output.join("histogram-mine.png").is_file());
        assert!(r.output.join("histogram-line6.png").is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
