//! A calibration ([`crate::calibrate`]) as a table and as the costs file.

use std::fmt::Write as _;

use fugue_graph::TaskGraph;

use crate::Calibration;

/// The CSV text of a calibration: header `node,cost`, then one row per node in graph order,
/// cost = the 99th percentile in µs (the costs file that `--costs FILE` reads).
pub fn costs_csv(cal: &[Calibration]) -> String {
    let mut s = String::from("node,cost\n");
    for c in cal {
        let _ = writeln!(s, "{},{:.3}", fugue_sched::csv_name(&c.node), c.wcet_us);
    }
    s
}

/// The calibration `cal` of `graph` as a table: node, kind, median and 99th percentile (µs),
/// then their totals.
pub fn table(graph: &TaskGraph, cal: &[Calibration]) -> String {
    let width =
        |f: fn(&fugue_graph::Node) -> usize| graph.nodes().iter().map(f).max().unwrap_or(4).max(4);
    let (wn, wk) = (width(|n| n.name.len()), width(|n| n.kind.len()));
    let mut text = format!(
        "{:<wn$}  {:<wk$}  {:>10}  {:>10}\n",
        "node", "kind", "median µs", "p99 µs"
    );
    let (mut sum_med, mut sum_wcet) = (0.0, 0.0);
    for (v, c) in cal.iter().enumerate() {
        let _ = writeln!(
            text,
            "{:<wn$}  {:<wk$}  {:>10.3}  {:>10.3}",
            c.node,
            graph.node(v).kind,
            c.median_us,
            c.wcet_us
        );
        sum_med += c.median_us;
        sum_wcet += c.wcet_us;
    }
    let _ = writeln!(
        text,
        "{:<wn$}  {:<wk$}  {:>10.3}  {:>10.3}",
        "total", "", sum_med, sum_wcet
    );
    text
}
