//! The pool benchmark's figures: time and speed-up against threads per workload, steal
//! attempts per policy, CPU use per policy (and of an idle pool).

use plotters::prelude::*;

use super::bench::{PoolBench, Summary};
use super::PoolKind;
use crate::report::plot::{self, chart, err, key, legend, line, mesh, Area, Figure, GREY};

/// A runner's colour: the sequential program black, rayon grey, `steal` (the default) the
/// strongest colour of the palette, the other policies the rest in [`Policy::ALL`] order.
///
/// [`Policy::ALL`]: fugue_pool::Policy::ALL
fn color(kind: PoolKind) -> RGBColor {
    match kind {
        PoolKind::Serial => plot::color(0),
        PoolKind::Rayon => GREY,
        PoolKind::Fugue(fugue_pool::Policy::Steal) => plot::color(6),
        PoolKind::Fugue(p) => {
            let i = fugue_pool::Policy::ALL
                .iter()
                .position(|&q| q == p)
                .unwrap_or(0);
            plot::color([1, 2, 3, 4, 5, 7][i % 6])
        }
    }
}

/// A thread count on the x axis: whole numbers are labelled, the ticks between them are not.
fn thread_label(x: &f64) -> String {
    if (x - x.round()).abs() < 1e-6 {
        format!("{x:.0}")
    } else {
        String::new()
    }
}

/// Which figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Which {
    /// Time (ms, log) against threads, one panel per workload.
    Time,
    /// Speed-up over the sequential program against threads, one panel per workload.
    Speedup,
    /// Steal attempts (log, +1), succeeded (solid) and failed (dashed), per policy.
    Steals,
    /// Cores kept busy against threads per workload, and an idle pool's CPU use per runner.
    Cpu,
}

/// One figure of the pool benchmark: a panel per workload, in rows of two.
pub(super) struct PoolFigure<'a> {
    pub bench: &'a PoolBench,
    pub workloads: &'a [&'static str],
    pub which: Which,
}

/// A chart of threads (x) against `y` on `area`, its mesh drawn with `y_desc` and, when
/// given, `y_label`.
fn threads_chart<'a, DB, Y>(
    area: &'a Area<DB>,
    b: &PoolBench,
    caption: String,
    y: Y,
    y_desc: &str,
    y_label: Option<&dyn Fn(&f64) -> String>,
) -> Result<plot::Chart<'a, DB, std::ops::Range<f64>, Y>, String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    Y::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let hi = b.thread_counts().last().copied().unwrap_or(1) as f64;
    let mut chart = chart(area, caption, 20, 70, 0.5..hi + 0.5, y)?;
    let mut mesh = mesh(&mut chart, "threads", y_desc);
    mesh.x_labels(b.thread_counts().len().max(2) * 2)
        .x_label_formatter(&thread_label);
    if let Some(f) = y_label {
        mesh.y_label_formatter(f);
    }
    mesh.draw().map_err(err)?;
    Ok(chart)
}

impl PoolFigure<'_> {
    /// The time panel of workload `w`.
    fn time<DB: DrawingBackend>(&self, area: &Area<DB>, w: &str) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let b = self.bench;
        let rows: Vec<_> = b.summary.iter().filter(|(k, _)| k.0 == w).collect();
        let hi = rows.iter().map(|(_, s)| s.seconds.max).fold(0.0, f64::max) * 1e3 * 1.5;
        let lo = rows
            .iter()
            .map(|(_, s)| s.seconds.min)
            .fold(f64::INFINITY, f64::min)
            * 1e3
            / 1.5;
        let (lo, hi) = (lo.max(1e-3), hi.max(lo * 10.0).max(1e-2));
        let mut chart = threads_chart(
            area,
            b,
            format!("{w}: time against threads"),
            (lo..hi).log_scale(),
            "median time (ms)",
            None,
        )?;
        if let Some(s) = b.serial(w) {
            let y = s * 1e3;
            let x = chart.x_range();
            let style = BLACK.stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(
                    [(x.start, y), (x.end, y)],
                    6,
                    4,
                    style,
                ))
                .map_err(err)?
                .label("serial")
                .legend(key(style));
        }
        for kind in b.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
            let col = color(kind);
            let pts: Vec<(f64, f64, f64, f64)> = b
                .thread_counts()
                .iter()
                .filter_map(|&t| {
                    let s = b.summary.get(&(w, kind, t))?;
                    Some((
                        t as f64,
                        s.seconds.median * 1e3,
                        s.seconds.min * 1e3,
                        s.seconds.max * 1e3,
                    ))
                })
                .collect();
            let width = if matches!(kind, PoolKind::Fugue(fugue_pool::Policy::Steal)) {
                3
            } else {
                2
            };
            let medians: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
            line(&mut chart, kind.name(), col, width, &medians)?;
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| PathElement::new([(p.0, p.2), (p.0, p.3)], col.stroke_width(1))),
                )
                .map_err(err)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }

    /// The speed-up panel of workload `w`: the sequential program's median time over each
    /// runner's, with the ideal (the thread count) dashed.
    fn speedup<DB: DrawingBackend>(&self, area: &Area<DB>, w: &str) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let b = self.bench;
        let Some(serial) = b.serial(w) else {
            return Ok(());
        };
        let kinds: Vec<PoolKind> = b
            .kinds()
            .into_iter()
            .filter(|k| *k != PoolKind::Serial)
            .collect();
        let series: Vec<(PoolKind, Vec<(f64, f64)>)> = kinds
            .iter()
            .map(|&kind| {
                let pts = b
                    .thread_counts()
                    .iter()
                    .filter_map(|&t| b.median(w, kind, t).map(|m| (t as f64, serial / m)))
                    .collect();
                (kind, pts)
            })
            .collect();
        let top_threads = b.thread_counts().last().copied().unwrap_or(1) as f64;
        let hi = series
            .iter()
            .flat_map(|(_, v)| v.iter().map(|p| p.1))
            .fold(top_threads.min(b.cores.max(1) as f64), f64::max)
            * 1.15;
        let mut chart = threads_chart(
            area,
            b,
            format!("{w}: speed-up over the sequential program"),
            0.0..hi,
            "sequential time / median time",
            None,
        )?;
        let ideal = GREY.stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                [(1.0, 1.0), (top_threads, top_threads)].map(|(x, y)| (x, y.min(hi))),
                6,
                4,
                ideal,
            ))
            .map_err(err)?
            .label("ideal")
            .legend(key(ideal));
        for (kind, pts) in &series {
            let width = if matches!(kind, PoolKind::Fugue(fugue_pool::Policy::Steal)) {
                3
            } else {
                2
            };
            line(&mut chart, kind.name(), color(*kind), width, pts)?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }

    /// The steals panel of workload `w`.
    fn steals<DB: DrawingBackend>(&self, area: &Area<DB>, w: &str) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let b = self.bench;
        let hi = b
            .summary
            .iter()
            .filter(|(k, _)| k.0 == w)
            .flat_map(|(_, s)| [s.steals, s.failed_steals])
            .flatten()
            .fold(1.0, f64::max)
            * 3.0;
        let mut chart = threads_chart(
            area,
            b,
            format!("{w}: steal attempts (solid: succeeded, dashed: failed)"),
            (1.0..hi).log_scale(),
            "attempts per run + 1 (median)",
            Some(&|y| format!("{y:.0e}")),
        )?;
        // The two shared-stack policies have nothing to steal from: left out.
        for kind in b
            .kinds()
            .into_iter()
            .filter(|k| matches!(k, PoolKind::Fugue(p) if p.name().starts_with("steal")))
        {
            let col = color(kind);
            let get = |f: fn(&Summary) -> Option<f64>| -> Vec<(f64, f64)> {
                b.thread_counts()
                    .iter()
                    .filter_map(|&t| {
                        b.summary
                            .get(&(w, kind, t))
                            .and_then(f)
                            .map(|v| (t as f64, v + 1.0))
                    })
                    .collect()
            };
            let ok = get(|s| s.steals);
            let failed = get(|s| s.failed_steals);
            line(&mut chart, kind.name(), col, 2, &ok)?;
            chart
                .draw_series(DashedLineSeries::new(
                    failed.clone(),
                    5,
                    4,
                    col.stroke_width(2),
                ))
                .map_err(err)?;
            chart
                .draw_series(
                    failed
                        .iter()
                        .map(|&p| TriangleMarker::new(p, 4, col.filled())),
                )
                .map_err(err)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }

    /// The CPU panel of workload `w`.
    fn cpu<DB: DrawingBackend>(&self, area: &Area<DB>, w: &str) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let b = self.bench;
        let hi = (b.cores as f64).max(1.0) * 1.25;
        let mut chart = threads_chart(
            area,
            b,
            format!("{w}: cores kept busy"),
            0.0..hi,
            "CPU time / wall time (median)",
            None,
        )?;
        for kind in b.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
            let pts: Vec<(f64, f64)> = b
                .thread_counts()
                .iter()
                .filter_map(|&t| {
                    b.summary
                        .get(&(w, kind, t))
                        .map(|s| (t as f64, s.cores_busy))
                })
                .collect();
            line(&mut chart, kind.name(), color(kind), 2, &pts)?;
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)
    }

    /// The idle pools' CPU use, a bar per runner.
    fn idle<DB: DrawingBackend>(&self, area: &Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let b = self.bench;
        let kinds: Vec<PoolKind> = b.idle.keys().copied().collect();
        let vals: Vec<f64> = kinds
            .iter()
            .map(|&k| b.idle_median(k).unwrap_or(0.0) * 100.0)
            .collect();
        let top = vals.iter().copied().fold(1.0, f64::max) * 1.3;
        let n = kinds.len();
        let names: Vec<&'static str> = kinds.iter().map(|k| k.name()).collect();
        let mut chart = chart(
            area,
            format!("idle pool, {} threads: share of one core", b.idle_threads),
            20,
            150,
            0.0..top,
            0.0..n as f64,
        )?;
        mesh(&mut chart, "% of one core (median)", "")
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|y| {
                let i = (y - 0.5).round();
                if (y - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
                    names
                        .get(i as usize)
                        .map_or(String::new(), |n| n.to_string())
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(err)?;
        chart
            .draw_series(kinds.iter().zip(&vals).enumerate().map(|(i, (&k, &v))| {
                Rectangle::new(
                    [(0.0, i as f64 + 0.15), (v, i as f64 + 0.85)],
                    color(k).filled(),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(vals.iter().enumerate().map(|(i, &v)| {
                Text::new(
                    format!("{v:.2}%"),
                    (v + top * 0.01, i as f64 + 0.35),
                    (plot::FONT, 13),
                )
            }))
            .map_err(err)?;
        Ok(())
    }
}

impl Figure for PoolFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        // The CPU figure has one more panel: the idle pools.
        let n = self.workloads.len() + usize::from(self.which == Which::Cpu);
        plot::grid(&root, (n.div_ceil(2).max(1), 2), |i, area| {
            match (self.workloads.get(i), self.which) {
                (Some(w), Which::Time) => self.time(area, w),
                (Some(w), Which::Speedup) => self.speedup(area, w),
                (Some(w), Which::Steals) => self.steals(area, w),
                (Some(w), Which::Cpu) => self.cpu(area, w),
                (None, Which::Cpu) if i == self.workloads.len() => self.idle(area),
                (None, _) => Ok(()),
            }
        })
    }
}
