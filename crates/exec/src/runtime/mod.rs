//! The machinery the parallel executors share: the activation protocol (`activation`: the
//! counters, the sinks left and the end-of-cycle signal), the persistent worker pool (`pool`:
//! one executor's workers, neither the task pool of `fugue-pool` nor the host's `SharedPool`),
//! the work-stealing deque, the cycle start/end signal with its spin-then-park waits, and the
//! source ranges that deal a cycle's first units among threads.

pub(crate) mod activation;
pub(crate) mod pool;
pub(crate) mod signal;
pub(crate) mod sources;

pub(crate) use fugue_sync::deque::Steal;

/// The executors' work-stealing deque of unit indices (`fugue_sync::deque`): fixed capacity,
/// sized when the executor is built so that it never overflows (each unit is pushed at most
/// once per cycle) and never allocates after construction; symmetric SeqCst fences, so that
/// no real-time thread makes a system call to steal.
pub(crate) type Deque = fugue_sync::deque::Deque<u32>;

/// `n` counters at zero, each on cache lines of its own (written by different threads).
pub(crate) fn padded_zeros(n: usize) -> Box<[crossbeam_utils::CachePadded<fugue_sync::AtomicU64>]> {
    (0..n)
        .map(|_| crossbeam_utils::CachePadded::new(fugue_sync::AtomicU64::new(0)))
        .collect()
}
