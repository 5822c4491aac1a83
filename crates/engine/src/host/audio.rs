//! The audio side of the host: the loaded graphs, the runtime that runs them, the mix, and
//! the queues to and from the control thread. Everything here that runs per cycle
//! ([`HostAudio::run_cycle`]) never allocates, frees, locks or waits for the control thread:
//! graphs arrive and leave as boxes through preallocated lock-free queues
//! (`crossbeam_queue::ArrayQueue`), the list of loaded graphs has its capacity reserved, and
//! a removed graph travels back to the control thread, which frees it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_queue::ArrayQueue;
use fugue_exec::executors::multi::MAX_TENANTS;
use fugue_exec::trace::{now, Calibration};
use fugue_exec::{Executor, SharedPool, Tenant};

use super::stats::{GraphStats, HostStats};
use super::Mode;
use crate::blocks::BlockSender;

/// A loaded graph, as the audio thread holds it.
pub(crate) struct Slot {
    /// The host's number for it (increasing in load order: the mix adds graphs in this
    /// order).
    pub(crate) id: u32,
    pub(crate) tenant: Tenant,
    /// Its own executor (`separate` mode).
    pub(crate) executor: Option<Box<dyn Executor + Send>>,
    /// Linear gain.
    pub(crate) gain: f32,
    /// Silenced after a panic.
    pub(crate) silenced: bool,
    pub(crate) stats: Arc<GraphStats>,
    /// Its own JACK output ports (`--ports per-graph`), or none.
    pub(crate) ports: Vec<::jack::Port<::jack::AudioOut>>,
}

impl AsMut<Tenant> for Box<Slot> {
    fn as_mut(&mut self) -> &mut Tenant {
        &mut self.tenant
    }
}

/// From the control thread to the audio thread.
pub(crate) enum ToAudio {
    /// Adopt this graph at the next cycle boundary.
    Load(Box<Slot>),
    /// Remove graph `id`.
    Unload(u32),
    /// Set graph `id`'s linear gain.
    Gain(u32, f32),
}

/// From the audio thread to the control thread: one per `Load` or `Unload`.
pub(crate) enum FromAudio {
    /// Graph `id` runs from `cycle` on.
    Adopted { id: u32, cycle: u64 },
    /// The graph could not be adopted (no room); here it is back, to free.
    #[allow(dead_code)] // The box is carried only to be dropped on the control thread.
    Refused(Box<Slot>),
    /// Graph `id` ran last in `cycle - 1`; here it is, to free.
    Removed {
        id: u32,
        cycle: u64,
        /// Carried only to be dropped on the control thread.
        #[allow(dead_code)]
        slot: Box<Slot>,
    },
    /// No graph `id` was loaded.
    Unknown { id: u32 },
}

/// Queue capacities: commands in flight at most. The control thread waits for one event per
/// `Load` or `Unload` before it sends more than this many, so the event queue (this plus
/// room to spare) never fills.
pub(crate) const COMMANDS: usize = 64;

/// The two queues.
pub(crate) struct Queues {
    pub(crate) to_audio: ArrayQueue<ToAudio>,
    pub(crate) from_audio: ArrayQueue<FromAudio>,
}

impl Queues {
    pub(crate) fn new() -> Self {
        Queues {
            to_audio: ArrayQueue::new(COMMANDS),
            from_audio: ArrayQueue::new(2 * COMMANDS),
        }
    }
}

/// How the graphs run.
pub(crate) enum Runtime {
    /// One pool for every graph (`shared`), or its threads split among them (`partitioned`).
    Pool(Box<SharedPool>),
    /// Each graph on its own executor (`separate`).
    Separate,
}

/// The audio side.
pub(crate) struct HostAudio {
    pub(crate) mode: Mode,
    runtime: Runtime,
    /// Loaded graphs, in increasing id; capacity [`MAX_TENANTS`], never exceeded. Boxed:
    /// a graph travels as one pointer, and its tenant stays put while workers run it.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<Slot>>,
    queues: Arc<Queues>,
    /// The next cycle to run.
    pub(crate) cycle: u64,
    /// The mix, one buffer per host channel.
    mix: Vec<Vec<f32>>,
    block: usize,
    /// Scratch: the thread groups of a partition.
    groups: Vec<usize>,
    pub(crate) stats: Arc<HostStats>,
    calibration: Calibration,
    ns_per_tick: f64,
    deadline_ns: u64,
    /// Where the mix is recorded, interleaved.
    pub(crate) record: Option<BlockSender>,
    /// Wait for the writer when it is behind (offline), rather than drop the block.
    pub(crate) record_waits: bool,
}

impl HostAudio {
    pub(crate) fn new(
        mode: Mode,
        runtime: Runtime,
        queues: Arc<Queues>,
        channels: usize,
        block: usize,
        deadline_ns: u64,
        stats: Arc<HostStats>,
    ) -> Self {
        let threads = match &runtime {
            Runtime::Pool(p) => p.threads(),
            Runtime::Separate => 1,
        };
        HostAudio {
            mode,
            runtime,
            slots: Vec::with_capacity(MAX_TENANTS),
            queues,
            cycle: 0,
            mix: vec![vec![0.0; block]; channels.max(1)],
            block,
            groups: vec![0; threads],
            stats,
            calibration: Calibration::start(),
            ns_per_tick: 1.0,
            deadline_ns,
            record: None,
            record_waits: false,
        }
    }

    /// The mix of the last cycle, one buffer per channel.
    pub(crate) fn mix(&self) -> &[Vec<f32>] {
        &self.mix
    }

    /// Applies the commands waiting: the cycle boundary. Returns whether a graph was
    /// adopted or removed. Never allocates or frees.
    pub(crate) fn apply_commands(&mut self) -> bool {
        let mut swapped = false;
        let mut changed = false;
        while let Some(cmd) = self.queues.to_audio.pop() {
            match cmd {
                ToAudio::Load(slot) => {
                    if self.slots.len() >= MAX_TENANTS {
                        self.reply(FromAudio::Refused(slot));
                        continue;
                    }
                    let id = slot.id;
                    // Ids increase, so pushing keeps the list in id order.
                    self.slots.push(slot);
                    swapped = true;
                    changed = true;
                    self.reply(FromAudio::Adopted {
                        id,
                        cycle: self.cycle,
                    });
                }
                ToAudio::Unload(id) => match self.slots.iter().position(|s| s.id == id) {
                    Some(i) => {
                        let slot = self.slots.remove(i);
                        swapped = true;
                        changed = true;
                        self.reply(FromAudio::Removed {
                            id,
                            cycle: self.cycle,
                            slot,
                        });
                    }
                    None => self.reply(FromAudio::Unknown { id }),
                },
                ToAudio::Gain(id, g) => {
                    if let Some(s) = self.slots.iter_mut().find(|s| s.id == id) {
                        s.gain = g;
                    }
                }
            }
        }
        if changed && self.mode == Mode::Partitioned {
            self.partition();
        }
        swapped
    }

    /// Splits the pool's threads among the loaded graphs: graph `i` of `n` gets threads
    /// `i * T / n .. (i + 1) * T / n` (the control thread refuses more graphs than threads).
    fn partition(&mut self) {
        let Runtime::Pool(pool) = &mut self.runtime else {
            return;
        };
        let t = self.groups.len();
        let n = self.slots.len().clamp(1, t);
        for (w, g) in self.groups.iter_mut().enumerate() {
            *g = w * n / t;
        }
        pool.set_partition(&self.groups);
        for (i, s) in self.slots.iter_mut().enumerate() {
            s.tenant.set_group(i.min(n - 1));
        }
    }

    /// Hands an event to the control thread. The queue never fills (see [`COMMANDS`]); if it
    /// did, the event would be lost, never freed here.
    fn reply(&self, event: FromAudio) {
        if let Err(e) = self.queues.from_audio.push(event) {
            // Never freed on this thread: leaked rather than dropped (cannot happen, see
            // `COMMANDS`).
            std::mem::forget(e);
        }
    }

    /// One cycle: the commands waiting are applied, every loaded graph runs once, their
    /// sinks are mixed with their gains in id order, the statistics are updated and the mix
    /// is recorded. `started` is when the cycle began. Returns whether it adopted or removed
    /// a graph. Never allocates, frees, locks, or waits for the control thread.
    pub(crate) fn run_cycle(&mut self, started: Instant) -> bool {
        let swapped = self.apply_commands();
        if self.cycle.is_multiple_of(256) {
            self.ns_per_tick = self.calibration.ns_per_tick();
        }
        match &mut self.runtime {
            Runtime::Pool(pool) => pool.run_cycle(&mut self.slots),
            Runtime::Separate => {
                for s in self.slots.iter_mut() {
                    if s.silenced {
                        continue;
                    }
                    let t0 = now();
                    if let Some(e) = s.executor.as_mut() {
                        e.run_cycle(s.tenant.plan_mut());
                    }
                    let dt = now().wrapping_sub(t0);
                    // The same account as the pool keeps.
                    let _ = s.tenant.take_busy_ticks();
                    s.stats.share.add((dt as f64 * self.ns_per_tick) as u64);
                }
            }
        }
        for m in self.mix.iter_mut() {
            m.fill(0.0);
        }
        let channels = self.mix.len();
        for s in self.slots.iter_mut() {
            if s.silenced {
                continue;
            }
            let plan = s.tenant.plan();
            // A panic silences the graph from this cycle on (its processors are not run
            // again, so they cannot panic again).
            if (0..plan.len()).any(|i| plan.panicked(i)) {
                s.silenced = true;
                s.tenant.set_enabled(false);
                // Relaxed: a statistic.
                s.stats.panics.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let n = plan.n_outputs();
            for ch in 0..n {
                let src = plan.output(ch);
                let mix_one = |dst: &mut [f32]| {
                    if s.gain == 1.0 {
                        for (d, &x) in dst.iter_mut().zip(src) {
                            *d += x;
                        }
                    } else {
                        for (d, &x) in dst.iter_mut().zip(src) {
                            *d += s.gain * x;
                        }
                    }
                };
                if n == 1 {
                    // A mono graph goes to every channel.
                    for dst in self.mix.iter_mut() {
                        mix_one(dst);
                    }
                } else {
                    mix_one(&mut self.mix[ch % channels]);
                }
            }
        }
        let duration = started.elapsed().as_nanos() as u64;
        let missed = duration > self.deadline_ns;
        for s in self.slots.iter_mut() {
            if matches!(self.runtime, Runtime::Pool(_)) && !s.silenced {
                let ticks = s.tenant.take_busy_ticks();
                s.stats.share.add((ticks as f64 * self.ns_per_tick) as u64);
            }
            if missed {
                s.stats.misses.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Relaxed: statistics.
        self.stats.cycle.add(duration);
        if missed {
            self.stats.misses.fetch_add(1, Ordering::Relaxed);
        }
        if swapped {
            self.stats.swap_cycles.fetch_add(1, Ordering::Relaxed);
            if missed {
                self.stats.swap_misses.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.send_record();
        self.cycle += 1;
        swapped
    }

    /// Sends the mix, interleaved, to the recorder.
    fn send_record(&mut self) {
        let Some(tx) = self.record.as_mut() else {
            return;
        };
        let mix = &self.mix;
        let block = self.block;
        let fill = |out: &mut [f32]| {
            let ch = mix.len();
            for (f, frame) in out.chunks_exact_mut(ch).take(block).enumerate() {
                for (c, x) in frame.iter_mut().enumerate() {
                    *x = mix[c][f];
                }
            }
            block * ch
        };
        let sent = if self.record_waits {
            tx.send_with(fill)
        } else {
            tx.try_send_with(fill)
        };
        if !sent {
            self.stats.record_drops.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Calls `f` with every loaded graph (JACK: to fill its own ports). Never allocates.
    #[inline]
    pub(crate) fn for_each_slot(&mut self, mut f: impl FnMut(&mut Slot)) {
        for s in self.slots.iter_mut() {
            f(s);
        }
    }

    /// Takes every loaded graph out (control thread, at the end).
    #[allow(clippy::vec_box)]
    pub(crate) fn drain(&mut self) -> Vec<Box<Slot>> {
        std::mem::take(&mut self.slots)
    }
}
