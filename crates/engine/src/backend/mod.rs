//! Real-time backends: [`clocked`] (cycles paced by absolute-time sleeps, no audio server),
//! [`alsa`] (an ALSA playback device) and [`jack`] (a JACK client). All run the same
//! measured cycle body, [`CycleBody::run`](crate::CycleBody::run), which never allocates,
//! locks or blocks; the clocked and ALSA backends share their audio thread's loop
//! (`paced`); the dispatcher that picks one is [`crate::run()`].

pub mod alsa;
pub mod clocked;
pub mod jack;
pub(crate) mod paced;
