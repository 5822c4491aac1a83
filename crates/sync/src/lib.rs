//! fugue-sync: the primitives that fugue's lock-free protocols are written against, in one
//! place, so that the same protocol code runs in production and under the loom model checker
//! (`RUSTFLAGS="--cfg loom"`), after the `primitive` module of `crossbeam-utils`.
//!
//! - the atomics and [`Arc`]: `std::sync` normally, `loom::sync` under loom;
//! - [`spin_hint`] and [`yield_now`]: one step of a busy-wait loop, a yield to the model's
//!   scheduler under loom (which is what makes spin loops checkable);
//! - [`futex`]: sleeping on a 32-bit word until another thread changes it and wakes it, the
//!   Linux futex in production and a real model under loom (a wait that the protocol would
//!   never wake is reported by loom as a deadlock); [`Futex`] wraps a word with both;
//! - [`Mutex`] and [`Condvar`] (the blocking work-sharing baseline) and [`thread::spawn`]
//!   (worker threads), so that whole executors run inside a model;
//! - [`fault`]: test-only switches that break one protocol step each, so that a model can be
//!   shown to catch the broken variant (always off outside loom builds);
//! - built on them: [`deque`], the one Chase–Lev work-stealing deque (fixed capacity for the
//!   real-time executors, growing for the task pool), and [`CachePadded`];
//! - and [`Rng`], the small seeded random generator of the noise processors and of the
//!   thieves' victim order.
//!
//! Used by `fugue-exec` (the executors' sleep/wake and deques), `fugue-ring` (parking),
//! `fugue-pool` (deques, sleep/wake) and `fugue-dsp` (the generator).

#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(loom)]
pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub use loom::sync::{Arc, Condvar, Mutex};
#[cfg(not(loom))]
pub use std::sync::atomic::{
    fence, AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub use std::sync::{Arc, Condvar, Mutex};

pub mod deque;
pub mod fault;
pub mod futex;
mod pad;
mod rng;
pub mod thread;

pub use futex::Futex;
pub use pad::CachePadded;
pub use rng::Rng;

/// One iteration of a busy-wait loop: the processor's spin hint, a yield under loom so that
/// models of spin loops terminate.
#[inline]
pub fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives the processor to another thread (`sched_yield` on Linux; a model yield under loom).
#[inline]
pub fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
