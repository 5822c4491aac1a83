//! Every parallel executor produces audio bit-identical to the sequential one, for 1 to 4
//! threads, on every graph of the corpus; a panicking node is silenced and reported; many
//! cycles run without deadlock or lost wake-up.

use std::path::PathBuf;

use fugue_dsp::Registry;
use fugue_exec::SpinBudget;
use fugue_exec::{build, CompileOptions, ExecOptions, Executor, ExecutorKind, Plan, SeqExecutor};
use fugue_graph::TaskGraph;

mod common;

/// The corpus's `.ag` files, sorted; `None` (after saying so) when the corpus is not there.
fn corpus() -> Option<Vec<PathBuf>> {
    let dir = fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), "ag", "corpus executors")?;
    Some(fugue_testkit::corpus::files(&dir, "ag"))
}

/// Round-robin lists over the topological order: a valid static schedule for any plan.
fn round_robin(plan: &Plan, threads: usize) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); threads];
    for t in 0..plan.n_units() {
        lists[t % threads].push(t as u32);
    }
    lists
}

/// The compile options of these tests: 8 kHz, `block` frames, chains merged or not.
fn copts(block: usize, merge_chains: bool) -> CompileOptions {
    CompileOptions {
        sample_rate: 8000.0,
        block,
        placeholder: false,
        merge_chains,
        ..Default::default()
    }
}

fn render(
    g: &TaskGraph,
    kind: ExecutorKind,
    threads: usize,
    cycles: usize,
    opts: &ExecOptions,
    merge_chains: bool,
) -> Vec<Vec<f32>> {
    render_at(g, kind, threads, cycles, opts, merge_chains, 64)
}

fn render_at(
    g: &TaskGraph,
    kind: ExecutorKind,
    threads: usize,
    cycles: usize,
    opts: &ExecOptions,
    merge_chains: bool,
    block: usize,
) -> Vec<Vec<f32>> {
    let reg = Registry::with_builtin_kinds();
    let copts = copts(block, merge_chains);
    let mut plan = Plan::compile(g, &reg, &copts).expect("compiles");
    let lists = (kind == ExecutorKind::Static).then(|| round_robin(&plan, threads));
    let mut exec = build(kind, &plan, threads, lists, opts).expect("builds");
    let mut out = vec![Vec::new(); plan.n_outputs()];
    for _ in 0..cycles {
        exec.run_cycle(&mut plan);
        for (c, o) in out.iter_mut().enumerate() {
            o.extend_from_slice(plan.output(c));
        }
    }
    out
}

fn quick() -> ExecOptions {
    // Short budgets: many executors are alive at once on few cores in the test run.
    ExecOptions {
        idle_budget: SpinBudget {
            spins: 100,
            time: std::time::Duration::from_micros(50),
        },
        steal_budget: SpinBudget {
            spins: 100,
            time: std::time::Duration::from_micros(50),
        },
        ..ExecOptions::default()
    }
}

#[test]
fn every_executor_matches_seq_bit_for_bit_on_the_corpus() {
    let Some(files) = corpus() else {
        return;
    };
    let opts = quick();
    let mut checked = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(g) = fugue_graph::read_file(f, None) else {
            continue;
        };
        // The 300-node graphs are checked on every executor but with fewer thread counts.
        let big = g.len() > 200;
        // The random-small set is large: check a rotating subset of (executor, threads).
        let reference = render(&g, ExecutorKind::Seq, 1, 3, &opts, true);
        for kind in ExecutorKind::ALL
            .into_iter()
            .filter(|k| *k != ExecutorKind::Seq)
        {
            for threads in 1..=4 {
                let small_set = f.to_string_lossy().contains("random-small");
                if small_set && !(i + threads + kind as usize).is_multiple_of(6) {
                    continue;
                }
                if big && threads != 2 && threads != 3 {
                    continue;
                }
                // Chains merged into units (the default) or one unit per task, alternately.
                let merge = (i + threads).is_multiple_of(2);
                let got = render(&g, kind, threads, 3, &opts, merge);
                fugue_testkit::bits::assert_same_channels(
                    &got,
                    &reference,
                    &format!(
                        "{} with {kind} on {threads} threads (chains merged: {merge}) against seq",
                        f.display()
                    ),
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "checked {checked}");
}

/// Every executor matches seq bit for bit on generated graphs of each shape of the corpus
/// (line, diamond, rake, random, layered): checked in every clone, with or without the corpus.
#[test]
fn every_executor_matches_seq_bit_for_bit_on_generated_graphs() {
    use fugue_graph::gen::{self, CostRange};
    let costs = CostRange { lo: 1.0, hi: 5.0 };
    let graphs = [
        ("line 40", gen::line(40)),
        ("diamond 3", gen::diamond(3)),
        ("rake 9", gen::rake(9)),
        ("random 60", gen::random_dag(60, 0.08, costs, 7)),
        ("layered 6x8", gen::layered(6, 8, 0.3, costs, 3)),
    ];
    let opts = quick();
    let mut checked = 0;
    for (i, (name, g)) in graphs.iter().enumerate() {
        for block in [64, 512] {
            let reference = render_at(g, ExecutorKind::Seq, 1, 3, &opts, true, block);
            assert!(
                reference.iter().flatten().any(|&x| x != 0.0),
                "{name}: seq renders silence, a comparison would prove little"
            );
            for kind in ExecutorKind::ALL
                .into_iter()
                .filter(|k| *k != ExecutorKind::Seq)
            {
                for threads in 1..=4 {
                    let merge = (i + threads).is_multiple_of(2);
                    let got = render_at(g, kind, threads, 3, &opts, merge, block);
                    fugue_testkit::bits::assert_same_channels(
                        &got,
                        &reference,
                        &format!("{name} at {block} frames with {kind} on {threads} threads (chains merged: {merge}) against seq"),
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 5 * 2 * 4 * 6, "checked {checked}");
}

/// At 512 frames the wide joins of the corpus that are not sums split into groups (8 or more
/// edges into a few ports of a `mix`) are split by frames into units run on different
/// threads: every executor still matches seq (which runs each task whole) bit for bit.
#[test]
fn wide_joins_split_by_frames_match_seq_bit_for_bit() {
    let Some(files) = corpus() else {
        return;
    };
    let reg = Registry::with_builtin_kinds();
    let opts = quick();
    let mut split_graphs = 0;
    for f in &files {
        let Ok(g) = fugue_graph::read_file(f, None) else {
            continue;
        };
        let copts = copts(512, true);
        let Ok(plan) = Plan::compile(&g, &reg, &copts) else {
            continue;
        };
        let split = (0..plan.n_units()).any(|u| plan.unit_part(u).1 > 1);
        if !split || split_graphs >= 12 {
            continue;
        }
        split_graphs += 1;
        let reference = render_at(&g, ExecutorKind::Seq, 1, 3, &opts, true, 512);
        for kind in ExecutorKind::ALL
            .into_iter()
            .filter(|k| *k != ExecutorKind::Seq)
        {
            for threads in 1..=4 {
                let got = render_at(&g, kind, threads, 3, &opts, true, 512);
                fugue_testkit::bits::assert_same_channels(
                    &got,
                    &reference,
                    &format!(
                        "{} with {kind} on {threads} threads at 512 frames against seq",
                        f.display()
                    ),
                );
            }
        }
    }
    assert!(
        split_graphs >= 3,
        "only {split_graphs} corpus graphs have a split join"
    );
}

/// A sum split into groups (a `mix` of 20 ports, each fed by an oscillator of its own) at a
/// block of `SPLIT_GROUP_MIN_FRAMES` has its groups and the mix split by frames as well (and
/// not one frame-part unit below it): every executor matches seq bit for bit.
#[test]
fn split_sums_split_by_frames_match_seq_bit_for_bit() {
    use fugue_exec::{SPLIT_GROUP_MIN_FRAMES, SPLIT_PARTS};
    let mut src = String::from(
        "m = { kind: \"mix\", in: 20, volume: 0.3, };\nout = { kind: \"sink\", };\nm.1 -> out.1;\n",
    );
    for i in 1..=20 {
        src += &format!(
            "o{i} = {{ kind: \"osc\", freq: {}, }};\no{i}.1 -> m.{i};\n",
            40.0 + 17.3 * i as f64
        );
    }
    let g = fugue_graph::read::ag::parse(&src, "split-sums.ag").unwrap();
    let reg = Registry::with_builtin_kinds();
    let parts = |block: usize| -> Vec<(String, usize)> {
        let plan = Plan::compile(&g, &reg, &copts(block, true)).unwrap();
        (0..plan.n_units())
            .filter(|&u| plan.unit_part(u).1 > 1)
            .map(|u| {
                let tasks = plan.unit_tasks(u);
                assert_eq!(tasks.len(), 1, "a frame part is one task");
                (
                    plan.name(tasks[0] as usize).to_string(),
                    plan.unit_part(u).1,
                )
            })
            .collect()
    };
    let split = parts(SPLIT_GROUP_MIN_FRAMES);
    let mut names: Vec<&str> = split.iter().map(|(n, _)| n.as_str()).collect();
    names.dedup();
    // The groups of ports 1-8 and 9-16 (summed into m[1-16]), of 17-20, and the mix.
    assert_eq!(names, ["m[1-8]", "m[17-20]", "m[1-16]", "m"], "{split:?}");
    assert!(split.iter().all(|&(_, p)| p == SPLIT_PARTS));
    assert_eq!(split.len(), 4 * SPLIT_PARTS);
    assert!(parts(SPLIT_GROUP_MIN_FRAMES - 16).is_empty());

    let opts = quick();
    let block = SPLIT_GROUP_MIN_FRAMES;
    let reference = render_at(&g, ExecutorKind::Seq, 1, 3, &opts, true, block);
    assert!(reference[0].iter().any(|&x| x != 0.0));
    for kind in ExecutorKind::ALL
        .into_iter()
        .filter(|k| *k != ExecutorKind::Seq)
    {
        for threads in 1..=4 {
            let got = render_at(&g, kind, threads, 3, &opts, true, block);
            fugue_testkit::bits::assert_same_channels(
                &got,
                &reference,
                &format!(
                    "split sums with {kind} on {threads} threads at {block} frames against seq"
                ),
            );
        }
    }
}

#[test]
fn a_panicking_node_is_silenced_and_the_engine_goes_on() {
    let reg = fugue_testkit::bomb::registry(|cycle| cycle.is_multiple_of(2));
    let g = fugue_graph::read::ag::parse(
        "o = { kind: \"osc\", freq: 440, }; b = { kind: \"bomb\", }; o2 = { kind: \"osc\", freq: 440, };\n\
         s = { kind: \"sink\", }; o.1 -> b.1; b.1 -> s.1; o2.1 -> s.2;",
        "bomb.ag",
    )
    .unwrap();
    for kind in ExecutorKind::ALL {
        eprintln!("panic test: {kind}");
        let mut plan = Plan::compile(&g, &reg, &copts(32, true)).unwrap();
        let lists = (kind == ExecutorKind::Static).then(|| round_robin(&plan, 2));
        let mut exec = build(kind, &plan, 2, lists, &quick()).unwrap();
        for cycle in 0..50 {
            exec.run_cycle(&mut plan);
            // The bomb explodes on cycle 1: its output (channel 0) is silence then.
            if cycle == 1 {
                assert!(plan.output(0).iter().all(|&x| x == 0.0), "{kind}");
            }
            assert!(
                plan.output(1).iter().any(|&x| x != 0.0),
                "{kind}: the rest goes on"
            );
        }
        let panics = plan.take_panics();
        assert_eq!(panics.len(), 1, "{kind}: reported once");
        assert!(panics[0].message.contains("boom"), "{kind}");
        assert!(plan.take_panics().is_empty());
    }
}

#[test]
fn many_cycles_with_parking_between_them() {
    // Idle gaps longer than the spin budget make workers park every cycle: exercises the
    // sleep/wake protocol (a lost wake-up would hang this test).
    let g = fugue_graph::gen::diamond(3);
    let opts = ExecOptions {
        idle_budget: SpinBudget::NONE,
        steal_budget: SpinBudget {
            spins: 10,
            time: std::time::Duration::from_micros(5),
        },
        ..ExecOptions::default()
    };
    let reference = render(&g, ExecutorKind::Seq, 1, 200, &opts, true);
    for kind in ExecutorKind::ALL {
        for threads in [2, 3] {
            let got = render(&g, kind, threads, 200, &opts, threads == 2);
            fugue_testkit::bits::assert_same_channels(
                &got,
                &reference,
                &format!("{kind} x{threads}"),
            );
        }
    }
}

#[test]
fn static_schedule_errors() {
    let g = fugue_graph::gen::rake(2);
    let reg = Registry::with_builtin_kinds();
    let plan = Plan::compile(&g, &reg, &CompileOptions::default()).unwrap();
    let n = plan.n_units() as u32;
    let all: Vec<u32> = (0..n).collect();
    assert!(build(
        ExecutorKind::Static,
        &plan,
        1,
        Some(vec![all.clone()]),
        &quick()
    )
    .is_ok());
    let mut rev = all.clone();
    rev.reverse();
    let e = build(ExecutorKind::Static, &plan, 1, Some(vec![rev]), &quick())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("deadlocks"), "{e}");
    let e = build(
        ExecutorKind::Static,
        &plan,
        2,
        Some(vec![all.clone(), vec![0]]),
        &quick(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("twice"), "{e}");
    let e = build(
        ExecutorKind::Static,
        &plan,
        1,
        Some(vec![all[1..].to_vec()]),
        &quick(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("missing"), "{e}");
    assert!(build(ExecutorKind::Static, &plan, 1, None, &quick()).is_err());
    let _ = SeqExecutor::new();
}

/// A million cycles of each executor on a small diamond and on a rake with a wide join (9
/// predecessors: group counters), at a one-frame block, with short budgets so that workers
/// keep parking and waking: a deadlock or a lost wake-up would hang.
/// 20-50 s on two cores (CI runs it).
#[test]
fn a_million_cycles_without_deadlock() {
    for g in [fugue_graph::gen::diamond(2), fugue_graph::gen::rake(9)] {
        stress(&g);
    }
}

fn stress(g: &TaskGraph) {
    let reg = Registry::with_builtin_kinds();
    let opts = ExecOptions {
        idle_budget: SpinBudget {
            spins: 20,
            time: std::time::Duration::from_micros(2),
        },
        steal_budget: SpinBudget {
            spins: 20,
            time: std::time::Duration::from_micros(2),
        },
        ..ExecOptions::default()
    };
    let cycles: usize = std::env::var("FUGUE_STRESS_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    for kind in ExecutorKind::ALL
        .into_iter()
        .filter(|k| *k != ExecutorKind::Seq)
    {
        let mut plan = Plan::compile(
            g,
            &reg,
            &CompileOptions {
                sample_rate: 48_000.0,
                block: 1,
                placeholder: false,
                merge_chains: true,
                ..Default::default()
            },
        )
        .unwrap();
        let mut reference = Plan::compile(
            g,
            &reg,
            &CompileOptions {
                sample_rate: 48_000.0,
                block: 1,
                placeholder: false,
                merge_chains: true,
                ..Default::default()
            },
        )
        .unwrap();
        let lists = (kind == ExecutorKind::Static).then(|| round_robin(&plan, 2));
        let mut exec = build(kind, &plan, 2, lists, &opts).unwrap();
        let mut seq = SeqExecutor::new();
        let start = std::time::Instant::now();
        for c in 0..cycles {
            exec.run_cycle(&mut plan);
            fugue_exec::Executor::run_cycle(&mut seq, &mut reference);
            assert_eq!(plan.output(0), reference.output(0), "{kind}: cycle {c}");
        }
        eprintln!(
            "{kind} ({} nodes): {cycles} cycles in {:.1} s",
            g.len(),
            start.elapsed().as_secs_f64()
        );
    }
}

/// Every corpus graph with a wide sum (a `mix` of more than 8 ports: rateau101's 33 branches,
/// the 300-node random graphs' mixes of dozens of inputs) renders the same samples, bit for
/// bit, with its sums split into groups (the default) and with every sum compiled whole.
#[test]
fn split_sums_match_whole_sums_on_the_corpus() {
    let Some(files) = corpus() else {
        return;
    };
    let (split_reg, whole_reg) = (
        Registry::with_builtin_kinds(),
        common::whole_sums_registry(),
    );
    let copts = copts(64, true);
    let mut checked = 0;
    for f in &files {
        let Ok(g) = fugue_graph::read_file(f, None) else {
            continue;
        };
        let (Ok(mut split), Ok(mut whole)) = (
            Plan::compile(&g, &split_reg, &copts),
            Plan::compile(&g, &whole_reg, &copts),
        ) else {
            continue;
        };
        if split.len() == whole.len() {
            continue; // no wide sum
        }
        assert_eq!(whole.len(), g.len());
        for _ in 0..3 {
            SeqExecutor::new().run_cycle(&mut split);
            SeqExecutor::new().run_cycle(&mut whole);
            for c in 0..split.n_outputs() {
                assert!(
                    fugue_testkit::bits::same_bits(split.output(c), whole.output(c)),
                    "{}: channel {c} differs",
                    f.display()
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} corpus graphs have a wide sum");
    eprintln!("{checked} corpus graphs with wide sums checked");
}

/// A [`fugue_exec::Tenant`] of each graph, with room for runs of `batch` cycles, and a plan
/// of each for the sequential executor.
fn tenants_and_seqs(
    graphs: &[TaskGraph],
    reg: &Registry,
    copts: &CompileOptions,
    batch: usize,
) -> (Vec<fugue_exec::Tenant>, Vec<Plan>) {
    let tenants = graphs
        .iter()
        .map(|g| {
            let mut t = fugue_exec::Tenant::new(Plan::compile(g, reg, copts).unwrap());
            t.set_batch(batch);
            t
        })
        .collect();
    let seqs = graphs
        .iter()
        .map(|g| Plan::compile(g, reg, copts).unwrap())
        .collect();
    (tenants, seqs)
}

/// After a run of `ran` cycles: runs each sequential plan that many cycles and checks each
/// tenant's outputs of every cycle (captured, or the plan's after a run of one) against it,
/// bit for bit, and that every cycle is captured.
fn check_run(tenants: &[fugue_exec::Tenant], seqs: &mut [Plan], ran: usize, ctx: &str) {
    for (k, (t, s)) in tenants.iter().zip(seqs.iter_mut()).enumerate() {
        if ran > 1 {
            assert_eq!(t.captured(), ran, "{ctx}: tenant {k}");
        }
        for j in 0..ran {
            SeqExecutor::new().run_cycle(s);
            for ch in 0..s.n_outputs() {
                let got = if ran > 1 {
                    t.captured_output(j, ch)
                } else {
                    t.plan().output(ch)
                };
                assert!(
                    fugue_testkit::bits::same_bits(got, s.output(ch)),
                    "{ctx}: tenant {k}, cycle {j} of the run, channel {ch}"
                );
            }
        }
    }
}

/// The host's shared pool, with each grain (units, whole, balanced, auto), shared and split into
/// partitions, on 1 to 4 threads and 1 to 5 tenants of different shapes: every tenant's output
/// equals its sequential engine's, bit for bit, at every one of 60 cycles, and each cycle runs
/// every tenant exactly once (a tenant run twice or skipped would be a cycle ahead or behind).
#[test]
fn shared_pool_matches_seq_with_every_grain() {
    use fugue_exec::{SharedPool, TenantGrain};
    let reg = Registry::with_builtin_kinds();
    let copts = copts(64, true);
    let shapes = [
        fugue_graph::gen::rake(12),
        fugue_graph::gen::diamond(4),
        fugue_graph::gen::line(9),
        fugue_graph::gen::rake(5),
        fugue_graph::gen::diamond(3),
    ];
    for grain in TenantGrain::ALL {
        for threads in 1..=4 {
            for n in 1..=shapes.len() {
                for partitioned in [false, true] {
                    if partitioned && threads < 2 {
                        continue;
                    }
                    let (mut tenants, mut seqs) = tenants_and_seqs(&shapes[..n], &reg, &copts, 1);
                    let mut pool =
                        SharedPool::new(threads, 4096, true, &ExecOptions::default()).unwrap();
                    pool.set_grain(grain);
                    if partitioned {
                        // Two groups: the first thread alone, the others together.
                        let groups: Vec<usize> = (0..threads).map(|w| usize::from(w > 0)).collect();
                        pool.set_partition(&groups);
                        for (k, t) in tenants.iter_mut().enumerate() {
                            t.set_group(k % 2);
                        }
                    }
                    for c in 0..60 {
                        pool.run_cycle(&mut tenants);
                        for (k, (t, s)) in tenants.iter_mut().zip(seqs.iter_mut()).enumerate() {
                            SeqExecutor::new().run_cycle(s);
                            let busy = t.take_busy_ticks();
                            assert!(
                                busy > 0,
                                "{grain:?} T={threads} N={n}: tenant {k} ran no time"
                            );
                            for ch in 0..s.n_outputs() {
                                assert!(
                                    fugue_testkit::bits::same_bits(t.plan().output(ch), s.output(ch)),
                                    "{grain:?} T={threads} N={n} partitioned={partitioned}: tenant {k}, cycle {c}, channel {ch}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn shared_pool_runs_of_several_cycles_match_seq() {
    use fugue_exec::{SharedPool, TenantGrain};
    let reg = Registry::with_builtin_kinds();
    let copts = copts(64, true);
    let shapes = [
        fugue_graph::gen::rake(12),
        fugue_graph::gen::diamond(4),
        fugue_graph::gen::line(9),
        fugue_graph::gen::rake(5),
    ];
    for grain in TenantGrain::ALL {
        for threads in 1..=3 {
            for n in 1..=shapes.len() {
                for partitioned in [false, true] {
                    if partitioned && (threads < 2 || n < threads) {
                        continue;
                    }
                    let (mut tenants, mut seqs) = tenants_and_seqs(&shapes[..n], &reg, &copts, 5);
                    let mut pool =
                        SharedPool::new(threads, 4096, true, &ExecOptions::default()).unwrap();
                    pool.set_grain(grain);
                    if partitioned {
                        // One group per thread, the tenants dealt round.
                        let groups: Vec<usize> = (0..threads).collect();
                        pool.set_partition(&groups);
                        for (k, t) in tenants.iter_mut().enumerate() {
                            t.set_group(k % threads);
                        }
                    }
                    let mut cycle = 0;
                    let mut several = 0;
                    while cycle < 60 {
                        // Runs of 1 to 7 cycles: more than the capture holds is cut to it.
                        let ran = pool.run_cycles(&mut tenants, 1 + cycle % 7);
                        let ctx = format!(
                            "{grain:?} T={threads} N={n} partitioned={partitioned} cycle {cycle}"
                        );
                        assert!((1..=5).contains(&ran), "{ctx}: ran {ran}");
                        several += usize::from(ran > 1);
                        for (k, t) in tenants.iter_mut().enumerate() {
                            assert!(t.take_busy_ticks() > 0, "{ctx}: tenant {k} ran no time");
                        }
                        check_run(&tenants, &mut seqs, ran, &ctx);
                        cycle += ran;
                    }
                    assert!(
                        several > 0,
                        "{grain:?} T={threads} N={n}: no run of several"
                    );
                }
            }
        }
    }
}

#[test]
fn a_panic_in_a_run_of_several_cycles_ends_the_tenants_run_there() {
    use fugue_exec::{SharedPool, Tenant, TenantGrain};
    // The bomb explodes at its third cycle.
    let reg = fugue_testkit::bomb::registry(|cycle| cycle == 3);
    let g = fugue_graph::read::ag::parse(
        "o = { kind: \"osc\", freq: 440, }; b = { kind: \"bomb\", }; s = { kind: \"sink\", }; o.1 -> b.1; b.1 -> s.1;",
        "bomb.ag",
    )
    .unwrap();
    let reg2 = Registry::with_builtin_kinds();
    let other = fugue_graph::gen::rake(5);
    // Whole (one thread runs the tenant's run) and in parts (its cycles end on any thread).
    for grain in [TenantGrain::Whole, TenantGrain::Units] {
        let mut tenants = vec![
            Tenant::new(Plan::compile(&g, &reg, &copts(32, false)).unwrap()),
            Tenant::new(Plan::compile(&other, &reg2, &copts(32, false)).unwrap()),
        ];
        for t in tenants.iter_mut() {
            t.set_batch(8);
        }
        let mut pool = SharedPool::new(2, 4096, false, &ExecOptions::default()).unwrap();
        pool.set_grain(grain);
        assert_eq!(pool.run_cycles(&mut tenants, 8), 8, "{grain:?}");
        assert_eq!(
            tenants[0].captured(),
            2,
            "{grain:?}: the two cycles before the panic"
        );
        assert!(tenants[0].plan().any_panicked());
        assert_eq!(
            tenants[1].captured(),
            8,
            "{grain:?}: the other graph ran every cycle"
        );
        let panics = tenants[0].plan_mut().take_panics();
        assert_eq!(panics.len(), 1, "{grain:?}: reported once");
    }
}

#[test]
fn a_tenant_with_no_units_in_runs_of_several_cycles() {
    use fugue_exec::{SharedPool, TenantGrain};
    // A graph with no nodes (the host plays it as silence) among others, whole and in parts:
    // every run ends, and it counts every cycle as captured.
    let reg = Registry::with_builtin_kinds();
    let copts = copts(32, true);
    for grain in [
        TenantGrain::Whole,
        TenantGrain::Units,
        TenantGrain::Balanced,
    ] {
        let graphs = [
            fugue_graph::GraphBuilder::new().build().unwrap(),
            fugue_graph::gen::rake(5),
            fugue_graph::GraphBuilder::new().build().unwrap(),
            fugue_graph::gen::line(4),
        ];
        let (mut tenants, mut seqs) = tenants_and_seqs(&graphs, &reg, &copts, 6);
        let mut pool = SharedPool::new(2, 4096, false, &ExecOptions::default()).unwrap();
        pool.set_grain(grain);
        for _ in 0..20 {
            let ran = pool.run_cycles(&mut tenants, 6);
            assert_eq!(ran, 6, "{grain:?}");
            check_run(&tenants, &mut seqs, ran, &format!("{grain:?}"));
        }
    }
}

/// A processor that copies its input to its output after spinning for 20 µs, or 200 µs on
/// the pool's worker 1: a graph that contains it runs ten times slower there than on the
/// calling thread.
struct SlowOnWorker1;

impl fugue_dsp::Processor for SlowOnWorker1 {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let spin = if fugue_exec::trace::worker_index() == 1 {
            200
        } else {
            20
        };
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_micros(spin) {
            std::hint::spin_loop();
        }
        outputs[0].copy_from_slice(inputs[0]);
    }
    fn reset(&mut self) {}
}

/// A node of [`SlowOnWorker1`]: one input, one output.
struct SlowNode;

impl fugue_dsp::DspNode for SlowNode {
    fn inputs(&self) -> usize {
        1
    }
    fn outputs(&self) -> usize {
        1
    }
    fn processor(&self) -> Box<dyn fugue_dsp::Processor> {
        Box::new(SlowOnWorker1)
    }
}

/// Two graphs run whole on two threads, one of which runs them several times slower: the
/// thread that gets ahead asks for the graph the slow one holds, which hands it over (the
/// pool's handovers count it), and every cycle of every graph still equals its sequential
/// engine's, bit for bit, and is captured once.
#[test]
fn a_graph_held_by_a_slow_thread_is_taken_over_by_the_faster_one() {
    use fugue_exec::{SharedPool, TenantGrain};
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        // One core: the worker may never run while the calling thread does.
        eprintln!("skipped: one core");
        return;
    }
    let mut reg = Registry::with_builtin_kinds();
    reg.register(
        "slow1",
        |_: &fugue_dsp::NodeContext<'_>| -> Result<Box<dyn fugue_dsp::DspNode>, fugue_dsp::NodeError> {
            Ok(Box::new(SlowNode))
        },
    );
    let graphs: Vec<TaskGraph> = [440, 660]
        .iter()
        .map(|f| {
            fugue_graph::read::ag::parse(
                &format!(
                    "o = {{ kind: \"osc\", freq: {f}, }}; x = {{ kind: \"slow1\", }}; s = {{ kind: \"sink\", }}; o.1 -> x.1; x.1 -> s.1;"
                ),
                "slow.ag",
            )
            .unwrap()
        })
        .collect();
    let copts = copts(32, false);
    let (mut tenants, mut seqs) = tenants_and_seqs(&graphs, &reg, &copts, 64);
    let mut pool = SharedPool::new(2, 4096, false, &ExecOptions::default()).unwrap();
    pool.set_grain(TenantGrain::Whole);
    // Until a handover, after 4 runs at least (the worker may be slow to start, or kept off
    // its core by the other tests).
    let mut run = 0;
    while run < 4 || (pool.handovers() == 0 && run < 40) {
        let ran = pool.run_cycles(&mut tenants, 64);
        assert_eq!(ran, 64);
        check_run(&tenants, &mut seqs, ran, &format!("run {run}"));
        run += 1;
    }
    assert!(
        pool.handovers() > 0,
        "no graph changed threads in {run} runs of 64 cycles with one thread ten times slower"
    );
}
