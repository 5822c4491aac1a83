//! `fugue host`: many graphs on one pool of threads, loaded and unloaded while it plays,
//! driven by a shell (an interactive prompt, a script, clients of a Unix socket), and
//! `fugue ctl`, which sends one command to that socket.
//!
//! Every command gets one line of reply (JSON with `--json`). A command that fails prints its
//! error and the host goes on (a script's or standard input's failures then end it with exit
//! status 1); `--strict` stops at the first failure (exit status 1). The
//! recording is closed properly whatever ends the host (`quit`, Ctrl-C, end of the script).
//! The commands are executed by the engine ([`fugue_engine::host::session`]) and driven by
//! its controller ([`fugue_engine::host::control`]); this module reads the terminal and
//! prints the replies.

mod shell;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Context as _;
use fugue_engine::host::command::{self, Command};
use fugue_engine::host::control::history::{history_path, History};
use fugue_engine::host::control::socket::{read_bounded_line, MAX_LINE};
use fugue_engine::host::control::{self, socket, Controller, Hooks, Request, Watch};
use fugue_engine::host::session::{Reply, Session};
use fugue_engine::host::{GraphExecutor, Host, HostBackend, HostError, HostOptions, Mode};

use crate::util;

/// Arguments of `fugue host`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// clocked (an audio thread paced by absolute-time sleeps at --rate and --buffer), jack
    /// (a JACK client at the server's rate and buffer size; when the server changes its
    /// buffer size, every graph is compiled again at the new size) or offline (no clock: the
    /// host plays only while a `wait` runs, and `wait` counts audio time: after waits adding
    /// up to T seconds the host has played round(T × rate / buffer) cycles, as fast as they
    /// go; every other command applies at the start of the next cycle; the same script
    /// records the same bytes at every run), or alsa (an ALSA playback device, --device,
    /// asked for --rate and --buffer; the host runs at what it grants, paced by the device).
    #[arg(long, default_value = "clocked", value_parser = ["clocked", "jack", "alsa", "offline"])]
    pub backend: String,
    /// The ALSA playback device (alsa backend): `default`, `hw:0`, `plughw:1,0`, `null`
    /// (plays nothing, paced by the clock)... `aplay -L` lists them.
    #[arg(long, default_value = "default")]
    pub device: String,
    /// Periods in the ALSA device's buffer asked (alsa backend).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=16))]
    pub periods: u32,
    /// Connect the output ports to the system playback ports (jack backend).
    #[arg(long)]
    pub connect: bool,
    /// Name of the JACK client (not empty, no `:`, at most 63 bytes).
    #[arg(long, default_value = "fugue-host", value_parser = crate::util::jack_client_name)]
    pub client_name: String,
    /// JACK output ports: mix (the mix on out_1, out_2, ...) or per-graph (also each graph's
    /// own ports, NAME_out_1, ..., added at load and removed at unload).
    #[arg(long, default_value = "mix", value_parser = ["mix", "per-graph"])]
    pub ports: String,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(1..=fugue_engine::MAX_RATE as i64))]
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
    /// Run these commands first, one per line (then quit, unless --control is given, whose
    /// socket is served while the script plays too).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Take commands, one per line, from clients of a Unix socket at this path
    /// (`fugue ctl PATH COMMAND...` sends one), from the start, while a --script plays too.
    #[arg(long, value_name = "SOCKET")]
    pub control: Option<PathBuf>,
    /// Record the mix to this WAV file, named .wav (32-bit float; its header is kept up to
    /// date every quarter of a second of audio, so a host that is killed leaves a readable
    /// file), or named pipe. An existing file is replaced only with --force; a file the host
    /// reads (the script, standard input, a graph it loads) never.
    #[arg(long, value_name = "OUT.wav")]
    pub record: Option<PathBuf>,
    /// Replace the --record file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Reply in JSON, one object per line (`ok`, `command`, and what it did, or `error`:
    /// a failed `load` or `unload` also gives the `name` and `file` it named; a failed line
    /// of the script or of standard input, its `line` and `source`).
    #[arg(long)]
    pub json: bool,
    /// Stop at the first command that fails (exit status 1), and refuse a graph whose
    /// predicted cycle passes 80% of the period. (Without it, the host plays on after a
    /// failed command; a script's or standard input's failures end it with exit status 1.)
    #[arg(long)]
    pub strict: bool,
    /// Run nodes of unknown kind as silence.
    #[arg(long)]
    pub placeholder: bool,
    /// Pin the audio thread to the first core and worker i to core i (the default with the
    /// clocked, ALSA and JACK backends: threads that sleep between cycles can otherwise end up on
    /// one core, where a parallel pool runs no faster than one thread).
    #[arg(long)]
    pub pin: bool,
    /// Do not pin threads (see --pin).
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Run the pool's workers (shared and partitioned modes) at real-time priority
    /// (SCHED_FIFO PRIORITY, default 80; the clocked or ALSA audio thread one above; JACK's
    /// own thread keeps the server's) where the system permits, so that no other process
    /// delays a cycle; when refused, said once.
    #[arg(long, num_args = 0..=1, require_equals = true, value_name = "PRIORITY", default_missing_value = "80", value_parser = clap::value_parser!(i32).range(1..=98))]
    pub rt: Option<i32>,
    /// Pipelining of every graph loaded: cut each cycle's buffer into N sub-blocks, so that
    /// a line of nodes cut into one segment per thread (the threads the graph runs on) runs
    /// on several threads at once (N must divide the buffer; 1: off), or auto (N per graph
    /// from its critical path, its threads and the buffer). Same output. A graph that
    /// changes rates (a resampler) loads unpipelined, and its load reply says why. Under
    /// JACK, an N that does not divide the server's buffer falls back to the largest divisor
    /// below it.
    #[arg(long, default_value = "1")]
    pub pipeline: fugue_engine::Pipeline,
    /// Each graph's own executor, in separate mode: auto (measures seq, ws and static on the
    /// graph at each load, for at most --auto-budget-ms, paced at the period with a clock;
    /// among the candidates on at most --threads threads, the fastest candidate is kept if its
    /// mean cycle is at least 5 % shorter than seq's, else seq; the load reply says what it
    /// chose), or seq, static, ws, ws-affinity, share, share-spin,
    /// levels on --threads threads. In shared and partitioned modes the graphs run on the
    /// host's pool: only auto (the pool) is accepted there.
    #[arg(long, short = 'e', default_value = "auto")]
    pub executor: GraphExecutor,
    /// How long --executor auto measures at most at each load, in ms, up to 600 (the loaded
    /// graphs play on meanwhile, in whole periods of it). Trials paced at the period, at most
    /// 4 ms apart, take 18 cycles per candidate, 12 of them timed (3 candidates on 2 cores),
    /// and settling cycles between turns; when they do not fit, the graph gets seq, unmeasured.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub auto_budget_ms: u64,
    /// How the pool's threads share the graphs (shared mode, and partitioned groups of
    /// several threads): units (each graph's units claimed one by one, so that a thread done
    /// early helps the others), whole (each graph run whole by one thread, with no per-unit
    /// claim), balanced (as many graphs whole as fill the threads evenly, the rest in units),
    /// or auto (offline, with at least as many graphs as threads: balanced, every graph whole;
    /// otherwise measures units against balanced in blocks of cycles, keeps the faster, and
    /// measures again every 1024 cycles and at each load or unload). The output is the same.
    #[arg(long, default_value = "auto", value_parser = ["units", "whole", "balanced", "auto"])]
    pub grain: String,
}

/// Arguments of `fugue ctl`.
#[derive(clap::Args, Debug)]
pub struct CtlArgs {
    /// How long to wait for the reply, in seconds (a `wait SECONDS` command gets its seconds
    /// more)
    #[arg(long, default_value_t = 60.0, value_parser = ctl_timeout)]
    pub timeout: f64,
    /// The socket of a `fugue host --control SOCKET` (or of `fugue run --control`); one
    /// not there yet, or not listened on yet, is tried again for 2 s (a host started just
    /// before, in the background).
    pub socket: PathBuf,
    /// The command and its arguments (`load a x.ag`, `stats`, `quit`, ...).
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// The flags given that the chosen backend or mode does not read (each changed from its
/// default): said as warnings, as a flag of another command is refused, so that a mistake in
/// the command line is not passed over in silence.
fn unread_flags(args: &Args) -> Vec<String> {
    let backend = args.backend.as_str();
    let mut unread = Vec::new();
    let mut not_read = |given: bool, flag: &str, by: &str| {
        if given {
            unread.push(format!(
                "{flag} applies to the {by}; the {backend} backend does not read it"
            ));
        }
    };
    if backend != "jack" {
        not_read(args.connect, "--connect", "jack backend");
        not_read(
            args.client_name != "fugue-host",
            "--client-name",
            "jack backend",
        );
        not_read(args.ports != "mix", "--ports", "jack backend");
    }
    if backend == "jack" {
        // The server's rate and buffer size are the host's (and it follows the buffer's).
        for (given, flag) in [
            (args.rate != 48_000, "--rate"),
            (args.buffer != 256, "--buffer"),
        ] {
            not_read(
                given,
                flag,
                "clocked, ALSA and offline backends (JACK runs at the server's rate and buffer size)",
            );
        }
    }
    if backend != "alsa" {
        not_read(args.device != "default", "--device", "alsa backend");
        not_read(args.periods != 2, "--periods", "alsa backend");
    }
    // Auto measures each graph at its load in separate mode only (the pools measure their
    // grain in blocks of cycles, not within this budget).
    let measures = args.mode == "separate" && args.executor == GraphExecutor::Auto;
    if args.auto_budget_ms != 100 && !measures {
        unread.push(format!(
            "--auto-budget-ms applies to --mode separate with --executor auto, which measures each graph at its load; it is ignored with --mode {} --executor {}",
            args.mode, args.executor
        ));
    }
    if args.mode == "separate" && args.grain != "auto" {
        unread.push(
            "--grain applies to the shared and partitioned pools; in separate mode each graph has its executor"
                .to_string(),
        );
    }
    unread
}

/// The host's options from the command line.
fn host_options(args: &Args) -> HostOptions {
    let backend = match args.backend.as_str() {
        "offline" => HostBackend::Offline,
        "jack" => HostBackend::Jack {
            client_name: args.client_name.clone(),
            connect: args.connect,
            per_graph_ports: args.ports == "per-graph",
        },
        "alsa" => HostBackend::Alsa {
            device: args.device.clone(),
            periods: args.periods,
        },
        _ => HostBackend::Clocked,
    };
    HostOptions {
        backend,
        rate: args.rate,
        block: args.buffer as usize,
        threads: args
            .threads
            .map(|t| t as usize)
            .unwrap_or_else(|| fugue_exec::placement::available_cores().max(1)),
        mode: Mode::from_name(&args.mode).expect("clap checks the mode"),
        channels: args.channels as usize,
        strict: args.strict,
        record: args.record.clone(),
        placeholder: args.placeholder,
        pipeline: args.pipeline,
        executor: args.executor,
        auto_budget: Duration::from_millis(args.auto_budget_ms),
        grain: fugue_engine::host::TenantGrain::from_name(&args.grain)
            .expect("clap checks the grain"),
        exec: {
            let mut o = HostOptions::default().exec;
            if args.pin || (args.backend != "offline" && !args.no_pin) {
                o.placement.cores = fugue_exec::placement::allowed_cores().to_vec();
            }
            o.placement.rt_priority = args.rt;
            o
        },
        ..HostOptions::default()
    }
}

/// A reply that the shell's thread could not write to standard output (the host stops
/// there, and `fugue host` fails with it).
static PROMPT_WRITE_ERROR: std::sync::OnceLock<std::io::Error> = std::sync::OnceLock::new();

/// Standard input that could not be read, and the line the shell was reading: the host stops
/// there, and `fugue host` fails with it (the commands after it are lost).
static INPUT_READ_ERROR: std::sync::OnceLock<(usize, std::io::Error)> = std::sync::OnceLock::new();

/// Whether the shell has a command in the host whose reply it has not printed yet.
static PROMPT_BUSY: AtomicBool = AtomicBool::new(false);

/// Clears [`PROMPT_BUSY`] when the shell is done with a command, however `forward` returns.
struct PromptBusy;

impl Drop for PromptBusy {
    fn drop(&mut self) {
        let _ = std::io::stdout().flush();
        // Release: the reply's write happens-before the host sees the shell done.
        PROMPT_BUSY.store(false, std::sync::atomic::Ordering::Release);
    }
}

/// Waits, at most 2 s, until `done` holds (looking every millisecond).
fn wait_briefly(done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits (at most 2 s) for the shell to print the reply of its command in flight: the reply
/// of the `quit` that ends the host, which the process's end would otherwise cut off.
fn wait_for_prompt() {
    // Acquire: pairs with `PromptBusy`'s Release.
    wait_briefly(|| !PROMPT_BUSY.load(std::sync::atomic::Ordering::Acquire));
}

/// The largest script `--script` reads (a script is lines of commands).
pub const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// Checks `--record` before anything is created: not `-` (standard output carries the
/// replies), a file named `.wav` (or a stream: a named pipe, a device), not an existing file
/// without `--force`, and not a file the host reads (the script, the control socket, a graph
/// the script loads and the files its nodes read; a graph loaded later from standard input or the socket cannot be known
/// now, and the `.wav` name keeps a graph file from being taken for the recording).
fn check_record(args: &Args, script: Option<&[u8]>) -> anyhow::Result<()> {
    let Some(record) = &args.record else {
        return Ok(());
    };
    if record.as_os_str() == "-" {
        return Err(util::usage(
            "--record -: standard output carries the host's replies; name a WAV file or a named pipe to record to",
        ));
    }
    if let Some(control) = &args.control {
        if fugue_engine::output::one_path(control, record) {
            return Err(util::usage(format!(
                "--record and --control both name {}: the recording and the control socket need paths of their own",
                record.display()
            )));
        }
    }
    let mut inputs: Vec<PathBuf> = args.script.iter().chain(&args.control).cloned().collect();
    // Without a script the commands come from standard input, which may be a file
    // (`fugue host --record x.wav --force < x.wav` would empty it before reading it).
    if args.script.is_none() {
        inputs.push(PathBuf::from("/dev/stdin"));
    }
    for load in control::script_loads(script.unwrap_or_default()) {
        // And the files its nodes read (a Faust program), for a graph file that can be read
        // now (not a named pipe, which would wait for its writer; one that cannot be read
        // fails its `load`, said then). A Faust program reads no other file (and is not
        // compiled for this).
        if !fugue_faust::is_dsp(&load) && std::fs::metadata(&load).is_ok_and(|m| m.is_file()) {
            if let Ok(graph) = fugue_graph::read_file(&load, None) {
                inputs.extend(fugue_engine::output::graph_files(&load, &graph));
            }
        }
        inputs.push(load);
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    fugue_engine::output::OutputFile::check_format(record, args.force, &inputs, "wav", || {
        format!(
            "--record {}: the recording is a WAV file; name it with .wav (or give a named pipe)",
            record.display()
        )
    })?;
    Ok(())
}

/// The byte-order mark that some editors write at the start of a UTF-8 file.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// A script without the byte-order mark it may start with (invisible, it would make the
/// first command unknown).
fn without_bom(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    bytes
}

/// What the binary lends the controller: notices on standard error, and a signal ending
/// the process while a `load` waits for the writer of a named pipe.
const HOOKS: Hooks = Hooks {
    notice: |n| eprintln!("host: {n}"),
    blocking: |f| crate::signals::blocking(f),
};

/// `fugue host`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let script = match &args.script {
        Some(p) => Some(without_bom(
            fugue_graph::read::read_bounded(p, MAX_SCRIPT_BYTES, "a host script")
                .with_context(|| format!("cannot read the script {}", p.display()))?,
        )),
        None => None,
    };
    // The control socket's path, before anything is opened or played: a path that cannot
    // take it fails here, not after the script has played into a new recording.
    if let Some(path) = &args.control {
        socket::check_path(path)?;
    }
    check_record(&args, script.as_deref())?;
    unread_flags(&args).iter().for_each(util::warning);
    // The JACK server or the ALSA device chooses the buffer: a pipeline that does not divide
    // it falls back to the largest divisor below it, with a warning.
    let known_buffer =
        (!matches!(args.backend.as_str(), "jack" | "alsa")).then_some(args.buffer as usize);
    crate::util::check_pipeline(Some(args.pipeline), known_buffer, false)?;
    // Until the host has started, a signal ends the process at once: opening the recording
    // may wait for the reader of a named pipe.
    let mut host =
        Host::with_registry(host_options(&args), util::registry()).map_err(|e| match e {
            HostError::Options(m) => util::usage(m),
            e => e.into(),
        })?;
    let stop = crate::signals::stop_flag();
    host.set_reader(Arc::new(|file: &Path| {
        fugue_faust::is_dsp(file).then(|| fugue_faust::dsp_graph(file).map_err(|e| e.to_string()))
    }));
    if let Some(line) = host.device() {
        eprintln!("fugue: {line}");
    }
    // Placement problems are said, never fatal: the host plays without them.
    crate::warn::report(host.warnings(), false)?;
    let mut ctl = Controller::new(
        Session::new(host, stop.clone()),
        args.json,
        args.strict,
        HOOKS,
    );
    // The script (or else the interactive shell or standard input) and the socket, served
    // together: a client of the socket is answered while the script plays. A socket that
    // cannot be served (taken since it was checked) fails the host before anything plays.
    let served = serve(&mut ctl, &args, script.as_deref(), &stop);
    // A prompt still waiting (the host ended by a `quit` of its control socket) leaves the
    // terminal as it found it.
    crate::terminal::restore();
    let outcome = std::mem::take(&mut ctl.outcome);
    let report = ctl.into_session().into_host().finish()?;
    eprintln!("host: {}", report.summary(args.record.as_deref()));
    served?;
    if let (Some(e), Some(path)) = (&report.record_error, &args.record) {
        anyhow::bail!("cannot write {}: {e}", path.display());
    }
    if let Some(e) = outcome.write_error.as_ref().or(PROMPT_WRITE_ERROR.get()) {
        crate::stdio::failed("standard output", e);
    }
    if let Some((line, e)) = INPUT_READ_ERROR.get() {
        anyhow::bail!(
            "cannot read line {line} of standard input: {e}; the host stopped there, its commands lost"
        );
    }
    if let Some(lost) = outcome.lost {
        anyhow::bail!(lost);
    }
    if outcome.failed && args.strict {
        anyhow::bail!("a command failed and --strict stops there");
    }
    // A script's failures (or those of standard input read as one) were said as they came,
    // the host playing on; they fail the run as it ends, so that whatever ran the script
    // learns of them. The prompt's and the socket's clients' failures were said to whoever
    // typed or sent them.
    let (f, source) = match &args.script {
        Some(path) => (
            *SCRIPT_FAILURES.lock().unwrap_or_else(|e| e.into_inner()),
            format!("the script {}", path.display()),
        ),
        None => (
            *STDIN_FAILURES.lock().unwrap_or_else(|e| e.into_inner()),
            "standard input".to_string(),
        ),
    };
    // Stopped by a signal: that is what ends the run, and `main` says it (the commands
    // after the failures did not all run).
    if f.count > 0 && crate::signals::received().is_none() {
        anyhow::bail!(failures_said(f, &source));
    }
    Ok(())
}

/// The sentence that ends a host whose script (or standard input, `source`) had commands
/// that failed, `f`.
fn failures_said(f: control::Failures, source: &str) -> String {
    let first = f.first.unwrap_or(0);
    if f.count == 1 {
        format!("the command at line {first} of {source} failed (said above); the host ran the others, and --strict stops at the first failure")
    } else {
        format!("{} commands of {source} failed, the first at line {first} (said above); the host ran the others, and --strict stops at the first failure", f.count)
    }
}

/// The commands of standard input, read as a script (not a terminal), that failed.
static STDIN_FAILURES: std::sync::Mutex<control::Failures> =
    std::sync::Mutex::new(control::Failures {
        count: 0,
        first: None,
    });

/// The commands of the `--script` that failed.
static SCRIPT_FAILURES: std::sync::Mutex<control::Failures> =
    std::sync::Mutex::new(control::Failures {
        count: 0,
        first: None,
    });

/// Where a line that the shell sends to the control loop comes from.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// The interactive prompt.
    Prompt,
    /// Line N of standard input, read as a script.
    Stdin(usize),
    /// Line N of the `--script` file.
    Script(&'a Path, usize),
}

/// Counts a failure of the command at `place` (the prompt's are not counted).
fn stdin_failed(place: Place<'_>) {
    let (failures, line) = match place {
        Place::Prompt => return,
        Place::Stdin(n) => (&STDIN_FAILURES, n),
        Place::Script(_, n) => (&SCRIPT_FAILURES, n),
    };
    failures.lock().unwrap_or_else(|e| e.into_inner()).add(line);
}

/// Takes commands from the control socket (`--control`) and from the `script`, or without
/// one from the interactive shell or standard input, one at a time ([`Controller::serve`]).
/// With a script and no socket, the host ends with the script.
fn serve(
    ctl: &mut Controller,
    args: &Args,
    script: Option<&[u8]>,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let prompt = script.is_none();
    let (tx, rx) = mpsc::channel::<Request>();
    let watch = Watch::default();
    let _socket = match &args.control {
        Some(path) => Some(socket::serve(
            path,
            tx.clone(),
            socket::Control {
                json: args.json,
                clocked: args.backend != "offline",
                stop: stop.clone(),
                cycle: Some(watch.cycle.clone()),
                quit: watch.quit.clone(),
                lost: watch.lost.clone(),
            },
        )?),
        None => None,
    };
    if prompt {
        let (tx, json, strict, names) = (tx.clone(), args.json, args.strict, watch.names.clone());
        let quit = watch.quit.clone();
        let aside = ShellWait::new(args, stop, &watch);
        std::thread::Builder::new()
            .name("fugue-shell".into())
            .spawn(move || prompt_lines(tx, (json, strict), names, &quit, &aside))
            .context("cannot start the shell")?;
    }
    if let (Some(bytes), Some(path)) = (script, &args.script) {
        let (tx, json, strict, quit) = (tx.clone(), args.json, args.strict, watch.quit.clone());
        let (bytes, path) = (bytes.to_vec(), path.clone());
        let aside = ShellWait::new(args, stop, &watch);
        std::thread::Builder::new()
            .name("fugue-script".into())
            .spawn(move || script_lines(&tx, &bytes, &path, (json, strict), &quit, &aside))
            .context("cannot start the script's thread")?;
    }
    drop(tx);
    ctl.serve(&rx, stop, &watch);
    // Release: pairs with the shell's Acquire in `ShellWait::stopping`.
    SERVED.store(true, std::sync::atomic::Ordering::Release);
    // The shell's command that is still waiting for the loop gets no reply now: it returns.
    drop(rx);
    wait_for_prompt();
    Ok(())
}

/// Set once the control loop has ended: a `wait` of the shell's own thread ends there.
static SERVED: AtomicBool = AtomicBool::new(false);

/// What the shell's `wait` needs when the host has a clock: it is waited in the shell's own
/// thread ([`control::wait_aside`]), as a control socket client's is, so that the control
/// loop serves the socket's clients meanwhile. (Offline, a `wait` runs the cycles, in the
/// control loop.)
struct ShellWait {
    clocked: bool,
    json: bool,
    /// The stop request (a signal).
    stop: Arc<AtomicBool>,
    /// Set by a source as it sends a `quit` ([`Watch::quit`]).
    quit: Arc<AtomicBool>,
    /// [`Watch::cycle`].
    cycle: Arc<std::sync::atomic::AtomicU64>,
    /// [`Watch::lost`].
    lost: Arc<std::sync::OnceLock<String>>,
}

impl ShellWait {
    /// What a source of `args`'s host (the shell, the script) waits with.
    fn new(args: &Args, stop: &Arc<AtomicBool>, watch: &Watch) -> ShellWait {
        ShellWait {
            clocked: args.backend != "offline",
            json: args.json,
            stop: stop.clone(),
            quit: watch.quit.clone(),
            cycle: watch.cycle.clone(),
            lost: watch.lost.clone(),
        }
    }

    /// Whether the host is stopping: a signal, a `quit` from any source, or the control
    /// loop's end.
    fn stopping(&self) -> bool {
        // Relaxed: request flags; Acquire: pairs with `serve`'s Release.
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
            || self.quit.load(std::sync::atomic::Ordering::Relaxed)
            || SERVED.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits `seconds` here and returns the `wait`'s reply.
    fn wait(&self, seconds: f64, tx: &mpsc::Sender<Request>) -> Option<String> {
        control::wait_aside(
            seconds,
            tx,
            &control::Aside {
                json: self.json,
                stopping: &|| self.stopping(),
                cycle: Some(&self.cycle),
                lost: &self.lost,
            },
            |d| {
                std::thread::sleep(d);
                false
            },
        )
    }
}

/// Sends `line` (line `place` of standard input, when it is read as a script) and prints its
/// reply; false when the shell ends there (the line quits, or the host is gone).
/// A `quit` sets `quit` as it is sent: a `wait` of another source running in the control
/// loop ends, so that the quit is served at once. A `wait` of a host with a clock is waited
/// here ([`ShellWait`]).
fn forward(
    tx: &mpsc::Sender<Request>,
    line: String,
    place: Place<'_>,
    quit: &AtomicBool,
    aside: &ShellWait,
) -> bool {
    let parsed = command::parse(&line);
    let quits = matches!(parsed, Ok(Some(Command::Quit)));
    if quits {
        quit.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // Until its reply is printed: the host, quitting, waits for it (`wait_for_prompt`).
    PROMPT_BUSY.store(true, std::sync::atomic::Ordering::Release);
    let _busy = PromptBusy;
    let reply = match parsed {
        Ok(Some(Command::Wait { seconds })) if aside.clocked => aside.wait(seconds, tx),
        _ => Request::ask(tx, line, None),
    };
    match reply {
        Some(r) if !r.is_empty() => {
            if control::reply_failed(&r) {
                stdin_failed(place);
            }
            let (r, to_stderr) = at_line(r, place);
            let written = if to_stderr {
                writeln!(std::io::stderr(), "{r}")
            } else {
                writeln!(std::io::stdout(), "{r}")
            };
            if let Err(e) = written {
                // The host stops, closing the recording, and then fails with the error.
                let _ = PROMPT_WRITE_ERROR.set(e);
                quit.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = Request::ask(tx, "quit".into(), None);
                return false;
            }
        }
        Some(_) => {}
        None => return false,
    }
    !quits
}

/// A line that the shell could not take as a command (not UTF-8, too long), `why`: sent to
/// the control loop as a refusal ([`Request::refuse`]), which counts it as a command that
/// failed, as the control socket's refusals are (under `--strict` the host stops there), and
/// its reply printed, naming line `place` of standard input. False when the shell ends there
/// (strict). Under `--strict` the quit request is set first: a `wait` of another source
/// running in the control loop ends, so that the stop comes at once.
fn refuse(
    tx: &mpsc::Sender<Request>,
    (json, strict): (bool, bool),
    why: &str,
    place: Place<'_>,
    quit: &AtomicBool,
) -> bool {
    if strict {
        quit.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    stdin_failed(place);
    let failed = Reply::failed("parse", why);
    // Until its reply is printed: the host, stopping there under --strict, waits for it
    // (`wait_for_prompt`), as for a command's.
    PROMPT_BUSY.store(true, std::sync::atomic::Ordering::Release);
    let _busy = PromptBusy;
    // The host gone: said all the same.
    let reply = Request::refuse(tx, failed.clone()).unwrap_or_else(|| failed.line(json));
    match at_line(reply, place) {
        (r, true) => eprintln!("{r}"),
        (r, false) => println!("{r}"),
    }
    !strict
}

/// A reply of failure to the command at line `place` of standard input, with that line named
/// (`error: line 3 of standard input: ...`; in JSON, `line` and `source`), or of the script
/// (`SCRIPT:3: error: ...`, on standard error; in JSON, `line` and `source`, on standard
/// output), so that a script's mistakes can be found; any other reply (success, the
/// interactive prompt's) as it is. Also whether it goes to standard error.
fn at_line(reply: String, place: Place<'_>) -> (String, bool) {
    match (place, reply.strip_prefix("error: ")) {
        (Place::Stdin(n), Some(rest)) => {
            (format!("error: line {n} of standard input: {rest}"), false)
        }
        (Place::Stdin(n), None) if reply.starts_with('{') => {
            (control::json_at(&reply, "standard input", n), false)
        }
        (Place::Script(path, n), Some(_)) => (format!("{}:{n}: {reply}", path.display()), true),
        (Place::Script(path, n), None) if reply.starts_with('{') => (
            control::json_at(&reply, &path.display().to_string(), n),
            false,
        ),
        _ => (reply, false),
    }
}

/// The `--script`'s lines, sent to the control loop one at a time as the shell sends
/// standard input's: a failure is said naming the script's line (on standard error; in JSON
/// on standard output), and counted; under `--strict` the script stops at the first. A
/// `wait` of a host with a clock is waited here ([`ShellWait`]), so that the control socket's
/// clients are served meanwhile.
fn script_lines(
    tx: &mpsc::Sender<Request>,
    bytes: &[u8],
    path: &Path,
    (json, strict): (bool, bool),
    quit: &AtomicBool,
    aside: &ShellWait,
) {
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        // A signal, a quit from elsewhere, or the host's end: the script's rest does not run.
        if aside.stopping() {
            return;
        }
        let place = Place::Script(path, i + 1);
        let Ok(line) = std::str::from_utf8(line) else {
            if !refuse(
                tx,
                (json, strict),
                "the line is not valid UTF-8; write commands in UTF-8",
                place,
                quit,
            ) {
                return;
            }
            continue;
        };
        let failed_before = SCRIPT_FAILURES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count;
        if !forward(tx, line.to_string(), place, quit, aside) {
            return;
        }
        let failed = SCRIPT_FAILURES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count
            > failed_before;
        if failed && strict {
            return;
        }
    }
}

/// What the interactive prompt says first.
const BANNER: &str = "fugue host: `help` lists the commands, `help COMMAND` says what one does; Tab completes commands, graph names and files";

/// The interactive prompt (a terminal: line editing, Tab completion, a history kept between
/// sessions: [`shell`]) or, when standard input is not a terminal, its lines.
fn prompt_lines(
    tx: mpsc::Sender<Request>,
    (json, strict): (bool, bool),
    names: shell::Names,
    quit: &AtomicBool,
    aside: &ShellWait,
) {
    if !std::io::stdin().is_terminal() {
        let mut buf = Vec::new();
        let mut lock = std::io::stdin().lock();
        let mut place = 0;
        loop {
            place += 1;
            // Lines are bounded as the control socket's are: a longer one is skipped and
            // said, never held whole.
            match read_bounded_line(&mut lock, &mut buf, true) {
                Ok(None) => return,
                // Input lost (standard input is a folder, a device that failed): the host
                // stops, as without a script it could read, and fails with it.
                Err(e) => {
                    let _ = INPUT_READ_ERROR.set((place, e));
                    quit.store(true, std::sync::atomic::Ordering::Relaxed);
                    let _ = Request::ask(&tx, "quit".into(), None);
                    return;
                }
                Ok(Some(false)) => {
                    let why = format!(
                        "the line is longer than {MAX_LINE} bytes; write one command per line"
                    );
                    if !refuse(&tx, (json, strict), &why, Place::Stdin(place), quit) {
                        return;
                    }
                    continue;
                }
                Ok(Some(true)) => {}
            }
            // An invisible byte-order mark before the first command is no part of it.
            let bytes = match buf.strip_prefix(BOM) {
                Some(rest) if place == 1 => rest,
                _ => &buf[..],
            };
            let Ok(line) = std::str::from_utf8(bytes) else {
                let why = "the line is not valid UTF-8; write commands in UTF-8";
                if !refuse(&tx, (json, strict), why, Place::Stdin(place), quit) {
                    return;
                }
                continue;
            };
            if !forward(&tx, line.to_string(), Place::Stdin(place), quit, aside) {
                return;
            }
        }
    }
    // As the terminal is before the line editor changes it: put back however the host ends.
    crate::terminal::save();
    let Some(mut rl) = shell::editor(names) else {
        return;
    };
    let mut history = History::at(history_path(
        std::env::var("XDG_STATE_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    ));
    for line in history.load() {
        let _ = rl.add_history_entry(line);
    }
    if !json {
        println!("{BANNER}");
    }
    loop {
        history.take_warning().iter().for_each(util::warning);
        // A quit from elsewhere (the socket), or the host ending: no new prompt takes the
        // terminal that is being given back.
        if quit.load(std::sync::atomic::Ordering::Relaxed) || crate::terminal::closed() {
            return;
        }
        match rl.readline("fugue> ") {
            // Bounded as standard input's and the socket's lines are: said, not run, and not
            // kept in the history.
            Ok(line) if line.len() > MAX_LINE => {
                let why =
                    format!("the line is longer than {MAX_LINE} bytes; write one command per line");
                if !refuse(&tx, (json, strict), &why, Place::Prompt, quit) {
                    return;
                }
            }
            Ok(text) => {
                // A paste of several lines (the terminal's bracketed paste keeps its line
                // breaks in one edit): each line is a command, run in order, as typed one by
                // one.
                for line in text.split(['\n', '\r']) {
                    if text.contains(['\n', '\r']) && line.trim().is_empty() {
                        continue;
                    }
                    if !line.trim().is_empty() {
                        // Without the space a completion leaves at the end.
                        let kept = line.trim_end();
                        let _ = rl.add_history_entry(kept);
                        history.add(kept);
                    }
                    if !forward(&tx, line.to_string(), Place::Prompt, quit, aside) {
                        return;
                    }
                }
            }
            // Ctrl-C at the prompt (the terminal gives it to the line editor as a key, not
            // as a signal): the host stops as on SIGINT, with its line and exit status 130,
            // as Ctrl-C during a `wait` does.
            Err(rustyline::error::ReadlineError::Interrupted) => {
                // SAFETY: kill has no memory-safety preconditions; the pid is this process's.
                unsafe { libc::kill(libc::getpid(), libc::SIGINT) };
                // Until the signals' thread has taken it (at most 2 s): returning first would
                // end the host as if standard input had ended, exit status 0.
                wait_briefly(|| crate::signals::received().is_some());
                return;
            }
            // A byte that is no UTF-8 (a terminal set to another encoding): the line up to it
            // is dropped, said as standard input's lines say it, and the host plays on.
            Err(rustyline::error::ReadlineError::Io(e))
                if e.kind() == std::io::ErrorKind::InvalidData =>
            {
                let why = "a byte that is not UTF-8 was typed, and the line up to it is dropped; set the terminal to UTF-8";
                if !refuse(&tx, (json, strict), why, Place::Prompt, quit) {
                    return;
                }
            }
            // Ctrl-D (the end of input) or a terminal that failed: quit cleanly.
            Err(_) => {
                quit.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = Request::ask(&tx, "quit".into(), None);
                return;
            }
        }
    }
}

/// `--timeout` of `fugue ctl`: seconds from 0.1 to a day.
fn ctl_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && (0.1..=86_400.0).contains(&t) => Ok(t),
        Ok(t) if t > 86_400.0 => Err(format!(
            "`{s}` is too many seconds for a time limit; give seconds from 0.1 to 86400"
        )),
        Ok(t) if t.is_finite() => Err(format!(
            "`{s}` is too short a time limit; give seconds from 0.1 to 86400"
        )),
        _ => Err(format!(
            "`{s}` is not a time limit; give seconds from 0.1 to 86400"
        )),
    }
}

/// The graph file a `fugue ctl ... load NAME FILE` names, as the host must read it: a
/// relative path is the user's, from where `fugue ctl` runs, not from the host's folder
/// (which the user may not know); made absolute when it names a file here.
fn from_here(file: &str) -> String {
    let path = std::path::Path::new(file);
    if path.is_absolute() || !path.exists() {
        return file.to_string();
    }
    match std::env::current_dir() {
        Ok(dir) => dir.join(path).to_string_lossy().into_owned(),
        Err(_) => file.to_string(),
    }
}

/// `fugue ctl`.
pub fn ctl(args: CtlArgs) -> anyhow::Result<()> {
    // Only blanks (`fugue ctl S ''`): no command at all, as a comment is, not a command
    // named ``.
    if args.command.iter().all(|w| w.trim().is_empty()) {
        return Err(control::ControlError::NoCommand.into());
    }
    // An option after the socket (`fugue ctl S --timeout 5 list`, `fugue ctl S --json list`)
    // would be sent as the command's first word.
    if let Some(first) = args.command.first().filter(|w| w.starts_with("--")) {
        return Err(util::usage(util::shorten_words(&format!(
            "`{first}` is not a command of the host: fugue ctl's one option, --timeout SECONDS, comes before the socket (`fugue ctl --timeout 5 SOCKET COMMAND`), and the replies are JSON when the host runs with --json"
        ))));
    }
    if args.command.iter().any(|w| w.contains(['\n', '\r'])) {
        return Err(util::usage(
            "fugue ctl sends one command: its words must not hold a line break (call it once per command)",
        ));
    }
    // One argument holding the whole command (`fugue ctl S 'load a x.ag'`) is sent as the
    // line it is (a `load`'s file made absolute as below: its words read as the host reads
    // them); words given apart are quoted where they need it (a file name with spaces).
    let line = match args.command.as_slice() {
        [one] if one.trim().contains(char::is_whitespace) => match command::parse(one) {
            Ok(Some(Command::Load { name, file })) => {
                command::quote(&["load".to_string(), name, from_here(&file.to_string_lossy())])
            }
            _ => one.clone(),
        },
        [load, name, file] if load == "load" => {
            command::quote(&[load.clone(), name.clone(), from_here(file)])
        }
        words => command::quote(words),
    };
    let reply = socket::send(
        &args.socket,
        &line,
        std::time::Duration::from_secs_f64(args.timeout),
    )?;
    println!("{reply}");
    if control::reply_failed(&reply) {
        anyhow::bail!("the command was refused (its reply above says why)");
    }
    Ok(())
}
