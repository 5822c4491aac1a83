//! The sweep's figure: items/s against capacity, one panel per producer count, log axes, with
//! the caches of cpu0 as vertical lines in slots.

use plotters::prelude::*;

use super::point::Impl;
use super::sweep::{Sweep, CAPACITIES};
use crate::machine::Cache;
use crate::report::plot::{self, chart, err, legend, line, mesh, Area, Figure, GREY};

/// The throughput figure of a sweep.
pub(super) struct Throughput<'a> {
    pub sweep: &'a Sweep,
    pub item_size: usize,
    pub padding: &'static str,
    pub caches: &'a [Cache],
    pub stride: u64,
}

/// An implementation's colour: the mutex ring (the baseline) black, the others the palette's.
fn color(imp: Impl) -> RGBColor {
    plot::color(match imp {
        Impl::Mutex => 0,
        Impl::Rtrb => 1,
        Impl::SyncChannel => 2,
        Impl::Park => 3,
        Impl::Yield => 5,
        Impl::Spin => 6,
        Impl::Arrayqueue => 7,
    })
}

impl Figure for Throughput<'_> {
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let summary = &self.sweep.summary;
        let grid = || {
            summary
                .iter()
                .filter(|(k, _)| k.0 == "grid")
                .map(|(_, (s, _))| s)
        };
        let ymax = grid().map(|s| s.max).fold(1.0f64, f64::max) * 2.0;
        let ymin = grid()
            .map(|s| s.min)
            .fold(f64::INFINITY, f64::min)
            .clamp(1.0, ymax / 10.0)
            / 2.0;
        plot::grid(&root, (1, 3), |i, area| {
            let producers = i + 1;
            let mut chart = chart(
                area,
                format!(
                    "{producers} producer{} -> 1 consumer, {}-byte items",
                    if producers == 1 { "" } else { "s" },
                    self.item_size
                ),
                22,
                75,
                (0.7f64..100_000f64).log_scale(),
                (ymin..ymax).log_scale(),
            )?;
            mesh(&mut chart, "capacity (slots)", "items per second")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0e}"))
                .draw()
                .map_err(err)?;
            for cache in self.caches {
                let slots = cache.bytes as f64 / self.stride as f64;
                if !(0.7..100_000.0).contains(&slots) {
                    continue;
                }
                chart
                    .draw_series(LineSeries::new(
                        [(slots, ymin), (slots, ymax)],
                        ShapeStyle::from(&GREY).stroke_width(2),
                    ))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{} ({} slots)", cache.name, slots as u64),
                        (slots * 1.1, ymax / 1.6),
                        (plot::FONT, 14),
                    )))
                    .map_err(err)?;
            }
            for imp in Impl::ALL {
                let pts: Vec<(f64, f64)> = CAPACITIES
                    .iter()
                    .filter_map(|&c| {
                        let k = ("grid", imp, producers, c, self.padding, false, false);
                        self.sweep.median(&k).map(|m| (c as f64, m))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                line(&mut chart, imp.name(), color(imp), 2, &pts)?;
            }
            legend(&mut chart, SeriesLabelPosition::LowerRight)
        })
    }
}
