//! Where the thread that runs the cycles goes: the one place that places it.

use crate::executor_choice::ExecutorChoice;

/// Places the calling thread, the one that runs the cycles (the audio thread), as `choice`
/// asks: pinned to the first core the process may use when `pin` (the workers take the next
/// ones), and at a real-time priority one above the workers' when `rt`. Returns what the
/// system refused, each to be said once; the thread goes on unplaced.
pub fn place_audio_thread(choice: &ExecutorChoice) -> Vec<String> {
    let core = choice
        .pin
        .then(|| fugue_exec::placement::allowed_cores()[0]);
    place_audio_thread_on(core, choice.rt)
}

/// Places the calling audio thread on `core` when given, and at [`audio_priority`] of the
/// workers' real-time priority `rt` when given. Returns what the system refused, each to be
/// said once; the thread goes on unplaced.
pub(crate) fn place_audio_thread_on(core: Option<usize>, rt: Option<i32>) -> Vec<String> {
    use fugue_exec::placement::{pin_current, set_realtime_current};
    let mut warnings = Vec::new();
    if let Some(c) = core {
        if let Err(e) = pin_current(c) {
            warnings.push(e.to_string());
        }
    }
    if let Some(p) = rt {
        if let Err(e) = set_realtime_current(audio_priority(p)) {
            warnings.push(e.to_string());
        }
    }
    warnings
}

/// The SCHED_FIFO priority of the audio thread when the workers run at `workers`: one above.
pub(crate) fn audio_priority(workers: i32) -> i32 {
    (workers + 1).clamp(2, 99)
}
