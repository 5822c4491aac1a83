//! Progress reporting: the harnesses tell a [`Progress`] what they are doing; the command line
//! shows it (lines on the terminal, a progress bar), a test ignores it ([`NoProgress`]).

use crate::capacity::Capacity;

/// Something a harness reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// A line of progress: a finished configuration of the table, a finished repeat of the
    /// ring sweep.
    Line(&'a str),
    /// A warning, to be said once (pinning or priority refused, fewer cores than asked).
    Warning(&'a str),
    /// One probe of `fugue bench capacity`, `at_s` seconds after the start.
    Window {
        /// Seconds since the start.
        at_s: f64,
        /// The probe.
        capacity: &'a Capacity,
    },
    /// A run of `total` steps begins.
    Start {
        /// Number of steps.
        total: u64,
    },
    /// The next step begins.
    Step(&'a str),
    /// A step is done.
    StepDone,
    /// Every step is done.
    Finished,
}

/// Receives a harness's [`Event`]s and may ask it to stop.
pub trait Progress {
    /// Called at each event.
    fn event(&mut self, event: Event<'_>);
    /// Whether the user asked to stop (checked between steps).
    fn cancelled(&self) -> bool {
        false
    }
}

/// Ignores every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn event(&mut self, _: Event<'_>) {}
}
