//! The study's README and HTML report.

use std::time::Duration;

use super::findings::{self, count};
use super::spec::{PlotCtx, Row, Spec};
use super::AUTO;
use crate::report::table::{escape as esc, escape_attr, url_path};
use crate::report::{Align, Table};
use crate::stats::{median, min_max};

/// What the README and the report say besides the rows.
pub struct Info<'a> {
    /// The command line.
    pub command: &'a str,
    /// The commit, when run from a git checkout.
    pub commit: Option<&'a str>,
    /// The machine, in words.
    pub machine: &'a str,
    /// `rustc -V`.
    pub rustc: &'a str,
    /// The spec.
    pub spec: &'a Spec,
    /// Its path, or `built-in studies/default.toml`.
    pub spec_label: &'a str,
    /// Its text.
    pub spec_text: &'a str,
    /// Where each graph came from.
    pub sources: &'a [String],
    /// The graphs' labels.
    pub names: &'a [String],
    /// Runs of each configuration.
    pub repeats: usize,
    /// The spread bound of the trusted figures, percent.
    pub max_spread: f64,
    /// Configurations.
    pub configurations: usize,
    /// How long the study took.
    pub took: Duration,
    /// The buffer size of the histograms.
    pub hist_buffer: usize,
    /// The wake-up latency per executor ([`wake_table`]).
    pub wake: &'a Table,
    /// `auto` against the executors it replaces ([`auto_check`]), when the spec has `auto`.
    pub auto: Option<&'a AutoCheck>,
    /// The closing line: how far the figures can be trusted ([`findings::trust_line`]).
    pub trust: &'a str,
}

impl Info<'_> {
    fn commit_text(&self) -> String {
        match self.commit {
            Some(c) => format!("Commit {c}."),
            None => "Not run from a git checkout: no commit recorded.".into(),
        }
    }

    fn deadline_text(&self) -> &'static str {
        if self.spec.deadline == "double" {
            "twice the buffer period"
        } else {
            "one buffer period"
        }
    }
}

/// Why the study's speedups are lower than the back-to-back benchmarks' (`fugue bench
/// table`, `bench-results/table`), in one paragraph.
pub const PACED_VS_BACK_TO_BACK: &str = "The study runs each cycle paced, as an audio server does: one cycle per buffer period, the rest of the period idle. Between cycles the workers spin for a while and then sleep, so each cycle starts by waking them, on cores that may have slowed down or been given to other jobs meanwhile, and the nodes' data has often left the caches. `fugue bench table` (and the figures in `bench-results/table`) runs the cycles back to back instead: the workers stay awake and the caches warm, which measures the executor's best case. The same graph and buffer size therefore shows a lower speedup here than there (the 101-node rake at 512 frames gains less paced than back to back); the paced figure is the one a real-time user gets, the back-to-back one bounds it.";

/// What the wake-up latency is, in one paragraph.
pub const WAKE_TEXT: &str = "The time from a cycle's start to the moment the last of the executor's other threads began on it (it noticed the new cycle, whether it was sleeping or spinning), measured on every cycle: the wait that a paced cycle pays before it runs on all its threads. The figures are the median over the graphs and buffer sizes of each configuration's median and 99th percentile (median repeat), and the largest 99th percentile, in µs.";

/// The wake-up latency per executor, thread count and load: over the graphs and buffer
/// sizes, the median of the configurations' median and 99th percentile, and the largest 99th
/// percentile (µs). Configurations with one thread have no wake-up and are left out.
pub fn wake_table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        ("executor", Align::Left),
        ("threads", Align::Right),
        ("load", Align::Left),
        ("configurations", Align::Right),
        ("median (µs)", Align::Right),
        ("p99 (µs)", Align::Right),
        ("largest p99 (µs)", Align::Right),
    ]);
    let mut keys: Vec<(String, usize, String)> = Vec::new();
    for r in rows.iter().filter(|r| r.s.woken > 0) {
        let k = (r.cfg.exec.name.clone(), r.cfg.threads, r.cfg.load.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (name, threads, load) in keys {
        let sel: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.s.woken > 0
                    && r.cfg.exec.name == name
                    && r.cfg.threads == threads
                    && r.cfg.load == load
            })
            .collect();
        let med = |f: &dyn Fn(&Row) -> u64| {
            let v: Vec<f64> = sel.iter().map(|r| f(r) as f64 / 1000.0).collect();
            median(&v)
        };
        t.row(vec![
            name,
            threads.to_string(),
            load,
            sel.len().to_string(),
            format!("{:.1}", med(&|r| r.s.wake_median_ns)),
            format!("{:.1}", med(&|r| r.s.wake_p99_ns)),
            format!(
                "{:.1}",
                sel.iter().map(|r| r.s.wake_p99_ns).max().unwrap_or(0) as f64 / 1000.0
            ),
        ]);
    }
    t
}

/// How close `auto` must come to the best executor's mean cycle (5 %) ...
pub const AUTO_BEST_MARGIN: f64 = 0.05;
/// ... and to seq's (3 %), at each graph, buffer size and load.
pub const AUTO_SEQ_MARGIN: f64 = 0.03;

/// `auto` against the executors it replaces: a row per graph, buffer size and load, and a
/// sentence counting the rows that meet both margins.
pub struct AutoCheck {
    /// The rows.
    pub table: Table,
    /// `N of M (graph, buffer, load) ...`.
    pub sentence: String,
}

/// Compares `auto` with the others at each graph, buffer size and load where it ran: its
/// mean cycle (median repeat) against the fastest other configuration's (any executor and
/// thread count, flagged or not: auto competes with every figure measured beside it) and
/// against seq's, with what it chose in each repeat. `None` when no configuration is `auto`.
pub fn auto_check(rows: &[Row], names: &[String]) -> Option<AutoCheck> {
    let autos: Vec<&Row> = rows.iter().filter(|r| r.cfg.exec.name == AUTO).collect();
    if autos.is_empty() {
        return None;
    }
    let mut t = Table::new([
        ("graph", Align::Left),
        ("buffer", Align::Right),
        ("load", Align::Left),
        ("seq (µs)", Align::Right),
        ("best other (µs)", Align::Right),
        ("auto (µs)", Align::Right),
        ("auto / best", Align::Right),
        ("auto / seq", Align::Right),
        ("auto chose (each repeat)", Align::Left),
        ("within both", Align::Left),
    ]);
    let mut ok = 0;
    for a in &autos {
        let same = |r: &&Row| {
            r.cfg.graph == a.cfg.graph && r.cfg.buffer == a.cfg.buffer && r.cfg.load == a.cfg.load
        };
        let others: Vec<&Row> = rows
            .iter()
            .filter(same)
            .filter(|r| r.cfg.exec.name != AUTO)
            .collect();
        let Some(best) = others
            .iter()
            .min_by(|x, y| x.s.mean_ns.total_cmp(&y.s.mean_ns))
        else {
            continue;
        };
        let seq = others.iter().find(|r| r.cfg.exec.name == "seq");
        let to_best = a.s.mean_ns / best.s.mean_ns;
        let to_seq = seq.map(|s| a.s.mean_ns / s.s.mean_ns);
        let good =
            to_best <= 1.0 + AUTO_BEST_MARGIN && to_seq.is_none_or(|x| x <= 1.0 + AUTO_SEQ_MARGIN);
        ok += usize::from(good);
        let us = |ns: f64| format!("{:.2}", ns / 1000.0);
        let who = if best.cfg.exec.name == "seq" {
            "seq".to_string()
        } else {
            format!("{} {}t", best.cfg.exec.name, best.cfg.threads)
        };
        t.row(vec![
            names.get(a.cfg.graph).cloned().unwrap_or_default(),
            a.cfg.buffer.to_string(),
            a.cfg.load.clone(),
            seq.map_or(String::new(), |s| us(s.s.mean_ns)),
            format!("{who} {}", us(best.s.mean_ns)),
            us(a.s.mean_ns),
            format!("{to_best:.3}"),
            to_seq.map_or(String::new(), |x| format!("{x:.3}")),
            a.chose.join("; "),
            if good { "yes" } else { "no" }.to_string(),
        ]);
    }
    let n = t.len();
    Some(AutoCheck {
        table: t,
        sentence: format!(
            "auto's mean cycle (median repeat) came within {:.0} % of the fastest other configuration's and within {:.0} % of seq's at {ok} of {n} (graph, buffer size, load).",
            AUTO_BEST_MARGIN * 100.0,
            AUTO_SEQ_MARGIN * 100.0,
        ),
    })
}

/// The README of the study's folder.
pub fn readme(info: &Info<'_>) -> String {
    let spec = info.spec;
    let graphs: Vec<String> = info
        .names
        .iter()
        .zip(info.sources)
        .map(|(n, s)| format!("  - `{n}`: {s}\n"))
        .collect();
    format!(
        "# Scheduling study\n\n\
         Graphs run in real time, cycle after cycle, with each executor; per-cycle times, \
         deadline misses and histograms over the buffer size and the machine's load. See \
         `report.html` for the figures and their readings.\n\n\
         - Command: `{}`\n\
         - Spec: `{}` (copied below)\n\
         - {}\n\
         - Machine: {}; possibly shared with other jobs while the study ran, so each \
         configuration ran {} times (repeats interleaved, seq and the executors compared with it \
         one after the other) and the figures are medians over the repeats: seq's median cycle \
         time (warm-up left out), and each executor's speedup over the seq run beside it. A \
         figure whose repeats disagree by more than {:.0} % (the confidence interval of their \
         median, studies/README.md), or whose speedup exceeds the thread count, the cores or the \
         graph's width, is flagged and not stated as a finding.\n\
         - Trust: {}\n\
         - Versions: {}; fugue {}\n\
         - Backend: {}, {} Hz, {} s per run, deadline = {} ({}), {} configurations x {} repeats in {:.0} s\n\
         - Graphs:\n{}\n\
         ## Paced, not back to back\n\n{}\n\n\
         ## Wake-up latency\n\n{}\n\n{}\n{}\
         ## Files\n\n\
         - `summary.csv`: one row per configuration: the repeats, the mean cycle time (median \
         repeat, with the smallest and largest repeat), `spread_pct` (the width of the \
         confidence interval of the row's figure, its speedup or seq's median cycle, in % of \
         it), median, p99, max cycle time (µs) of the median repeat (by median cycle; over all its \
         cycles, where the speedups and `spread_pct` leave the warm-up out), deadline misses and miss rate, overruns (times a \
         cycle ended more than a period past the next one's start, after which the clock skips \
         ahead: cycles not run, as an audio server's xrun), records dropped by a full statistics ring, \
         steals, the wake-up latency of the median repeat (median and p99, µs), the speedup over seq (median over the repeats of seq's median cycle divided by the \
         executor's, each repeat paired with the seq run beside it, with the smallest and \
         largest), `trusted`, `doubt` (why a figure is not stated as a finding), \
         `verified` (every timed cycle's output equalled seq's, bit for bit: a difference \
         fails the study, which then writes nothing), and `chose` (for `auto`, the candidate \
         it kept in each repeat, in the order they ran).\n\
         - `raw.csv.gz`: one row per cycle of every run (`graph,executor,threads,buffer,load,repeat,cycle,start_ns,duration_ns,deadline_ns,missed,late_ns,frames,steals,wake_ns`; `wake_ns` is the cycle's wake-up latency, 0 with one thread).\n\
         - `speedup`, `percentiles`, `misses`, `histogram-GRAPH` as `.svg` and `.png`.\n\
         - `report.html`: all of it on one page.\n\n\
         ## Spec\n\n```toml\n{}```\n",
        info.command,
        info.spec_label,
        info.commit_text(),
        info.machine,
        info.repeats,
        info.max_spread,
        info.trust,
        info.rustc,
        env!("CARGO_PKG_VERSION"),
        spec.backend,
        spec.rate,
        spec.seconds,
        spec.deadline,
        info.deadline_text(),
        info.configurations,
        info.repeats,
        info.took.as_secs_f64(),
        graphs.concat(),
        PACED_VS_BACK_TO_BACK,
        WAKE_TEXT,
        if info.wake.is_empty() {
            "No executor ran on more than one thread.\n".to_string()
        } else {
            info.wake.markdown()
        },
        match info.auto {
            Some(a) => format!(
                "\n## auto against the others\n\n{}\n\n{}",
                a.sentence,
                a.table.markdown()
            ),
            None => String::new(),
        },
        info.spec_text,
    )
}

/// report.html: the readings per graph, the figures and the summary tables.
pub fn report_html(ctx: &PlotCtx<'_>, figures: &[String], info: &Info<'_>) -> String {
    let spec = info.spec;
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fugue scheduling study</title>\n<style>body{font-family:sans-serif;max-width:1250px;margin:auto;padding:1em;color:#222}table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}td.l{text-align:left}img{width:100%;border:1px solid #ddd;margin:0.5em 0}.miss{background:#fdd}.best{background:#dfd;font-weight:bold}.doubt{color:#888;font-style:italic}</style></head><body>\n");
    h.push_str(&format!(
        "<h1>fugue scheduling study</h1>\n<p>Machine: {} (shared with other jobs during the study). Each configuration ran {} for {} s, the repeats interleaved; figures are medians over the repeats, error bars span the smallest to the largest repeat. A figure is <i>not</i> stated as a finding, and is flagged, when its speedup exceeds its thread count, the machine's {} cores or the graph's width (such a speedup is impossible: the timing was disturbed), or when its repeats disagree by more than {:.0} % (seq: its median cycle times, warm-up left out; the others: their speedups over the seq run beside each repeat). {} Backend {}, {} Hz; a cycle misses its deadline when it takes longer than {}.</p>\n",
        esc(info.machine),
        count(info.repeats, "time", "times"),
        spec.seconds,
        ctx.cores,
        info.max_spread,
        esc(&info.commit_text()),
        esc(&spec.backend),
        spec.rate,
        info.deadline_text(),
    ));
    h.push_str(&format!(
        "<h2>Paced, not back to back</h2>\n<p>{}</p>\n",
        esc(PACED_VS_BACK_TO_BACK)
    ));
    // Readings per graph: only trusted figures are stated.
    h.push_str("<h2>What the numbers show</h2>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        h.push_str(&reading(ctx, info, g, gname));
    }
    h.push_str(&format!(
        "<p><b>How far to trust these figures.</b> {}</p>\n",
        esc(info.trust)
    ));
    h.push_str(&figure_sections(ctx, figures, info));
    h.push_str(&format!(
        "<h2>Wake-up latency</h2><p>{}</p>{}\n",
        esc(WAKE_TEXT),
        if info.wake.is_empty() {
            "<p>No executor ran on more than one thread.</p>".to_string()
        } else {
            info.wake.html()
        }
    ));
    if let Some(a) = info.auto {
        h.push_str(&format!(
            "<h2>auto against the others</h2><p>{}</p>{}\n",
            esc(&a.sentence),
            a.table.html()
        ));
    }
    // The summary table, per graph.
    h.push_str("<h2>Summary</h2><p>Times in µs, of the median repeat; spread: the width of the confidence interval of the row's figure (its speedup, or seq's median cycle), in % of it. Green: the shortest trusted median cycle of its graph, buffer and load; red: deadline misses; grey italics: not to be trusted (the note says why).</p>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        h.push_str(&summary_section(ctx, g, gname));
    }
    h.push_str("</body></html>\n");
    h
}

/// The reading of graph `g` (`gname`): a paragraph of what its trusted figures show, and
/// which figures are not stated as findings.
fn reading(ctx: &PlotCtx<'_>, info: &Info<'_>, g: usize, gname: &str) -> String {
    let mut p = format!(
        "<p><b>{}</b> ({}): ",
        esc(gname),
        esc(info.sources.get(g).map(String::as_str).unwrap_or(""))
    );
    let said: Vec<String> = findings::sentences(ctx, g).iter().map(|s| esc(s)).collect();
    p.push_str(&said.join(" "));
    if let Some(d) = findings::doubt_sentence(ctx, g) {
        p.push_str(&format!(" <span class=\"doubt\">{}</span>", esc(&d)));
    }
    p.push_str("</p>\n");
    p
}

/// A heading, a reading and the image of each figure.
fn figure_sections(ctx: &PlotCtx<'_>, figures: &[String], info: &Info<'_>) -> String {
    let no_misses = ctx.rows.iter().all(|r| r.s.misses == 0);
    let mut h = String::new();
    for f in figures {
        let text = if f == "percentiles" {
            "Each bar runs from the median to the 99th percentile of the cycle time (median repeat); the thin whisker on the dot spans the repeats' medians; the cross is the longest cycle; the dashed line is the deadline. The y axis is logarithmic."
        } else if f == "misses" {
            if no_misses {
                "The share of cycles that took longer than their deadline (median repeat): no configuration's median repeat missed one, so the figure is empty (the summary counts every repeat)."
            } else {
                "The share of cycles that took longer than their deadline (median repeat)."
            }
        } else if f == "speedup" {
            "The median cycle time of seq divided by the executor's, at the same graph, buffer size and load: the median over the repeats, each paired with the seq run beside it, with error bars from the smallest to the largest. Above the dashed line the executor is faster; the dotted lines are the thread counts (no speedup can exceed them). Hollow points are flagged: not to be trusted."
        } else if ctx.loads.len() > 1 {
            "The distribution of cycle times (as the 2019 report's figures 17-19), idle and busy load overlaid, first repeat; the last bin holds every longer cycle."
        } else {
            "The distribution of cycle times (as the 2019 report's figures 17-19), first repeat; the last bin holds every longer cycle."
        };
        h.push_str(&format!(
            "<h2>{}</h2><p>{}{}</p><img src=\"{}\" alt=\"{}\">\n",
            esc(f),
            text,
            if f.starts_with("histogram") {
                format!(" Buffer: {} frames.", info.hist_buffer)
            } else {
                String::new()
            },
            url_path(&format!("{f}.svg")),
            escape_attr(f),
        ));
    }
    h
}

/// Graph `g`'s (`gname`) part of the summary: a sentence on its deadlines and its table.
fn summary_section(ctx: &PlotCtx<'_>, g: usize, gname: &str) -> String {
    let mut h = String::new();
    let grows: Vec<&Row> = ctx.rows.iter().filter(|r| r.cfg.graph == g).collect();
    // A configuration whose clock skipped cycles (overruns) did not meet every deadline
    // either, even where the cycles it ran did; every repeat counts.
    let clean = grows
        .iter()
        .filter(|r| r.every_repeat.misses == 0 && r.every_repeat.overruns == 0)
        .count();
    if let Some(worst) = grows.iter().max_by_key(|r| r.s.p99_ns) {
        h.push_str(&format!(
            "<p><b>{}</b>: {clean} of {} configurations met every deadline in every repeat (no cycle late, none skipped by the clock). The largest 99th percentile (median repeat), {:.0} µs, is {} at {} frames under load {} (deadline {:.0} µs); the longest single cycle of the graph, in any repeat, took {:.0} µs.</p>\n",
            esc(gname),
            grows.len(),
            worst.s.p99_ns as f64 / 1000.0,
            esc(&worst.cfg.exec.name),
            worst.cfg.buffer,
            esc(&worst.cfg.load),
            worst.s.deadline_ns as f64 / 1000.0,
            grows
                .iter()
                .map(|r| r.every_repeat.max_ns)
                .max()
                .unwrap_or(0) as f64
                / 1000.0
        ));
    }
    h.push_str(&format!("<h3>{}</h3>", esc(gname)));
    h.push_str(&summary_table(ctx, g).html());
    h
}

/// Graph `g`'s summary table: a row per configuration, per load and buffer size, classed
/// as the fastest trusted, missing deadlines or not to be trusted.
fn summary_table(ctx: &PlotCtx<'_>, g: usize) -> Table {
    let mut t = Table::new([
        ("executor", Align::Left),
        ("threads", Align::Right),
        ("buffer", Align::Right),
        ("load", Align::Left),
        ("cycles", Align::Right),
        ("mean", Align::Right),
        ("median", Align::Right),
        ("p99", Align::Right),
        ("max", Align::Right),
        ("deadline", Align::Right),
        ("misses", Align::Right),
        ("miss rate", Align::Right),
        ("spread", Align::Right),
        ("speedup (range)", Align::Right),
        ("note", Align::Left),
    ]);
    for l in ctx.loads {
        for &b in ctx.buffers {
            let rows: Vec<&Row> = ctx
                .rows
                .iter()
                .filter(|r| r.cfg.graph == g && r.cfg.buffer == b && &r.cfg.load == l)
                .collect();
            let best = rows
                .iter()
                .filter(|r| r.doubt.is_none())
                .map(|r| r.s.median_ns)
                .min();
            for r in rows {
                let class = if r.doubt.is_some() {
                    Some("doubt")
                } else if Some(r.s.median_ns) == best {
                    Some("best")
                } else if r.s.misses > 0 {
                    Some("miss")
                } else {
                    None
                };
                t.row_with_class(class, summary_cells(r));
            }
        }
    }
    t
}

/// The cells of `r`'s line in a summary table.
fn summary_cells(r: &Row) -> Vec<String> {
    let us = |ns: f64| format!("{:.1}", ns / 1000.0);
    vec![
        r.cfg.exec.name.clone(),
        r.cfg.threads.to_string(),
        r.cfg.buffer.to_string(),
        r.cfg.load.clone(),
        r.s.cycles.to_string(),
        us(r.s.mean_ns),
        us(r.s.median_ns as f64),
        us(r.s.p99_ns as f64),
        us(r.s.max_ns as f64),
        format!("{:.0}", r.s.deadline_ns as f64 / 1000.0),
        r.s.misses.to_string(),
        format!("{:.2} %", r.s.miss_rate() * 100.0),
        format!("{:.0} %", r.spread_pct),
        r.speedup
            .map(|s| {
                let (lo, hi) = min_max(&r.speedups);
                format!("×{s:.2} ({lo:.2}–{hi:.2})")
            })
            .unwrap_or_default(),
        r.doubt.clone().unwrap_or_default(),
    ]
}
