//! Following JACK buffer-size changes: when the server announces a new size, every loaded
//! graph is compiled again at it and the whole set handed to the process callback, which
//! adopts it at a cycle boundary (the protocol is in `jack.rs`); the graphs restart from
//! their first sample at the new size.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::audio::{FromAudio, GraphSet};
use super::channel::gain_of;
use super::load::ExecutorPlan;
use super::options::fit_pipeline;
use super::{Driver, Host, HostError, Mode};

impl Host {
    /// [`Host::poll`] under JACK: collects a set adopted, withdraws one offered at a size
    /// that is no longer wanted, and offers a set compiled at the size the server announced.
    pub(super) fn follow_resize(&mut self) -> Result<(), HostError> {
        let resize = match &self.driver {
            Driver::Jack { shared, .. } => {
                if let Some(why) = shared.stopped() {
                    return Err(HostError::JackStopped(why));
                }
                shared.clone()
            }
            _ => return Ok(()),
        };
        if let Some(b) = self.pending {
            if let Some(old) = resize.handoff.collect() {
                // The set of size `b` was adopted.
                self.pending = None;
                self.audio_block = b;
                self.free_set(old);
            }
        }
        // Relaxed: the size alone; the sets travel through the handoff.
        let wanted = resize.wanted.load(Ordering::Relaxed) as usize;
        if let Some(b) = self.pending {
            if b == wanted {
                // On its way.
                return Ok(());
            }
            match resize.handoff.withdraw() {
                // Never adopted: the audio thread still plays at `audio_block`.
                Some(set) => self.free_set(set),
                None => {
                    // Taken just now: the callback retires the old set right after.
                    let start = Instant::now();
                    let timeout = self.answer_timeout();
                    let old = loop {
                        if let Some(old) = resize.handoff.collect() {
                            break old;
                        }
                        if start.elapsed() > timeout {
                            return Err(HostError::AudioGone);
                        }
                        std::thread::yield_now();
                    };
                    self.audio_block = b;
                    self.free_set(old);
                }
            }
            self.pending = None;
        }
        if wanted == 0 || wanted == self.audio_block {
            self.set_block(self.audio_block);
            return Ok(());
        }
        let set = self.build_set(wanted)?;
        if resize.handoff.offer(set).is_err() {
            // Cannot happen: nothing is pending, and every retired set was collected.
            return Err(HostError::AudioGone);
        }
        self.pending = Some(wanted);
        Ok(())
    }

    /// Makes `block` the size that graphs are compiled at, with the pipeline fitted to it.
    /// Returns the note when the pipeline asked for does not divide it.
    fn set_block(&mut self, block: usize) -> Option<String> {
        self.options.block = block;
        let (pipeline, note) = fit_pipeline(self.options.pipeline, block);
        self.pipeline = pipeline;
        note
    }

    /// Every loaded graph compiled again at `block` frames (same ids, gains, executors and
    /// pipelining), as one set for the JACK callback. A graph that cannot be compiled at
    /// that size, or no longer fits in the pool, is unloaded with a notice.
    fn build_set(&mut self, block: usize) -> Result<Box<GraphSet>, HostError> {
        let note = self.set_block(block);
        let mut set = Box::new(GraphSet::new(
            block,
            self.options.channels,
            self.options.period_ns(),
        ));
        let mut said = format!(
            "JACK buffer size {} -> {block} frames: {} graph{} compiled again",
            self.audio_block,
            self.graphs.len(),
            if self.graphs.len() == 1 { "" } else { "s" }
        );
        if let Some(note) = note {
            said.push_str(&format!(" ({note})"));
        }
        let mut i = 0;
        while i < self.graphs.len() {
            let n = self.graphs.len();
            let t = self.options.threads.max(1);
            let threads = match self.options.mode {
                Mode::Partitioned => ((i + 1) * t / n - i * t / n).max(1),
                Mode::Shared | Mode::Separate => t,
            };
            let e = &self.graphs[i];
            let executor = ExecutorPlan::again(e.executor);
            let (graph, id, stats) = (e.graph.clone(), e.id, e.stats.clone());
            match self.build_slot(&graph, id, threads, executor, stats) {
                Ok(mut built) => {
                    let e = &mut self.graphs[i];
                    built.slot.gain = gain_of(e.gain_db);
                    e.cost_ns = built.cost_ns;
                    e.units = built.units;
                    e.pipeline = built.pipeline;
                    set.slots.push(built.slot);
                    i += 1;
                }
                Err(err) => {
                    // Not in the new set, it stops with the old one, which takes its ports.
                    let e = self.graphs.remove(i);
                    said.push_str(&format!("; `{}` unloaded: {err}", e.name));
                }
            }
        }
        // Each graph was checked against the others' units as they were: the whole set must
        // fit too (the pool's deques hold this many).
        while self.graphs.iter().map(|e| e.units).sum::<usize>() > self.options.unit_capacity {
            let e = self.graphs.pop().expect("units come from graphs");
            drop(set.slots.pop());
            said.push_str(&format!(
                "; `{}` unloaded: the pool holds {} units and the graphs have more at this size",
                e.name, self.options.unit_capacity
            ));
        }
        self.notices.push(said);
        Ok(set)
    }

    /// Frees a set the JACK callback retired or never took, unregistering the ports still
    /// in it (those of graphs that the set replacing it did not hold).
    fn free_set(&self, set: Box<GraphSet>) {
        let mut set = set;
        for slot in set.slots.drain(..) {
            self.release(FromAudio::Refused(slot));
        }
    }
}
