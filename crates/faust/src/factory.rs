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
        let code = std::fs::read_to_string(file).map_err(|e| FaustError::Read {
            file: file.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut includes = Vec::new();
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            includes.push(dir.to_path_buf());
        }
        includes.extend(folder.map(Path::to_path_buf));
        Ok(Source {
            code,
            name: file.display().to_string(),
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
    backend: Backend,
    /// The DSP's inputs.
    pub inputs: usize,
    /// The DSP's outputs.
    pub outputs: usize,
    /// The DSP's parameters, in the order of its user interface.
    pub params: Vec<Param>,
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

impl Factory {
    /// The backend that compiled it.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The instance functions of its backend.
    pub(crate) fn fns(&self) -> InstanceFns {
        self.faust.fns(self.backend)
    }

    /// A new instance, initialised at `rate` Hz, and its parameters' zones.
    pub(crate) fn instance(self: &Arc<Self>, rate: u32) -> Result<Instance, FaustError> {
        let fns = self.fns();
        let _lock = self.faust.lock();
        // SAFETY: `handle` is a live factory of this backend (freed only in `drop`).
        let dsp = unsafe { (fns.create)(self.handle) };
        if dsp.is_null() {
            return Err(FaustError::Instance);
        }
        // SAFETY: `dsp` is a live instance of this backend.
        unsafe { (fns.init)(dsp, rate as i32) };
        // SAFETY: as above.
        let zones = unsafe { ui::walk(fns.build_ui, dsp) }.zones;
        Ok(Instance {
            factory: self.clone(),
            dsp,
            fns,
            zones,
        })
    }

    /// The names a parameter attribute may use, comma-separated (paths of the inputs).
    pub fn param_names(&self) -> String {
        let v: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.is_input())
            .map(|p| p.path.as_str())
            .collect();
        if v.is_empty() {
            "none".to_string()
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
    /// Every factory compiled, kept for the life of the process: a program loaded again
    /// (a graph rebuilt, the automatic choice's trials, the host's next `load`) is not
    /// compiled again.
    cache: Mutex<HashMap<(Source, Backend), Arc<Factory>>>,
    compiled: AtomicUsize,
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

    /// How many programs this has compiled (a factory found in the cache is not counted).
    pub fn compilations(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
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
        if let Some(f) = cache.get(&key) {
            return Ok(f.clone());
        }
        let f = Arc::new(self.compile(source, backend)?);
        cache.insert(key, f.clone());
        Ok(f)
    }

    /// Compiles `source` (libfaust's lock held).
    fn compile(self: &Arc<Self>, source: &Source, backend: Backend) -> Result<Factory, FaustError> {
        let cstr = |s: &str| {
            CString::new(s).map_err(|_| FaustError::Compile {
                name: source.name.clone(),
                message: "the program contains a NUL character".to_string(),
            })
        };
        let name = cstr(&source.name)?;
        let code = cstr(&source.code)?;
        let mut args: Vec<CString> = Vec::new();
        for dir in &source.includes {
            args.push(cstr("-I")?);
            args.push(cstr(&dir.to_string_lossy())?);
        }
        let argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let mut error = vec![0 as c_char; ERROR_BYTES];
        let empty = c"";
        let _lock = self.lock();
        let handle = match (&self.lib.llvm, backend) {
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
            let message = unsafe { std::ffi::CStr::from_ptr(error.as_ptr()) }
                .to_string_lossy()
                .trim()
                .to_string();
            return Err(FaustError::Compile {
                name: source.name.clone(),
                message,
            });
        }
        self.compiled.fetch_add(1, Ordering::Relaxed);
        let fns = self.fns(backend);
        // A probe instance gives the ports and the parameters.
        // SAFETY: `handle` is a live factory of this backend.
        let dsp = unsafe { (fns.create)(handle) };
        if dsp.is_null() {
            // SAFETY: the factory is live and has no instance.
            unsafe { (fns.delete_factory)(handle) };
            return Err(FaustError::Instance);
        }
        // SAFETY: `dsp` is a live instance of this backend, deleted right after.
        let (inputs, outputs, params) = unsafe {
            (fns.init)(dsp, 48_000);
            let io = ((fns.inputs)(dsp), (fns.outputs)(dsp));
            let params = ui::walk(fns.build_ui, dsp).params;
            (fns.delete)(dsp);
            (io.0.max(0) as usize, io.1.max(0) as usize, params)
        };
        Ok(Factory {
            faust: self.clone(),
            handle,
            backend,
            inputs,
            outputs,
            params,
        })
    }
}
