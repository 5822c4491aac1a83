//! One measurement of the ring benchmark: producer k writes items k, k+P, k+2P, ...; the
//! consumer checks every item's payload and, for the ordered rings, that items arrive in
//! order; for the peer queues (which do not order items across producers) that every number
//! arrives exactly once and in order per producer. A wrong or missing item fails the run.
//!
//! Every queue goes through the same measuring loop, [`measure`], generic over [`Queue`].

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use fugue_ring::{ordered_with, shm, MutexCondRing, Options, Padding, Strategy};

use crate::error::{config, failed, BenchError, Context as _};
use crate::peers::queues::{self, fill, verify, Pushed, Queue, ITEM_TIMEOUT};

/// The most items one run of the ring may transfer (`--items`).
pub const MAX_ITEMS: u64 = 1_000_000_000_000;

/// The implementation under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Impl {
    /// Ordered ring, busy-waiting.
    Spin,
    /// Ordered ring, spin then sched_yield.
    Yield,
    /// Ordered ring, spin, yield, then futex sleep.
    Park,
    /// The mutex/condvar ring (the baseline).
    Mutex,
    /// crossbeam-queue `ArrayQueue` (MPMC, unordered across producers), spin-then-yield.
    Arrayqueue,
    /// `rtrb` (one producer only), spin-then-yield.
    Rtrb,
    /// `std::sync::mpsc::sync_channel` (blocking).
    SyncChannel,
}

impl Impl {
    /// Every implementation, in the order of the reports.
    pub const ALL: [Impl; 7] = [
        Impl::Spin,
        Impl::Yield,
        Impl::Park,
        Impl::Mutex,
        Impl::Arrayqueue,
        Impl::Rtrb,
        Impl::SyncChannel,
    ];

    /// The name used on the command line and in the CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Spin => "spin",
            Impl::Yield => "yield",
            Impl::Park => "park",
            Impl::Mutex => "mutex",
            Impl::Arrayqueue => "arrayqueue",
            Impl::Rtrb => "rtrb",
            Impl::SyncChannel => "sync-channel",
        }
    }

    /// The implementation of a name.
    pub fn from_name(s: &str) -> Option<Impl> {
        Impl::ALL.into_iter().find(|i| i.name() == s)
    }

    fn strategy(self) -> Option<Strategy> {
        match self {
            Impl::Spin => Some(Strategy::Spin),
            Impl::Yield => Some(Strategy::Yield),
            Impl::Park => Some(Strategy::Park),
            _ => None,
        }
    }
}

/// The padding's name in reports: `cacheline` or `none`.
pub fn padding_name(p: Padding) -> &'static str {
    match p {
        Padding::CacheLine => "cacheline",
        Padding::None => "none",
    }
}

/// How producer processes are started (`--processes`): this program with these arguments,
/// to which `NAME PRODUCERS INDEX ITEMS ITEM_SIZE [PIN]` (a [`ProducerConfig`]) are added;
/// the process is to call [`run_producer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerCommand {
    /// The program.
    pub program: PathBuf,
    /// Its first arguments.
    pub args: Vec<String>,
}

/// One measurement's configuration.
#[derive(Clone, Debug)]
pub struct Point {
    /// The implementation.
    pub imp: Impl,
    /// Producer threads (or processes).
    pub producers: usize,
    /// Slots.
    pub capacity: usize,
    /// Bytes per item (at least 8).
    pub item_size: usize,
    /// Items to transfer.
    pub items: u64,
    /// Slot padding of the ordered ring.
    pub padding: Padding,
    /// Producers as processes over the shared-memory ring, started with this command.
    pub processes: Option<ProducerCommand>,
    /// Cores: the consumer's, then the producers' (cycled).
    pub pin: Option<Vec<usize>>,
    /// Stop early (and count the items transferred so far) after this long; the sweep uses it
    /// so that a collapsed configuration cannot stall it. `None`: transfer every item.
    pub cap: Option<Duration>,
}

/// What one measurement did: items transferred (all checked) and the consumer's time.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Items timed (over producer processes, those after the first, whose arrival starts
    /// the clock).
    pub items: u64,
    /// Items transferred.
    pub transferred: u64,
    /// The consumer's time.
    pub elapsed: Duration,
}

impl Outcome {
    /// Items per second.
    pub fn rate(&self) -> f64 {
        self.items as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The consumer's clock and early stop: with a cap, a watchdog thread raises a flag of the
/// clock's own when the cap has passed, and the consumer looks at that flag before every item
/// (one read of a line nobody writes until then), so that even a collapsed configuration,
/// whose items come milliseconds apart, stops on time. The producers are stopped by the
/// consumer once it has stopped taking items, never by the watchdog: stopped first, they
/// would leave the consumer waiting for an item that never comes.
struct Clock {
    t0: Instant,
    stopped: Arc<AtomicBool>,
    watchdog: Option<(std::sync::mpsc::Sender<()>, thread::JoinHandle<()>)>,
}

impl Clock {
    /// Starts the clock (and the watchdog, with a cap).
    fn start(cap: Option<Duration>) -> Clock {
        let stopped = Arc::new(AtomicBool::new(false));
        let watchdog = cap.map(|cap| {
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let stop = stopped.clone();
            let h = thread::spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(cap) {
                    // Relaxed: the consumer reads this flag alone.
                    stop.store(true, Ordering::Relaxed);
                }
            });
            (tx, h)
        });
        Clock {
            t0: Instant::now(),
            stopped,
            watchdog,
        }
    }

    /// Whether the cap has passed (stop before the next item).
    #[inline]
    fn over(&self) -> bool {
        // Relaxed: only this flag's value matters here.
        self.watchdog.is_some() && self.stopped.load(Ordering::Relaxed)
    }

    /// Ends the watchdog (if the cap has not passed, it returns at once).
    fn finish(self) {
        if let Some((tx, h)) = self.watchdog {
            drop(tx);
            let _ = h.join();
        }
    }
}

/// A producer error is no error once the consumer stopped early on purpose.
fn unless_stopped(stopped: &AtomicBool, e: impl Into<BenchError>) -> Result<Pushed, BenchError> {
    // Acquire pairs with the consumer's Release store when it stops.
    if stopped.load(Ordering::Acquire) {
        Ok(Pushed::Stopped)
    } else {
        Err(e.into())
    }
}

fn pin_to(core: usize) -> Result<(), BenchError> {
    fugue_exec::placement::pin_current(core)
        .map_err(|e| BenchError::Failed(format!("cannot pin a thread to core {core}: {e}")))
}

fn consumer_core(pin: &Option<Vec<usize>>) -> Option<usize> {
    pin.as_ref().and_then(|p| p.first().copied())
}

fn producer_core(pin: &Option<Vec<usize>>, k: usize) -> Option<usize> {
    let p = pin.as_ref()?;
    match p.len() {
        0 => None,
        1 => Some(p[0]),
        len => Some(p[1 + k % (len - 1)]),
    }
}

/// Checks, for the unordered peers, that numbers arrive once each and in order per producer.
#[derive(Debug)]
pub struct Tally {
    producers: u64,
    next_of: Vec<u64>,
    received: u64,
}

impl Tally {
    /// For `producers` producers.
    pub fn new(producers: u64) -> Tally {
        Tally {
            producers,
            next_of: (0..producers).collect(),
            received: 0,
        }
    }

    /// Counts item `n`, or fails if it is not its producer's next one.
    #[inline]
    pub fn take(&mut self, n: u64) -> Result<(), BenchError> {
        let k = (n % self.producers) as usize;
        if n != self.next_of[k] {
            return failed(format!(
                "producer {k}'s next item should be {}, got {n} (lost, duplicated or reordered)",
                self.next_of[k]
            ));
        }
        self.next_of[k] += self.producers;
        self.received += 1;
        Ok(())
    }

    /// The smallest item number below `items` not received yet.
    pub fn missing(&self, items: u64) -> u64 {
        self.next_of
            .iter()
            .copied()
            .filter(|&n| n < items)
            .min()
            .unwrap_or(items)
    }

    /// Items received.
    pub fn received(&self) -> u64 {
        self.received
    }
}

/// Runs one measurement (every item transferred is checked). The consumer runs on a fresh
/// thread, so that pinning changes the affinity of that thread and of the producers it starts
/// only, never of the caller (a sweep's later points start unpinned).
pub fn run_point(pt: &Point) -> Result<Outcome, BenchError> {
    thread::scope(|s| {
        s.spawn(|| run_point_here(pt))
            .join()
            .map_err(|_| BenchError::Failed("the consumer thread panicked".into()))?
    })
}

fn run_point_here(pt: &Point) -> Result<Outcome, BenchError> {
    if pt.producers == 0 || pt.producers > MAX_PRODUCERS {
        return config(format!(
            "--producers must be from 1 to {MAX_PRODUCERS}, not {}",
            pt.producers
        ));
    }
    if let Some(pin) = &pt.pin {
        let allowed = fugue_exec::placement::allowed_cores();
        if let Some(&c) = pin.iter().find(|c| !allowed.contains(c)) {
            let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
            return config(format!(
                "--pin {c}: this process may run on cores {} only",
                list.join(",")
            ));
        }
    }
    if pt.capacity == 0 {
        return config("--capacity must be at least 1");
    }
    if pt.item_size < 8 {
        return config("--item-size must be at least 8 (the item number)");
    }
    if pt.items == 0 || pt.items > MAX_ITEMS {
        return config(format!(
            "--items {} is out of range: from 1 to {MAX_ITEMS} (10^12, hours at the ring's speed; --max-seconds bounds a run's time)",
            pt.items
        ));
    }
    check_memory(pt.capacity, pt.item_size, pt.padding)?;
    if let Some(cmd) = &pt.processes {
        let Some(strategy) = pt.imp.strategy() else {
            return config(format!(
                "--processes runs the shared-memory ordered ring: use --strategy spin, yield or park, not {}",
                pt.imp.name()
            ));
        };
        return run_processes(pt, strategy, cmd);
    }
    match pt.imp {
        Impl::Spin | Impl::Yield | Impl::Park => {
            let options = Options {
                strategy: pt.imp.strategy().expect("an ordered-ring strategy"),
                padding: pt.padding,
            };
            let (p, c) = ordered_with(pt.capacity, pt.item_size, options);
            measure(pt, Ordered(p, c))
        }
        Impl::Mutex => {
            let (p, c) = MutexCondRing::new(pt.capacity, pt.item_size);
            measure(pt, Ordered(p, c))
        }
        Impl::Rtrb if pt.producers != 1 => config("rtrb takes exactly one producer"),
        Impl::Arrayqueue | Impl::Rtrb | Impl::SyncChannel => run_peer_sized(pt),
    }
}

/// The most producers (threads or processes) a measurement starts.
pub const MAX_PRODUCERS: usize = 1024;

/// The most memory a ring's slots may take: `--capacity` slots of `--item-size` bytes, each
/// with its sequence number and rounded up as `--padding` says
/// ([`fugue_ring::slots_bytes`]).
pub const MAX_RING_BYTES: u64 = 1 << 30;

/// Refuses a ring whose slots would take more than [`MAX_RING_BYTES`] with `padding`, before
/// anything is allocated, with the figure and the limit.
pub fn check_memory(capacity: usize, item_size: usize, padding: Padding) -> Result<(), BenchError> {
    let bytes = fugue_ring::slots_bytes(capacity, item_size, padding).map(|b| b as u128);
    if bytes.is_none_or(|b| b > u128::from(MAX_RING_BYTES)) {
        // Past the machine's word (`slots_bytes` is none): more than it can count.
        let size = bytes.map_or_else(
            || format!("more than {}", bytes_text(usize::MAX as u128 + 1)),
            bytes_text,
        );
        return config(format!(
            "--capacity {capacity} slots of --item-size {item_size} bytes take {size}, more than the limit of {} (docs/limits.md)",
            bytes_text(u128::from(MAX_RING_BYTES))
        ));
    }
    Ok(())
}

/// `bytes` in the largest binary unit that keeps a number of at least 1: `8 TiB`, `1 GiB`.
fn bytes_text(bytes: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"];
    let mut u = 0;
    let mut v = bytes as f64;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} bytes")
    } else if v.fract() == 0.0 {
        format!("{v:.0} {}", units[u])
    } else if format!("{v:.1}").ends_with(".0") {
        // Just past a whole number (1.004 GiB): not written as that number, which a limit
        // of exactly it would seem to contradict (nearer still, the bytes too).
        let text = format!("{v:.3} {}", units[u]);
        if text.contains(".000 ") {
            format!("{text} ({bytes} bytes)")
        } else {
            text
        }
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// The measuring loop of every queue: starts the producers (pinned as asked) behind a
/// barrier, then receives and checks the items on this thread, timed, until all arrived, one
/// failed, or the time cap passed.
pub fn measure<Q: Queue>(pt: &Point, mut q: Q) -> Result<Outcome, BenchError> {
    let start = Arc::new(Barrier::new(pt.producers + 1));
    let stopped = Arc::new(AtomicBool::new(false));
    let (p, items) = (pt.producers as u64, pt.items);
    let handles: Vec<thread::JoinHandle<Result<(), BenchError>>> = q
        .producers(pt.producers)?
        .into_iter()
        .enumerate()
        .map(|(k, mut handle)| {
            let (start, stop) = (start.clone(), stopped.clone());
            let core = producer_core(&pt.pin, k);
            thread::spawn(move || {
                let pinned = core.map(pin_to).transpose();
                start.wait();
                pinned?;
                let mut n = k as u64;
                while n < items {
                    if Q::push(&mut handle, n, &stop)? == Pushed::Stopped {
                        return Ok(());
                    }
                    n += p;
                }
                Ok(())
            })
        })
        .collect();
    consumer_core(&pt.pin).map(pin_to).transpose()?;
    start.wait();
    let clock = Clock::start(pt.cap);
    let mut tally = Tally::new(p);
    let mut result = Ok(());
    let mut done = items;
    for n in 0..items {
        if clock.over() {
            done = n;
            break;
        }
        let got = match q.next(n) {
            Ok(Some(got)) if Q::ORDERED => Ok(got),
            Ok(Some(got)) => tally.take(got).map(|()| got),
            Ok(None) => failed(format!(
                "item {} did not arrive within {}s",
                if Q::ORDERED { n } else { tally.missing(items) },
                ITEM_TIMEOUT.as_secs()
            )),
            Err(e) => Err(e),
        };
        if let Err(e) = got {
            result = Err(e);
            break;
        }
    }
    let elapsed = clock.t0.elapsed();
    clock.finish();
    // On failure or early stop, the producers see the stop, and dropping the consumer makes
    // blocked producers return.
    stopped.store(true, Ordering::Release);
    drop(q);
    result?;
    for (k, h) in handles.into_iter().enumerate() {
        h.join()
            .map_err(|_| BenchError::Failed(format!("producer {k} panicked")))?
            .with_context(|| format!("producer {k}"))?;
    }
    Ok(Outcome {
        items: done,
        transferred: done,
        elapsed,
    })
}

/// An ordered ring (fugue's, or the mutex/condvar one): its producer and consumer.
struct Ordered<P, C>(P, C);

macro_rules! ordered_queue {
    ($producer:ty, $consumer:ty) => {
        impl Queue for Ordered<$producer, $consumer> {
            type Producer = $producer;
            const ORDERED: bool = true;
            fn producers(&mut self, count: usize) -> Result<Vec<$producer>, BenchError> {
                Ok(vec![self.0.clone(); count])
            }
            fn push(p: &mut $producer, n: u64, stopped: &AtomicBool) -> Result<Pushed, BenchError> {
                match p.acquire(n) {
                    Ok(mut g) => {
                        fill(&mut g, n);
                        g.commit();
                        Ok(Pushed::Done)
                    }
                    Err(e) => unless_stopped(stopped, e),
                }
            }
            fn next(&mut self, expected: u64) -> Result<Option<u64>, BenchError> {
                let item = self.1.next_timeout(ITEM_TIMEOUT)?;
                verify(&item, Some(expected)).map(Some)
            }
        }
    };
}

ordered_queue!(fugue_ring::Producer, fugue_ring::Consumer);
ordered_queue!(
    fugue_ring::mutex::MutexCondProducer,
    fugue_ring::mutex::MutexCondConsumer
);

fn run_peer_sized(pt: &Point) -> Result<Outcome, BenchError> {
    macro_rules! sized {
        ($($n:literal),*) => {
            match pt.item_size {
                $($n => match pt.imp {
                    Impl::Arrayqueue => measure(pt, queues::ArrayQueue::<$n>::new(pt.capacity)),
                    Impl::Rtrb => measure(pt, queues::Rtrb::<$n>::new(pt.capacity)),
                    _ => measure(pt, queues::SyncChannel::<$n>::new(pt.capacity)),
                },)*
                other => config(format!(
                    "{} runs with item sizes 8, 16, 32, 64, 128, 256, 512, 1024 or 4096, not {other}",
                    pt.imp.name()
                )),
            }
        };
    }
    sized!(8, 16, 32, 64, 128, 256, 512, 1024, 4096)
}

/// Producers as processes: the consumer (this process) creates the shared-memory ring and
/// starts `cmd` P times. The clock starts when item 0 is read (process start-up is not
/// measured) and the rate counts the items after it.
fn run_processes(
    pt: &Point,
    strategy: Strategy,
    cmd: &ProducerCommand,
) -> Result<Outcome, BenchError> {
    let name = format!("fugue-bench-ring-{}-{}", std::process::id(), unique());
    let options = Options {
        strategy,
        padding: pt.padding,
    };
    let mut consumer = shm::create_with(&name, pt.capacity, pt.item_size, options)
        .context("cannot create the shared-memory ring")?;
    consumer_core(&pt.pin).map(pin_to).transpose()?;
    let mut children: Vec<Child> = Vec::new();
    for k in 0..pt.producers {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .arg(&name)
            .args(
                [pt.producers as u64, k as u64, pt.items, pt.item_size as u64]
                    .map(|x| x.to_string()),
            )
            .args(producer_core(&pt.pin, k).map(|core| core.to_string()))
            .stdin(Stdio::null());
        children.push(
            c.spawn()
                .map_err(|e| BenchError::io(format!("cannot start producer process {k}"), e))?,
        );
    }
    let mut result = Ok(());
    let mut t0 = Instant::now();
    for n in 0..pt.items {
        let got = consumer
            .next_timeout(ITEM_TIMEOUT)
            .map_err(BenchError::from)
            .and_then(|item| verify(&item, Some(n)));
        if let Err(e) = got {
            result = Err(e);
            break;
        }
        if n == 0 {
            t0 = Instant::now();
        }
    }
    let elapsed = t0.elapsed();
    drop(consumer);
    for (k, mut c) in children.into_iter().enumerate() {
        let status = c
            .wait()
            .map_err(|e| BenchError::io(format!("producer process {k}"), e))?;
        if result.is_ok() && !status.success() {
            result = failed(format!("producer process {k} failed ({status})"));
        }
    }
    result?;
    // The items after item 0 against the time after item 0.
    Ok(Outcome {
        items: pt.items.saturating_sub(1).max(1),
        transferred: pt.items,
        elapsed,
    })
}

fn unique() -> u64 {
    use std::sync::atomic::AtomicU64;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// One producer process of a measurement with producer processes (the arguments of the
/// hidden `fugue bench ring-producer`).
#[derive(Clone, Debug, clap::Args)]
pub struct ProducerConfig {
    /// Shared-memory name of the ring.
    pub name: String,
    /// Total number of producers.
    pub producers: u64,
    /// This producer's index k (it writes k, k+P, ...).
    pub index: u64,
    /// Items in the whole run.
    pub items: u64,
    /// Bytes per item.
    pub item_size: usize,
    /// Core to pin this process to.
    pub pin: Option<usize>,
}

/// Runs one producer process: opens the ring and writes its items.
pub fn run_producer(a: &ProducerConfig) -> Result<(), BenchError> {
    if let Some(core) = a.pin {
        pin_to(core)?;
    }
    let producer = shm::open_expect(
        &a.name,
        shm::Expect {
            capacity: None,
            item_size: Some(a.item_size as u64),
        },
    )?;
    let mut n = a.index;
    while n < a.items {
        let mut g = match producer.acquire_timeout(n, ITEM_TIMEOUT) {
            Ok(g) => g,
            // The consumer stopped (it reports its own failure, if any).
            Err(fugue_ring::AcquireError::Disconnected { .. }) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        fill(&mut g, n);
        g.commit();
        n += a.producers;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size just past the limit is not written as the limit ("1.0 GiB, more than the
    /// limit of 1 GiB").
    #[test]
    fn a_size_just_past_a_whole_unit_is_not_written_as_it() {
        assert_eq!(bytes_text(1 << 30), "1 GiB");
        assert_eq!(bytes_text((1 << 30) + (1 << 22)), "1.004 GiB");
        assert_eq!(bytes_text(3 << 29), "1.5 GiB");
        assert_eq!(bytes_text((1 << 30) + 4096), "1.000 GiB (1073745920 bytes)");
        assert_eq!(bytes_text(12), "12 bytes");
    }

    #[test]
    fn the_memory_limit_counts_the_slots_as_padded() {
        // 2^24 slots of 64-byte items: 1.1 GiB unpadded (72 bytes a slot), 2 GiB padded (128).
        let big = 1 << 24;
        assert!(check_memory(big, 64, Padding::None).is_err());
        assert!(check_memory(big, 64, Padding::CacheLine).is_err());
        // Half as many: 576 MiB unpadded, exactly the 1 GiB limit padded.
        assert!(check_memory(big / 2, 64, Padding::None).is_ok());
        assert!(check_memory(big / 2, 64, Padding::CacheLine).is_ok());
        // Past what a machine word counts: said as such, not as a made-up size.
        let e = check_memory(usize::MAX, 8, Padding::None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("take more than 16 EiB, more than the limit of 1 GiB"),
            "{e}"
        );
        // 120-byte items: 128 bytes a slot either way.
        assert_eq!(
            fugue_ring::slots_bytes(4, 120, Padding::None),
            fugue_ring::slots_bytes(4, 120, Padding::CacheLine)
        );
    }

    fn point(imp: Impl, producers: usize, capacity: usize, item_size: usize) -> Point {
        Point {
            imp,
            producers,
            capacity,
            item_size,
            items: 5_000,
            padding: Padding::CacheLine,
            processes: None,
            pin: None,
            cap: None,
        }
    }

    #[test]
    fn tally_catches_lost_duplicated_and_reordered_items() {
        let mut t = Tally::new(2);
        t.take(0).unwrap();
        t.take(1).unwrap();
        t.take(3).unwrap();
        assert!(t.take(3).is_err(), "duplicate");
        assert!(t.take(4).is_err(), "item 2 skipped");
        t.take(2).unwrap();
        assert_eq!(t.missing(10), 4);
        assert_eq!(t.received(), 4);
    }

    #[test]
    fn every_implementation_transfers_and_verifies_in_order() {
        for imp in Impl::ALL {
            let producers = if imp == Impl::Rtrb || imp == Impl::Spin {
                1
            } else {
                2
            };
            let o = run_point(&point(imp, producers, 8, 16)).unwrap();
            assert_eq!(o.items, 5_000, "{imp:?}");
            assert!(o.rate() > 0.0);
        }
    }

    #[test]
    fn early_stop_counts_what_was_transferred() {
        for imp in [Impl::Yield, Impl::Arrayqueue] {
            let mut p = point(imp, 2, 4, 8);
            p.items = MAX_ITEMS;
            p.cap = Some(Duration::from_millis(50));
            let o = run_point(&p).unwrap();
            // Stopped early: fewer items than asked (none at all when the machine gave the
            // producers no time within the cap), and soon after the cap rather than when an
            // item's own timeout would have passed.
            assert!(o.items < p.items, "{imp:?}");
            assert!(o.elapsed < ITEM_TIMEOUT, "{imp:?}: {:?}", o.elapsed);
        }
    }

    #[test]
    fn bad_configurations_are_config_errors() {
        assert!(run_point(&point(Impl::Rtrb, 2, 8, 8))
            .unwrap_err()
            .is_config());
        assert!(run_point(&point(Impl::Arrayqueue, 1, 8, 24))
            .unwrap_err()
            .is_config());
        assert!(run_point(&point(Impl::Yield, 1, 8, 4))
            .unwrap_err()
            .is_config());
        // Slots beyond the memory limit, refused before anything is allocated.
        for (capacity, item_size) in [(1usize << 40, 8), (8, 1 << 30), (usize::MAX, 8)] {
            let e = run_point(&point(Impl::Yield, 1, capacity, item_size)).unwrap_err();
            assert!(e.is_config(), "{e}");
            assert!(
                e.to_string().contains("more than the limit of 1 GiB"),
                "{e}"
            );
        }
        let mut p = point(Impl::Mutex, 1, 8, 8);
        p.processes = Some(ProducerCommand {
            program: "true".into(),
            args: Vec::new(),
        });
        assert!(run_point(&p).unwrap_err().is_config());
    }
}
