//! The [`Schedule`] (processors -> time slots) and its verification.

use fugue_graph::{NodeId, TaskGraph};
use thiserror::Error;

/// Tolerance of float comparisons between times: `a` counts as `<= b` when
/// `a <= b + EPS * (1 + |b|)` (costs are `f64`; `.ag` costs are fractional microseconds).
/// Small enough that starts a node of cost 1 apart stay distinct at times up to about `1e11`
/// (at `1e12`, the largest communication cost `fugue schedule --comm-cost` takes, the
/// tolerance is 1; with `1e-9` it was 10 at `1e10`, and CPFD took starts a few nodes apart as
/// equal and kept the worse), large enough for the rounding of sums of many fractional costs
/// (`f64` keeps about `1e-16` of each).
pub const EPS: f64 = 1e-12;

/// `a <= b` within the relative tolerance [`EPS`].
#[inline]
pub fn le(a: f64, b: f64) -> bool {
    a <= b + EPS * (1.0 + b.abs())
}

/// `a < b` by more than the tolerance [`EPS`].
#[inline]
pub fn lt(a: f64, b: f64) -> bool {
    !le(b, a)
}

/// One task (or one copy of a task) on one processor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    /// The task (node of the graph).
    pub task: NodeId,
    /// Start time.
    pub start: f64,
    /// Finish time (`start` + the task's computation cost).
    pub finish: f64,
}

/// A static schedule: for each processor, its time slots ordered by start time.
///
/// A task appears once, except in schedules that duplicate tasks ([`crate::cpfd()`]), where a
/// task may run on several processors (each copy computes the same outputs; a successor may use
/// whichever copy's data arrive first).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    /// Slots of each processor, ordered by start time.
    pub processors: Vec<Vec<Slot>>,
}

impl Schedule {
    /// A schedule of `p` empty processors.
    pub fn new(p: usize) -> Self {
        Schedule {
            processors: vec![Vec::new(); p],
        }
    }

    /// Number of processors (including processors left empty).
    pub fn num_processors(&self) -> usize {
        self.processors.len()
    }

    /// Number of processors that run at least one task.
    pub fn used_processors(&self) -> usize {
        self.processors.iter().filter(|p| !p.is_empty()).count()
    }

    /// The finish time of the last slot (0 for an empty schedule).
    pub fn makespan(&self) -> f64 {
        self.slots().map(|(_, s)| s.finish).fold(0.0, f64::max)
    }

    /// Every slot with its processor, processor by processor.
    pub fn slots(&self) -> impl Iterator<Item = (usize, &Slot)> + '_ {
        self.processors
            .iter()
            .enumerate()
            .flat_map(|(p, v)| v.iter().map(move |s| (p, s)))
    }

    /// Total number of slots (tasks plus duplicates).
    pub fn num_slots(&self) -> usize {
        self.processors.iter().map(Vec::len).sum()
    }

    /// Whether some task runs more than once.
    pub fn has_duplicates(&self) -> bool {
        let mut seen = std::collections::HashSet::new();
        self.slots().any(|(_, s)| !seen.insert(s.task))
    }

    /// Sorts every processor's slots by start time (then finish, then task).
    pub fn sort(&mut self) {
        for p in &mut self.processors {
            p.sort_by(|a, b| {
                a.start
                    .total_cmp(&b.start)
                    .then(a.finish.total_cmp(&b.finish))
                    .then(a.task.cmp(&b.task))
            });
        }
    }

    /// Drops processors that run nothing (keeps the order of the others).
    pub fn drop_empty_processors(&mut self) {
        self.processors.retain(|p| !p.is_empty());
    }
}

/// Why a schedule is invalid for a graph. Tasks are named by their node names.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ScheduleError {
    /// A slot names a node that the graph does not have.
    #[error("processor {processor} has a slot for task #{task}, but the graph has {len} nodes")]
    UnknownTask {
        /// Processor of the slot.
        processor: usize,
        /// The bad index.
        task: NodeId,
        /// Number of nodes of the graph.
        len: usize,
    },
    /// A task is not placed on any processor.
    #[error("task `{task}` is not scheduled")]
    Missing {
        /// The task's name.
        task: String,
    },
    /// A slot does not last the task's computation cost, or has a bad time.
    #[error("task `{task}` on processor {processor} runs from {start} to {finish}, but its cost is {cost}")]
    BadDuration {
        /// The task's name.
        task: String,
        /// Processor of the slot.
        processor: usize,
        /// Start time.
        start: f64,
        /// Finish time.
        finish: f64,
        /// Computation cost.
        cost: f64,
    },
    /// Two slots of one processor overlap.
    #[error("tasks `{first}` ({first_start}..{first_finish}) and `{second}` ({second_start}..{second_finish}) overlap on processor {processor}")]
    Overlap {
        /// The processor.
        processor: usize,
        /// The earlier task.
        first: String,
        /// Its start.
        first_start: f64,
        /// Its finish.
        first_finish: f64,
        /// The later task.
        second: String,
        /// Its start.
        second_start: f64,
        /// Its finish.
        second_finish: f64,
    },
    /// A task starts before its predecessor's data can be there.
    #[error("task `{task}` starts at {start} on processor {processor}, but the data of its predecessor `{pred}` arrive at {ready} at the earliest")]
    Precedence {
        /// The task's name.
        task: String,
        /// Processor of the offending copy.
        processor: usize,
        /// Its start time.
        start: f64,
        /// The predecessor's name.
        pred: String,
        /// Earliest arrival of the predecessor's data on that processor.
        ready: f64,
    },
}

/// Checks a schedule against a graph: every task placed; every slot lasts the task's cost and
/// starts at a time >= 0; no two slots of one processor overlap; every copy of every task starts
/// after each predecessor's data are available on its processor, i.e. after
/// `min over the predecessor's copies of (finish + comm if on another processor, finish if on
/// the same one)`, where `comm` is the summed communication cost of the edges between the two
/// nodes ([`TaskGraph::preds`]). Times are compared with the tolerance [`EPS`].
pub fn verify(g: &TaskGraph, s: &Schedule) -> Result<(), ScheduleError> {
    let n = g.len();
    let name = |t: NodeId| g.node(t).name.clone();
    let mut copies: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for (p, slots) in s.processors.iter().enumerate() {
        for sl in slots {
            if sl.task >= n {
                return Err(ScheduleError::UnknownTask {
                    processor: p,
                    task: sl.task,
                    len: n,
                });
            }
            let cost = g.node(sl.task).cost;
            let ok = sl.start.is_finite()
                && sl.finish.is_finite()
                && le(0.0, sl.start)
                && (sl.finish - sl.start - cost).abs() <= EPS * (1.0 + sl.finish.abs());
            if !ok {
                return Err(ScheduleError::BadDuration {
                    task: name(sl.task),
                    processor: p,
                    start: sl.start,
                    finish: sl.finish,
                    cost,
                });
            }
            copies[sl.task].push((p, sl.finish));
        }
        let mut order: Vec<&Slot> = slots.iter().collect();
        order.sort_by(|a, b| {
            a.start
                .total_cmp(&b.start)
                .then(a.finish.total_cmp(&b.finish))
        });
        for w in order.windows(2) {
            if !le(w[0].finish, w[1].start) {
                return Err(ScheduleError::Overlap {
                    processor: p,
                    first: name(w[0].task),
                    first_start: w[0].start,
                    first_finish: w[0].finish,
                    second: name(w[1].task),
                    second_start: w[1].start,
                    second_finish: w[1].finish,
                });
            }
        }
    }
    if let Some(t) = (0..n).find(|&t| copies[t].is_empty()) {
        return Err(ScheduleError::Missing { task: name(t) });
    }
    for (p, sl) in s.slots() {
        for &(q, comm) in g.preds(sl.task) {
            let ready = arrival(&copies[q], p, comm);
            if !le(ready, sl.start) {
                return Err(ScheduleError::Precedence {
                    task: name(sl.task),
                    processor: p,
                    start: sl.start,
                    pred: name(q),
                    ready,
                });
            }
        }
    }
    Ok(())
}

/// Earliest arrival on processor `p` of the data of a task with these copies
/// `(processor, finish)`, when the edge costs `comm` between processors.
pub(crate) fn arrival(copies: &[(usize, f64)], p: usize, comm: f64) -> f64 {
    copies
        .iter()
        .map(|&(q, f)| if q == p { f } else { f + comm })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_graph::{GraphBuilder, Node};

    /// ```text
    /// a(2) --3--> c(1)
    /// b(1) --1--> c
    /// ```
    fn graph() -> TaskGraph {
        let mut b = GraphBuilder::new();
        let a = b.add_node(Node::new("a", "").with_cost(2.0)).unwrap();
        let bb = b.add_node(Node::new("b", "").with_cost(1.0)).unwrap();
        let c = b.add_node(Node::new("c", "").with_cost(1.0)).unwrap();
        b.add_edge(a, 0, c, 0, 3.0).unwrap();
        b.add_edge(bb, 0, c, 1, 1.0).unwrap();
        b.build().unwrap()
    }

    fn slot(task: NodeId, start: f64, cost: f64) -> Slot {
        Slot {
            task,
            start,
            finish: start + cost,
        }
    }

    #[test]
    fn valid_schedules_pass() {
        let g = graph();
        // c with a on P0: waits for b's data (1 + 1 = 2) and a's finish (2).
        let s = Schedule {
            processors: vec![
                vec![slot(0, 0.0, 2.0), slot(2, 2.0, 1.0)],
                vec![slot(1, 0.0, 1.0)],
            ],
        };
        verify(&g, &s).unwrap();
        assert_eq!(s.makespan(), 3.0);
        assert!(!s.has_duplicates());
        // Within the tolerance.
        let s = Schedule {
            processors: vec![
                vec![slot(0, 0.0, 2.0), slot(2, 2.0 - 1e-12, 1.0)],
                vec![slot(1, 0.0, 1.0)],
            ],
        };
        verify(&g, &s).unwrap();
    }

    #[test]
    fn communication_delay_is_enforced() {
        let g = graph();
        // c on P1 must wait for a's data: 2 + 3 = 5.
        let s = Schedule {
            processors: vec![
                vec![slot(0, 0.0, 2.0)],
                vec![slot(1, 0.0, 1.0), slot(2, 4.0, 1.0)],
            ],
        };
        match verify(&g, &s) {
            Err(ScheduleError::Precedence {
                task, pred, ready, ..
            }) => {
                assert_eq!((task.as_str(), pred.as_str(), ready), ("c", "a", 5.0));
            }
            other => panic!("{other:?}"),
        }
        let ok = Schedule {
            processors: vec![
                vec![slot(0, 0.0, 2.0)],
                vec![slot(1, 0.0, 1.0), slot(2, 5.0, 1.0)],
            ],
        };
        verify(&g, &ok).unwrap();
    }

    #[test]
    fn a_duplicate_on_the_same_processor_satisfies_the_edge() {
        let g = graph();
        // a runs on P0 and again on P1, so c on P1 needs no message from P0.
        let s = Schedule {
            processors: vec![
                vec![slot(0, 0.0, 2.0)],
                vec![slot(1, 0.0, 1.0), slot(0, 1.0, 2.0), slot(2, 3.0, 1.0)],
            ],
        };
        verify(&g, &s).unwrap();
        assert!(s.has_duplicates());
        assert_eq!(s.num_slots(), 4);
    }

    #[test]
    fn faults_are_named() {
        let g = graph();
        let missing = Schedule {
            processors: vec![vec![slot(0, 0.0, 2.0), slot(2, 2.0, 1.0)]],
        };
        assert_eq!(
            verify(&g, &missing),
            Err(ScheduleError::Missing { task: "b".into() })
        );
        let overlap = Schedule {
            processors: vec![vec![
                slot(0, 0.0, 2.0),
                slot(1, 1.0, 1.0),
                slot(2, 3.0, 1.0),
            ]],
        };
        let e = verify(&g, &overlap).unwrap_err();
        assert!(
            matches!(&e, ScheduleError::Overlap { first, second, .. } if first == "a" && second == "b"),
            "{e}"
        );
        assert!(e.to_string().contains("overlap on processor 0"));
        let short = Schedule {
            processors: vec![vec![
                slot(0, 0.0, 1.0),
                slot(1, 1.0, 1.0),
                slot(2, 3.0, 1.0),
            ]],
        };
        assert!(matches!(
            verify(&g, &short),
            Err(ScheduleError::BadDuration { .. })
        ));
        let unknown = Schedule {
            processors: vec![vec![slot(7, 0.0, 1.0)]],
        };
        assert!(matches!(
            verify(&g, &unknown),
            Err(ScheduleError::UnknownTask { task: 7, .. })
        ));
    }
}
