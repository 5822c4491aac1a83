//! Statistics: per-thread counters that only their worker writes (one cache line each, no
//! shared line written by two threads), summed on demand, and the process's CPU time.
//!
//! The counters are plain loads and stores on atomics (no read-modify-write: each has one
//! writer). [`Stats`] figures are differences between two snapshots, so taking them never
//! writes to a worker's line. A snapshot taken while tasks run is a count of what had been
//! counted by then; taken after a scope returned, it includes every task of the scope (a worker
//! counts a task before running it). A worker that is idle when a snapshot is taken publishes
//! when its idle period began, and the snapshot counts that period up to its own instant, so a
//! run's idle time is the idle time within the run (to within the instant of a worker's
//! transition from idle to busy, which two plain stores publish).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The counters of one thread (written by that thread only).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub tasks: AtomicU64,
    pub spawns: AtomicU64,
    pub steals: AtomicU64,
    pub failed_steals: AtomicU64,
    pub sleeps: AtomicU64,
    pub idle_ns: AtomicU64,
    /// When the current idle period began ([`now_ns`]), 0 when busy.
    pub idle_since_ns: AtomicU64,
}

/// Nanoseconds since the first call in this process (never 0 after the first call: the
/// clock starts at 1).
pub(crate) fn now_ns() -> u64 {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(Instant::now);
    base.elapsed().as_nanos() as u64 + 1
}

impl Counters {
    /// This worker starts looking for work in vain: an idle period begins.
    #[inline]
    pub(crate) fn idle_begin(&self) -> u64 {
        let t = now_ns();
        // Relaxed: a statistic; see `bump`.
        self.idle_since_ns.store(t, Ordering::Relaxed);
        t
    }

    /// The idle period that began at `since` ends.
    #[inline]
    pub(crate) fn idle_end(&self, since: u64) {
        self.idle_since_ns.store(0, Ordering::Relaxed);
        bump(&self.idle_ns, now_ns().saturating_sub(since));
    }
}

/// Adds `n` to a counter that only the calling thread writes.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    // Relaxed: a statistic, single writer; readers want a value, not an order.
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self, now: u64) -> ThreadStats {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let since = l(&self.idle_since_ns);
        let ongoing = if since == 0 {
            0
        } else {
            now.saturating_sub(since)
        };
        ThreadStats {
            tasks: l(&self.tasks),
            spawns: l(&self.spawns),
            steals: l(&self.steals),
            failed_steals: l(&self.failed_steals),
            sleeps: l(&self.sleeps),
            idle: Duration::from_nanos(l(&self.idle_ns) + ongoing),
        }
    }
}

/// What one thread did. For the threads outside the pool together (spawns from outside,
/// detached spawns), only `spawns` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    /// Tasks run (spawned tasks, stolen or popped halves of `join`, work sent from outside).
    pub tasks: u64,
    /// Tasks pushed by this thread (spawns and the queued half of each `join`).
    pub spawns: u64,
    /// Steal attempts that took a task. An attempt is one sweep over the other threads'
    /// queues (and the injector) in random order.
    pub steals: u64,
    /// Steal attempts that found nothing.
    pub failed_steals: u64,
    /// Times the thread went to sleep (futex, condition variable or timed sleep, per policy).
    pub sleeps: u64,
    /// Time spent looking for work without finding it, asleep or spinning.
    pub idle: Duration,
}

impl ThreadStats {
    fn minus(&self, b: &ThreadStats) -> ThreadStats {
        ThreadStats {
            tasks: self.tasks.wrapping_sub(b.tasks),
            spawns: self.spawns.wrapping_sub(b.spawns),
            steals: self.steals.wrapping_sub(b.steals),
            failed_steals: self.failed_steals.wrapping_sub(b.failed_steals),
            sleeps: self.sleeps.wrapping_sub(b.sleeps),
            idle: self.idle.saturating_sub(b.idle),
        }
    }

    fn add(&mut self, o: &ThreadStats) {
        self.tasks += o.tasks;
        self.spawns += o.spawns;
        self.steals += o.steals;
        self.failed_steals += o.failed_steals;
        self.sleeps += o.sleeps;
        self.idle += o.idle;
    }
}

/// The statistics of a run: what happened between two snapshots.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// One entry per worker thread, by index.
    pub threads: Vec<ThreadStats>,
    /// Threads outside the pool (spawns into the injector).
    pub outside: ThreadStats,
    /// The sum over the workers and the outside.
    pub total: ThreadStats,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// CPU time of the whole process in user mode over the run (`getrusage(RUSAGE_SELF)`).
    pub cpu_user: Duration,
    /// CPU time of the whole process in the kernel over the run.
    pub cpu_system: Duration,
}

impl Stats {
    /// User plus system CPU time of the process over the run.
    pub fn cpu(&self) -> Duration {
        self.cpu_user + self.cpu_system
    }
}

/// A point in time to measure a run from.
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    threads: Vec<ThreadStats>,
    outside: ThreadStats,
    at: Instant,
    cpu_user: Duration,
    cpu_system: Duration,
}

impl Snapshot {
    pub(crate) fn take(threads: &[fugue_sync::CachePadded<Counters>], outside: &Counters) -> Self {
        let (cpu_user, cpu_system) = process_cpu_time();
        let now = now_ns();
        Snapshot {
            threads: threads.iter().map(|c| c.snapshot(now)).collect(),
            outside: outside.snapshot(now),
            at: Instant::now(),
            cpu_user,
            cpu_system,
        }
    }

    /// What happened from `earlier` to `self`.
    pub(crate) fn since(&self, earlier: &Snapshot) -> Stats {
        let threads: Vec<ThreadStats> = self
            .threads
            .iter()
            .zip(&earlier.threads)
            .map(|(a, b)| a.minus(b))
            .collect();
        let outside = self.outside.minus(&earlier.outside);
        let mut total = outside;
        for t in &threads {
            total.add(t);
        }
        Stats {
            threads,
            outside,
            total,
            wall: self.at.saturating_duration_since(earlier.at),
            cpu_user: self.cpu_user.saturating_sub(earlier.cpu_user),
            cpu_system: self.cpu_system.saturating_sub(earlier.cpu_system),
        }
    }
}

/// The process's user and system CPU time so far.
pub fn process_cpu_time() -> (Duration, Duration) {
    // SAFETY: `rusage` is plain data, all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable `rusage`; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    (tv(ru.ru_utime), tv(ru.ru_stime))
}
