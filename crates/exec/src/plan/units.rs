//! The unit graph: chains of tasks merged into units, the graph the executors schedule (see
//! [`Plan`](super::Plan), "Units"), with its activation counters, group counters of wide
//! joins, levels, sources and dominated costs.

use super::TaskInfo;

/// Groups items `0..level.len()` by level: the items in (level, index) order, and the start of
/// each level in that order (one more entry than there are levels).
pub(super) fn by_level(level: &[u32]) -> (Vec<u32>, Vec<u32>) {
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

/// One unit: a chain of tasks that always run back to back on one thread.
#[derive(Clone, Copy, Debug)]
pub(super) struct UnitInfo {
    pub(super) tasks: (u32, u32),
    pub(super) succ: (u32, u32),
    pub(super) initial: u32,
    /// Which part of its task's frames this unit computes, of how many (0 of 1: all).
    pub(super) part: u32,
    pub(super) parts: u32,
    /// Which sub-block of a pipelined cycle this unit computes, of how many (0 of 1: all).
    pub(super) sub: u32,
    pub(super) subs: u32,
}

/// How [`Units::new`] pipelines (see `Plan`, "Pipelining").
#[derive(Clone, Copy, Debug)]
pub(super) struct Pipelining {
    /// Sub-blocks per cycle (1: not pipelined).
    pub(super) subs: u32,
    /// When pipelined, chains that cost more are cut into segments of about this cost.
    pub(super) max_cost: f64,
}

/// Frames `[a, b)` of sub-block `k` of `n` of a block of `block` frames (`n` divides it).
#[inline]
pub(super) fn sub_frames(block: usize, k: usize, n: usize) -> (usize, usize) {
    let len = block / n;
    (k * len, (k + 1) * len)
}

/// Cuts a chain of tasks whose costs are `costs` into consecutive pieces of about `max_cost`
/// each: as many pieces as the chain's cost needs (never more than its tasks), each task in
/// the piece its middle falls in. Returns each piece's length.
fn cut_chain(costs: &[f64], max_cost: f64) -> Vec<usize> {
    let total: f64 = costs.iter().sum();
    // (An infinite `max_cost`, or a chain of no cost: one piece.)
    if total.is_nan() || total <= max_cost * (1.0 + 1e-9) {
        return vec![costs.len()];
    }
    let k = ((total / max_cost - 1e-9).ceil() as usize).clamp(1, costs.len());
    let piece = total / k as f64;
    let mut lens = vec![0usize; k];
    let mut acc = 0.0;
    for &c in costs {
        let i = (((acc + c / 2.0) / piece) as usize).min(k - 1);
        lens[i] += 1;
        acc += c;
    }
    lens.retain(|&l| l > 0);
    lens
}

/// The units of a plan: the graph the executors schedule (see [`Plan`], "Units").
#[derive(Clone, Debug, Default)]
pub(super) struct Units {
    pub(super) merged: bool,
    pub(super) info: Vec<UnitInfo>,
    pub(super) tasks: Vec<u32>,
    pub(super) succ: Vec<u32>,
    pub(super) unit_of_task: Vec<u32>,
    pub(super) sources: Vec<u32>,
    /// The sources in dealing order (`Plan::unit_sources_by_join`).
    pub(super) sources_by_join: Vec<u32>,
    pub(super) sinks: Vec<u32>,
    pub(super) level_order: Vec<u32>,
    pub(super) level_starts: Vec<u32>,
    /// Activation counters: slot `u < info.len()` is unit `u`'s own; the others are the
    /// group counters of wide joins. Per slot: initial count and parent slot (`NO_SLOT` for a
    /// unit's own counter).
    pub(super) slot_initial: Vec<u32>,
    pub(super) slot_parent: Vec<u32>,
    /// Parallel to `succ`: the slot a finishing unit decrements for that successor.
    pub(super) succ_slot: Vec<u32>,
    /// Per unit: the cost of the units it dominates, itself included (`Plan::unit_dominated_cost`).
    pub(super) dominated: Vec<f32>,
    /// Per unit: its cost (`Plan::unit_cost`).
    pub(super) cost: Vec<f32>,
    /// The cost of all units.
    pub(super) total_cost: f64,
}

/// A slot with no parent: a unit's own activation counter.
pub const NO_SLOT: u32 = u32::MAX;

/// Wide joins: a unit with more predecessors than this gets a tree of group counters, each
/// counting at most this many predecessors (or groups), so that finishing predecessors do
/// not all decrement one counter. (2 under loom, so that a model with a join of three
/// branches has group counters.)
#[cfg(not(loom))]
pub const JOIN_FANIN: usize = 4;
/// Wide joins (see the non-loom definition); 2 under loom, so that a small model has group
/// counters.
#[cfg(loom)]
pub const JOIN_FANIN: usize = 2;

/// Wide stateless joins are split by frames: a task of a frame-parallel kind
/// ([`DspNode::frame_parallel`](fugue_dsp::DspNode::frame_parallel), e.g. `mix`) fed by at
/// least [`SPLIT_MIN_INPUTS`] edges, at a block of at least [`SPLIT_MIN_FRAMES`] frames,
/// becomes this many units when chains are merged, each computing its share of the block's
/// frames with a processor of its own. The join that every branch waits for then runs on
/// several threads at once, each reading its share of the branches' buffers.
pub const SPLIT_PARTS: usize = 2;

/// See [`SPLIT_PARTS`].
pub const SPLIT_MIN_INPUTS: usize = 8;

/// See [`SPLIT_PARTS`].
pub const SPLIT_MIN_FRAMES: usize = 256;

/// The parts of a wide sum split into groups (the groups and the node that adds their sums;
/// see [`DspNode::sums_inputs`](fugue_dsp::DspNode::sums_inputs)) are split by frames into
/// [`SPLIT_PARTS`] units too at blocks of at least this many frames. A group runs when its
/// branches end, beside other branches; but the groups and the sums left once the last
/// branch ends (its group, the sums of blocks, the node) form a chain that one thread would
/// run while the others wait: split, two threads share it. Below this block, a part's few
/// microseconds of sums are too short for what a task more costs.
pub const SPLIT_GROUP_MIN_FRAMES: usize = 4096;

/// Frames `[a, b)` of part `part` of `parts` of a block of `block` frames: parts of equal
/// length rounded up to 16 frames (64 bytes: no two parts write one cache line), the last
/// one shorter.
#[inline]
pub(super) fn part_frames(block: usize, part: usize, parts: usize) -> (usize, usize) {
    let chunk = block.div_ceil(parts).next_multiple_of(16);
    ((part * chunk).min(block), ((part + 1) * chunk).min(block))
}

impl Units {
    /// Groups the tasks (numbered in a topological order, with their distinct successors and
    /// predecessor counts) into units: with `merge`, maximal chains `t1 -> t2 -> ... -> tk`
    /// where each `ti` (i < k) has `t(i+1)` as its only successor and `t(i+1)` has `ti` as its
    /// only predecessor; without, one unit per task.
    ///
    /// Pipelined (`pipe.subs > 1`): chains that cost more than `pipe.max_cost` are cut into
    /// segments first, then every unit `s` becomes `pipe.subs` units `(s, k)` numbered
    /// `s * subs + k` (a topological order), with edges `(s, k) -> (s, k + 1)` (unless every
    /// task of `s` is stateless) and `(s, k) -> (t, k)` for each edge `s -> t`.
    pub(super) fn new(tasks: &[TaskInfo], succ: &[u32], merge: bool, pipe: Pipelining) -> Units {
        let graph = Tasks { tasks, succ, merge };
        let Grouped {
            mut info,
            unit_tasks,
            mut unit_of_task,
        } = graph.group(pipe);
        let mut usucc = graph.unit_successors(&mut info, &unit_tasks, &unit_of_task);
        if pipe.subs > 1 {
            (info, usucc) = pipelined(&info, &usucc, &unit_tasks, tasks, pipe.subs);
            for u in unit_of_task.iter_mut() {
                *u *= pipe.subs;
            }
        }
        for &v in &usucc {
            info[v as usize].initial += 1;
        }
        let nu = info.len();
        let Slots {
            slot_initial,
            slot_parent,
            succ_slot,
        } = counter_slots(&info, &usucc);
        let (level_order, level_starts) = by_level(&levels(&info, &usucc));
        let sources: Vec<u32> = (0..nu as u32)
            .filter(|&u| info[u as usize].initial == 0)
            .collect();
        let sources_by_join = sources_by_join(&info, &usucc, &sources);
        let sinks = (0..nu as u32)
            .filter(|&u| info[u as usize].succ.1 == 0)
            .collect();
        let cost: Vec<f64> = info
            .iter()
            .map(|ui| {
                let ts = &unit_tasks[ui.tasks.0 as usize..(ui.tasks.0 + ui.tasks.1) as usize];
                ts.iter().map(|&t| tasks[t as usize].cost).sum::<f64>()
                    / f64::from(ui.parts * ui.subs)
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

/// The task graph that [`Units::new`] groups: the tasks, their successors, and whether
/// chains are merged.
struct Tasks<'a> {
    tasks: &'a [TaskInfo],
    succ: &'a [u32],
    merge: bool,
}

/// The tasks grouped into units, before the units' successors are known.
struct Grouped {
    /// The units, with no successors and no counts yet.
    info: Vec<UnitInfo>,
    /// The tasks of each unit, unit after unit (`info[u].tasks` indexes it).
    unit_tasks: Vec<u32>,
    /// Per task: its unit (the first part's, for a split task).
    unit_of_task: Vec<u32>,
}

impl Tasks<'_> {
    /// Parts of task `t`'s frames (a split task is a unit per part; only with `merge`).
    fn parts(&self, t: usize) -> u32 {
        if self.merge {
            self.tasks[t].parts
        } else {
            1
        }
    }

    /// The distinct successors of task `t`.
    fn succ_of(&self, t: usize) -> &[u32] {
        let (s0, l) = self.tasks[t].succ;
        &self.succ[s0 as usize..(s0 + l) as usize]
    }

    /// Groups the tasks into units: a unit per part of a split task; otherwise a chain from
    /// each head (cut into segments when pipelined), or with `merge` off a unit per task.
    fn group(&self, pipe: Pipelining) -> Grouped {
        let n = self.tasks.len();
        let mut g = Grouped {
            info: Vec::new(),
            unit_tasks: Vec::with_capacity(n),
            unit_of_task: vec![u32::MAX; n],
        };
        // Heads come in increasing task order: a task absorbed into a chain follows its
        // chain's head in the topological order, so it is visited after the head's unit.
        for head in 0..n {
            if g.unit_of_task[head] != u32::MAX {
                continue;
            }
            if self.parts(head) > 1 {
                // A split task: one unit per part, consecutive, never part of a chain.
                let (u, first) = (g.info.len() as u32, g.unit_tasks.len() as u32);
                g.unit_of_task[head] = u;
                g.unit_tasks.push(head as u32);
                for part in 0..self.parts(head) {
                    g.info.push(UnitInfo {
                        tasks: (first, 1),
                        succ: (0, 0),
                        initial: 0,
                        part,
                        parts: self.parts(head),
                        sub: 0,
                        subs: 1,
                    });
                }
                continue;
            }
            let chain = self.chain_from(head);
            // Pipelined: a long chain becomes several segments (consecutive units).
            let lens = if pipe.subs > 1 {
                let costs: Vec<f64> = chain.iter().map(|&t| self.tasks[t as usize].cost).collect();
                cut_chain(&costs, pipe.max_cost)
            } else {
                vec![chain.len()]
            };
            let mut rest = &chain[..];
            for len in lens {
                let (piece, more) = rest.split_at(len);
                rest = more;
                let (u, first) = (g.info.len() as u32, g.unit_tasks.len() as u32);
                for &t in piece {
                    g.unit_of_task[t as usize] = u;
                    g.unit_tasks.push(t);
                }
                g.info.push(UnitInfo {
                    tasks: (first, len as u32),
                    succ: (0, 0),
                    initial: 0,
                    part: 0,
                    parts: 1,
                    sub: 0,
                    subs: 1,
                });
            }
        }
        g
    }

    /// The chain that starts at task `head`: with `merge`, followed while a task's only
    /// successor has it as its only predecessor and is not split; without, `head` alone.
    fn chain_from(&self, head: usize) -> Vec<u32> {
        let mut t = head;
        let mut chain = Vec::new();
        loop {
            chain.push(t as u32);
            let ss = self.succ_of(t);
            if self.merge
                && ss.len() == 1
                && self.tasks[ss[0] as usize].initial == 1
                && self.parts(ss[0] as usize) == 1
            {
                t = ss[0] as usize;
            } else {
                break;
            }
        }
        chain
    }

    /// Sets each unit's successors (`info[u].succ`) and returns the successor lists.
    ///
    /// Successors of a unit: the units of its last task's successors, each the head of its
    /// own unit (a task with several predecessors, or whose predecessor has several
    /// successors, starts a unit), so they are distinct; every part of a split successor.
    /// A unit's count is its number of predecessor units (one per part of a split
    /// predecessor).
    fn unit_successors(
        &self,
        info: &mut [UnitInfo],
        unit_tasks: &[u32],
        unit_of_task: &[u32],
    ) -> Vec<u32> {
        let mut usucc = Vec::new();
        for ui in info.iter_mut() {
            let last = unit_tasks[(ui.tasks.0 + ui.tasks.1 - 1) as usize] as usize;
            let s0 = usucc.len() as u32;
            let mut ss: Vec<u32> = self
                .succ_of(last)
                .iter()
                .flat_map(|&s| {
                    let u0 = unit_of_task[s as usize];
                    u0..u0 + self.parts(s as usize)
                })
                .collect();
            ss.sort_unstable();
            ss.dedup();
            usucc.extend_from_slice(&ss);
            ui.succ = (s0, ss.len() as u32);
        }
        usucc
    }
}

/// The activation counter slots of a unit graph (see `Units::slot_initial`).
struct Slots {
    slot_initial: Vec<u32>,
    slot_parent: Vec<u32>,
    succ_slot: Vec<u32>,
}

/// The counter slots of units `info` with successors `succ` and their counts set.
///
/// Predecessors of each unit in increasing order; a unit with more than [`JOIN_FANIN`] of
/// them gets groups of `JOIN_FANIN` consecutive predecessors (a predecessor decrements its
/// group's slot; the group's last decrements the parent), level upon level until at most
/// `JOIN_FANIN` remain for the unit's own counter.
fn counter_slots(info: &[UnitInfo], succ: &[u32]) -> Slots {
    let nu = info.len();
    let mut preds: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nu]; // (pred unit, edge index)
    for (u, ui) in info.iter().enumerate() {
        for k in ui.succ.0..ui.succ.0 + ui.succ.1 {
            preds[succ[k as usize] as usize].push((u as u32, k));
        }
    }
    let mut slots = Slots {
        slot_initial: info.iter().map(|ui| ui.initial).collect(),
        slot_parent: vec![NO_SLOT; nu],
        succ_slot: succ.to_vec(), // by default: the successor's own slot
    };
    for (v, pv) in preds.iter().enumerate() {
        if pv.len() > JOIN_FANIN {
            slots.join_tree(v, pv);
        }
    }
    slots
}

impl Slots {
    /// Gives unit `v`, whose predecessors are `pv` (unit, edge index), its tree of group
    /// counters.
    fn join_tree(&mut self, v: usize, pv: &[(u32, u32)]) {
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
                let g = self.slot_initial.len() as u32;
                self.slot_initial.push(group.len() as u32);
                self.slot_parent.push(NO_SLOT); // set when the next level is known
                for e in group {
                    match *e {
                        Entry::Edge(k) => self.succ_slot[k as usize] = g,
                        Entry::Slot(c) => self.slot_parent[c as usize] = g,
                    }
                }
                next.push(Entry::Slot(g));
            }
            entries = next;
        }
        // The top level's entries decrement the unit's own counter.
        self.slot_initial[v] = entries.len() as u32;
        for e in &entries {
            match *e {
                Entry::Edge(k) => self.succ_slot[k as usize] = v as u32,
                Entry::Slot(c) => self.slot_parent[c as usize] = v as u32,
            }
        }
    }
}

/// The topological level of each unit of `info` (numbered in a topological order, with
/// successors `succ`): 0 for a source, else one more than its deepest predecessor's.
fn levels(info: &[UnitInfo], succ: &[u32]) -> Vec<u32> {
    let nu = info.len();
    let mut level = vec![0u32; nu];
    for u in 0..nu {
        let (s0, l) = info[u].succ;
        for &v in &succ[s0 as usize..(s0 + l) as usize] {
            level[v as usize] = level[v as usize].max(level[u] + 1);
        }
    }
    level
}

/// The sources by the successors they feed (see `Plan::unit_sources_by_join`).
///
/// The sources as the leaves of the forest that links each unit to its first successor,
/// depth first from the sinks (each unit's children: those that have children of their own,
/// then the others, each by number): the sources of one join are neighbours, and so are
/// those of joins that feed one join (the two groups of a block of a split sum). Then,
/// stably, a source that alone feeds its first successor goes to the back.
fn sources_by_join(info: &[UnitInfo], succ: &[u32], sources: &[u32]) -> Vec<u32> {
    let nu = info.len();
    let first_succ = |u: u32| {
        let (s0, l) = info[u as usize].succ;
        (l > 0).then(|| succ[s0 as usize])
    };
    // Per unit: the sources whose first successor it is.
    let mut feeding = vec![0usize; nu];
    for &u in sources {
        if let Some(f) = first_succ(u) {
            feeding[f as usize] += 1;
        }
    }
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
    let mut by_join = Vec::with_capacity(sources.len());
    let mut stack: Vec<u32> = (0..nu as u32)
        .rev()
        .filter(|&u| first_succ(u).is_none())
        .collect();
    while let Some(u) = stack.pop() {
        if info[u as usize].initial == 0 {
            by_join.push(u);
        }
        stack.extend(children[u as usize].iter().rev());
    }
    debug_assert_eq!(by_join.len(), sources.len());
    by_join.sort_by_key(|&u| first_succ(u).is_none_or(|f| feeding[f as usize] == 1));
    by_join
}

/// The pipelined unit graph of units `info` with successors `succ` (see [`Units::new`]): unit
/// `s` becomes units `s * subs + k`, `k < subs`.
fn pipelined(
    info: &[UnitInfo],
    succ: &[u32],
    unit_tasks: &[u32],
    tasks: &[TaskInfo],
    subs: u32,
) -> (Vec<UnitInfo>, Vec<u32>) {
    let mut pinfo = Vec::with_capacity(info.len() * subs as usize);
    let mut psucc = Vec::with_capacity((succ.len() + info.len()) * subs as usize);
    for (s, ui) in info.iter().enumerate() {
        let ts = &unit_tasks[ui.tasks.0 as usize..(ui.tasks.0 + ui.tasks.1) as usize];
        // A segment of stateless tasks has a processor per sub-block: its sub-blocks are
        // independent. Otherwise the processors carry state from one sub-block to the next.
        let chained = !ts.iter().all(|&t| tasks[t as usize].stateless);
        let next = &succ[ui.succ.0 as usize..(ui.succ.0 + ui.succ.1) as usize];
        for k in 0..subs {
            let s0 = psucc.len() as u32;
            if chained && k + 1 < subs {
                psucc.push(s as u32 * subs + k + 1);
            }
            psucc.extend(next.iter().map(|&v| v * subs + k));
            // Increasing: `s * subs + k + 1` is below every `v * subs + k` with `v > s`.
            pinfo.push(UnitInfo {
                tasks: ui.tasks,
                succ: (s0, psucc.len() as u32 - s0),
                initial: 0,
                part: 0,
                parts: 1,
                sub: k,
                subs,
            });
        }
    }
    (pinfo, psucc)
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
