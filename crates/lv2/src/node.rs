//! The `lv2` kind: a graph node becomes an instance of the plugin its `uri` names, its other
//! attributes the values of the plugin's control inputs.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use fugue_dsp::memory::size_in_words;
use fugue_dsp::{attrs, DspNode, LintNote, NodeContext, NodeError, Processor};

use crate::ffi::Opaque;
use crate::instance::{Instance, Recipe, Refused, Silent};
use crate::world::{world, PluginInfo, PortKind, World};
use crate::{nearest, uris};

/// What the kind's constructor shares among its nodes: where its warnings go, and which it
/// has said already (each once).
pub struct Kind {
    warn: Box<dyn Fn(&str) + Send + Sync>,
    said: Mutex<HashSet<String>>,
}

impl Kind {
    /// A kind that says its warnings through `warn`.
    pub fn new(warn: impl Fn(&str) + Send + Sync + 'static) -> Kind {
        Kind {
            warn: Box::new(warn),
            said: Mutex::new(HashSet::new()),
        }
    }

    fn warn(&self, w: String) {
        let mut said = self.said.lock().unwrap_or_else(|p| p.into_inner());
        if said.insert(w.clone()) {
            (self.warn)(&w);
        }
    }

    /// The constructor: the `lv2` node of `ctx`.
    pub fn build(self: &Arc<Self>, ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
        let uri = match ctx.node.attr("uri") {
            Some(v) => v.as_str().into_owned(),
            None => {
                return Err(NodeError::MissingAttr {
                    node: ctx.name().to_string(),
                    kind: ctx.kind().to_string(),
                    attr: "uri".into(),
                    what: "the URI of an installed LV2 plugin; `fugue plugins` lists them".into(),
                })
            }
        };
        let world = world().map_err(|e| attrs::bad_ports(ctx, e.to_string()))?;
        if let Some(w) = crate::load_problems_line(world) {
            self.warn(w);
        }
        let Some((plugin, raw)) = world.find(&uri) else {
            let near = nearest::uris(world.plugins().iter().map(|p| p.uri.as_str()), &uri, 3);
            let reason = if near.is_empty() {
                match std::env::var_os("LV2_PATH") {
                    Some(path) => format!(
                        "is not an installed LV2 plugin (no plugin is installed in LV2_PATH={}; Debian packages mda-lv2 and swh-lv2 hold some)",
                        path.to_string_lossy()
                    ),
                    None => "is not an installed LV2 plugin (no plugin is installed; Debian packages mda-lv2 and swh-lv2 hold some)".to_string(),
                }
            } else {
                format!(
                    "is not an installed LV2 plugin; the nearest installed: {} (`fugue plugins` lists them all)",
                    near.join(", ")
                )
            };
            return Err(attrs::bad(ctx, "uri", &uri, &reason));
        };
        supported(ctx, plugin)?;
        if ctx.sample_rate < MIN_RATE {
            return Err(attrs::bad_ports(
                ctx,
                format!(
                    "is plugin <{uri}>, which would run at {} Hz (the graph's rate, through the resamplers before it); LV2 plugins are written for audio rates, and some divide by zero or crash below a few kHz, so fugue runs them at {MIN_RATE} Hz or more",
                    ctx.sample_rate
                ),
            ));
        }
        if ctx.sample_rate > MAX_RATE {
            return Err(attrs::bad_ports(
                ctx,
                format!(
                    "is plugin <{uri}>, which would run at {} Hz (the graph's rate, through the resamplers before it); plugins size their memory by the rate they are given (delay lines of seconds), unbounded by fugue, so they run at {MAX_RATE} Hz or less",
                    ctx.sample_rate
                ),
            ));
        }
        let audio_in = plugin.audio(true).count();
        let audio_out = plugin.audio(false).count();
        for (used, has, what, verb) in [
            (ctx.inputs, audio_in, "input", "gives it"),
            (ctx.outputs, audio_out, "output", "uses"),
        ] {
            if used > has {
                return Err(attrs::bad_ports(
                    ctx,
                    format!(
                        "is plugin <{uri}> with {has} audio {what}(s), but the graph {verb} {used} {what} port(s)"
                    ),
                ));
            }
        }
        let values = self.controls(ctx, plugin)?;
        // The plugin's library, loaded first by us: one that cannot be loaded (a missing
        // file, a missing symbol) is said with the loader's reason, before lilv tries it
        // (and prints its own line). Held until the instance is made, so that lilv's load
        // of it is not a second first load.
        let _library = load_library(world, raw, &uri).map_err(|why| attrs::bad_ports(ctx, why))?;
        let recipe = Arc::new(Recipe {
            world,
            raw,
            plugin: plugin.clone(),
            rate: ctx.sample_rate,
            max_block: ctx.block,
            values,
        });
        let first = recipe.instance().map_err(|why| {
            attrs::bad_ports(
                ctx,
                match why {
                    Refused::Failed => format!(
                        "could not instantiate plugin <{uri}> at {} Hz (its instantiate failed)",
                        ctx.sample_rate
                    ),
                    Refused::Memory { took, held, limit } => format!(
                        "is plugin <{uri}>, which took {} when instantiated at {} Hz: that makes the LV2 plugins of the process hold {}, more than the limit of {} (half the machine's memory, or of the address space where `ulimit -v` limits it); use fewer instances of it, or a lower rate",
                        size_in_words(took),
                        ctx.sample_rate,
                        size_in_words(held),
                        size_in_words(limit)
                    ),
                },
            )
        })?;
        Ok(Box::new(Lv2Node {
            recipe,
            name: ctx.name().to_string(),
            audio_in,
            audio_out,
            first: Mutex::new(Some(first)),
            kind: Arc::clone(self),
        }))
    }

    /// The value of every port: each control input from its attribute (range-checked) or
    /// its default; an attribute that names no control is warned about.
    fn controls(&self, ctx: &NodeContext<'_>, plugin: &PluginInfo) -> Result<Vec<f32>, NodeError> {
        let rate = ctx.sample_rate;
        let mut values: Vec<f32> = plugin.ports.iter().map(|p| p.initial(rate)).collect();
        for (attr, value) in &ctx.node.attrs {
            if attr == "uri" {
                continue;
            }
            // An attribute that names no control is said by the kind's lint ([`lint`]).
            let Some(port) = plugin.controls().find(|p| p.symbol == *attr) else {
                continue;
            };
            let v = attrs::number(ctx, attr)?.expect("the attribute is present");
            // A control is a 32-bit float: a value past its largest would reach the plugin as
            // an infinity (a control without a range lets any number through below).
            if v.is_finite() && !(v as f32).is_finite() {
                return Err(attrs::bad(
                    ctx,
                    attr,
                    &value.as_str(),
                    &format!(
                        "is beyond what control `{attr}` of plugin <{}> holds (a 32-bit float, within ±{:e})",
                        plugin.uri,
                        f32::MAX
                    ),
                ));
            }
            let (lo, hi) = port.range(rate);
            // A bound written as the plugin's range shows it is let through (and clamped):
            // the range is a float's rounding of the plugin's figures.
            let slack = 1e-6 * lo.abs().max(hi.abs()).max(1.0);
            let slack = if slack.is_finite() { slack } else { 0.0 };
            // A plugin whose minimum lies above its maximum gives no range that any value
            // could meet: it is not enforced (its default plays, and so does what is set).
            let inverted = lo > hi;
            if (!inverted && ((!lo.is_nan() && v < lo - slack) || (!hi.is_nan() && v > hi + slack)))
                || !v.is_finite()
            {
                return Err(attrs::bad(
                    ctx,
                    attr,
                    &value.as_str(),
                    &format!(
                        "is outside the range of control `{attr}` of plugin <{}>: {} to {}{}",
                        plugin.uri,
                        six_digits(lo),
                        six_digits(hi),
                        // A range given as a fraction of the rate holds at this rate only.
                        if port.sample_rate {
                            format!(" at {rate} Hz")
                        } else {
                            String::new()
                        }
                    ),
                ));
            }
            let v = if lo <= hi { v.clamp(lo, hi) } else { v };
            // A switch is off or on; a whole-number control takes whole numbers.
            let (off, on) = (
                if lo.is_nan() { 0.0 } else { lo },
                if hi.is_nan() { 1.0 } else { hi },
            );
            let refused = if port.toggled && v != off && v != on {
                Some(format!(
                    "is not a value of switch `{attr}` of plugin <{}>: {off} (off) or {on} (on)",
                    plugin.uri
                ))
            } else if port.integer && !port.toggled && v.fract() != 0.0 {
                Some(format!(
                    "is not a whole number, which control `{attr}` of plugin <{}> takes",
                    plugin.uri
                ))
            } else {
                None
            };
            if let Some(reason) = refused {
                return Err(attrs::bad(ctx, attr, &value.as_str(), &reason));
            }
            values[port.index as usize] = v as f32;
        }
        Ok(values)
    }
}

/// The lowest rate a plugin is run at, Hz: the lowest of the rates LV2 hosts commonly offer
/// (at 1 kHz and below, swh's retroFlange, gverb and others end the process).
pub const MIN_RATE: f64 = 8000.0;

/// The highest rate a plugin is run at, Hz: twice the highest rate audio interfaces offer
/// (384 kHz). A plugin allocates what it needs for the rate it is given, out of fugue's
/// reach: swh's tapeDelay at 196 MHz (behind a resampler of ratio 4096) took 8.4 GB.
pub const MAX_RATE: f64 = 768_000.0;

/// Refuses a plugin that requires a feature fugue does not provide, or has a port that fugue
/// cannot connect and the plugin does not let go unconnected.
fn supported(ctx: &NodeContext<'_>, plugin: &PluginInfo) -> Result<(), NodeError> {
    let uri = &plugin.uri;
    if let Some(why) = &plugin.malformed {
        return Err(attrs::bad_ports(
            ctx,
            format!("is plugin <{uri}>, whose description is malformed ({why}), so its ports cannot be read; the bundle's .ttl files need fixing"),
        ));
    }
    // Every feature missing, in one sentence: naming one at a time would refuse the plugin
    // again for the next.
    let missing: Vec<String> = plugin
        .required_features
        .iter()
        .filter(|f| !uris::PROVIDED.contains(&f.as_str()))
        .map(|f| format!("{} (<{f}>)", uris::describe(f)))
        .collect();
    if !missing.is_empty() {
        let (them, which) = if missing.len() == 1 {
            (missing[0].clone(), "a feature")
        } else {
            let (last, rest) = missing.split_last().expect("two or more");
            (format!("{} and {last}", rest.join(", ")), "features")
        };
        return Err(attrs::bad_ports(
            ctx,
            format!("is plugin <{uri}>, which requires {them}, {which} fugue does not provide"),
        ));
    }
    let options: Vec<&String> = plugin
        .required_options
        .iter()
        .filter(|o| !uris::OPTIONS_PASSED.contains(&o.as_str()))
        .collect();
    if !options.is_empty() {
        let them = options
            .iter()
            .map(|o| format!("<{o}>"))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(attrs::bad_ports(
            ctx,
            format!(
                "is plugin <{uri}>, which requires the option{} {them} at instantiation, {} fugue does not pass (it passes the block lengths and the sample rate)",
                if options.len() == 1 { "" } else { "s" },
                if options.len() == 1 { "one" } else { "ones" },
            ),
        ));
    }
    if let Some(p) = plugin
        .ports
        .iter()
        .find(|p| !p.optional && matches!(p.kind, PortKind::Cv | PortKind::Other))
    {
        let what = if p.kind == PortKind::Cv {
            "a CV port"
        } else {
            "a port of a type fugue does not know"
        };
        return Err(attrs::bad_ports(
            ctx,
            format!(
                "is plugin <{uri}>, whose port `{}` is {what}, which fugue cannot connect and the plugin requires",
                p.symbol
            ),
        ));
    }
    if plugin.ports.is_empty() && !plugin.name.is_empty() {
        // Its description was read (it gives the plugin's name) and declares no port.
        return Err(attrs::bad_ports(
            ctx,
            format!(
                "is plugin <{uri}> ({}), whose description as read declares no port, so it has no audio port (where its .ttl files have an error, lilv's message above says which)",
                plugin.name
            ),
        ));
    }
    if plugin.ports.is_empty() {
        // Its manifest names it, but no port was read: the files that describe it are
        // missing, did not parse, or describe a port lilv refuses (lilv says which, on
        // standard error).
        return Err(attrs::bad_ports(
            ctx,
            format!(
                "is plugin <{uri}>, of which no port could be read: the bundle's files that describe it (its .ttl files) are missing, could not be parsed, or describe a port that lilv refuses (a bad symbol, say; lilv's message above, if any, says which)"
            ),
        ));
    }
    if plugin.audio(true).count() + plugin.audio(false).count() == 0 {
        return Err(attrs::bad_ports(
            ctx,
            format!("is plugin <{uri}>, which has no audio port"),
        ));
    }
    Ok(())
}

/// Loads plugin `raw`'s shared library (of `uri`), when its description names one as a file;
/// the error says which file and the loader's reason.
fn load_library(
    world: &World,
    raw: *const Opaque,
    uri: &str,
) -> Result<Option<libloading::os::unix::Library>, String> {
    let Some(lib) = world.library_path(raw) else {
        return Ok(None);
    };
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // Every symbol resolved now, as lilv opens it: a missing function is said here too.
    // SAFETY: the plugin's own library, which lilv is about to load for the instance
    // (running its initialisers) in any case.
    match unsafe { Library::open(Some(&lib), RTLD_NOW | RTLD_LOCAL) } {
        Ok(l) => {
            // An LV2 library gives its plugins through one of these two functions: without
            // either, lilv cannot find the plugin in it (and its instantiate is never called).
            // SAFETY: only looked up, never called here (lilv calls it as its type says).
            let entry = ["lv2_descriptor\0", "lv2_lib_descriptor\0"]
                .iter()
                .any(|name| unsafe { l.get::<*const c_void>(name.as_bytes()) }.is_ok());
            if !entry {
                return Err(format!(
                    "could not load plugin <{uri}>: its library {} is not an LV2 plugin library (it has neither function `lv2_descriptor` nor `lv2_lib_descriptor`)",
                    lib.display()
                ));
            }
            Ok(Some(l))
        }
        Err(e) => {
            let shown = lib.display().to_string();
            let e = e.to_string();
            // The loader's text often starts with the file's name again.
            let why = e.strip_prefix(&format!("{shown}: ")).unwrap_or(&e);
            Err(format!(
                "could not load plugin <{uri}>: its library {shown} cannot be loaded: {why}"
            ))
        }
    }
}

/// The control side of an `lv2` node.
struct Lv2Node {
    /// The plugin, rate, block and control values every instance is made with.
    recipe: Arc<Recipe>,
    name: String,
    audio_in: usize,
    audio_out: usize,
    /// The instance made at load, for the first processor.
    first: Mutex<Option<Instance>>,
    /// The kind, which says a failure to instantiate the plugin again.
    kind: Arc<Kind>,
}

impl DspNode for Lv2Node {
    fn inputs(&self) -> usize {
        self.audio_in
    }

    fn splits_in_time(&self) -> bool {
        // A plugin may do per call what it does not do per frame (ramp a control from its
        // last value over the call, refresh a coefficient at each call): its samples depend
        // on the length of the calls, so a cycle is never cut into sub-blocks for it.
        false
    }

    fn outputs(&self) -> usize {
        self.audio_out
    }

    fn processor(&self) -> Box<dyn Processor> {
        let first = self.first.lock().unwrap_or_else(|p| p.into_inner()).take();
        let instance = match first {
            Some(i) => Ok(i),
            None => self.recipe.instance(),
        };
        match instance {
            Ok(i) => fugue_dsp::isolated(i),
            Err(why) => {
                let why = match why {
                    Refused::Failed => String::new(),
                    Refused::Memory { took, held, limit } => format!(
                        " (it took {}, which would make the LV2 plugins of the process hold {}, more than the limit of {})",
                        size_in_words(took),
                        size_in_words(held),
                        size_in_words(limit)
                    ),
                };
                self.kind.warn(format!(
                    "node `{}`: plugin <{}> could not be instantiated again{why}; this copy of the node plays silence",
                    self.name, self.recipe.plugin.uri
                ));
                fugue_dsp::isolated(Silent)
            }
        }
    }

    fn memory(&self) -> usize {
        let atoms = self
            .recipe
            .plugin
            .ports
            .iter()
            .filter(|p| p.kind == PortKind::Atom)
            .count();
        atoms * crate::instance::ATOM_BYTES + (self.audio_in + 1) * self.recipe.max_block * 4
    }

    /// Every control input, by symbol: its port index.
    fn live_param(&self, attr: &str) -> Option<usize> {
        self.recipe
            .plugin
            .controls()
            .find(|p| p.symbol == attr)
            .map(|p| p.index as usize)
    }

    /// The plugin, its controls as this node sets them, and the control outputs it reports.
    fn describe(&self) -> Vec<String> {
        let p = &self.recipe.plugin;
        let range = |port: &crate::PortInfo| {
            let (lo, hi) = port.range(self.recipe.rate);
            if lo.is_nan() && hi.is_nan() {
                "no range given".to_string()
            } else {
                // As the range errors word it: six significant digits (4.8, not 4.7999997).
                let inverted = if lo > hi {
                    ", the plugin's minimum above its maximum: not enforced"
                } else {
                    ""
                };
                format!("{} to {}{inverted}", six_digits(lo), six_digits(hi))
            }
        };
        let mut v = vec![format!(
            "plugin <{}>, {} ({}): {} audio input(s), {} audio output(s)",
            p.uri, p.name, p.class, self.audio_in, self.audio_out
        )];
        let controls: Vec<String> = p
            .controls()
            .map(|c| {
                format!(
                    "{} {} ({})",
                    c.symbol,
                    self.recipe.values[c.index as usize],
                    range(c)
                )
            })
            .collect();
        if !controls.is_empty() {
            v.push(format!("controls: {}", controls.join(", ")));
        }
        let outputs: Vec<String> = p
            .control_outputs()
            .map(|c| format!("{} ({})", c.symbol, range(c)))
            .collect();
        if !outputs.is_empty() {
            v.push(format!(
                "control outputs, reported by `fugue profile`: {}",
                outputs.join(", ")
            ));
        }
        v
    }
}

/// A port's name without the unit in parentheses that ends many names (`Frequency (Hz)`:
/// `Frequency`).
fn bare_name(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name).trim()
}

/// What the kind's lint says of the `lv2` node of `ctx` (the registry's linter): each
/// attribute that names none of the plugin's controls (with the control it likely means),
/// a plugin that does not declare itself real-time safe, and one that takes events (an
/// instrument's notes) that fugue does not send. A node whose plugin cannot be found is left
/// to the build, which says why.
pub fn lint(ctx: &NodeContext<'_>) -> Vec<LintNote> {
    let Some(uri) = ctx.node.attr("uri").map(|v| v.as_str().into_owned()) else {
        return Vec::new();
    };
    let Ok(world) = world() else {
        return Vec::new();
    };
    let Some((plugin, _)) = world.find(&uri) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let symbols: Vec<&str> = plugin.controls().map(|p| p.symbol.as_str()).collect();
    for (attr, _) in &ctx.node.attrs {
        if attr == "uri" || symbols.contains(&attr.as_str()) {
            continue;
        }
        // The control meant: the same symbol in another case, the port's name given for its
        // symbol (with or without the unit in parentheses that ends many names:
        // `Frequency (Hz)`), else the nearest symbol.
        let meant = plugin
            .controls()
            .find(|p| {
                p.symbol.eq_ignore_ascii_case(attr)
                    || p.name.eq_ignore_ascii_case(attr)
                    || bare_name(&p.name).eq_ignore_ascii_case(attr)
            })
            .map(|p| p.symbol.as_str())
            .or_else(|| fugue_graph::suggest::nearest(attr, symbols.iter().copied()));
        out.push(LintNote::unread(
            attr,
            format!(
                "node `{}` has attribute `{attr}`, which is no control of plugin <{uri}>{} (its controls: {})",
                ctx.name(),
                meant.map(|m| format!("; did you mean `{m}`?")).unwrap_or_default(),
                if symbols.is_empty() { "none".to_string() } else { symbols.join(", ") }
            ),
        ));
    }
    // The attributes the graph itself reads (a node's ports and cost) never reach the
    // plugin: said when the plugin has a control of that symbol, which the user may have
    // meant, and which no attribute can set (it keeps its default).
    for (attr, given, what) in ctx.graph_attributes() {
        if !given {
            continue;
        }
        if let Some(p) = plugin.controls().find(|p| p.symbol == attr) {
            out.push(LintNote::node(format!(
                "node `{}`: attribute `{attr}` is the graph's ({what}), not control `{attr}` of plugin <{uri}>, which no attribute can set: it keeps its default, {}",
                ctx.name(),
                six_digits(f64::from(p.initial(ctx.sample_rate))),
            )));
        }
    }
    // A control named as the attributes every `lv2` node gives (its kind, the plugin's URI)
    // can never be set, whatever the graph says.
    for (attr, what) in [
        ("kind", "the node's kind"),
        ("uri", "the plugin the node runs"),
    ] {
        if let Some(p) = plugin.controls().find(|p| p.symbol == attr) {
            out.push(LintNote::node(format!(
                "node `{}`: control `{attr}` of plugin <{uri}> cannot be set: attribute `{attr}` is {what}; the control keeps its default, {}",
                ctx.name(),
                six_digits(f64::from(p.initial(ctx.sample_rate))),
            )));
        }
    }
    // Said of the plugin, not the node: once for all its nodes.
    if !plugin.hard_rt() {
        out.push(LintNote::real_time(format!(
            "plugin <{uri}> does not declare lv2:hardRTCapable: its run may allocate or block, so that in real time a cycle may miss its deadline"
        )));
    }
    if let Some(p) = plugin
        .ports
        .iter()
        .find(|p| p.input && p.kind == PortKind::Atom)
    {
        out.push(LintNote::node(format!(
            "plugin <{uri}> takes events (MIDI notes) on its port `{}`, which fugue leaves empty: an instrument plays no note",
            p.symbol
        )));
    }
    out
}

/// `x` to six significant digits, as a user would write it: a bound that is a float's
/// rounding of the plugin's figure times the rate (0.0001 x 48000 in 32 bits,
/// 4.7999997) reads as the figure meant (4.8).
fn six_digits(x: f64) -> f64 {
    if x.is_finite() && x != 0.0 {
        format!("{x:.5e}").parse().unwrap_or(x)
    } else {
        x
    }
}
