//! The compiled plan: tasks, successor lists, activation counts, buffers and processors.
//!
//! - `compile`: the compiler, as a chain of typed passes;
//! - `units`: the unit graph that the executors schedule;
//! - `task`: the per-task runtime that the executors call on the audio path;
//! - `regroup`: wide sums split into trees of groups; `arena`: the buffers' memory.

pub(crate) mod arena;
mod compile;
mod feedback;
mod regroup;
mod task;
mod units;

use std::sync::atomic::Ordering;

use fugue_graph::{EdgeId, NodeId, TaskGraph};

use arena::{Arena, Buf};
use task::TaskCell;
use units::Units;

/// Bytes of one audio buffer of `frames` samples in a plan's memory (rounded up to whole
/// cache lines, as the compiler lays buffers out): what `fugue check` counts for each port.
pub fn buffer_bytes(frames: usize) -> usize {
    arena::Layout::bytes_of(frames)
}

/// How [`Plan::pipeline_note`] begins: the rest is the reason ([`Plan::pipeline_refusal`]).
const NOT_PIPELINED: &str = "not pipelined: ";

pub use compile::{
    port_mismatch, size_in_words, CompileError, CompileOptions, MAX_BLOCK, MAX_PIPELINE,
    MAX_RATE_FACTOR, MAX_READ_SAMPLES, MAX_SUB_BLOCKS, MEMORY_LIMIT,
};
pub use task::TaskPanic;
pub use units::{
    JOIN_FANIN, NO_SLOT, SPLIT_GROUP_MIN_FRAMES, SPLIT_MIN_FRAMES, SPLIT_MIN_INPUTS, SPLIT_PARTS,
};

/// One input port: the buffer `process` reads; when `n_srcs >= 2`, the consumer first sums
/// `sum_srcs[first..first + n_srcs]` (edge declaration order) into it.
#[derive(Clone, Copy, Debug)]
struct InPort {
    buf: Buf,
    first: u32,
    n_srcs: u32,
}

/// The read-only description of a task.
#[derive(Clone, Debug)]
struct TaskInfo {
    /// The node of the compiled graph this task computes (a group of a split sum: the
    /// split node).
    node: NodeId,
    name: String,
    kind: String,
    cost: f64,
    /// The task's share of its node's cost (below 1 for a split sum and its groups).
    share: f64,
    succ: (u32, u32),
    initial: u32,
    level: u32,
    ins: (u32, u32),
    outs: (u32, u32),
    sample_rate: f64,
    block: usize,
    /// Parts a cycle of this task may be split into (1: not splittable; see [`SPLIT_PARTS`]).
    parts: u32,
    /// The cell of part 1 (parts 1.. have cells `part_cells..part_cells + parts - 1`; part 0
    /// uses the task's own cell).
    part_cells: u32,
    /// Pipelined and frame-parallel: sub-block `k >= 1` runs with cell `sub_cells + k - 1`
    /// (its own processor), and the sub-blocks of its units are not chained.
    stateless: bool,
    /// See `stateless`.
    sub_cells: u32,
}

/// A compiled graph, ready to run.
///
/// Tasks are numbered `0..len()` in a topological order of the graph (the graph's
/// [`topo_order`](TaskGraph::topo_order)); task `i` is graph node [`Plan::node_of`]`(i)`.
/// Each task knows its distinct successors ([`Plan::successors`]) and how many distinct
/// predecessors must finish before it may run ([`Plan::initial_count`]), for activation-count
/// executors, and its topological level ([`Plan::level`]), for fork/join executors.
///
/// Units: the executors schedule *units*, not tasks. A unit is a chain of tasks that run back
/// to back on one thread ([`Plan::run_unit`]): after compile, each maximal chain `t1 -> t2 ->
/// ... -> tk` in which every `t(i+1)` is the only successor of `ti` and has `ti` as its only
/// predecessor is one unit (no parallelism is lost: `t(i+1)` can only start when `ti` ends,
/// and nothing else waits for `ti`). A line of 100 nodes is one unit. Units are numbered in a
/// topological order and have their own successors, counts and levels ([`Plan::unit_successors`],
/// [`Plan::unit_count`], [`Plan::unit_level`]); [`CompileOptions::merge_chains`]` = false` makes one
/// unit per task, for comparing executors on the graph as written. A wide join of a
/// frame-parallel kind is split by frames into [`SPLIT_PARTS`] units ([`Plan::unit_part`]).
///
/// Split sums: a node whose kind sees its inputs only through their sum
/// ([`fugue_dsp::DspNode::sums_inputs`]: `mix`, `gain`) with more than [`fugue_dsp::SUM_GROUP`] input
/// ports and edges is compiled as a tree: tasks for groups of 8 consecutive ports (named
/// after the node and the ports whose sum they output, `mix100[1-8]`, `mix100[1-16]`: the
/// second adds the first's sum to its own), feeding the node's own task, with the same
/// samples bit for bit ([`fugue_dsp::sum_inputs`] sums that way). [`Plan::node_of`] maps a
/// group's task to the node; [`Plan::len`] counts the groups. At blocks of at least
/// [`SPLIT_GROUP_MIN_FRAMES`], the groups and the node are split by frames as well.
///
/// Buffers: each output port has its own buffer of the node's block size; an input port with
/// no edge reads a shared silent buffer, with one edge the producer's buffer itself, with
/// several edges a scratch buffer into which the consumer sums the producers' buffers in edge
/// declaration order before `process` (producers never accumulate: the sum is the same
/// whichever thread runs what). Every buffer starts on its own pair of cache lines, and the
/// buffers are laid out in a depth-first topological order (a chain's, or a subtree's, are
/// neighbours: one thread usually writes them all, and a core's prefetcher reading past the
/// end of one of its buffers does not take lines that the other core writes). Engine input
/// channels ([`Plan::set_input`]) feed `source` tasks; `sink` tasks write the engine output
/// channels ([`Plan::output`]).
///
/// Pipelining ([`CompileOptions::pipeline`]` = n > 1`; Letz, Orlarey and Fober, "Work Stealing
/// Scheduler for Automatic Parallelization in Faust", LAC 2010, section 3): the cycle's block
/// is cut into `n` sub-blocks of `block / n` frames. Chains longer than the plan's cost divided
/// by [`CompileOptions::pipeline_segments`] are first cut into segments of about that cost;
/// then every unit (segment) `s` becomes `n` units `(s, k)`, each running the segment's
/// tasks on frames `[k b / n, (k + 1) b / n)` of every buffer ([`Plan::unit_sub`]). `(s, k)`
/// precedes `(s, k + 1)` (a task's processor carries its state from one sub-block to the next;
/// a stateless, frame-parallel segment has a processor per sub-block instead and its
/// sub-blocks are independent), and every edge `s -> t` becomes `(s, k) -> (t, k)`: `t` works
/// on sub-block `k` while `s` works on `k + 1`. The output is the same, bit for bit (every
/// kind computes the same samples whatever the cuts of its calls, see
/// [`fugue_dsp::Processor`]), and the latency too: a cycle still ends when every unit has
/// run. A graph that changes rates is not pipelined ([`Plan::pipeline_note`]).
pub struct Plan {
    tasks: Vec<TaskInfo>,
    /// The tasks' cells, then the cells of parts 1.. of split tasks.
    cells: Box<[TaskCell]>,
    /// Set when any processor panicked (and stays set until [`Plan::reset`]): what
    /// [`Plan::any_panicked`] reads in one load.
    any_panic: std::sync::atomic::AtomicBool,
    /// The task of each cell.
    cell_task: Vec<u32>,
    succ: Vec<u32>,
    in_ports: Vec<InPort>,
    sum_srcs: Vec<Buf>,
    out_bufs: Vec<Buf>,
    arena: Arena,
    inputs: Vec<Buf>,
    outputs: Vec<Buf>,
    sources: Vec<u32>,
    sinks: Vec<u32>,
    level_order: Vec<u32>,
    level_starts: Vec<u32>,
    task_of_node: Vec<u32>,
    /// The compiled graph's edges as `(source task, destination task, the given graph's edge
    /// whose communication cost it carries)` (they differ when sums were split into groups).
    task_edges: Vec<(u32, u32, Option<EdgeId>)>,
    units: Units,
    layout_id: u64,
    sample_rate: f64,
    block: usize,
    placeholders: Vec<String>,
    /// Bytes of its buffers and its processors' memory, as the compiler counted them
    /// against [`MEMORY_LIMIT`].
    memory: usize,
    /// Sub-blocks per cycle (1: not pipelined).
    pipeline: usize,
    /// Why the pipelining asked for was not applied.
    pipeline_note: Option<String>,
    /// Record each task's run ([`Plan::set_profiling`]).
    profiling: bool,
    /// Each cell's record of its last profiled run (written by the thread running the cell).
    times: Box<[std::cell::UnsafeCell<crate::trace::TaskTime>]>,
    /// Under loom: the tracked cells of the tasks' runs (see [`Plan::run_task`]).
    #[cfg(loom)]
    access: task::Access,
}

/// A fresh [`Plan::layout_id`].
fn next_layout_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

// SAFETY: every `UnsafeCell` of a task is touched only by the thread running that task
// (`run_task`'s contract: no two threads run one task at once) or under `&mut self`; the
// arena's buffers are written only by the task that owns them and read by its successors
// after it completed (`run_task`'s happens-before contract). Everything else is read-only
// after `compile`.
unsafe impl Sync for Plan {}
// SAFETY: the plan owns all its data; processors are `Send`; the `&'static` slices in the
// cells are empty between calls of `run_task`.
unsafe impl Send for Plan {}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("tasks", &self.tasks.len())
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .field("sample_rate", &self.sample_rate)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// Number of tasks: one per graph node, plus one per group of a sum split into groups
    /// (a node summing more than [`fugue_dsp::SUM_GROUP`] inputs; see [`Plan`]).
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the plan has no task.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The distinct successors of task `i` (task indices, increasing).
    #[inline]
    pub fn successors(&self, i: usize) -> &[u32] {
        let (s, l) = self.tasks[i].succ;
        &self.succ[s as usize..(s + l) as usize]
    }

    /// The number of distinct predecessors of task `i`: the activation count it starts each
    /// cycle with.
    #[inline]
    pub fn initial_count(&self, i: usize) -> u32 {
        self.tasks[i].initial
    }

    /// Tasks with no predecessor (initial count 0), increasing.
    pub fn sources(&self) -> &[u32] {
        &self.sources
    }

    /// Tasks with no successor, increasing; the cycle is done when all of them are.
    pub fn sinks(&self) -> &[u32] {
        &self.sinks
    }

    /// Number of topological levels (length of the longest path, in tasks).
    pub fn n_levels(&self) -> usize {
        self.level_starts.len() - 1
    }

    /// The tasks of level `l` (those whose longest path from a source has `l` edges),
    /// increasing. Tasks of one level never depend on each other.
    pub fn level(&self, l: usize) -> &[u32] {
        &self.level_order[self.level_starts[l] as usize..self.level_starts[l + 1] as usize]
    }

    /// The level of task `i`.
    pub fn level_of(&self, i: usize) -> usize {
        self.tasks[i].level as usize
    }

    /// The name of task `i`'s node.
    pub fn name(&self, i: usize) -> &str {
        &self.tasks[i].name
    }

    /// The kind of task `i`'s node.
    pub fn kind(&self, i: usize) -> &str {
        &self.tasks[i].kind
    }

    /// The cost of task `i` (its node's cost, microseconds for `.ag` files).
    pub fn cost(&self, i: usize) -> f64 {
        self.tasks[i].cost
    }

    /// The sample rate at task `i`, in Hz.
    pub fn task_rate(&self, i: usize) -> f64 {
        self.tasks[i].sample_rate
    }

    /// Frames per cycle at task `i`.
    pub fn task_block(&self, i: usize) -> usize {
        self.tasks[i].block
    }

    /// The graph node of task `i` (of a group of a split sum: the node split; see
    /// [`Plan::len`]).
    pub fn node_of(&self, i: usize) -> NodeId {
        self.tasks[i].node
    }

    /// The task of graph node `node` (of a split sum: the task that sums its groups).
    pub fn task_of(&self, node: NodeId) -> usize {
        self.task_of_node[node] as usize
    }

    /// Sub-blocks per cycle: 1 when the plan is not pipelined (see [`Plan`], "Pipelining").
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }

    /// Why the pipelining that [`CompileOptions::pipeline`] asked for was not applied (a graph
    /// that changes rates), as one sentence; `None` when it was, or was not asked for.
    pub fn pipeline_note(&self) -> Option<&str> {
        self.pipeline_note.as_deref()
    }

    /// The reason of [`Plan::pipeline_note`] alone (`node `r` (resampler) changes the
    /// rate, ...`), for a sentence of the caller's own.
    pub fn pipeline_refusal(&self) -> Option<&str> {
        self.pipeline_note()
            .map(|n| n.strip_prefix(NOT_PIPELINED).unwrap_or(n))
    }

    /// Which sub-block of the cycle unit `u` computes, of how many: `(0, 1)` when the plan is
    /// not pipelined; `(k, n)` for frames `[k b / n, (k + 1) b / n)` of a block of `b` frames.
    #[inline]
    pub fn unit_sub(&self, u: usize) -> (usize, usize) {
        let ui = &self.units.info[u];
        (ui.sub as usize, ui.subs as usize)
    }

    /// The cost of the longest path of the unit graph (by [`Plan::unit_cost`]): no executor
    /// can run a cycle in less, whatever its threads. With [`Plan::total_cost`], how much
    /// parallelism the plan has.
    pub fn critical_path_cost(&self) -> f64 {
        let n = self.n_units();
        let mut finish = vec![0.0f64; n];
        let mut best = 0.0f64;
        // Units are numbered in a topological order.
        for u in 0..n {
            let f = finish[u] + f64::from(self.unit_cost(u));
            best = best.max(f);
            for &v in self.unit_successors(u) {
                finish[v as usize] = finish[v as usize].max(f);
            }
        }
        best
    }

    /// Whether chains are merged into units ([`CompileOptions::merge_chains`]).
    pub fn merges_chains(&self) -> bool {
        self.units.merged
    }

    /// A number that changes whenever the units change (a new plan):
    /// executors that keep per-unit state re-initialise it when they see a new one.
    #[inline]
    pub fn layout_id(&self) -> u64 {
        self.layout_id
    }

    /// Whether the units form a single chain (every level of the unit graph holds one unit,
    /// as for a line of nodes): nothing can run in parallel, and the parallel executors run
    /// such a plan on the calling thread without waking their workers.
    #[inline]
    pub fn is_sequential(&self) -> bool {
        self.n_unit_levels() == self.n_units()
    }

    /// Number of units.
    #[inline]
    pub fn n_units(&self) -> usize {
        self.units.info.len()
    }

    /// The tasks of unit `u`, in the order they run (each the only successor of the one
    /// before); for a part of a split task ([`Plan::unit_part`]), that one task.
    #[inline]
    pub fn unit_tasks(&self, u: usize) -> &[u32] {
        let (s, l) = self.units.info[u].tasks;
        &self.units.tasks[s as usize..(s + l) as usize]
    }

    /// Which part of its task's frames unit `u` computes, and of how many parts: `(0, 1)` for
    /// a unit that runs whole tasks; `(p, n)` for part `p` of a task split into `n` (see
    /// [`SPLIT_PARTS`]).
    #[inline]
    pub fn unit_part(&self, u: usize) -> (usize, usize) {
        let ui = &self.units.info[u];
        (ui.part as usize, ui.parts as usize)
    }

    /// The unit of task `t` (of a split task: its first part's).
    #[inline]
    pub fn unit_of(&self, t: usize) -> usize {
        self.units.unit_of_task[t] as usize
    }

    /// The distinct successor units of unit `u` (increasing): the units of the successors of
    /// its last task.
    #[inline]
    pub fn unit_successors(&self, u: usize) -> &[u32] {
        let (s, l) = self.units.info[u].succ;
        &self.units.succ[s as usize..(s + l) as usize]
    }

    /// The cost (the nodes' declared or measured costs, as given to [`Plan::compile`]) of
    /// the units that unit `u` dominates, itself included: the work that can only start
    /// once `u` has run (every path from a source to it goes through `u`). Stealing `u`
    /// brings that much work to the thief.
    ///
    /// # Panics
    /// If `u` is not a unit of this plan.
    #[inline]
    pub fn unit_dominated_cost(&self, u: usize) -> f32 {
        self.units.dominated[u]
    }

    /// The cost of unit `u`: the costs of its tasks (a part of a split task: its share).
    ///
    /// # Panics
    /// If `u` is not a unit of this plan.
    #[inline]
    pub fn unit_cost(&self, u: usize) -> f32 {
        self.units.cost[u]
    }

    /// The cost of all units (a split task counted once).
    pub fn total_cost(&self) -> f64 {
        self.units.total_cost
    }

    /// The number of distinct predecessor units of unit `u` (those of its first task): its
    /// activation count at the start of each cycle.
    #[inline]
    pub fn unit_count(&self, u: usize) -> u32 {
        self.units.info[u].initial
    }

    /// Number of activation counter slots: one per unit (slot `u` is unit `u`'s), then the
    /// group counters of wide joins (see [`JOIN_FANIN`]).
    #[inline]
    pub fn n_slots(&self) -> usize {
        self.units.slot_initial.len()
    }

    /// The value slot `c` starts each cycle with: for a unit's own slot, its number of
    /// predecessor units, or of top-level groups for a wide join; for a group, its size.
    #[inline]
    pub fn slot_initial(&self, c: usize) -> u32 {
        self.units.slot_initial[c]
    }

    /// The slot that a group slot `c` decrements when it reaches zero, or [`NO_SLOT`] for a
    /// unit's own slot (whose reaching zero makes the unit ready).
    #[inline]
    pub fn slot_parent(&self, c: usize) -> u32 {
        self.units.slot_parent[c]
    }

    /// Parallel to [`Plan::unit_successors`]`(u)`: the slot that unit `u` decrements, when it
    /// finishes, for each successor (the successor's own slot, or a group slot of it).
    #[inline]
    pub fn unit_succ_slots(&self, u: usize) -> &[u32] {
        let (s, l) = self.units.info[u].succ;
        &self.units.succ_slot[s as usize..(s + l) as usize]
    }

    /// Units with no predecessor, increasing.
    pub fn unit_sources(&self) -> &[u32] {
        &self.units.sources
    }

    /// The same units in the order in which an executor should deal them to threads in
    /// contiguous ranges: sources whose first successor is the same unit are next to each
    /// other, and so are the sources of joins whose first successor is the same (the leaves of
    /// the forest that links each unit to its first successor, depth first), so that the
    /// branches of a join (a group of a split sum, the branches of a mix), and those of the two
    /// groups of a block of a split sum, can fall in one range, run on one thread, and the
    /// join run where they ran; a source whose first successor no other source feeds comes
    /// last, at the back of the last range, where a thread that has run out of work steals
    /// first: taking it makes no join of the other thread's wait.
    pub fn unit_sources_by_join(&self) -> &[u32] {
        &self.units.sources_by_join
    }

    /// Units with no successor, increasing; the cycle is done when all of them are.
    pub fn unit_sinks(&self) -> &[u32] {
        &self.units.sinks
    }

    /// Number of topological levels of the unit graph.
    pub fn n_unit_levels(&self) -> usize {
        self.units.level_starts.len().saturating_sub(1)
    }

    /// The units of level `l` of the unit graph (increasing); they never depend on each other.
    pub fn unit_level(&self, l: usize) -> &[u32] {
        &self.units.level_order
            [self.units.level_starts[l] as usize..self.units.level_starts[l + 1] as usize]
    }

    /// The unit graph as a [`TaskGraph`] for the static schedulers: node `u` is unit `u`
    /// (named after its first task's node, cost the sum of its tasks' costs given by `costs`,
    /// indexed by the node of `graph` (the graph compiled), times each task's share of its node
    /// (a sum split into groups), shared equally by the parts of a task split by frames and
    /// by the sub-blocks of a pipelined unit; at most [`fugue_graph::MAX_COST`], which a
    /// chain of costly nodes may pass), one
    /// edge per pair of dependent units with the largest communication cost of the graph edges
    /// between their tasks.
    pub fn unit_graph(&self, graph: &TaskGraph, costs: &[f64]) -> TaskGraph {
        let mut b = fugue_graph::GraphBuilder::new();
        for u in 0..self.n_units() {
            let ts = self.unit_tasks(u);
            let head = self.node_of(ts[0] as usize);
            let parts = f64::from(self.units.info[u].parts * self.units.info[u].subs);
            let cost: f64 = ts
                .iter()
                .map(|&t| costs[self.node_of(t as usize)] * self.tasks[t as usize].share)
                .sum::<f64>()
                / parts;
            // A graph's costs are each at most MAX_COST; a chain's sum may pass it. The
            // schedulers compare costs, and a unit that costly is the schedule's longest
            // either way.
            let cost = cost.min(fugue_graph::MAX_COST);
            // Distinct names: each starts with its own unit number.
            let name = format!("unit-{u}:{}", graph.node(head).name);
            b.add_node(fugue_graph::Node::new(name, "unit").with_cost(cost))
                .expect("unit names are distinct");
        }
        // Communication cost between two tasks of different units: the largest of the graph
        // edges between them.
        let mut comm: std::collections::BTreeMap<(usize, usize), f64> = Default::default();
        for &(src, dst, orig) in &self.task_edges {
            let c = orig.map_or(0.0, |e| graph.edges()[e].comm);
            let w = comm.entry((src as usize, dst as usize)).or_insert(0.0);
            *w = w.max(c);
        }
        for u in 0..self.n_units() {
            let ts = self.unit_tasks(u);
            let last = ts[ts.len() - 1] as usize;
            for &v in self.unit_successors(u) {
                let first = self.unit_tasks(v as usize)[0] as usize;
                let w = comm.get(&(last, first)).copied().unwrap_or(0.0);
                b.add_edge(u, 0, v as usize, 0, w)
                    .expect("units and their edges come from a valid graph");
            }
        }
        b.build().expect("the unit graph of a DAG is a DAG")
    }

    /// Names of the nodes of unknown kind that became silent placeholders.
    pub fn placeholders(&self) -> &[String] {
        &self.placeholders
    }

    /// Number of engine input channels (outputs of `source` nodes).
    pub fn n_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Number of engine output channels (inputs of `sink` nodes).
    pub fn n_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Frames per cycle at the engine's rate.
    pub fn block(&self) -> usize {
        self.block
    }

    /// Bytes of the plan's buffers and of its processors' memory (delay lines, tables,
    /// work buffers), as counted against [`MEMORY_LIMIT`].
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// The engine's sample rate in Hz.
    pub fn sample_rate(&self) -> f64 {
        self.sample_rate
    }

    /// Sets engine input channel `channel` for the next cycle: `data` is copied, silence
    /// after its end.
    ///
    /// # Panics
    /// If `channel >= n_inputs()`.
    pub fn set_input(&mut self, channel: usize, data: &[f32]) {
        let dst = self.input_mut(channel);
        let k = data.len().min(dst.len());
        dst[..k].copy_from_slice(&data[..k]);
        dst[k..].fill(0.0);
    }

    /// Engine input channel `channel`, to fill before the next cycle.
    ///
    /// # Panics
    /// If `channel >= n_inputs()`.
    pub fn input_mut(&mut self, channel: usize) -> &mut [f32] {
        let b = self.inputs[channel];
        // SAFETY: `&mut self`: no cycle runs and no other slice of the arena is alive.
        unsafe { self.arena.slice_mut(b) }
    }

    /// Engine output channel `channel` as the last cycle left it (`block()` frames).
    ///
    /// # Panics
    /// If `channel >= n_outputs()`.
    pub fn output(&self, channel: usize) -> &[f32] {
        let b = self.outputs[channel];
        // SAFETY: cycles run only under `&mut Plan` (`Executor::run_cycle`, `run_task`'s
        // contract [3]), so while this shared borrow lives nothing writes the buffer. (In a
        // shared pool's run of several cycles, a worker reads it between two of the plan's
        // cycles, after the last unit of one and before the next is published: the same
        // holds for as long as it reads.)
        unsafe { self.arena.slice(b) }
    }

    /// Engine output channel `channel`, writable (for the test-only fault injection of
    /// [`crate::fault`]).
    ///
    /// # Panics
    /// If `channel >= n_outputs()`.
    pub(crate) fn output_mut(&mut self, channel: usize) -> &mut [f32] {
        let b = self.outputs[channel];
        // SAFETY: `&mut self`: no cycle runs and no other slice of the arena is alive.
        unsafe { self.arena.slice_mut(b) }
    }

    /// A hash (64-bit FNV-1a over the bits, channel after channel) of every output sample of
    /// the last cycle: two cycles with the same hash computed the same output, bit for bit,
    /// but for a collision (one chance in 2^64 per compared pair). Never allocates.
    pub fn output_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for c in 0..self.n_outputs() {
            for &x in self.output(c) {
                h ^= u64::from(x.to_bits());
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }
}
