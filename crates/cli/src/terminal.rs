//! The terminal's settings as they were before the host's interactive shell changed them
//! (the line editor puts the terminal in raw mode and asks for bracketed paste while its
//! prompt waits): restored however the host ends, by a `quit` from its control socket or a
//! signal while the prompt waits too, so that the user's shell gets back a terminal that
//! echoes and takes Ctrl-C.

use std::io::Write as _;
use std::sync::OnceLock;

/// Standard input's settings when [`save`] was called.
static SAVED: OnceLock<libc::termios> = OnceLock::new();

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

/// Puts standard input's terminal back as [`save`] found it, when it has changed since (the
/// line editor's prompt is waiting): bracketed paste is turned off and the prompt's line
/// ended, so that what is said next starts a line of its own.
pub fn restore() {
    let Some(saved) = SAVED.get() else {
        return;
    };
    // SAFETY: as in `save`; tcsetattr reads the termios it is given.
    let changed = unsafe {
        let mut now: libc::termios = std::mem::zeroed();
        libc::tcgetattr(libc::STDIN_FILENO, &mut now) == 0
            && (now.c_lflag != saved.c_lflag
                || now.c_iflag != saved.c_iflag
                || now.c_oflag != saved.c_oflag)
    };
    if !changed {
        return;
    }
    // SAFETY: as above.
    unsafe {
        libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved);
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "\x1b[?2004l");
    let _ = out.flush();
}
