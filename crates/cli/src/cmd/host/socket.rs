//! The control socket: a Unix socket whose clients send commands, one per line, and get one
//! line of reply each. Each client has its own thread; the commands are executed one at a
//! time by the host's control loop. A client cannot disturb playback: a line longer than
//! [`MAX_LINE`] bytes is refused (and the rest of it skipped), invalid UTF-8 is refused, and
//! a client that disconnects mid-line has that line dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context as _;

use super::Request;

/// The longest command line a client may send, bytes.
pub const MAX_LINE: usize = 64 * 1024;

/// Removes the socket file when the host stops.
pub(crate) struct Guard {
    path: PathBuf,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listens at `path` (replacing a stale socket that no host answers on) and sends each
/// client's lines to `tx`.
pub(crate) fn serve(path: &Path, tx: mpsc::Sender<Request>) -> anyhow::Result<Guard> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt as _;
        // Only a socket is replaced: anything else at the path is the user's.
        if !meta.file_type().is_socket() {
            anyhow::bail!(
                "{} exists and is not a socket; the control socket is created at a new path (or replaces a stale socket): choose another path",
                path.display()
            );
        }
        if UnixStream::connect(path).is_ok() {
            anyhow::bail!(
                "{} is the control socket of a running host; stop it or choose another path",
                path.display()
            );
        }
        std::fs::remove_file(path)
            .with_context(|| format!("cannot replace the stale socket {}", path.display()))?;
    }
    let listener =
        UnixListener::bind(path).with_context(|| format!("cannot listen on {}", path.display()))?;
    std::thread::Builder::new()
        .name("fugue-control".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let tx = tx.clone();
                let _ = std::thread::Builder::new()
                    .name("fugue-client".into())
                    .spawn(move || client(stream, tx));
            }
        })
        .context("cannot start the control thread")?;
    Ok(Guard {
        path: path.to_path_buf(),
    })
}

/// Reads a line of at most [`MAX_LINE`] bytes into `buf`. `Ok(None)` at the end of the
/// stream (a partial last line is dropped); `Ok(Some(false))` for a line too long (its rest
/// skipped).
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(None);
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

fn client(stream: UnixStream, tx: mpsc::Sender<Request>) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    // A client that stops reading cannot hold the control loop: its replies time out.
    let _ = out.set_write_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        let reply = match read_line(&mut reader, &mut buf) {
            Ok(None) | Err(_) => return,
            Ok(Some(false)) => format!(
                "error: the line is longer than {MAX_LINE} bytes; send one command per line"
            ),
            Ok(Some(true)) => match std::str::from_utf8(&buf) {
                Err(_) => "error: the line is not valid UTF-8; write commands in UTF-8".into(),
                Ok(line) => {
                    let (rtx, rrx) = mpsc::channel();
                    if tx
                        .send(Request {
                            line: line.to_string(),
                            reply: rtx,
                        })
                        .is_err()
                    {
                        return;
                    }
                    match rrx.recv() {
                        Ok(r) if r.is_empty() => continue,
                        Ok(r) => r,
                        Err(_) => return,
                    }
                }
            },
        };
        if writeln!(out, "{reply}").is_err() {
            return;
        }
    }
}

/// Sends `line` to the host listening at `path` and returns its reply.
pub(crate) fn send(path: &Path, line: &str) -> anyhow::Result<String> {
    let mut s = UnixStream::connect(path).with_context(|| {
        format!(
            "cannot connect to {}; is `fugue host --control {}` running?",
            path.display(),
            path.display()
        )
    })?;
    writeln!(s, "{line}").context("cannot send the command")?;
    s.shutdown(std::net::Shutdown::Write)
        .context("cannot send the command")?;
    let mut reply = String::new();
    BufReader::new(&mut s)
        .take(1 << 20)
        .read_line(&mut reply)
        .context("cannot read the reply")?;
    if reply.is_empty() {
        anyhow::bail!("the host closed the connection without a reply");
    }
    Ok(reply.trim_end().to_string())
}
