//! The worker pool: threads created once; between cycles they spin for a bounded time and
//! then park on a futex; the audio thread wakes them at cycle start with at most one system
//! call (and none when every worker is still spinning).
//!
//! Protocol ("Sleep and wake" in `docs/executors.md`): the audio thread publishes the cycle's
//! data, then bumps the epoch word (`Signal::notify`, a read-modify-write) and wakes sleepers
//! if any announced themselves. A worker waits for the epoch to differ from the last one it
//! served (`Signal::wait_until`), then calls [`Work::work`] with its index.

use std::sync::Arc;

use crate::placement::Placement;
#[cfg(not(loom))]
use crate::placement::{pin_current, set_realtime_current};
use crate::runtime::signal::{Signal, SpinBudget};
use fugue_sync::{AtomicBool, Ordering};

/// The per-cycle work of an executor, run by every worker after each epoch bump.
pub trait Work: Send + Sync + 'static {
    /// Runs this worker's share of the current cycle (worker indices 1..threads; index 0 is
    /// the audio thread, which calls its executor directly). Returns when the worker sees
    /// nothing more to do for this cycle.
    fn work(&self, worker: usize);
}

struct Shared<W> {
    epoch: Signal,
    shutdown: AtomicBool,
    budget: SpinBudget,
    work: W,
}

/// A pool of `threads - 1` workers serving `W` (the audio thread is the `threads`-th).
pub struct Pool<W: Work> {
    shared: Arc<Shared<W>>,
    handles: Vec<fugue_sync::thread::JoinHandle<()>>,
    /// Problems met while placing threads (pinning or priority refused), said once.
    pub warnings: Vec<String>,
}

impl<W: Work> Pool<W> {
    /// Starts `threads - 1` worker threads.
    pub fn new(threads: usize, work: W, budget: SpinBudget, placement: &Placement) -> Self {
        let shared = Arc::new(Shared {
            epoch: Signal::new(),
            shutdown: AtomicBool::new(false),
            budget,
            work,
        });
        // The epoch the workers start from, read here and not in the threads: a thread that
        // starts late must still serve every cycle begun after the pool was made.
        let start = shared.epoch.seq();
        // Workers report placement problems, then meet the creator at a barrier: when `new`
        // returns, every worker has started and will allocate or free nothing more until the
        // pool is dropped (the shared report stays alive in each worker until it exits).
        // Under loom, workers are model threads with no placement and the barrier is left
        // out (loom has none; the models do not count allocations).
        #[cfg(not(loom))]
        let report: Arc<(std::sync::Mutex<Vec<String>>, std::sync::Barrier)> = Arc::new((
            std::sync::Mutex::new(Vec::new()),
            std::sync::Barrier::new(threads.max(1)),
        ));
        let handles = (1..threads.max(1))
            .map(|w| {
                let shared = shared.clone();
                #[cfg(not(loom))]
                let (placement, report) = (placement.clone(), report.clone());
                fugue_sync::thread::spawn(format!("fugue-worker-{w}"), move || {
                    #[cfg(not(loom))]
                    {
                        let mut problems = Vec::new();
                        if !placement.cores.is_empty() {
                            if let Err(e) = pin_current(placement.cores[w % placement.cores.len()])
                            {
                                problems.push(e.to_string());
                            }
                        }
                        if let Some(p) = placement.rt_priority {
                            if let Err(e) = set_realtime_current(p) {
                                problems.push(e.to_string());
                            }
                        }
                        report
                            .0
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .extend(problems);
                        report.1.wait();
                    }
                    worker_loop(&shared, w, start);
                    #[cfg(not(loom))]
                    drop(report);
                })
                .expect("cannot start a worker thread")
            })
            .collect();
        #[cfg(not(loom))]
        let warnings = {
            report.1.wait();
            let mut warnings: Vec<String> =
                std::mem::take(&mut *report.0.lock().unwrap_or_else(|e| e.into_inner()));
            warnings.sort();
            warnings.dedup();
            warnings
        };
        #[cfg(loom)]
        let warnings = {
            let _ = placement;
            Vec::new()
        };
        Pool {
            shared,
            handles,
            warnings,
        }
    }

    /// The shared work state.
    #[inline]
    pub fn work(&self) -> &W {
        &self.shared.work
    }

    /// Starts a cycle: every worker will call [`Work::work`] once more. Publish the cycle's
    /// data before calling this (the SeqCst bump is a release for it).
    #[inline]
    pub fn start_cycle(&self) {
        self.shared.epoch.notify();
    }
}

fn worker_loop<W: Work>(shared: &Shared<W>, w: usize, start: u32) {
    let mut seen = start;
    loop {
        shared
            .epoch
            .wait_until(shared.budget, || shared.epoch.seq() != seen);
        seen = shared.epoch.seq();
        // Acquire: pairs with the Release store in `Drop`.
        if shared.shutdown.load(Ordering::Acquire) {
            return;
        }
        shared.work.work(w);
    }
}

impl<W: Work> Drop for Pool<W> {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.epoch.notify();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}
