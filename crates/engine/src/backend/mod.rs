//! Real-time backends: [`clocked`] (cycles paced by absolute-time sleeps, no audio server)
//! and [`jack`] (a JACK client). Both run the same measured cycle body,
//! [`CycleBody::run`](crate::CycleBody::run), which never allocates, locks or blocks; the
//! dispatcher that picks one is [`crate::run()`].

pub mod clocked;
pub mod jack;
