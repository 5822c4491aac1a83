//! The channel to the audio thread, control side: commands pushed into the preallocated
//! queue, events read back, and what the audio thread hands back freed here (a graph's own
//! JACK ports unregistered with it).

use std::time::{Duration, Instant};

use super::audio::{FromAudio, ToAudio};
use super::{Driver, Host, HostBackend, HostError};

impl Host {
    pub(super) fn send(&mut self, cmd: ToAudio) -> Result<(), HostError> {
        let mut cmd = cmd;
        let start = Instant::now();
        let timeout = self.answer_timeout();
        loop {
            match self.queues.to_audio.push(cmd) {
                Ok(()) => break,
                Err(back) => {
                    if self.stopping() {
                        // Dropped here, on the control thread, as a command never sent.
                        drop(back);
                        return Err(HostError::Stopping);
                    }
                    if let Driver::Offline(audio) = &mut self.driver {
                        // Commands pile up only between cycles run: take them now.
                        audio.apply_commands();
                        self.collect();
                    } else if start.elapsed() > timeout {
                        return Err(HostError::AudioGone);
                    }
                    cmd = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        Ok(())
    }

    /// Frees what the audio thread handed back (offline backend: the graphs removed by
    /// the cycles run since).
    pub(super) fn collect(&mut self) {
        while let Some(ev) = self.queues.from_audio.pop() {
            self.release(ev);
        }
    }

    /// The graph's own JACK ports (`--ports per-graph`), or none.
    pub(super) fn register_ports(
        &self,
        name: &str,
        channels: usize,
    ) -> Result<Vec<::jack::Port<::jack::AudioOut>>, HostError> {
        let (
            HostBackend::Jack {
                per_graph_ports: true,
                ..
            },
            Driver::Jack {
                active: Some(active),
                ..
            },
        ) = (&self.options.backend, &self.driver)
        else {
            return Ok(Vec::new());
        };
        (0..channels)
            .map(|c| {
                active
                    .as_client()
                    .register_port(
                        &format!("{name}_out_{}", c + 1),
                        ::jack::AudioOut::default(),
                    )
                    .map_err(|e| {
                        HostError::Backend(format!("JACK: cannot add a port for `{name}`: {e}"))
                    })
            })
            .collect()
    }

    /// Frees what an event hands back, unregistering a removed graph's own ports.
    pub(super) fn release(&self, ev: FromAudio) {
        let slot = match ev {
            FromAudio::Removed { slot, .. }
            | FromAudio::Refused(slot)
            | FromAudio::Stale(slot)
            | FromAudio::Discarded(slot) => slot,
            _ => return,
        };
        let mut slot = slot;
        if let Driver::Jack {
            active: Some(active),
            ..
        } = &self.driver
        {
            for p in slot.ports.drain(..) {
                let _ = active.as_client().unregister_port(p);
            }
        }
    }

    /// The next event from the audio thread.
    pub(super) fn answer(&mut self) -> Result<FromAudio, HostError> {
        let start = Instant::now();
        let timeout = self.answer_timeout();
        loop {
            if let Some(ev) = self.queues.from_audio.pop() {
                return Ok(ev);
            }
            if self.stopping() {
                return Err(HostError::Stopping);
            }
            match &self.driver {
                Driver::Thread { handle, .. } => {
                    if handle.as_ref().is_none_or(|h| h.is_finished()) || start.elapsed() > timeout
                    {
                        return Err(HostError::AudioGone);
                    }
                }
                Driver::Jack { shared, .. } => {
                    if let Some(why) = shared.stopped() {
                        return Err(HostError::JackStopped(why));
                    }
                    if start.elapsed() > timeout {
                        return Err(HostError::AudioGone);
                    }
                }
                _ => return Err(HostError::AudioGone),
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// The linear gain of `db` decibels (exactly 1 at 0 dB).
pub(super) fn gain_of(db: f64) -> f32 {
    if db == 0.0 {
        1.0
    } else {
        10f64.powf(db / 20.0) as f32
    }
}
