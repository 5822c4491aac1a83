//! fugue-pool: a general task pool for fork/join programs that are not audio graphs.
//!
//! A [`Pool`] runs tasks on a fixed set of worker threads under one of seven [`Policy`]s, from
//! a mutex-protected shared stack to fugue's own lock-free work stealing (the default,
//! [`Policy::Steal`]). It offers:
//! - [`Pool::scope`]: tasks that may borrow from the caller, spawned with [`Scope::spawn`]
//!   from the scope's body or from inside other tasks; the scope returns when all of them have
//!   finished and resumes the first panic;
//! - [`join`] / [`Pool::join`]: two closures, potentially in parallel, without allocating;
//! - [`Pool::spawn`]: detached tasks, waited for by the pool's drop;
//! - bounded queues ([`PoolBuilder::capacity`]): a full queue hands the task back
//!   ([`SpawnError::Full`]) instead of blocking;
//! - per-thread [`Stats`] (tasks, spawns, steals, sleeps, idle time) and the process's CPU time
//!   over a run ([`Pool::scope_with_stats`], [`Pool::stats`]);
//! - a C ABI (`include/fugue/sched.h`: `sched_init`, `sched_spawn`), built as
//!   `libfugue_pool.so` and `libfugue_pool.a`, with a pkg-config file (`fugue-pool.pc`).
//!
//! The policies, the `steal` protocol with its proof sketch, the C ABI's semantics and the
//! memory-ordering guarantees are in `docs/pool.md`.
//!
//! This is the task pool. The audio engine does not run on it: each of `fugue-exec`'s
//! parallel executors has a worker pool of its own, the multi-graph host runs on
//! `fugue_exec::SharedPool`, and `fugue_bench::pool` is this pool's benchmark
//! (`docs/pool.md`, "Four things called pool").
//!
//! # Guarantees
//! Every task queued runs exactly once. What a thread did before it spawned a task
//! happens-before the task starts; what a scope's tasks did happens-before the scope returns;
//! what both halves of a `join` did happens-before `join` returns.
//!
//! # Example
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use fugue_pool::{join, Policy, Pool};
//!
//! fn fib(n: u64) -> u64 {
//!     if n < 2 {
//!         return n;
//!     }
//!     let (a, b) = join(|| fib(n - 1), || fib(n - 2));
//!     a + b
//! }
//!
//! let pool = Pool::new(2, Policy::Steal)?;
//! let mut data = vec![1u64; 1000];
//! let count = AtomicUsize::new(0);
//! pool.scope(|s| {
//!     for chunk in data.chunks_mut(100) {
//!         let count = &count;
//!         s.spawn(move |s| {
//!             chunk.iter_mut().for_each(|x| *x *= 2);
//!             count.fetch_add(1, Ordering::Relaxed);
//!             // Tasks spawn more tasks into the same scope.
//!             s.spawn(move |_| {
//!                 count.fetch_add(1, Ordering::Relaxed);
//!             });
//!         });
//!     }
//! });
//! assert_eq!(count.load(Ordering::Relaxed), 20);
//! assert!(data.iter().all(|&x| x == 2));
//! assert_eq!(pool.install(|| fib(20)), 6765);
//! assert_eq!(pool.join(|| 1, || 2), (1, 2));
//! # Ok::<(), fugue_pool::BuildError>(())
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

mod checkers;
mod error;
pub mod ffi;
mod job;
mod latch;
mod policy;
mod pool;
mod queues;
mod quota;
mod scope;
pub mod sleep;
mod stats;
mod worker;

pub use error::{BuildError, SpawnError, UnknownPolicy};
pub use policy::Policy;
pub use pool::{
    current_thread_index, default_threads, join, Pool, PoolBuilder, DEFAULT_STACK_SIZE, MAX_THREADS,
};
pub use scope::Scope;
pub use stats::{process_cpu_time, Stats, ThreadStats};

#[cfg(all(test, loom))]
mod loom_tests;
