//! loom models of the Chase–Lev deque (`fugue_sync::deque`) in both of its users'
//! configurations: fixed capacity with `u32` items and symmetric fences (the real-time
//! executors), growing with pointer items and asymmetric fences (the task pool; under loom
//! its fences are SeqCst fences, as where `membarrier` is missing). Each item is taken exactly
//! once: by the owner's `pop` or by one thief's `steal`, in the race for the last item too,
//! and across a growth of the ring. The broken variant of `steal` (the
//! `deque-steal-no-cas` fault switch: a thief takes its item without the CAS on `top`) is
//! shown to be caught.
//!
//! Run with `scripts/loom.sh`, which CI runs. The executors' and the pool's own models
//! (`crates/exec/src/loom_tests.rs`, `crates/pool/src/loom_tests.rs`) run the same deque
//! inside their protocols.
#![cfg(loom)]

use fugue_sync::deque::{Asymmetric, Deque, Growing, Steal};
use loom::sync::Arc;
use loom::thread;

/// The executors' deque.
type Fixed = Deque<u32>;
/// The pool's deque.
type Pointers = Deque<*mut u8, Growing<*mut u8>, Asymmetric>;

/// One configuration, seen through item numbers (`1..`).
trait Config: Send + Sync + 'static {
    /// A deque of at least `cap` slots (growing ones start with `cap`).
    fn make(cap: usize) -> Self;
    /// The owner's push.
    fn put(&self, i: usize);
    /// The owner's pop.
    fn take(&self) -> Option<usize>;
    /// A thief's steal.
    fn grab(&self) -> Steal<usize>;
}

impl Config for Fixed {
    fn make(cap: usize) -> Self {
        Fixed::with_capacity(cap)
    }
    fn put(&self, i: usize) {
        self.push(i as u32);
    }
    fn take(&self) -> Option<usize> {
        self.pop().map(|t| t as usize)
    }
    fn grab(&self) -> Steal<usize> {
        self.steal().map(|t| t as usize)
    }
}

impl Config for Pointers {
    fn make(cap: usize) -> Self {
        Pointers::growing(cap, None)
    }
    fn put(&self, i: usize) {
        // SAFETY: the models call `put` and `take` from the owner thread only.
        unsafe { self.push(i as *mut u8) }.unwrap();
    }
    fn take(&self) -> Option<usize> {
        // SAFETY: as above.
        unsafe { self.pop() }.map(|p| p as usize)
    }
    fn grab(&self) -> Steal<usize> {
        self.steal().map(|p| p as usize)
    }
}

/// Records what a thread took; panics on a duplicate.
fn record(seen: &mut [bool], i: usize) {
    assert!((1..seen.len()).contains(&i), "bogus item {i}");
    assert!(!seen[i], "item {i} taken twice");
    seen[i] = true;
}

/// A thief that steals until it gets an item or finds the deque empty.
fn steal_one<D: Config>(d: &D) -> Option<usize> {
    loop {
        match d.grab() {
            Steal::Success(i) => return Some(i),
            Steal::Empty => return None,
            Steal::Retry => thread::yield_now(),
        }
    }
}

/// The owner pushes two items and pops while a thief steals; each item is taken exactly once.
fn each_item_once<D: Config>() {
    loom::model(|| {
        let d = Arc::new(D::make(2));
        d.put(1);
        d.put(2);
        let d2 = d.clone();
        let thief = thread::spawn(move || steal_one(&*d2));
        let mut seen = [false; 3];
        while let Some(i) = d.take() {
            record(&mut seen, i);
        }
        if let Some(i) = thief.join().unwrap() {
            record(&mut seen, i);
        }
        assert!(seen[1] && seen[2], "an item was lost: {seen:?}");
    });
}

/// The race for the last item: the owner pops while a thief steals; exactly one gets it.
fn last_item_race<D: Config>() {
    loom::model(|| {
        let d = Arc::new(D::make(2));
        d.put(1);
        let d2 = d.clone();
        let thief = thread::spawn(move || steal_one(&*d2));
        let mine = d.take();
        let theirs = thief.join().unwrap();
        assert!(mine.is_some() != theirs.is_some(), "{mine:?} {theirs:?}");
    });
}

#[test]
fn loom_fixed_each_item_once() {
    each_item_once::<Fixed>();
}

#[test]
fn loom_fixed_last_item_race() {
    last_item_race::<Fixed>();
}

#[test]
fn loom_growing_each_item_once() {
    each_item_once::<Pointers>();
}

#[test]
fn loom_growing_last_item_race() {
    last_item_race::<Pointers>();
}

/// The owner pushes two items into a one-slot ring (the second push grows it) and pops; a
/// thief steals twice concurrently. Every item is taken exactly once.
#[test]
fn loom_growing_exactly_once_with_growth() {
    loom::model(|| {
        let d = Arc::new(Pointers::make(1));
        let d2 = d.clone();
        let thief = thread::spawn(move || {
            let mut got = Vec::new();
            for _ in 0..2 {
                if let Steal::Success(i) = d2.grab() {
                    got.push(i);
                }
            }
            got
        });
        let mut seen = [false; 3];
        d.put(1);
        d.put(2);
        if let Some(i) = d.take() {
            record(&mut seen, i);
        }
        for i in thief.join().unwrap() {
            record(&mut seen, i);
        }
        while let Some(i) = d.take() {
            record(&mut seen, i);
        }
        assert!(seen[1] && seen[2], "an item was lost: {seen:?}");
    });
}

/// The fault switch: a thief that takes its item without the CAS on `top` races the owner
/// for the last item, and both get it.
#[test]
fn loom_fixed_catches_steal_without_cas() {
    fugue_sync::fault::expect_caught(
        "loom_fixed_last_item_race",
        "deque-steal-no-cas",
        "panicked",
    );
}
