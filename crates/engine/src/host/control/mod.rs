//! Driving a [`Session`] from several sources at once: a script, an interactive prompt and
//! the clients of a control socket ([`socket`]), one command at a time.
//!
//! A front end makes a [`Controller`] and hands it the lines of its sources (a script, the
//! prompt or standard input, the socket's clients) as [`Request`]s on a channel
//! ([`Controller::serve`]) until one quits, the stop request is set, every source is gone,
//! or (strict) a command fails. Every command gets one line of
//! reply (JSON when asked). [`complete`] and [`history`] serve an interactive prompt;
//! [`live`] is the control socket of a single run.

pub mod complete;
pub mod history;
pub mod live;
pub mod socket;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use super::command::{self, Command};
use super::session::{Answer, Reply, Session};

/// Why a control socket could not be served or reached.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The path holds something that is not a stale socket (a file, a running host's socket).
    #[error("{0}")]
    Taken(String),
    /// The path a client was given holds something other than a socket (a file, a folder).
    #[error("{} is not a socket, so no `fugue host --control` listens there; give the path the host was started with", .0.display())]
    NotASocket(std::path::PathBuf),
    /// A socket or thread could not be created, or a client could not talk to the host.
    #[error("{what}: {source}")]
    Io {
        /// What failed.
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The host at this socket closed the connection without a reply.
    #[error("the host at {} closed the connection without a reply", .0.display())]
    NoReply(std::path::PathBuf),
    /// The line to send holds no command (nothing, or a comment): the host would skip it
    /// and close the connection without a reply.
    #[error("no command to send: the line is empty or a comment (`fugue ctl SOCKET help` lists the commands)")]
    NoCommand,
    /// What came back is no line of a host's reply: over [`MAX_REPLY`] bytes with no line's
    /// end (something other than a `fugue host` or `fugue run` listens there).
    #[error("the reply from {} is over {} KiB with no line's end: no `fugue host` or `fugue run` reply, so something else listens there", .0.display(), MAX_REPLY >> 10)]
    NotAReply(std::path::PathBuf),
    /// No reply came within the time the client gave it.
    #[error("no reply from {} within {seconds} s (the host may be stopped, or busy with a long command such as a large load, which it may still carry out); pass --timeout SECONDS to wait longer", .path.display())]
    Timeout {
        /// The socket.
        path: std::path::PathBuf,
        /// The time given, in seconds.
        seconds: f64,
    },
}

/// The longest reply line a client reads: a host's replies are one line each, far shorter.
pub const MAX_REPLY: u64 = 1 << 20;

/// A line to execute and where its reply goes.
pub struct Request {
    /// The command line.
    pub line: String,
    /// Where the reply goes (an empty reply: the line held no command).
    pub reply: mpsc::Sender<String>,
    /// A `wait` that a client of the control socket waited in its own thread, this many
    /// seconds: the reply is that of a `wait`, with the cycle reached (`line` is not read).
    pub waited: Option<f64>,
    /// Set when the source went away while its command ran: a `wait` in the control loop
    /// (offline) ends there rather than play on for no one.
    pub gone: Option<Arc<AtomicBool>>,
    /// A line the source refused itself (not UTF-8, too long), with its reply of failure: the
    /// control loop counts it as a command that failed (`--strict` stops there) and sends the
    /// reply back (`line` is not read).
    pub refused: Option<Reply>,
}

impl Request {
    /// Sends `line` to the control loop at `tx` and returns its reply (`None`: the host is
    /// gone).
    pub fn ask(tx: &mpsc::Sender<Request>, line: String, waited: Option<f64>) -> Option<String> {
        Request::round_trip(tx, line, waited, None)
    }

    /// Tells the control loop at `tx` that the source refused a line, with `reply`
    /// ([`Request::refused`]), and returns the reply to send (`None`: the host is gone).
    pub fn refuse(tx: &mpsc::Sender<Request>, reply: Reply) -> Option<String> {
        Request::round_trip(tx, String::new(), None, Some(reply))
    }

    /// Sends a request of no `gone` flag and waits for its reply (`None`: the host is gone).
    fn round_trip(
        tx: &mpsc::Sender<Request>,
        line: String,
        waited: Option<f64>,
        refused: Option<Reply>,
    ) -> Option<String> {
        let (rtx, rrx) = mpsc::channel();
        tx.send(Request {
            line,
            reply: rtx,
            waited,
            gone: None,
            refused,
        })
        .ok()?;
        rrx.recv().ok()
    }

    /// [`Request::ask`] for a source that may go away while its command runs: `gone()` is
    /// asked every few milliseconds until the reply comes, and once it says so the request
    /// is marked ([`Request::gone`]). The reply still comes (`None`: the host is gone).
    pub fn ask_while(
        tx: &mpsc::Sender<Request>,
        line: String,
        mut gone: impl FnMut() -> bool,
    ) -> Option<String> {
        let (rtx, rrx) = mpsc::channel();
        let flag = Arc::new(AtomicBool::new(false));
        tx.send(Request {
            line,
            reply: rtx,
            waited: None,
            gone: Some(flag.clone()),
            refused: None,
        })
        .ok()?;
        loop {
            match rrx.recv_timeout(Duration::from_millis(20)) {
                Ok(r) => return Some(r),
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Relaxed: a request flag.
                    if !flag.load(Ordering::Relaxed) && gone() {
                        flag.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

/// What the sources of commands may read of the host between commands: the names of the
/// graphs loaded (for completion) and the cycle reached (for a `wait` cut short). The
/// control loop updates both after every command and while idle.
#[derive(Clone, Default)]
pub struct Watch {
    /// The names of the graphs loaded.
    pub names: Arc<Mutex<Vec<String>>>,
    /// The host's cycle.
    pub cycle: Arc<AtomicU64>,
    /// Set by a source as it sends a `quit`: a `wait` running in the control loop ends
    /// there, so that the quit is served now rather than after it.
    pub quit: Arc<AtomicBool>,
    /// Why the audio side went away for good (the JACK server stopped), set by the control
    /// loop before it ends: a `wait` that the host's end cuts short fails with it.
    pub lost: Arc<std::sync::OnceLock<String>>,
}

/// What a `wait` waited outside the control loop ([`wait_aside`]) needs from the host.
pub struct Aside<'a> {
    /// Replies in JSON.
    pub json: bool,
    /// Whether the host is stopping (a signal, a `quit`, the control loop's end): the wait
    /// ends there.
    pub stopping: &'a dyn Fn() -> bool,
    /// The host's cycle as the control loop last saw it ([`Watch::cycle`]); `None` where
    /// none is counted (a run's control socket): the reply then names no cycle.
    pub cycle: Option<&'a AtomicU64>,
    /// Why the audio side went away for good, if it did ([`Watch::lost`]).
    pub lost: &'a std::sync::OnceLock<String>,
}

/// A `wait SECONDS` of a host with a clock, waited in the thread of the source that sent it
/// (a client of the control socket, the prompt), so that the control loop goes on serving the
/// other sources meanwhile: waits until the time is up or the host stops, and returns the
/// reply of a `wait`, which says how long it really waited and the cycle reached (from the
/// control loop, or, when it has ended, the cycle it last saw). A wait that the audio side's
/// end cut short fails with the reason. `pause(d)` waits at most `d` and says whether the
/// source went away: then the wait ends with no reply (`None`).
pub fn wait_aside(
    seconds: f64,
    tx: &mpsc::Sender<Request>,
    host: &Aside<'_>,
    mut pause: impl FnMut(Duration) -> bool,
) -> Option<String> {
    let start = std::time::Instant::now();
    let want = Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX);
    loop {
        let left = want.saturating_sub(start.elapsed());
        if left.is_zero() || (host.stopping)() {
            break;
        }
        if pause(left.min(Duration::from_millis(10))) {
            return None;
        }
    }
    let waited = super::session::waited(start.elapsed().as_secs_f64(), seconds);
    if !(host.stopping)() {
        if let Some(r) = Request::ask(tx, String::new(), Some(waited)) {
            return Some(r);
        }
    }
    // The host is stopping: the control loop takes no more requests. Because the audio side
    // went away (the JACK server stopped): the wait did not play its time, and fails.
    if let Some(why) = host.lost.get() {
        return Some(
            Reply::failed(
                "wait",
                format!("{why}; the wait ended after {waited} s of {seconds} s"),
            )
            .line(host.json),
        );
    }
    // Ended by a signal or a `quit`. Relaxed: a counter read for a report.
    let cycle = host.cycle.map(|c| c.load(Ordering::Relaxed));
    Some(
        Reply::done(Answer::Wait {
            seconds: waited,
            cycle,
        })
        .line(host.json),
    )
}

/// How the front end takes part: where the host's notices go, and how a call that may block
/// beyond the stop request's reach is made.
#[derive(Clone, Copy)]
pub struct Hooks {
    /// Says a notice (what the host did on its own: a JACK buffer-size change followed).
    pub notice: fn(&str),
    /// Runs a `load` of a file that is not a regular file (a named pipe, a device), whose
    /// open may wait for a writer: the front end may let a signal end the process meanwhile.
    pub blocking: fn(&mut dyn FnMut()),
}

impl Default for Hooks {
    fn default() -> Hooks {
        Hooks {
            notice: |_| {},
            blocking: |f| f(),
        }
    }
}

/// The commands of one source that failed: how many, and the line of the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    /// How many failed.
    pub count: usize,
    /// The line (from 1) of the first that failed.
    pub first: Option<usize>,
}

impl Failures {
    /// Counts a failure at line `line`.
    pub fn add(&mut self, line: usize) {
        self.count += 1;
        self.first.get_or_insert(line);
    }
}

/// How the commands went.
#[derive(Debug, Default)]
pub struct Outcome {
    /// A command failed.
    pub failed: bool,
    /// A command asked the host to stop.
    pub quit: bool,
    /// A reply could not be written (the host stops there).
    pub write_error: Option<std::io::Error>,
    /// The audio side went away for good (the JACK server stopped): said once, and the host
    /// stops there.
    pub lost: Option<String>,
}

/// A session driven by a script and by requests, and how its replies are written.
pub struct Controller {
    session: Session,
    /// Replies in JSON.
    pub json: bool,
    /// Stop at the first command that fails.
    pub strict: bool,
    hooks: Hooks,
    /// How the commands went so far.
    pub outcome: Outcome,
}

impl Controller {
    /// A controller of `session`.
    pub fn new(session: Session, json: bool, strict: bool, hooks: Hooks) -> Controller {
        Controller {
            session,
            json,
            strict,
            hooks,
            outcome: Outcome::default(),
        }
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, given back (to finish its host).
    pub fn into_session(self) -> Session {
        self.session
    }

    /// Executes one line; `None` when it holds no command.
    pub fn execute(&mut self, line: &str) -> Option<Reply> {
        let reply = if may_block(line) {
            let mut reply = None;
            (self.hooks.blocking)(&mut || reply = Some(self.session.execute(line)));
            reply.flatten()
        } else {
            self.session.execute(line)
        };
        self.say_notices();
        reply
    }

    fn say_notices(&mut self) {
        for n in self.session.take_notices() {
            (self.hooks.notice)(&n);
        }
    }

    /// Whether the audio side went away for good (the JACK server stopped): a failure kept in
    /// [`Outcome::lost`], for the front end to say as the host ends.
    fn lost(&mut self) -> bool {
        if self.outcome.lost.is_none() {
            if let Some(e) = self.session.host().jack_stopped() {
                self.outcome.failed = true;
                self.outcome.lost = Some(e.to_string());
            }
        }
        self.outcome.lost.is_some()
    }

    /// Whether the host is to stop taking commands: a command quit, failed under `strict`,
    /// a reply could not be written, or `stop` is set.
    pub fn stopped(&self, stop: &AtomicBool) -> bool {
        // Relaxed: a request flag.
        self.outcome.quit
            || (self.outcome.failed && self.strict)
            || self.outcome.write_error.is_some()
            || self.outcome.lost.is_some()
            || stop.load(Ordering::Relaxed)
    }

    /// Puts why the audio side went away, if it did, where the waits see it ([`Watch::lost`]).
    fn tell_lost(&self, watch: &Watch) {
        if let Some(why) = &self.outcome.lost {
            let _ = watch.lost.set(why.clone());
        }
    }

    /// Updates `watch` from the host.
    fn update(&self, watch: &Watch) {
        let host = self.session.host();
        if let Ok(mut n) = watch.names.lock() {
            *n = host.list().into_iter().map(|g| g.name).collect();
        }
        // Relaxed: a counter read for a report.
        watch.cycle.store(host.cycle(), Ordering::Relaxed);
    }

    /// Executes the requests arriving on `rx`, one at a time (`watch` updated first and after
    /// every command), each reply sent back to its source, until one quits, `stop` is set, every sender is gone, or (strict) one fails.
    /// Between requests the host follows a JACK buffer-size change.
    pub fn serve(&mut self, rx: &mpsc::Receiver<Request>, stop: &AtomicBool, watch: &Watch) {
        self.update(watch);
        self.session.set_quit(Some(watch.quit.clone()));
        loop {
            // Relaxed: a request flag.
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let got = rx.recv_timeout(Duration::from_millis(100));
            // Relaxed: a counter read for a report.
            watch
                .cycle
                .store(self.session.host().cycle(), Ordering::Relaxed);
            match got {
                Ok(Request {
                    waited: Some(seconds),
                    reply,
                    ..
                }) => {
                    let r = Reply::done(Answer::Wait {
                        seconds,
                        cycle: Some(self.session.host().cycle()),
                    });
                    let _ = reply.send(r.line(self.json));
                }
                Ok(Request {
                    refused: Some(r),
                    reply,
                    ..
                }) => {
                    self.outcome.failed = true;
                    let _ = reply.send(r.line(self.json));
                    if self.strict {
                        return;
                    }
                }
                Ok(req) => {
                    self.session.set_gone(req.gone.clone());
                    let r = self.execute(&req.line);
                    self.session.set_gone(None);
                    let Some(r) = r else {
                        let _ = req.reply.send(String::new());
                        continue;
                    };
                    self.outcome.failed |= !r.ok;
                    self.update(watch);
                    let _ = req.reply.send(r.line(self.json));
                    if r.quits() || (!r.ok && self.strict) || self.lost() {
                        self.tell_lost(watch);
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.session.idle();
                    self.say_notices();
                    if self.lost() {
                        self.tell_lost(watch);
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

/// Whether `line` loads a file that is not a regular file (a named pipe, a device): its open
/// or its reading may wait for a writer.
fn may_block(line: &str) -> bool {
    match command::parse(line) {
        Ok(Some(Command::Load { file, .. })) => {
            std::fs::metadata(&file).is_ok_and(|m| !m.is_file() && !m.is_dir())
        }
        _ => false,
    }
}

/// The files that the `load` commands of a script read.
pub fn script_loads(script: &[u8]) -> Vec<PathBuf> {
    script
        .split(|&b| b == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .filter_map(|line| match command::parse(line) {
            Ok(Some(Command::Load { file, .. })) => Some(file),
            _ => None,
        })
        .collect()
}

/// A JSON reply line that says its command failed, with where the command was added: `line`
/// (its number, from 1) and `source` (the script's path, or `standard input`), so that a
/// failure can be found as the text's `SCRIPT:LINE:` finds it. Any other line as it is.
pub fn json_at(reply: &str, source: &str, line: usize) -> String {
    match serde_json::from_str::<serde_json::Value>(reply) {
        Ok(serde_json::Value::Object(mut o)) if o.get("ok") == Some(&false.into()) => {
            o.insert("line".into(), line.into());
            o.insert("source".into(), source.into());
            serde_json::Value::Object(o).to_string()
        }
        _ => reply.to_string(),
    }
}

/// Whether a reply line (text or JSON) says its command failed.
pub fn reply_failed(reply: &str) -> bool {
    reply.starts_with("error:")
        || serde_json::from_str::<serde_json::Value>(reply)
            .ok()
            .and_then(|v| v.get("ok").and_then(|o| o.as_bool()))
            == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_names_the_files_it_loads() {
        let s = b"load a x.ag\ngain a -3\n\nload b \"my dir/y.ag\"\nnot a command\n\xff\n";
        assert_eq!(
            script_loads(s),
            [PathBuf::from("x.ag"), PathBuf::from("my dir/y.ag")]
        );
    }

    #[test]
    fn a_failed_json_reply_gets_its_place_and_others_stay() {
        let failed = r#"{"command":"load","error":"x","file":"g.ag","name":"a","ok":false}"#;
        assert_eq!(
            json_at(failed, "s.txt", 3),
            r#"{"command":"load","error":"x","file":"g.ag","line":3,"name":"a","ok":false,"source":"s.txt"}"#
        );
        let done = r#"{"command":"list","graphs":[],"ok":true}"#;
        assert_eq!(json_at(done, "s.txt", 3), done);
        assert_eq!(json_at("error: x", "s.txt", 3), "error: x");
    }

    #[test]
    fn failed_replies_are_recognised_in_text_and_json() {
        assert!(reply_failed("error: no graph named `a` is loaded"));
        assert!(reply_failed(r#"{"ok":false,"command":"gain","error":"x"}"#));
        assert!(!reply_failed(r#"{"ok":true,"command":"list","graphs":[]}"#));
        assert!(!reply_failed("loaded a"));
    }
}
