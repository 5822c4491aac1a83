//! The measured cycle body that the real-time backends share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::engine::Engine;
use crate::stats::{CycleMeter, CycleRecord};

/// The measured cycle body shared by the backends: inputs in, one cycle of the plan, outputs
/// out, one [`CycleRecord`] pushed. Never allocates, locks or blocks (tested under a counting
/// allocator in `tests/no_alloc_run.rs`).
#[derive(Debug)]
pub struct CycleBody {
    /// The statistics meter.
    pub meter: CycleMeter,
    /// Deadline as a multiple of the buffer period (1 or 2).
    pub deadline_periods: u32,
    /// Hash each cycle's output into its record ([`CycleRecord::output_hash`]).
    pub hash_outputs: bool,
    /// Live parameter changes to set before each cycle ([`crate::live`]).
    pub live: Option<crate::live::LiveQueue>,
    /// Output samples that were not finite numbers (NaN, infinity), counted over the run:
    /// the backends play them as silence ([`copy_finite`]); the run says how many there were.
    pub non_finite: Arc<AtomicU64>,
}

/// How many samples of `x` are not finite numbers (NaN or infinity). Never allocates.
#[inline]
pub fn count_non_finite(x: &[f32]) -> usize {
    x.iter().filter(|v| !v.is_finite()).count()
}

/// `x`, or 0 where it is not a finite number: what a backend sends to a device, which must
/// never receive an infinity or a NaN (a float device plays them at full scale or worse).
#[inline]
pub fn finite_or_zero(x: f32) -> f32 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Copies `src` into `dst` (the shorter's length), each sample that is not a finite number as
/// 0 ([`finite_or_zero`]). Never allocates.
#[inline]
pub fn copy_finite(src: &[f32], dst: &mut [f32]) {
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = finite_or_zero(x);
    }
}

impl CycleBody {
    /// Runs one cycle of `engine` for `frames` frames at `rate` Hz. `fill_input(ch, buf)`
    /// fills engine input channel `ch`; `take_output(ch, buf)` receives output channel `ch`
    /// as the graph computed it (a backend that plays it replaces the samples that are not
    /// finite numbers by 0: [`copy_finite`]; they are counted in [`CycleBody::non_finite`]).
    /// `started` is when the cycle began (taken by the caller before anything else), `late_ns`
    /// how late that was against the schedule. Returns the record pushed. The output hash,
    /// when asked for, is taken after the cycle's end time: it is not part of the duration.
    #[inline]
    pub fn run(
        &mut self,
        engine: &mut Engine,
        frames: usize,
        started: Instant,
        late_ns: u64,
        mut fill_input: impl FnMut(usize, &mut [f32]),
        mut take_output: impl FnMut(usize, &[f32]),
    ) -> CycleRecord {
        if let Some(q) = &self.live {
            // Lock-free pops; between cycles, so no task runs.
            while let Some(s) = q.pop() {
                engine
                    .plan
                    .set_param(s.node as usize, s.param as usize, s.value);
            }
        }
        for ch in 0..engine.plan.n_inputs() {
            fill_input(ch, engine.plan.input_mut(ch));
        }
        engine.run_cycle();
        for ch in 0..engine.plan.n_outputs() {
            let out = engine.plan.output(ch);
            let bad = count_non_finite(out);
            if bad > 0 {
                // Relaxed: a count read after the run (or by the control thread, as a hint).
                self.non_finite.fetch_add(bad as u64, Ordering::Relaxed);
            }
            take_output(ch, out);
        }
        let end = Instant::now();
        let delta = engine.new_steals();
        let plan = &engine.plan;
        let output_hash = if self.hash_outputs {
            plan.output_hash()
        } else {
            0
        };
        let duration_ns = end.saturating_duration_since(started).as_nanos() as u64;
        let deadline_ns =
            (frames as f64 * 1e9 / plan.sample_rate()) as u64 * self.deadline_periods.max(1) as u64;
        let record = CycleRecord {
            cycle: 0,
            start_ns: started
                .saturating_duration_since(self.meter.origin())
                .as_nanos() as u64,
            duration_ns,
            deadline_ns,
            late_ns,
            steals: delta.min(u32::MAX as u64) as u32,
            frames: frames as u32,
            wake_ns: engine.last_wake_ns(),
            missed: duration_ns > deadline_ns,
            output_hash,
        };
        self.meter.push(record);
        CycleRecord {
            cycle: self.meter.cycle() - 1,
            ..record
        }
    }
}
