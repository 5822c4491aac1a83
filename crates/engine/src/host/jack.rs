//! The host as a JACK client: the process callback runs one host cycle and copies the mix to
//! the output ports `out_1`, `out_2`, ... (one per host channel). The graphs are compiled at
//! the server's rate and buffer size. A buffer-size change is not followed: the callback then
//! outputs silence (and counts the cycle as a miss) until the size comes back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use ::jack as j;

use super::audio::HostAudio;
use super::HostError;

/// The JACK side of a host.
pub(crate) struct Process {
    pub(crate) audio: Box<HostAudio>,
    outs: Vec<j::Port<j::AudioOut>>,
    block: usize,
}

impl j::ProcessHandler for Process {
    fn process(&mut self, _: &j::Client, ps: &j::ProcessScope) -> j::Control {
        let started = Instant::now();
        if ps.n_frames() as usize != self.block {
            for o in self.outs.iter_mut() {
                o.as_mut_slice(ps).fill(0.0);
            }
            self.audio.stats.misses.fetch_add(1, Ordering::Relaxed);
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
                    out.copy_from_slice(plan.output(ch));
                } else {
                    for (o, &x) in out.iter_mut().zip(plan.output(ch)) {
                        *o = s.gain * x;
                    }
                }
            }
        });
        j::Control::Continue
    }
}

/// Notices the server's end and counts xruns.
pub(crate) struct Notifications {
    gone: Arc<AtomicBool>,
    audio_stats: Arc<super::stats::HostStats>,
}

impl j::NotificationHandler for Notifications {
    fn xrun(&mut self, _: &j::Client) -> j::Control {
        // Relaxed: a counter.
        self.audio_stats.overruns.fetch_add(1, Ordering::Relaxed);
        j::Control::Continue
    }

    unsafe fn shutdown(&mut self, _status: j::ClientStatus, _reason: &str) {
        // Relaxed: polled by the control thread; nothing is published with it.
        self.gone.store(true, Ordering::Relaxed);
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
            return Err(HostError::Options(format!(
                "the JACK library (libjack) cannot be loaded: {m}; install libjack-jackd2-0 or use --backend clocked"
            )))
        }
        Err(j::Error::ClientError(_)) => {
            return Err(HostError::Options(
                "no JACK server is running; start one with `jackd -d dummy -r 48000 -p 256 &` (or your sound card's driver) or use --backend clocked".into(),
            ))
        }
        Err(e) => return Err(HostError::Options(format!("JACK: {e}"))),
    };
    let rate = client.sample_rate();
    let block = client.buffer_size() as usize;
    Ok((client, rate, block))
}

/// Registers the output ports, activates the client and connects the ports to the system's
/// playback ports when `connect`. Returns the active client, the flag that says the server
/// went away, and warnings.
pub(crate) fn activate(
    client: j::Client,
    audio: Box<HostAudio>,
    channels: usize,
    connect: bool,
) -> Result<(Active, Arc<AtomicBool>, Vec<String>), HostError> {
    let jerr = |e: j::Error| HostError::Options(format!("JACK: {e}"));
    let outs = (0..channels)
        .map(|i| client.register_port(&format!("out_{}", i + 1), j::AudioOut::default()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(jerr)?;
    let names: Vec<String> = outs.iter().filter_map(|p| p.name().ok()).collect();
    let gone = Arc::new(AtomicBool::new(false));
    let block = client.buffer_size() as usize;
    let notifications = Notifications {
        gone: gone.clone(),
        audio_stats: audio.stats.clone(),
    };
    let active = client
        .activate_async(notifications, Process { audio, outs, block })
        .map_err(jerr)?;
    let mut warnings = Vec::new();
    if connect {
        crate::backend::jack::connect_to_playback(active.as_client(), &names, &mut warnings);
    }
    Ok((active, gone, warnings))
}

/// Deactivates the client and hands the audio side back.
pub(crate) fn close(active: Active) -> Option<Box<HostAudio>> {
    active.deactivate().ok().map(|(_, _, p)| p.audio)
}
