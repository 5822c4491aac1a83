//! The JACK backend: a JACK client (never starts a server) with one output port per sink
//! channel (`out_1`, `out_2`, ...) and one input port per source channel (`in_1`, ...). The
//! graph is compiled for JACK's sample rate and buffer size.
//!
//! **Buffer-size changes.** JACK announces a new size through the `buffer_size` callback,
//! which only records it. The control thread (the caller of [`run`](crate::run())) sees the
//! new size, compiles a new plan and builds its executor, and hands the pair to the process
//! callback through [`Handoff`]: an atomic pointer `pending` (control → audio) and an atomic
//! pointer `retired` (audio → control). The callback swaps the pending engine in at a cycle
//! boundary and puts the old one in `retired`; the control thread frees it. The callback
//! never allocates or frees: until a plan of the right size arrives, it outputs silence.
//!
//! Protocol: the control thread publishes into `pending` only when both `pending` and
//! `retired` are empty, so the callback, which retires exactly one engine per engine it
//! takes, always finds `retired` empty. The multi-graph host hands its whole set of graphs
//! over through the same [`Handoff`] when JACK's buffer size changes.

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ::jack as j;
use fugue_graph::TaskGraph;

use crate::cycle::CycleBody;
use crate::engine::Engine;
use crate::options::{EndReason, RunError, RunOptions, RunReport};
use crate::stats::Summary;

/// The two one-slot mailboxes between the control thread and the process callback, for
/// whatever the callback runs: an [`Engine`] here, the host's whole set of graphs in the
/// multi-graph host.
pub struct Handoff<T: Send = Engine> {
    pending: AtomicPtr<T>,
    retired: AtomicPtr<T>,
}

impl<T: Send> Default for Handoff<T> {
    fn default() -> Self {
        Handoff {
            pending: AtomicPtr::new(ptr::null_mut()),
            retired: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

impl<T: Send> std::fmt::Debug for Handoff<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff")
            .field("pending", &self.pending)
            .field("retired", &self.retired)
            .finish()
    }
}

impl<T: Send> Handoff<T> {
    /// Control thread: offers `value` to the callback. Returns it back when a previous one
    /// is still pending or retired (try again after [`Handoff::collect`]).
    pub fn offer(&self, value: Box<T>) -> Result<(), Box<T>> {
        // Acquire pairs with the callback's Release in `retire`: a value it retired is seen.
        if !self.pending.load(Ordering::Acquire).is_null()
            || !self.retired.load(Ordering::Acquire).is_null()
        {
            return Err(value);
        }
        // Release pairs with the callback's Acquire swap in `take_pending`: the value's
        // contents happen before the callback uses them.
        self.pending.store(Box::into_raw(value), Ordering::Release);
        Ok(())
    }

    /// Control thread: takes back a value that is still pending (not yet taken), to replace
    /// it with a newer one.
    pub fn withdraw(&self) -> Option<Box<T>> {
        // AcqRel: pairs with `offer`'s Release and the callback's swap; whoever swaps the
        // pointer out owns it.
        let p = self.pending.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: a non-null `pending` came from `Box::into_raw` in `offer`, and the swap
        // made this thread its only owner.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Control thread: takes the value the callback retired, to free it here.
    pub fn collect(&self) -> Option<Box<T>> {
        // AcqRel: pairs with the callback's Release store in `retire`.
        let p = self.retired.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: a non-null `retired` came from `Box::into_raw` (a value first offered or
        // first installed by the control thread), and the swap made this thread its owner.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Callback: swaps a pending value into `current`, retiring the old one. Never
    /// allocates or frees. Returns whether a new value was installed.
    #[inline]
    pub fn take(&self, current: &mut Option<Box<T>>) -> bool {
        let Some(new) = self.take_pending() else {
            return false;
        };
        if let Some(old) = current.replace(new) {
            self.retire(old);
        }
        true
    }

    /// Callback: takes the pending value, if any; the caller installs it and hands the one
    /// it replaces to [`Handoff::retire`]. Never allocates or frees.
    #[inline]
    pub fn take_pending(&self) -> Option<Box<T>> {
        // AcqRel: Acquire pairs with `offer`'s Release store.
        let p = self.pending.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: a non-null `p` came from `Box::into_raw` in `offer`; the swap made this
        // thread its only owner. Rebuilding the box does not allocate.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }

    /// Callback: hands the value that a taken one replaced back to the control thread
    /// ([`Handoff::collect`]). Call it once per value taken. Never allocates or frees.
    #[inline]
    pub fn retire(&self, old: Box<T>) {
        // Release pairs with the Acquire in `collect`/`offer`. `retired` is empty here:
        // `offer` published only when it was, and one value is retired per value taken.
        self.retired.store(Box::into_raw(old), Ordering::Release);
    }
}

impl<T: Send> Drop for Handoff<T> {
    fn drop(&mut self) {
        drop(self.withdraw());
        drop(self.collect());
    }
}

/// State shared by the callbacks and the control thread.
#[derive(Debug, Default)]
struct Shared {
    xruns: AtomicU64,
    gone: AtomicBool,
    reason: Mutex<String>,
    /// The buffer size JACK announced last.
    wanted_block: AtomicU32,
    silent: AtomicU64,
    /// Ends the process thread before deactivation.
    quit: Quit,
}

struct Notifications {
    shared: Arc<Shared>,
}

impl j::NotificationHandler for Notifications {
    deferred_notifications!();

    fn xrun(&mut self, _: &j::Client) -> j::Control {
        defer_cancellation();
        // Relaxed: a counter read at the end.
        self.shared.xruns.fetch_add(1, Ordering::Relaxed);
        j::Control::Continue
    }

    unsafe fn shutdown(&mut self, _status: j::ClientStatus, reason: &str) {
        defer_cancellation();
        if let Ok(mut r) = self.shared.reason.lock() {
            *r = reason.to_string();
        }
        // Release pairs with the control loop's Acquire load: the reason is written first.
        self.shared.gone.store(true, Ordering::Release);
    }
}

/// The server's frame clock as seen from the process callback: the span from the start of
/// the first cycle to the end of the last, in 64 bits (JACK's frame time is 32 bits and wraps
/// after ~24 h at 48 kHz).
#[derive(Debug, Default)]
struct ServerClock {
    /// The frame time at the start of the last cycle seen.
    last: Option<u32>,
    /// Frames from the start of the first cycle to the start of the last one.
    span: u64,
    /// Frames in the last cycle seen.
    frames: u64,
}

impl ServerClock {
    fn cycle(&mut self, start: u32, frames: usize) {
        if let Some(prev) = self.last {
            self.span += u64::from(start.wrapping_sub(prev));
        }
        self.last = Some(start);
        self.frames = frames as u64;
    }

    /// Frames from the start of the first cycle to the end of the last (0 if none ran).
    fn total(&self) -> u64 {
        if self.last.is_some() {
            self.span + self.frames
        } else {
            0
        }
    }
}

/// Pins JACK's process thread, at its first callback, to the core the audio thread takes
/// when threads are pinned (the workers take the others). Left where JACK puts it, its
/// SCHED_FIFO thread may sit on a worker's core: that worker then cannot run until the cycle
/// it waits for is over, and every cycle runs on JACK's thread alone.
pub(crate) struct PinOnce {
    core: Option<usize>,
    /// The system's error number when the pin was refused (0: none, -1: no number).
    failed: Arc<AtomicI32>,
}

impl PinOnce {
    /// Pins to `core` at the first callback; nothing when `None` (threads not pinned).
    pub(crate) fn new(core: Option<usize>) -> PinOnce {
        // The process's cores, which the pin records first, read here, off the callback.
        let _ = fugue_exec::placement::allowed_cores();
        PinOnce {
            core,
            failed: Arc::default(),
        }
    }

    /// Callback: pins the calling thread the first time (one system call; no allocation,
    /// lock or wait), and records a refusal for [`pin_warning`].
    #[inline]
    pub(crate) fn now(&mut self) {
        if let Some(core) = self.core.take() {
            if let Err(e) = fugue_exec::placement::pin_current(core) {
                let errno = match &e {
                    fugue_exec::placement::PlacementError::Pin { source, .. } => {
                        source.raw_os_error().unwrap_or(-1)
                    }
                    _ => -1,
                };
                // Relaxed: one number; nothing else is published with it.
                self.failed.store(errno, Ordering::Relaxed);
            }
        }
    }

    /// What [`pin_warning`] reads: the refusal, shared with the control thread.
    pub(crate) fn refusal(&self) -> (Option<usize>, Arc<AtomicI32>) {
        (self.core, self.failed.clone())
    }
}

/// The warning of a refused pin of JACK's process thread to `core` ([`PinOnce`]): `None`
/// while none was refused (the pin is tried once, at the first callback).
pub(crate) fn pin_warning(core: Option<usize>, failed: &AtomicI32) -> Option<String> {
    let core = core?;
    // Relaxed: one number, stored once; nothing else is read with it.
    let errno = failed.load(Ordering::Relaxed);
    (errno != 0).then(|| {
        let why = if errno > 0 {
            std::io::Error::from_raw_os_error(errno).to_string()
        } else {
            "refused".to_string()
        };
        format!(
            "JACK's process thread could not be pinned to core {core} ({why}): a worker pinned to the core it runs on waits for it, every cycle; --no-pin leaves every thread free"
        )
    })
}

/// The process handler: the JACK side of [`CycleBody`].
struct Process {
    body: CycleBody,
    engine: Option<Box<Engine>>,
    handoff: Arc<Handoff>,
    shared: Arc<Shared>,
    ins: Vec<j::Port<j::AudioIn>>,
    outs: Vec<j::Port<j::AudioOut>>,
    clock: ServerClock,
    pin: PinOnce,
}

impl j::ProcessHandler for Process {
    fn process(&mut self, _: &j::Client, ps: &j::ProcessScope) -> j::Control {
        let started = Instant::now();
        self.pin.now();
        if self.shared.quit.now() {
            return j::Control::Quit;
        }
        let frames = ps.n_frames() as usize;
        self.clock.cycle(ps.last_frame_time(), frames);
        if self
            .engine
            .as_ref()
            .is_none_or(|e| e.plan.block() != frames)
        {
            self.handoff.take(&mut self.engine);
        }
        let Process {
            body,
            engine,
            ins,
            outs,
            shared,
            ..
        } = self;
        match engine {
            Some(e) if e.plan.block() == frames => {
                body.run(
                    e,
                    frames,
                    started,
                    0,
                    |ch, buf| buf.copy_from_slice(ins[ch].as_slice(ps)),
                    |ch, buf| crate::cycle::copy_finite(buf, outs[ch].as_mut_slice(ps)),
                );
            }
            _ => {
                for o in outs.iter_mut() {
                    o.as_mut_slice(ps).fill(0.0);
                }
                body.meter.skip();
                // Relaxed: a counter read at the end.
                shared.silent.fetch_add(1, Ordering::Relaxed);
            }
        }
        j::Control::Continue
    }

    fn buffer_size(&mut self, _: &j::Client, size: j::Frames) -> j::Control {
        self.shared.quit.defer_unless_process_thread();
        // Relaxed: the control thread polls it; the plan itself travels through `Handoff`.
        self.shared.wanted_block.store(size, Ordering::Relaxed);
        j::Control::Continue
    }
}

/// Ends a JACK client's process thread from inside before the client is deactivated.
///
/// JACK 2 creates its client threads with asynchronous cancellation and, on deactivation,
/// cancels the process thread (`JackClient::Deactivate`, `JackPosixThread::Kill`): it must,
/// since that thread waits for the next cycle on a futex, which no deferred cancellation
/// reaches. Cancelled while inside a Rust callback, the thread unwinds by a forced unwind
/// that the `jack` crate's `catch_unwind` stops, and glibc aborts the process ("FATAL:
/// exception not rethrown"; seen in about one deactivation in three of a busy host). So the
/// control thread first asks the callback to quit ([`Quit::ask_and_wait`]); the callback
/// returns [`j::Control::Quit`] at its next cycle ([`Quit::now`]), and JACK ends the thread
/// itself from its own frames (`JackClient::End`). The control thread waits for that thread
/// to be gone (its task leaves `/proc/self/task`: a thread preempted between its answer and
/// its end, as on a loaded machine, is still in the `jack` crate's frames). Deactivation then
/// has no running callback to cancel.
///
/// The notification thread is cancelled the same way when the client closes
/// (`JackSocketClientChannel::Stop`), and notifications (a graph reorder, a port registered
/// by another client) can arrive at any time: every notification callback first makes its
/// thread's cancellation deferred ([`defer_cancellation`]); `buffer_size`, which JACK 2 also
/// calls once on the process thread, only off it ([`Quit::defer_unless_process_thread`]).
#[derive(Debug, Default)]
pub(crate) struct Quit {
    asked: AtomicBool,
    done: AtomicBool,
    /// Set when the callback runs again after it answered: a library that keeps the thread
    /// (JACK1, PipeWire's libjack), which the control thread then does not wait to end.
    again: AtomicBool,
    /// The process thread's kernel thread id, recorded at its first callback (0: none yet).
    tid: AtomicI32,
}

/// The calling thread's kernel thread id.
fn thread_id() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

impl Quit {
    /// Callback: whether to return [`j::Control::Quit`] now (then recorded as done). Never
    /// allocates or blocks.
    #[inline]
    pub(crate) fn now(&self) -> bool {
        // Relaxed: the id is read by the control thread after `done`, whose Release/Acquire
        // pair orders it.
        if self.tid.load(Ordering::Relaxed) == 0 {
            self.tid.store(thread_id(), Ordering::Relaxed);
        }
        // Acquire/Release: nothing is published with these flags but the request and its
        // answer; the orderings only keep the answer after the request.
        if self.asked.load(Ordering::Acquire) {
            if self.done.swap(true, Ordering::AcqRel) {
                // Relaxed: a flag polled by the control thread.
                self.again.store(true, Ordering::Relaxed);
            }
            true
        } else {
            false
        }
    }

    /// For the `buffer_size` callback: JACK 2 calls it once on the process thread before the
    /// first cycle (not deferred: see [`defer_cancellation`]), then on the notification
    /// thread, which is deferred as the other notification callbacks are.
    pub(crate) fn defer_unless_process_thread(&self) {
        // Relaxed: the id is this value's own, written once by the process thread.
        let process = self.tid.load(Ordering::Relaxed);
        if process != 0 && process != thread_id() {
            defer_cancellation();
        }
    }

    /// Control thread: asks the callback to quit and waits at most `timeout` for it to
    /// answer (a server that no longer calls it never does). Returns whether it answered.
    pub(crate) fn ask_and_wait(&self, timeout: Duration) -> bool {
        self.asked.store(true, Ordering::Release);
        let start = Instant::now();
        while !self.done.load(Ordering::Acquire) {
            if start.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        // The callback has returned Quit, or is about to: JACK ends the thread once it is
        // back in JACK's frames. Wait for it to be gone, as long again at most.
        let tid = self.tid.load(Ordering::Relaxed);
        let tasks = std::path::Path::new("/proc/self/task");
        if tid > 0 && tasks.is_dir() {
            let task = tasks.join(tid.to_string());
            let start = Instant::now();
            // Relaxed: a flag; the wait only ends sooner with it.
            while task.exists() && !self.again.load(Ordering::Relaxed) && start.elapsed() <= timeout
            {
                std::thread::sleep(Duration::from_micros(200));
            }
        } else {
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }
}

/// Makes the calling thread's cancellation deferred: a `pthread_cancel` then takes effect at
/// the thread's next cancellation point only, for JACK's notification thread its next read of
/// the server's socket, in JACK's frames. Called at the top of every notification callback
/// ([`Quit`] says why). Never for the process thread: it waits for its cycles on a futex,
/// which is no cancellation point, so that JACK could no longer end it.
pub(crate) fn defer_cancellation() {
    // glibc and musl: PTHREAD_CANCEL_DEFERRED is 0. The libc crate does not declare the call.
    const PTHREAD_CANCEL_DEFERRED: libc::c_int = 0;
    extern "C" {
        fn pthread_setcanceltype(kind: libc::c_int, old: *mut libc::c_int) -> libc::c_int;
    }
    let mut old = 0;
    // SAFETY: sets the calling thread's own cancellation type, a valid value, and writes the
    // old type to a local; it is no cancellation point when deferring.
    unsafe { pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &mut old) };
}

/// The notification callbacks a handler does not otherwise need, each deferring its thread's
/// cancellation first ([`defer_cancellation`]); `xrun` and `shutdown` are the handler's own.
macro_rules! deferred_notifications {
    () => {
        fn freewheel(&mut self, _: &::jack::Client, _: bool) {
            $crate::backend::jack::defer_cancellation();
        }

        fn sample_rate(&mut self, _: &::jack::Client, _: ::jack::Frames) -> ::jack::Control {
            $crate::backend::jack::defer_cancellation();
            ::jack::Control::Continue
        }

        fn client_registration(&mut self, _: &::jack::Client, _: &str, _: bool) {
            $crate::backend::jack::defer_cancellation();
        }

        fn port_registration(&mut self, _: &::jack::Client, _: ::jack::PortId, _: bool) {
            $crate::backend::jack::defer_cancellation();
        }

        fn port_rename(
            &mut self,
            _: &::jack::Client,
            _: ::jack::PortId,
            _: &str,
            _: &str,
        ) -> ::jack::Control {
            $crate::backend::jack::defer_cancellation();
            ::jack::Control::Continue
        }

        fn ports_connected(
            &mut self,
            _: &::jack::Client,
            _: ::jack::PortId,
            _: ::jack::PortId,
            _: bool,
        ) {
            $crate::backend::jack::defer_cancellation();
        }

        fn graph_reorder(&mut self, _: &::jack::Client) -> ::jack::Control {
            $crate::backend::jack::defer_cancellation();
            ::jack::Control::Continue
        }
    };
}
pub(crate) use deferred_notifications;

/// How long the control thread waits for a process callback to quit before deactivating
/// anyway: a few periods of the longest buffers.
pub(crate) const QUIT_TIMEOUT: Duration = Duration::from_millis(500);

/// The sentence for no JACK server to connect to: the server `JACK_DEFAULT_SERVER` names
/// when it is set (a client connects to that one only), else the default server.
pub(crate) fn no_server() -> String {
    match std::env::var("JACK_DEFAULT_SERVER") {
        Ok(name) if !name.is_empty() => format!(
            "no JACK server named `{name}` (JACK_DEFAULT_SERVER) is running; start it with `jackd -n {name} -d dummy -r 48000 -p 256 &` (or your sound card's driver), unset JACK_DEFAULT_SERVER to use the default server, or use --backend clocked"
        ),
        _ => "no JACK server is running; start one with `jackd -d dummy -r 48000 -p 256 &` (or your sound card's driver) or use --backend clocked".to_string(),
    }
}

/// Why the server refused to open client `name` (`status`, from `jack_client_open`), or
/// `None` when no server answered (then no server is running, as far as the client knows).
pub(crate) fn client_refused(status: j::ClientStatus, name: &str) -> Option<String> {
    if status.contains(j::ClientStatus::SERVER_FAILED) {
        return None;
    }
    Some(if status.contains(j::ClientStatus::NAME_NOT_UNIQUE) {
        format!(
            "the server has a client named `{name}` already, and cannot make a unique name of it (a suffix such as -01 would pass the {} bytes a name may have): give another --client-name",
            crate::options::JACK_CLIENT_NAME_MAX
        )
    } else if status.contains(j::ClientStatus::VERSION_ERROR) {
        "the server speaks another version of JACK's protocol than this libjack: install the libjack of the server's JACK".to_string()
    } else {
        format!(
            "the server refused the client `{name}` (status {status:?}); where another client has that name, one this long leaves no room for the suffix (-01) that would tell them apart: give another --client-name"
        )
    })
}

/// The warning that the server gave the client another name than `asked` (a client of that
/// name was there: the server added a suffix), so that what connects to the ports by the name
/// asked for is not fooled.
pub(crate) fn renamed(client: &j::Client, asked: &str) -> Option<String> {
    let got = client.name();
    (got != asked).then(|| {
        format!(
            "another JACK client is named `{asked}`: this one is `{got}` (its ports are `{got}:...`); give another --client-name to choose its name"
        )
    })
}

/// Runs `graph` as a JACK client.
pub(crate) fn run(
    graph: &TaskGraph,
    options: &RunOptions,
    connect: bool,
    client_name: &str,
    mut on_tick: impl FnMut(&Summary),
) -> Result<RunReport, RunError> {
    if client_name.len() > crate::options::JACK_CLIENT_NAME_MAX {
        return Err(RunError::ClientName {
            len: client_name.len(),
            max: crate::options::JACK_CLIENT_NAME_MAX,
        });
    }
    j::set_logger(j::LoggerType::None);
    let client = match j::Client::new(client_name, j::ClientOptions::NO_START_SERVER) {
        Ok((c, _)) => c,
        Err(j::Error::LibraryError(m)) => return Err(RunError::NoLibrary(m)),
        Err(j::Error::ClientError(status)) => {
            return Err(match client_refused(status, client_name) {
                None => RunError::NoServer,
                Some(why) => RunError::Jack(why),
            })
        }
        Err(e) => return Err(RunError::Jack(e.to_string())),
    };
    let rate = client.sample_rate();
    let block = client.buffer_size() as usize;
    let (mut engine, mut warnings) = Engine::build(
        graph,
        &options.registry,
        rate as f64,
        block,
        &options.executor_for_period(rate, block),
        options.placeholder,
    )?;
    warnings.extend(renamed(&client, client_name));
    let auto = engine.auto_report().cloned();
    engine.track_wakes();
    if options.profile {
        engine.enable_profile().map_err(RunError::Options)?;
    }
    let jerr = |e: j::Error| RunError::Jack(e.to_string());
    let ins = (0..engine.plan.n_inputs())
        .map(|i| client.register_port(&format!("in_{}", i + 1), j::AudioIn::default()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(jerr)?;
    let outs = (0..engine.plan.n_outputs())
        .map(|i| client.register_port(&format!("out_{}", i + 1), j::AudioOut::default()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(jerr)?;
    let out_names: Vec<String> = outs.iter().filter_map(|p| p.name().ok()).collect();
    let (stats, meter) = options.start_stats()?;
    if let Some(g) = &options.granted {
        g.set(rate, block);
    }
    let shared = Arc::new(Shared::default());
    shared.wanted_block.store(block as u32, Ordering::Relaxed);
    let handoff = Arc::new(Handoff::default());
    let non_finite = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let process = Process {
        body: CycleBody {
            meter,
            deadline_periods: options.deadline.periods(),
            hash_outputs: options.stats.hash_outputs,
            live: options.live.clone(),
            non_finite: non_finite.clone(),
        },
        engine: Some(Box::new(engine)),
        handoff: handoff.clone(),
        shared: shared.clone(),
        ins,
        outs,
        clock: ServerClock::default(),
        pin: PinOnce::new(
            options
                .executor
                .pin
                .then(|| fugue_exec::placement::allowed_cores()[0]),
        ),
    };
    let (pin_core, pin_refused) = process.pin.refusal();
    let active = client
        .activate_async(
            Notifications {
                shared: shared.clone(),
            },
            process,
        )
        .map_err(jerr)?;
    if connect {
        connect_to_playback(active.as_client(), &out_names, &mut warnings);
    }
    let start = Instant::now();
    let stop = options.stop.clone();
    let mut built_block = block;
    let mut buffer_changes = 0u32;
    let mut last_tick = Instant::now();
    let end = loop {
        std::thread::sleep(Duration::from_millis(5));
        // Acquire pairs with the Release store in `shutdown`.
        if shared.gone.load(Ordering::Acquire) {
            let reason = shared.reason.lock().map(|r| r.clone()).unwrap_or_default();
            break EndReason::ServerGone(reason);
        }
        // Relaxed: a request polled; nothing is published with it.
        if stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
            break EndReason::Stopped;
        }
        if options.duration.is_some_and(|d| start.elapsed() >= d) {
            break EndReason::Duration;
        }
        drop(handoff.collect());
        // Relaxed: see `buffer_size`.
        let wanted = shared.wanted_block.load(Ordering::Relaxed) as usize;
        if wanted != built_block && wanted > 0 {
            drop(handoff.withdraw());
            // The graph as the live changes left it, so that they stay.
            let live = options
                .live_graph
                .as_ref()
                .map(|g| g.lock().unwrap_or_else(|e| e.into_inner()).clone());
            let built = Engine::build(
                live.as_ref().unwrap_or(graph),
                &options.registry,
                rate as f64,
                wanted,
                &options.executor_for_period(rate, wanted),
                options.placeholder,
            );
            // A size the graph cannot run at ends the run as a lost server does: said, and
            // its statistics kept.
            let (mut e, w) = match built {
                Ok(b) => b,
                Err(why) => break EndReason::Unplayable(format!(
                    "the JACK server changed its buffer size to {wanted} frames, at which the graph cannot run ({why})"
                )),
            };
            e.track_wakes();
            if options.profile {
                // At the new buffer size the profile may not fit: the run plays on without.
                if let Err(why) = e.enable_profile() {
                    warnings.push(format!(
                        "after the buffer-size change to {wanted} frames the profile is off: {why}"
                    ));
                }
            }
            warnings.extend(w);
            let mut e = Box::new(e);
            loop {
                match handoff.offer(e) {
                    Ok(()) => break,
                    Err(back) => {
                        e = back;
                        drop(handoff.collect());
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            }
            built_block = wanted;
            buffer_changes += 1;
            // Live values are checked at the block the run now plays.
            if let Some(g) = &options.granted {
                g.set(rate, wanted);
            }
        }
        if last_tick.elapsed() >= Duration::from_millis(100) {
            on_tick(&stats.live());
            last_tick = Instant::now();
        }
    };
    let server_gone = matches!(end, EndReason::ServerGone(_));
    let xruns = shared.xruns.load(Ordering::Relaxed);
    let mut panics = Vec::new();
    let mut server_frames = None;
    let mut profile = None;
    // Unknown when the server went away with the engine: not pipelined, as far as is known.
    let mut pipeline = 1;
    if server_gone {
        // The server is gone: its process thread no longer runs our callback. Deactivating a
        // client of a dead server can block inside libjack, so the client and its handlers
        // are left to the end of the process.
        std::mem::forget(active);
    } else {
        shared.quit.ask_and_wait(QUIT_TIMEOUT);
        match active.deactivate() {
            Ok((client, _, mut process)) => {
                if let Some(e) = process.engine.as_mut() {
                    panics = e.plan.take_panics();
                    profile = e.profile_report();
                    pipeline = e.plan.pipeline();
                }
                server_frames = Some(process.clock.total());
                drop(process);
                drop(client);
            }
            Err(e) => warnings.push(format!("cannot deactivate the JACK client: {e}")),
        }
    }
    drop(handoff.collect());
    warnings.extend(pin_warning(pin_core, &pin_refused));
    let outcome = stats.finish();
    on_tick(&outcome.summary);
    warnings.sort();
    warnings.dedup();
    Ok(RunReport {
        skipped_periods: None,
        pipeline,
        // Relaxed: the callback no longer runs (deactivated, or its server is gone).
        non_finite: non_finite.load(Ordering::Relaxed),
        summary: outcome.summary,
        records: outcome.records,
        end,
        xruns,
        device: None,
        backend: "jack",
        sample_rate: rate,
        block: built_block,
        buffer_changes,
        silent_cycles: shared.silent.load(Ordering::Relaxed),
        server_frames,
        warnings,
        panics,
        csv_error: outcome.csv_error,
        profile,
        auto,
    })
}

/// Connects each of `names` (output ports of `client`) to the server's physical playback
/// ports, in turn (the i-th to playback port i mod their number); what fails is said in
/// `warnings`. Used by `--connect` of `run` and of the host.
pub(crate) fn connect_to_playback(
    client: &j::Client,
    names: &[String],
    warnings: &mut Vec<String>,
) {
    let playback = client.ports(
        None,
        Some(j::jack_sys::FLOAT_MONO_AUDIO),
        j::PortFlags::IS_INPUT | j::PortFlags::IS_PHYSICAL,
    );
    if playback.is_empty() {
        warnings.push("--connect: the JACK server has no playback ports".into());
        return;
    }
    for (i, name) in names.iter().enumerate() {
        let dst = &playback[i % playback.len()];
        if let Err(e) = client.connect_ports_by_name(name, dst) {
            warnings.push(format!("cannot connect {name} to {dst}: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_pin_is_said_once_refused_and_only_then() {
        let core = Some(3);
        let failed = AtomicI32::new(0);
        assert_eq!(pin_warning(core, &failed), None, "not refused yet");
        failed.store(libc::EINVAL, Ordering::Relaxed);
        let w = pin_warning(core, &failed).unwrap();
        assert!(
            w.starts_with("JACK's process thread could not be pinned to core 3 (")
                && w.contains(&std::io::Error::from_raw_os_error(libc::EINVAL).to_string())
                && w.ends_with("--no-pin leaves every thread free"),
            "{w}"
        );
        failed.store(-1, Ordering::Relaxed);
        assert!(pin_warning(core, &failed).unwrap().contains("(refused)"));
        // Threads not pinned: nothing was tried.
        assert_eq!(pin_warning(None, &failed), None);
    }
}
