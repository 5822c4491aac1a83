//! Scopes: a set of tasks that may borrow from the caller's stack, and the wait for all of them.
//!
//! A scope counts its pending tasks (`pending`, starting at 1 for its owner). A spawn adds one
//! before the task is queued (a spawn outside the scope's tasks adds two, and gives its own
//! back once it no longer touches the pool); a task removes one after it ran (its panic, if any, recorded
//! first); the owner removes its own after the body returned. The decrement that reaches zero
//! sets the scope's latch, and the owner returns after it sees the latch set. Since the count
//! is raised by a spawner that still holds one itself (a running task, or the owner), it cannot
//! reach zero while a task may still spawn.
//!
//! Counts are reserved in batches and kept by the worker: a worker holds a credit of counts
//! of one scope (`WorkerThread::credit`). A task that spawns into its own scope spends the
//! credit, taking [`CREDIT_BATCH`] counts with one increment when it is empty; a task that
//! ends adds its own count to the credit when the credit is its scope's, instead of
//! decrementing the shared counter. The next task of the same scope on that worker spends it
//! on its spawns. Counts in a credit are in the counter, so the argument above holds: the
//! counter reaches zero only once every credit of the scope has been given back. A worker
//! gives its credit back (one decrement) when it takes up a task of another scope or any
//! other job, when it finds no work, and at every turn of a wait (`wait_until`), so a credit
//! is held only while the worker keeps running tasks of that scope, which cannot have
//! finished meanwhile. A scope's tasks thus write the shared counter's line, which every
//! worker running them would otherwise write for every task, about once per
//! `CREDIT_BATCH` tasks and when a worker runs out of them.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::SpawnError;
use crate::job::{HeapJob, Run};
use crate::latch::{CoreLatch, LockLatch};
use crate::worker::{Registry, WorkerThread};

/// Counts a task reserves at once for its spawns into its own scope.
const CREDIT_BATCH: usize = 8;

/// The scope's owner waits on one of these.
enum ScopeLatch {
    /// The owner is a worker: it polls while running other work.
    Core(CoreLatch),
    /// The owner is a thread outside the pool: it blocks.
    Lock(LockLatch),
}

/// A scope: tasks spawned in it may borrow anything that outlives `'scope`, and the pool's
/// [`scope`](crate::Pool::scope) returns only when every one of them (and every task they
/// spawned in the scope, transitively) has finished.
///
/// `Scope` is `Sync`: a task may spawn into the scope it got from any thread (the C ABI's
/// `struct scheduler *` is a pointer to a `Scope`).
pub struct Scope<'scope> {
    registry: *const Registry,
    pending: AtomicUsize,
    /// The first panic of a task or of the body.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    latch: ScopeLatch,
    /// Invariant in `'scope`, as `std::thread::Scope`.
    _marker: PhantomData<&'scope mut &'scope ()>,
}

// SAFETY: the fields shared between threads are an atomic, a mutex and latches (themselves
// `Sync`); `registry` points to the pool's registry, which is `Sync` and outlives the scope
// (the scope borrows the pool).
unsafe impl Sync for Scope<'_> {}
// SAFETY: as above (a scope is never moved while tasks refer to it: they hold `&Scope`).
unsafe impl Send for Scope<'_> {}

/// A spawned task of a scope.
struct ScopeTask<'scope, F> {
    scope: *const Scope<'scope>,
    f: F,
}

// SAFETY: `F: Send`; `scope` points to a `Sync` scope.
unsafe impl<F: Send> Send for ScopeTask<'_, F> {}

impl<'scope, F: FnOnce(&Scope<'scope>) + Send> Run for ScopeTask<'scope, F> {
    fn run(self) {
        // SAFETY: the scope outlives its tasks: its owner does not return before the count
        // that this task holds is given back (below).
        let scope = unsafe { &*self.scope };
        let f = self.f;
        // The worker's credit (see the module doc): kept if it is this scope's, else given
        // back and started anew for this scope.
        let me: *const () = self.scope.cast();
        let worker = WorkerThread::current();
        if let Some(w) = worker {
            if w.credit.get().0 != me {
                w.give_back_credit();
                w.credit.set((me, 0));
            }
        }
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(scope))) {
            scope.record_panic(p);
        }
        match worker.map(|w| (w, w.credit.get())) {
            // The credit is still this scope's: this task's count joins it.
            Some((w, (s, c))) if s == me => w.credit.set((me, c + 1)),
            // A task of another scope, run on top of this one while it waited, took the
            // credit over (having given ours back): give back this task's count alone.
            // SAFETY: the scope is live (as above); this is our last access to it.
            _ => unsafe { Scope::complete(self.scope, 1) },
        }
    }
}

/// Gives back `n` counts of the scope `scope` (a worker's credit).
///
/// # Safety
/// `scope` is a live scope (a `Scope` of any lifetime) and the caller holds `n` counts of it.
pub(crate) unsafe fn give_back(scope: *const (), n: usize) {
    // SAFETY: forwarded contract; the lifetime parameter does not change the layout.
    unsafe { Scope::complete(scope.cast::<Scope<'static>>(), n) }
}

impl<'scope> Scope<'scope> {
    fn new(registry: &Registry, latch: ScopeLatch) -> Self {
        Scope {
            registry,
            pending: AtomicUsize::new(1),
            panic: Mutex::new(None),
            latch,
            _marker: PhantomData,
        }
    }

    fn registry(&self) -> &Registry {
        // SAFETY: the registry outlives the scope (see the `Sync` impl).
        unsafe { &*self.registry }
    }

    /// Queues `f` to run in the pool. If its queue is full (a pool built with a capacity),
    /// `f` runs at once on the calling thread instead (a panic in it is recorded like a
    /// task's). Use [`try_spawn`](Self::try_spawn) to get the task back instead.
    ///
    /// Ordering: everything the spawner did before `spawn` happens-before `f` starts;
    /// everything `f` does happens-before the scope returns.
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        match self.try_spawn(f) {
            Ok(()) => {}
            Err(SpawnError::Full(f)) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(self))) {
                    self.record_panic(p);
                }
            }
            // Safe code spawns only from a task of the scope or its body, which hold counts.
            Err(SpawnError::Ended(_)) => panic!("a task spawned into a scope that has ended"),
        }
    }

    /// Queues `f` to run in the pool, or hands it back when its queue is full
    /// ([`SpawnError::Full`]) or when the scope's tasks have all finished
    /// ([`SpawnError::Ended`]: only a thread that holds no count of the scope, outside its
    /// tasks, can see that).
    pub fn try_spawn<F>(&self, f: F) -> Result<(), SpawnError<F>>
    where
        F: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let me: *const () = (self as *const Self).cast();
        let worker = WorkerThread::current_of(self.registry());
        // Whether this call holds a count of its own besides the task's (see below).
        let mut guarded = false;
        match worker.map(|w| w.credit.get()) {
            // A task of this scope spends its credit, reserving a batch when it has none.
            Some((s, c)) if s == me => {
                let w = worker.expect("matched above");
                if c > 0 {
                    w.credit.set((s, c - 1));
                } else {
                    // Relaxed: as below.
                    self.pending.fetch_add(CREDIT_BATCH, Ordering::Relaxed);
                    w.credit.set((s, CREDIT_BATCH - 1));
                }
            }
            _ => {
                // A task (or the owner) that spawns holds a count itself, so the count is
                // not zero. A thread outside the pool that a task started (the C API allows
                // it) may hold none: the count is raised only while it is not zero, so a
                // task queued here is one the owner waits for, and a spawn after the last
                // task ended is refused instead of queued into a scope that is returning.
                // Two counts are raised: the task's, and one this call holds until it no
                // longer touches the scope or the pool: the task may run and end before the
                // push below returns, and a thread that held no count would then still be
                // inside a pool whose owner has ended the scope and freed it.
                // Relaxed: the counter's modification order alone decides; the push (a
                // Release in every queue) publishes the increment with the task.
                let raised = self
                    .pending
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                        (n > 0).then_some(n + 2)
                    });
                if raised.is_err() {
                    return Err(SpawnError::Ended(f));
                }
                guarded = true;
            }
        }
        let job = HeapJob::into_job_ref(ScopeTask { scope: self, f });
        match self.registry().push(job, true) {
            Ok(()) => {
                if guarded {
                    // SAFETY: this call holds the count it raised for itself; the scope is
                    // not touched after (it may be freed once the latch is set).
                    unsafe { Scope::complete_one(self) };
                }
                Ok(())
            }
            Err(job) => {
                // SAFETY: the job was built just above with this type and was not queued.
                let ScopeTask { f, .. } =
                    unsafe { HeapJob::<ScopeTask<'scope, F>>::into_inner(job) };
                match worker.map(|w| w.credit.get()) {
                    // Back into the credit it came from.
                    Some((s, c)) if s == me => {
                        worker.expect("matched above").credit.set((s, c + 1))
                    }
                    // A task or the owner holds a count of its own, and this does not reach
                    // zero; a thread outside the pool holds none: every task may have ended
                    // since it raised the count, which was then the last one, and giving it
                    // back ends the scope (sets the latch) as the last task would have.
                    _ => {
                        // SAFETY: this thread holds the counts it raised above (the task's
                        // and its own); the scope is not touched after (it may be freed once
                        // the latch is set).
                        unsafe { Scope::complete(self, 2) };
                    }
                }
                Err(SpawnError::Full(f))
            }
        }
    }

    fn record_panic(&self, p: Box<dyn Any + Send>) {
        let mut slot = self.panic.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(p);
        }
    }

    /// Gives back one count; the last one sets the latch.
    ///
    /// # Safety
    /// As for [`complete`](Self::complete), with `n = 1`.
    unsafe fn complete_one(this: *const Self) {
        // SAFETY: forwarded contract.
        unsafe { Self::complete(this, 1) }
    }

    /// Gives back `n` counts; the last ones set the latch.
    ///
    /// # Safety
    /// `this` is a live scope and the caller holds `n` counts; if the count reaches zero the
    /// scope may be freed by its owner after the latch is set: the caller does not touch it
    /// afterwards.
    unsafe fn complete(this: *const Self, n: usize) {
        // AcqRel: Release publishes this task's effects along the count's release sequence;
        // the Acquire of the last decrement gathers them all before it sets the latch (whose
        // own Release/Acquire hands them to the owner).
        // The same, told to race checkers: the owner acquires the scope once it is done.
        crate::checkers::release(this);
        // SAFETY: live scope (our contract).
        if unsafe { (*this).pending.fetch_sub(n, Ordering::AcqRel) } == n {
            // SAFETY: the owner waits for the latch, so the scope is live until the latch is
            // set; nothing is touched after.
            match unsafe { &(*this).latch } {
                ScopeLatch::Core(l) => {
                    // SAFETY: as above.
                    unsafe { CoreLatch::set(l) }
                }
                ScopeLatch::Lock(l) => l.set(),
            }
        }
    }

    /// The owner's end: gives back its count, waits for every task, resumes the first panic.
    fn finish(&self, worker: Option<&WorkerThread>, body: std::thread::Result<()>) {
        if let Err(p) = body {
            self.record_panic(p);
        }
        // SAFETY: `self` is live (we are its owner) and holds the owner's count.
        unsafe { Scope::complete_one(self) };
        match (&self.latch, worker) {
            (ScopeLatch::Core(l), Some(w)) => w.wait_until(l, true),
            (ScopeLatch::Lock(l), _) => l.wait(),
            (ScopeLatch::Core(_), None) => unreachable!("a worker's scope is waited by it"),
        }
        crate::checkers::acquire(self);
        let p = self.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(p) = p {
            resume_unwind(p);
        }
    }
}

/// Runs a scope whose body runs in the pool (on the calling worker if it is one, else sent in
/// through the injector while the caller blocks).
pub(crate) fn scope<'scope, OP, R>(registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    if let Some(w) = WorkerThread::current_of(registry) {
        let scope = Scope::new(registry, ScopeLatch::Core(CoreLatch::new()));
        let r = catch_unwind(AssertUnwindSafe(|| op(&scope)));
        let (r, body) = match r {
            Ok(r) => (Some(r), Ok(())),
            Err(p) => (None, Err(p)),
        };
        scope.finish(Some(w), body);
        return r.expect("the body returned, or its panic was resumed");
    }
    let scope = Scope::new(registry, ScopeLatch::Lock(LockLatch::new()));
    let scope_ref = &scope;
    let r = catch_unwind(AssertUnwindSafe(|| {
        registry.in_worker(move |_| op(scope_ref))
    }));
    let (r, body) = match r {
        Ok(r) => (Some(r), Ok(())),
        Err(p) => (None, Err(p)),
    };
    scope.finish(None, body);
    r.expect("the body returned, or its panic was resumed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::PoolBuilder;
    use std::sync::atomic::AtomicBool;

    /// A thread outside the pool that spawns into a scope without holding a count (as the C
    /// API lets a thread that a task started and did not wait for): every task it queued runs
    /// before the owner returns, and a spawn after the last task ended is refused, never
    /// queued and lost. The scope is kept alive past its end here, so that the late spawns
    /// are defined.
    #[test]
    fn a_spawn_from_outside_is_waited_for_or_refused() {
        // Unbounded queues, and queues of one task, where the spawns from outside are also
        // refused for a full queue (whose count, given back, may be the scope's last).
        for i in 0..400 {
            let builder = PoolBuilder::new().threads(1 + i % 2);
            let builder = if i % 4 < 2 {
                builder
            } else {
                builder.capacity(1)
            };
            let pool = builder.build().unwrap();
            let registry: &Registry = pool.registry();
            let scope = Scope::new(registry, ScopeLatch::Lock(LockLatch::new()));
            let ran = AtomicUsize::new(0);
            let queued = AtomicUsize::new(0);
            let refused = AtomicBool::new(false);
            let done = AtomicBool::new(false);
            let started = AtomicBool::new(false);
            std::thread::scope(|ts| {
                let (scope, ran, queued, refused) = (&scope, &ran, &queued, &refused);
                let done = &done;
                let started = &started;
                ts.spawn(move || {
                    while !started.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    // Bounded in time, so that a scope that never refuses fails the test
                    // (below) instead of hanging it. After a thousand tasks queued, each
                    // further one waits a little: a spawner that outpaces the workers keeps
                    // the scope from ever ending (on a loaded machine, 10 million spawns in
                    // a row did).
                    let start = std::time::Instant::now();
                    while start.elapsed() < std::time::Duration::from_secs(30) {
                        match scope.try_spawn(move |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                        }) {
                            Ok(()) => {
                                if queued.fetch_add(1, Ordering::Relaxed) >= 1000 {
                                    std::thread::sleep(std::time::Duration::from_micros(20));
                                }
                            }
                            Err(SpawnError::Full(_)) => {}
                            Err(SpawnError::Ended(_)) => {
                                refused.store(true, Ordering::Relaxed);
                                break;
                            }
                        }
                    }
                    done.store(true, Ordering::Release);
                });
                registry.in_worker(|_| {
                    started.store(true, Ordering::Release);
                    for _ in 0..2000 {
                        std::hint::spin_loop();
                    }
                });
                scope.finish(None, Ok(()));
                // Every task queued before the end has run.
                let at_end = ran.load(Ordering::Relaxed);
                while !done.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                assert!(
                    refused.load(Ordering::Relaxed),
                    "a spawn after the end was not refused"
                );
                assert_eq!(queued.load(Ordering::Relaxed), at_end);
            });
        }
    }
}
