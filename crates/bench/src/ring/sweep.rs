//! The ring sweep: the grid (capacities 1..65536 × implementations × 1-3 producers), plus the
//! padding, pinning, process and producers experiments ([`run`]); written as a folder
//! ([`Sweep::write`]): raw.csv (one row per run), summary.csv (median, spread, ratio to the
//! mutex/condvar baseline), throughput.svg and throughput.png (items/s against capacity, log
//! axes, with this machine's cache sizes as vertical lines in slots), producers.svg and
//! producers.png (items/s against producers, [`super::producers`]) and README.md (command,
//! commit, machine, versions, tables).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fugue_ring::Padding;

use super::point::{padding_name, run_point, Impl, Point, ProducerCommand};
use super::producers::{self, Plan};
use crate::error::{config, BenchError, Context as _};
use crate::machine::{Machine, Versions};
use crate::progress::{Event, Progress};
use crate::report::{Align, Csv, Existing, Folder, Table};
use crate::stats::Spread;

/// The capacities of the grid.
pub const CAPACITIES: [usize; 11] = [1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536];
const TABLE_CAPACITIES: [usize; 5] = [1, 8, 64, 1024, 65536];
const CALIBRATION_ITEMS: u64 = 300;
const MIN_ITEMS: u64 = 1_000;
const MAX_ITEMS: u64 = 4_000_000;
const FILES: [&str; 7] = [
    "raw.csv",
    "summary.csv",
    "README.md",
    "throughput.svg",
    "throughput.png",
    "producers.svg",
    "producers.png",
];

/// The sweep's configuration.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// Bytes per item.
    pub item_size: usize,
    /// Slot padding of the grid (the padding experiment uses the other one).
    pub padding: Padding,
    /// Runs per point (repeats are the outer loop).
    pub repeat: usize,
    /// Seconds each point aims to last (items are scaled to it).
    pub point_seconds: f64,
    /// The output folder.
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    pub force: bool,
    /// The command line, for the README.
    pub command: String,
    /// How the process experiment starts its producer processes.
    pub producer: ProducerCommand,
    /// The producers experiment.
    pub producers: Plan,
    /// Run the producers experiment only.
    pub only_producers: bool,
}

/// Key of a summary row: experiment, implementation, producers, capacity, padding, pinned,
/// processes.
pub type Key = (&'static str, Impl, usize, usize, &'static str, bool, bool);

/// One run of one point.
#[derive(Clone, Debug)]
pub struct Run {
    /// The point.
    pub key: Key,
    /// Items transferred (fewer than `planned` when the point hit its time cap).
    pub items: u64,
    /// Items planned.
    pub planned: u64,
    /// The consumer's time.
    pub seconds: f64,
    /// Items per second: those timed over `seconds` (with producer processes, the clock
    /// starts at item 0, so the items after it).
    pub rate: f64,
}

/// The sweep's results.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The output folder made for the run, taken away if it is dropped empty (a run that
    /// was stopped, or results never written).
    pub folder: std::sync::Arc<crate::report::folder::UntilWritten>,
    /// Every run.
    pub runs: Vec<Run>,
    /// Items per second per point: median, min, max, and the number of runs.
    pub summary: BTreeMap<Key, (Spread, usize)>,
    /// Points measured.
    pub points: usize,
    /// Cores, counted before any run.
    pub cores: usize,
    /// Seconds the sweep took.
    pub seconds: f64,
}

fn points(a: &SweepConfig) -> Vec<(&'static str, Point)> {
    let base = Point {
        imp: Impl::Yield,
        producers: 1,
        capacity: 1,
        item_size: a.item_size,
        items: 0,
        padding: a.padding,
        processes: None,
        pin: None,
        cap: Some(Duration::from_secs_f64((4.0 * a.point_seconds).max(1.0))),
    };
    let with = |imp, producers, capacity| Point {
        imp,
        producers,
        capacity,
        ..base.clone()
    };
    let mut v: Vec<(&'static str, Point)> = producers::points(&a.producers, &base)
        .into_iter()
        .map(|p| (producers::EXPERIMENT, p))
        .collect();
    if a.only_producers {
        return v;
    }
    for producers in 1..=3 {
        for capacity in CAPACITIES {
            for imp in Impl::ALL {
                if imp != Impl::Rtrb || producers == 1 {
                    v.push(("grid", with(imp, producers, capacity)));
                }
            }
        }
    }
    // False sharing: the same ring with packed slots.
    let other = match a.padding {
        Padding::CacheLine => Padding::None,
        Padding::None => Padding::CacheLine,
    };
    for producers in 1..=2 {
        for capacity in [8, 64, 1024] {
            for imp in [Impl::Spin, Impl::Yield] {
                let padding = other;
                v.push((
                    "padding",
                    Point {
                        padding,
                        ..with(imp, producers, capacity)
                    },
                ));
            }
        }
    }
    // Pinning: consumer on core 0, producer on core 1 (one producer: two cores, two threads).
    for capacity in [64, 1024] {
        for imp in [Impl::Spin, Impl::Yield, Impl::Mutex, Impl::Rtrb] {
            let pin = Some(vec![0, 1]);
            v.push((
                "pinning",
                Point {
                    pin,
                    ..with(imp, 1, capacity)
                },
            ));
        }
    }
    // Producers as processes over the shared-memory ring.
    for producers in 1..=2 {
        for imp in [Impl::Yield, Impl::Park] {
            let processes = Some(a.producer.clone());
            v.push((
                "processes",
                Point {
                    processes,
                    ..with(imp, producers, 1024)
                },
            ));
        }
    }
    v
}

fn key(exp: &'static str, p: &Point) -> Key {
    (
        exp,
        p.imp,
        p.producers,
        p.capacity,
        padding_name(p.padding),
        p.pin.is_some(),
        p.processes.is_some(),
    )
}

fn describe(exp: &str, p: &Point) -> String {
    format!(
        "{exp} point {} with {} producer(s), capacity {}, padding {}{}{}",
        p.imp.name(),
        p.producers,
        p.capacity,
        padding_name(p.padding),
        if p.pin.is_some() { ", pinned" } else { "" },
        if p.processes.is_some() {
            ", processes"
        } else {
            ""
        }
    )
}

/// Runs the sweep (after checking that its folder may be written); reports each repeat.
pub fn run(a: &SweepConfig, progress: &mut dyn Progress) -> Result<Sweep, BenchError> {
    if a.repeat == 0 {
        return config("--repeat must be at least 1");
    }
    if !(a.point_seconds > 0.0 && a.point_seconds <= 3600.0) {
        return config("--point-seconds must be a number of seconds above 0 and at most 3600");
    }
    let plan = &a.producers;
    if !(plan.max_seconds.is_finite() && plan.max_seconds > 0.0) {
        return config("--max-seconds must be a positive number of seconds");
    }
    if plan.counts.is_empty()
        || plan
            .counts
            .iter()
            .any(|&c| c == 0 || c > super::point::MAX_PRODUCERS)
    {
        return config(format!(
            "--producer-counts must list producer counts from 1 to {}",
            super::point::MAX_PRODUCERS
        ));
    }
    if plan.items == 0 || plan.items > super::point::MAX_ITEMS {
        return config(format!(
            "--items {} is out of range: from 1 to {} (10^12)",
            plan.items,
            super::point::MAX_ITEMS
        ));
    }
    if let Some(&largest) = CAPACITIES.iter().max() {
        // The padded slots, the larger ones of the sweep's two paddings.
        super::point::check_memory(largest, a.item_size, Padding::CacheLine)?;
    }
    // Made now (its path checked); taken away again if the run ends before writing into it
    // (the guard lives in the results, until they are written and dropped).
    let made = Folder::create(&a.output, Existing::Files(&FILES), a.force)?.until_written();
    let started = Instant::now();
    // Before any run: no thread of this process is pinned yet.
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let pts = points(a);
    // Said before the first run: a sweep of many repeats of long points takes hours.
    let timed = pts
        .iter()
        .filter(|(exp, _)| *exp != producers::EXPERIMENT)
        .count();
    progress.event(Event::Line(&format!(
        "fugue bench ring --sweep: {} points, {} repeat(s), about {} s each: about {} in all (each repeat is said when done; Ctrl-C stops it, writing nothing)",
        pts.len(),
        a.repeat,
        a.point_seconds,
        crate::study::duration_text(Duration::from_secs_f64(
            timed as f64 * a.point_seconds * (a.repeat as f64 + 0.1)
        ))
    )));
    // Items per point: a short calibration run, scaled to `point_seconds`.
    let mut items: Vec<u64> = Vec::with_capacity(pts.len());
    for (exp, p) in &pts {
        if *exp == producers::EXPERIMENT {
            // A fixed number of items, bounded in time.
            items.push(p.items);
            continue;
        }
        let c = Point {
            items: CALIBRATION_ITEMS,
            ..p.clone()
        };
        let o = run_point(&c).with_context(|| describe(exp, &c))?;
        items.push(((o.rate() * a.point_seconds) as u64).clamp(MIN_ITEMS, MAX_ITEMS));
    }
    // Repeats are the outer loop, so that a burst of load on the shared machine hits one run
    // of many points rather than every run of one point.
    let mut runs = Vec::new();
    for r in 0..a.repeat {
        for ((exp, p), &n) in pts.iter().zip(&items) {
            let c = Point {
                items: n,
                ..p.clone()
            };
            let o = run_point(&c).with_context(|| describe(exp, &c))?;
            runs.push(Run {
                key: key(exp, &c),
                items: o.transferred,
                planned: n,
                seconds: o.elapsed.as_secs_f64(),
                rate: o.rate(),
            });
        }
        progress.event(Event::Line(&format!(
            "fugue bench ring --sweep: repeat {}/{} done after {:.0}s",
            r + 1,
            a.repeat,
            started.elapsed().as_secs_f64()
        )));
    }
    let mut by: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in &runs {
        by.entry(r.key).or_default().push(r.rate);
    }
    let summary = by
        .into_iter()
        .map(|(k, v)| (k, (Spread::of(&v), v.len())))
        .collect();
    Ok(Sweep {
        folder: std::sync::Arc::new(made),
        runs,
        summary,
        points: pts.len(),
        cores,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// [`Sweep::baseline`] in `summary`.
fn baseline_in(summary: &BTreeMap<Key, (Spread, usize)>, k: &Key) -> Option<f64> {
    let (experiment, _, producers, capacity, padding, pinned, processes) = *k;
    let median = |k: &Key| summary.get(k).map(|(s, _)| s.median);
    median(&(
        experiment,
        Impl::Mutex,
        producers,
        capacity,
        padding,
        pinned,
        processes,
    ))
    .or_else(|| median(&grid(Impl::Mutex, producers, capacity, padding)))
}

/// The grid key of `imp` with `producers` and `capacity` at padding `pad`.
/// The runs of point `k` among `runs` that stopped before their planned items.
fn unfinished_in(runs: &[Run], k: &Key) -> usize {
    runs.iter()
        .filter(|r| r.key == *k && r.items < r.planned)
        .count()
}

fn grid(imp: Impl, producers: usize, capacity: usize, pad: &'static str) -> Key {
    ("grid", imp, producers, capacity, pad, false, false)
}

impl Sweep {
    /// The median of the mutex/condvar ring with the same producers, capacity and padding,
    /// in the same experiment (pinned or not, threads or processes) where it ran there, else
    /// in the grid (threads, unpinned).
    pub fn baseline(&self, k: &Key) -> Option<f64> {
        baseline_in(&self.summary, k)
    }

    /// The runs of point `k` that stopped at the time cap before their planned items.
    pub fn unfinished(&self, k: &Key) -> usize {
        unfinished_in(&self.runs, k)
    }

    /// The median items/s of a point.
    pub fn median(&self, k: &Key) -> Option<f64> {
        self.summary.get(k).map(|(s, _)| s.median)
    }

    /// What the sweep did, in one sentence.
    pub fn sentence(&self, a: &SweepConfig) -> String {
        format!(
            "fugue bench ring --sweep: {} runs of {} points, every item verified; wrote {}",
            self.runs.len(),
            self.points,
            a.output.display()
        )
    }

    /// Writes raw.csv, summary.csv, the plots and README.md into `a.output`.
    pub fn write(&self, a: &SweepConfig) -> Result<(), BenchError> {
        crate::report::folder::as_one_set(&a.output, || self.write_files(a))
    }

    /// [`Self::write`]'s files, each given its name when the set is.
    fn write_files(&self, a: &SweepConfig) -> Result<(), BenchError> {
        let dir = Folder::open(&a.output)?;
        let mut raw = Csv::new(&[
            "experiment",
            "impl",
            "producers",
            "capacity",
            "item_size",
            "padding",
            "pinned",
            "processes",
            "items",
            "planned_items",
            "seconds",
            "items_per_sec",
            "verified",
        ]);
        for r in &self.runs {
            let (exp, imp, p, c, pad, pin, proc_) = r.key;
            raw.row([
                exp.to_string(),
                imp.name().into(),
                p.to_string(),
                c.to_string(),
                a.item_size.to_string(),
                pad.into(),
                pin.to_string(),
                proc_.to_string(),
                r.items.to_string(),
                r.planned.to_string(),
                format!("{:.6}", r.seconds),
                format!("{:.1}", r.rate),
                "true".into(),
            ]);
        }
        dir.csv("raw.csv", &raw)?;
        let mut summary = Csv::new(&[
            "experiment",
            "impl",
            "producers",
            "capacity",
            "item_size",
            "padding",
            "pinned",
            "processes",
            "runs",
            "median_items_per_sec",
            "min_items_per_sec",
            "max_items_per_sec",
            "ratio_to_mutex",
            "unfinished_runs",
            "verified",
        ]);
        for (k, (st, runs)) in &self.summary {
            let (exp, imp, p, c, pad, pin, proc_) = *k;
            let ratio = self.baseline(k).map(|b| format!("{:.2}", st.median / b));
            summary.row([
                exp.to_string(),
                imp.name().into(),
                p.to_string(),
                c.to_string(),
                a.item_size.to_string(),
                pad.into(),
                pin.to_string(),
                proc_.to_string(),
                runs.to_string(),
                format!("{:.1}", st.median),
                format!("{:.1}", st.min),
                format!("{:.1}", st.max),
                ratio.unwrap_or_default(),
                self.unfinished(k).to_string(),
                "true".into(),
            ]);
        }
        dir.csv("summary.csv", &summary)?;
        let machine = Machine::detect();
        let stride = slot_stride(a.item_size, a.padding);
        let figure = super::plot::Throughput {
            sweep: self,
            item_size: a.item_size,
            padding: padding_name(a.padding),
            caches: &machine.caches,
            stride,
        };
        if !a.only_producers {
            dir.figure("throughput", (1800, 620), &figure)?;
        } else {
            // Not this sweep's: an earlier sweep's plot is not left beside these results
            // (the folder's files are replaced: it was refused without --force).
            crate::report::folder::remove_figure(dir.path(), "throughput");
        }
        let chart = producers::Chart {
            sweep: self,
            plan: &a.producers,
            padding: padding_name(a.padding),
            item_size: a.item_size,
        };
        dir.figure("producers", (1000, 620), &chart)?;
        dir.text("README.md", &self.readme(a, &machine, stride))
    }

    fn readme(&self, a: &SweepConfig, machine: &Machine, stride: u64) -> String {
        let versions = Versions::detect();
        let pad = padding_name(a.padding);
        let cores = self.cores;
        let mut s = String::new();
        let _ = writeln!(s, "# Ordered ring throughput\n");
        let _ = writeln!(s, "Command: `{}`\n", a.command);
        let _ = writeln!(s, "- commit: {}", versions.short_commit);
        let _ = writeln!(s, "- machine: {}, {cores} cores (shared with other work while measuring: numbers are noisy), Linux {}", machine.cpu, machine.kernel);
        let cache_list: Vec<String> = machine
            .caches
            .iter()
            .map(|c| {
                format!(
                    "{} {} KiB = {} slots",
                    c.name,
                    c.bytes / 1024,
                    c.bytes / stride
                )
            })
            .collect();
        let _ = writeln!(s, "- caches of cpu0 (data/unified): {} (slot = {stride} bytes: sequence word + {}-byte item, padding {pad})", cache_list.join(", "), a.item_size);
        let _ = writeln!(s, "- versions: fugue {}, {}, peers crossbeam-queue 0.3, rtrb 0.3 (exact versions in Cargo.lock at the commit), std mpsc", versions.fugue, versions.rustc);
        let _ = writeln!(s, "- {} run(s) per point (repeats are the outer loop), items per point scaled to about {}s from a {CALIBRATION_ITEMS}-item calibration run (between {MIN_ITEMS} and {MAX_ITEMS}), and a run stops early after {:.1}s (raw.csv: `items` < `planned_items`; the rate counts the items transferred); the producers experiment runs a fixed number of items instead (its section); whole sweep {:.0}s", a.repeat, a.point_seconds, (4.0 * a.point_seconds).max(1.0), self.seconds);
        let _ = writeln!(s, "- every item of every run was verified (number and payload; order for the ordered rings; exactly once and per-producer order for the peers, which do not order items across producers); a failed check aborts the sweep\n");
        let producers = producers::section(self, &a.producers, pad, a.item_size);
        if a.only_producers {
            let _ = writeln!(s, "Files: `raw.csv` (one row per run), `summary.csv` (median, min, max), `producers.svg`/`.png` (medians of the finished points).\n");
            let _ = writeln!(s, "![producers](producers.png)\n");
            s.push_str(&producers);
            return s;
        }
        let _ = writeln!(s, "Files: `raw.csv` (one row per run), `summary.csv` (median, min, max, ratio to the mutex/condvar ring of the same producers and capacity, in the same experiment where it ran there, else in the grid), `throughput.svg`/`.png` (medians; vertical lines: caches in slots), `producers.svg`/`.png` (the producers experiment).\n");
        let _ = writeln!(s, "![throughput](throughput.png)\n");
        for producers in 1..=3 {
            let _ = writeln!(
                s,
                "## {producers} producer{} (threads), median items/s (× mutex/condvar)\n",
                if producers == 1 { "" } else { "s" }
            );
            let impls: Vec<Impl> = Impl::ALL
                .into_iter()
                .filter(|&i| i != Impl::Rtrb || producers == 1)
                .collect();
            let mut t = Table::new(
                std::iter::once(("capacity", Align::Right))
                    .chain(impls.iter().map(|i| (i.name(), Align::Right))),
            );
            for c in TABLE_CAPACITIES {
                let mut row = vec![c.to_string()];
                for &imp in &impls {
                    let k = grid(imp, producers, c, pad);
                    // A point some run of which stopped at the time cap: its rate counts
                    // the items it moved, marked so.
                    let cut = if self.unfinished(&k) > 0 { " †" } else { "" };
                    row.push(match (self.median(&k), self.baseline(&k)) {
                        (Some(m), Some(b)) if imp != Impl::Mutex => {
                            format!("{}{cut} ({:.1}×)", mps(m), m / b)
                        }
                        (Some(m), _) => format!("{}{cut}", mps(m)),
                        _ => "–".into(),
                    });
                }
                t.row(row);
            }
            let _ = writeln!(s, "{}", t.markdown());
        }
        if self.runs.iter().any(|r| r.items < r.planned) {
            let _ = writeln!(s, "†: some run of the point stopped at the time cap before its planned items (its rate counts the items it moved; `unfinished_runs` in `summary.csv`).\n");
        }
        let _ = writeln!(s, "## Slot padding (false sharing), median items/s\n");
        let mut t = Table::new([
            ("impl", Align::Left),
            ("producers", Align::Right),
            ("capacity", Align::Right),
            (&*format!("padding {pad}"), Align::Right),
            ("other padding", Align::Right),
            ("ratio", Align::Right),
        ]);
        for (k, (st, _)) in self.summary.iter().filter(|(k, _)| k.0 == "padding") {
            let (_, imp, p, c, opad, _, _) = *k;
            if let Some(g) = self.median(&grid(imp, p, c, pad)) {
                t.row(vec![
                    imp.name().into(),
                    p.to_string(),
                    c.to_string(),
                    mps(g),
                    format!("{} ({opad})", mps(st.median)),
                    format!("{:.2}", g / st.median),
                ]);
            }
        }
        let _ = write!(s, "{}", t.markdown());
        let _ = writeln!(
            s,
            "\n## Pinning (consumer on core 0, producer on core 1), median items/s\n"
        );
        let mut t = Table::new([
            ("impl", Align::Left),
            ("capacity", Align::Right),
            ("unpinned", Align::Right),
            ("pinned", Align::Right),
            ("ratio", Align::Right),
        ]);
        for (k, (st, _)) in self.summary.iter().filter(|(k, _)| k.0 == "pinning") {
            let (_, imp, p, c, _, _, _) = *k;
            if let Some(g) = self.median(&grid(imp, p, c, pad)) {
                t.row(vec![
                    imp.name().into(),
                    c.to_string(),
                    mps(g),
                    mps(st.median),
                    format!("{:.2}", st.median / g),
                ]);
            }
        }
        let _ = write!(s, "{}", t.markdown());
        let _ = writeln!(
            s,
            "\n## Producer processes over shared memory (capacity 1024), median items/s\n"
        );
        let mut t = Table::new([
            ("impl", Align::Left),
            ("producers", Align::Right),
            ("threads", Align::Right),
            ("processes", Align::Right),
        ]);
        for (k, (st, _)) in self.summary.iter().filter(|(k, _)| k.0 == "processes") {
            let (_, imp, p, c, _, _, _) = *k;
            let threads = self
                .median(&grid(imp, p, c, pad))
                .map_or("–".to_string(), mps);
            t.row(vec![
                imp.name().into(),
                p.to_string(),
                threads,
                mps(st.median),
            ]);
        }
        let _ = write!(s, "{}", t.markdown());
        let _ = writeln!(s, "\n![producers](producers.png)\n");
        s.push_str(&producers);
        let _ = writeln!(s, "\n## Reading the numbers\n");
        let _ = writeln!(s, "- This machine has {cores} cores. One producer and the consumer fill them; 2 or 3 producers plus the consumer oversubscribe them. A spinning thread then keeps its core while the thread it waits for is not running, until the scheduler preempts it (a time slice, milliseconds): `spin` collapses by orders of magnitude, which is expected and is why `yield` and `park` exist.");
        let _ = writeln!(s, "- The peers (`arrayqueue`, `rtrb`, `sync-channel`) do not deliver items in number order across producers; the ordered rings do. The peer producers and consumers wait with the same spin-then-yield back-off as `yield` (sync-channel blocks).");
        let _ = writeln!(s, "- With `--processes`, the clock starts when the consumer reads item 0 (process start-up is not measured).");
        s
    }
}

/// Bytes per slot of the ordered ring (sequence word + item, padded): as in fugue-ring's
/// `SlotLayout` for 8-byte alignment.
fn slot_stride(item_size: usize, padding: Padding) -> u64 {
    let unit = match padding {
        Padding::CacheLine => 64,
        Padding::None => 8,
    };
    ((8 + item_size).div_ceil(unit) * unit) as u64
}

/// Items per second, short: `1.23 M` or `456.7 k`.
pub(super) fn mps(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else {
        format!("{:.1} k", x / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_experiment_is_judged_against_its_own_mutex_run() {
        let spread = |m: f64| {
            (
                Spread {
                    median: m,
                    min: m,
                    max: m,
                },
                1,
            )
        };
        let mut summary = BTreeMap::new();
        summary.insert(grid(Impl::Mutex, 1, 1024, "cacheline"), spread(4.0e6));
        summary.insert(grid(Impl::Park, 1, 1024, "cacheline"), spread(8.0e6));
        let producers = ("producers", Impl::Mutex, 1, 1024, "cacheline", false, false);
        summary.insert(producers, spread(2.0e6));
        let pinned = ("pinned", Impl::Park, 1, 1024, "cacheline", true, false);
        summary.insert(pinned, spread(6.0e6));
        // The producers experiment's own mutex run: its ratio is 1.
        assert_eq!(baseline_in(&summary, &producers), Some(2.0e6));
        let park = ("producers", Impl::Park, 1, 1024, "cacheline", false, false);
        assert_eq!(baseline_in(&summary, &park), Some(2.0e6));
        // An experiment that ran no mutex: the grid's.
        assert_eq!(baseline_in(&summary, &pinned), Some(4.0e6));
        assert_eq!(
            baseline_in(&summary, &grid(Impl::Park, 1, 1024, "cacheline")),
            Some(4.0e6)
        );
        assert_eq!(
            baseline_in(&summary, &grid(Impl::Park, 2, 1024, "cacheline")),
            None
        );
    }

    /// A point's runs that stopped at the time cap are counted, and only that point's.
    #[test]
    fn unfinished_runs_are_counted_per_point() {
        let spin = grid(Impl::Spin, 3, 1024, "cacheline");
        let park = grid(Impl::Park, 3, 1024, "cacheline");
        let run = |key, items| Run {
            key,
            items,
            planned: 1000,
            seconds: 1.0,
            rate: items as f64,
        };
        let runs = [run(spin, 232), run(spin, 1000), run(park, 1000)];
        assert_eq!(unfinished_in(&runs, &spin), 1);
        assert_eq!(unfinished_in(&runs, &park), 0);
    }
}
