//! The pool: its builder, its threads, and the entry points from outside.

use std::num::NonZeroUsize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::error::{BuildError, SpawnError};
use crate::job::{HeapJob, Run};
use crate::policy::Policy;
use crate::scope::{self, Scope};
use crate::stats::{Snapshot, Stats};
use crate::worker::{Registry, WorkerThread};

/// The default stack size of a worker thread: 32 MiB of address space (committed only as
/// used). Waiting workers run other tasks on top of the task that waits (a `join` whose other
/// half was stolen, a nested scope), so the stack holds several task trees at once.
pub const DEFAULT_STACK_SIZE: usize = 32 << 20;

/// The most threads a pool accepts.
pub const MAX_THREADS: usize = 4096;

/// The number of threads a pool gets by default: the cores the calling thread may run on
/// (`std::thread::available_parallelism`), within the process's CPU quota rounded up (1.5
/// CPUs give 2 threads, which together run the 1.5 the quota grants, where one would run
/// 1), 1 if that is unknown.
pub fn default_threads() -> usize {
    let granted = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    // The standard library rounds a quota down: where it is a fraction, up to the next
    // whole CPU, within the cores the thread may run on.
    match crate::quota::cpus() {
        Some(q) if q.fract() > 0.0 && (q.ceil() as usize) > granted => (q.ceil() as usize)
            .min(affinity_cores().unwrap_or(granted))
            .max(granted),
        _ => granted,
    }
}

/// The cores the calling thread may run on (its affinity), when it can be read.
fn affinity_cores() -> Option<usize> {
    // SAFETY: `cpu_set_t` is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = this thread; `set` is a valid cpu_set_t of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    // SAFETY: `set` was filled by the call above.
    (r == 0).then(|| unsafe { libc::CPU_COUNT(&set) } as usize)
}

/// Builds a [`Pool`].
///
/// ```
/// use fugue_pool::{Policy, Pool};
/// let pool = Pool::builder().threads(2).policy(Policy::StealMutex).capacity(64).build()?;
/// assert_eq!(pool.threads(), 2);
/// # Ok::<(), fugue_pool::BuildError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct PoolBuilder {
    threads: Option<usize>,
    policy: Policy,
    capacity: Option<usize>,
    stack_size: Option<usize>,
}

impl PoolBuilder {
    /// A builder with the defaults: [`default_threads`], [`Policy::Steal`], unbounded queues.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of worker threads (0 is rejected by [`build`](Self::build)).
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// The policy.
    pub fn policy(mut self, p: Policy) -> Self {
        self.policy = p;
        self
    }

    /// Bounds each queue of the policy to `n` tasks (the shared stack of `lifo-*`; each
    /// thread's deque and the injector of `steal-*`): a spawn into a full queue gets its task
    /// back ([`SpawnError::Full`]). 0 is rejected by [`build`](Self::build).
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = Some(n);
        self
    }

    /// The stack size of each worker thread, in bytes (default [`DEFAULT_STACK_SIZE`]).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts the threads.
    pub fn build(self) -> Result<Pool, BuildError> {
        let n = self.threads.unwrap_or_else(default_threads);
        if n == 0 {
            return Err(BuildError::ZeroThreads);
        }
        if n > MAX_THREADS {
            return Err(BuildError::TooManyThreads {
                requested: n,
                limit: MAX_THREADS,
                why: "fugue-pool's limit",
            });
        }
        if let Some(limit) = nproc_limit() {
            // The limit counts the user's threads, this process's calling thread among them.
            if n >= limit {
                return Err(BuildError::TooManyThreads {
                    requested: n,
                    limit: limit.saturating_sub(1),
                    why: "RLIMIT_NPROC, less the calling thread",
                });
            }
        }
        if self.capacity == Some(0) {
            return Err(BuildError::ZeroCapacity);
        }
        // Before any thread starts: the pool's hand-overs are told to the race checkers
        // that watch the process, if any.
        crate::checkers::init();
        let registry = Arc::new(Registry::new(self.policy, n, self.capacity));
        let mut handles = Vec::with_capacity(n);
        let stack = self.stack_size.unwrap_or(DEFAULT_STACK_SIZE);
        for index in 0..n {
            let r = registry.clone();
            let h = std::thread::Builder::new()
                .name(format!("fugue-pool-{index}"))
                .stack_size(stack)
                .spawn(move || WorkerThread::run(r, index));
            match h {
                Ok(h) => handles.push(h),
                Err(source) => {
                    stop(&registry, handles);
                    return Err(BuildError::Spawn {
                        index,
                        stack,
                        source,
                    });
                }
            }
        }
        let since = Mutex::new(Snapshot::take(&registry.counters, &registry.outside));
        Ok(Pool {
            registry,
            handles,
            since,
        })
    }
}

/// The soft `RLIMIT_NPROC`, when finite (held to for root too, whom the kernel does not hold
/// to it: one rule wherever the program runs).
fn nproc_limit() -> Option<usize> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid, writable `rlimit`.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) };
    (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur as usize)
}

/// Stops the threads: they leave when they find no work and see the flag.
fn stop(registry: &Registry, handles: Vec<JoinHandle<()>>) {
    // Release: pairs with the workers' Acquire load (SeqCst for the sleep protocols'
    // re-checks, which read the flag as part of their condition).
    registry
        .shutdown
        .store(true, std::sync::atomic::Ordering::SeqCst);
    registry.queues.wake_all();
    for h in handles {
        // A worker does not panic (every task's panic is caught); nothing to report.
        let _ = h.join();
    }
}

/// A pool of worker threads running tasks under one [`Policy`].
///
/// Dropping the pool waits for every detached task ([`spawn`](Self::spawn)), then stops and
/// joins the threads and frees every queue.
///
/// # Guarantees
/// - every task queued runs exactly once;
/// - what a thread did before it spawned a task happens-before the task starts;
/// - everything a scope's tasks did happens-before [`scope`](Self::scope) returns (and the
///   same for both halves of [`join`](Self::join));
/// - a panic in a task is caught, the other tasks still run, and the first panic is resumed
///   in the caller of `scope` once every task has finished.
pub struct Pool {
    registry: Arc<Registry>,
    handles: Vec<JoinHandle<()>>,
    since: Mutex<Snapshot>,
}

/// A detached task.
struct DetachedTask<F> {
    registry: *const Registry,
    f: F,
}

// SAFETY: `F: Send`; the registry is `Sync`.
unsafe impl<F: Send> Send for DetachedTask<F> {}

impl<F: FnOnce() + Send> Run for DetachedTask<F> {
    fn run(self) {
        // Not a scope's task: a credit of scope counts held by this worker goes back first
        // (`scope.rs`), so that this task's run does not delay the scope.
        crate::worker::WorkerThread::give_back_current_credit();
        // A detached task's panic has nobody to go to: it is caught and dropped.
        let _ = catch_unwind(AssertUnwindSafe(self.f));
        // SAFETY: the pool's drop waits for every detached task, and the registry outlives the
        // pool's threads: it is live.
        unsafe { (*self.registry).detached_done() };
    }
}

impl Pool {
    /// A pool of `threads` threads under `policy`, with unbounded queues.
    pub fn new(threads: usize, policy: Policy) -> Result<Pool, BuildError> {
        PoolBuilder::new().threads(threads).policy(policy).build()
    }

    /// The pool's registry (its queues and workers).
    #[cfg(test)]
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// A builder.
    pub fn builder() -> PoolBuilder {
        PoolBuilder::new()
    }

    /// The number of worker threads.
    pub fn threads(&self) -> usize {
        self.registry.nthreads()
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.registry.policy
    }

    /// The capacity of each queue, if bounded.
    pub fn capacity(&self) -> Option<usize> {
        self.registry.capacity
    }

    /// Runs `op` with a [`Scope`] in the pool and returns when `op` and every task spawned in
    /// the scope have finished. `op` runs on a worker (the calling thread if it is one of this
    /// pool's, else the caller blocks). The first panic of `op` or a task is resumed here,
    /// after all have finished.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        scope::scope(&self.registry, op)
    }

    /// [`scope`](Self::scope), with the statistics of the run (everything the pool did from
    /// the call to the return; resets the baseline of [`stats`](Self::stats)).
    pub fn scope_with_stats<'scope, OP, R>(&self, op: OP) -> (R, Stats)
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        let _ = self.stats();
        let r = self.scope(op);
        (r, self.stats())
    }

    /// Runs `a` and `b`, potentially in parallel, and returns both results. On a worker of
    /// this pool, `a` runs at once on the calling thread and `b` is queued where another
    /// thread can steal it (and taken back if nobody did); from outside, the pair is sent
    /// into the pool and the caller blocks. No allocation. A panic in either is resumed after
    /// both finished.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.registry.in_worker(move |w| w.join(a, b))
    }

    /// Runs `op` on a worker of the pool and returns its result (the caller blocks if it is
    /// not one of the pool's threads). Inside, [`join`](crate::join) uses this pool.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        self.registry.in_worker(move |_| op())
    }

    /// Queues a detached task (not tied to a scope). If its queue is full, `f` runs at once on
    /// the calling thread instead. The pool's drop waits for it; a panic in it is dropped.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if let Err(SpawnError::Full(f)) = self.try_spawn(f) {
            let _ = catch_unwind(AssertUnwindSafe(f));
        }
    }

    /// Queues a detached task, or hands it back when its queue is full.
    pub fn try_spawn<F>(&self, f: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce() + Send + 'static,
    {
        self.registry.detached_started();
        let job = HeapJob::into_job_ref(DetachedTask {
            registry: &*self.registry,
            f,
        });
        match self.registry.push(job, true) {
            Ok(()) => Ok(()),
            Err(job) => {
                // SAFETY: built just above with this type, not queued.
                let t = unsafe { HeapJob::<DetachedTask<F>>::into_inner(job) };
                self.registry.detached_done();
                Err(SpawnError::Full(t.f))
            }
        }
    }

    /// The statistics since the previous call (or since the pool was built), and a new
    /// baseline. See [`Stats`] for what a snapshot taken while tasks run contains.
    pub fn stats(&self) -> Stats {
        let now = Snapshot::take(&self.registry.counters, &self.registry.outside);
        let mut since = self.since.lock().unwrap_or_else(|e| e.into_inner());
        let s = now.since(&since);
        *since = now;
        s
    }

    /// The index of the calling thread in this pool, if it is one of its workers.
    pub fn current_thread_index(&self) -> Option<usize> {
        WorkerThread::current_of(&self.registry).map(|w| w.index)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.registry.wait_detached();
        stop(&self.registry, std::mem::take(&mut self.handles));
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("threads", &self.threads())
            .field("policy", &self.policy())
            .field("capacity", &self.capacity())
            .finish()
    }
}

/// Runs `a` and `b`, potentially in parallel: on a worker thread of a pool, as
/// [`Pool::join`] in that pool; on any other thread, `a` then `b` on the calling thread.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(w) => w.join(a, b),
        None => (a(), b()),
    }
}

/// The index of the calling thread in its pool, if it is a worker thread of one.
pub fn current_thread_index() -> Option<usize> {
    WorkerThread::current().map(|w| w.index)
}
