//! loom models of the executors' protocols (run with
//! `RUSTFLAGS="--cfg loom" cargo test -p fugue-exec --release --lib loom`, see
//! `scripts/loom.sh`): every interleaving of the model's threads is explored, with the
//! futex modelled by a mutex and a condition variable so that a lost wake-up is a deadlock
//! that loom reports.

use loom::sync::Arc;
use loom::thread;

use crate::runtime::deque::{Deque, Steal};
use crate::runtime::signal::{Signal, SpinBudget};
use fugue_sync::{AtomicBool, AtomicU32, Ordering};

/// Sleep/wake: a waiter that sleeps at once (no spin budget) is always woken by a signaller
/// that sets the condition and notifies, whatever the interleaving.
#[test]
fn loom_signal_never_loses_a_wakeup() {
    loom::model(|| {
        let s = Arc::new(Signal::new());
        let flag = Arc::new(AtomicBool::new(false));
        let (s2, f2) = (s.clone(), flag.clone());
        let t = thread::spawn(move || {
            // Release: pairs with the waiter's Acquire load.
            f2.store(true, Ordering::Release);
            s2.notify();
        });
        s.wait_until(SpinBudget::NONE, || flag.load(Ordering::Acquire));
        t.join().unwrap();
    });
}

/// Two waiters and two signallers: the flag that one signaller clears may have been set by
/// either waiter; nobody sleeps through the signal. (Four threads: bounded to three
/// preemptions, which covers every interleaving of the flag's set, clear and wake calls.)
#[test]
fn loom_signal_two_waiters_two_signallers() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let s = Arc::new(Signal::new());
        let flag = Arc::new(AtomicU32::new(0));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let (s, f) = (s.clone(), flag.clone());
                thread::spawn(move || {
                    s.wait_until(SpinBudget::NONE, || f.load(Ordering::Acquire) == 2);
                })
            })
            .collect();
        let (s2, f2) = (s.clone(), flag.clone());
        let other = thread::spawn(move || {
            f2.fetch_add(1, Ordering::Release);
            s2.notify();
        });
        flag.fetch_add(1, Ordering::Release);
        s.notify();
        other.join().unwrap();
        for w in waiters {
            w.join().unwrap();
        }
    });
}

/// The pool's epoch protocol with two successive cycles: a worker waiting for an epoch
/// change sees both bumps' effects or is woken for each.
#[test]
fn loom_epoch_two_cycles() {
    loom::model(|| {
        let epoch = Arc::new(Signal::new());
        let served = Arc::new(AtomicU32::new(0));
        let (e2, s2) = (epoch.clone(), served.clone());
        let worker = thread::spawn(move || {
            let mut seen = 0;
            while seen < 2 {
                e2.wait_until(SpinBudget::NONE, || e2.seq() != seen);
                seen = e2.seq();
                s2.fetch_add(1, Ordering::SeqCst);
            }
        });
        epoch.notify();
        epoch.notify();
        worker.join().unwrap();
        assert!(served.load(Ordering::SeqCst) >= 1);
    });
}

/// The deque: owner pushes two tasks and pops while a thief steals; each task is taken
/// exactly once.
#[test]
fn loom_deque_each_task_once() {
    loom::model(|| {
        let d = Arc::new(Deque::with_capacity(2));
        d.push(1);
        d.push(2);
        let d2 = d.clone();
        let thief = thread::spawn(move || loop {
            match d2.steal() {
                Steal::Success(t) => return Some(t),
                Steal::Empty => return None,
                Steal::Retry => thread::yield_now(),
            }
        });
        let mut mine = Vec::new();
        while let Some(t) = d.pop() {
            mine.push(t);
        }
        let stolen = thief.join().unwrap();
        let mut all = mine.clone();
        all.extend(stolen);
        all.sort();
        assert_eq!(all, vec![1, 2], "owner took {mine:?}, thief {stolen:?}");
    });
}

/// Activation: a diamond a -> {b, c} -> d run by two threads with the counter protocol of
/// `Common::run` (decrement AcqRel; the thread that reaches zero owns the task; run one
/// ready successor directly, hand the other over through the deque). Every task runs exactly
/// once, after its predecessors (their outputs are visible), and the end is signalled.
#[test]
fn loom_activation_diamond() {
    loom::model(|| {
        // Task outputs, as plain atomics read Relaxed: visibility must come from the protocol.
        let out: Arc<[AtomicU32; 4]> = Arc::new(Default::default());
        const INITIAL: [u32; 4] = [0, 1, 1, 2];
        let counters: Arc<[AtomicU32; 4]> = Arc::new(INITIAL.map(AtomicU32::new));
        let succ: [&[usize]; 4] = [&[1, 2], &[3], &[3], &[]];
        let deque = Arc::new(Deque::with_capacity(4));
        let done = Arc::new(Signal::new());
        let finished = Arc::new(AtomicBool::new(false));
        let run = {
            let (out, counters, deque, done, finished) = (
                out.clone(),
                counters.clone(),
                deque.clone(),
                done.clone(),
                finished.clone(),
            );
            move |mut t: usize, owner: bool| loop {
                // The task body: read predecessors' outputs, write ours.
                let input = match t {
                    0 => 1,
                    1 | 2 => out[0].load(Ordering::Relaxed),
                    _ => out[1].load(Ordering::Relaxed) + out[2].load(Ordering::Relaxed),
                };
                assert!(input > 0, "task {t} ran before its inputs were visible");
                assert_eq!(
                    out[t].swap(input + 1, Ordering::Relaxed),
                    0,
                    "task {t} ran twice"
                );
                if succ[t].is_empty() {
                    // Release: publish to the waiter of the end.
                    finished.store(true, Ordering::Release);
                    done.notify();
                    return;
                }
                let mut next = None;
                for &s in succ[t] {
                    // As `Common::run`: a successor with one predecessor is ready at once;
                    // the others are counted down.
                    let single = INITIAL[s] == 1;
                    if single || counters[s].fetch_sub(1, Ordering::AcqRel) == 1 {
                        if next.is_none() {
                            next = Some(s);
                        } else if owner {
                            deque.push(s as u32);
                        } else {
                            // Only the owner pushes; a thief runs the extra task itself.
                            next = next.or(Some(s));
                        }
                    }
                }
                match next {
                    Some(s) => t = s,
                    None => return,
                }
            }
        };
        let run2 = run.clone();
        let d2 = deque.clone();
        let f2 = finished.clone();
        let thief = thread::spawn(move || {
            while !f2.load(Ordering::Acquire) {
                match d2.steal() {
                    Steal::Success(t) => run2(t as usize, false),
                    Steal::Retry => thread::yield_now(),
                    Steal::Empty => {
                        thread::yield_now();
                        if f2.load(Ordering::Acquire) {
                            break;
                        }
                    }
                }
            }
        });
        run(0, true);
        while let Some(t) = deque.pop() {
            run(t as usize, true);
        }
        done.wait_until(SpinBudget::NONE, || finished.load(Ordering::Acquire));
        thief.join().unwrap();
        assert_eq!(
            out[3].load(Ordering::Relaxed),
            2 + 2 + 1 + 1 + 1,
            "d = (b + c) + 1"
        );
    });
}

/// Source ranges: the audio thread deals three sources (thread 0: 0..2, thread 1: 2..3) after
/// publishing the cycle's data, then takes from its own range's front and steals thread 1's;
/// meanwhile a thief steals from the back of thread 0's range, before or after the deal. Each
/// source is taken exactly once, and whoever takes one sees the data published before the
/// deal.
#[test]
fn loom_source_ranges_each_source_once() {
    use crate::runtime::sources::SourceRanges;
    loom::model(|| {
        let r = Arc::new(SourceRanges::new(2));
        let data = Arc::new(AtomicU32::new(0));
        let taken = Arc::new([AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)]);
        let (r2, d2, k2) = (r.clone(), data.clone(), taken.clone());
        let thief = thread::spawn(move || {
            // A thread still looking for work: it may run before or after the deal.
            if let Some(i) = r2.steal(0) {
                assert_eq!(d2.load(Ordering::Relaxed), 7, "the deal's data is visible");
                k2[i as usize].fetch_add(1, Ordering::Relaxed);
            }
        });
        // Relaxed: published by the deal's Release store.
        data.store(7, Ordering::Relaxed);
        r.deal(0, 3);
        let mut mine = 0;
        while let Some(i) = r.take_own(0).or_else(|| r.steal(1)) {
            taken[i as usize].fetch_add(1, Ordering::Relaxed);
            mine += 1;
        }
        thief.join().unwrap();
        assert!(mine >= 1);
        for k in taken.iter() {
            assert_eq!(
                k.load(Ordering::Relaxed),
                1,
                "each source taken exactly once"
            );
        }
    });
}
