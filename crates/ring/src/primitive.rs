//! The atomics and waiting primitives the ring is built from: `std` normally, `loom` under
//! `--cfg loom`, so that the same protocol code runs under the model checker (the pattern of
//! `crossbeam-utils`). `scripts/loom.sh` runs the models.

#[cfg(loom)]
pub(crate) mod sync {
    pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    pub(crate) use loom::sync::Arc;
}

#[cfg(not(loom))]
pub(crate) mod sync {
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    pub(crate) use std::sync::Arc;
}

/// One iteration of a busy-wait loop. Under loom it yields to the model's scheduler, which
/// is what makes spin loops checkable.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Give the processor away (`sched_yield` on Linux).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// Blocking on a 32-bit word: Linux futex, shared (not `FUTEX_PRIVATE_FLAG`) so that it works
/// across processes on a word in shared memory. The wake protocol that uses it is in
/// `docs/ring.md` ("Parking").
#[cfg(not(loom))]
pub(crate) mod futex {
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;

    /// Sleep while `*word == expected`, at most `timeout`. Returns on wake, on a changed value,
    /// on timeout, or spuriously; callers re-check their condition in a loop.
    #[cfg(target_os = "linux")]
    pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `word.as_ptr()` points to a live, 4-byte-aligned u32 for the duration of
        // the call (we hold `&AtomicU32`); `ts_ptr` is null or points to `ts`, alive on this
        // frame. FUTEX_WAIT only reads both.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT,
                expected,
                ts_ptr,
            );
        }
    }

    /// Wake up to `count` threads sleeping in [`wait`] on `word`.
    #[cfg(target_os = "linux")]
    pub(crate) fn wake(word: &AtomicU32, count: i32) {
        // SAFETY: `word.as_ptr()` points to a live u32; FUTEX_WAKE does not access memory
        // through it, it only uses the address as the key of the wait queue.
        unsafe {
            libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, count);
        }
    }

    /// Portable fallback: a short sleep; the callers' loops re-check, so nothing is lost.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
        let _ = (word, expected);
        std::thread::sleep(
            timeout
                .unwrap_or(Duration::from_micros(50))
                .min(Duration::from_micros(50)),
        );
    }

    /// Portable fallback: nothing to do, sleepers poll.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn wake(word: &AtomicU32, count: i32) {
        let _ = (word, count);
    }
}

/// Access tracking for the slot bytes. Under loom, each slot has a `loom::cell::UnsafeCell<()>`
/// and every write (acquire, commit) and read (next, release) of slot bytes is registered on
/// it, so loom reports any access that is not ordered by the slot protocol. Without loom it
/// compiles to nothing.
pub(crate) struct AccessTrack {
    #[cfg(loom)]
    cells: Box<[loom::cell::UnsafeCell<()>]>,
}

impl AccessTrack {
    pub(crate) fn new(_slots: usize) -> Self {
        AccessTrack {
            #[cfg(loom)]
            cells: (0.._slots)
                .map(|_| loom::cell::UnsafeCell::new(()))
                .collect(),
        }
    }

    #[inline]
    pub(crate) fn write(&self, _slot: usize) {
        #[cfg(loom)]
        self.cells[_slot].with_mut(|_| ());
    }

    #[inline]
    pub(crate) fn read(&self, _slot: usize) {
        #[cfg(loom)]
        self.cells[_slot].with(|_| ());
    }
}
