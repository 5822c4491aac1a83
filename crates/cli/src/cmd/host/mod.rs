//! `fugue host`: many graphs on one pool of threads, loaded and unloaded while it plays,
//! driven by a shell (an interactive prompt, a script, clients of a Unix socket), and
//! `fugue ctl`, which sends one command to that socket.
//!
//! Every command gets one line of reply (JSON with `--json`). A command that fails prints its
//! error and the host goes on; `--strict` stops at the first failure (exit status 1). The
//! recording is closed properly whatever ends the host (`quit`, Ctrl-C, end of the script).

pub use fugue_engine::host::command as parse;
mod socket;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use fugue_engine::host::{GraphExecutor, Host, HostBackend, HostError, HostOptions, Mode};
use serde_json::json;

use crate::util;
use parse::{Command, HELP};

/// Arguments of `fugue host`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// clocked (an audio thread paced by absolute-time sleeps at --rate and --buffer), jack
    /// (a JACK client at the server's rate and buffer size; when the server changes its
    /// buffer size, every graph is compiled again at the new size) or offline (no clock: `wait` runs
    /// its cycles at once, as fast as possible; deterministic).
    #[arg(long, default_value = "clocked", value_parser = ["clocked", "jack", "offline"])]
    pub backend: String,
    /// Connect the output ports to the system playback ports (jack backend).
    #[arg(long)]
    pub connect: bool,
    /// Name of the JACK client.
    #[arg(long, default_value = "fugue-host")]
    pub client_name: String,
    /// JACK output ports: mix (the mix on out_1, out_2, ...) or per-graph (also each graph's
    /// own ports, NAME_out_1, ..., added at load and removed at unload).
    #[arg(long, default_value = "mix", value_parser = ["mix", "per-graph"])]
    pub ports: String,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=1_536_000))]
    pub rate: u32,
    /// Frames per cycle.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub buffer: u64,
    /// Threads: of the pool (shared, partitioned) or of each graph (separate), the audio
    /// thread included [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// shared (one pool for all graphs), partitioned (the threads split among the graphs) or
    /// separate (an executor of --threads threads per graph: --executor).
    #[arg(long, default_value = "shared", value_parser = ["shared", "partitioned", "separate"])]
    pub mode: String,
    /// Output channels of the mix.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub channels: u64,
    /// Run these commands first, one per line (then quit, unless --control is given).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Take commands, one per line, from clients of a Unix socket at this path
    /// (`fugue ctl PATH COMMAND...` sends one).
    #[arg(long, value_name = "SOCKET")]
    pub control: Option<PathBuf>,
    /// Record the mix to this WAV file (32-bit float).
    #[arg(long, value_name = "OUT.wav")]
    pub record: Option<PathBuf>,
    /// Reply in JSON, one object per line.
    #[arg(long)]
    pub json: bool,
    /// Stop at the first command that fails (exit status 1), and refuse a graph whose
    /// predicted cycle passes 80% of the period.
    #[arg(long)]
    pub strict: bool,
    /// Run nodes of unknown kind as silence.
    #[arg(long)]
    pub placeholder: bool,
    /// Pin the audio thread to the first core and worker i to core i (the default with the
    /// clocked and JACK backends: threads that sleep between cycles can otherwise end up on
    /// one core, where a parallel pool runs no faster than one thread).
    #[arg(long)]
    pub pin: bool,
    /// Do not pin threads (see --pin).
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Pipelining of every graph loaded: cut each cycle's buffer into N sub-blocks, so that
    /// a line of nodes cut into one segment per thread (the threads the graph runs on) runs
    /// on several threads at once (N must divide the buffer; 1: off), or auto (N per graph
    /// from its critical path, its threads and the buffer). Same output. A graph that
    /// changes rates (a resampler) loads unpipelined, and its load reply says why. Under
    /// JACK, an N that does not divide the server's buffer falls back to the largest divisor
    /// below it.
    #[arg(long, default_value = "1", value_parser = crate::exec_args::parse_pipeline)]
    pub pipeline: fugue_engine::Pipeline,
    /// Each graph's own executor, in separate mode: auto (measures seq, ws and static on the
    /// graph at each load, for at most --auto-budget-ms, paced at the period with a clock,
    /// and keeps the fastest on at most --threads threads; seq unless another gains 5 %; the
    /// load reply says what it chose), or seq, static, ws, ws-affinity, share, share-spin,
    /// levels on --threads threads. In shared and partitioned modes the graphs run on the
    /// host's pool: only auto (the pool) is accepted there.
    #[arg(long, short = 'e', default_value = "auto", value_parser = crate::exec_args::parse_executor)]
    pub executor: crate::exec_args::Executor,
    /// How long --executor auto measures at most at each load, in ms, up to 600 (the loaded
    /// graphs play on meanwhile). Trials paced at the period need 24 periods per candidate
    /// (3 candidates on 2 cores); when they do not fit, the graph gets seq, unmeasured.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub auto_budget_ms: u64,
}

/// Arguments of `fugue ctl`.
#[derive(clap::Args, Debug)]
pub struct CtlArgs {
    /// The socket of a `fugue host --control SOCKET`.
    pub socket: PathBuf,
    /// The command and its arguments (`load a x.ag`, `stats`, `quit`, ...).
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// A line to execute and where its reply goes.
pub(crate) struct Request {
    pub(crate) line: String,
    pub(crate) reply: mpsc::Sender<String>,
}

/// The host and how to reply.
struct Session {
    host: Host,
    json: bool,
    stop: Arc<AtomicBool>,
}

/// A command's outcome.
struct Reply {
    ok: bool,
    line: String,
    quit: bool,
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1e3)
}

impl Session {
    /// Executes one line; never fails (a failure is a reply).
    fn execute(&mut self, line: &str) -> Option<Reply> {
        let cmd = match parse::parse(line) {
            Ok(Some(c)) => c,
            Ok(None) => return None,
            Err(e) => return Some(self.error("parse", e)),
        };
        let verb = verb(&cmd);
        let r = self.run(cmd);
        self.say_notices();
        Some(match r {
            Ok(r) => r,
            Err(e) => self.error(verb, util::message(&anyhow::Error::from(e))),
        })
    }

    /// Says on standard error what the host did on its own since the last command (a JACK
    /// buffer-size change followed).
    fn say_notices(&mut self) {
        for n in self.host.take_notices() {
            eprintln!("host: {n}");
        }
    }

    /// Between commands: lets the host follow a JACK buffer-size change, and says so.
    fn idle(&mut self) {
        // A server that went away shows in the next command's reply.
        let _ = self.host.poll();
        self.say_notices();
    }

    fn error(&self, verb: &str, msg: String) -> Reply {
        Reply {
            ok: false,
            line: if self.json {
                json!({"ok": false, "command": verb, "error": msg}).to_string()
            } else {
                format!("error: {msg}")
            },
            quit: false,
        }
    }

    fn ok(&self, text: String, value: serde_json::Value) -> Result<Reply, HostError> {
        let line = if self.json {
            let mut v = value;
            v["ok"] = json!(true);
            v.to_string()
        } else {
            text
        };
        Ok(Reply {
            ok: true,
            line,
            quit: false,
        })
    }

    fn run(&mut self, cmd: Command) -> Result<Reply, HostError> {
        match cmd {
            Command::Load { name, file } => {
                let r = self.host.load(&name, &file)?;
                let mut text = format!(
                    "loaded {name} (id {}) at cycle {}: cost {}, predicted cycle {} of a {} period",
                    r.id,
                    r.cycle,
                    us(r.cost_ns as f64),
                    us(r.predicted_ns as f64),
                    us(r.period_ns as f64)
                );
                match (&r.auto, &r.executor) {
                    (Some(line), _) => text.push_str(&format!("; {line}")),
                    (None, Some(e)) => text.push_str(&format!("; executor {e}")),
                    (None, None) => {}
                }
                if r.pipeline > 1 {
                    text.push_str(&format!("; pipelined in {} sub-blocks", r.pipeline));
                }
                if let Some(note) = &r.pipeline_note {
                    text.push_str(&format!("; {note}"));
                }
                if let Some(w) = &r.warning {
                    text.push_str(&format!("; warning: {w}"));
                }
                self.ok(
                    text,
                    json!({"command": "load", "name": name, "file": file, "id": r.id,
                        "cycle": r.cycle, "cost_ns": r.cost_ns, "predicted_ns": r.predicted_ns,
                        "period_ns": r.period_ns, "warning": r.warning,
                        "pipeline": r.pipeline, "pipeline_note": r.pipeline_note,
                        "executor": r.executor, "auto": r.auto}),
                )
            }
            Command::Unload { name } => {
                let r = self.host.unload(&name)?;
                self.ok(
                    format!(
                        "unloaded {name} (id {}) at cycle {} after {} cycles",
                        r.id, r.cycle, r.stats.cycles
                    ),
                    json!({"command": "unload", "name": name, "id": r.id, "cycle": r.cycle,
                        "cycles": r.stats.cycles}),
                )
            }
            Command::Gain { name, db } => {
                self.host.set_gain(&name, db)?;
                self.ok(
                    format!("gain of {name}: {db} dB"),
                    json!({"command": "gain", "name": name, "db": db}),
                )
            }
            Command::List => {
                let list = self.host.list();
                let text = if list.is_empty() {
                    "no graph is loaded".to_string()
                } else {
                    let items: Vec<String> = list
                        .iter()
                        .map(|g| {
                            format!(
                                "{} (id {}, {} tasks, {} ch, {} dB, cost {}, from cycle {}{}{}{})",
                                g.name,
                                g.id,
                                g.tasks,
                                g.channels,
                                g.gain_db,
                                us(g.cost_ns as f64),
                                g.adopted,
                                match &g.executor {
                                    Some(e) => format!(", {e}"),
                                    None => String::new(),
                                },
                                if g.pipeline > 1 {
                                    format!(", {} sub-blocks", g.pipeline)
                                } else {
                                    String::new()
                                },
                                if g.silenced { ", silenced" } else { "" }
                            )
                        })
                        .collect();
                    format!("{} loaded: {}", list.len(), items.join(", "))
                };
                let graphs: Vec<_> = list
                    .iter()
                    .map(|g| {
                        json!({"name": g.name, "id": g.id, "file": g.file, "tasks": g.tasks,
                            "channels": g.channels, "gain_db": g.gain_db, "cost_ns": g.cost_ns,
                            "adopted": g.adopted, "silenced": g.silenced,
                            "pipeline": g.pipeline, "executor": g.executor})
                    })
                    .collect();
                self.ok(text, json!({"command": "list", "graphs": graphs}))
            }
            Command::Stats { name: Some(name) } => {
                let s = self.host.stats(&name)?;
                self.ok(
                    format!(
                        "{name}: {} cycles, share of the cycle mean {}, p99 {}, max {}; {} deadline misses, {} panics",
                        s.cycles,
                        us(s.mean_ns),
                        us(s.p99_ns as f64),
                        us(s.max_ns as f64),
                        s.misses,
                        s.panics
                    ),
                    json!({"command": "stats", "name": name, "cycles": s.cycles,
                        "mean_ns": s.mean_ns, "p99_ns": s.p99_ns, "max_ns": s.max_ns,
                        "misses": s.misses, "panics": s.panics}),
                )
            }
            Command::Stats { name: None } => {
                let s = self.host.host_stats();
                self.ok(
                    format!(
                        "host: {} cycles, {} graphs, cycle mean {}, p99 {}, max {}; {} deadline misses ({} of {} cycles with a swap), {} overruns, {} recorded blocks dropped{}",
                        s.cycles,
                        self.host.list().len(),
                        us(s.mean_ns),
                        us(s.p99_ns as f64),
                        us(s.max_ns as f64),
                        s.misses,
                        s.swap_misses,
                        s.swap_cycles,
                        s.overruns,
                        s.record_drops,
                        if s.resizes > 0 || s.resize_cycles > 0 {
                            format!(
                                "; {} buffer-size changes followed, {} silent cycles while compiling for them",
                                s.resizes, s.resize_cycles
                            )
                        } else {
                            String::new()
                        }
                    ),
                    json!({"command": "stats", "cycles": s.cycles, "graphs": self.host.list().len(),
                        "mean_ns": s.mean_ns, "p99_ns": s.p99_ns, "max_ns": s.max_ns,
                        "misses": s.misses, "swap_cycles": s.swap_cycles,
                        "swap_misses": s.swap_misses, "overruns": s.overruns,
                        "record_drops": s.record_drops, "resizes": s.resizes,
                        "resize_cycles": s.resize_cycles}),
                )
            }
            Command::Mode => {
                let o = self.host.options();
                let backend = match o.backend {
                    HostBackend::Offline => "offline",
                    HostBackend::Clocked => "clocked",
                    HostBackend::Jack { .. } => "jack",
                };
                let executor = match o.mode {
                    Mode::Separate => o.executor.to_string(),
                    Mode::Shared | Mode::Partitioned => "pool".to_string(),
                };
                self.ok(
                    format!(
                        "mode {}, {} threads, {backend} at {} Hz, {} frames ({} period), {} channels, pipeline {}, executor {}",
                        o.mode,
                        o.threads,
                        o.rate,
                        o.block,
                        us(o.period_ns() as f64),
                        o.channels,
                        o.pipeline,
                        executor
                    ),
                    json!({"command": "mode", "mode": o.mode.name(), "threads": o.threads,
                        "backend": backend, "rate": o.rate, "buffer": o.block,
                        "channels": o.channels, "pipeline": o.pipeline.to_string(),
                        "executor": executor}),
                )
            }
            Command::Wait { seconds } => {
                // In slices, so that Ctrl-C is noticed.
                let end = Instant::now() + Duration::from_secs_f64(seconds);
                loop {
                    // Relaxed: a request flag.
                    if self.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let left = end.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    self.host.wait(left.min(Duration::from_millis(100)))?;
                    if self.host.options().backend == HostBackend::Offline
                        && left <= Duration::from_millis(100)
                    {
                        break;
                    }
                }
                let cycle = self.host.cycle();
                self.ok(
                    format!("waited {seconds} s; at cycle {cycle}"),
                    json!({"command": "wait", "seconds": seconds, "cycle": cycle}),
                )
            }
            Command::Help => self.ok(HELP.to_string(), json!({"command": "help", "help": HELP})),
            Command::Quit => {
                let mut r = self.ok("bye".into(), json!({"command": "quit"}))?;
                r.quit = true;
                Ok(r)
            }
        }
    }
}

fn verb(c: &Command) -> &'static str {
    match c {
        Command::Load { .. } => "load",
        Command::Unload { .. } => "unload",
        Command::Gain { .. } => "gain",
        Command::List => "list",
        Command::Stats { .. } => "stats",
        Command::Mode => "mode",
        Command::Wait { .. } => "wait",
        Command::Help => "help",
        Command::Quit => "quit",
    }
}

/// `fugue host`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let mode = Mode::from_name(&args.mode).expect("clap checks the mode");
    let backend = match args.backend.as_str() {
        "offline" => HostBackend::Offline,
        "jack" => HostBackend::Jack {
            client_name: args.client_name.clone(),
            connect: args.connect,
            per_graph_ports: args.ports == "per-graph",
        },
        _ => HostBackend::Clocked,
    };
    let script = match &args.script {
        Some(p) => Some(
            std::fs::read(p).with_context(|| format!("cannot read the script {}", p.display()))?,
        ),
        None => None,
    };
    // The JACK server chooses the buffer: a pipeline that does not divide it falls back to
    // the largest divisor below it, with a warning.
    let known_buffer = (args.backend != "jack").then_some(args.buffer as usize);
    crate::exec_args::check_pipeline(Some(args.pipeline), known_buffer, false)?;
    let stop = crate::signals::stop_flag();
    let options = HostOptions {
        backend,
        rate: args.rate,
        block: args.buffer as usize,
        threads: args
            .threads
            .map(|t| t as usize)
            .unwrap_or_else(|| fugue_exec::placement::available_cores().max(1)),
        mode,
        channels: args.channels as usize,
        strict: args.strict,
        record: args.record.clone(),
        placeholder: args.placeholder,
        pipeline: args.pipeline,
        executor: match args.executor {
            crate::exec_args::Executor::Auto => GraphExecutor::Auto,
            crate::exec_args::Executor::Kind(k) => GraphExecutor::Kind(k),
        },
        auto_budget: Duration::from_millis(args.auto_budget_ms),
        exec: {
            let mut o = HostOptions::default().exec;
            if args.pin || (args.backend != "offline" && !args.no_pin) {
                o.placement.cores = fugue_exec::placement::allowed_cores().to_vec();
            }
            o
        },
        ..HostOptions::default()
    };
    let host = Host::start(options).map_err(|e| util::usage(e.to_string()))?;
    // Placement problems are said, never fatal: the host plays without them.
    crate::warn::report(host.warnings(), false)?;
    let mut session = Session {
        host,
        json: args.json,
        stop: stop.clone(),
    };
    let mut failed = false;
    let mut quit = false;
    let stdout = std::io::stdout();
    // The script.
    if let (Some(bytes), Some(path)) = (&script, &args.script) {
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if quit || stop.load(Ordering::Relaxed) || (failed && args.strict) {
                break;
            }
            let reply = match std::str::from_utf8(line) {
                Ok(l) => session.execute(l),
                Err(_) => Some(session.error(
                    "parse",
                    "the line is not valid UTF-8; write commands in UTF-8".into(),
                )),
            };
            let Some(r) = reply else { continue };
            if r.ok {
                let _ = writeln!(stdout.lock(), "{}", r.line);
            } else {
                failed = true;
                if args.json {
                    let _ = writeln!(stdout.lock(), "{}", r.line);
                } else {
                    eprintln!("{}:{}: {}", path.display(), i + 1, r.line);
                }
            }
            quit |= r.quit;
        }
    }
    // Then the interactive shell or standard input (without a script), and the socket.
    let stopped = quit || (failed && args.strict) || stop.load(Ordering::Relaxed);
    if !stopped {
        let (tx, rx) = mpsc::channel::<Request>();
        let mut sources = 0;
        let _socket = match &args.control {
            Some(path) => {
                sources += 1;
                Some(socket::serve(path, tx.clone())?)
            }
            None => None,
        };
        if script.is_none() {
            sources += 1;
            let tx = tx.clone();
            let json = args.json;
            std::thread::Builder::new()
                .name("fugue-shell".into())
                .spawn(move || shell(tx, json))
                .context("cannot start the shell")?;
        }
        drop(tx);
        if sources > 0 {
            loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(req) => {
                        let Some(r) = session.execute(&req.line) else {
                            let _ = req.reply.send(String::new());
                            continue;
                        };
                        failed |= !r.ok;
                        let _ = req.reply.send(r.line);
                        if r.quit || (!r.ok && args.strict) {
                            break;
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => session.idle(),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        }
    }
    let report = session.host.finish().map_err(anyhow::Error::from)?;
    let s = report.stats;
    eprintln!(
        "host: {} cycles, {} deadline misses ({} of {} cycles with a swap), {} overruns{}{}",
        s.cycles,
        s.misses,
        s.swap_misses,
        s.swap_cycles,
        s.overruns,
        if s.resizes > 0 {
            format!(", {} buffer-size changes followed", s.resizes)
        } else {
            String::new()
        },
        match &args.record {
            Some(p) => format!(
                "; recorded {} frames to {}{}",
                report.recorded_frames,
                p.display(),
                if s.record_drops > 0 {
                    format!(
                        " ({} blocks dropped: the disk was too slow)",
                        s.record_drops
                    )
                } else {
                    String::new()
                }
            ),
            None => String::new(),
        }
    );
    if failed && args.strict {
        anyhow::bail!("a command failed and --strict stops there");
    }
    Ok(())
}

/// The interactive prompt (a terminal: line editing and history) or, when standard input is
/// not a terminal, its lines.
fn shell(tx: mpsc::Sender<Request>, json: bool) {
    let ask = |line: String| -> Option<String> {
        let (rtx, rrx) = mpsc::channel();
        tx.send(Request { line, reply: rtx }).ok()?;
        rrx.recv().ok()
    };
    if std::io::stdin().is_terminal() {
        let Ok(mut rl) = rustyline::DefaultEditor::new() else {
            return;
        };
        if !json {
            println!("fugue host: {HELP}");
        }
        loop {
            match rl.readline("fugue> ") {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = rl.add_history_entry(line.as_str());
                    }
                    let quits = matches!(parse::parse(&line), Ok(Some(Command::Quit)));
                    match ask(line) {
                        Some(r) if !r.is_empty() => println!("{r}"),
                        Some(_) => {}
                        None => return,
                    }
                    if quits {
                        return;
                    }
                }
                // Ctrl-C or Ctrl-D at the prompt: quit cleanly.
                Err(_) => {
                    let _ = ask("quit".into());
                    return;
                }
            }
        }
    } else {
        let stdin = std::io::stdin();
        let mut buf = Vec::new();
        let mut lock = stdin.lock();
        loop {
            buf.clear();
            match lock.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = match std::str::from_utf8(&buf) {
                Ok(l) => l.to_string(),
                Err(_) => {
                    println!("error: the line is not valid UTF-8; write commands in UTF-8");
                    continue;
                }
            };
            let quits = matches!(parse::parse(&line), Ok(Some(Command::Quit)));
            match ask(line) {
                Some(r) if !r.is_empty() => println!("{r}"),
                Some(_) => {}
                None => return,
            }
            if quits {
                return;
            }
        }
    }
}

/// `fugue ctl`.
pub fn ctl(args: CtlArgs) -> anyhow::Result<()> {
    let line = args
        .command
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(char::is_whitespace) || w.contains('"') {
                format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let reply = socket::send(&args.socket, &line)?;
    println!("{reply}");
    let failed = reply.starts_with("error:")
        || serde_json::from_str::<serde_json::Value>(&reply)
            .ok()
            .and_then(|v| v.get("ok").and_then(|o| o.as_bool()))
            == Some(false);
    if failed {
        anyhow::bail!("the host refused the command");
    }
    Ok(())
}
