//! How the shared pool's groups of several threads run their tenants ([`TenantGrain`]), and
//! the tuner that measures which grain suits the machine ([`GrainTuner`]).

/// How a group of several threads runs its tenants: each unit claimed apart, or each tenant
/// whole by one thread (in order, with no claim, counter or deque per unit, as a sequential
/// engine does). A group of one thread always runs its tenants whole.
///
/// The trade-off (`bench-results/scaling/`): in parts, a thread done early takes over units
/// of the others, so a core slowed by the machine's other work delays the cycle by little, but
/// every unit pays a claim or a pop and its successors' counters; whole, a tenant costs what
/// it costs alone, but the cycle waits for the slowest thread's last tenant. In runs of
/// several cycles (offline), a tenant run whole that a slow thread holds back is handed to a
/// thread ahead that asks for it, so with as many tenants as threads whole tenants keep up
/// with a slowed core too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TenantGrain {
    /// Every tenant in parts (units claimed from its cursor, home thread first).
    #[default]
    Units,
    /// Every tenant whole, each claimed by one thread (from the thread's rank on).
    Whole,
    /// As many tenants as fill every thread evenly (the largest multiple of the group's
    /// threads) run whole, each thread its home ones first; the rest, fewer than the
    /// threads, run in parts, shared unit by unit by the threads done with their whole
    /// tenants (one graph on two threads runs on both).
    Balanced,
    /// Balanced in runs of several cycles when every group of several threads has at least
    /// as many tenants as threads (every tenant then runs whole, and a slow thread's tenant is
    /// handed over). Otherwise measured: the pool runs blocks of cycles with units and with
    /// balanced, keeps the one
    /// whose cycles took less time, and measures again every [`EXPLOIT_CYCLES`] cycles and
    /// whenever the tenants or the partition change ([`GrainTuner`]). Cores of equal speed
    /// favour balanced (no per-unit cost), cores whose speed varies favour units (the others
    /// make up for a slow one).
    Auto,
}

impl TenantGrain {
    /// Every grain, in the order of [`TenantGrain::name`].
    pub const ALL: [TenantGrain; 4] = [
        TenantGrain::Units,
        TenantGrain::Whole,
        TenantGrain::Balanced,
        TenantGrain::Auto,
    ];

    /// `units`, `whole`, `balanced`, `auto`.
    pub fn name(self) -> &'static str {
        match self {
            TenantGrain::Units => "units",
            TenantGrain::Whole => "whole",
            TenantGrain::Balanced => "balanced",
            TenantGrain::Auto => "auto",
        }
    }

    /// The grain of that name.
    pub fn from_name(s: &str) -> Option<TenantGrain> {
        TenantGrain::ALL.into_iter().find(|g| g.name() == s)
    }
}

/// Cycles of one block of the tuner's measurement; its first cycle (the caches settling
/// after a change of grain) is not counted.
pub const BLOCK_CYCLES: usize = 32;

/// Cycles a run holds at most while the tuner measures ([`GrainTuner::run_length`]).
const MEASURE_RUN: usize = 8;

/// The cycles counted per candidate: two blocks, less their first cycles.
const COUNTED: usize = 2 * (BLOCK_CYCLES - 1);

/// The grains the tuner compares, and the order of its blocks (A B B A: a drift of the
/// machine's speed during the measurement weighs on both alike).
const CANDIDATES: [TenantGrain; 2] = [TenantGrain::Units, TenantGrain::Balanced];
const ORDER: [usize; 4] = [0, 1, 1, 0];

/// Cycles the tuner keeps its choice before it measures again.
pub const EXPLOIT_CYCLES: u32 = 1024;

/// Balanced is kept only when its median cycle is at least this much shorter than units':
/// a smaller difference is within the blocks' noise (on a machine whose cores change speed
/// from moment to moment), and units is the grain that degrades least when the machine
/// changes.
pub const TUNER_MARGIN: f64 = 0.04;

/// Chooses, for [`TenantGrain::Auto`], the grain of each cycle from the durations of the
/// cycles before: blocks of [`BLOCK_CYCLES`] cycles with each candidate (A B B A), then the
/// one whose median cycle was shorter for [`EXPLOIT_CYCLES`] cycles, then again. The median,
/// not the mean: a cycle stretched by an interruption says nothing about the grain. Owned by
/// the calling thread; never allocates.
#[derive(Clone, Debug)]
pub struct GrainTuner {
    /// What the cycles run on (tenants, units, partition): a change starts a measurement.
    signature: u64,
    phase: Phase,
    /// While measuring: each candidate's counted cycles, and how many there are.
    times: [[u64; COUNTED]; 2],
    counted: [usize; 2],
    /// While balanced is kept: its last cycles, and how many of the block are in.
    window: [u64; BLOCK_CYCLES],
    seen: usize,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Measuring: the cycle's index in the measurement.
    Measure { cycle: usize },
    /// Keeping `grain` for `left` more cycles. With balanced kept, its cycles are watched:
    /// a block of them whose median passes units' measured median (`units`) by the margin
    /// starts a measurement at once (the machine changed: a core slowed, which balanced
    /// cannot make up for).
    Keep {
        grain: TenantGrain,
        left: u32,
        units: u64,
    },
}

impl Default for GrainTuner {
    fn default() -> Self {
        GrainTuner {
            signature: u64::MAX,
            phase: Phase::Measure { cycle: 0 },
            times: [[0; COUNTED]; 2],
            counted: [0; 2],
            window: [0; BLOCK_CYCLES],
            seen: 0,
        }
    }
}

/// The median of `v` (sorted in place; the upper middle of an even count).
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

impl GrainTuner {
    /// The grain of the next cycle, which runs on `signature` (a change from the last
    /// cycle's starts a measurement).
    pub fn grain(&mut self, signature: u64) -> TenantGrain {
        if signature != self.signature {
            self.signature = signature;
            self.restart();
        }
        match self.phase {
            Phase::Measure { cycle } => CANDIDATES[ORDER[cycle / BLOCK_CYCLES]],
            Phase::Keep { grain, .. } => grain,
        }
    }

    /// Records the duration of the cycle just run (any unit of time, the same each call).
    pub fn record(&mut self, ticks: u64) {
        match &mut self.phase {
            Phase::Measure { cycle } => {
                let c = ORDER[*cycle / BLOCK_CYCLES];
                if !(*cycle).is_multiple_of(BLOCK_CYCLES) && self.counted[c] < COUNTED {
                    self.times[c][self.counted[c]] = ticks;
                    self.counted[c] += 1;
                }
                *cycle += 1;
                if *cycle == ORDER.len() * BLOCK_CYCLES {
                    let [u, b] = &mut self.times;
                    let units = median(&mut u[..self.counted[0]]);
                    let balanced = median(&mut b[..self.counted[1]]);
                    let grain = if (balanced as f64) < units as f64 * (1.0 - TUNER_MARGIN) {
                        CANDIDATES[1]
                    } else {
                        CANDIDATES[0]
                    };
                    self.seen = 0;
                    self.phase = Phase::Keep {
                        grain,
                        left: EXPLOIT_CYCLES,
                        units,
                    };
                }
            }
            Phase::Keep { grain, left, units } => {
                *left -= 1;
                let mut again = *left == 0;
                if *grain == CANDIDATES[1] {
                    self.window[self.seen] = ticks;
                    self.seen += 1;
                    if self.seen == BLOCK_CYCLES {
                        self.seen = 0;
                        let now = median(&mut self.window) as f64;
                        again |= now > *units as f64 * (1.0 + TUNER_MARGIN);
                    }
                }
                if again {
                    self.restart();
                }
            }
        }
    }

    /// The grain kept after the last measurement, or `None` while the first one runs.
    pub fn chosen(&self) -> Option<TenantGrain> {
        match self.phase {
            Phase::Keep { grain, .. } => Some(grain),
            Phase::Measure { .. } => None,
        }
    }

    /// Cycles from the next one on that may run with the grain [`GrainTuner::grain`] gives,
    /// timed as a whole ([`GrainTuner::record_run`]; at least 1): up to the end of a
    /// measurement's block, or of the keep.
    pub fn run_length(&self) -> usize {
        let n = match self.phase {
            // A block's first cycle alone (not counted), then runs of at most
            // `MEASURE_RUN`: a block's counted cycles hold several runs' means, so that
            // one run slowed by an interruption does not decide the median.
            Phase::Measure { cycle } if cycle.is_multiple_of(BLOCK_CYCLES) => 1,
            Phase::Measure { cycle } => (BLOCK_CYCLES - cycle % BLOCK_CYCLES).min(MEASURE_RUN),
            Phase::Keep { left, .. } => left as usize,
        };
        n.max(1)
    }

    /// Records a run of `cycles` cycles (at most [`GrainTuner::run_length`]) of mean
    /// duration `mean`: as many cycles of that duration, except that when a kept balanced's
    /// watch starts a new measurement within the run, the run's later cycles are not
    /// counted in it (they ran with balanced).
    pub fn record_run(&mut self, mean: u64, cycles: usize) {
        for _ in 0..cycles {
            let kept = self.chosen().is_some();
            self.record(mean);
            if kept && self.chosen().is_none() {
                break;
            }
        }
    }

    /// Starts a measurement at the next cycle.
    pub fn restart(&mut self) {
        self.phase = Phase::Measure { cycle: 0 };
        self.counted = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the tuner for `cycles` cycles where a cycle with `units` takes `u` and one with
    /// balanced takes `b`; returns the grains it chose, cycle by cycle.
    fn drive(t: &mut GrainTuner, cycles: usize, u: u64, b: u64, sig: u64) -> Vec<TenantGrain> {
        (0..cycles)
            .map(|_| {
                let g = t.grain(sig);
                t.record(if g == TenantGrain::Units { u } else { b });
                g
            })
            .collect()
    }

    #[test]
    fn keeps_the_faster_grain_after_measuring_both() {
        let mut t = GrainTuner::default();
        let m = ORDER.len() * BLOCK_CYCLES;
        let g = drive(&mut t, m, 100, 90, 7);
        assert_eq!(
            g.iter().filter(|&&g| g == TenantGrain::Units).count(),
            m / 2
        );
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
        let g = drive(&mut t, 100, 100, 90, 7);
        assert!(g.iter().all(|&g| g == TenantGrain::Balanced));
        let mut t = GrainTuner::default();
        drive(&mut t, m, 90, 100, 7);
        assert_eq!(t.chosen(), Some(TenantGrain::Units));
    }

    #[test]
    fn balanced_kept_is_measured_again_when_its_cycles_slow_down() {
        let mut t = GrainTuner::default();
        let m = ORDER.len() * BLOCK_CYCLES;
        drive(&mut t, m, 100, 80, 4);
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
        // Balanced's cycles now take longer than units' did: within a block, it measures.
        drive(&mut t, BLOCK_CYCLES, 100, 120, 4);
        assert_eq!(t.chosen(), None);
        drive(&mut t, m, 100, 120, 4);
        assert_eq!(t.chosen(), Some(TenantGrain::Units));
        // Units kept is not watched: a slower spell keeps it until its keep ends.
        drive(&mut t, BLOCK_CYCLES * 4, 200, 120, 4);
        assert_eq!(t.chosen(), Some(TenantGrain::Units));
    }

    #[test]
    fn a_run_of_its_length_keeps_one_grain() {
        // Runs of up to `run_length` cycles, each recorded as its cycles' mean: every cycle
        // of a run has the grain of its first, and the choices are those of cycle-by-cycle
        // records.
        for most in [7, 40, usize::MAX] {
            let mut t = GrainTuner::default();
            let mut by_cycle = GrainTuner::default();
            let mut cycles = 0;
            let mut kept_balanced = false;
            while cycles < 3 * EXPLOIT_CYCLES as usize {
                let g = t.grain(2);
                let n = t.run_length().min(most);
                assert!(n >= 1);
                let d = if g == TenantGrain::Units { 100 } else { 90 };
                for _ in 0..n {
                    assert_eq!(by_cycle.grain(2), g, "cycle {cycles}");
                    by_cycle.record(d);
                    cycles += 1;
                }
                t.record_run(d, n);
                assert_eq!(t.chosen(), by_cycle.chosen());
                kept_balanced |= t.chosen() == Some(TenantGrain::Balanced);
            }
            assert!(kept_balanced);
        }
    }

    #[test]
    fn a_watch_that_measures_again_within_a_run_drops_the_rest_of_the_run() {
        let mut t = GrainTuner::default();
        drive(&mut t, ORDER.len() * BLOCK_CYCLES, 100, 80, 4);
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
        // A run of balanced cycles slower than units: the watch's first block measures
        // again, and the rest of the run is not counted in the measurement.
        let n = t.run_length();
        assert!(n > 2 * BLOCK_CYCLES);
        t.record_run(120, n);
        assert_eq!(t.chosen(), None);
        assert_eq!(
            t.run_length(),
            1,
            "a measurement from its first cycle, alone"
        );
    }

    #[test]
    fn while_measuring_one_slow_run_does_not_decide() {
        // Runs of `run_length` cycles: one run of balanced, in one block, is slowed by an
        // interruption; balanced is still kept.
        let mut t = GrainTuner::default();
        let mut slowed = false;
        while t.chosen().is_none() {
            let g = t.grain(3);
            let n = t.run_length();
            assert!(n <= MEASURE_RUN);
            let d = match g {
                TenantGrain::Balanced if !slowed && n > 1 => {
                    slowed = true;
                    1_000
                }
                TenantGrain::Balanced => 80,
                _ => 100,
            };
            t.record_run(d, n);
        }
        assert!(slowed);
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
    }

    #[test]
    fn a_gain_within_the_margin_keeps_units() {
        let mut t = GrainTuner::default();
        drive(&mut t, ORDER.len() * BLOCK_CYCLES, 1000, 990, 1);
        assert_eq!(t.chosen(), Some(TenantGrain::Units));
    }

    #[test]
    fn a_few_interrupted_cycles_do_not_decide() {
        // Balanced is faster, but a few of its cycles were interrupted (a long mean).
        let mut t = GrainTuner::default();
        for k in 0..ORDER.len() * BLOCK_CYCLES {
            let g = t.grain(9);
            let d = match g {
                TenantGrain::Balanced if k % 7 == 3 => 100_000,
                TenantGrain::Balanced => 80,
                _ => 100,
            };
            t.record(d);
        }
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
    }

    #[test]
    fn the_first_cycle_of_each_block_is_not_counted() {
        // Each block's first cycle is very slow (a change of grain); only the rest count.
        let mut t = GrainTuner::default();
        for k in 0..ORDER.len() * BLOCK_CYCLES {
            let g = t.grain(3);
            let first = k % BLOCK_CYCLES == 0;
            let d = match (g, first) {
                (TenantGrain::Balanced, true) => 1_000_000,
                (TenantGrain::Balanced, false) => 80,
                _ => 100,
            };
            t.record(d);
        }
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
    }

    #[test]
    fn measures_again_after_its_keep_and_when_the_tenants_change() {
        let mut t = GrainTuner::default();
        let m = ORDER.len() * BLOCK_CYCLES;
        drive(&mut t, m, 100, 90, 5);
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
        // A new tenant: measured again, and now units is faster.
        drive(&mut t, m, 80, 90, 6);
        assert_eq!(t.chosen(), Some(TenantGrain::Units));
        // After its keep, it measures again on its own.
        drive(&mut t, EXPLOIT_CYCLES as usize, 80, 90, 6);
        assert_eq!(t.chosen(), None);
        drive(&mut t, m, 100, 50, 6);
        assert_eq!(t.chosen(), Some(TenantGrain::Balanced));
    }
}
