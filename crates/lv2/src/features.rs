//! The host features fugue gives a plugin: URID mapping (one table for the process),
//! options (the block lengths and the sample rate) and the promise of a bounded block.
//!
//! A plugin maps its URIs when it is instantiated, on the control thread. Mapping takes a
//! lock: a plugin that mapped a new URI from `run` would wait on it (LV2 lets `map` block; a
//! real-time plugin maps at instantiation).

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::Mutex;

use crate::ffi::{Feature, OptionsOption, UridMap, UridUnmap};
use crate::uris;

/// The URIs mapped so far; URID `n` is `URIDS[n - 1]`. Entries are never removed, so the
/// strings handed out by `unmap` live as long as the process.
static URIDS: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// The URID of `uri` (mapped now if it is new).
pub fn urid(uri: &CStr) -> u32 {
    let mut table = URIDS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = table.iter().position(|u| u.as_c_str() == uri) {
        return i as u32 + 1;
    }
    table.push(uri.to_owned());
    table.len() as u32
}

/// The URID of a URI known to fugue.
pub fn urid_of(uri: &str) -> u32 {
    urid(&CString::new(uri).expect("fugue's URIs hold no NUL"))
}

unsafe extern "C" fn map(_handle: *mut c_void, uri: *const c_char) -> u32 {
    if uri.is_null() {
        return 0;
    }
    // SAFETY: LV2 passes a NUL-terminated URI.
    urid(unsafe { CStr::from_ptr(uri) })
}

unsafe extern "C" fn unmap(_handle: *mut c_void, id: u32) -> *const c_char {
    let table = URIDS.lock().unwrap_or_else(|p| p.into_inner());
    match (id as usize).checked_sub(1).and_then(|i| table.get(i)) {
        // The string's heap buffer never moves or goes (entries are never removed).
        Some(u) => u.as_ptr(),
        None => ptr::null(),
    }
}

/// The features of one instance, kept (boxed, so at a fixed address) as long as it lives.
pub struct Features {
    map: UridMap,
    unmap: UridUnmap,
    /// The option values: min, max and nominal block length, then the sample rate's bits.
    values: [u32; 4],
    options: [OptionsOption; 5],
    features: [Feature; 4],
    /// The array handed to `instantiate`, null-terminated.
    list: [*const Feature; 5],
    uris: [CString; 4],
}

impl Features {
    /// The features for an instance at `rate` Hz run with at most `max_block` frames a call.
    pub fn new(rate: f64, max_block: usize) -> Box<Features> {
        let no_option = || OptionsOption {
            context: 0,
            subject: 0,
            key: 0,
            size: 0,
            kind: 0,
            value: ptr::null(),
        };
        let no_feature = || Feature {
            uri: ptr::null(),
            data: ptr::null_mut(),
        };
        let max = max_block.min(i32::MAX as usize) as u32;
        let mut f = Box::new(Features {
            map: UridMap {
                handle: ptr::null_mut(),
                map,
            },
            unmap: UridUnmap {
                handle: ptr::null_mut(),
                unmap,
            },
            values: [1, max, max, (rate as f32).to_bits()],
            options: [
                no_option(),
                no_option(),
                no_option(),
                no_option(),
                no_option(),
            ],
            features: [no_feature(), no_feature(), no_feature(), no_feature()],
            list: [ptr::null(); 5],
            uris: [
                uris::URID_MAP,
                uris::URID_UNMAP,
                uris::OPTIONS,
                uris::BOUNDED_BLOCK,
            ]
            .map(|u| CString::new(u).expect("fugue's URIs hold no NUL")),
        });
        let int = urid_of(uris::ATOM_INT);
        let float = urid_of(uris::ATOM_FLOAT);
        let keys = [
            (uris::MIN_BLOCK, int),
            (uris::MAX_BLOCK, int),
            (uris::NOMINAL_BLOCK, int),
            (uris::PARAM_SAMPLE_RATE, float),
        ];
        for (i, (key, kind)) in keys.into_iter().enumerate() {
            let value: *const c_void = ptr::addr_of!(f.values[i]).cast();
            f.options[i] = OptionsOption {
                context: 0,
                subject: 0,
                key: urid_of(key),
                size: 4,
                kind,
                value,
            };
        }
        let data: [*mut c_void; 4] = [
            ptr::addr_of_mut!(f.map).cast(),
            ptr::addr_of_mut!(f.unmap).cast(),
            f.options.as_mut_ptr().cast(),
            ptr::null_mut(),
        ];
        for (i, data) in data.into_iter().enumerate() {
            f.features[i] = Feature {
                uri: f.uris[i].as_ptr(),
                data,
            };
            f.list[i] = ptr::addr_of!(f.features[i]);
        }
        f
    }

    /// The null-terminated feature array for `instantiate`.
    pub fn list(&self) -> *const *const Feature {
        self.list.as_ptr()
    }
}
