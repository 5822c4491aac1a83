//! The node model: control-side [`DspNode`]s and real-time [`Processor`]s.

use std::path::{Path, PathBuf};

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
    /// The folder of the file the graph was read from ([`fugue_graph::TaskGraph::folder`]),
    /// when it came from one: a kind that reads a file names it relative to the graph
    /// ([`NodeContext::resolve`]).
    pub folder: Option<&'a Path>,
}

impl<'a> NodeContext<'a> {
    /// The context of node `v` of `graph` (its ports and edges as the graph has them), at
    /// the engine's `rate` Hz and `block` frames, with no resampler upstream: what the
    /// control-side tools (checks, lints, live changes) build a node with.
    pub fn of(graph: &'a fugue_graph::TaskGraph, v: usize, rate: f64, block: usize) -> Self {
        NodeContext {
            node: graph.node(v),
            inputs: graph.inputs(v),
            outputs: graph.outputs(v),
            in_edges: graph.in_edges(v).len(),
            sample_rate: rate,
            block,
            rate: Ratio::ONE,
            engine_rate: rate,
            engine_block: block,
            folder: graph.folder(),
        }
    }

    /// The attributes that the graph reads itself and no kind sees (`in`, `out`: the node's
    /// ports; `wcet`: its cost in µs), each with whether this node gives it and what it is,
    /// for a kind whose parameters are named by others (a program's, a plugin's) to say that
    /// one of that name cannot be set by it.
    pub fn graph_attributes(&self) -> [(&'static str, bool, &'static str); 3] {
        [
            (
                "in",
                self.node.declared_inputs.is_some(),
                "the node's input ports",
            ),
            (
                "out",
                self.node.declared_outputs.is_some(),
                "the node's output ports",
            ),
            (
                "wcet",
                self.node.cost_declared && self.node.cost_in_us,
                "the node's cost in µs",
            ),
        ]
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.node.name
    }

    /// The node's kind.
    pub fn kind(&self) -> &str {
        &self.node.kind
    }

    /// `path` as a file attribute names it: an absolute path as it is, a relative one against
    /// the graph's [`folder`](NodeContext::folder) (against the working directory when the
    /// graph came from no file).
    pub fn resolve(&self, path: impl AsRef<Path>) -> PathBuf {
        let path = path.as_ref();
        match self.folder {
            Some(folder) if path.is_relative() => folder.join(path),
            _ => path.to_path_buf(),
        }
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

    /// Whether a block run as consecutive shorter calls (its first frames, then the next, on
    /// the same processor) gives the same samples as one call on the whole block: what
    /// pipelining needs, which cuts every cycle into sub-blocks. True of every built-in kind;
    /// a node whose output depends on how the frames are cut into calls (a plugin that
    /// ramps its controls over each call) says false, and a plan that holds it is not
    /// pipelined. Default: true.
    fn splits_in_time(&self) -> bool {
        true
    }

    /// Whether the processor sees its inputs only through their sum by [`sum_inputs`]: its
    /// outputs are the same for inputs `x1..xn` as for any inputs with the same
    /// [`sum_inputs`]. The engine may then compute the sums of the groups of [`SUM_GROUP`]
    /// consecutive input ports of a wide join as separate tasks, where the branches that feed
    /// them ran, and give the node the groups' sums as its inputs. Default: false.
    fn sums_inputs(&self) -> bool {
        false
    }

    /// A fresh processor in its initial state (may allocate: it sizes all its memory here).
    fn processor(&self) -> Box<dyn Processor>;

    /// [`DspNode::processor`], or why it cannot be made (a foreign library that refuses to
    /// instantiate it): the plan compiler calls this one and reports the reason as the
    /// node's error. Default: the processor.
    fn try_processor(&self) -> Result<Box<dyn Processor>, String> {
        Ok(self.processor())
    }

    /// Bytes of memory that each processor from [`DspNode::processor`] holds besides the
    /// plan's buffers (delay lines, filter buffers); the plan compiler counts them against its
    /// memory budget. Default: 0.
    fn memory(&self) -> usize {
        0
    }

    /// Memory that the processors of every node of one origin hold once, together, besides
    /// [`DspNode::memory`] (a compiled program's tables, made once for all its instances):
    /// the origin (nodes of one origin give the same) and its bytes. The plan compiler
    /// counts each origin once. Default: none.
    fn shared_memory(&self) -> Option<SharedMemory> {
        None
    }

    /// Lines that describe the node beyond its kind and ports, for `fugue info` (a plugin's
    /// name, its controls and their ranges, the control outputs it reports). Control side;
    /// may allocate. Default: none.
    fn describe(&self) -> Vec<String> {
        Vec::new()
    }

    /// The largest value a live change may give parameter `param` on this node's processors,
    /// when their memory bounds it (a delay's line holds at most `max_time`); `None`: no
    /// such bound (the kind's own checks apply). Default: none.
    fn live_max(&self, param: usize) -> Option<f64> {
        let _ = param;
        None
    }

    /// The index of attribute `attr` among the node's live parameters, which its processors
    /// change while they play ([`Processor::set_param`]); `None` when `attr` is not live.
    /// Default: no live parameter.
    fn live_param(&self, attr: &str) -> Option<usize> {
        let _ = attr;
        None
    }

    /// The values that live parameter `param` ([`DspNode::live_param`]) changes, each by the
    /// attribute that names it alone, for a node whose attributes may name one value in
    /// several ways (a program's parameter by its label, its path, or a label that several
    /// share): two live parameters that share one overlap, and a live change of one replaces
    /// the other. Default: none (each live parameter is a value of its own).
    fn live_parts(&self, param: usize) -> Vec<String> {
        let _ = param;
        Vec::new()
    }
}

/// Memory held once by the nodes of one origin ([`DspNode::shared_memory`]): the origin,
/// which the one who counts it keeps while it counts (so that no other origin takes its
/// address: [`std::sync::Arc::as_ptr`] names it), and its bytes.
pub type SharedMemory = (std::sync::Arc<dyn std::any::Any + Send + Sync>, usize);

/// The origins of [`DspNode::shared_memory`] counted so far, each kept while they are
/// counted (its address names it alone): each origin's bytes count once.
#[derive(Default)]
pub struct SharedOrigins(
    std::collections::HashMap<usize, std::sync::Arc<dyn std::any::Any + Send + Sync>>,
);

impl SharedOrigins {
    /// The bytes `shared` adds to a sum: its own the first time its origin is counted, else
    /// none.
    pub fn add(&mut self, shared: Option<SharedMemory>) -> usize {
        let Some((origin, bytes)) = shared else {
            return 0;
        };
        let at = std::sync::Arc::as_ptr(&origin).cast::<()>() as usize;
        if self.0.insert(at, origin).is_none() {
            bytes
        } else {
            0
        }
    }
}

/// A processor's failure, raised with `std::panic::panic_any(Failure(message))` from
/// [`Processor::process`] (foreign code that did what has no result: an integer division by
/// zero, [`crate::foreign`]). The plan catches it as any panic: the node's outputs are
/// silenced for the cycle and the message is reported with the node's name. Unlike a panic
/// of a bug, it is an error of the graph's program, not of fugue: the command line's panic
/// hook says nothing for it (no panic trace), and the engine says the message.
#[derive(Debug)]
pub struct Failure(pub String);

/// The most memory one node's processor may hold (a delay line): 64 MiB. Kinds refuse an
/// attribute that would need more, naming the figure, instead of allocating it.
pub const MAX_NODE_MEMORY: usize = 64 << 20;

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

    fn readings(&self) -> Vec<(String, f32)> {
        self.0.readings()
    }

    #[inline]
    fn set_param(&mut self, param: usize, value: f64) {
        self.0.set_param(param, value);
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
///
/// A cycle may also come in several calls on consecutive parts of the block, in order (the
/// plan's pipelining cuts each cycle into sub-blocks, see `CompileOptions::pipeline` in
/// `fugue-exec`): the slices are then those frames of every buffer, and the samples must be
/// the same, bit for bit, as those of one call on the whole block. A processor's result may
/// depend on each sample's index since the start, never on where a call starts or ends (no
/// per-call rounding of a phase, no per-call block of its own). Every built-in kind but the
/// resampler, which changes the rate, keeps this (`cuts_do_not_change_the_output` in
/// `tests/golden.rs`); the plan never pipelines a graph that changes rates.
pub trait Processor: Send {
    /// Computes one cycle.
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]);

    /// Returns to the initial state (phase, filter memory, delay lines, random seed), so that
    /// the following cycles equal those of a fresh processor. Called between runs, on the
    /// control thread, never on the audio path: it may allocate (a foreign plugin's reset is
    /// a new instance).
    fn reset(&mut self);

    /// Bytes this processor holds on the heap (delay lines, work buffers); see
    /// [`DspNode::memory`]. Default: 0.
    fn memory(&self) -> usize {
        0
    }

    /// [`DspNode::live_max`] of the node this processor was made for (a node that clones a
    /// prototype processor asks it). Default: none.
    fn live_max(&self, param: usize) -> Option<f64> {
        let _ = param;
        None
    }

    /// What the processor reports beside its audio, by name, as it stands after the last
    /// cycle (an LV2 plugin's control outputs: a meter, a gain reduction). Read on the
    /// control side between cycles, never during one; it may allocate. Default: nothing.
    fn readings(&self) -> Vec<(String, f32)> {
        Vec::new()
    }

    /// Sets the live parameter `param` (the index its node gave, [`DspNode::live_param`]) to
    /// `value`, between two blocks: the next block computes with it, the state (phase,
    /// filter memory, delay line) going on. Called on the audio path: it never allocates,
    /// locks or blocks. The value was checked on the control side (the node's kind built
    /// with it). A value set stays until it is set again ([`Processor::reset`] keeps it).
    /// Default: nothing (no live parameter).
    fn set_param(&mut self, param: usize, value: f64) {
        let _ = (param, value);
    }
}

/// Input ports summed one after the other before their sums are combined (see [`sum_inputs`]).
pub const SUM_GROUP: usize = 8;

/// Frames summed at a time by [`sum_inputs`] when it needs partial sums (they live on the
/// stack, two blocks of this many frames per level of the tree).
const SUM_CHUNK: usize = 64;

/// Sums the input buffers into `dst` (`dst` is overwritten; no input gives silence), in a fixed
/// order that does not depend on who computes it. With `G` = [`SUM_GROUP`] and `S` the sum
/// left to right, `((x1 + x2) + x3) + ...`:
/// - up to `G` inputs: `S` of them;
/// - up to `2G`: the *pair sum*, `S(first G) + S(the others)`;
/// - more: the inputs in consecutive blocks of `2G` (the last one may be shorter), each block
///   summed by the rule (a pair sum, or `S` for a short last block), then those sums summed
///   by the same rule (again in blocks when there are more than `2G` of them).
///
/// So the sum of `n > 2G` inputs equals the sum, by this rule, of the sums of its blocks, and
/// a block's sum is one addition of the sums of its two halves: the engine may compute the
/// halves as tasks of their own, on several threads, the second one adding the first one's
/// sum to its own, and get the same samples bit for bit (`fugue_exec` does for wide joins of
/// kinds that declare [`DspNode::sums_inputs`]). It is also more accurate than one long
/// left-to-right sum (the rounding error grows with the depth of the tree, not with the number
/// of inputs).
pub fn sum_inputs(inputs: &[&[f32]], dst: &mut [f32]) {
    if inputs.len() <= SUM_GROUP {
        sum_left(inputs, 0, dst);
        return;
    }
    // The inputs under one value of the top level: (2G)^depth.
    let mut span = 1;
    while span * 2 * SUM_GROUP < inputs.len() {
        span *= 2 * SUM_GROUP;
    }
    let mut start = 0;
    while start < dst.len() {
        let end = (start + SUM_CHUNK).min(dst.len());
        sum_level(inputs, span, start, &mut dst[start..end]);
        start = end;
    }
}

/// Left-to-right sum of frames `off..off + dst.len()` of `inputs` into `dst`.
#[inline]
fn sum_left(inputs: &[&[f32]], off: usize, dst: &mut [f32]) {
    match inputs.split_first() {
        None => dst.fill(0.0),
        Some((first, rest)) => {
            dst.copy_from_slice(&first[off..off + dst.len()]);
            for x in rest {
                add(dst, &x[off..]);
            }
        }
    }
}

/// `dst[i] += src[i]` over `dst`.
#[inline]
fn add(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

/// The rule's sum of frames `off..off + dst.len()` (at most [`SUM_CHUNK`]) of the values of
/// one level: `inputs` in consecutive spans of `span` inputs (one value each, the rule's sum
/// of the span), at most `2 * SUM_GROUP` values. Up to [`SUM_GROUP`] values: their sum left to
/// right; more: the pair sum of the first [`SUM_GROUP`] and the others.
fn sum_level(inputs: &[&[f32]], span: usize, off: usize, dst: &mut [f32]) {
    if span == 1 && inputs.len() <= SUM_GROUP {
        sum_left(inputs, off, dst);
        return;
    }
    let (first, second) = inputs.split_at(inputs.len().min(span * SUM_GROUP));
    sum_values(first, span, off, dst);
    if !second.is_empty() {
        let mut part = [0.0f32; SUM_CHUNK];
        let part = &mut part[..dst.len()];
        sum_values(second, span, off, part);
        add(dst, part);
    }
}

/// Left-to-right sum of the values (spans of `span` inputs, each summed by [`sum_level`]) of
/// `inputs`, at most [`SUM_GROUP`] of them.
fn sum_values(inputs: &[&[f32]], span: usize, off: usize, dst: &mut [f32]) {
    if span == 1 {
        sum_left(inputs, off, dst);
        return;
    }
    let mut values = inputs.chunks(span);
    sum_level(
        values.next().unwrap_or_default(),
        span / (2 * SUM_GROUP),
        off,
        dst,
    );
    let mut part = [0.0f32; SUM_CHUNK];
    let part = &mut part[..dst.len()];
    for value in values {
        sum_level(value, span / (2 * SUM_GROUP), off, part);
        add(dst, part);
    }
}

/// The pair sum's second half as a task: `inputs[0]` (the first half's sum, computed
/// elsewhere) plus the [`sum_inputs`] of the others, into `dst`.
pub(crate) fn sum_after(inputs: &[&[f32]], dst: &mut [f32]) {
    match inputs.split_first() {
        None => dst.fill(0.0),
        Some((first, rest)) => {
            sum_inputs(rest, dst);
            add(dst, first);
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

#[cfg(test)]
mod tests {
    use super::{sum_after, sum_inputs, NodeContext, SUM_GROUP};
    use crate::Ratio;
    use fugue_graph::{Node, Value};
    use std::path::{Path, PathBuf};

    #[test]
    fn a_file_attribute_is_found_in_the_graph_folder() {
        let node = Node::new("t", "table")
            .with_attr("file", Value::Str("sub/x.txt".into()))
            .with_attr("abs", Value::Str("/tmp/y.txt".into()))
            .with_attr("empty", Value::Str(String::new()));
        let mut ctx = NodeContext {
            node: &node,
            inputs: 0,
            outputs: 1,
            in_edges: 0,
            sample_rate: 48_000.0,
            block: 64,
            rate: Ratio::ONE,
            engine_rate: 48_000.0,
            engine_block: 64,
            folder: Some(Path::new("/graphs/here")),
        };
        let file = |ctx: &NodeContext<'_>, a: &str| crate::attrs::file(ctx, a);
        assert_eq!(
            file(&ctx, "file").unwrap(),
            Some(PathBuf::from("/graphs/here/sub/x.txt"))
        );
        assert_eq!(
            file(&ctx, "abs").unwrap(),
            Some(PathBuf::from("/tmp/y.txt"))
        );
        assert_eq!(file(&ctx, "none").unwrap(), None);
        let e = file(&ctx, "empty").unwrap_err().to_string();
        assert!(e.contains("`empty`") && e.contains("name of a file"), "{e}");
        // A graph made in memory: relative to the working directory.
        ctx.folder = None;
        assert_eq!(ctx.resolve("sub/x.txt"), PathBuf::from("sub/x.txt"));
    }

    /// The rule, written as stated: left to right up to `SUM_GROUP` inputs; up to twice as
    /// many, the sum of the first `SUM_GROUP` plus the sum of the others; beyond, the sums of
    /// consecutive blocks of `2 * SUM_GROUP`, summed by the same rule.
    fn reference(inputs: &[Vec<f32>], frames: usize) -> Vec<f32> {
        let g = SUM_GROUP;
        if inputs.len() <= g {
            let mut acc = match inputs.first() {
                Some(x) => x[..frames].to_vec(),
                None => return vec![0.0; frames],
            };
            for x in &inputs[1..] {
                for (a, b) in acc.iter_mut().zip(x) {
                    *a += *b;
                }
            }
            return acc;
        }
        if inputs.len() <= 2 * g {
            let mut acc = reference(&inputs[..g], frames);
            for (a, b) in acc.iter_mut().zip(reference(&inputs[g..], frames)) {
                *a += b;
            }
            return acc;
        }
        let partial: Vec<Vec<f32>> = inputs
            .chunks(2 * g)
            .map(|block| reference(block, frames))
            .collect();
        reference(&partial, frames)
    }

    /// Pseudo-random values (the seeded generator of `fast`) of very different magnitudes, so
    /// that the order of the additions shows in the sums.
    fn values(seed: u64) -> impl FnMut() -> f32 {
        let mut rng = crate::fast::Rng::new(seed);
        move || {
            let x = rng.next_u64() as u32;
            (x as f32 / u32::MAX as f32 - 0.5) * [1e-4, 1.0, 1e4][(x % 3) as usize]
        }
    }

    #[test]
    fn the_tree_sum_follows_its_rule_bit_for_bit() {
        let mut next = values(0x2545_f491);
        for n in (0..=80).chain([255, 256, 257, 272, 273, 511, 512, 513, 600, 4097]) {
            for frames in [1, 63, 64, 65, 200] {
                let inputs: Vec<Vec<f32>> = (0..n)
                    .map(|_| (0..frames).map(|_| next()).collect())
                    .collect();
                let refs: Vec<&[f32]> = inputs.iter().map(|x| &x[..]).collect();
                let mut dst = vec![f32::NAN; frames];
                sum_inputs(&refs, &mut dst);
                let want = reference(&inputs, frames);
                assert!(
                    dst.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{n} inputs, {frames} frames"
                );
            }
        }
        // Beyond 8 inputs it is not one long left-to-right sum, and it is closer to the exact
        // sum: 1 + 15 * 4e-8 left to right loses every small term (each is below half a unit
        // in the last place of 1.0); the tree adds the last eight together first.
        let x: Vec<Vec<f32>> = (0..16)
            .map(|i| vec![if i == 0 { 1.0 } else { 4e-8 }])
            .collect();
        let refs: Vec<&[f32]> = x.iter().map(|v| &v[..]).collect();
        let mut dst = [0.0];
        sum_inputs(&refs, &mut dst);
        let left = x.iter().fold(0.0f32, |a, v| a + v[0]);
        assert_eq!(left, 1.0);
        assert!(dst[0] > 1.0 && (f64::from(dst[0]) - (1.0 + 15.0 * 4e-8)).abs() < 3e-7);
    }

    /// A block of `2 * SUM_GROUP` inputs computed as two tasks, the second adding the first's
    /// sum to its own (`sum_after`), gives the block's sum; so does the first half with one
    /// more input (or one silent input) when the second half is that one input (or silence).
    #[test]
    fn a_pair_sum_split_in_two_tasks_is_the_same_bit_for_bit() {
        let g = SUM_GROUP;
        let mut next = values(0x9e37_79b9);
        let frames = 130;
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in g + 1..=2 * g {
            let mut inputs: Vec<Vec<f32>> = (0..n)
                .map(|_| (0..frames).map(|_| next()).collect())
                .collect();
            // Negative zeros, where `x + 0.0` is not `x`.
            inputs[0][3] = -0.0;
            inputs[n - 1][3] = -0.0;
            let refs: Vec<&[f32]> = inputs.iter().map(|x| &x[..]).collect();
            let mut whole = vec![f32::NAN; frames];
            sum_inputs(&refs, &mut whole);
            let mut first = vec![f32::NAN; frames];
            sum_inputs(&refs[..g], &mut first);
            let mut after: Vec<&[f32]> = vec![&first];
            after.extend_from_slice(&refs[g..]);
            let mut second = vec![f32::NAN; frames];
            sum_after(&after, &mut second);
            assert_eq!(bits(&second), bits(&whole), "{n} inputs");
        }
        let silence = vec![0.0f32; frames];
        let x: Vec<Vec<f32>> = (0..g)
            .map(|i| {
                (0..frames)
                    .map(|f| if f == 0 || i > 0 { -0.0 } else { next() })
                    .collect()
            })
            .collect();
        let mut refs: Vec<&[f32]> = x.iter().map(|v| &v[..]).collect();
        refs.extend(std::iter::repeat_n(&silence[..], g));
        let mut whole = vec![f32::NAN; frames];
        sum_inputs(&refs, &mut whole);
        assert_eq!(
            whole[0].to_bits(),
            0.0f32.to_bits(),
            "-0.0 + silence is +0.0"
        );
        let mut nine = vec![f32::NAN; frames];
        sum_inputs(&refs[..g + 1], &mut nine);
        assert_eq!(bits(&nine), bits(&whole));
    }
}
