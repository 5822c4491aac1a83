//! Where a graph's node costs come from, for `info` and `schedule`: declared in the file
//! (`wcet` in `.ag`, µs; task times in `.stg`; `Weight` in `.dot`), the default 1 where the
//! file gives none, measured now (`fugue calibrate`'s 99th percentile), or a costs file.

use anyhow::Context as _;
use fugue_engine::Costs;
use fugue_graph::{Format, TaskGraph};

/// The costs' origin and unit, said beside every figure made from them.
#[derive(Clone, Debug, PartialEq)]
pub struct CostOrigin {
    /// Where they come from, in words.
    pub source: String,
    /// `µs`, or `cost units` when they are not times.
    pub unit: &'static str,
    /// `declared`, `default`, `mixed`, `measured` or `file` (for JSON).
    pub kind: &'static str,
}

/// Sets the costs of `g` as `costs` says (measured: at `rate` Hz and `buffer` frames) and
/// says where they came from. `format`: the file's, which gives the unit of declared costs.
pub fn apply(
    g: &mut TaskGraph,
    costs: &Costs,
    format: Option<Format>,
    rate: u32,
    buffer: usize,
) -> anyhow::Result<CostOrigin> {
    Ok(match costs {
        Costs::Declared => {
            let declared = g.nodes().iter().filter(|n| n.cost_declared).count();
            let all = g.len();
            let time = format == Some(Format::Ag);
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
        Costs::Measured => {
            let cycles = 200;
            let cal = fugue_engine::calibrate(
                g,
                &crate::util::registry(),
                f64::from(rate),
                buffer,
                cycles,
            )
            .context("cannot measure the node costs (--costs measured)")?;
            g.set_costs(&cal.iter().map(|c| c.wcet_us).collect::<Vec<_>>());
            CostOrigin {
                source: format!(
                    "measured now: each node's 99th percentile over {cycles} cycles at {buffer} frames, {rate} Hz (µs)"
                ),
                unit: "µs",
                kind: "measured",
            }
        }
        Costs::File(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read costs file {}", path.display()))?;
            let c = fugue_sched::parse_costs(&text, &path.display().to_string(), g)?;
            g.set_costs(&c);
            CostOrigin {
                source: format!(
                    "from {} (µs, as fugue calibrate writes them)",
                    path.display()
                ),
                unit: "µs",
                kind: "file",
            }
        }
    })
}
