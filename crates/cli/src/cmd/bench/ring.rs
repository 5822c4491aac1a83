//! `fugue bench ring`: items per second through the ordered ring (spin, yield, park) against
//! the mutex/condvar ring with the same API and against peer queues (crossbeam `ArrayQueue`,
//! `rtrb`, `std::sync::mpsc::sync_channel`). Producer k writes items k, k+P, k+2P, ...; the
//! consumer checks every item's payload (its number in the first 8 bytes, a pattern derived
//! from it in the rest) and, for the ordered rings, that items arrive in order; for the peer
//! queues (which do not order items across producers) that every number arrives exactly once
//! and in order per producer. A wrong or missing item fails the run.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use fugue_ring::{ordered_with, shm, MutexCondRing, Options, Padding, Strategy};

use crate::util::usage;

/// How long the consumer waits for one item before it declares it missing.
pub(crate) const ITEM_TIMEOUT: Duration = Duration::from_secs(20);

/// The implementation under test.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    fn strategy(self) -> Option<Strategy> {
        match self {
            Impl::Spin => Some(Strategy::Spin),
            Impl::Yield => Some(Strategy::Yield),
            Impl::Park => Some(Strategy::Park),
            _ => None,
        }
    }
}

/// Slot padding, on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PaddingArg {
    /// Each slot on its own cache line(s).
    Cacheline,
    /// Packed slots (false sharing between neighbours).
    None,
}

impl PaddingArg {
    pub(crate) fn to_padding(self) -> Padding {
        match self {
            PaddingArg::Cacheline => Padding::CacheLine,
            PaddingArg::None => Padding::None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            PaddingArg::Cacheline => "cacheline",
            PaddingArg::None => "none",
        }
    }
}

/// Arguments of `fugue bench ring`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of producer threads (or processes).
    #[arg(long, short = 'p', default_value_t = 1)]
    pub producers: usize,
    /// Slots in the ring.
    #[arg(long, short = 'c', default_value_t = 1024)]
    pub capacity: usize,
    /// Implementation: the ordered ring's wait strategy, the mutex/condvar baseline, or a peer.
    #[arg(long, short = 's', value_enum, default_value_t = Impl::Yield)]
    pub strategy: Impl,
    /// Items to transfer.
    #[arg(long, short = 'n', default_value_t = 1_000_000)]
    pub items: u64,
    /// Bytes per item (at least 8; the peers accept 8, 16, 32, 64, 128, 256, 512, 1024, 4096).
    #[arg(long, default_value_t = 8)]
    pub item_size: usize,
    /// Slot padding of the ordered ring.
    #[arg(long, value_enum, default_value_t = PaddingArg::Cacheline)]
    pub padding: PaddingArg,
    /// Run the producers as separate processes over the shared-memory ring.
    #[arg(long)]
    pub processes: bool,
    /// Pin threads to cores: the consumer's core, then the producers' (cycled), e.g. `0,1`.
    #[arg(long, value_delimiter = ',')]
    pub pin: Option<Vec<usize>>,
    /// Repeat the measurement and report the median (and the spread).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Print one JSON object instead of a sentence.
    #[arg(long)]
    pub json: bool,
    /// Run the whole grid (capacities 1..65536 x implementations x 1-3 producers), write
    /// raw.csv, summary.csv, plots and README.md into `-o DIR`.
    #[arg(long)]
    pub sweep: bool,
    /// Output folder of `--sweep`.
    #[arg(short, long, default_value = "ring-sweep")]
    pub output: PathBuf,
    /// Seconds each sweep point aims to last (items are scaled to it).
    #[arg(long, default_value_t = 0.25)]
    pub point_seconds: f64,
    /// Replace the files of an existing `--sweep` output folder.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of the hidden `fugue bench ring-producer` (one producer process).
#[derive(clap::Args, Debug)]
pub struct ProducerArgs {
    /// Shared-memory name of the ring.
    #[arg(long)]
    pub name: String,
    /// Total number of producers.
    #[arg(long)]
    pub producers: u64,
    /// This producer's index k (it writes k, k+P, ...).
    #[arg(long)]
    pub index: u64,
    /// Items in the whole run.
    #[arg(long)]
    pub items: u64,
    /// Bytes per item.
    #[arg(long)]
    pub item_size: usize,
    /// Core to pin this process to.
    #[arg(long)]
    pub pin: Option<usize>,
}

/// One measurement's configuration.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    pub imp: Impl,
    pub producers: usize,
    pub capacity: usize,
    pub item_size: usize,
    pub items: u64,
    pub padding: PaddingArg,
    pub processes: bool,
    pub pin: Option<Vec<usize>>,
    /// Stop early (and count the items transferred so far) after this long; the sweep uses it
    /// so that a collapsed configuration cannot stall it. `None`: transfer every item.
    pub cap: Option<Duration>,
}

/// What one measurement did: items transferred (all checked) and the consumer's time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outcome {
    pub items: u64,
    pub elapsed: Duration,
}

impl Outcome {
    pub(crate) fn rate(&self) -> f64 {
        self.items as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The consumer's clock and early stop.
struct Clock {
    t0: Instant,
    cap: Option<Duration>,
    stopped: Arc<AtomicBool>,
}

impl Clock {
    fn start(cap: Option<Duration>, stopped: &Arc<AtomicBool>) -> Clock {
        Clock {
            t0: Instant::now(),
            cap,
            stopped: stopped.clone(),
        }
    }

    /// Whether to stop before item `n` (looked at every 256 items).
    #[inline]
    fn over(&self, n: u64) -> bool {
        if n & 255 != 0 || n == 0 {
            return false;
        }
        match self.cap {
            Some(c) if self.t0.elapsed() > c => {
                // Release pairs with the producers' Acquire load: they see the stop before
                // they see the consumer gone.
                self.stopped.store(true, Ordering::Release);
                true
            }
            _ => false,
        }
    }
}

/// A producer error is no error once the consumer stopped early on purpose.
fn unless_stopped(stopped: &AtomicBool, e: impl Into<anyhow::Error>) -> anyhow::Result<()> {
    // Acquire pairs with the Release store in `Clock::over`.
    if stopped.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(e.into())
    }
}

/// The payload of item `n`: its number (little-endian) then bytes derived from it.
#[inline]
pub(crate) fn fill(buf: &mut [u8], n: u64) {
    buf[..8].copy_from_slice(&n.to_le_bytes());
    let seed = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8;
    for (j, b) in buf[8..].iter_mut().enumerate() {
        *b = seed.wrapping_add(j as u8);
    }
}

/// Checks that `buf` is the payload of item `expected` (or, with `None`, of the number it
/// carries), and returns that number.
#[inline]
pub(crate) fn verify(buf: &[u8], expected: Option<u64>) -> anyhow::Result<u64> {
    let n = u64::from_le_bytes(buf[..8].try_into().expect("items are at least 8 bytes"));
    if let Some(e) = expected {
        if n != e {
            bail!("item {e} carries the number {n}");
        }
    }
    let seed = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8;
    for (j, b) in buf[8..].iter().enumerate() {
        let want = seed.wrapping_add(j as u8);
        if *b != want {
            bail!("item {n} has byte {} = {b}, expected {want}", j + 8);
        }
    }
    Ok(n)
}

fn pin_to(core: usize) -> anyhow::Result<()> {
    if core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
        Ok(())
    } else {
        Err(anyhow!("cannot pin a thread to core {core}"))
    }
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

/// Spin, then yield: how the peers' producers and consumers wait (the same back-off as the
/// ordered ring's `Yield`).
struct Backoff(u32);

impl Backoff {
    #[inline]
    fn snooze(&mut self) {
        if self.0 < 6 {
            for _ in 0..(1u32 << self.0) {
                std::hint::spin_loop();
            }
            self.0 += 1;
        } else {
            thread::yield_now();
        }
    }
}

/// Runs one measurement (every item transferred is checked). The consumer runs on a fresh
/// thread, so that `--pin` changes the affinity of that thread and of the producers it starts
/// only, never of the caller (a sweep's later points start unpinned).
pub(crate) fn run_point(pt: &Point) -> anyhow::Result<Outcome> {
    thread::scope(|s| {
        s.spawn(|| run_point_here(pt))
            .join()
            .map_err(|_| anyhow!("the consumer thread panicked"))?
    })
}

fn run_point_here(pt: &Point) -> anyhow::Result<Outcome> {
    if pt.producers == 0 {
        return Err(usage("--producers must be at least 1"));
    }
    if pt.capacity == 0 {
        return Err(usage("--capacity must be at least 1"));
    }
    if pt.item_size < 8 {
        return Err(usage("--item-size must be at least 8 (the item number)"));
    }
    if pt.items == 0 {
        return Err(usage("--items must be at least 1"));
    }
    if pt.processes {
        let Some(strategy) = pt.imp.strategy() else {
            return Err(usage(format!(
                "--processes runs the shared-memory ordered ring: use --strategy spin, yield or park, not {}",
                pt.imp.name()
            )));
        };
        return run_processes(pt, strategy);
    }
    match pt.imp {
        Impl::Spin | Impl::Yield | Impl::Park => run_ordered(pt),
        Impl::Mutex => run_mutex(pt),
        Impl::Rtrb if pt.producers != 1 => Err(usage("rtrb takes exactly one producer")),
        Impl::Arrayqueue | Impl::Rtrb | Impl::SyncChannel => run_peer_sized(pt),
    }
}

/// Spawns the producer threads; each waits on the barrier, then runs `body(k)`.
fn spawn_producers<F>(
    pt: &Point,
    start: &Arc<Barrier>,
    body: F,
) -> Vec<thread::JoinHandle<anyhow::Result<()>>>
where
    F: Fn(u64) -> anyhow::Result<()> + Send + Sync + Clone + 'static,
{
    (0..pt.producers)
        .map(|k| {
            let start = start.clone();
            let body = body.clone();
            let core = producer_core(&pt.pin, k);
            thread::spawn(move || {
                let pinned = core.map(pin_to).transpose();
                start.wait();
                pinned?;
                body(k as u64)
            })
        })
        .collect()
}

fn join(handles: Vec<thread::JoinHandle<anyhow::Result<()>>>) -> anyhow::Result<()> {
    for (k, h) in handles.into_iter().enumerate() {
        h.join()
            .map_err(|_| anyhow!("producer {k} panicked"))?
            .with_context(|| format!("producer {k}"))?;
    }
    Ok(())
}

fn run_ordered(pt: &Point) -> anyhow::Result<Outcome> {
    let options = Options {
        strategy: pt.imp.strategy().expect("an ordered-ring strategy"),
        padding: pt.padding.to_padding(),
    };
    let (producer, mut consumer) = ordered_with(pt.capacity, pt.item_size, options);
    let start = Arc::new(Barrier::new(pt.producers + 1));
    let (p, items) = (pt.producers as u64, pt.items);
    let stopped = Arc::new(AtomicBool::new(false));
    let stop = stopped.clone();
    let handles = spawn_producers(pt, &start, move |k| {
        let mut n = k;
        while n < items {
            let mut g = match producer.acquire(n) {
                Ok(g) => g,
                Err(e) => return unless_stopped(&stop, e),
            };
            fill(&mut g, n);
            g.commit();
            n += p;
        }
        Ok(())
    });
    consumer_core(&pt.pin).map(pin_to).transpose()?;
    start.wait();
    let clock = Clock::start(pt.cap, &stopped);
    let mut result = Ok(());
    let mut done = pt.items;
    for n in 0..pt.items {
        if clock.over(n) {
            done = n;
            break;
        }
        match consumer.next_timeout(ITEM_TIMEOUT) {
            Ok(item) => {
                if let Err(e) = verify(&item, Some(n)) {
                    result = Err(e);
                    break;
                }
            }
            Err(e) => {
                result = Err(e.into());
                break;
            }
        }
    }
    let elapsed = clock.t0.elapsed();
    // On failure or early stop, dropping the consumer makes blocked producers return
    // `Disconnected`.
    drop(consumer);
    result?;
    join(handles)?;
    Ok(Outcome {
        items: done,
        elapsed,
    })
}

fn run_mutex(pt: &Point) -> anyhow::Result<Outcome> {
    let (producer, mut consumer) = MutexCondRing::new(pt.capacity, pt.item_size);
    let start = Arc::new(Barrier::new(pt.producers + 1));
    let (p, items) = (pt.producers as u64, pt.items);
    let stopped = Arc::new(AtomicBool::new(false));
    let stop = stopped.clone();
    let handles = spawn_producers(pt, &start, move |k| {
        let mut n = k;
        while n < items {
            let mut g = match producer.acquire(n) {
                Ok(g) => g,
                Err(e) => return unless_stopped(&stop, e),
            };
            fill(&mut g, n);
            g.commit();
            n += p;
        }
        Ok(())
    });
    consumer_core(&pt.pin).map(pin_to).transpose()?;
    start.wait();
    let clock = Clock::start(pt.cap, &stopped);
    let mut result = Ok(());
    let mut done = pt.items;
    for n in 0..pt.items {
        if clock.over(n) {
            done = n;
            break;
        }
        match consumer.next_timeout(ITEM_TIMEOUT) {
            Ok(item) => {
                if let Err(e) = verify(&item, Some(n)) {
                    result = Err(e);
                    break;
                }
            }
            Err(e) => {
                result = Err(e.into());
                break;
            }
        }
    }
    let elapsed = clock.t0.elapsed();
    drop(consumer);
    result?;
    join(handles)?;
    Ok(Outcome {
        items: done,
        elapsed,
    })
}

/// Checks, for the unordered peers, that numbers arrive once each and in order per producer.
struct Tally {
    producers: u64,
    next_of: Vec<u64>,
    received: u64,
}

impl Tally {
    fn new(producers: u64) -> Tally {
        Tally {
            producers,
            next_of: (0..producers).collect(),
            received: 0,
        }
    }

    #[inline]
    fn take(&mut self, n: u64) -> anyhow::Result<()> {
        let k = (n % self.producers) as usize;
        if n != self.next_of[k] {
            bail!(
                "producer {k}'s next item should be {}, got {n} (lost, duplicated or reordered)",
                self.next_of[k]
            );
        }
        self.next_of[k] += self.producers;
        self.received += 1;
        Ok(())
    }

    fn missing(&self, items: u64) -> u64 {
        (0..self.producers as usize)
            .map(|k| self.next_of[k])
            .filter(|&n| n < items)
            .min()
            .unwrap_or(items)
    }
}

fn run_peer_sized(pt: &Point) -> anyhow::Result<Outcome> {
    macro_rules! sized {
        ($($n:literal),*) => {
            match pt.item_size {
                $($n => run_peer::<$n>(pt),)*
                other => Err(usage(format!(
                    "{} runs with item sizes 8, 16, 32, 64, 128, 256, 512, 1024 or 4096, not {other}",
                    pt.imp.name()
                ))),
            }
        };
    }
    sized!(8, 16, 32, 64, 128, 256, 512, 1024, 4096)
}

fn run_peer<const N: usize>(pt: &Point) -> anyhow::Result<Outcome> {
    let start = Arc::new(Barrier::new(pt.producers + 1));
    let stopped = Arc::new(AtomicBool::new(false));
    let (p, items) = (pt.producers as u64, pt.items);
    let mut tally = Tally::new(p);
    let make = move |n: u64| {
        let mut a = [0u8; N];
        fill(&mut a, n);
        a
    };
    // The consumer loop: `pop` returns the next item if there is one.
    let consume =
        |pop: &mut dyn FnMut() -> Option<[u8; N]>, tally: &mut Tally| -> anyhow::Result<Outcome> {
            consumer_core(&pt.pin).map(pin_to).transpose()?;
            start.wait();
            let clock = Clock::start(pt.cap, &stopped);
            let mut last = Instant::now();
            while tally.received < items {
                if clock.over(tally.received) {
                    break;
                }
                let mut backoff = Backoff(0);
                loop {
                    if let Some(a) = pop() {
                        let n = verify(&a, None)?;
                        tally.take(n)?;
                        last = Instant::now();
                        break;
                    }
                    backoff.snooze();
                    if backoff.0 >= 6 && last.elapsed() > ITEM_TIMEOUT {
                        bail!(
                            "item {} did not arrive within {}s",
                            tally.missing(items),
                            ITEM_TIMEOUT.as_secs()
                        );
                    }
                }
            }
            Ok(Outcome {
                items: tally.received,
                elapsed: clock.t0.elapsed(),
            })
        };
    match pt.imp {
        Impl::Arrayqueue => {
            let q = Arc::new(crossbeam_queue::ArrayQueue::<[u8; N]>::new(pt.capacity));
            let qp = q.clone();
            let stop = stopped.clone();
            let handles = spawn_producers(pt, &start, move |k| {
                let mut n = k;
                while n < items {
                    let mut item = make(n);
                    let mut backoff = Backoff(0);
                    while let Err(back) = qp.push(item) {
                        item = back;
                        backoff.snooze();
                        // Acquire pairs with the Release store in `Clock::over`.
                        if backoff.0 >= 6 && stop.load(Ordering::Acquire) {
                            return Ok(());
                        }
                    }
                    n += p;
                }
                Ok(())
            });
            let outcome = consume(&mut || q.pop(), &mut tally);
            stopped.store(true, Ordering::Release);
            let outcome = outcome?;
            join(handles)?;
            Ok(outcome)
        }
        Impl::Rtrb => {
            let (prod, mut cons) = rtrb::RingBuffer::<[u8; N]>::new(pt.capacity);
            let prod = Arc::new(std::sync::Mutex::new(Some(prod)));
            let handles = spawn_producers(pt, &start, move |_k| {
                // One producer: take the rtrb producer out once, outside the timed loop.
                let mut prod = prod
                    .lock()
                    .map_err(|_| anyhow!("poisoned"))?
                    .take()
                    .ok_or_else(|| anyhow!("rtrb takes one producer"))?;
                for n in 0..items {
                    let mut item = make(n);
                    let mut backoff = Backoff(0);
                    while let Err(rtrb::PushError::Full(back)) = prod.push(item) {
                        item = back;
                        backoff.snooze();
                        if backoff.0 >= 6 && prod.is_abandoned() {
                            return Ok(());
                        }
                    }
                }
                Ok(())
            });
            let outcome = consume(&mut || cons.pop().ok(), &mut tally);
            drop(cons);
            let outcome = outcome?;
            join(handles)?;
            Ok(outcome)
        }
        Impl::SyncChannel => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<[u8; N]>(pt.capacity);
            let stop = stopped.clone();
            let handles = spawn_producers(pt, &start, move |k| {
                let mut n = k;
                while n < items {
                    if tx.send(make(n)).is_err() {
                        return unless_stopped(&stop, anyhow!("the consumer hung up"));
                    }
                    n += p;
                }
                Ok(())
            });
            // Blocking receive, with the same per-item time limit.
            let outcome = consume(&mut || rx.recv_timeout(ITEM_TIMEOUT).ok(), &mut tally);
            drop(rx);
            let outcome = outcome?;
            join(handles)?;
            Ok(outcome)
        }
        _ => unreachable!("not a peer"),
    }
}

/// `--processes`: the consumer (this process) creates the shared-memory ring and re-runs
/// this binary as `fugue bench ring-producer` P times. The clock starts when item 0 is read
/// (process start-up is not measured) and the rate counts the items after it.
fn run_processes(pt: &Point, strategy: Strategy) -> anyhow::Result<Outcome> {
    let name = format!("fugue-bench-ring-{}-{}", std::process::id(), unique());
    let options = Options {
        strategy,
        padding: pt.padding.to_padding(),
    };
    let mut consumer = shm::create_with(&name, pt.capacity, pt.item_size, options)
        .with_context(|| "cannot create the shared-memory ring")?;
    consumer_core(&pt.pin).map(pin_to).transpose()?;
    let exe = std::env::current_exe().context("cannot find the fugue binary to re-run")?;
    let mut children: Vec<Child> = Vec::new();
    for k in 0..pt.producers {
        let mut cmd = Command::new(&exe);
        cmd.args(["bench", "ring-producer", "--name", &name])
            .args(["--producers", &pt.producers.to_string()])
            .args(["--index", &k.to_string()])
            .args(["--items", &pt.items.to_string()])
            .args(["--item-size", &pt.item_size.to_string()])
            .stdin(Stdio::null());
        if let Some(core) = producer_core(&pt.pin, k) {
            cmd.args(["--pin", &core.to_string()]);
        }
        children.push(
            cmd.spawn()
                .with_context(|| format!("cannot start producer process {k}"))?,
        );
    }
    let mut result = Ok(());
    let mut t0 = Instant::now();
    for n in 0..pt.items {
        match consumer.next_timeout(ITEM_TIMEOUT) {
            Ok(item) => {
                if let Err(e) = verify(&item, Some(n)) {
                    result = Err(e);
                    break;
                }
            }
            Err(e) => {
                result = Err(e.into());
                break;
            }
        }
        if n == 0 {
            t0 = Instant::now();
        }
    }
    let elapsed = t0.elapsed();
    drop(consumer);
    for (k, mut c) in children.into_iter().enumerate() {
        let status = c.wait().with_context(|| format!("producer process {k}"))?;
        if result.is_ok() && !status.success() {
            result = Err(anyhow!("producer process {k} failed ({status})"));
        }
    }
    result?;
    // The items after item 0 against the time after item 0.
    Ok(Outcome {
        items: pt.items.saturating_sub(1).max(1),
        elapsed,
    })
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// `fugue bench ring-producer`: one producer process.
pub fn run_producer(a: ProducerArgs) -> anyhow::Result<()> {
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

/// Median, minimum and maximum.
pub(crate) fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let median = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    (median, v[0], v[v.len() - 1])
}

/// Runs `fugue bench ring`.
pub fn run(a: Args) -> anyhow::Result<()> {
    if a.sweep {
        return super::ring_sweep::run(&a);
    }
    if a.repeat == 0 {
        return Err(usage("--repeat must be at least 1"));
    }
    let pt = Point {
        imp: a.strategy,
        producers: a.producers,
        capacity: a.capacity,
        item_size: a.item_size,
        items: a.items,
        padding: a.padding,
        processes: a.processes,
        pin: a.pin.clone(),
        cap: None,
    };
    let mut rates = Vec::new();
    let mut seconds = Vec::new();
    for _ in 0..a.repeat {
        let o = run_point(&pt)?;
        seconds.push(o.elapsed.as_secs_f64());
        rates.push(o.rate());
    }
    let (median, min, max) = spread(&rates);
    let (secs, _, _) = spread(&seconds);
    if a.json {
        let v = serde_json::json!({
            "producers": pt.producers,
            "capacity": pt.capacity,
            "strategy": pt.imp.name(),
            "items": pt.items,
            "item_size": pt.item_size,
            "padding": pt.padding.name(),
            "processes": pt.processes,
            "pin": pt.pin,
            "seconds": secs,
            "items_per_sec": median,
            "repeat": a.repeat,
            "items_per_sec_min": min,
            "items_per_sec_max": max,
            "verified": true,
        });
        println!("{v}");
    } else {
        let spread = if a.repeat > 1 {
            format!(
                " (median of {}, min {:.3e}, max {:.3e})",
                a.repeat, min, max
            )
        } else {
            String::new()
        };
        println!(
            "{}: {} producer {}, capacity {}, {} items of {} bytes: {:.3e} items/s in {:.3}s{}; every item verified",
            pt.imp.name(),
            pt.producers,
            match (pt.processes, pt.producers == 1) {
                (true, true) => "process",
                (true, false) => "processes",
                (false, true) => "thread",
                (false, false) => "threads",
            },
            pt.capacity,
            pt.items,
            pt.item_size,
            median,
            secs,
            spread
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(imp: Impl, producers: usize, capacity: usize, item_size: usize) -> Point {
        Point {
            imp,
            producers,
            capacity,
            item_size,
            items: 5_000,
            padding: PaddingArg::Cacheline,
            processes: false,
            pin: None,
            cap: None,
        }
    }

    #[test]
    fn payload_round_trip_and_corruption_is_caught() {
        let mut buf = [0u8; 32];
        fill(&mut buf, 1234);
        assert_eq!(verify(&buf, Some(1234)).unwrap(), 1234);
        assert_eq!(verify(&buf, None).unwrap(), 1234);
        let e = verify(&buf, Some(1235)).unwrap_err();
        assert_eq!(e.to_string(), "item 1235 carries the number 1234");
        buf[20] ^= 1;
        let e = verify(&buf, Some(1234)).unwrap_err();
        assert!(e.to_string().starts_with("item 1234 has byte 20"), "{e}");
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
        assert_eq!(t.received, 4);
    }

    #[test]
    fn every_implementation_transfers_and_verifies() {
        for imp in [
            Impl::Spin,
            Impl::Yield,
            Impl::Park,
            Impl::Mutex,
            Impl::Arrayqueue,
            Impl::Rtrb,
            Impl::SyncChannel,
        ] {
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
        let mut p = point(Impl::Yield, 2, 4, 8);
        p.items = u64::MAX / 4;
        p.cap = Some(Duration::from_millis(50));
        let o = run_point(&p).unwrap();
        assert!(o.items > 0 && o.items < p.items);
        let mut p = point(Impl::Arrayqueue, 2, 4, 8);
        p.items = u64::MAX / 4;
        p.cap = Some(Duration::from_millis(50));
        let o = run_point(&p).unwrap();
        assert!(o.items > 0 && o.items < p.items);
    }

    #[test]
    fn bad_configurations_are_usage_errors() {
        let e = run_point(&point(Impl::Rtrb, 2, 8, 8)).unwrap_err();
        assert_eq!(crate::util::exit_code(&e), 2);
        let e = run_point(&point(Impl::Arrayqueue, 1, 8, 24)).unwrap_err();
        assert_eq!(crate::util::exit_code(&e), 2);
        let e = run_point(&point(Impl::Yield, 1, 8, 4)).unwrap_err();
        assert_eq!(crate::util::exit_code(&e), 2);
        let mut p = point(Impl::Mutex, 1, 8, 8);
        p.processes = true;
        assert_eq!(crate::util::exit_code(&run_point(&p).unwrap_err()), 2);
    }

    #[test]
    fn spread_is_median_min_max() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}
