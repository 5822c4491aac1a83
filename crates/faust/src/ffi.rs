//! libfaust, loaded at run time: the few functions of its C API that the kind uses
//! (`faust/dsp/llvm-dsp-c.h`, `faust/dsp/interpreter-dsp-c.h`, `faust/gui/CInterface.h`).
//!
//! Nothing here links against libfaust: [`Lib::open`] opens the shared library with
//! `libloading` and looks the functions up, so that fugue builds and runs where Faust is
//! absent. The LLVM functions are optional: a libfaust built without its LLVM backend still
//! gives the interpreter.

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::Library;

/// The environment variable that names the libfaust shared library to open, instead of the
/// system's `libfaust.so.2` (tests point it at a file that does not exist); empty: unset.
pub const LIBFAUST_ENV: &str = "FUGUE_LIBFAUST";

/// Bytes of the error buffer that libfaust's factory functions fill (the headers ask for
/// 4096).
pub const ERROR_BYTES: usize = 4096;

/// An opaque factory or instance handle (LLVM or interpreter).
pub type Handle = *mut c_void;

type CreateLlvm = unsafe extern "C" fn(
    name: *const c_char,
    code: *const c_char,
    argc: c_int,
    argv: *const *const c_char,
    target: *const c_char,
    error: *mut c_char,
    opt_level: c_int,
) -> Handle;
type CreateInterp = unsafe extern "C" fn(
    name: *const c_char,
    code: *const c_char,
    argc: c_int,
    argv: *const *const c_char,
    error: *mut c_char,
) -> Handle;
type DeleteFactory = unsafe extern "C" fn(Handle) -> bool;
type CreateInstance = unsafe extern "C" fn(Handle) -> Handle;
type DeleteInstance = unsafe extern "C" fn(Handle);
type Count = unsafe extern "C" fn(Handle) -> c_int;
type Init = unsafe extern "C" fn(Handle, c_int);
type Plain = unsafe extern "C" fn(Handle);
type BuildUi = unsafe extern "C" fn(Handle, *mut UiGlue);
/// `compute(dsp, count, inputs, outputs)`.
pub type Compute = unsafe extern "C" fn(Handle, c_int, *mut *mut f32, *mut *mut f32);
type ReadMachine =
    unsafe extern "C" fn(path: *const c_char, target: *const c_char, error: *mut c_char) -> Handle;
type WriteMachine =
    unsafe extern "C" fn(factory: Handle, path: *const c_char, target: *const c_char) -> bool;
type FreeMemory = unsafe extern "C" fn(*mut c_void);
type ReadBitcode = unsafe extern "C" fn(path: *const c_char, error: *mut c_char) -> Handle;
type WriteBitcode = unsafe extern "C" fn(factory: Handle, path: *const c_char) -> bool;

/// An interpreter factory written to and read from a file (`faust/dsp/interpreter-dsp-c.h`),
/// which is how a child process hands its compilation over ([`crate::guard`]).
#[derive(Clone, Copy)]
pub struct BitcodeFns {
    /// `readCInterpreterDSPFactoryFromBitcodeFile(path, error)`.
    pub read: ReadBitcode,
    /// `writeCInterpreterDSPFactoryToBitcodeFile(factory, path)`.
    pub write: WriteBitcode,
}

/// What keeping compiled programs on disk takes (`faust/dsp/libfaust-c.h`,
/// `faust/dsp/llvm-dsp-c.h`): a factory written to and read from a machine-code file, and
/// the machine's target that names it.
#[derive(Clone, Copy)]
pub struct MachineFns {
    /// `readCDSPFactoryFromMachineFile(path, target, error)`.
    pub read: ReadMachine,
    /// `writeCDSPFactoryToMachineFile(factory, path, target)`.
    pub write: WriteMachine,
    /// `freeCMemory`.
    pub free: FreeMemory,
    /// `getCDSPMachineTarget()`: this machine's LLVM target (freed with `free`).
    pub target: unsafe extern "C" fn() -> *mut c_char,
    /// `writeCDSPFactoryToIR(factory)`: the factory's LLVM IR as text (freed with `free`).
    pub ir: unsafe extern "C" fn(Handle) -> *mut c_char,
}

/// The functions of one backend's instances.
#[derive(Clone, Copy)]
pub struct InstanceFns {
    /// `create...Instance(factory)`.
    pub create: CreateInstance,
    /// `delete...Instance(dsp)`.
    pub delete: DeleteInstance,
    /// `getNumInputs...Instance`.
    pub inputs: Count,
    /// `getNumOutputs...Instance`.
    pub outputs: Count,
    /// `init...Instance(dsp, rate)`: the program's shared tables (`classInit`), then the
    /// instance's constants, parameters and state.
    pub init: Init,
    /// `instanceInit...Instance(dsp, rate)`: the instance's constants, parameters and state
    /// only, the program's shared tables left as they are.
    pub instance_init: Init,
    /// `instanceResetUserInterface...Instance`.
    pub reset_ui: Plain,
    /// `instanceClear...Instance`.
    pub clear: Plain,
    /// `buildUserInterface...Instance(dsp, glue)`.
    pub build_ui: BuildUi,
    /// `compute...Instance`.
    pub compute: Compute,
    /// `delete...Factory(factory)`.
    pub delete_factory: DeleteFactory,
}

/// The LLVM backend's functions.
pub struct LlvmFns {
    /// `createCDSPFactoryFromString`.
    pub create_factory: CreateLlvm,
    /// Its instances.
    pub instance: InstanceFns,
    /// Machine-code files, when the library has them.
    pub machine: Option<MachineFns>,
}

/// The interpreter's functions.
pub struct InterpFns {
    /// `createCInterpreterDSPFactoryFromString`.
    pub create_factory: CreateInterp,
    /// Its instances.
    pub instance: InstanceFns,
    /// Factories in files, when the library has them.
    pub bitcode: Option<BitcodeFns>,
}

/// libfaust, opened: the library stays loaded as long as this lives (the function pointers
/// below point into it).
pub struct Lib {
    /// The file opened.
    pub path: PathBuf,
    /// The LLVM backend, when the library has it.
    pub llvm: Option<LlvmFns>,
    /// The interpreter.
    pub interp: InterpFns,
    /// `getCLibFaustVersion`.
    version: unsafe extern "C" fn() -> *const c_char,
    _library: Library,
}

impl std::fmt::Debug for Lib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lib")
            .field("path", &self.path)
            .field("llvm", &self.llvm.is_some())
            .finish()
    }
}

/// Looks `name` up in `lib` as a function of type `T`.
///
/// # Safety
/// `T` must be the function pointer type of the C declaration of `name`.
unsafe fn symbol<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller guarantees that `T` is the symbol's type; the value is a function
    // pointer, valid while `lib` stays loaded (the `Lib` that owns it keeps it).
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

impl Lib {
    /// The library that [`LIBFAUST_ENV`] names, or the system's `libfaust.so.2`
    /// (`libfaust.so` as a second choice).
    pub fn open_default() -> Result<Lib, String> {
        match std::env::var_os(LIBFAUST_ENV).filter(|p| !p.is_empty()) {
            Some(p) => Lib::open(Path::new(&p)),
            None => Lib::open(Path::new("libfaust.so.2"))
                .or_else(|first| Lib::open(Path::new("libfaust.so")).map_err(|_| first)),
        }
    }

    /// Opens `path` (a bare name is searched as the dynamic loader searches) and looks up
    /// the functions.
    pub fn open(path: &Path) -> Result<Lib, String> {
        // Global: the code that LLVM generates calls the math functions that libfaust and the
        // C library export, which the JIT looks up among the process's global symbols.
        let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
        // SAFETY: loading libfaust runs its initialisers (LLVM's and the C++ runtime's), which
        // have no preconditions on the loading program.
        let library: Library = unsafe { libloading::os::unix::Library::open(Some(path), flags) }
            .map_err(|e| e.to_string())?
            .into();
        // SAFETY: for every `symbol` call below, each type is the declaration of that function
        // in libfaust 2.x's C headers, named in the module's documentation.
        let interp = unsafe {
            InterpFns {
                create_factory: symbol(&library, "createCInterpreterDSPFactoryFromString")?,
                instance: InstanceFns {
                    create: symbol(&library, "createCInterpreterDSPInstance")?,
                    delete: symbol(&library, "deleteCInterpreterDSPInstance")?,
                    inputs: symbol(&library, "getNumInputsCInterpreterDSPInstance")?,
                    outputs: symbol(&library, "getNumOutputsCInterpreterDSPInstance")?,
                    init: symbol(&library, "initCInterpreterDSPInstance")?,
                    instance_init: symbol(&library, "instanceInitCInterpreterDSPInstance")?,
                    reset_ui: symbol(
                        &library,
                        "instanceResetUserInterfaceCInterpreterDSPInstance",
                    )?,
                    clear: symbol(&library, "instanceClearCInterpreterDSPInstance")?,
                    build_ui: symbol(&library, "buildUserInterfaceCInterpreterDSPInstance")?,
                    compute: symbol(&library, "computeCInterpreterDSPInstance")?,
                    delete_factory: symbol(&library, "deleteCInterpreterDSPFactory")?,
                },
                bitcode: (|| -> Result<BitcodeFns, String> {
                    Ok(BitcodeFns {
                        read: symbol(&library, "readCInterpreterDSPFactoryFromBitcodeFile")?,
                        write: symbol(&library, "writeCInterpreterDSPFactoryToBitcodeFile")?,
                    })
                })()
                .ok(),
            }
        };
        // SAFETY: as above.
        let llvm = unsafe {
            (|| -> Result<LlvmFns, String> {
                Ok(LlvmFns {
                    create_factory: symbol(&library, "createCDSPFactoryFromString")?,
                    instance: InstanceFns {
                        create: symbol(&library, "createCDSPInstance")?,
                        delete: symbol(&library, "deleteCDSPInstance")?,
                        inputs: symbol(&library, "getNumInputsCDSPInstance")?,
                        outputs: symbol(&library, "getNumOutputsCDSPInstance")?,
                        init: symbol(&library, "initCDSPInstance")?,
                        instance_init: symbol(&library, "instanceInitCDSPInstance")?,
                        reset_ui: symbol(&library, "instanceResetUserInterfaceCDSPInstance")?,
                        clear: symbol(&library, "instanceClearCDSPInstance")?,
                        build_ui: symbol(&library, "buildUserInterfaceCDSPInstance")?,
                        compute: symbol(&library, "computeCDSPInstance")?,
                        delete_factory: symbol(&library, "deleteCDSPFactory")?,
                    },
                    machine: (|| -> Result<MachineFns, String> {
                        Ok(MachineFns {
                            read: symbol(&library, "readCDSPFactoryFromMachineFile")?,
                            write: symbol(&library, "writeCDSPFactoryToMachineFile")?,
                            free: symbol(&library, "freeCMemory")?,
                            target: symbol(&library, "getCDSPMachineTarget")?,
                            ir: symbol(&library, "writeCDSPFactoryToIR")?,
                        })
                    })()
                    .ok(),
                })
            })()
        }
        .ok();
        // SAFETY: as above.
        let version = unsafe { symbol(&library, "getCLibFaustVersion")? };
        Ok(Lib {
            path: path.to_path_buf(),
            llvm,
            interp,
            version,
            _library: library,
        })
    }

    /// libfaust's version ("2.54.9").
    pub fn version(&self) -> String {
        // SAFETY: `getCLibFaustVersion` returns a static NUL-terminated string.
        let p = unsafe { (self.version)() };
        if p.is_null() {
            return String::new();
        }
        // SAFETY: non-null, NUL-terminated, static (checked above).
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }
}

/// `openTabBox` and its siblings: a group opens with a label.
pub type OpenBox = unsafe extern "C" fn(*mut c_void, *const c_char);
/// `closeBox`.
pub type CloseBox = unsafe extern "C" fn(*mut c_void);
/// `addButton`, `addCheckButton`.
pub type AddButton = unsafe extern "C" fn(*mut c_void, *const c_char, *mut f32);
/// `addVerticalSlider`, `addHorizontalSlider`, `addNumEntry`.
pub type AddSlider = unsafe extern "C" fn(*mut c_void, *const c_char, *mut f32, f32, f32, f32, f32);
/// `addHorizontalBargraph`, `addVerticalBargraph`.
pub type AddBargraph = unsafe extern "C" fn(*mut c_void, *const c_char, *mut f32, f32, f32);
/// `addSoundfile`.
pub type AddSoundfile =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut c_void);
/// `declare(zone, key, value)`.
pub type Declare = unsafe extern "C" fn(*mut c_void, *mut f32, *const c_char, *const c_char);

/// `UIGlue` of `faust/gui/CInterface.h`: the callbacks that `buildUserInterface` calls, one
/// per widget, with `ui` as their first argument.
#[repr(C)]
pub struct UiGlue {
    /// Passed back to every callback.
    pub ui: *mut c_void,
    /// `openTabBox`.
    pub open_tab_box: OpenBox,
    /// `openHorizontalBox`.
    pub open_horizontal_box: OpenBox,
    /// `openVerticalBox`.
    pub open_vertical_box: OpenBox,
    /// `closeBox`.
    pub close_box: CloseBox,
    /// `addButton`.
    pub add_button: AddButton,
    /// `addCheckButton`.
    pub add_check_button: AddButton,
    /// `addVerticalSlider`.
    pub add_vertical_slider: AddSlider,
    /// `addHorizontalSlider`.
    pub add_horizontal_slider: AddSlider,
    /// `addNumEntry`.
    pub add_num_entry: AddSlider,
    /// `addHorizontalBargraph`.
    pub add_horizontal_bargraph: AddBargraph,
    /// `addVerticalBargraph`.
    pub add_vertical_bargraph: AddBargraph,
    /// `addSoundfile`.
    pub add_soundfile: AddSoundfile,
    /// `declare`.
    pub declare: Declare,
}
