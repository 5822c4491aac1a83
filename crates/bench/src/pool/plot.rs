//! The pool benchmark's figures: time against threads per workload, steal attempts per
//! policy, CPU use per policy (and of an idle pool).

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

use super::bench::PoolBench;
use super::PoolKind;
use crate::report::plot::{err, Area, Figure};

/// Ten colours told apart easily (Tableau 10); one per runner, in [`PoolBench::kinds`] order.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(kind: PoolKind) -> RGBColor {
    match kind {
        PoolKind::Serial => RGBColor(0, 0, 0),
        PoolKind::Rayon => RGBColor(127, 127, 127),
        PoolKind::Fugue(p) => {
            let i = fugue_pool::Policy::ALL
                .iter()
                .position(|&q| q == p)
                .unwrap_or(0);
            // `steal`, the default, takes the strongest colour.
            if p == fugue_pool::Policy::Steal {
                RGBColor(214, 39, 40)
            } else {
                PALETTE[[0, 1, 2, 4, 5, 6, 8, 9][i % 8]]
            }
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

/// Draws the legend of `chart`'s labelled series at `position`.
fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(err)
}

/// `n` panels in rows of two.
fn panels<DB: DrawingBackend>(root: &Area<DB>, n: usize) -> Vec<Area<DB>> {
    root.split_evenly((n.div_ceil(2).max(1), 2))
}

fn x_range(b: &PoolBench) -> std::ops::Range<f64> {
    let t = b.thread_counts();
    let hi = t.last().copied().unwrap_or(1) as f64;
    0.5..hi + 0.5
}

/// Time (ms, log) against threads, one panel per workload.
pub(super) struct Times<'a> {
    pub bench: &'a PoolBench,
    pub workloads: &'a [&'static str],
}

impl Figure for Times<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let b = self.bench;
        let threads = b.thread_counts();
        for (area, &w) in panels(&root, self.workloads.len())
            .iter()
            .zip(self.workloads)
        {
            let rows: Vec<_> = b.summary.iter().filter(|(k, _)| k.0 == w).collect();
            let hi = rows.iter().map(|(_, s)| s.seconds.max).fold(0.0, f64::max) * 1e3 * 1.5;
            let lo = rows
                .iter()
                .map(|(_, s)| s.seconds.min)
                .fold(f64::INFINITY, f64::min)
                * 1e3
                / 1.5;
            let (lo, hi) = (lo.max(1e-3), hi.max(lo * 10.0).max(1e-2));
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{w}: time against threads"), ("sans-serif", 22))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(x_range(b), (lo..hi).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("threads")
                .y_desc("median time (ms)")
                .x_labels(threads.len().max(2) * 2)
                .x_label_formatter(&thread_label)
                .draw()
                .map_err(err)?;
            if let Some(s) = b.serial(w) {
                let y = s * 1e3;
                let x = x_range(b);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x.start, y), (x.end, y)],
                        6,
                        4,
                        ShapeStyle::from(&BLACK).stroke_width(2),
                    ))
                    .map_err(err)?
                    .label("serial")
                    .legend(|(x, y)| {
                        PathElement::new([(x, y), (x + 18, y)], BLACK.stroke_width(2))
                    });
            }
            for kind in b.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
                let col = color(kind);
                let pts: Vec<(f64, f64, f64, f64)> = threads
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
                chart
                    .draw_series(LineSeries::new(
                        pts.iter().map(|p| (p.0, p.1)),
                        ShapeStyle::from(&col).stroke_width(width),
                    ))
                    .map_err(err)?
                    .label(kind.name())
                    .legend(move |(x, y)| {
                        PathElement::new(
                            [(x, y), (x + 18, y)],
                            ShapeStyle::from(&col).stroke_width(width),
                        )
                    });
                chart
                    .draw_series(pts.iter().map(|p| {
                        PathElement::new(
                            [(p.0, p.2), (p.0, p.3)],
                            ShapeStyle::from(&col).stroke_width(1),
                        )
                    }))
                    .map_err(err)?;
                chart
                    .draw_series(pts.iter().map(|p| Circle::new((p.0, p.1), 3, col.filled())))
                    .map_err(err)?;
            }
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        root.present().map_err(err)
    }
}

/// Steal attempts (log, +1), succeeded (solid) and failed (dashed), per policy.
pub(super) struct Steals<'a> {
    pub bench: &'a PoolBench,
    pub workloads: &'a [&'static str],
}

impl Figure for Steals<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let b = self.bench;
        let threads = b.thread_counts();
        for (area, &w) in panels(&root, self.workloads.len())
            .iter()
            .zip(self.workloads)
        {
            let hi = b
                .summary
                .iter()
                .filter(|(k, _)| k.0 == w)
                .flat_map(|(_, s)| [s.steals, s.failed_steals])
                .flatten()
                .fold(1.0, f64::max)
                * 3.0;
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("{w}: steal attempts (solid: succeeded, dashed: failed)"),
                    ("sans-serif", 20),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(x_range(b), (1.0..hi).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("threads")
                .y_desc("attempts per run + 1 (median)")
                .x_labels(threads.len().max(2) * 2)
                .x_label_formatter(&thread_label)
                .y_label_formatter(&|y| format!("{y:.0e}"))
                .draw()
                .map_err(err)?;
            // The two shared-stack policies have nothing to steal from: left out.
            for kind in b
                .kinds()
                .into_iter()
                .filter(|k| matches!(k, PoolKind::Fugue(p) if p.name().starts_with("steal")))
            {
                let col = color(kind);
                let get = |f: fn(&super::bench::Summary) -> Option<f64>| -> Vec<(f64, f64)> {
                    threads
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
                chart
                    .draw_series(LineSeries::new(
                        ok.clone(),
                        ShapeStyle::from(&col).stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(kind.name())
                    .legend(move |(x, y)| {
                        PathElement::new(
                            [(x, y), (x + 18, y)],
                            ShapeStyle::from(&col).stroke_width(2),
                        )
                    });
                chart
                    .draw_series(ok.iter().map(|&p| Circle::new(p, 3, col.filled())))
                    .map_err(err)?;
                chart
                    .draw_series(DashedLineSeries::new(
                        failed.clone(),
                        5,
                        4,
                        ShapeStyle::from(&col).stroke_width(2),
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
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        root.present().map_err(err)
    }
}

/// Cores kept busy against threads per workload, and an idle pool's CPU use per runner.
pub(super) struct Cpu<'a> {
    pub bench: &'a PoolBench,
    pub workloads: &'a [&'static str],
}

impl Figure for Cpu<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let b = self.bench;
        let threads = b.thread_counts();
        let areas = panels(&root, self.workloads.len() + 1);
        let hi = (b.cores as f64).max(1.0) * 1.25;
        for (area, &w) in areas.iter().zip(self.workloads) {
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{w}: cores kept busy"), ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(x_range(b), 0.0..hi)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("threads")
                .y_desc("CPU time / wall time (median)")
                .x_labels(threads.len().max(2) * 2)
                .x_label_formatter(&thread_label)
                .draw()
                .map_err(err)?;
            for kind in b.kinds().into_iter().filter(|k| *k != PoolKind::Serial) {
                let col = color(kind);
                let pts: Vec<(f64, f64)> = threads
                    .iter()
                    .filter_map(|&t| {
                        b.summary
                            .get(&(w, kind, t))
                            .map(|s| (t as f64, s.cores_busy))
                    })
                    .collect();
                chart
                    .draw_series(LineSeries::new(
                        pts.clone(),
                        ShapeStyle::from(&col).stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(kind.name())
                    .legend(move |(x, y)| {
                        PathElement::new(
                            [(x, y), (x + 18, y)],
                            ShapeStyle::from(&col).stroke_width(2),
                        )
                    });
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, col.filled())))
                    .map_err(err)?;
            }
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        if let Some(area) = areas.get(self.workloads.len()) {
            let kinds: Vec<PoolKind> = b.idle.keys().copied().collect();
            let vals: Vec<f64> = kinds
                .iter()
                .map(|&k| b.idle_median(k).unwrap_or(0.0) * 100.0)
                .collect();
            let top = vals.iter().copied().fold(1.0, f64::max) * 1.3;
            let n = kinds.len();
            let names: Vec<&'static str> = kinds.iter().map(|k| k.name()).collect();
            let mut chart = ChartBuilder::on(area)
                .caption(
                    format!("idle pool, {} threads: share of one core", b.idle_threads),
                    ("sans-serif", 20),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(150)
                .build_cartesian_2d(0.0..top, 0.0..n as f64)
                .map_err(err)?;
            chart
                .configure_mesh()
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
                .x_desc("% of one core (median)")
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
                        ("sans-serif", 13),
                    )
                }))
                .map_err(err)?;
        }
        root.present().map_err(err)
    }
}
