//! The study's rows: each configuration's repeats put together (the median repeat, the
//! spread, the speedups over seq, the doubts), written as summary.csv, and the series the
//! figures plot.

use std::collections::BTreeMap;

use fugue_graph::TaskGraph;
use plotters::style::RGBColor;

use super::measure::Run;
use super::prepare::single;
use super::spec::{Config, Exec, Row};
use super::trust::interval_pct;
use crate::report::plot::color;
use crate::report::{opt, Csv};
use crate::stats::{median, min_max};

/// How far above a bound (threads, cores, the graph's width) a speedup must be to be flagged
/// as impossible: timing noise of a percent or two around a bound says nothing.
const BOUND_SLACK: f64 = 1.02;

/// The rows of the study: per configuration, its median repeat (by median cycle time), the
/// speedups over the seq runs beside its repeats, the width of its figure's confidence
/// interval, and why its figures cannot be trusted when they cannot: a speedup above the
/// thread count, the machine's cores or the graph's width (no more nodes can run at once),
/// or a figure whose repeats disagree by more than `max_spread` % ([`super::trust`]).
///
/// A parallel configuration's figure is its speedup: each repeat's median cycle time against
/// that of the seq run of the same round, graph, buffer size and load (run in the same block,
/// seconds apart: [`super::measure::round_order`]), so that a slow spell of the machine that
/// touches both cancels out. seq's figure, and that of a configuration without seq beside it,
/// is its median cycle time.
pub(super) fn aggregate(
    configs: &[Config],
    runs: &BTreeMap<Config, Vec<Run>>,
    graphs: &[(String, TaskGraph)],
    cores: usize,
    max_spread: f64,
) -> Vec<Row> {
    let widths: Vec<Option<usize>> = graphs
        .iter()
        .map(|(_, g)| {
            let (w, method) = fugue_graph::analysis::width(g);
            (method == fugue_graph::analysis::WidthMethod::Exact).then_some(w)
        })
        .collect();
    let seq_of = |c: &Config| {
        configs.iter().find(|s| {
            s.exec.name == "seq" && s.graph == c.graph && s.buffer == c.buffer && s.load == c.load
        })
    };
    let mut rows = Vec::new();
    for cfg in configs {
        let Some(reps) = runs.get(cfg).filter(|r| !r.is_empty()) else {
            continue;
        };
        let medians: Vec<f64> = reps.iter().map(|r| r.median_us).collect();
        let mut order: Vec<usize> = (0..reps.len()).collect();
        order.sort_by(|&a, &b| medians[a].total_cmp(&medians[b]));
        let mid = &reps[order[(order.len() - 1) / 2]];
        let speedups: Vec<f64> = match seq_of(cfg).and_then(|s| runs.get(s)) {
            Some(seq) if cfg.exec.name != "seq" => seq
                .iter()
                .zip(reps)
                .filter(|(_, r)| r.median_us > 0.0)
                .map(|(s, r)| s.median_us / r.median_us)
                .collect(),
            _ => Vec::new(),
        };
        let speedup = (!speedups.is_empty()).then(|| median(&speedups));
        let spread = if speedups.is_empty() {
            interval_pct(&medians)
        } else {
            interval_pct(&speedups)
        };
        // auto that played seq in every repeat ran one thread, whatever its configuration's.
        let played_seq = cfg.exec.name == "auto"
            && reps.iter().all(|r| {
                r.chose
                    .as_deref()
                    .is_some_and(|c| c == "seq" || c.starts_with("seq "))
            });
        let mut doubt = speedup.and_then(|sp| {
            if played_seq && sp > BOUND_SLACK {
                Some(format!(
                    "speedup ×{sp:.2} while it played seq in every repeat (one thread, seq's own work): impossible, the timing was disturbed"
                ))
            } else {
                bound_doubt(cfg, sp, cores, widths[cfg.graph])
            }
        });
        if doubt.is_none() && reps.len() < 2 {
            doubt = Some("one run: no repeats to judge it by".to_string());
        }
        if doubt.is_none() && reps.len() > 1 && spread > max_spread {
            let what = if speedups.is_empty() {
                "median cycle times"
            } else {
                "speedups over seq"
            };
            // One decimal where the whole numbers would read alike (20 %, more than 20 %).
            let by = if format!("{spread:.0}") == format!("{max_spread:.0}") {
                format!("{spread:.1}")
            } else {
                format!("{spread:.0}")
            };
            doubt = Some(format!(
                "its {} repeats' {what} disagree by {by} % (more than {max_spread:.0} %)",
                reps.len()
            ));
        }
        rows.push(Row {
            cfg: cfg.clone(),
            s: mid.summary.clone(),
            means_us: reps.iter().map(|r| r.summary.mean_ns / 1000.0).collect(),
            medians_us: medians,
            speedups,
            spread_pct: spread,
            doubt,
            overruns: mid.overruns,
            every_repeat: super::spec::EveryRepeat {
                misses: reps.iter().map(|r| r.summary.misses).sum(),
                overruns: reps.iter().map(|r| r.overruns).sum(),
                max_ns: reps.iter().map(|r| r.summary.max_ns).max().unwrap_or(0),
            },
            // `check_run` passed for every repeat: every recorded cycle equalled seq's (a
            // difference fails the study).
            verified: true,
            chose: reps.iter().filter_map(|r| r.chose.clone()).collect(),
            expected_cycles: mid.expected_cycles,
            period_us: mid.period_us,
            speedup,
        });
    }
    rows
}

/// Why a speedup `sp` of `cfg` is impossible, if it is: above its thread count, the
/// machine's `cores` or the graph's `width`.
fn bound_doubt(cfg: &Config, sp: f64, cores: usize, width: Option<usize>) -> Option<String> {
    // auto's configuration has the spec's largest thread count, which bounds its
    // candidates as a thread count bounds any executor.
    if sp > cfg.threads as f64 * BOUND_SLACK {
        Some(format!(
            "speedup ×{sp:.2} above its {} threads: impossible, the timing was disturbed",
            cfg.threads
        ))
    } else if sp > cores as f64 * BOUND_SLACK {
        Some(format!(
            "speedup ×{sp:.2} above the machine's {cores} cores: impossible, the timing was disturbed"
        ))
    } else {
        width.filter(|&w| sp > w as f64 * BOUND_SLACK).map(|w| {
            format!(
                "speedup ×{sp:.2} above the graph's width {w} (no more than {w} node{} can run at once): the timing was disturbed",
                if w == 1 { "" } else { "s" }
            )
        })
    }
}

/// summary.csv: one line per row; `names` are the graphs' labels.
pub(super) fn summary_csv(rows: &[Row], names: &[String]) -> Csv {
    let mut csv = Csv::new(&[
        "graph",
        "executor",
        "threads",
        "buffer",
        "load",
        "period_us",
        "repeats",
        "cycles",
        "expected_cycles",
        "mean_us",
        "mean_us_min",
        "mean_us_max",
        "spread_pct",
        "median_us",
        "p99_us",
        "max_us",
        "misses",
        "miss_rate",
        "overruns",
        "dropped",
        "steals",
        "wake_median_us",
        "wake_p99_us",
        "speedup_vs_seq",
        "speedup_min",
        "speedup_max",
        "trusted",
        "doubt",
        "verified",
        "chose",
    ]);
    for r in rows {
        let us = |ns: f64| format!("{:.2}", ns / 1000.0);
        let (lo, hi) = min_max(&r.means_us);
        let (slo, shi) = if r.speedups.is_empty() {
            (None, None)
        } else {
            let (a, b) = min_max(&r.speedups);
            (Some(a), Some(b))
        };
        csv.row([
            names[r.cfg.graph].clone(),
            r.cfg.exec.name.clone(),
            r.cfg.threads.to_string(),
            r.cfg.buffer.to_string(),
            r.cfg.load.clone(),
            format!("{:.2}", r.period_us),
            r.means_us.len().to_string(),
            r.s.cycles.to_string(),
            r.expected_cycles.to_string(),
            us(r.s.mean_ns),
            format!("{lo:.2}"),
            format!("{hi:.2}"),
            format!("{:.1}", r.spread_pct),
            us(r.s.median_ns as f64),
            us(r.s.p99_ns as f64),
            us(r.s.max_ns as f64),
            r.s.misses.to_string(),
            format!("{:.5}", r.s.miss_rate()),
            r.overruns.to_string(),
            r.s.dropped.to_string(),
            r.s.steals.to_string(),
            us(r.s.wake_median_ns as f64),
            us(r.s.wake_p99_ns as f64),
            opt(r.speedup, 3),
            opt(slo, 3),
            opt(shi, 3),
            r.doubt.is_none().to_string(),
            r.doubt.clone().unwrap_or_default(),
            r.verified.to_string(),
            r.chose.join("; "),
        ]);
    }
    csv
}

/// The plotted series: one per executor, or per executor and thread count when the spec has
/// several thread counts ("ws 2t", "ws 3t"): an executor's colour is its place in the spec,
/// the same for each of its thread counts, the later ones drawn dashed and hollow; with the
/// rows and samples relabelled to them.
pub(super) struct Series {
    /// The series, in the order of the configurations.
    pub execs: Vec<Exec>,
    /// Their colours.
    pub colors: Vec<RGBColor>,
    /// The rows, each under its series.
    pub rows: Vec<Row>,
    /// The histograms' samples, each under its series.
    pub samples: BTreeMap<Config, Vec<f64>>,
}

impl Series {
    /// The series of `configs` run at the spec's `threads`, and `rows` and `samples` under them.
    pub fn of(
        configs: &[Config],
        threads: &[usize],
        rows: &[Row],
        samples: &BTreeMap<Config, Vec<f64>>,
    ) -> Series {
        let multi = threads.len() > 1;
        let label = |c: &Config| {
            if multi && !single(&c.exec.name) {
                format!("{} {}t", c.exec.name, c.threads)
            } else {
                c.exec.name.clone()
            }
        };
        let mut execs: Vec<Exec> = Vec::new();
        let mut colors: Vec<RGBColor> = Vec::new();
        for c in configs {
            let name = label(c);
            if !execs.iter().any(|e| e.name == name) {
                colors.push(color(c.exec.order));
                let later = !single(&c.exec.name) && threads.first() != Some(&c.threads);
                execs.push(Exec {
                    order: execs.len(),
                    name,
                    later_threads: later,
                });
            }
        }
        let relabel = |c: &Config| {
            let name = label(c);
            Config {
                exec: execs
                    .iter()
                    .find(|e| e.name == name)
                    .cloned()
                    .unwrap_or(c.exec.clone()),
                ..c.clone()
            }
        };
        let rows = rows
            .iter()
            .map(|r| Row {
                cfg: relabel(&r.cfg),
                ..r.clone()
            })
            .collect();
        let samples = samples
            .iter()
            .map(|(k, v)| (relabel(k), v.clone()))
            .collect();
        Series {
            execs,
            colors,
            rows,
            samples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(exec: &str, threads: usize) -> Config {
        Config {
            graph: 0,
            exec: Exec {
                order: 0,
                name: exec.into(),
                later_threads: false,
            },
            threads,
            buffer: 64,
            load: "idle".into(),
        }
    }

    fn runs(medians: &[f64]) -> Vec<Run> {
        medians
            .iter()
            .map(|&m| Run {
                median_us: m,
                summary: fugue_engine::Summary {
                    mean_ns: m * 1000.0,
                    ..Default::default()
                },
                chose: None,
                overruns: 0,
                expected_cycles: 100,
                period_us: 1451.0,
            })
            .collect()
    }

    #[test]
    fn a_figure_is_judged_by_its_own_quantity_and_one_disturbed_repeat_of_six_is_left_out() {
        let graphs = vec![("rake".to_string(), fugue_graph::gen::rake(4))];
        let (seq, ws, levels) = (cfg("seq", 1), cfg("ws", 2), cfg("levels", 2));
        let configs = vec![seq.clone(), ws.clone(), levels.clone()];
        let mut m = BTreeMap::new();
        // The machine slows down by half in the last three rounds: seq's own figure
        // disagrees, but ws, run beside it each time, keeps its speedup (×1.25), but for one
        // repeat that another job disturbed.
        m.insert(seq, runs(&[100.0, 100.0, 100.0, 150.0, 150.0, 150.0]));
        m.insert(ws, runs(&[80.0, 80.0, 80.0, 120.0, 120.0, 200.0]));
        // levels' speedups really disagree: 1.25, 1.0 and 0.77, twice each.
        m.insert(levels, runs(&[80.0, 100.0, 130.0, 120.0, 150.0, 195.0]));
        let rows = aggregate(&configs, &m, &graphs, 2, 20.0);
        assert!(
            rows[0].doubt.as_deref().is_some_and(
                |d| d.starts_with("its 6 repeats' median cycle times disagree by 40 %")
            ),
            "{:?}",
            rows[0].doubt
        );
        assert_eq!(rows[1].speedup, Some(1.25));
        assert_eq!(rows[1].doubt, None, "{}", rows[1].spread_pct);
        assert_eq!(rows[1].spread_pct, 0.0);
        assert!(
            rows[2]
                .doubt
                .as_deref()
                .is_some_and(|d| d.starts_with("its 6 repeats' speedups over seq disagree")),
            "{:?}",
            rows[2].doubt
        );
        // The same six repeats with three: the disturbed one is the range's end.
        let mut three = BTreeMap::new();
        three.insert(configs[0].clone(), runs(&[100.0, 100.0, 150.0]));
        three.insert(configs[1].clone(), runs(&[80.0, 80.0, 200.0]));
        let rows = aggregate(&configs[..2], &three, &graphs, 2, 20.0);
        assert!(rows[1].doubt.is_some(), "{:?}", rows[1]);
        // An impossible speedup is flagged whatever the repeats.
        let mut fast = BTreeMap::new();
        fast.insert(configs[0].clone(), runs(&[100.0, 100.0, 100.0]));
        fast.insert(configs[1].clone(), runs(&[40.0, 40.0, 40.0]));
        let rows = aggregate(&configs[..2], &fast, &graphs, 2, 20.0);
        assert!(
            rows[1]
                .doubt
                .as_deref()
                .is_some_and(|d| d.contains("above its 2 threads")),
            "{:?}",
            rows[1].doubt
        );
    }
}
