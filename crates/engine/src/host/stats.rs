//! The host's statistics: per graph and for the whole host, kept in atomics that the audio
//! thread updates once per cycle (never allocating) and the control thread reads at any time.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::histogram::{bump, Histogram};

/// A running distribution of durations: count, sum, maximum and a histogram at 8 buckets per
/// power of two (12.5 %) for percentiles ([`Histogram`]). Updated by one thread (the audio
/// thread), read by any.
#[derive(Debug)]
pub(crate) struct Durations {
    sum: AtomicU64,
    hist: Histogram,
}

impl Durations {
    pub(crate) fn new() -> Self {
        Durations {
            sum: AtomicU64::new(0),
            // Up to 1000 s.
            hist: Histogram::new(3, 1_000_000_000_000),
        }
    }

    /// Adds one duration. Never allocates; one writer at a time, as the histogram's.
    #[inline]
    pub(crate) fn add(&self, ns: u64) {
        bump(&self.sum, ns);
        self.hist.record(ns);
    }

    /// (count, mean, p99, max) in ns.
    pub(crate) fn read(&self) -> (u64, f64, u64, u64) {
        let count = self.hist.total();
        let sum = self.sum.load(Ordering::Relaxed);
        let mean = if count > 0 {
            sum as f64 / count as f64
        } else {
            0.0
        };
        (
            count,
            mean,
            self.hist.value_at_quantile(0.99),
            self.hist.max(),
        )
    }
}

/// One graph's statistics, shared between the audio thread (writer) and the control thread.
#[derive(Debug)]
pub(crate) struct GraphStats {
    /// The graph's share of each cycle it ran in, ns: the time its tasks ran, as a part of
    /// the cycle's parallel part (see `HostAudio::account`); at most the cycle.
    pub(crate) share: Durations,
    /// The time its tasks ran in those cycles, ns, summed over the threads (its work).
    work: AtomicU64,
    /// The duration of the host's cycles it ran in, ns, summed (the host's clock).
    cycles_ns: AtomicU64,
    /// Cycles it ran in that missed their deadline.
    pub(crate) misses: AtomicU64,
    /// Tasks of it that panicked (it was silenced at the first). Written with Release after
    /// [`GraphStats::failure`], so that a reader that sees it with Acquire sees the failure.
    pub(crate) panics: AtomicU64,
    /// The first failure's node (in the graph as loaded) and message, set once by the audio
    /// side (the message moved out of the plan: nothing is allocated there).
    pub(crate) failure: std::sync::OnceLock<(usize, String)>,
    /// Its output samples that were not finite numbers (NaN, infinity): mixed as silence.
    pub(crate) non_finite: AtomicU64,
}

impl GraphStats {
    pub(crate) fn new() -> Self {
        GraphStats {
            share: Durations::new(),
            work: AtomicU64::new(0),
            cycles_ns: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            failure: std::sync::OnceLock::new(),
            non_finite: AtomicU64::new(0),
        }
    }

    /// Adds a cycle it ran in: its `share` of the cycle and its `work`, ns, in a cycle of
    /// `cycle_ns` that `missed` its deadline or not. Never allocates.
    #[inline]
    pub(crate) fn account(&self, share: u64, work: u64, cycle_ns: u64, missed: bool) {
        // The audio thread is the only writer: plain loads and stores.
        bump(&self.work, work);
        bump(&self.cycles_ns, cycle_ns);
        self.share.add(share);
        if missed {
            bump(&self.misses, 1);
        }
    }

    pub(crate) fn snapshot(&self) -> GraphStatsSnapshot {
        let (cycles, mean, p99, max) = self.share.read();
        let per_cycle = |sum: &AtomicU64| {
            if cycles > 0 {
                sum.load(Ordering::Relaxed) as f64 / cycles as f64
            } else {
                0.0
            }
        };
        GraphStatsSnapshot {
            cycles,
            mean_ns: mean,
            work_mean_ns: per_cycle(&self.work),
            cycle_mean_ns: per_cycle(&self.cycles_ns),
            p99_ns: p99,
            max_ns: max,
            misses: self.misses.load(Ordering::Relaxed),
            panics: self.panics.load(Ordering::Relaxed),
            non_finite: self.non_finite.load(Ordering::Relaxed),
        }
    }
}

/// What [`Host::stats`](crate::host::Host::stats) says of a graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct GraphStatsSnapshot {
    /// Cycles it ran in.
    pub cycles: u64,
    /// Mean share of the cycle, ns: the time its tasks ran, as a part of the cycle's
    /// parallel part (split in proportion to the graphs' work when their tasks ran on
    /// several threads at once). At most [`GraphStatsSnapshot::cycle_mean_ns`]; the shares
    /// of the graphs add up to at most the host's cycle.
    pub mean_ns: f64,
    /// 99th percentile of the share, ns (12.5% resolution).
    pub p99_ns: u64,
    /// Largest share, ns.
    pub max_ns: u64,
    /// Mean time its tasks ran per cycle, ns, summed over the threads (pool modes) or its
    /// executor's run (separate mode): its work, which threads running at once make larger
    /// than its share.
    pub work_mean_ns: f64,
    /// Mean duration of the host's cycles it ran in, ns (the clock of the host's `stats`;
    /// the same figure when it ran in every cycle).
    pub cycle_mean_ns: f64,
    /// Cycles it ran in that missed their deadline.
    pub misses: u64,
    /// Tasks of it that panicked.
    pub panics: u64,
    /// Its output samples that were not finite numbers (NaN or infinity), mixed (and
    /// recorded) as silence.
    pub non_finite: u64,
}

/// The whole host's statistics.
#[derive(Debug)]
pub(crate) struct HostStats {
    /// Each cycle's duration, from its start to its mix being out.
    pub(crate) cycle: Durations,
    /// Each cycle's parallel part: from the start of the graphs' run to the end of the last
    /// one (the rest of the cycle is the audio thread's alone: commands, mix, statistics).
    pub(crate) parallel: Durations,
    pub(crate) misses: AtomicU64,
    /// The numbers of the first [`MISSES_KEPT`] cycles that missed their deadline.
    first_misses: [AtomicU64; MISSES_KEPT],
    /// Cycles that adopted or removed a graph.
    pub(crate) swap_cycles: AtomicU64,
    /// Of those, the ones that missed their deadline.
    pub(crate) swap_misses: AtomicU64,
    /// Recorded blocks dropped because the writer was behind.
    pub(crate) record_drops: AtomicU64,
    /// Samples of the mix that were not finite numbers once the graphs' finite outputs were
    /// summed (an overflow of the sum): played and recorded as silence.
    pub(crate) mix_non_finite: AtomicU64,
    /// Cycles that started more than a period late (clocked backend).
    pub(crate) overruns: AtomicU64,
    /// JACK cycles left silent after a buffer-size change, while the graphs were being
    /// recompiled at the new size (not counted as cycles, nor as misses).
    pub(crate) resize_cycles: AtomicU64,
    /// Sets of graphs recompiled at a new buffer size and adopted.
    pub(crate) resizes: AtomicU64,
    /// The shared pool's hand-overs so far ([`fugue_exec::SharedPool::handovers`]).
    pub(crate) handovers: AtomicU64,
}

impl HostStats {
    pub(crate) fn new() -> Self {
        HostStats {
            cycle: Durations::new(),
            parallel: Durations::new(),
            misses: AtomicU64::new(0),
            first_misses: std::array::from_fn(|_| AtomicU64::new(0)),
            swap_cycles: AtomicU64::new(0),
            swap_misses: AtomicU64::new(0),
            record_drops: AtomicU64::new(0),
            mix_non_finite: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
            resize_cycles: AtomicU64::new(0),
            resizes: AtomicU64::new(0),
            handovers: AtomicU64::new(0),
        }
    }

    /// Counts cycle number `cycle` as missed, keeping its number among the first
    /// [`MISSES_KEPT`]. Never allocates.
    #[inline]
    pub(crate) fn missed(&self, cycle: u64) {
        // Relaxed: statistics; the control thread reads only the numbers below the count it
        // loaded, each written before the count that covers it was raised on this thread,
        // and may read a number a cycle late at worst.
        let k = self.misses.load(Ordering::Relaxed) as usize;
        if let Some(slot) = self.first_misses.get(k) {
            slot.store(cycle, Ordering::Relaxed);
        }
        self.misses.fetch_add(1, Ordering::Release);
    }

    pub(crate) fn snapshot(&self) -> HostStatsSnapshot {
        let (cycles, mean, p99, max) = self.cycle.read();
        // Acquire: pairs with `missed`'s Release, so the numbers below the count are set.
        let misses = self.misses.load(Ordering::Acquire);
        HostStatsSnapshot {
            cycles,
            mean_ns: mean,
            parallel_mean_ns: self.parallel.read().1,
            p99_ns: p99,
            max_ns: max,
            misses,
            first_misses: self.first_misses[..(misses as usize).min(MISSES_KEPT)]
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            swap_cycles: self.swap_cycles.load(Ordering::Relaxed),
            swap_misses: self.swap_misses.load(Ordering::Relaxed),
            record_drops: self.record_drops.load(Ordering::Relaxed),
            overruns: self.overruns.load(Ordering::Relaxed),
            resize_cycles: self.resize_cycles.load(Ordering::Relaxed),
            resizes: self.resizes.load(Ordering::Relaxed),
            handovers: self.handovers.load(Ordering::Relaxed),
        }
    }
}

/// How many of the first missed cycles' numbers the host keeps.
pub const MISSES_KEPT: usize = 10;

/// What [`Host::host_stats`](crate::host::Host::host_stats) says of the whole host.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HostStatsSnapshot {
    /// Cycles run.
    pub cycles: u64,
    /// Mean cycle duration, ns.
    pub mean_ns: f64,
    /// Mean duration of the cycles' parallel part (the graphs' run, on every thread), ns; the
    /// rest of [`HostStatsSnapshot::mean_ns`] is the audio thread's alone.
    pub parallel_mean_ns: f64,
    /// 99th percentile, ns (12.5% resolution).
    pub p99_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
    /// Cycles that missed their deadline.
    pub misses: u64,
    /// The numbers of the first of them, at most [`MISSES_KEPT`], in order.
    pub first_misses: Vec<u64>,
    /// Cycles that adopted or removed a graph.
    pub swap_cycles: u64,
    /// Of those, the ones that missed their deadline.
    pub swap_misses: u64,
    /// Recorded blocks dropped because the writer was behind (real-time backends).
    pub record_drops: u64,
    /// Cycles that started more than a period late (clocked backend).
    pub overruns: u64,
    /// JACK cycles left silent after a buffer-size change while the graphs were being
    /// recompiled at the new size (neither cycles run nor deadline misses).
    pub resize_cycles: u64,
    /// JACK buffer-size changes followed: sets of graphs recompiled and adopted.
    pub resizes: u64,
    /// Offline, in runs of several cycles: how many times a thread that fell behind (slower,
    /// or taken off its core) handed a graph it ran whole to a thread ahead that asked for it
    /// (shared and partitioned modes; `docs/host.md`, "Offline: several cycles in a row").
    pub handovers: u64,
}

impl HostStatsSnapshot {
    /// The deadline misses in words, with the numbers of the first:
    /// `2 deadline misses at cycles 15, 873`, or
    /// `25 deadline misses, the first 10 at cycles 0, 1, ...`.
    pub fn misses_said(&self) -> String {
        let mut s = if self.misses == 1 {
            "1 deadline miss".to_string()
        } else {
            format!("{} deadline misses", self.misses)
        };
        if self.first_misses.is_empty() {
            return s;
        }
        let list: Vec<String> = self.first_misses.iter().map(u64::to_string).collect();
        if self.misses as usize > self.first_misses.len() {
            s.push_str(&format!(
                ", the first {} at cycles ",
                self.first_misses.len()
            ));
        } else if self.first_misses.len() == 1 {
            s.push_str(" at cycle ");
        } else {
            s.push_str(" at cycles ");
        }
        s.push_str(&list.join(", "));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_give_count_mean_p99_and_max() {
        let d = Durations::new();
        assert_eq!(d.read(), (0, 0.0, 0, 0));
        for ns in 1..=100u64 {
            d.add(ns * 1000);
        }
        let (count, mean, p99, max) = d.read();
        assert_eq!((count, max), (100, 100_000));
        assert!((mean - 50_500.0).abs() < 1e-9, "{mean}");
        // The 99th value, 99 µs, within the 12.5 % of a bucket.
        assert!((99_000..=100_000).contains(&p99), "{p99}");
    }

    #[test]
    fn the_first_missed_cycles_are_kept_with_the_count() {
        let s = HostStats::new();
        assert!(s.snapshot().first_misses.is_empty());
        for c in (3..40).step_by(3) {
            s.missed(c);
        }
        let snap = s.snapshot();
        assert_eq!(snap.misses, 13);
        assert_eq!(snap.first_misses, [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
        assert_eq!(
            snap.misses_said(),
            "13 deadline misses, the first 10 at cycles 3, 6, 9, 12, 15, 18, 21, 24, 27, 30"
        );
        let two = HostStatsSnapshot {
            misses: 2,
            first_misses: vec![15, 873],
            ..HostStatsSnapshot::default()
        };
        assert_eq!(two.misses_said(), "2 deadline misses at cycles 15, 873");
        assert_eq!(
            HostStatsSnapshot::default().misses_said(),
            "0 deadline misses"
        );
    }

    #[test]
    fn a_graphs_means_are_over_the_cycles_it_ran_in() {
        let g = GraphStats::new();
        g.account(10, 30, 40, false);
        g.account(20, 50, 60, true);
        let s = g.snapshot();
        assert_eq!(s.cycles, 2);
        assert!((s.mean_ns - 15.0).abs() < 1e-9);
        assert!((s.work_mean_ns - 40.0).abs() < 1e-9);
        assert!((s.cycle_mean_ns - 50.0).abs() < 1e-9);
        assert_eq!(s.misses, 1);
    }

    #[test]
    fn p99_is_near() {
        let d = Durations::new();
        for i in 1..=1000u64 {
            d.add(i * 1000);
        }
        let (n, mean, p99, max) = d.read();
        assert_eq!(n, 1000);
        assert!((mean - 500_500.0).abs() < 1.0);
        assert!((990_000..=990_000 * 9 / 8).contains(&p99), "{p99}");
        assert_eq!(max, 1_000_000);
    }
}
