//! The study's plots: throughput and fraction of the ceiling against N, and real-time misses.

use fugue_engine::host::Mode;

use super::HostBench;
use crate::report::plot::{err, Area, Figure};

/// Offline figures against N, one panel per (graph, threads), one line per mode: the
/// aggregate throughput, or (with `fraction`) the aggregate as a fraction of the ceiling.
pub(super) struct Throughput<'a> {
    pub(super) bench: &'a HostBench,
    pub(super) panels: Vec<(String, usize)>,
    pub(super) fraction: bool,
}

fn mode_color(m: Mode) -> plotters::style::RGBColor {
    match m {
        Mode::Shared => plotters::style::RGBColor(0, 114, 178),
        Mode::Partitioned => plotters::style::RGBColor(230, 159, 0),
        Mode::Separate => plotters::style::RGBColor(204, 121, 167),
    }
}

/// One panel: a line per mode through `points` (mode, instances, value), the instances on x.
struct Panel<'a> {
    caption: String,
    y_desc: &'a str,
    y_label_size: u32,
    legend: plotters::prelude::SeriesLabelPosition,
    points: Vec<(Mode, usize, f64)>,
}

impl Panel<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(self, area: &Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        let hi_n = self.points.iter().map(|p| p.1).max().unwrap_or(1) as f64;
        let hi = self.points.iter().map(|p| p.2).fold(0.0, f64::max);
        let mut chart = ChartBuilder::on(area)
            .caption(self.caption, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(self.y_label_size)
            .build_cartesian_2d(0.5..hi_n + 0.5, 0.0..hi.max(1.0) * 1.2)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("instances")
            .y_desc(self.y_desc)
            .draw()
            .map_err(err)?;
        for m in Mode::ALL {
            let col = mode_color(m);
            let line: Vec<(f64, f64)> = self
                .points
                .iter()
                .filter(|p| p.0 == m)
                .map(|p| (p.1 as f64, p.2))
                .collect();
            if line.is_empty() {
                continue;
            }
            chart
                .draw_series(LineSeries::new(
                    line.clone(),
                    ShapeStyle::from(&col).stroke_width(2),
                ))
                .map_err(err)?
                .label(m.name())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], col.stroke_width(2)));
            chart
                .draw_series(
                    line.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, col.filled())),
                )
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(self.legend)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)
    }
}

impl Figure for Throughput<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((1, self.panels.len().max(1)));
        for (area, (g, t)) in areas.iter().zip(&self.panels) {
            // The medians over the repeats.
            let points = self
                .bench
                .summaries()
                .into_iter()
                .filter(|p| &p.graph == g && p.threads == *t)
                .filter_map(|p| {
                    let y = if self.fraction {
                        p.fraction?
                    } else {
                        p.aggregate?
                    };
                    Some((p.mode, p.n, y))
                })
                .collect();
            Panel {
                caption: if self.fraction {
                    format!(
                        "{g}, {}: fraction of the ceiling",
                        fugue_engine::report::counted(*t, "thread")
                    )
                } else {
                    format!(
                        "{g}, {}: aggregate throughput",
                        fugue_engine::report::counted(*t, "thread")
                    )
                },
                y_desc: if self.fraction {
                    "aggregate / k sequential engines side by side"
                } else {
                    "instance-cycles per second"
                },
                y_label_size: 70,
                legend: SeriesLabelPosition::LowerRight,
                points,
            }
            .draw(area)?;
        }
        root.present().map_err(err)
    }
}

/// Deadline misses (percent of the run's cycles) against N, one panel per graph and buffer
/// size, one line per mode; a run with no miss is drawn at 0.
pub(super) struct Misses<'a> {
    pub(super) bench: &'a HostBench,
    /// (graph, threads, buffer) of each panel.
    pub(super) panels: Vec<(String, usize, usize)>,
}

impl Figure for Misses<'_> {
    fn draw<DB: plotters::prelude::DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        use plotters::prelude::*;
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((1, self.panels.len().max(1)));
        for (area, (g, t, b)) in areas.iter().zip(&self.panels) {
            Panel {
                caption: format!(
                    "{g}, {}, {b} frames: misses",
                    fugue_engine::report::counted(*t, "thread")
                ),
                y_desc: "cycles missed or dropped (%)",
                y_label_size: 60,
                legend: SeriesLabelPosition::UpperLeft,
                points: self
                    .bench
                    .realtime
                    .iter()
                    .filter(|p| &p.graph == g && p.threads == *t && p.buffer == *b)
                    .map(|p| {
                        (
                            p.mode,
                            p.n,
                            100.0 * p.missed() as f64 / p.cycles.max(1) as f64,
                        )
                    })
                    .collect(),
            }
            .draw(area)?;
        }
        root.present().map_err(err)
    }
}
