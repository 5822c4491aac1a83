//! The host as a JACK client: the process callback runs one host cycle and copies the mix to
//! the output ports `out_1`, `out_2`, ... (one per host channel). The graphs are compiled at
//! the server's rate and buffer size.
//!
//! **Buffer-size changes** are followed as `fugue run` follows them
//! ([`crate::backend::jack`]), for the whole set of graphs: JACK's `buffer_size` callback only
//! records the new size ([`Shared::wanted`]). The control thread sees it
//! ([`Host::poll`](super::Host::poll), called by every command and while waiting),
//! recompiles every loaded graph at the new size (same ids, gains, mode and pipelining; a
//! pipeline that no longer divides the size falls back to the largest divisor below it),
//! builds their executors, and offers the new [`GraphSet`] through [`Shared::handoff`]. The
//! process callback, finding a buffer of another size than the set that plays, takes the new
//! set at that cycle boundary ([`HostAudio::adopt`]: gains, silences and per-graph ports pass
//! from each old graph to its new self) and retires the old one, which the control thread
//! frees. Until a set of the right size arrives the callback outputs silence, counted as
//! resize cycles (`HostStatsSnapshot::resize_cycles`), not as cycles or misses; it still
//! answers commands, refusing as stale a graph compiled at a size that does not play now
//! (the control thread compiles it again at the new size and resends it). The callback never
//! allocates, frees, locks or waits.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ::jack as j;

use super::audio::{GraphSet, HostAudio};
use super::HostError;
use crate::backend::jack::{Handoff, PinOnce, Quit, QUIT_TIMEOUT};

/// What the control thread and the callbacks share: the buffer size announced and the sets
/// of graphs that follow it, and the request to end the process thread.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The buffer size JACK announced last (0: none yet).
    pub(crate) wanted: AtomicU32,
    /// The set of graphs recompiled at that size, on its way to the callback; the set it
    /// replaced, on its way back.
    pub(crate) handoff: Handoff<GraphSet>,
    /// Ends the process thread before deactivation ([`crate::backend::jack::Quit`]).
    pub(crate) quit: Quit,
    /// Why the server closed the client, once it did (JACK's shutdown callback).
    pub(crate) stopped: std::sync::OnceLock<String>,
}

impl Shared {
    /// Why the JACK server went away, once it did ([`Notifications`]).
    pub(crate) fn stopped(&self) -> Option<String> {
        self.stopped.get().map(|r| {
            if r.is_empty() {
                "it closed this client".to_string()
            } else {
                r.trim_end_matches('.').to_string()
            }
        })
    }
}

/// The JACK side of a host.
pub(crate) struct Process {
    pub(crate) audio: Box<HostAudio>,
    outs: Vec<j::Port<j::AudioOut>>,
    shared: Arc<Shared>,
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
        if frames != self.audio.block() {
            if let Some(new) = self.shared.handoff.take_pending() {
                let old = self.audio.adopt(new);
                self.shared.handoff.retire(old);
            }
        }
        if frames != self.audio.block() {
            for o in self.outs.iter_mut() {
                o.as_mut_slice(ps).fill(0.0);
            }
            self.audio.for_each_slot(|s| {
                for port in s.ports.iter_mut() {
                    port.as_mut_slice(ps).fill(0.0);
                }
            });
            // Commands are still answered (a load compiled at another size comes back as
            // stale), so that the control thread never waits on a silent callback.
            self.audio.apply_commands();
            // Relaxed: a statistic.
            self.audio
                .stats
                .resize_cycles
                .fetch_add(1, Ordering::Relaxed);
            return j::Control::Continue;
        }
        self.audio.run_cycle(started);
        for (o, m) in self.outs.iter_mut().zip(self.audio.mix()) {
            o.as_mut_slice(ps).copy_from_slice(m);
        }
        // Each graph's own ports: its sinks with its gain (silence once silenced).
        self.audio.for_each_slot(|s| {
            let plan = s.tenant.plan();
            for (ch, port) in s.ports.iter_mut().enumerate() {
                let out = port.as_mut_slice(ps);
                if s.silenced {
                    out.fill(0.0);
                } else if s.gain == 1.0 {
                    crate::cycle::copy_finite(plan.output(ch), out);
                } else {
                    for (o, &x) in out.iter_mut().zip(plan.output(ch)) {
                        *o = crate::cycle::finite_or_zero(s.gain * x);
                    }
                }
            }
        });
        j::Control::Continue
    }

    fn buffer_size(&mut self, _: &j::Client, size: j::Frames) -> j::Control {
        self.shared.quit.defer_unless_process_thread();
        // Relaxed: the control thread polls it; the graphs themselves travel through the
        // handoff. Nothing else here: this callback must not allocate.
        self.shared.wanted.store(size, Ordering::Relaxed);
        j::Control::Continue
    }
}

/// Notices the server's end and counts xruns.
pub(crate) struct Notifications {
    shared: Arc<Shared>,
    audio_stats: Arc<super::stats::HostStats>,
}

impl j::NotificationHandler for Notifications {
    crate::backend::jack::deferred_notifications!();

    fn xrun(&mut self, _: &j::Client) -> j::Control {
        crate::backend::jack::defer_cancellation();
        // Relaxed: a counter.
        self.audio_stats.overruns.fetch_add(1, Ordering::Relaxed);
        j::Control::Continue
    }

    unsafe fn shutdown(&mut self, _status: j::ClientStatus, reason: &str) {
        crate::backend::jack::defer_cancellation();
        // Not the process callback: JACK calls this from its own thread, once. The control
        // thread polls the reason's `OnceLock` (`Shared::stopped`).
        let _ = self.shared.stopped.set(reason.to_string());
    }
}

/// The active client.
pub(crate) type Active = j::AsyncClient<Notifications, Process>;

/// Opens a client named `name` (never starting a server); returns it with the server's rate
/// and buffer size.
pub(crate) fn open(name: &str) -> Result<(j::Client, u32, usize), HostError> {
    j::set_logger(j::LoggerType::None);
    let (client, _) = match j::Client::new(name, j::ClientOptions::NO_START_SERVER) {
        Ok(c) => c,
        Err(j::Error::LibraryError(m)) => {
            return Err(HostError::Backend(format!(
                "the JACK library (libjack) cannot be loaded: {m}; install libjack-jackd2-0 or use --backend clocked"
            )))
        }
        Err(j::Error::ClientError(status)) => {
            return Err(HostError::Backend(
                match crate::backend::jack::client_refused(status, name) {
                    None => crate::backend::jack::no_server(),
                    Some(why) => format!("JACK: {why}"),
                },
            ))
        }
        Err(e) => return Err(HostError::Backend(format!("JACK: {e}"))),
    };
    let rate = client.sample_rate();
    let block = client.buffer_size() as usize;
    Ok((client, rate, block))
}

/// Registers the output ports, activates the client and connects the ports to the system's
/// playback ports when `connect`; JACK's process thread is pinned to `pin` at its first
/// callback ([`PinOnce`]). Returns the active client, warnings, and the pin's core with the
/// refusal it records ([`PinOnce::refusal`]).
pub(crate) fn activate(
    client: j::Client,
    audio: Box<HostAudio>,
    channels: usize,
    connect: bool,
    shared: Arc<Shared>,
    pin: Option<usize>,
) -> Result<(Active, Vec<String>, PinRefusal), HostError> {
    let jerr = |e: j::Error| HostError::Backend(format!("JACK: {e}"));
    let outs = (0..channels)
        .map(|i| client.register_port(&format!("out_{}", i + 1), j::AudioOut::default()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(jerr)?;
    let names: Vec<String> = outs.iter().filter_map(|p| p.name().ok()).collect();
    let notifications = Notifications {
        shared: shared.clone(),
        audio_stats: audio.stats.clone(),
    };
    let pin = PinOnce::new(pin);
    let refusal = pin.refusal();
    let active = client
        .activate_async(
            notifications,
            Process {
                audio,
                outs,
                shared,
                pin,
            },
        )
        .map_err(jerr)?;
    let mut warnings = Vec::new();
    if connect {
        crate::backend::jack::connect_to_playback(active.as_client(), &names, &mut warnings);
    }
    Ok((active, warnings, refusal))
}

/// The core JACK's process thread is pinned to, and the refusal [`PinOnce`] records.
pub(crate) type PinRefusal = (Option<usize>, Arc<std::sync::atomic::AtomicI32>);

/// Ends the process thread, deactivates the client and hands the audio side back. (When the
/// server went away there is no process thread to wait for.)
pub(crate) fn close(active: Active, shared: &Shared) -> Option<Box<HostAudio>> {
    if shared.stopped.get().is_none() {
        shared.quit.ask_and_wait(QUIT_TIMEOUT);
    }
    active.deactivate().ok().map(|(_, _, p)| p.audio)
}
