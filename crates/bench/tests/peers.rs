//! The probe kind and the rayon peer: the probe accepts every correct executor, rejects
//! executors that break the order or skip or repeat a task; rayon's output is bit-identical
//! to seq's with real DSP.

use fugue_bench::peers::probe::{Probe, PROBE_KIND};
use fugue_bench::peers::rayon_dag::RayonDag;
use fugue_exec::{build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan, SeqExecutor};

fn empty_plan(g: &fugue_graph::TaskGraph) -> (Probe, fugue_graph::TaskGraph, Plan) {
    let (probe, empty) = Probe::new(g);
    let plan = Plan::compile(
        &empty,
        &Probe::registry(),
        &CompileOptions {
            sample_rate: 48_000.0,
            block: 1,
            placeholder: false,
            merge_chains: true,
            ..Default::default()
        },
    )
    .unwrap();
    (probe, empty, plan)
}

fn cycles(e: &mut dyn Executor, plan: &mut Plan, probe: &Probe, n: usize) {
    for _ in 0..n {
        probe.begin_cycle();
        e.run_cycle(plan);
    }
}

#[test]
fn rewrite_keeps_shape_and_names() {
    let g = fugue_graph::gen::diamond(3);
    let (_probe, empty, plan) = empty_plan(&g);
    assert_eq!(empty.len(), g.len());
    assert_eq!(empty.edges().len(), g.edges().len());
    for v in 0..g.len() {
        assert_eq!(empty.node(v).name, g.node(v).name);
        assert_eq!(empty.node(v).kind, PROBE_KIND);
    }
    assert_eq!(plan.len(), g.len());
}

#[test]
fn probe_accepts_correct_executors() {
    for g in [
        fugue_graph::gen::diamond(4),
        fugue_graph::gen::rake(10),
        fugue_graph::gen::line(30),
    ] {
        let (probe, _empty, mut plan) = empty_plan(&g);
        cycles(&mut SeqExecutor::new(), &mut plan, &probe, 50);
        for kind in [ExecutorKind::Ws, ExecutorKind::Share, ExecutorKind::Levels] {
            let mut e = build(kind, &plan, 2, None, &ExecOptions::default()).unwrap();
            cycles(e.as_mut(), &mut plan, &probe, 300);
        }
        let mut r = RayonDag::new(&plan, 2).unwrap();
        cycles(&mut r, &mut plan, &probe, 300);
        assert_eq!(probe.check_cycle(), Ok(()));
        assert_eq!(probe.cycles(), 50 + 4 * 300);
    }
}

/// Runs the tasks in reverse topological order: successors before predecessors.
struct Reversed;
impl Executor for Reversed {
    fn run_cycle(&mut self, plan: &mut Plan) {
        for i in (0..plan.len()).rev() {
            // SAFETY: one thread, `&mut Plan`: no data race (the order is wrong on purpose,
            // which only makes the DSP compute with stale inputs).
            unsafe { plan.run_task(i) };
        }
    }
}

/// Skips one task in one cycle.
struct SkipOnce(usize, bool);
impl Executor for SkipOnce {
    fn run_cycle(&mut self, plan: &mut Plan) {
        for i in 0..plan.len() {
            if i == self.0 && !self.1 {
                self.1 = true;
                continue;
            }
            // SAFETY: topological order on one thread, as SeqExecutor.
            unsafe { plan.run_task(i) };
        }
    }
}

/// Runs one task twice in a cycle.
struct Twice(usize);
impl Executor for Twice {
    fn run_cycle(&mut self, plan: &mut Plan) {
        for i in 0..plan.len() {
            // SAFETY: topological order on one thread, as SeqExecutor.
            unsafe { plan.run_task(i) };
            if i == self.0 {
                // SAFETY: as above.
                unsafe { plan.run_task(i) };
            }
        }
    }
}

#[test]
fn probe_rejects_wrong_order() {
    let g = fugue_graph::gen::line(5);
    let (probe, _e, mut plan) = empty_plan(&g);
    cycles(&mut SeqExecutor::new(), &mut plan, &probe, 3);
    assert_eq!(probe.result(), Ok(()));
    cycles(&mut Reversed, &mut plan, &probe, 1);
    let err = probe.check_cycle().unwrap_err();
    assert_eq!(err.cycle, 4);
    assert!(err.errors >= 1);
    assert!(err.to_string().contains("cycle 4"), "{err}");
}

#[test]
fn probe_rejects_skipped_task_in_a_middle_cycle() {
    let g = fugue_graph::gen::rake(3);
    let (probe, _e, mut plan) = empty_plan(&g);
    // The sink is skipped in cycle 1 and runs in the next cycles: its lagging counter gives
    // it away at its next run (cycle 2), even though the last cycle is complete, and names
    // the cycle it missed.
    let sink = plan.len() - 1;
    assert!(plan.successors(sink).is_empty());
    cycles(&mut SkipOnce(sink, false), &mut plan, &probe, 5);
    let err = probe.check_cycle().unwrap_err();
    assert_eq!(err.cycle, 1);
    assert_eq!(err.node, plan.node_of(sink));
}

#[test]
fn probe_rejects_task_never_run() {
    let g = fugue_graph::gen::rake(3);
    let (probe, _e, mut plan) = empty_plan(&g);
    let sink = plan.len() - 1;
    cycles(&mut SeqExecutor::new(), &mut plan, &probe, 2);
    cycles(&mut SkipOnce(sink, false), &mut plan, &probe, 1);
    assert_eq!(probe.result(), Ok(()), "nothing ran out of order yet");
    let err = probe.check_cycle().unwrap_err();
    assert_eq!((err.cycle, err.node), (3, plan.node_of(sink)));
}

#[test]
fn probe_rejects_task_run_twice() {
    let g = fugue_graph::gen::diamond(2);
    let (probe, _e, mut plan) = empty_plan(&g);
    cycles(&mut Twice(3), &mut plan, &probe, 2);
    let err = probe.check_cycle().unwrap_err();
    assert_eq!(err.cycle, 1);
    assert_eq!(err.name, g.node(plan.node_of(3)).name);
}

#[test]
fn rayon_output_is_bit_identical_to_seq() {
    let g = fugue_graph::gen::diamond(3);
    let reg = fugue_dsp::Registry::with_builtin_kinds();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block: 64,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut a = Plan::compile(&g, &reg, &opts).unwrap();
    let mut b = Plan::compile(&g, &reg, &opts).unwrap();
    let mut seq = SeqExecutor::new();
    let mut r = RayonDag::new(&b, 2).unwrap();
    for _ in 0..200 {
        seq.run_cycle(&mut a);
        r.run_cycle(&mut b);
        for c in 0..a.n_outputs() {
            let (x, y) = (a.output(c), b.output(c));
            assert!(x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()));
            assert!(x.iter().any(|&s| s != 0.0));
        }
    }
}

#[test]
fn edge_list_lists_every_distinct_edge() {
    let g = fugue_graph::gen::diamond(2);
    let (_p, _e, plan) = empty_plan(&g);
    let text = fugue_bench::peers::edge_list(&plan);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("fugue-dag 1"));
    let head: Vec<usize> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(head[0], plan.len());
    let edges: Vec<(usize, usize)> = lines
        .map(|l| {
            let mut it = l.split(' ').map(|x| x.parse::<usize>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect();
    assert_eq!(edges.len(), head[1]);
    for (a, b) in edges {
        assert!(a < b && plan.successors(a).contains(&(b as u32)));
    }
}
