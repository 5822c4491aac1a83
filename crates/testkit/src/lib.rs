//! fugue-testkit: what the tests of several fugue crates share, written once. A
//! dev-dependency only: nothing in a library or the binary depends on it.
//!
//! - [`alloc::Counting`]: a global allocator that forwards to the system allocator and counts,
//!   for the tests that prove the real-time path allocates nothing and that shutdowns leak
//!   nothing;
//! - `bomb` (feature `dsp`): a node kind whose processor panics;
//! - [`bits`]: audio compared bit for bit (one helper for every test whose docs say
//!   "identical");
//! - [`corpus`]: where the reference graphs are (`../shared/data`), and a visible, counted
//!   skip when they are absent (a failure when `FUGUE_REQUIRE_CORPUS` is set);
//! - [`host`]: the fixtures of the multi-graph host's tests (its small graphs, a fresh
//!   folder, the mix it should record);
//! - [`jackd`]: a JACK server with the dummy driver, private to one test;
//! - [`wav`]: a float WAV file read back as channels.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod alloc;
pub mod bits;
#[cfg(feature = "dsp")]
pub mod bomb;
pub mod corpus;
pub mod host;
pub mod jackd;
pub mod wav;
