//! The study's figures: cycle-time percentiles, deadline misses, speedups, and histograms of
//! cycle times, drawn with plotters through [`crate::report::plot`].

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::spec::{Config, Exec, PlotCtx, Row};
use crate::error::BenchError;
use crate::report::plot::{err, write_both, Area, Figure};
use crate::stats::min_max;

/// Histogram bins of the histogram figures: share of cycles (%) per bin of `width` µs.
const HIST_BINS: usize = 40;

/// Which figure.
pub enum Kind {
    /// Median to p99 and max per configuration.
    Percentiles,
    /// Deadline misses per configuration.
    Misses,
    /// Speedup over seq.
    Speedup,
    /// The distribution of cycle times of a graph at a buffer size.
    Histogram(usize, usize),
}

/// The colour of executor `i` (its place in the spec): the eight colours of Okabe and Ito's
/// palette, told apart by readers with any common colour-vision deficiency; the yellow is
/// darkened to read on white. A second thread count of an executor keeps its colour and is
/// drawn dashed and hollow instead of in another shade.
pub fn color(i: usize) -> RGBColor {
    const C: [RGBColor; 8] = [
        RGBColor(0, 0, 0),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 158, 115),
        RGBColor(204, 170, 0),
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(204, 121, 167),
    ];
    C[i % C.len()]
}

/// A chart of buffer sizes (x, `nb` of them, labelled by `xfmt`) against 0..`hi` × 1.1.
fn linear_chart<'a, DB: DrawingBackend>(
    area: &'a Area<DB>,
    caption: String,
    xr: std::ops::Range<f64>,
    hi: f64,
    y_desc: &str,
    nb: usize,
    xfmt: &dyn Fn(&f64) -> String,
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(xr, 0.0..hi * 1.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("buffer size (frames)")
        .y_desc(y_desc)
        .y_label_formatter(&|y: &f64| format!("{y:.1}"))
        .x_labels(nb * 2 + 1)
        .x_label_formatter(xfmt)
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .disable_x_mesh()
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// One figure of the study.
pub struct StudyFigure<'a> {
    /// The results.
    pub ctx: &'a PlotCtx<'a>,
    /// Which figure.
    pub kind: Kind,
    /// Cycle times (µs) of the configurations at the histogram's buffer size.
    pub samples: &'a BTreeMap<Config, Vec<f64>>,
}

impl StudyFigure<'_> {
    /// Draws the figure as `out/NAME.svg` and `out/NAME.png`.
    pub fn write(&self, out: &Path, name: &str) -> Result<(), BenchError> {
        let ctx = self.ctx;
        let size = match self.kind {
            Kind::Histogram(..) => (
                1600u32,
                330 * ctx.execs.len().div_ceil(4).max(1) as u32 + 150,
            ),
            _ => (
                1600u32,
                (330 * ctx.names.len() as u32 + 120).clamp(450, 1400),
            ),
        };
        write_both(out, name, size, self)
    }
}

impl Figure for StudyFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let (ctx, fig, samples) = (self.ctx, &self.kind, self.samples);
        root.fill(&WHITE).map_err(err)?;
        let title = match fig {
        Kind::Percentiles => {
            "Cycle time per configuration: median (dot) to p99 (bar top), max (x); dashed = deadline".to_string()
        }
        Kind::Misses => "Deadline misses per configuration (% of cycles)".to_string(),
        Kind::Speedup => "Speedup of the mean cycle time over seq: median of the repeats, bars from the least to the most; hollow \"?\" = not to be trusted".to_string(),
        Kind::Histogram(g, b) => format!(
            "Distribution of cycle times, {}, {b} frames (share of cycles per bin; x axes differ)",
            ctx.names[*g]
        ),
    };
        let (top, rest) = root.split_vertically(50);
        top.titled(&title, ("sans-serif", 28)).map_err(err)?;
        let n_entries = match fig {
            Kind::Histogram(..) => ctx.loads.len(),
            _ => ctx.execs.len(),
        };
        let per_row = 7usize;
        let legend_rows = n_entries.div_ceil(per_row).max(1);
        let (body, legend) =
            rest.split_vertically(rest.dim_in_pixel().1 as i32 - 45 * legend_rows as i32 - 5);
        // Legend: one swatch per executor (histograms: one per load).
        let entries: Vec<(String, RGBColor, bool)> = match fig {
            Kind::Histogram(..) => ctx
                .loads
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    (
                        format!("load {l}"),
                        if i == 0 { color(5) } else { color(6) },
                        false,
                    )
                })
                .collect(),
            _ => ctx
                .execs
                .iter()
                .enumerate()
                .map(|(i, e)| (e.name.clone(), ctx.colors[i], e.later_threads))
                .collect(),
        };
        let lw = legend.dim_in_pixel().0 as i32;
        let step = (lw - 100) / entries.len().clamp(1, per_row) as i32;
        for (i, (name, c, hollow)) in entries.iter().enumerate() {
            let x = 50 + (i % per_row) as i32 * step;
            let y = 45 * (i / per_row) as i32;
            let style = if *hollow {
                c.stroke_width(3)
            } else {
                c.filled()
            };
            legend
                .draw(&Rectangle::new([(x, y + 15), (x + 30, y + 35)], style))
                .map_err(err)?;
            legend
                .draw(&Text::new(
                    name.clone(),
                    (x + 38, y + 14),
                    ("sans-serif", 22).into_font(),
                ))
                .map_err(err)?;
        }
        match fig {
            Kind::Histogram(g, b) => {
                let execs: Vec<&Exec> = ctx.execs.iter().collect();
                let cols = 4usize.min(execs.len().max(1));
                let nrows = execs.len().div_ceil(cols);
                let panels = body.split_evenly((nrows, cols));
                for (p, e) in panels.iter().zip(execs.iter()) {
                    // Each panel its own x range: up to the 99th percentile of its runs, + 10 %.
                    let mut xmax = 0.0f64;
                    for (k, v) in samples.iter() {
                        if k.graph == *g && k.buffer == *b && k.exec.name == e.name && !v.is_empty()
                        {
                            let mut s = v.clone();
                            s.sort_by(f64::total_cmp);
                            xmax = xmax.max(s[((s.len() - 1) as f64 * 0.99) as usize]);
                        }
                    }
                    let xmax = (xmax * 1.1).max(1.0);
                    let width = xmax / HIST_BINS as f64;
                    let mut series = Vec::new();
                    let mut ymax = 1.0f64;
                    for (li, l) in ctx.loads.iter().enumerate() {
                        let key = ctx
                            .rows
                            .iter()
                            .find(|r| {
                                r.cfg.graph == *g
                                    && r.cfg.exec.name == e.name
                                    && r.cfg.buffer == *b
                                    && &r.cfg.load == l
                            })
                            .map(|r| r.cfg.clone());
                        let Some(v) = key.and_then(|k| samples.get(&k)) else {
                            continue;
                        };
                        let mut bins = vec![0.0f64; HIST_BINS + 1];
                        for &x in v {
                            let i = ((x / width) as usize).min(HIST_BINS);
                            bins[i] += 1.0;
                        }
                        let n = v.len().max(1) as f64;
                        for x in bins.iter_mut() {
                            *x *= 100.0 / n;
                        }
                        ymax = ymax.max(bins.iter().cloned().fold(0.0, f64::max));
                        series.push((li, bins));
                    }
                    let mut chart = ChartBuilder::on(p)
                        .caption(e.name.clone(), ("sans-serif", 22))
                        .margin(10)
                        .x_label_area_size(45)
                        .y_label_area_size(60)
                        .build_cartesian_2d(
                            0.0..xmax * (HIST_BINS + 1) as f64 / HIST_BINS as f64,
                            0.0..ymax * 1.1,
                        )
                        .map_err(err)?;
                    chart
                        .configure_mesh()
                        .x_desc("cycle time (µs); last bin: all longer cycles")
                        .y_desc("% of cycles")
                        .x_label_formatter(&|x: &f64| format!("{x:.0}"))
                        .y_label_formatter(&|y: &f64| format!("{y:.0}"))
                        .label_style(("sans-serif", 16))
                        .axis_desc_style(("sans-serif", 18))
                        .x_labels(6)
                        .y_labels(5)
                        .draw()
                        .map_err(err)?;
                    for (li, bins) in &series {
                        let c = if *li == 0 { color(5) } else { color(6) };
                        chart
                            .draw_series(bins.iter().enumerate().map(|(i, &y)| {
                                let x0 = i as f64 * width;
                                Rectangle::new([(x0, 0.0), (x0 + width, y)], c.mix(0.45).filled())
                            }))
                            .map_err(err)?;
                    }
                }
                for p in panels.iter().skip(execs.len()) {
                    p.fill(&WHITE).map_err(err)?;
                }
            }
            _ => {
                let panels = body.split_evenly((ctx.names.len(), ctx.loads.len()));
                let nb = ctx.buffers.len();
                let ne = ctx.execs.len();
                for (pi, p) in panels.iter().enumerate() {
                    let g = pi / ctx.loads.len();
                    let l = &ctx.loads[pi % ctx.loads.len()];
                    let caption = format!("{}, load {l}", ctx.names[g]);
                    let off = |ei: usize| (ei as f64 - (ne as f64 - 1.0) / 2.0) * 0.8 / ne as f64;
                    let xr = -0.5..nb as f64 - 0.5;
                    let bufs = ctx.buffers.to_vec();
                    let xfmt = move |x: &f64| {
                        let i = x.round();
                        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < bufs.len() {
                            format!("{}", bufs[i as usize])
                        } else {
                            String::new()
                        }
                    };
                    match fig {
                        Kind::Percentiles => {
                            let mut lo = f64::INFINITY;
                            let mut hi = 0.0f64;
                            for r in ctx
                                .rows
                                .iter()
                                .filter(|r| r.cfg.graph == g && &r.cfg.load == l)
                            {
                                lo = lo.min(r.s.median_ns as f64 / 1000.0);
                                hi = hi.max(r.s.max_ns as f64 / 1000.0).max(r.period_us);
                            }
                            if !lo.is_finite() {
                                continue;
                            }
                            let mut chart = ChartBuilder::on(p)
                                .caption(caption, ("sans-serif", 22))
                                .margin(10)
                                .x_label_area_size(45)
                                .y_label_area_size(75)
                                .build_cartesian_2d(xr, (lo.max(0.1) / 1.5..hi * 1.5).log_scale())
                                .map_err(err)?;
                            chart
                                .configure_mesh()
                                .x_desc("buffer size (frames)")
                                .y_desc("cycle time (µs, log)")
                                .y_label_formatter(&|y: &f64| {
                                    if *y >= 10.0 {
                                        format!("{y:.0}")
                                    } else {
                                        format!("{y:.1}")
                                    }
                                })
                                .x_labels(nb * 2 + 1)
                                .x_label_formatter(&xfmt)
                                .label_style(("sans-serif", 16))
                                .axis_desc_style(("sans-serif", 18))
                                .disable_x_mesh()
                                .draw()
                                .map_err(err)?;
                            for (bi, &b) in ctx.buffers.iter().enumerate() {
                                if let Some(r) = ctx
                                    .rows
                                    .iter()
                                    .find(|r| r.cfg.graph == g && r.cfg.buffer == b)
                                {
                                    let y = r.period_us * r.s.deadline_ns.max(1) as f64
                                        / (r.period_us * 1000.0).max(1e-9);
                                    let y = if r.s.deadline_ns > 0 { y } else { r.period_us };
                                    chart
                                        .draw_series(DashedLineSeries::new(
                                            [(bi as f64 - 0.45, y), (bi as f64 + 0.45, y)],
                                            6,
                                            4,
                                            BLACK.stroke_width(2),
                                        ))
                                        .map_err(err)?;
                                }
                                for (ei, e) in ctx.execs.iter().enumerate() {
                                    let Some(r) = ctx.find(g, &e.name, b, l) else {
                                        continue;
                                    };
                                    let x = bi as f64 + off(ei);
                                    let c = ctx.colors[ei];
                                    let med = (r.s.median_ns as f64 / 1000.0).max(0.1);
                                    let p99 = (r.s.p99_ns as f64 / 1000.0).max(0.1);
                                    let max = (r.s.max_ns as f64 / 1000.0).max(0.1);
                                    chart
                                        .draw_series(std::iter::once(PathElement::new(
                                            vec![(x, med), (x, p99)],
                                            c.stroke_width(5),
                                        )))
                                        .map_err(err)?;
                                    if r.medians_us.len() > 1 {
                                        let (lo, hi) = min_max(&r.medians_us);
                                        chart
                                            .draw_series(std::iter::once(PathElement::new(
                                                vec![(x, lo.max(0.1)), (x, hi.max(0.1))],
                                                BLACK.stroke_width(1),
                                            )))
                                            .map_err(err)?;
                                    }
                                    let dot = if e.later_threads {
                                        WHITE.filled()
                                    } else {
                                        c.filled()
                                    };
                                    chart
                                        .draw_series([
                                            Circle::new((x, med), 5, dot),
                                            Circle::new((x, med), 5, c.stroke_width(2)),
                                        ])
                                        .map_err(err)?;
                                    chart
                                        .draw_series(std::iter::once(Cross::new(
                                            (x, max),
                                            5,
                                            c.stroke_width(2),
                                        )))
                                        .map_err(err)?;
                                }
                            }
                        }
                        Kind::Misses => {
                            let hi = ctx
                                .rows
                                .iter()
                                .filter(|r| r.cfg.graph == g)
                                .map(|r| r.s.miss_rate() * 100.0)
                                .fold(1.0f64, f64::max);
                            let mut chart = linear_chart(
                                p,
                                caption,
                                xr,
                                hi,
                                "deadline misses (% of cycles)",
                                nb,
                                &xfmt,
                            )?;
                            let w = 0.8 / ne as f64;
                            for (bi, &b) in ctx.buffers.iter().enumerate() {
                                for (ei, e) in ctx.execs.iter().enumerate() {
                                    let Some(r) = ctx.find(g, &e.name, b, l) else {
                                        continue;
                                    };
                                    let x = bi as f64 + off(ei);
                                    let y = r.s.miss_rate() * 100.0;
                                    let style = if e.later_threads {
                                        ctx.colors[ei].stroke_width(2)
                                    } else {
                                        ctx.colors[ei].filled()
                                    };
                                    chart
                                        .draw_series(std::iter::once(Rectangle::new(
                                            [(x - w / 2.0, 0.0), (x + w / 2.0, y)],
                                            style,
                                        )))
                                        .map_err(err)?;
                                }
                            }
                            let none = ctx
                                .rows
                                .iter()
                                .filter(|r| r.cfg.graph == g && &r.cfg.load == l)
                                .all(|r| r.s.misses == 0);
                            if none {
                                chart
                                    .draw_series(std::iter::once(Text::new(
                                        "no deadline missed".to_string(),
                                        (nb as f64 / 2.0 - 0.9, hi * 0.6),
                                        ("sans-serif", 26).into_font(),
                                    )))
                                    .map_err(err)?;
                            }
                        }
                        Kind::Speedup => {
                            let hi = ctx
                                .rows
                                .iter()
                                .filter(|r| r.cfg.graph == g)
                                .flat_map(|r| r.speedups.iter().copied())
                                .fold(2.0f64, f64::max);
                            let mut chart = linear_chart(
                                p,
                                caption,
                                xr,
                                hi,
                                "speedup over seq (×)",
                                nb,
                                &xfmt,
                            )?;
                            chart
                                .draw_series(DashedLineSeries::new(
                                    [(-0.5, 1.0), (nb as f64 - 0.5, 1.0)],
                                    6,
                                    4,
                                    BLACK.stroke_width(1),
                                ))
                                .map_err(err)?;
                            for &t in ctx.threads {
                                if (t as f64) <= hi * 1.1 {
                                    chart
                                        .draw_series(DashedLineSeries::new(
                                            [(-0.5, t as f64), (nb as f64 - 0.5, t as f64)],
                                            2,
                                            5,
                                            RGBColor(120, 120, 120).stroke_width(1),
                                        ))
                                        .map_err(err)?;
                                }
                            }
                            for (ei, e) in ctx.execs.iter().enumerate() {
                                let rows: Vec<(f64, &Row)> = ctx
                                    .buffers
                                    .iter()
                                    .enumerate()
                                    .filter_map(|(bi, &b)| {
                                        ctx.find(g, &e.name, b, l)
                                            .filter(|r| r.speedup.is_some())
                                            .map(|r| (bi as f64 + off(ei) * 0.5, r))
                                    })
                                    .collect();
                                let pts: Vec<(f64, f64)> = rows
                                    .iter()
                                    .map(|(x, r)| (*x, r.speedup.unwrap_or(0.0)))
                                    .collect();
                                let c = ctx.colors[ei];
                                if e.later_threads {
                                    chart
                                        .draw_series(DashedLineSeries::new(
                                            pts.clone(),
                                            10,
                                            6,
                                            c.stroke_width(3),
                                        ))
                                        .map_err(err)?;
                                } else {
                                    chart
                                        .draw_series(LineSeries::new(
                                            pts.clone(),
                                            c.stroke_width(3),
                                        ))
                                        .map_err(err)?;
                                }
                                for (x, r) in &rows {
                                    let (lo, hi) = min_max(&r.speedups);
                                    chart
                                        .draw_series(std::iter::once(ErrorBar::new_vertical(
                                            *x,
                                            lo,
                                            r.speedup.unwrap_or(lo),
                                            hi,
                                            c.stroke_width(2),
                                            10,
                                        )))
                                        .map_err(err)?;
                                    let p = (*x, r.speedup.unwrap_or(0.0));
                                    let style = if e.later_threads || r.doubt.is_some() {
                                        WHITE.filled()
                                    } else {
                                        c.filled()
                                    };
                                    chart
                                        .draw_series([
                                            Circle::new(p, 6, style),
                                            Circle::new(p, 6, c.stroke_width(2)),
                                        ])
                                        .map_err(err)?;
                                    if r.doubt.is_some() {
                                        chart
                                            .draw_series(std::iter::once(Text::new(
                                                "?".to_string(),
                                                (*x + 0.04, r.speedup.unwrap_or(0.0)),
                                                ("sans-serif", 20).into_font(),
                                            )))
                                            .map_err(err)?;
                                    }
                                }
                            }
                        }
                        Kind::Histogram(..) => {}
                    }
                }
            }
        }
        root.present().map_err(err)?;
        Ok(())
    }
}
