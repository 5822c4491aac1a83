//! fugue-testkit: what the tests of several fugue crates share, written once. A
//! dev-dependency only: nothing in a library or the binary depends on it.
//!
//! - [`alloc::Counting`]: a global allocator that forwards to the system allocator and counts,
//!   for the tests that prove the real-time path allocates nothing and that shutdowns leak
//!   nothing;
//! - [`corpus`]: where the reference graphs are (`../shared/data`), and a visible skip when
//!   they are absent.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod alloc;
pub mod corpus;
