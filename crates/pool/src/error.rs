//! The crate's errors.

use std::fmt;

use thiserror::Error;

use crate::policy::Policy;

/// Why a pool could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// A pool needs at least one thread.
    #[error("a pool needs at least one thread (0 requested)")]
    ZeroThreads,
    /// More threads than the pool allows.
    #[error("{} requested, more than the limit of {limit} ({why})", if *requested == 1 { "1 thread".to_string() } else { format!("{requested} threads") })]
    TooManyThreads {
        /// The count asked for.
        requested: usize,
        /// The largest count accepted.
        limit: usize,
        /// Where the limit comes from.
        why: &'static str,
    },
    /// A bounded queue needs room for at least one task.
    #[error("a queue capacity must be at least 1 (0 requested)")]
    ZeroCapacity,
    /// The system refused to start a thread.
    #[error("could not start worker thread {index}: {source} (each worker reserves a stack of {} MiB of address space, and its allocator up to 64 MiB more with glibc, and counts as a process against RLIMIT_NPROC)", stack >> 20)]
    Spawn {
        /// The worker's index.
        index: usize,
        /// The stack size of each worker, in bytes.
        stack: usize,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
}

/// A policy name that is not one of [`Policy::ALL`]'s.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("unknown pool policy `{0}`; the policies are: {names}", names = Policy::names())]
pub struct UnknownPolicy(pub String);

/// Why a task was not queued. The task is handed back.
#[derive(Error)]
pub enum SpawnError<F> {
    /// The queue that would take the task holds its capacity of tasks already.
    #[error("the pool's queue is full")]
    Full(F),
    /// The scope's tasks have all finished and its owner is returning: a thread that holds
    /// no count of the scope (through the C API, a thread outside the pool that a task
    /// started and did not wait for) spawned too late.
    #[error("the scope's tasks have all finished")]
    Ended(F),
}

impl<F> SpawnError<F> {
    /// The task that was not queued.
    pub fn into_inner(self) -> F {
        match self {
            SpawnError::Full(f) | SpawnError::Ended(f) => f,
        }
    }
}

impl<F> fmt::Debug for SpawnError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Full(_) => f.write_str("Full(..)"),
            SpawnError::Ended(_) => f.write_str("Ended(..)"),
        }
    }
}
