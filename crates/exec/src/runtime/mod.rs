//! The machinery the parallel executors share: the persistent worker pool, the work-stealing
//! deque, the cycle start/end signal with its spin-then-park waits, and the source ranges
//! that deal a cycle's first units among threads.

pub(crate) mod common;
pub(crate) mod deque;
pub(crate) mod pool;
pub(crate) mod signal;
pub(crate) mod sources;
