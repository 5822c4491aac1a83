//! The pool's happens-before edges, told to race checkers.
//!
//! The pool hands work between threads through its own atomics, futexes and memory fences.
//! A race checker sees none of them: ThreadSanitizer instruments only the code compiled with
//! `-fsanitize=thread` (a C program's, not this library's), and Helgrind and DRD understand
//! the POSIX primitives, not lock-free queues. Each then reports every access of a task to
//! what its spawner wrote as a data race (and the free of a task's box as racing its
//! allocation), so a program's real races drown among false ones.
//!
//! The pool's guarantees (the crate's documentation) are told to them here as
//! release/acquire pairs on an address:
//! - a job: released when it is made, acquired when it starts;
//! - a latch: released by its setter, acquired by the thread that sees it set;
//! - a scope: released by each task that ends in it, acquired by its owner once they all did.
//!
//! ThreadSanitizer's `__tsan_release` and `__tsan_acquire` are looked up in the process when
//! the first pool is built (they are there when the program was linked with
//! `-fsanitize=thread`); Valgrind's client requests (`ANNOTATE_HAPPENS_BEFORE` and
//! `ANNOTATE_HAPPENS_AFTER`, one request for both Helgrind and DRD) are made when the process
//! runs under either tool, on x86-64 and AArch64. Otherwise (other Valgrind tools included)
//! each edge costs one relaxed load and a branch.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// ThreadSanitizer's `__tsan_release` / `__tsan_acquire` (0: absent).
static TSAN_RELEASE: AtomicUsize = AtomicUsize::new(0);
static TSAN_ACQUIRE: AtomicUsize = AtomicUsize::new(0);
/// Whether the process runs under Helgrind or DRD.
static VALGRIND: AtomicBool = AtomicBool::new(false);
/// Whether any checker is there: the only load on the common path.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static INIT: Once = Once::new();

/// Looks for the checkers (once per process). Called when a pool is built, before its threads
/// start: they, and every thread that gets the pool from its builder, see the result.
pub(crate) fn init() {
    INIT.call_once(|| {
        let lookup = |name: &std::ffi::CStr| {
            // SAFETY: `name` is NUL-terminated; RTLD_DEFAULT searches the process's global
            // symbols, and a missing one gives null.
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
        };
        let (release, acquire) = (lookup(c"__tsan_release"), lookup(c"__tsan_acquire"));
        if release != 0 && acquire != 0 {
            TSAN_RELEASE.store(release, Ordering::Relaxed);
            TSAN_ACQUIRE.store(acquire, Ordering::Relaxed);
        }
        let valgrind = valgrind::running();
        VALGRIND.store(valgrind, Ordering::Relaxed);
        ACTIVE.store(
            valgrind || (release != 0 && acquire != 0),
            Ordering::Release,
        );
    });
}

/// What this thread did so far happens-before what a thread does after [`acquire`] of the
/// same `addr`. Several releases of one address accumulate.
#[inline(always)]
pub(crate) fn release<T>(addr: *const T) {
    if ACTIVE.load(Ordering::Relaxed) {
        tell(addr.cast(), true);
    }
}

/// See [`release`].
#[inline(always)]
pub(crate) fn acquire<T>(addr: *const T) {
    if ACTIVE.load(Ordering::Relaxed) {
        tell(addr.cast(), false);
    }
}

#[cold]
#[inline(never)]
fn tell(addr: *const (), release: bool) {
    let f = if release {
        TSAN_RELEASE.load(Ordering::Relaxed)
    } else {
        TSAN_ACQUIRE.load(Ordering::Relaxed)
    };
    if f != 0 {
        // SAFETY: `f` is the address of ThreadSanitizer's `void __tsan_release(void *)` or
        // `void __tsan_acquire(void *)`, found by `init`; they take any address, which they
        // use only as a key.
        let f: extern "C" fn(*const ()) = unsafe { std::mem::transmute(f) };
        f(addr);
    }
    if VALGRIND.load(Ordering::Relaxed) {
        valgrind::happens(addr, release);
    }
}

/// Valgrind's client requests: a sequence of instructions that does nothing on a processor
/// and that Valgrind's translator recognises (`valgrind/valgrind.h`).
mod valgrind {
    /// `VG_USERREQ__RUNNING_ON_VALGRIND` (`valgrind/valgrind.h`).
    const RUNNING_ON_VALGRIND: usize = 0x1001;
    /// `_VG_USERREQ__HG_USERSO_SEND_PRE` (`valgrind/helgrind.h`), which DRD's
    /// `VG_USERREQ__DRD_ANNOTATE_HAPPENS_BEFORE` (`valgrind/drd.h`) equals.
    const HAPPENS_BEFORE: usize = 0x4847_0121;
    /// `_VG_USERREQ__HG_USERSO_RECV_POST`, DRD's `VG_USERREQ__DRD_ANNOTATE_HAPPENS_AFTER`.
    const HAPPENS_AFTER: usize = 0x4847_0122;

    /// `_VG_USERREQ__HG_GET_ABITS` (`valgrind/helgrind.h`): -2 when Helgrind is not the tool.
    const HELGRIND_GET_ABITS: usize = 0x4847_012e;
    /// `VG_USERREQ__DRD_GET_VALGRIND_THREAD_ID` (`valgrind/drd.h`): 0 when DRD is not the tool.
    const DRD_THREAD_ID: usize = 0x4452_0000;

    /// Whether the process runs under Helgrind or DRD (not another of Valgrind's tools,
    /// whose instruction counts the requests would only add to).
    pub(super) fn running() -> bool {
        if request(0, [RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0]) == 0 {
            return false;
        }
        let probe = 0u8;
        let helgrind = request(
            -2isize as usize,
            [HELGRIND_GET_ABITS, &probe as *const u8 as usize, 0, 1, 0, 0],
        ) != -2isize as usize;
        helgrind || request(0, [DRD_THREAD_ID, 0, 0, 0, 0, 0]) != 0
    }

    /// `ANNOTATE_HAPPENS_BEFORE(addr)` (`release`) or `ANNOTATE_HAPPENS_AFTER(addr)`.
    pub(super) fn happens(addr: *const (), release: bool) {
        let code = if release {
            HAPPENS_BEFORE
        } else {
            HAPPENS_AFTER
        };
        request(0, [code, addr as usize, 0, 0, 0, 0]);
    }

    /// A client request: `args` (the request's code, then its arguments); `default` when not
    /// under Valgrind (`VALGRIND_DO_CLIENT_REQUEST_EXPR`).
    #[cfg(target_arch = "x86_64")]
    fn request(default: usize, args: [usize; 6]) -> usize {
        let result;
        // SAFETY: the four rotations of rdi total 128 bits (rdi is left as it was; the flags
        // are not) and the exchange of rbx with itself changes nothing: natively the sequence
        // leaves `default` in rdx. Under Valgrind, rdx receives the request's answer; the request reads
        // `args`, which lives across the call.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                inout("rdx") default => result,
                in("rax") args.as_ptr(),
                options(nostack),
            );
        }
        result
    }

    /// As above, for AArch64.
    #[cfg(target_arch = "aarch64")]
    fn request(default: usize, args: [usize; 6]) -> usize {
        let result;
        // SAFETY: the four rotations of x12 total 128 bits (x12 is left as it was) and the
        // `orr` of x10 with itself changes nothing: natively x3 keeps `default`. Under
        // Valgrind, x3 receives the request's answer; the request reads `args`, which lives
        // across the call.
        unsafe {
            std::arch::asm!(
                "ror x12, x12, #3",
                "ror x12, x12, #13",
                "ror x12, x12, #51",
                "ror x12, x12, #61",
                "orr x10, x10, x10",
                inout("x3") default => result,
                in("x4") args.as_ptr(),
                options(nostack),
            );
        }
        result
    }

    /// Elsewhere there is no request: never under Valgrind, as far as the pool knows.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn request(default: usize, _args: [usize; 6]) -> usize {
        default
    }
}
