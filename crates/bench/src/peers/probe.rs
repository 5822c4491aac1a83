//! The probe: an empty node kind that checks the executor.
//!
//! [`Probe::new`] rewrites a graph so that every node is of kind [`PROBE_KIND`]: no DSP, but
//! at each run the node checks that it runs once per cycle and after its predecessors. Each
//! node has its own counter, on its own cache line; before each cycle the driver bumps the
//! cycle number ([`Probe::begin_cycle`]); when node `v` runs in cycle `c` it checks that its
//! own counter is `c - 1` (it did not run yet this cycle, and did run in every earlier one)
//! and that each predecessor's counter is already `c` (they ran before it), then stores `c`.
//! A node whose counter is behind missed the cycles since: the failure is counted at the
//! first of them. After the cycle, [`Probe::check_cycle`] checks that every counter is `c`
//! (every node ran).
//! A failed check is counted, never panics, and never allocates: the run goes on and the
//! benchmark fails at the end.
//!
//! The loads and stores are `Relaxed`: a correct executor orders a predecessor's run before
//! its successor's (happens-before through its activation counters or barriers), so the
//! successor sees the predecessor's store; an executor that lets a successor run before a
//! predecessor's store makes the check fail (or sees a stale value, which also fails).
//!
//! The processors reach their probe through a process-wide table (node kinds are built from
//! plain function pointers): the table is only touched on the control side, when a probe is
//! made, when a plan is compiled and when a probe is dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_utils::CachePadded;
use fugue_dsp::{DspNode, NodeContext, NodeError, Processor, Registry};
use fugue_graph::{TaskGraph, Value};

/// The name of the empty, checking node kind.
pub const PROBE_KIND: &str = "bench-probe";

const ATTR_PROBE: &str = "probe";
const ATTR_NODE: &str = "probe_node";

/// Shared state of one probe.
#[derive(Debug)]
struct State {
    cycle: CachePadded<AtomicU64>,
    counters: Box<[CachePadded<AtomicU64>]>,
    pred_start: Box<[u32]>,
    preds: Box<[u32]>,
    errors: CachePadded<AtomicU64>,
    /// `cycle << 32 | node` of the first failed check, `u64::MAX` if none.
    first_error: AtomicU64,
}

impl State {
    #[inline]
    fn fail(&self, cycle: u64, node: usize) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let code = (cycle << 32) | node as u64;
        let _ =
            self.first_error
                .compare_exchange(u64::MAX, code, Ordering::Relaxed, Ordering::Relaxed);
    }
}

static PROBES: Mutex<Vec<(u64, Arc<State>)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What a failed check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeError {
    /// Number of failed checks (node runs out of order or twice, or nodes that did not run).
    pub errors: u64,
    /// The cycle of the first failure.
    pub cycle: u64,
    /// The node (graph node index) of the first failure.
    pub node: usize,
    /// Its name.
    pub name: String,
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the executor broke the task order: {} failed check(s), the first in cycle {} at node `{}` (run twice, before a predecessor, or not at all)",
            self.errors, self.cycle, self.name
        )
    }
}

impl std::error::Error for ProbeError {}

/// A probe: the checking state of one rewritten graph. Dropping it unregisters it (plans
/// compiled from its graph keep their processors' state alive, but no new plan can be made).
#[derive(Debug)]
pub struct Probe {
    id: u64,
    state: Arc<State>,
    names: Vec<String>,
}

impl Probe {
    /// Rewrites `graph`: the same nodes (names, declared ports, costs) and edges, every
    /// node of kind [`PROBE_KIND`]. Compile the result with [`Probe::registry`].
    pub fn new(graph: &TaskGraph) -> (Probe, TaskGraph) {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let n = graph.len();
        let mut pred_start = Vec::with_capacity(n + 1);
        let mut preds = Vec::new();
        for v in 0..n {
            pred_start.push(preds.len() as u32);
            preds.extend(graph.preds(v).iter().map(|&(p, _)| p as u32));
        }
        pred_start.push(preds.len() as u32);
        let state = Arc::new(State {
            cycle: CachePadded::new(AtomicU64::new(0)),
            counters: (0..n)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            pred_start: pred_start.into(),
            preds: preds.into(),
            errors: CachePadded::new(AtomicU64::new(0)),
            first_error: AtomicU64::new(u64::MAX),
        });
        PROBES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, state.clone()));
        let mut b = graph.to_builder();
        for v in 0..n {
            let node = b.node_mut(v);
            node.kind = PROBE_KIND.to_string();
            node.attrs = vec![
                (ATTR_PROBE.to_string(), Value::Int(id as i64)),
                (ATTR_NODE.to_string(), Value::Int(v as i64)),
            ];
            // Keep the ports the graph uses: a `sink` declares none but has inputs.
            node.declared_inputs = Some(graph.inputs(v));
            node.declared_outputs = Some(graph.outputs(v));
        }
        let g = b
            .build()
            .expect("the same nodes and edges as a valid graph");
        let names = graph.nodes().iter().map(|x| x.name.clone()).collect();
        (Probe { id, state, names }, g)
    }

    /// A registry with the builtin kinds and [`PROBE_KIND`].
    pub fn registry() -> Registry {
        let mut r = Registry::with_builtin_kinds();
        r.register(PROBE_KIND, build);
        r
    }

    /// Starts a cycle (call before the executor's `run_cycle`, on the thread that calls it;
    /// the executor's start of cycle orders this store before the nodes' loads). Returns the
    /// cycle number, from 1.
    #[inline]
    pub fn begin_cycle(&self) -> u64 {
        let c = self.state.cycle.load(Ordering::Relaxed) + 1;
        self.state.cycle.store(c, Ordering::Relaxed);
        c
    }

    /// Checks the cycle just run (call after `run_cycle` returned): no failed check so far
    /// and every node ran in it.
    pub fn check_cycle(&self) -> Result<(), ProbeError> {
        let c = self.state.cycle.load(Ordering::Relaxed);
        for (v, k) in self.state.counters.iter().enumerate() {
            if k.load(Ordering::Relaxed) != c {
                self.state.fail(c, v);
            }
        }
        self.result()
    }

    /// The failed checks so far, if any.
    pub fn result(&self) -> Result<(), ProbeError> {
        let errors = self.state.errors.load(Ordering::Relaxed);
        if errors == 0 {
            return Ok(());
        }
        let code = self.state.first_error.load(Ordering::Relaxed);
        let node = (code & 0xffff_ffff) as usize;
        Err(ProbeError {
            errors,
            cycle: code >> 32,
            node,
            name: self.names.get(node).cloned().unwrap_or_default(),
        })
    }

    /// Cycles begun so far.
    pub fn cycles(&self) -> u64 {
        self.state.cycle.load(Ordering::Relaxed)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let mut t = PROBES.lock().unwrap_or_else(|e| e.into_inner());
        t.retain(|(id, _)| *id != self.id);
    }
}

struct ProbeNode {
    inputs: usize,
    outputs: usize,
    state: Arc<State>,
    node: usize,
}

impl DspNode for ProbeNode {
    fn inputs(&self) -> usize {
        self.inputs
    }

    fn outputs(&self) -> usize {
        self.outputs
    }

    fn processor(&self) -> Box<dyn Processor> {
        fugue_dsp::isolated(ProbeProcessor {
            state: self.state.clone(),
            node: self.node,
        })
    }
}

/// The constructor of [`PROBE_KIND`].
fn build(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    let bad = |attr: &str| NodeError::MissingAttr {
        node: ctx.name().to_string(),
        kind: PROBE_KIND.to_string(),
        attr: attr.to_string(),
        what: "the id that `Probe::new` gives (probe nodes are made by the benchmarks only)"
            .to_string(),
    };
    let id = ctx
        .node
        .attr(ATTR_PROBE)
        .and_then(Value::as_f64)
        .ok_or_else(|| bad(ATTR_PROBE))? as u64;
    let node = ctx
        .node
        .attr(ATTR_NODE)
        .and_then(Value::as_f64)
        .ok_or_else(|| bad(ATTR_NODE))? as usize;
    let state = PROBES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, s)| s.clone())
        .ok_or_else(|| bad(ATTR_PROBE))?;
    if node >= state.counters.len() {
        return Err(bad(ATTR_NODE));
    }
    Ok(Box::new(ProbeNode {
        inputs: ctx.inputs,
        outputs: ctx.outputs,
        state,
        node,
    }))
}

struct ProbeProcessor {
    state: Arc<State>,
    node: usize,
}

impl Processor for ProbeProcessor {
    #[inline]
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let s = &*self.state;
        // Relaxed: see the module doc (the executor's happens-before carries these values).
        let c = s.cycle.load(Ordering::Relaxed);
        let me = &s.counters[self.node];
        let last = me.load(Ordering::Relaxed);
        // The cycle that went wrong: the first this node missed (counter behind), or this one
        // (it ran twice, or before a predecessor); `u64::MAX` when none did.
        let mut bad = if last + 1 == c {
            u64::MAX
        } else {
            (last + 1).min(c)
        };
        let (a, b) = (
            s.pred_start[self.node] as usize,
            s.pred_start[self.node + 1] as usize,
        );
        for &p in &s.preds[a..b] {
            if s.counters[p as usize].load(Ordering::Relaxed) != c {
                bad = bad.min(c);
            }
        }
        if bad != u64::MAX {
            s.fail(bad, self.node);
        }
        me.store(c, Ordering::Relaxed);
        for o in outputs {
            o.fill(0.0);
        }
    }

    fn reset(&mut self) {}
}
