//! The queues of the ring benchmark behind one interface, [`Queue`]: the peers (crossbeam
//! `ArrayQueue`, `rtrb`, `std::sync::mpsc::sync_channel`) here, fugue's ordered rings in
//! [`crate::ring::point`]. Items carry their number and a payload derived from it ([`fill`],
//! [`verify`]), so that the consumer checks every item it receives.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{failed, BenchError};

/// How long the consumer waits for one item before it declares it missing.
pub const ITEM_TIMEOUT: Duration = Duration::from_secs(20);

/// What a producer's push did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// The item is in the queue.
    Done,
    /// The consumer stopped early on purpose: the producer ends without error.
    Stopped,
}

/// A queue under test: producer handles for the producer threads, and the consumer side.
pub trait Queue {
    /// One producer thread's handle.
    type Producer: Send + 'static;
    /// Whether the queue hands items over in number order across producers (the ordered
    /// rings); the peers only keep each producer's order.
    const ORDERED: bool;
    /// `count` producer handles.
    fn producers(&mut self, count: usize) -> Result<Vec<Self::Producer>, BenchError>;
    /// Pushes item `n` (filled with [`fill`]), waiting while the queue is full. `stopped`
    /// tells that the consumer stopped early on purpose.
    fn push(p: &mut Self::Producer, n: u64, stopped: &AtomicBool) -> Result<Pushed, BenchError>;
    /// Receives the next item (`expected` for the ordered rings), checks its payload and
    /// returns its number; `None` when none came within [`ITEM_TIMEOUT`].
    fn next(&mut self, expected: u64) -> Result<Option<u64>, BenchError>;
}

/// The payload of item `n`: its number (little-endian) then bytes derived from it.
#[inline]
pub fn fill(buf: &mut [u8], n: u64) {
    buf[..8].copy_from_slice(&n.to_le_bytes());
    let seed = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8;
    for (j, b) in buf[8..].iter_mut().enumerate() {
        *b = seed.wrapping_add(j as u8);
    }
}

/// Checks that `buf` is the payload of item `expected` (or, with `None`, of the number it
/// carries), and returns that number.
#[inline]
pub fn verify(buf: &[u8], expected: Option<u64>) -> Result<u64, BenchError> {
    let n = u64::from_le_bytes(buf[..8].try_into().expect("items are at least 8 bytes"));
    if let Some(e) = expected {
        if n != e {
            return failed(format!("item {e} carries the number {n}"));
        }
    }
    let seed = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8;
    for (j, b) in buf[8..].iter().enumerate() {
        let want = seed.wrapping_add(j as u8);
        if *b != want {
            return failed(format!(
                "item {n} has byte {} = {b}, expected {want}",
                j + 8
            ));
        }
    }
    Ok(n)
}

/// Spin, then yield: how the peers' producers and consumers wait (the same back-off as the
/// ordered ring's `Yield`).
#[derive(Debug, Default)]
pub struct Backoff(u32);

impl Backoff {
    /// Waits a little longer than last time.
    #[inline]
    pub fn snooze(&mut self) {
        if self.0 < 6 {
            for _ in 0..(1u32 << self.0) {
                std::hint::spin_loop();
            }
            self.0 += 1;
        } else {
            thread::yield_now();
        }
    }

    /// Whether the spinning is over (the waiter yields now).
    #[inline]
    pub fn yielding(&self) -> bool {
        self.0 >= 6
    }
}

/// Pops with [`Backoff`] until `pop` gives an item or [`ITEM_TIMEOUT`] has passed.
fn pop_waiting<const N: usize>(
    mut pop: impl FnMut() -> Option<[u8; N]>,
) -> Result<Option<u64>, BenchError> {
    let started = Instant::now();
    let mut backoff = Backoff::default();
    loop {
        if let Some(a) = pop() {
            return verify(&a, None).map(Some);
        }
        backoff.snooze();
        if backoff.yielding() && started.elapsed() > ITEM_TIMEOUT {
            return Ok(None);
        }
    }
}

/// Item `n` as an array.
fn item<const N: usize>(n: u64) -> [u8; N] {
    let mut a = [0u8; N];
    fill(&mut a, n);
    a
}

/// crossbeam-queue's `ArrayQueue` (MPMC), spin-then-yield on both sides.
#[derive(Debug)]
pub struct ArrayQueue<const N: usize>(Arc<crossbeam_queue::ArrayQueue<[u8; N]>>);

impl<const N: usize> ArrayQueue<N> {
    /// A queue of `capacity` items.
    pub fn new(capacity: usize) -> Self {
        ArrayQueue(Arc::new(crossbeam_queue::ArrayQueue::new(capacity)))
    }
}

impl<const N: usize> Queue for ArrayQueue<N> {
    type Producer = Arc<crossbeam_queue::ArrayQueue<[u8; N]>>;
    const ORDERED: bool = false;
    fn producers(&mut self, count: usize) -> Result<Vec<Self::Producer>, BenchError> {
        Ok(vec![self.0.clone(); count])
    }
    fn push(q: &mut Self::Producer, n: u64, stopped: &AtomicBool) -> Result<Pushed, BenchError> {
        let mut it = item::<N>(n);
        let mut backoff = Backoff::default();
        while let Err(back) = q.push(it) {
            it = back;
            backoff.snooze();
            // Acquire pairs with the consumer's Release store when it stops.
            if backoff.yielding() && stopped.load(Ordering::Acquire) {
                return Ok(Pushed::Stopped);
            }
        }
        Ok(Pushed::Done)
    }
    fn next(&mut self, _: u64) -> Result<Option<u64>, BenchError> {
        pop_waiting(|| self.0.pop())
    }
}

/// `rtrb` (single producer, single consumer), spin-then-yield on both sides.
#[derive(Debug)]
pub struct Rtrb<const N: usize> {
    producer: Option<rtrb::Producer<[u8; N]>>,
    consumer: rtrb::Consumer<[u8; N]>,
}

impl<const N: usize> Rtrb<N> {
    /// A ring of `capacity` items.
    pub fn new(capacity: usize) -> Self {
        let (p, c) = rtrb::RingBuffer::new(capacity);
        Rtrb {
            producer: Some(p),
            consumer: c,
        }
    }
}

impl<const N: usize> Queue for Rtrb<N> {
    type Producer = rtrb::Producer<[u8; N]>;
    const ORDERED: bool = false;
    fn producers(&mut self, count: usize) -> Result<Vec<Self::Producer>, BenchError> {
        match (count, self.producer.take()) {
            (1, Some(p)) => Ok(vec![p]),
            _ => crate::error::config("rtrb takes exactly one producer"),
        }
    }
    fn push(p: &mut Self::Producer, n: u64, _: &AtomicBool) -> Result<Pushed, BenchError> {
        let mut it = item::<N>(n);
        let mut backoff = Backoff::default();
        while let Err(rtrb::PushError::Full(back)) = p.push(it) {
            it = back;
            backoff.snooze();
            if backoff.yielding() && p.is_abandoned() {
                return Ok(Pushed::Stopped);
            }
        }
        Ok(Pushed::Done)
    }
    fn next(&mut self, _: u64) -> Result<Option<u64>, BenchError> {
        pop_waiting(|| self.consumer.pop().ok())
    }
}

/// `std::sync::mpsc::sync_channel` (blocking on both sides).
#[derive(Debug)]
pub struct SyncChannel<const N: usize> {
    tx: std::sync::mpsc::SyncSender<[u8; N]>,
    rx: std::sync::mpsc::Receiver<[u8; N]>,
}

impl<const N: usize> SyncChannel<N> {
    /// A channel of `capacity` items.
    pub fn new(capacity: usize) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(capacity);
        SyncChannel { tx, rx }
    }
}

impl<const N: usize> Queue for SyncChannel<N> {
    type Producer = std::sync::mpsc::SyncSender<[u8; N]>;
    const ORDERED: bool = false;
    fn producers(&mut self, count: usize) -> Result<Vec<Self::Producer>, BenchError> {
        Ok(vec![self.tx.clone(); count])
    }
    fn push(tx: &mut Self::Producer, n: u64, stopped: &AtomicBool) -> Result<Pushed, BenchError> {
        if tx.send(item::<N>(n)).is_ok() {
            return Ok(Pushed::Done);
        }
        // Acquire pairs with the consumer's Release store when it stops.
        if stopped.load(Ordering::Acquire) {
            Ok(Pushed::Stopped)
        } else {
            failed("the consumer hung up")
        }
    }
    fn next(&mut self, _: u64) -> Result<Option<u64>, BenchError> {
        match self.rx.recv_timeout(ITEM_TIMEOUT) {
            Ok(a) => verify(&a, None).map(Some),
            Err(_) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip_and_corruption_is_caught() {
        let mut buf = [0u8; 32];
        fill(&mut buf, 1234);
        assert_eq!(verify(&buf, Some(1234)).unwrap(), 1234);
        assert_eq!(verify(&buf, None).unwrap(), 1234);
        let e = verify(&buf, Some(1235)).unwrap_err();
        assert_eq!(e.to_string(), "item 1235 carries the number 1234");
        buf[20] ^= 1;
        let e = verify(&buf, Some(1234)).unwrap_err();
        assert!(e.to_string().starts_with("item 1234 has byte 20"), "{e}");
    }
}
