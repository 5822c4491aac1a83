//! The ordered ring in POSIX shared memory: the consumer process [`create`]s it, producer
//! processes [`open`] it by name. Same protocol and same handles as the in-process ring; the
//! parking futexes are process-shared.
//!
//! The object starts with a header (magic number, layout version, capacity, item size,
//! padding, wait strategy, offsets), then the control block, then the slots. The creator
//! fills everything, then publishes the header by storing the magic number in `ready` with
//! Release; [`open`] loads `ready` with Acquire and checks every field. The consumer unlinks
//! the name when it is dropped; producers that still have the object mapped keep using it.
//!
//! A producer process that dies between `acquire` and `commit` leaves its slot "being
//! written" forever: the consumer's [`Consumer::next_timeout`] then reports
//! `NextError::Timeout { missing: n, .. }` ("item n did not arrive within 2s").

use std::ffi::CString;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::mman::{shm_open, shm_unlink};
use nix::sys::stat::Mode;

use crate::region::{encode, Control, Options, Owner, Padding, Region, SlotLayout, Strategy, FREE};
use crate::ring::{producer_of, shm_consumer, Consumer, Producer};

/// "FUGURING" in little-endian bytes.
pub const MAGIC: u64 = u64::from_le_bytes(*b"FUGURING");
/// Version of the shared-memory layout; bumped on any change to it.
pub const VERSION: u32 = 3;

/// The header at offset 0 of the shared-memory object. Written once by the creator before it
/// stores `ready`; read-only afterwards.
#[repr(C)]
struct Header {
    magic: AtomicU64,
    version: u32,
    strategy: u32,
    capacity: u64,
    item_size: u64,
    align: u64,
    padding: u64,
    data_offset: u64,
    stride: u64,
    control_offset: u64,
    slots_offset: u64,
    total_len: u64,
    /// MAGIC once the object is fully initialised (Release by the creator).
    ready: AtomicU64,
}

/// Why a shared-memory ring could not be created or opened.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// The name is not usable as a POSIX shared-memory name.
    #[error("invalid shared-memory name {name:?}: use letters, digits, '-', '_' or '.', without '/' except a leading one")]
    BadName {
        /// The name given.
        name: String,
    },
    /// Capacity 0, or a ring too large for the address space.
    #[error("invalid ring geometry: {what}")]
    BadGeometry {
        /// What is wrong.
        what: String,
    },
    /// `create` found an object with that name already (a live consumer, or one that died
    /// without unlinking it: remove it with [`unlink`]).
    #[error("shared-memory ring {name} already exists")]
    Exists {
        /// The name.
        name: String,
    },
    /// `open` found no object with that name (no consumer created it, or it is gone).
    #[error("shared-memory ring {name} does not exist")]
    NotFound {
        /// The name.
        name: String,
    },
    /// A system call failed.
    #[error("shared-memory ring {name}: {op} failed: {source}")]
    Os {
        /// The name.
        name: String,
        /// The operation.
        op: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The object is shorter than its header or than the size its header declares.
    #[error("shared-memory ring {name} is {len} bytes long, it needs {needed}")]
    TooSmall {
        /// The name.
        name: String,
        /// Its length.
        len: u64,
        /// The length needed.
        needed: u64,
    },
    /// The object is not (yet) initialised: its creator has not finished, or died.
    #[error("shared-memory ring {name} is not initialised (its creator has not finished or died)")]
    NotReady {
        /// The name.
        name: String,
    },
    /// The object does not start with the ring's magic number.
    #[error("shared-memory object {name} is not a fugue ring (magic {found:#018x})")]
    BadMagic {
        /// The name.
        name: String,
        /// The magic number found.
        found: u64,
    },
    /// The object was written with another layout version.
    #[error("shared-memory ring {name} has layout version {found}; this library reads version {expected}")]
    VersionMismatch {
        /// The name.
        name: String,
        /// Version found.
        found: u32,
        /// Version expected.
        expected: u32,
    },
    /// The item size differs from the one the opener expects.
    #[error("shared-memory ring {name} holds items of {found} bytes, expected {expected}")]
    ItemSizeMismatch {
        /// The name.
        name: String,
        /// Item size found.
        found: u64,
        /// Item size expected.
        expected: u64,
    },
    /// The capacity differs from the one the opener expects.
    #[error("shared-memory ring {name} has {found} slots, expected {expected}")]
    CapacityMismatch {
        /// The name.
        name: String,
        /// Capacity found.
        found: u64,
        /// Capacity expected.
        expected: u64,
    },
    /// The header's fields contradict each other.
    #[error("shared-memory ring {name} has an inconsistent header: {what}")]
    Corrupt {
        /// The name.
        name: String,
        /// What is inconsistent.
        what: String,
    },
}

/// What an opener expects of the ring; `None` accepts any value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// Expected number of slots.
    pub capacity: Option<u64>,
    /// Expected item size in bytes.
    pub item_size: Option<u64>,
}

fn c_name(name: &str) -> Result<(CString, String), ShmError> {
    let bare = name.strip_prefix('/').unwrap_or(name);
    let ok = !bare.is_empty()
        && bare.len() <= 250
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(ShmError::BadName {
            name: name.to_string(),
        });
    }
    let full = format!("/{bare}");
    let c = CString::new(full.clone()).map_err(|_| ShmError::BadName {
        name: name.to_string(),
    })?;
    Ok((c, full))
}

fn os(name: &str, op: &'static str, e: impl Into<std::io::Error>) -> ShmError {
    ShmError::Os {
        name: name.to_string(),
        op,
        source: e.into(),
    }
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

/// Offsets of the control block and slots, and the total length.
fn offsets(layout: &SlotLayout) -> Option<(usize, usize, usize)> {
    let control = round_up(std::mem::size_of::<Header>(), 64);
    let slots = round_up(control + std::mem::size_of::<Control>(), 64);
    let total = slots.checked_add(layout.bytes())?;
    Some((control, slots, total))
}

/// Create a ring named `name` (e.g. `"fugue-render-1234"`), with default [`Options`], and
/// return its consumer. Fails with [`ShmError::Exists`] if the name is taken.
pub fn create(name: &str, capacity: usize, item_size: usize) -> Result<Consumer, ShmError> {
    create_with(name, capacity, item_size, Options::default())
}

/// Create a ring named `name` with the given options and return its consumer.
pub fn create_with(
    name: &str,
    capacity: usize,
    item_size: usize,
    options: Options,
) -> Result<Consumer, ShmError> {
    let (cname, display) = c_name(name)?;
    if capacity == 0 {
        return Err(ShmError::BadGeometry {
            what: "capacity must be at least 1".into(),
        });
    }
    let align = 8;
    let geometry = || ShmError::BadGeometry {
        what: format!("{capacity} slots of {item_size} bytes do not fit in memory"),
    };
    let layout =
        SlotLayout::new(capacity as u64, item_size, align, options.padding).ok_or_else(geometry)?;
    let (control_offset, slots_offset, total) = offsets(&layout).ok_or_else(geometry)?;
    let fd = match shm_open(
        cname.as_c_str(),
        OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_RDWR,
        Mode::S_IRUSR | Mode::S_IWUSR,
    ) {
        Ok(fd) => fd,
        Err(Errno::EEXIST) => return Err(ShmError::Exists { name: display }),
        Err(e) => return Err(os(&display, "shm_open", e)),
    };
    // From here on, remove the name again if anything fails.
    let fail = |e: ShmError| {
        let _ = shm_unlink(cname.as_c_str());
        e
    };
    nix::unistd::ftruncate(&fd, total as i64).map_err(|e| fail(os(&display, "ftruncate", e)))?;
    let file = File::from(fd);
    // SAFETY: the object was just created with O_EXCL and sized to `total`; every access to
    // the mapping goes through atomics (header `ready`, control block, sequence words) or
    // through slot bytes under the slot protocol (docs/ring.md), so changes made by other
    // processes are never seen through plain references that assume no change.
    let mut map = unsafe { memmap2::MmapOptions::new().len(total).map_mut(&file) }
        .map_err(|e| fail(os(&display, "mmap", e)))?;
    let base = map.as_mut_ptr();
    // SAFETY: the mapping is `total` bytes, page-aligned, zero-filled, and not yet visible to
    // any opener (`ready` is 0), so plain writes of the header, control block and sequence
    // words are exclusive; offsets are inside the mapping and aligned (multiples of 64).
    unsafe {
        std::ptr::write(
            base.cast::<Header>(),
            Header {
                magic: AtomicU64::new(MAGIC),
                version: VERSION,
                strategy: options.strategy.to_u32(),
                capacity: capacity as u64,
                item_size: item_size as u64,
                align: align as u64,
                padding: padding_code(options.padding),
                data_offset: layout.data_offset as u64,
                stride: layout.stride as u64,
                control_offset: control_offset as u64,
                slots_offset: slots_offset as u64,
                total_len: total as u64,
                ready: AtomicU64::new(0),
            },
        );
        std::ptr::write(base.add(control_offset).cast::<Control>(), Control::new(0));
        for i in 0..capacity {
            std::ptr::write(
                base.add(slots_offset + i * layout.stride)
                    .cast::<AtomicU64>(),
                AtomicU64::new(encode(i as u64, FREE)),
            );
        }
    }
    // SAFETY: the header was written above and lives as long as the mapping.
    let header = unsafe { &*base.cast::<Header>() };
    // Release pairs with the Acquire load in `open`: everything written above is visible to
    // an opener that reads MAGIC here.
    header.ready.store(MAGIC, Ordering::Release);
    let region = Region::from_parts(
        // SAFETY: control_offset is inside the mapping (see above).
        unsafe { base.add(control_offset) }.cast::<Control>(),
        // SAFETY: slots_offset is inside the mapping.
        unsafe { base.add(slots_offset) },
        layout,
        options.strategy,
        Owner::Shm(map),
    );
    Ok(shm_consumer(region, cname))
}

fn padding_code(p: Padding) -> u64 {
    match p {
        Padding::CacheLine => 1,
        Padding::None => 0,
    }
}

/// Open the ring named `name` as a producer, accepting any capacity and item size.
pub fn open(name: &str) -> Result<Producer, ShmError> {
    open_expect(name, Expect::default())
}

/// Open the ring named `name` as a producer, checking its capacity and item size against
/// `expect`.
pub fn open_expect(name: &str, expect: Expect) -> Result<Producer, ShmError> {
    let (cname, display) = c_name(name)?;
    let fd = match shm_open(cname.as_c_str(), OFlag::O_RDWR, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Err(ShmError::NotFound { name: display }),
        Err(e) => return Err(os(&display, "shm_open", e)),
    };
    let file = File::from(fd);
    let len = file.metadata().map_err(|e| os(&display, "fstat", e))?.len();
    let header_len = std::mem::size_of::<Header>() as u64;
    if len < header_len {
        return Err(if len == 0 {
            ShmError::NotReady { name: display }
        } else {
            ShmError::TooSmall {
                name: display,
                len,
                needed: header_len,
            }
        });
    }
    // SAFETY: as in `create_with`: all shared access goes through atomics or the slot
    // protocol; the header fields read below are written once before `ready`.
    let map = unsafe { memmap2::MmapOptions::new().len(len as usize).map_mut(&file) }
        .map_err(|e| os(&display, "mmap", e))?;
    let base = map.as_ptr() as *mut u8;
    // SAFETY: the mapping is at least `size_of::<Header>()` bytes and page-aligned.
    let header = unsafe { &*base.cast::<Header>() };
    // Acquire pairs with the creator's Release store of `ready`.
    let ready = header.ready.load(Ordering::Acquire);
    let magic = header.magic.load(Ordering::Relaxed);
    if ready != MAGIC {
        return Err(if magic == 0 || magic == MAGIC {
            ShmError::NotReady { name: display }
        } else {
            ShmError::BadMagic {
                name: display,
                found: magic,
            }
        });
    }
    if magic != MAGIC {
        return Err(ShmError::BadMagic {
            name: display,
            found: magic,
        });
    }
    if header.version != VERSION {
        return Err(ShmError::VersionMismatch {
            name: display,
            found: header.version,
            expected: VERSION,
        });
    }
    if let Some(expected) = expect.item_size {
        if header.item_size != expected {
            return Err(ShmError::ItemSizeMismatch {
                name: display,
                found: header.item_size,
                expected,
            });
        }
    }
    if let Some(expected) = expect.capacity {
        if header.capacity != expected {
            return Err(ShmError::CapacityMismatch {
                name: display,
                found: header.capacity,
                expected,
            });
        }
    }
    let corrupt = |what: &str| ShmError::Corrupt {
        name: display.clone(),
        what: what.to_string(),
    };
    let strategy =
        Strategy::from_u32(header.strategy).ok_or_else(|| corrupt("unknown wait strategy"))?;
    let padding = match header.padding {
        0 => Padding::None,
        1 => Padding::CacheLine,
        _ => return Err(corrupt("unknown padding")),
    };
    if header.capacity == 0 {
        return Err(corrupt("capacity 0"));
    }
    let layout = usize::try_from(header.item_size)
        .ok()
        .zip(usize::try_from(header.align).ok())
        .filter(|(_, a)| a.is_power_of_two() && *a <= 64)
        .and_then(|(size, align)| SlotLayout::new(header.capacity, size, align, padding))
        .ok_or_else(|| corrupt("capacity, item size or alignment out of range"))?;
    let (control_offset, slots_offset, total) =
        offsets(&layout).ok_or_else(|| corrupt("size overflows"))?;
    if header.data_offset != layout.data_offset as u64 || header.stride != layout.stride as u64 {
        return Err(corrupt("slot layout does not match capacity and item size"));
    }
    if header.control_offset != control_offset as u64
        || header.slots_offset != slots_offset as u64
        || header.total_len != total as u64
    {
        return Err(corrupt("offsets do not match this library's layout"));
    }
    if len < total as u64 {
        return Err(ShmError::TooSmall {
            name: display,
            len,
            needed: total as u64,
        });
    }
    // SAFETY: control_offset < total <= len, inside the mapping, 64-aligned.
    let control = unsafe { base.add(control_offset) }.cast::<Control>();
    // SAFETY: the control block was initialised by the creator before `ready` (seen above).
    // Relaxed: a new handle, as in `Producer::clone`.
    unsafe { &*control }
        .producers
        .fetch_add(1, Ordering::Relaxed);
    let region = Region::from_parts(
        control,
        // SAFETY: slots_offset < total <= len.
        unsafe { base.add(slots_offset) },
        layout,
        strategy,
        Owner::Shm(map),
    );
    Ok(producer_of(region))
}

/// Remove the name `name` (e.g. left behind by a consumer that died). Mapped rings stay
/// usable by the processes that have them.
pub fn unlink(name: &str) -> Result<(), ShmError> {
    let (cname, display) = c_name(name)?;
    match shm_unlink(cname.as_c_str()) {
        Ok(()) => Ok(()),
        Err(Errno::ENOENT) => Err(ShmError::NotFound { name: display }),
        Err(e) => Err(os(&display, "shm_unlink", e)),
    }
}
