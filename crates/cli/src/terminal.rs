//! The terminal's settings as they were before the host's interactive shell changed them
//! (the line editor puts the terminal in raw mode and asks for bracketed paste while its
//! prompt waits): restored however the host ends, by a `quit` from its control socket or a
//! signal while the prompt waits too, so that the user's shell gets back a terminal that
//! echoes and takes Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Standard input's settings when [`save`] was called.
static SAVED: OnceLock<libc::termios> = OnceLock::new();

/// Set by [`restore`]: the prompt is not to take the terminal again.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Keeps standard input's terminal settings, when it is a terminal, for [`restore`].
pub fn save() {
    // SAFETY: a zeroed termios is a valid buffer for tcgetattr, which fills it; descriptor
    // 0 is only read.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0 {
            let _ = SAVED.set(t);
        }
    }
}

/// Whether [`restore`] has run: the prompt stops before it reads another line.
pub fn closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// Puts standard input's terminal back as [`save`] found it. When the prompt was waiting
/// (the settings had changed), bracketed paste is turned off and the prompt's line ended
/// on standard output when that is a terminal, so that what is said next starts a line of
/// its own. Written with `write(2)`, not through the standard library's locked stream: a
/// signal's exit must not wait for a thread that holds it.
pub fn restore() {
    CLOSED.store(true, Ordering::SeqCst);
    let Some(saved) = SAVED.get() else {
        return;
    };
    // SAFETY: a zeroed termios is a valid buffer for tcgetattr; tcsetattr reads the termios
    // it is given; descriptor 0 is standard input's.
    let changed = unsafe {
        let mut now: libc::termios = std::mem::zeroed();
        let changed = libc::tcgetattr(libc::STDIN_FILENO, &mut now) == 0
            && (now.c_lflag != saved.c_lflag
                || now.c_iflag != saved.c_iflag
                || now.c_oflag != saved.c_oflag);
        libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved);
        changed
    };
    // SAFETY: isatty and write take a descriptor and a buffer that outlives the call.
    unsafe {
        if changed && libc::isatty(libc::STDOUT_FILENO) == 1 {
            let end = b"\x1b[?2004l\n";
            libc::write(libc::STDOUT_FILENO, end.as_ptr().cast(), end.len());
        }
    }
}
