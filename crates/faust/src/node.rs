//! The `faust` kind: a node that runs one instance of a compiled program.

use std::path::Path;
use std::sync::Arc;

use fugue_dsp::{attrs, isolated, DspNode, NodeContext, NodeError, Processor};

use crate::factory::{Backend, Factory, Instance, Source};
use crate::ffi::Compute;
use crate::ui::Widget;
use crate::{Faust, FaustError};

/// The attributes the kind reads itself; every other one names a parameter.
pub const OWN_ATTRIBUTES: [&str; 4] = ["file", "code", "backend", "volume"];

/// What a `faust` node's attributes ask for: the program and the backend.
pub fn source_of(ctx: &NodeContext<'_>) -> Result<(Source, Backend), NodeError> {
    let file = attrs::file(ctx, "file")?;
    let code = ctx.node.attr("code").map(|v| v.as_str().into_owned());
    let source = match (file, code) {
        (Some(_), Some(_)) => {
            return Err(attrs::bad(
                ctx,
                "code",
                "...",
                "comes with `file`; give the program one way, not both",
            ))
        }
        (Some(f), None) => Source::file(&f, ctx.folder).map_err(|e| {
            // The value as written; the path it names beside the graph, when that differs.
            let written = ctx
                .node
                .attr("file")
                .map(|v| v.as_str().into_owned())
                .unwrap_or_default();
            // Compared and shown without `.` components (`././x.dsp` is `x.dsp`).
            let plain = |p: &Path| -> std::path::PathBuf {
                p.components()
                    .filter(|c| *c != std::path::Component::CurDir)
                    .collect()
            };
            let why = match &e {
                FaustError::Read { reason, .. } if plain(Path::new(&written)) != plain(&f) => {
                    format!("cannot be read ({}: {reason})", plain(&f).display())
                }
                _ => reason(&e),
            };
            attrs::bad(ctx, "file", &written, &why)
        })?,
        // Named alike for every node, so that nodes of the same code share its factory (an
        // error names the node besides).
        (None, Some(c)) if c.len() as u64 > crate::MAX_PROGRAM_BYTES => {
            return Err(attrs::bad(
                ctx,
                "code",
                "...",
                &format!(
                    "is {} MiB long, more than the {} MiB a Faust program may have",
                    c.len().div_ceil(1 << 20),
                    crate::MAX_PROGRAM_BYTES >> 20
                ),
            ))
        }
        (None, Some(c)) => Source::code(&c, "code", ctx.folder),
        (None, None) => {
            return Err(NodeError::MissingAttr {
                node: ctx.name().to_string(),
                kind: ctx.kind().to_string(),
                attr: "file".to_string(),
                what: "a Faust program: `file` names a .dsp file, or `code` gives its text"
                    .to_string(),
            })
        }
    };
    let backend = match attrs::choice(ctx, "backend", &["llvm", "interp"], "llvm")? {
        "interp" => Backend::Interp,
        _ => Backend::Llvm,
    };
    Ok((source, backend))
}

/// The reason of a node error about the program: `is not ...`, as [`NodeError::BadAttr`]
/// words it after the value.
fn reason(e: &FaustError) -> String {
    match e {
        FaustError::Read { reason, .. } => format!("cannot be read ({reason})"),
        FaustError::Compile { .. } => format!("does not compile: {e}"),
        e => format!("cannot be used: {e}"),
    }
}

/// The program's factory for the node of `ctx` (compiled now, or found in the cache).
pub fn factory_of(ctx: &NodeContext<'_>) -> Result<Arc<Factory>, NodeError> {
    let faust = Faust::shared().map_err(|e| attrs::bad_ports(ctx, format!("cannot run: {e}")))?;
    let (source, backend) = source_of(ctx)?;
    faust.factory(&source, backend).map_err(|e| {
        let (attr, value) = match ctx.node.attr("file") {
            Some(f) => ("file", f.as_str().into_owned()),
            None => ("code", "...".to_string()),
        };
        attrs::bad(ctx, attr, &value, &reason(&e))
    })
}

/// The attributes of the node of `ctx` that name none of the program's parameters.
pub fn unknown_attributes<'a>(ctx: &NodeContext<'a>, factory: &Factory) -> Vec<&'a str> {
    ctx.node
        .attrs
        .iter()
        .map(|(a, _)| a.as_str())
        .filter(|a| !OWN_ATTRIBUTES.contains(a))
        .filter(|a| !factory.params.iter().any(|p| p.is_input() && p.is_named(a)))
        .collect()
}

/// Builds a `faust` node (the kind's constructor).
pub fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let factory = factory_of(ctx)?;
    if ctx.inputs > factory.inputs {
        return Err(attrs::bad_ports(
            ctx,
            format!(
                "has {} input(s) (its program's), but the graph gives it {} input port(s)",
                factory.inputs, ctx.inputs
            ),
        ));
    }
    let settings = settings_of(ctx, &factory)?;
    Ok(Box::new(FaustNode {
        groups: shared_names(&factory.params).into(),
        factory,
        settings: settings.into(),
        rate: ctx.sample_rate.round() as u32,
        block: ctx.block.max(1),
        volume: attrs::volume(ctx)?,
        splits: std::sync::OnceLock::new(),
    }))
}

/// The parameter values the attributes of the node of `ctx` set (index among the program's
/// parameters, value), each checked against its parameter's range.
pub fn settings_of(
    ctx: &NodeContext<'_>,
    factory: &Factory,
) -> Result<Vec<(usize, f32)>, NodeError> {
    let mut settings: Vec<(usize, f32)> = Vec::new();
    // The attribute that set each parameter, and the value, so that two that name one
    // parameter (its label and its path) with different values are refused rather than the
    // later one kept.
    let mut set_by: Vec<Option<(&str, f32)>> = vec![None; factory.params.len()];
    for (attr, given) in &ctx.node.attrs {
        if OWN_ATTRIBUTES.contains(&attr.as_str()) {
            continue;
        }
        // An attribute that names no parameter is said by `lint`, not refused, whatever
        // its value.
        let named = inputs_named(&factory.params, attr);
        if named.is_empty() {
            continue;
        }
        let value = attrs::number(ctx, attr)?.expect("the attribute is present");
        for i in named {
            let p = &factory.params[i];
            // Within the widget's range, as Faust's own interfaces keep it (a float's
            // rounding of a bound written in the program is let through, and clamped).
            let slack = 1e-6 * p.min.abs().max(p.max.abs()).max(1.0) as f64;
            let (lo, hi) = (f64::from(p.min), f64::from(p.max));
            if lo <= hi && (value < lo - slack || value > hi + slack) {
                return Err(attrs::bad(
                    ctx,
                    attr,
                    &given.as_str(),
                    &format!(
                        "is outside the range of parameter `{}` of its Faust program: {} to {}",
                        p.path, p.min, p.max
                    ),
                ));
            }
            // A button or a check box is off or on: a value between would scale what the
            // program multiplies by it, which no interface of Faust's can give it.
            let switch = match p.widget {
                Widget::Button => Some("a button"),
                Widget::CheckBox => Some("a check box"),
                _ => None,
            };
            if let Some(what) = switch.filter(|_| value != 0.0 && value != 1.0) {
                return Err(attrs::bad(
                    ctx,
                    attr,
                    &given.as_str(),
                    &format!(
                        "is not 0 or 1: parameter `{}` of its Faust program is {what}, off (0) or on (1)",
                        p.path
                    ),
                ));
            }
            let v = (if lo <= hi { value.clamp(lo, hi) } else { value }) as f32;
            if let Some((first, before)) = set_by[i] {
                if before != v {
                    return Err(attrs::bad(
                        ctx,
                        attr,
                        &given.as_str(),
                        &format!(
                            "sets parameter `{}` of its Faust program, which `{first}` sets to {before} already; give it once",
                            p.path
                        ),
                    ));
                }
            }
            set_by[i] = Some((attr.as_str(), v));
            settings.push((i, v));
        }
    }
    Ok(settings)
}

/// The input parameters (not bar graphs) that the attribute `name` names: its label, its
/// path, or the end of its path ([`crate::ui::Param::is_named`]), in the program's order.
fn inputs_named(params: &[crate::ui::Param], name: &str) -> Vec<usize> {
    (params.iter().enumerate())
        .filter(|(_, p)| p.is_input() && p.is_named(name))
        .map(|(i, _)| i)
        .collect()
}

/// The sets of input parameters that one attribute names together (a label, or the end of a
/// path, that several parameters share: `gain` of `/left/gain` and `/right/gain`), each once,
/// in the order of their first parameter.
fn shared_names(params: &[crate::ui::Param]) -> Vec<Box<[usize]>> {
    let mut groups: Vec<Box<[usize]>> = Vec::new();
    for p in params.iter().filter(|p| p.is_input()) {
        let path = p.path.trim_start_matches('/');
        let ends = path.match_indices('/').map(|(i, _)| &path[i + 1..]);
        for name in std::iter::once(p.label.as_str()).chain(ends) {
            let named: Box<[usize]> = inputs_named(params, name).into();
            if named.len() > 1 && !groups.contains(&named) {
                groups.push(named);
            }
        }
    }
    groups
}

/// The control side of a `faust` node.
struct FaustNode {
    /// The parameters that one attribute names together ([`shared_names`]): a live change
    /// of such an attribute is parameter `params + 1 + k` of group `k`.
    groups: Arc<[Box<[usize]>]>,
    factory: Arc<Factory>,
    /// Parameter index and value, applied to every instance after its defaults.
    settings: Arc<[(usize, f32)]>,
    rate: u32,
    block: usize,
    volume: f32,
    /// [`DspNode::splits_in_time`], found once by [`FaustNode::cut_calls_agree`].
    splits: std::sync::OnceLock<bool>,
}

impl FaustNode {
    /// Whether two blocks of the program, run as calls of the whole block and as calls of
    /// 1, 3, 60 and 7 frames in turn (fresh instances with this node's settings, the same
    /// pseudo-random inputs), give the same bits: not so for a program that reads the
    /// block's length (`ma.BS`, `si.bsmooth`) or works per call, or one that differs from
    /// instance to instance (`no.rnoise`'s random seeds), which a cycle cut into sub-blocks
    /// would change. Off the audio path (allocates).
    fn cut_calls_agree(&self) -> bool {
        let frames = self.block;
        if frames < 2 {
            return true;
        }
        let total = 2 * frames;
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut noise = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let inputs: Vec<Vec<f32>> = (0..self.factory.inputs)
            .map(|_| (0..total).map(|_| noise()).collect())
            .collect();
        // An instance libfaust refuses makes no cut: the plan's own instance says why.
        let run = |cuts: &mut dyn Iterator<Item = usize>| -> Option<Vec<Vec<f32>>> {
            let mut p = self.make_processor().ok()?;
            let mut outs = vec![vec![0.0f32; total]; self.factory.outputs];
            let mut at = 0;
            while at < total {
                let n = cuts
                    .next()
                    .unwrap_or(frames)
                    .clamp(1, frames)
                    .min(total - at);
                let ins: Vec<&[f32]> = inputs.iter().map(|v| &v[at..at + n]).collect();
                let mut o: Vec<&mut [f32]> = outs.iter_mut().map(|v| &mut v[at..at + n]).collect();
                // A division by zero makes no cut: the plan's own instance reports it.
                if p.compute_block(&ins, &mut o) > 0 {
                    return None;
                }
                at += n;
            }
            Some(outs)
        };
        let (Some(whole), Some(cut)) = (
            run(&mut std::iter::repeat(frames)),
            run(&mut [1, 3, 60, 7].into_iter().cycle()),
        ) else {
            return false;
        };
        (whole.iter().flatten())
            .zip(cut.iter().flatten())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    }
    /// A processor of the node, its settings applied (unboxed: [`DspNode::try_processor`]
    /// boxes it).
    fn make_processor(&self) -> Result<FaustProcessor, String> {
        // An instance that libfaust refuses (out of memory) is the node's error.
        let instance = self
            .factory
            .instance(self.rate)
            .map_err(|e| e.to_string())?;
        let mut p = FaustProcessor {
            compute: instance.fns.compute,
            ins: vec![std::ptr::null_mut(); self.factory.inputs].into(),
            outs: vec![std::ptr::null_mut(); self.factory.outputs].into(),
            zeros: vec![0.0; self.block].into(),
            spare: vec![0.0; self.block].into(),
            settings: self.settings.clone(),
            groups: self.groups.clone(),
            live: vec![f32::NAN; self.factory.params.len()].into(),
            volume: self.volume,
            failed: false,
            instance,
        };
        p.apply_settings();
        Ok(p)
    }
}

impl DspNode for FaustNode {
    fn inputs(&self) -> usize {
        self.factory.inputs
    }

    fn outputs(&self) -> usize {
        self.factory.outputs
    }

    fn splits_in_time(&self) -> bool {
        *self.splits.get_or_init(|| self.cut_calls_agree())
    }

    fn memory(&self) -> usize {
        self.factory.state_bytes.map_or(0, |b| {
            usize::try_from(b.saturating_sub(self.factory.table_bytes)).unwrap_or(usize::MAX)
        })
    }

    fn shared_memory(&self) -> Option<fugue_dsp::SharedMemory> {
        // The tables of one compiled program, whose nodes share its factory.
        (self.factory.table_bytes > 0).then(|| {
            let origin: Arc<dyn std::any::Any + Send + Sync> = self.factory.clone();
            (
                origin,
                usize::try_from(self.factory.table_bytes).unwrap_or(usize::MAX),
            )
        })
    }

    fn processor(&self) -> Box<dyn Processor> {
        // Only through `try_processor` in the engine; a caller that cannot take a failure
        // gets the reason as a panic.
        self.try_processor().unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_processor(&self) -> Result<Box<dyn Processor>, String> {
        self.make_processor().map(isolated)
    }

    /// The program's ports and its parameters with their ranges (all live), each with the
    /// value the graph sets, if any.
    fn describe(&self) -> Vec<String> {
        let params: Vec<String> = self
            .factory
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_input())
            .map(|(i, p)| {
                // The last setting of a parameter is the one that applies.
                match self.settings.iter().rev().find(|&&(k, _)| k == i) {
                    Some(&(_, v)) => format!(
                        "{} {v} as set ({} to {}, the program's default {})",
                        p.path, p.min, p.max, p.init
                    ),
                    None => format!("{} ({} to {}, initially {})", p.path, p.min, p.max, p.init),
                }
            })
            .collect();
        vec![
            format!(
                "Faust program: {} input(s), {} output(s), {} backend",
                self.factory.inputs,
                self.factory.outputs,
                self.factory.backend().name()
            ),
            if params.is_empty() {
                "no parameter".to_string()
            } else {
                format!("parameters (live): {}", params.join(", "))
            },
        ]
    }

    /// The paths of the parameters that live parameter `param` sets (`volume` for itself).
    fn live_parts(&self, param: usize) -> Vec<String> {
        let params = &self.factory.params;
        let n = params.len();
        let set: Vec<usize> = match param.checked_sub(n + 1) {
            Some(k) => self.groups.get(k).map(|g| g.to_vec()).unwrap_or_default(),
            None => vec![param],
        };
        set.into_iter()
            .map(|i| {
                params
                    .get(i)
                    .map_or("volume".to_string(), |p| p.path.clone())
            })
            .collect()
    }

    /// Every input parameter (by label, path or path's end), every set of them that one
    /// name gives ([`FaustNode::groups`]), and `volume`.
    fn live_param(&self, attr: &str) -> Option<usize> {
        let n = self.factory.params.len();
        if attr == "volume" {
            return Some(n);
        }
        match inputs_named(&self.factory.params, attr).as_slice() {
            [] => None,
            [one] => Some(*one),
            many => self
                .groups
                .iter()
                .position(|g| **g == *many)
                .map(|k| n + 1 + k),
        }
    }
}

/// One instance and the pointer arrays that `compute` takes, sized when it is made.
struct FaustProcessor {
    instance: Instance,
    compute: Compute,
    settings: Arc<[(usize, f32)]>,
    /// [`FaustNode::groups`].
    groups: Arc<[Box<[usize]>]>,
    /// Each parameter's value set while playing (NaN: none), written again after a reset.
    live: Box<[f32]>,
    ins: Box<[*mut f32]>,
    outs: Box<[*mut f32]>,
    /// Silence, for an input port the engine gives no buffer.
    zeros: Box<[f32]>,
    /// Where an output the engine gives no buffer goes.
    spare: Box<[f32]>,
    volume: f32,
    /// Set when an integer division trapped ([`fugue_dsp::foreign`]): the node then plays
    /// silence without computing (each division that traps costs a signal, microseconds)
    /// until a parameter is set or the node is reset.
    failed: bool,
}

// SAFETY: the instance's memory and the pointers (into its zones and into this processor's
// own buffers) are used only by the thread that holds the processor; libfaust instances are
// independent of one another and of the thread that made them.
unsafe impl Send for FaustProcessor {}

impl FaustProcessor {
    /// Writes the node's parameter values into the instance's zones, then the values set
    /// while playing.
    fn apply_settings(&mut self) {
        for &(i, v) in self.settings.iter() {
            self.instance.write_zone(i, v);
        }
        for (i, &v) in self.live.iter().enumerate() {
            if !v.is_nan() {
                self.instance.write_zone(i, v);
            }
        }
    }

    /// Runs `compute` on frames `start..start + n` of every buffer (`n` at most the block).
    fn compute_part(
        &mut self,
        inputs: &[&[f32]],
        outputs: &mut [&mut [f32]],
        start: usize,
        n: usize,
    ) {
        for (i, slot) in self.ins.iter_mut().enumerate() {
            *slot = match inputs.get(i) {
                // Faust only reads its inputs: the pointer is never written through.
                Some(x) => x[start..].as_ptr().cast_mut(),
                None => self.zeros.as_mut_ptr(),
            };
        }
        for (j, slot) in self.outs.iter_mut().enumerate() {
            *slot = match outputs.get_mut(j) {
                Some(o) => o[start..].as_mut_ptr(),
                None => self.spare.as_mut_ptr(),
            };
        }
        // SAFETY: the instance is live; `ins` and `outs` hold exactly the program's numbers of
        // inputs and outputs, each pointing to at least `n` floats (the slices from `start`
        // are at least `n` long, `zeros` and `spare` are a block long and `n` is at most
        // that); outputs are distinct mutable buffers, inputs are only read.
        unsafe {
            (self.compute)(
                self.instance.dsp,
                n as i32,
                self.ins.as_mut_ptr(),
                self.outs.as_mut_ptr(),
            )
        };
    }
}

impl FaustProcessor {
    /// Runs the program over every frame of the buffers, and scales by `volume`; returns
    /// how many of its integer divisions trapped ([`fugue_dsp::foreign`]), which gave 0.
    fn compute_block(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) -> u32 {
        let frames = outputs
            .first()
            .map(|o| o.len())
            .or_else(|| inputs.first().map(|x| x.len()))
            .unwrap_or(0);
        let cap = self.zeros.len();
        let ((), traps) = fugue_dsp::foreign::guarded(|| {
            let mut start = 0;
            while start < frames {
                let n = (frames - start).min(cap);
                self.compute_part(inputs, outputs, start, n);
                start += n;
            }
        });
        if self.volume != 1.0 {
            for o in outputs.iter_mut() {
                for x in o.iter_mut() {
                    *x *= self.volume;
                }
            }
        }
        traps
    }
}

impl Processor for FaustProcessor {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        if self.failed {
            for o in outputs.iter_mut() {
                o.fill(0.0);
            }
            return;
        }
        if self.compute_block(inputs, outputs) > 0 {
            self.failed = true;
            // The engine silences the node for the cycle and reports the message.
            division_by_zero();
        }
    }

    fn reset(&mut self) {
        self.failed = false;
        let dsp = self.instance.dsp;
        // SAFETY: the instance is live; these reset its parameters to their defaults and
        // clear its state (delay lines, filter memory), without allocating.
        unsafe {
            (self.instance.fns.reset_ui)(dsp);
            (self.instance.fns.clear)(dsp);
        }
        self.apply_settings();
    }

    /// Parameter `param` of the program (its zone, read by `compute` between calls),
    /// `volume` (the index after the last parameter), or after it every parameter of a group
    /// ([`FaustNode::groups`]).
    fn set_param(&mut self, param: usize, value: f64) {
        // A new value may end a division by zero: computing is tried again.
        self.failed = false;
        let n = self.live.len();
        if param == n {
            self.volume = value as f32;
        } else if param < n {
            self.live[param] = value as f32;
            self.instance.write_zone(param, value as f32);
        } else if let Some(len) = self.groups.get(param - n - 1).map(|g| g.len()) {
            // By index (no copy of the group: this runs on the audio thread).
            for j in 0..len {
                let i = self.groups[param - n - 1][j];
                self.live[i] = value as f32;
                self.instance.write_zone(i, value as f32);
            }
        }
    }
}

/// The panic of a program whose integer division trapped ([`fugue_dsp::foreign`]).
#[cold]
#[inline(never)]
fn division_by_zero() -> ! {
    std::panic::panic_any(fugue_dsp::Failure(
        "its Faust program divided an integer by zero, which has no result: a `%` or an integer `/` whose right side was 0 (or the lowest integer by -1), as a parameter or an input made it; the node plays silence until one of its parameters is set (in a host, its graph stays silent until unloaded)".to_string(),
    ))
}

/// A `faust` node made in memory from `code` (for tests and probes): its control side, as
/// the kind builds it.
pub fn node_for_code(
    code: &str,
    backend: &str,
    rate: f64,
    block: usize,
) -> Result<Box<dyn DspNode>, NodeError> {
    let node = fugue_graph::Node::new("dsp", "faust")
        .with_attr("code", fugue_graph::Value::Str(code.to_string()))
        .with_attr("backend", fugue_graph::Value::Str(backend.to_string()));
    let ctx = NodeContext {
        node: &node,
        inputs: 0,
        outputs: 1,
        in_edges: 0,
        sample_rate: rate,
        block,
        rate: fugue_dsp::Ratio::ONE,
        engine_rate: rate,
        engine_block: block,
        folder: Some(Path::new(".")),
    };
    build(&ctx)
}
