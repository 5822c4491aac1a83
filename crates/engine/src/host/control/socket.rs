//! The control socket: a Unix socket whose clients send commands, one per line, and get one
//! line of reply each. The commands are executed one at a time by the host's control loop;
//! a `wait` (with a clock) is waited in the client's own thread, so that it holds only its
//! client, and its reply says how long it really waited (less when SIGTERM or a `quit` cut it
//! short).
//!
//! A client cannot disturb playback or the other clients: a line longer than [`MAX_LINE`]
//! bytes is refused (and the rest of it skipped), invalid UTF-8 is refused, and a client that
//! disconnects mid-line has that line dropped. At most [`MAX_CLIENTS`] clients are served at
//! once, each by a thread of its own: a new client past that closes the client idle longest
//! (which is told so in one line), or, when every client is in the middle of a command, is
//! refused in one line and closed. When the process runs out of file descriptors, the
//! accepting thread closes the client idle longest, or backs off for [`BACKOFF`]: it never
//! spins, and the clients already connected are served meanwhile.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::host::command::{self, Command};
use crate::host::session::Reply;

use super::{ControlError, Request};

/// The longest command line a client may send, bytes.
pub const MAX_LINE: usize = 64 * 1024;

/// The most clients served at once.
pub const MAX_CLIENTS: usize = 64;

/// How long the accepting thread pauses when it cannot accept (no file descriptor left and
/// no idle client to close, or another error).
pub const BACKOFF: Duration = Duration::from_millis(100);

/// How long a quitting host waits for its clients to send the replies on their way (a
/// `wait` cut short, and the reply of the command that quit, which the process's end would
/// otherwise cut off).
const REPLY_GRACE: Duration = Duration::from_secs(2);

/// What the control socket needs from the host.
pub struct Control {
    /// Replies in JSON.
    pub json: bool,
    /// Whether the host has a clock: then a `wait` is waited in the client's thread (offline,
    /// a `wait` runs its cycles in the control loop).
    pub clocked: bool,
    /// The stop request (a signal, say): it cuts a `wait` short.
    pub stop: Arc<AtomicBool>,
    /// The host's cycle as the control loop last saw it (it updates it after every command
    /// and while idle): the cycle a `wait` cut short by the host's end replies with; `None`
    /// where no cycle is counted for the replies (`fugue run --control`).
    pub cycle: Option<Arc<AtomicU64>>,
    /// Set as a client's `quit` is sent to the control loop ([`super::Watch::quit`]): a
    /// `wait` running there ends, so that the quit is served at once.
    pub quit: Arc<AtomicBool>,
    /// Why the audio side went away for good ([`super::Watch::lost`]): a `wait` cut short by
    /// the host's end then fails with it.
    pub lost: Arc<std::sync::OnceLock<String>>,
}

/// What a client is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for its next line: it may be closed to make room.
    Idle,
    /// A command of it is in the control loop.
    Command,
    /// In a `wait` of its own thread.
    Waiting,
}

/// A connected client, as the accepting thread sees it.
struct Client {
    id: u64,
    stream: Arc<UnixStream>,
    state: State,
    /// When it last finished a command (or connected).
    since: Instant,
}

/// The state shared by the accepting thread, the client threads and the [`Guard`].
struct Shared {
    control: Control,
    clients: Mutex<Vec<Client>>,
    /// Set when the host stops taking commands.
    closing: AtomicBool,
    next_id: AtomicU64,
}

impl Shared {
    fn clients(&self) -> MutexGuard<'_, Vec<Client>> {
        // A client thread that panicked left the list consistent (each change is one call).
        self.clients.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_state(&self, id: u64, state: State) {
        if let Some(c) = self.clients().iter_mut().find(|c| c.id == id) {
            c.state = state;
            c.since = Instant::now();
        }
    }

    fn remove(&self, id: u64) {
        self.clients().retain(|c| c.id != id);
    }

    /// Acquire: the closing flag publishes why the host ends ([`Control::lost`], set before
    /// the control loop ends and the flag is set); the stop request publishes nothing.
    fn stopping(&self) -> bool {
        self.closing.load(Ordering::Acquire) || self.control.stop.load(Ordering::Relaxed)
    }

    /// Closes the client idle longest, telling it `why` in one line; false when every
    /// client is busy (or there is none). A client whose thread has not yet read what it
    /// sent (a command on its way: its thread was not scheduled yet) is not idle.
    fn close_idle_longest(clients: &mut Vec<Client>, why: &str) -> bool {
        let Some(i) = clients
            .iter()
            .enumerate()
            .filter(|(_, c)| c.state == State::Idle && !has_unread(&c.stream))
            .min_by_key(|(_, c)| c.since)
            .map(|(i, _)| i)
        else {
            return false;
        };
        let old = clients.swap_remove(i);
        // Never blocks the accepting thread: the client is idle, so its thread only reads,
        // and ends on the shutdown (or on this flag's `WouldBlock`).
        let _ = old.stream.set_nonblocking(true);
        let _ = (&*old.stream).write_all(format!("{why}\n").as_bytes());
        let _ = old.stream.shutdown(std::net::Shutdown::Both);
        true
    }
}

/// Whether the client has sent bytes that its thread has not read yet (not counting the end
/// of its stream). Never blocks.
fn has_unread(stream: &UnixStream) -> bool {
    use std::os::fd::AsRawFd as _;
    let mut byte = [0u8; 1];
    // SAFETY: `byte` is valid for writes of 1 byte, the length given; the descriptor is
    // the stream's own, open while `stream` is borrowed; MSG_PEEK leaves the byte for the
    // client's thread, and MSG_DONTWAIT makes the call return at once.
    let n = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            byte.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n > 0
}

/// Removes the socket file when the host stops, after the clients in a `wait` replied.
pub struct Guard {
    path: PathBuf,
    /// The socket file's device and inode when it was made: the file is removed only while
    /// it is still this one (another host may have made its own at the path since).
    made: Option<(u64, u64)>,
    shared: Arc<Shared>,
}

/// The device and inode of the file at `path` (not following a link).
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Release: a request flag the waits poll, which publishes why the host ends.
        self.shared.closing.store(true, Ordering::Release);
        let start = Instant::now();
        while start.elapsed() < REPLY_GRACE
            && self.shared.clients().iter().any(|c| c.state != State::Idle)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        crate::output::forget_path(&self.path);
        if self.made.is_some() && identity(&self.path) == self.made {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Listens at `path` (replacing a stale socket that no host answers on) and sends each
/// client's lines to `tx`.
pub fn serve(
    path: &Path,
    tx: mpsc::Sender<Request>,
    control: Control,
) -> Result<Guard, ControlError> {
    let io = |what: String| move |source| ControlError::Io { what, source };
    if check_path(path)? {
        std::fs::remove_file(path).map_err(io(format!(
            "cannot replace the stale socket {}",
            path.display()
        )))?;
    }
    let listener =
        UnixListener::bind(path).map_err(io(format!("cannot listen on {}", path.display())))?;
    // Removed also when a signal ends the process where the host cannot stop in order (the
    // open of a named pipe that a `load` waits on): while the host runs, no other host
    // replaces it (it answers).
    crate::output::register_removal(path);
    let shared = Arc::new(Shared {
        control,
        clients: Mutex::new(Vec::new()),
        closing: AtomicBool::new(false),
        next_id: AtomicU64::new(0),
    });
    let accepting = shared.clone();
    std::thread::Builder::new()
        .name("fugue-control".into())
        .spawn(move || accept_loop(&listener, &accepting, &tx))
        .map_err(io("cannot start the control thread".into()))?;
    Ok(Guard {
        path: path.to_path_buf(),
        made: identity(path),
        shared,
    })
}

/// Checks that a control socket can be made at `path`, without making it (a host checks it
/// before it opens its recording or runs its script): not `-`, nothing but a stale socket
/// there (a running program's is refused), a name short enough for a socket address, in a
/// folder that exists, that this process may write, and that takes a socket (a socket of
/// this process's own is made there and removed: /proc and /sys say yes to root and take
/// none). `Ok(true)`: a stale socket is there, which [`serve`] replaces.
pub fn check_path(path: &Path) -> Result<bool, ControlError> {
    if path == Path::new("-") {
        // Read as standard input elsewhere on the command line; here it would be a socket
        // named `-` in the current folder.
        return Err(ControlError::Taken(
            "--control takes the path of a Unix socket to create, not `-`: commands come over that socket (`fugue ctl SOCKET ...`); give a path such as ./fugue.sock".to_string(),
        ));
    }
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(ControlError::Taken(format!(
            "{} ends with `/`, which names a folder; the control socket is a file: give its path without the slash",
            path.display()
        )));
    }
    // A socket's address holds 107 bytes of path (sun_path, with its NUL).
    if path.as_os_str().len() > 107 {
        return Err(ControlError::Taken(format!(
            "{} is {} bytes long, and a socket's path holds at most 107; choose a shorter path (a relative one is measured as given)",
            path.display(),
            path.as_os_str().len()
        )));
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt as _;
        // Only a socket is replaced: anything else at the path is the user's.
        if !meta.file_type().is_socket() {
            return Err(ControlError::Taken(format!(
                "{} exists and is not a socket; the control socket is created at a new path (or replaces a stale socket): choose another path",
                path.display()
            )));
        }
        match UnixStream::connect(path) {
            Ok(_) => {
                return Err(ControlError::Taken(format!(
                    "{} is a socket that a running program listens on (a fugue host or run, or another program); stop it or choose another path",
                    path.display()
                )))
            }
            // Stale: nothing listens there (or it went away since).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
                ) => {}
            // Another user's socket, which this one may not reach, may well be live.
            Err(e) => {
                return Err(ControlError::Taken(format!(
                    "{} is a socket that cannot be tried ({e}), so it may be a running program's; remove it if it is stale, or choose another path",
                    path.display()
                )))
            }
        }
        // Replacing it removes a file of the folder and adds one.
        writable(path)?;
        return Ok(true);
    }
    let parent = fugue_graph::read::folder_of(path);
    let folder = |why: String| ControlError::Taken(format!("{}: {why}", path.display()));
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(folder(format!(
                "{} is not a folder; the control socket is made in a folder",
                parent.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(folder(format!(
                "the folder {} does not exist; the control socket is made in an existing folder",
                parent.display()
            )))
        }
        Err(e) => {
            return Err(folder(format!(
                "cannot reach the folder {}: {e}; the control socket is made in a folder the host can reach",
                parent.display()
            )))
        }
    }
    writable(path)?;
    Ok(false)
}

/// Checks that this process may make the socket `path` in its folder: refused now, before
/// the host plays, rather than when it is bound, after the script and into the recording.
fn writable(path: &Path) -> Result<(), ControlError> {
    let parent = fugue_graph::read::folder_of(path);
    let refused = |e: &dyn std::fmt::Display| {
        ControlError::Taken(format!(
            "{}: no file can be made in the folder {}: {e}; choose a path in a folder this user may write",
            path.display(),
            parent.display()
        ))
    };
    crate::output::may_add_to(parent).map_err(|e| refused(&e))?;
    // Permissions say yes to root everywhere, and some file systems (/proc, /sys) take no
    // socket whatever they say: a socket of this process's own made there, then removed,
    // tells (where its path fits in a socket's address).
    let probe = parent.join(format!(".fugue-{}.sock-probe", std::process::id()));
    if probe.as_os_str().len() <= 107 {
        match UnixListener::bind(&probe) {
            Ok(l) => {
                drop(l);
                let _ = std::fs::remove_file(&probe);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {}
            Err(e) => return Err(refused(&e)),
        }
    }
    Ok(())
}

/// Accepts clients until the host stops taking commands.
fn accept_loop(listener: &UnixListener, shared: &Arc<Shared>, tx: &mpsc::Sender<Request>) {
    // Relaxed: a request flag.
    while !shared.closing.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => admit(stream, shared, tx),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                ) =>
            {
                // No descriptor left: make room by closing the client idle longest (its
                // thread closes its descriptor as it ends), or wait for one.
                let closed = Shared::close_idle_longest(
                    &mut shared.clients(),
                    "error: closed by the host: it ran out of file descriptors, and this client was idle longest",
                );
                std::thread::sleep(if closed {
                    Duration::from_millis(5)
                } else {
                    BACKOFF
                });
            }
            Err(_) => std::thread::sleep(BACKOFF),
        }
    }
}

/// Serves a new client in a thread of its own, making room as the module says.
fn admit(stream: UnixStream, shared: &Arc<Shared>, tx: &mpsc::Sender<Request>) {
    let refuse = |stream: &UnixStream, why: &str| {
        let _ = stream.set_nonblocking(true);
        // One write, the line with its newline: a client reads it whole.
        let _ = (&*stream).write_all(format!("{why}\n").as_bytes());
    };
    let stream = Arc::new(stream);
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    {
        let mut clients = shared.clients();
        if clients.len() >= MAX_CLIENTS
            && !Shared::close_idle_longest(
                &mut clients,
                &format!("error: closed by the host: it serves at most {MAX_CLIENTS} clients at once, and this one was idle longest when another came"),
            )
        {
            drop(clients);
            refuse(
                &stream,
                &format!("error: the host serves at most {MAX_CLIENTS} clients at once and all of them are busy; try again later"),
            );
            return;
        }
        clients.push(Client {
            id,
            stream: stream.clone(),
            state: State::Idle,
            since: Instant::now(),
        });
    }
    let (s, t) = (shared.clone(), tx.clone());
    let theirs = stream.clone();
    let spawned = std::thread::Builder::new()
        .name("fugue-client".into())
        .spawn(move || {
            client(&theirs, id, &s, &t);
            s.remove(id);
        });
    if spawned.is_err() {
        shared.remove(id);
        refuse(
            &stream,
            "error: the host cannot start a thread for another client now; try again later",
        );
    }
}

/// Reads a line of at most [`MAX_LINE`] bytes into `buf`. `Ok(None)` at the end of the
/// stream; `Ok(Some(false))` for a line too long (its rest skipped). A last line without a
/// newline is a line (`printf 'stats' | nc -U SOCKET` sends one), as a shell reads one.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    read_bounded_line(r, buf, true)
}

/// Reads a line of at most [`MAX_LINE`] bytes (without its newline) into `buf`, never
/// holding more: `Ok(Some(true))` for a line, `Ok(Some(false))` for a line too long (`buf`
/// empty, the rest of the line skipped), `Ok(None)` at the end of the stream. A last line
/// without a newline is returned when `keep_partial`, else dropped (a client that
/// disconnects in the middle of a command).
pub fn read_bounded_line(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep_partial: bool,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            let partial = keep_partial && (too_long || !buf.is_empty());
            return Ok(partial.then_some(!too_long));
        }
        let (chunk, found) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], Some(i + 1)),
            None => (avail, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = found.unwrap_or(avail.len());
        r.consume(used);
        if found.is_some() {
            return Ok(Some(!too_long));
        }
    }
}

/// Serves one client: its lines, one reply each, until it disconnects or is closed.
fn client(stream: &UnixStream, id: u64, shared: &Shared, tx: &mpsc::Sender<Request>) {
    // A client that stops reading cannot hold the control loop: its replies time out.
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    let mut quit = false;
    loop {
        if quit {
            // The lines after a `quit` are not commands of a host (or run) that goes on.
            return;
        }
        // A line refused here still counts as a command that failed (`--strict`).
        let refuse = |why: String| {
            shared.set_state(id, State::Command);
            Request::refuse(tx, Reply::failed("parse", why))
        };
        let read = read_line(&mut reader, &mut buf);
        if let Ok(Some(_)) = read {
            // A command from now on: its client is not closed to make room.
            shared.set_state(id, State::Command);
        }
        // `None`: the client went away (its place freed) or the host is gone.
        let reply = match read {
            Ok(None) | Err(_) => None,
            Ok(Some(false)) => refuse(format!(
                "the line is longer than {MAX_LINE} bytes; send one command per line"
            )),
            Ok(Some(true)) => match std::str::from_utf8(&buf) {
                Err(_) => refuse("the line is not valid UTF-8; write commands in UTF-8".into()),
                Ok(line) => match command::parse(line) {
                    Ok(Some(Command::Wait { seconds })) if shared.control.clocked => {
                        // Idle again once the reply is written: a quitting host waits for it.
                        shared.set_state(id, State::Waiting);
                        wait(seconds, stream, shared, tx)
                    }
                    parsed => {
                        quit = matches!(parsed, Ok(Some(Command::Quit)));
                        if quit {
                            // Relaxed: a request flag.
                            shared.control.quit.store(true, Ordering::Relaxed);
                        }
                        shared.set_state(id, State::Command);
                        match Request::ask_while(tx, line.to_string(), || hung_up(stream, 0)) {
                            Some(r) if r.is_empty() => {
                                shared.set_state(id, idle_or_next(&reader));
                                continue;
                            }
                            r => r,
                        }
                    }
                },
            },
        };
        let Some(reply) = reply else { return };
        // One write, the reply with its newline (`writeln!` writes them apart): a client that
        // reads what came once has the whole line.
        let written = (&*stream).write_all(format!("{reply}\n").as_bytes());
        shared.set_state(id, idle_or_next(&reader));
        if written.is_err() {
            return;
        }
    }
}

/// A client's state once a command is done: idle, unless its thread has read more of what it
/// sent (several commands in one write), which is a command on its way.
fn idle_or_next(reader: &BufReader<&UnixStream>) -> State {
    if reader.buffer().is_empty() {
        State::Idle
    } else {
        State::Command
    }
}

/// Whether the client at the other end of `stream` has gone (closed its socket, not only
/// its sending side, as `fugue ctl` does once it has sent its command), waiting at most
/// `ms` milliseconds for it.
fn hung_up(stream: &UnixStream, ms: i32) -> bool {
    use std::os::fd::AsRawFd as _;
    let mut p = libc::pollfd {
        fd: stream.as_raw_fd(),
        // Hang-up and errors are reported whatever is asked.
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call's duration; the descriptor is the stream's own,
    // open while `stream` is borrowed.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR) != 0
}

/// A client's `wait SECONDS` with a clock, waited in the client's thread
/// ([`super::wait_aside`]); `None` when the client went away meanwhile (the wait ends there).
fn wait(
    seconds: f64,
    stream: &UnixStream,
    shared: &Shared,
    tx: &mpsc::Sender<Request>,
) -> Option<String> {
    super::wait_aside(
        seconds,
        tx,
        &super::Aside {
            json: shared.control.json,
            stopping: &|| shared.stopping(),
            cycle: shared.control.cycle.as_deref(),
            lost: &shared.control.lost,
        },
        // At most 10 ms at a time: the stop is noticed within that.
        |d| hung_up(stream, d.as_millis().clamp(1, 10) as i32),
    )
}

/// How long [`send`] tries again to connect to a socket that does not exist yet, or that
/// nothing listens on yet: a host started a moment before (in the background, on the same
/// command line) makes its socket once it has started.
pub const START_GRACE: Duration = Duration::from_secs(2);

/// Sends `line` to the host listening at `path` and returns its reply, waiting for it at
/// most `timeout` (a `wait SECONDS` command gets its seconds more). A socket that is not
/// there, or not listened on, is tried again for [`START_GRACE`] (at most `timeout`).
pub fn send(path: &Path, line: &str, timeout: Duration) -> Result<String, ControlError> {
    let io = |what: &str| {
        let what = what.to_string();
        move |source| ControlError::Io { what, source }
    };
    // Nothing the host would answer (a comment, blanks): said here, before connecting.
    let parsed = command::parse(line);
    if matches!(parsed, Ok(None)) {
        return Err(ControlError::NoCommand);
    }
    // A path that is there but no socket is no host's: said so, not "is it running?".
    if let Ok(m) = std::fs::metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !m.file_type().is_socket() {
            return Err(ControlError::NotASocket(path.to_path_buf()));
        }
    }
    // A socket's address holds 107 bytes of path (sun_path, with its NUL), as the host's
    // check says.
    if path.as_os_str().len() > 107 {
        return Err(ControlError::Taken(format!(
            "{} is {} bytes long, and a socket's path holds at most 107, so it cannot be reached by this path; give a shorter path to the same socket (a relative one, or through a symbolic link)",
            path.display(),
            path.as_os_str().len()
        )));
    }
    // A host started just before (`fugue host --control S & fugue ctl S ...`) may not have
    // made its socket yet, or not listen on it yet: tried again for a while.
    let grace = std::time::Instant::now() + START_GRACE.min(timeout);
    let mut s = loop {
        match UnixStream::connect(path) {
            Ok(s) => break s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) && std::time::Instant::now() < grace =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(io(&format!(
                    "cannot connect to {} (is a `fugue host` or `fugue run` with `--control {}` running?)",
                    path.display(),
                    path.display()
                ))(e))
            }
        }
    };
    let timeout = match parsed {
        Ok(Some(Command::Wait { seconds })) => timeout + Duration::from_secs_f64(seconds),
        _ => timeout,
    };
    let timed_out = || ControlError::Timeout {
        path: path.to_path_buf(),
        seconds: (timeout.as_secs_f64() * 10.0).round() / 10.0,
    };
    // An error of `what`, or the time limit's when the socket's time ran out.
    // A host that ends (a `quit` of another client) may reset the connection instead of
    // closing it: no reply, as a close without one.
    let failed = |what: &'static str| {
        move |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => timed_out(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
                ControlError::NoReply(path.to_path_buf())
            }
            _ => io(&format!("{what} {}", path.display()))(e),
        }
    };
    // A zero duration is refused by the socket: none of these is zero.
    let timeout = timeout.max(Duration::from_millis(1));
    s.set_write_timeout(Some(timeout))
        .map_err(io("cannot set the socket's time limit"))?;
    let started = std::time::Instant::now();
    if let Err(e) = writeln!(s, "{line}") {
        // A host that refused this client (every place busy) wrote why and closed before
        // the command was sent: that line is the answer.
        let mut why = String::new();
        let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
        let _ = BufReader::new(&mut s)
            .take(super::MAX_REPLY)
            .read_line(&mut why);
        if !why.trim().is_empty() {
            return Ok(why.trim_end().to_string());
        }
        return Err(failed("cannot send the command to")(e));
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(failed("cannot send the command to"))?;
    // What the write took comes off the time left for the reply.
    let left = timeout.saturating_sub(started.elapsed());
    if left.is_zero() {
        return Err(timed_out());
    }
    s.set_read_timeout(Some(left))
        .map_err(io("cannot set the socket's time limit"))?;
    let mut reply = String::new();
    BufReader::new(&mut s)
        .take(super::MAX_REPLY)
        .read_line(&mut reply)
        .map_err(failed("cannot read the reply from"))?;
    if reply.is_empty() {
        return Err(ControlError::NoReply(path.to_path_buf()));
    }
    if !reply.ends_with('\n') && reply.len() as u64 >= super::MAX_REPLY {
        return Err(ControlError::NotAReply(path.to_path_buf()));
    }
    Ok(reply.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle client, its stream's other end (the client's side), and when it went idle.
    fn idle(id: u64, since: Instant) -> (Client, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        (
            Client {
                id,
                stream: Arc::new(ours),
                state: State::Idle,
                since,
            },
            theirs,
        )
    }

    /// The client idle longest is closed, and told why; one that sent a command its thread
    /// has not read yet is not idle, however long ago it went idle; with only such clients
    /// (or busy ones), none is closed.
    #[test]
    fn a_client_with_a_command_on_its_way_is_not_closed_to_make_room() {
        let t0 = Instant::now();
        let (a, mut a_end) = idle(0, t0);
        let (b, b_end) = idle(1, t0 + Duration::from_millis(1));
        let (mut c, _c_end) = idle(2, t0);
        c.state = State::Command;
        // The oldest sent a command that its thread did not read yet.
        a_end.write_all(b"stats\n").unwrap();
        let mut clients = vec![a, b, c];
        assert!(Shared::close_idle_longest(&mut clients, "closed: room"));
        let ids: Vec<u64> = clients.iter().map(|c| c.id).collect();
        assert!(
            ids.contains(&0) && ids.contains(&2) && !ids.contains(&1),
            "{ids:?}"
        );
        let mut told = String::new();
        BufReader::new(&b_end).read_line(&mut told).unwrap();
        assert_eq!(told, "closed: room\n");
        // Left: one with a command on its way and one busy: none is closed.
        assert!(!Shared::close_idle_longest(&mut clients, "closed: room"));
        assert_eq!(clients.len(), 2);
        // Once its thread read the command, and the reply went, it may be closed.
        let mut line = String::new();
        BufReader::new(&*clients[0].stream)
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "stats\n");
        assert!(Shared::close_idle_longest(&mut clients, "closed: room"));
        let _ = a_end.flush();
    }
}
