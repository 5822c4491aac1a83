//! The dispatcher of real-time runs: [`run()`] checks the options and hands the run to its
//! backend.

use std::time::Duration;

use fugue_graph::TaskGraph;

use crate::backend::{alsa, clocked, jack};
use crate::options::{Backend, RunError, RunOptions, RunReport};
use crate::stats::Summary;

/// Runs `graph` in real time as `options` say. `on_tick` is called on the calling thread
/// about ten times a second with the statistics so far.
pub fn run(
    graph: &TaskGraph,
    options: &RunOptions,
    on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
    if let Some(d) = options.duration {
        if d.is_zero() || d > Duration::from_secs(7 * 86_400) {
            return Err(RunError::Options(format!(
                "the duration must be between 0 and one week, not {} s",
                d.as_secs_f64()
            )));
        }
    }
    match &options.backend {
        Backend::Clocked { rate, block } => clocked::run(graph, options, *rate, *block, on_tick),
        Backend::Alsa {
            device,
            rate,
            block,
            periods,
        } => alsa::run(graph, options, device, (*rate, *block, *periods), on_tick),
        Backend::Auto {
            connect,
            client_name,
            device,
            rate,
            block,
            periods,
        } => {
            let mut on_tick = on_tick;
            match jack::run(graph, options, *connect, client_name, &mut on_tick) {
                Err(RunError::NoServer | RunError::NoLibrary(_)) => {
                    match alsa::run(graph, options, device, (*rate, *block, *periods), on_tick) {
                        Err(RunError::Alsa(why)) => Err(RunError::NoBackend(why)),
                        r => r,
                    }
                }
                r => r,
            }
        }
        Backend::Jack {
            connect,
            client_name,
        } => jack::run(graph, options, *connect, client_name, on_tick),
    }
}
