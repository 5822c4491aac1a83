//! The engine's one histogram: a log-linear distribution of non-negative integers (durations
//! in ns or ticks), recorded without allocating or locking and read by any thread at any
//! time. The per-cycle statistics ([`crate::stats`]), the profile ([`crate::profile`]) and
//! the host's statistics keep their percentiles in it, each at its own resolution.
//!
//! **Buckets.** With `sub_bits = b`, a value below `2^(b+1)` has a bucket of its own; above,
//! each power of two is cut into `2^b` buckets of equal width, so a quantile (the highest value
//! of the bucket that holds its rank) is at most `2^-b` above the exact one: `b = 10` gives
//! the 0.1 % of three significant digits, `b = 5` 3.2 %, `b = 3` 12.5 %.
//!
//! **One writer.** Each histogram is recorded by one thread at a time (the audio thread, a
//! worker, the statistics thread); its counts are atomics so that another thread may read
//! them meanwhile, and the writer updates them with a load and a store (no locked
//! instruction): a reader sees every count as it was at some moment of the run.

use std::sync::atomic::{AtomicU64, Ordering};

/// A log-linear histogram (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Histogram {
    sub_bits: u32,
    /// The largest value it holds (a larger one counts as this).
    highest: u64,
    counts: Box<[AtomicU64]>,
    total: AtomicU64,
    max: AtomicU64,
}

/// Adds `n` to a counter that only the calling thread writes: a plain load and store, no
/// locked read-modify-write.
#[inline]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    // Relaxed: a statistic with one writer; readers want no ordering with other data.
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

impl Histogram {
    /// An empty histogram of `2^sub_bits` buckets per power of two, holding values up to
    /// `highest`. Allocates its buckets (about `(log2(highest) - sub_bits) * 2^sub_bits`).
    pub(crate) fn new(sub_bits: u32, highest: u64) -> Histogram {
        assert!((1..=16).contains(&sub_bits), "1 to 16 sub-bucket bits");
        let mut h = Histogram {
            sub_bits,
            highest,
            counts: Box::new([]),
            total: AtomicU64::new(0),
            max: AtomicU64::new(0),
        };
        let buckets = h.index(highest) + 1;
        h.counts = (0..buckets).map(|_| AtomicU64::new(0)).collect();
        h
    }

    /// The memory its buckets hold, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.counts.len() * std::mem::size_of::<AtomicU64>()
    }

    /// Values below this have a bucket each.
    #[inline]
    fn linear(&self) -> u64 {
        2 << self.sub_bits
    }

    /// The bucket of `v` (at most `highest`).
    #[inline]
    fn index(&self, v: u64) -> usize {
        if v < self.linear() {
            return v as usize;
        }
        let b = self.sub_bits;
        let e = 63 - v.leading_zeros();
        let m = (v >> (e - b)) as usize & ((1 << b) - 1);
        self.linear() as usize + (e - b - 1) as usize * (1 << b) + m
    }

    /// The highest value of bucket `i`.
    fn top(&self, i: usize) -> u64 {
        if (i as u64) < self.linear() {
            return i as u64;
        }
        let b = self.sub_bits;
        let k = i - self.linear() as usize;
        let e = (k >> b) as u32 + b + 1;
        let m = (k & ((1 << b) - 1)) as u64;
        let width = 1u64 << (e - b);
        (((1u64 << b) + m) << (e - b)).saturating_add(width - 1)
    }

    /// Counts `v` (a value above the highest counts as that). Never allocates; one writer at
    /// a time (see the module's documentation).
    #[inline]
    pub(crate) fn record(&self, v: u64) {
        let v = v.min(self.highest);
        bump(&self.counts[self.index(v)], 1);
        bump(&self.total, 1);
        // Relaxed: as in `bump`.
        if v > self.max.load(Ordering::Relaxed) {
            self.max.store(v, Ordering::Relaxed);
        }
    }

    /// How many values were counted.
    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Whether nothing was counted.
    pub(crate) fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The largest value counted (exact; 0 when empty).
    pub(crate) fn max(&self) -> u64 {
        self.max.load(Ordering::Relaxed)
    }

    /// The value below which a fraction `q` of the values lie: the highest value of the
    /// bucket that holds the rank `ceil(q * total)`, at most the largest value counted (0 when
    /// empty).
    pub(crate) fn value_at_quantile(&self, q: f64) -> u64 {
        let total: u64 = self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let max = self.max();
        if total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c.load(Ordering::Relaxed);
            if seen >= rank {
                return self.top(i).min(max);
            }
        }
        max
    }
}

impl Clone for Histogram {
    fn clone(&self) -> Histogram {
        let copy = |a: &AtomicU64| AtomicU64::new(a.load(Ordering::Relaxed));
        Histogram {
            sub_bits: self.sub_bits,
            highest: self.highest,
            counts: self.counts.iter().map(copy).collect(),
            total: copy(&self.total),
            max: copy(&self.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Histogram;

    #[test]
    fn buckets_tile_the_range_in_order() {
        for (bits, highest) in [
            (3, 1u64 << 40),
            (5, 1_000_000_000_000),
            (10, u32::MAX as u64),
        ] {
            let h = Histogram::new(bits, highest);
            let mut prev = None;
            for i in 0..h.counts.len() {
                let hi = h.top(i);
                assert_eq!(h.index(hi.min(highest)), i, "{bits} bits, bucket {i}");
                if let Some(p) = prev {
                    assert_eq!(
                        h.index(p + 1),
                        i,
                        "{bits} bits, bucket {i} starts after {p}"
                    );
                }
                prev = Some(hi);
            }
            assert!(h.top(h.counts.len() - 1) >= highest);
        }
    }

    #[test]
    fn quantiles_are_within_the_bucket_precision() {
        // A spread of values from 1 to about 10^9, deterministic.
        let mut rng = fugue_dsp::fast::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut values: Vec<u64> = (0..20_000)
            .map(|_| {
                let x = rng.next_u64();
                1 + (x % 1000) * (1 + (x >> 40) % 1_000_000)
            })
            .collect();
        values.sort_unstable();
        for bits in [3, 5, 10] {
            let h = Histogram::new(bits, 1_000_000_000_000);
            for &v in &values {
                h.record(v);
            }
            assert_eq!(h.max(), *values.last().unwrap());
            assert_eq!(h.total(), values.len() as u64);
            for q in [0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let exact = values[((q * values.len() as f64).ceil() as usize).max(1) - 1] as f64;
                let got = h.value_at_quantile(q) as f64;
                let within = exact * (1.0 + 1.0 / f64::from(1u32 << bits)) + 1.0;
                assert!(
                    got >= exact && got <= within,
                    "{bits} bits, q {q}: {got} for {exact}"
                );
            }
        }
    }

    #[test]
    fn small_values_are_exact_and_large_ones_saturate() {
        let h = Histogram::new(5, 1_000);
        assert!(h.is_empty());
        assert_eq!(h.value_at_quantile(0.5), 0);
        for v in [3, 3, 5, 60, 5_000] {
            h.record(v);
        }
        assert_eq!(h.value_at_quantile(0.5), 5);
        assert_eq!(h.value_at_quantile(0.2), 3);
        assert_eq!(h.max(), 1_000);
        assert_eq!(h.value_at_quantile(1.0), 1_000);
        let c = h.clone();
        assert_eq!((c.total(), c.max()), (5, 1_000));
    }
}
