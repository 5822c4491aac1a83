//! The drivers: what runs the audio side (offline on the control thread, a clocked thread
//! of its own, or a JACK client's process callback), how each is started, waited for and
//! stopped, and the recording's writer thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fugue_exec::SharedPool;

use super::audio::{GraphSet, HostAudio, Queues, Runtime};
use super::stats::HostStats;
use super::{jack, Host, HostBackend, HostError, HostOptions, HostReport, Mode};
use crate::backend::alsa;
use crate::blocks::{block_channel, BlockReceiver};

/// Where the audio side lives.
pub(super) enum Driver {
    /// On the control thread.
    Offline(Box<HostAudio>),
    /// In a JACK client's process callback.
    Jack {
        active: Option<jack::Active>,
        /// Buffer-size changes (the size announced, the sets of graphs in transit) and the
        /// request to end the process thread.
        shared: Arc<jack::Shared>,
        /// The core JACK's process thread is pinned to at its first callback, and the
        /// system's refusal if it was refused ([`PinOnce`](crate::backend::jack::PinOnce));
        /// the core is taken once the refusal was said.
        pin: jack::PinRefusal,
    },
    /// On its own thread, which hands it back when stopped.
    Thread {
        handle: Option<JoinHandle<Box<HostAudio>>>,
        stop: Arc<AtomicBool>,
    },
    /// Stopped.
    Done,
}

/// The recording's writer thread.
pub(super) struct Recorder {
    /// The writer thread: the frames it wrote, and why it stopped early if it did.
    handle: JoinHandle<(u64, Option<String>)>,
    path: PathBuf,
    /// Why writing failed, set by the writer thread when it does (it then drops what it
    /// receives): said as a notice while the host plays on ([`Recorder::failure`]).
    failed: Arc<OnceLock<String>>,
    /// Whether the failure was said.
    said: bool,
}

impl Recorder {
    /// A sentence about the recording's failure, the first time it is asked after the
    /// writer failed; `None` otherwise.
    pub(super) fn failure(&mut self) -> Option<String> {
        let reason = self.failed.get().filter(|_| !self.said)?;
        self.said = true;
        Some(format!(
            "error: cannot write the recording {} ({reason}); it stops there, and playback goes on",
            self.path.display()
        ))
    }
}

/// What [`start`] started: the driver and the recording.
pub(super) struct Started {
    pub(super) driver: Driver,
    pub(super) recorder: Option<Recorder>,
}

/// Opens the JACK client when `options` name the JACK backend, and takes the server's rate
/// and buffer size into `options`.
pub(super) fn open_jack(options: &mut HostOptions) -> Result<Option<::jack::Client>, HostError> {
    let HostBackend::Jack { client_name, .. } = &options.backend else {
        return Ok(None);
    };
    let (client, rate, block) = jack::open(client_name)?;
    options.rate = rate;
    options.block = block;
    Ok(Some(client))
}

/// Opens the ALSA device when `options` name the ALSA backend, and takes the rate and period
/// it grants into `options`.
pub(super) fn open_alsa(options: &mut HostOptions) -> Result<Option<alsa::Device>, HostError> {
    let HostBackend::Alsa { device, periods } = &options.backend else {
        return Ok(None);
    };
    let d = alsa::open(
        device,
        options.rate,
        options.block,
        *periods,
        options.channels,
    )
    .map_err(|e| match e {
        crate::RunError::Options(m) => HostError::Options(m),
        e => HostError::Backend(e.to_string()),
    })?;
    options.rate = d.granted().rate;
    options.block = d.granted().block;
    Ok(Some(d))
}

/// Settles `--rt` ([`fugue_exec::Placement::rt_priority`]) before any thread starts, so that
/// every thread of the host (the pool's workers, the audio thread) runs as one decision says
/// and a refusal is said once, here: not offline (no deadline; its cycles run on the control
/// thread), not in separate mode (each graph's executor, waiting at SCHED_FIFO for its next
/// cycle, would hold the cores of the next graph's workers), not with more threads than
/// cores (a worker spinning at SCHED_FIFO for the unit of a thread it keeps off the core
/// would never let it run), and only where a thread of this process is granted the audio
/// thread's priority, one above the workers' (a system that grants only up to the workers'
/// priority gets them one lower).
pub(super) fn resolve_rt(options: &mut HostOptions, warnings: &mut Vec<String>) {
    let Some(p) = options.exec.placement.rt_priority else {
        return;
    };
    let mut set = |rt: Option<i32>, why: Option<String>| {
        options.exec.placement.rt_priority = rt;
        warnings.extend(why);
    };
    if matches!(options.backend, HostBackend::Offline) {
        return set(None, Some("--rt applies to the clocked, ALSA and JACK backends: the offline host runs at normal priority".into()));
    }
    if options.mode == Mode::Separate {
        return set(None, Some("--rt applies to the shared and partitioned pools: in separate mode each graph's executor, waiting at SCHED_FIFO for its next cycle, would hold the cores the next graph's workers need; running at normal priority".into()));
    }
    let cores = fugue_exec::placement::available_cores().max(1);
    if options.threads > cores {
        return set(None, Some(format!(
            "real-time priority is not used with more threads ({}) than cores ({cores}): a worker spinning at SCHED_FIFO could keep the thread it waits for off every core; running at normal priority",
            options.threads
        )));
    }
    // Tried on a thread of its own, which ends: the control thread keeps its priority.
    let granted = |prio: i32| -> Result<(), String> {
        std::thread::Builder::new()
            .name("fugue-rt-probe".into())
            .spawn(move || {
                fugue_exec::placement::set_realtime_current(prio).map_err(|e| e.to_string())
            })
            .map_err(|e| format!("cannot start a thread to ask for real-time priority: {e}"))?
            .join()
            .unwrap_or_else(|_| Err("the thread that asked for it failed".into()))
    };
    // Under JACK the audio thread is JACK's (its priority the server's): only the workers'.
    if matches!(options.backend, HostBackend::Jack { .. }) {
        if let Err(e) = granted(p) {
            set(None, Some(e));
        }
        return;
    }
    let audio = crate::placement::audio_priority(p);
    match granted(audio) {
        Ok(()) => {}
        Err(e) => match granted(p) {
            Ok(()) if p > 1 => set(
                Some(p - 1),
                Some(format!(
                    "real-time priority {audio} was refused for the audio thread; it runs at {p} and the workers at {}",
                    p - 1
                )),
            ),
            _ => set(None, Some(e)),
        },
    }
}

/// Builds the audio side of a host of `options` (the pool in the pool modes, the recording)
/// and starts the driver that runs it: offline, the clocked thread, the JACK client or the
/// ALSA device of `opened` (opened by [`open_jack`] and [`open_alsa`]). Things to say once
/// go to `warnings`.
pub(super) fn start(
    options: &HostOptions,
    opened: (Option<::jack::Client>, Option<alsa::Device>),
    queues: Arc<Queues>,
    stats: Arc<HostStats>,
    warnings: &mut Vec<String>,
) -> Result<Started, HostError> {
    let exec = options.exec_paced();
    let runtime = match options.mode {
        Mode::Shared | Mode::Partitioned => {
            let mut pool = SharedPool::new(options.threads, options.unit_capacity, true, &exec)
                .map_err(|e| HostError::Io {
                    what: format!(
                        "cannot start the host's thread {} of {}",
                        e.index + 1,
                        options.threads
                    ),
                    source: e.source,
                })?;
            pool.set_grain(options.grain);
            warnings.extend(pool.warnings().iter().cloned());
            Runtime::Pool(Box::new(pool))
        }
        Mode::Separate => Runtime::Separate,
    };
    let mut audio = Box::new(HostAudio::new(
        options.mode,
        runtime,
        queues,
        Box::new(GraphSet::new(
            options.block,
            options.channels,
            options.period_ns(),
        )),
        stats,
    ));
    let recorder = match &options.record {
        Some(path) => {
            let (tx, rx) = block_channel(options.block, options.channels);
            audio.record = Some(tx);
            audio.record_waits = options.backend == HostBackend::Offline;
            Some(start_recorder(path, rx, options.rate, options.channels)?)
        }
        None => None,
    };
    let (jack_client, alsa_device) = opened;
    let driver = match (&options.backend, jack_client) {
        (HostBackend::Alsa { .. }, _) => match alsa_device {
            Some(d) => start_alsa(audio, d, options)?,
            None => return Err(HostError::Backend("the ALSA device is not open".into())),
        },
        (HostBackend::Jack { connect, .. }, Some(client)) => {
            let shared = Arc::new(jack::Shared::default());
            // Relaxed: read by the control thread only.
            shared.wanted.store(options.block as u32, Ordering::Relaxed);
            let (active, w, pin) = jack::activate(
                client,
                audio,
                options.channels,
                *connect,
                shared.clone(),
                // Where the audio thread goes when threads are pinned: the first core.
                options.exec.placement.cores.first().copied(),
            )?;
            warnings.extend(w);
            Driver::Jack {
                active: Some(active),
                shared,
                pin,
            }
        }
        (HostBackend::Offline, _) => Driver::Offline(audio),
        _ => start_clocked(audio, options)?,
    };
    Ok(Started { driver, recorder })
}

impl Host {
    /// [`Host::cycle`].
    pub(super) fn driver_cycle(&self) -> u64 {
        match &self.driver {
            Driver::Offline(a) => a.cycle,
            _ => self.stats.snapshot().cycles,
        }
    }

    /// [`Host::wait`]: offline, runs the cycles now; with a clock, sleeps while the audio
    /// thread plays (under JACK, following a buffer-size change meanwhile).
    pub(super) fn play_for(&mut self, d: Duration) -> Result<(), HostError> {
        match &mut self.driver {
            Driver::Offline(_) => {
                let n = (d.as_secs_f64() * self.options.rate as f64 / self.options.block as f64)
                    .round() as u64;
                self.run_cycles(n)?;
                self.collect();
                Ok(())
            }
            Driver::Thread { handle, .. } => {
                let end = Instant::now() + d;
                while Instant::now() < end {
                    if handle.as_ref().is_none_or(|h| h.is_finished()) {
                        return Err(HostError::AudioGone);
                    }
                    std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
                }
                Ok(())
            }
            Driver::Jack { .. } => {
                let end = Instant::now() + d;
                while Instant::now() < end {
                    // Follows a buffer-size change while playing.
                    self.poll()?;
                    std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
                }
                self.poll()
            }
            Driver::Done => Err(HostError::AudioGone),
        }
    }

    /// [`Host::finish`]: stops the driver, frees every graph, and closes the recording.
    pub(super) fn stop(mut self) -> Result<HostReport, HostError> {
        let audio = match std::mem::replace(&mut self.driver, Driver::Done) {
            Driver::Offline(a) => Some(a),
            Driver::Thread { handle, stop } => {
                // Relaxed: a request polled once per cycle.
                stop.store(true, Ordering::Relaxed);
                handle.and_then(|h| h.join().ok())
            }
            Driver::Jack { active, shared, .. } => active.and_then(|a| jack::close(a, &shared)),
            Driver::Done => None,
        };
        let cycles = self.stats.snapshot().cycles;
        if let Some(mut a) = audio {
            drop(a.drain());
            // Closing the sender ends the recording.
            a.record = None;
        }
        while self.queues.from_audio.pop().is_some() {}
        let (mut recorded_frames, mut record_error) = (0, None);
        if let Some(r) = self.recorder.take() {
            (recorded_frames, record_error) = r
                .handle
                .join()
                .map_err(|_| HostError::ThreadPanicked("recording"))?;
        }
        // A recording that failed is in the report, beside what the host did.
        Ok(HostReport {
            stats: self.stats.snapshot(),
            cycles,
            warnings: self.warnings.clone(),
            recorded_frames,
            record_error,
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        match &mut self.driver {
            Driver::Thread { handle, stop } => {
                stop.store(true, Ordering::Relaxed);
                if let Some(h) = handle.take() {
                    let _ = h.join();
                }
            }
            Driver::Jack { active, shared, .. } => {
                if let Some(a) = active.take() {
                    drop(jack::close(a, shared));
                }
            }
            _ => {}
        }
    }
}

/// Starts the recording's writer thread. The file's sizes are brought up to date after
/// every quarter of a second of audio ([`crate::wav::BlockWavWriter::update_sizes`]), so that a host that
/// is killed leaves a file that reads as what it recorded until then.
fn start_recorder(
    path: &Path,
    mut rx: BlockReceiver,
    rate: u32,
    channels: usize,
) -> Result<Recorder, HostError> {
    let spec = hound::WavSpec {
        channels: channels as u16,
        sample_rate: rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writer = crate::wav::BlockWavWriter::create(path, spec).map_err(|e| HostError::Io {
        what: format!("cannot create {}", path.display()),
        source: std::io::Error::other(e.to_string()),
    })?;
    let failure = Arc::new(OnceLock::<String>::new());
    let failed = failure.clone();
    let handle = std::thread::Builder::new()
        .name("fugue-host-record".into())
        .spawn(move || {
            let every = u64::from(rate / 4).max(1);
            let mut next_update = every;
            // The frames flushed with the sizes in the header (a stream: flushed): what a
            // write error leaves recorded at least (frames handed to the writer since may not
            // have reached the file).
            let mut saved = 0;
            // The file reached the most a WAV file holds: every block before the one refused
            // was written whole, and the header is brought up to them at the end.
            let mut full = false;
            while let Some(block) = rx.recv() {
                if failed.get().is_some() {
                    continue;
                }
                let mut res = writer.write(block.data());
                full = matches!(res, Err(hound::Error::TooWide));
                if res.is_ok() && writer.frames() >= next_update {
                    next_update = writer.frames() + every;
                    res = writer.update_sizes();
                    if res.is_ok() {
                        saved = writer.frames();
                    }
                }
                if let Err(e) = res {
                    let _ = failed.set(crate::render::write_reason(&e));
                }
            }
            let frames = writer.frames();
            // After a failure, the file is cut to what the header last said: nothing of the
            // blocks after (the one that failed may be partly written).
            let why = match failed.get() {
                Some(e) if full && writer.finalize().is_ok() => return (frames, Some(e.clone())),
                Some(e) => e.clone(),
                None => match writer.finalize() {
                    Ok(()) => return (frames, None),
                    Err(e) => crate::render::write_reason(&e),
                },
            };
            let _ = writer.cut();
            (saved, Some(why))
        })
        .map_err(|source| HostError::Io {
            what: "cannot start the recording thread".into(),
            source,
        })?;
    Ok(Recorder {
        handle,
        path: path.to_path_buf(),
        failed: failure,
        said: false,
    })
}

/// Starts the ALSA audio thread: it runs a cycle, writes the mix to `device` (waiting for
/// room in its buffer: the device paces the cycles), and runs the next one. Underruns are
/// counted as overruns; a device that fails ends the thread ([`HostError::AudioGone`] at
/// the next wait).
fn start_alsa(
    mut audio: Box<HostAudio>,
    device: alsa::Device,
    options: &HostOptions,
) -> Result<Driver, HostError> {
    let core = options.exec.placement.cores.first().copied();
    let rt = options.exec.placement.rt_priority;
    let channels = options.channels;
    thread_driver(move |stop| {
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        // Refusals were said by `resolve_rt`.
        let _ = crate::placement::place_audio_thread_on(core, rt);
        let mut out = alsa::Writer::new(device, channels);
        let mut xruns = 0;
        // Relaxed: a request polled once per cycle; nothing is published with it.
        while !stop.load(Ordering::Relaxed) {
            audio.run_cycle(Instant::now());
            for (ch, m) in audio.mix().iter().enumerate() {
                out.output(ch, m);
            }
            let r = out.write(&stop);
            // Relaxed: a statistic.
            audio
                .stats
                .overruns
                .fetch_add(out.xruns() - xruns, Ordering::Relaxed);
            xruns = out.xruns();
            if r.is_err() {
                break;
            }
        }
        audio
    })
}

/// A driver whose audio side runs `body` on a thread of its own (`fugue-host`), which hands
/// the audio side back when it returns (asked to by the flag it is given).
fn thread_driver(
    body: impl FnOnce(Arc<AtomicBool>) -> Box<HostAudio> + Send + 'static,
) -> Result<Driver, HostError> {
    let stop = Arc::new(AtomicBool::new(false));
    let handle = {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("fugue-host".into())
            .spawn(move || body(stop))
            .map_err(|source| HostError::Io {
                what: "cannot start the audio thread".into(),
                source,
            })?
    };
    Ok(Driver::Thread {
        handle: Some(handle),
        stop,
    })
}

/// Starts the clocked audio thread: it wakes at `start + k × period` and runs one cycle.
fn start_clocked(mut audio: Box<HostAudio>, options: &HostOptions) -> Result<Driver, HostError> {
    let rate = options.rate as u128;
    let block = options.block as u128;
    // With pinned workers ([`HostOptions::exec`]'s placement), the audio thread takes the
    // first core (worker i takes core i); a refusal is said by the workers already, and one
    // of real-time priority by `resolve_rt`.
    let core = options.exec.placement.cores.first().copied();
    let rt = options.exec.placement.rt_priority;
    thread_driver(move |stop| {
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer; no pointer.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        let _ = crate::placement::place_audio_thread_on(core, rt);
        let period_num = block * 1_000_000_000;
        let mut base = crate::backend::clocked::now_ns() + 1_000_000;
        let mut k: u64 = 0;
        // Relaxed: a request polled once per cycle; nothing is published with it.
        while !stop.load(Ordering::Relaxed) {
            let target = base + (k as u128 * period_num / rate) as u64;
            // A stop is seen within 20 ms, however long the period.
            if !crate::backend::clocked::sleep_until_or(target, &stop) {
                break;
            }
            audio.run_cycle(Instant::now());
            k += 1;
            let next = base + (k as u128 * period_num / rate) as u64;
            let now = crate::backend::clocked::now_ns();
            if now > next + (period_num / rate) as u64 {
                audio.stats.overruns.fetch_add(1, Ordering::Relaxed);
                base = now;
                k = 0;
            }
        }
        audio
    })
}
