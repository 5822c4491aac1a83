//! The profile's histograms: [`crate::histogram::Histogram`] at 32 buckets per power of two
//! (quantiles within 3.2 %), filled by the thread that folds the records.

use crate::histogram::Histogram;

/// Highest time a histogram holds, in ticks (longer times count as this): a minute at up to
/// 16 ticks per ns.
pub(super) const HIST_MAX_TICKS: u64 = 1_000_000_000_000;

/// A histogram of tick counts for the profile.
pub(super) fn histogram() -> Histogram {
    Histogram::new(5, HIST_MAX_TICKS)
}
