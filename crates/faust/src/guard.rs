//! Programs compiled first in a child process.
//!
//! libfaust's compiler runs inside the process that calls it, and a program that crashes it
//! (Faust 2.54 dies with a segmentation fault on some programs, its own `faust` command too)
//! would end that process: a render without a word, a playing host with its audio. When a
//! helper program is set ([`use_helper`]; `fugue` sets itself, run with [`HELPER_ARG`]), a
//! program that is not already kept on disk is compiled first by a child process, which
//! writes the compiled code to a file (the disk cache's, or a temporary one). This process
//! then reads the code from that file instead of compiling it: a crash ends only the child,
//! and is reported as the program's error. A program refused by Faust is refused with the
//! child's message, as an in-process compilation gives it. Where the compiled code cannot
//! be written to a file (the interpreter backend), this process compiles the program again
//! once the child has shown that it compiles.
//!
//! The child is started with `posix_spawn` (the standard library's `Command`), which does not
//! copy the parent's memory: a host's audio threads take no page fault for it.
//!
//! [`HELPER_ENV`] changes the helper program, or turns the child off (`off`).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

use crate::factory::{Backend, Faust, Source};
use crate::FaustError;

/// The first argument that makes `fugue` the helper: it reads a job on its standard input,
/// compiles it and says how it went on its standard output ([`helper_main`]).
pub const HELPER_ARG: &str = "__faust-compile";

/// The environment variable that names the helper program (run with [`HELPER_ARG`]), instead
/// of the one set by [`use_helper`]; `off` compiles every program in this process.
pub const HELPER_ENV: &str = "FUGUE_FAUST_HELPER";

/// The largest job or answer read: the program (at most [`crate::MAX_PROGRAM_BYTES`]) and a
/// few paths, or Faust's message.
const MAX_MESSAGE: u64 = crate::MAX_PROGRAM_BYTES + (1 << 20);

static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Makes `program` the helper that compiles programs first (see the module's documentation).
/// The first call wins.
pub fn use_helper(program: PathBuf) {
    let _ = HELPER.set(program);
}

/// The helper program in force, if any.
fn helper() -> Option<PathBuf> {
    match std::env::var_os(HELPER_ENV) {
        Some(v) if v == "off" => None,
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => HELPER.get().cloned(),
    }
}

/// How the child's compilation went.
pub(crate) enum Tried {
    /// No child was run (no helper, or it could not be started): compile here.
    NotRun,
    /// Compiled; its code is in the file asked for, when it could be written.
    Compiled,
    /// Faust refused the program, or its state is too large: the error, as the child gave it.
    Refused(FaustError),
}

/// The job sent to the child.
struct Job {
    /// The parent's process id: a child whose parent is gone by the time it starts stops.
    parent: u32,
    lib: PathBuf,
    backend: Backend,
    /// Where the child writes the compiled code (LLVM), or nothing.
    out: Option<PathBuf>,
    source: Source,
}

/// Appends `bytes` to `buf` after their length.
fn put(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.extend_from_slice(format!("{}\n", bytes.len()).as_bytes());
    buf.extend_from_slice(bytes);
}

/// Reads one field that [`put`] wrote from `data` at `*at`.
fn take<'a>(data: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let rest = data.get(*at..)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let len: usize = std::str::from_utf8(&rest[..nl]).ok()?.parse().ok()?;
    let field = rest.get(nl + 1..nl + 1 + len)?;
    *at += nl + 1 + len;
    Some(field)
}

impl Job {
    fn encode(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        put(&mut buf, self.parent.to_string().as_bytes());
        put(&mut buf, self.lib.as_os_str().as_bytes());
        put(&mut buf, self.backend.name().as_bytes());
        put(
            &mut buf,
            self.out
                .as_deref()
                .map_or(&[][..], |p| p.as_os_str().as_bytes()),
        );
        put(&mut buf, self.source.name.as_bytes());
        put(&mut buf, self.source.includes.len().to_string().as_bytes());
        for dir in &self.source.includes {
            put(&mut buf, dir.as_os_str().as_bytes());
        }
        put(&mut buf, self.source.code.as_bytes());
        buf
    }

    fn decode(data: &[u8]) -> Option<Job> {
        let at = &mut 0;
        let path = |b: &[u8]| PathBuf::from(OsString::from_vec(b.to_vec()));
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
        let parent = text(take(data, at)?)?.parse().ok()?;
        let lib = path(take(data, at)?);
        let backend = match take(data, at)? {
            b"llvm" => Backend::Llvm,
            b"interp" => Backend::Interp,
            _ => return None,
        };
        let out = Some(take(data, at)?).filter(|b| !b.is_empty()).map(path);
        let name = text(take(data, at)?)?;
        let n: usize = text(take(data, at)?)?.parse().ok()?;
        let includes = (0..n.min(4096))
            .map(|_| take(data, at).map(path))
            .collect::<Option<Vec<_>>>()?;
        let code = text(take(data, at)?)?;
        Some(Job {
            parent,
            lib,
            backend,
            out,
            source: Source {
                code,
                name,
                includes,
            },
        })
    }
}

/// Compiles `source` in a child process first (see the module's documentation), the code
/// written to `out` when given. `lib` is the libfaust this process uses, which the child
/// opens too.
pub(crate) fn try_in_child(
    lib: &Path,
    source: &Source,
    backend: Backend,
    out: Option<&Path>,
) -> Result<Tried, FaustError> {
    let Some(program) = helper() else {
        return Ok(Tried::NotRun);
    };
    // Read here first, so that a value that is not a number is said by this process (the
    // child's standard error is not shown).
    let _ = memory_limit();
    if STOP.load(Ordering::SeqCst) {
        return Err(stopped(source));
    }
    let job = Job {
        parent: std::process::id(),
        lib: lib.to_path_buf(),
        backend,
        out: out.map(Path::to_path_buf),
        source: source.clone(),
    }
    .encode();
    let child = Command::new(&program)
        .arg(HELPER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Read when the child aborts: the C++ runtime and LLVM say there that an allocation
        // failed.
        .stderr(Stdio::piped())
        // A group of its own, stopped whole (`kill_group`): a helper that starts processes
        // of its own (a script that does not `exec`) leaves none running, and none holding
        // the answer's pipe open past the time limit.
        .process_group(0)
        .spawn();
    let Ok(mut child) = child else {
        return Ok(Tried::NotRun);
    };
    // Seen by [`stop_child`] from here on; a stop asked meanwhile is done now.
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    if STOP.load(Ordering::SeqCst) {
        kill_group(child.id() as i32);
    }
    // The job is written by a thread of its own, so that a child that answers before it has
    // read everything cannot block this one. A child that stops reading makes the write fail
    // (EPIPE): SIGPIPE, which would end this process, is blocked on that thread.
    let stdin = child.stdin.take();
    let writer = std::thread::Builder::new()
        .name("fugue-faust-job".into())
        .spawn(move || {
            block_sigpipe();
            if let Some(mut s) = stdin {
                let _ = s.write_all(&job);
            }
        });
    // The time limit: a watchdog kills the child when it runs past it (the end of the
    // compilation, below, tells the watchdog to stop first).
    let pid = child.id() as i32;
    let (done, ended) = std::sync::mpsc::channel::<()>();
    // The watchdog returns whether it stopped the child.
    let watchdog = time_limit().and_then(|limit| {
        std::thread::Builder::new()
            .name("fugue-faust-limit".into())
            .spawn(move || {
                let late = matches!(
                    ended.recv_timeout(limit),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                );
                if late {
                    // The child is not reaped: the compiling thread reaps it only after this
                    // thread has ended (it waits for the child's exit without reaping it
                    // first), so its pid, its group's id, is still its own.
                    kill_group(pid);
                }
                late
            })
            // A watchdog that cannot be started leaves the compilation without a limit.
            .ok()
    });
    // The child's standard error, its last `MAX_ERRORS` bytes kept, read to its end on a
    // thread of its own (a child blocked writing there would never answer).
    let errors = ChildErrors::start(child.stderr.take());
    let mut answer = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(MAX_MESSAGE).read_to_end(&mut answer);
    }
    // The child's end, without reaping it (its pid, its group's id, stays its own until
    // `reap` below); then the watchdog, told, is gone: it can never signal another process.
    let exited = wait_exited(pid);
    let timed_out = watchdog.is_some_and(|w| {
        drop(done);
        w.join().unwrap_or(false)
    });
    // What the child started and left running (a helper script's background process)
    // would hold its standard error open: its group is stopped with it (the zombie leader,
    // not reaped yet, keeps the group's id its own).
    if exited {
        kill_group(pid);
    }
    let status = reap(pid);
    CHILD.store(0, Ordering::SeqCst);
    if let Ok(w) = writer {
        let _ = w.join();
    }
    let Ok(status) = status else {
        return Ok(Tried::NotRun);
    };
    // What the child said on its standard error (its group gone, the pipe is at its end).
    let said = errors.join().unwrap_or_default();
    if let Some(signal) = status.signal() {
        // What a child ended mid-write leaves beside the file it was writing.
        if let Some(out) = out {
            for ext in ["part", "state-part"] {
                let _ = std::fs::remove_file(out.with_extension(format!("{}.{ext}", child.id())));
            }
        }
        let (name, how) = (source.name.clone(), signal_name(signal));
        // Stopped by this process, or by hang-up, Ctrl-C or `kill`: the child did not fail.
        return Err(if STOP.load(Ordering::SeqCst) {
            stopped(source)
        } else if timed_out {
            FaustError::TimedOut {
                name,
                seconds: time_limit().map_or(0, |l| l.as_secs()),
            }
        } else if matches!(signal, 1 | 2 | 15) {
            FaustError::Stopped { name, how }
        } else if signal == libc::SIGABRT && says_out_of_memory(&said) {
            FaustError::CompileMemory {
                name,
                mib: limit_mib(),
            }
        } else {
            FaustError::Crashed {
                name,
                how,
                interp: backend == Backend::Interp,
            }
        });
    }
    let answer = String::from_utf8_lossy(&answer);
    let (word, rest) = answer.split_once('\n').unwrap_or((&answer, ""));
    Ok(match (status.code(), word) {
        (Some(0), "compiled") => Tried::Compiled,
        (Some(1), "refused") => Tried::Refused(FaustError::Compile {
            name: source.name.clone(),
            message: rest.to_string(),
        }),
        (Some(1), "large") => match rest.trim().parse() {
            Ok(bytes) => Tried::Refused(FaustError::TooLarge {
                name: source.name.clone(),
                bytes,
            }),
            Err(_) => Tried::NotRun,
        },
        (Some(1), "memory") => Tried::Refused(FaustError::CompileMemory {
            name: source.name.clone(),
            mib: limit_mib(),
        }),
        (Some(1), "instance") => Tried::Refused(FaustError::Instance {
            name: source.name.clone(),
        }),
        (Some(1), "foreign") => Tried::Refused(FaustError::Foreign {
            name: source.name.clone(),
            functions: rest.split_whitespace().map(str::to_string).collect(),
        }),
        (Some(1), "soundfile") => Tried::Refused(FaustError::InterpSoundfile {
            name: source.name.clone(),
            labels: rest.lines().map(str::to_string).collect(),
        }),
        (Some(1), "constants") => Tried::Refused(FaustError::ForeignConstant {
            name: source.name.clone(),
            names: rest.split_whitespace().map(str::to_string).collect(),
        }),
        // No answer and a plain ending: a helper that could not read the job or open
        // libfaust (which this process did), or whose compilation failed in a way it cannot
        // say (the code's file not written) (2), or a program that is not this protocol's
        // helper (0): compile here, as without a helper.
        (Some(0 | 2), "") => Tried::NotRun,
        // Any other ending came while compiling, under the helper's limits: compiling here,
        // without them, could take the machine's memory.
        (_, "") if says_out_of_memory(&said) => Tried::Refused(FaustError::CompileMemory {
            name: source.name.clone(),
            mib: limit_mib(),
        }),
        (code, word) => Tried::Refused(FaustError::HelperEnded {
            name: source.name.clone(),
            helper: program.display().to_string(),
            how: match code {
                Some(c) => format!("exit status {c}"),
                None => "no exit status".to_string(),
            },
            answered: !word.is_empty(),
        }),
    })
}

/// Waits for child `pid` to end, without reaping it; whether it did (not when the child was
/// reaped by someone else, a process that ignores SIGCHLD: its pid may then be another's).
fn wait_exited(pid: i32) -> bool {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid buffer for waitid, which fills it.
        let r = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return true;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// Reaps child `pid`, which has ended ([`wait_exited`]): how it ended.
fn reap(pid: i32) -> std::io::Result<std::process::ExitStatus> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is valid, writable, and owned here.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Ok(std::process::ExitStatus::from_raw(status));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The most of the child's standard error kept (its end).
const MAX_ERRORS: usize = 64 << 10;

/// The reader of a child's standard error ([`MAX_ERRORS`] bytes kept, the rest read and
/// dropped), on a thread of its own.
struct ChildErrors(Option<std::sync::mpsc::Receiver<Vec<u8>>>);

impl ChildErrors {
    fn start(stderr: Option<std::process::ChildStderr>) -> ChildErrors {
        let (tx, rx) = std::sync::mpsc::channel();
        let started = stderr.and_then(|mut e| {
            std::thread::Builder::new()
                .name("fugue-faust-errors".into())
                .spawn(move || {
                    let mut kept = Vec::new();
                    let mut buf = [0u8; 8192];
                    while let Ok(n @ 1..) = e.read(&mut buf) {
                        kept.extend_from_slice(&buf[..n]);
                        if kept.len() > 2 * MAX_ERRORS {
                            kept.drain(..kept.len() - MAX_ERRORS);
                        }
                    }
                    let _ = tx.send(kept);
                })
                .ok()
        });
        ChildErrors(started.map(|_| rx))
    }

    /// What the child wrote (its end), once every writer closed its standard error; nothing
    /// after a second (a process the child started may hold it open).
    fn join(self) -> Option<Vec<u8>> {
        self.0
            .and_then(|rx| rx.recv_timeout(std::time::Duration::from_secs(1)).ok())
    }
}

/// The environment variable that sets the time limit of a compilation in the child process,
/// in whole seconds (0: none; default [`DEFAULT_TIME_LIMIT`]).
pub const TIME_LIMIT_ENV: &str = "FUGUE_FAUST_TIME_LIMIT";

/// How long a compilation in the child may take, by default, before it is stopped: far
/// beyond what a program of the 16 MiB a file may hold took here (Faust's examples compile
/// in well under a second; the largest physical models in seconds), short enough that a
/// host whose `load` met a compiler that never ends takes commands again.
pub const DEFAULT_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// The time limit of a compilation in the child ([`TIME_LIMIT_ENV`]; `None`: none). A value
/// that is not a whole number of seconds is the default, said once on standard error.
fn time_limit() -> Option<std::time::Duration> {
    static LIMIT: OnceLock<Option<std::time::Duration>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let default = DEFAULT_TIME_LIMIT.as_secs();
        let said = format!("seconds; Faust compilations stop after {default} s");
        limit_from_env(TIME_LIMIT_ENV, default, &said)
            .map(|s| std::time::Duration::from_secs(s.min(1 << 32)))
    })
}

/// A limit of the child's, as the environment variable `env` sets it: a whole number
/// (0: `None`, no limit), `default` when unset or empty, and `default` too, said once on
/// standard error, when not a whole number (`unit_and_default` ends that sentence:
/// "seconds; Faust compilations stop after 120 s").
fn limit_from_env(env: &str, default: u64, unit_and_default: &str) -> Option<u64> {
    let v = std::env::var(env).unwrap_or_default();
    if v.trim().is_empty() {
        return Some(default);
    }
    match v.trim().parse::<u64>() {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(_) => {
            eprintln!("fugue: warning: {env}={v}: not a whole number of {unit_and_default}");
            Some(default)
        }
    }
}

/// The environment variable that sets the memory a compilation in the child process may
/// use, in whole MiB (0: no limit; default [`DEFAULT_MEMORY_LIMIT`]).
pub const MEMORY_LIMIT_ENV: &str = "FUGUE_FAUST_MEMORY_LIMIT";

/// The most memory the helper may take by default (`limit_memory`, its data limit). The
/// compiler's own needs vary with the program: the largest examples Faust 2.54 ships take
/// about 720 MiB (`SAM/virtualAnalog`, LLVM). A table of a program's state is allocated with
/// the compiled code (LLVM), before its size can be read: a table of 200 million samples took
/// 860 MiB, one of 500 million 2 GiB. Past the limit the compilation fails
/// ([`FaustError::CompileMemory`]) instead of taking the machine's memory.
pub const DEFAULT_MEMORY_LIMIT: u64 = 2 << 30;

/// The least memory limit, in MiB: the helper's own process and libfaust need some to start.
const MIN_MEMORY_MIB: u64 = 64;

/// The largest memory limit, in MiB (2^40 MiB, 1 EiB).
const MAX_MEMORY_MIB: u64 = 1 << 40;

/// The memory a compilation in the child may use, in bytes ([`MEMORY_LIMIT_ENV`]; `None`:
/// no limit). A value that is not a whole number of MiB is the default, one below 64 MiB (what
/// the helper needs to start) is 64 MiB, and one above 2^40 MiB (1 EiB) is 2^40 MiB, each said
/// once on standard error.
pub fn memory_limit() -> Option<u64> {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let default = DEFAULT_MEMORY_LIMIT >> 20;
        let said = format!("MiB; Faust compilations may use {default} MiB");
        limit_from_env(MEMORY_LIMIT_ENV, default, &said).map(|mib| {
            let used = mib.clamp(MIN_MEMORY_MIB, MAX_MEMORY_MIB);
            if used < mib {
                eprintln!(
                    "fugue: warning: {MEMORY_LIMIT_ENV}={mib}: above the largest limit, {MAX_MEMORY_MIB} MiB (1 EiB); Faust compilations may use {used} MiB"
                );
            } else if used > mib {
                eprintln!(
                    "fugue: warning: {MEMORY_LIMIT_ENV}={mib}: below the {MIN_MEMORY_MIB} MiB a Faust compilation needs to start (0: no limit); Faust compilations may use {used} MiB"
                );
            }
            used << 20
        })
    })
}

/// Whether what a child that failed wrote on its standard error says it ran out of memory:
/// the C++ runtime's words for an allocation that failed (`std::bad_alloc`, uncaught),
/// LLVM's (its allocator reports a failed allocation and aborts), Rust's (the helper's own),
/// Faust's parser's (which then ends the process) or the C library's (a thread's
/// thread-local data refused: it ends the process). Not minding case.
fn says_out_of_memory(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr).to_ascii_lowercase();
    [
        "bad_alloc",
        "llvm error: out of memory",
        "unable to allocate",
        "memory allocation of",
        "memory exhausted",
        "cannot allocate memory",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// The memory limit in MiB, as a compilation refused for memory says it.
fn limit_mib() -> u64 {
    memory_limit().map_or(0, |b| b >> 20)
}

/// Lowers the calling process's data limit (its heap and private writable mappings,
/// `RLIMIT_DATA`) to `bytes`, unless it is lower already. Best effort.
fn limit_memory(bytes: u64) {
    // SAFETY: getrlimit and setrlimit read and write a plain struct owned here.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_DATA, &mut lim) != 0 {
            return;
        }
        let soft = bytes as libc::rlim_t;
        if lim.rlim_cur != libc::RLIM_INFINITY && lim.rlim_cur <= soft {
            return;
        }
        lim.rlim_cur = soft;
        let _ = libc::setrlimit(libc::RLIMIT_DATA, &lim);
    }
}

/// The child compiling now (its process id; 0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Set by [`stop_child`]: no child is started any more.
static STOP: AtomicBool = AtomicBool::new(false);

/// Stops the compilation under way in a child process, and any later one: for a process
/// that was asked to stop (a signal), whose compilation would otherwise go on to its end.
/// The compilation then fails with [`FaustError::Stopped`]. Safe to call from any thread.
pub fn stop_child() {
    STOP.store(true, Ordering::SeqCst);
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // The pid is this process's child, cleared right after `wait` reaped it (a pid is
        // not given to another process in that instant).
        kill_group(pid);
    }
}

/// Kills the helper `pid` and every process of its group (it leads one: started with
/// `process_group(0)`).
fn kill_group(pid: i32) {
    // SAFETY: kill takes plain integers; a negative pid names the process group.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
}

/// The error of a compilation not started because the process is stopping.
fn stopped(source: &Source) -> FaustError {
    FaustError::Stopped {
        name: source.name.clone(),
        how: "fugue was asked to stop".to_string(),
    }
}

/// Blocks SIGPIPE on the calling thread: a write to a closed pipe then fails with EPIPE
/// instead of ending the process.
fn block_sigpipe() {
    // SAFETY: a zeroed sigset_t is a valid argument for sigemptyset, which initialises it;
    // pthread_sigmask reads it and writes no old set (null).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// `signal` in words: "segmentation fault, signal 11".
fn signal_name(signal: i32) -> String {
    let name = match signal {
        4 => "illegal instruction",
        6 => "abort",
        7 => "bus error",
        8 => "arithmetic exception",
        9 => "killed, perhaps for lack of memory",
        11 => "segmentation fault",
        1 => "hang-up",
        2 => "interrupted",
        15 => "terminated",
        _ => "ended by a signal",
    };
    format!("{name}, signal {signal}")
}

/// The helper's side: reads a job on standard input, compiles it with the libfaust it names
/// (the code written where it asks), and writes `compiled`, or `refused`, `large` or
/// `instance` and the error, on standard output. Exit status 0 when compiled, 1 when
/// refused, 2 for a job it cannot read or a libfaust it cannot open.
pub fn helper_main() -> ExitCode {
    let mut data = Vec::new();
    if std::io::stdin()
        .take(MAX_MESSAGE)
        .read_to_end(&mut data)
        .is_err()
    {
        return ExitCode::from(2);
    }
    let Some(job) = Job::decode(&data) else {
        return ExitCode::from(2);
    };
    // Ends with its parent, however the parent ends; a parent already gone: nothing to do.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid takes nothing.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        if libc::getppid() as u32 != job.parent {
            return ExitCode::from(2);
        }
    }
    if let Some(bytes) = memory_limit() {
        limit_memory(bytes);
    }
    let faust = match Faust::open(&job.lib) {
        Ok(f) => f,
        Err(e) => {
            // This process's parent opened it: when the loader could not map it for want of
            // memory, the limit is why; otherwise (the file changed since), not a compilation.
            let why = e.to_string().to_ascii_lowercase();
            if memory_limit().is_some()
                && (why.contains("cannot allocate memory") || why.contains("failed to map"))
            {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(b"memory\n").and_then(|()| out.flush());
                return ExitCode::from(1);
            }
            return ExitCode::from(2);
        }
    };
    let (code, answer) = match faust.compile_alone(&job.source, job.backend, job.out.as_deref()) {
        Ok(()) => (0, "compiled\n".to_string()),
        // LLVM's words when the limit refused the memory for the program's code and tables.
        Err(FaustError::Compile { message, .. })
            if message.contains("Unable to allocate section memory") =>
        {
            (1, "memory\n".to_string())
        }
        Err(FaustError::Compile { message, .. }) => (1, format!("refused\n{message}")),
        Err(FaustError::TooLarge { bytes, .. }) => (1, format!("large\n{bytes}")),
        Err(FaustError::Instance { .. }) => (1, "instance\n".to_string()),
        Err(FaustError::Foreign { functions, .. }) => {
            (1, format!("foreign\n{}", functions.join(" ")))
        }
        Err(FaustError::InterpSoundfile { labels, .. }) => {
            (1, format!("soundfile\n{}", labels.join("\n")))
        }
        Err(FaustError::ForeignConstant { names, .. }) => {
            (1, format!("constants\n{}", names.join(" ")))
        }
        Err(_) => (2, String::new()),
    };
    let mut out = std::io::stdout().lock();
    if out
        .write_all(answer.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abort_for_want_of_memory_is_told_by_its_words() {
        let cxx = b"terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n";
        assert!(says_out_of_memory(cxx));
        assert!(says_out_of_memory(
            b"LLVM ERROR: out of memory\nAllocation failed\n"
        ));
        assert!(says_out_of_memory(
            b"cannot allocate memory for thread-local data: ABORT\n"
        ));
        assert!(says_out_of_memory(
            b"memory allocation of 4096 bytes failed\n"
        ));
        assert!(!says_out_of_memory(b"Assertion `isa<X>(Val)' failed.\n"));
        assert!(!says_out_of_memory(b""));
    }

    #[test]
    fn a_job_reads_back_as_written() {
        let job = Job {
            parent: 4242,
            lib: PathBuf::from("/usr/lib/libfaust.so.2"),
            backend: Backend::Interp,
            out: Some(PathBuf::from("/tmp/a b\nc.fmc")),
            source: Source {
                code: "process = _ : *(0.5);\n// é 12\n".to_string(),
                name: "dir/prog.dsp".to_string(),
                includes: vec![PathBuf::from("/x"), PathBuf::from("rel/y")],
            },
        };
        let back = Job::decode(&job.encode()).expect("decodes");
        assert_eq!(back.parent, 4242);
        assert_eq!(back.lib, job.lib);
        assert_eq!(back.backend, job.backend);
        assert_eq!(back.out, job.out);
        assert_eq!(back.source, job.source);
        let none = Job { out: None, ..job };
        assert_eq!(Job::decode(&none.encode()).expect("decodes").out, None);
        // Cut anywhere, a job is refused rather than misread.
        let bytes = none.encode();
        for cut in 0..bytes.len() {
            assert!(Job::decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
    }
}
