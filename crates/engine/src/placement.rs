//! Where the thread that runs the cycles goes: the one place that places it.

use crate::executor_choice::ExecutorChoice;

/// Places the calling thread, the one that runs the cycles (the audio thread), as `choice`
/// asks: pinned to the first core the process may use when `pin` (the workers take the next
/// ones), and at a real-time priority one above the workers' when `rt`. Returns what the
/// system refused, each to be said once; the thread goes on unplaced.
pub fn place_audio_thread(choice: &ExecutorChoice) -> Vec<String> {
    use fugue_exec::placement::{allowed_cores, pin_current, set_realtime_current};
    let mut warnings = Vec::new();
    if choice.pin {
        if let Err(e) = pin_current(allowed_cores()[0]) {
            warnings.push(e.to_string());
        }
    }
    if let Some(p) = choice.rt {
        if let Err(e) = set_realtime_current((p + 1).clamp(2, 99)) {
            warnings.push(e.to_string());
        }
    }
    warnings
}
