//! The study's README and HTML report.

use std::path::Path;
use std::time::Duration;

use super::spec::{PlotCtx, Row, Spec};
use crate::report::table::escape as esc;
use crate::report::{Align, Table};
use crate::stats::median;

/// The README of the study's folder.
#[allow(clippy::too_many_arguments)]
pub fn readme(
    command: &str,
    commit: &str,
    machine: &str,
    rustc: &str,
    spec: &Spec,
    spec_path: &Path,
    runs: usize,
    took: Duration,
    spec_text: &str,
) -> String {
    format!(
        "# Scheduling study\n\n\
         Graphs run in real time, cycle after cycle, with each executor; per-cycle times, \
         deadline misses and histograms over the buffer size and the machine's load. See \
         `report.html` for the figures and their readings.\n\n\
         - Command: `{command}`\n\
         - Spec: `{}` (copied below)\n\
         - Commit: {commit}\n\
         - Machine: {machine}; **shared with other jobs while the study ran**: figures are noisy, \
         every configuration ran once.\n\
         - Versions: {rustc}; fugue {}\n\
         - Backend: {}, {} Hz, {} s per run, deadline = {} ({}), {} runs in {:.0} s\n\n\
         ## Files\n\n\
         - `summary.csv`: one row per configuration: mean, median, p99, max cycle time (µs), \
         deadline misses and miss rate, overruns (cycles that started more than a period late), \
         records dropped by a full statistics ring, steals, speedup of the mean over seq at the \
         same graph/buffer/load, and `verified` (every timed cycle's output equalled seq's, bit for bit: a difference fails the study, which then writes nothing).\n\
         - `raw.csv.gz`: one row per cycle of every run (`cycle,start_ns,duration_ns,deadline_ns,missed,late_ns,frames,steals`).\n\
         - `percentiles`, `misses`, `speedup`, `histogram-GRAPH` as `.svg` and `.png`.\n\
         - `report.html`: all of it on one page.\n\n\
         ## Spec\n\n```toml\n{spec_text}```\n",
        spec_path.display(),
        env!("CARGO_PKG_VERSION"),
        spec.backend,
        spec.rate,
        spec.seconds,
        spec.deadline,
        if spec.deadline == "double" {
            "twice the buffer period"
        } else {
            "one buffer period"
        },
        runs,
        took.as_secs_f64(),
    )
}

/// report.html: the readings per graph, the figures and the summary tables.
pub fn report_html(
    ctx: &PlotCtx<'_>,
    figures: &[String],
    machine: &str,
    commit: &str,
    hist_buffer: usize,
    spec: &Spec,
) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fugue scheduling study</title>\n<style>body{font-family:sans-serif;max-width:1250px;margin:auto;padding:1em;color:#222}table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}td.l{text-align:left}img{width:100%;border:1px solid #ddd;margin:0.5em 0}.miss{background:#fdd}.best{background:#dfd;font-weight:bold}</style></head><body>\n");
    h.push_str(&format!(
        "<h1>fugue scheduling study</h1>\n<p>Machine: {} (shared with other jobs during the study, so the figures are noisy; every configuration ran once for {} s). Commit {}. Backend {}, {} Hz; a cycle misses its deadline when it takes longer than {}.</p>\n",
        esc(machine),
        spec.seconds,
        esc(commit),
        esc(&spec.backend),
        spec.rate,
        if spec.deadline == "double" { "twice the buffer period" } else { "one buffer period" }
    ));
    // Readings per graph.
    h.push_str("<h2>What the numbers show</h2>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        let mut p = format!("<p><b>{}</b>: ", esc(gname));
        let mut parts = Vec::new();
        for l in ctx.loads {
            let mut best = Vec::new();
            for &b in ctx.buffers {
                let winner = ctx
                    .execs
                    .iter()
                    .filter_map(|e| ctx.find(g, &e.name, b, l))
                    .min_by(|a, b| a.s.mean_ns.total_cmp(&b.s.mean_ns));
                if let Some(w) = winner {
                    best.push(format!(
                        "{} at {b} frames ({:.0} µs, ×{:.2} vs seq)",
                        w.cfg.exec.name,
                        w.s.mean_ns / 1000.0,
                        w.speedup.unwrap_or(1.0)
                    ));
                }
            }
            parts.push(format!(
                "load {l}, the fastest mean cycle is {}",
                best.join(", ")
            ));
        }
        p.push_str(&parts.join("; "));
        p.push_str(". ");
        let misses: Vec<&Row> = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g && r.s.misses > 0)
            .collect();
        if misses.is_empty() {
            p.push_str("No configuration missed a deadline.");
        } else {
            let mut worst = misses.clone();
            worst.sort_by(|a, b| b.s.miss_rate().total_cmp(&a.s.miss_rate()));
            let list: Vec<String> = worst
                .iter()
                .take(4)
                .map(|r| {
                    format!(
                        "{} at {} frames, load {} ({:.1} %)",
                        r.cfg.exec.name,
                        r.cfg.buffer,
                        r.cfg.load,
                        r.s.miss_rate() * 100.0
                    )
                })
                .collect();
            p.push_str(&format!(
                "Deadlines were missed in {} of {} configurations; most often by {}.",
                misses.len(),
                ctx.rows.iter().filter(|r| r.cfg.graph == g).count(),
                list.join(", ")
            ));
        }
        let seq_rows: Vec<&Row> = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g && r.cfg.exec.name == "seq")
            .collect();
        if !seq_rows.is_empty() {
            let use_of = |r: &&Row| r.s.mean_ns / 1000.0 / r.period_us * 100.0;
            let lo = seq_rows.iter().map(use_of).fold(f64::INFINITY, f64::min);
            let hi = seq_rows.iter().map(use_of).fold(0.0, f64::max);
            p.push_str(&format!(
                " The sequential cycle takes {lo:.1} % to {hi:.1} % of the buffer period on average{}. ",
                if hi < 25.0 {
                    ", so the work per cycle is small against the cost of waking and synchronising a second thread"
                } else {
                    ""
                }
            ));
        }
        let mut best_par: Option<(String, f64)> = None;
        for e in ctx.execs.iter().filter(|e| e.name != "seq") {
            let sp: Vec<f64> = ctx
                .rows
                .iter()
                .filter(|r| r.cfg.graph == g && r.cfg.exec.name == e.name)
                .filter_map(|r| r.speedup)
                .collect();
            if sp.is_empty() {
                continue;
            }
            let med = median(&sp);
            if best_par.as_ref().is_none_or(|(_, m)| med > *m) {
                best_par = Some((e.name.clone(), med));
            }
        }
        if let Some((name, med)) = best_par {
            p.push_str(&format!(
                "The best parallel executor here is {name} (median speedup ×{med:.2} over the buffer sizes and loads). "
            ));
        }
        let parallel_wins = ctx
            .rows
            .iter()
            .filter(|r| {
                r.cfg.graph == g && r.cfg.exec.name != "seq" && r.speedup.unwrap_or(0.0) > 1.05
            })
            .count();
        p.push_str(&format!(
            "{} parallel configuration(s) beat seq by more than 5 %.</p>\n",
            parallel_wins
        ));
        h.push_str(&p);
    }
    for f in figures {
        let text = if f == "percentiles" {
            "Each bar runs from the median to the 99th percentile of the cycle time; the cross is the longest cycle; the dashed line is the deadline. The y axis is logarithmic."
        } else if f == "misses" {
            "The share of cycles that took longer than their deadline."
        } else if f == "speedup" {
            "The mean cycle time of seq divided by the executor's, at the same graph, buffer size and load; above the dashed line the executor is faster."
        } else {
            "The distribution of cycle times (as the 2019 report's figures 17-19), idle and busy load overlaid; the last bin holds every longer cycle."
        };
        h.push_str(&format!(
            "<h2>{}</h2><p>{}{}</p><img src=\"{f}.svg\" alt=\"{f}\">\n",
            esc(f),
            text,
            if f.starts_with("histogram") {
                format!(" Buffer: {hist_buffer} frames.")
            } else {
                String::new()
            }
        ));
    }
    // The summary table, per graph.
    h.push_str("<h2>Summary</h2><p>Times in µs. Green: the fastest mean of its graph, buffer and load; red: deadline misses.</p>\n");
    for (g, gname) in ctx.names.iter().enumerate() {
        let grows: Vec<&Row> = ctx.rows.iter().filter(|r| r.cfg.graph == g).collect();
        let clean = grows.iter().filter(|r| r.s.misses == 0).count();
        if let Some(worst) = grows.iter().max_by_key(|r| r.s.p99_ns) {
            h.push_str(&format!(
                "<p><b>{}</b>: {clean} of {} configurations met every deadline. The largest 99th percentile, {:.0} µs, is {} at {} frames under load {} (deadline {:.0} µs); the longest single cycle of the graph took {:.0} µs.</p>\n",
                esc(gname),
                grows.len(),
                worst.s.p99_ns as f64 / 1000.0,
                esc(&worst.cfg.exec.name),
                worst.cfg.buffer,
                esc(&worst.cfg.load),
                worst.s.deadline_ns as f64 / 1000.0,
                grows.iter().map(|r| r.s.max_ns).max().unwrap_or(0) as f64 / 1000.0
            ));
        }
        h.push_str(&format!("<h3>{}</h3>", esc(gname)));
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
            ("speedup", Align::Right),
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
                    .map(|r| r.s.mean_ns)
                    .fold(f64::INFINITY, f64::min);
                for r in rows {
                    let class = if r.s.mean_ns == best {
                        Some("best")
                    } else if r.s.misses > 0 {
                        Some("miss")
                    } else {
                        None
                    };
                    let us = |ns: f64| format!("{:.1}", ns / 1000.0);
                    t.row_with_class(
                        class,
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
                            r.speedup.map(|s| format!("×{s:.2}")).unwrap_or_default(),
                        ],
                    );
                }
            }
        }
        h.push_str(&t.html());
    }
    h.push_str("</body></html>\n");
    h
}
