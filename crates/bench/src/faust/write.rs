//! The files of `fugue bench faust`: README.md, raw.csv, summary.csv and the speed-up plot.

use std::path::Path;

use plotters::prelude::*;

use super::{Contender, FaustBench, FaustBenchConfig, Summary};
use crate::error::BenchError;
use crate::machine::{command_output, Machine, Versions};
use crate::report::plot::{self, err, Area, Figure};
use crate::report::{self, Csv};

/// The files [`write()`] writes.
pub const FILES: [&str; 5] = [
    "README.md",
    "raw.csv",
    "summary.csv",
    "speedup.svg",
    "speedup.png",
];

/// Writes the benchmark into `dir`: `README.md` (command, machine, versions, a table per
/// program, findings), `raw.csv` (one row per run), `summary.csv` (one row per contender and
/// thread count) and `speedup.svg`/`.png`.
pub fn write(
    dir: &Path,
    c: &FaustBenchConfig,
    b: &FaustBench,
    command: &str,
    force: bool,
) -> Result<(), BenchError> {
    report::folder::as_one_set(dir, || write_files(dir, c, b, command, force))
}

/// [`write`]'s files, each given its name when the set is.
fn write_files(
    dir: &Path,
    c: &FaustBenchConfig,
    b: &FaustBench,
    command: &str,
    force: bool,
) -> Result<(), BenchError> {
    report::folder::check(dir, report::Existing::Files(&FILES), force)?;
    report::create_dir(dir)?;
    let mut raw = Csv::new(&[
        "program",
        "contender",
        "threads",
        "run",
        "whole_s",
        "block_us",
        "max_diff",
    ]);
    for s in &b.samples {
        raw.row([
            s.program.clone(),
            s.contender.label().to_string(),
            s.threads.to_string(),
            s.run.to_string(),
            format!("{:.6}", s.whole_s),
            format!("{:.3}", s.block_us),
            format!("{:e}", s.max_diff),
        ]);
    }
    raw.write(&dir.join("raw.csv"))?;
    let rows = b.summaries(c.tolerance);
    let mut summary = Csv::new(&[
        "program",
        "contender",
        "threads",
        "runs",
        "block_us_median",
        "block_us_min",
        "block_us_max",
        "block_speedup",
        "whole_s_median",
        "whole_s_min",
        "whole_s_max",
        "whole_speedup",
        "max_diff",
        "runs_beyond_tolerance",
    ]);
    for r in &rows {
        summary.row([
            r.program.clone(),
            r.contender.label().to_string(),
            r.threads.to_string(),
            r.runs.to_string(),
            format!("{:.3}", r.block.0),
            format!("{:.3}", r.block.1),
            format!("{:.3}", r.block.2),
            report::opt(r.block_speedup, 3),
            format!("{:.4}", r.whole.0),
            format!("{:.4}", r.whole.1),
            format!("{:.4}", r.whole.2),
            report::opt(r.whole_speedup, 3),
            format!("{:e}", r.max_diff),
            r.beyond.to_string(),
        ]);
    }
    summary.write(&dir.join("summary.csv"))?;
    let programs: Vec<String> = c.programs.iter().map(|p| p.name.clone()).collect();
    let figure = Speedups {
        rows: &rows,
        programs: &programs,
    };
    for ext in ["svg", "png"] {
        plot::write(
            &dir.join(format!("speedup.{ext}")),
            (520 * programs.len().max(1) as u32, 420),
            &figure,
        )?;
    }
    report::write_atomic(
        &dir.join("README.md"),
        readme(c, b, &rows, command).as_bytes(),
    )
}

/// The README's text.
fn readme(c: &FaustBenchConfig, b: &FaustBench, rows: &[Summary], command: &str) -> String {
    let v = Versions::detect();
    let first = |cmd: &str, args: &[&str]| {
        command_output(cmd, args)
            .and_then(|s| s.lines().next().map(str::to_string))
            .unwrap_or_else(|| format!("{cmd} unknown"))
    };
    let mut md = String::from("# Faust's parallel modes against fugue (`fugue bench faust`)\n\n");
    md.push_str(&format!(
        "Command: `{command}`\n\nCommit {} ({}), {}, fugue {}; {}; {}.\n\nMachine: {}. Load average at the end: {}.\n\n",
        v.short_commit,
        v.date,
        v.rustc,
        v.fugue,
        first("faust", &["--version"]),
        first("g++", &["--version"]),
        Machine::detect(),
        crate::machine::load_average().unwrap_or_else(|| "?".into())
    ));
    md.push_str(&format!(
        "Each run: {} blocks of {} frames at {} Hz ({:.2} s of audio); {} runs of every contender, interleaved. \
         **Per block**: the blocks alone (the Faust driver's timed loop of `compute`; fugue's cycles, `cycles_s` of `fugue render --json`: from the first cycle to the last block written, the WAV file written by a thread of its own). \
         **Whole process**: from the start of the process to its end (fugue: reading the graph, compiling every Faust node with libfaust's LLVM backend, writing the WAV file; Faust: the instance's init, reading the input, writing the output; every run writes a new file, the previous run's removed and the disk synced before the timing starts). \
         Speed-ups are over each contender's own single-thread run (Faust's modes: the same mode on 1 thread, `OMP_NUM_THREADS=1`; fugue's executors: fugue seq), medians over the runs.\n\n\
         Faust's builds: `faust MODE -a driver.cpp PROGRAM` (the driver is `crates/bench/faust/driver.cpp`), then `g++ -O3` (`-fopenmp` for omp); the scheduler of `-sch` is the one Faust inlines, its threads set by `OMP_NUM_THREADS`. The driver flushes denormals to zero (FTZ and DAZ, inherited by the threads of -sch and -omp), as fugue does on every thread that runs a plan. \
         Outputs checked: fugue's against its own seq, bit for bit (a difference stops the benchmark); Faust's modes against its scalar build, at most {:e} apart (the `max diff` column: 0 means bit-identical; a run beyond it is counted there, and that row is left out of the findings).\n\n",
        b.blocks,
        c.block,
        c.rate,
        (b.blocks * c.block) as f64 / f64::from(c.rate),
        c.runs,
        c.tolerance
    ));
    for p in &c.programs {
        md.push_str(&format!(
            "## {}\n\nFaust: `{}`{}. fugue: `{}`.\n\n",
            p.name,
            p.dsp.display(),
            if p.params.is_empty() {
                String::new()
            } else {
                format!(", parameters {}", p.params.join(" "))
            },
            p.graph.display()
        ));
        md.push_str("| contender | threads | per block µs, median (min-max) | speed-up per block | whole process s, median (min-max) | speed-up whole | max diff |\n|---|---:|---|---:|---|---:|---:|\n");
        for r in rows.iter().filter(|r| r.program == p.name) {
            md.push_str(&format!(
                "| {} | {} | {:.2} ({:.2}-{:.2}) | {} | {:.3} ({:.3}-{:.3}) | {} | {} |\n",
                r.contender.label(),
                r.threads,
                r.block.0,
                r.block.1,
                r.block.2,
                r.block_speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                r.whole.0,
                r.whole.1,
                r.whole.2,
                r.whole_speedup.map_or("-".into(), |x| format!("{x:.2}x")),
                match (r.max_diff, r.beyond) {
                    (0.0, _) => "0".to_string(),
                    (d, 0) => format!("{d:.1e}"),
                    (d, n) => format!("**{d:.1e}: {n} of {} runs beyond the tolerance**", r.runs),
                }
            ));
        }
        if let Some((_, d)) = b.cross.iter().find(|(n, _)| *n == p.name) {
            md.push_str(&format!(
                "\nfugue seq against Faust's scalar build (two compilers on the same music, the voices summed in another order): largest difference {d:.1e}.\n"
            ));
        }
        let builds: Vec<String> = b
            .builds
            .iter()
            .filter(|(n, _, _)| *n == p.name)
            .map(|(_, k, s)| format!("{} {s:.1} s", k.label()))
            .collect();
        md.push_str(&format!(
            "Build times (faust and g++): {}.\n\n",
            builds.join(", ")
        ));
    }
    md.push_str("## Findings\n\n");
    for f in findings_of(rows) {
        md.push_str(&format!("- {f}\n"));
    }
    md.push_str("\nFiles: `raw.csv` (one row per run), `summary.csv` (one row per contender and thread count), `speedup.svg`/`.png` (speed-up per block against threads, one panel per program).\n");
    md
}

/// What the benchmark found: for each program, the best of fugue and of Faust's parallel
/// modes at the most threads, per block and whole process.
pub fn findings(b: &FaustBench, tolerance: f64) -> Vec<String> {
    findings_of(&b.summaries(tolerance))
}

fn findings_of(rows: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    let mut programs: Vec<&str> = Vec::new();
    for r in rows {
        if !programs.contains(&r.program.as_str()) {
            programs.push(&r.program);
        }
    }
    for p in programs {
        let mine: Vec<&Summary> = rows.iter().filter(|r| r.program == p).collect();
        let Some(top) = mine.iter().map(|r| r.threads).max() else {
            continue;
        };
        let best = |set: &[Contender]| {
            mine.iter()
                .filter(|r| set.contains(&r.contender) && r.threads == top && r.beyond == 0)
                // The largest speed-up over its own one-thread run; among equal ones (every
                // contender is 1.00x at one thread) the shortest block.
                .max_by(|a, b| {
                    a.block_speedup
                        .unwrap_or(0.0)
                        .total_cmp(&b.block_speedup.unwrap_or(0.0))
                        .then(b.block.0.total_cmp(&a.block.0))
                })
                .copied()
        };
        let say = |r: &Summary| {
            format!(
                "{} {:.2}x per block ({:.2} µs), {:.2}x whole process",
                r.contender.label(),
                r.block_speedup.unwrap_or(f64::NAN),
                r.block.0,
                r.whole_speedup.unwrap_or(f64::NAN)
            )
        };
        let fugue = best(&[Contender::FugueWs, Contender::FugueStatic]);
        let faust = best(&[Contender::FaustSch, Contender::FaustOmp]);
        let vec = mine
            .iter()
            .find(|r| r.contender == Contender::FaustVec)
            .map(|r| {
                format!(
                    "; Faust's -vec on one thread: {:.2} µs per block",
                    r.block.0
                )
            })
            .unwrap_or_default();
        match (fugue, faust) {
            (Some(f), Some(g)) => {
                out.push(format!("{p}, {top} threads: {}; {}{vec}", say(f), say(g)))
            }
            (Some(f), None) => out.push(format!("{p}, {top} threads: {}{vec}", say(f))),
            (None, Some(g)) => out.push(format!("{p}, {top} threads: {}{vec}", say(g))),
            (None, None) => {}
        }
    }
    out
}

/// Speed-up per block against threads, one panel per program, a line per parallel
/// contender.
struct Speedups<'a> {
    rows: &'a [Summary],
    programs: &'a [String],
}

impl Figure for Speedups<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((1, self.programs.len().max(1)));
        for (area, p) in areas.iter().zip(self.programs) {
            let mine: Vec<&Summary> = self.rows.iter().filter(|r| &r.program == p).collect();
            let top = mine.iter().map(|r| r.threads).max().unwrap_or(1).max(2) as f64;
            let ymax = mine
                .iter()
                .filter_map(|r| r.block_speedup)
                .fold(top, f64::max)
                * 1.1;
            let mut chart = plot::chart(
                area,
                format!("{p}: speed-up per block"),
                20,
                50,
                1.0..top,
                0.0..ymax,
            )?;
            plot::mesh(&mut chart, "threads", "speed-up over its own 1-thread run")
                .draw()
                .map_err(err)?;
            plot::line(
                &mut chart,
                "ideal",
                plot::GREY,
                1,
                &[(1.0, 1.0), (top, top)],
            )?;
            for (i, c) in [
                Contender::FaustSch,
                Contender::FaustOmp,
                Contender::FugueWs,
                Contender::FugueStatic,
            ]
            .into_iter()
            .enumerate()
            {
                let mut points: Vec<(f64, f64)> = mine
                    .iter()
                    .filter(|r| r.contender == c)
                    .filter_map(|r| Some((r.threads as f64, r.block_speedup?)))
                    .collect();
                if matches!(c, Contender::FugueWs | Contender::FugueStatic) {
                    // fugue's executors start from its seq on one thread.
                    points.insert(0, (1.0, 1.0));
                }
                if points.len() > 1 {
                    plot::line(&mut chart, c.label(), plot::color(i + 1), 2, &points)?;
                }
            }
            plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        root.present().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(contender: Contender, threads: usize, speedup: f64, block_us: f64) -> Summary {
        Summary {
            program: "p".into(),
            contender,
            threads,
            runs: 1,
            whole: (1.0, 1.0, 1.0),
            block: (block_us, block_us, block_us),
            whole_speedup: Some(speedup),
            block_speedup: Some(speedup),
            max_diff: 0.0,
            beyond: 0,
        }
    }

    /// At one thread every contender is 1.00x its own run: the finding names the one of
    /// the shortest block (it named the last, the slowest).
    #[test]
    fn equal_speedups_are_decided_by_the_block() {
        let rows = [
            row(Contender::FaustSch, 1, 1.0, 7.0),
            row(Contender::FaustOmp, 1, 1.0, 17.0),
            row(Contender::FugueWs, 1, 1.0, 9.0),
            row(Contender::FugueStatic, 1, 1.0, 8.0),
        ];
        let f = findings_of(&rows);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].contains("(7.00 µs)") && f[0].contains("(8.00 µs)"),
            "{}",
            f[0]
        );
    }
}
