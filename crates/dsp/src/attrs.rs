//! Reading node attributes, with errors that name the node and the attribute.

use std::path::PathBuf;

use crate::{NodeContext, NodeError};

/// The attribute `attr` as a number: `Ok(None)` when absent, an error when it is not a number.
pub fn number(ctx: &NodeContext<'_>, attr: &str) -> Result<Option<f64>, NodeError> {
    match ctx.node.attr(attr) {
        None => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or_else(|| NodeError::BadAttr {
            node: ctx.name().to_string(),
            kind: ctx.kind().to_string(),
            attr: attr.to_string(),
            value: v.as_str().into_owned(),
            reason: "is not a number".to_string(),
        }),
    }
}

/// The required number `attr`; `what` says what it is ("a frequency in Hz").
pub fn required(ctx: &NodeContext<'_>, attr: &str, what: &str) -> Result<f64, NodeError> {
    number(ctx, attr)?.ok_or_else(|| {
        // A misspelt attribute is the likely cause: name it.
        let given = ctx.node.attrs.iter().map(|(k, _)| k.as_str());
        let what = match fugue_graph::suggest::nearest(attr, given) {
            Some(k) => format!("{what}; the node gives `{k}`: did you mean `{attr}`?"),
            None => what.to_string(),
        };
        NodeError::MissingAttr {
            node: ctx.name().to_string(),
            kind: ctx.kind().to_string(),
            attr: attr.to_string(),
            what,
        }
    })
}

/// The number `attr`, or `default` when absent.
pub fn or(ctx: &NodeContext<'_>, attr: &str, default: f64) -> Result<f64, NodeError> {
    Ok(number(ctx, attr)?.unwrap_or(default))
}

/// Fails with "`attr` = `value` reason" unless `ok`.
pub fn check(
    ctx: &NodeContext<'_>,
    attr: &str,
    value: f64,
    ok: bool,
    reason: &str,
) -> Result<f64, NodeError> {
    if ok {
        Ok(value)
    } else {
        Err(bad(ctx, attr, &short_number(value), reason))
    }
}

pub use fugue_graph::short_number;

/// A [`NodeError::BadAttr`] for this node.
pub fn bad(ctx: &NodeContext<'_>, attr: &str, value: &str, reason: &str) -> NodeError {
    NodeError::BadAttr {
        node: ctx.name().to_string(),
        kind: ctx.kind().to_string(),
        attr: attr.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// A [`NodeError::BadPorts`] for this node.
pub fn bad_ports(ctx: &NodeContext<'_>, reason: impl Into<String>) -> NodeError {
    NodeError::BadPorts {
        node: ctx.name().to_string(),
        kind: ctx.kind().to_string(),
        reason: reason.into(),
    }
}

/// The string attribute `attr`, one of `choices` (case-insensitive), or `default` when absent.
pub fn choice(
    ctx: &NodeContext<'_>,
    attr: &str,
    choices: &[&'static str],
    default: &'static str,
) -> Result<&'static str, NodeError> {
    match ctx.node.attr(attr) {
        None => Ok(default),
        Some(v) => {
            let s = v.as_str();
            choices
                .iter()
                .find(|c| c.eq_ignore_ascii_case(s.trim()))
                .copied()
                .ok_or_else(|| {
                    bad(
                        ctx,
                        attr,
                        &s,
                        &format!("is not one of: {}", choices.join(", ")),
                    )
                })
        }
    }
}

/// Fails unless the node takes no input port (generators).
pub fn no_inputs(ctx: &NodeContext<'_>) -> Result<(), NodeError> {
    if ctx.inputs > 0 {
        return Err(bad_ports(
            ctx,
            format!(
                "takes no input, but the graph gives it {} input port(s)",
                ctx.inputs
            ),
        ));
    }
    Ok(())
}

/// A seed for a node's random generator: the attribute `seed` if given, else a hash of the
/// node's name (so that two noise nodes differ, and every render is the same).
pub fn seed(ctx: &NodeContext<'_>) -> Result<u64, NodeError> {
    if let Some(s) = number(ctx, "seed")? {
        // Whole and exact in a double: another value would be silently rounded or clamped
        // (-1 and 0, 1.5 and 1 gave one seed). A whole number is checked as written, not as
        // its nearest double (2^53 + 1 would pass as 2^53).
        let given = ctx.node.attr("seed").expect("the attribute is present");
        let whole: Option<i128> = match given {
            fugue_graph::Value::Int(i) => Some(i128::from(*i)),
            fugue_graph::Value::Str(t) => t.trim().parse::<i128>().ok(),
            fugue_graph::Value::Float(_) => None,
        };
        let ok = match whole {
            Some(w) => (0..=i128::from(MAX_SEED)).contains(&w),
            None => s >= 0.0 && s.fract() == 0.0 && s <= MAX_SEED as f64,
        };
        if !ok {
            return Err(bad(
                ctx,
                "seed",
                &given.as_str(),
                "must be a whole number from 0 to 9007199254740992 (2^53)",
            ));
        }
        return Ok(whole.map_or(s as u64, |w| w as u64));
    }
    // FNV-1a: stable across Rust versions, unlike `DefaultHasher`.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in ctx.name().bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(h)
}

/// The largest `seed`: 2^53, the largest whole number every larger one of which a double
/// (the graph's numbers) can no longer tell from its neighbours.
pub const MAX_SEED: u64 = 1 << 53;

/// The standard `volume` attribute (default 1.0), as `f32`.
pub fn volume(ctx: &NodeContext<'_>) -> Result<f32, NodeError> {
    Ok(level(ctx, "volume", 1.0)? as f32)
}

/// The largest magnitude of a sine's frequency (`osc`, `mod`): 1e9 Hz. Above any rate a node
/// runs at (the sine aliases), and below where the phase, kept in `f64` turns, would lose
/// its fractional part (and the samples become NaN).
pub const MAX_SINE_FREQ: f64 = 1e9;

/// The required `freq` of a sine (`osc`, `mod`), in Hz, within ±[`MAX_SINE_FREQ`] (negative
/// and above-Nyquist frequencies alias).
pub fn sine_freq(ctx: &NodeContext<'_>) -> Result<f64, NodeError> {
    let f = required(ctx, "freq", "a frequency in Hz")?;
    check(
        ctx,
        "freq",
        f,
        f.abs() <= MAX_SINE_FREQ,
        "is out of range: a sine's frequency lies within -1e9 to 1e9 Hz",
    )
}

/// The largest magnitude of a linear level (`volume`, `gain`, `wet`, `dry`): 10000, +80 dB.
/// A larger one would overflow the samples (and a single-precision factor) to infinity.
pub const MAX_LEVEL: f64 = 1e4;

/// The largest gain in decibels (`db`): +80 dB, [`MAX_LEVEL`].
pub const MAX_DB: f64 = 80.0;

/// The linear level `attr` (or `default` when absent), within ±[`MAX_LEVEL`].
pub fn level(ctx: &NodeContext<'_>, attr: &str, default: f64) -> Result<f64, NodeError> {
    let v = or(ctx, attr, default)?;
    check(
        ctx,
        attr,
        v,
        v.abs() <= MAX_LEVEL,
        "is out of range: a level lies within -10000 to 10000 (+80 dB)",
    )
}

/// The gain in decibels `attr` (or `default` when absent), at most [`MAX_DB`].
pub fn decibels(ctx: &NodeContext<'_>, attr: &str, default: f64) -> Result<f64, NodeError> {
    let v = or(ctx, attr, default)?;
    check(
        ctx,
        attr,
        v,
        v <= MAX_DB,
        "is out of range: a gain in dB is at most 80",
    )
}

/// The attribute `attr` as a file name: `Ok(None)` when absent, an error when empty. A
/// relative name is resolved against the graph's folder ([`NodeContext::resolve`]), so that
/// a graph and the files it names move together.
pub fn file(ctx: &NodeContext<'_>, attr: &str) -> Result<Option<PathBuf>, NodeError> {
    match ctx.node.attr(attr) {
        None => Ok(None),
        Some(v) => {
            let name = v.as_str();
            if name.is_empty() {
                return Err(bad(ctx, attr, "", "is empty; give the name of a file"));
            }
            Ok(Some(ctx.resolve(&*name)))
        }
    }
}
