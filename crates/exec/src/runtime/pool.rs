//! The worker pool: threads created once; between cycles they spin for a bounded time and
//! then park on a futex; the audio thread wakes them at cycle start with at most one system
//! call (and none when every worker is still spinning).
//!
//! Protocol ("Sleep and wake" in `docs/executors.md`): the audio thread publishes the cycle's
//! data, then bumps the epoch word (`Signal::notify`, a read-modify-write) and wakes sleepers
//! if any announced themselves. A worker waits for the epoch to differ from the last one it
//! served (`Signal::wait_until`), then calls [`Work::work`] with its index.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::executors::ExecOptions;
use crate::placement::Placement;
#[cfg(not(loom))]
use crate::placement::{pin_current, set_realtime_current};
use crate::runtime::signal::{Signal, SpinBudget};
use crate::trace::{now, now_ns, set_worker_index};
use fugue_sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// The per-cycle work of an executor, run by every worker after each epoch bump.
pub trait Work: Send + Sync + 'static {
    /// Runs this worker's share of the current cycle (worker indices 1..threads; index 0 is
    /// the audio thread, which calls its executor directly). Returns when the worker sees
    /// nothing more to do for this cycle.
    fn work(&self, worker: usize);
}

struct Shared<W> {
    epoch: Signal,
    shutdown: AtomicBool,
    budget: SpinBudget,
    /// Waking ahead of periodic cycles (`ExecOptions::period`), when the period is known.
    ahead: Option<Ahead>,
    /// When the last cycle started ([`now_ns`] clock; written by the audio thread when
    /// `ahead` is set).
    last_start: CachePadded<AtomicU64>,
    /// Whether workers record their wake-ups.
    profiling: AtomicBool,
    /// Per worker (index 0 unused): the epoch it last woke for, and when.
    wakes: Box<[CachePadded<WakeRecord>]>,
    work: W,
}

/// One worker's last wake-up, for the profile. Written by the worker (the time, then the
/// epoch with Release), read by the audio thread between cycles (the epoch with Acquire, then
/// the time): a worker still writing when the audio thread reads shows as not woken.
#[derive(Default)]
struct WakeRecord {
    epoch: AtomicU32,
    /// [`now`](crate::trace::now) ticks.
    at: AtomicU64,
}

/// Waking ahead of periodic cycles, in ns of the [`now_ns`] clock.
#[derive(Clone, Copy)]
struct Ahead {
    period_ns: u64,
    lead_ns: u64,
}

/// A worker does not go to sleep for less than this before its wake-up time: a futex wait
/// and its wake-up cost more than spinning that long.
const MIN_AHEAD_SLEEP_NS: u64 = 30_000;

/// After waking ahead, a worker spins until this long past the expected start (at least;
/// the lead is added) before sleeping until woken: the backend's own wake-up may be late.
const AHEAD_SPIN_PAST_NS: u64 = 100_000;

/// The longest lead a worker learns ([`Lead`]): a quarter of the period, and at most this.
const MAX_LEARNED_LEAD_NS: u64 = 2_000_000;

/// The least lead is also at least the period divided by this (at most
/// [`MAX_PERIOD_LEAD_NS`]): after a long period, a processor that has just woken runs the
/// first microseconds of a cycle slowly (on the 2-vCPU virtual machine measured, a 2048-frame
/// cycle of rateau101.ag on two threads took a median 148 µs with a 50 µs lead, against 93 µs
/// with 1 ms, while the workers were in time either way; `bench-results/profile/`), and
/// spinning a twentieth of the period warms it for 5 % of a core.
const PERIOD_LEAD_SHARE: u64 = 20;

/// The most lead [`PERIOD_LEAD_SHARE`] gives.
const MAX_PERIOD_LEAD_NS: u64 = 1_000_000;

/// A worker's own lead over the expected start of the next cycle, learned from its wake-ups:
/// the lead asked for ([`ExecOptions::wake_lead`]), or a twentieth of the period when that is
/// more ([`PERIOD_LEAD_SHARE`]), is the least; each time the worker wakes
/// after the cycle has started (its timer, or the processor it runs on, woke it too late:
/// on a virtual machine an idle processor can take a hundred microseconds and more to run
/// again after a long period) the lead doubles, up to a quarter of the period and at most
/// [`MAX_LEARNED_LEAD_NS`]; each cycle it was in time, the lead shrinks by a sixty-fourth of
/// its excess over the least. So a worker spins only as long before each cycle as its
/// wake-ups need.
struct Lead {
    least: u64,
    most: u64,
    now: u64,
}

impl Lead {
    fn new(ahead: Ahead) -> Lead {
        // No lead asked for: the workers sleep until the cycle wakes them.
        let least = if ahead.lead_ns == 0 {
            0
        } else {
            ahead
                .lead_ns
                .max((ahead.period_ns / PERIOD_LEAD_SHARE).min(MAX_PERIOD_LEAD_NS))
        };
        Lead {
            least,
            most: (ahead.period_ns / 4).min(MAX_LEARNED_LEAD_NS).max(least),
            now: least,
        }
    }

    /// The worker woke after the cycle had started.
    fn late(&mut self) {
        self.now = self.now.saturating_mul(2).clamp(self.least, self.most);
    }

    /// The worker was spinning when the cycle started.
    fn in_time(&mut self) {
        self.now -= (self.now - self.least) / 64;
    }
}

/// The system refused a worker thread (a process or memory limit): no pool was made, and
/// the workers already started have left.
#[derive(Debug, thiserror::Error)]
#[error("cannot start worker thread {index} of {threads}: {source}")]
pub struct StartError {
    /// The worker that could not start (1-based among the workers, the audio thread apart).
    pub index: usize,
    /// The workers asked for.
    pub threads: usize,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The workers' start: each says what it could not set up (pinning, priority), then waits
/// for the creator's word: run, or leave (a later worker could not be started). When
/// [`Pool::new`] returns, every worker has started and will allocate or free nothing more
/// until the pool is dropped.
#[cfg(not(loom))]
#[derive(Default)]
struct Start {
    state: std::sync::Mutex<StartState>,
    cv: std::sync::Condvar,
}

#[cfg(not(loom))]
#[derive(Default)]
struct StartState {
    arrived: usize,
    problems: Vec<String>,
    /// `Some(true)`: run; `Some(false)`: leave.
    word: Option<bool>,
}

#[cfg(not(loom))]
impl Start {
    fn lock(&self) -> std::sync::MutexGuard<'_, StartState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A worker has started with `problems`; returns whether it is to run.
    fn arrive(&self, problems: Vec<String>) -> bool {
        let mut s = self.lock();
        s.arrived += 1;
        s.problems.extend(problems);
        self.cv.notify_all();
        while s.word.is_none() {
            s = self
                .cv
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        s.word == Some(true)
    }

    /// Waits for `workers` to have arrived, tells them to run, and returns their problems.
    fn run(&self, workers: usize) -> Vec<String> {
        let mut s = self.lock();
        while s.arrived < workers {
            s = self
                .cv
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        s.word = Some(true);
        self.cv.notify_all();
        std::mem::take(&mut s.problems)
    }

    /// Tells the workers started to leave.
    fn abandon(&self) {
        self.lock().word = Some(false);
        self.cv.notify_all();
    }
}

/// A pool of `threads - 1` workers serving `W` (the audio thread is the `threads`-th).
pub struct Pool<W: Work> {
    shared: Arc<Shared<W>>,
    handles: Vec<fugue_sync::thread::JoinHandle<()>>,
    /// Problems met while placing threads (pinning or priority refused), said once.
    pub warnings: Vec<String>,
}

impl<W: Work> Pool<W> {
    /// Starts `threads - 1` worker threads, which wait between cycles as `opts` says
    /// (`idle_budget`, `period`, `wake_lead`) and are placed per `opts.placement`. Fails when
    /// the system refuses a thread; the workers started by then are stopped.
    pub fn new(threads: usize, work: W, opts: &ExecOptions) -> Result<Self, StartError> {
        let placement: &Placement = &opts.placement;
        let ahead = opts.period.filter(|p| !p.is_zero()).map(|p| Ahead {
            period_ns: p.as_nanos() as u64,
            lead_ns: (opts.wake_lead.min(p).as_nanos() as u64),
        });
        let shared = Arc::new(Shared {
            epoch: Signal::new(),
            shutdown: AtomicBool::new(false),
            budget: opts.idle_budget,
            ahead,
            last_start: CachePadded::new(AtomicU64::new(0)),
            profiling: AtomicBool::new(false),
            wakes: (0..threads.max(1))
                .map(|_| CachePadded::new(WakeRecord::default()))
                .collect(),
            work,
        });
        // The epoch the workers start from, read here and not in the threads: a thread that
        // starts late must still serve every cycle begun after the pool was made.
        let start = shared.epoch.seq();
        // Workers report placement problems, then wait for the creator's word ([`Start`]):
        // when `new` returns, every worker has started and will allocate or free nothing
        // more until the pool is dropped (the shared start stays alive in each worker until
        // it exits). Under loom, workers are model threads with no placement and no start
        // (the models do not count allocations).
        #[cfg(not(loom))]
        let report = Arc::new(Start::default());
        let workers = threads.max(1) - 1;
        let mut handles = Vec::with_capacity(workers);
        for w in 1..=workers {
            let started = {
                let shared = shared.clone();
                #[cfg(not(loom))]
                let (placement, report) = (placement.clone(), report.clone());
                fugue_sync::thread::spawn(format!("fugue-worker-{w}"), move || {
                    set_worker_index(w as u32);
                    crate::denormals::flush_denormals_on_this_thread();
                    #[cfg(not(loom))]
                    {
                        let mut problems = Vec::new();
                        if ahead.is_some() {
                            // Timed wake-ups at the time asked, not up to the default 50 µs
                            // of slack later.
                            // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
                            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                        }
                        if !placement.cores.is_empty() {
                            if let Err(e) = pin_current(placement.cores[w % placement.cores.len()])
                            {
                                problems.push(e.to_string());
                            }
                        }
                        if let Some(p) = placement.rt_priority {
                            if let Err(e) = set_realtime_current(p) {
                                problems.push(e.to_string());
                            }
                        }
                        if !report.arrive(problems) {
                            return;
                        }
                    }
                    worker_loop(&shared, w, start);
                    #[cfg(not(loom))]
                    drop(report);
                })
            };
            match started {
                Ok(h) => handles.push(h),
                Err(source) => {
                    #[cfg(not(loom))]
                    report.abandon();
                    for h in handles {
                        let _ = h.join();
                    }
                    return Err(StartError {
                        index: w,
                        threads: workers,
                        source,
                    });
                }
            }
        }
        #[cfg(not(loom))]
        let warnings = {
            let mut warnings = report.run(workers);
            warnings.sort();
            warnings.dedup();
            warnings
        };
        #[cfg(loom)]
        let warnings = {
            let _ = placement;
            Vec::new()
        };
        Ok(Pool {
            shared,
            handles,
            warnings,
        })
    }

    /// The shared work state.
    #[inline]
    pub fn work(&self) -> &W {
        &self.shared.work
    }

    /// Starts a cycle: every worker will call [`Work::work`] once more. Publish the cycle's
    /// data before calling this (the SeqCst bump is a release for it).
    #[inline]
    pub fn start_cycle(&self) {
        if self.shared.ahead.is_some() {
            // Relaxed: a hint for the workers' next wake-up time.
            self.shared.last_start.store(now_ns(), Ordering::Relaxed);
        }
        self.shared.epoch.notify();
    }
}

/// What an executor's worker pool answers whatever work it serves: the [`Executor`]'s
/// methods about its threads, which a parallel executor hands to its pool by returning it
/// from [`Executor::workers`].
///
/// [`Executor`]: crate::Executor
/// [`Executor::workers`]: crate::Executor::workers
pub trait Workers {
    /// Problems met while placing threads (pinning or priority refused), each said once.
    fn warnings(&self) -> &[String];

    /// Threads, the calling one included.
    fn threads(&self) -> usize;

    /// Turns the workers' wake-up records on or off.
    fn set_profiling(&self, on: bool);

    /// For each worker `w` of `out`: when it woke for the last cycle started, or `None`.
    fn wakes(&self, out: &mut [Option<u64>]);
}

impl<W: Work> Workers for Pool<W> {
    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn threads(&self) -> usize {
        self.shared.wakes.len()
    }

    fn set_profiling(&self, on: bool) {
        self.shared.profiling.store(on, Ordering::Relaxed);
    }

    fn wakes(&self, out: &mut [Option<u64>]) {
        let epoch = self.shared.epoch.seq();
        for (w, o) in out.iter_mut().enumerate() {
            *o = match self.shared.wakes.get(w) {
                // Acquire: pairs with the worker's Release store of its epoch.
                Some(r) if w > 0 && r.epoch.load(Ordering::Acquire) == epoch => {
                    Some(r.at.load(Ordering::Relaxed))
                }
                _ => None,
            };
        }
    }
}

fn worker_loop<W: Work>(shared: &Shared<W>, w: usize, start: u32) {
    let mut seen = start;
    let mut lead = shared.ahead.map(Lead::new);
    loop {
        match (shared.ahead, lead.as_mut()) {
            (Some(ahead), Some(lead)) => wait_ahead(shared, ahead, lead, seen),
            _ => shared
                .epoch
                .wait_until(shared.budget, || shared.epoch.seq() != seen),
        }
        seen = shared.epoch.seq();
        // Acquire: pairs with the Release store in `Drop`.
        if shared.shutdown.load(Ordering::Acquire) {
            return;
        }
        if shared.profiling.load(Ordering::Relaxed) {
            let r = &shared.wakes[w];
            r.at.store(now(), Ordering::Relaxed);
            // Release: a reader that sees this epoch sees this time (Acquire in `wakes`).
            r.epoch.store(seen, Ordering::Release);
        }
        shared.work.work(w);
    }
}

/// The wait between periodic cycles: sleep until `lead` before the next cycle's expected
/// start (one period after the last start), spin from there until it starts, and sleep until
/// woken if it has not started well past that time. A cycle that starts during the first
/// sleep ends it at once (the sleep is on the epoch's futex). The lead adapts ([`Lead`]).
fn wait_ahead<W: Work>(shared: &Shared<W>, ahead: Ahead, lead: &mut Lead, seen: u32) {
    let changed = || shared.epoch.seq() != seen;
    if changed() {
        return;
    }
    let expected = shared
        .last_start
        .load(Ordering::Relaxed)
        .saturating_add(ahead.period_ns);
    let wake_at = expected.saturating_sub(lead.now);
    if now_ns().saturating_add(MIN_AHEAD_SLEEP_NS) < wake_at {
        // Woken by the cycle's start, or awake only after it: late.
        if shared.epoch.sleep_until(wake_at, changed) || changed() {
            if lead.least > 0 {
                lead.late();
            }
            return;
        }
        lead.in_time();
    }
    let spin_until = expected + lead.now.max(AHEAD_SPIN_PAST_NS);
    let budget = SpinBudget {
        spins: shared.budget.spins,
        time: Duration::from_nanos(spin_until.saturating_sub(now_ns())),
    };
    // Under loom, no spin bounded by the real clock: the model steps would be unbounded.
    #[cfg(loom)]
    let budget = {
        let _ = budget;
        SpinBudget::NONE
    };
    shared.epoch.wait_until(budget, changed);
}

impl<W: Work> Drop for Pool<W> {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.epoch.notify();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}
