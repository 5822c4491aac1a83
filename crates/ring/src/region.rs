//! The memory of a ring: a control block and `capacity` slots, each slot an atomic sequence
//! word followed by the item's bytes. The same layout serves the in-process ring (heap) and the
//! shared-memory ring (a POSIX shared-memory mapping).

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::access::AccessTrack;
use fugue_sync::{AtomicU32, AtomicU64};

/// The size of the alignment unit used to keep data written by different cores apart.
pub const CACHE_LINE: usize = 64;

/// A value alone on its cache line.
#[repr(C, align(64))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// How threads wait when an item is not there yet (consumer) or a slot is not free yet
/// (producer). Chosen for the whole ring when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Busy-wait with `std::hint::spin_loop`. Lowest latency; burns a core; collapses when
    /// there are more waiting threads than cores.
    Spin,
    /// Spin a little, then `sched_yield` between polls.
    Yield,
    /// Spin a little, then sleep on a futex; the other side wakes it (see `docs/ring.md`,
    /// "Parking"). Every commit and release then also makes a full fence and reads a wait
    /// word, and wakes a sleeper with a system call, so this is for consumers that are not
    /// real-time.
    Park,
}

#[cfg_attr(loom, allow(dead_code))]
impl Strategy {
    pub(crate) fn to_u32(self) -> u32 {
        match self {
            Strategy::Spin => 0,
            Strategy::Yield => 1,
            Strategy::Park => 2,
        }
    }

    pub(crate) fn from_u32(v: u32) -> Option<Strategy> {
        match v {
            0 => Some(Strategy::Spin),
            1 => Some(Strategy::Yield),
            2 => Some(Strategy::Park),
            _ => None,
        }
    }
}

/// Whether each slot starts on its own cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Each slot (sequence word and data) is rounded up to a multiple of 64 bytes, so that
    /// neighbouring slots, written by different threads, never share a cache line.
    CacheLine,
    /// Slots are packed (8-byte aligned): small items share cache lines with their
    /// neighbours (false sharing). Exists to measure that effect.
    None,
}

/// Options of a ring, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// How producers and the consumer wait.
    pub strategy: Strategy,
    /// Slot padding.
    pub padding: Padding,
}

impl Default for Options {
    /// `Strategy::Yield`, `Padding::CacheLine`.
    fn default() -> Self {
        Options {
            strategy: Strategy::Yield,
            padding: Padding::CacheLine,
        }
    }
}

// The slot states, in the low two bits of a slot's sequence word. The high 62 bits hold the
// number of the item the state refers to. See docs/ring.md, "Slot protocol".
pub(crate) const FREE: u64 = 0;
pub(crate) const WRITING: u64 = 1;
pub(crate) const READY: u64 = 2;
pub(crate) const READING: u64 = 3;
const STATE_BITS: u32 = 2;
const STATE_MASK: u64 = (1 << STATE_BITS) - 1;

/// The largest item number a ring accepts (2^62 - 1).
pub const MAX_ITEM: u64 = (1 << (64 - STATE_BITS)) - 1;

#[inline]
pub(crate) fn encode(n: u64, state: u64) -> u64 {
    (n << STATE_BITS) | state
}

#[inline]
pub(crate) fn decode(word: u64) -> (u64, u64) {
    (word >> STATE_BITS, word & STATE_MASK)
}

/// Producer wait words: a producer waiting for slot `s` sleeps on word `s % WAIT_WORDS`, so
/// that a release wakes only the producers waiting for that slot (and the rare ones waiting
/// for a slot `WAIT_WORDS` apart), not every sleeping producer.
#[cfg(not(loom))]
pub(crate) const WAIT_WORDS: usize = 64;
/// Under loom: two words (two slots of a capacity-2 ring on different words, and slots 0 and
/// 2 of a capacity-3 ring sharing one).
#[cfg(loom)]
pub(crate) const WAIT_WORDS: usize = 2;

/// The shared control block: the number of the next item to read, the words of the parking
/// protocol and the liveness of both sides. Fields written by the consumer and fields
/// written by producers live on different cache lines.
#[repr(C)]
pub(crate) struct Control {
    /// Number of the next item the consumer will read (written by the consumer on release).
    pub(crate) next_to_read: CachePadded<AtomicU64>,
    /// The consumer's sleep word. Bit 0: the consumer may be asleep on it; bits 1..: a count
    /// bumped by whoever clears the flag to wake it.
    pub(crate) commits: CachePadded<AtomicU32>,
    /// The number of the item the consumer waits for while its flag is set: only the
    /// producer committing that item (or a producer handle going away) wakes it.
    pub(crate) wanted: CachePadded<AtomicU64>,
    /// The producers' sleep words (see [`WAIT_WORDS`]). Bit 0: a producer may be asleep on
    /// it; bits 1..: a count bumped by the consumer when it clears the flag.
    pub(crate) releases: [CachePadded<AtomicU32>; WAIT_WORDS],
    /// Number of live producer handles.
    pub(crate) producers: AtomicU32,
    /// 1 while the consumer exists.
    pub(crate) consumer_alive: AtomicU32,
}

impl Control {
    pub(crate) fn new(producers: u32) -> Control {
        Control {
            next_to_read: CachePadded(AtomicU64::new(0)),
            commits: CachePadded(AtomicU32::new(0)),
            wanted: CachePadded(AtomicU64::new(0)),
            releases: std::array::from_fn(|_| CachePadded(AtomicU32::new(0))),
            producers: AtomicU32::new(producers),
            consumer_alive: AtomicU32::new(1),
        }
    }

    /// The word a producer waiting for `slot` sleeps on.
    #[inline]
    pub(crate) fn release_word(&self, slot: usize) -> &AtomicU32 {
        &self.releases[slot % WAIT_WORDS]
    }
}

/// Where each slot's parts are: computed from capacity, item size and alignment, the same way
/// in every process that maps a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotLayout {
    pub(crate) capacity: u64,
    pub(crate) item_size: usize,
    /// Offset of the item bytes inside a slot.
    pub(crate) data_offset: usize,
    /// Distance between two slots.
    pub(crate) stride: usize,
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl SlotLayout {
    /// `None` when the sizes overflow.
    pub(crate) fn new(
        capacity: u64,
        item_size: usize,
        align: usize,
        padding: Padding,
    ) -> Option<SlotLayout> {
        let seq = std::mem::size_of::<AtomicU64>();
        let align = align.max(std::mem::align_of::<AtomicU64>());
        let data_offset = round_up(seq, align);
        let unit = match padding {
            Padding::CacheLine => CACHE_LINE.max(align),
            Padding::None => align,
        };
        let stride = round_up(data_offset.checked_add(item_size)?, unit);
        usize::try_from(capacity).ok()?.checked_mul(stride)?;
        Some(SlotLayout {
            capacity,
            item_size,
            data_offset,
            stride,
        })
    }

    pub(crate) fn bytes(&self) -> usize {
        self.capacity as usize * self.stride
    }
}

/// Who owns the memory behind a [`Region`].
pub(crate) enum Owner {
    /// A heap allocation of the slots; the control block is boxed.
    Heap {
        _control: Box<Control>,
        slots: NonNull<u8>,
        layout: Layout,
    },
    /// A shared-memory mapping (see `shm`).
    #[cfg(not(loom))]
    Shm(#[allow(dead_code)] memmap2::MmapMut),
}

/// The ring's memory and its geometry. Producer and consumer handles share it through an `Arc`.
pub(crate) struct Region {
    control: *const Control,
    slots: *mut u8,
    pub(crate) layout: SlotLayout,
    mask: u64,
    pow2: bool,
    pub(crate) strategy: Strategy,
    pub(crate) track: AccessTrack,
    owner: Owner,
}

// SAFETY: the region's shared state is only accessed through atomics (control block, sequence
// words) and slot bytes are only accessed under the slot protocol (docs/ring.md), which gives a
// slot's bytes one writer or one reader at a time with happens-before between them. The raw
// pointers point into memory owned by `owner`, which lives as long as the region.
unsafe impl Send for Region {}
// SAFETY: as for `Send`: every shared access goes through atomics or is serialised by the slot
// protocol.
unsafe impl Sync for Region {}

impl Region {
    /// A zeroed heap region with every slot free for its first item (slot i free for item i).
    pub(crate) fn heap(layout: SlotLayout, align: usize, strategy: Strategy) -> Region {
        let control = Box::new(Control::new(1));
        let control_ptr: *const Control = &*control;
        let alloc_layout = Layout::from_size_align(layout.bytes().max(1), CACHE_LINE.max(align))
            .expect("ring size overflows the address space");
        // SAFETY: `alloc_layout` has a non-zero size (`max(1)`).
        let raw = unsafe { alloc::alloc_zeroed(alloc_layout) };
        let slots = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(alloc_layout));
        let region = Region::from_parts(
            control_ptr,
            slots.as_ptr(),
            layout,
            strategy,
            Owner::Heap {
                _control: control,
                slots,
                layout: alloc_layout,
            },
        );
        for i in 0..layout.capacity {
            // SAFETY: slot `i` lies inside the allocation (i < capacity) and its sequence word
            // offset (0) is aligned for AtomicU64 (stride and base are multiples of its
            // alignment); nobody else can see the region yet.
            unsafe {
                std::ptr::write(
                    region.slot_ptr(i as usize).cast::<AtomicU64>(),
                    AtomicU64::new(encode(i, FREE)),
                )
            };
        }
        region
    }

    pub(crate) fn from_parts(
        control: *const Control,
        slots: *mut u8,
        layout: SlotLayout,
        strategy: Strategy,
        owner: Owner,
    ) -> Region {
        let pow2 = layout.capacity.is_power_of_two();
        Region {
            control,
            slots,
            layout,
            mask: layout.capacity.wrapping_sub(1),
            pow2,
            strategy,
            track: AccessTrack::new(layout.capacity as usize),
            owner,
        }
    }

    #[inline]
    pub(crate) fn control(&self) -> &Control {
        // SAFETY: `control` points to a live Control owned by `owner` (boxed, or inside the
        // mapping) for the region's lifetime; it is only accessed through shared references.
        unsafe { &*self.control }
    }

    #[inline]
    pub(crate) fn slot_of(&self, n: u64) -> usize {
        if self.pow2 {
            (n & self.mask) as usize
        } else {
            (n % self.layout.capacity) as usize
        }
    }

    #[inline]
    fn slot_ptr(&self, slot: usize) -> *mut u8 {
        debug_assert!((slot as u64) < self.layout.capacity);
        // SAFETY: slot < capacity, so the offset stays inside the slots' memory.
        unsafe { self.slots.add(slot * self.layout.stride) }
    }

    /// The sequence word of `slot` (< capacity).
    #[inline]
    pub(crate) fn seq(&self, slot: usize) -> &AtomicU64 {
        // SAFETY: the word was initialised (heap: `heap`; shm: zeroed mapping then stored by
        // the creator) and is aligned (base and stride are multiples of the AtomicU64
        // alignment); it lives as long as `self`.
        unsafe { &*self.slot_ptr(slot).cast::<AtomicU64>() }
    }

    /// The first byte of `slot`'s item.
    #[inline]
    pub(crate) fn data(&self, slot: usize) -> *mut u8 {
        // SAFETY: data_offset + item_size <= stride, so this stays inside the slot.
        unsafe { self.slot_ptr(slot).add(self.layout.data_offset) }
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.layout.capacity
    }

    pub(crate) fn item_size(&self) -> usize {
        self.layout.item_size
    }

    pub(crate) fn is_shared_memory(&self) -> bool {
        !matches!(self.owner, Owner::Heap { .. })
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        #[cfg_attr(loom, allow(irrefutable_let_patterns))]
        if let Owner::Heap { slots, layout, .. } = &self.owner {
            for i in 0..self.layout.capacity as usize {
                // SAFETY: each sequence word was written in `heap` and is dropped once here;
                // no handle is left (the region is being dropped).
                unsafe { std::ptr::drop_in_place(self.slot_ptr(i).cast::<AtomicU64>()) };
            }
            // SAFETY: `slots` was allocated in `heap` with exactly `layout`.
            unsafe { alloc::dealloc(slots.as_ptr(), *layout) };
        }
    }
}
