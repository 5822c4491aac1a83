//! The control socket of a single run (`fugue run GRAPH --control SOCKET`): the host's
//! socket ([`super::socket`]: bounded clients, bounded lines) answering `set NAME NODE ATTR
//! VALUE` for the one graph it plays (NAME: the graph file's name without its extension),
//! and `quit`. A change is checked here ([`crate::live::check`]) and queued for the audio
//! thread, which sets it before its next cycle.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use fugue_dsp::Registry;

use super::socket::{self, Control, Guard};
use super::{ControlError, Request};
use crate::host::command::{self, Command};
use crate::host::session::{Answer, Reply};
use crate::live::{Granted, LiveQueue, LiveSet};

/// What the control thread knows of the run.
struct Run {
    /// The graph as the changes so far left it, shared with the backend.
    graph: crate::live::LiveGraph,
    name: String,
    /// The rate and block asked, until the backend grants its own.
    asked: (u32, usize),
    granted: Arc<Granted>,
    registry: Registry,
    queue: LiveQueue,
    stop: Arc<AtomicBool>,
    quit: Arc<AtomicBool>,
}

/// What the control socket of `fugue run` answers to `help`.
const RUN_HELP: &str = "the control socket of `fugue run` takes: set NAME NODE ATTR VALUE (a live attribute of a node; NAME is the graph's, its file's name without the extension, each character other than an ASCII letter, digit, `_`, `-` or `.` written `_`, at most 64), wait SECONDS (answers after that long) and quit (ends the run)";

/// The name that `set` commands give the graph of a `fugue run` of the file `path`: its
/// name without the extension, each character that a graph name cannot hold (one other than
/// an ASCII letter, digit, `_`, `-` or `.`) written `_`, at most 64 of them (`graph` when
/// none is left).
pub fn run_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| if command::name_char(c) { c } else { '_' })
        .take(command::MAX_NAME)
        .collect();
    if name.is_empty() {
        "graph".to_string()
    } else {
        name
    }
}

/// Listens at `path` for the run of `graph` (known as `name`, its kinds in `registry`) at
/// the rate and block `granted` holds once the backend granted them (`asked` until then);
/// changes go to `queue`, a `quit` sets `stop` and `quit`. The
/// socket is removed when the guard is dropped.
pub fn serve_run(
    path: &Path,
    (graph, name, registry): (crate::live::LiveGraph, &str, Registry),
    (asked, granted): ((u32, usize), Arc<Granted>),
    queue: LiveQueue,
    (stop, quit): (Arc<AtomicBool>, Arc<AtomicBool>),
) -> Result<Guard, ControlError> {
    let (tx, rx) = mpsc::channel::<Request>();
    let guard = socket::serve(
        path,
        tx,
        Control {
            json: false,
            clocked: true,
            stop: stop.clone(),
            cycle: None,
            quit: Arc::new(AtomicBool::new(false)),
            lost: Arc::default(),
        },
    )?;
    let run = Run {
        graph,
        name: name.to_string(),
        asked,
        granted,
        registry,
        queue,
        stop,
        quit,
    };
    std::thread::Builder::new()
        .name("fugue-run-control".into())
        .spawn(move || {
            for req in rx {
                // A line with no command (blank, a comment) has an empty reply, as the
                // host's: nothing is written back.
                let reply = run.answer(&req).map_or_else(String::new, |r| r.line(false));
                let _ = req.reply.send(reply);
            }
        })
        .map_err(|source| ControlError::Io {
            what: "cannot start the control thread".into(),
            source,
        })?;
    Ok(guard)
}

impl Run {
    /// The reply to `req`; `None` for a line that holds no command.
    fn answer(&self, req: &Request) -> Option<Reply> {
        if let Some(r) = &req.refused {
            return Some(r.clone());
        }
        if let Some(seconds) = req.waited {
            // A client's `wait`, waited in its own thread; the run counts no cycles here.
            return Some(Reply::done(Answer::Wait {
                seconds,
                cycle: None,
            }));
        }
        let cmd = match command::parse(&req.line) {
            Ok(Some(c)) => c,
            Ok(None) => return None,
            Err(e) => return Some(Reply::failed("help", e)),
        };
        Some(self.run(cmd))
    }

    /// The reply to a command.
    fn run(&self, cmd: Command) -> Reply {
        match cmd {
            Command::Set {
                name,
                node,
                attr,
                value,
            } => {
                if name != self.name {
                    return Reply::failed(
                        "set",
                        format!(
                            "this run plays one graph, `{}`: set {} NODE ATTR VALUE",
                            self.name, self.name
                        ),
                    );
                }
                // A change that comes while the backend opens waits for what it grants.
                let granted = self.granted.wait(std::time::Duration::from_secs(2));
                let (rate, block) = granted.unwrap_or(self.asked);
                // A thread that panicked holding the lock left the graph whole (each change
                // is written after it was checked).
                let mut graph = self.graph.lock().unwrap_or_else(|e| e.into_inner());
                let checked = crate::live::check(
                    &graph,
                    &self.registry,
                    f64::from(rate),
                    block,
                    &node,
                    &attr,
                    &value,
                    // Not known here: a run's plan is chosen (pipelined or not) after the
                    // socket opens.
                    false,
                );
                match checked {
                    Err(e) => Reply::failed("set", e),
                    Ok((c, number)) => {
                        let set = LiveSet {
                            node: c.node as u32,
                            param: c.param as u32,
                            value: number,
                        };
                        // A queue full of changes the audio thread has not taken yet (a burst
                        // of sets, larger than a cycle takes) makes room within a period or
                        // two: the change waits for it, as the host's do, up to 2 s.
                        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
                        let mut pending = set;
                        while let Err(back) = self.queue.push(pending) {
                            // Relaxed: a request flag.
                            if self.stop.load(Ordering::Relaxed)
                                || std::time::Instant::now() >= until
                            {
                                return Reply::failed(
                                    "set",
                                    "the audio thread took none of the changes sent before within 2 s (the run is stopping, or its periods are longer than that); try again",
                                );
                            }
                            pending = back;
                            std::thread::sleep(std::time::Duration::from_millis(1));
                        }
                        crate::live::apply(&mut graph, &c, &attr, &value, number);
                        Reply::done(Answer::Set {
                            name,
                            node,
                            attr,
                            value: number,
                        })
                    }
                }
            }
            Command::Help { .. } => Reply::done(Answer::Help { help: RUN_HELP }),
            Command::Quit => {
                // Relaxed: request flags, polled once per cycle and read after the run.
                self.quit.store(true, Ordering::Relaxed);
                self.stop.store(true, Ordering::Relaxed);
                Reply::done(Answer::Quit)
            }
            other => Reply::failed(
                other.verb(),
                format!(
                    "`{}` is a command of `fugue host`; the control socket of `fugue run` takes set {} NODE ATTR VALUE, wait SECONDS, help and quit",
                    other.verb(),
                    self.name
                ),
            ),
        }
    }
}
