//! One plugin instance and the memory its ports point into: the processor of an `lv2` node.
//!
//! Made on the control thread (instantiated, its control and atom ports connected to memory
//! it owns, activated); run on the audio path, where it only connects the node's buffers to
//! the audio ports, resets the atom headers and calls the plugin's `run`; deactivated and
//! freed where it is dropped, with the plan, off the audio thread.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use fugue_dsp::Processor;

use crate::features::{urid_of, Features};
use crate::ffi::{Opaque, RawInstance};
use crate::uris;
use crate::world::{PluginInfo, PortKind, World};

/// Bytes of each atom port's buffer.
pub const ATOM_BYTES: usize = 8192;

/// What the live instances of the process took when they were made (instantiated and
/// activated), as its virtual size grew ([`fugue_dsp::memory::virtual_size`]): what plugins
/// allocate for themselves, which no plan counts.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Why an instance was not made.
#[derive(Debug)]
pub enum Refused {
    /// The plugin's `instantiate` failed (returned none), or its `activate` or `instantiate`
    /// divided an integer by zero.
    Failed,
    /// The instance took `took` bytes, which would make the live instances hold `held`,
    /// more than `limit` ([`fugue_dsp::memory::half_of_memory`]).
    Memory {
        /// Bytes the instance took.
        took: usize,
        /// Bytes the live instances would hold with it.
        held: usize,
        /// The limit, in bytes.
        limit: usize,
    },
}

/// An atom port's buffer: 8-byte aligned, as LV2 atoms are.
struct AtomPort {
    index: u32,
    input: bool,
    buf: Box<[u64]>,
}

/// What makes an instance of one node's plugin: the plugin, the rate, the longest call and
/// the node's control values as the graph gives them. Shared by the node and its instances,
/// so that an instance can be made again from scratch ([`Instance::reset`]).
pub struct Recipe {
    pub(crate) world: &'static World,
    pub(crate) raw: *const Opaque,
    pub(crate) plugin: PluginInfo,
    pub(crate) rate: f64,
    pub(crate) max_block: usize,
    pub(crate) values: Vec<f32>,
}

// SAFETY: `raw` is a plugin of the world, which lives as long as the process and is only used
// under its lock (in `Instance::new`); the rest is plain data, read only.
unsafe impl Send for Recipe {}
// SAFETY: as above: nothing in a recipe is written after it is made.
unsafe impl Sync for Recipe {}

impl Recipe {
    /// A new instance, activated; refused when the plugin's `instantiate` fails, or when
    /// what it took would make the process's live instances hold more than half the
    /// machine's memory (or of its address space, where that is limited).
    pub fn instance(self: &std::sync::Arc<Recipe>) -> Result<Instance, Refused> {
        Instance::new(self)
    }
}

/// A live, activated plugin instance.
pub struct Instance {
    /// How it was made (its plugin's world among it): [`Processor::reset`] makes it again.
    recipe: std::sync::Arc<Recipe>,
    raw: *mut RawInstance,
    /// The audio input and output port indices, in order (the node's ports).
    audio_in: Box<[u32]>,
    audio_out: Box<[u32]>,
    /// One value per port of the plugin; the control ports point here (inputs hold the
    /// node's values, outputs what the plugin last wrote).
    values: Box<[f32]>,
    atoms: Vec<AtomPort>,
    /// The control outputs: port index and symbol, for [`Processor::readings`].
    control_outputs: Box<[(u32, String)]>,
    /// The audio inputs' copies: the plugin reads its inputs from here (`max_block` frames
    /// each, one after the other), never from the node's input buffers, which other nodes
    /// read at the same time and which a plugin that writes into its inputs would change.
    inputs: Box<[f32]>,
    /// A sink for an output given no buffer.
    scratch: Box<[f32]>,
    /// One buffer of `max_block` frames per optional CV port (a required one is refused):
    /// silence for an input, a sink for an output. Plugins that read an optional port
    /// without checking that it was connected (in `activate`, say) then read zeros instead
    /// of a null pointer.
    cv: Box<[(u32, Box<[f32]>)]>,
    max_block: usize,
    sequence: u32,
    chunk: u32,
    /// Set when an integer division trapped ([`fugue_dsp::foreign`]): the node then plays
    /// silence without running the plugin until a control is set or the node is reset.
    failed: bool,
    /// Set when `activate` trapped in a reset: the next run says it (the node's failure).
    unsaid: bool,
    /// Kept as long as the instance: the plugin may keep pointers into it.
    _features: Box<Features>,
    /// What it took when it was made, counted in [`HELD`] while it lives.
    took: usize,
}

// SAFETY: an LV2 instance belongs to no thread: its functions may be called from any thread,
// one call at a time, which `&mut self` guarantees; the memory its ports point into is owned
// by this value and moves with it (boxed, so its address does not change).
unsafe impl Send for Instance {}

impl Instance {
    /// Instantiates the recipe's plugin (its lilv handle `raw`) at its rate for calls of at
    /// most `max_block` frames, with its control inputs `values` (one per port, in port
    /// order), connects its control and atom ports and activates it. Refused when the
    /// plugin's `instantiate` fails, or when what the process's virtual size grew by meanwhile
    /// (what the plugin allocated, touched or not, and the instance's own buffers) would make
    /// the live instances hold more than [`fugue_dsp::memory::half_of_memory`]: the instance
    /// is freed at once. (Another thread's allocations at the same moment count too; memory
    /// that the allocator reuses counts as nothing.)
    fn new(recipe: &std::sync::Arc<Recipe>) -> Result<Instance, Refused> {
        let before = fugue_dsp::memory::virtual_size();
        let Recipe {
            world,
            raw,
            ref plugin,
            rate,
            max_block,
            ref values,
        } = **recipe;
        let max_block = max_block.max(1);
        let features = Features::new(rate, max_block);
        // Plugins run with their integer divisions by zero caught ([`fugue_dsp::foreign`]);
        // the handler is installed here, off the audio thread.
        fugue_dsp::foreign::install();
        let (instance, traps) = {
            let _lock = world.guard();
            // SAFETY: `raw` is a plugin of the world (never freed); the feature array is
            // null-terminated and lives as long as the instance (kept in it); lilv's calls
            // are serialised by the lock.
            fugue_dsp::foreign::guarded(|| unsafe {
                (world.lilv.lilv_plugin_instantiate)(raw, rate, features.list())
            })
        };
        if instance.is_null() {
            return Err(Refused::Failed);
        }
        if traps > 0 {
            // A plugin that divided by zero while it set itself up is not one to run.
            let _lock = world.guard();
            // SAFETY: the instance is live, never activated, and freed once, here (its
            // `cleanup` may divide by zero too: 0, as it is put away).
            let _ = fugue_dsp::foreign::guarded(|| unsafe {
                (world.lilv.lilv_instance_free)(instance)
            });
            return Err(Refused::Failed);
        }
        let ports = |kind, input| {
            plugin
                .ports
                .iter()
                .filter(move |p| p.kind == kind && p.input == input)
                .map(|p| p.index)
                .collect::<Box<[u32]>>()
        };
        let mut me = Instance {
            recipe: recipe.clone(),
            raw: instance,
            audio_in: ports(PortKind::Audio, true),
            audio_out: ports(PortKind::Audio, false),
            values: values.as_slice().into(),
            atoms: plugin
                .ports
                .iter()
                .filter(|p| p.kind == PortKind::Atom)
                .map(|p| AtomPort {
                    index: p.index,
                    input: p.input,
                    buf: vec![0u64; ATOM_BYTES / 8].into(),
                })
                .collect(),
            control_outputs: plugin
                .control_outputs()
                .map(|p| (p.index, p.symbol.clone()))
                .collect(),
            inputs: vec![0.0; max_block * plugin.audio(true).count()].into(),
            scratch: vec![0.0; max_block].into(),
            cv: plugin
                .ports
                .iter()
                .filter(|p| p.kind == PortKind::Cv)
                .map(|p| (p.index, vec![0.0f32; max_block.max(1)].into_boxed_slice()))
                .collect(),
            max_block,
            sequence: urid_of(uris::ATOM_SEQUENCE),
            chunk: urid_of(uris::ATOM_CHUNK),
            failed: false,
            unsaid: false,
            _features: features,
            took: 0,
        };
        for p in &plugin.ports {
            let data: *mut c_void = match p.kind {
                PortKind::Control => (&mut me.values[p.index as usize] as *mut f32).cast(),
                PortKind::Atom => {
                    let a = me.atoms.iter_mut().find(|a| a.index == p.index);
                    a.map_or(std::ptr::null_mut(), |a| a.buf.as_mut_ptr().cast())
                }
                PortKind::Cv => {
                    let c = me.cv.iter_mut().find(|(i, _)| *i == p.index);
                    c.map_or(std::ptr::null_mut(), |(_, b)| b.as_mut_ptr().cast())
                }
                // Connected at every run (audio) or never (optional ports of a type fugue
                // does not know, whose data it cannot size: the node refuses a required
                // one before it gets here).
                _ => std::ptr::null_mut(),
            };
            me.connect(p.index, data);
        }
        me.prepare_atoms();
        if me.activate() > 0 {
            // Refused as a plugin that did not instantiate (dropping it deactivates and
            // frees it).
            return Err(Refused::Failed);
        }
        if let (Some(before), Some(after)) = (before, fugue_dsp::memory::virtual_size()) {
            me.took = after.saturating_sub(before);
            // Relaxed: a count of the control threads' own; nothing else is published by it.
            let held = HELD
                .fetch_add(me.took, Ordering::Relaxed)
                .saturating_add(me.took);
            let limit = fugue_dsp::memory::half_of_memory();
            if held > limit {
                let took = me.took;
                // Dropping it frees it and takes its part off the count.
                drop(me);
                return Err(Refused::Memory { took, held, limit });
            }
        }
        Ok(me)
    }

    /// The plugin's descriptor.
    fn descriptor(&self) -> &crate::ffi::Descriptor {
        // SAFETY: `raw` is a live instance whose descriptor is the plugin library's static
        // data, valid until the instance is freed.
        unsafe { &*(*self.raw).descriptor }
    }

    /// The plugin's handle.
    fn handle(&self) -> *mut c_void {
        // SAFETY: `raw` is a live instance.
        unsafe { (*self.raw).handle }
    }

    #[inline]
    fn connect(&mut self, port: u32, data: *mut c_void) {
        if let Some(f) = self.descriptor().connect_port {
            // SAFETY: `port` is a port of the plugin; `data` points at memory that stays
            // valid for as long as the plugin uses it: the instance's own boxes, or the
            // node's buffers during this call's `run`.
            unsafe { f(self.handle(), port, data) };
        }
    }

    /// Resets the atom ports before a run: an input holds an empty sequence, an output a
    /// chunk of the buffer's capacity for the plugin to write into.
    #[inline]
    fn prepare_atoms(&mut self) {
        let (sequence, chunk) = (self.sequence, self.chunk);
        for a in &mut self.atoms {
            // Atom header (size, type) as two native-endian u32 in the first u64; an input
            // sequence's body (unit, pad) is the second u64, all zero.
            let (size, kind) = if a.input {
                (8u32, sequence)
            } else {
                ((ATOM_BYTES - 8) as u32, chunk)
            };
            let mut head = [0u8; 8];
            head[..4].copy_from_slice(&size.to_ne_bytes());
            head[4..].copy_from_slice(&kind.to_ne_bytes());
            a.buf[0] = u64::from_ne_bytes(head);
            a.buf[1] = 0;
        }
    }

    /// Activates the plugin; returns how many of its integer divisions trapped
    /// ([`fugue_dsp::foreign`]: many plugins derive their state from the rate here).
    fn activate(&mut self) -> u32 {
        let Some(f) = self.descriptor().activate else {
            return 0;
        };
        let _lock = self.recipe.world.guard();
        let handle = self.handle();
        // SAFETY: the instance is live and not active.
        fugue_dsp::foreign::guarded(|| unsafe { f(handle) }).1
    }

    fn deactivate(&mut self) {
        if let Some(f) = self.descriptor().deactivate {
            let _lock = self.recipe.world.guard();
            let handle = self.handle();
            // SAFETY: the instance is live and active. A division by zero gives 0 here: the
            // plugin is being put away.
            let _ = fugue_dsp::foreign::guarded(|| unsafe { f(handle) });
        }
    }

    /// Runs the plugin over `frames` frames from `off` of the node's buffers, at most
    /// `max_block` of them.
    #[inline]
    fn run_part(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]], off: usize, n: usize) {
        for k in 0..self.audio_in.len() {
            let copy = &mut self.inputs[k * self.max_block..][..n];
            match inputs.get(k) {
                Some(x) => copy.copy_from_slice(&x[off..off + n]),
                None => copy.fill(0.0),
            }
            let data = copy.as_mut_ptr();
            self.connect(self.audio_in[k], data.cast());
        }
        for k in 0..self.audio_out.len() {
            let data = match outputs.get_mut(k) {
                Some(y) => y[off..].as_mut_ptr(),
                None => self.scratch.as_mut_ptr(),
            };
            self.connect(self.audio_out[k], data.cast());
        }
        self.prepare_atoms();
        if let Some(run) = self.descriptor().run {
            // SAFETY: the instance is live and active; every audio port is connected to at
            // least `n` frames (the node's output buffers from `off`, or the instance's own
            // `max_block` frames, `n <= max_block`); control and atom ports to its boxes.
            unsafe { run(self.handle(), n as u32) };
        }
    }
}

impl Processor for Instance {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let frames = outputs
            .first()
            .map(|o| o.len())
            .or_else(|| inputs.first().map(|i| i.len()))
            .unwrap_or(0);
        if self.failed {
            for o in outputs.iter_mut() {
                o.fill(0.0);
            }
            if std::mem::take(&mut self.unsaid) {
                division_by_zero();
            }
            return;
        }
        let ((), traps) = fugue_dsp::foreign::guarded(|| {
            let mut off = 0;
            while off < frames {
                let n = (frames - off).min(self.max_block);
                self.run_part(inputs, outputs, off, n);
                off += n;
            }
        });
        if traps > 0 {
            self.failed = true;
            // The engine silences the node for the cycle and reports the message.
            division_by_zero();
        }
    }

    /// A new instance in place of this one, made as the node made it: deactivating and
    /// activating again, LV2's own way back, leaves the state of many plugins as it was
    /// (delay lines, envelopes, filter memory), so the cycles after it did not equal a fresh
    /// plan's. Called between runs, off the audio path (it allocates). Where the plugin
    /// cannot be instantiated again, the instance is kept, deactivated and activated.
    fn reset(&mut self) {
        match self.recipe.instance() {
            Ok(fresh) => *self = fresh,
            Err(_) => {
                self.deactivate();
                if self.activate() > 0 {
                    // Said at the next run, as a division by zero in `run` is.
                    self.failed = true;
                    self.unsaid = true;
                }
            }
        }
    }

    fn memory(&self) -> usize {
        self.atoms.len() * ATOM_BYTES
            + (self.audio_in.len() + 1 + self.cv.len()) * self.max_block * 4
    }

    /// Control input `param` (its port index): the plugin reads it at its next `run`.
    fn set_param(&mut self, param: usize, value: f64) {
        // A new value may end a division by zero: running is tried again.
        self.failed = false;
        if let Some(v) = self.values.get_mut(param) {
            *v = value as f32;
        }
    }

    /// The control outputs, as the plugin last wrote them.
    fn readings(&self) -> Vec<(String, f32)> {
        self.control_outputs
            .iter()
            .map(|(i, symbol)| (symbol.clone(), self.values[*i as usize]))
            .collect()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Relaxed: as where it was added.
        HELD.fetch_sub(self.took, Ordering::Relaxed);
        self.deactivate();
        let _lock = self.recipe.world.guard();
        let (free, raw) = (self.recipe.world.lilv.lilv_instance_free, self.raw);
        // SAFETY: the instance is live, deactivated, and freed once; nothing uses it after.
        // Its `cleanup` may divide by zero: 0, as it is put away.
        let _ = fugue_dsp::foreign::guarded(|| unsafe { free(raw) });
    }
}

/// The failure of a plugin whose integer division trapped ([`fugue_dsp::foreign`]).
#[cold]
#[inline(never)]
fn division_by_zero() -> ! {
    std::panic::panic_any(fugue_dsp::Failure(
        "its LV2 plugin divided an integer by zero, which has no result (a control value may have made a divisor 0); the node plays silence until one of its controls is set (in a host, its graph stays silent until unloaded)".to_string(),
    ))
}

/// The processor of a node whose plugin could not be instantiated again (after it was once
/// at load): silence, said at load.
pub struct Silent;

impl Processor for Silent {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        for o in outputs {
            o.fill(0.0);
        }
    }

    fn reset(&mut self) {}
}
