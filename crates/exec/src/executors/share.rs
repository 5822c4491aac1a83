//! Work sharing: one global ready queue (a LIFO stack of task indices) shared by every
//! thread, in the two variants of the classic work-sharing study:
//! - [`ShareLock::Mutex`]: the stack behind a `Mutex`, idle threads waiting on a `Condvar`.
//!   This variant locks and blocks on the audio path by design: it is the baseline that the
//!   lock-free executors are measured against, and the documented exception to the
//!   real-time rules.
//! - [`ShareLock::Spin`]: the stack behind a test-and-test-and-set spinlock with bounded
//!   back-off; idle threads spin then sleep on the end-of-cycle signal.

use std::cell::UnsafeCell;

use crossbeam_utils::CachePadded;

use crate::executors::ExecOptions;
use crate::runtime::activation::Common;
use crate::runtime::pool::{Pool, StartError, Work, Workers};
use crate::runtime::signal::SpinBudget;
use crate::{Executor, Plan};
use fugue_sync::{spin_hint, yield_now, AtomicBool, Condvar, Mutex, Ordering};

/// Which lock guards the shared queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareLock {
    /// `Mutex` + `Condvar` (blocking; the baseline).
    Mutex,
    /// A spinlock with bounded back-off.
    Spin,
}

/// A fixed-capacity stack behind a spinlock.
struct SpinStack {
    locked: CachePadded<AtomicBool>,
    items: UnsafeCell<Vec<u32>>,
}

// SAFETY: `items` is only touched while `locked` is held (acquired with Acquire, released
// with Release), which serialises all access.
unsafe impl Sync for SpinStack {}

impl SpinStack {
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
        let mut spins = 0u32;
        loop {
            // Acquire on success: pairs with the Release store of the previous holder.
            if !self.locked.load(Ordering::Relaxed)
                && self
                    .locked
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                break;
            }
            spins += 1;
            if spins < 64 {
                for _ in 0..spins {
                    spin_hint();
                }
            } else {
                // The holder may be descheduled (more threads than cores): let it run.
                yield_now();
            }
        }
        // SAFETY: we hold the lock.
        let r = f(unsafe { &mut *self.items.get() });
        // Release: publishes our changes to the next holder.
        self.locked.store(false, Ordering::Release);
        r
    }
}

enum Queue {
    Mutex { stack: Mutex<Vec<u32>>, cv: Condvar },
    Spin(Box<SpinStack>),
}

struct ShareState {
    common: Common,
    queue: Queue,
    idle_budget: SpinBudget,
}

impl ShareState {
    #[inline]
    fn pop(&self) -> Option<u32> {
        match &self.queue {
            Queue::Mutex { stack, .. } => stack.lock().unwrap_or_else(|e| e.into_inner()).pop(),
            Queue::Spin(s) => s.with(|v| v.pop()),
        }
    }

    /// Runs `t`, pushes the successors it made ready, and wakes waiting threads.
    #[inline]
    fn run(&self, t: u32) {
        let mut ready = [0u32; 8];
        let mut n = 0;
        // Successors made ready are collected and pushed in batches of 8 under one lock.
        let flush = |items: &[u32]| match &self.queue {
            Queue::Mutex { stack, cv } => {
                stack
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(items);
                if items.len() == 1 {
                    cv.notify_one();
                } else {
                    cv.notify_all();
                }
            }
            Queue::Spin(s) => s.with(|v| v.extend_from_slice(items)),
        };
        // SAFETY: `t` came from the queue, where the thread that made it ready put it once.
        let last = unsafe {
            self.common.run(t, |s| {
                ready[n] = s;
                n += 1;
                if n == ready.len() {
                    flush(&ready);
                    n = 0;
                }
            })
        };
        if n > 0 {
            flush(&ready[..n]);
        }
        if last && !fugue_sync::fault::active("share-no-end-notify") {
            if let Queue::Mutex { stack, cv } = &self.queue {
                // Wake every waiter so they see the end of the cycle.
                let _g = stack.lock().unwrap_or_else(|e| e.into_inner());
                cv.notify_all();
            }
        }
    }

    fn serve(&self, w: usize) {
        loop {
            if let Some(t) = self.pop() {
                self.run(t);
                continue;
            }
            if self.common.finished() {
                return;
            }
            match &self.queue {
                Queue::Mutex { stack, cv } if w != 0 => {
                    let mut g = stack.lock().unwrap_or_else(|e| e.into_inner());
                    while g.is_empty() && !self.common.finished() {
                        g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                }
                _ => {
                    let mut found = None;
                    self.common.done.wait_until(self.idle_budget, || {
                        if self.common.finished() {
                            return true;
                        }
                        found = self.pop();
                        found.is_some()
                    });
                    if let Some(t) = found {
                        self.run(t);
                    }
                }
            }
        }
    }
}

impl Work for ShareState {
    fn work(&self, w: usize) {
        self.serve(w);
    }
}

/// The work-sharing executor.
pub struct WorkSharing {
    pool: Pool<ShareState>,
}

impl WorkSharing {
    /// An executor with `threads` threads sharing one queue guarded by `lock`; fails when the
    /// system refuses a worker thread.
    pub fn new(
        plan: &Plan,
        threads: usize,
        lock: ShareLock,
        opts: &ExecOptions,
    ) -> Result<Self, StartError> {
        let threads = threads.max(1);
        let cap = plan.n_units().max(1);
        let queue = match lock {
            ShareLock::Mutex => Queue::Mutex {
                stack: Mutex::new(Vec::with_capacity(cap)),
                cv: Condvar::new(),
            },
            ShareLock::Spin => Queue::Spin(Box::new(SpinStack {
                locked: CachePadded::new(AtomicBool::new(false)),
                items: UnsafeCell::new(Vec::with_capacity(cap)),
            })),
        };
        let state = ShareState {
            common: Common::new(plan.n_slots().max(1), threads),
            queue,
            idle_budget: opts.steal_budget,
        };
        Ok(WorkSharing {
            pool: Pool::new(threads, state, opts)?,
        })
    }
}

impl Executor for WorkSharing {
    fn run_cycle(&mut self, plan: &mut Plan) {
        let Some((_flush, st)) = crate::executors::begin_cycle(plan, &self.pool) else {
            return;
        };
        if !st.common.begin(plan) {
            return;
        }
        match &st.queue {
            Queue::Mutex { stack, .. } => stack
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(plan.unit_sources()),
            Queue::Spin(s) => s.with(|v| v.extend_from_slice(plan.unit_sources())),
        }
        self.pool.start_cycle();
        st.serve(0);
        st.common.wait_finished(st.idle_budget);
    }

    fn workers(&self) -> Option<&dyn Workers> {
        Some(&self.pool)
    }
}
