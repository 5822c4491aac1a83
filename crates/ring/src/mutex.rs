//! The baseline every benchmark compares against: the same ordered ring (same slots, same
//! numbering, same zero-copy guards, same errors) with the slot words under one
//! `std::sync::Mutex` and two `Condvar`s instead of atomics.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{AcquireError, NextError, TryAcquireError, TryNextError};
use crate::region::{decode, encode, FREE, MAX_ITEM, READING, READY, WRITING};

/// Constructor of the mutex/condvar ring.
#[derive(Debug, Clone, Copy)]
pub struct MutexCondRing;

impl MutexCondRing {
    /// A ring of `capacity` slots of `item_size` bytes.
    ///
    /// # Panics
    /// If `capacity` is 0.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(capacity: usize, item_size: usize) -> (MutexCondProducer, MutexCondConsumer) {
        assert!(capacity > 0, "a ring needs at least one slot");
        let stride = item_size.div_ceil(8);
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                seqs: (0..capacity as u64).map(|i| encode(i, FREE)).collect(),
                producers: 1,
                consumer_alive: true,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            data: (0..capacity * stride).map(|_| UnsafeCell::new(0)).collect(),
            stride_words: stride,
            item_size,
            capacity: capacity as u64,
        });
        (
            MutexCondProducer {
                inner: inner.clone(),
            },
            MutexCondConsumer { inner, next: 0 },
        )
    }
}

struct State {
    seqs: Vec<u64>,
    producers: u32,
    consumer_alive: bool,
}

struct Inner {
    state: Mutex<State>,
    not_empty: Condvar,
    not_full: Condvar,
    data: Box<[UnsafeCell<u64>]>,
    stride_words: usize,
    item_size: usize,
    capacity: u64,
}

// SAFETY: slot words are only touched under `state`; slot bytes are only touched by the holder
// of a guard, which the slot word (checked and changed under the mutex, which orders the
// accesses) grants to one thread at a time.
unsafe impl Sync for Inner {}
// SAFETY: as for Sync; nothing is tied to a thread.
unsafe impl Send for Inner {}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the words inconsistent (each critical
        // section is one assignment), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn slot(&self, n: u64) -> usize {
        (n % self.capacity) as usize
    }

    fn data(&self, slot: usize) -> *mut u8 {
        self.data[slot * self.stride_words..].as_ptr() as *mut u8
    }
}

fn classify(n: u64, word: u64) -> Result<(), TryAcquireError> {
    let (m, state) = decode(word);
    if m < n {
        Err(TryAcquireError::Full)
    } else if m > n || state == READING {
        Err(TryAcquireError::AlreadyRead)
    } else if state == FREE {
        Ok(())
    } else {
        Err(TryAcquireError::AlreadyAcquired)
    }
}

/// Producer handle of the mutex/condvar ring; same contract as [`crate::Producer`].
pub struct MutexCondProducer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for MutexCondProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutexCondProducer").finish_non_exhaustive()
    }
}

impl Clone for MutexCondProducer {
    fn clone(&self) -> Self {
        self.inner.lock().producers += 1;
        MutexCondProducer {
            inner: self.inner.clone(),
        }
    }
}

impl Drop for MutexCondProducer {
    fn drop(&mut self) {
        self.inner.lock().producers -= 1;
        self.inner.not_empty.notify_one();
    }
}

impl MutexCondProducer {
    /// Take the slot of item `n` if it is free now.
    pub fn try_acquire(&self, n: u64) -> Result<MutexCondWriteGuard<'_>, TryAcquireError> {
        assert!(n <= MAX_ITEM, "item number {n} exceeds the ring's range");
        let slot = self.inner.slot(n);
        let mut st = self.inner.lock();
        classify(n, st.seqs[slot])?;
        st.seqs[slot] = encode(n, WRITING);
        Ok(MutexCondWriteGuard {
            inner: &self.inner,
            n,
            slot,
        })
    }

    /// Take the slot of item `n`, sleeping on a condition variable while it is in use.
    pub fn acquire(&self, n: u64) -> Result<MutexCondWriteGuard<'_>, AcquireError> {
        self.acquire_inner(n, None)
    }

    /// Like [`acquire`](Self::acquire), giving up after `timeout`.
    pub fn acquire_timeout(
        &self,
        n: u64,
        timeout: Duration,
    ) -> Result<MutexCondWriteGuard<'_>, AcquireError> {
        self.acquire_inner(n, Some(timeout))
    }

    fn acquire_inner(
        &self,
        n: u64,
        timeout: Option<Duration>,
    ) -> Result<MutexCondWriteGuard<'_>, AcquireError> {
        assert!(n <= MAX_ITEM, "item number {n} exceeds the ring's range");
        let slot = self.inner.slot(n);
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.inner.lock();
        loop {
            match classify(n, st.seqs[slot]) {
                Ok(()) => break,
                Err(TryAcquireError::Full) => {}
                Err(e) => return Err(AcquireError::from_try(e, n)),
            }
            if !st.consumer_alive {
                return Err(AcquireError::Disconnected { n });
            }
            st = match (deadline, timeout) {
                (Some(d), Some(t)) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(AcquireError::Timeout { n, waited: t });
                    }
                    let (g, _) = self
                        .inner
                        .not_full
                        .wait_timeout(st, d - now)
                        .unwrap_or_else(|e| e.into_inner());
                    g
                }
                _ => self
                    .inner
                    .not_full
                    .wait(st)
                    .unwrap_or_else(|e| e.into_inner()),
            };
        }
        st.seqs[slot] = encode(n, WRITING);
        Ok(MutexCondWriteGuard {
            inner: &self.inner,
            n,
            slot,
        })
    }

    /// Number of slots.
    pub fn capacity(&self) -> u64 {
        self.inner.capacity
    }
}

/// A slot held for writing; `commit` publishes, drop abandons (as [`crate::WriteGuard`]).
#[must_use = "dropping a write guard abandons the item; call commit()"]
pub struct MutexCondWriteGuard<'a> {
    inner: &'a Inner,
    n: u64,
    slot: usize,
}

impl MutexCondWriteGuard<'_> {
    /// The item number.
    pub fn number(&self) -> u64 {
        self.n
    }

    /// Publish the item.
    pub fn commit(self) {
        let this = std::mem::ManuallyDrop::new(self);
        this.inner.lock().seqs[this.slot] = encode(this.n, READY);
        this.inner.not_empty.notify_one();
    }
}

impl Drop for MutexCondWriteGuard<'_> {
    fn drop(&mut self) {
        self.inner.lock().seqs[self.slot] = encode(self.n, FREE);
    }
}

impl Deref for MutexCondWriteGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the slot word is WRITING(n), set under the mutex by this guard, so no other
        // thread touches these bytes until the guard commits or drops.
        unsafe { std::slice::from_raw_parts(self.inner.data(self.slot), self.inner.item_size) }
    }
}

impl DerefMut for MutexCondWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` excludes other references through the guard.
        unsafe { std::slice::from_raw_parts_mut(self.inner.data(self.slot), self.inner.item_size) }
    }
}

/// The consumer of the mutex/condvar ring; same contract as [`crate::Consumer`].
pub struct MutexCondConsumer {
    inner: Arc<Inner>,
    next: u64,
}

impl std::fmt::Debug for MutexCondConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutexCondConsumer")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Drop for MutexCondConsumer {
    fn drop(&mut self) {
        self.inner.lock().consumer_alive = false;
        self.inner.not_full.notify_all();
    }
}

impl MutexCondConsumer {
    fn take(&mut self, mut st: MutexGuard<'_, State>, slot: usize) -> MutexCondReadGuard<'_> {
        st.seqs[slot] = encode(self.next, READING);
        drop(st);
        MutexCondReadGuard {
            consumer: self,
            slot,
        }
    }

    /// The next item if it is there now.
    pub fn try_next(&mut self) -> Result<MutexCondReadGuard<'_>, TryNextError> {
        let slot = self.inner.slot(self.next);
        let inner = self.inner.clone();
        let st = inner.lock();
        if st.seqs[slot] == encode(self.next, READY) {
            return Ok(self.take(st, slot));
        }
        if st.producers == 0 {
            return Err(TryNextError::Disconnected { missing: self.next });
        }
        Err(TryNextError::Empty { next: self.next })
    }

    /// Wait for the next item.
    #[allow(clippy::should_implement_trait)] // the name of the protocol step; fallible, so not an Iterator
    pub fn next(&mut self) -> Result<MutexCondReadGuard<'_>, NextError> {
        self.next_inner(None)
    }

    /// Wait at most `timeout` for the next item.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<MutexCondReadGuard<'_>, NextError> {
        self.next_inner(Some(timeout))
    }

    fn next_inner(
        &mut self,
        timeout: Option<Duration>,
    ) -> Result<MutexCondReadGuard<'_>, NextError> {
        let slot = self.inner.slot(self.next);
        let want = encode(self.next, READY);
        let deadline = timeout.map(|t| Instant::now() + t);
        let inner = self.inner.clone();
        let mut st = inner.lock();
        while st.seqs[slot] != want {
            if st.producers == 0 {
                return Err(NextError::Disconnected { missing: self.next });
            }
            st = match (deadline, timeout) {
                (Some(d), Some(t)) => {
                    let now = Instant::now();
                    if now >= d {
                        return Err(NextError::Timeout {
                            missing: self.next,
                            waited: t,
                        });
                    }
                    inner
                        .not_empty
                        .wait_timeout(st, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                _ => inner.not_empty.wait(st).unwrap_or_else(|e| e.into_inner()),
            };
        }
        Ok(self.take(st, slot))
    }

    /// The number of the item the next `next`/`try_next` returns.
    pub fn next_number(&self) -> u64 {
        self.next
    }
}

/// The next item, held for reading; drop releases the slot.
pub struct MutexCondReadGuard<'a> {
    consumer: &'a mut MutexCondConsumer,
    slot: usize,
}

impl MutexCondReadGuard<'_> {
    /// The item number.
    pub fn number(&self) -> u64 {
        self.consumer.next
    }
}

impl Deref for MutexCondReadGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        let inner = &self.consumer.inner;
        // SAFETY: the slot word is READING(n), set under the mutex after the producer's commit
        // (also under the mutex), so the bytes are complete and nobody writes them until the
        // guard releases the slot.
        unsafe { std::slice::from_raw_parts(inner.data(self.slot), inner.item_size) }
    }
}

impl Drop for MutexCondReadGuard<'_> {
    fn drop(&mut self) {
        let n = self.consumer.next;
        let inner = &self.consumer.inner;
        inner.lock().seqs[self.slot] = encode(n + inner.capacity, FREE);
        inner.not_full.notify_all();
        self.consumer.next = n + 1;
    }
}
