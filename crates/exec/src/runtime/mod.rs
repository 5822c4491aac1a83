//! The machinery the parallel executors share: the activation protocol (`activation`: the
//! counters, the sinks left and the end-of-cycle signal), the persistent worker pool (`pool`:
//! one executor's workers, neither the task pool of `fugue-pool` nor the host's `SharedPool`),
//! the work-stealing deque, the cycle start/end signal with its spin-then-park waits, and the
//! source ranges that deal a cycle's first units among threads.

pub(crate) mod activation;
pub(crate) mod deque;
pub(crate) mod pool;
pub(crate) mod signal;
pub(crate) mod sources;
