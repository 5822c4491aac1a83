//! The node model: control-side [`DspNode`]s and real-time [`Processor`]s.

use fugue_graph::Node;

use crate::Ratio;

/// What a constructor knows about the node it builds.
#[derive(Clone, Copy, Debug)]
pub struct NodeContext<'a> {
    /// The graph node: name, kind, attributes, declared ports, cost.
    pub node: &'a Node,
    /// Number of input ports in the graph (declared, or one past the highest port used).
    pub inputs: usize,
    /// Number of output ports in the graph.
    pub outputs: usize,
    /// Number of edges that feed the node (all ports together).
    pub in_edges: usize,
    /// Sample rate at this node, in Hz (the engine's rate times [`NodeContext::rate`]).
    pub sample_rate: f64,
    /// Frames per cycle at this node (the engine's block times [`NodeContext::rate`]).
    pub block: usize,
    /// This node's rate relative to the engine's (1 unless a resampler is upstream).
    pub rate: Ratio,
    /// The engine's sample rate, in Hz.
    pub engine_rate: f64,
    /// The engine's frames per cycle.
    pub engine_block: usize,
}

impl NodeContext<'_> {
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.node.name
    }

    /// The node's kind.
    pub fn kind(&self) -> &str {
        &self.node.kind
    }
}

/// Whether a node exchanges audio with the engine's inputs or outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// An ordinary node: it reads its input ports and writes its output ports.
    None,
    /// An engine input (`source`): `process` receives, instead of input ports, `channels`
    /// engine input channels (engine block size each).
    Source {
        /// Number of engine input channels it reads (one per output port).
        channels: usize,
    },
    /// An engine output (`sink`): `process` writes, instead of output ports, `channels` engine
    /// output channels (engine block size each).
    Sink {
        /// Number of engine output channels it writes (one per input port).
        channels: usize,
    },
}

/// The control-side half of a node, built by a [`Constructor`](crate::Constructor) from a
/// graph node on the control thread (it may allocate). It describes the buffers the node
/// uses and makes its [`Processor`].
pub trait DspNode: Send {
    /// Number of buffers `process` receives as inputs: the graph's input ports, or for
    /// [`Io::Source`] the engine channels.
    fn inputs(&self) -> usize;

    /// Number of buffers `process` receives as outputs: the graph's output ports, or for
    /// [`Io::Sink`] the engine channels.
    fn outputs(&self) -> usize;

    /// The node's output rate relative to its input rate (a resampler's ratio; 1 otherwise).
    /// Output port buffers hold `block * rate_ratio` frames.
    fn rate_ratio(&self) -> Ratio {
        Ratio::ONE
    }

    /// Whether the node is an engine input or output.
    fn io(&self) -> Io {
        Io::None
    }

    /// Whether each output frame depends only on the same frame of the inputs: no state, no
    /// delay, no look-ahead, and the output buffers have the inputs' length. The engine may
    /// then split a cycle of the node into parts of the block, each run by its own processor
    /// (from [`DspNode::processor`]) on the same frames of every buffer, possibly at the same
    /// time on several threads; the samples must equal those of one run on the whole block
    /// (the same operations in the same order for each frame). Default: false.
    fn frame_parallel(&self) -> bool {
        false
    }

    /// A fresh processor in its initial state (may allocate: it sizes all its memory here).
    fn processor(&self) -> Box<dyn Processor>;
}

/// Boxes a processor on cache lines of its own.
///
/// Processors are small, mutable structures (a phase, filter memory) written at every cycle;
/// allocated one after the other, several would share a cache line, and two of them run by
/// two threads in the same cycle would make that line travel between the cores at every
/// write (false sharing). Every built-in kind boxes its processors with this; node kinds
/// defined elsewhere should too.
pub fn isolated<P: Processor + 'static>(processor: P) -> Box<dyn Processor> {
    Box::new(Isolated(processor))
}

/// A processor aligned (and so sized) to 128 bytes: two cache lines, the unit of the
/// adjacent-line prefetcher.
#[repr(align(128))]
struct Isolated<P>(P);

impl<P: Processor> Processor for Isolated<P> {
    #[inline]
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        self.0.process(inputs, outputs);
    }

    fn reset(&mut self) {
        self.0.reset();
    }
}

/// The real-time half of a node.
///
/// `process` is called once per cycle. `inputs[i]` holds the input buffer `i` for this cycle
/// (silence when nothing feeds it), `outputs[j]` the output buffer `j`; their lengths are the
/// node's block size (the engine block for engine channels, `block * rate_ratio` for the
/// outputs of a resampler). `process` **must write every sample of every output** (buffers
/// hold the previous cycle's data: nothing is cleared for it), and must never allocate, free,
/// lock, block or do I/O.
pub trait Processor: Send {
    /// Computes one cycle.
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]);

    /// Returns to the initial state (phase, filter memory, delay lines, random seed), so that
    /// the following cycles equal those of a fresh processor.
    fn reset(&mut self);
}

/// Sums the input buffers into `dst` (`dst` is overwritten; no input gives silence).
#[inline]
pub(crate) fn sum_inputs(inputs: &[&[f32]], dst: &mut [f32]) {
    match inputs.split_first() {
        None => dst.fill(0.0),
        Some((first, rest)) => {
            dst.copy_from_slice(&first[..dst.len()]);
            for x in rest {
                for (d, s) in dst.iter_mut().zip(x.iter()) {
                    *d += *s;
                }
            }
        }
    }
}

/// Copies `src` to every output after the first (the first is `src` itself).
#[inline]
pub(crate) fn fan_out(outputs: &mut [&mut [f32]]) {
    if let Some((first, rest)) = outputs.split_first_mut() {
        for o in rest {
            o.copy_from_slice(first);
        }
    }
}
