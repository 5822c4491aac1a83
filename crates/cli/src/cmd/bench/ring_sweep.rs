//! `fugue bench ring --sweep -o DIR`: the grid (capacities 1..65536 x implementations x 1-3
//! producers), plus the padding, pinning and process experiments; writes raw.csv (one row per
//! run), summary.csv (median, spread, ratio to the mutex/condvar baseline), throughput.svg and
//! throughput.png (items/s against capacity, log axes, with this machine's cache sizes as
//! vertical lines in slots) and README.md (command, commit, machine, versions, tables).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use plotters::prelude::*;

use super::ring::{run_point, spread, Args, Impl, PaddingArg, Point};
use crate::util::{self, usage};

const CAPACITIES: [usize; 11] = [1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536];
const TABLE_CAPACITIES: [usize; 5] = [1, 8, 64, 1024, 65536];
const GRID: [Impl; 7] = [
    Impl::Spin,
    Impl::Yield,
    Impl::Park,
    Impl::Mutex,
    Impl::Arrayqueue,
    Impl::Rtrb,
    Impl::SyncChannel,
];
const CALIBRATION_ITEMS: u64 = 300;
const MIN_ITEMS: u64 = 1_000;
const MAX_ITEMS: u64 = 4_000_000;

/// Key of a summary row: experiment, implementation, producers, capacity, padding, pinned,
/// processes.
type Key = (&'static str, Impl, usize, usize, &'static str, bool, bool);

struct Run {
    key: Key,
    /// Items transferred (fewer than `planned` when the point hit its time cap).
    items: u64,
    planned: u64,
    seconds: f64,
}

fn points(a: &Args) -> Vec<(&'static str, Point)> {
    let base = Point {
        imp: Impl::Yield,
        producers: 1,
        capacity: 1,
        item_size: a.item_size,
        items: 0,
        padding: a.padding,
        processes: false,
        pin: None,
        cap: Some(Duration::from_secs_f64((4.0 * a.point_seconds).max(1.0))),
    };
    let mut v = Vec::new();
    for producers in 1..=3 {
        for capacity in CAPACITIES {
            for imp in GRID {
                if imp == Impl::Rtrb && producers != 1 {
                    continue;
                }
                v.push((
                    "grid",
                    Point {
                        imp,
                        producers,
                        capacity,
                        ..base.clone()
                    },
                ));
            }
        }
    }
    // False sharing: the same ring with packed slots.
    let other = match a.padding {
        PaddingArg::Cacheline => PaddingArg::None,
        PaddingArg::None => PaddingArg::Cacheline,
    };
    for producers in 1..=2 {
        for capacity in [8, 64, 1024] {
            for imp in [Impl::Spin, Impl::Yield] {
                v.push((
                    "padding",
                    Point {
                        imp,
                        producers,
                        capacity,
                        padding: other,
                        ..base.clone()
                    },
                ));
            }
        }
    }
    // Pinning: consumer on core 0, producer on core 1 (one producer: two cores, two threads).
    for capacity in [64, 1024] {
        for imp in [Impl::Spin, Impl::Yield, Impl::Mutex, Impl::Rtrb] {
            v.push((
                "pinning",
                Point {
                    imp,
                    producers: 1,
                    capacity,
                    pin: Some(vec![0, 1]),
                    ..base.clone()
                },
            ));
        }
    }
    // Producers as processes over the shared-memory ring.
    for producers in 1..=2 {
        for imp in [Impl::Yield, Impl::Park] {
            v.push((
                "processes",
                Point {
                    imp,
                    producers,
                    capacity: 1024,
                    processes: true,
                    ..base.clone()
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
        p.padding.name(),
        p.pin.is_some(),
        p.processes,
    )
}

/// Runs the sweep.
pub fn run(a: &Args) -> anyhow::Result<()> {
    if a.repeat == 0 {
        return Err(usage("--repeat must be at least 1"));
    }
    if a.point_seconds.is_nan() || a.point_seconds <= 0.0 {
        return Err(usage("--point-seconds must be positive"));
    }
    let dir = &a.output;
    if dir.exists() && !dir.is_dir() {
        return Err(usage(format!(
            "{} exists and is not a folder",
            dir.display()
        )));
    }
    for f in [
        "raw.csv",
        "summary.csv",
        "README.md",
        "throughput.svg",
        "throughput.png",
    ] {
        if dir.join(f).exists() && !a.force {
            return Err(usage(format!(
                "{} already exists; pass --force to overwrite it",
                dir.join(f).display()
            )));
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let started = Instant::now();
    // Before any run: no thread of this process is pinned yet.
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let pts = points(a);
    // Items per point: a short calibration run, scaled to `point_seconds`.
    let mut items: Vec<u64> = Vec::with_capacity(pts.len());
    for (exp, p) in &pts {
        let mut c = p.clone();
        c.items = CALIBRATION_ITEMS;
        let o = run_point(&c).with_context(|| describe(exp, &c))?;
        items.push(((o.rate() * a.point_seconds) as u64).clamp(MIN_ITEMS, MAX_ITEMS));
    }
    // Repeats are the outer loop, so that a burst of load on the shared machine hits one run
    // of many points rather than every run of one point.
    let mut runs = Vec::new();
    for r in 0..a.repeat {
        for ((exp, p), &n) in pts.iter().zip(&items) {
            let mut c = p.clone();
            c.items = n;
            let o = run_point(&c).with_context(|| describe(exp, &c))?;
            runs.push(Run {
                key: key(exp, &c),
                items: o.items,
                planned: n,
                seconds: o.elapsed.as_secs_f64(),
            });
        }
        eprintln!(
            "fugue bench ring --sweep: repeat {}/{} done after {:.0}s",
            r + 1,
            a.repeat,
            started.elapsed().as_secs_f64()
        );
    }
    let summary = summarize(&runs);
    write_raw(a, &runs)?;
    write_summary(a, &summary)?;
    let caches = caches();
    let stride = slot_stride(a.item_size, a.padding);
    plot(
        &dir.join("throughput.svg"),
        a,
        &summary,
        &caches,
        stride,
        true,
    )?;
    plot(
        &dir.join("throughput.png"),
        a,
        &summary,
        &caches,
        stride,
        false,
    )?;
    let readme = readme(
        a,
        &summary,
        &caches,
        stride,
        cores,
        started.elapsed().as_secs_f64(),
    );
    util::write_atomic(&dir.join("README.md"), true, readme.as_bytes())?;
    println!(
        "fugue bench ring --sweep: {} runs of {} points, every item verified; wrote {}",
        runs.len(),
        pts.len(),
        dir.display()
    );
    Ok(())
}

fn describe(exp: &str, p: &Point) -> String {
    format!(
        "{exp} point {} with {} producer(s), capacity {}, padding {}{}{}",
        p.imp.name(),
        p.producers,
        p.capacity,
        p.padding.name(),
        if p.pin.is_some() { ", pinned" } else { "" },
        if p.processes { ", processes" } else { "" }
    )
}

struct Stat {
    median: f64,
    min: f64,
    max: f64,
    runs: usize,
}

fn summarize(runs: &[Run]) -> BTreeMap<Key, Stat> {
    let mut by: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in runs {
        by.entry(r.key)
            .or_default()
            .push(r.items as f64 / r.seconds);
    }
    by.into_iter()
        .map(|(k, v)| {
            let (median, min, max) = spread(&v);
            (
                k,
                Stat {
                    median,
                    min,
                    max,
                    runs: v.len(),
                },
            )
        })
        .collect()
}

fn baseline(summary: &BTreeMap<Key, Stat>, k: &Key) -> Option<f64> {
    let (_, _, producers, capacity, padding, _, _) = *k;
    summary
        .get(&(
            "grid",
            Impl::Mutex,
            producers,
            capacity,
            padding,
            false,
            false,
        ))
        .map(|s| s.median)
}

fn write_raw(a: &Args, runs: &[Run]) -> anyhow::Result<()> {
    let mut s = String::from(
        "experiment,impl,producers,capacity,item_size,padding,pinned,processes,items,planned_items,seconds,items_per_sec,verified\n",
    );
    for r in runs {
        let (exp, imp, p, c, pad, pin, proc_) = r.key;
        let _ = writeln!(
            s,
            "{exp},{},{p},{c},{},{pad},{pin},{proc_},{},{},{:.6},{:.1},true",
            imp.name(),
            a.item_size,
            r.items,
            r.planned,
            r.seconds,
            r.items as f64 / r.seconds
        );
    }
    util::write_atomic(&a.output.join("raw.csv"), true, s.as_bytes())
}

fn write_summary(a: &Args, summary: &BTreeMap<Key, Stat>) -> anyhow::Result<()> {
    let mut s = String::from(
        "experiment,impl,producers,capacity,item_size,padding,pinned,processes,runs,median_items_per_sec,min_items_per_sec,max_items_per_sec,ratio_to_mutex,verified\n",
    );
    for (k, st) in summary {
        let (exp, imp, p, c, pad, pin, proc_) = *k;
        let ratio = baseline(summary, k)
            .map(|b| format!("{:.2}", st.median / b))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{exp},{},{p},{c},{},{pad},{pin},{proc_},{},{:.1},{:.1},{:.1},{ratio},true",
            imp.name(),
            a.item_size,
            st.runs,
            st.median,
            st.min,
            st.max
        );
    }
    util::write_atomic(&a.output.join("summary.csv"), true, s.as_bytes())
}

/// The cache levels of cpu0: (name, bytes), from /sys/devices/system/cpu/cpu0/cache.
fn caches() -> Vec<(String, u64)> {
    let mut v = Vec::new();
    let base = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(base) else {
        return v;
    };
    let mut dirs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .collect();
    dirs.sort();
    for d in dirs {
        let read = |f: &str| {
            std::fs::read_to_string(d.join(f))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let (level, kind, size) = (read("level"), read("type"), read("size"));
        if kind == "Instruction" {
            continue;
        }
        let bytes = parse_size(&size);
        if let Some(b) = bytes {
            v.push((format!("L{level}"), b));
        }
    }
    v
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1024 * 1024),
        'G' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// Bytes per slot of the ordered ring (sequence word + item, padded): as in fugue-ring's
/// `SlotLayout` for 8-byte alignment.
fn slot_stride(item_size: usize, padding: PaddingArg) -> u64 {
    let unit = match padding {
        PaddingArg::Cacheline => 64,
        PaddingArg::None => 8,
    };
    ((8 + item_size).div_ceil(unit) * unit) as u64
}

fn color(imp: Impl) -> RGBColor {
    match imp {
        Impl::Spin => RGBColor(214, 39, 40),
        Impl::Yield => RGBColor(31, 119, 180),
        Impl::Park => RGBColor(44, 160, 44),
        Impl::Mutex => RGBColor(0, 0, 0),
        Impl::Arrayqueue => RGBColor(148, 103, 189),
        Impl::Rtrb => RGBColor(255, 127, 14),
        Impl::SyncChannel => RGBColor(140, 86, 75),
    }
}

fn plot(
    path: &Path,
    a: &Args,
    summary: &BTreeMap<Key, Stat>,
    caches: &[(String, u64)],
    stride: u64,
    svg: bool,
) -> anyhow::Result<()> {
    // The temporary name keeps the extension: the PNG encoder is chosen from it.
    let ext = if svg { "svg" } else { "png" };
    let tmp = util::temp_path(path, true)?.with_extension(format!("part.{ext}"));
    let size = (1800u32, 620u32);
    let res = if svg {
        let root = SVGBackend::new(&tmp, size).into_drawing_area();
        draw(root, a, summary, caches, stride)
    } else {
        let root = BitMapBackend::new(&tmp, size).into_drawing_area();
        draw(root, a, summary, caches, stride)
    };
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("cannot draw {}", path.display())));
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    a: &Args,
    summary: &BTreeMap<Key, Stat>,
    caches: &[(String, u64)],
    stride: u64,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("{e}");
    root.fill(&WHITE).map_err(err)?;
    let pad = a.padding.name();
    let ymax = summary
        .iter()
        .filter(|(k, _)| k.0 == "grid")
        .map(|(_, s)| s.max)
        .fold(1.0f64, f64::max)
        * 2.0;
    let ymin = summary
        .iter()
        .filter(|(k, _)| k.0 == "grid")
        .map(|(_, s)| s.min)
        .fold(f64::INFINITY, f64::min)
        .clamp(1.0, ymax / 10.0)
        / 2.0;
    let panels = root.split_evenly((1, 3));
    for (i, area) in panels.iter().enumerate() {
        let producers = i + 1;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{producers} producer{} -> 1 consumer, {}-byte items",
                    if producers == 1 { "" } else { "s" },
                    a.item_size
                ),
                ("sans-serif", 22),
            )
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d((0.7f64..100_000f64).log_scale(), (ymin..ymax).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("capacity (slots)")
            .y_desc("items per second")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()
            .map_err(err)?;
        for (name, bytes) in caches {
            let slots = *bytes as f64 / stride as f64;
            if !(0.7..100_000.0).contains(&slots) {
                continue;
            }
            chart
                .draw_series(LineSeries::new(
                    [(slots, ymin), (slots, ymax)],
                    ShapeStyle::from(&RGBColor(150, 150, 150)).stroke_width(2),
                ))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{name} ({} slots)", slots as u64),
                    (slots * 1.1, ymax / 1.6),
                    ("sans-serif", 14),
                )))
                .map_err(err)?;
        }
        for imp in GRID {
            let pts: Vec<(f64, f64)> = CAPACITIES
                .iter()
                .filter_map(|&c| {
                    summary
                        .get(&("grid", imp, producers, c, pad, false, false))
                        .map(|s| (c as f64, s.median))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let col = color(imp);
            chart
                .draw_series(LineSeries::new(
                    pts.clone(),
                    ShapeStyle::from(&col).stroke_width(2),
                ))
                .map_err(err)?
                .label(imp.name())
                .legend(move |(x, y)| {
                    PathElement::new(
                        [(x, y), (x + 18, y)],
                        ShapeStyle::from(&col).stroke_width(2),
                    )
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, col.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn sh(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn mps(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else {
        format!("{:.1} k", x / 1e3)
    }
}

fn readme(
    a: &Args,
    summary: &BTreeMap<Key, Stat>,
    caches: &[(String, u64)],
    stride: u64,
    cores: usize,
    total_secs: f64,
) -> String {
    let mut s = String::new();
    let args: Vec<String> = std::env::args().collect();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_default();
    let commit = sh("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let rustc = sh("rustc", &["--version"]).unwrap_or_else(|| "unknown".into());
    let pad = a.padding.name();
    let _ = writeln!(s, "# Ordered ring throughput\n");
    let _ = writeln!(s, "Command: `{}`\n", args.join(" "));
    let _ = writeln!(s, "- commit: {commit}");
    let _ = writeln!(s, "- machine: {cpu}, {cores} cores (shared with other work while measuring: numbers are noisy), Linux {kernel}");
    let cache_list: Vec<String> = caches
        .iter()
        .map(|(n, b)| format!("{n} {} KiB = {} slots", b / 1024, b / stride))
        .collect();
    let _ = writeln!(s, "- caches of cpu0 (data/unified): {} (slot = {stride} bytes: sequence word + {}-byte item, padding {pad})", cache_list.join(", "), a.item_size);
    let _ = writeln!(s, "- versions: fugue {}, {rustc}, peers crossbeam-queue 0.3, rtrb 0.3 (exact versions in Cargo.lock at the commit), std mpsc", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "- {} run(s) per point (repeats are the outer loop), items per point scaled to about {}s from a {CALIBRATION_ITEMS}-item calibration run (between {MIN_ITEMS} and {MAX_ITEMS}), and a run stops early after {:.1}s (raw.csv: `items` < `planned_items`; the rate counts the items transferred); whole sweep {total_secs:.0}s", a.repeat, a.point_seconds, (4.0 * a.point_seconds).max(1.0));
    let _ = writeln!(s, "- every item of every run was verified (number and payload; order for the ordered rings; exactly once and per-producer order for the peers, which do not order items across producers); a failed check aborts the sweep\n");
    let _ = writeln!(s, "Files: `raw.csv` (one row per run), `summary.csv` (median, min, max, ratio to the mutex/condvar ring of the same producers and capacity), `throughput.svg`/`.png` (medians; vertical lines: caches in slots).\n");
    let _ = writeln!(s, "![throughput](throughput.png)\n");
    let impls: Vec<Impl> = GRID.to_vec();
    for producers in 1..=3 {
        let _ = writeln!(
            s,
            "## {producers} producer{} (threads), median items/s (× mutex/condvar)\n",
            if producers == 1 { "" } else { "s" }
        );
        let mut head = String::from("| capacity |");
        let mut sep = String::from("|---:|");
        for imp in &impls {
            if *imp == Impl::Rtrb && producers != 1 {
                continue;
            }
            let _ = write!(head, " {} |", imp.name());
            sep.push_str("---:|");
        }
        let _ = writeln!(s, "{head}\n{sep}");
        for c in TABLE_CAPACITIES {
            let mut row = format!("| {c} |");
            for imp in &impls {
                if *imp == Impl::Rtrb && producers != 1 {
                    continue;
                }
                let k = ("grid", *imp, producers, c, pad, false, false);
                match (summary.get(&k), baseline(summary, &k)) {
                    (Some(st), Some(b)) if *imp != Impl::Mutex => {
                        let _ = write!(row, " {} ({:.1}×) |", mps(st.median), st.median / b);
                    }
                    (Some(st), _) => {
                        let _ = write!(row, " {} |", mps(st.median));
                    }
                    _ => row.push_str(" – |"),
                }
            }
            let _ = writeln!(s, "{row}");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Slot padding (false sharing), median items/s\n");
    let _ = writeln!(s, "| impl | producers | capacity | padding {pad} | other padding | ratio |\n|---|---:|---:|---:|---:|---:|");
    for (k, st) in summary.iter().filter(|(k, _)| k.0 == "padding") {
        let (_, imp, p, c, opad, _, _) = *k;
        if let Some(g) = summary.get(&("grid", imp, p, c, pad, false, false)) {
            let _ = writeln!(
                s,
                "| {} | {p} | {c} | {} | {} ({opad}) | {:.2} |",
                imp.name(),
                mps(g.median),
                mps(st.median),
                g.median / st.median
            );
        }
    }
    let _ = writeln!(
        s,
        "\n## Pinning (consumer on core 0, producer on core 1), median items/s\n"
    );
    let _ = writeln!(
        s,
        "| impl | capacity | unpinned | pinned | ratio |\n|---|---:|---:|---:|---:|"
    );
    for (k, st) in summary.iter().filter(|(k, _)| k.0 == "pinning") {
        let (_, imp, p, c, _, _, _) = *k;
        if let Some(g) = summary.get(&("grid", imp, p, c, pad, false, false)) {
            let _ = writeln!(
                s,
                "| {} | {c} | {} | {} | {:.2} |",
                imp.name(),
                mps(g.median),
                mps(st.median),
                st.median / g.median
            );
        }
    }
    let _ = writeln!(
        s,
        "\n## Producer processes over shared memory (capacity 1024), median items/s\n"
    );
    let _ = writeln!(
        s,
        "| impl | producers | threads | processes |\n|---|---:|---:|---:|"
    );
    for (k, st) in summary.iter().filter(|(k, _)| k.0 == "processes") {
        let (_, imp, p, c, _, _, _) = *k;
        let threads = summary
            .get(&("grid", imp, p, c, pad, false, false))
            .map_or("–".to_string(), |g| mps(g.median));
        let _ = writeln!(
            s,
            "| {} | {p} | {threads} | {} |",
            imp.name(),
            mps(st.median)
        );
    }
    let _ = writeln!(s, "\n## Reading the numbers\n");
    let _ = writeln!(s, "- This machine has {cores} cores. One producer and the consumer fill them; 2 or 3 producers plus the consumer oversubscribe them. A spinning thread then keeps its core while the thread it waits for is not running, until the scheduler preempts it (a time slice, milliseconds): `spin` collapses by orders of magnitude, which is expected and is why `yield` and `park` exist.");
    let _ = writeln!(s, "- The peers (`arrayqueue`, `rtrb`, `sync-channel`) do not deliver items in number order across producers; the ordered rings do. The peer producers and consumers wait with the same spin-then-yield back-off as `yield` (sync-channel blocks).");
    let _ = writeln!(s, "- With `--processes`, the clock starts when the consumer reads item 0 (process start-up is not measured).");
    s
}
