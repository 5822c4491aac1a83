//! `fugue plugins`: the installed LV2 plugins that an `lv2` node can name, with their audio
//! ports and controls, as `fugue kinds` lists the built-in kinds.

use std::fmt::Write as _;

use fugue_lv2::{PluginInfo, PortInfo, PortKind};

/// Arguments of `fugue plugins`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the plugins whose URI, name or class contains this text (case-insensitive).
    pub filter: Option<String>,
    /// Print one JSON array of the plugins (URI, name, class, ports with their ranges and
    /// defaults, required and optional features) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue plugins`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let all = fugue_lv2::plugins()
        .map_err(|e| anyhow::anyhow!("cannot list the LV2 plugins: fugue {e}"))?;
    let filter = a.filter.as_deref().map(str::to_lowercase);
    let chosen: Vec<&PluginInfo> = all
        .iter()
        .filter(|p| match &filter {
            None => true,
            Some(f) => [&p.uri, &p.name, &p.class]
                .iter()
                .any(|s| s.to_lowercase().contains(f.as_str())),
        })
        .collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&chosen)?);
        return Ok(());
    }
    let mut out = String::new();
    for p in &chosen {
        describe(&mut out, p);
    }
    let _ = writeln!(
        out,
        "{} plugin{}{}; use one as `x = {{ kind: \"lv2\", uri: \"URI\", CONTROL: VALUE, }};`",
        chosen.len(),
        if chosen.len() == 1 { "" } else { "s" },
        match &a.filter {
            Some(f) => format!(" matching `{f}` (of {})", all.len()),
            None => String::new(),
        }
    );
    print!("{out}");
    Ok(())
}

/// A value as the plugin gives it (`-` when it gives none).
fn value(v: f32) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v}")
    }
}

/// A control's line: symbol, range, default, name.
fn control(p: &PortInfo) -> String {
    let rate = if p.sample_rate { " x rate" } else { "" };
    format!(
        "{} {}..{}{rate} (default {}): {}",
        p.symbol,
        value(p.min),
        value(p.max),
        value(p.default),
        p.name
    )
}

/// One plugin's paragraph.
fn describe(out: &mut String, p: &PluginInfo) {
    let audio = |input| {
        p.audio(input)
            .map(|q| q.symbol.as_str())
            .collect::<Vec<_>>()
    };
    let (ins, outs) = (audio(true), audio(false));
    let _ = writeln!(out, "{}", p.uri);
    let class = if p.class.is_empty() {
        String::new()
    } else {
        format!(" ({})", p.class)
    };
    let _ = writeln!(out, "  {}{class}", p.name);
    let _ = writeln!(
        out,
        "  audio: {} in [{}], {} out [{}]",
        ins.len(),
        ins.join(", "),
        outs.len(),
        outs.join(", ")
    );
    for q in p.controls() {
        let _ = writeln!(out, "  control {}", control(q));
    }
    for q in p
        .ports
        .iter()
        .filter(|q| q.kind == PortKind::Control && !q.input)
    {
        let _ = writeln!(out, "  reads out {}", control(q));
    }
    let others: Vec<String> = p
        .ports
        .iter()
        .filter(|q| !matches!(q.kind, PortKind::Audio | PortKind::Control))
        .map(|q| {
            format!(
                "{} ({:?} {})",
                q.symbol,
                q.kind,
                if q.input { "in" } else { "out" }
            )
        })
        .collect();
    if !others.is_empty() {
        let _ = writeln!(out, "  other ports: {}", others.join(", ").to_lowercase());
    }
    if !p.required_features.is_empty() {
        let _ = writeln!(out, "  requires: {}", p.required_features.join(", "));
    }
    if !p.hard_rt() {
        let _ = writeln!(out, "  not declared real-time safe (lv2:hardRTCapable)");
    }
    out.push('\n');
}
