//! The atomics and the futex the executors use, in one place, so that the same protocol code
//! runs under loom (`RUSTFLAGS="--cfg loom"`) and in production.
//!
//! Under loom, the futex is modelled by a mutex and a condition variable: `wait` checks the
//! word and sleeps under the lock, `wake_all` notifies under the lock, so a wake-up that the
//! protocol would lose shows up as a deadlock that loom reports.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, Ordering,
};

/// A hint that the caller is spinning (a yield under loom, so that models terminate).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the processor to another thread.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// A futex on a 32-bit atomic word.
pub(crate) struct Futex {
    /// The word.
    pub word: AtomicU32,
    #[cfg(loom)]
    lock: loom::sync::Mutex<()>,
    #[cfg(loom)]
    cv: loom::sync::Condvar,
}

impl Futex {
    pub(crate) fn new(v: u32) -> Self {
        Futex {
            word: AtomicU32::new(v),
            #[cfg(loom)]
            lock: loom::sync::Mutex::new(()),
            #[cfg(loom)]
            cv: loom::sync::Condvar::new(),
        }
    }

    /// Sleeps while the word equals `expected` (may return spuriously; callers loop).
    #[inline]
    pub(crate) fn wait(&self, expected: u32) {
        #[cfg(not(loom))]
        atomic_wait::wait(&self.word, expected);
        #[cfg(loom)]
        {
            let g = self.lock.lock().unwrap();
            if self.word.load(Ordering::SeqCst) == expected {
                drop(self.cv.wait(g).unwrap());
            }
        }
    }

    /// Wakes every thread sleeping on the word: one system call.
    #[inline]
    pub(crate) fn wake_all(&self) {
        #[cfg(not(loom))]
        atomic_wait::wake_all(&self.word);
        #[cfg(loom)]
        {
            let _g = self.lock.lock().unwrap();
            self.cv.notify_all();
        }
    }
}
