//! The audio side of the host: the loaded graphs, the runtime that runs them, the mix, and
//! the queues to and from the control thread. Everything here that runs per cycle
//! ([`HostAudio::run_cycle`]) never allocates, frees, locks or waits for the control thread:
//! graphs arrive and leave as boxes through preallocated lock-free queues
//! (`crossbeam_queue::ArrayQueue`), the list of loaded graphs has its capacity reserved, and
//! a removed graph travels back to the control thread, which frees it. Under JACK a buffer-size
//! change replaces the whole [`GraphSet`] (every graph recompiled at the new size, the mix
//! buffers, the deadline) at a cycle boundary ([`HostAudio::adopt`]); the old set goes back to
//! the control thread too.

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
use crate::histogram::bump;

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
    /// [`now`] ticks its tasks ran in the current cycle (separate mode: its executor's run;
    /// the pool modes: summed over the threads), until the cycle is accounted.
    pub(crate) work_ticks: u64,
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
    /// Set live parameter `param` of node `node` of graph `id` to `value`.
    Set {
        id: u32,
        node: u32,
        param: u32,
        value: f64,
    },
}

/// From the audio thread to the control thread: one per `Load` or `Unload`, and one per
/// graph that a new [`GraphSet`] held but that was unloaded before the set was adopted.
pub(crate) enum FromAudio {
    /// Graph `id` runs from `cycle` on.
    Adopted { id: u32, cycle: u64 },
    /// The graph could not be adopted (no room); here it is back, to free.
    #[allow(dead_code)] // The box is carried only to be dropped on the control thread.
    Refused(Box<Slot>),
    /// The graph was compiled at another buffer size than the one that plays now (a JACK
    /// buffer-size change crossed its load); here it is back, to compile again or resend.
    Stale(Box<Slot>),
    /// A new set held this graph, unloaded before the set was adopted; here it is, to free.
    #[allow(dead_code)] // The box is carried only to be dropped on the control thread.
    Discarded(Box<Slot>),
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

/// Cycles an offline run of the shared pool holds at most ([`SharedPool::run_cycles`]): one
/// claim and one wait per run, not per cycle, and room for the graphs to drift apart. A
/// thread that the system takes off its core for a time slice (milliseconds) while it runs
/// a graph holds that graph back; the others run ahead meanwhile, and take the held graph
/// over once it is free, only while the run lasts: a run must outlast several slices
/// (`docs/host.md`, "Offline: several cycles in a row").
pub const BATCH_CYCLES: usize = 1024;

/// Wall time an offline run of several cycles takes at most, about (50 ms): several of the
/// system scheduler's time slices, and short enough for a stop to be noticed at once
/// ([`HostAudio::run_cycles`]).
const RUN_WALL_NS: u64 = 50_000_000;

/// Cycles of the first offline run, before the pace is known.
const FIRST_RUN_CYCLES: u64 = 64;

/// Samples a graph's captured outputs of one run hold at most (2 MiB): a graph of large
/// blocks or many channels runs fewer cycles in a row.
const BATCH_SAMPLES: usize = 1 << 19;

/// Bytes of a graph's capture at most ([`BATCH_SAMPLES`] samples).
pub(crate) const CAPTURE_BYTES: usize = BATCH_SAMPLES * std::mem::size_of::<f32>();

/// Cycles of a run of several for a graph of `outputs` channels of `block` frames.
pub(crate) fn batch_cycles(outputs: usize, block: usize) -> usize {
    (BATCH_SAMPLES / outputs.saturating_mul(block).max(1)).clamp(1, BATCH_CYCLES)
}

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

/// What plays at one buffer size: the loaded graphs, the mix buffers and the deadline. The
/// JACK host replaces it as a whole when the server's buffer size changes (one box: it
/// travels as one pointer through [`crate::backend::jack::Handoff`]).
pub(crate) struct GraphSet {
    /// Frames per cycle: every plan's block, and the mix buffers' length.
    pub(crate) block: usize,
    /// The cycle's deadline (the period), ns.
    pub(crate) deadline_ns: u64,
    /// Loaded graphs, in increasing id; capacity [`MAX_TENANTS`], never exceeded. Boxed:
    /// a graph travels as one pointer, and its tenant stays put while workers run it.
    #[allow(clippy::vec_box)]
    pub(crate) slots: Vec<Box<Slot>>,
    /// The mix, one buffer per host channel.
    mix: Vec<Vec<f32>>,
}

impl GraphSet {
    /// An empty set for cycles of `block` frames, `channels` mix channels (control thread;
    /// allocates the mix and room for [`MAX_TENANTS`] graphs).
    pub(crate) fn new(block: usize, channels: usize, deadline_ns: u64) -> Self {
        GraphSet {
            block,
            deadline_ns,
            slots: Vec::with_capacity(MAX_TENANTS),
            mix: vec![vec![0.0; block]; channels.max(1)],
        }
    }
}

/// The audio side.
pub(crate) struct HostAudio {
    pub(crate) mode: Mode,
    runtime: Runtime,
    /// The graphs and the mix.
    set: Box<GraphSet>,
    queues: Arc<Queues>,
    /// The next cycle to run.
    pub(crate) cycle: u64,
    /// Scratch: the thread groups of a partition.
    groups: Vec<usize>,
    pub(crate) stats: Arc<HostStats>,
    calibration: Calibration,
    ns_per_tick: f64,
    /// A graph adopted or removed since the last cycle ran (commands applied between cycles,
    /// a full queue taken offline, a silent JACK callback): the next cycle counts as one
    /// with a swap.
    swap_pending: bool,
    /// The cycle at which the ticks' rate was last refined (every 256 cycles).
    calibrated: u64,
    /// Offline: the wall nanoseconds per cycle of the last run of several (0: none yet),
    /// which sizes the next ([`RUN_WALL_NS`]).
    run_cycle_ns: u64,
    /// The last cycle's mix held a sample that was not a finite number: this one is made
    /// counted at once ([`HostAudio::mix_counted`]), not twice (a graph that went NaN
    /// usually stays so).
    counted: bool,
    /// Where the mix is recorded, interleaved, in blocks of at most `record_frames` frames.
    pub(crate) record: Option<BlockSender>,
    /// The most frames a recorded block holds (the block the host started with: a larger
    /// block after a JACK buffer-size change is sent in pieces).
    pub(crate) record_frames: usize,
    /// Wait for the writer when it is behind (offline), rather than drop the block.
    pub(crate) record_waits: bool,
}

impl HostAudio {
    pub(crate) fn new(
        mode: Mode,
        runtime: Runtime,
        queues: Arc<Queues>,
        set: Box<GraphSet>,
        stats: Arc<HostStats>,
    ) -> Self {
        let threads = match &runtime {
            Runtime::Pool(p) => p.threads(),
            Runtime::Separate => 1,
        };
        // The ticks' rate, measured over a few milliseconds before the first cycle (refined
        // every 256 cycles from the same start): busy times are right from the first cycle,
        // on any machine.
        let calibration = Calibration::start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let ns_per_tick = calibration.ns_per_tick();
        HostAudio {
            mode,
            runtime,
            record_frames: set.block,
            set,
            queues,
            cycle: 0,
            groups: vec![0; threads],
            stats,
            calibration,
            ns_per_tick,
            calibrated: 0,
            run_cycle_ns: 0,
            counted: false,
            swap_pending: false,
            record: None,
            record_waits: false,
        }
    }

    /// The mix of the last cycle, one buffer per channel.
    pub(crate) fn mix(&self) -> &[Vec<f32>] {
        &self.set.mix
    }

    /// Frames per cycle of the set that plays.
    #[inline]
    pub(crate) fn block(&self) -> usize {
        self.set.block
    }

    /// Adopts `new` (the same graphs compiled at another buffer size) at this cycle
    /// boundary and returns the set it replaces, for the control thread to free. What the
    /// audio thread owns passes from each old graph to its new self: its gain, its silence
    /// after a panic, its JACK ports. A graph of `new` that is no longer loaded (unloaded
    /// after the set was built) goes back to the control thread. Never allocates or frees.
    pub(crate) fn adopt(&mut self, new: Box<GraphSet>) -> Box<GraphSet> {
        let mut new = new;
        let mut i = 0;
        while i < new.slots.len() {
            let id = new.slots[i].id;
            match self.set.slots.iter_mut().find(|s| s.id == id) {
                Some(old) => {
                    let s = &mut new.slots[i];
                    s.gain = old.gain;
                    if old.silenced {
                        s.silenced = true;
                        s.tenant.set_enabled(false);
                    }
                    // Swapping with the new graph's empty list moves the ports without
                    // allocating.
                    std::mem::swap(&mut s.ports, &mut old.ports);
                    i += 1;
                }
                None => {
                    // `remove` shifts the rest down: no allocation, and the order (the mix
                    // order) is kept.
                    let slot = new.slots.remove(i);
                    self.reply(FromAudio::Discarded(slot));
                }
            }
        }
        let old = std::mem::replace(&mut self.set, new);
        if self.mode == Mode::Partitioned {
            self.partition();
        }
        // Relaxed: a statistic.
        self.stats.resizes.fetch_add(1, Ordering::Relaxed);
        old
    }

    /// Applies the commands waiting: the cycle boundary. Returns whether a graph was
    /// adopted or removed (also kept for the next cycle's statistics). Never allocates or
    /// frees.
    pub(crate) fn apply_commands(&mut self) -> bool {
        let mut swapped = false;
        let mut changed = false;
        while let Some(cmd) = self.queues.to_audio.pop() {
            match cmd {
                ToAudio::Load(slot) => {
                    if slot.tenant.plan().block() != self.set.block {
                        self.reply(FromAudio::Stale(slot));
                        continue;
                    }
                    if self.set.slots.len() >= MAX_TENANTS {
                        self.reply(FromAudio::Refused(slot));
                        continue;
                    }
                    let id = slot.id;
                    // Ids increase, so pushing keeps the list in id order.
                    self.set.slots.push(slot);
                    swapped = true;
                    changed = true;
                    self.reply(FromAudio::Adopted {
                        id,
                        cycle: self.cycle,
                    });
                }
                ToAudio::Unload(id) => match self.set.slots.iter().position(|s| s.id == id) {
                    Some(i) => {
                        let slot = self.set.slots.remove(i);
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
                    if let Some(s) = self.set.slots.iter_mut().find(|s| s.id == id) {
                        s.gain = g;
                    }
                }
                ToAudio::Set {
                    id,
                    node,
                    param,
                    value,
                } => {
                    // Between cycles: no task of the graph runs.
                    if let Some(s) = self.set.slots.iter_mut().find(|s| s.id == id) {
                        s.tenant
                            .plan_mut()
                            .set_param(node as usize, param as usize, value);
                    }
                }
            }
        }
        if changed && self.mode == Mode::Partitioned {
            self.partition();
        }
        self.swap_pending |= swapped;
        swapped
    }

    /// Splits the pool's threads among the loaded graphs: graph `i` of `n` gets threads
    /// `i * T / n .. (i + 1) * T / n` (the control thread refuses more graphs than threads).
    fn partition(&mut self) {
        let Runtime::Pool(pool) = &mut self.runtime else {
            return;
        };
        let t = self.groups.len();
        let n = self.set.slots.len().clamp(1, t);
        for (w, g) in self.groups.iter_mut().enumerate() {
            *g = w * n / t;
        }
        pool.set_partition(&self.groups);
        for (i, s) in self.set.slots.iter_mut().enumerate() {
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
        self.run_some(1, started).1
    }

    /// Offline: `n` cycles, back to back, each as [`HostAudio::run_cycle`] runs it (the
    /// commands waiting apply at the first), the pool running several in a row
    /// ([`SharedPool::run_cycles`]); the mix of each cycle is recorded, and
    /// [`HostAudio::mix`] is the last one's. Never allocates, frees, locks, or waits for the
    /// control thread.
    ///
    /// Each run holds at most [`BATCH_CYCLES`], and as many as take about [`RUN_WALL_NS`] at
    /// the last run's pace (the first, and the first after commands: [`FIRST_RUN_CYCLES`]). With `until`, no run starts
    /// after that instant. Returns the cycles run.
    pub(crate) fn run_cycles(&mut self, n: u64, until: Option<Instant>) -> u64 {
        let mut left = n;
        while left > 0 {
            if !self.queues.to_audio.is_empty() {
                // A graph may come or go at this run's start: its pace is not known.
                self.run_cycle_ns = 0;
            }
            let fit = match self.run_cycle_ns {
                0 => FIRST_RUN_CYCLES,
                ns => (RUN_WALL_NS / ns).max(1),
            };
            let want = left.min(BATCH_CYCLES as u64).min(fit) as usize;
            let started = Instant::now();
            let ran = self.run_some(want, started).0;
            self.run_cycle_ns = (started.elapsed().as_nanos() as u64 / ran as u64).max(1);
            left -= ran as u64;
            if until.is_some_and(|u| Instant::now() >= u) {
                break;
            }
        }
        n - left
    }

    /// Runs up to `cycles` cycles (one unless the pool can run several in a row: offline
    /// only), started at `started`, each mixed, accounted and recorded in turn. Returns how
    /// many ran, and whether the first adopted or removed a graph.
    fn run_some(&mut self, cycles: usize, started: Instant) -> (usize, bool) {
        self.apply_commands();
        let swapped = std::mem::take(&mut self.swap_pending);
        if self.cycle / 256 > self.calibrated / 256 {
            self.calibrated = self.cycle;
            self.ns_per_tick = self.calibration.ns_per_tick();
        }
        let set = &mut *self.set;
        let parallel_start = now();
        let ran = match &mut self.runtime {
            Runtime::Pool(pool) => {
                let ran = pool.run_cycles(&mut set.slots, cycles);
                // Relaxed: a counter read for a report.
                self.stats
                    .handovers
                    .store(pool.handovers(), Ordering::Relaxed);
                for s in set.slots.iter_mut() {
                    // Taken even from a silenced graph, so that none is left for later.
                    s.work_ticks = s.tenant.take_busy_ticks();
                }
                ran
            }
            Runtime::Separate => {
                for s in set.slots.iter_mut() {
                    if s.silenced {
                        continue;
                    }
                    let t0 = now();
                    if let Some(e) = s.executor.as_mut() {
                        e.run_cycle(s.tenant.plan_mut());
                    }
                    s.work_ticks = now().wrapping_sub(t0);
                    // The same account as the pool keeps (read by the pool modes only).
                    let _ = s.tenant.take_busy_ticks();
                }
                1
            }
        };
        let parallel_ticks = now().wrapping_sub(parallel_start) / ran as u64;
        // A cycle of a run of several costs its share of the run, and its own mix.
        let share = started.elapsed() / ran as u32;
        for j in 0..ran {
            let mixed = Instant::now();
            self.mix_cycle(j, ran);
            let duration = (share + mixed.elapsed()).as_nanos() as u64;
            let missed = duration > self.set.deadline_ns;
            self.account(duration, parallel_ticks, missed, ran);
            if swapped && j == 0 {
                self.stats.swap_cycles.fetch_add(1, Ordering::Relaxed);
                if missed {
                    self.stats.swap_misses.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.send_record();
            self.cycle += 1;
        }
        for s in self.set.slots.iter_mut() {
            s.work_ticks = 0;
        }
        (ran, swapped)
    }

    /// Mixes cycle `j` of a run of `ran` cycles: the plans' outputs after a run of one, the
    /// captured ones after a run of several. First without looking at the samples: any
    /// sample that is not a finite number, in a graph's output or in a sum that overflowed,
    /// leaves one in the mix (an infinity or a NaN plus a finite number, times a finite
    /// gain, is never finite again), so a mix found finite once made is the mix; else it is
    /// made again, each output's samples counted and mixed as silence where they are not
    /// finite ([`HostAudio::mix_counted`]), the same additions in the same order. After such
    /// a cycle, the next is made counted at once, until one is finite again.
    fn mix_cycle(&mut self, j: usize, ran: usize) {
        let counted = self.counted;
        let set = &mut *self.set;
        for m in set.mix.iter_mut() {
            m.fill(0.0);
        }
        let channels = set.mix.len();
        for s in set.slots.iter_mut() {
            if s.silenced {
                continue;
            }
            let plan = s.tenant.plan();
            // A panic silences the graph from this cycle on (its processors are not run
            // again, so they cannot panic again). In a run of several, the cycles before the
            // one that panicked are captured.
            let panicked = if ran > 1 {
                j >= s.tenant.captured()
            } else {
                plan.any_panicked()
            };
            if panicked {
                s.silenced = true;
                s.tenant.set_enabled(false);
                if let Some((task, message)) = s.tenant.plan_mut().take_first_panic() {
                    let node = s.tenant.plan().node_of(task);
                    // Set once: only this thread sets it, so `set` never waits. Were it set
                    // already, the value handed back is leaked, not freed here.
                    if let Err(kept) = s.stats.failure.set((node, message)) {
                        std::mem::forget(kept);
                    }
                }
                // Release: publishes the failure to the control thread's Acquire load.
                s.stats.panics.fetch_add(1, Ordering::Release);
                continue;
            }
            if counted {
                continue;
            }
            let n = plan.n_outputs();
            for ch in 0..n {
                let src = output_of(&s.tenant, j, ran, ch);
                if n == 1 {
                    // A mono graph goes to every channel.
                    for dst in set.mix.iter_mut() {
                        add_scaled(dst, src, s.gain);
                    }
                } else {
                    add_scaled(&mut set.mix[ch % channels], src, s.gain);
                }
            }
        }
        if counted || set.mix.iter().any(|m| m.iter().any(|x| !x.is_finite())) {
            self.counted = self.mix_counted(j, ran);
        }
    }

    /// [`HostAudio::mix_cycle`] for a cycle some sample of which is not a finite number: the
    /// mix made again with every output's samples counted, each such sample mixed as silence
    /// (else it would take every graph's sound with it, and reach the device), then the sums
    /// that overflowed silenced and counted too. Returns whether any sample was not finite.
    #[cold]
    fn mix_counted(&mut self, j: usize, ran: usize) -> bool {
        let mut any = false;
        let set = &mut *self.set;
        for m in set.mix.iter_mut() {
            m.fill(0.0);
        }
        let channels = set.mix.len();
        for s in set.slots.iter_mut() {
            // A graph that panicked in this cycle was silenced by the first pass.
            if s.silenced {
                continue;
            }
            let plan = s.tenant.plan();
            let n = plan.n_outputs();
            for ch in 0..n {
                let src = output_of(&s.tenant, j, ran, ch);
                let bad = crate::cycle::count_non_finite(src);
                if bad > 0 {
                    any = true;
                    bump(&s.stats.non_finite, bad as u64);
                }
                let mix_one = |dst: &mut [f32]| {
                    if bad > 0 {
                        for (d, &x) in dst.iter_mut().zip(src) {
                            *d += s.gain * crate::cycle::finite_or_zero(x);
                        }
                    } else {
                        add_scaled(dst, src, s.gain);
                    }
                };
                if n == 1 {
                    for dst in set.mix.iter_mut() {
                        mix_one(dst);
                    }
                } else {
                    mix_one(&mut set.mix[ch % channels]);
                }
            }
        }
        // Finite outputs whose sum (with the gains) overflowed: silence too, so that no
        // infinity reaches the device or the recording.
        for m in set.mix.iter_mut() {
            let bad = crate::cycle::count_non_finite(m);
            if bad > 0 {
                any = true;
                for x in m.iter_mut() {
                    *x = crate::cycle::finite_or_zero(*x);
                }
                bump(&self.stats.mix_non_finite, bad as u64);
            }
        }
        any
    }

    /// The statistics of the cycle just run, of `duration` ns (the host's clock) and whose
    /// parallel part took `parallel_ticks`: the host's, and each graph's share of it, on
    /// the same clock. The parallel part, in ns, is at most the cycle (the tick clock's
    /// calibration may err); each graph's share is its work ticks as a part of it, split
    /// in proportion to the graphs' work when their tasks ran on several threads at once
    /// (their ticks add up to more than the part's), so that the shares of a cycle add up
    /// to at most its parallel part, never more than the cycle. Never allocates.
    /// In a run of `ran` cycles, each graph's work ticks ([`Slot::work_ticks`], the run's)
    /// count a `ran`-th to each cycle.
    fn account(&mut self, duration: u64, parallel_ticks: u64, missed: bool, ran: usize) {
        let parallel_ns = ((parallel_ticks as f64 * self.ns_per_tick) as u64).min(duration);
        // Relaxed: statistics.
        self.stats.parallel.add(parallel_ns);
        let ticks = |s: &Slot| {
            if s.silenced {
                0
            } else {
                s.work_ticks / ran as u64
            }
        };
        let total = self
            .set
            .slots
            .iter()
            .fold(0u64, |t, s| t.saturating_add(ticks(s)));
        let per_tick = parallel_ns as f64 / total.max(parallel_ticks).max(1) as f64;
        for s in self.set.slots.iter() {
            if !s.silenced {
                let w = ticks(s);
                s.stats.account(
                    (w as f64 * per_tick) as u64,
                    (w as f64 * self.ns_per_tick) as u64,
                    duration,
                    missed,
                );
            }
        }
        self.stats.cycle.add(duration);
        if missed {
            self.stats.missed(self.cycle);
        }
    }

    /// Sends the mix, interleaved, to the recorder: in pieces of at most `record_frames`
    /// frames (one, unless a JACK buffer-size change made the block larger).
    fn send_record(&mut self) {
        let Some(tx) = self.record.as_mut() else {
            return;
        };
        let mix = &self.set.mix;
        let block = self.set.block;
        let piece = self.record_frames.max(1);
        let mut from = 0;
        while from < block {
            let frames = piece.min(block - from);
            let fill = |out: &mut [f32]| {
                let ch = mix.len();
                for (f, frame) in out.chunks_exact_mut(ch).take(frames).enumerate() {
                    for (c, x) in frame.iter_mut().enumerate() {
                        *x = mix[c][from + f];
                    }
                }
                frames * ch
            };
            let sent = if self.record_waits {
                tx.send_with(fill)
            } else {
                tx.try_send_with(fill)
            };
            if !sent {
                self.stats.record_drops.fetch_add(1, Ordering::Relaxed);
            }
            from += frames;
        }
    }

    /// Calls `f` with every loaded graph (JACK: to fill its own ports). Never allocates.
    #[inline]
    pub(crate) fn for_each_slot(&mut self, mut f: impl FnMut(&mut Slot)) {
        for s in self.set.slots.iter_mut() {
            f(s);
        }
    }

    /// Takes every loaded graph out (control thread, at the end).
    #[allow(clippy::vec_box)]
    pub(crate) fn drain(&mut self) -> Vec<Box<Slot>> {
        std::mem::take(&mut self.set.slots)
    }
}

/// Channel `ch` of `tenant`'s output in cycle `j` of a run of `ran` cycles: the captured one
/// after a run of several, the plan's after a run of one.
fn output_of(tenant: &Tenant, j: usize, ran: usize, ch: usize) -> &[f32] {
    if ran > 1 {
        tenant.captured_output(j, ch)
    } else {
        tenant.plan().output(ch)
    }
}

/// `dst += gain * src`, frame by frame (`dst += src` at a gain of 1: the same sums as the
/// multiplication by 1 would give, without it).
#[inline]
fn add_scaled(dst: &mut [f32], src: &[f32], gain: f32) {
    if gain == 1.0 {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d += x;
        }
    } else {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d += gain * x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_exec::{CompileOptions, ExecOptions, Plan};

    fn slot(id: u32, block: usize) -> Box<Slot> {
        slot_of(
            id,
            block,
            "o = { kind: \"osc\", freq: 440, }; s = { kind: \"sink\", }; o.1 -> s.1;",
        )
    }

    /// A slot of the graph `text` (.ag).
    fn slot_of(id: u32, block: usize, text: &str) -> Box<Slot> {
        let g = fugue_graph::read::ag::parse(text, "mono.ag").unwrap();
        let plan = Plan::compile(
            &g,
            &fugue_dsp::Registry::with_builtin_kinds(),
            &CompileOptions {
                block,
                ..CompileOptions::default()
            },
        )
        .unwrap();
        Box::new(Slot {
            id,
            tenant: Tenant::new(plan),
            executor: None,
            gain: 1.0,
            silenced: false,
            stats: Arc::new(GraphStats::new()),
            work_ticks: 0,
            ports: Vec::new(),
        })
    }

    fn events(q: &Queues) -> Vec<String> {
        std::iter::from_fn(|| q.from_audio.pop())
            .map(|e| match e {
                FromAudio::Adopted { id, .. } => format!("adopted {id}"),
                FromAudio::Refused(s) => format!("refused {}", s.id),
                FromAudio::Stale(s) => format!("stale {}", s.id),
                FromAudio::Discarded(s) => format!("discarded {}", s.id),
                FromAudio::Removed { id, .. } => format!("removed {id}"),
                FromAudio::Unknown { id } => format!("unknown {id}"),
            })
            .collect()
    }

    /// An osc through gains of `volumes`, in a line, to the sink.
    fn loud(volumes: &[f32]) -> String {
        let mut text = String::from("o = { kind: \"osc\", freq: 440, }; s = { kind: \"sink\", };");
        let mut from = "o".to_string();
        for (i, v) in volumes.iter().enumerate() {
            text += &format!(" g{i} = {{ kind: \"gain\", volume: {v}, }}; {from}.1 -> g{i}.1;");
            from = format!("g{i}");
        }
        text + &format!(" {from}.1 -> s.1;")
    }

    /// The host's mix of one cycle of `graphs` (mono, at gain 1), and each graph's output.
    fn mix_of(graphs: &[String]) -> (HostAudio, Vec<Vec<f32>>) {
        let queues = Arc::new(Queues::new());
        let pool = SharedPool::new(1, 1024, false, &ExecOptions::default()).unwrap();
        let mut audio = HostAudio::new(
            Mode::Partitioned,
            Runtime::Pool(Box::new(pool)),
            queues.clone(),
            Box::new(GraphSet::new(256, 2, 1_000_000)),
            Arc::new(HostStats::new()),
        );
        for (i, g) in graphs.iter().enumerate() {
            assert!(queues
                .to_audio
                .push(ToAudio::Load(slot_of(i as u32 + 1, 256, g)))
                .is_ok());
        }
        audio.run_cycle(Instant::now());
        let outs = audio
            .set
            .slots
            .iter()
            .map(|s| s.tenant.plan().output(0).to_vec())
            .collect();
        (audio, outs)
    }

    /// Outputs with samples that are not finite numbers are mixed as silence there and
    /// counted for their graph; finite outputs whose sum overflows are silenced in the mix and
    /// counted as the mix's; finite outputs are summed in the graphs' order, as they were.
    #[test]
    fn samples_that_are_not_finite_are_mixed_as_silence_and_counted() {
        let non_finite =
            |a: &HostAudio, i: usize| a.set.slots[i].stats.non_finite.load(Ordering::Relaxed);
        let mix_non_finite = |a: &HostAudio| a.stats.mix_non_finite.load(Ordering::Relaxed);
        // Every channel of the mix is the first output, silent where it is not finite, plus
        // the second, added in that order.
        let mixed_with_the_first_silenced_where_not_finite = |a: &HostAudio, outs: &[Vec<f32>]| {
            for m in a.mix() {
                for (f, &x) in m.iter().enumerate() {
                    let first = if outs[0][f].is_finite() {
                        outs[0][f]
                    } else {
                        0.0
                    };
                    assert_eq!(
                        x.to_bits(),
                        (0.0 + first + outs[1][f]).to_bits(),
                        "frame {f}"
                    );
                }
            }
        };
        // Two finite graphs: the plain sums.
        let (a, outs) = mix_of(&[loud(&[0.5]), loud(&[0.25])]);
        for m in a.mix() {
            for (f, &x) in m.iter().enumerate() {
                assert_eq!(x.to_bits(), (0.0 + outs[0][f] + outs[1][f]).to_bits());
            }
        }
        assert_eq!(
            (non_finite(&a, 0), non_finite(&a, 1), mix_non_finite(&a)),
            (0, 0, 0)
        );
        // An output overflowed to infinities (1e40 times the osc) beside a finite one.
        let (a, outs) = mix_of(&[loud(&[1e4; 10]), loud(&[0.5])]);
        let bad = outs[0].iter().filter(|x| !x.is_finite()).count() as u64;
        assert!(bad > 0 && bad < 256, "{bad}");
        mixed_with_the_first_silenced_where_not_finite(&a, &outs);
        assert_eq!(
            (non_finite(&a, 0), non_finite(&a, 1), mix_non_finite(&a)),
            (bad, 0, 0)
        );
        // The next cycle is made counted at once, with the same result.
        assert!(a.counted);
        let mut a = a;
        a.run_cycle(Instant::now());
        let outs: Vec<Vec<f32>> = a
            .set
            .slots
            .iter()
            .map(|s| s.tenant.plan().output(0).to_vec())
            .collect();
        let more = outs[0].iter().filter(|x| !x.is_finite()).count() as u64;
        mixed_with_the_first_silenced_where_not_finite(&a, &outs);
        assert_eq!(non_finite(&a, 0), bad + more);
        // Two finite outputs of 2e38 at their peaks, whose sum overflows there.
        let big = loud(&[1e4, 1e4, 1e4, 1e4, 1e4, 1e4, 1e4, 1e4, 1e4, 200.0]);
        let (a, outs) = mix_of(&[big.clone(), big]);
        assert!(outs.iter().flatten().all(|x| x.is_finite()));
        let over = outs[0]
            .iter()
            .zip(&outs[1])
            .filter(|(x, y)| !(0.0 + **x + **y).is_finite())
            .count() as u64;
        assert!(over > 0, "no sum overflowed");
        for m in a.mix() {
            assert!(m.iter().all(|x| x.is_finite()));
        }
        // Counted on each of the two channels the mono graphs reach.
        assert_eq!(
            (non_finite(&a, 0), non_finite(&a, 1), mix_non_finite(&a)),
            (0, 0, 2 * over)
        );
    }

    /// A buffer-size change as the audio thread sees it: a graph compiled at another size is
    /// sent back as stale; the new set takes over the old graphs' gains and silences; a graph
    /// of the new set that was unloaded meanwhile goes back; the old set comes back whole.
    #[test]
    fn adopting_a_new_set_carries_what_the_audio_thread_owns() {
        let queues = Arc::new(Queues::new());
        let pool = SharedPool::new(1, 1024, false, &ExecOptions::default()).unwrap();
        let mut audio = HostAudio::new(
            Mode::Partitioned,
            Runtime::Pool(Box::new(pool)),
            queues.clone(),
            Box::new(GraphSet::new(128, 2, 1_000_000)),
            Arc::new(HostStats::new()),
        );
        for s in [slot(1, 128), slot(2, 128), slot(3, 128), slot(4, 256)] {
            assert!(queues.to_audio.push(ToAudio::Load(s)).is_ok());
        }
        assert!(queues.to_audio.push(ToAudio::Gain(2, 0.5)).is_ok());
        audio.run_cycle(Instant::now());
        assert_eq!(
            events(&queues),
            ["adopted 1", "adopted 2", "adopted 3", "stale 4"]
        );
        audio.set.slots[0].silenced = true;
        // Graph 3 is unloaded after the new set was built with it.
        assert!(queues.to_audio.push(ToAudio::Unload(3)).is_ok());
        audio.run_cycle(Instant::now());
        assert_eq!(events(&queues), ["removed 3"]);
        let mut new = Box::new(GraphSet::new(256, 2, 2_000_000));
        new.slots.extend([slot(1, 256), slot(2, 256), slot(3, 256)]);
        let old = audio.adopt(new);
        assert_eq!(events(&queues), ["discarded 3"]);
        assert_eq!(old.block, 128);
        assert_eq!(old.slots.len(), 2);
        assert_eq!(audio.block(), 256);
        let ids: Vec<u32> = audio.set.slots.iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, 2]);
        assert!(audio.set.slots[0].silenced && !audio.set.slots[0].tenant.enabled());
        assert_eq!(audio.set.slots[1].gain, 0.5);
        audio.run_cycle(Instant::now());
        assert_eq!(audio.mix()[0].len(), 256);
        // Graph 2 alone plays (graph 1 is silenced), at half gain.
        assert!(audio.mix()[0].iter().any(|&x| x != 0.0));
        assert_eq!(audio.stats.resizes.load(Ordering::Relaxed), 1);
    }
}
