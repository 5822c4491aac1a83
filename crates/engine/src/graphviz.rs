//! Drawing a graph's DOT text with Graphviz's `dot` program (SVG, PNG, PDF), stopped after a
//! time limit or on request.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What to draw, and where.
#[derive(Clone, Debug)]
pub struct Drawing<'a> {
    /// The DOT text.
    pub dot: String,
    /// The output format: `svg`, `png` or `pdf`.
    pub format: &'a str,
    /// The file Graphviz writes (a temporary file, given its name by the caller), opened with
    /// [`crate::output::open_truncated`].
    pub to: &'a Path,
    /// The graph file, for the messages.
    pub file: &'a Path,
    /// Its nodes, for the messages.
    pub nodes: usize,
    /// The output as named (the messages suggest `-o NAME.dot` beside it).
    pub output: &'a Path,
    /// How long Graphviz may take.
    pub timeout: Duration,
}

/// Why Graphviz did not draw the graph.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    /// The `dot` program is not installed.
    #[error("Graphviz's `dot` program was not found; install Graphviz (Debian/Ubuntu: `sudo apt-get install graphviz`, macOS: `brew install graphviz`) or write DOT text with `-o {}.dot`", .0.display())]
    NotFound(PathBuf),
    /// It could not be started.
    #[error("cannot run Graphviz's `dot`")]
    Spawn(#[source] std::io::Error),
    /// The file it writes could not be opened.
    #[error("cannot open {} for Graphviz's drawing", .0.display())]
    Output(PathBuf, #[source] std::io::Error),
    /// The drawing could not be written (names the output; says when the disk is full).
    #[error("cannot write {}{}", .0.display(), if crate::output::is_disk_full(.1) { ": the disk is full" } else { "" })]
    Write(PathBuf, #[source] std::io::Error),
    /// Waiting for it failed.
    #[error("Graphviz's `dot` failed")]
    Wait(#[source] std::io::Error),
    /// It failed, saying this.
    #[error("Graphviz's `dot` failed: {0}")]
    Failed(String),
    /// The graph could not be sent to it.
    #[error("cannot send the graph to Graphviz")]
    Feed(#[source] std::io::Error),
    /// A signal came while it was drawing.
    #[error("stopped by signal {0} while Graphviz was drawing")]
    Signal(i32),
    /// It took longer than the time limit.
    #[error("Graphviz did not draw {} ({nodes} nodes) within --timeout {secs} s and was stopped; raise --timeout, or write DOT text with `-o {}.dot`", .file.display(), .stem.display())]
    Timeout {
        /// The graph file.
        file: PathBuf,
        /// Its nodes.
        nodes: usize,
        /// The time limit, s.
        secs: u64,
        /// The output without its extension.
        stem: PathBuf,
    },
}

/// Draws `d` with Graphviz; `stop` says (with the signal's number) when to stop it early.
pub fn draw(d: Drawing<'_>, stop: impl Fn() -> Option<i32>) -> Result<(), DrawError> {
    let stem = d.output.with_extension("");
    // Graphviz writes to its standard output, a pipe copied here into this file (opened here,
    // so that a temporary file removed on a signal is not made again): its SVG writer does
    // not check its writes, so a full disk left a cut drawing and a success.
    let mut out = crate::output::open_truncated(d.to)
        .map_err(|e| DrawError::Output(d.to.to_path_buf(), e))?;
    let mut command = Command::new("dot");
    command
        .arg(format!("-T{}", d.format))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and calls only prctl and
    // getppid, which are async-signal-safe; it allocates nothing.
    unsafe {
        use std::os::unix::process::CommandExt as _;
        // Graphviz ends with fugue, however fugue ends (a signal that ends it at once, a
        // kill): it is not left drawing on its own.
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // fugue gone before the request was made: the child's parent is another.
            if libc::getppid() != parent {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
    let child = command.spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DrawError::NotFound(stem))
        }
        Err(e) => return Err(DrawError::Spawn(e)),
    };
    // Feed and drain Graphviz on their own threads, so that the wait below can stop it.
    let mut stdin = child.stdin.take().expect("piped");
    let dot = d.dot;
    let feeder = std::thread::spawn(move || stdin.write_all(dot.as_bytes()));
    let mut stdout = child.stdout.take().expect("piped");
    let copier =
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut out).and_then(|_| out.flush()));
    let mut stderr = child.stderr.take().expect("piped");
    let drainer = std::thread::spawn(move || {
        let mut e = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut e);
        e
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(DrawError::Wait)? {
            break st;
        }
        let signal = stop();
        if started.elapsed() >= d.timeout || signal.is_some() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(match signal {
                Some(sig) => DrawError::Signal(sig),
                None => DrawError::Timeout {
                    file: d.file.to_path_buf(),
                    nodes: d.nodes,
                    secs: d.timeout.as_secs(),
                    stem,
                },
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err_text = drainer.join().unwrap_or_default();
    let fed = feeder.join();
    // The drawing not written whole is the error, whatever Graphviz said after it.
    match copier.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(DrawError::Write(d.output.to_path_buf(), e)),
        Err(_) => {
            return Err(DrawError::Write(
                d.output.to_path_buf(),
                std::io::Error::other("the copy of Graphviz's drawing failed"),
            ))
        }
    }
    if !status.success() {
        return Err(DrawError::Failed(err_text.trim().to_string()));
    }
    match fed {
        // Graphviz drew, yet stopped reading early: not a reader of fugue's output gone.
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(DrawError::Feed(
            std::io::Error::other("Graphviz stopped reading it before its end"),
        )),
        Ok(Err(e)) => Err(DrawError::Feed(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary file removed before Graphviz draws into it (as on a signal) is an error,
    /// and no file is made again (whether `dot` is installed or not).
    #[test]
    fn a_removed_temporary_output_is_not_created_again() {
        let to = std::env::temp_dir().join(format!("fugue-draw-{}.part", std::process::id()));
        let (tmp, _file) = crate::output::Temp::create(to.clone(), Path::new("g.svg")).unwrap();
        std::fs::remove_file(&to).unwrap();
        let d = Drawing {
            dot: "digraph { a -> b }".into(),
            format: "svg",
            to: &to,
            file: Path::new("g.ag"),
            nodes: 2,
            output: Path::new("g.svg"),
            timeout: Duration::from_secs(10),
        };
        assert!(matches!(draw(d, || None), Err(DrawError::Output(..))));
        assert!(!to.exists());
        drop(tmp);
    }
}
