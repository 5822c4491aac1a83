//! The study's figures: cycle-time percentiles, deadline misses, speedups, and histograms of
//! cycle times, drawn with plotters through [`crate::report::plot`].

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::spec::{Config, Exec, PlotCtx, Row};
use crate::error::BenchError;
use crate::report::plot::{self, chart, err, mesh, Area, Figure, FONT, GREY};
use crate::report::Folder;
use crate::stats::min_max;

/// A tick of an axis from 0 to `max`: as many decimals as ticks about a fifth of the axis
/// apart need to differ (an axis of 3 µs read 0, 0, 1, 2, 2 in whole microseconds).
fn tick_label(x: f64, max: f64) -> String {
    let step = max / 5.0;
    let decimals = if step >= 1.0 || step <= 0.0 || !step.is_finite() {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    };
    format!("{x:.decimals$}")
}

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
    /// Draws the figure as `NAME.svg` and `NAME.png` in `out`.
    pub fn write(&self, out: &Folder, name: &str) -> Result<(), BenchError> {
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
        out.figure(name, size, self)
    }
}

/// What the panels of one graph and load share: the graph, the load, the buffer sizes on x
/// and each executor's offset beside its buffer size.
struct Panel<'a> {
    graph: usize,
    load: &'a str,
    caption: String,
    buffers: &'a [usize],
    execs: usize,
}

impl Panel<'_> {
    /// The x range: one slot per buffer size.
    fn x_range(&self) -> std::ops::Range<f64> {
        -0.5..self.buffers.len() as f64 - 0.5
    }

    /// Executor `ei`'s offset from the middle of its buffer size's slot.
    fn offset(&self, ei: usize) -> f64 {
        let ne = self.execs as f64;
        (ei as f64 - (ne - 1.0) / 2.0) * 0.8 / ne
    }

    /// The label of `x`: a buffer size at the middle of its slot, nothing between.
    fn x_label(&self, x: &f64) -> String {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < self.buffers.len() {
            format!("{}", self.buffers[i as usize])
        } else {
            String::new()
        }
    }

    /// A linear chart of the buffer sizes against 0..`hi` × 1.1.
    fn linear<'a, DB: DrawingBackend>(
        &self,
        area: &'a Area<DB>,
        hi: f64,
        y_desc: &str,
    ) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String>
    where
        DB::ErrorType: 'static,
    {
        let mut chart = chart(area, &self.caption, 22, 75, self.x_range(), 0.0..hi * 1.1)?;
        mesh(&mut chart, "buffer size (frames)", y_desc)
            .y_label_formatter(&|y: &f64| format!("{y:.1}"))
            .x_labels(self.buffers.len() * 2 + 1)
            .x_label_formatter(&|x| self.x_label(x))
            .disable_x_mesh()
            .draw()
            .map_err(err)?;
        Ok(chart)
    }
}

impl StudyFigure<'_> {
    /// The figure's title.
    fn title(&self) -> String {
        match self.kind {
            Kind::Percentiles => {
                "Cycle time per configuration: median (dot) to p99 (bar top), max (x); dashed = deadline".to_string()
            }
            Kind::Misses => "Deadline misses per configuration (% of cycles)".to_string(),
            Kind::Speedup => "Speedup of the median cycle time over seq: median of the repeats, bars from the least to the most; hollow \"?\" = not to be trusted".to_string(),
            Kind::Histogram(g, b) => format!(
                "Distribution of cycle times, {}, {b} frames (share of cycles per bin; x axes differ)",
                self.ctx.names[g]
            ),
        }
    }

    /// The legend's entries: one swatch per executor (histograms: one per load), with its
    /// colour and whether it is hollow.
    fn entries(&self) -> Vec<(String, RGBColor, bool)> {
        let ctx = self.ctx;
        match self.kind {
            Kind::Histogram(..) => ctx
                .loads
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("load {l}"), load_color(i), false))
                .collect(),
            _ => ctx
                .execs
                .iter()
                .enumerate()
                .map(|(i, e)| (e.name.clone(), ctx.colors[i], e.later_threads))
                .collect(),
        }
    }

    /// Draws the legend's entries on `legend`, `per_row` to a row.
    fn legend<DB: DrawingBackend>(
        &self,
        legend: &Area<DB>,
        entries: &[(String, RGBColor, bool)],
        per_row: usize,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
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
                    (FONT, 22).into_font(),
                ))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The histograms of graph `g` at buffer `b`: a panel per executor, the loads overlaid.
    fn histograms<DB: DrawingBackend>(
        &self,
        body: &Area<DB>,
        g: usize,
        b: usize,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let execs: Vec<&Exec> = self.ctx.execs.iter().collect();
        let cols = 4usize.min(execs.len().max(1));
        let nrows = execs.len().div_ceil(cols);
        let panels = body.split_evenly((nrows, cols));
        for (p, e) in panels.iter().zip(execs.iter()) {
            self.histogram(p, g, b, e)?;
        }
        for p in panels.iter().skip(execs.len()) {
            p.fill(&WHITE).map_err(err)?;
        }
        Ok(())
    }

    /// The histogram panel of executor `e`.
    fn histogram<DB: DrawingBackend>(
        &self,
        p: &Area<DB>,
        g: usize,
        b: usize,
        e: &Exec,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let (ctx, samples) = (self.ctx, self.samples);
        // Each panel its own x range: up to the 99th percentile of its runs, + 10 %.
        let mut xmax = 0.0f64;
        for (k, v) in samples.iter() {
            if k.graph == g && k.buffer == b && k.exec.name == e.name && !v.is_empty() {
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
                    r.cfg.graph == g
                        && r.cfg.exec.name == e.name
                        && r.cfg.buffer == b
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
        let mut chart = chart(
            p,
            &e.name,
            22,
            60,
            0.0..xmax * (HIST_BINS + 1) as f64 / HIST_BINS as f64,
            0.0..ymax * 1.1,
        )?;
        mesh(
            &mut chart,
            "cycle time (µs); last bin: all longer cycles",
            "% of cycles",
        )
        .x_label_formatter(&|x: &f64| tick_label(*x, xmax))
        .y_label_formatter(&|y: &f64| format!("{y:.0}"))
        .x_labels(6)
        .y_labels(5)
        .draw()
        .map_err(err)?;
        for (li, bins) in &series {
            let c = load_color(*li);
            chart
                .draw_series(bins.iter().enumerate().map(|(i, &y)| {
                    let x0 = i as f64 * width;
                    Rectangle::new([(x0, 0.0), (x0 + width, y)], c.mix(0.45).filled())
                }))
                .map_err(err)?;
        }
        Ok(())
    }

    /// A panel per graph and load, each drawn as the figure's kind says.
    fn panels<DB: DrawingBackend>(&self, body: &Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let ctx = self.ctx;
        let areas = body.split_evenly((ctx.names.len(), ctx.loads.len()));
        for (pi, area) in areas.iter().enumerate() {
            let graph = pi / ctx.loads.len();
            let load = &ctx.loads[pi % ctx.loads.len()];
            let panel = Panel {
                graph,
                load,
                caption: format!("{}, load {load}", ctx.names[graph]),
                buffers: ctx.buffers,
                execs: ctx.execs.len(),
            };
            match self.kind {
                Kind::Percentiles => self.percentiles(area, &panel)?,
                Kind::Misses => self.misses(area, &panel)?,
                Kind::Speedup => self.speedup(area, &panel)?,
                Kind::Histogram(..) => {}
            }
        }
        Ok(())
    }

    /// Median to p99 and max per configuration, the deadline dashed.
    fn percentiles<DB: DrawingBackend>(&self, p: &Area<DB>, panel: &Panel<'_>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let ctx = self.ctx;
        let (g, l) = (panel.graph, panel.load);
        let mut lo = f64::INFINITY;
        let mut hi = 0.0f64;
        for r in ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g && r.cfg.load == l)
        {
            lo = lo.min(r.s.median_ns as f64 / 1000.0);
            hi = hi.max(r.s.max_ns as f64 / 1000.0).max(r.period_us);
        }
        if !lo.is_finite() {
            return Ok(());
        }
        let mut chart = chart(
            p,
            &panel.caption,
            22,
            75,
            panel.x_range(),
            (lo.max(0.1) / 1.5..hi * 1.5).log_scale(),
        )?;
        mesh(&mut chart, "buffer size (frames)", "cycle time (µs, log)")
            .y_label_formatter(&|y: &f64| {
                if *y >= 10.0 {
                    format!("{y:.0}")
                } else {
                    format!("{y:.1}")
                }
            })
            .x_labels(ctx.buffers.len() * 2 + 1)
            .x_label_formatter(&|x| panel.x_label(x))
            .disable_x_mesh()
            .draw()
            .map_err(err)?;
        for (bi, &b) in ctx.buffers.iter().enumerate() {
            if let Some(r) = ctx
                .rows
                .iter()
                .find(|r| r.cfg.graph == g && r.cfg.buffer == b)
            {
                let y =
                    r.period_us * r.s.deadline_ns.max(1) as f64 / (r.period_us * 1000.0).max(1e-9);
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
                let x = bi as f64 + panel.offset(ei);
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
                    .draw_series(std::iter::once(Cross::new((x, max), 5, c.stroke_width(2))))
                    .map_err(err)?;
            }
        }
        Ok(())
    }

    /// Deadline misses per configuration, as bars.
    fn misses<DB: DrawingBackend>(&self, p: &Area<DB>, panel: &Panel<'_>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let ctx = self.ctx;
        let (g, l) = (panel.graph, panel.load);
        let nb = ctx.buffers.len();
        let hi = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g)
            .map(|r| r.s.miss_rate() * 100.0)
            .fold(1.0f64, f64::max);
        let mut chart = panel.linear(p, hi, "deadline misses (% of cycles)")?;
        let w = 0.8 / ctx.execs.len() as f64;
        for (bi, &b) in ctx.buffers.iter().enumerate() {
            for (ei, e) in ctx.execs.iter().enumerate() {
                let Some(r) = ctx.find(g, &e.name, b, l) else {
                    continue;
                };
                let x = bi as f64 + panel.offset(ei);
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
            .filter(|r| r.cfg.graph == g && r.cfg.load == l)
            .all(|r| r.s.misses == 0);
        if none {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no deadline missed".to_string(),
                    (nb as f64 / 2.0 - 0.9, hi * 0.6),
                    (FONT, 26).into_font(),
                )))
                .map_err(err)?;
        }
        Ok(())
    }

    /// Speedup over seq per executor: a line over the buffer sizes, bars over the repeats.
    fn speedup<DB: DrawingBackend>(&self, p: &Area<DB>, panel: &Panel<'_>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let ctx = self.ctx;
        let (g, l) = (panel.graph, panel.load);
        let nb = ctx.buffers.len() as f64;
        let hi = ctx
            .rows
            .iter()
            .filter(|r| r.cfg.graph == g)
            .flat_map(|r| r.speedups.iter().copied())
            .fold(2.0f64, f64::max);
        let mut chart = panel.linear(p, hi, "speedup over seq (×)")?;
        chart
            .draw_series(DashedLineSeries::new(
                [(-0.5, 1.0), (nb - 0.5, 1.0)],
                6,
                4,
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
        for &t in ctx.threads {
            if (t as f64) <= hi * 1.1 {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(-0.5, t as f64), (nb - 0.5, t as f64)],
                        2,
                        5,
                        GREY.stroke_width(1),
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
                        .map(|r| (bi as f64 + panel.offset(ei) * 0.5, r))
                })
                .collect();
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .map(|(x, r)| (*x, r.speedup.unwrap_or(0.0)))
                .collect();
            let c = ctx.colors[ei];
            if e.later_threads {
                chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 10, 6, c.stroke_width(3)))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(3)))
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
                            (FONT, 20).into_font(),
                        )))
                        .map_err(err)?;
                }
            }
        }
        Ok(())
    }
}

/// The colour of load `i` in the histograms.
fn load_color(i: usize) -> RGBColor {
    plot::color(if i == 0 { 5 } else { 6 })
}

impl Figure for StudyFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let (top, rest) = root.split_vertically(50);
        top.titled(&self.title(), (FONT, 28)).map_err(err)?;
        let entries = self.entries();
        let per_row = 7usize;
        let legend_rows = entries.len().div_ceil(per_row).max(1);
        let (body, legend) =
            rest.split_vertically(rest.dim_in_pixel().1 as i32 - 45 * legend_rows as i32 - 5);
        self.legend(&legend, &entries, per_row)?;
        match self.kind {
            Kind::Histogram(g, b) => self.histograms(&body, g, b)?,
            _ => self.panels(&body)?,
        }
        root.present().map_err(err)?;
        Ok(())
    }
}

/// Draws every figure of the study into `out` (speedup, percentiles, misses, and a histogram
/// per graph at `hist_buffer` frames), each as SVG and PNG; returns their names.
pub fn write_all(
    out: &Folder,
    ctx: &PlotCtx<'_>,
    samples: &BTreeMap<Config, Vec<f64>>,
    hist_buffer: usize,
) -> Result<Vec<String>, BenchError> {
    let mut kinds = vec![
        ("speedup".to_string(), Kind::Speedup),
        ("percentiles".to_string(), Kind::Percentiles),
        ("misses".to_string(), Kind::Misses),
    ];
    for (gi, g) in ctx.names.iter().enumerate() {
        kinds.push((format!("histogram-{g}"), Kind::Histogram(gi, hist_buffer)));
    }
    let mut figures = Vec::new();
    for (name, kind) in kinds {
        StudyFigure { ctx, kind, samples }.write(out, &name)?;
        figures.push(name);
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::tick_label;

    #[test]
    fn ticks_differ_on_a_short_axis() {
        let ticks: Vec<String> = [0.0, 0.6, 1.2, 1.8, 2.4]
            .iter()
            .map(|&x| tick_label(x, 3.0))
            .collect();
        assert_eq!(ticks, ["0.0", "0.6", "1.2", "1.8", "2.4"]);
        assert_eq!(tick_label(12.0, 60.0), "12");
        assert_eq!(tick_label(0.02, 0.1), "0.02");
        assert_eq!(tick_label(5.0, 0.0), "5");
    }
}
