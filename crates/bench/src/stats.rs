//! Statistics shared by every harness: median, spread, percentiles, the statistics of one
//! run's cycle times, and ratios of runs measured side by side.

/// The median of `v` (the mean of the two middle values for an even count); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    median_of_sorted(&s)
}

fn median_of_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The smallest and the largest of `v` (`(inf, -inf)` when empty).
pub fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// The median, smallest and largest of a set of values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `v` (not empty).
    pub fn of(v: &[f64]) -> Spread {
        let (min, max) = min_max(v);
        Spread {
            median: median(v),
            min,
            max,
        }
    }

    /// (max - min) / median, in percent (0 when the median is not positive).
    pub fn pct(&self) -> f64 {
        if self.median > 0.0 {
            100.0 * (self.max - self.min) / self.median
        } else {
            0.0
        }
    }
}

/// Spread of `v` around its median: (max - min) / median, in percent.
pub fn spread_pct(v: &[f64]) -> f64 {
    Spread::of(v).pct()
}

/// The `p`-quantile (0 < p <= 1) of sorted values by the nearest rank: the value at rank
/// ⌈p·n⌉ (1-based, at least 1). Panics when empty.
pub fn percentile<T: Copy>(sorted: &[T], p: f64) -> T {
    let n = sorted.len();
    sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1]
}

/// Statistics of one run's cycle times, in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct CycleStats {
    /// Timed cycles.
    pub cycles: usize,
    /// Median.
    pub median_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// Largest.
    pub max_ns: f64,
    /// Smallest.
    pub min_ns: f64,
    /// Mean.
    pub mean_ns: f64,
}

impl CycleStats {
    /// The statistics of `samples` (sorted in place). `None` when empty.
    pub fn of(samples: &mut [u64]) -> Option<CycleStats> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        Some(CycleStats {
            cycles: n,
            median_ns: if n % 2 == 1 {
                samples[n / 2] as f64
            } else {
                (samples[n / 2 - 1] + samples[n / 2]) as f64 / 2.0
            },
            p99_ns: percentile(samples, 0.99) as f64,
            max_ns: samples[n - 1] as f64,
            min_ns: samples[0] as f64,
            mean_ns: samples.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        })
    }
}

/// Per-run statistics of one configuration over several runs.
pub trait Runs {
    /// The runs.
    fn runs(&self) -> &[CycleStats];
    /// The median over runs of `f`.
    fn median_of(&self, f: impl Fn(&CycleStats) -> f64) -> f64 {
        median(&self.runs().iter().map(f).collect::<Vec<_>>())
    }
    /// Each run's median.
    fn medians(&self) -> Vec<f64> {
        self.runs().iter().map(|s| s.median_ns).collect()
    }
    /// The largest cycle over all runs.
    fn max_ns(&self) -> f64 {
        self.runs().iter().map(|s| s.max_ns).fold(0.0, f64::max)
    }
    /// The smallest cycle over all runs.
    fn min_ns(&self) -> f64 {
        self.runs()
            .iter()
            .map(|s| s.min_ns)
            .fold(f64::INFINITY, f64::min)
    }
}

impl Runs for [CycleStats] {
    fn runs(&self) -> &[CycleStats] {
        self
    }
}

impl Runs for Vec<CycleStats> {
    fn runs(&self) -> &[CycleStats] {
        self
    }
}

/// Per run `i`: `num[i].median / den[i].median`, for runs `i` measured one right after the
/// other (a change of the machine's speed between runs touches both); runs whose
/// denominator is not positive are left out.
pub fn paired_ratios(num: &[CycleStats], den: &[CycleStats]) -> Vec<f64> {
    num.iter()
        .zip(den)
        .filter(|(_, d)| d.median_ns > 0.0)
        .map(|(n, d)| n.median_ns / d.median_ns)
        .collect()
}

/// How many of a run's first cycles are left out of its statistics as warm-up (caches,
/// branch predictors): the first tenth, at most 50.
pub fn warm_up(cycles: usize) -> usize {
    (cycles / 10).min(50)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn spread_is_median_min_max_and_percent() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!(
            s,
            Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(s.pct(), 100.0);
        assert_eq!(
            Spread::of(&[4.0, 1.0, 2.0, 3.0]),
            Spread {
                median: 2.5,
                min: 1.0,
                max: 4.0
            }
        );
        assert_eq!(spread_pct(&[10.0, 10.0, 12.0]), 20.0);
        assert_eq!(spread_pct(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn percentile_is_the_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&v, 0.5), 50);
        assert_eq!(percentile(&v, 0.001), 1);
        assert_eq!(percentile(&[5.0], 0.9), 5.0);
    }

    #[test]
    fn cycle_stats_of_known_samples() {
        let mut s = vec![5, 1, 4, 2, 3];
        let st = CycleStats::of(&mut s).unwrap();
        assert_eq!(
            (st.cycles, st.median_ns, st.min_ns, st.max_ns, st.mean_ns),
            (5, 3.0, 1.0, 5.0, 3.0)
        );
        assert_eq!(st.p99_ns, 5.0);
        assert!(CycleStats::of(&mut []).is_none());
        let runs = vec![
            st.clone(),
            CycleStats {
                median_ns: 6.0,
                ..st
            },
        ];
        assert_eq!(runs.medians(), vec![3.0, 6.0]);
        assert_eq!(runs.median_of(|s| s.median_ns), 4.5);
        assert_eq!(paired_ratios(&runs[1..], &runs[..1]), vec![2.0]);
        assert_eq!(warm_up(1000), 50);
        assert_eq!(warm_up(30), 3);
    }
}
