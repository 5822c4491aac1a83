//! The deque's single-thread behaviour and its stress tests, in both configurations: fixed
//! (`u32` items, symmetric fences: the executors') and growing (pointers, asymmetric fences:
//! the pool's).

use super::*;
use std::sync::atomic::{AtomicBool, AtomicU8};
use std::sync::Arc;

/// The pool's configuration.
type PtrDeque = Deque<*mut u8, Growing<*mut u8>, Asymmetric>;

fn p(i: usize) -> *mut u8 {
    (i + 1) as *mut u8
}
fn ix(p: *mut u8) -> usize {
    p as usize - 1
}

#[test]
fn fixed_lifo_owner_fifo_thief() {
    let d = Deque::<u32>::with_capacity(8);
    for i in 0..5 {
        d.push(i);
    }
    assert_eq!(d.steal(), Steal::Success(0));
    assert_eq!(d.pop(), Some(4));
    assert_eq!(d.steal(), Steal::Success(1));
    assert_eq!(d.pop(), Some(3));
    assert_eq!(d.pop(), Some(2));
    assert_eq!(d.pop(), None);
    assert_eq!(d.steal(), Steal::Empty);
    // Wraps around the ring many times without growing.
    for round in 0..100u32 {
        for i in 0..8 {
            d.push(round * 8 + i);
        }
        for i in (0..8).rev() {
            assert_eq!(d.pop(), Some(round * 8 + i));
        }
    }
    assert_eq!(d.capacity(), 8);
}

#[test]
fn fixed_ring_spans_several_lines() {
    // 100 items: four lines of 32 slots.
    let d = Deque::<u32>::with_capacity(100);
    assert_eq!(d.capacity(), 128);
    for i in 0..128 {
        d.push(i);
    }
    assert_eq!(d.len(), 128);
    assert_eq!(d.ends(), (0, 128));
    assert_eq!(d.slot_value(77), 77);
    for i in 0..64 {
        assert_eq!(d.steal(), Steal::Success(i));
    }
    for i in (64..128).rev() {
        assert_eq!(d.pop(), Some(i));
    }
    assert!(d.is_empty());
}

#[test]
fn growing_lifo_owner_fifo_thief_and_growth() {
    let d = PtrDeque::growing(2, None);
    // SAFETY: this thread is the only one touching the deque.
    unsafe {
        for i in 0..5 {
            d.push(p(i)).unwrap();
        }
        assert!(d.ring_capacity() >= 8);
        assert_eq!(d.steal(), Steal::Success(p(0)));
        assert_eq!(d.pop(), Some(p(4)));
        assert_eq!(d.steal(), Steal::Success(p(1)));
        assert_eq!(d.pop(), Some(p(3)));
        assert_eq!(d.pop(), Some(p(2)));
        assert_eq!(d.pop(), None);
        assert_eq!(d.steal(), Steal::Empty);
    }
}

#[test]
fn a_bounded_deque_hands_the_item_back() {
    let d = PtrDeque::growing(2, Some(3));
    // SAFETY: this thread is the only one touching the deque.
    unsafe {
        for i in 0..3 {
            assert_eq!(
                d.push(p(i)),
                Ok(i == 0),
                "only the first push finds it empty"
            );
        }
        assert_eq!(d.push(p(3)), Err(p(3)));
        assert_eq!(d.pop(), Some(p(2)));
        assert_eq!(d.push(p(2)), Ok(false));
        assert_eq!(d.pop(), Some(p(2)));
        d.push(p(3)).unwrap();
    }
    assert_eq!(d.len(), 3);
}

/// The stress tests' view of a deque: items are `usize`s below 2^32.
trait Owned: Send + Sync + 'static {
    /// The owner's push.
    fn put(&self, i: usize);
    /// The owner's pop.
    fn take(&self) -> Option<usize>;
    /// A thief's steal.
    fn grab(&self) -> Steal<usize>;
    /// The number of items (a hint).
    fn count(&self) -> usize;
}

impl Owned for Deque<u32> {
    fn put(&self, i: usize) {
        self.push(i as u32);
    }
    fn take(&self) -> Option<usize> {
        self.pop().map(|x| x as usize)
    }
    fn grab(&self) -> Steal<usize> {
        self.steal().map(|x| x as usize)
    }
    fn count(&self) -> usize {
        self.len()
    }
}

impl Owned for PtrDeque {
    fn put(&self, i: usize) {
        // SAFETY: the stress test calls `put` and `take` from the owner thread only.
        unsafe { self.push(p(i)).unwrap() };
    }
    fn take(&self) -> Option<usize> {
        // SAFETY: as above.
        unsafe { self.pop() }.map(ix)
    }
    fn grab(&self) -> Steal<usize> {
        self.steal().map(ix)
    }
    fn count(&self) -> usize {
        self.len()
    }
}

/// The owner pushes `n` items in bursts of `burst(next)` (while fewer than `in_flight` are
/// held) and pops `pops(burst)` after each, then drains the deque; two thieves steal
/// throughout. Every item is taken exactly once.
fn stress<D: Owned>(
    d: D,
    n: usize,
    in_flight: usize,
    burst: impl Fn(usize) -> usize,
    pops: impl Fn(usize) -> usize,
) {
    let d = Arc::new(d);
    let seen: Arc<Vec<AtomicU8>> = Arc::new((0..n).map(|_| AtomicU8::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let mark = |x: usize| {
        seen[x].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let thieves: Vec<_> = (0..2)
        .map(|_| {
            let (d, seen, done) = (d.clone(), seen.clone(), done.clone());
            std::thread::spawn(move || loop {
                match d.grab() {
                    Steal::Success(x) => {
                        seen[x].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Steal::Retry => {}
                    Steal::Empty => {
                        if done.load(std::sync::atomic::Ordering::Acquire) && d.count() == 0 {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
            })
        })
        .collect();
    let mut next = 0;
    while next < n {
        let burst = (n - next).min(burst(next));
        if d.count() < in_flight {
            for _ in 0..burst {
                d.put(next);
                next += 1;
            }
        }
        for _ in 0..pops(burst) {
            if let Some(x) = d.take() {
                mark(x);
            }
        }
    }
    while let Some(x) = d.take() {
        mark(x);
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    for t in thieves {
        t.join().unwrap();
    }
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s.load(std::sync::atomic::Ordering::Relaxed), 1, "item {i}");
    }
}

#[test]
fn fixed_stress_every_item_exactly_once() {
    // At most 1000 items in flight (the capacity bound of the executors), bursts of 7, one
    // pop after each.
    stress(
        Deque::<u32>::with_capacity(1024),
        200_000,
        1000,
        |_| 7,
        |_| 1,
    );
}

#[test]
fn growing_stress_every_item_exactly_once() {
    // Bursts of varying size make the ring grow and shrink in use.
    stress(
        PtrDeque::growing(4, None),
        300_000,
        usize::MAX,
        |next| 1 + next % 61,
        |burst| burst / 2,
    );
}
