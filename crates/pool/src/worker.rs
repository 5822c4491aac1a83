//! The registry (what a pool's threads share) and the worker threads: their loop, the search
//! for work, `join`, and waiting for a latch while working.

use std::cell::{Cell, UnsafeCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use crate::job::{JobRef, StackJob};
use crate::latch::{CoreLatch, LockLatch};
use crate::policy::Policy;
use crate::queues::{Back, Found, JobDeque, Local, Queues};
use crate::sleep::Sleep;
use crate::stats::{bump, Counters};
use fugue_sync::{CachePadded, Rng};

/// `steal`'s spin budget before parking: rounds of one search each, separated by
/// `2^min(round, 6)` spin hints (about 800 hints in all, some tens of microseconds).
const SPIN_ROUNDS: u32 = 16;

/// Then rounds of one `sched_yield` and one search each, before parking.
const YIELD_ROUNDS: u32 = 32;

/// The yield rounds of a pool of more threads than cores, which spins none: a thief that
/// spins there holds a core that a thread with work needs, and each of its searches reads
/// every other thread's deque (`docs/pool.md`, "Spin budget").
const OVERSUBSCRIBED_YIELD_ROUNDS: u32 = 2;

/// What the threads of one pool share.
pub(crate) struct Registry {
    pub queues: Queues,
    pub counters: Box<[CachePadded<Counters>]>,
    /// Counters of the threads outside the pool (written with read-modify-writes: several
    /// writers).
    pub outside: Counters,
    pub shutdown: AtomicBool,
    /// Detached tasks spawned and not finished; the pool's drop waits for zero.
    detached: AtomicUsize,
    detached_m: Mutex<()>,
    detached_cv: Condvar,
    pub policy: Policy,
    pub capacity: Option<usize>,
    /// `steal`'s spin and yield rounds before parking: [`SPIN_ROUNDS`] and [`YIELD_ROUNDS`],
    /// or none and [`OVERSUBSCRIBED_YIELD_ROUNDS`] with more threads than cores.
    idle_rounds: (u32, u32),
}

impl Registry {
    pub(crate) fn new(policy: Policy, nthreads: usize, capacity: Option<usize>) -> Self {
        let queues = Queues::new(policy, nthreads, capacity);
        let idle_rounds = if queues.oversubscribed() {
            (0, OVERSUBSCRIBED_YIELD_ROUNDS)
        } else {
            (SPIN_ROUNDS, YIELD_ROUNDS)
        };
        Registry {
            queues,
            counters: (0..nthreads)
                .map(|_| CachePadded::new(Counters::default()))
                .collect(),
            outside: Counters::default(),
            shutdown: AtomicBool::new(false),
            detached: AtomicUsize::new(0),
            detached_m: Mutex::new(()),
            detached_cv: Condvar::new(),
            policy,
            capacity,
            idle_rounds,
        }
    }

    pub(crate) fn nthreads(&self) -> usize {
        self.counters.len()
    }

    /// Queues a job from the calling thread: on its own queue if it is a worker of this pool,
    /// else on the injector. A full queue hands the job back (`bounded`).
    #[inline]
    pub(crate) fn push(&self, job: JobRef, bounded: bool) -> Result<(), JobRef> {
        match WorkerThread::current_of(self) {
            Some(w) => w.push_own(job),
            None => {
                // SAFETY: `None`: the injector, which any thread may use.
                let r = unsafe { self.queues.push(None, job, bounded) };
                if r.is_ok() {
                    self.outside.spawns.fetch_add(1, Ordering::Relaxed);
                }
                r
            }
        }
    }

    /// Runs `op` on a worker of this pool: at once if the calling thread is one, else sent in
    /// through the injector while the caller blocks.
    pub(crate) fn in_worker<R: Send>(&self, op: impl FnOnce(&WorkerThread) -> R + Send) -> R {
        if let Some(w) = WorkerThread::current_of(self) {
            return op(w);
        }
        let job = StackJob::new(LockLatch::new(), || {
            let w = WorkerThread::current().expect("an injected job runs on a worker");
            op(w)
        });
        // SAFETY: `None`: the injector. Unbounded: the pool's own work never fails to queue.
        unsafe { self.queues.push(None, job.as_job_ref(), false) }
            .unwrap_or_else(|_| unreachable!("an unbounded push succeeds"));
        self.outside.spawns.fetch_add(1, Ordering::Relaxed);
        job.latch.wait();
        job.into_result()
    }

    /// A detached task is about to be queued.
    pub(crate) fn detached_started(&self) {
        self.detached.fetch_add(1, Ordering::Relaxed);
    }

    /// A detached task finished (or was not queued).
    pub(crate) fn detached_done(&self) {
        // AcqRel: Release publishes the task's effects to the pool's drop (Acquire load in
        // `wait_detached`); Acquire makes the last decrement see every earlier one's.
        if self.detached.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Taking the mutex orders this notify after the dropper's check (which runs under
            // it), so the dropper is either past its check or asleep on the condvar.
            let _g = self
                .detached_m
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.detached_cv.notify_all();
        }
    }

    /// Blocks until every detached task has finished.
    pub(crate) fn wait_detached(&self) {
        let mut g = self
            .detached_m
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Acquire: pairs with the Release decrement of `detached_done`.
        while self.detached.load(Ordering::Acquire) != 0 {
            g = self
                .detached_cv
                .wait(g)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

thread_local! {
    /// The worker running on this thread, null outside every pool.
    static WORKER: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

/// A worker thread's own state. Lives on its thread's stack for the thread's life.
pub(crate) struct WorkerThread {
    pub index: usize,
    registry: Arc<Registry>,
    local: UnsafeCell<Local>,
    /// This worker's deque and the sleep state under `steal` (the registry, which owns them,
    /// outlives the worker): `join`'s fast path.
    fast: Option<(*const JobDeque, *const Sleep)>,
    /// A scope and the counts of it this worker holds, reserved and not spent (`scope.rs`);
    /// null, or any scope with zero counts, when it holds none.
    pub(crate) credit: Cell<(*const (), usize)>,
}

impl WorkerThread {
    /// The worker running on the calling thread, if any.
    #[inline]
    pub(crate) fn current() -> Option<&'static WorkerThread> {
        let p = WORKER.with(Cell::get);
        // SAFETY: the pointer is set by `run` to a worker on this thread's stack that outlives
        // every job the thread runs, and cleared before it goes; the `'static` reference does
        // not leave this thread (the worker is not `Sync` nor `Send`).
        unsafe { p.as_ref() }
    }

    /// The worker running on the calling thread, if it belongs to `registry`.
    #[inline]
    pub(crate) fn current_of(registry: &Registry) -> Option<&'static WorkerThread> {
        Self::current().filter(|w| std::ptr::eq(&*w.registry, registry))
    }

    #[inline]
    fn counters(&self) -> &Counters {
        &self.registry.counters[self.index]
    }

    /// The worker's local state.
    #[allow(clippy::mut_from_ref)]
    #[inline]
    fn local(&self) -> &mut Local {
        // SAFETY: only this thread touches `local` (the worker is not `Sync`), and no caller
        // holds the returned reference across a call that takes it again (each use is one
        // short call into `Queues`, which does not re-enter the worker).
        unsafe { &mut *self.local.get() }
    }

    /// The thread body of worker `index`.
    pub(crate) fn run(registry: Arc<Registry>, index: usize) {
        let fast = registry
            .queues
            .steal_parts(index)
            .map(|(d, s)| (d as *const JobDeque, s as *const Sleep));
        let w = WorkerThread {
            index,
            fast,
            credit: Cell::new((std::ptr::null(), 0)),
            local: UnsafeCell::new(Local {
                index,
                rng: Rng::new(index as u64 + 1),
                backoff_ns: Queues::initial_backoff_ns(),
            }),
            registry,
        };
        WORKER.with(|c| c.set(&w));
        w.main_loop();
        WORKER.with(|c| c.set(std::ptr::null()));
    }

    /// Gives back the counts of the worker's credit (`scope.rs`), if any.
    #[inline]
    pub(crate) fn give_back_credit(&self) {
        let (s, c) = self.credit.get();
        if c > 0 {
            self.credit.set((std::ptr::null(), 0));
            // SAFETY: the worker holds `c` counts of `s`, so the scope has not completed and
            // is live; the credit no longer refers to them.
            unsafe { crate::scope::give_back(s, c) };
        }
    }

    /// Gives back the calling thread's credit if it is a worker (before it runs a job that is
    /// not a scope's task).
    #[inline]
    pub(crate) fn give_back_current_credit() {
        if let Some(w) = Self::current() {
            w.give_back_credit();
        }
    }

    /// Queues a job on this worker's queue.
    #[inline]
    pub(crate) fn push(&self, job: JobRef) -> Result<(), JobRef> {
        // SAFETY: `self` is the calling thread's worker (a `WorkerThread` never leaves its
        // thread).
        let r = unsafe { self.registry.queues.push(Some(self.index), job, true) };
        if r.is_ok() {
            bump(&self.counters().spawns, 1);
        }
        r
    }

    /// Queues a job (a spawn, or `b` of a `join`) on this worker's queue: `push`, with
    /// `steal`'s deque reached directly.
    #[inline(always)]
    pub(crate) fn push_own(&self, job: JobRef) -> Result<(), JobRef> {
        let Some((d, sleep)) = self.fast else {
            return self.push(job);
        };
        // SAFETY: the deque and the sleep state belong to the registry, which this worker
        // keeps alive; this thread is the deque's owner.
        match unsafe { (*d).push(job.as_ptr()) } {
            Ok(was_empty) => {
                if was_empty {
                    // SAFETY: as above.
                    unsafe { (*sleep).work_pushed() };
                }
                bump(&self.counters().spawns, 1);
                Ok(())
            }
            Err(_) => Err(job),
        }
    }

    /// Takes back `b` of a `join` (see `Queues::take_back`), with `steal`'s deque reached
    /// directly.
    #[inline(always)]
    fn take_back(&self, job: JobRef) -> Back {
        let Some((d, _)) = self.fast else {
            // SAFETY: `self` is the calling thread's worker.
            return unsafe { self.registry.queues.take_back(self.index, job) };
        };
        // SAFETY: as in `push_own`.
        match unsafe { (*d).pop() } {
            Some(p) if p == job.as_ptr() => Back::Mine,
            // SAFETY: the deque holds only pointers of queued jobs.
            Some(p) => Back::Other(unsafe { JobRef::from_ptr(p) }),
            None => Back::Gone,
        }
    }

    #[inline]
    fn pop_local(&self) -> Option<JobRef> {
        // SAFETY: as in `push`.
        unsafe { self.registry.queues.pop_local(self.index) }
    }

    /// Runs a job taken from a queue.
    #[inline]
    fn execute(&self, job: JobRef) {
        bump(&self.counters().tasks, 1);
        // SAFETY: the job was taken out of its queue by this thread: nobody else runs it.
        unsafe { job.execute() }
    }

    /// One search: the own queue, then a steal attempt.
    #[inline]
    fn find_work(&self) -> Option<JobRef> {
        if let Some(j) = self.pop_local() {
            return Some(j);
        }
        let q = &self.registry.queues;
        if !q.steals() {
            return None;
        }
        match q.steal(self.local()) {
            Found::Job(j) => {
                bump(&self.counters().steals, 1);
                Some(j)
            }
            Found::Nothing => {
                bump(&self.counters().failed_steals, 1);
                None
            }
        }
    }

    fn main_loop(&self) {
        let reg = &*self.registry;
        loop {
            if let Some(j) = self.find_work() {
                self.execute(j);
                continue;
            }
            // Nothing to run: a scope's counts held here may be its last.
            self.give_back_credit();
            // Acquire: pairs with the dropper's store; nothing is left to run (the pool's
            // drop waits for every task first).
            if reg.shutdown.load(Ordering::Acquire) {
                return;
            }
            let t0 = self.counters().idle_begin();
            let found = self.idle();
            self.counters().idle_end(t0);
            if let Some(j) = found {
                reg.queues.found_work(self.local());
                self.execute(j);
            }
        }
    }

    /// The search failed: spin and yield (`steal` only) and then wait the policy's way.
    /// Returns a job if the spin found one.
    #[cold]
    fn idle(&self) -> Option<JobRef> {
        let reg = &*self.registry;
        if reg.queues.spins() {
            let (spin_rounds, yield_rounds) = reg.idle_rounds;
            for round in 0..spin_rounds {
                for _ in 0..(1u32 << round.min(6)) {
                    fugue_sync::spin_hint();
                }
                if let Some(j) = self.find_work() {
                    return Some(j);
                }
            }
            for _ in 0..yield_rounds {
                fugue_sync::yield_now();
                if let Some(j) = self.find_work() {
                    return Some(j);
                }
            }
        }
        if reg.queues.idle(self.local(), &reg.shutdown) {
            bump(&self.counters().sleeps, 1);
        }
        None
    }

    /// Runs other work until `latch` is set (or, without `work`, only waits). A worker waiting
    /// for a scope works: the scope's tasks may be in its own queue, or wait for work that is.
    pub(crate) fn wait_until(&self, latch: &CoreLatch, work: bool) {
        let mut idle_since: Option<u64> = None;
        let mut fails = 0u32;
        while !latch.probe() {
            // The latch may wait for counts of this worker's credit (its own scope's, or
            // another's that a thread waits for).
            self.give_back_credit();
            if let Some(j) = work.then(|| self.find_work()).flatten() {
                if let Some(t0) = idle_since.take() {
                    self.counters().idle_end(t0);
                }
                fails = 0;
                self.execute(j);
                continue;
            }
            if idle_since.is_none() {
                idle_since = Some(self.counters().idle_begin());
            }
            fails += 1;
            if fails < 64 {
                fugue_sync::spin_hint();
            } else if fails < 128 {
                std::thread::yield_now();
            } else {
                // The work we wait for runs elsewhere and left nothing to steal: do not burn
                // the core meanwhile.
                bump(&self.counters().sleeps, 1);
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        if let Some(t0) = idle_since {
            self.counters().idle_end(t0);
        }
    }

    /// `join` on a worker: `b` is queued where thieves can take it, `a` runs at once; then `b`
    /// is taken back and run here if nobody took it, or waited for.
    ///
    /// While `b` runs elsewhere, a worker with its own queue steals (the oldest, largest tasks
    /// of other threads). A worker of a shared stack (`lifo-*`) only waits: running the
    /// newest task of another thread on top of its own tree, as it would find it there, could
    /// nest without bound. Waiting without working cannot deadlock: `b` runs on another thread,
    /// and along a chain of threads each waiting for a `b` that the next one runs, every `b`
    /// was queued after the previous one was taken, while a thread's own frames run tasks
    /// taken before it queued the `b` it waits for, so no chain comes back to a thread.
    pub(crate) fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let job_b = StackJob::new(CoreLatch::new(), b);
        let ref_b = job_b.as_job_ref();
        if self.push_own(ref_b).is_err() {
            // Full queue: no parallelism for this pair.
            let ra = a();
            return (ra, job_b.run_inline());
        }
        let ra = catch_unwind(AssertUnwindSafe(a));
        loop {
            if job_b.latch.probe() {
                break;
            }
            match self.take_back(ref_b) {
                Back::Mine => {
                    // Taken back unrun: run it here (unless `a` panicked: then it is dropped).
                    let ra = ra.unwrap_or_else(|p| resume_unwind(p));
                    bump(&self.counters().tasks, 1);
                    return (ra, job_b.run_inline());
                }
                Back::Other(j) => self.execute(j),
                Back::Gone => {
                    let work = !self.registry.queues.shared_stack();
                    self.wait_until(&job_b.latch, work);
                    break;
                }
            }
        }
        let ra = ra.unwrap_or_else(|p| resume_unwind(p));
        (ra, job_b.into_result())
    }
}
