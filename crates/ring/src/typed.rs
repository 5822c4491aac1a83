//! The typed form of the ring: items of one `Copy` type instead of byte slices. Same
//! protocol, same guarantees; `try_acquire`/`commit` and `try_next`/release never allocate,
//! lock or block, so a real-time thread can produce (e.g. per-cycle measurement records).

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::time::Duration;

use crate::error::{AcquireError, NextError, TryAcquireError, TryNextError};
use crate::region::Strategy;
use crate::ring::{Consumer, Producer, ReadGuard, WriteGuard};

/// A producer of `T` items. See [`Producer`].
pub struct TypedProducer<T: Copy + Send + 'static> {
    inner: Producer,
    _t: PhantomData<fn() -> T>,
}

/// The consumer of `T` items. See [`Consumer`].
pub struct TypedConsumer<T: Copy + Send + 'static> {
    inner: Consumer,
    _t: PhantomData<fn() -> T>,
}

impl<T: Copy + Send + 'static> std::fmt::Debug for TypedProducer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TypedProducer").field(&self.inner).finish()
    }
}

impl<T: Copy + Send + 'static> std::fmt::Debug for TypedConsumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TypedConsumer").field(&self.inner).finish()
    }
}

pub(crate) fn wrap<T: Copy + Send + 'static>(
    p: Producer,
    c: Consumer,
) -> (TypedProducer<T>, TypedConsumer<T>) {
    (
        TypedProducer {
            inner: p,
            _t: PhantomData,
        },
        TypedConsumer {
            inner: c,
            _t: PhantomData,
        },
    )
}

impl<T: Copy + Send + 'static> Clone for TypedProducer<T> {
    fn clone(&self) -> Self {
        TypedProducer {
            inner: self.inner.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Copy + Send + 'static> TypedProducer<T> {
    /// Take the slot of item `n` if it is free now. Never waits, allocates or locks: on
    /// `Full`, a real-time producer keeps `n`, counts the miss, and tries `n` again later (the
    /// consumer reads numbers in order, so a skipped number would stall it).
    #[inline]
    pub fn try_acquire(&self, n: u64) -> Result<TypedWriteGuard<'_, T>, TryAcquireError> {
        self.inner.try_acquire(n).map(TypedWriteGuard::new)
    }

    /// Take the slot of item `n`, waiting while it still holds an earlier item.
    pub fn acquire(&self, n: u64) -> Result<TypedWriteGuard<'_, T>, AcquireError> {
        self.inner.acquire(n).map(TypedWriteGuard::new)
    }

    /// Like [`acquire`](Self::acquire), giving up after `timeout`.
    pub fn acquire_timeout(
        &self,
        n: u64,
        timeout: Duration,
    ) -> Result<TypedWriteGuard<'_, T>, AcquireError> {
        self.inner
            .acquire_timeout(n, timeout)
            .map(TypedWriteGuard::new)
    }

    /// Number of slots.
    pub fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    /// The ring's wait strategy.
    pub fn strategy(&self) -> Strategy {
        self.inner.strategy()
    }

    /// See [`Producer::next_to_read`].
    pub fn next_to_read(&self) -> u64 {
        self.inner.next_to_read()
    }
}

/// The slot of one `T` item, held for writing. Dropping it without committing abandons the
/// item (see [`WriteGuard`]).
#[must_use = "dropping a write guard abandons the item; call write()"]
pub struct TypedWriteGuard<'a, T> {
    inner: WriteGuard<'a>,
    _t: PhantomData<fn() -> T>,
}

impl<'a, T: Copy> TypedWriteGuard<'a, T> {
    fn new(inner: WriteGuard<'a>) -> Self {
        TypedWriteGuard {
            inner,
            _t: PhantomData,
        }
    }

    /// The item number.
    pub fn number(&self) -> u64 {
        self.inner.number()
    }

    /// Store `value` in the slot and publish it.
    #[inline]
    pub fn write(mut self, value: T) {
        self.as_uninit().write(value);
        self.inner.commit();
    }

    /// The slot's memory, to build the item in place.
    #[inline]
    pub fn as_uninit(&mut self) -> &mut MaybeUninit<T> {
        // SAFETY: the ring was created for `T` (item size = size_of::<T>(), slots aligned for
        // T), and the guard has exclusive access to the bytes (see `WriteGuard::deref`).
        unsafe { &mut *self.inner.as_mut_ptr().cast::<MaybeUninit<T>>() }
    }

    /// Publish the item built in place through [`as_uninit`](Self::as_uninit).
    ///
    /// # Safety
    /// The slot must hold a fully initialised `T`, written through `as_uninit` on this guard.
    #[inline]
    pub unsafe fn assume_init_commit(self) {
        self.inner.commit();
    }
}

/// One `T` item, held for reading; dropping it releases the slot.
pub struct TypedReadGuard<'a, T> {
    inner: ReadGuard<'a>,
    _t: PhantomData<fn() -> T>,
}

impl<T: Copy> TypedReadGuard<'_, T> {
    /// The item number.
    pub fn number(&self) -> u64 {
        self.inner.number()
    }
}

impl<T: Copy> Deref for TypedReadGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: only a TypedProducer<T> of this ring commits, and only after writing a
        // whole T (`write`, or `assume_init_commit` under its contract); the slot is aligned
        // for T and not written while the read guard lives (see `ReadGuard::deref`).
        unsafe { &*self.inner.as_ptr().cast::<T>() }
    }
}

impl<T: Copy + Send + 'static> TypedConsumer<T> {
    /// The next item if it is there now; never waits, allocates or locks.
    #[inline]
    pub fn try_next(&mut self) -> Result<TypedReadGuard<'_, T>, TryNextError> {
        self.inner.try_next().map(|inner| TypedReadGuard {
            inner,
            _t: PhantomData,
        })
    }

    /// Wait for the next item (see [`Consumer::next`]).
    #[allow(clippy::should_implement_trait)] // the name of the protocol step; fallible, so not an Iterator
    pub fn next(&mut self) -> Result<TypedReadGuard<'_, T>, NextError> {
        self.inner.next().map(|inner| TypedReadGuard {
            inner,
            _t: PhantomData,
        })
    }

    /// Wait at most `timeout` for the next item.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<TypedReadGuard<'_, T>, NextError> {
        self.inner
            .next_timeout(timeout)
            .map(|inner| TypedReadGuard {
                inner,
                _t: PhantomData,
            })
    }

    /// The number of the item the next `next`/`try_next` returns.
    pub fn next_number(&self) -> u64 {
        self.inner.next_number()
    }

    /// Number of slots.
    pub fn capacity(&self) -> u64 {
        self.inner.capacity()
    }
}
