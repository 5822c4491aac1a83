//! The profile's pictures: a cycle's per-thread timeline as SVG.

use std::fmt::Write as _;

use fugue_sched::gantt::{esc, fmt_num, tick_step};

use super::report::{us, ProfileReport, Timeline};

impl ProfileReport {
    /// A per-thread timeline of `t` as SVG: one row per thread, a bar per task (the chain
    /// that ended the cycle in red), the thread's wake-up marked.
    pub fn gantt_svg(&self, t: &Timeline, title: &str) -> String {
        const LEFT: f64 = 80.0;
        const TOP: f64 = 50.0;
        const ROW: f64 = 36.0;
        const BAR: f64 = 24.0;
        const W: f64 = 1000.0;
        let rows = self.threads.max(1);
        let span = t.duration_ns.max(1) as f64;
        let x = |ns: u64| LEFT + ns as f64 / span * W;
        let height = TOP + rows as f64 * ROW + 70.0;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="11">"#,
            LEFT + W + 30.0
        );
        let _ = writeln!(
            s,
            r#"<rect width="100%" height="100%" fill="white"/><text x="{LEFT}" y="20" font-size="13">{}</text>"#,
            esc(title)
        );
        // A step of the chain is its bar's task, found by its end (a step's start may have
        // been moved to its predecessor's end, read on another core: see the recorder).
        let on_chain: std::collections::HashSet<(&str, usize, u64)> = t
            .chain
            .iter()
            .map(|c| (c.node.as_str(), c.worker, c.start_ns + c.run_ns))
            .collect();
        for r in 0..rows {
            let y = TOP + r as f64 * ROW;
            let _ = writeln!(
                s,
                r##"<text x="8" y="{}">thread {r}</text><line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#ddd"/>"##,
                y + BAR * 0.7,
                LEFT + W,
                y + BAR + 4.0,
                y + BAR + 4.0
            );
            if let Some(Some(w)) = t.wakes.get(r) {
                let _ = writeln!(
                    s,
                    r##"<rect x="{LEFT}" y="{}" width="{:.2}" height="{}" fill="#f3e3a0"><title>waking: {} µs</title></rect>"##,
                    y + BAR / 2.0 - 3.0,
                    (x(*w) - LEFT).max(0.5),
                    6.0,
                    us(*w as f64)
                );
            }
        }
        for b in &t.bars {
            let y = TOP + b.worker.min(rows - 1) as f64 * ROW;
            let crit = on_chain.contains(&(b.node.as_str(), b.worker, b.end_ns));
            let w = (x(b.end_ns) - x(b.start_ns)).max(0.5);
            let _ = writeln!(
                s,
                r##"<rect x="{:.2}" y="{y}" width="{w:.2}" height="{BAR}" fill="{}" stroke="white" stroke-width="0.5"><title>{}: {} to {} µs</title></rect>"##,
                x(b.start_ns),
                if crit { "#e0584f" } else { "#6f9fd8" },
                esc(&b.node),
                us(b.start_ns as f64),
                us(b.end_ns as f64)
            );
            if w > b.node.len() as f64 * 6.2 + 4.0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{}" fill="white">{}</text>"#,
                    x(b.start_ns) + 2.0,
                    y + BAR * 0.7,
                    esc(&b.node)
                );
            }
        }
        let axis_y = TOP + rows as f64 * ROW + 10.0;
        let step = tick_step(span / 1000.0);
        let mut tick = 0.0;
        while tick <= span / 1000.0 + 1e-9 {
            let xx = LEFT + tick * 1000.0 / span * W;
            let _ = writeln!(
                s,
                r#"<line x1="{xx:.2}" x2="{xx:.2}" y1="{axis_y}" y2="{}" stroke="black"/><text x="{xx:.2}" y="{}" text-anchor="middle">{}</text>"#,
                axis_y + 5.0,
                axis_y + 18.0,
                fmt_num(tick)
            );
            tick += step;
        }
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle">µs after the cycle's start (red: the chain that ended the cycle; yellow: the thread waking)</text></svg>"##,
            LEFT + W / 2.0,
            axis_y + 36.0
        );
        s
    }
}
