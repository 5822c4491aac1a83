//! The ordered ring: numbered, fixed-size items from any number of producers to one consumer
//! that reads them strictly in order; lock-free and zero-copy, in one process or across
//! processes through POSIX shared memory.
//!
//! Design after B. Godard, "Échanges non bloquants de données ordonnées entre producteurs
//! multiples et consommateur unique", COMPAS 2019. Item `n` lives in slot `n mod capacity`;
//! each slot holds an atomic word with the number of the item it refers to and a state (free
//! for `n`, being written, ready, being read). A producer may write item `n` as soon as its
//! slot is free (`n < next_to_read + capacity`), without waiting for the items before `n`; the
//! consumer reads item `next_to_read` as soon as it is committed. The protocol and its proof
//! sketch are in `docs/ring.md`.
//!
//! ```
//! let (producer, mut consumer) = fugue_ring::ordered(4, 8);
//! let p2 = producer.clone();
//! // Items may be written in any order...
//! let mut g = p2.acquire(1).unwrap();
//! g.copy_from_slice(&1u64.to_le_bytes());
//! g.commit();
//! let mut g = producer.try_acquire(0).unwrap();
//! g.copy_from_slice(&0u64.to_le_bytes());
//! g.commit();
//! // ...and are read in order.
//! for n in 0..2u64 {
//!     let item = consumer.next().unwrap();
//!     assert_eq!(item.number(), n);
//!     assert_eq!(&item[..], &n.to_le_bytes());
//! }
//! ```
//!
//! Real-time use: a single producer on an audio thread calls
//! [`TypedProducer::try_acquire`] and [`TypedWriteGuard::write`], which never allocate, lock
//! or block; on [`TryAcquireError::Full`] it keeps the number and counts a miss.

mod access;
mod error;
pub mod mutex;
mod region;
mod ring;
#[cfg(not(loom))]
pub mod shm;
mod typed;
mod wait;

pub use error::{AcquireError, NextError, TryAcquireError, TryNextError};
pub use mutex::MutexCondRing;
pub use region::{Options, Padding, Strategy, CACHE_LINE, MAX_ITEM};
pub use ring::{Consumer, Producer, ReadGuard, WriteGuard};
pub use typed::{TypedConsumer, TypedProducer, TypedReadGuard, TypedWriteGuard};

use region::{Region, SlotLayout};

/// A ring of `capacity` slots of `item_size` bytes with the default [`Options`] (yield
/// waiting, cache-line padding). Returns a cloneable producer and the consumer.
///
/// # Panics
/// If `capacity` is 0 or the ring would not fit in memory.
pub fn ordered(capacity: usize, item_size: usize) -> (Producer, Consumer) {
    ordered_with(capacity, item_size, Options::default())
}

/// A ring of `capacity` slots of `item_size` bytes with the given options.
///
/// # Panics
/// If `capacity` is 0 or the ring would not fit in memory.
pub fn ordered_with(capacity: usize, item_size: usize, options: Options) -> (Producer, Consumer) {
    ordered_aligned(capacity, item_size, 8, options)
}

/// The bytes that the slots of a ring of `capacity` items of `item_size` bytes take with
/// `padding` (each slot: its sequence number and the item, rounded up to the padding's unit);
/// `None` when the size overflows. What [`ordered_with`] allocates for them.
pub fn slots_bytes(capacity: usize, item_size: usize, padding: Padding) -> Option<usize> {
    SlotLayout::new(capacity as u64, item_size, 8, padding).map(|l| l.bytes())
}

fn ordered_aligned(
    capacity: usize,
    item_size: usize,
    align: usize,
    options: Options,
) -> (Producer, Consumer) {
    assert!(capacity > 0, "a ring needs at least one slot");
    let layout = SlotLayout::new(capacity as u64, item_size, align, options.padding)
        .expect("ring size overflows the address space");
    wait::prepare();
    ring::pair(Region::heap(layout, align, options.strategy))
}

/// A ring of `capacity` slots holding one `T` each, default [`Options`].
///
/// # Panics
/// If `capacity` is 0 or `T` is aligned to more than 64 bytes.
pub fn ordered_typed<T: Copy + Send + 'static>(
    capacity: usize,
) -> (TypedProducer<T>, TypedConsumer<T>) {
    ordered_typed_with(capacity, Options::default())
}

/// A ring of `capacity` slots holding one `T` each, with the given options.
///
/// # Panics
/// If `capacity` is 0 or `T` is aligned to more than 64 bytes.
pub fn ordered_typed_with<T: Copy + Send + 'static>(
    capacity: usize,
    options: Options,
) -> (TypedProducer<T>, TypedConsumer<T>) {
    let align = std::mem::align_of::<T>();
    assert!(
        align <= CACHE_LINE,
        "items aligned to more than 64 bytes are not supported"
    );
    let (p, c) = ordered_aligned(capacity, std::mem::size_of::<T>(), align, options);
    typed::wrap(p, c)
}
