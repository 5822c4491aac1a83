//! fugue-lv2: the `lv2` node kind, LV2 plugins as nodes of a fugue graph.
//!
//! ```text
//! verb = { kind: "lv2", uri: "http://drobilla.net/plugins/mda/Ambience", mix: 0.5, };
//! ```
//!
//! - `uri` names an installed plugin (`fugue plugins` lists them); every other attribute sets
//!   the control input of that symbol, checked against the port's range (an attribute that
//!   names no control is warned about, with the plugin's controls); unset controls take the
//!   plugin's defaults.
//! - The node's input and output ports are the plugin's audio inputs and outputs, in the
//!   plugin's port order. Control outputs are connected to memory the processor keeps; atom
//!   (MIDI, event) inputs get an empty sequence at every run, atom outputs an empty chunk.
//! - The plugin is instantiated when the graph is compiled (render, run, the host's `load`),
//!   on the control thread, at the node's sample rate and for calls of at most the node's
//!   block; activated before the first cycle; deactivated and freed where the plan is
//!   dropped, off the audio thread. A cycle connects the node's buffers to the audio ports
//!   and calls `run`: nothing is allocated, locked or waited for on fugue's side.
//! - Refused at load, in one sentence each: an unknown URI (with the nearest installed ones),
//!   a value out of a control's range, a plugin that requires a feature fugue does not
//!   provide (fugue provides `urid:map`, `urid:unmap`, `options:options` with the block
//!   lengths and the rate, `bufsz:boundedBlockLength`), a required port fugue cannot connect
//!   (CV), a library that cannot be loaded or has no LV2 entry point, an instance whose own
//!   allocations would make the process's instances hold more than half the machine's
//!   memory, and lilv itself absent. A plugin that does not declare `lv2:hardRTCapable` is
//!   warned about where cycles have a deadline (not in an offline render).
//!
//! lilv is not linked: `liblilv-0.so.0` (Debian package `liblilv-0-0`) is opened the first
//! time an `lv2` node is built or the plugins are listed, so fugue builds and runs without
//! it; the environment variable `FUGUE_LIBLILV` names another file to open instead.

mod features;
mod ffi;
mod instance;
mod listing;
mod nearest;
mod node;
pub mod uris;
mod world;

use std::sync::Arc;

use fugue_dsp::kinds::doc::KindDoc;
use fugue_dsp::Registry;
use thiserror::Error;

pub use ffi::{LIBRARY, LIBRARY_VAR};
pub use node::{MAX_RATE, MIN_RATE};
pub use world::{world, PluginInfo, PortInfo, PortKind, World};

/// Why LV2 plugins cannot be used.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum Lv2Error {
    /// lilv could not be opened.
    #[error(
        "needs the LV2 host library {} ({reason}); install the package liblilv-0-0",
        ffi::LIBRARY
    )]
    NoLilv {
        /// What the loader said.
        reason: String,
    },
    /// The file that `FUGUE_LIBLILV` names could not be opened as lilv.
    #[error(
        "cannot use {file}, which {} names, as the LV2 host library lilv ({reason}); unset it to use the system's {} (install the package liblilv-0-0)",
        ffi::LIBRARY_VAR,
        ffi::LIBRARY
    )]
    ChosenNotLilv {
        /// The file.
        file: String,
        /// What the loader said.
        reason: String,
    },
}

/// The kind's name.
pub const KIND: &str = "lv2";

/// Registers the `lv2` kind in `registry`; its warnings at load (an attribute that names no
/// control, a plugin not declared real-time safe) are said through `warn`, each once.
/// Registering opens nothing: lilv is opened when the first `lv2` node is built.
pub fn register(registry: &mut Registry, warn: impl Fn(&str) + Send + Sync + 'static) {
    let kind = Arc::new(node::Kind::new(warn));
    registry.register_documented(move |ctx| kind.build(ctx), doc());
    registry.set_linter(KIND, node::lint);
}

/// What `fugue kinds` says of the `lv2` kind.
pub fn doc() -> KindDoc {
    KindDoc::new(
        KIND,
        "an installed LV2 plugin, instantiated when the graph is loaded (needs lilv; `fugue plugins` lists the plugins)",
        "the plugin's audio inputs, in its port order",
        "the plugin's audio outputs, in its port order",
    )
    .attribute("uri", "the plugin's URI (required)")
    .others(
        "sets the plugin's control input of that symbol, within the port's range (`fugue plugins URI` lists them); unset controls take the plugin's defaults; one that names no control is warned about (an error for `fugue check`); every control is live",
    )
}

/// What lilv said while it read the installed descriptions, as one warning line, or `None`
/// when it said nothing ([`World::load_problems`]).
pub fn load_problems_line(world: &World) -> Option<String> {
    let lines = world.load_problems();
    // The line that names the file, where one does (lilv's own, after its parser's).
    let first = lines
        .iter()
        .find(|l| l.contains(".ttl"))
        .or(lines.first())?
        // lilv quotes `like this': its backquote would open a quote of fugue's message.
        .replace('`', "'");
    Some(format!(
        "LV2: lilv could not read every installed plugin description ({} line{} of errors, as: {first}); the plugins it read are available (`fugue plugins` lists them)",
        lines.len(),
        if lines.len() == 1 { "" } else { "s" }
    ))
}

/// The installed plugins, in URI order, or why they cannot be read.
pub fn plugins() -> Result<&'static [PluginInfo], Lv2Error> {
    Ok(world()?.plugins())
}
