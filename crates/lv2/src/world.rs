//! The LV2 world: lilv opened once per process, every installed plugin read once into a
//! [`PluginInfo`] (what `fugue plugins` lists and what the kind checks a node against), and
//! the lock that serialises every later call into lilv.

use std::ffi::{c_char, CStr, CString};
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde::Serialize;

use crate::ffi::{Lilv, Opaque};
use crate::uris;
use crate::Lv2Error;

/// What a port carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PortKind {
    /// Audio samples (`lv2:AudioPort`).
    Audio,
    /// One value per run (`lv2:ControlPort`).
    Control,
    /// Atom sequences: MIDI, events (`atom:AtomPort`).
    Atom,
    /// A control-voltage signal (`lv2:CVPort`).
    Cv,
    /// Anything else (the old event extension, ...).
    Other,
}

/// One port of a plugin.
#[derive(Clone, Debug, Serialize)]
pub struct PortInfo {
    /// Its index in the plugin.
    pub index: u32,
    /// Its symbol (the attribute that sets a control input).
    pub symbol: String,
    /// Its name.
    pub name: String,
    /// What it carries.
    pub kind: PortKind,
    /// Whether it is an input (else an output).
    pub input: bool,
    /// Whether the plugin runs with it unconnected (`lv2:connectionOptional`).
    pub optional: bool,
    /// Whether its range is a fraction of the sample rate (`lv2:sampleRate`).
    pub sample_rate: bool,
    /// Whether it takes whole numbers only (`lv2:integer`).
    pub integer: bool,
    /// Whether it is a switch, off or on (`lv2:toggled`).
    pub toggled: bool,
    /// The lowest value (controls; NaN when the plugin gives none, or one that a 32-bit
    /// float cannot hold).
    pub min: f32,
    /// The highest value (controls; NaN when the plugin gives none, or one that a 32-bit
    /// float cannot hold).
    pub max: f32,
    /// The default value (controls; NaN when the plugin gives none, or one that a 32-bit
    /// float cannot hold).
    pub default: f32,
}

/// A bound or default as lilv read it: NaN (none) for a value too large for a 32-bit float,
/// which lilv makes infinite (a description's `1e300`): an infinite default would reach the
/// plugin's code as such.
fn declared(v: f32) -> f32 {
    if v.is_finite() {
        v
    } else {
        f32::NAN
    }
}

impl PortInfo {
    /// The port's range at `rate` Hz: [`min`](PortInfo::min) and [`max`](PortInfo::max),
    /// times the rate for a port whose range is a fraction of it.
    pub fn range(&self, rate: f64) -> (f64, f64) {
        let k = if self.sample_rate { rate } else { 1.0 };
        (f64::from(self.min) * k, f64::from(self.max) * k)
    }

    /// The value an unset control takes: the default, else the minimum, else 0. Where the
    /// range is a fraction of the rate, so is a default that lies in it (times the rate);
    /// a default outside it is taken as written, in Hz (swh's plugins give theirs so).
    /// The result is kept in the port's range at `rate` (a default in Hz may pass the top of
    /// a range that is a fraction of a low rate).
    pub fn initial(&self, rate: f64) -> f32 {
        for v in [self.default, self.min] {
            if v.is_nan() {
                continue;
            }
            let fraction = !(v < self.min || v > self.max);
            let v = if self.sample_rate && fraction {
                f64::from(v) * rate
            } else {
                f64::from(v)
            };
            let (lo, hi) = self.range(rate);
            return if lo <= hi {
                v.clamp(lo, hi) as f32
            } else {
                v as f32
            };
        }
        0.0
    }
}

/// One installed plugin.
#[derive(Clone, Debug, Serialize)]
pub struct PluginInfo {
    /// Its URI (`uri: "..."` in a graph).
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its class ("Reverb Plugin", ...).
    pub class: String,
    /// Its ports, in index order.
    pub ports: Vec<PortInfo>,
    /// The host features it requires.
    pub required_features: Vec<String>,
    /// The host features it can use.
    pub optional_features: Vec<String>,
    /// The extension interfaces it offers (state, worker, ...).
    pub extensions: Vec<String>,
    /// The options it requires the host to pass (`opts:requiredOption`).
    pub required_options: Vec<String>,
    /// Why its description is unusable, when it is: its ports' indices are not 0 to N - 1
    /// (then none of its ports is read: lilv would index an array by them).
    pub malformed: Option<String>,
}

impl PluginInfo {
    /// The audio ports that are inputs (`true`) or outputs (`false`), in index order.
    pub fn audio(&self, input: bool) -> impl Iterator<Item = &PortInfo> {
        self.ports
            .iter()
            .filter(move |p| p.kind == PortKind::Audio && p.input == input)
    }

    /// The control input ports, in index order.
    pub fn controls(&self) -> impl Iterator<Item = &PortInfo> {
        self.ports
            .iter()
            .filter(|p| p.kind == PortKind::Control && p.input)
    }

    /// The control output ports (meters, gain reductions, latencies), in index order.
    pub fn control_outputs(&self) -> impl Iterator<Item = &PortInfo> {
        self.ports
            .iter()
            .filter(|p| p.kind == PortKind::Control && !p.input)
    }

    /// Whether the plugin says that its `run` is real-time safe (`lv2:hardRTCapable`).
    pub fn hard_rt(&self) -> bool {
        let rt = |v: &Vec<String>| v.iter().any(|f| f == uris::HARD_RT);
        rt(&self.required_features) || rt(&self.optional_features)
    }
}

/// `rdf:type`.
const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// A plugin's class: lilv's label, unless it is the generic "Plugin" (lilv knows the
/// classes only from the LV2 specification's own bundle, which is often not installed), in
/// which case the first class of LV2's that the plugin says it is (`a lv2:ReverbPlugin`),
/// in words ("Reverb").
fn class_of(label: String, types: &[String]) -> String {
    if !label.is_empty() && label != "Plugin" {
        return label;
    }
    let named = types
        .iter()
        .filter_map(|t| t.strip_prefix("http://lv2plug.in/ns/lv2core#"))
        .find(|t| *t != "Plugin");
    let Some(name) = named else {
        return label;
    };
    let name = name.strip_suffix("Plugin").unwrap_or(name);
    // "MultiEQ" -> "Multi EQ": a space before an upper-case letter that follows a
    // lower-case one.
    let mut words = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && last_lower {
            words.push(' ');
        }
        last_lower = c.is_lowercase();
        words.push(c);
    }
    words
}

/// lilv, its world and the plugins read from it.
pub struct World {
    pub(crate) lilv: Lilv,
    /// Serialises every call into lilv and every instantiation, activation and freeing of a
    /// plugin (lilv is not thread-safe; LV2's instantiation functions may not run
    /// concurrently).
    lock: Mutex<()>,
    world: *mut Opaque,
    /// `lilv_world_get_all_plugins`'s plugins, in the order of [`World::plugins`].
    raw: Vec<*const Opaque>,
    plugins: Vec<PluginInfo>,
    /// What lilv printed while it read the installed descriptions (a bundle it could not
    /// parse), one line each: [`World::load_problems`].
    problems: Vec<String>,
}

// SAFETY: the world's pointers are used only under `lock` (`World::guard`) once `World::load`
// has returned; the rest is plain data.
unsafe impl Send for World {}
// SAFETY: as for Send: shared access to the pointers goes through `lock`.
unsafe impl Sync for World {}

static WORLD: OnceLock<Result<World, Lv2Error>> = OnceLock::new();

/// The most of lilv's messages kept while the world loads (the rest is dropped).
const MAX_CAPTURED: usize = 64 << 10;

/// Runs `f` with the process's standard error (descriptor 2) sent to a memory file, and
/// returns its result and what was written there (at most [`MAX_CAPTURED`] bytes, lossy
/// UTF-8). Where the memory file cannot be made, `f` runs with standard error as it is.
/// Another thread's message written meanwhile is captured with lilv's (the world loads
/// once, early: on the first `lv2` node or `fugue plugins`).
fn captured_stderr<R>(f: impl FnOnce() -> R) -> (R, String) {
    // SAFETY: plain descriptor calls on descriptors this function owns (`memfd`, `saved`)
    // and on 2, which is put back before returning; the name is NUL-terminated.
    unsafe {
        let memfd = libc::memfd_create(c"fugue-lilv".as_ptr(), libc::MFD_CLOEXEC);
        if memfd < 0 {
            return (f(), String::new());
        }
        let saved = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 3);
        if saved < 0 || libc::dup2(memfd, 2) < 0 {
            if saved >= 0 {
                libc::close(saved);
            }
            libc::close(memfd);
            return (f(), String::new());
        }
        let r = f();
        libc::dup2(saved, 2);
        libc::close(saved);
        let mut text = vec![0u8; MAX_CAPTURED];
        let n = libc::pread(memfd, text.as_mut_ptr().cast(), MAX_CAPTURED, 0);
        libc::close(memfd);
        text.truncate(n.max(0) as usize);
        (r, String::from_utf8_lossy(&text).into_owned())
    }
}

/// The process's LV2 world, loaded on the first call (lilv opened, every installed plugin
/// read), or why it cannot be.
pub fn world() -> Result<&'static World, Lv2Error> {
    WORLD
        .get_or_init(World::load)
        .as_ref()
        .map_err(Clone::clone)
}

impl World {
    fn load() -> Result<World, Lv2Error> {
        let lilv = Lilv::open().map_err(|reason| match crate::ffi::chosen() {
            Some(file) => Lv2Error::ChosenNotLilv {
                file: file.to_string_lossy().into_owned(),
                reason,
            },
            None => Lv2Error::NoLilv { reason },
        })?;
        // SAFETY: lilv_world_new has no preconditions; the world is never freed (it lives as
        // long as the process, as the plugins' data that instances point into).
        let world = unsafe { (lilv.lilv_world_new)() };
        if world.is_null() {
            return Err(Lv2Error::NoLilv {
                reason: "lilv_world_new failed".into(),
            });
        }
        if let Some(path) = absolute_lv2_path(std::env::var_os("LV2_PATH")) {
            let option = CString::new("http://drobilla.net/ns/lilv#lv2-path")
                .expect("no NUL in the option's URI");
            // SAFETY: `world` is live and known to this thread only; the node is made for
            // the call (lilv copies it) and freed once.
            unsafe {
                let value = (lilv.lilv_new_string)(world, path.as_ptr());
                (lilv.lilv_world_set_option)(world, option.as_ptr(), value);
                (lilv.lilv_node_free)(value);
            }
        }
        // lilv prints its errors (a bundle it cannot parse) on standard error itself, on
        // every command that reads the world, graphs of other plugins included: they are
        // captured while it reads the descriptions, for fugue to say once in its own words.
        let (mut w, problems) = captured_stderr(|| {
            // SAFETY: `world` is a live world; this thread is the only one that knows it.
            unsafe { (lilv.lilv_world_load_all)(world) };
            let mut w = World {
                lilv,
                lock: Mutex::new(()),
                world,
                raw: Vec::new(),
                plugins: Vec::new(),
                problems: Vec::new(),
            };
            w.read_plugins();
            w
        });
        w.problems = problems
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        Ok(w)
    }

    /// What lilv printed while it read the installed plugins' descriptions, one line each
    /// (empty when every bundle read well): fugue's front end says it once, in a warning.
    pub fn load_problems(&self) -> &[String] {
        &self.problems
    }

    /// The lock every call into lilv takes after the world is loaded.
    pub(crate) fn guard(&self) -> MutexGuard<'_, ()> {
        // A panic under the lock leaves nothing half-written on fugue's side.
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every installed plugin, in lilv's order (by URI).
    pub fn plugins(&self) -> &[PluginInfo] {
        &self.plugins
    }

    /// The plugin of `uri` and its lilv handle.
    pub(crate) fn find(&self, uri: &str) -> Option<(&PluginInfo, *const Opaque)> {
        let i = self.plugins.iter().position(|p| p.uri == uri)?;
        Some((&self.plugins[i], self.raw[i]))
    }

    /// The file of plugin `raw`'s shared library, as its description names it (`None` when
    /// it names none, or not as a file).
    pub(crate) fn library_path(&self, raw: *const Opaque) -> Option<std::path::PathBuf> {
        use std::os::unix::ffi::OsStrExt as _;
        let _lock = self.guard();
        // SAFETY: `raw` is a plugin of this world (never freed); the node returned belongs
        // to the plugin (not freed here).
        let node = unsafe { (self.lilv.lilv_plugin_get_library_uri)(raw) };
        if node.is_null() {
            return None;
        }
        // SAFETY: a live node; its string lives as long as it.
        let uri = unsafe { (self.lilv.lilv_node_as_string)(node) };
        if uri.is_null() {
            return None;
        }
        // SAFETY: `uri` is NUL-terminated; a null hostname pointer is allowed; the path
        // returned is lilv's to free with lilv_free, done below after it is copied.
        let p = unsafe { (self.lilv.lilv_file_uri_parse)(uri, std::ptr::null_mut()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: a non-null path from lilv is NUL-terminated.
        let path = std::ffi::OsStr::from_bytes(unsafe { CStr::from_ptr(p) }.to_bytes()).into();
        // SAFETY: allocated by lilv for the caller, freed once.
        unsafe { (self.lilv.lilv_free)(p.cast()) };
        Some(path)
    }

    /// The string of a lilv node (empty for null).
    fn string(&self, node: *const Opaque) -> String {
        if node.is_null() {
            return String::new();
        }
        // SAFETY: `node` is a live lilv node; lilv_node_as_string returns its string (or
        // null), valid while the node lives.
        let s: *const c_char = unsafe { (self.lilv.lilv_node_as_string)(node) };
        if s.is_null() {
            return String::new();
        }
        // SAFETY: a non-null string from lilv is NUL-terminated.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }

    /// The string of a node that the caller owns, which it frees.
    fn take_string(&self, node: *mut Opaque) -> String {
        let s = self.string(node);
        if !node.is_null() {
            // SAFETY: the node was returned to the caller to free, and is freed once.
            unsafe { (self.lilv.lilv_node_free)(node) };
        }
        s
    }

    /// The URIs of a node collection that the caller owns, which it frees.
    fn take_strings(&self, nodes: *mut Opaque) -> Vec<String> {
        self.take_each(nodes, |node| self.string(node))
    }

    /// `f` of each node of a collection that the caller owns, which it frees (none for null).
    /// `f` gets nodes that live until it returns.
    fn take_each<T>(&self, nodes: *mut Opaque, mut f: impl FnMut(*const Opaque) -> T) -> Vec<T> {
        let mut v = Vec::new();
        if nodes.is_null() {
            return v;
        }
        let l = &self.lilv;
        // SAFETY: `nodes` is a live collection; the iterator walks it and is not used after
        // its end; the collection is freed once, after the walk.
        unsafe {
            let mut it = (l.lilv_nodes_begin)(nodes);
            while !(l.lilv_nodes_is_end)(nodes, it) {
                v.push(f((l.lilv_nodes_get)(nodes, it)));
                it = (l.lilv_nodes_next)(nodes, it);
            }
            (l.lilv_nodes_free)(nodes);
        }
        v
    }

    /// A lilv URI node of `uri` (freed by the caller).
    fn uri(&self, uri: &str) -> *mut Opaque {
        let c = CString::new(uri).expect("the URIs of `uris` hold no NUL");
        // SAFETY: the world is live; lilv copies the string.
        unsafe { (self.lilv.lilv_new_uri)(self.world, c.as_ptr()) }
    }

    /// Why plugin `p`'s ports cannot be read, if they cannot: lilv numbers them by their
    /// `lv2:index`, which must run from 0 to N - 1 for N ports ([`MAX_PORTS`] at most;
    /// [`ports_numbered`]), and refuses a port whose `lv2:symbol` is missing or no C
    /// identifier ([`symbol_is_valid`]; lilv would print its own error for it at every
    /// command that reads the installed plugins). Read from the description's statements,
    /// not through lilv's port list, which allocates by the largest index and crashes on a
    /// huge one.
    ///
    /// # Safety
    /// `p` is a plugin of this loaded world; `port`, `index` and `symbol` are the live URI
    /// nodes of `lv2:port`, `lv2:index` and `lv2:symbol`.
    unsafe fn port_indices_malformed(
        &self,
        p: *const Opaque,
        [port, index, symbol]: [*const Opaque; 3],
    ) -> Option<String> {
        let l = &self.lilv;
        // Through the plugin, which loads the files that describe it first (a query of the
        // world would see only the manifest's statements).
        // SAFETY: the world is live and `p` is its plugin; the collection is the caller's,
        // freed once by `take_each`.
        let ports = unsafe { (l.lilv_plugin_get_value)(p, port) };
        let texts = self.take_each(ports, |node| {
            // SAFETY: the world is live, `node` one of its nodes for this call; the nodes
            // returned are the caller's, freed once by `take_string`.
            let [i, s] = [index, symbol].map(|what| unsafe {
                (l.lilv_world_get)(self.world, node, what, std::ptr::null())
            });
            (
                self.take_string(i),
                (!s.is_null()).then(|| self.take_string(s)),
            )
        });
        let mut seen = Vec::with_capacity(texts.len());
        for (text, symbol) in texts {
            match symbol {
                None => return Some("a port has no lv2:symbol".to_string()),
                Some(s) if !symbol_is_valid(&s) => {
                    return Some(format!(
                        "a port's lv2:symbol is `{s}`, which is not a C identifier (letters, digits and `_`, not starting with a digit)"
                    ))
                }
                Some(_) => {}
            }
            match text.trim().parse::<u64>() {
                Ok(v) => seen.push(v),
                Err(_) if text.is_empty() => return Some("a port has no lv2:index".to_string()),
                Err(_) => {
                    return Some(format!(
                        "a port's lv2:index is `{text}`, not a whole number"
                    ))
                }
            }
        }
        ports_numbered(&mut seen)
    }

    /// Reads every installed plugin (at load, before the world is shared).
    fn read_plugins(&mut self) {
        let classes = [
            (uris::AUDIO_PORT, PortKind::Audio),
            (uris::CONTROL_PORT, PortKind::Control),
            (uris::ATOM_PORT, PortKind::Atom),
            (uris::CV_PORT, PortKind::Cv),
        ]
        .map(|(u, k)| (self.uri(u), k));
        let input = self.uri(uris::INPUT_PORT);
        let optional = self.uri(uris::CONNECTION_OPTIONAL);
        let sample_rate = self.uri(uris::SAMPLE_RATE);
        let integer = self.uri(uris::INTEGER);
        let toggled = self.uri(uris::TOGGLED);
        let rdf_type = self.uri(RDF_TYPE);
        let required_option = self.uri(uris::REQUIRED_OPTION);
        let port_uri = self.uri(uris::PORT);
        let index_uri = self.uri(uris::INDEX);
        let symbol_uri = self.uri(uris::SYMBOL);
        let l = &self.lilv;
        // SAFETY: the world is live and loaded; `all` and the iterator are lilv's, walked to
        // the end and not kept.
        let raw: Vec<*const Opaque> = unsafe {
            let all = (l.lilv_world_get_all_plugins)(self.world);
            let mut v = Vec::new();
            let mut it = (l.lilv_plugins_begin)(all);
            while !(l.lilv_plugins_is_end)(all, it) {
                v.push((l.lilv_plugins_get)(all, it));
                it = (l.lilv_plugins_next)(all, it);
            }
            v
        };
        let mut plugins = Vec::with_capacity(raw.len());
        for &p in &raw {
            // SAFETY: `p` is a plugin of the loaded world; the nodes are live URI nodes.
            let malformed =
                unsafe { self.port_indices_malformed(p, [port_uri, index_uri, symbol_uri]) };
            // SAFETY: for every call of this block, `p` is a plugin of the loaded world and
            // its ports are that plugin's; the nodes passed are live URI nodes made above;
            // the arrays hold one value per port.
            let info = unsafe {
                // A malformed description's ports are not read at all: lilv would make an
                // array as long as the largest index and write past it for a gap.
                let n = if malformed.is_some() {
                    0
                } else {
                    (l.lilv_plugin_get_num_ports)(p)
                };
                let mut min = vec![f32::NAN; n as usize];
                let mut max = vec![f32::NAN; n as usize];
                let mut def = vec![f32::NAN; n as usize];
                if n > 0 {
                    (l.lilv_plugin_get_port_ranges_float)(
                        p,
                        min.as_mut_ptr(),
                        max.as_mut_ptr(),
                        def.as_mut_ptr(),
                    );
                }
                let ports = (0..n)
                    .map(|i| {
                        let port = (l.lilv_plugin_get_port_by_index)(p, i);
                        let kind = classes
                            .iter()
                            .find(|(c, _)| (l.lilv_port_is_a)(p, port, *c))
                            .map_or(PortKind::Other, |&(_, k)| k);
                        let k = i as usize;
                        PortInfo {
                            index: i,
                            symbol: self.string((l.lilv_port_get_symbol)(p, port)),
                            name: self.take_string((l.lilv_port_get_name)(p, port)),
                            kind,
                            input: (l.lilv_port_is_a)(p, port, input),
                            optional: (l.lilv_port_has_property)(p, port, optional),
                            sample_rate: (l.lilv_port_has_property)(p, port, sample_rate),
                            integer: (l.lilv_port_has_property)(p, port, integer),
                            toggled: (l.lilv_port_has_property)(p, port, toggled),
                            min: declared(min[k]),
                            max: declared(max[k]),
                            default: declared(def[k]),
                        }
                    })
                    .collect();
                let class = (l.lilv_plugin_get_class)(p);
                PluginInfo {
                    uri: self.string((l.lilv_plugin_get_uri)(p)),
                    name: self.take_string((l.lilv_plugin_get_name)(p)),
                    class: class_of(
                        if class.is_null() {
                            String::new()
                        } else {
                            self.string((l.lilv_plugin_class_get_label)(class))
                        },
                        &self.take_strings((l.lilv_plugin_get_value)(p, rdf_type)),
                    ),
                    ports,
                    required_features: self.take_strings((l.lilv_plugin_get_required_features)(p)),
                    optional_features: self.take_strings((l.lilv_plugin_get_optional_features)(p)),
                    extensions: self.take_strings((l.lilv_plugin_get_extension_data)(p)),
                    required_options: self
                        .take_strings((l.lilv_plugin_get_value)(p, required_option)),
                    malformed,
                }
            };
            plugins.push(info);
        }
        for node in classes.map(|(c, _)| c).into_iter().chain([
            input,
            optional,
            sample_rate,
            integer,
            toggled,
            rdf_type,
            required_option,
            port_uri,
            index_uri,
            symbol_uri,
        ]) {
            // SAFETY: each node was made above by lilv_new_uri and is freed once.
            unsafe { (l.lilv_node_free)(node) };
        }
        self.raw = raw;
        self.plugins = plugins;
    }
}

/// `LV2_PATH` with its relative folders made absolute (from the current folder), when it
/// has one: lilv takes such a folder for a URI and crashes on it. `None` when there is
/// nothing to change (unset, or every folder absolute or starting with `~` or `$`, which
/// lilv expands), or the path cannot be passed (a NUL, not UTF-8).
fn absolute_lv2_path(var: Option<std::ffi::OsString>) -> Option<CString> {
    let var = var?.into_string().ok()?;
    let mut changed = false;
    let parts: Vec<String> = var
        .split(':')
        .map(|part| {
            let p = std::path::Path::new(part);
            if part.is_empty() || p.is_absolute() || part.starts_with(['~', '$']) {
                part.to_string()
            } else {
                changed = true;
                std::path::absolute(p)
                    .map_or_else(|_| part.to_string(), |a| a.display().to_string())
            }
        })
        .collect();
    if !changed {
        return None;
    }
    CString::new(parts.join(":")).ok()
}

/// The most ports a plugin may have (mda and swh plugins have at most a few dozen).
pub const MAX_PORTS: u64 = 1 << 16;

/// Whether `s` is a port symbol lilv takes: a C identifier (an ASCII letter or `_`, then
/// letters, digits and `_`).
fn symbol_is_valid(s: &str) -> bool {
    let mut c = s.bytes();
    c.next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && c.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Why ports of indices `seen` (in any order) are not numbered 0 to N - 1, for N at most
/// [`MAX_PORTS`] distinct indices; `None` when they are. An index given twice is let
/// through, as lilv takes it (the same port described in two bundles' files).
fn ports_numbered(seen: &mut Vec<u64>) -> Option<String> {
    seen.sort_unstable();
    seen.dedup();
    let n = seen.len() as u64;
    if n > MAX_PORTS {
        return Some(format!("it declares {n} ports, more than {MAX_PORTS}"));
    }
    match seen.last() {
        Some(&last) if last >= n => Some(format!(
            "its {n} port{} should have lv2:index 0 to {}, but one has {last}",
            if n == 1 { "" } else { "s" },
            n - 1
        )),
        _ => None,
    }
}

#[cfg(test)]
mod port_tests {
    use super::{absolute_lv2_path, ports_numbered, symbol_is_valid};

    #[test]
    fn port_symbols_are_c_identifiers() {
        for ok in ["gain", "_x", "Cutoff_2", "a9"] {
            assert!(symbol_is_valid(ok), "{ok}");
        }
        for bad in ["", "a-b", "9lives", "h\u{e9}llo", "a b", "-"] {
            assert!(!symbol_is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn relative_folders_of_lv2_path_are_made_absolute() {
        assert_eq!(absolute_lv2_path(None), None);
        assert_eq!(
            absolute_lv2_path(Some("/usr/lib/lv2:~/.lv2:$HOME/lv2:${X}/lv2".into())),
            None
        );
        let here = std::env::current_dir().unwrap();
        let got = absolute_lv2_path(Some("rel:/usr/lib/lv2::~/.lv2".into())).unwrap();
        assert_eq!(
            got.to_str().unwrap(),
            format!("{}:/usr/lib/lv2::~/.lv2", here.join("rel").display())
        );
    }

    #[test]
    fn ports_must_be_numbered_from_0_without_gaps_or_repeats() {
        assert_eq!(ports_numbered(&mut vec![]), None);
        assert_eq!(ports_numbered(&mut vec![2, 0, 1]), None);
        assert_eq!(ports_numbered(&mut vec![1, 0, 1, 0]), None);
        assert_eq!(
            ports_numbered(&mut vec![0, 4_000_000_000]).as_deref(),
            Some("its 2 ports should have lv2:index 0 to 1, but one has 4000000000")
        );
        assert_eq!(
            ports_numbered(&mut vec![0, 2]).as_deref(),
            Some("its 2 ports should have lv2:index 0 to 1, but one has 2")
        );
        assert_eq!(
            ports_numbered(&mut (0..70_000).collect()).as_deref(),
            Some("it declares 70000 ports, more than 65536")
        );
    }
}

#[cfg(test)]
mod class_tests {
    use super::class_of;

    #[test]
    fn a_generic_class_gives_way_to_the_type_the_plugin_declares() {
        let lv2 = |t: &str| format!("http://lv2plug.in/ns/lv2core#{t}");
        let types = [lv2("Plugin"), lv2("ReverbPlugin")];
        assert_eq!(class_of("Plugin".into(), &types), "Reverb");
        assert_eq!(class_of("Reverb Plugin".into(), &types), "Reverb Plugin");
        assert_eq!(
            class_of("Plugin".into(), &[lv2("MultiEQPlugin")]),
            "Multi EQ"
        );
        assert_eq!(class_of("Plugin".into(), &[lv2("Plugin")]), "Plugin");
        assert_eq!(
            class_of(String::new(), &["http://example.org/x#Thing".into()]),
            ""
        );
    }
}
