//! Where a graph's node costs come from: declared in the file (`wcet` in `.ag`, µs; task
//! times in `.stg`; `Weight` in `.dot`; the default 1 where the file gives none), measured now
//! ([`calibrate`](crate::calibrate)'s 99th percentile), or a costs file (`node,cost`). One
//! resolution for the static schedules, `info` and `schedule`.

use std::path::PathBuf;
use std::time::Duration;

use fugue_graph::TaskGraph;

use crate::{BuildError, Costs};

/// Cycles that [`Costs::Measured`] measures each node over.
pub const MEASURE_CYCLES: usize = 200;

/// How long [`Costs::Measured`] measures at most ([`Costs::apply`]): fewer cycles than
/// [`MEASURE_CYCLES`] for a graph whose cycle takes longer than a hundredth of it (one cycle
/// at least), so that a few lines of `load` nodes of long `wcet` do not hold `info` or
/// `schedule` for minutes.
pub const MEASURE_BUDGET: Duration = Duration::from_secs(2);

/// The costs' origin and unit, said beside every figure made from them.
#[derive(Clone, Debug, PartialEq)]
pub struct CostOrigin {
    /// Where they come from, in words.
    pub source: String,
    /// `µs`, or `cost units` when they are not times.
    pub unit: &'static str,
    /// `declared`, `default`, `mixed`, `measured` or `file`.
    pub kind: &'static str,
}

/// Why the costs could not be had.
#[derive(Debug, thiserror::Error)]
pub enum CostsError {
    /// The costs file could not be read.
    #[error("cannot read costs file {}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// The costs file is malformed.
    #[error(transparent)]
    Parse(#[from] fugue_sched::CostsError),
    /// The measurement failed (a node that cannot be built, ...).
    #[error("cannot measure the node costs (--costs measured)")]
    Measure(#[source] Box<BuildError>),
}

impl From<CostsError> for BuildError {
    fn from(e: CostsError) -> Self {
        match e {
            CostsError::Read { path, source } => BuildError::CostsIo { path, source },
            CostsError::Parse(e) => BuildError::Costs(e),
            CostsError::Measure(e) => *e,
        }
    }
}

impl Costs {
    /// Sets the costs of `g` as `self` says (measured: at `rate` Hz and `buffer` frames) and
    /// says where they came from (the unit of declared costs is each node's own,
    /// [`fugue_graph::Node::cost_in_us`]). `registry`: the kinds the graph is built with, to
    /// measure it.
    pub fn apply(
        &self,
        g: &mut TaskGraph,
        rate: f64,
        buffer: usize,
        registry: &fugue_dsp::Registry,
    ) -> Result<CostOrigin, CostsError> {
        self.apply_within(g, rate, buffer, registry, MEASURE_BUDGET)
    }

    /// [`Costs::apply`], measured costs taking at most `budget` (at most
    /// [`MEASURE_BUDGET`]; one cycle at least): a command with a time limit of its own
    /// (`schedule --time-limit`) measures within it.
    pub fn apply_within(
        &self,
        g: &mut TaskGraph,
        rate: f64,
        buffer: usize,
        registry: &fugue_dsp::Registry,
        budget: Duration,
    ) -> Result<CostOrigin, CostsError> {
        Ok(match self {
            Costs::Declared => declared(g),
            Costs::Measured => {
                let budget = budget.min(MEASURE_BUDGET);
                let (cal, measured) =
                    crate::calibrate_within(g, registry, rate, buffer, MEASURE_CYCLES, budget)
                        .map_err(|e| CostsError::Measure(Box::new(e)))?;
                g.set_costs(&cal.iter().map(|c| c.wcet_us).collect::<Vec<_>>());
                let cut = if measured < MEASURE_CYCLES {
                    format!(
                        " (of {MEASURE_CYCLES}: the {} s that measuring may take ran out)",
                        fugue_dsp::attrs::short_number(budget.as_secs_f64())
                    )
                } else {
                    String::new()
                };
                CostOrigin {
                    source: format!(
                        "measured now: each node's 99th percentile over {measured} cycle{}{cut} at {buffer} frames, {rate} Hz (µs)",
                        if measured == 1 { "" } else { "s" }
                    ),
                    unit: "µs",
                    kind: "measured",
                }
            }
            Costs::File(path) => {
                let text = fugue_graph::read::read_text_bounded(
                    path,
                    fugue_graph::read::MAX_FILE_BYTES,
                    "a costs file",
                )
                .map_err(|source| CostsError::Read {
                    path: path.clone(),
                    source,
                })?;
                let (c, given) =
                    fugue_sched::parse_costs_given(&text, &path.display().to_string(), g)
                        .map_err(|e| e.in_graph_named_file(path))?;
                // The nodes the file is about: a feedback edge's own two cost nothing.
                let nodes: Vec<usize> = (0..g.len()).filter(|&v| !g.is_feedback_node(v)).collect();
                let named = nodes.iter().filter(|&&v| given[v]).count();
                // Those two may be given too (fugue calibrate writes them): said apart.
                let pairs = g.len() - nodes.len();
                let pairs_named = (0..g.len())
                    .filter(|&v| given[v] && g.is_feedback_node(v))
                    .count();
                let also = if pairs_named > 0 {
                    format!("; and {pairs_named} of the {pairs} tasks its feedback edges make (µs)")
                } else {
                    String::new()
                };
                let origin = if named == nodes.len() {
                    CostOrigin {
                        source: format!(
                            "from {} (µs, as fugue calibrate writes them){also}",
                            path.display()
                        ),
                        unit: "µs",
                        kind: "file",
                    }
                } else {
                    // The others keep what the graph's file declares: times only when those
                    // are (.ag's wcet, in µs).
                    let rest = declared(g);
                    let unit = if rest.unit == "µs" {
                        "µs"
                    } else {
                        "cost units"
                    };
                    CostOrigin {
                        source: format!(
                            "from {} for {named} of {} nodes (µs), the other {} {}: {}",
                            path.display(),
                            nodes.len(),
                            nodes.len() - named,
                            if rest.kind == "default" {
                                "default 1"
                            } else {
                                "as the graph's file declares them"
                            },
                            if unit == "µs" {
                                "times in µs"
                            } else {
                                "cost units, not times (fugue calibrate writes every node's)"
                            }
                        ) + &also,
                        unit,
                        kind: "mixed",
                    }
                };
                g.set_costs(&c);
                origin
            }
        })
    }
}

/// The origin of the costs that `g`'s file declares.
fn declared(g: &TaskGraph) -> CostOrigin {
    // A feedback edge's two nodes cost nothing of their own, whatever the file declares.
    let written = || {
        (0..g.len())
            .filter(|&v| !g.is_feedback_node(v))
            .map(|v| g.node(v))
    };
    let declared = written().filter(|n| n.cost_declared).count();
    let all = g.written_nodes();
    // Times where every declared cost is one (`wcet`, of .ag or .dot); .stg times and DOT's
    // `Weight` are in the file's own units.
    let time = written().filter(|n| n.cost_declared).all(|n| n.cost_in_us);
    if declared == all && all > 0 {
        CostOrigin {
            source: if time {
                "declared in the file (wcet, µs)".into()
            } else {
                "declared in the file (its own units)".into()
            },
            unit: if time { "µs" } else { "cost units" },
            kind: "declared",
        }
    } else if declared == 0 {
        CostOrigin {
            source: "default 1 per node (the file declares none): counts of nodes, not times; --costs measured measures them".into(),
            unit: "cost units",
            kind: "default",
        }
    } else {
        CostOrigin {
            source: format!(
                "{declared} of {all} declared in the file, the other {} default 1: cost units, not times",
                all - declared
            ),
            unit: "cost units",
            kind: "mixed",
        }
    }
}
