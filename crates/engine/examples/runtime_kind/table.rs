//! The `table` kind: a node that plays, in a loop, the samples of a text file (numbers
//! separated by white space) named by its `file` attribute, relative to the graph's folder.
//!
//! It is registered at run time with a constructor that carries state: a [`Tables`] shared by
//! every node of the kind (and every plan compiled from the same registry), which reads each
//! file once and hands its samples to every node that names it, as a kind compiled at load
//! time shares one factory among its nodes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fugue_dsp::kinds::doc::KindDoc;
use fugue_dsp::{attrs, DspNode, NodeContext, NodeError, Processor, Registry};

/// The samples of the files read so far, by path: the state the constructor carries.
#[derive(Debug, Default)]
pub struct Tables {
    read: Mutex<HashMap<PathBuf, Arc<[f32]>>>,
}

impl Tables {
    /// Registers the kind `table` in `registry`; returns the state that its constructor
    /// shares.
    pub fn register(registry: &mut Registry) -> Arc<Tables> {
        let tables = Arc::new(Tables::default());
        let state = Arc::clone(&tables);
        registry.register_documented(
            move |ctx: &NodeContext<'_>| state.build(ctx),
            KindDoc::new(
                "table",
                "plays the samples of a text file in a loop",
                "none",
                "any number, each the samples times volume",
            )
            .attribute(
                "file",
                "a text file of samples, relative to the graph's folder (required)",
            )
            .attribute("volume", "output gain (default 1.0)"),
        );
        tables
    }

    /// The files read so far (each once, however many nodes and plans use it).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.lock().keys().cloned().collect();
        v.sort();
        v
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<[f32]>>> {
        // A panic while the map was held leaves it whole (an insert is one call).
        self.read.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The samples of `path`, read now or before.
    fn samples(&self, ctx: &NodeContext<'_>, path: &Path) -> Result<Arc<[f32]>, NodeError> {
        if let Some(s) = self.lock().get(path) {
            return Ok(Arc::clone(s));
        }
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| attrs::bad(ctx, "file", &shown, &format!("cannot be read: {e}")))?;
        let samples = text
            .split_whitespace()
            .map(|w| w.parse::<f32>())
            .collect::<Result<Vec<f32>, _>>()
            .map_err(|e| attrs::bad(ctx, "file", &shown, &format!("holds a non-number: {e}")))?;
        if samples.is_empty() {
            return Err(attrs::bad(ctx, "file", &shown, "holds no sample"));
        }
        let samples: Arc<[f32]> = samples.into();
        self.lock().insert(path.to_path_buf(), Arc::clone(&samples));
        Ok(samples)
    }

    /// The constructor: a `table` node of `ctx`.
    fn build(&self, ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
        attrs::no_inputs(ctx)?;
        let Some(path) = attrs::file(ctx, "file")? else {
            return Err(NodeError::MissingAttr {
                node: ctx.name().to_string(),
                kind: ctx.kind().to_string(),
                attr: "file".into(),
                what: "a text file of samples".into(),
            });
        };
        Ok(Box::new(Table {
            outputs: ctx.outputs,
            samples: self.samples(ctx, &path)?,
            volume: attrs::volume(ctx)?,
        }))
    }
}

/// The control-side node.
struct Table {
    outputs: usize,
    samples: Arc<[f32]>,
    volume: f32,
}

impl DspNode for Table {
    fn inputs(&self) -> usize {
        0
    }
    fn outputs(&self) -> usize {
        self.outputs
    }
    fn memory(&self) -> usize {
        self.samples.len() * std::mem::size_of::<f32>()
    }
    fn processor(&self) -> Box<dyn Processor> {
        fugue_dsp::isolated(Player {
            samples: Arc::clone(&self.samples),
            volume: self.volume,
            next: 0,
        })
    }
}

/// The processor: output frame `n` (since the start or the last reset) is
/// `volume * samples[n % len]` on every output port.
struct Player {
    samples: Arc<[f32]>,
    volume: f32,
    next: usize,
}

impl Processor for Player {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let Some((first, rest)) = outputs.split_first_mut() else {
            return;
        };
        for y in first.iter_mut() {
            *y = self.samples[self.next] * self.volume;
            self.next += 1;
            if self.next == self.samples.len() {
                self.next = 0;
            }
        }
        for out in rest {
            out.copy_from_slice(first);
        }
    }

    fn reset(&mut self) {
        self.next = 0;
    }
}
