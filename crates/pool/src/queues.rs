//! The queues of each policy and what an idle thread does under it.
//!
//! Every policy offers the same steps to the worker loop (`worker.rs`): `push` (from a worker
//! of the pool, `me = Some(index)`, or from outside, `None`), `pop_local`, `steal` (one sweep
//! over the other queues), `has_work`, `idle` (the policy's wait when a search failed) and
//! `wake_all` (shutdown). Only `steal` is lock-free; the others are the baselines that
//! `docs/pool.md` describes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering as StdOrdering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use fugue_sync::deque::{Asymmetric, Deque, Growing, Steal};
use fugue_sync::{AtomicUsize as SyncUsize, CachePadded, Ordering, Rng};

use crate::job::{JobHeader, JobRef};
use crate::policy::Policy;
use crate::sleep::Sleep;

/// `lifo-spin`'s idle sleep.
const LIFO_SPIN_SLEEP: Duration = Duration::from_millis(2);
/// `steal-mutex`'s idle sleep.
const STEAL_MUTEX_SLEEP: Duration = Duration::from_millis(1);
/// The adaptive sleeps' bounds (`steal-backoff-*`), in nanoseconds.
const BACKOFF_MIN_NS: u64 = 1_000;
const BACKOFF_MAX_NS: u64 = 2_000_000;
/// The initial capacity of a `steal` deque's ring (it grows as needed).
const DEQUE_INITIAL: usize = 256;

/// A `steal` worker's deque of job pointers (`fugue_sync::deque`): a growing ring, bounded by
/// the pool's capacity when it has one; asymmetric fences, so that the owner's frequent `pop`
/// pays a compiler fence and the thieves' rare `steal` the `membarrier` call.
pub(crate) type JobDeque = Deque<*mut JobHeader, Growing<*mut JobHeader>, Asymmetric>;

/// A worker's own state that the policies use.
pub(crate) struct Local {
    /// The worker's index.
    pub index: usize,
    /// The victim order.
    pub rng: Rng,
    /// `steal-backoff-local`'s current sleep, in nanoseconds.
    pub backoff_ns: u64,
}

/// Locks a mutex; a poisoned one (a panic while held: never in this crate, whose critical
/// sections do not panic) is used as is.
#[inline]
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A mutex over a queue's storage, held: what its holders did under it is told to race
/// checkers ([`crate::checkers`]), which do not see the standard library's futex-based
/// mutexes, and would otherwise take a queue's growth on one thread (a `realloc`) for a race
/// with its growth on another.
struct Held<'a, T> {
    guard: Option<MutexGuard<'a, T>>,
    at: *const Mutex<T>,
}

/// Locks a mutex over a queue's storage (see [`Held`]).
#[inline]
fn hold<T>(m: &Mutex<T>) -> Held<'_, T> {
    let guard = lock(m);
    crate::checkers::acquire(m);
    Held {
        guard: Some(guard),
        at: m,
    }
}

impl<T> Held<'_, T> {
    /// Waits on `cv`, unlocked meanwhile (as `Condvar::wait`).
    fn wait(&mut self, cv: &Condvar) {
        if let Some(g) = self.guard.take() {
            crate::checkers::release(self.at);
            self.guard = Some(cv.wait(g).unwrap_or_else(PoisonError::into_inner));
            crate::checkers::acquire(self.at);
        }
    }
}

impl<T> std::ops::Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl<T> std::ops::DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("held until dropped")
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        // Before the guard, a field, unlocks.
        crate::checkers::release(self.at);
    }
}

/// Spin-loop rounds a `lifo-spin` thread waits for the lock before it yields its core
/// between looks (a held lock is released within a few hundred nanoseconds when its holder
/// runs).
const SPIN_BEFORE_YIELD: u32 = 256;

/// A test-and-test-and-set spinlock around a value (`lifo-spin`).
struct SpinLock<T> {
    locked: AtomicBool,
    value: std::cell::UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `value`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: std::cell::UnsafeCell::new(value),
        }
    }

    /// Runs `f` with the value, under the lock. A thread that has waited
    /// [`SPIN_BEFORE_YIELD`] rounds yields its core between looks: the holder may be off its
    /// core (more threads than cores), and spinning would only keep it off longer.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut rounds = 0u32;
        loop {
            // Acquire: pairs with the Release store of the previous holder's unlock.
            if !self.locked.swap(true, StdOrdering::Acquire) {
                break;
            }
            while self.locked.load(StdOrdering::Relaxed) {
                if rounds < SPIN_BEFORE_YIELD {
                    rounds += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
        crate::checkers::acquire(self);
        // SAFETY: we hold the lock, so no other reference to the value exists.
        let r = f(unsafe { &mut *self.value.get() });
        crate::checkers::release(self);
        // Release: pairs with the next holder's Acquire swap.
        self.locked.store(false, StdOrdering::Release);
        r
    }
}

/// `lifo-mutex`'s state under its one mutex.
struct LifoState {
    jobs: Vec<JobRef>,
    waiting: usize,
}

/// How an idle thief of a locked-deque policy waits.
enum LockedIdle {
    /// `steal-mutex`: a fixed sleep.
    Fixed,
    /// `steal-backoff-shared`: one adaptive sleep for all.
    SharedBackoff(CachePadded<AtomicU64>),
    /// `steal-backoff-local`: one adaptive sleep per thread (in [`Local`]).
    LocalBackoff,
    /// `steal-condvar`: a condition variable signalled on push.
    Condvar {
        m: Mutex<()>,
        cv: Condvar,
        waiting: CachePadded<AtomicUsize>,
    },
}

enum Kind {
    LifoMutex {
        state: Mutex<LifoState>,
        cv: Condvar,
    },
    LifoSpin {
        stack: SpinLock<Vec<JobRef>>,
        len: AtomicUsize,
    },
    Locked {
        deques: Box<[CachePadded<Mutex<VecDeque<JobRef>>>]>,
        injector: Mutex<VecDeque<JobRef>>,
        idle: LockedIdle,
    },
    Steal {
        deques: Box<[CachePadded<JobDeque>]>,
        injector: Mutex<VecDeque<JobRef>>,
        /// The injector's length, written under its lock, read without it as a hint (and by
        /// the sleep protocol's re-check).
        injected: CachePadded<SyncUsize>,
        sleep: Sleep,
    },
}

/// The queues of one pool.
pub(crate) struct Queues {
    kind: Kind,
    /// The most tasks one queue holds (`usize::MAX`: unbounded).
    cap: usize,
    nthreads: usize,
    /// The timed sleeps of the polling policies.
    nap: Nap,
}

/// The timed sleep of an idle thread under the polling policies (`lifo-spin`, `steal-mutex`,
/// `steal-backoff-*`), stretched when the threads outnumber the cores `stretch` times: each
/// sleep lasts the policy's time times a random whole number from 1 to `2 × stretch - 1`
/// (`stretch` on average), so that the pool's wake-ups stay at about those of one sleeper
/// per core and thousands of idle threads do not fill the cores with wake-ups (2,048 threads
/// sleeping 2 ms each on 2 cores had starved the pool's own start for tens of seconds). The
/// random lengths spread the sleepers' wake-ups (threads that fell asleep together, at the
/// pool's start, would otherwise all wake together, one stretched sleep later): new work is
/// found by the first of them to wake, within about one policy's sleep. Every sleep ends at
/// shutdown ([`Nap::ring`]: a pool's end waits for no sleep), and a job from outside the pool
/// ends one ([`Nap::nudge`]: a pool's first job is usually taken at once).
struct Nap {
    stretch: u32,
    rung: Mutex<bool>,
    bell: Condvar,
    /// Threads in a sleep (a hint: a push from outside the pool rings for them only).
    sleepers: CachePadded<AtomicUsize>,
}

impl Nap {
    fn new(nthreads: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Nap {
            stretch: u32::try_from(nthreads.div_ceil(cores).max(1)).unwrap_or(1 << 20),
            rung: Mutex::new(false),
            bell: Condvar::new(),
            sleepers: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Whether the threads outnumber the cores.
    fn oversubscribed(&self) -> bool {
        self.stretch > 1
    }

    /// Sleeps `d`, stretched; until shutdown rings, or a job comes from outside the pool
    /// ([`Nap::nudge`]), at most.
    fn sleep(&self, d: Duration, rng: &mut Rng) {
        let times = if self.stretch == 1 {
            1
        } else {
            1 + rng.below(2 * self.stretch as usize - 1)
        };
        let rung = lock(&self.rung);
        if !*rung {
            // Relaxed: a hint for `nudge`; one that misses this sleeper leaves it to its time.
            self.sleepers.fetch_add(1, StdOrdering::Relaxed);
            drop(
                self.bell
                    .wait_timeout(rung, d.saturating_mul(times as u32))
                    .unwrap_or_else(PoisonError::into_inner),
            );
            self.sleepers.fetch_sub(1, StdOrdering::Relaxed);
        }
    }

    /// Ends the sleeps, now and to come (shutdown).
    fn ring(&self) {
        *lock(&self.rung) = true;
        self.bell.notify_all();
    }

    /// Wakes one thread asleep now, if any: a job came from outside the pool (a scope's
    /// first job, or one spawned by a thread of the program's), which no worker would find
    /// before its sleep ends (a millisecond or two at each `sched_init`'s start). One, not
    /// all: a thousand outside spawns would otherwise wake a thousand idle threads each.
    /// A hint: a thread about to sleep may miss it, and then finds the job after its sleep.
    fn nudge(&self) {
        // Relaxed: a hint (see `sleep`).
        if self.sleepers.load(StdOrdering::Relaxed) > 0 {
            let _g = lock(&self.rung);
            self.bell.notify_one();
        }
    }
}

/// What a worker found when it came back for a job it queued (the second half of a `join`).
pub(crate) enum Back {
    /// The job, taken back unrun.
    Mine,
    /// Another job of this thread's, queued after it (a task that the first half spawned):
    /// run it and come back.
    Other(JobRef),
    /// Another thread took the job.
    Gone,
}

/// What a search found.
pub(crate) enum Found {
    /// A job.
    Job(JobRef),
    /// Nothing.
    Nothing,
}

impl Queues {
    pub(crate) fn new(policy: Policy, nthreads: usize, cap: Option<usize>) -> Self {
        let capn = cap.unwrap_or(usize::MAX);
        let locked = |idle| Kind::Locked {
            deques: (0..nthreads)
                .map(|_| CachePadded::new(Mutex::new(VecDeque::new())))
                .collect(),
            injector: Mutex::new(VecDeque::new()),
            idle,
        };
        let kind = match policy {
            Policy::LifoMutex => Kind::LifoMutex {
                state: Mutex::new(LifoState {
                    jobs: Vec::new(),
                    waiting: 0,
                }),
                cv: Condvar::new(),
            },
            Policy::LifoSpin => Kind::LifoSpin {
                stack: SpinLock::new(Vec::new()),
                len: AtomicUsize::new(0),
            },
            Policy::StealMutex => locked(LockedIdle::Fixed),
            Policy::StealBackoffShared => locked(LockedIdle::SharedBackoff(CachePadded::new(
                AtomicU64::new(BACKOFF_MIN_NS),
            ))),
            Policy::StealBackoffLocal => locked(LockedIdle::LocalBackoff),
            Policy::StealCondvar => locked(LockedIdle::Condvar {
                m: Mutex::new(()),
                cv: Condvar::new(),
                waiting: CachePadded::new(AtomicUsize::new(0)),
            }),
            Policy::Steal => Kind::Steal {
                deques: (0..nthreads)
                    .map(|_| CachePadded::new(JobDeque::growing(DEQUE_INITIAL, cap)))
                    .collect(),
                injector: Mutex::new(VecDeque::new()),
                injected: CachePadded::new(SyncUsize::new(0)),
                sleep: Sleep::new(),
            },
        };
        Queues {
            kind,
            cap: capn,
            nthreads,
            nap: Nap::new(nthreads),
        }
    }

    /// Queues a job: on worker `me`'s queue, or from outside the pool (`None`). With
    /// `bounded`, a full queue hands the job back; without, the job is queued regardless
    /// (the pool's own work sent in from outside, which must not fail).
    ///
    /// # Safety
    /// `me`, when `Some`, is the index of the calling thread's own worker (the lock-free
    /// deque has one owner).
    #[inline]
    pub(crate) unsafe fn push(
        &self,
        me: Option<usize>,
        job: JobRef,
        bounded: bool,
    ) -> Result<(), JobRef> {
        let cap = if bounded { self.cap } else { usize::MAX };
        match &self.kind {
            Kind::Steal {
                deques,
                injector,
                injected,
                sleep,
            } => {
                match me {
                    Some(i) if bounded || deques[i].len() < self.cap => {
                        // SAFETY: worker `i` is the calling thread (our contract): the deque's
                        // owner.
                        let was_empty = unsafe { deques[i].push(job.as_ptr()) }
                            // SAFETY: the deque hands back the pointer it was given.
                            .map_err(|p| unsafe { JobRef::from_ptr(p) })?;
                        // Only a push into an empty deque wakes a sleeper (see `sleep.rs`,
                        // "Local pushes"): the items above it are covered by that wake-up.
                        if was_empty {
                            sleep.work_pushed();
                        }
                        return Ok(());
                    }
                    _ => {
                        let mut q = hold(injector);
                        if q.len() >= cap {
                            return Err(job);
                        }
                        q.push_back(job);
                        // Relaxed: written under the lock; the sleep protocol's fences order
                        // it against the sleepers' re-check (see `sleep.rs`).
                        injected.store(q.len(), Ordering::Relaxed);
                    }
                }
                sleep.work_pushed();
            }
            Kind::LifoMutex { state, cv } => {
                let mut s = hold(state);
                if s.jobs.len() >= cap {
                    return Err(job);
                }
                s.jobs.push(job);
                if s.waiting > 0 {
                    cv.notify_one();
                }
            }
            Kind::LifoSpin { stack, len } => {
                stack.with(|s| {
                    if s.len() >= cap {
                        return Err(job);
                    }
                    s.push(job);
                    len.store(s.len(), StdOrdering::Relaxed);
                    Ok(())
                })?;
                if me.is_none() {
                    self.nap.nudge();
                }
            }
            Kind::Locked {
                deques,
                injector,
                idle,
            } => {
                let q = match me {
                    Some(i) => &*deques[i],
                    None => injector,
                };
                {
                    let mut q = hold(q);
                    if q.len() >= cap {
                        return Err(job);
                    }
                    q.push_back(job);
                }
                if let LockedIdle::Condvar { m, cv, waiting } = idle {
                    // SeqCst: pairs with the sleeper's SeqCst increment (see `idle`).
                    if waiting.load(StdOrdering::SeqCst) > 0 {
                        let _g = lock(m);
                        cv.notify_one();
                    }
                } else if me.is_none() {
                    self.nap.nudge();
                }
            }
        }
        Ok(())
    }

    /// Pops from worker `me`'s own queue (the shared stack for `lifo-*`), newest first.
    ///
    /// # Safety
    /// As for [`push`](Self::push): `me` is the calling thread's worker.
    #[inline]
    pub(crate) unsafe fn pop_local(&self, me: usize) -> Option<JobRef> {
        match &self.kind {
            Kind::Steal { deques, .. } => {
                // SAFETY: the calling thread owns deque `me` (our contract); the deque holds
                // only pointers that `push` was given.
                unsafe { deques[me].pop().map(|p| JobRef::from_ptr(p)) }
            }
            Kind::LifoMutex { state, .. } => hold(state).jobs.pop(),
            Kind::LifoSpin { stack, len } => {
                if len.load(StdOrdering::Relaxed) == 0 {
                    return None;
                }
                stack.with(|s| {
                    let j = s.pop();
                    len.store(s.len(), StdOrdering::Relaxed);
                    j
                })
            }
            Kind::Locked { deques, .. } => hold(&deques[me]).pop_back(),
        }
    }

    /// Takes back `job`, which worker `me` queued: from the worker's own queue (where the jobs
    /// above it are the worker's, queued after it), or from the shared stack of `lifo-*`
    /// (where the jobs above it may be any thread's: it is taken out from under them, so that
    /// a thread never runs another thread's newer work on top of its own).
    ///
    /// # Safety
    /// As for [`push`](Self::push): `me` is the calling thread's worker.
    #[inline]
    pub(crate) unsafe fn take_back(&self, me: usize, job: JobRef) -> Back {
        let shared = |s: &mut Vec<JobRef>| match s.iter().rposition(|&j| j == job) {
            Some(i) => {
                s.remove(i);
                Back::Mine
            }
            None => Back::Gone,
        };
        match &self.kind {
            Kind::LifoMutex { state, .. } => shared(&mut hold(state).jobs),
            Kind::LifoSpin { stack, len } => stack.with(|s| {
                let r = shared(s);
                len.store(s.len(), StdOrdering::Relaxed);
                r
            }),
            // SAFETY: forwarded contract.
            _ => match unsafe { self.pop_local(me) } {
                Some(j) if j == job => Back::Mine,
                Some(j) => Back::Other(j),
                None => Back::Gone,
            },
        }
    }

    /// One steal attempt: the injector, then every other worker's queue from a random one on,
    /// oldest task first. `lifo-*` policies have nothing to steal.
    #[inline]
    pub(crate) fn steal(&self, local: &mut Local) -> Found {
        match &self.kind {
            Kind::Steal {
                deques,
                injector,
                injected,
                sleep,
            } => {
                if injected.load(Ordering::Relaxed) > 0 {
                    let mut q = hold(injector);
                    if let Some(j) = q.pop_front() {
                        injected.store(q.len(), Ordering::Relaxed);
                        return Found::Job(j);
                    }
                }
                let n = self.nthreads;
                let start = local.rng.below(n);
                for k in 0..n {
                    let v = (start + k) % n;
                    if v == local.index {
                        continue;
                    }
                    let d = &deques[v];
                    loop {
                        match d.steal() {
                            Steal::Success(p) => {
                                // More work behind it: pass the wake-up on (see `sleep.rs`).
                                if !d.is_empty() {
                                    sleep.work_pushed();
                                }
                                // SAFETY: the deque holds only pointers that `push` was given.
                                return Found::Job(unsafe { JobRef::from_ptr(p) });
                            }
                            Steal::Retry => fugue_sync::spin_hint(),
                            Steal::Empty => break,
                        }
                    }
                }
                Found::Nothing
            }
            Kind::Locked {
                deques, injector, ..
            } => {
                if let Some(j) = hold(injector).pop_front() {
                    return Found::Job(j);
                }
                let n = self.nthreads;
                let start = local.rng.below(n);
                for k in 0..n {
                    let v = (start + k) % n;
                    if v == local.index {
                        continue;
                    }
                    if let Some(j) = hold(&deques[v]).pop_front() {
                        return Found::Job(j);
                    }
                }
                Found::Nothing
            }
            Kind::LifoMutex { .. } | Kind::LifoSpin { .. } => Found::Nothing,
        }
    }

    /// Whether this policy has queues to steal from.
    pub(crate) fn steals(&self) -> bool {
        matches!(self.kind, Kind::Steal { .. } | Kind::Locked { .. })
    }

    /// Whether any queue holds a job (a hint, except where a protocol's proof uses it).
    pub(crate) fn has_work(&self) -> bool {
        match &self.kind {
            Kind::Steal {
                deques, injected, ..
            } => injected.load(Ordering::Relaxed) > 0 || deques.iter().any(|d| !d.is_empty()),
            Kind::LifoMutex { state, .. } => !lock(state).jobs.is_empty(),
            Kind::LifoSpin { len, .. } => len.load(StdOrdering::Relaxed) > 0,
            Kind::Locked {
                deques, injector, ..
            } => !lock(injector).is_empty() || deques.iter().any(|d| !lock(d).is_empty()),
        }
    }

    /// A worker's search failed: the policy's wait. Returns when work may be there (or at
    /// shutdown, or spuriously); the caller searches again. `true` when the thread slept.
    pub(crate) fn idle(&self, local: &mut Local, shutdown: &AtomicBool) -> bool {
        match &self.kind {
            Kind::Steal { sleep, .. } => {
                sleep.fall_asleep(|| self.has_work() || shutdown.load(StdOrdering::SeqCst));
                true
            }
            Kind::LifoMutex { state, cv } => {
                let mut s = hold(state);
                if s.jobs.is_empty() && !shutdown.load(StdOrdering::SeqCst) {
                    s.waiting += 1;
                    s.wait(cv);
                    s.waiting -= 1;
                    true
                } else {
                    false
                }
            }
            Kind::LifoSpin { .. } => {
                self.nap.sleep(LIFO_SPIN_SLEEP, &mut local.rng);
                true
            }
            Kind::Locked { idle, .. } => match idle {
                LockedIdle::Fixed => {
                    self.nap.sleep(STEAL_MUTEX_SLEEP, &mut local.rng);
                    true
                }
                LockedIdle::SharedBackoff(ns) => {
                    let d = ns.load(StdOrdering::Relaxed);
                    self.nap.sleep(Duration::from_nanos(d), &mut local.rng);
                    ns.store((d * 2).min(BACKOFF_MAX_NS), StdOrdering::Relaxed);
                    true
                }
                LockedIdle::LocalBackoff => {
                    self.nap
                        .sleep(Duration::from_nanos(local.backoff_ns), &mut local.rng);
                    local.backoff_ns = (local.backoff_ns * 2).min(BACKOFF_MAX_NS);
                    true
                }
                LockedIdle::Condvar { m, cv, waiting } => {
                    let g = lock(m);
                    // SeqCst: pairs with the pusher's SeqCst load. Either the pusher's queue
                    // lock comes after our re-check's (then it sees this increment, and its
                    // notify, which takes `m`, waits until we sleep), or our re-check sees
                    // its job.
                    waiting.fetch_add(1, StdOrdering::SeqCst);
                    let slept = if !self.has_work() && !shutdown.load(StdOrdering::SeqCst) {
                        drop(cv.wait(g).unwrap_or_else(PoisonError::into_inner));
                        true
                    } else {
                        drop(g);
                        false
                    };
                    waiting.fetch_sub(1, StdOrdering::SeqCst);
                    slept
                }
            },
        }
    }

    /// A worker found work after searching: the adaptive sleeps shrink.
    #[inline]
    pub(crate) fn found_work(&self, local: &mut Local) {
        if let Kind::Locked { idle, .. } = &self.kind {
            match idle {
                LockedIdle::SharedBackoff(ns) => {
                    let d = ns.load(StdOrdering::Relaxed);
                    if d > BACKOFF_MIN_NS {
                        ns.store((d / 2).max(BACKOFF_MIN_NS), StdOrdering::Relaxed);
                    }
                }
                LockedIdle::LocalBackoff => {
                    local.backoff_ns = (local.backoff_ns / 2).max(BACKOFF_MIN_NS);
                }
                _ => {}
            }
        }
    }

    /// Worker `i`'s lock-free deque and the sleep state, under `steal` (the fast path of
    /// `join`).
    pub(crate) fn steal_parts(&self, i: usize) -> Option<(&JobDeque, &Sleep)> {
        match &self.kind {
            Kind::Steal { deques, sleep, .. } => Some((&deques[i], sleep)),
            _ => None,
        }
    }

    /// Whether the policy is one shared stack that several threads pop.
    pub(crate) fn shared_stack(&self) -> bool {
        self.nthreads > 1 && matches!(self.kind, Kind::LifoMutex { .. } | Kind::LifoSpin { .. })
    }

    /// Whether idle threads spin before they wait (`steal` only: the others must not burn a
    /// core while idle).
    pub(crate) fn spins(&self) -> bool {
        matches!(self.kind, Kind::Steal { .. })
    }

    /// Whether the pool has more threads than the cores it may run on (the measure that
    /// stretches the polling policies' sleeps).
    pub(crate) fn oversubscribed(&self) -> bool {
        self.nap.oversubscribed()
    }

    /// Wakes every waiting thread (shutdown; the caller has set the shutdown flag).
    pub(crate) fn wake_all(&self) {
        self.nap.ring();
        match &self.kind {
            Kind::Steal { sleep, .. } => sleep.wake_all(),
            Kind::LifoMutex { state, cv } => {
                let _g = lock(state);
                cv.notify_all();
            }
            Kind::Locked {
                idle: LockedIdle::Condvar { m, cv, .. },
                ..
            } => {
                let _g = lock(m);
                cv.notify_all();
            }
            _ => {}
        }
    }

    /// The initial adaptive sleep of a thread.
    pub(crate) const fn initial_backoff_ns() -> u64 {
        BACKOFF_MIN_NS
    }
}
