//! Write errors on standard output and standard error: one sentence and exit code 1 (a full
//! disk, `/dev/full`, a closed terminal), or exit code 141 without a word when standard output
//! is a pipe whose reader stopped (EPIPE, as a process killed by SIGPIPE ends).
//!
//! The commands print with `println!`, which panics when the write fails; [`install`] puts a
//! panic hook in front of the default one that recognises those panics and ends the process
//! the same way from any thread ([`on_panic`]). Output kept in a buffer is flushed at the end
//! of `main` ([`flush`]), so a failure there is said too.

use std::io::Write as _;

/// Exit code of a process whose standard output was closed by its reader: 128 + SIGPIPE.
pub const CLOSED_PIPE: u8 = 141;

/// The stream a `println!`/`eprintln!` panic names, and the error it carries.
fn write_failure(msg: &str) -> Option<(&'static str, &str)> {
    for (prefix, stream) in [
        ("failed printing to stdout: ", "standard output"),
        ("failed printing to stderr: ", "standard error"),
    ] {
        if let Some(reason) = msg.strip_prefix(prefix) {
            return Some((stream, reason));
        }
    }
    None
}

/// Ends the process if `info` is the panic of a failed write to standard output or error;
/// otherwise returns (the panic goes on).
pub fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    let msg = fugue_exec::panic_message(info.payload());
    let Some((stream, reason)) = msg.and_then(write_failure) else {
        return;
    };
    let pipe = reason.contains(&format!("os error {}", libc::EPIPE));
    exit(stream, reason, pipe);
}

/// Removes the temporary files, says why `stream` could not be written (unless its reader
/// stopped: `pipe`) and ends the process with 1 (141 for a closed pipe).
fn exit(stream: &str, reason: &str, pipe: bool) -> ! {
    fugue_engine::output::remove_temps();
    if pipe {
        std::process::exit(i32::from(CLOSED_PIPE));
    }
    // Standard error may be the stream that failed: then nothing can be said.
    let _ = writeln!(
        std::io::stderr(),
        "fugue: cannot write to {stream}: {reason}"
    );
    std::process::exit(1);
}

/// Whether `e` is a write into an output named by `-o` that is a named pipe whose reader
/// stopped (EPIPE). Nothing else counts: a socket or a child process that closed its end is
/// an error to say (standard output's own EPIPE ends the process in [`failed`]).
pub fn reader_stopped(e: &anyhow::Error) -> bool {
    use fugue_engine::output::OutputError;
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<OutputError>(),
            Some(OutputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe
        )
    })
}

/// Installs the hook of [`on_panic`] in front of the current panic hook.
pub fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        on_panic(info);
        // A processor's failure is the graph's error, which the engine reports with its
        // node (`fugue_dsp::Failure`): no panic trace for it.
        if info
            .payload()
            .downcast_ref::<fugue_dsp::Failure>()
            .is_none()
        {
            previous(info);
        }
    }));
}

/// Ends the process as a failed write to `stream` does, for a write error `e` a command got
/// from an explicit `write!` (its replies, clap's help).
pub fn failed(stream: &str, e: &std::io::Error) -> ! {
    exit(
        stream,
        &e.to_string(),
        e.kind() == std::io::ErrorKind::BrokenPipe,
    )
}

/// Flushes standard output at the end of `main`; a failure ends the process ([`failed`]).
pub fn flush() {
    if let Err(e) = std::io::stdout().flush() {
        failed("standard output", &e);
    }
}

/// Writes `bytes` to standard output and flushes; a failure ends the process ([`failed`]).
pub fn write_stdout(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        failed("standard output", &e);
    }
}
