//! The study's files: README.md, raw.csv, summary.csv and the plots.

use std::path::Path;

use super::figures::{Misses, Throughput};
use fugue_engine::host::Mode;

use super::{median, HostBench, HostBenchConfig, Summary};
use crate::error::BenchError;
use crate::machine::{Machine, Versions};
use crate::report::plot;
use crate::report::{self, Csv};

/// The files a study writes: a run refuses to replace them without `--force`.
pub const FILES: [&str; 6] = [
    "README.md",
    "raw.csv",
    "summary.csv",
    "throughput.svg",
    "ceiling.svg",
    "misses.svg",
];

/// Writes the study into `dir`: `README.md` (command, commit, machine, findings), `raw.csv`
/// (one row per measurement), `summary.csv` (one row per point), `throughput.svg/png`, and
/// with a real-time part `misses.svg/png`.
pub fn write(
    dir: &Path,
    c: &HostBenchConfig,
    b: &HostBench,
    command: &str,
    force: bool,
) -> Result<(), BenchError> {
    report::folder::as_one_set(dir, || write_files(dir, c, b, command, force))
}

/// [`write`]'s files, each given its name when the set is.
fn write_files(
    dir: &Path,
    c: &HostBenchConfig,
    b: &HostBench,
    command: &str,
    force: bool,
) -> Result<(), BenchError> {
    report::folder::check(dir, report::Existing::Files(&FILES), force)?;
    report::create_dir(dir)?;
    write_csvs(dir, c, b)?;
    let mut panels: Vec<(String, usize)> = Vec::new();
    for p in &b.offline {
        if !panels.iter().any(|(g, t)| g == &p.graph && *t == p.threads) {
            panels.push((p.graph.clone(), p.threads));
        }
    }
    // A figure this study has no part for is not left from an earlier one (the folder's
    // files are replaced: `check` refused them without --force).
    if b.offline.is_empty() {
        report::folder::remove_figure(dir, "throughput");
        report::folder::remove_figure(dir, "ceiling");
    }
    if b.realtime.is_empty() {
        report::folder::remove_figure(dir, "misses");
    }
    if !b.offline.is_empty() {
        for (name, fraction) in [("throughput", false), ("ceiling", true)] {
            let figure = Throughput {
                bench: b,
                panels: panels.clone(),
                fraction,
            };
            for ext in ["svg", "png"] {
                plot::write(
                    &dir.join(format!("{name}.{ext}")),
                    (560 * panels.len().max(1) as u32, 420),
                    &figure,
                )?;
            }
        }
    }
    if !b.realtime.is_empty() {
        let mut panels: Vec<(String, usize, usize)> = Vec::new();
        for p in &b.realtime {
            if !panels
                .iter()
                .any(|(g, t, k)| g == &p.graph && *t == p.threads && *k == p.buffer)
            {
                panels.push((p.graph.clone(), p.threads, p.buffer));
            }
        }
        let size = (480 * panels.len().max(1) as u32, 400);
        let figure = Misses { bench: b, panels };
        for ext in ["svg", "png"] {
            plot::write(&dir.join(format!("misses.{ext}")), size, &figure)?;
        }
    }
    let mut md = readme_offline(c, b, command);
    if !b.realtime.is_empty() {
        md.push_str("\n## Real time: the largest N held with no deadline miss\n\nA run holds its N when no cycle missed its deadline and none was dropped (an overrun: a cycle that started more than a period late, after which the clock resynchronises).\n\n| graph | threads | mode | buffer | N held |\n|---|---:|---|---:|---:|\n");
        for ((g, t, m, buf), n) in b.max_held() {
            md.push_str(&format!("| {g} | {t} | {m} | {buf} | {n} |\n"));
        }
        md.push_str(
            "\n| graph | threads | mode | buffer | N | cycles | misses | overruns |\n|---|---:|---|---:|---:|---:|---:|---:|\n",
        );
        for p in &b.realtime {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
                p.graph, p.threads, p.mode, p.buffer, p.n, p.cycles, p.misses, p.overruns
            ));
        }
    }
    if !b.warnings.is_empty() {
        md.push_str("\n## Said by the hosts\n\n");
        for w in &b.warnings {
            md.push_str(&format!("- {w}\n"));
        }
    }
    if !b.refused.is_empty() {
        md.push_str("\n## Refused\n\n");
        for (g, m, n, why, t) in &b.refused {
            md.push_str(&format!(
                "- {g}, {}, {m}, N={n}: {why}\n",
                fugue_engine::report::counted(*t, "thread")
            ));
        }
    }
    md.push_str(
        "\nFiles: `raw.csv` (one row per instance and point, per engine of the ceiling beside each point, whose `point_mode` and `point_instances` name that point, and per real-time run), `summary.csv` (its `handovers_per_s`: graphs handed by a thread that fell behind to one ahead, per second, `docs/host.md`)",
    );
    if !b.offline.is_empty() {
        md.push_str(", `throughput.svg`/`.png` (aggregate against N per mode), `ceiling.svg`/`.png` (the aggregate as a fraction of the ceiling against N per mode, per graph and thread count)");
    }
    if !b.realtime.is_empty() {
        md.push_str(", `misses.svg`/`.png` (real time: the share of cycles that missed against N, per graph and buffer)");
    }
    md.push_str(".\n");
    report::write_atomic(&dir.join("README.md"), md.as_bytes())
}

/// `raw.csv` (one row per instance and point, per ceiling engine, per real-time run) and
/// `summary.csv` (one row per offline point).
fn write_csvs(dir: &Path, c: &HostBenchConfig, b: &HostBench) -> Result<(), BenchError> {
    let mut raw = Csv::new(&[
        "phase",
        "graph",
        "mode",
        "buffer",
        "instances",
        "instance",
        "cycles",
        "seconds",
        "share_ns",
        "misses",
        "overruns",
        "threads",
        "repeat",
        "point_mode",
        "point_instances",
    ]);
    for p in &b.ceiling {
        for (i, n) in p.cycles.iter().enumerate() {
            raw.row([
                "ceiling".to_string(),
                p.graph.clone(),
                "seq".to_string(),
                c.offline_buffer.to_string(),
                p.threads.to_string(),
                i.to_string(),
                n.to_string(),
                format!("{:.6}", p.seconds),
                String::new(),
                String::new(),
                String::new(),
                p.threads.to_string(),
                p.repeat.to_string(),
                p.mode.name().to_string(),
                p.n.to_string(),
            ]);
        }
    }
    for p in &b.offline {
        for (i, s) in p.shares_ns.iter().enumerate() {
            raw.row([
                "offline".to_string(),
                p.graph.clone(),
                p.mode.name().to_string(),
                c.offline_buffer.to_string(),
                p.n.to_string(),
                i.to_string(),
                p.cycles.to_string(),
                format!("{:.6}", p.seconds),
                format!("{s:.0}"),
                String::new(),
                String::new(),
                p.threads.to_string(),
                p.repeat.to_string(),
                String::new(),
                String::new(),
            ]);
        }
    }
    for p in &b.realtime {
        raw.row([
            "realtime".to_string(),
            p.graph.clone(),
            p.mode.name().to_string(),
            p.buffer.to_string(),
            p.n.to_string(),
            String::new(),
            p.cycles.to_string(),
            format!("{:.3}", c.rt_seconds),
            String::new(),
            p.misses.to_string(),
            p.overruns.to_string(),
            p.threads.to_string(),
            String::new(),
            String::new(),
            String::new(),
        ]);
    }
    raw.write(&dir.join("raw.csv"))?;
    let summaries = b.summaries();
    let mut summary = Csv::new(&[
        "graph",
        "mode",
        "instances",
        "aggregate_per_s",
        "vs_n1",
        "fairness",
        "threads",
        "ceiling_per_s",
        "of_ceiling",
        "cycle_us",
        "serial_us",
        "busy_share",
        "inflation",
        "repeats",
        "of_ceiling_min",
        "of_ceiling_max",
        "handovers_per_s",
    ]);
    let opt = |v: Option<f64>, digits: usize| v.map_or(String::new(), |f| format!("{f:.digits$}"));
    for p in &summaries {
        summary.row([
            p.graph.clone(),
            p.mode.name().to_string(),
            p.n.to_string(),
            opt(p.aggregate, 1),
            opt(vs_n1(&summaries, p), 3),
            format!("{:.3}", p.fairness),
            p.threads.to_string(),
            opt(p.ceiling, 1),
            opt(p.fraction, 3),
            format!("{:.2}", p.cycle_ns / 1e3),
            format!("{:.2}", p.serial_ns / 1e3),
            format!("{:.3}", p.busy),
            opt(p.inflation, 3),
            p.repeats.to_string(),
            opt(p.fraction_min, 3),
            opt(p.fraction_max, 3),
            format!("{:.1}", p.handovers_per_s),
        ]);
    }
    summary.write(&dir.join("summary.csv"))
}

/// The median aggregate of `p` over that of its graph, threads and mode at N = 1.
fn vs_n1(summaries: &[Summary], p: &Summary) -> Option<f64> {
    let one = summaries
        .iter()
        .find(|q| q.graph == p.graph && q.threads == p.threads && q.mode == p.mode && q.n == 1)?;
    Some(p.aggregate? / one.aggregate?)
}

/// The README's head and its offline part: the ceiling, every point against it, and the
/// findings.
fn readme_offline(c: &HostBenchConfig, b: &HostBench, command: &str) -> String {
    let v = Versions::detect();
    let mut md = String::new();
    md.push_str("# The shared-runtime study (`fugue bench host`)\n\n");
    md.push_str(&format!(
        "Command: `{command}`\n\nCommit {} ({}), {}, fugue {}.\n\nMachine: {}. Load average at the end: {}.\n\n",
        v.short_commit,
        v.date,
        v.rustc,
        v.fugue,
        Machine::detect(),
        crate::machine::load_average().unwrap_or_else(|| "?".into())
    ));
    let real_time = if c.buffers.is_empty() {
        "Real time: not measured (`--offline-only`).".to_string()
    } else {
        format!(
            "Real time (clocked): {:?} frames, {} s per run, {}; N grows until the first run with a miss.",
            c.buffers,
            c.rt_seconds,
            match c.rt_priority {
                Some(p) => format!("the threads at SCHED_FIFO {p} and the audio thread one above (`--rt`) where granted"),
                None => "normal priority".to_string(),
            }
        )
    };
    md.push_str(&format!(
        "Threads: {:?}. Grain: {} (how the pool runs the graphs). Offline: {} frames, {} s of wall time per point. {real_time}\n\n",
        c.threads, c.grain.name(), c.offline_buffer, c.offline_seconds,
    ));
    let slices = super::slices_of(c.offline_seconds);
    md.push_str(&format!(
        "Each offline point is measured beside its own ceiling, in turns: {slices} slices of {:.3} s of the host and {slices} of the ceiling's engines (host, ceiling, ceiling, host, host, ...; the other side waits, asleep), so that a slow spell of the machine weighs on both sides of the fraction alike.\n\n",
        c.offline_seconds / slices as f64
    ));
    let repeats = c.repeats.max(1);
    if repeats > 1 {
        md.push_str(&format!(
            "Offline, {repeats} repeats. Each figure below is the median over the repeats; `range` is the lowest and the highest fraction of the ceiling.\n\n"
        ));
    } else {
        md.push_str(
            "Each point is one run (no repeats, `--repeats` gives more): read the figures as indications, not as medians.\n\n",
        );
    }
    let cores = fugue_exec::placement::allowed_cores().len();
    let over: Vec<String> = c
        .threads
        .iter()
        .filter(|&&t| t > cores)
        .map(|t| t.to_string())
        .collect();
    let shared = if over.is_empty() {
        String::new()
    } else {
        format!(
            "At {} threads, more than the {cores} cores this process may use, the engines share cores (engine i on core i modulo {cores}): that ceiling is not a machine of as many cores, and its fractions say how the host shares cores, not how it scales.\n\n",
            over.join(", ")
        )
    };
    md.push_str(&format!("## The ceiling\n\nAt T threads, the ceiling is T sequential engines of the same graph side by side, each on its own thread pinned to its own core (the cores the host's threads use), run in the same study for as long as each point: what the cores do with no host at all. Every offline point is given as a fraction of the ceiling measured beside it; below, the ceilings of all the points of a graph and thread count (their spread is the machine's).\n\n{shared}| graph | threads | points | ceiling (instance-cycles/s), median | lowest | highest | per engine, slowest / fastest (median) |\n|---|---:|---:|---:|---:|---:|---:|\n"));
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for p in &b.ceiling {
        if !keys.contains(&(p.graph.as_str(), p.threads)) {
            keys.push((p.graph.as_str(), p.threads));
        }
    }
    for (graph, threads) in keys {
        let ps = b.ceilings(graph, threads);
        let aggregates: Vec<f64> = ps.iter().map(|p| p.aggregate()).collect();
        let evenness: Vec<f64> = ps
            .iter()
            .map(|p| {
                let lo = p.cycles.iter().copied().min().unwrap_or(0) as f64;
                let hi = p.cycles.iter().copied().max().unwrap_or(1).max(1) as f64;
                lo / hi
            })
            .collect();
        md.push_str(&format!(
            "| {graph} | {threads} | {} | {:.0} | {:.0} | {:.0} | {:.2} |\n",
            ps.len(),
            median(&aggregates).unwrap_or(f64::NAN),
            aggregates.iter().copied().fold(f64::INFINITY, f64::min),
            aggregates.iter().copied().fold(0.0, f64::max),
            median(&evenness).unwrap_or(f64::NAN),
        ));
    }
    md.push_str("\n## Offline: aggregate throughput (instance-cycles per second)\n\n");
    md.push_str(
        "| graph | threads | mode | N | aggregate/s | of the ceiling | range | vs N=1 | fairness | cycle µs | serial µs | busy | inflation |\n|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let summaries = b.summaries();
    let two = |v: Option<f64>| v.map_or("-".to_string(), |f| format!("{f:.2}"));
    for p in &summaries {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {}-{} | {} | {:.2} | {:.1} | {:.1} | {:.2} | {} |\n",
            p.graph,
            p.threads,
            p.mode,
            p.n,
            p.aggregate.map_or("-".to_string(), |a| format!("{a:.0}")),
            two(p.fraction),
            two(p.fraction_min),
            two(p.fraction_max),
            two(vs_n1(&summaries, p)),
            p.fairness,
            p.cycle_ns / 1e3,
            p.serial_ns / 1e3,
            p.busy,
            two(p.inflation),
        ));
    }
    md.push_str("\nAggregate: every instance's cycles per second together; vs N=1: the aggregate over that of one instance in the same mode and threads (`-` where N = 1 was not run); fairness: the smallest instance's work per cycle (the time its units ran, all threads) over the largest one's (every instance runs every cycle, so below 1 means one instance's nodes ran slower than another's); cycle: the host's mean cycle; serial: its part on the audio thread alone (commands, mix, statistics); busy: of the threads' time in the parallel part, the share spent running units (the rest is looking for work and waiting); inflation: an instance's units' time per cycle over a sequential engine's cycle in the ceiling (1: the nodes run as fast as alone; `-` where there is no ceiling to compare with). In `raw.csv`, `share_ns` is an instance's work per cycle, in ns.\n");
    md.push_str("\n## Findings\n\n");
    for f in findings(b) {
        md.push_str(&format!("- {f}\n"));
    }
    md
}

/// One sentence per (graph, threads, mode): the median fraction of the ceiling reached (with
/// its range over the repeats), at the smallest and the largest N of at least the threads
/// (where the host has enough graphs to fill its threads), and the lowest median of any N.
pub fn findings(b: &HostBench) -> Vec<String> {
    let summaries = b.summaries();
    let mut out = Vec::new();
    let mut keys: Vec<(&str, usize, Mode)> = Vec::new();
    for p in &summaries {
        let k = (p.graph.as_str(), p.threads, p.mode);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (g, t, m) in keys {
        let points: Vec<&Summary> = summaries
            .iter()
            .filter(|p| p.graph == g && p.threads == t && p.mode == m && p.fraction.is_some())
            .collect();
        let full: Vec<&&Summary> = points.iter().filter(|p| p.n >= t).collect();
        let f = |p: &Summary| p.fraction.unwrap_or(f64::NAN);
        let Some(worst) = points.iter().min_by(|a, b| f(a).total_cmp(&f(b))) else {
            continue;
        };
        let range = |p: &Summary| {
            if p.repeats > 1 {
                format!(
                    " (range {:.2}-{:.2})",
                    p.fraction_min.unwrap_or(f64::NAN),
                    p.fraction_max.unwrap_or(f64::NAN)
                )
            } else {
                String::new()
            }
        };
        let mut line = format!("{g}, {}, {m}:", fugue_engine::report::counted(t, "thread"));
        if let (Some(first), Some(last)) = (full.first(), full.last()) {
            if first.n == last.n {
                line.push_str(&format!(
                    " {:.2}{} of the ceiling at N={};",
                    f(first),
                    range(first),
                    first.n
                ));
            } else {
                line.push_str(&format!(
                    " {:.2}{} of the ceiling at N={}, {:.2}{} at N={};",
                    f(first),
                    range(first),
                    first.n,
                    f(last),
                    range(last),
                    last.n
                ));
            }
        }
        line.push_str(&format!(" lowest {:.2} (N={}).", f(worst), worst.n));
        // k engines side by side, each alone on its core, are the bound the host is judged
        // by; above it, the fraction says something else than how the host uses the cores.
        // (Engines sharing cores, past the cores, are said apart: not flagged here.)
        let alone = t <= fugue_exec::placement::allowed_cores().len();
        if let Some((top, top_n)) = points
            .iter()
            .map(|p| (f(p), p.n))
            .reduce(|a, b| if b.0 > a.0 { b } else { a })
            .filter(|&(x, _)| alone && x > 1.05)
        {
            line.push_str(&format!(
                " Above 1 ({top:.2} at N={top_n}): the host ran faster than the engines side by side, either because other work slowed the ceiling's run, or because the host's nodes ran faster than the engines' (`inflation` below 1); neither is a gain over the cores."
            ));
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{CeilingPoint, OfflinePoint};

    /// A point of `cycles` cycles of one instance in one second, on one thread.
    fn point(cycles: u64) -> OfflinePoint {
        OfflinePoint {
            graph: "g".into(),
            threads: 1,
            mode: Mode::Shared,
            n: 1,
            repeat: 0,
            cycles,
            seconds: 1.0,
            shares_ns: vec![1.0],
            cycle_ns: 1.0,
            parallel_ns: 1.0,
            handovers: 0,
        }
    }

    /// A median fraction above 1.05 is said with what it can mean; one below is not.
    #[test]
    fn a_fraction_above_the_ceiling_is_said_with_its_causes() {
        let ceiling = CeilingPoint {
            graph: "g".into(),
            threads: 1,
            repeat: 0,
            mode: Mode::Shared,
            n: 1,
            cycles: vec![1000],
            seconds: 1.0,
        };
        let bench = |cycles| HostBench {
            ceiling: vec![ceiling.clone()],
            offline: vec![point(cycles)],
            ..HostBench::default()
        };
        let above = findings(&bench(1200));
        assert_eq!(above.len(), 1, "{above:?}");
        assert!(
            above[0].starts_with("g, 1 thread, shared: 1.20 of the ceiling at N=1;")
                && above[0].contains(
                    "Above 1 (1.20 at N=1): the host ran faster than the engines side by side"
                ),
            "{}",
            above[0]
        );
        let below = findings(&bench(950));
        assert!(!below[0].contains("Above 1"), "{}", below[0]);
    }
}
