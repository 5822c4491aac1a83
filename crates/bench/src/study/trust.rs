//! What the study trusts, and how long it has left.
//!
//! A figure of the study is a median over its repeats: of each repeat's median cycle time
//! (seq), or of each repeat's speedup over the seq run beside it (the parallel executors).
//! Whether a figure is stated as a finding depends on how far that median could move were
//! the study run again: [`median_interval`] is the distribution-free confidence interval of
//! the median from the order statistics of the repeats (the binomial argument: each repeat
//! falls below the true median with probability one half), the narrowest one that holds
//! the median with a probability of at least [`COVERAGE`]. With three repeats it is their
//! whole range (75 %), the rule the study always had; with more repeats it leaves out the
//! extreme ones, so one repeat disturbed by another job no longer flags a figure whose other
//! repeats agree. The figure is trusted when the interval's width is at most the spec's
//! `max_spread_pct` of the median ([`interval_pct`]).

use std::time::Duration;

use crate::stats::median;

/// The least probability with which [`median_interval`] holds the true median: that of the
/// range of three repeats.
pub const COVERAGE: f64 = 0.75;

/// The probability that the order statistics `k` and `n + 1 - k` (from 1) of `n` values
/// enclose their distribution's median: 1 - 2 P(Binomial(n, 1/2) < k).
pub fn coverage(n: usize, k: usize) -> f64 {
    if n == 0 || k == 0 || 2 * k > n + 1 {
        return 0.0;
    }
    // P(B < k) = sum_{i < k} C(n, i) / 2^n, the binomial coefficients built one from the last.
    let mut c = 1.0f64;
    let mut below = 0.0f64;
    for i in 0..k {
        if i > 0 {
            c = c * (n + 1 - i) as f64 / i as f64;
        }
        below += c;
    }
    1.0 - 2.0 * below / 2f64.powi(n as i32)
}

/// The confidence interval of the median of `v` (not empty): `(low, high)`, the order
/// statistics `k` and `n + 1 - k` for the largest `k` whose [`coverage`] is at least
/// [`COVERAGE`], or the whole range when no `k` reaches it (fewer than three values).
pub fn median_interval(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let k = (1..=n.div_ceil(2))
        .rev()
        .find(|&k| coverage(n, k) >= COVERAGE)
        .unwrap_or(1);
    (s[k - 1], s[n - k])
}

/// The width of [`median_interval`] in percent of the median of `v` (0 when the median is
/// not positive or `v` is empty).
pub fn interval_pct(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = median(v);
    if m.is_nan() || m <= 0.0 {
        return 0.0;
    }
    let (lo, hi) = median_interval(v);
    100.0 * (hi - lo) / m
}

/// The time left after `done` of `total` runs took `elapsed`: the mean run so far times the
/// runs left, or `per_run` (the plan's estimate) times the runs left before the first run
/// has ended.
pub fn eta(elapsed: Duration, done: usize, total: usize, per_run: Duration) -> Duration {
    let left = total.saturating_sub(done) as u32;
    if done == 0 {
        per_run * left
    } else {
        elapsed / done as u32 * left
    }
}

/// The progress line of run `index` (from 1) of `total`: `[12/288] line600 ws t2 b64 idle,
/// repeat 2/6, about 1 min 40 s left` (`what` is the configuration and repeat).
pub fn step_line(index: usize, total: usize, what: &str, left: Duration) -> String {
    format!(
        "[{index}/{total}] {what}, about {} left",
        super::duration_text(left)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_of_the_order_statistics() {
        // Three values: their range holds the median 3 times in 4.
        assert_eq!(coverage(3, 1), 0.75);
        assert_eq!(coverage(5, 1), 1.0 - 2.0 / 32.0);
        assert_eq!(coverage(6, 2), 1.0 - 2.0 * 7.0 / 64.0);
        assert_eq!(coverage(9, 3), 1.0 - 2.0 * 46.0 / 512.0);
        assert_eq!(coverage(3, 2), 0.0);
    }

    #[test]
    fn the_interval_leaves_out_extreme_repeats_only_when_enough_remain() {
        // Three repeats: the whole range, as the study always judged.
        assert_eq!(median_interval(&[10.0, 30.0, 11.0]), (10.0, 30.0));
        // Five: the order statistics 2 and 4 hold the median only 62.5 % of the time, so
        // the whole range again.
        assert_eq!(
            median_interval(&[10.0, 10.5, 11.0, 10.2, 30.0]),
            (10.0, 30.0)
        );
        // Six: the second and fifth (78 %): one disturbed repeat does not count.
        let six = [10.0, 10.5, 11.0, 10.2, 30.0, 10.4];
        assert_eq!(median_interval(&six), (10.2, 11.0));
        assert!((interval_pct(&six) - 100.0 * 0.8 / 10.45).abs() < 1e-9);
        // Two: their range.
        assert_eq!(median_interval(&[2.0, 1.0]), (1.0, 2.0));
        assert_eq!(interval_pct(&[5.0]), 0.0);
        assert_eq!(interval_pct(&[]), 0.0);
    }

    #[test]
    fn the_eta_is_the_mean_run_times_the_runs_left() {
        let s = Duration::from_secs;
        assert_eq!(eta(s(0), 0, 10, Duration::from_millis(500)), s(5));
        assert_eq!(eta(s(20), 4, 10, s(9)), s(30));
        assert_eq!(eta(s(20), 10, 10, s(1)), s(0));
        assert_eq!(
            step_line(12, 288, "line600 ws t2 b64 idle, repeat 2/6", s(100)),
            "[12/288] line600 ws t2 b64 idle, repeat 2/6, about 1 min 40 s left"
        );
        assert_eq!(step_line(1, 2, "x", s(42)), "[1/2] x, about 42 s left");
    }
}
