//! Per-cycle measurements: the fixed-size [`CycleRecord`] that the audio thread pushes into a
//! single-producer ordered ring once per cycle ([`CycleMeter`]), and the statistics thread that
//! reads them in order, aggregates them ([`Summary`], percentiles within 0.1 % from the
//! engine's histogram) and optionally writes one CSV row per cycle (the data path's last step:
//! measure).
//!
//! The audio side never waits on the ring: [`CycleMeter::push`] calls `try_acquire`, and when
//! the ring is full the record is counted as dropped ([`Summary::dropped`]) instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::histogram::Histogram;
use fugue_ring::{Options, Strategy, TryNextError, TypedConsumer, TypedProducer};

/// Slots of the statistics ring: 16,384 records, 5.9 s of cycles at 128 frames and 44.1 kHz
/// and 0.4 s at 16 frames and 48 kHz, against a consumer that polls every millisecond.
pub const STATS_RING_CAPACITY: usize = 1 << 14;

/// Header of the per-cycle CSV ([`CycleRecord::csv_row`] writes the rows).
pub const CSV_HEADER: &str =
    "cycle,start_ns,duration_ns,deadline_ns,missed,late_ns,frames,steals,wake_ns";

/// What one cycle did, as the audio thread measured it. Plain data, `Copy`, 64 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CycleRecord {
    /// Cycle index, from 0, counting every cycle of the run (a dropped record leaves a gap).
    pub cycle: u64,
    /// When the cycle started, in ns since the run started (monotonic clock).
    pub start_ns: u64,
    /// How long the cycle took (inputs in, every task, outputs out), in ns.
    pub duration_ns: u64,
    /// The cycle's deadline (the buffer period, or twice it), in ns.
    pub deadline_ns: u64,
    /// How late the cycle started against its schedule, in ns (clocked backend; 0 for JACK,
    /// whose server decides when cycles start).
    pub late_ns: u64,
    /// Steals during the cycle (work-stealing executor; 0 for the others).
    pub steals: u32,
    /// Frames of the cycle.
    pub frames: u32,
    /// Wake-up latency: how long after the cycle's start the last of the executor's other
    /// threads noticed the cycle and began on it, in ns (saturating). 0 when no other thread
    /// took part (`seq`, or the others noticed the cycle only after it ended), or in records
    /// written before this field existed.
    pub wake_ns: u32,
    /// `duration_ns > deadline_ns`.
    pub missed: bool,
    /// The hash of the cycle's output ([`fugue_exec::Plan::output_hash`]) when the run asked
    /// for it ([`StatsOptions::hash_outputs`]), else 0. Taken after the cycle's end time:
    /// not part of `duration_ns`. Not written to the CSV.
    pub output_hash: u64,
}

// The statistics ring's slots are sized for it.
const _: () = assert!(std::mem::size_of::<CycleRecord>() == 64);

impl CycleRecord {
    /// The record as one CSV row in the order of [`CSV_HEADER`], without a newline.
    pub fn csv_row(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{}",
            self.cycle,
            self.start_ns,
            self.duration_ns,
            self.deadline_ns,
            self.missed as u8,
            self.late_ns,
            self.frames,
            self.steals,
            self.wake_ns
        )
    }

    /// Parses a row written by [`csv_row`](Self::csv_row) (or by earlier versions, which
    /// had no `wake_ns` column: it reads as 0).
    pub fn parse_csv_row(line: &str) -> Option<CycleRecord> {
        let fields: Vec<&str> = line.trim().split(',').collect();
        if fields.len() != 8 && fields.len() != 9 {
            return None;
        }
        let mut it = fields.iter();
        let mut next = || it.next()?.parse::<u64>().ok();
        Some(CycleRecord {
            cycle: next()?,
            start_ns: next()?,
            duration_ns: next()?,
            deadline_ns: next()?,
            missed: next()? != 0,
            late_ns: next()?,
            frames: u32::try_from(next()?).ok()?,
            steals: u32::try_from(next()?).ok()?,
            wake_ns: match fields.len() {
                9 => u32::try_from(next()?).ok()?,
                _ => 0,
            },
            output_hash: 0,
        })
    }
}

/// The audio side of the statistics: numbers the records, pushes them without waiting,
/// counts those that found the ring full.
pub struct CycleMeter {
    producer: TypedProducer<CycleRecord>,
    next_item: u64,
    cycle: u64,
    dropped: Arc<AtomicU64>,
    origin: Instant,
}

impl std::fmt::Debug for CycleMeter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleMeter")
            .field("cycle", &self.cycle)
            .field("next_item", &self.next_item)
            .finish_non_exhaustive()
    }
}

impl CycleMeter {
    /// The instant that `start_ns` counts from.
    pub fn origin(&self) -> Instant {
        self.origin
    }

    /// The index the next cycle gets.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Records one cycle; `record.cycle` is overwritten with the cycle index. Never blocks,
    /// locks or allocates: a full ring drops the record and counts it.
    #[inline]
    pub fn push(&mut self, mut record: CycleRecord) {
        record.cycle = self.cycle;
        self.cycle += 1;
        match self.producer.try_acquire(self.next_item) {
            Ok(g) => {
                g.write(record);
                self.next_item += 1;
            }
            Err(_) => {
                // Relaxed: a counter read at the end, after the audio side has stopped.
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Records nothing but advances the cycle index (a cycle that did not run the graph, e.g.
    /// while a new plan is being compiled).
    #[inline]
    pub fn skip(&mut self) {
        self.cycle += 1;
    }
}

/// Aggregated statistics of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Cycles recorded.
    pub cycles: u64,
    /// Mean cycle time, ns.
    pub mean_ns: f64,
    /// Median cycle time, ns (within 0.1 %: three significant digits).
    pub median_ns: u64,
    /// 99th percentile, ns (within 0.1 %).
    pub p99_ns: u64,
    /// Longest cycle, ns (exact).
    pub max_ns: u64,
    /// Shortest cycle, ns (exact).
    pub min_ns: u64,
    /// Cycles longer than their deadline.
    pub misses: u64,
    /// Records dropped because the statistics ring was full (cycles that ran but are not
    /// counted above).
    pub dropped: u64,
    /// Steals, summed.
    pub steals: u64,
    /// The deadline of the last cycle, ns.
    pub deadline_ns: u64,
    /// Seconds covered (last cycle's start, plus its length, minus the first's start).
    pub seconds: f64,
    /// Cycles with a wake-up figure ([`CycleRecord::wake_ns`] above 0): those in which
    /// threads other than the caller's took part (a thread that noticed the cycle only after
    /// the calling thread had run all of it leaves no figure: the cycle's time bounds its
    /// wait).
    pub woken: u64,
    /// Median wake-up latency over those cycles, ns (within 0.1 %).
    pub wake_median_ns: u64,
    /// 99th percentile of the wake-up latency, ns.
    pub wake_p99_ns: u64,
    /// Longest wake-up latency, ns (exact).
    pub wake_max_ns: u64,
}

impl Summary {
    /// Misses over cycles (0 when there are no cycles).
    pub fn miss_rate(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.misses as f64 / self.cycles as f64
        }
    }
}

/// Running aggregation of records.
#[derive(Debug)]
pub struct Aggregator {
    hist: Histogram,
    wake_hist: Histogram,
    sum: u128,
    s: Summary,
    first_start: Option<u64>,
}

impl Default for Aggregator {
    fn default() -> Self {
        Self::new()
    }
}

impl Aggregator {
    /// An empty aggregation.
    pub fn new() -> Self {
        Aggregator {
            // Up to 1000 s, within 0.1 % (three significant digits).
            hist: Histogram::new(10, 1_000_000_000_000),
            // Up to about 4.3 s (a `u32` of ns), within 0.1 %.
            wake_hist: Histogram::new(10, u32::MAX as u64),
            sum: 0,
            s: Summary::default(),
            first_start: None,
        }
    }

    /// Adds one record.
    pub fn add(&mut self, r: &CycleRecord) {
        let d = r.duration_ns.max(1);
        self.hist.record(d);
        self.sum += r.duration_ns as u128;
        if self.s.cycles == 0 || r.duration_ns < self.s.min_ns {
            self.s.min_ns = r.duration_ns;
        }
        self.s.cycles += 1;
        self.s.max_ns = self.s.max_ns.max(r.duration_ns);
        self.s.misses += r.missed as u64;
        self.s.steals += r.steals as u64;
        if r.wake_ns > 0 {
            self.wake_hist.record(r.wake_ns as u64);
            self.s.woken += 1;
            self.s.wake_max_ns = self.s.wake_max_ns.max(r.wake_ns as u64);
        }
        self.s.deadline_ns = r.deadline_ns;
        let first = *self.first_start.get_or_insert(r.start_ns);
        self.s.seconds = (r.start_ns + r.duration_ns).saturating_sub(first) as f64 * 1e-9;
    }

    /// The summary so far (`dropped` is left at 0: the caller knows it).
    pub fn summary(&self) -> Summary {
        let mut s = self.s.clone();
        if s.cycles > 0 {
            s.mean_ns = self.sum as f64 / s.cycles as f64;
            // The histogram reports the top of a value's bucket: never above the exact max.
            s.median_ns = self.hist.value_at_quantile(0.5).min(s.max_ns);
            s.p99_ns = self.hist.value_at_quantile(0.99).min(s.max_ns);
        }
        if s.woken > 0 {
            s.wake_median_ns = self.wake_hist.value_at_quantile(0.5).min(s.wake_max_ns);
            s.wake_p99_ns = self.wake_hist.value_at_quantile(0.99).min(s.wake_max_ns);
        }
        s
    }
}

/// Where the statistics thread puts the records.
#[derive(Clone, Debug, Default)]
pub struct StatsOptions {
    /// Write one CSV row per cycle to this file (created or truncated,
    /// [`crate::output::open_truncated`]; callers that must not leave a half-written file pass
    /// a temporary file of [`crate::output::Temp::create`] and rename it).
    pub csv: Option<PathBuf>,
    /// Keep every record in memory and return them.
    pub keep_records: bool,
    /// Hash each cycle's output into its record ([`CycleRecord::output_hash`]), for a check
    /// against another executor after the run. Costs one pass over the output samples per
    /// cycle on the audio thread, after the cycle's end time is taken.
    pub hash_outputs: bool,
}

/// What the statistics thread returns.
#[derive(Debug, Default)]
pub struct StatsOutcome {
    /// The aggregate.
    pub summary: Summary,
    /// Every record, when [`StatsOptions::keep_records`].
    pub records: Vec<CycleRecord>,
    /// The CSV ([`StatsOptions::csv`]) could not be written: the reason; the aggregate is
    /// still valid.
    pub csv_error: Option<std::io::Error>,
}

/// The statistics thread and its handles.
pub struct StatsThread {
    handle: Option<JoinHandle<StatsOutcome>>,
    finish: Arc<AtomicBool>,
    dropped: Arc<AtomicU64>,
    live: Arc<Mutex<Summary>>,
}

impl std::fmt::Debug for StatsThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsThread").finish_non_exhaustive()
    }
}

/// Starts the statistics thread and returns its handle and the audio side's meter.
pub fn start_stats(options: StatsOptions) -> std::io::Result<(StatsThread, CycleMeter)> {
    let (producer, consumer) = fugue_ring::ordered_typed_with::<CycleRecord>(
        STATS_RING_CAPACITY,
        Options {
            strategy: Strategy::Yield,
            ..Options::default()
        },
    );
    let csv = match &options.csv {
        Some(p) => Some((p.clone(), crate::output::open_truncated(p)?)),
        None => None,
    };
    let finish = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicU64::new(0));
    let live = Arc::new(Mutex::new(Summary::default()));
    let handle = {
        let finish = finish.clone();
        let live = live.clone();
        let keep = options.keep_records;
        std::thread::Builder::new()
            .name("fugue-stats".into())
            .spawn(move || consume(consumer, csv, keep, &finish, &live))?
    };
    let meter = CycleMeter {
        producer,
        next_item: 0,
        cycle: 0,
        dropped: dropped.clone(),
        origin: Instant::now(),
    };
    Ok((
        StatsThread {
            handle: Some(handle),
            finish,
            dropped,
            live,
        },
        meter,
    ))
}

fn consume(
    mut consumer: TypedConsumer<CycleRecord>,
    csv: Option<(PathBuf, std::fs::File)>,
    keep: bool,
    finish: &AtomicBool,
    live: &Mutex<Summary>,
) -> StatsOutcome {
    let mut agg = Aggregator::new();
    let mut records = Vec::new();
    let mut csv_error = None;
    let mut writer = csv.map(|(_, f)| std::io::BufWriter::with_capacity(1 << 16, f));
    if let Some(w) = writer.as_mut() {
        if let Err(e) = writeln!(w, "{CSV_HEADER}") {
            csv_error = Some(e);
        }
    }
    let mut last_publish = Instant::now();
    loop {
        // Acquire pairs with the Release store in `StatsThread::finish`, made after the audio
        // side stopped: every record it pushed is in the ring when we see the flag.
        let finishing = finish.load(Ordering::Acquire);
        let mut got = 0usize;
        loop {
            let r = match consumer.try_next() {
                Ok(g) => *g,
                Err(TryNextError::Empty { .. }) | Err(TryNextError::Disconnected { .. }) => break,
            };
            got += 1;
            agg.add(&r);
            if keep {
                records.push(r);
            }
            if csv_error.is_none() {
                if let Some(w) = writer.as_mut() {
                    if let Err(e) = writeln!(w, "{}", r.csv_row()) {
                        csv_error = Some(e);
                    }
                }
            }
        }
        if last_publish.elapsed() >= Duration::from_millis(200) || finishing {
            if let Ok(mut l) = live.lock() {
                *l = agg.summary();
            }
            // The file holds the records up to the last fifth of a second.
            if let (None, Some(w)) = (&csv_error, writer.as_mut()) {
                if let Err(e) = w.flush() {
                    csv_error = Some(e);
                }
            }
            last_publish = Instant::now();
        }
        if finishing && got == 0 {
            break;
        }
        if got == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    if let Some(mut w) = writer {
        if csv_error.is_none() {
            if let Err(e) = w.flush().and_then(|_| w.get_ref().sync_all()) {
                csv_error = Some(e);
            }
        }
    }
    StatsOutcome {
        summary: agg.summary(),
        records,
        csv_error,
    }
}

impl StatsThread {
    /// The summary as of a fraction of a second ago (for a live display).
    pub fn live(&self) -> Summary {
        let mut s = self.live.lock().map(|s| s.clone()).unwrap_or_default();
        // Relaxed: an approximate live figure.
        s.dropped = self.dropped.load(Ordering::Relaxed);
        s
    }

    /// Drains the ring and stops the thread. Call after the audio side has stopped pushing.
    pub fn finish(mut self) -> StatsOutcome {
        // Release pairs with the Acquire load in `consume`.
        self.finish.store(true, Ordering::Release);
        let mut out = match self.handle.take().map(JoinHandle::join) {
            Some(Ok(o)) => o,
            _ => StatsOutcome {
                csv_error: Some(std::io::Error::other("the statistics thread failed")),
                ..StatsOutcome::default()
            },
        };
        // Relaxed: the audio side has stopped (joined or deactivated) before this call.
        out.summary.dropped = self.dropped.load(Ordering::Relaxed);
        out
    }
}

impl Drop for StatsThread {
    fn drop(&mut self) {
        // Release pairs with the Acquire load in `consume`.
        self.finish.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Reads a per-cycle CSV written by the statistics thread.
pub fn read_csv(path: &Path) -> std::io::Result<Vec<CycleRecord>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 || line.trim().is_empty() {
            continue;
        }
        out.push(CycleRecord::parse_csv_row(line).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}:{}: not a cycle record", path.display(), i + 1),
            )
        })?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV file, a registered temporary file, is written over; once removed (as on a
    /// signal), it is not made again and the statistics do not start.
    #[test]
    fn a_removed_temporary_csv_is_not_created_again() {
        let dir = std::env::temp_dir().join(format!("fugue-stats-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (tmp, mut f) =
            crate::output::Temp::create(dir.join("c.part"), &dir.join("c.csv")).unwrap();
        std::io::Write::write_all(&mut f, b"old contents, longer than the header").unwrap();
        drop(f);
        let options = || StatsOptions {
            csv: Some(tmp.path().to_path_buf()),
            ..StatsOptions::default()
        };
        let (thread, _meter) = start_stats(options()).unwrap();
        let outcome = thread.finish();
        assert!(outcome.csv_error.is_none());
        assert_eq!(
            std::fs::read_to_string(tmp.path()).unwrap().trim_end(),
            CSV_HEADER
        );
        std::fs::remove_file(tmp.path()).unwrap();
        assert!(start_stats(options()).is_err());
        assert!(!tmp.path().exists());
        drop(tmp);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_rows_round_trip_and_older_rows_read_without_a_wake_up() {
        let r = CycleRecord {
            cycle: 7,
            start_ns: 1_000,
            duration_ns: 2_500,
            deadline_ns: 2_666_666,
            late_ns: 12,
            steals: 3,
            frames: 128,
            wake_ns: 4_321,
            missed: false,
            output_hash: 0,
        };
        let row = r.csv_row();
        assert_eq!(row.split(',').count(), CSV_HEADER.split(',').count());
        assert_eq!(CycleRecord::parse_csv_row(&row), Some(r));
        let old = "7,1000,2500,2666666,0,12,128,3";
        assert_eq!(
            CycleRecord::parse_csv_row(old),
            Some(CycleRecord { wake_ns: 0, ..r })
        );
        assert_eq!(CycleRecord::parse_csv_row("7,1000,2500"), None);
        assert_eq!(CycleRecord::parse_csv_row(&format!("{row},1")), None);
        // A steal count that does not fit the record is not a record.
        assert_eq!(
            CycleRecord::parse_csv_row("7,1000,2500,2666666,0,12,128,99999999999,0"),
            None
        );
    }

    #[test]
    fn the_summary_takes_wake_ups_from_the_cycles_that_have_one() {
        let mut agg = Aggregator::new();
        for (i, wake) in [0u32, 1_000, 3_000, 2_000, 0].into_iter().enumerate() {
            agg.add(&CycleRecord {
                cycle: i as u64,
                start_ns: i as u64 * 10_000,
                duration_ns: 5_000,
                deadline_ns: 10_000,
                wake_ns: wake,
                ..CycleRecord::default()
            });
        }
        let s = agg.summary();
        assert_eq!(s.cycles, 5);
        assert_eq!(s.woken, 3);
        assert_eq!(s.wake_max_ns, 3_000);
        assert!(
            (1_999..=2_002).contains(&s.wake_median_ns),
            "{}",
            s.wake_median_ns
        );
        assert_eq!(s.wake_p99_ns, 3_000);
    }
}
