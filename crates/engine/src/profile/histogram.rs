//! A log-linear histogram of tick counts, filled on the audio thread.

/// Highest time a histogram holds, in ticks (longer times count as this): a minute at up to
/// 16 ticks per ns.
pub(super) const HIST_MAX_TICKS: u64 = 1_000_000_000_000;

pub(super) fn histogram() -> Histogram {
    Histogram::new()
}

/// A log-linear histogram of tick counts, made for the audio thread: a value up to 63 has its
/// own bucket, a larger one falls into one of 32 buckets per power of two (so a quantile is
/// within 3.2 % of the exact value), counts are `u32` in one array of 1,152 (4.5 KiB), and
/// recording one value is a few instructions with no branch but the range check.
#[derive(Clone, Debug)]
pub(super) struct Histogram {
    counts: Box<[u32]>,
    total: u64,
    max: u64,
}

impl Histogram {
    /// Bits of the sub-bucket index within a power of two.
    const SUB_BITS: u32 = 5;
    const SUB: usize = 1 << Self::SUB_BITS;
    /// Values below this have a bucket each.
    const LINEAR: u64 = 2 * Self::SUB as u64;
    const BUCKETS: usize = Self::index(HIST_MAX_TICKS) + 1;

    pub(super) fn new() -> Histogram {
        Histogram {
            counts: vec![0; Self::BUCKETS].into_boxed_slice(),
            total: 0,
            max: 0,
        }
    }

    /// The bucket of `v` (at most `HIST_MAX_TICKS`).
    #[inline]
    const fn index(v: u64) -> usize {
        if v < Self::LINEAR {
            v as usize
        } else {
            let e = 63 - v.leading_zeros();
            let m = (v >> (e - Self::SUB_BITS)) as usize & (Self::SUB - 1);
            Self::LINEAR as usize + (e - Self::SUB_BITS - 1) as usize * Self::SUB + m
        }
    }

    /// The highest value of bucket `i`.
    fn highest(i: usize) -> u64 {
        if (i as u64) < Self::LINEAR {
            return i as u64;
        }
        let k = i - Self::LINEAR as usize;
        let e = (k / Self::SUB) as u32 + Self::SUB_BITS + 1;
        let m = (k % Self::SUB) as u64;
        let width = 1u64 << (e - Self::SUB_BITS);
        ((Self::SUB as u64 + m) << (e - Self::SUB_BITS)) + width - 1
    }

    /// Counts `v` (a value above `HIST_MAX_TICKS` counts as that). Never allocates.
    #[inline]
    pub(super) fn saturating_record(&mut self, v: u64) {
        let v = v.min(HIST_MAX_TICKS);
        let c = &mut self.counts[Self::index(v)];
        *c = c.saturating_add(1);
        self.total += 1;
        self.max = self.max.max(v);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The largest value recorded (exact).
    pub(super) fn max(&self) -> u64 {
        self.max
    }

    /// The value below which a fraction `q` of the values lie: the highest value of the
    /// bucket that holds the rank, at most the largest value recorded.
    pub(super) fn value_at_quantile(&self, q: f64) -> u64 {
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return Self::highest(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::Histogram;

    #[test]
    fn buckets_tile_the_range_in_order() {
        let mut prev = None;
        for i in 0..Histogram::BUCKETS {
            let hi = Histogram::highest(i);
            assert_eq!(Histogram::index(hi), i, "bucket {i}");
            if let Some(p) = prev {
                assert_eq!(Histogram::index(p + 1), i, "bucket {i} starts after {p}");
            }
            prev = Some(hi);
        }
        assert!(Histogram::highest(Histogram::BUCKETS - 1) >= super::HIST_MAX_TICKS);
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
        let mut h = Histogram::new();
        for &v in &values {
            h.saturating_record(v);
        }
        values.sort_unstable();
        assert_eq!(h.max(), *values.last().unwrap());
        for q in [0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let exact = values[((q * values.len() as f64).ceil() as usize).max(1) - 1] as f64;
            let got = h.value_at_quantile(q) as f64;
            assert!(
                got >= exact && got <= exact * (1.0 + 1.0 / 32.0) + 1.0,
                "q {q}: {got} for {exact}"
            );
        }
        let mut small = Histogram::new();
        assert!(small.is_empty());
        for v in [3, 3, 5, 60] {
            small.saturating_record(v);
        }
        assert_eq!(small.value_at_quantile(0.5), 3);
        assert_eq!(small.value_at_quantile(0.75), 5);
        assert_eq!(small.value_at_quantile(0.99), 60);
        small.saturating_record(u64::MAX);
        assert_eq!(small.max(), super::HIST_MAX_TICKS);
    }
}
