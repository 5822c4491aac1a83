//! The installed plugins described for a user (`fugue plugins`): a plugin's audio ports and
//! controls as text ([`PluginInfo`]'s `Display`), and the search among them
//! ([`PluginInfo::matches`]).

use std::fmt;

use crate::{PluginInfo, PortInfo, PortKind};

impl PluginInfo {
    /// Whether `filter` (lower case) is in the plugin's URI, name or class, any case.
    pub fn matches(&self, filter: &str) -> bool {
        [&self.uri, &self.name, &self.class]
            .iter()
            .any(|s| s.to_lowercase().contains(filter))
    }
}

/// A port's value: `-` when the plugin declares none.
fn value(v: f32) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v}")
    }
}

/// A control port: symbol, range, default and name (what the plugin declares of them: a port
/// it gives no range nor default, an output most often, is its symbol and name).
fn control(p: &PortInfo) -> String {
    if p.min.is_nan() && p.max.is_nan() && p.default.is_nan() {
        return format!("{}: {}", p.symbol, p.name);
    }
    let rate = if p.sample_rate { " x rate" } else { "" };
    let what = if p.toggled {
        ", a switch"
    } else if p.integer {
        ", whole numbers"
    } else {
        ""
    };
    format!(
        "{} {}..{}{rate} (default {}{what}): {}",
        p.symbol,
        value(p.min),
        value(p.max),
        value(p.default),
        p.name
    )
}

/// The plugin as `fugue plugins` lists it: URI, name and class, audio ports, controls, the
/// ports it reads out, other ports, required features, and whether it declares itself
/// real-time safe; then an empty line.
impl fmt::Display for PluginInfo {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let audio = |input| {
            self.audio(input)
                .map(|q| q.symbol.as_str())
                .collect::<Vec<_>>()
        };
        let (ins, outs) = (audio(true), audio(false));
        writeln!(out, "{}", self.uri)?;
        let class = if self.class.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.class)
        };
        writeln!(out, "  {}{class}", self.name)?;
        if let Some(why) = &self.malformed {
            writeln!(out, "  malformed description, cannot be used: {why}")?;
            return writeln!(out);
        }
        writeln!(
            out,
            "  audio: {} in [{}], {} out [{}]",
            ins.len(),
            ins.join(", "),
            outs.len(),
            outs.join(", ")
        )?;
        for q in self.controls() {
            writeln!(out, "  control {}", control(q))?;
        }
        let read_out = |q: &&PortInfo| q.kind == PortKind::Control && !q.input;
        for q in self.ports.iter().filter(read_out) {
            writeln!(out, "  reads out {}", control(q))?;
        }
        let others: Vec<String> = self
            .ports
            .iter()
            .filter(|q| !matches!(q.kind, PortKind::Audio | PortKind::Control))
            .map(|q| {
                let dir = if q.input { "in" } else { "out" };
                format!("{} ({:?} {dir})", q.symbol, q.kind)
            })
            .collect();
        if !others.is_empty() {
            writeln!(out, "  other ports: {}", others.join(", ").to_lowercase())?;
        }
        if !self.required_features.is_empty() {
            writeln!(out, "  requires: {}", self.required_features.join(", "))?;
        }
        if !self.required_options.is_empty() {
            writeln!(
                out,
                "  requires the options: {}",
                self.required_options.join(", ")
            )?;
        }
        if !self.hard_rt() {
            writeln!(out, "  not declared real-time safe (lv2:hardRTCapable)")?;
        }
        writeln!(out)
    }
}
