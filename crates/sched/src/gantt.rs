//! Gantt charts as SVG: one row per processor, task names on the bars, a time axis with its
//! unit, critical-path tasks in another colour, with a legend.

use std::fmt::Write as _;

use fugue_graph::{NodeId, TaskGraph};

use crate::schedule::Schedule;

/// What to draw besides the schedule.
#[derive(Clone, Debug, Default)]
pub struct GanttOptions {
    /// A title line (e.g. the file, the algorithm and the makespan).
    pub title: String,
    /// The time unit written on the axis (`µs`, `time units`...).
    pub unit: String,
    /// Tasks to highlight (the critical path).
    pub critical: Vec<NodeId>,
}

const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 46.0;
const ROW: f64 = 34.0;
const BAR: f64 = 24.0;
const PLOT_W: f64 = 1000.0;
const CHAR_W: f64 = 6.6;
const COLOR_TASK: &str = "#6f9fd8";
const COLOR_CRIT: &str = "#e0584f";
const COLOR_DUP: &str = "#b9d3ee";

/// `s` escaped for SVG text and attribute values; a character XML does not allow (a control
/// character other than tab and line breaks, U+FFFE, U+FFFF), which a name may hold, is
/// written as U+FFFD, so that the file stays well-formed.
pub fn esc(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick step of 1, 2 or 5 times a power of ten giving at most about 10 ticks.
pub fn tick_step(span: f64) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / 10.0;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

/// `x` with at most 6 decimals and no trailing zeros (a tick label).
pub fn fmt_num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Draws the schedule of `g` as an SVG document.
pub fn svg(g: &TaskGraph, s: &Schedule, opts: &GanttOptions) -> String {
    let np = s.num_processors().max(1);
    let makespan = s.makespan();
    let span = if makespan > 0.0 { makespan } else { 1.0 };
    let step = tick_step(span);
    let axis_end = (span / step).ceil() * step;
    let x = |t: f64| LEFT + t / axis_end * PLOT_W;
    let height = TOP + np as f64 * ROW + 80.0;
    let width = LEFT + PLOT_W + RIGHT;
    let mut critical = vec![false; g.len()];
    for &c in &opts.critical {
        if c < critical.len() {
            critical[c] = true;
        }
    }
    // Copies after the first (by start time) of a duplicated task.
    let mut first_copy: Vec<Option<(usize, usize)>> = vec![None; g.len()];
    for (p, slots) in s.processors.iter().enumerate() {
        for (i, sl) in slots.iter().enumerate() {
            let e = &mut first_copy[sl.task];
            let earlier = match *e {
                None => true,
                Some((q, j)) => sl.start < s.processors[q][j].start,
            };
            if earlier {
                *e = Some((p, i));
            }
        }
    }
    let has_dup = s.has_duplicates();

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">"#
    );
    let _ = writeln!(o, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{LEFT}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        esc(&opts.title)
    );
    // Grid and axis.
    let axis_y = TOP + np as f64 * ROW + 4.0;
    let mut t = 0.0;
    while t <= axis_end + step * 1e-9 {
        let xx = x(t);
        let _ = writeln!(
            o,
            r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{axis_y}" stroke="#e3e3e3"/>"##
        );
        let _ = writeln!(
            o,
            r##"<line x1="{xx:.1}" y1="{axis_y}" x2="{xx:.1}" y2="{:.1}" stroke="#333"/>"##,
            axis_y + 5.0
        );
        let _ = writeln!(
            o,
            r#"<text x="{xx:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
            axis_y + 18.0,
            fmt_num(t)
        );
        t += step;
    }
    let _ = writeln!(
        o,
        r##"<line x1="{LEFT}" y1="{axis_y}" x2="{:.1}" y2="{axis_y}" stroke="#333"/>"##,
        LEFT + PLOT_W
    );
    let unit = if opts.unit.is_empty() {
        "time".to_string()
    } else {
        format!("time ({})", opts.unit)
    };
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        axis_y + 36.0,
        esc(&unit)
    );
    // Rows.
    for (p, slots) in s.processors.iter().enumerate() {
        let y = TOP + p as f64 * ROW;
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end">P{p}</text>"#,
            LEFT - 10.0,
            y + ROW / 2.0 + 4.0
        );
        for (i, sl) in slots.iter().enumerate() {
            let x0 = x(sl.start);
            let w = (x(sl.finish) - x0).max(1.0);
            let dup = first_copy[sl.task] != Some((p, i));
            let fill = if critical[sl.task] {
                COLOR_CRIT
            } else if dup {
                COLOR_DUP
            } else {
                COLOR_TASK
            };
            let name = &g.node(sl.task).name;
            let by = y + (ROW - BAR) / 2.0;
            let _ = writeln!(
                o,
                r##"<rect x="{x0:.2}" y="{by:.1}" width="{w:.2}" height="{BAR}" fill="{fill}" stroke="#222" stroke-width="0.6"><title>{} on P{p}: {} to {}{}</title></rect>"##,
                esc(name),
                fmt_num(sl.start),
                fmt_num(sl.finish),
                if dup { " (duplicate)" } else { "" }
            );
            // Label when it fits (cut with an ellipsis otherwise, or left out).
            let fit = ((w - 4.0) / CHAR_W).floor() as usize;
            let chars: Vec<char> = name.chars().collect();
            let label = if chars.len() <= fit {
                Some(name.clone())
            } else if fit >= 3 {
                Some(chars[..fit - 1].iter().collect::<String>() + "…")
            } else {
                None
            };
            if let Some(l) = label {
                let _ = writeln!(
                    o,
                    r#"<text x="{:.2}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                    x0 + w / 2.0,
                    by + BAR / 2.0 + 4.0,
                    esc(&l)
                );
            }
        }
    }
    // Legend.
    let ly = axis_y + 54.0;
    let mut lx = LEFT;
    let mut items = vec![(COLOR_TASK, "task"), (COLOR_CRIT, "critical-path task")];
    if has_dup {
        items.push((COLOR_DUP, "duplicate copy"));
    }
    for (c, label) in items {
        let _ = writeln!(
            o,
            r##"<rect x="{lx:.1}" y="{:.1}" width="14" height="14" fill="{c}" stroke="#222" stroke-width="0.6"/>"##,
            ly - 11.0
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{ly:.1}" font-size="12">{label}</text>"#,
            lx + 20.0
        );
        lx += 40.0 + label.len() as f64 * 7.0;
    }
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{ly:.1}" font-size="12" text-anchor="end">makespan {} {}</text>"#,
        LEFT + PLOT_W,
        fmt_num(makespan),
        esc(&opts.unit)
    );
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Slot;
    use fugue_graph::{GraphBuilder, Node};

    #[test]
    fn draws_rows_labels_axis_and_legend() {
        let mut b = GraphBuilder::new();
        let a = b
            .add_node(Node::new("alpha<1>", "").with_cost(2.0))
            .unwrap();
        let c = b
            .add_node(Node::new("a-very-long-task-name-that-cannot-fit", "").with_cost(0.1))
            .unwrap();
        b.add_edge(a, 0, c, 0, 0.0).unwrap();
        let g = b.build().unwrap();
        let s = Schedule {
            processors: vec![
                vec![
                    Slot {
                        task: 0,
                        start: 0.0,
                        finish: 2.0,
                    },
                    Slot {
                        task: 1,
                        start: 2.0,
                        finish: 2.1,
                    },
                ],
                vec![],
            ],
        };
        let svg = svg(
            &g,
            &s,
            &GanttOptions {
                title: "t".into(),
                unit: "µs".into(),
                critical: vec![0],
            },
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(">P0<") && svg.contains(">P1<"));
        assert!(svg.contains("alpha&lt;1&gt;"), "names are escaped");
        assert_eq!(
            esc("a\u{1}b\tc"),
            "a\u{fffd}b\tc",
            "no control character in XML"
        );
        assert!(svg.contains("time (µs)"));
        assert!(svg.contains(COLOR_CRIT) && svg.contains("critical-path task"));
        // The long name does not fit its bar: it is in the tooltip only.
        assert_eq!(
            svg.matches("a-very-long-task-name-that-cannot-fit").count(),
            1
        );
        assert_eq!(tick_step(23.0), 5.0);
        assert_eq!(tick_step(0.9), 0.1);
    }
}
