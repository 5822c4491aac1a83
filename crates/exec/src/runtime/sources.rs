//! The cycle's source units, dealt to the threads in contiguous ranges.
//!
//! At the start of a cycle every source unit is ready. Pushing them all on the audio thread's
//! deque makes every other thread steal each of its first units across cores (one or two
//! cache-line transfers per unit, on the deque's `top` word and slot), and the audio thread's
//! own pops contend with those steals. Instead, the sources are split into one contiguous
//! range per thread, and each range is one 64-bit word: `lo` (next to take from the front) in
//! the low half, `hi` (one past the last) in the high half. Its owner takes from the front,
//! any other thread steals from the back, both with a compare-and-swap on the word, so in a
//! balanced cycle each word stays in its owner's cache and no source crosses cores.
//!
//! Protocol ("Sources" in `docs/executors.md`):
//! - The audio thread, before it bumps the epoch that starts the cycle (and after `begin`
//!   has published the cycle's plan), stores each range's `(lo, hi)` with Release.
//! - A thread takes index `i` by a successful AcqRel CAS from `(i, hi)` to `(i + 1, hi)`
//!   (owner) or from `(lo, i + 1)` to `(lo, i)` (thief) with `lo <= i < hi`. Every successful
//!   CAS shrinks the range by one index at the end it took, so each index of a cycle is taken
//!   at most once; the cycle cannot end before every source has run, so each is taken exactly
//!   once. The Acquire of the CAS reads the audio thread's Release store (or a later value of
//!   its modification order), so the taker sees the cycle's plan and counters.
//! - A thread still looking for work after the previous cycle ended sees either an empty
//!   range (every index was taken) or the new cycle's range, from which it may take a source:
//!   it then runs a unit of the new cycle, as it would had it stolen it from a deque.

use crossbeam_utils::CachePadded;

use crate::Plan;
use fugue_sync::{AtomicU64, Ordering};

/// `(lo, hi)` packed in one word.
#[inline]
fn pack(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

#[inline]
fn unpack(w: u64) -> (u32, u32) {
    (w as u32, (w >> 32) as u32)
}

/// One range of source indices per thread.
pub(crate) struct SourceRanges {
    ranges: Box<[CachePadded<AtomicU64>]>,
}

impl SourceRanges {
    /// Ranges for `threads` threads, all empty.
    pub fn new(threads: usize) -> Self {
        SourceRanges {
            ranges: crate::runtime::padded_zeros(threads.max(1)),
        }
    }

    /// Deals the sources `first..n` to the threads: thread `w` gets the `w`-th of as many
    /// contiguous ranges of near-equal length (the first ones one longer when they do not
    /// divide evenly). Audio thread only, between cycles (every range empty: all sources of
    /// the last deal taken), after publishing the cycle's plan and before the epoch bump.
    #[cfg(test)]
    pub fn deal(&self, first: usize, n: usize) {
        let t = self.ranges.len();
        let count = n.saturating_sub(first);
        let (q, r) = (count / t, count % t);
        let mut cut = first;
        let cuts: Vec<u32> = (0..t - 1)
            .map(|w| {
                cut += q + usize::from(w < r);
                cut as u32
            })
            .collect();
        self.deal_at(first, &cuts, n);
    }

    /// Deals the sources `first..n` at the given cuts: thread 0 gets `first..cuts[0]`, thread
    /// `w` gets `cuts[w - 1]..cuts[w]`, the last one `cuts[t - 2]..n` (`cuts` has one entry
    /// less than there are threads, increasing; a cut below `first` or above `n` is clamped).
    /// The same contract as [`SourceRanges::deal`].
    pub fn deal_at(&self, first: usize, cuts: &[u32], n: usize) {
        let mut lo = first;
        for (w, range) in self.ranges.iter().enumerate() {
            let hi = match cuts.get(w) {
                Some(&c) => (c as usize).clamp(lo, n),
                None => n,
            };
            Self::store(range, lo, hi);
            lo = hi;
        }
    }

    #[inline]
    fn store(range: &AtomicU64, lo: usize, hi: usize) {
        // An empty range needs no store: every range is empty when a cycle starts (the last
        // one's sources were all taken) and nobody takes from an empty one. Skipping it keeps
        // the audio thread from writing (and pulling) the line of a thread that has no source
        // this cycle.
        if hi > lo {
            // Release: a thread that takes an index acquires this store, and with it the
            // cycle's plan and counters written before it.
            range.store(pack(lo as u32, hi as u32), Ordering::Release);
        }
    }

    /// Takes the next index of thread `w`'s own range (from the front).
    #[inline]
    pub fn take_own(&self, w: usize) -> Option<u32> {
        self.take(w, true)
    }

    /// Steals the last index of thread `v`'s range (from the back).
    #[inline]
    pub fn steal(&self, v: usize) -> Option<u32> {
        self.take(v, false)
    }

    /// Takes one index of range `v`, the first (`front`) or the last.
    #[inline]
    fn take(&self, v: usize, front: bool) -> Option<u32> {
        let range = &self.ranges[v];
        let mut cur = range.load(Ordering::Relaxed);
        loop {
            let (lo, hi) = unpack(cur);
            if lo >= hi {
                return None;
            }
            let (next, taken) = if front {
                (pack(lo + 1, hi), lo)
            } else {
                (pack(lo, hi - 1), hi - 1)
            };
            // AcqRel: Acquire reads the dealing store (see the module documentation); Release
            // keeps the modification order a release sequence for the next taker.
            match range.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(taken),
                Err(now) => cur = now,
            }
        }
    }
}

/// Where to cut the plan's sources, in dealing order ([`Plan::unit_sources_by_join`]), into
/// `cuts.len() + 1` contiguous ranges (thread 0's first; the audio thread runs the first
/// source itself): near-equal ranges, each cut moved by at most a quarter of a range to the
/// nearest place where two neighbouring sources feed different successors, so that the
/// branches of a join stay in one range and no join waits for the last source of another
/// thread's range (the one its owner takes last, or a thief steals at the very end). Audio
/// thread, when the plan's units change: no allocation.
pub(crate) fn source_cuts(plan: &Plan, cuts: &mut [u32]) {
    let src = plan.unit_sources_by_join();
    let succ = |i: usize| plan.unit_successors(src[i] as usize);
    let (m, t) = (src.len(), cuts.len() + 1);
    let boundary = |p: usize| succ(p - 1) != succ(p);
    let reach = (m / (4 * t)).max(1);
    let mut prev = 0;
    for (k, cut) in cuts.iter_mut().enumerate() {
        let ideal = ((k + 1) * m + t / 2) / t;
        let mut best = ideal;
        if ideal > 0 && ideal < m && !boundary(ideal) {
            for d in 1..=reach {
                if let Some(p) = [ideal.checked_sub(d), Some(ideal + d)]
                    .into_iter()
                    .flatten()
                    .find(|&p| p > prev && p < m && boundary(p))
                {
                    best = p;
                    break;
                }
            }
        }
        let best = best.max(prev).min(m);
        *cut = best as u32;
        prev = best;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn dealing_covers_every_source_once_in_contiguous_ranges() {
        for threads in 1..=5 {
            for n in 0..=23 {
                let r = SourceRanges::new(threads);
                r.deal(0, n);
                let mut seen = Vec::new();
                for w in 0..threads {
                    let mut mine = Vec::new();
                    while let Some(i) = r.take_own(w) {
                        mine.push(i);
                    }
                    // Contiguous, ascending, and of near-equal length.
                    assert!(mine.windows(2).all(|p| p[1] == p[0] + 1));
                    assert!(mine.len() == n / threads || mine.len() == n / threads + 1);
                    seen.extend(mine);
                }
                assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
            }
        }
    }

    /// The layout of a rake whose 33 branches feed four groups of eight (two blocks of two,
    /// the second group of each adding the first's sum) and (the last one) the mix: the
    /// groups' branches, each group's together and each block's, then the lone branch;
    /// cuts between groups, never more than a quarter of a range from an equal split; and
    /// `deal_at` gives each thread its range.
    #[test]
    fn sources_are_ordered_by_join_and_cut_between_joins() {
        let reg = fugue_dsp::Registry::with_builtin_kinds();
        let opts = crate::CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            placeholder: false,
            merge_chains: true,
            ..Default::default()
        };
        let plan = Plan::compile(&fugue_graph::gen::rake(33), &reg, &opts).unwrap();
        let src = plan.unit_sources();
        assert_eq!(src.len(), 33);
        let succ = |i: usize| plan.unit_successors(src[i] as usize).to_vec();
        for threads in 2..=5usize {
            let mut cuts = vec![0u32; threads - 1];
            source_cuts(&plan, &mut cuts);
            // Positions in `unit_sources` of the sources in dealing order.
            let order: Vec<usize> = plan
                .unit_sources_by_join()
                .iter()
                .map(|u| src.iter().position(|s| s == u).unwrap())
                .collect();
            let at = cuts.clone();
            let cuts: Vec<usize> = cuts.iter().map(|&c| c as usize).collect();
            // The groups' branches, then the lone branch (it feeds the mix directly).
            assert_eq!(order, (0..33).collect::<Vec<_>>());
            assert!(cuts.windows(2).all(|w| w[0] <= w[1]), "{threads}: {cuts:?}");
            for (k, &c) in cuts.iter().enumerate() {
                let ideal = ((k + 1) * 33 + threads / 2) / threads;
                let reach = (33 / (4 * threads)).max(1);
                assert!(c.abs_diff(ideal) <= reach, "{threads}: {cuts:?}");
            }
            if threads == 2 {
                // Two groups (16 branches), then two groups and the lone branch.
                assert_eq!(cuts, [16]);
                assert_ne!(succ(order[15]), succ(order[16]));
            }
            if threads == 4 {
                assert_eq!(cuts, [8, 16, 24]);
            }
            let r = SourceRanges::new(threads);
            r.deal_at(1, &at, 33);
            let mut lo = 1;
            for w in 0..threads {
                let hi = cuts.get(w).copied().unwrap_or(33);
                let mine: Vec<u32> = std::iter::from_fn(|| r.take_own(w)).collect();
                assert_eq!(mine, (lo as u32..hi as u32).collect::<Vec<_>>());
                lo = hi;
            }
        }
    }

    #[test]
    fn owner_and_thief_meet_in_the_middle() {
        let r = SourceRanges::new(2);
        r.deal(0, 9); // thread 0: 0..5, thread 1: 5..9
        assert_eq!(r.steal(0), Some(4));
        assert_eq!(r.take_own(0), Some(0));
        assert_eq!(r.steal(0), Some(3));
        assert_eq!(r.take_own(0), Some(1));
        assert_eq!(r.take_own(0), Some(2));
        assert_eq!(r.take_own(0), None);
        assert_eq!(r.steal(0), None);
        assert_eq!(r.take_own(1), Some(5));
        while r.take_own(1).is_some() {}
        // A new deal refills the ranges, from the first index dealt.
        r.deal(1, 3);
        assert_eq!(r.take_own(0), Some(1));
        assert_eq!(r.steal(1), Some(2));
        assert_eq!(r.steal(1), None);
        // One source to deal and two threads: thread 1's range stays as it was (empty).
        r.deal(0, 1);
        assert_eq!(r.steal(1), None);
        assert_eq!(r.take_own(0), Some(0));
    }

    #[test]
    fn concurrent_takers_take_each_index_once() {
        use std::sync::atomic::AtomicU32 as StdU32;
        let r = SourceRanges::new(3);
        for _ in 0..200 {
            r.deal(0, 301);
            let counts: Vec<StdU32> = (0..301).map(|_| StdU32::new(0)).collect();
            std::thread::scope(|s| {
                for w in 0..3 {
                    let (r, counts) = (&r, &counts);
                    s.spawn(move || loop {
                        let got = r
                            .take_own(w)
                            .or_else(|| (1..3).find_map(|k| r.steal((w + k) % 3)));
                        match got {
                            Some(i) => {
                                counts[i as usize]
                                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            None => return,
                        }
                    });
                }
            });
            assert!(counts
                .iter()
                .all(|c| c.load(std::sync::atomic::Ordering::Relaxed) == 1));
        }
    }
}
