//! Latches: one-shot signals that a job or a scope has finished.
//!
//! - [`CoreLatch`]: a word that a worker polls while it runs other work (a worker never
//!   blocks on a join or a nested scope: the work it waits for may sit in its own deque);
//! - [`LockLatch`]: a mutex and a condition variable, for a thread outside the pool that waits
//!   for its work to finish inside it. Setting it holds the mutex, so the waiter cannot see the
//!   latch set and free it while the setter still touches it.

use std::sync::{Condvar, Mutex};

use fugue_sync::{AtomicU32, Ordering};

/// A latch a worker polls.
#[derive(Debug, Default)]
pub struct CoreLatch(AtomicU32);

impl CoreLatch {
    /// An unset latch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the latch is set. Acquire: pairs with the Release store of [`set`](Self::set),
    /// so everything the setter did before setting is visible.
    #[inline]
    pub fn probe(&self) -> bool {
        let set = self.0.load(Ordering::Acquire) == 1;
        if set {
            crate::checkers::acquire(self);
        }
        set
    }

    /// Sets the latch. This store is the setter's last access to the latch's memory: the waiter
    /// may free it as soon as it sees the store.
    ///
    /// # Safety
    /// `this` points to a live latch; the caller does not touch it (nor anything that the
    /// waiter owns) afterwards.
    #[inline]
    pub unsafe fn set(this: *const Self) {
        crate::checkers::release(this);
        // Release: pairs with the Acquire load of `probe`.
        // SAFETY: `this` is live until this store lands (our contract).
        unsafe { (*this).0.store(1, Ordering::Release) };
    }
}

/// A latch a thread blocks on.
#[derive(Debug, Default)]
pub struct LockLatch {
    set: Mutex<bool>,
    cv: Condvar,
}

impl LockLatch {
    /// An unset latch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the latch and wakes the waiter. (The mutex orders everything before `set` before
    /// the waiter's return from [`wait`](Self::wait).)
    pub fn set(&self) {
        crate::checkers::release(self);
        let mut g = self.set.lock().unwrap_or_else(|e| e.into_inner());
        *g = true;
        self.cv.notify_all();
    }

    /// Blocks until the latch is set.
    pub fn wait(&self) {
        let mut g = self.set.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        crate::checkers::acquire(self);
    }
}
