//! The sweep's producers experiment: throughput against the number of producers (1, 2, 3, 4,
//! 8, ... up to the cores by default) for the ordered ring's strategies and the mutex/condvar
//! baseline, with a fixed number of items per run and a time budget per run. A run that does
//! not transfer its items within the budget stops there and is reported as not finished (with
//! the items it did), so that a collapsed configuration cannot stall the sweep.

use std::fmt::Write as _;
use std::time::Duration;

use plotters::prelude::*;

use super::point::{Impl, Point};
use super::sweep::{Key, Sweep};
use crate::report::plot::{self, chart, err, legend, line, mesh, Area, Figure};
use crate::report::{Align, Table};
use crate::stats::median;

/// The experiment's name in the sweep's keys and CSV files.
pub const EXPERIMENT: &str = "producers";

/// The implementations of the experiment: the ordered ring's strategies and the baseline.
pub const IMPLS: [Impl; 4] = [Impl::Spin, Impl::Yield, Impl::Park, Impl::Mutex];

/// The default producer counts on a machine of `cores` cores: 1, 2, 3, then the powers of two
/// below the cores, then `cores - 1` (one core left for the consumer).
pub fn default_counts(cores: usize) -> Vec<usize> {
    let mut v = vec![1, 2, 3];
    let mut p = 4;
    while p < cores.saturating_sub(1) {
        v.push(p);
        p *= 2;
    }
    if cores > 4 {
        v.push(cores - 1);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// What the experiment runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Producer counts.
    pub counts: Vec<usize>,
    /// Slots of the ring.
    pub capacity: usize,
    /// Items per run.
    pub items: u64,
    /// The budget of each run.
    pub max_seconds: f64,
}

/// The experiment's points (one per implementation and producer count), `base` giving the
/// item size and padding.
pub(super) fn points(plan: &Plan, base: &Point) -> Vec<Point> {
    let mut v = Vec::new();
    for &producers in &plan.counts {
        for imp in IMPLS {
            v.push(Point {
                imp,
                producers,
                capacity: plan.capacity,
                items: plan.items,
                cap: Some(Duration::from_secs_f64(plan.max_seconds)),
                ..base.clone()
            });
        }
    }
    v
}

/// The key of a point of the experiment.
fn key(imp: Impl, producers: usize, plan: &Plan, pad: &'static str) -> Key {
    (EXPERIMENT, imp, producers, plan.capacity, pad, false, false)
}

/// How a point went: every run finished (median items/s), or some did not (median items
/// transferred by the runs that did not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PointResult {
    /// Every run transferred its items; the median items/s.
    Finished(f64),
    /// At least one run hit the budget; the median items it transferred.
    DidNotFinish(u64),
}

/// How the point of `imp` with `producers` went, if it ran.
pub fn result(
    sweep: &Sweep,
    plan: &Plan,
    imp: Impl,
    producers: usize,
    pad: &'static str,
) -> Option<PointResult> {
    let k = key(imp, producers, plan, pad);
    let runs: Vec<_> = sweep.runs.iter().filter(|r| r.key == k).collect();
    if runs.is_empty() {
        return None;
    }
    let short: Vec<f64> = runs
        .iter()
        .filter(|r| r.items < r.planned)
        .map(|r| r.items as f64)
        .collect();
    if short.is_empty() {
        sweep.median(&k).map(PointResult::Finished)
    } else {
        Some(PointResult::DidNotFinish(median(&short) as u64))
    }
}

/// The README section: a table of producers × implementations.
pub(super) fn section(sweep: &Sweep, plan: &Plan, pad: &'static str, item_size: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Producers (threads), capacity {}, {item_size}-byte items: median items/s (× one producer)\n",
        plan.capacity
    );
    let _ = writeln!(
        s,
        "{} items per run; a run stops after {} s and the point is then reported as not finished, with the items it transferred (median over its unfinished runs). `producers.svg`/`.png` plot the finished points.\n",
        plan.items,
        plan.max_seconds
    );
    let mut t = Table::new(
        std::iter::once(("producers", Align::Right))
            .chain(IMPLS.iter().map(|i| (i.name(), Align::Right))),
    );
    for &p in &plan.counts {
        let mut row = vec![p.to_string()];
        for imp in IMPLS {
            let one = match result(sweep, plan, imp, 1, pad) {
                Some(PointResult::Finished(r)) => Some(r),
                _ => None,
            };
            row.push(match result(sweep, plan, imp, p, pad) {
                Some(PointResult::Finished(r)) => match one {
                    Some(o) if p > 1 => format!("{} ({:.2}×)", super::sweep::mps(r), r / o),
                    _ => super::sweep::mps(r),
                },
                Some(PointResult::DidNotFinish(done)) => format!(
                    "did not finish {} items in {} s ({done} done)",
                    plan.items, plan.max_seconds
                ),
                None => "–".into(),
            });
        }
        t.row(row);
    }
    let _ = writeln!(s, "{}", t.markdown());
    s
}

/// The figure: items/s against producers, one line per implementation (finished points).
pub(super) struct Chart<'a> {
    pub sweep: &'a Sweep,
    pub plan: &'a Plan,
    pub padding: &'static str,
    pub item_size: usize,
}

fn color(imp: Impl) -> RGBColor {
    plot::color(match imp {
        Impl::Mutex => 0,
        Impl::Park => 3,
        Impl::Yield => 5,
        _ => 6,
    })
}

impl Figure for Chart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let series: Vec<(Impl, Vec<(f64, f64)>)> = IMPLS
            .iter()
            .map(|&imp| {
                let pts = self
                    .plan
                    .counts
                    .iter()
                    .filter_map(
                        |&p| match result(self.sweep, self.plan, imp, p, self.padding) {
                            Some(PointResult::Finished(r)) => Some((p as f64, r)),
                            _ => None,
                        },
                    )
                    .collect();
                (imp, pts)
            })
            .collect();
        let all = || series.iter().flat_map(|(_, v)| v.iter().map(|&(_, y)| y));
        let ymax = all().fold(1.0f64, f64::max) * 2.0;
        // No finished point (every run hit its budget): an empty chart with a valid range.
        let lo = all().fold(f64::INFINITY, f64::min);
        let ymin = if lo.is_finite() {
            lo.max(1.0).min(ymax / 10.0)
        } else {
            ymax / 10.0
        } / 2.0;
        let xmax = self.plan.counts.iter().copied().max().unwrap_or(1) as f64;
        plot::grid(&root, (1, 1), |_, area| {
            let mut chart = chart(
                area,
                format!(
                    "P producers -> 1 consumer, capacity {}, {}-byte items, padding {}",
                    self.plan.capacity, self.item_size, self.padding
                ),
                22,
                75,
                0.5f64..xmax + 0.5,
                (ymin..ymax).log_scale(),
            )?;
            mesh(&mut chart, "producers (threads)", "items per second")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0e}"))
                .draw()
                .map_err(err)?;
            for (imp, pts) in &series {
                if !pts.is_empty() {
                    line(&mut chart, imp.name(), color(*imp), 2, pts)?;
                }
            }
            legend(&mut chart, SeriesLabelPosition::LowerLeft)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_counts_go_up_to_the_cores() {
        assert_eq!(default_counts(1), vec![1, 2, 3]);
        assert_eq!(default_counts(2), vec![1, 2, 3]);
        assert_eq!(default_counts(4), vec![1, 2, 3]);
        assert_eq!(default_counts(8), vec![1, 2, 3, 4, 7]);
        assert_eq!(default_counts(16), vec![1, 2, 3, 4, 8, 15]);
        assert_eq!(default_counts(64), vec![1, 2, 3, 4, 8, 16, 32, 63]);
    }
}
