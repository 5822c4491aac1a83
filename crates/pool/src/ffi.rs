//! The C ABI of `include/fugue/sched.h`: `sched_init` and `sched_spawn`.
//!
//! `sched_init` builds a pool (threads from its argument, policy from `FUGUE_POOL_POLICY`,
//! every queue bounded to `qlen`), runs the first task in a [`Scope`], and drops the pool when
//! the scope has finished. The `struct scheduler *` that tasks receive is a pointer to that
//! scope: valid from any thread until `sched_init` returns. No panic crosses the boundary:
//! both functions catch them and fail with an errno instead.
//!
//! A task must return. `pthread_exit()` inside a task ends the process: glibc unwinds with a
//! forced-unwind exception, the `catch_unwind` around the task catches and deletes it, and
//! glibc aborts on a deleted forced unwind ("FATAL: exception not rethrown"); letting it pass
//! through Rust frames with destructors would be undefined behaviour (RFC 2945). See
//! `docs/pool.md`, "The C ABI".

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{BuildError, SpawnError};
use crate::policy::Policy;
use crate::pool::PoolBuilder;
use crate::scope::Scope;

/// Writes one line to standard error; a standard error that cannot be written (a full disk,
/// a closed pipe) loses the line, not the errno the caller is owed (`eprintln!` would panic,
/// and the panic would be reported as `EIO`). See [`say_line`] for the closed pipe.
macro_rules! say {
    ($($t:tt)*) => {
        say_line(format_args!($($t)*))
    };
}

/// Writes `line` and a line's end to standard error. A C program keeps SIGPIPE's default
/// action (a Rust program ignores it), so a write to a pipe whose reader has gone would end
/// the process before the caller gets its errno: SIGPIPE is blocked in this thread for the
/// write, and the one the write raised, unless one was already pending, is taken back.
fn say_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    // SAFETY: the signal sets are plain values initialised by sigemptyset before use; the
    // calls change this thread's own mask only, and restore it.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old) == 0;
        libc::sigemptyset(&mut pending);
        let was_pending =
            libc::sigpending(&mut pending) == 0 && libc::sigismember(&pending, libc::SIGPIPE) == 1;
        let _ = writeln!(std::io::stderr(), "{line}");
        if blocked {
            if !was_pending {
                let now = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // -1 with EAGAIN when the write raised none.
                libc::sigtimedwait(&pipe, std::ptr::null_mut(), &now);
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
}

/// The opaque `struct scheduler` of the header: a [`Scope`] behind the pointer.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct scheduler {
    _opaque: [u8; 0],
}

/// The header's `taskfunc` (nullable).
pub type TaskFunc = Option<unsafe extern "C" fn(*mut c_void, *mut scheduler)>;

/// The environment variable that names the policy.
pub const POLICY_ENV: &str = "FUGUE_POOL_POLICY";

/// A C closure pointer sent to another thread (the C side vouches for it).
#[derive(Clone, Copy)]
struct SendPtr(*mut c_void);
// SAFETY: the C API's contract: a task's closure may be used by the thread that runs it.
unsafe impl Send for SendPtr {}

/// Whether `sched_spawn` has said (once) that it was called after its scheduler's tasks had
/// all finished.
static ENDED_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `sched_spawn` has said (once) that it was given a null argument.
static NULL_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn set_errno(e: c_int) {
    // SAFETY: `__errno_location` returns this thread's errno, always valid to write.
    unsafe { *libc::__errno_location() = e };
}

/// The pointer that a task receives for `scope`.
fn as_scheduler(scope: &Scope<'_>) -> *mut scheduler {
    (scope as *const Scope<'_>).cast_mut().cast()
}

/// Runs one C task in `scope`.
fn run_task(f: unsafe extern "C" fn(*mut c_void, *mut scheduler), c: SendPtr, scope: &Scope<'_>) {
    // SAFETY: the C API's contract: `f` may be called with its closure and the scheduler.
    unsafe { f(c.0, as_scheduler(scope)) }
}

fn init(nthreads: c_int, qlen: c_int, f: TaskFunc, closure: *mut c_void) -> Result<(), c_int> {
    let Some(f) = f else {
        say!("sched_init: the task function f is null.");
        return Err(libc::EINVAL);
    };
    if qlen <= 0 {
        say!("sched_init: qlen must be at least 1 (a queue holds up to qlen tasks), not {qlen}.");
        return Err(libc::EINVAL);
    }
    let policy = match std::env::var(POLICY_ENV) {
        // Set but empty: as unset (`FUGUE_POOL_POLICY= ./prog`).
        Ok(name) if name.trim().is_empty() => Policy::default(),
        Ok(name) => name.trim().parse::<Policy>().map_err(|e| {
            say!("sched_init: {e} (set {POLICY_ENV} to one of them).");
            libc::EINVAL
        })?,
        Err(std::env::VarError::NotPresent) => Policy::default(),
        Err(std::env::VarError::NotUnicode(_)) => {
            say!(
                "sched_init: {POLICY_ENV} is not valid UTF-8; the policies are: {}.",
                Policy::names()
            );
            return Err(libc::EINVAL);
        }
    };
    let mut b = PoolBuilder::new().policy(policy).capacity(qlen as usize);
    if nthreads > 0 {
        b = b.threads(nthreads as usize);
    }
    let pool = b.build().map_err(|e| {
        match &e {
            // The count came from the default, not the caller.
            BuildError::TooManyThreads { limit, why, requested } if nthreads <= 0 => say!(
                "sched_init: nthreads {nthreads} asks for one thread per core, {requested}, more than the limit of {limit} ({why}); pass a count."
            ),
            _ => say!("sched_init: {e}."),
        }
        match e {
            BuildError::Spawn { .. } => libc::EAGAIN,
            _ => libc::EINVAL,
        }
    })?;
    let c = SendPtr(closure);
    pool.scope(move |s| {
        let c = c;
        run_task(f, c, s);
    });
    Ok(())
}

/// The threads `sched_init(0, ...)` starts: the cores this process may use (its CPU
/// affinity and quota, [`crate::default_threads`]), at least 1, at most `INT_MAX`.
#[no_mangle]
pub extern "C" fn sched_default_threads() -> c_int {
    c_int::try_from(crate::pool::default_threads()).unwrap_or(c_int::MAX)
}

/// Starts a pool, runs `f(closure, s)` in it and returns 0 when every task has finished (see
/// `include/fugue/sched.h`); -1 with errno set on failure.
///
/// # Safety
/// `f`, when not null, is a function that may be called with `closure` and a scheduler on any
/// thread; the tasks it spawns satisfy the same.
#[no_mangle]
pub unsafe extern "C" fn sched_init(
    nthreads: c_int,
    qlen: c_int,
    f: TaskFunc,
    closure: *mut c_void,
) -> c_int {
    match catch_unwind(AssertUnwindSafe(|| init(nthreads, qlen, f, closure))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_errno(e);
            -1
        }
        Err(_) => {
            set_errno(libc::EIO);
            -1
        }
    }
}

/// Queues `f(closure, s)` in the pool of `s`; 0, or -1 with errno `EAGAIN` (queue full) or
/// `EINVAL` (null argument, or every task of `s` has finished: a thread outside the pool that
/// no running task waits for spawned too late).
///
/// # Safety
/// `s` is a scheduler pointer that a task of a running `sched_init` received, used before that
/// `sched_init` returns (from a task of it, on any thread); `f` as for [`sched_init`].
#[no_mangle]
pub unsafe extern "C" fn sched_spawn(
    f: TaskFunc,
    closure: *mut c_void,
    s: *mut scheduler,
) -> c_int {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let (Some(f), false) = (f, s.is_null()) else {
            if !NULL_SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                say!("sched_spawn: the task function f or the scheduler s is null.");
            }
            return Err(libc::EINVAL);
        };
        // SAFETY: `s` points to the live scope of a running `sched_init` (our contract). The
        // task below is `'static`, so the scope's lifetime parameter constrains nothing.
        let scope = unsafe { &*s.cast_const().cast::<Scope<'static>>() };
        let c = SendPtr(closure);
        scope
            .try_spawn(move |sc| {
                let c = c;
                run_task(f, c, sc);
            })
            .map_err(|e| match e {
                SpawnError::Full(_) => libc::EAGAIN,
                SpawnError::Ended(_) => {
                    // Said once: a thread may try again in a loop.
                    if !ENDED_SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        say!(
                            "sched_spawn: every task of this scheduler has finished and its sched_init is returning, so no task can be added; spawn from a task, or from a thread that a running task waits for."
                        );
                    }
                    libc::EINVAL
                }
            })
    }));
    match r {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_errno(e);
            -1
        }
        Err(_) => {
            set_errno(libc::EIO);
            -1
        }
    }
}
