//! Jobs: what the queues hold. A job is a pointer to a [`JobHeader`], the first field of a
//! `#[repr(C)]` struct that also holds the closure; the header's function knows the full
//! type. One pointer per job keeps the deque's slots single atomic words.
//!
//! - [`HeapJob`]: a boxed task (a spawn): one allocation per spawn, freed before the task
//!   runs.
//! - [`StackJob`]: a closure that lives on the stack of the thread waiting for it (the second
//!   half of a `join`, or work sent into the pool from outside): no allocation; the waiter
//!   keeps the frame alive until the job's latch is set.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::latch::{CoreLatch, LockLatch};

/// The first field of every job: how to run it.
#[repr(C)]
pub struct JobHeader {
    execute: unsafe fn(*mut JobHeader),
}

/// A pointer to a queued job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRef(NonNull<JobHeader>);

// SAFETY: a job is run by exactly one thread, once; the closures behind job pointers are
// `Send` (the constructors require it).
unsafe impl Send for JobRef {}

impl JobRef {
    /// The raw pointer (for the lock-free deque).
    #[inline]
    pub fn as_ptr(self) -> *mut JobHeader {
        self.0.as_ptr()
    }

    /// A job from a raw pointer that [`as_ptr`](Self::as_ptr) returned.
    ///
    /// # Safety
    /// `p` came from `as_ptr` of a job that has not run.
    #[inline]
    pub unsafe fn from_ptr(p: *mut JobHeader) -> Self {
        // SAFETY: `as_ptr` returns non-null pointers (our contract).
        JobRef(unsafe { NonNull::new_unchecked(p) })
    }

    /// Runs the job.
    ///
    /// # Safety
    /// The job has not run, and no other thread runs it: it was taken out of its queue.
    #[inline]
    pub unsafe fn execute(self) {
        let p = self.0.as_ptr();
        // What its maker did before making it happens-before the job (told to race
        // checkers: the queues' own atomics are invisible to them).
        crate::checkers::acquire(p);
        // SAFETY: `p` points to the live header of a job that has not run (our contract);
        // its function expects exactly that pointer.
        unsafe { ((*p).execute)(p) }
    }
}

/// What a [`HeapJob`] runs: a task with its context (its scope, or the pool for a detached
/// task). `run` must not unwind: the implementations catch the task's panic.
pub trait Run: Send {
    /// Runs the task.
    fn run(self);
}

/// A boxed task.
#[repr(C)]
pub struct HeapJob<T> {
    header: JobHeader,
    task: T,
}

impl<T: Run> HeapJob<T> {
    /// Boxes `task` as a job.
    pub fn into_job_ref(task: T) -> JobRef {
        let b = Box::new(HeapJob {
            header: JobHeader {
                execute: Self::execute,
            },
            task,
        });
        let p = Box::into_raw(b);
        crate::checkers::release(p);
        // SAFETY: `Box::into_raw` is never null; the header is the first field of a
        // `#[repr(C)]` struct, so the cast keeps the address.
        JobRef(unsafe { NonNull::new_unchecked(p.cast()) })
    }

    /// Takes the task back out of a job that was never queued (a push that found its queue
    /// full), freeing the box.
    ///
    /// # Safety
    /// `job` came from [`into_job_ref`](Self::into_job_ref) with this `T`, and was not run.
    pub unsafe fn into_inner(job: JobRef) -> T {
        // SAFETY: the pointer came from `Box::into_raw` of a `HeapJob<T>` (our contract).
        let b = unsafe { Box::from_raw(job.as_ptr().cast::<Self>()) };
        b.task
    }

    unsafe fn execute(this: *mut JobHeader) {
        // SAFETY: `this` came from `into_job_ref` with this `T` and runs once (the contract of
        // `JobRef::execute`); the box is freed here, before the task runs.
        let task = unsafe { Box::from_raw(this.cast::<Self>()) }.task;
        task.run();
    }
}

/// A latch that a [`StackJob`] sets when it is done.
pub trait Latch {
    /// Sets the latch.
    ///
    /// # Safety
    /// `this` points to a live latch; the caller does not touch the job afterwards.
    unsafe fn set(this: *const Self);
}

impl Latch for CoreLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: forwarded contract.
        unsafe { CoreLatch::set(this) }
    }
}

impl Latch for LockLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live (our contract); `LockLatch::set` holds its mutex while it
        // touches the latch, and the waiter cannot return before it can take the mutex.
        unsafe { (*this).set() }
    }
}

/// What a job left.
enum JobResult<R> {
    None,
    Ok(R),
    Panic(Box<dyn Any + Send>),
}

/// A closure on the stack of the thread that waits for it.
#[repr(C)]
pub struct StackJob<L, F, R> {
    header: JobHeader,
    /// Set when the job has run (its result is written).
    pub latch: L,
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce() -> R + Send, R: Send> StackJob<L, F, R> {
    /// A job that runs `f` and sets `latch`.
    pub fn new(latch: L, f: F) -> Self {
        StackJob {
            header: JobHeader {
                execute: Self::execute,
            },
            latch,
            func: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(JobResult::None),
        }
    }

    /// The job's pointer. The job must stay where it is until it has run or been taken back.
    pub fn as_job_ref(&self) -> JobRef {
        crate::checkers::release(&self.header);
        JobRef(NonNull::from(&self.header).cast())
    }

    unsafe fn execute(this: *mut JobHeader) {
        // Not a scope's task: a credit of scope counts held by this worker goes back first
        // (`scope.rs`), so that this job's run does not delay the scope.
        crate::worker::WorkerThread::give_back_current_credit();
        let this = this.cast::<Self>().cast_const();
        // SAFETY: the job runs once (contract of `JobRef::execute`) and its owner waits for the
        // latch before touching `func` or `result`: this thread has exclusive access to both.
        let f = unsafe { (*(*this).func.get()).take() }.expect("a stack job runs once");
        let r = match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => JobResult::Ok(r),
            Err(p) => JobResult::Panic(p),
        };
        // SAFETY: as above, exclusive access to `result` until the latch is set.
        unsafe { *(*this).result.get() = r };
        // SAFETY: the job (so its latch) is live until the latch is set; we touch nothing
        // after.
        unsafe { L::set(std::ptr::addr_of!((*this).latch)) };
    }

    /// Runs the closure on this thread (the job was taken back from its queue, unrun).
    #[inline(always)]
    pub fn run_inline(self) -> R {
        let f = self.func.into_inner().expect("a stack job runs once");
        f()
    }

    /// The result of a job that has run (its latch is set): the value, or the panic resumed.
    pub fn into_result(self) -> R {
        self.into_result_caught()
            .unwrap_or_else(|p| resume_unwind(p))
    }

    /// The result of a job that has run: the value, or the panic's payload.
    pub fn into_result_caught(self) -> std::thread::Result<R> {
        match self.result.into_inner() {
            JobResult::Ok(r) => Ok(r),
            JobResult::Panic(p) => Err(p),
            JobResult::None => unreachable!("the job's latch was set before it ran"),
        }
    }
}
