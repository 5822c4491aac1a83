//! What the commands report, as values: each derives `Serialize` (the `--json` output; its
//! keys are the documented ones) and says itself in text with `Display` where the text is
//! more than the figures.
//!
//! - [`GraphInfo`]: a graph's summary (`fugue info`).
//! - [`ScheduleReport`]: a static schedule with its metrics (`fugue schedule`).
//! - [`RenderReport`], [`RunSummary`]: a render's and a real-time run's figures, with what the
//!   automatic executor choice chose ([`crate::auto::AutoReport`] serializes as its `auto`
//!   object).
//! - [`calibration`]: a calibration's table and costs file.
//! - [`kinds`]: a registry's kinds as text and Markdown (`docs/nodes.md`).
//! - [`profile`]: the profile's JSON and the folder `--profile=DIR` writes.

pub mod calibration;
pub(crate) mod graph;
pub mod kinds;
pub mod profile;
mod run;

pub use graph::{counted, GraphInfo, ScheduleReport, ScheduledTask};
pub use run::{cycles_line, RenderReport, RunSummary};

/// Nanoseconds as microseconds.
fn us(ns: f64) -> f64 {
    ns / 1000.0
}

/// A number as a message shows it: in scientific notation when very large or very small (a
/// 1e300 written out is 301 digits), as written otherwise.
pub fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A number without trailing zeros, at most `decimals` of them (`15`, `12.5`, `0.125`); `-0`
/// is said `0`.
pub fn trimmed(x: f64, decimals: usize) -> String {
    // `+ 0.0` turns -0 into 0 (an empty sum is -0 in IEEE arithmetic).
    let s = format!("{:.*}", decimals, x + 0.0);
    match s.trim_end_matches('0').trim_end_matches('.') {
        "-0" => "0".to_string(),
        t => t.to_string(),
    }
}
