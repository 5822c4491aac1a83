//! The compiled plan: tasks, successor lists, activation counts, buffers and processors.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use arrayvec::ArrayVec;
use fugue_dsp::{DspNode, Io, NodeContext, NodeError, Processor, Ratio, Registry};
use fugue_graph::{EdgeId, NodeId, TaskGraph};
use thiserror::Error;

use crate::arena::{Arena, Buf, Layout};

/// What [`Plan::compile`] needs besides the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct CompileOptions {
    /// The engine's sample rate in Hz.
    pub sample_rate: f64,
    /// Frames per cycle at the engine's rate.
    pub block: usize,
    /// Turn nodes of unknown kind into silent placeholders instead of failing.
    pub placeholder: bool,
}

impl Default for CompileOptions {
    /// 48 kHz, 512 frames, no placeholders.
    fn default() -> Self {
        CompileOptions {
            sample_rate: 48_000.0,
            block: 512,
            placeholder: false,
        }
    }
}

/// Why a graph could not be compiled.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CompileError {
    /// A node could not be built (unknown kind, bad attribute, bad ports).
    #[error(transparent)]
    Node(#[from] NodeError),
    /// The inputs of a node arrive at different sample rates.
    #[error("node `{node}` receives inputs at different rates ({rates}); all inputs of a node must come at one rate (add or move resamplers)")]
    MixedRates {
        /// The node.
        node: String,
        /// The rates seen, in Hz, comma-separated.
        rates: String,
    },
    /// A node's block size would not be a whole number of frames.
    #[error("node `{node}`: its block of {block} frames times its rate ratio {ratio} is not a whole number of frames; choose another buffer size")]
    BlockNotWhole {
        /// The node.
        node: String,
        /// Its input block.
        block: usize,
        /// Its rate ratio.
        ratio: String,
    },
    /// A kind reported fewer output buffers than the graph uses.
    #[error("node `{node}` ({kind}) has {has} output(s) but the graph uses {used}")]
    PortMismatch {
        /// The node.
        node: String,
        /// Its kind.
        kind: String,
        /// Outputs the processor writes.
        has: usize,
        /// Output ports the graph uses.
        used: usize,
    },
    /// Bad options.
    #[error("invalid options: {0}")]
    Options(String),
}

/// A processor's panic, reported once by [`Plan::take_panics`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPanic {
    /// The task.
    pub task: usize,
    /// The node's name.
    pub node: String,
    /// The panic message.
    pub message: String,
}

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
}

/// What one task mutates while it runs, on its own cache lines (a 128-byte boundary: the
/// adjacent-line prefetcher moves lines in pairs).
#[repr(align(128))]
struct TaskCell {
    processor: UnsafeCell<Box<dyn Processor>>,
    /// Input slices for `process` of a task with more than [`STACK_PORTS`] input or output
    /// ports, filled and cleared within one `run_task` call: capacity
    /// reserved at compile time, so pushes never allocate. The `'static` lifetime is never
    /// relied on: the slices point into the plan's arena and are cleared before `run_task`
    /// returns.
    ins: UnsafeCell<Vec<&'static [f32]>>,
    /// Output slices, the same way.
    outs: UnsafeCell<Vec<&'static mut [f32]>>,
    /// Set when the processor panicked (and stays set).
    panicked: AtomicBool,
    /// The first panic message, until [`Plan::take_panics`] takes it.
    message: UnsafeCell<Option<String>>,
}

impl TaskCell {
    /// A cell for `processor`, with room for `ins` input and `outs` output slices (none when
    /// both fit in [`STACK_PORTS`]: the lists are then gathered on the stack).
    fn new(processor: Box<dyn Processor>, ins: u32, outs: u32) -> Self {
        let on_stack = lists_on_stack(ins, outs);
        let cap = |n: u32| {
            if on_stack {
                0
            } else {
                scratch_capacity(n as usize)
            }
        };
        TaskCell {
            processor: UnsafeCell::new(processor),
            ins: UnsafeCell::new(Vec::with_capacity(cap(ins))),
            outs: UnsafeCell::new(Vec::with_capacity(cap(outs))),
            panicked: AtomicBool::new(false),
            message: UnsafeCell::new(None),
        }
    }
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
/// [`Plan::unit_count`], [`Plan::unit_level`]); [`Plan::set_merge_chains`]`(false)` makes one
/// unit per task, for comparing executors on the graph as written. A wide join of a
/// frame-parallel kind is split by frames into [`SPLIT_PARTS`] units ([`Plan::unit_part`]).
///
/// Split sums: a node whose kind sees its inputs only through their sum
/// ([`DspNode::sums_inputs`]: `mix`, `gain`) with more than [`fugue_dsp::SUM_GROUP`] input
/// ports and edges is compiled as a tree: tasks for groups of 8 consecutive ports (named
/// after the node and the ports whose sum they output, `mix100[1-8]`, `mix100[1-16]`: the
/// second adds the first's sum to its own), feeding the node's own task, with the same
/// samples bit for bit ([`fugue_dsp::sum_inputs`] sums that way). [`Plan::node_of`] maps a
/// group's task to the node; [`Plan::len`] counts the groups.
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
pub struct Plan {
    tasks: Vec<TaskInfo>,
    /// The tasks' cells, then the cells of parts 1.. of split tasks.
    cells: Box<[TaskCell]>,
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
}

/// Tasks with at most this many input ports and at most this many output ports gather their
/// slice lists on the running thread's stack; the others in their cell's vectors.
const STACK_PORTS: usize = 16;

/// Whether a task with `ins` input and `outs` output ports gathers its slice lists on the
/// stack ([`STACK_PORTS`]).
fn lists_on_stack(ins: u32, outs: u32) -> bool {
    ins as usize <= STACK_PORTS && outs as usize <= STACK_PORTS
}

/// Capacity of a task's `ins`/`outs` slice list for `n` slices. `run_task` writes the first
/// `n` entries at every run; lists of tasks run by different threads should not share a cache
/// line, or every run would move that line between the cores. The lists are small heap blocks
/// that the allocator places one after the other, so each gets at least 128 bytes (8 entries)
/// of unused room after its last entry: the written part of the next block starts past a
/// 128-byte boundary (the adjacent-line prefetcher's pair).
fn scratch_capacity(n: usize) -> usize {
    n.next_multiple_of(8) + 8
}

/// Groups items `0..level.len()` by level: the items in (level, index) order, and the start of
/// each level in that order (one more entry than there are levels).
fn by_level(level: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n_levels = level.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut order: Vec<u32> = (0..level.len() as u32).collect();
    order.sort_by_key(|&i| (level[i as usize], i));
    let mut starts = vec![0u32; n_levels + 1];
    for &l in level {
        starts[l as usize + 1] += 1;
    }
    for i in 0..n_levels {
        starts[i + 1] += starts[i];
    }
    (order, starts)
}

/// A fresh [`Plan::layout_id`].
fn next_layout_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// One unit: a chain of tasks that always run back to back on one thread.
#[derive(Clone, Copy, Debug)]
struct UnitInfo {
    tasks: (u32, u32),
    succ: (u32, u32),
    initial: u32,
    /// Which part of its task's frames this unit computes, of how many (0 of 1: all).
    part: u32,
    parts: u32,
}

/// The units of a plan: the graph the executors schedule (see [`Plan`], "Units").
#[derive(Clone, Debug, Default)]
struct Units {
    merged: bool,
    info: Vec<UnitInfo>,
    tasks: Vec<u32>,
    succ: Vec<u32>,
    unit_of_task: Vec<u32>,
    sources: Vec<u32>,
    /// The sources in dealing order (`Plan::unit_sources_by_join`).
    sources_by_join: Vec<u32>,
    sinks: Vec<u32>,
    level_order: Vec<u32>,
    level_starts: Vec<u32>,
    /// Activation counters: slot `u < info.len()` is unit `u`'s own; the others are the
    /// group counters of wide joins. Per slot: initial count and parent slot (`NO_SLOT` for a
    /// unit's own counter).
    slot_initial: Vec<u32>,
    slot_parent: Vec<u32>,
    /// Parallel to `succ`: the slot a finishing unit decrements for that successor.
    succ_slot: Vec<u32>,
    /// Per unit: the cost of the units it dominates, itself included (`Plan::unit_dominated_cost`).
    dominated: Vec<f32>,
    /// Per unit: its cost (`Plan::unit_cost`).
    cost: Vec<f32>,
    /// The cost of all units.
    total_cost: f64,
}

/// A slot with no parent: a unit's own activation counter.
pub const NO_SLOT: u32 = u32::MAX;

/// Wide joins: a unit with more predecessors than this gets a tree of group counters, each
/// counting at most this many predecessors (or groups), so that finishing predecessors do
/// not all decrement one counter.
pub const JOIN_FANIN: usize = 4;

/// Wide stateless joins are split by frames: a task of a frame-parallel kind
/// ([`DspNode::frame_parallel`], e.g. `mix`) fed by at least [`SPLIT_MIN_INPUTS`] edges, at a
/// block of at least [`SPLIT_MIN_FRAMES`] frames, becomes this many units when chains are
/// merged, each computing its share of the block's frames with a processor of its own. The
/// join that every branch waits for then runs on several threads at once, each reading its
/// share of the branches' buffers.
pub const SPLIT_PARTS: usize = 2;

/// See [`SPLIT_PARTS`].
pub const SPLIT_MIN_INPUTS: usize = 8;

/// See [`SPLIT_PARTS`].
pub const SPLIT_MIN_FRAMES: usize = 256;

/// Frames `[a, b)` of part `part` of `parts` of a block of `block` frames: parts of equal
/// length rounded up to 16 frames (64 bytes: no two parts write one cache line), the last
/// one shorter.
#[inline]
fn part_frames(block: usize, part: usize, parts: usize) -> (usize, usize) {
    let chunk = block.div_ceil(parts).next_multiple_of(16);
    ((part * chunk).min(block), ((part + 1) * chunk).min(block))
}

impl Units {
    /// Groups the tasks (numbered in a topological order, with their distinct successors and
    /// predecessor counts) into units: with `merge`, maximal chains `t1 -> t2 -> ... -> tk`
    /// where each `ti` (i < k) has `t(i+1)` as its only successor and `t(i+1)` has `ti` as its
    /// only predecessor; without, one unit per task.
    fn new(tasks: &[TaskInfo], succ: &[u32], merge: bool) -> Units {
        let n = tasks.len();
        // Parts of each task's frames (a split task is a unit per part; only with `merge`).
        let parts = |t: usize| if merge { tasks[t].parts } else { 1 };
        let succ_of = |t: usize| {
            &succ[tasks[t].succ.0 as usize..(tasks[t].succ.0 + tasks[t].succ.1) as usize]
        };
        let mut unit_of_task = vec![u32::MAX; n];
        let mut unit_tasks = Vec::with_capacity(n);
        let mut info = Vec::new();
        // Heads come in increasing task order: a task absorbed into a chain follows its
        // chain's head in the topological order, so it is visited after the head's unit.
        for head in 0..n {
            if unit_of_task[head] != u32::MAX {
                continue;
            }
            let u = info.len() as u32;
            let first = unit_tasks.len() as u32;
            if parts(head) > 1 {
                // A split task: one unit per part, consecutive, never part of a chain.
                unit_of_task[head] = u;
                unit_tasks.push(head as u32);
                for part in 0..parts(head) {
                    info.push(UnitInfo {
                        tasks: (first, 1),
                        succ: (0, 0),
                        initial: 0,
                        part,
                        parts: parts(head),
                    });
                }
                continue;
            }
            let mut t = head;
            loop {
                unit_of_task[t] = u;
                unit_tasks.push(t as u32);
                let ss = succ_of(t);
                if merge
                    && ss.len() == 1
                    && tasks[ss[0] as usize].initial == 1
                    && parts(ss[0] as usize) == 1
                {
                    t = ss[0] as usize;
                } else {
                    break;
                }
            }
            info.push(UnitInfo {
                tasks: (first, unit_tasks.len() as u32 - first),
                succ: (0, 0),
                initial: 0,
                part: 0,
                parts: 1,
            });
        }
        // Successors of a unit: the units of its last task's successors, each the head of
        // its own unit (a task with several predecessors, or whose predecessor has several
        // successors, starts a unit), so they are distinct; every part of a split successor.
        // A unit's count is its number of predecessor units (one per part of a split
        // predecessor).
        let mut usucc = Vec::new();
        for ui in info.iter_mut() {
            let last = unit_tasks[(ui.tasks.0 + ui.tasks.1 - 1) as usize] as usize;
            let s0 = usucc.len() as u32;
            let mut ss: Vec<u32> = succ_of(last)
                .iter()
                .flat_map(|&s| {
                    let u0 = unit_of_task[s as usize];
                    u0..u0 + parts(s as usize)
                })
                .collect();
            ss.sort_unstable();
            ss.dedup();
            usucc.extend_from_slice(&ss);
            ui.succ = (s0, ss.len() as u32);
        }
        for &v in &usucc {
            info[v as usize].initial += 1;
        }
        let nu = info.len();
        // Counter slots. Predecessors of each unit in increasing order; a unit with more than
        // JOIN_FANIN of them gets groups of JOIN_FANIN consecutive predecessors (a predecessor
        // decrements its group's slot; the group's last decrements the parent), level upon
        // level until at most JOIN_FANIN remain for the unit's own counter.
        let mut preds: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nu]; // (pred unit, edge index)
        for (u, ui) in info.iter().enumerate() {
            for k in ui.succ.0..ui.succ.0 + ui.succ.1 {
                preds[usucc[k as usize] as usize].push((u as u32, k));
            }
        }
        let mut slot_initial: Vec<u32> = info.iter().map(|ui| ui.initial).collect();
        let mut slot_parent = vec![NO_SLOT; nu];
        let mut succ_slot: Vec<u32> = usucc.clone(); // by default: the successor's own slot
        for (v, pv) in preds.iter().enumerate() {
            if pv.len() <= JOIN_FANIN {
                continue;
            }
            // Leaves: the edges, in groups; each level's entries are "who decrements": an edge
            // (to redirect) or a slot (to give a parent).
            enum Entry {
                Edge(u32),
                Slot(u32),
            }
            let mut entries: Vec<Entry> = pv.iter().map(|&(_, k)| Entry::Edge(k)).collect();
            while entries.len() > JOIN_FANIN {
                let mut next = Vec::new();
                for group in entries.chunks(JOIN_FANIN) {
                    let g = slot_initial.len() as u32;
                    slot_initial.push(group.len() as u32);
                    slot_parent.push(NO_SLOT); // set when the next level is known
                    for e in group {
                        match *e {
                            Entry::Edge(k) => succ_slot[k as usize] = g,
                            Entry::Slot(c) => slot_parent[c as usize] = g,
                        }
                    }
                    next.push(Entry::Slot(g));
                }
                entries = next;
            }
            // The top level's entries decrement the unit's own counter.
            slot_initial[v] = entries.len() as u32;
            for e in &entries {
                match *e {
                    Entry::Edge(k) => succ_slot[k as usize] = v as u32,
                    Entry::Slot(c) => slot_parent[c as usize] = v as u32,
                }
            }
        }
        let mut level = vec![0u32; nu];
        for u in 0..nu {
            let (s0, l) = info[u].succ;
            for &v in &usucc[s0 as usize..(s0 + l) as usize] {
                level[v as usize] = level[v as usize].max(level[u] + 1);
            }
        }
        let (level_order, level_starts) = by_level(&level);
        let sources: Vec<u32> = (0..nu as u32)
            .filter(|&u| info[u as usize].initial == 0)
            .collect();
        // The sources by the successors they feed (see `Plan::unit_sources_by_join`).
        let first_succ = |u: u32| {
            let (s0, l) = info[u as usize].succ;
            (l > 0).then(|| usucc[s0 as usize])
        };
        // Per unit: the sources whose first successor it is.
        let mut feeding = vec![0usize; nu];
        for &u in &sources {
            if let Some(f) = first_succ(u) {
                feeding[f as usize] += 1;
            }
        }
        // The sources as the leaves of the forest that links each unit to its first successor,
        // depth first from the sinks (each unit's children: those that have children of their
        // own, then the others, each by number): the sources of one join are neighbours, and
        // so are those of joins that feed one join (the two groups of a block of a split sum).
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); nu];
        for u in 0..nu as u32 {
            if let Some(f) = first_succ(u) {
                children[f as usize].push(u);
            }
        }
        let inner: Vec<bool> = children.iter().map(|c| !c.is_empty()).collect();
        for c in &mut children {
            c.sort_by_key(|&x| (!inner[x as usize], x));
        }
        let mut sources_by_join = Vec::with_capacity(sources.len());
        let mut stack: Vec<u32> = (0..nu as u32)
            .rev()
            .filter(|&u| first_succ(u).is_none())
            .collect();
        while let Some(u) = stack.pop() {
            if info[u as usize].initial == 0 {
                sources_by_join.push(u);
            }
            stack.extend(children[u as usize].iter().rev());
        }
        debug_assert_eq!(sources_by_join.len(), sources.len());
        // Stable: a source that alone feeds its first successor goes to the back.
        sources_by_join.sort_by_key(|&u| first_succ(u).is_none_or(|f| feeding[f as usize] == 1));
        let sinks = (0..nu as u32)
            .filter(|&u| info[u as usize].succ.1 == 0)
            .collect();
        let cost: Vec<f64> = info
            .iter()
            .map(|ui| {
                let ts = &unit_tasks[ui.tasks.0 as usize..(ui.tasks.0 + ui.tasks.1) as usize];
                ts.iter().map(|&t| tasks[t as usize].cost).sum::<f64>() / f64::from(ui.parts)
            })
            .collect();
        let dominated = dominated_costs(&info, &usucc, &cost);
        Units {
            merged: merge,
            info,
            tasks: unit_tasks,
            succ: usucc,
            unit_of_task,
            sources,
            sources_by_join,
            sinks,
            level_order,
            level_starts,
            slot_initial,
            slot_parent,
            succ_slot,
            dominated,
            total_cost: cost.iter().sum(),
            cost: cost.iter().map(|&c| c as f32).collect(),
        }
    }
}

/// For each unit of a DAG numbered in a topological order (successors `succ[info[u].succ]`),
/// the cost of the units it dominates, itself included: those that every path from a source
/// to them goes through it, i.e. the work that can only start once it has run. Dominators
/// with a virtual root above the sources (Cooper, Harvey and Kennedy's intersection, in one
/// pass: in a DAG every predecessor comes first in the order), then the costs summed up the
/// dominator tree.
fn dominated_costs(info: &[UnitInfo], succ: &[u32], cost: &[f64]) -> Vec<f32> {
    const ROOT: u32 = u32::MAX;
    let n = info.len();
    let mut idom = vec![ROOT; n];
    let mut seen = vec![false; n];
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        // Dominators come earlier in the order; the root is above everything.
        while a != b {
            if a == ROOT || b == ROOT {
                return ROOT;
            }
            if a > b {
                a = idom[a as usize];
            } else {
                b = idom[b as usize];
            }
        }
        a
    };
    for (u, ui) in info.iter().enumerate() {
        let (s, l) = ui.succ;
        for &v in &succ[s as usize..(s + l) as usize] {
            let v = v as usize;
            idom[v] = if seen[v] {
                intersect(&idom, idom[v], u as u32)
            } else {
                u as u32
            };
            seen[v] = true;
        }
    }
    let mut dom: Vec<f64> = cost.to_vec();
    for u in (0..n).rev() {
        if idom[u] != ROOT {
            dom[idom[u] as usize] += dom[u];
        }
    }
    dom.into_iter().map(|c| c as f32).collect()
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

/// The nodes of `graph` in a depth-first topological order: Kahn's algorithm with a stack
/// (the sources in declaration order, then each node's successors as they become ready, the
/// first successor first), so that a chain, or each branch of a fan-out with what hangs
/// below it, comes out in one piece.
fn layout_order(graph: &TaskGraph) -> Vec<NodeId> {
    let n = graph.len();
    let mut waiting: Vec<usize> = (0..n).map(|v| graph.preds(v).len()).collect();
    let mut stack: Vec<NodeId> = graph.sources();
    stack.reverse();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = stack.pop() {
        order.push(v);
        let mark = stack.len();
        for &(s, _) in graph.succs(v) {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                stack.push(s);
            }
        }
        stack[mark..].reverse();
    }
    debug_assert_eq!(order.len(), n, "the graph is acyclic");
    order
}

impl Plan {
    /// Compiles `graph`: builds every node through `registry`, computes rates and block sizes
    /// downstream of resamplers, lays out buffers and instantiates the processors.
    pub fn compile(
        graph: &TaskGraph,
        registry: &Registry,
        options: &CompileOptions,
    ) -> Result<Plan, CompileError> {
        if !(options.sample_rate.is_finite() && options.sample_rate >= 1.0) {
            return Err(CompileError::Options(format!(
                "the sample rate must be at least 1 Hz, not {}",
                options.sample_rate
            )));
        }
        if options.block == 0 || options.block > 1 << 20 {
            return Err(CompileError::Options(format!(
                "the block must be 1 to 1048576 frames, not {}",
                options.block
            )));
        }
        // Wide sums become trees of groups (same samples; see `regroup`).
        let user_nodes = graph.len();
        let regrouped = crate::regroup::regroup(graph, registry, options);
        let graph = regrouped.as_ref().map_or(graph, |r| &r.graph);
        let origin = |v: NodeId| regrouped.as_ref().map_or(v, |r| r.origin[v]);
        let share = |v: NodeId| regrouped.as_ref().map_or(1.0, |r| r.share[v]);
        let n = graph.len();
        let order: Vec<NodeId> = graph.topo_order().to_vec();
        let mut task_of_node = vec![0u32; n];
        for (t, &v) in order.iter().enumerate() {
            task_of_node[v] = t as u32;
        }

        // 1. Rates, block sizes and control-side nodes, in topological order.
        let mut out_rate = vec![Ratio::ONE; n];
        let mut out_block = vec![0usize; n];
        let mut node_rate = vec![Ratio::ONE; n];
        let mut node_block = vec![0usize; n];
        let mut dsp: Vec<Option<Box<dyn DspNode>>> = (0..n).map(|_| None).collect();
        let mut placeholders = Vec::new();
        for &v in &order {
            let node = graph.node(v);
            let mut rate: Option<Ratio> = None;
            for &e in graph.in_edges(v) {
                let r = out_rate[graph.edges()[e].src];
                match rate {
                    None => rate = Some(r),
                    Some(r0) if r0 != r => {
                        let mut seen: Vec<Ratio> = graph
                            .in_edges(v)
                            .iter()
                            .map(|&e| out_rate[graph.edges()[e].src])
                            .collect();
                        seen.dedup();
                        seen.sort_by(|a, b| a.as_f64().total_cmp(&b.as_f64()));
                        seen.dedup();
                        let rates: Vec<String> = seen
                            .iter()
                            .map(|r| format!("{} Hz", r.as_f64() * options.sample_rate))
                            .collect();
                        return Err(CompileError::MixedRates {
                            node: node.name.clone(),
                            rates: rates.join(", "),
                        });
                    }
                    Some(_) => {}
                }
            }
            let rate = rate.unwrap_or(Ratio::ONE);
            let block = rate
                .scale(options.block)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block: options.block,
                    ratio: rate.to_string(),
                })?;
            let ctx = NodeContext {
                node,
                inputs: graph.inputs(v),
                outputs: graph.outputs(v),
                in_edges: graph.in_edges(v).len(),
                sample_rate: options.sample_rate * rate.as_f64(),
                block,
                rate,
                engine_rate: options.sample_rate,
                engine_block: options.block,
            };
            let (d, is_placeholder) = if v >= user_nodes {
                // A group of a split sum (not a kind of the registry).
                (crate::regroup::group_node(&node.kind, ctx.inputs), false)
            } else {
                registry.build(&ctx, options.placeholder)?
            };
            if is_placeholder {
                placeholders.push(node.name.clone());
            }
            let ratio = d.rate_ratio();
            let orate = rate
                .checked_mul(ratio)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block,
                    ratio: ratio.to_string(),
                })?;
            out_block[v] = ratio
                .scale(block)
                .ok_or_else(|| CompileError::BlockNotWhole {
                    node: node.name.clone(),
                    block,
                    ratio: ratio.to_string(),
                })?;
            let used = graph.outputs(v);
            let has = match d.io() {
                Io::Sink { .. } => 0,
                _ => d.outputs(),
            };
            if has < used {
                return Err(CompileError::PortMismatch {
                    node: node.name.clone(),
                    kind: node.kind.clone(),
                    has,
                    used,
                });
            }
            out_rate[v] = orate;
            node_rate[v] = rate;
            node_block[v] = block;
            dsp[v] = Some(d);
        }

        // 2. Buffers: output ports, engine channels, scratch sums, silence.
        let mut layout = Layout::default();
        let max_block = node_block
            .iter()
            .chain(&out_block)
            .copied()
            .chain([options.block])
            .max()
            .unwrap_or(1);
        let silence = layout.alloc(max_block);
        let mut out_bufs = Vec::new();
        let mut out_range = vec![(0u32, 0u32); n];
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        // Engine channels follow sources / sinks in file (declaration) order, then port order.
        let mut chan_in = vec![(0u32, 0u32); n];
        let mut chan_out = vec![(0u32, 0u32); n];
        for v in 0..n {
            let d = dsp[v].as_ref().expect("built above");
            match d.io() {
                Io::Source { channels } => {
                    chan_in[v] = (inputs.len() as u32, channels as u32);
                    for _ in 0..channels {
                        inputs.push(layout.alloc(options.block));
                    }
                }
                Io::Sink { channels } => {
                    chan_out[v] = (outputs.len() as u32, channels as u32);
                    for _ in 0..channels {
                        outputs.push(layout.alloc(options.block));
                    }
                }
                Io::None => {}
            }
        }
        // Each node's scratch sums, then its output ports, in a depth-first topological order
        // (`layout_order`): the buffers of a chain or a subtree, which one thread usually runs,
        // are neighbours in memory. In the level order of the tasks, the buffers of the two
        // halves of a diamond alternate level by level, and a core's prefetcher, streaming
        // through the end of its own buffer, takes the first lines of the next one, written by
        // the other core (a timeline of `ws` on `losange156.ag` at 512 frames: the first unit
        // of each level of each half ran 100-350 ns longer than in `seq`).
        let mut port_buf: Vec<Vec<Buf>> = vec![Vec::new(); n]; // graph output ports
        let mut scratch: Vec<Vec<Option<Buf>>> = vec![Vec::new(); n]; // per input port
        for v in layout_order(graph) {
            let d = dsp[v].as_ref().expect("built above");
            if !matches!(d.io(), Io::Source { .. }) {
                // A port fed by several edges gets a scratch buffer for their sum.
                let mut edges_into = vec![0usize; d.inputs()];
                for &e in graph.in_edges(v) {
                    edges_into[graph.edges()[e].dst_port] += 1;
                }
                scratch[v] = edges_into
                    .iter()
                    .map(|&k| (k > 1).then(|| layout.alloc(node_block[v])))
                    .collect();
            }
            if !matches!(d.io(), Io::Sink { .. }) {
                port_buf[v] = (0..d.outputs())
                    .map(|_| layout.alloc(out_block[v]))
                    .collect();
            }
        }
        for &v in &order {
            let d = dsp[v].as_ref().expect("built above");
            let start = out_bufs.len() as u32;
            match d.io() {
                Io::Sink { .. } => {
                    let (s, c) = chan_out[v];
                    out_bufs.extend_from_slice(&outputs[s as usize..(s + c) as usize]);
                }
                _ => out_bufs.extend_from_slice(&port_buf[v]),
            }
            out_range[v] = (start, out_bufs.len() as u32 - start);
        }
        let mut in_ports = Vec::new();
        let mut sum_srcs = Vec::new();
        let mut in_range = vec![(0u32, 0u32); n];
        for &v in &order {
            let d = dsp[v].as_ref().expect("built above");
            let start = in_ports.len() as u32;
            let block = node_block[v];
            match d.io() {
                Io::Source { .. } => {
                    let (s, c) = chan_in[v];
                    for &b in &inputs[s as usize..(s + c) as usize] {
                        in_ports.push(InPort {
                            buf: b,
                            first: 0,
                            n_srcs: 1,
                        });
                    }
                }
                _ => {
                    // One entry per input port (laid out above).
                    for (p, scratch) in scratch[v].iter().enumerate() {
                        let feeding: Vec<Buf> = graph
                            .in_edges(v)
                            .iter()
                            .map(|&e| &graph.edges()[e])
                            .filter(|e| e.dst_port == p)
                            .map(|e| port_buf[e.src][e.src_port])
                            .collect();
                        let port = match feeding.len() {
                            0 => InPort {
                                buf: Buf {
                                    off: silence.off,
                                    len: block as u32,
                                },
                                first: 0,
                                n_srcs: 0,
                            },
                            1 => InPort {
                                buf: feeding[0],
                                first: 0,
                                n_srcs: 1,
                            },
                            k => {
                                let first = sum_srcs.len() as u32;
                                sum_srcs.extend_from_slice(&feeding);
                                InPort {
                                    buf: scratch.expect("laid out above"),
                                    first,
                                    n_srcs: k as u32,
                                }
                            }
                        };
                        in_ports.push(port);
                    }
                }
            }
            in_range[v] = (start, in_ports.len() as u32 - start);
        }

        // 3. Tasks: successors, activation counts, levels; processors.
        let mut succ = Vec::new();
        let mut tasks = Vec::with_capacity(n);
        let mut cells = Vec::with_capacity(n);
        // Cells of parts 1.. of split tasks, after the tasks' own, and their tasks.
        let mut extra_cells = Vec::new();
        let mut cell_task: Vec<u32> = (0..n as u32).collect();
        let mut level = vec![0u32; n];
        for (t, &v) in order.iter().enumerate() {
            let node = graph.node(v);
            let lv = graph
                .preds(v)
                .iter()
                .map(|&(p, _)| level[task_of_node[p] as usize] + 1)
                .max()
                .unwrap_or(0);
            level[t] = lv;
            let s0 = succ.len() as u32;
            let mut ss: Vec<u32> = graph
                .succs(v)
                .iter()
                .map(|&(s, _)| task_of_node[s])
                .collect();
            ss.sort_unstable();
            succ.extend_from_slice(&ss);
            let d = dsp[v].take().expect("built above");
            let (ins, outs) = (in_range[v], out_range[v]);
            let split = d.frame_parallel()
                && d.io() == Io::None
                && d.rate_ratio() == Ratio::ONE
                && node_block[v] >= SPLIT_MIN_FRAMES
                && graph.in_edges(v).len() >= SPLIT_MIN_INPUTS
                // A sum split into groups (the node and its groups share its cost) is not
                // split by frames as well.
                && share(v) == 1.0;
            let parts = if split { SPLIT_PARTS } else { 1 };
            let part_cells = n + extra_cells.len();
            for _ in 1..parts {
                extra_cells.push(TaskCell::new(d.processor(), ins.1, outs.1));
                cell_task.push(t as u32);
            }
            tasks.push(TaskInfo {
                node: origin(v),
                name: node.name.clone(),
                kind: node.kind.clone(),
                cost: graph.node(origin(v)).cost * share(v),
                share: share(v),
                succ: (s0, ss.len() as u32),
                initial: graph.preds(v).len() as u32,
                level: lv,
                ins,
                outs,
                sample_rate: options.sample_rate * node_rate[v].as_f64(),
                block: node_block[v],
                parts: parts as u32,
                part_cells: part_cells as u32,
            });
            cells.push(TaskCell::new(d.processor(), ins.1, outs.1));
        }
        cells.extend(extra_cells);
        let (level_order, level_starts) = by_level(&level);
        let sources = (0..n as u32)
            .filter(|&t| tasks[t as usize].initial == 0)
            .collect();
        let sinks = (0..n as u32)
            .filter(|&t| tasks[t as usize].succ.1 == 0)
            .collect();
        let units = Units::new(&tasks, &succ, true);
        let task_edges = graph
            .edges()
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let orig = regrouped.as_ref().map_or(Some(i), |r| r.edge_origin[i]);
                (task_of_node[e.src], task_of_node[e.dst], orig)
            })
            .collect();
        Ok(Plan {
            units,
            layout_id: next_layout_id(),
            tasks,
            cells: cells.into_boxed_slice(),
            cell_task,
            succ,
            in_ports,
            sum_srcs,
            out_bufs,
            arena: layout.finish(),
            inputs,
            outputs,
            sources,
            sinks,
            level_order,
            level_starts,
            task_edges,
            task_of_node,
            sample_rate: options.sample_rate,
            block: options.block,
            placeholders,
        })
    }

    /// Runs task `i` for the current cycle: sums its multi-edge inputs, then calls its
    /// processor. A processor that panics has its outputs silenced for the cycle; the task is
    /// flagged ([`Plan::panicked`]) and its first message kept for [`Plan::take_panics`].
    /// Never allocates, locks or blocks (unless the processor panics).
    ///
    /// # Safety
    /// 1. Every predecessor of `i` has completed in this cycle, and its writes happen-before
    ///    this call (same thread, or a Release/Acquire pair in the executor).
    /// 2. No other thread runs task `i`, or any of its successors, concurrently with this call.
    /// 3. No reference obtained from this plan ([`Plan::output`]) is alive: the executor holds
    ///    the plan through the `&mut Plan` of [`Executor::run_cycle`](crate::Executor).
    ///
    /// `i < self.len()`; otherwise this panics.
    #[inline]
    pub unsafe fn run_task(&self, i: usize) {
        // SAFETY: the caller's contract, for the whole task and its own cell.
        unsafe { self.run_frames(i, i, None) }
    }

    /// Runs task `i` on frames `frames` of every buffer (all of them when `None`) with the
    /// processor and scratch lists of cell `c` (the task's own, or one of its parts').
    ///
    /// # Safety
    /// As [`Plan::run_task`], where "no other thread runs task `i`" becomes: no other thread
    /// uses cell `c`, and threads running other parts of `i` at the same time touch other
    /// frames (parts of a split task, which is frame-parallel: its outputs have its block
    /// length and each part reads and writes only its own frames).
    // Always inlined: at `run_task`'s call `frames` is a constant `None` and the range
    // arithmetic folds away (the whole-task path is the hot one).
    #[inline(always)]
    unsafe fn run_frames(&self, i: usize, c: usize, frames: Option<(usize, usize)>) {
        let t = &self.tasks[i];
        if lists_on_stack(t.ins.1, t.outs.1) {
            // The slice lists on this thread's stack: the cell is only read, so its cache
            // line stays shared by every core that runs the task (a task that moves between
            // cores from one cycle to the next does not drag the line with it).
            let mut ins = ArrayVec::<&[f32], STACK_PORTS>::new();
            let mut outs = ArrayVec::<&mut [f32], STACK_PORTS>::new();
            // SAFETY: the caller's contract.
            unsafe { self.gather(i, frames, |s| ins.push(s), |s| outs.push(s)) };
            self.process(c, &ins, &mut outs);
        } else {
            let cell = &self.cells[c];
            // SAFETY: [2] only this thread uses cell `c` now, so only it touches its vectors.
            let (ins, outs) = unsafe { (&mut *cell.ins.get(), &mut *cell.outs.get()) };
            // SAFETY: the caller's contract.
            unsafe { self.gather(i, frames, |s| ins.push(s), |s| outs.push(s)) };
            self.process(c, ins, outs);
            ins.clear();
            outs.clear();
        }
    }

    /// Sums the multi-edge inputs of task `i` (on `frames`), then hands each input slice to
    /// `input` and each output slice to `output`, in port order.
    ///
    /// # Safety
    /// As [`Plan::run_frames`]; the slices must be dropped before the call's contract ends.
    #[inline(always)]
    unsafe fn gather<'a>(
        &self,
        i: usize,
        frames: Option<(usize, usize)>,
        mut input: impl FnMut(&'a [f32]),
        mut output: impl FnMut(&'a mut [f32]),
    ) {
        let t = &self.tasks[i];
        let range = |len: usize| match frames {
            Some((a, b)) => a.min(len)..b.min(len),
            None => 0..len,
        };
        let ports = &self.in_ports[t.ins.0 as usize..(t.ins.0 + t.ins.1) as usize];
        for port in ports {
            if port.n_srcs >= 2 {
                let srcs = &self.sum_srcs[port.first as usize..(port.first + port.n_srcs) as usize];
                // SAFETY: the scratch buffer belongs to this port of task `i` alone, and these
                // frames of it to this part [2]; the sources are outputs of predecessors,
                // complete and visible [1], written by no one while their successor `i` runs
                // [2]; no outside reference exists [3].
                let dst = unsafe {
                    self.arena
                        .slice_mut_range(port.buf, range(port.buf.len as usize))
                };
                // SAFETY: as above: predecessors' buffers, finished and not written now.
                let first = unsafe { self.arena.slice_range(srcs[0], range(srcs[0].len as usize)) };
                dst.copy_from_slice(first);
                for &s in &srcs[1..] {
                    // SAFETY: as above.
                    let src = unsafe { self.arena.slice_range(s, range(s.len as usize)) };
                    for (d, x) in dst.iter_mut().zip(src) {
                        *d += *x;
                    }
                }
            }
            // SAFETY: the buffer is a predecessor's output [1, 2], the silent buffer (never
            // written), an engine input channel (written only under `&mut self`), or this
            // port's scratch, whose mutable slice above has ended (its frames outside this
            // part's are not read here: other parts may be writing them).
            input(unsafe {
                self.arena
                    .slice_range(port.buf, range(port.buf.len as usize))
            });
        }
        for &b in &self.out_bufs[t.outs.0 as usize..(t.outs.0 + t.outs.1) as usize] {
            // SAFETY: output buffers of task `i` are written only by task `i`, and these frames
            // only by this part [2], and read only by its successors, which do not run now [2];
            // no outside reference [3].
            output(unsafe { self.arena.slice_mut_range(b, range(b.len as usize)) });
        }
    }

    /// Calls the processor of cell `c` on the gathered slices; a panic silences the outputs
    /// and is recorded.
    #[inline(always)]
    fn process(&self, c: usize, ins: &[&[f32]], outs: &mut [&mut [f32]]) {
        let cell = &self.cells[c];
        // SAFETY: the processor of cell `c` is used only by the thread using the cell
        // ([`Plan::run_frames`] 2).
        let processor = unsafe { &mut *cell.processor.get() };
        let result = catch_unwind(AssertUnwindSafe(|| processor.process(ins, outs)));
        if let Err(payload) = result {
            for o in outs.iter_mut() {
                o.fill(0.0);
            }
            self.record_panic(c, payload);
        }
    }

    #[cold]
    fn record_panic(&self, c: usize, payload: Box<dyn std::any::Any + Send>) {
        let cell = &self.cells[c];
        // Relaxed: the flag is read by the control side under `&mut self` or as a hint; the
        // message itself is handed over by the `&mut self` of `take_panics`.
        if !cell.panicked.swap(true, Ordering::Relaxed) {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".to_string());
            // SAFETY: only the thread using cell `c` writes the message [run_frames 2].
            unsafe { *cell.message.get() = Some(msg) };
        }
    }

    /// Whether the processor of task `i` has panicked since compile or [`Plan::reset`].
    pub fn panicked(&self, i: usize) -> bool {
        let t = &self.tasks[i];
        let parts = t.part_cells as usize..(t.part_cells + t.parts - 1) as usize;
        self.cells[i].panicked.load(Ordering::Relaxed)
            || self.cells[parts]
                .iter()
                .any(|c| c.panicked.load(Ordering::Relaxed))
    }

    /// The panics not reported yet (each task's first message, once).
    pub fn take_panics(&mut self) -> Vec<TaskPanic> {
        let mut v = Vec::new();
        for (c, cell) in self.cells.iter_mut().enumerate() {
            if let Some(message) = cell.message.get_mut().take() {
                let i = self.cell_task[c] as usize;
                if v.iter().any(|p: &TaskPanic| p.task == i) {
                    // Another part of the same task: one report per task.
                    continue;
                }
                v.push(TaskPanic {
                    task: i,
                    node: self.tasks[i].name.clone(),
                    message,
                });
            }
        }
        v
    }

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

    /// Whether chains are merged into units ([`Plan::set_merge_chains`]; on after compile).
    pub fn merges_chains(&self) -> bool {
        self.units.merged
    }

    /// Groups the tasks into units anew: with `merge`, maximal chains (a task whose only
    /// successor has it as its only predecessor runs in one unit with that successor, and so
    /// on); without, one unit per task, for executors that must see the graph node by node.
    /// Build executors after calling this: an executor is made for one grouping.
    pub fn set_merge_chains(&mut self, merge: bool) {
        if merge != self.units.merged {
            self.units = Units::new(&self.tasks, &self.succ, merge);
            self.layout_id = next_layout_id();
        }
    }

    /// A number that changes whenever the units change (compile, [`Plan::set_merge_chains`]):
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

    /// Runs every task in order on the calling thread: the sequential executor's cycle, also
    /// run by the parallel executors for a sequential plan ([`Plan::is_sequential`]). Never
    /// inlined, so that every executor runs a sequential plan through this one copy of the
    /// loop: with a copy inlined in each executor, `levels` ran `ligne100.ag` at 128 frames
    /// 2 % slower than `seq` in most processes and 23 % slower in two benchmark invocations
    /// of twelve (the other executors, with their own copies, not), on the same work.
    ///
    /// # Safety
    /// No other thread runs a task of this plan during the call, and no reference from
    /// [`Plan::output`] is alive (hold the plan by `&mut`).
    #[inline(never)]
    pub unsafe fn run_all_tasks(&self) {
        for i in 0..self.len() {
            // SAFETY: tasks are stored in topological order, so every predecessor of `i` ran
            // earlier in this loop, on this thread (program order gives happens-before); no
            // other thread runs tasks (the caller's contract).
            unsafe { self.run_task(i) };
        }
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
    /// (a sum split into groups), shared equally by the parts of a task split by frames), one
    /// edge per pair of dependent units with the largest communication cost of the graph edges
    /// between their tasks.
    pub fn unit_graph(&self, graph: &TaskGraph, costs: &[f64]) -> TaskGraph {
        let mut b = fugue_graph::GraphBuilder::new();
        for u in 0..self.n_units() {
            let ts = self.unit_tasks(u);
            let head = self.node_of(ts[0] as usize);
            let parts = f64::from(self.units.info[u].parts);
            let cost: f64 = ts
                .iter()
                .map(|&t| costs[self.node_of(t as usize)] * self.tasks[t as usize].share)
                .sum::<f64>()
                / parts;
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

    /// Runs unit `u`: its tasks, in order, on the calling thread.
    ///
    /// # Safety
    /// As [`Plan::run_task`], for the unit: every predecessor unit has completed in this
    /// cycle and its writes happen-before this call; no other thread runs `u` or any of its
    /// successor units concurrently; no reference from [`Plan::output`] is alive.
    #[inline]
    pub unsafe fn run_unit(&self, u: usize) {
        let ui = self.units.info[u];
        if ui.parts > 1 {
            let t = self.units.tasks[ui.tasks.0 as usize] as usize;
            let task = &self.tasks[t];
            let c = if ui.part == 0 {
                t
            } else {
                (task.part_cells + ui.part - 1) as usize
            };
            let frames = part_frames(task.block, ui.part as usize, ui.parts as usize);
            // SAFETY: the caller's contract for unit `u`: the task's predecessors (those of
            // every part) are complete and visible; only this thread runs this part (its own
            // cell); the other parts of the task use other cells and other frames of the
            // task's buffers (the task is frame-parallel, see `compile`).
            unsafe { self.run_frames(t, c, Some(frames)) };
            return;
        }
        for &t in self.unit_tasks(u) {
            // SAFETY: the predecessors of the first task are last tasks of predecessor units
            // (complete, visible: the caller's contract); each later task's only predecessor
            // is the task before it, run just before on this thread. Only this thread runs
            // the unit's tasks; their successors are in this unit (run after, here) or in
            // successor units (not running: the caller's contract).
            unsafe { self.run_task(t as usize) };
        }
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
        // contract [3]), so while this shared borrow lives nothing writes the buffer.
        unsafe { self.arena.slice(b) }
    }

    /// Returns to the initial state: every processor reset, every buffer silent, panic flags
    /// and messages cleared. The next cycles equal those of a freshly compiled plan.
    pub fn reset(&mut self) {
        self.arena.clear();
        for cell in self.cells.iter_mut() {
            cell.processor.get_mut().reset();
            *cell.panicked.get_mut() = false;
            *cell.message.get_mut() = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::layout_order;

    /// The buffers of the two halves of a diamond are laid out one half after the other: the
    /// order is topological, and every node below the first branch only (the first half of
    /// the split tree and the merges that take only its data) comes before any node below the
    /// second branch only.
    #[test]
    fn the_layout_order_is_depth_first_and_topological() {
        let g = fugue_graph::gen::diamond(4);
        let order = layout_order(&g);
        let mut pos = vec![usize::MAX; g.len()];
        for (i, &v) in order.iter().enumerate() {
            assert_eq!(pos[v], usize::MAX, "node {v} listed twice");
            pos[v] = i;
        }
        for v in 0..g.len() {
            for &(s, _) in g.succs(v) {
                assert!(pos[v] < pos[s], "{v} -> {s} out of order");
            }
        }
        // Descendants of each of the first split's two branches.
        let below = |root: usize| {
            let mut seen = vec![false; g.len()];
            let mut stack = vec![root];
            while let Some(v) = stack.pop() {
                if !std::mem::replace(&mut seen[v], true) {
                    stack.extend(g.succs(v).iter().map(|&(s, _)| s));
                }
            }
            seen
        };
        let split = g.find("mi2").unwrap();
        let (a, b) = (g.succs(split)[0].0, g.succs(split)[1].0);
        let (da, db) = (below(a), below(b));
        let only_a: Vec<usize> = (0..g.len()).filter(|&v| da[v] && !db[v]).collect();
        let only_b: Vec<usize> = (0..g.len()).filter(|&v| db[v] && !da[v]).collect();
        assert!(only_a.len() > 10 && only_a.len() == only_b.len());
        let last_a = only_a.iter().map(|&v| pos[v]).max().unwrap();
        let first_b = only_b.iter().map(|&v| pos[v]).min().unwrap();
        assert!(last_a < first_b, "the halves interleave: {order:?}");
    }
}
