//! Live parameters: a node attribute changed while its graph plays. The control side checks
//! the change ([`check`]: the node's kind built with the new value, the attribute's index
//! among the node's live parameters) and sends it to the audio thread, which sets it between
//! two cycles ([`fugue_exec::Plan::set_param`]). The host sends it through its command
//! queue; `fugue run --control` through a [`LiveQueue`], which the backends drain before
//! every cycle ([`crate::CycleBody`]).

use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use fugue_dsp::{NodeContext, Ratio, Registry};
use fugue_graph::{NodeId, TaskGraph, Value};

/// One change for the audio thread: live parameter `param` of node `node` to `value`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveSet {
    /// The node.
    pub node: u32,
    /// Its live parameter ([`fugue_dsp::DspNode::live_param`]).
    pub param: u32,
    /// The new value.
    pub value: f64,
}

/// Changes in flight to the audio thread: bounded and lock-free on both sides.
pub type LiveQueue = Arc<ArrayQueue<LiveSet>>;

/// The graph of a run as its live changes left it: the control thread that checks and
/// sends each change ([`check`]) writes it into this copy ([`apply`]), and a backend that
/// compiles the graph again while it plays (JACK, at a new buffer size) compiles this one,
/// so that the changes stay. Control side only (a lock).
pub type LiveGraph = Arc<std::sync::Mutex<TaskGraph>>;

/// Writes a change that [`check`] accepted (`c`, attribute `attr` set to `value` as the
/// word `word` gave it) into `graph`: the attributes it replaces removed, those it restates
/// written, and `attr` set.
pub fn apply(graph: &mut TaskGraph, c: &Checked, attr: &str, word: &str, value: f64) {
    for a in &c.replaced {
        graph.remove_attr(c.node, a);
    }
    for (a, given) in &c.restated {
        graph.set_attr(c.node, a, given.clone());
    }
    graph.set_attr(c.node, attr, typed(word, value));
}

/// Changes a [`LiveQueue`] holds before the audio thread takes them (a full queue refuses
/// the next change: the audio thread has not run a cycle for as many changes).
pub const LIVE_QUEUE: usize = 256;

/// The rate and block a run plays at, set once its backend granted them (a JACK server's, an
/// ALSA device's may differ from what was asked): what the run's control socket checks a
/// live value against ([`crate::host::control::live`]).
#[derive(Debug, Default)]
pub struct Granted {
    rate: std::sync::atomic::AtomicU32,
    block: std::sync::atomic::AtomicUsize,
}

impl Granted {
    /// Says the run plays at `rate` Hz and `block` frames.
    pub fn set(&self, rate: u32, block: usize) {
        use std::sync::atomic::Ordering;
        // Release: a reader that sees the block sees the rate stored before it.
        self.rate.store(rate, Ordering::Relaxed);
        self.block.store(block, Ordering::Release);
    }

    /// The rate and block, once set.
    pub fn get(&self) -> Option<(u32, usize)> {
        use std::sync::atomic::Ordering;
        // Acquire: pairs with `set`'s release.
        let block = self.block.load(Ordering::Acquire);
        (block > 0).then(|| (self.rate.load(Ordering::Relaxed), block))
    }

    /// The rate and block, waiting at most `patience` for the backend to set them (a run
    /// opening its device or its JACK client); `None` if it did not.
    pub fn wait(&self, patience: std::time::Duration) -> Option<(u32, usize)> {
        let start = std::time::Instant::now();
        loop {
            if let Some(g) = self.get() {
                return Some(g);
            }
            if start.elapsed() >= patience {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// An empty [`LiveQueue`].
pub fn queue() -> LiveQueue {
    Arc::new(ArrayQueue::new(LIVE_QUEUE))
}

/// A change checked: the node and the parameter's index.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// The node's id.
    pub node: NodeId,
    /// The parameter's index.
    pub param: usize,
    /// The node's other attributes that name a value the change sets (a program's
    /// parameter given by its label, set now by its path): the change replaces them.
    pub replaced: Vec<String>,
    /// What the replaced attributes set besides (by the attribute that names each value
    /// alone, with the value it had), to be written in their place.
    pub restated: Vec<(String, Value)>,
}

/// The attribute value a `set` of `word` (the number `x`) gives the node: a whole number stays
/// one, so that messages and the graph kept for recompiling quote it as typed (`100`, not
/// `100.0`).
pub fn typed(word: &str, x: f64) -> Value {
    match word.trim().parse::<i64>() {
        // (`-0` is the float: an integer has no sign of zero.)
        Ok(i) if !(i == 0 && word.trim().starts_with('-')) => Value::Int(i),
        _ => Value::Float(x),
    }
}

/// The number a `set` gives, from the word written (`Err`: the sentence saying it is none).
pub fn number(word: &str) -> Result<f64, String> {
    match word.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        // (`inf`, or more digits than a number holds: `1e400`.)
        Ok(v) if v.is_infinite() => Err(format!(
            "`{}` is {}; `set` gives a live attribute a finite number",
            crate::host::command::shorten(word),
            if v > 0.0 { "too large a number" } else { "too far below zero" }
        )),
        _ => Err(format!(
            "`{}` is not a number; `set` gives a live attribute a new number (`fugue kinds` marks the live ones)",
            crate::host::command::shorten(word)
        )),
    }
}

/// Checks setting attribute `attr` of node `node` of `graph` to `value` (a word, [`number`])
/// while it plays at `rate` Hz and `block` frames, in this order: the node exists (not one of
/// a feedback edge's), its kind has the attribute and says it is live, the value is a number,
/// and the node builds with it (the kind says what is wrong with it); in a `pipelined` plan
/// (its blocks cut into sub-blocks), also that the node's samples with the new value do not
/// depend on how a block is cut ([`fugue_dsp::DspNode::splits_in_time`]: a Faust program
/// that turns to `si.bsmooth`), or the graph's output would change. `Err` is one sentence,
/// about the first of these that fails; `Ok` also gives the number.
#[allow(clippy::too_many_arguments)]
pub fn check(
    graph: &TaskGraph,
    registry: &Registry,
    rate: f64,
    block: usize,
    node: &str,
    attr: &str,
    value: &str,
    pipelined: bool,
) -> Result<(Checked, f64), String> {
    let v = match graph.find(node) {
        Some(v) if !graph.is_feedback_node(v) => v,
        _ => {
            let names: Vec<&str> = (0..graph.len())
                .filter(|&v| !graph.is_feedback_node(v))
                .map(|v| graph.node(v).name.as_str())
                .collect();
            let near = fugue_graph::suggest::nearest(node, names.iter().copied());
            // No near name: a graph of a few nodes names them (a Faust program loaded as a
            // graph has one, `dsp`, and its sink).
            let hint = match near {
                Some(n) => format!("; did you mean `{n}`?"),
                None if names.len() <= 4 => format!(
                    "; its nodes: {}",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => String::new(),
            };
            return Err(format!("the graph has no node `{node}`{hint}"));
        }
    };
    let kind = graph.node(v).kind.clone();
    // A kind no registry knows: the node plays as silence (`--placeholder`, or the graph
    // would not have loaded), and has nothing to change.
    if !registry.contains(&kind) {
        return Err(format!(
            "node `{node}` has the unknown kind `{kind}` and plays as silence (--placeholder): it has no attribute to change"
        ));
    }
    let doc = registry.doc(&kind);
    let not_live = || {
        let (live, hint) = match doc {
            Some(d) if d.others.is_some() => (
                format!("the live attributes of kind {kind} are the parameters its nodes load"),
                "`fugue info` on the graph lists them",
            ),
            Some(d) if !d.live.is_empty() => {
                let v: Vec<&str> = d.live.iter().map(|a| a.as_ref()).collect();
                (
                    format!("the live attributes of kind {kind}: {}", v.join(", ")),
                    "`fugue kinds` marks them",
                )
            }
            _ => (
                format!("kind {kind} has no live attribute"),
                "`fugue kinds` marks the live ones",
            ),
        };
        format!(
            "attribute `{attr}` of node `{node}` cannot change while the graph plays ({live}); {hint}"
        )
    };
    // A node's ports, kind and cost are the graph's shape: never live.
    if ["kind", "in", "out", "wcet"].contains(&attr) {
        return Err(not_live());
    }
    if let Some(doc) = doc {
        // Said before the value is tried: a value the attribute could not take is beside
        // the point when it cannot change at all.
        // A kind that loads its parameters (a program, a plugin): the attributes it lists
        // (the file, the plugin's URI) are not among them.
        let listed = doc.attributes.iter().any(|(a, _)| a == attr);
        if (doc.others.is_none() || listed) && doc.reads(attr) && !doc.is_live(attr) {
            return Err(not_live());
        }
        if !doc.reads(attr) {
            let near = crate::lint::nearest_attribute(doc, attr);
            return Err(format!(
                "node `{node}` (kind {kind}) has no attribute `{attr}`{}",
                near.map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default()
            ));
        }
    }
    // Not a number: the node as it stands says whether `attr` is one of its live
    // parameters (a program's or a plugin's are known only once it is built), which is said
    // first; then that the value is none.
    let number = number(value);
    let mut changed = graph.node(v).clone();
    // The node's other attributes that name a value `attr` sets (a program's parameter by
    // its label, set now by its path): the change replaces them, rather than the node
    // refusing two attributes that give one parameter two values.
    // What else they set is written in their place, by the attributes that name each value
    // alone, with the value they gave it.
    let mut replaced: Vec<String> = Vec::new();
    let mut restated: Vec<(String, Value)> = Vec::new();
    // At the node's own rate and block (a resampler before it changes them), as its plan
    // built it; the engine's where they are not known.
    let (at, node_block) = crate::check::node_rates(graph, block)[v].unwrap_or((Ratio::ONE, block));
    let own = || crate::check::node_context(graph, v, rate, block, at, node_block);
    // The node as it stands (built once: a plugin's build instantiates it).
    let here = own();
    let now = registry.build(&here, false).ok().map(|(n, _)| n);
    if let Some(now) = &now {
        if let Some(p) = now.live_param(attr) {
            let parts = now.live_parts(p);
            for (a, given) in &graph.node(v).attrs {
                let Some(q) = now.live_param(a).filter(|_| a != attr) else {
                    continue;
                };
                let theirs = now.live_parts(q);
                let overlaps = q == p || theirs.iter().any(|x| parts.contains(x));
                if !overlaps || replaced.contains(a) {
                    continue;
                }
                replaced.push(a.clone());
                for part in theirs.into_iter().filter(|x| !parts.contains(x)) {
                    restated.retain(|(r, _)| *r != part);
                    restated.push((part, given.clone()));
                }
            }
        }
    }
    changed.attrs.retain(|(a, _)| !replaced.contains(a));
    for (a, given) in &restated {
        changed.set_attr(a, given.clone());
    }
    if let Ok(x) = number {
        changed.set_attr(attr, typed(value, x));
    }
    let ctx = NodeContext {
        node: &changed,
        ..own()
    };
    // A bound of the running processors' memory (a delay's line), from the node as it
    // stands (the changed copy's own default for it may differ), before the changed node is
    // built: past it, the kind would blame the bound (`max_time` below `time`), which cannot
    // change while the graph plays.
    if let (Some(now), Ok(x)) = (&now, &number) {
        if let Some(max) = now
            .live_param(attr)
            .and_then(|p| now.live_max(p))
            .filter(|&m| *x > m)
        {
            return Err(format!(
                "`{attr}` of node `{node}` can be set up to {max} while the graph plays (what its memory holds); give the node a larger bound (`fugue kinds` names it for kind {kind}) and load it again"
            ));
        }
    }
    // The kind quotes the value as the graph holds it (`1000000000.0` for a typed `1e9`):
    // the sentence quotes it as it was typed.
    let (built, _) = registry.build(&ctx, false).map_err(|e| {
        let said = e.to_string();
        match &number {
            Ok(x) => {
                let typed_word = format!("`{}`", value.trim());
                // As the graph holds it, or as Rust writes the number.
                [typed(value, *x).as_str().into_owned(), x.to_string()]
                    .iter()
                    .map(|held| format!("`{held}`"))
                    .find(|held| said.contains(held.as_str()))
                    .map_or(said.clone(), |held| said.replacen(&held, &typed_word, 1))
            }
            Err(_) => said,
        }
    })?;
    let Some(param) = built.live_param(attr) else {
        if doc.is_some_and(|d| d.others.is_some()) {
            // A kind whose attributes are what a node loads (a program's parameters, a
            // plugin's controls): `attr` names none of this node's. Its linter says so with
            // the node's parameters, as `render` and `check` say it.
            if let Some(linter) = registry.linter(&kind) {
                // At 48 kHz: only its note of the attribute is wanted, not what a kind checks
                // of the rate (a Faust program's trial above 192 kHz).
                let at_48k = NodeContext {
                    sample_rate: 48_000.0,
                    engine_rate: 48_000.0,
                    ..ctx
                };
                if let Some(note) = linter(&at_48k)
                    .into_iter()
                    .find(|n| n.attr.as_deref() == Some(attr))
                {
                    // The note is written of a graph file's attribute: here `attr` is what
                    // `set` asked to change, which the node does not have.
                    let given = format!("has attribute `{attr}`, which ");
                    return Err(note.text.replacen(
                        &given,
                        &format!("cannot set `{attr}`, which "),
                        1,
                    ));
                }
            }
            return Err(format!(
                "node `{node}` (kind {kind}) has no parameter `{attr}` to change; `fugue info` on the graph lists its parameters"
            ));
        }
        return Err(not_live());
    };
    let value = number?;
    if pipelined && !built.splits_in_time() {
        return Err(format!(
            "with `{attr}` at {}, node `{node}` gives other samples when a block is cut into shorter calls, and the graph plays pipelined (each block cut into sub-blocks), so its output would change; load it with --pipeline 1 to set this live",
            crate::host::command::shorten(value.to_string().as_str())
        ));
    }
    Ok((
        Checked {
            node: v,
            param,
            replaced,
            restated,
        },
        value,
    ))
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn a_set_value_is_a_finite_number() {
        assert_eq!(number("0.25"), Ok(0.25));
        assert_eq!(number("-1e3"), Ok(-1000.0));
        for word in ["nan", "loud", ""] {
            assert!(
                number(word).unwrap_err().contains("is not a number"),
                "{word}"
            );
        }
        let digits = "9".repeat(400);
        for word in ["inf", "1e400", digits.as_str()] {
            let e = number(word).unwrap_err();
            assert!(e.contains("is too large a number"), "{word}: {e}");
        }
        for word in ["-inf", "-1e400"] {
            let e = number(word).unwrap_err();
            assert!(e.contains("is too far below zero"), "{word}: {e}");
        }
    }
}
