//! SIGINT, SIGTERM and SIGHUP, handled alike: one stop request, temporary files removed, one
//! line on standard error, and the conventional exit code, 128 + the signal's number (130,
//! 143, 129).
//!
//! A thread waits for the signals ([`install`], called first thing in `main`). A command
//! that stops its work on request (a render, a run, a benchmark) takes the request with
//! [`stop_flag`]: the first signal then only sets it, the command ends its work, keeps what
//! is complete, says what happened ([`say`]) and returns; `main` exits with the signal's
//! code. Any other command, or a second signal more than [`REPEAT_GRACE`] after the first,
//! ends the process at once: the temporary files registered
//! ([`fugue_engine::output::Temp`]) are removed first, so no half-written file is left. A
//! second signal within that time is the same request delivered twice (`timeout` signals
//! its child, then the child's whole process group), not a user's insistence: it is ignored.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signal received (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How long after the first signal a second one is taken as the same request, delivered
/// twice: `timeout` sends its signal to the command and then to the command's process group,
/// and a group's leader signalled by a script may get it again through the group. A person
/// who presses Ctrl-C a second time to end a stop that takes too long does so later.
pub const REPEAT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
/// Whether the running command polls the stop request (then the first signal only sets it).
static POLLED: AtomicBool = AtomicBool::new(false);
/// Whether the command said what the signal did to it.
static SAID: AtomicBool = AtomicBool::new(false);
/// How long, in ms, a command that polls the stop request may take to stop after the first
/// signal before the process ends at once (0: as long as it takes): [`stop_flag_within`].
static GRACE_MS: AtomicU64 = AtomicU64::new(0);

/// How long a command that stops between two cycles (a render, a profile) may take to stop
/// after a signal before the process ends at once, its outputs not written: a cycle of a
/// graph of heavy nodes may take minutes ([`stop_flag_within`]).
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The stop request that every handled signal sets.
fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Starts the thread that handles SIGINT, SIGTERM and SIGHUP (without it, e.g. when the
/// handlers cannot be installed, the signals keep their default effect).
pub fn install() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("fugue-signals".into())
        .spawn(move || {
            let mut first_at: Option<std::time::Instant> = None;
            for sig in signals.forever() {
                // A repeat of the first request, within the grace: nothing more to do (the
                // first was acted on; where it ended the process, none comes here).
                if first_at.is_some_and(|t| t.elapsed() < REPEAT_GRACE) {
                    continue;
                }
                // SeqCst: the signal number is read by the main thread after its work.
                let first = SIGNAL.swap(sig, Ordering::SeqCst) == 0;
                if first {
                    first_at = Some(std::time::Instant::now());
                }
                // Relaxed: a request the commands poll; nothing is published with it.
                flag().store(true, Ordering::Relaxed);
                // A Faust program compiling in a child process stops now, not at its end.
                fugue_faust::stop_child();
                if !first || !POLLED.load(Ordering::SeqCst) {
                    // A study's busy load runs in a process group of its own: ended with it.
                    fugue_bench::study::stop_busy_load();
                    exit_now(sig, "");
                }
                let grace = GRACE_MS.load(Ordering::SeqCst);
                if grace > 0 {
                    // The command stops between two of its steps (a render's cycles); one
                    // step may take minutes (a graph of heavy nodes): past the grace, still
                    // in its work (it did not reach its results), it ends as at a second
                    // signal.
                    let _ = std::thread::Builder::new()
                        .name("fugue-stop-grace".into())
                        .spawn(move || {
                            std::thread::sleep(std::time::Duration::from_millis(grace));
                            if POLLED.load(Ordering::SeqCst) {
                                exit_now(
                                    sig,
                                    &format!(
                                        ": the step in progress (a cycle) did not end within {} s",
                                        grace as f64 / 1000.0
                                    ),
                                );
                            }
                        });
                }
            }
        });
}

/// Ends the process at once on `sig`: removes the temporary files, says which outputs were
/// not written, exits with 128 + `sig`.
fn exit_now(sig: i32, why: &str) -> ! {
    crate::terminal::restore();
    let lost = fugue_engine::output::remove_temps();
    let what = if lost.is_empty() {
        String::new()
    } else {
        format!("; {} not written", lost.join(", "))
    };
    // A progress line may stand on a terminal: end it first.
    let nl = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        "\n"
    } else {
        ""
    };
    eprintln!("{nl}fugue: stopped by {}{why}{what}", name(sig));
    std::process::exit(128 + sig);
}

/// The stop request set by SIGINT, SIGTERM and SIGHUP, for a command that polls it: from
/// this call on, the first signal only sets it (a second one, past [`REPEAT_GRACE`], still
/// ends the process).
pub fn stop_flag() -> Arc<AtomicBool> {
    POLLED.store(true, Ordering::SeqCst);
    flag().clone()
}

/// [`stop_flag`], for a command whose steps between two looks at the request may be long:
/// once a signal came, the command has `grace` to stop and reach its results
/// ([`not_polled`]); past it, the process ends at once, its temporary files removed, as at a
/// second signal.
pub fn stop_flag_within(grace: std::time::Duration) -> Arc<AtomicBool> {
    GRACE_MS.store(
        u64::try_from(grace.as_millis()).unwrap_or(u64::MAX).max(1),
        Ordering::SeqCst,
    );
    stop_flag()
}

/// From here on, a signal ends the process at once (the command no longer polls the stop
/// request: it is writing its results, or waiting for a reader). When a signal came already,
/// does nothing: the command goes on to its end and reports it.
pub fn not_polled() {
    POLLED.store(false, Ordering::SeqCst);
}

/// Runs `f`, a call that may block where the stop request cannot reach it (the open of a
/// named pipe, which waits for the other end): meanwhile a signal ends the process at once,
/// as for a command that does not poll the request (and so does one that came just before).
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    let polled = POLLED.swap(false, Ordering::SeqCst);
    // A signal that came before the swap was taken as a request only: act on it now.
    if let (true, Some(sig)) = (polled, received()) {
        exit_now(sig, "");
    }
    let r = f();
    POLLED.store(polled, Ordering::SeqCst);
    r
}

/// The signal received, if any.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The name of a handled signal (`SIGTERM`).
pub fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// "interrupted by SIGTERM" (or by Ctrl-C's SIGINT), for the messages of a stopped command.
pub fn interrupted() -> String {
    format!("interrupted by {}", received().map_or("a signal", name))
}

/// Says on standard error what a signal did to the command (`msg`, one line); `main` then
/// adds nothing.
pub fn say(msg: &str) {
    SAID.store(true, Ordering::SeqCst);
    eprintln!("fugue: {msg}");
}

/// Whether [`say`] was called.
pub fn said() -> bool {
    SAID.load(Ordering::SeqCst)
}
