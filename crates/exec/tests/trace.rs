//! The profile's records: with profiling on, every task's record of a cycle lies inside the
//! cycle, names a thread of the executor, and starts after each predecessor's record ends;
//! the workers' wake-up records fall inside the cycle they woke for. With profiling off,
//! nothing is recorded. Workers that wake ahead of paced cycles (`ExecOptions::period`)
//! still give `seq`'s bits, also when a cycle starts long before or after it was expected.

use std::time::Duration;

use fugue_dsp::Registry;
use fugue_exec::trace::{now, TaskTime};
use fugue_exec::{
    build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan, SeqExecutor, SpinBudget,
};
use fugue_graph::TaskGraph;

fn compile(g: &TaskGraph, merge_chains: bool) -> Plan {
    Plan::compile(
        g,
        &Registry::with_builtin_kinds(),
        &CompileOptions {
            sample_rate: 48_000.0,
            block: 64,
            placeholder: false,
            merge_chains,
            ..Default::default()
        },
    )
    .unwrap()
}

fn round_robin(plan: &Plan, threads: usize) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); threads];
    for t in 0..plan.n_units() {
        lists[t % threads].push(t as u32);
    }
    lists
}

fn graphs() -> Vec<(&'static str, TaskGraph)> {
    vec![
        ("rake", fugue_graph::gen::rake(6)),
        ("diamond", fugue_graph::gen::diamond(3)),
        (
            "layered",
            fugue_graph::gen::layered(4, 5, 0.5, Default::default(), 7),
        ),
        // A wide sum: split into groups (tasks of their own) and, at this block, maybe parts.
        ("wide mix", wide_mix(40)),
    ]
}

fn wide_mix(n: usize) -> TaskGraph {
    let mut src = String::new();
    for i in 0..n {
        src += &format!("o{i} = {{ kind: \"osc\", freq: {}, }};\n", 100 + i);
    }
    src += "m = { kind: \"mix\", inputs: ";
    src += &n.to_string();
    src += ", };\ns = { kind: \"sink\", };\nm.1 -> s.1;\n";
    for i in 0..n {
        src += &format!("o{i}.1 -> m.{};\n", i + 1);
    }
    fugue_graph::read::ag::parse(&src, "wide.ag").unwrap()
}

/// Tolerance of an order between time stamps taken on two threads, in ticks (well under a
/// microsecond at any time-stamp counter rate in use).
const SKEW: u64 = 1000;

#[test]
fn records_follow_the_graph_and_stay_inside_the_cycle() {
    for (name, g) in graphs() {
        for merge in [true, false] {
            for kind in ExecutorKind::ALL {
                let threads = if kind == ExecutorKind::Seq { 1 } else { 2 };
                let mut plan = compile(&g, merge);
                let lists = (kind == ExecutorKind::Static).then(|| round_robin(&plan, threads));
                let mut exec = build(kind, &plan, threads, lists, &ExecOptions::default()).unwrap();
                plan.set_profiling(true);
                exec.set_profiling(true);
                assert_eq!(exec.threads(), threads, "{kind}");
                let mut wakes = vec![None; threads];
                let mut times = vec![TaskTime::default(); plan.n_cells()];
                for cycle in 0..50 {
                    let start = now();
                    exec.run_cycle(&mut plan);
                    let end = now();
                    plan.task_times(|c, t| times[c] = t);
                    exec.worker_wakes(&mut wakes);
                    let what = format!("{kind} on {name} (merge {merge}), cycle {cycle}");
                    // Across threads, order holds within SKEW: the time-stamp counters of
                    // two cores agree to tens of nanoseconds (in a VM too), and a counter
                    // read is not ordered with the memory accesses around it.
                    let skew = |w: u32| if w == 0 { 0 } else { SKEW };
                    for (c, t) in times.iter().enumerate() {
                        assert!(
                            start <= t.start + skew(t.worker)
                                && t.start <= t.end
                                && t.end <= end + skew(t.worker),
                            "{what}: cell {c} ran {t:?} outside the cycle {start}..{end}"
                        );
                        assert!((t.worker as usize) < threads, "{what}: cell {c} {t:?}");
                    }
                    for c in 0..plan.n_cells() {
                        let task = plan.cell_task(c);
                        for &s in plan.successors(task) {
                            for d in 0..plan.n_cells() {
                                if plan.cell_task(d) == s as usize {
                                    let slack = if times[c].worker == times[d].worker {
                                        0
                                    } else {
                                        SKEW
                                    };
                                    assert!(
                                        times[c].end <= times[d].start + slack,
                                        "{what}: {} ({:?}) ended after its successor {} ({:?}) started",
                                        plan.name(task),
                                        times[c],
                                        plan.name(s as usize),
                                        times[d]
                                    );
                                }
                            }
                        }
                    }
                    assert_eq!(wakes[0], None, "{what}: the calling thread has no wake-up");
                    // A worker may notice the cycle after its end (it then did nothing in
                    // it), never before its start.
                    for w in wakes.iter().flatten() {
                        assert!(
                            start <= *w + SKEW,
                            "{what}: a worker woke at {w}, before the cycle's start {start} (end {end})"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn nothing_is_recorded_with_profiling_off() {
    let g = fugue_graph::gen::diamond(2);
    let mut plan = compile(&g, true);
    let mut exec = build(ExecutorKind::Ws, &plan, 2, None, &ExecOptions::default()).unwrap();
    for _ in 0..10 {
        exec.run_cycle(&mut plan);
    }
    plan.task_times(|c, t| assert_eq!(t, TaskTime::default(), "cell {c}"));
    let mut wakes = [Some(1), Some(1)];
    exec.worker_wakes(&mut wakes);
    assert_eq!(wakes, [None, None]);
    // On, then off again: the records stop changing.
    plan.set_profiling(true);
    exec.run_cycle(&mut plan);
    let mut first = Vec::new();
    plan.task_times(|_, t| first.push(t));
    assert!(first.iter().all(|t| t.end > 0));
    plan.set_profiling(false);
    exec.run_cycle(&mut plan);
    let mut second = Vec::new();
    plan.task_times(|_, t| second.push(t));
    assert_eq!(first, second);
}

/// The outputs of `cycles` cycles of `exec`, started at the times `gap(k)` after the end
/// of cycle `k - 1`.
fn paced(
    g: &TaskGraph,
    kind: ExecutorKind,
    threads: usize,
    opts: &ExecOptions,
    cycles: usize,
    gap: impl Fn(usize) -> Duration,
) -> Vec<f32> {
    let mut plan = compile(g, true);
    let lists = (kind == ExecutorKind::Static).then(|| round_robin(&plan, threads));
    let mut exec: Box<dyn Executor + Send> = if kind == ExecutorKind::Seq {
        Box::new(SeqExecutor::new())
    } else {
        build(kind, &plan, threads, lists, opts).unwrap()
    };
    let mut out = Vec::new();
    for k in 0..cycles {
        let d = gap(k);
        if !d.is_zero() {
            std::thread::sleep(d);
        }
        exec.run_cycle(&mut plan);
        out.extend_from_slice(plan.output(0));
    }
    out
}

#[test]
fn waking_ahead_keeps_seq_bits_whenever_cycles_start() {
    let opts = ExecOptions {
        period: Some(Duration::from_micros(500)),
        wake_lead: Duration::from_micros(100),
        idle_budget: SpinBudget {
            spins: 100,
            time: Duration::from_micros(50),
        },
        ..ExecOptions::default()
    };
    // On time, early (back to back, and shortly after the last one), late (several
    // periods: the workers sleep until woken), in a fixed irregular pattern.
    let gap = |k: usize| {
        Duration::from_micros(match k % 7 {
            0 | 1 => 450,
            2 => 0,
            3 => 80,
            4 => 1_700,
            5 => 420,
            _ => 30,
        })
    };
    for (name, g) in graphs() {
        let want = paced(&g, ExecutorKind::Seq, 1, &opts, 60, gap);
        for kind in ExecutorKind::ALL {
            for threads in [2, 3] {
                let got = paced(&g, kind, threads, &opts, 60, gap);
                assert!(
                    fugue_testkit::bits::first_difference(&want, &got).is_none(),
                    "{kind} with {threads} threads on {name}: output differs from seq"
                );
            }
        }
    }
}
