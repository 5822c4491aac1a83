//! The C side: the lilv functions fugue calls, looked up in `liblilv-0.so.0` when it is first
//! needed (nothing links against lilv, so fugue builds and runs where it is absent), and the
//! LV2 structures that a host hands to a plugin.
//!
//! Only what the `lv2` kind uses is declared. lilv's `lilv_instance_*` calls other than
//! `lilv_instance_free` are inline functions of its header that call through the plugin's
//! descriptor; [`RawInstance`] is that header's public instance structure, through which
//! fugue calls the descriptor the same way.

use std::ffi::{c_char, c_void};

use libloading::Library;

/// The library's name, as the dynamic loader finds it (Debian: package `liblilv-0-0`).
pub const LIBRARY: &str = "liblilv-0.so.0";

/// The environment variable that names another file to load instead of [`LIBRARY`].
pub const LIBRARY_VAR: &str = "FUGUE_LIBLILV";

/// `LilvWorld`, `LilvPlugin`, ...: opaque to fugue.
#[repr(C)]
pub struct Opaque {
    _private: [u8; 0],
}

/// A lilv iterator (`LilvIter`).
pub type Iter = *mut Opaque;

/// `LV2_Feature`.
#[repr(C)]
pub struct Feature {
    /// The feature's URI.
    pub uri: *const c_char,
    /// Its data.
    pub data: *mut c_void,
}

/// `LV2_Descriptor`: the plugin's functions.
#[repr(C)]
pub struct Descriptor {
    /// The plugin's URI.
    pub uri: *const c_char,
    /// `instantiate` (called by lilv).
    pub instantiate: *const c_void,
    /// `connect_port(handle, port, data)`.
    pub connect_port: Option<unsafe extern "C" fn(*mut c_void, u32, *mut c_void)>,
    /// `activate(handle)`, optional.
    pub activate: Option<unsafe extern "C" fn(*mut c_void)>,
    /// `run(handle, frames)`.
    pub run: Option<unsafe extern "C" fn(*mut c_void, u32)>,
    /// `deactivate(handle)`, optional.
    pub deactivate: Option<unsafe extern "C" fn(*mut c_void)>,
    /// `cleanup(handle)` (called by lilv).
    pub cleanup: *const c_void,
    /// `extension_data(uri)`.
    pub extension_data: *const c_void,
}

/// `struct LilvInstanceImpl`, as lilv's header publishes it.
#[repr(C)]
pub struct RawInstance {
    /// The plugin's descriptor.
    pub descriptor: *const Descriptor,
    /// The plugin's handle.
    pub handle: *mut c_void,
    /// lilv's own data.
    pub pimpl: *mut c_void,
}

/// `LV2_URID_Map`.
#[repr(C)]
pub struct UridMap {
    /// Passed back to `map`.
    pub handle: *mut c_void,
    /// URI to URID.
    pub map: unsafe extern "C" fn(*mut c_void, *const c_char) -> u32,
}

/// `LV2_URID_Unmap`.
#[repr(C)]
pub struct UridUnmap {
    /// Passed back to `unmap`.
    pub handle: *mut c_void,
    /// URID to URI.
    pub unmap: unsafe extern "C" fn(*mut c_void, u32) -> *const c_char,
}

/// `LV2_Options_Option`.
#[repr(C)]
pub struct OptionsOption {
    /// `LV2_OPTIONS_INSTANCE` (0) here.
    pub context: u32,
    /// Unused (0).
    pub subject: u32,
    /// The option's URID (0 ends the array).
    pub key: u32,
    /// Bytes of the value.
    pub size: u32,
    /// The value's type URID.
    pub kind: u32,
    /// The value.
    pub value: *const c_void,
}

macro_rules! lilv_functions {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The lilv functions fugue calls, from the loaded library.
        pub struct Lilv {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,
            )*
            /// Kept open while the pointers above are used.
            _library: Library,
        }

        /// The file that [`LIBRARY_VAR`] names, when it names one (an empty variable names none:
/// opening "" would open the program itself).
pub fn chosen() -> Option<std::ffi::OsString> {
    std::env::var_os(LIBRARY_VAR).filter(|v| !v.is_empty())
}

impl Lilv {
            /// Looks every function up in `library`.
            ///
            /// # Safety
            /// `library` must be lilv 0.24 (the functions are given the types of its header).
            unsafe fn resolve(library: Library) -> Result<Lilv, String> {
                $(
                    // SAFETY: the caller promises lilv 0.24, whose header declares this
                    // function with these argument and return types.
                    let $name = unsafe {
                        *library
                            .get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                            .map_err(|e| e.to_string())?
                    };
                )*
                Ok(Lilv { $($name,)* _library: library })
            }
        }
    };
}

lilv_functions! {
    lilv_world_new: fn() -> *mut Opaque;
    lilv_world_load_all: fn(*mut Opaque);
    lilv_world_get_all_plugins: fn(*const Opaque) -> *const Opaque;
    lilv_plugins_begin: fn(*const Opaque) -> Iter;
    lilv_plugins_next: fn(*const Opaque, Iter) -> Iter;
    lilv_plugins_is_end: fn(*const Opaque, Iter) -> bool;
    lilv_plugins_get: fn(*const Opaque, Iter) -> *const Opaque;
    lilv_plugin_get_uri: fn(*const Opaque) -> *const Opaque;
    lilv_plugin_get_name: fn(*const Opaque) -> *mut Opaque;
    lilv_plugin_get_class: fn(*const Opaque) -> *const Opaque;
    lilv_plugin_class_get_label: fn(*const Opaque) -> *const Opaque;
    lilv_plugin_get_num_ports: fn(*const Opaque) -> u32;
    lilv_plugin_get_port_by_index: fn(*const Opaque, u32) -> *const Opaque;
    lilv_plugin_get_port_ranges_float: fn(*const Opaque, *mut f32, *mut f32, *mut f32);
    lilv_plugin_get_required_features: fn(*const Opaque) -> *mut Opaque;
    lilv_plugin_get_value: fn(*const Opaque, *const Opaque) -> *mut Opaque;
    lilv_plugin_get_optional_features: fn(*const Opaque) -> *mut Opaque;
    lilv_plugin_get_extension_data: fn(*const Opaque) -> *mut Opaque;
    lilv_nodes_begin: fn(*const Opaque) -> Iter;
    lilv_nodes_next: fn(*const Opaque, Iter) -> Iter;
    lilv_nodes_is_end: fn(*const Opaque, Iter) -> bool;
    lilv_nodes_get: fn(*const Opaque, Iter) -> *const Opaque;
    lilv_nodes_free: fn(*mut Opaque);
    lilv_node_as_string: fn(*const Opaque) -> *const c_char;
    lilv_node_free: fn(*mut Opaque);
    lilv_new_uri: fn(*mut Opaque, *const c_char) -> *mut Opaque;
    lilv_port_is_a: fn(*const Opaque, *const Opaque, *const Opaque) -> bool;
    lilv_port_has_property: fn(*const Opaque, *const Opaque, *const Opaque) -> bool;
    lilv_port_get_symbol: fn(*const Opaque, *const Opaque) -> *const Opaque;
    lilv_port_get_name: fn(*const Opaque, *const Opaque) -> *mut Opaque;
    lilv_plugin_instantiate: fn(*const Opaque, f64, *const *const Feature) -> *mut RawInstance;
    lilv_plugin_get_library_uri: fn(*const Opaque) -> *const Opaque;
    lilv_file_uri_parse: fn(*const c_char, *mut *mut c_char) -> *mut c_char;
    lilv_free: fn(*mut c_void);
    lilv_instance_free: fn(*mut RawInstance);
    lilv_world_get: fn(*mut Opaque, *const Opaque, *const Opaque, *const Opaque) -> *mut Opaque;
    lilv_world_set_option: fn(*mut Opaque, *const c_char, *const Opaque);
    lilv_new_string: fn(*mut Opaque, *const c_char) -> *mut Opaque;
}

impl Lilv {
    /// Opens lilv: the file that [`LIBRARY_VAR`] names, else [`LIBRARY`] where the dynamic
    /// loader finds it. The error says what could not be opened or found.
    pub fn open() -> Result<Lilv, String> {
        // An empty variable is no choice (dlopen of "" would open the program itself).
        let name = chosen().unwrap_or_else(|| LIBRARY.into());
        // SAFETY: loading lilv runs its initialisers, which have no preconditions; a file
        // that is not lilv is refused below when one of its functions is missing (a file
        // that exports them with other types is the user's explicit choice through
        // FUGUE_LIBLILV).
        let library = unsafe { Library::new(&name) }.map_err(|e| e.to_string())?;
        // SAFETY: the file is lilv 0.24 (see above).
        unsafe { Lilv::resolve(library) }
    }
}
