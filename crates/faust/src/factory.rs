//! Compiled programs: [`Faust`] (libfaust, opened once) compiles a program into a
//! [`Factory`], and keeps every factory it compiled by source and options, so that every node
//! of the same program shares one.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::ffi::{Handle, InstanceFns, Lib, ERROR_BYTES};
use crate::ui::{self, Param};
use crate::FaustError;

/// Which of libfaust's backends compiles and runs a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// LLVM: compiled to machine code (the default when the library has it).
    Llvm,
    /// Faust's interpreter: no machine code, slower to run, quicker to compile.
    Interp,
}

impl Backend {
    /// Its name as the `backend` attribute writes it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Llvm => "llvm",
            Backend::Interp => "interp",
        }
    }
}

/// The largest Faust program file read: 16 MiB (a larger file, or a device, is refused
/// without reading more).
pub const MAX_PROGRAM_BYTES: u64 = 16 << 20;

/// What to compile: the program's text, the name its messages give it, and where its
/// `import`s are looked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    /// The program's text.
    pub code: String,
    /// What Faust's messages call it (the file's path, or the node for inline code).
    pub name: String,
    /// Folders searched by `import` and `library` (`-I`), in order.
    pub includes: Vec<PathBuf>,
}

impl Source {
    /// The program in `file`, its imports looked for beside it, in `folder` (the graph's)
    /// and in Faust's libraries.
    pub fn file(file: &Path, folder: Option<&Path>) -> Result<Source, FaustError> {
        // A program is read again to see whether it changed (the cache's stamps): a named
        // pipe or a device cannot be, and opening a pipe with no writer would wait forever.
        if let Ok(meta) = std::fs::metadata(file) {
            if !meta.is_file() {
                let what = if meta.is_dir() {
                    "a folder"
                } else {
                    NOT_A_FILE
                };
                return Err(FaustError::Read {
                    file: file.to_path_buf(),
                    reason: format!("it is {what}, not a file"),
                });
            }
        }
        let code = fugue_graph::read::read_text_bounded(file, MAX_PROGRAM_BYTES, "a Faust program")
            .map_err(|e| FaustError::Read {
                file: file.to_path_buf(),
                reason: e.to_string(),
            })?;
        // A UTF-8 byte-order mark (which some editors write) is skipped, as in a graph file;
        // Faust's parser takes it for text.
        let code = match code.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => code,
        };
        let mut includes = Vec::new();
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            includes.push(dir.to_path_buf());
        }
        if let Some(folder) = folder.filter(|f| !includes.iter().any(|d| d == f)) {
            includes.push(folder.to_path_buf());
        }
        // `./prog.dsp` (a program beside the graph in the working directory) is named
        // `prog.dsp`, as it is read from the command line: the same program gives the same
        // source, compiled once.
        let name = file.strip_prefix(".").unwrap_or(file);
        Ok(Source {
            code,
            name: name.display().to_string(),
            includes: with_libraries(includes),
        })
    }

    /// The program `code`, called `name` in messages, its imports looked for in `folder`
    /// and in Faust's libraries.
    pub fn code(code: &str, name: &str, folder: Option<&Path>) -> Source {
        Source {
            code: code.to_string(),
            name: name.to_string(),
            includes: with_libraries(folder.map(Path::to_path_buf).into_iter().collect()),
        }
    }
}

/// `includes`, then the folders of Faust's libraries that exist (`FAUST_LIB_PATH`, then
/// `/usr/share/faust` and `/usr/local/share/faust`).
fn with_libraries(mut includes: Vec<PathBuf>) -> Vec<PathBuf> {
    let env = std::env::var_os("FAUST_LIB_PATH").map(PathBuf::from);
    for dir in env.into_iter().chain(
        ["/usr/share/faust", "/usr/local/share/faust"]
            .iter()
            .map(PathBuf::from),
    ) {
        if dir.is_dir() && !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    includes
}

/// A compiled program: the factory of its instances, its ports and its parameters. Freed
/// (with libfaust's lock held) when the last node that uses it is dropped.
pub struct Factory {
    faust: Arc<Faust>,
    handle: Handle,
    /// The program's name, for messages.
    name: String,
    backend: Backend,
    /// The DSP's inputs.
    pub inputs: usize,
    /// The DSP's outputs.
    pub outputs: usize,
    /// The DSP's parameters, in the order of its user interface.
    pub params: Vec<Param>,
    /// Bytes of one instance's state and the program's tables, when known (LLVM: its
    /// structure and tables; the interpreter: its heaps).
    pub state_bytes: Option<u64>,
    /// Bytes of the program's tables among [`Factory::state_bytes`]: LLVM keeps them once
    /// for every instance of the factory (module variables, filled at the first instance's
    /// initialisation); 0 for the interpreter, whose heaps are each instance's own.
    pub table_bytes: u64,
    /// The labels of the program's sound files (`soundfile`), which fugue does not load:
    /// they play silence, and the kind's lint says so.
    pub soundfiles: Vec<String>,
    /// The rate at which the program's shared tables were last initialised (`classInit`)
    /// without a fault, LLVM only: a new instance at that rate initialises only itself
    /// (`instanceInit`). A table may take seconds to fill, and every node and trial of the
    /// program would fill it again, with the same values, while other instances play from it.
    /// Read and written under [`Faust::lock`].
    class_rate: std::sync::Mutex<Option<u32>>,
    /// How many times the shared tables were filled (`classInit`), for the tests.
    #[cfg(test)]
    tables_filled: std::sync::atomic::AtomicUsize,
}

// SAFETY: a factory handle is an address that libfaust's functions take; every call that
// uses it from any thread holds `Faust::lock` (libfaust's compiler state is not thread-safe),
// and instances made from it are independent of one another.
unsafe impl Send for Factory {}
// SAFETY: as above: `&Factory` gives no unlocked access to the handle.
unsafe impl Sync for Factory {}

impl std::fmt::Debug for Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Factory")
            .field("backend", &self.backend)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .field("params", &self.params.len())
            .finish()
    }
}

/// The highest rate Faust's standard library computes at: its `ma.SR` is the instance's rate
/// bounded to 1..192,000 Hz, so a program that uses it is out of tune above.
pub const MAX_LIBRARY_RATE: u32 = 192_000;

/// The longest [`Factory::stops_rate_at_library_limit`] runs each of its instances: a second
/// at [`MAX_LIBRARY_RATE`].
pub const RATE_TRIAL_FRAMES: usize = MAX_LIBRARY_RATE as usize;

/// The frames [`Factory::differs_between_instances`] runs each of its two instances.
pub const SEED_TRIAL_FRAMES: usize = 1024;

/// The trials' input on channel `c` at frame `i`: an impulse, then a fixed sequence (an
/// integer hash of the frame and channel) within ±0.5.
fn trial_input(c: usize, i: usize) -> f32 {
    if i == 0 {
        return 1.0;
    }
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ (c as u32).wrapping_mul(0x85EB_CA6B);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2C1B_3C6D);
    x ^= x >> 12;
    (x as f32 / u32::MAX as f32) - 0.5
}

/// One instance of [`Factory::stops_rate_at_library_limit`]'s trial, and its last block.
struct Trial {
    inst: Instance,
    outs: Vec<Vec<f32>>,
}

impl Trial {
    fn new(
        factory: &Arc<Factory>,
        rate: u32,
        class_init: bool,
        settings: &[(usize, f32)],
    ) -> Result<Trial, FaustError> {
        let mut inst = factory.instance_with(rate, class_init)?;
        for &(i, v) in settings {
            inst.write_zone(i, v);
        }
        let outs = vec![Vec::new(); factory.outputs];
        Ok(Trial { inst, outs })
    }

    /// The next `frames` frames, its inputs `ins` (one buffer of at least `frames` frames per
    /// input of the program): its outputs into `self.outs`. Returns how many integer
    /// divisions trapped ([`fugue_dsp::foreign`]: they gave 0).
    fn run(&mut self, ins: &mut [Vec<f32>], frames: usize) -> u32 {
        debug_assert!(ins.iter().all(|b| b.len() >= frames));
        for o in self.outs.iter_mut() {
            o.resize(frames, 0.0);
        }
        let mut ip: Vec<*mut f32> = ins.iter_mut().map(|v| v.as_mut_ptr()).collect();
        let mut op: Vec<*mut f32> = self.outs.iter_mut().map(|v| v.as_mut_ptr()).collect();
        // SAFETY: a live instance; as many buffers of `frames` frames as the program has
        // inputs and outputs.
        let ((), traps) = fugue_dsp::foreign::guarded(|| unsafe {
            (self.inst.fns.compute)(
                self.inst.dsp,
                frames as i32,
                ip.as_mut_ptr(),
                op.as_mut_ptr(),
            )
        });
        traps
    }

    /// Whether its last block equals `other`'s (a NaN equals a NaN; 0 and -0 are equal, as
    /// a silence multiplied by a signal's sign is still silence).
    fn same_as(&self, other: &Trial) -> bool {
        self.outs.iter().zip(&other.outs).all(|(a, b)| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
        })
    }
}

impl Factory {
    /// The backend that compiled it.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The instance functions of its backend.
    pub(crate) fn fns(&self) -> InstanceFns {
        self.faust.fns(self.backend)
    }

    /// `frames` frames of a fresh instance at 48 kHz, its inputs silent: its outputs (a
    /// trial of the program off the audio path; allocates).
    pub(crate) fn trial(self: &Arc<Self>, frames: usize) -> Result<Vec<Vec<f32>>, FaustError> {
        let mut t = Trial::new(self, 48_000, true, &[])?;
        // A division by zero gives 0 here: the node's own processor says it when it plays.
        t.run(&mut vec![vec![0.0f32; frames]; self.inputs], frames);
        Ok(t.outs)
    }

    /// Whether the program, its parameters set as `settings` says (index among
    /// [`Factory::params`], value), computes at `rate` Hz as it does at [`MAX_LIBRARY_RATE`]:
    /// its output depends on the rate up to that bound (it differs at half of it) but not
    /// above (it is the same at `rate`), as with the standard library's `ma.SR`, which
    /// stops at 192 kHz. False for `rate` at or below the bound, and for a program whose
    /// output does not depend on the rate. Runs instances at the three rates side by side for
    /// up to a second at the bound ([`RATE_TRIAL_FRAMES`], so that a delay of up to a second
    /// is heard), their inputs an impulse then a fixed pseudo-random signal, and stops as soon
    /// as the outputs above and at the bound differ. Only the instance at `rate` initialises
    /// the program's shared tables (`classInit`), at the rate the program's other instances
    /// run at; the others initialise themselves only. Off the audio path; allocates.
    pub fn stops_rate_at_library_limit(
        self: &Arc<Self>,
        rate: u32,
        settings: &[(usize, f32)],
    ) -> Result<bool, FaustError> {
        if rate <= MAX_LIBRARY_RATE {
            return Ok(false);
        }
        const BLOCK: usize = 4096;
        let input = trial_input;
        let mut ins = vec![vec![0.0f32; BLOCK]; self.inputs];
        let [mut above, mut at_bound, mut half] = [
            Trial::new(self, rate, true, settings)?,
            Trial::new(self, MAX_LIBRARY_RATE, false, settings)?,
            Trial::new(self, MAX_LIBRARY_RATE / 2, false, settings)?,
        ];
        // Whether the output below the bound differed from the output at it, yet.
        let mut below = false;
        let mut at = 0;
        while at < RATE_TRIAL_FRAMES {
            for (c, buf) in ins.iter_mut().enumerate() {
                for (i, x) in buf.iter_mut().enumerate() {
                    *x = input(c, at + i);
                }
            }
            // A division by zero tells nothing of the rate (the node's own processor says
            // it when it plays): no finding.
            if above.run(&mut ins, BLOCK) + at_bound.run(&mut ins, BLOCK) > 0 {
                return Ok(false);
            }
            if !above.same_as(&at_bound) {
                // The rate counts above the bound: not bounded.
                return Ok(false);
            }
            if !below {
                if half.run(&mut ins, BLOCK) > 0 {
                    return Ok(false);
                }
                below = !half.same_as(&at_bound);
            }
            at += BLOCK;
        }
        Ok(below)
    }

    /// Whether two fresh instances at `rate` Hz, their parameters set as `settings` says
    /// (index among [`Factory::params`], value), fed the same signal (an impulse, then a
    /// fixed pseudo-random one), give other samples in their first `SEED_TRIAL_FRAMES` (1,024): a
    /// program that seeds its noise at random (`no.rnoise`, through `arc4random`), whose
    /// output then differs from one run to the next. False for a program that divided by
    /// zero in the trial (its own processor says so when it plays). Off the audio path;
    /// allocates.
    pub fn differs_between_instances(
        self: &Arc<Self>,
        rate: u32,
        settings: &[(usize, f32)],
    ) -> Result<bool, FaustError> {
        let mut ins: Vec<Vec<f32>> = (0..self.inputs)
            .map(|c| (0..SEED_TRIAL_FRAMES).map(|i| trial_input(c, i)).collect())
            .collect();
        let mut first = Trial::new(self, rate, true, settings)?;
        let mut second = Trial::new(self, rate, false, settings)?;
        if first.run(&mut ins, SEED_TRIAL_FRAMES) + second.run(&mut ins, SEED_TRIAL_FRAMES) > 0 {
            return Ok(false);
        }
        Ok(!first.same_as(&second))
    }

    /// A new instance, initialised at `rate` Hz, and its parameters' zones.
    pub(crate) fn instance(self: &Arc<Self>, rate: u32) -> Result<Instance, FaustError> {
        self.instance_with(rate, true)
    }

    /// [`Factory::instance`]; `class_init`: whether it also initialises the program's shared
    /// tables (`init`), or only itself (`instanceInit`).
    fn instance_with(
        self: &Arc<Self>,
        rate: u32,
        class_init: bool,
    ) -> Result<Instance, FaustError> {
        let fns = self.fns();
        // Instances compute with their integer divisions by zero caught
        // ([`fugue_dsp::foreign`]); the handler is installed here, off the audio thread.
        fugue_dsp::foreign::install();
        let lock = self.faust.lock();
        // SAFETY: `handle` is a live factory of this backend (freed only in `drop`).
        let dsp = unsafe { (fns.create)(self.handle) };
        if dsp.is_null() {
            return Err(FaustError::Instance {
                name: self.name.clone(),
            });
        }
        let mut class_rate = self
            .class_rate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The interpreter's tables are in each instance's own heap: always filled.
        let shared_ready = self.backend == Backend::Llvm && *class_rate == Some(rate);
        let fills_tables = class_init && !shared_ready;
        let init = if fills_tables {
            fns.init
        } else {
            fns.instance_init
        };
        // SAFETY: `dsp` is a live instance of this backend.
        let ((), traps) = fugue_dsp::foreign::guarded(|| unsafe { init(dsp, rate as i32) });
        if fills_tables {
            *class_rate = (traps == 0).then_some(rate);
            #[cfg(test)]
            self.tables_filled
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        drop(class_rate);
        // SAFETY: as above.
        let zones = unsafe { ui::walk(fns.build_ui, dsp) }.zones;
        let instance = Instance {
            factory: self.clone(),
            dsp,
            fns,
            zones,
        };
        // Dropping the instance takes the lock.
        drop(lock);
        if traps > 0 {
            return Err(FaustError::InitDivision {
                name: self.name.clone(),
                rate,
            });
        }
        Ok(instance)
    }

    /// The names a parameter attribute may use, comma-separated (paths of the inputs).
    pub fn param_names(&self) -> String {
        let v: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.is_input())
            .map(|p| p.path.as_str())
            .collect();
        // A sentence stays a readable line: a program may have thousands of parameters.
        const NAMED: usize = 64;
        if v.is_empty() {
            "none".to_string()
        } else if v.len() > NAMED {
            format!(
                "{} and {} more (`fugue info` on the graph lists them all)",
                v[..NAMED].join(", "),
                v.len() - NAMED
            )
        } else {
            v.join(", ")
        }
    }
}

impl Drop for Factory {
    fn drop(&mut self) {
        let fns = self.fns();
        let _lock = self.faust.lock();
        // SAFETY: the handle is live and no instance of it remains (each holds an `Arc` of
        // its factory).
        unsafe { (fns.delete_factory)(self.handle) };
    }
}

/// One instance of a program: its state and its parameters' zones. It holds its factory,
/// whose code it runs.
pub(crate) struct Instance {
    factory: Arc<Factory>,
    pub(crate) dsp: Handle,
    pub(crate) fns: InstanceFns,
    pub(crate) zones: Vec<*mut f32>,
}

impl Instance {
    /// Writes `value` into parameter `i`'s zone (nothing for an index beyond them).
    pub(crate) fn write_zone(&mut self, i: usize, value: f32) {
        if let Some(&zone) = self.zones.get(i) {
            // SAFETY: `zone` is the address of a parameter of this live instance (from its
            // own `buildUserInterface`), a float that `compute` reads between calls; no call
            // runs now (the instance is held by `&mut`).
            unsafe { *zone = value };
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _lock = self.factory.faust.lock();
        // SAFETY: `dsp` is a live instance, freed once, here, before its factory (held by
        // the field dropped after this).
        unsafe { (self.fns.delete)(self.dsp) };
    }
}

/// libfaust, opened, and the factories compiled so far.
pub struct Faust {
    lib: Lib,
    /// libfaust's compiler is not thread-safe: every call but an instance's `compute` and
    /// its user interface's zones holds this.
    compiler: Mutex<()>,
    /// Every factory compiled, kept for the life of the process, with the state of the
    /// files it may have read: a program loaded again (a graph rebuilt, the automatic
    /// choice's trials, the host's next `load`) is not compiled again unless one of those
    /// files changed (then the new factory takes the old one's place here; nodes of the old
    /// one keep it). The files are looked at again only [`RECHECK`] after they last were,
    /// so that the nodes of one graph (32 strings of one program) pay for it once.
    cache: Mutex<HashMap<(Source, Backend), Cached>>,
    compiled: AtomicUsize,
    /// Of those, the factories read from the disk cache ([`disk_cache`]).
    from_disk: AtomicUsize,
}

/// The environment variable that names the folder where LLVM-compiled programs are kept
/// between runs (`off` keeps none); default `$XDG_CACHE_HOME/fugue/faust`, else
/// `~/.cache/fugue/faust`.
pub const CACHE_ENV: &str = "FUGUE_FAUST_CACHE";

/// Compiled programs kept on disk at most; past it, the oldest files are removed.
pub const MAX_CACHED: usize = 256;

/// The folder of compiled programs ([`CACHE_ENV`]), or `None` when it is off or no home is
/// known.
pub fn disk_cache() -> Option<PathBuf> {
    match std::env::var_os(CACHE_ENV) {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
            .map(|d| d.join("fugue").join("faust")),
    }
}

/// 64-bit FNV-1a of `parts` (each followed by a zero byte).
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Files that [`fingerprint`] reads at most, and their bytes at most, before it gives up
/// (the program is then compiled without the disk cache).
const FINGERPRINT_FILES: usize = 1024;
const FINGERPRINT_BYTES: u64 = 64 << 20;

/// A 64-bit fingerprint of everything a compilation of `source` reads: its text and name,
/// and, for every file it may import (`import`, `library` and `component` of a quoted name,
/// found anywhere in the text, comments included, and followed through the files found),
/// the files of that name at every place libfaust looks for it (the working directory, the
/// importing file's folder, the include folders, Faust's library folders): where they are,
/// in the order of the search, and their contents. A wider search than libfaust's own, so
/// that any edit, addition or removal of a file that the compilation could read, or a
/// change of which one comes first, changes the fingerprint. `None` for an import of a URL,
/// a file that cannot be read for another reason than its absence (or is not a regular
/// file), or more than [`FINGERPRINT_FILES`] places or [`FINGERPRINT_BYTES`] bytes.
///
/// It takes the place of libfaust's key (`expandCDSPFromString`: the program with its
/// imports inlined, about 8 ms for a program of `stdfaust.lib`) at a fraction of the time.
fn fingerprint(source: &Source) -> Option<u64> {
    scan(source).ok().map(|(h, _)| h)
}

/// Why [`scan`] gave no fingerprint.
#[derive(Debug, PartialEq)]
enum Unscanned {
    /// What the compilation reads cannot be known (an import of a URL, a file that cannot
    /// be read, too many places or bytes): no fingerprint, and no disk cache.
    Unknown,
    /// An import names a file that is no regular file (a named pipe, a socket, a device),
    /// which the compilation would wait on or read without end.
    Special(PathBuf),
    /// An import finds a folder of its name before any file in the search's order, which
    /// libfaust opens as the library and fails on ("input in flex scanner failed").
    Folder(PathBuf),
}

/// [`fingerprint`], with every place it looked at (where a file was, or may appear).
fn scan(source: &Source) -> Result<(u64, Vec<PathBuf>), Unscanned> {
    use std::hash::Hasher as _;
    let cwd = std::env::current_dir().map_err(|_| Unscanned::Unknown)?;
    let mut dirs: Vec<PathBuf> = vec![cwd.clone()];
    for d in source
        .includes
        .iter()
        .cloned()
        .chain(with_libraries(Vec::new()))
    {
        let d = cwd.join(d);
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    // `which faust`'s `../share/faust`, where libfaust also looks.
    if let Some(bin) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("faust"))
            .find(|f| f.is_file())
    }) {
        if let Some(share) = bin.parent().and_then(Path::parent) {
            let d = share.join("share").join("faust");
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for part in [source.code.as_bytes(), source.name.as_bytes()] {
        h.write_usize(part.len());
        h.write(part);
    }
    // Every place looked at, once: its content's hash, or `None` where there is no file.
    let mut places: HashMap<PathBuf, Option<u64>> = HashMap::new();
    // Texts to scan: (text, the folder of the file it came from).
    let mut queue: Vec<(Vec<u8>, Option<PathBuf>)> = vec![(source.code.as_bytes().to_vec(), None)];
    let mut bytes = 0u64;
    // Something the compilation may read that cannot be known: no fingerprint (said at the
    // end, once the other imports were looked at).
    let mut unknown = false;
    while let Some((text, folder)) = queue.pop() {
        for name in imports(&text) {
            if name.contains("://") {
                // Not followed; the other imports are, for a named pipe among them.
                unknown = true;
                continue;
            }
            let name = Path::new(&name);
            let candidates: Vec<PathBuf> = if name.is_absolute() {
                vec![name.to_path_buf()]
            } else {
                folder.iter().chain(&dirs).map(|d| d.join(name)).collect()
            };
            // The files of this name in the order of the search (which one libfaust reads
            // depends on it), where and what; places with no file are left out, so that the
            // fingerprint does not depend on the working directory unless a file there may
            // be read.
            // Whether a file of this name came earlier in the search (libfaust reads that
            // one, and no folder after it matters).
            let mut found = false;
            for place in candidates {
                let content = match places.get(&place) {
                    Some(c) => *c,
                    None => {
                        let c = match read_bounded(&place, FINGERPRINT_BYTES - bytes) {
                            Err(Unreadable::Special) => return Err(Unscanned::Special(place)),
                            Err(Unreadable::Folder) if !found => {
                                return Err(Unscanned::Folder(place))
                            }
                            Err(Unreadable::Folder) => None,
                            Ok(Some(content)) => {
                                bytes += content.len() as u64;
                                let mut fh = std::collections::hash_map::DefaultHasher::new();
                                fh.write(&content);
                                let c = fh.finish() ^ content.len() as u64;
                                queue.push((content, place.parent().map(Path::to_path_buf)));
                                Some(c)
                            }
                            Ok(None) => None,
                            Err(Unreadable::Other) => {
                                unknown = true;
                                None
                            }
                        };
                        if places.len() >= FINGERPRINT_FILES {
                            return Err(Unscanned::Unknown);
                        }
                        places.insert(place.clone(), c);
                        c
                    }
                };
                if let Some(c) = content {
                    found = true;
                    h.write(place.as_os_str().as_encoded_bytes());
                    h.write_u8(0);
                    h.write_u64(c);
                }
            }
        }
    }
    if unknown {
        return Err(Unscanned::Unknown);
    }
    Ok((h.finish(), places.into_keys().collect()))
}

/// What a file looked like: its modification time and length; `None` where there is none.
type Stamp = Option<(std::time::SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The files a compiled program may have read ([`scan`]'s places), as they were just before
/// it was compiled; `None` where they cannot be known (an import of a URL, too many files).
type Stamps = Option<Vec<(PathBuf, Stamp)>>;

/// The files at `places` as they are now.
fn stamps(places: &[PathBuf]) -> Vec<(PathBuf, Stamp)> {
    places.iter().map(|p| (p.clone(), stamp(p))).collect()
}

/// A factory in [`Faust`]'s cache: the files it may have read as they were before it was
/// compiled, and when they were last found unchanged.
struct Cached {
    factory: Arc<Factory>,
    files: Stamps,
    checked: std::time::Instant,
}

/// How long a cached factory's files are taken as unchanged after they were looked at
/// (a graph's nodes are built well within it; an edit is seen at a load after it).
const RECHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether the files of `stamps` are as they were (true where they cannot be known).
fn unchanged(stamps: &Stamps) -> bool {
    stamps
        .as_ref()
        .is_none_or(|s| s.iter().all(|(p, was)| stamp(p) == *was))
}

/// What a path that is neither a regular file nor a folder is said to be: reading it may wait
/// (a pipe with no writer) or never end (a device).
const NOT_A_FILE: &str = "a named pipe, a socket or a device";

/// Why [`read_bounded`] read nothing.
#[derive(Debug, PartialEq)]
enum Unreadable {
    /// No regular file (a named pipe, a socket, a device), not opened: opening a pipe with
    /// no writer waits for one.
    Special,
    /// A folder.
    Folder,
    /// It cannot be read, or it is larger than the budget.
    Other,
}

/// The contents of the file at `path` when it holds at most `budget` bytes; `None` when
/// there is no file; `Err` when it cannot be read, is larger, is a folder, or is not a
/// regular file (not opened then).
fn read_bounded(path: &Path, budget: u64) -> Result<Option<Vec<u8>>, Unreadable> {
    use std::io::Read as _;
    // Looked at before it is opened.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(Unreadable::Other),
        Ok(m) if m.is_dir() => return Err(Unreadable::Folder),
        Ok(m) if !m.is_file() => return Err(Unreadable::Special),
        Ok(_) => {}
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(Unreadable::Other),
    };
    let meta = file.metadata().map_err(|_| Unreadable::Other)?;
    if !meta.is_file() {
        return Err(Unreadable::Special);
    }
    if meta.len() > budget {
        return Err(Unreadable::Other);
    }
    let mut content = Vec::with_capacity(meta.len() as usize);
    // At most `budget` bytes, whatever the file grew to since.
    file.take(budget)
        .read_to_end(&mut content)
        .map_err(|_| Unreadable::Other)?;
    Ok(Some(content))
}

/// The quoted names of `import("...")`, `library("...")` and `component("...")` in a Faust
/// text (spaces and comments allowed around the parenthesis, as Faust's lexer skips them).
fn imports(text: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let skip = |mut j: usize| loop {
        match (text.get(j), text.get(j + 1)) {
            (Some(c), _) if c.is_ascii_whitespace() => j += 1,
            (Some(b'/'), Some(b'/')) => {
                j = memchr::memchr(b'\n', &text[j..]).map_or(text.len(), |k| j + k + 1);
            }
            (Some(b'/'), Some(b'*')) => {
                j = memchr::memmem::find(&text[j + 2..], b"*/")
                    .map_or(text.len(), |k| j + 2 + k + 2);
            }
            _ => return j,
        }
    };
    for word in [&b"import"[..], b"library", b"component"] {
        for at in memchr::memmem::find_iter(text, word) {
            let j = skip(at + word.len());
            if text.get(j) != Some(&b'(') {
                continue;
            }
            let j = skip(j + 1);
            if text.get(j) != Some(&b'"') {
                continue;
            }
            let rest = &text[j + 1..];
            if let Some(len) = memchr::memchr(b'"', rest) {
                out.push(String::from_utf8_lossy(&rest[..len]).into_owned());
            }
        }
    }
    out
}

/// A string that libfaust allocated, freed with its `freeCMemory`.
fn take_c_string(p: *const c_char, free: crate::ffi::MachineFns) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: libfaust returned a NUL-terminated string it allocated; it is copied, then
    // freed once with libfaust's own function.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above: `p` came from libfaust and is freed once.
    unsafe { (free.free)(p as *mut std::ffi::c_void) };
    Some(s)
}

/// The C math library's functions that a compiled program may call (each also with its
/// `f` and `l` variants: `sinhf`, `sinhl`): C99's `<math.h>` but for those that take a
/// pointer (`frexp`, `modf`, `nan`, `remquo`, GNU's `sincos`: a program could pass any
/// number as the address they write to), with POSIX's Bessel functions and GNU's `exp10`.
/// Faust's libraries declare these as foreign functions.
const MATH_FUNCTIONS: &[&str] = &[
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "copysign",
    "cos",
    "cosh",
    "erf",
    "erfc",
    "exp",
    "exp10",
    "exp2",
    "expm1",
    "fabs",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmin",
    "fmod",
    "hypot",
    "ilogb",
    "isinf",
    "isnan",
    "j0",
    "j1",
    "jn",
    "ldexp",
    "lgamma",
    "llrint",
    "llround",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "lrint",
    "lround",
    "nearbyint",
    "nextafter",
    "nexttoward",
    "pow",
    "remainder",
    "rint",
    "round",
    "scalbln",
    "scalbn",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "trunc",
    "y0",
    "y1",
    "yn",
];

/// Other C functions that Faust's libraries declare and that take no pointer:
/// `arc4random` (`noises.lib`'s random seeds).
const LIBRARY_FUNCTIONS: &[&str] = &["arc4random"];

/// The functions that the compiled code `ir` (LLVM IR text) declares and calls outside
/// itself, but for LLVM's own (`llvm.*`), Faust's (`calloc` and `free`, which make and
/// delete an instance) and the C math library's ([`MATH_FUNCTIONS`]): what
/// a program's `ffunction`s bring in (`abort`, `exit`, `raise`: the process would run them).
fn foreign_functions(ir: &str) -> Vec<String> {
    let mut out: Vec<String> = ir
        .lines()
        .filter_map(|l| l.strip_prefix("declare "))
        .filter_map(|l| {
            let name = l.split_once('@')?.1.split('(').next()?.trim_matches('"');
            // `calloc` and `free`: Faust's own code that makes and deletes an instance.
            let own = name.starts_with("llvm.")
                || matches!(name, "calloc" | "free")
                || LIBRARY_FUNCTIONS.contains(&name);
            (!own && !is_math(name)).then(|| name.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether `name` is a function of the C math library ([`MATH_FUNCTIONS`]), in any of its
/// `float`, `double` or `long double` forms (`erff`, `erf`, `erfl`).
fn is_math(name: &str) -> bool {
    MATH_FUNCTIONS.contains(&name)
        || name
            .strip_suffix(['f', 'l'])
            .is_some_and(|b| MATH_FUNCTIONS.contains(&b))
}

/// Whether the program's text names a C constant or variable (Faust's `fconstant`,
/// `fvariable`) other than those Faust gives itself: `fSamplingFreq` (the sample rate) as a
/// constant, and `count` (the block's length, the standard library's `ma.BS`). (Read as a
/// variable, `fSamplingFreq` is 0 under LLVM: refused too.)
fn names_foreign_constants(code: &str) -> bool {
    ["fconstant", "fvariable"].iter().any(|&word| {
        code.match_indices(word).any(|(i, _)| {
            let rest = code[i + word.len()..].trim_start();
            let Some(inside) = rest.strip_prefix('(') else {
                return false;
            };
            // `(TYPE NAME,`: the name is the last word before the comma.
            let declared = inside.split(',').next().unwrap_or("");
            let name = declared.split_whitespace().last().unwrap_or("");
            !(name == "count" || (word == "fconstant" && name == "fSamplingFreq"))
        })
    })
}

/// The name in the interpreter's refusal of a C constant or variable (`accessing foreign
/// constant 'K' is not allowed in this compilation mode!`).
fn foreign_constant_named(message: &str) -> Option<String> {
    quoted_after(message, "foreign constant '")
        .or_else(|| quoted_after(message, "foreign variable '"))
}

/// The name that `message` quotes right after `opening` (which ends with the opening quote).
fn quoted_after(message: &str, opening: &str) -> Option<String> {
    let at = message.find(opening)? + opening.len();
    let name = message[at..].split('\'').next()?;
    Some(name.to_string())
}

/// At most the first `limit` bytes of the file at `path`, as text (lossy).
fn read_head(path: &Path, limit: u64) -> Option<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The labels of the sound files of an interpreted program, from its code's user interface
/// (`opcode 289 kAddSoundfile offset -1 label "fSoundfile0" key "snd" ...`: the key is the
/// label the program gave).
fn interp_soundfiles(head: &str) -> Vec<String> {
    head.lines()
        .take_while(|l| *l != "static_init_block")
        .filter(|l| l.contains(" kAddSoundfile "))
        .filter_map(|l| {
            let key = l.split_once(" key \"")?.1;
            Some(key.split('"').next()?.to_string())
        })
        .collect()
}

/// Bytes of an interpreted program's state, from the header of its code as libfaust writes
/// it (`interpreter_dsp_factory float` ... `int_heap_size I real_heap_size R ...`): I
/// integers of 4 bytes and R reals of 4 (`float`) or 8 (`double`). A negative size is one
/// that libfaust's 32-bit arithmetic wrapped: 2^31 elements or more, given as 2^31 reals.
/// `None` when the header cannot be read.
fn interp_heap_bytes(head: &str) -> Option<u64> {
    let real = match head.lines().next()?.split_whitespace().nth(1)? {
        "double" => 8u64,
        _ => 4,
    };
    let line = head.lines().find(|l| l.starts_with("int_heap_size "))?;
    let mut words = line.split_whitespace();
    let mut size = |key: &str| -> Option<u64> {
        words.find(|w| *w == key)?;
        let n: i64 = words.next()?.parse().ok()?;
        Some(u64::try_from(n).unwrap_or(1 << 31))
    };
    let ints = size("int_heap_size")?;
    let reals = size("real_heap_size")?;
    Some(
        ints.saturating_mul(4)
            .saturating_add(reals.saturating_mul(real)),
    )
}

/// Bytes of the largest structure that the LLVM IR `ir` declares (`%name = type { ... }` or
/// `<{ ... }>`: a compiled program's instance, whose fields are its delay lines) plus its
/// global variables (the program's tables), and the latter alone.
/// Computed in 64 bits, fields packed (no padding: a lower bound of the layout, exact for
/// Faust's packed structures). `None` when a declaration cannot be read.
fn state_bytes(ir: &str) -> Option<(u64, u64)> {
    let mut named: HashMap<&str, u64> = HashMap::new();
    let mut largest = None;
    let mut globals = 0u64;
    for line in ir.lines() {
        // The program's tables (`rdtable`, `rwtable`): variables of the module, one per
        // program, written when it is initialised.
        if line.starts_with('@') && !line.starts_with("@\"") {
            if let Some((_, ty)) = line.split_once(" global ") {
                let (bytes, _) = type_bytes(ty.trim(), &named)?;
                globals = globals.checked_add(bytes)?;
            }
            continue;
        }
        let Some((name, ty)) = line.split_once(" = type ") else {
            continue;
        };
        let name = name.trim();
        if !name.starts_with('%') {
            continue;
        }
        let (bytes, _) = type_bytes(ty.trim(), &named)?;
        named.insert(name, bytes);
        largest = largest.max(Some(bytes));
    }
    largest.map(|l: u64| (l.saturating_add(globals), globals))
}

/// Bytes of the LLVM type at the start of `t`, and the text after it. Named structures are
/// looked up in `named` (declared before their use, as LLVM writes them).
fn type_bytes<'a>(t: &'a str, named: &HashMap<&str, u64>) -> Option<(u64, &'a str)> {
    let t = t.trim_start();
    let (mut bytes, mut rest) = if let Some(r) = t.strip_prefix('[') {
        // `[N x T]`
        let (n, r) = r.trim_start().split_once(" x ")?;
        let n: u64 = n.trim().parse().ok()?;
        let (each, r) = type_bytes(r, named)?;
        (n.checked_mul(each)?, r.trim_start().strip_prefix(']')?)
    } else if let Some(r) = t.strip_prefix("<{").or_else(|| t.strip_prefix('{')) {
        let packed = t.starts_with('<');
        let mut sum = 0u64;
        let mut r = r.trim_start();
        loop {
            if let Some(after) = r.strip_prefix('}') {
                r = if packed {
                    after.strip_prefix('>')?
                } else {
                    after
                };
                break;
            }
            let (b, after) = type_bytes(r, named)?;
            sum = sum.checked_add(b)?;
            r = after.trim_start();
            r = r.strip_prefix(',').unwrap_or(r).trim_start();
        }
        (sum, r)
    } else {
        let end = t
            .find(|c: char| c == ',' || c == ']' || c == '}' || c == '>' || c.is_whitespace())
            .unwrap_or(t.len());
        let (word, r) = t.split_at(end);
        let b = match word {
            "float" | "i32" => 4,
            "double" | "i64" | "ptr" => 8,
            "i16" | "half" => 2,
            "i8" | "i1" => 1,
            w if w.ends_with('*') => 8,
            w if w.starts_with('%') => *named.get(w)?,
            _ => return None,
        };
        (b, r)
    };
    // Pointers written after the type (`float*`, `%struct.X**`).
    while let Some(r) = rest.strip_prefix('*') {
        bytes = 8;
        rest = r;
    }
    Some((bytes, rest))
}

/// The largest compiled program the disk cache reads back (larger ones are compiled again).
const MAX_KEPT_BYTES: u64 = 64 << 20;

/// The 64-bit FNV-1a checksum of the file at `path`, `None` when it cannot be read or holds
/// more than [`MAX_KEPT_BYTES`].
fn checksum(path: &Path) -> Option<u64> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_KEPT_BYTES {
        return None;
    }
    Some(fnv(&[&std::fs::read(path).ok()?]))
}

/// The size of the state of the program kept in `path` and of its tables among it, read
/// from the `.state` file beside it (`BYTES TABLES CHECKSUM`), when the file is there, still
/// has that checksum and sizes that a kept program can have (at most
/// [`fugue_dsp::MAX_NODE_MEMORY`]: larger ones are never kept); `None` otherwise (the
/// program is then compiled again).
fn kept_state(path: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(path.with_extension("state")).ok()?;
    let mut words = text.split_whitespace();
    let bytes = words
        .next()?
        .parse::<u64>()
        .ok()
        .filter(|&b| b <= fugue_dsp::MAX_NODE_MEMORY as u64)?;
    let tables = words.next()?.parse::<u64>().ok().filter(|&t| t <= bytes)?;
    let sum = u64::from_str_radix(words.next()?, 16).ok()?;
    (words.next().is_none() && checksum(path)? == sum).then_some((bytes, tables))
}

/// A temporary file of a child's compiled code (and the size of its state beside it),
/// removed when dropped.
struct TempCode(Option<PathBuf>);

impl Drop for TempCode {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_file(p.with_extension("state"));
        }
    }
}

/// Whether files can be made in `dir` (created when missing): a file is made and removed.
fn writable(dir: &Path) -> bool {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let probe = dir.join(format!(".fugue-probe-{}-{n}", std::process::id()));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .is_ok();
    if made {
        let _ = std::fs::remove_file(&probe);
    }
    made
}

/// `line` of Faust's messages, its file (`bad.lib : 2 : ERROR : ...`) given with the include
/// folder it was read from when Faust names it without one: a bare name, not the program's,
/// and not in the working directory (which libfaust reads first).
fn with_library_folder(line: &str, source: &Source) -> String {
    let Some((file, rest)) = line.split_once(" : ") else {
        return line.to_string();
    };
    if file == source.name || file.contains('/') || file.is_empty() || Path::new(file).exists() {
        return line.to_string();
    }
    match source
        .includes
        .iter()
        .map(|d| d.join(file))
        .find(|p| p.is_file())
    {
        Some(p) => format!("{} : {rest}", p.display()),
        None => line.to_string(),
    }
}

/// Whether `c`, written unescaped into libfaust's JSON description of a program (its name,
/// its include folders), breaks that description: a quote or a control character.
fn breaks_description(c: char) -> bool {
    c == '"' || c.is_control()
}

/// A new temporary file name, with extension `ext`, for a child's compiled code.
fn temp_code_path(ext: &str) -> Option<PathBuf> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Some(std::env::temp_dir().join(format!(".fugue-faust-{}-{n}.{ext}", std::process::id())))
}

/// A new empty file of this process's own making ([`temp_code_path`]'s name, created only
/// where nothing is: never a link someone else left there, which libfaust would follow),
/// for libfaust to write over; `None` when none can be made.
fn created_temp(ext: &str) -> Option<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt as _;
    (0..16).find_map(|_| {
        let p = temp_code_path(ext)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)
            .ok()
            .map(|_| p)
    })
}

/// Keeps at most [`MAX_CACHED`] files in `dir`, the oldest removed first.
fn trim_cache(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "fmc"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= MAX_CACHED {
        return;
    }
    files.sort();
    for (_, p) in &files[..files.len() - MAX_CACHED] {
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(p.with_extension("state"));
    }
}

impl std::fmt::Debug for Faust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faust").field("lib", &self.lib).finish()
    }
}

/// The process's libfaust, opened by the first [`Faust::shared`].
static SHARED: OnceLock<Result<Arc<Faust>, FaustError>> = OnceLock::new();

impl Faust {
    /// libfaust from `path` (see [`Lib::open`]).
    pub fn open(path: &Path) -> Result<Arc<Faust>, FaustError> {
        Lib::open(path)
            .map(Faust::with_lib)
            .map_err(|reason| FaustError::Missing { reason })
    }

    /// The process's libfaust: the one that `FUGUE_LIBFAUST` names, or the system's,
    /// opened once.
    pub fn shared() -> Result<Arc<Faust>, FaustError> {
        SHARED
            .get_or_init(|| {
                Lib::open_default()
                    .map(Faust::with_lib)
                    .map_err(|reason| FaustError::Missing { reason })
            })
            .clone()
    }

    fn with_lib(lib: Lib) -> Arc<Faust> {
        Arc::new(Faust {
            lib,
            compiler: Mutex::new(()),
            cache: Mutex::new(HashMap::new()),
            compiled: AtomicUsize::new(0),
            from_disk: AtomicUsize::new(0),
        })
    }

    /// libfaust's version.
    pub fn version(&self) -> String {
        let _lock = self.lock();
        self.lib.version()
    }

    /// Whether the LLVM backend is there.
    pub fn has_llvm(&self) -> bool {
        self.lib.llvm.is_some()
    }

    /// How many programs this has compiled or read from the disk cache (a factory found in
    /// memory, shared by another node, is not counted).
    pub fn compilations(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }

    /// How many of [`Faust::compilations`] were read from the disk cache instead of
    /// compiled.
    pub fn disk_reads(&self) -> usize {
        self.from_disk.load(Ordering::Relaxed)
    }

    /// The file that keeps the LLVM compilation of a program in `dir`: named by `print`, the
    /// [`fingerprint`] of the program and of every file it may import, with libfaust's
    /// version and this machine's target. `None` when the imports cannot be fingerprinted
    /// (see [`fingerprint`]): the program is then compiled every time. The fingerprint is
    /// taken where no compilation runs (libfaust changes the working directory while it
    /// compiles): under the cache's lock, which every compilation holds ([`Faust::factory`]),
    /// or in the child, which compiles one program.
    fn disk_file(&self, dir: &Path, print: Option<u64>) -> Option<PathBuf> {
        let m = self.lib.llvm.as_ref()?.machine?;
        let key = print?;
        // SAFETY: `getCDSPMachineTarget` takes nothing and returns a string to free.
        let target = take_c_string(unsafe { (m.target)() }, m)?;
        // (The last part: programs kept with their state's and tables' sizes and their file's
        // checksum, and checked for foreign functions and constants before they were kept: a
        // program kept before those checks is not read back, but compiled and checked again.)
        let tag = fnv(&[
            self.lib.version().as_bytes(),
            target.as_bytes(),
            b"state, tables and checksum, foreign functions and C constants checked",
        ]);
        Some(dir.join(format!("{key:016x}-{tag:016x}.fmc")))
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        self.compiler.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fns(&self, backend: Backend) -> InstanceFns {
        match (&self.lib.llvm, backend) {
            (Some(l), Backend::Llvm) => l.instance,
            _ => self.lib.interp.instance,
        }
    }

    /// The factory of `source` with `backend` (the interpreter when LLVM is absent): the
    /// one compiled before, or a new one.
    pub fn factory(
        self: &Arc<Self>,
        source: &Source,
        backend: Backend,
    ) -> Result<Arc<Factory>, FaustError> {
        let backend = if self.has_llvm() {
            backend
        } else {
            Backend::Interp
        };
        let key = (source.clone(), backend);
        // Held through the compilation: two nodes of one program compile it once.
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get_mut(&key) {
            if c.checked.elapsed() < RECHECK {
                return Ok(c.factory.clone());
            }
            if unchanged(&c.files) {
                c.checked = std::time::Instant::now();
                return Ok(c.factory.clone());
            }
        }
        // Taken before the compilation reads the files: one edited meanwhile is seen as
        // changed at the next load. The same look gives the compilation its fingerprint.
        let scanned = match scan(source) {
            Err(Unscanned::Special(file)) => {
                return Err(FaustError::Read {
                    file,
                    reason: format!(
                        "it is {NOT_A_FILE}, not a file, and {} imports it (a compilation would wait on it)",
                        source.name
                    ),
                })
            }
            Err(Unscanned::Folder(file)) => {
                return Err(FaustError::Read {
                    file,
                    reason: format!(
                        "it is a folder, and {} imports a file of its name, which Faust looks for here first (it would fail to read the folder as the library)",
                        source.name
                    ),
                })
            }
            s => s.ok(),
        };
        let files = scanned.as_ref().map(|(_, places)| stamps(places));
        let print = scanned.map(|(h, _)| h);
        let factory = Arc::new(self.compile(source, backend, print)?);
        cache.insert(
            key,
            Cached {
                factory: factory.clone(),
                files,
                checked: std::time::Instant::now(),
            },
        );
        Ok(factory)
    }

    /// Compiles `source`, of fingerprint `print` ([`fingerprint`]): in a child process first
    /// when a helper is set ([`crate::guard`]), then here, from the code the child kept.
    fn compile(
        self: &Arc<Self>,
        source: &Source,
        backend: Backend,
        print: Option<u64>,
    ) -> Result<Factory, FaustError> {
        self.compile_at(source, backend, None, true, print)
    }

    /// The helper's compilation: `source` compiled in this process, its code kept at `out`
    /// (LLVM) when given.
    pub(crate) fn compile_alone(
        self: &Arc<Self>,
        source: &Source,
        backend: Backend,
        out: Option<&Path>,
    ) -> Result<(), FaustError> {
        let backend = if self.has_llvm() {
            backend
        } else {
            Backend::Interp
        };
        let factory = self.compile_at(
            source,
            backend,
            out.map(Path::to_path_buf),
            false,
            fingerprint(source),
        )?;
        if backend == Backend::Interp {
            // One block run here too: libfaust's interpreter crashes running some programs
            // (one that reads a `soundfile`, which nothing gives it), and this process is
            // the one to end then, not fugue's.
            Arc::new(factory).trial(64)?;
        }
        Ok(())
    }

    /// Compiles `source` (takes libfaust's lock), its LLVM code kept at `keep_at` instead of
    /// the disk cache's file when given; `guarded`: in a child process first; `print`: its
    /// [`fingerprint`] (none: no disk cache, no mark of its imports).
    fn compile_at(
        self: &Arc<Self>,
        source: &Source,
        backend: Backend,
        keep_at: Option<PathBuf>,
        guarded: bool,
        print: Option<u64>,
    ) -> Result<Factory, FaustError> {
        let cstr = |s: &str| {
            CString::new(s).map_err(|_| FaustError::Compile {
                name: source.name.clone(),
                message: "the program contains a NUL character".to_string(),
            })
        };
        // libfaust writes its include folders, resolved, into the program's JSON description
        // without escaping them: with a quote or a control character in one, it cannot make
        // an instance of the program, or crashes.
        // The folder is named as resolved: given as `.` or by a link, the quote is in the
        // path it stands for.
        if let Some(real) = source
            .includes
            .iter()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()))
            .find(|real| real.to_string_lossy().chars().any(breaks_description))
        {
            return Err(FaustError::Compile {
                name: source.name.clone(),
                message: format!(
                    "libfaust cannot use the folder {:?} (its path has a quote or a control character, which libfaust writes unescaped into the program's description); rename the folder or move the program",
                    real.display().to_string()
                ),
            });
        }
        // The name too, and a backslash in it would escape what follows: given without
        // them, and its messages given back the real name.
        let faust_name: String = source
            .name
            .chars()
            .map(|c| {
                if breaks_description(c) || c == '\\' {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        let name = cstr(&faust_name)?;
        // libfaust's interpreter keeps its factories under a hash of the program's text
        // alone (not of the files it imports), and gives back the one it has while that one
        // lives: a comment with the fingerprint of those files makes the text differ when
        // they do. On the last line (no line added: Faust's messages keep their line
        // numbers, one at the end of the program included).
        let code = match (backend, print) {
            (Backend::Interp, Some(f)) => {
                let gap = if source.code.ends_with('\n') { "" } else { " " };
                cstr(&format!("{}{gap}// {f:016x}", source.code))?
            }
            _ => cstr(&source.code)?,
        };
        let mut args: Vec<CString> = Vec::new();
        // libfaust looks in its include folders from the last given to the first (`-I a -I
        // b` reads b's file of a name that both hold): given in reverse, the first of
        // `includes` (the program's own folder) is looked in first, as documented. Absolute,
        // since libfaust changes the working directory while it compiles.
        let cwd = std::env::current_dir().unwrap_or_default();
        for dir in source.includes.iter().rev() {
            args.push(cstr("-I")?);
            args.push(cstr(&cwd.join(dir).to_string_lossy())?);
        }
        let argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let mut error = vec![0 as c_char; ERROR_BYTES];
        let empty = c"";
        let _lock = self.lock();
        // Where the compiled code is kept: the file asked for (the helper's), else, for LLVM,
        // the disk cache's file; read back from there when it is there.
        let in_cache = keep_at.is_none();
        let mut kept = match (backend, keep_at, disk_cache()) {
            (_, Some(at), _) => Some(at),
            (Backend::Llvm, None, Some(dir)) => self.disk_file(&dir, print),
            _ => None,
        };
        let machine = self.lib.llvm.as_ref().and_then(|l| l.machine);
        let bitcode = self.lib.interp.bitcode;
        // Removes the temporary file of the child's code, whatever happens below.
        let mut temporary = TempCode(None);
        if guarded && kept.as_ref().and_then(|p| kept_state(p)).is_none() {
            // Not kept yet: a child process compiles it first, its code written to the
            // disk cache's file when that folder can be written, else to a temporary one.
            let out = match (backend, machine, bitcode) {
                (Backend::Llvm, Some(_), _) => kept
                    .clone()
                    .filter(|p| p.parent().is_some_and(writable))
                    .or_else(|| temp_code_path("fmc")),
                // The interpreter's program is compiled here again from its source once
                // the child has compiled it without harm: the code libfaust writes for it
                // keeps its constants to about 7 digits (a reverb's delays and coefficients
                // came out other than the program's), and reading it back gives the
                // factory read before under the same program text, whatever its imports
                // became since.
                _ => None,
            };
            if out != kept {
                temporary.0.clone_from(&out);
            }
            match crate::guard::try_in_child(&self.lib.path, source, backend, out.as_deref())? {
                crate::guard::Tried::Refused(e) => return Err(e),
                crate::guard::Tried::Compiled => {
                    if temporary.0.is_none() {
                        if let Some(dir) = kept.as_deref().and_then(Path::parent) {
                            trim_cache(dir);
                        }
                    }
                    kept = out;
                }
                crate::guard::Tried::NotRun => {}
            }
        }
        let mut read = std::ptr::null_mut();
        // A kept program is read back only with the size of its state and the checksum of
        // its file, written beside it, and only when the file still has that checksum:
        // libfaust loads the file as machine code without checking it, and a damaged one
        // would crash the process. Otherwise it is compiled again (and kept again).
        let kept_state = kept.as_ref().and_then(|path| kept_state(path));
        let path = kept
            .as_ref()
            .and_then(|p| CString::new(p.as_os_str().as_encoded_bytes()).ok());
        match (backend, &path, machine, bitcode) {
            (Backend::Llvm, Some(p), Some(m), _) if kept_state.is_some() => {
                let mut e = vec![0 as c_char; ERROR_BYTES];
                // SAFETY: NUL-terminated path and empty target (this machine), and an
                // error buffer of the 4096 bytes asked for.
                read = unsafe { (m.read)(p.as_ptr(), empty.as_ptr(), e.as_mut_ptr()) };
            }
            // The interpreter's code, written by the child just now (a file of this
            // process's own making, never one kept between runs).
            (Backend::Interp, Some(p), _, Some(b))
                if temporary.0.as_ref().is_some_and(|t| t.is_file()) =>
            {
                let mut e = vec![0 as c_char; ERROR_BYTES];
                // SAFETY: a NUL-terminated path and an error buffer of 4096 bytes.
                read = unsafe { (b.read)(p.as_ptr(), e.as_mut_ptr()) };
            }
            _ => {}
        }
        let from_disk = !read.is_null();
        let handle = match (&self.lib.llvm, backend) {
            _ if from_disk => read,
            // SAFETY: every string is NUL-terminated and outlives the call, `argv` holds
            // `argv.len()` of them, and `error` has the 4096 bytes the header asks for; the
            // empty target means this machine, -1 the highest optimisation level.
            (Some(l), Backend::Llvm) => unsafe {
                (l.create_factory)(
                    name.as_ptr(),
                    code.as_ptr(),
                    argv.len() as i32,
                    argv.as_ptr(),
                    empty.as_ptr(),
                    error.as_mut_ptr(),
                    -1,
                )
            },
            // SAFETY: as above.
            _ => unsafe {
                (self.lib.interp.create_factory)(
                    name.as_ptr(),
                    code.as_ptr(),
                    argv.len() as i32,
                    argv.as_ptr(),
                    error.as_mut_ptr(),
                )
            },
        };
        if handle.is_null() {
            // SAFETY: libfaust wrote a NUL-terminated message into the zeroed buffer, whose
            // last byte it leaves 0.
            let mut message = unsafe { std::ffi::CStr::from_ptr(error.as_ptr()) }
                .to_string_lossy()
                .trim()
                .to_string();
            if faust_name != source.name {
                message = message.replace(&faust_name, &source.name);
            }
            if message.is_empty() && source.code.trim().is_empty() {
                message = "the program is empty: it defines no `process`".to_string();
            }
            // A C function that libfaust itself refuses to call (`calling foreign function
            // 'F' is not allowed in this compilation mode!`): said as fugue says the
            // functions it refuses.
            if let Some(function) = quoted_after(&message, "calling foreign function '") {
                if !is_math(&function) {
                    return Err(FaustError::Foreign {
                        name: source.name.clone(),
                        functions: vec![function],
                    });
                }
                // A math function that only the interpreter refuses (`erf`).
                message = format!(
                    "Faust's interpreter does not call `{function}` of the C math library, which the LLVM backend does; use `backend: \"llvm\"`"
                );
            }
            // A library that cannot be found is said without its place: the line of the
            // program that names it, when one does.
            if let Some(lib) = message.strip_prefix("ERROR : unable to open file ") {
                let quoted = format!("\"{}\"", lib.trim());
                if let Some(line) = source.code.lines().position(|l| l.contains(&quoted)) {
                    message = format!(
                        "{} : {} : ERROR : unable to open file {}",
                        source.name,
                        line + 1,
                        lib.trim()
                    );
                }
            }
            // An error in an imported library names it as imported (`bad.lib : 2 : ERROR :
            // ...`): given with the folder it was read from.
            let message = message
                .lines()
                .map(|l| with_library_folder(l, source))
                .collect::<Vec<_>>()
                .join("\n");
            return Err(FaustError::Compile {
                name: source.name.clone(),
                message,
            });
        }
        // The size of an instance's state, read from the compiled code before any instance
        // is made: libfaust computes it in 32 bits, so a state of 2 GiB or more wraps
        // around, and initialising such an instance writes past its memory. A program
        // read from the disk cache was checked when it was compiled (larger ones are not
        // kept).
        let mut state = kept_state;
        if let (false, Some(m), Backend::Llvm) = (from_disk, machine, backend) {
            // SAFETY: a live LLVM factory; the text is freed by `take_c_string`.
            let ir = take_c_string(unsafe { (m.ir)(handle) }, m);
            // Before any instance is made (whose initialisation may call them) and before
            // the program is kept on disk (a kept program is not checked again).
            let functions = ir.as_deref().map(foreign_functions).unwrap_or_default();
            if !functions.is_empty() {
                // SAFETY: the factory is live and has no instance.
                unsafe { (self.fns(backend).delete_factory)(handle) };
                return Err(FaustError::Foreign {
                    name: source.name.clone(),
                    functions,
                });
            }
            state = ir.and_then(|ir| state_bytes(&ir));
            if let Some((bytes, _)) = state.filter(|&(b, _)| b > fugue_dsp::MAX_NODE_MEMORY as u64)
            {
                // SAFETY: the factory is live and has no instance.
                unsafe { (self.fns(backend).delete_factory)(handle) };
                return Err(FaustError::TooLarge {
                    name: source.name.clone(),
                    bytes,
                });
            }
        }
        if !from_disk && backend == Backend::Llvm {
            // A C constant or variable that fugue cannot give: LLVM's optimiser folds it
            // into 0, and no trace of it is left in the code; the interpreter refuses it,
            // so a program that names one is compiled there too, to be refused alike.
            if names_foreign_constants(&source.code) {
                let mut e = vec![0 as c_char; ERROR_BYTES];
                // SAFETY: as the compilation above, with the interpreter.
                let trial = unsafe {
                    (self.lib.interp.create_factory)(
                        name.as_ptr(),
                        code.as_ptr(),
                        argv.len() as i32,
                        argv.as_ptr(),
                        e.as_mut_ptr(),
                    )
                };
                if trial.is_null() {
                    // SAFETY: libfaust wrote a NUL-terminated message into the zeroed buffer.
                    let message = unsafe { std::ffi::CStr::from_ptr(e.as_ptr()) }.to_string_lossy();
                    if let Some(names) = foreign_constant_named(&message) {
                        // SAFETY: the factory is live and has no instance.
                        unsafe { (self.fns(backend).delete_factory)(handle) };
                        return Err(FaustError::ForeignConstant {
                            name: source.name.clone(),
                            names: vec![names],
                        });
                    }
                } else {
                    // SAFETY: the interpreter's factory just made, with no instance.
                    unsafe { (self.fns(Backend::Interp).delete_factory)(trial) };
                }
            }
        }
        if let (false, Backend::Interp, Some(b)) = (from_disk, backend, bitcode) {
            // The interpreter's state is its two heaps, whose sizes its code's header gives
            // (written to a temporary file, read back, removed).
            // The same header lists its sound files, which the interpreter crashes reading
            // (its user interface does not name them, as LLVM's does).
            let head = created_temp("fbc").and_then(|p| {
                let t = CString::new(p.as_os_str().as_encoded_bytes()).ok()?;
                // SAFETY: a live interpreter factory and a NUL-terminated path.
                let written = unsafe { (b.write)(handle, t.as_ptr()) };
                let head = written.then(|| read_head(&p, 1 << 20)).flatten();
                let _ = std::fs::remove_file(&p);
                head
            });
            let labels = head.as_deref().map(interp_soundfiles).unwrap_or_default();
            if !labels.is_empty() {
                // SAFETY: the factory is live and has no instance.
                unsafe { (self.fns(backend).delete_factory)(handle) };
                return Err(FaustError::InterpSoundfile {
                    name: source.name.clone(),
                    labels,
                });
            }
            let bytes = head.as_deref().and_then(interp_heap_bytes);
            if let Some(bytes) = bytes.filter(|&b| b > fugue_dsp::MAX_NODE_MEMORY as u64) {
                // SAFETY: the factory is live and has no instance.
                unsafe { (self.fns(backend).delete_factory)(handle) };
                return Err(FaustError::TooLarge {
                    name: source.name.clone(),
                    bytes,
                });
            }
            // The interpreter's heaps are each instance's own, its tables with them.
            state = bytes.map(|b| (b, 0));
        }
        self.compiled.fetch_add(1, Ordering::Relaxed);
        if from_disk {
            if temporary.0.is_none() {
                self.from_disk.fetch_add(1, Ordering::Relaxed);
            }
        } else if let (Backend::Interp, Some(path), Some(b)) = (backend, &kept, bitcode) {
            // The helper's compilation of an interpreted program, for its parent to read.
            if let Ok(t) = CString::new(path.as_os_str().as_encoded_bytes()) {
                // SAFETY: a live interpreter factory and a NUL-terminated path.
                unsafe { (b.write)(handle, t.as_ptr()) };
            }
        } else if let (Backend::Llvm, Some(path), Some(m), Some((bytes, tables))) =
            (backend, &kept, machine, state)
        {
            // Kept for the next run: written beside its place, then renamed, so that no
            // process reads half a file; a cache that cannot be written is only slower.
            // The state's size first: a program is read back only with it.
            let dir = path.parent().unwrap_or(Path::new("."));
            let tmp = path.with_extension(format!("{}.part", std::process::id()));
            let tmp_state = path.with_extension(format!("{}.state-part", std::process::id()));
            // (libfaust says on standard error that it cannot write a file: asked only where
            // it can.)
            if writable(dir) {
                if let Ok(t) = CString::new(tmp.as_os_str().as_encoded_bytes()) {
                    // SAFETY: a live LLVM factory, a NUL-terminated path, the empty target.
                    if unsafe { (m.write)(handle, t.as_ptr(), empty.as_ptr()) } {
                        // The state's size and the file's checksum first, then the file: two
                        // processes that keep the same program at once may leave one's
                        // checksum beside the other's file, which is then compiled again.
                        if let Some(sum) = checksum(&tmp) {
                            if std::fs::write(&tmp_state, format!("{bytes} {tables} {sum:016x}\n"))
                                .is_ok()
                                && std::fs::rename(&tmp_state, path.with_extension("state")).is_ok()
                            {
                                let _ = std::fs::rename(&tmp, path);
                                if in_cache {
                                    trim_cache(dir);
                                }
                            }
                        }
                    }
                }
                let _ = std::fs::remove_file(&tmp);
                let _ = std::fs::remove_file(&tmp_state);
            }
        }
        let fns = self.fns(backend);
        // A probe instance gives the ports and the parameters.
        // SAFETY: `handle` is a live factory of this backend.
        let dsp = unsafe { (fns.create)(handle) };
        if dsp.is_null() {
            // SAFETY: the factory is live and has no instance.
            unsafe { (fns.delete_factory)(handle) };
            return Err(FaustError::Instance {
                name: source.name.clone(),
            });
        }
        // SAFETY: `dsp` is a live instance of this backend, deleted right after.
        let (inputs, outputs, ui) = unsafe {
            // Initialised in the child only, where it is a trial of the program's
            // initialisation under the child's time limit (a table may take long to fill):
            // its ports and user interface need none, and each instance initialises itself.
            if !guarded {
                (fns.init)(dsp, 48_000);
            }
            let io = ((fns.inputs)(dsp), (fns.outputs)(dsp));
            let ui = ui::walk(fns.build_ui, dsp);
            (fns.delete)(dsp);
            (io.0.max(0) as usize, io.1.max(0) as usize, ui)
        };
        Ok(Factory {
            faust: self.clone(),
            handle,
            name: source.name.clone(),
            backend,
            inputs,
            outputs,
            params: ui.params,
            state_bytes: state.map(|(b, _)| b),
            table_bytes: state.map_or(0, |(_, t)| t),
            soundfiles: ui.soundfiles,
            class_rate: std::sync::Mutex::new(None),
            #[cfg(test)]
            tables_filled: std::sync::atomic::AtomicUsize::new(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instance's size from the IR, in 64 bits: a delay of 2^30 samples (which libfaust's
    /// 32-bit size wraps to a few bytes), nested arrays, pointers and named structures.
    #[test]
    fn the_state_size_is_read_from_the_ir() {
        let ir = "; ModuleID = 'x'\n%struct.dspmydsp = type <{ i32, [1073741824 x float], [6 x float], i32 }>\n";
        assert_eq!(state_bytes(ir), Some((4 + (1 << 32) + 24 + 4, 0)));
        let ir = "%struct.Inner = type { double, [2 x [3 x i32]] }\n%struct.dsp = type <{ %struct.Inner, float*, ptr, i8, [4 x %struct.Inner] }>\n";
        let inner = 8 + 24;
        assert_eq!(state_bytes(ir), Some((inner + 8 + 8 + 1 + 4 * inner, 0)));
        let ir = "%struct.dsp = type <{ i32 }>\n@ftbl0 = internal unnamed_addr global [300000000 x float] zeroinitializer\n@\"{name}\" = internal constant [4 x i8] c\"abc\\00\"\n";
        assert_eq!(state_bytes(ir), Some((4 + 1_200_000_000, 1_200_000_000)));
        assert_eq!(state_bytes("define void @f() {\n}\n"), None);
        assert_eq!(state_bytes("%x = type { fp128 }\n"), None);
    }

    /// Held by every test that compiles: each fresh handle has a lock of its own, and
    /// libfaust's compiler is not thread-safe.
    static COMPILER: Mutex<()> = Mutex::new(());

    fn compiler() -> MutexGuard<'static, ()> {
        COMPILER.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh handle on the system's libfaust, with nothing compiled in memory.
    fn fresh() -> Arc<Faust> {
        let path =
            std::env::var_os(crate::ffi::LIBFAUST_ENV).unwrap_or_else(|| "libfaust.so.2".into());
        Faust::open(Path::new(&path)).unwrap()
    }

    /// 512 frames of a fresh instance of `f` at 48 kHz, its inputs silent: output 0.
    fn block(f: &Arc<Factory>) -> Vec<f32> {
        f.trial(512).unwrap().swap_remove(0)
    }

    /// A program loaded again after a file it imports changed is compiled again (the host's
    /// `load` after an edit of a library), and not when nothing changed.
    #[test]
    fn an_edited_import_is_compiled_again() {
        if !crate::available_for("an_edited_import_is_compiled_again") {
            return;
        }
        let _compiler = compiler();
        let dir = std::env::temp_dir().join(format!("fugue-faust-edit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("level.lib"), "g = 0.25;").unwrap();
        let source = Source {
            code: "import(\"level.lib\"); process = g;".into(),
            name: "edit-test".into(),
            includes: vec![dir.clone()],
        };
        let faust = fresh();
        let a = faust.factory(&source, Backend::Interp).unwrap();
        assert_eq!(block(&a)[0], 0.25);
        std::thread::sleep(RECHECK);
        let same = faust.factory(&source, Backend::Interp).unwrap();
        assert!(Arc::ptr_eq(&a, &same), "nothing changed: the same factory");
        std::fs::write(dir.join("level.lib"), "g = 0.5;").unwrap();
        std::thread::sleep(RECHECK);
        let b = faust.factory(&source, Backend::Interp).unwrap();
        assert_eq!(block(&b)[0], 0.5, "the edited library's value");
        assert_eq!(faust.compilations(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Every form of an import names its file; an unquoted or unparenthesised one, none.
    #[test]
    fn imports_are_found_in_every_form() {
        let text = br#"import("stdfaust.lib");
            import ( "a/b.lib" ) ;
            ma = library("maths.lib"); // import("commented.lib")
            c = component(
                "voice.dsp");
            importx("not.lib"); import(notquoted); library "x.lib";
            import(
                // "old.lib"
                "new.lib"
            );
            import/* a */(/* b */"between.lib");
            process = 0;"#;
        let mut got = imports(text);
        got.sort();
        assert_eq!(
            got,
            [
                "a/b.lib",
                "between.lib",
                "commented.lib",
                "maths.lib",
                "new.lib",
                "stdfaust.lib",
                "voice.dsp"
            ]
        );
    }

    /// The fingerprint changes with an edit of the program, of a file it imports (directly
    /// or through another), with a file added earlier in the search (which libfaust would
    /// read instead) or removed, and with the order of the search where two files have one
    /// name; it is the same when nothing changed; an import of a URL has none (no disk
    /// cache).
    #[test]
    fn the_interpreters_heaps_are_read_from_its_codes_header() {
        let head = "interpreter_dsp_factory float\nfile_version 8\nname bd\ninputs 1 outputs 1\nint_heap_size 5 real_heap_size 134217729 sr_offset 1 count_offset 2\n";
        assert_eq!(interp_heap_bytes(head), Some(5 * 4 + 134217729 * 4));
        let double = head.replace(" float", " double");
        assert_eq!(interp_heap_bytes(&double), Some(5 * 4 + 134217729 * 8));
        let wrapped = head.replace("134217729", "-2147483000");
        assert_eq!(interp_heap_bytes(&wrapped), Some(5 * 4 + (1 << 31) * 4));
        assert_eq!(interp_heap_bytes("interpreter_dsp_factory float\n"), None);
        let ui = "user_interface_block\nblock_size 3\nopcode 289 kAddSoundfile offset -1 label \"fSoundfile0\" key \"snd\" value \"{'snd'}\" init 0 min 0 max 0 step 0\nstatic_init_block\nopcode 289 kAddSoundfile offset -1 label \"x\" key \"later\"\n";
        assert_eq!(interp_soundfiles(ui), vec!["snd".to_string()]);
        assert!(interp_soundfiles(head).is_empty());
    }

    /// An import of a named pipe is said, not opened (which would wait for a writer), and
    /// gives no fingerprint.
    #[test]
    fn an_imported_named_pipe_is_not_opened() {
        let root = std::env::temp_dir().join(format!("fugue-fifo-import-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let pipe = root.join("pipe.lib");
        let _ = std::fs::remove_file(&pipe);
        let c = CString::new(pipe.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_bounded(&pipe, 1 << 20), Err(Unreadable::Special));
        let source = Source {
            code: "import(\"pipe.lib\"); process = _;".to_string(),
            name: "t".into(),
            includes: vec![root.clone()],
        };
        assert_eq!(scan(&source).unwrap_err(), Unscanned::Special(pipe.clone()));
        assert_eq!(fingerprint(&source), None);
        // Found past an import that stops the fingerprint (a URL's).
        let source = Source {
            code: "import(\"https://x.org/a.lib\"); import(\"pipe.lib\"); process = _;".to_string(),
            ..source
        };
        assert_eq!(scan(&source).unwrap_err(), Unscanned::Special(pipe));
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A folder that an import finds before any file of its name is said (libfaust would
    /// fail on it, "input in flex scanner failed"); one after a file found first is not.
    #[test]
    fn an_import_that_finds_a_folder_first_is_said() {
        let root = std::env::temp_dir().join(format!("fugue-folder-import-{}", std::process::id()));
        let (first, second) = (root.join("first"), root.join("second"));
        std::fs::create_dir_all(first.join("x.lib")).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(second.join("x.lib"), "y = 1;").unwrap();
        let source = |includes: Vec<PathBuf>| Source {
            code: "import(\"x.lib\"); process = y;".to_string(),
            name: "t".into(),
            includes,
        };
        assert_eq!(
            scan(&source(vec![first.clone(), second.clone()])).unwrap_err(),
            Unscanned::Folder(first.join("x.lib"))
        );
        assert!(scan(&source(vec![second.clone(), first.clone()])).is_ok());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_fingerprint_follows_every_file_a_program_may_read() {
        let root = std::env::temp_dir().join(format!("fugue-fingerprint-{}", std::process::id()));
        let (first, second) = (root.join("first"), root.join("second"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(second.join("mine.lib"), "import(\"deep.lib\"); f = _;").unwrap();
        std::fs::write(second.join("deep.lib"), "g = *(0.5);").unwrap();
        let source = |code: &str| Source {
            code: code.to_string(),
            name: "t".into(),
            includes: vec![first.clone(), second.clone()],
        };
        let code = "import(\"mine.lib\"); process = f : g;";
        let base = fingerprint(&source(code)).unwrap();
        assert_eq!(fingerprint(&source(code)), Some(base));
        assert_ne!(
            fingerprint(&source("import(\"mine.lib\"); process = g;")),
            Some(base)
        );
        std::fs::write(second.join("deep.lib"), "g = *(0.25);").unwrap();
        let deep = fingerprint(&source(code)).unwrap();
        assert_ne!(deep, base, "an edit of a file imported by an import");
        std::fs::write(first.join("mine.lib"), "f = _;").unwrap();
        let shadowed = fingerprint(&source(code)).unwrap();
        assert_ne!(shadowed, deep, "a file added earlier in the search");
        // Two files of one name: which comes first in the search decides.
        let swapped = Source {
            includes: vec![second.clone(), first.clone()],
            ..source(code)
        };
        assert_ne!(fingerprint(&swapped), Some(shadowed), "the search's order");
        std::fs::remove_file(first.join("mine.lib")).unwrap();
        assert_eq!(fingerprint(&source(code)), Some(deep), "and removed again");
        assert_eq!(
            fingerprint(&source("import(\"https://x.org/a.lib\"); process = _;")),
            None
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A program's shared tables (LLVM) are filled once for all its instances at one rate,
    /// and again when an instance is made at another; each instance still computes its own
    /// constants from its rate. The interpreter fills each instance's own tables.
    #[test]
    fn shared_tables_are_filled_once_per_rate() {
        if !crate::available_for("shared_tables_are_filled_once_per_rate") {
            return;
        }
        let _compiler = compiler();
        // A table (its entries k / 2, read at entry 3) and a constant of the rate (SR / 1000).
        let code = "import(\"stdfaust.lib\"); process = rdtable(8, float(ba.time) * 0.5, 3) + ma.SR / 1000.0;";
        let source = Source::code(code, "tables-test", None);
        let faust = fresh();
        let backends: &[Backend] = if faust.has_llvm() {
            &[Backend::Llvm, Backend::Interp]
        } else {
            &[Backend::Interp]
        };
        for &backend in backends {
            let f = faust.factory(&source, backend).unwrap();
            let first = |rate: u32| {
                let mut t = Trial::new(&f, rate, true, &[]).unwrap();
                t.run(&mut vec![vec![0.0f32; 4]; f.inputs], 4);
                t.outs[0][0]
            };
            let filled = || f.tables_filled.load(std::sync::atomic::Ordering::Relaxed);
            let at_48k = 1.5 + 48.0;
            let at_44k = 1.5 + 44.1;
            let near = |x: f32, y: f32| (x - y).abs() < 1e-3;
            for (rate, want) in [
                (48_000, at_48k),
                (48_000, at_48k),
                (48_000, at_48k),
                (44_100, at_44k),
                (48_000, at_48k),
                (48_000, at_48k),
            ] {
                let got = first(rate);
                assert!(near(got, want), "{backend:?} at {rate} Hz: {got}");
            }
            match backend {
                Backend::Llvm => assert_eq!(filled(), 3),
                Backend::Interp => assert_eq!(filled(), 6),
            }
        }
    }

    /// LLVM compilations kept on disk: a program compiled by one handle is read back by a
    /// fresh one (as by the next process) and computes the same samples; another program
    /// gets a file of its own; `off` reads and writes nothing.
    #[test]
    fn a_compiled_program_is_read_back_from_the_disk_cache() {
        if !crate::available_for("a_compiled_program_is_read_back_from_the_disk_cache") {
            return;
        }
        let _compiler = compiler();
        if !fresh().has_llvm() {
            eprintln!("SKIPPED: libfaust has no LLVM backend: nothing is kept on disk");
            return;
        }
        let dir = std::env::temp_dir().join(format!("fugue-faust-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // The only test of this crate that sets it; the other tests only read it (Rust's
        // environment functions hold one lock).
        std::env::set_var(CACHE_ENV, &dir);
        let code = "import(\"stdfaust.lib\"); process = os.osc(331) * 0.25 + 0.000321;";
        let source = Source::code(code, "cache-test", None);
        let files = || {
            std::fs::read_dir(&dir)
                .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        let first = fresh();
        let a = first.factory(&source, Backend::Llvm).unwrap();
        assert_eq!((first.compilations(), first.disk_reads()), (1, 0));
        // The program and the size of its state, which is read back with it.
        let mut kept = files();
        kept.sort();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept[0].extension().is_some_and(|x| x == "fmc"), "{kept:?}");
        assert!(
            kept[1].extension().is_some_and(|x| x == "state"),
            "{kept:?}"
        );
        assert!(a.state_bytes.is_some_and(|b| b > 0), "{:?}", a.state_bytes);
        let second = fresh();
        let b = second.factory(&source, Backend::Llvm).unwrap();
        assert_eq!((second.compilations(), second.disk_reads()), (1, 1));
        assert_eq!((a.inputs, a.outputs), (b.inputs, b.outputs));
        assert_eq!(a.state_bytes, b.state_bytes);
        assert!(
            block(&a) == block(&b),
            "the program read back computes other samples"
        );
        let other = Source::code(&code.replace("331", "332"), "cache-test", None);
        second.factory(&other, Backend::Llvm).unwrap();
        assert_eq!(second.disk_reads(), 1);
        assert_eq!(files().len(), 4);
        std::env::set_var(CACHE_ENV, "off");
        let third = fresh();
        third.factory(&source, Backend::Llvm).unwrap();
        assert_eq!(third.disk_reads(), 0);
        assert_eq!(files().len(), 4);
        // A program kept without the size of its state and its checksum is compiled again
        // (and kept anew).
        std::env::set_var(CACHE_ENV, &dir);
        for f in files() {
            if f.extension().is_some_and(|x| x == "state") {
                std::fs::remove_file(f).unwrap();
            }
        }
        let fourth = fresh();
        fourth.factory(&source, Backend::Llvm).unwrap();
        assert_eq!((fourth.compilations(), fourth.disk_reads()), (1, 0));
        let fifth = fresh();
        fifth.factory(&source, Backend::Llvm).unwrap();
        assert_eq!(fifth.disk_reads(), 1);
        // A kept program whose file was damaged (its checksum no longer matches) is not
        // loaded, which would crash the process, but compiled again and kept anew.
        // Every kept program's file damaged: the folder holds two programs, and which one
        // a listing gives first depends on the file system.
        let kept: Vec<_> = files()
            .into_iter()
            .filter(|f| f.extension().is_some_and(|x| x == "fmc"))
            .collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        for f in &kept {
            let mut bytes = std::fs::read(f).unwrap();
            for b in bytes.iter_mut().skip(64).take(1536) {
                *b = b.wrapping_mul(31).wrapping_add(7);
            }
            std::fs::write(f, &bytes).unwrap();
        }
        let sixth = fresh();
        let c = sixth.factory(&source, Backend::Llvm).unwrap();
        assert_eq!((sixth.compilations(), sixth.disk_reads()), (1, 0));
        assert!(block(&a) == block(&c));
        let seventh = fresh();
        seventh.factory(&source, Backend::Llvm).unwrap();
        assert_eq!(seventh.disk_reads(), 1);
        // A size of state beyond what a kept program can have (its checksum intact) is a
        // damaged `.state`: compiled again, with the true size.
        for f in files() {
            if f.extension().is_some_and(|x| x == "state") {
                let text = std::fs::read_to_string(&f).unwrap();
                let (_, sum) = text.trim().split_once(' ').unwrap();
                std::fs::write(&f, format!("999999999999 {sum}\n")).unwrap();
            }
        }
        let eighth = fresh();
        let d = eighth.factory(&source, Backend::Llvm).unwrap();
        assert_eq!((eighth.compilations(), eighth.disk_reads()), (1, 0));
        assert_eq!(d.state_bytes, a.state_bytes);
        std::env::remove_var(CACHE_ENV);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
