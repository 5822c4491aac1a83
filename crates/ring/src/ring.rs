//! The lock-free ordered ring: producer and consumer handles and their guards.
//!
//! Design after Godard, "Échanges non bloquants de données ordonnées entre producteurs
//! multiples et consommateur unique" (COMPAS 2019): item `n` lives in slot `n mod capacity`;
//! each slot holds the number of the item it refers to; the consumer reads item
//! `next_to_read` as soon as it is there and a producer may write item `n` as soon as its
//! slot is free, without waiting for the items before `n`. The protocol and its proof sketch
//! are in `docs/ring.md`.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use crate::error::{AcquireError, NextError, TryAcquireError, TryNextError};
use crate::region::{decode, encode, Region, Strategy, FREE, MAX_ITEM, READING, READY, WRITING};
use crate::wait::{
    notify_all_producers, notify_consumer, notify_consumer_any, notify_producers, Side, Waiter,
};
use fugue_sync::{Arc, Ordering};

/// A producer handle. Cloneable; any number of threads (and, for a shared-memory ring,
/// processes) may produce at once, each item number exactly once, in any order.
pub struct Producer {
    region: Arc<Region>,
}

/// The single consumer. It reads items 0, 1, 2, ... strictly in order.
pub struct Consumer {
    region: Arc<Region>,
    next: u64,
    /// In-process rings know how many producer handles exist; a shared-memory consumer does
    /// not rely on the count (a producer process may die without decrementing it).
    track_producers: bool,
    /// Shared-memory name to unlink on drop.
    #[cfg(not(loom))]
    unlink: Option<std::ffi::CString>,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.capacity())
            .field("item_size", &self.item_size())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("capacity", &self.capacity())
            .field("item_size", &self.item_size())
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

pub(crate) fn pair(region: Region) -> (Producer, Consumer) {
    let region = Arc::new(region);
    let producer = Producer {
        region: region.clone(),
    };
    let consumer = Consumer {
        region,
        next: 0,
        track_producers: true,
        #[cfg(not(loom))]
        unlink: None,
    };
    (producer, consumer)
}

/// A producer over an existing region whose producer count was already incremented.
#[cfg(not(loom))]
pub(crate) fn producer_of(region: Region) -> Producer {
    crate::wait::prepare();
    Producer {
        region: Arc::new(region),
    }
}

/// The consumer of a shared-memory ring: it unlinks `name` on drop and ignores the producer
/// count.
#[cfg(not(loom))]
pub(crate) fn shm_consumer(region: Region, name: std::ffi::CString) -> Consumer {
    crate::wait::prepare();
    Consumer {
        region: Arc::new(region),
        next: 0,
        track_producers: false,
        unlink: Some(name),
    }
}

/// What the slot of item `n` says about acquiring `n`, from the value `word` it holds.
#[inline]
fn classify(n: u64, word: u64) -> Result<(), TryAcquireError> {
    let (m, state) = decode(word);
    if m < n {
        // The slot still refers to an earlier item (n - k * capacity): not free for n yet.
        Err(TryAcquireError::Full)
    } else if m > n || state == READING {
        // The slot went past n (n was read and released), or the consumer is reading n.
        Err(TryAcquireError::AlreadyRead)
    } else if state == FREE {
        Ok(())
    } else {
        // WRITING or READY for n: someone holds n or already committed it.
        Err(TryAcquireError::AlreadyAcquired)
    }
}

impl Producer {
    /// Take the slot of item `n` if it is free now; never waits, allocates or locks.
    ///
    /// `Full` is temporary (retry later with the same `n`); `AlreadyRead` and
    /// `AlreadyAcquired` are misuse (a number produced twice).
    ///
    /// # Panics
    /// If `n > MAX_ITEM` (2^62 - 1).
    #[inline]
    pub fn try_acquire(&self, n: u64) -> Result<WriteGuard<'_>, TryAcquireError> {
        assert!(n <= MAX_ITEM, "item number {n} exceeds the ring's range");
        let region = &*self.region;
        let slot = region.slot_of(n);
        // Acquire on success pairs with the consumer's Release store of FREE(n) in
        // `ReadGuard::drop` (or with an abandoning producer's Release store): the previous
        // item's reads (or writes) happen before our writes to the bytes.
        match region.seq(slot).compare_exchange(
            encode(n, FREE),
            encode(n, WRITING),
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => {
                region.track.write(slot);
                Ok(WriteGuard {
                    region,
                    n,
                    slot,
                    _not_send: PhantomData,
                })
            }
            Err(word) => match classify(n, word) {
                // A strong CAS cannot fail on the expected value; treat it as temporary.
                Ok(()) => Err(TryAcquireError::Full),
                Err(e) => Err(e),
            },
        }
    }

    /// Take the slot of item `n`, waiting (per the ring's [`Strategy`]) while it still holds
    /// an earlier item.
    pub fn acquire(&self, n: u64) -> Result<WriteGuard<'_>, AcquireError> {
        self.acquire_inner(n, None)
    }

    /// Like [`acquire`](Self::acquire), giving up after `timeout`
    /// ([`AcquireError::Timeout`]).
    pub fn acquire_timeout(
        &self,
        n: u64,
        timeout: Duration,
    ) -> Result<WriteGuard<'_>, AcquireError> {
        self.acquire_inner(n, Some(timeout))
    }

    #[inline]
    fn acquire_inner(
        &self,
        n: u64,
        timeout: Option<Duration>,
    ) -> Result<WriteGuard<'_>, AcquireError> {
        match self.try_acquire(n) {
            Ok(g) => Ok(g),
            Err(TryAcquireError::Full) => self.acquire_slow(n, timeout),
            Err(e) => Err(AcquireError::from_try(e, n)),
        }
    }

    #[cold]
    fn acquire_slow(
        &self,
        n: u64,
        timeout: Option<Duration>,
    ) -> Result<WriteGuard<'_>, AcquireError> {
        let region = &*self.region;
        let control = region.control();
        let slot = region.slot_of(n);
        let seq = region.seq(slot);
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut waiter = Waiter::new(region.strategy);
        loop {
            let word = seq.load(Ordering::Relaxed);
            if decode(word).0 >= n {
                match self.try_acquire(n) {
                    Ok(g) => return Ok(g),
                    Err(TryAcquireError::Full) => continue,
                    Err(e) => return Err(AcquireError::from_try(e, n)),
                }
            }
            // Acquire pairs with the Release store in `Consumer::drop`.
            if control.consumer_alive.load(Ordering::Acquire) == 0 {
                return Err(AcquireError::Disconnected { n });
            }
            if let (Some(d), Some(t)) = (deadline, timeout) {
                if Instant::now() >= d {
                    return Err(AcquireError::Timeout { n, waited: t });
                }
            }
            waiter.pause(
                control,
                Side::Producer { slot },
                || {
                    decode(seq.load(Ordering::Relaxed)).0 >= n
                        || control.consumer_alive.load(Ordering::Relaxed) == 0
                },
                deadline,
            );
        }
    }

    /// Number of slots.
    pub fn capacity(&self) -> u64 {
        self.region.capacity()
    }

    /// Bytes per item.
    pub fn item_size(&self) -> usize {
        self.region.item_size()
    }

    /// The ring's wait strategy.
    pub fn strategy(&self) -> Strategy {
        self.region.strategy
    }

    /// The number of the next item the consumer will read, as last published by it (items
    /// below it have been read and released). For monitoring; it may be stale at once.
    pub fn next_to_read(&self) -> u64 {
        // Acquire pairs with the Release store in `ReadGuard::drop`.
        self.region.control().next_to_read.load(Ordering::Acquire)
    }
}

impl Clone for Producer {
    fn clone(&self) -> Self {
        // Relaxed: a new handle is made from a live one, as in `Arc::clone`.
        self.region
            .control()
            .producers
            .fetch_add(1, Ordering::Relaxed);
        Producer {
            region: self.region.clone(),
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        let control = self.region.control();
        // Release pairs with the consumer's Acquire load of `producers`: every commit of this
        // handle is visible to a consumer that sees the count drop.
        control.producers.fetch_sub(1, Ordering::Release);
        notify_consumer_any(control);
    }
}

/// The slot of one item, held for writing. Derefs to the item's bytes (zero-copy).
///
/// [`commit`](Self::commit) publishes the item. Dropping the guard without committing
/// *abandons* it: the slot goes back to "free for `n`", nothing is published, and the same
/// number can be acquired again (the consumer keeps waiting for `n` until someone commits it).
#[must_use = "dropping a write guard abandons the item; call commit()"]
pub struct WriteGuard<'a> {
    region: &'a Region,
    n: u64,
    slot: usize,
    /// The guard stays on the thread that acquired it.
    _not_send: PhantomData<*mut u8>,
}

impl WriteGuard<'_> {
    /// The item number this guard writes.
    pub fn number(&self) -> u64 {
        self.n
    }

    /// Publish the item: the consumer may read it from now on.
    #[inline]
    pub fn commit(self) {
        let this = ManuallyDrop::new(self);
        this.finish(READY);
        if this.region.strategy == Strategy::Park {
            notify_consumer(this.region.control(), this.n);
        }
    }

    /// A raw pointer to the item's first byte (aligned as the ring was created for).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.region.data(self.slot)
    }

    #[inline]
    fn finish(&self, state: u64) {
        self.region.track.write(self.slot);
        // Release pairs with the consumer's Acquire load in `Consumer::poll` (READY) or with
        // the next producer's Acquire CAS (FREE, abandoned): the bytes written through this
        // guard happen before their reads or overwrites.
        self.region
            .seq(self.slot)
            .store(encode(self.n, state), Ordering::Release);
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.finish(FREE);
    }
}

impl Deref for WriteGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: the slot's word is WRITING(n) and only this guard may move it out of that
        // state, so no other thread reads or writes these `item_size` bytes (which lie inside
        // the slot and were initialised: zeroed at creation) while the guard lives.
        unsafe { std::slice::from_raw_parts(self.region.data(self.slot), self.region.item_size()) }
    }
}

impl DerefMut for WriteGuard<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`: this guard has exclusive access to the bytes, and `&mut self`
        // prevents a second reference through it.
        unsafe {
            std::slice::from_raw_parts_mut(self.region.data(self.slot), self.region.item_size())
        }
    }
}

enum Poll {
    Ready(usize),
    Empty,
    Disconnected,
}

impl Consumer {
    #[inline]
    fn poll(&self) -> Poll {
        let region = &*self.region;
        let slot = region.slot_of(self.next);
        let want = encode(self.next, READY);
        // Acquire pairs with the Release store in `WriteGuard::commit`: the item's bytes are
        // visible once we see READY(next).
        if region.seq(slot).load(Ordering::Acquire) == want {
            return Poll::Ready(slot);
        }
        // Acquire pairs with the Release decrement in `Producer::drop`.
        if self.track_producers && region.control().producers.load(Ordering::Acquire) == 0 {
            // Re-check: the last producer may have committed just before leaving.
            if region.seq(slot).load(Ordering::Acquire) == want {
                return Poll::Ready(slot);
            }
            return Poll::Disconnected;
        }
        Poll::Empty
    }

    #[inline]
    fn guard(&mut self, slot: usize) -> ReadGuard<'_> {
        let region = &*self.region;
        // Relaxed: no other thread changes a READY word (producers only CAS from FREE); the
        // state only makes a late `try_acquire(n)` report `AlreadyRead`.
        region
            .seq(slot)
            .store(encode(self.next, READING), Ordering::Relaxed);
        region.track.read(slot);
        ReadGuard {
            consumer: self,
            slot,
            _not_send: PhantomData,
        }
    }

    /// Whether the next item is there now (`Ok(true)`: [`try_next`](Self::try_next) returns
    /// it), not yet (`Ok(false)`), or never will be (every producer is gone without committing
    /// it). Reads two words; takes nothing. For a consumer that waits its own way (sleeping
    /// between looks, so that a producer never pays for waking it).
    #[inline]
    pub fn ready(&self) -> Result<bool, TryNextError> {
        match self.poll() {
            Poll::Ready(_) => Ok(true),
            Poll::Empty => Ok(false),
            Poll::Disconnected => Err(TryNextError::Disconnected { missing: self.next }),
        }
    }

    /// The next item if it is there now; never waits, allocates or locks.
    #[inline]
    pub fn try_next(&mut self) -> Result<ReadGuard<'_>, TryNextError> {
        match self.poll() {
            Poll::Ready(slot) => Ok(self.guard(slot)),
            Poll::Empty => Err(TryNextError::Empty { next: self.next }),
            Poll::Disconnected => Err(TryNextError::Disconnected { missing: self.next }),
        }
    }

    /// Wait (per the ring's [`Strategy`]) for the next item. Fails only when every producer
    /// handle is gone without committing it (in-process rings); a shared-memory consumer
    /// should use [`next_timeout`](Self::next_timeout).
    #[allow(clippy::should_implement_trait)] // the name of the protocol step; fallible, so not an Iterator
    pub fn next(&mut self) -> Result<ReadGuard<'_>, NextError> {
        self.next_inner(None)
    }

    /// Wait at most `timeout` for the next item; [`NextError::Timeout`] names the missing
    /// item (e.g. "item 1234 did not arrive within 2s").
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<ReadGuard<'_>, NextError> {
        self.next_inner(Some(timeout))
    }

    #[inline]
    fn next_inner(&mut self, timeout: Option<Duration>) -> Result<ReadGuard<'_>, NextError> {
        let slot = match self.poll() {
            Poll::Ready(slot) => slot,
            Poll::Disconnected => return Err(NextError::Disconnected { missing: self.next }),
            Poll::Empty => self.wait_slow(timeout)?,
        };
        Ok(self.guard(slot))
    }

    #[cold]
    fn wait_slow(&self, timeout: Option<Duration>) -> Result<usize, NextError> {
        let region = &*self.region;
        let control = region.control();
        let slot = region.slot_of(self.next);
        let want = encode(self.next, READY);
        let seq = region.seq(slot);
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut waiter = Waiter::new(region.strategy);
        let mut polls: u32 = 0;
        loop {
            match self.poll() {
                Poll::Ready(slot) => return Ok(slot),
                Poll::Disconnected => return Err(NextError::Disconnected { missing: self.next }),
                Poll::Empty => {}
            }
            polls = polls.wrapping_add(1);
            // Reading the clock costs tens of nanoseconds: spinners look at it every 64 polls.
            if let (Some(d), Some(t)) = (deadline, timeout) {
                if (region.strategy != Strategy::Spin || polls.is_multiple_of(64))
                    && Instant::now() >= d
                {
                    return Err(NextError::Timeout {
                        missing: self.next,
                        waited: t,
                    });
                }
            }
            let track = self.track_producers;
            waiter.pause(
                control,
                Side::Consumer { want: self.next },
                || {
                    seq.load(Ordering::Relaxed) == want
                        || (track && control.producers.load(Ordering::Relaxed) == 0)
                },
                deadline,
            );
        }
    }

    /// The number of the item the next `next`/`try_next` returns.
    pub fn next_number(&self) -> u64 {
        self.next
    }

    /// Number of slots.
    pub fn capacity(&self) -> u64 {
        self.region.capacity()
    }

    /// Bytes per item.
    pub fn item_size(&self) -> usize {
        self.region.item_size()
    }

    /// The ring's wait strategy.
    pub fn strategy(&self) -> Strategy {
        self.region.strategy
    }

    /// Whether this ring lives in POSIX shared memory.
    pub fn is_shared_memory(&self) -> bool {
        self.region.is_shared_memory()
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        let control = self.region.control();
        // Release pairs with the producers' Acquire load in `acquire_slow`.
        control.consumer_alive.store(0, Ordering::Release);
        notify_all_producers(control);
        #[cfg(not(loom))]
        if let Some(name) = self.unlink.take() {
            // The mapping stays valid for the producers that still have it open.
            let _ = nix::sys::mman::shm_unlink(name.as_c_str());
        }
    }
}

/// The next item, held for reading. Derefs to its bytes (zero-copy); dropping it releases
/// the slot (it becomes free for item `n + capacity`).
pub struct ReadGuard<'a> {
    consumer: &'a mut Consumer,
    slot: usize,
    _not_send: PhantomData<*mut u8>,
}

impl ReadGuard<'_> {
    /// The item number.
    pub fn number(&self) -> u64 {
        self.consumer.next
    }

    /// A raw pointer to the item's first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.consumer.region.data(self.slot)
    }
}

impl Deref for ReadGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        let region = &*self.consumer.region;
        // SAFETY: the slot's word is READING(n) (it was READY(n), seen with Acquire after the
        // producer's Release commit), and only this guard moves it on, so the bytes are
        // initialised, complete, and not written by anyone while the guard lives.
        unsafe { std::slice::from_raw_parts(region.data(self.slot), region.item_size()) }
    }
}

impl Drop for ReadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        let consumer = &mut *self.consumer;
        let region = &*consumer.region;
        let n = consumer.next;
        region.track.read(self.slot);
        // Release pairs with the Acquire load in `Producer::next_to_read` (monitoring).
        region
            .control()
            .next_to_read
            .store(n + 1, Ordering::Release);
        // Release pairs with the Acquire CAS in `try_acquire(n + capacity)`: our reads of the
        // bytes happen before the next writer's writes.
        region
            .seq(self.slot)
            .store(encode(n + region.capacity(), FREE), Ordering::Release);
        consumer.next = n + 1;
        if region.strategy == Strategy::Park {
            notify_producers(region.control(), self.slot);
        }
    }
}
