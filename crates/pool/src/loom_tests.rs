//! loom models of the pool's lock-free protocols (run with `scripts/loom.sh`, which CI runs, i.e.
//! `RUSTFLAGS="--cfg loom" cargo test -p fugue-pool --release --lib loom`): the `steal`
//! sleep/wake protocol with the pool's deque and fugue-sync's futex model, where a lost
//! wake-up is a deadlock that loom reports. The deque's own models (exactly once, with a
//! growth, in this crate's configuration) are in `crates/sync/tests/loom.rs`.

use loom::sync::Arc;
use loom::thread;

use fugue_sync::deque::Steal;

use crate::job::JobHeader;
use crate::queues::JobDeque;
use crate::sleep::Sleep;

/// A fake item pointer (never dereferenced).
fn item(i: usize) -> *mut JobHeader {
    i as *mut JobHeader
}

/// Records what a thread took; panics on a duplicate.
fn take(seen: &mut [bool], p: *mut JobHeader) {
    let i = p as usize;
    assert!((1..seen.len()).contains(&i), "bogus item {i}");
    assert!(!seen[i], "item {i} taken twice");
    seen[i] = true;
}

/// A thief that searches and parks, and a spawner that pushes one item and notifies: the
/// thief always gets the item (a lost wake-up would leave it parked forever: a deadlock).
fn sleep_model() {
    loom::model(|| {
        let d = Arc::new(JobDeque::growing(2, None));
        let sleep = Arc::new(Sleep::new());
        let (d2, s2) = (d.clone(), sleep.clone());
        let thief = thread::spawn(move || loop {
            match d2.steal() {
                Steal::Success(p) => return p as usize,
                Steal::Retry => thread::yield_now(),
                Steal::Empty => s2.fall_asleep(|| !d2.is_empty()),
            }
        });
        // SAFETY: this thread is the deque's only owner.
        let was_empty = unsafe { d.push(item(1)) }.unwrap();
        assert!(was_empty);
        sleep.work_pushed();
        assert_eq!(thief.join().unwrap(), 1);
    });
}

#[test]
fn loom_sleep_no_lost_wakeup() {
    sleep_model();
}

/// The fault switch: without the re-check before parking, loom finds the lost wake-up and
/// reports a deadlock (the model runs again in a child process, which loom's report aborts).
#[test]
fn loom_sleep_catches_no_recheck() {
    fugue_sync::fault::expect_caught(
        "loom_tests::loom_sleep_no_lost_wakeup",
        "pool-sleep-no-recheck",
        "deadlock",
    );
}

/// Two thieves, two pushes, with the pool's rule for local pushes: only the push into an
/// empty deque notifies, and a thief that steals while more is left passes the wake-up on.
/// Both items are taken; the owner takes what no thief did (as a worker pops its own deque
/// before it sleeps), and nobody sleeps forever. (Bounded preemptions keep the model small.)
#[test]
fn loom_sleep_two_thieves_local_pushes() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        let d = Arc::new(JobDeque::growing(2, None));
        let sleep = Arc::new(Sleep::new());
        let done = Arc::new(fugue_sync::AtomicBool::new(false));
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let (d, s, done) = (d.clone(), sleep.clone(), done.clone());
                thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        match d.steal() {
                            Steal::Success(p) => {
                                if !d.is_empty() {
                                    s.work_pushed();
                                }
                                got.push(p as usize);
                            }
                            Steal::Retry => thread::yield_now(),
                            Steal::Empty => {
                                if done.load(fugue_sync::Ordering::SeqCst) {
                                    return got;
                                }
                                s.fall_asleep(|| {
                                    !d.is_empty() || done.load(fugue_sync::Ordering::SeqCst)
                                });
                            }
                        }
                    }
                })
            })
            .collect();
        let mut seen = [false; 3];
        for i in 1..=2 {
            // SAFETY: this thread is the deque's only owner.
            if unsafe { d.push(item(i)) }.unwrap() {
                sleep.work_pushed();
            }
        }
        // The owner pops what is left, then shuts the thieves down (as the pool's drop does).
        // SAFETY: as above.
        while let Some(p) = unsafe { d.pop() } {
            take(&mut seen, p);
        }
        done.store(true, fugue_sync::Ordering::SeqCst);
        sleep.wake_all();
        for t in thieves {
            for p in t.join().unwrap() {
                take(&mut seen, p as *mut JobHeader);
            }
        }
        assert!(seen[1] && seen[2], "an item was lost: {seen:?}");
    });
}
