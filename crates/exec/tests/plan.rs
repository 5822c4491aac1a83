//! The compiled plan: wiring, ports, parallel edges, rates, panics, reset.

use fugue_dsp::{DspNode, NodeContext, NodeError, Processor, Registry};
use fugue_exec::{CompileError, CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::read::ag::parse;

mod common;

fn opts(rate: f64, block: usize) -> CompileOptions {
    CompileOptions {
        sample_rate: rate,
        block,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    }
}

fn compile(src: &str, rate: f64, block: usize) -> Result<Plan, CompileError> {
    let g = parse(src, "test.ag").unwrap();
    Plan::compile(&g, &Registry::with_builtin_kinds(), &opts(rate, block))
}

/// `g` with every edge into its `mix` moved to the mix's first input port (declared with one
/// input): a join of many edges on one port, which the plan sums itself (a sum of many ports
/// is split into groups instead).
fn one_port_join(g: &fugue_graph::TaskGraph) -> fugue_graph::TaskGraph {
    let j = (0..g.len()).find(|&v| g.node(v).kind == "mix").unwrap();
    let mut b = fugue_graph::GraphBuilder::new();
    for (v, node) in g.nodes().iter().enumerate() {
        let mut node = node.clone();
        if v == j {
            node.declared_inputs = Some(1);
        }
        b.add_node(node).unwrap();
    }
    for e in g.edges() {
        let port = if e.dst == j { 0 } else { e.dst_port };
        b.add_edge(e.src, e.src_port, e.dst, port, e.comm).unwrap();
    }
    b.build().unwrap()
}

fn sine(freq: f64, rate: f64, n: usize) -> f64 {
    (2.0 * std::f64::consts::PI * freq * n as f64 / rate).sin()
}

/// `a` feeds `m` twice, on different ports: summed. A second edge between the same two
/// ports is a mistake the graph refuses (`DuplicateEdge`), wherever the graph comes from.
///
/// ```text
///   a ──1──▶ m.1        a ──▶ n.1
///   a ──1──▶ m.2
/// ```
#[test]
fn parallel_edges_are_distinct_and_summed_by_the_consumer() {
    let src = r#"
        a = { kind: "osc", freq: 1000, volume: 0.25, };
        m = { kind: "mix", };
        n = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> m.1;  a.1 -> m.2;  a.1 -> n.1;
        m.1 -> s.1;  n.1 -> s.2;
    "#;
    let g = parse(src, "test.ag").unwrap();
    let mut b = fugue_graph::GraphBuilder::new();
    for node in g.nodes() {
        b.add_node(node.clone()).unwrap();
    }
    for e in g.edges() {
        b.add_edge(e.src, e.src_port, e.dst, e.dst_port, e.comm)
            .unwrap();
    }
    let n = (0..g.len()).find(|&v| g.node(v).name == "n").unwrap();
    assert!(
        b.add_edge(0, 0, n, 0, 0.0).is_err(),
        "a repeated edge is refused"
    );
    let mut plan = compile(src, 48_000.0, 64).unwrap();
    assert_eq!(plan.n_outputs(), 2);
    let mut ex = SeqExecutor::new();
    for cycle in 0..5 {
        ex.run_cycle(&mut plan);
        for (ch, gain) in [(0, 0.5), (1, 0.25)] {
            for (k, &y) in plan.output(ch).iter().enumerate() {
                let want = gain * sine(1000.0, 48_000.0, cycle * 64 + k);
                assert!(
                    (y as f64 - want).abs() < 1e-6,
                    "cycle {cycle} ch {ch} frame {k}: {y} vs {want}"
                );
            }
        }
    }
}

/// Port numbers count: feeding port 2 of a sink leaves channel 1 silent.
#[test]
fn port_numbers_are_respected() {
    let src = r#"
        a = { kind: "osc", freq: 440, };
        s = { kind: "sink", in: 2, };
        a.1 -> s.2;
    "#;
    let mut plan = compile(src, 48_000.0, 32).unwrap();
    SeqExecutor::new().run_cycle(&mut plan);
    assert!(plan.output(0).iter().all(|&x| x == 0.0));
    assert!(plan.output(1).iter().any(|&x| x != 0.0));
}

/// Outputs are rewritten, not accumulated, from one cycle to the next.
#[test]
fn outputs_do_not_accumulate_across_cycles() {
    let src = r#"
        a = { kind: "osc", freq: 0, phase: 0.25, };
        m = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> m.1;  m.1 -> s.1;
    "#;
    let mut plan = compile(src, 48_000.0, 16).unwrap();
    let mut ex = SeqExecutor::new();
    for _ in 0..10 {
        ex.run_cycle(&mut plan);
        assert!(plan.output(0).iter().all(|&x| (x - 1.0).abs() < 1e-6));
    }
}

/// A diamond: successor lists, activation counts, levels, sources and sinks.
///
/// ```text
///      ┌▶ b ─┐
///   a ─┤     ├▶ d ─▶ s
///      └▶ c ─┘
/// ```
#[test]
fn structure_of_a_diamond() {
    let src = r#"
        a = { kind: "osc", freq: 100, };
        b = { kind: "mod", freq: 3, };
        c = { kind: "mod", freq: 5, };
        d = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> b.1;  a.1 -> c.1;  b.1 -> d.1;  c.1 -> d.2;  d.1 -> s.1;
    "#;
    let plan = compile(src, 48_000.0, 64).unwrap();
    assert_eq!(plan.len(), 5);
    let t = |name: &str| (0..plan.len()).find(|&i| plan.name(i) == name).unwrap();
    let (a, b, c, d, s) = (t("a"), t("b"), t("c"), t("d"), t("s"));
    for i in 0..plan.len() {
        for &j in plan.successors(i) {
            assert!(j as usize > i, "topological order");
        }
    }
    let mut bc = [b as u32, c as u32];
    bc.sort();
    assert_eq!(plan.successors(a), &bc[..]);
    assert_eq!(plan.successors(b), &[d as u32]);
    assert_eq!(plan.initial_count(d), 2);
    assert_eq!(plan.initial_count(a), 0);
    assert_eq!(plan.sources(), &[a as u32]);
    assert_eq!(plan.sinks(), &[s as u32]);
    assert_eq!(plan.n_levels(), 4);
    assert_eq!(plan.level(1), &bc[..]);
    assert_eq!(plan.level_of(s), 3);
    for i in 0..plan.len() {
        assert_eq!(plan.task_of(plan.node_of(i)), i);
    }
}

#[test]
fn chains_become_units() {
    let src = r#"
        a = { kind: "osc", freq: 100, };
        b = { kind: "mod", freq: 3, };
        c = { kind: "mod", freq: 5, };
        e = { kind: "mod", freq: 7, };
        d = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> b.1;  a.1 -> c.1;  c.1 -> e.1;  b.1 -> d.1;  e.1 -> d.2;  d.1 -> s.1;
    "#;
    let plan = compile(src, 48_000.0, 64).unwrap();
    let t =
        |plan: &Plan, name: &str| (0..plan.len()).find(|&i| plan.name(i) == name).unwrap() as u32;
    let (a, b, c, d, e, s) = (
        t(&plan, "a"),
        t(&plan, "b"),
        t(&plan, "c"),
        t(&plan, "d"),
        t(&plan, "e"),
        t(&plan, "s"),
    );
    assert!(plan.merges_chains());
    // a | b | c -> e | d -> s
    assert_eq!(plan.n_units(), 4);
    let u = |plan: &Plan, x: u32| plan.unit_of(x as usize);
    assert_eq!(plan.unit_tasks(u(&plan, a)), &[a]);
    assert_eq!(plan.unit_tasks(u(&plan, c)), &[c, e]);
    assert_eq!(plan.unit_tasks(u(&plan, d)), &[d, s]);
    assert_eq!(u(&plan, e), u(&plan, c));
    assert_eq!(plan.unit_count(u(&plan, d)), 2);
    assert_eq!(plan.unit_count(u(&plan, b)), 1);
    assert_eq!(plan.unit_sources(), &[u(&plan, a) as u32]);
    assert_eq!(plan.unit_sinks(), &[u(&plan, d) as u32]);
    let mut bc = [u(&plan, b) as u32, u(&plan, c) as u32];
    bc.sort();
    assert_eq!(plan.unit_successors(u(&plan, a)), &bc[..]);
    assert_eq!(plan.n_unit_levels(), 3);
    assert_eq!(plan.unit_level(1), &bc[..]);
    let before = plan.layout_id();
    let g = parse(src, "test.ag").unwrap();
    let plan = Plan::compile(
        &g,
        &Registry::with_builtin_kinds(),
        &CompileOptions {
            merge_chains: false,
            ..opts(48_000.0, 64)
        },
    )
    .unwrap();
    assert!(!plan.merges_chains());
    assert_ne!(plan.layout_id(), before);
    assert_eq!(plan.n_units(), plan.len());
    for i in 0..plan.len() {
        assert_eq!(plan.unit_tasks(i), &[i as u32]);
        assert_eq!(plan.unit_successors(i), plan.successors(i));
        assert_eq!(plan.unit_count(i), plan.initial_count(i));
    }
    assert_eq!(plan.n_unit_levels(), plan.n_levels());
}

#[test]
fn unit_structure_is_consistent_on_generated_graphs() {
    let reg = Registry::with_builtin_kinds();
    let graphs = [
        fugue_graph::gen::line(100),
        fugue_graph::gen::diamond(4),
        fugue_graph::gen::rake(33),
        fugue_graph::gen::random_dag(60, 0.08, Default::default(), 7),
    ];
    for (gi, g) in graphs.iter().enumerate() {
        let plan = Plan::compile(g, &reg, &opts(48_000.0, 64)).unwrap();
        let n = plan.n_units();
        // Every task in exactly one unit; units partition the tasks.
        let mut seen = vec![0; plan.len()];
        for u in 0..n {
            let ts = plan.unit_tasks(u);
            assert!(!ts.is_empty());
            for w in ts.windows(2) {
                // Chain: the next task is the only successor, and has one predecessor.
                assert_eq!(plan.successors(w[0] as usize), &[w[1]]);
                assert_eq!(plan.initial_count(w[1] as usize), 1);
            }
            for &t in ts {
                seen[t as usize] += 1;
                assert_eq!(plan.unit_of(t as usize), u);
            }
            for &v in plan.unit_successors(u) {
                assert!(v as usize > u, "units in topological order");
            }
            // Maximal: the last task does not continue into a one-predecessor only successor.
            let last = *ts.last().unwrap() as usize;
            let ss = plan.successors(last);
            assert!(!(ss.len() == 1 && plan.initial_count(ss[0] as usize) == 1));
        }
        assert!(seen.iter().all(|&k| k == 1), "graph {gi}");
        // Counts: number of distinct predecessor units.
        let mut preds = vec![0u32; n];
        for u in 0..n {
            for &v in plan.unit_successors(u) {
                preds[v as usize] += 1;
            }
        }
        for (u, &p) in preds.iter().enumerate() {
            assert_eq!(p, plan.unit_count(u), "graph {gi} unit {u}");
        }
        // Counter slots: simulate one cycle in unit order; each unit becomes ready exactly
        // once, and only after every predecessor unit; no slot counts more than JOIN_FANIN.
        let mut cnt: Vec<u32> = (0..plan.n_slots()).map(|c| plan.slot_initial(c)).collect();
        for c in 0..plan.n_slots() {
            assert!(plan.slot_initial(c) as usize <= fugue_exec::JOIN_FANIN);
            if c >= n {
                assert_ne!(plan.slot_parent(c), fugue_exec::NO_SLOT);
            }
        }
        let mut done_preds = vec![0u32; n];
        let mut ready = vec![false; n];
        for u in 0..n {
            assert!(
                plan.unit_count(u) <= 1 || ready[u],
                "graph {gi} unit {u} ran unready"
            );
            for (k, &sv) in plan.unit_successors(u).iter().enumerate() {
                let sv = sv as usize;
                done_preds[sv] += 1;
                if plan.unit_count(sv) == 1 {
                    ready[sv] = true;
                    continue;
                }
                let mut c = plan.unit_succ_slots(u)[k] as usize;
                loop {
                    cnt[c] -= 1;
                    if cnt[c] != 0 {
                        break;
                    }
                    let parent = plan.slot_parent(c);
                    if parent == fugue_exec::NO_SLOT {
                        assert_eq!(c, sv);
                        assert!(!ready[sv]);
                        assert_eq!(done_preds[sv], plan.unit_count(sv), "graph {gi}: early");
                        ready[sv] = true;
                        break;
                    }
                    cnt[c] = plan.slot_initial(c);
                    c = parent as usize;
                }
            }
        }
        let ug = plan.unit_graph(g, &g.costs());
        assert_eq!(ug.len(), n);
        let total: f64 = g.costs().iter().sum();
        let utotal: f64 = ug.costs().iter().sum();
        assert!((total - utotal).abs() < 1e-6 * total.max(1.0));
    }
    // A mix fed by 33 edges on one port has 33 predecessor units: 9 groups, then 3, then its
    // own counter.
    let rake = one_port_join(&fugue_graph::gen::rake(33));
    let rake = Plan::compile(&rake, &reg, &opts(48_000.0, 64)).unwrap();
    let mix = (0..rake.n_units())
        .find(|&u| rake.unit_count(u) == 33)
        .expect("the mix");
    assert_eq!(rake.slot_initial(mix), 3);
    assert_eq!(rake.n_slots(), rake.n_units() + 9 + 3);
    let line = Plan::compile(&fugue_graph::gen::line(100), &reg, &opts(48_000.0, 64)).unwrap();
    assert_eq!(line.n_units(), 1);
    assert_eq!(line.n_unit_levels(), 1);
}

#[test]
fn resamplers_change_rate_and_block_downstream() {
    let src = r#"
        a = { kind: "osc", freq: 440, };
        r = { kind: "resampler", ratio: "0.5", };
        m = { kind: "mod", freq: 3, };
        u = { kind: "resampler", ratio: "2.", };
        s = { kind: "sink", };
        a.1 -> r.1;  r.1 -> m.1;  m.1 -> u.1;  u.1 -> s.1;
    "#;
    let plan = compile(src, 48_000.0, 512).unwrap();
    let t = |name: &str| (0..plan.len()).find(|&i| plan.name(i) == name).unwrap();
    assert_eq!(plan.task_block(t("m")), 256);
    assert_eq!(plan.task_rate(t("m")), 24_000.0);
    assert_eq!(plan.task_block(t("s")), 512);
    // 511 frames cannot be halved.
    let err = compile(src, 48_000.0, 511).unwrap_err().to_string();
    assert!(
        err.contains("`r`") && err.contains("multiple of 2"),
        "{err}"
    );
}

#[test]
fn mixed_rates_are_refused_naming_the_node() {
    let src = r#"
        a = { kind: "osc", freq: 440, };
        r = { kind: "resampler", ratio: 2, };
        m = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> r.1;  r.1 -> m.1;  a.1 -> m.2;  m.1 -> s.1;
    "#;
    let err = compile(src, 48_000.0, 64).unwrap_err();
    assert!(
        matches!(&err, CompileError::MixedRates { node, .. } if node == "m"),
        "{err}"
    );
    assert!(err.to_string().contains("48000 Hz, 96000 Hz"), "{err}");
}

/// A sink below the engine's rate is converted back: the file keeps the engine's rate.
#[test]
fn a_sink_off_the_engine_rate_is_converted_back() {
    let src = r#"
        a = { kind: "osc", freq: 0, phase: 0.25, };
        r = { kind: "resampler", ratio: 0.5, };
        s = { kind: "sink", };
        a.1 -> r.1;  r.1 -> s.1;
    "#;
    let mut plan = compile(src, 48_000.0, 64).unwrap();
    let mut ex = SeqExecutor::new();
    for _ in 0..10 {
        ex.run_cycle(&mut plan);
    }
    assert_eq!(plan.output(0).len(), 64);
    assert!(
        plan.output(0).iter().all(|&x| (x - 1.0).abs() < 1e-5),
        "{:?}",
        plan.output(0)
    );
}

#[test]
fn unknown_kinds_list_the_known_ones_or_become_placeholders() {
    let src = r#"
        a = { kind: "theremin", };
        b = { kind: "osc", freq: 100, };
        m = { kind: "mix", };
        s = { kind: "sink", };
        a.1 -> m.1;  b.1 -> m.2;  m.1 -> s.1;
    "#;
    let err = compile(src, 48_000.0, 64).unwrap_err().to_string();
    assert!(
        err.contains("`theremin`") && err.contains("biquad, delay, gain") && err.contains("osc"),
        "{err}"
    );
    let g = parse(src, "t.ag").unwrap();
    let o = CompileOptions {
        placeholder: true,
        ..opts(48_000.0, 64)
    };
    let mut plan = Plan::compile(&g, &Registry::with_builtin_kinds(), &o).unwrap();
    assert_eq!(plan.placeholders(), &["a".to_string()]);
    SeqExecutor::new().run_cycle(&mut plan);
    assert!(plan.output(0).iter().any(|&x| x != 0.0));
}

#[test]
fn bad_attributes_name_node_and_attribute() {
    let missing = compile(
        r#"a = { kind: "osc", }; s = { kind: "sink", }; a.1 -> s.1;"#,
        48_000.0,
        64,
    )
    .unwrap_err();
    assert!(
        missing.to_string().contains("`a`") && missing.to_string().contains("`freq`"),
        "{missing}"
    );
    let nan = compile(
        r#"a = { kind: "osc", freq: "loud", }; s = { kind: "sink", }; a.1 -> s.1;"#,
        48_000.0,
        64,
    )
    .unwrap_err();
    assert!(nan.to_string().contains("`loud` is not a number"), "{nan}");
    let lonely = compile(
        r#"a = { kind: "osc", freq: 1, }; s = { kind: "sink", in: 1, };"#,
        48_000.0,
        64,
    )
    .unwrap_err();
    assert!(
        lonely.to_string().contains("`s` (sink) has no input"),
        "{lonely}"
    );
}

/// A kind that panics on its third cycle.
struct Boom(u32);

impl Processor for Boom {
    fn process(&mut self, _inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        self.0 += 1;
        for o in outputs.iter_mut() {
            o.fill(0.5);
        }
        if self.0 >= 3 {
            panic!("boom at cycle {}", self.0);
        }
    }
    fn reset(&mut self) {
        self.0 = 0;
    }
}

struct BoomNode(usize);

impl DspNode for BoomNode {
    fn inputs(&self) -> usize {
        0
    }
    fn outputs(&self) -> usize {
        self.0
    }
    fn processor(&self) -> Box<dyn Processor> {
        Box::new(Boom(0))
    }
}

fn boom(ctx: &NodeContext<'_>) -> Result<Box<dyn DspNode>, NodeError> {
    Ok(Box::new(BoomNode(ctx.outputs)))
}

/// A node whose processor cannot be made: refused (`try_processor`), or panicking.
struct Unmade(bool);

impl DspNode for Unmade {
    fn inputs(&self) -> usize {
        0
    }
    fn outputs(&self) -> usize {
        1
    }
    fn processor(&self) -> Box<dyn Processor> {
        panic!("no instance today")
    }
    fn try_processor(&self) -> Result<Box<dyn Processor>, String> {
        if self.0 {
            Err("the library refused an instance".into())
        } else {
            Ok(self.processor())
        }
    }
}

/// A processor that cannot be made is the node's compile error, with the reason (or the
/// panic's message), not a panic of the thread that compiles.
#[test]
fn a_processor_that_cannot_be_made_is_a_compile_error() {
    let src = "u = { kind: \"unmade\", };\ns = { kind: \"sink\", in: 1, };\nu.1 -> s.1;\n";
    let g = parse(src, "t.ag").unwrap();
    for (refused, why) in [
        (true, "the library refused an instance"),
        (false, "no instance today"),
    ] {
        let mut reg = Registry::with_builtin_kinds();
        if refused {
            reg.register("unmade", |_: &NodeContext<'_>| {
                Ok(Box::new(Unmade(true)) as Box<dyn DspNode>)
            });
        } else {
            reg.register("unmade", |_: &NodeContext<'_>| {
                Ok(Box::new(Unmade(false)) as Box<dyn DspNode>)
            });
        }
        let e = Plan::compile(&g, &reg, &opts(48_000.0, 64)).unwrap_err();
        assert!(matches!(e, CompileError::Processor { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("node `u`: its processor could not be made: {why}")
        );
    }
}

#[test]
fn a_panicking_processor_is_silenced_and_reported_once() {
    let src = r#"
        b = { kind: "boom", };
        a = { kind: "osc", freq: 0, phase: 0.25, };
        s = { kind: "sink", };
        b.1 -> s.1;  a.1 -> s.2;
    "#;
    let g = parse(src, "t.ag").unwrap();
    let mut reg = Registry::with_builtin_kinds();
    reg.register("boom", boom);
    let mut plan = Plan::compile(&g, &reg, &opts(48_000.0, 16)).unwrap();
    let b = (0..plan.len()).find(|&i| plan.name(i) == "b").unwrap();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut ex = SeqExecutor::new();
    for cycle in 1..=5 {
        ex.run_cycle(&mut plan);
        let want = if cycle < 3 { 0.5 } else { 0.0 };
        assert!(plan.output(0).iter().all(|&x| x == want), "cycle {cycle}");
        assert!(
            plan.output(1).iter().all(|&x| (x - 1.0).abs() < 1e-6),
            "the engine goes on"
        );
        assert_eq!(plan.panicked(b), cycle >= 3);
        if cycle == 3 {
            let p = plan.take_panics();
            assert_eq!(p.len(), 1);
            assert_eq!(p[0].node, "b");
            assert_eq!(p[0].message, "boom at cycle 3");
        } else {
            assert!(plan.take_panics().is_empty(), "reported once");
        }
    }
    std::panic::set_hook(prev);
    plan.reset();
    assert!(!plan.panicked(b));
    ex.run_cycle(&mut plan);
    assert!(plan.output(0).iter().all(|&x| x == 0.5));
}

#[test]
fn sources_read_the_engine_inputs_in_order() {
    let src = r#"
        x = { kind: "source", out: 2, };
        y = { kind: "source", out: 1, volume: 2, };
        s = { kind: "sink", };
        x.2 -> s.1;  y.1 -> s.2;  x.1 -> s.3;
    "#;
    let mut plan = compile(src, 48_000.0, 8).unwrap();
    assert_eq!((plan.n_inputs(), plan.n_outputs()), (3, 3));
    plan.set_input(0, &[1.0; 8]);
    plan.set_input(1, &[2.0; 4]);
    plan.set_input(2, &[3.0; 8]);
    SeqExecutor::new().run_cycle(&mut plan);
    assert_eq!(plan.output(0), &[2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(plan.output(1), &[6.0; 8]);
    assert_eq!(plan.output(2), &[1.0; 8]);
}

/// Parallel executors share `&Plan` between threads and move plans between them.
#[test]
fn plan_is_sync_and_send() {
    fn shared<T: Sync + Send>() {}
    shared::<Plan>();
}

/// A wide mix on one port at a large block is split by frames into `SPLIT_PARTS` units, each a
/// successor of every branch and a predecessor of the sink; a narrow one, a small block, or
/// chains not merged keep it whole.
#[test]
fn wide_stateless_joins_are_split_by_frames() {
    use fugue_exec::{SPLIT_MIN_FRAMES, SPLIT_MIN_INPUTS, SPLIT_PARTS};
    let reg = Registry::with_builtin_kinds();
    let parts_of = |plan: &Plan| -> Vec<(usize, usize)> {
        (0..plan.n_units())
            .map(|u| plan.unit_part(u))
            .filter(|p| p.1 > 1)
            .collect()
    };
    let g = one_port_join(&fugue_graph::gen::rake(SPLIT_MIN_INPUTS + 3));
    let plan = Plan::compile(&g, &reg, &opts(48_000.0, SPLIT_MIN_FRAMES)).unwrap();
    let split: Vec<u32> = (0..plan.n_units() as u32)
        .filter(|&u| plan.unit_part(u as usize).1 > 1)
        .collect();
    assert_eq!(split.len(), SPLIT_PARTS);
    assert_eq!(
        parts_of(&plan),
        (0..SPLIT_PARTS)
            .map(|p| (p, SPLIT_PARTS))
            .collect::<Vec<_>>()
    );
    let branches = SPLIT_MIN_INPUTS + 3;
    for &u in &split {
        let u = u as usize;
        assert_eq!(plan.unit_count(u), branches as u32);
        assert_eq!(plan.unit_tasks(u), plan.unit_tasks(split[0] as usize));
        let sink = plan.unit_successors(u);
        assert_eq!(sink.len(), 1);
        assert_eq!(plan.unit_count(sink[0] as usize), SPLIT_PARTS as u32);
    }
    for &b in plan.unit_sources() {
        assert_eq!(plan.unit_successors(b as usize), &split[..]);
    }
    let whole = CompileOptions {
        merge_chains: false,
        ..opts(48_000.0, SPLIT_MIN_FRAMES)
    };
    let plan = Plan::compile(&g, &reg, &whole).unwrap();
    assert!(parts_of(&plan).is_empty());
    let small = Plan::compile(&g, &reg, &opts(48_000.0, SPLIT_MIN_FRAMES - 1)).unwrap();
    assert!(parts_of(&small).is_empty());
    let narrow = one_port_join(&fugue_graph::gen::rake(SPLIT_MIN_INPUTS - 1));
    let narrow = Plan::compile(&narrow, &reg, &opts(48_000.0, 4 * SPLIT_MIN_FRAMES)).unwrap();
    assert!(parts_of(&narrow).is_empty());
}

/// A graph of one `source` of `k` channels feeding a `mix` of `k` ports (port `i` from
/// channel `i`, and channel 0 once more on the last port), then a sink.
fn wide_mix(k: usize, volume: f32) -> String {
    let mut s = format!(
        "x = {{ kind: \"source\", out: {k}, }};\nm = {{ kind: \"mix\", in: {k}, volume: {volume}, }};\nout = {{ kind: \"sink\", }};\n"
    );
    for i in 1..=k {
        s += &format!("x.{i} -> m.{i};\n");
    }
    s += &format!("x.1 -> m.{k};\nm.1 -> out.1;\n");
    s
}

/// A mix of more than `SUM_GROUP` ports becomes groups of 8 consecutive ports, the second of
/// each block of 16 adding the first's sum (and groups of blocks' sums beyond 256), feeding
/// the mix, and its output is the mix's own sum of all its inputs (`fugue_dsp::sum_inputs`,
/// which sums in the same groups) bit for bit.
#[test]
fn wide_sums_are_split_into_groups_with_the_same_samples() {
    use fugue_dsp::{sum_inputs, SUM_GROUP};
    let reg = Registry::with_builtin_kinds();
    // Groups of one input are not made (that input feeds the next level).
    for (k, groups) in [
        (SUM_GROUP, 0),
        (SUM_GROUP + 1, 1),
        (16, 2),
        (17, 2),
        (33, 4),
        (70, 8 + 1),
        (65, 8),
        (300, 19 * 2 + 2 + 1),
    ] {
        let src = wide_mix(k, 0.75);
        let g = parse(&src, "wide.ag").unwrap();
        let mut plan = Plan::compile(&g, &reg, &opts(48_000.0, 100)).unwrap();
        assert_eq!(plan.len(), g.len() + groups, "{k} inputs");
        let mix = g.find("m").unwrap();
        let mut names = Vec::new();
        for t in 0..plan.len() {
            if plan.node_of(t) == mix && t != plan.task_of(mix) {
                names.push(plan.name(t).to_string());
                assert!(plan.cost(t) < g.node(mix).cost);
            }
        }
        assert_eq!(names.len(), groups);
        if k == 33 {
            names.sort();
            assert_eq!(names, ["m[1-16]", "m[1-8]", "m[17-24]", "m[17-32]"]);
        }
        // The unit graph keeps the total cost.
        let ug = plan.unit_graph(&g, &g.costs());
        let total: f64 = g.costs().iter().sum();
        assert!((ug.costs().iter().sum::<f64>() - total).abs() < 1e-9 * total);
        // Samples: the mix's own sum of the k inputs.
        let data: Vec<Vec<f32>> = (0..k)
            .map(|c| {
                (0..100)
                    .map(|i| ((i * 37 + c * 101) % 97) as f32 * 0.013 - 0.61 + c as f32 * 1e-3)
                    .collect()
            })
            .collect();
        for (c, d) in data.iter().enumerate() {
            plan.set_input(c, d);
        }
        SeqExecutor::new().run_cycle(&mut plan);
        let mut ins: Vec<&[f32]> = data.iter().map(|d| &d[..]).collect();
        let last: Vec<f32> = data[k - 1]
            .iter()
            .zip(&data[0])
            .map(|(a, b)| a + b)
            .collect();
        ins[k - 1] = &last;
        let mut want = vec![0.0f32; 100];
        sum_inputs(&ins, &mut want);
        for x in &mut want {
            *x *= 0.75;
        }
        let got = plan.output(0);
        assert!(
            fugue_testkit::bits::same_bits(got, &want),
            "{k} inputs: split sum differs"
        );
        // And the mix run whole, as one task, computes the same.
        let mut whole =
            Plan::compile(&g, &common::whole_sums_registry(), &opts(48_000.0, 100)).unwrap();
        assert_eq!(whole.len(), g.len());
        for (c, d) in data.iter().enumerate() {
            whole.set_input(c, d);
        }
        SeqExecutor::new().run_cycle(&mut whole);
        assert!(fugue_testkit::bits::same_bits(whole.output(0), &want));
    }
}

/// A wide mix whose ports 9-16 have no edge: no group is made for them (silence), and the
/// others, fed at half the engine rate through a resampler, compile at that rate with the
/// mix's own sum of the inputs.
#[test]
fn silent_groups_of_a_split_sum_are_not_made() {
    let mut src = String::from(
        "x = { kind: \"source\", out: 1, };\nr = { kind: \"resampler\", ratio: \"0.5\", };\nm = { kind: \"mix\", in: 20, };\nout = { kind: \"sink\", };\nx.1 -> r.1;\n",
    );
    let fed: Vec<usize> = (1..=8).chain(17..=20).collect();
    for &p in &fed {
        src += &format!("r.1 -> m.{p};\n");
    }
    src += "m.1 -> out.1;\n";
    let mut plan = compile(&src, 48_000.0, 64).unwrap();
    let names: Vec<&str> = (0..plan.len()).map(|t| plan.name(t)).collect();
    assert!(
        names.contains(&"m[1-16]") && names.contains(&"m[17-20]"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.starts_with("m[9")), "{names:?}");
    let m = (0..plan.len()).find(|&t| plan.name(t) == "m").unwrap();
    assert_eq!(plan.task_block(m), 32);
    // The same samples as the mix run whole (a registry whose mix does not offer its sum).
    let g = parse(&src, "test.ag").unwrap();
    let mut whole = Plan::compile(&g, &common::whole_sums_registry(), &opts(48_000.0, 64)).unwrap();
    assert_eq!(whole.len(), g.len());
    let input: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
    for p in [&mut plan, &mut whole] {
        p.set_input(0, &input);
        SeqExecutor::new().run_cycle(p);
    }
    assert!(plan.output(0).iter().any(|&x| x != 0.0));
    assert!(fugue_testkit::bits::same_bits(
        plan.output(0),
        whole.output(0)
    ));
}

/// Every case of a block's pair sum (both halves fed; the second half one input; a silent
/// half, first or second; both silent; a port fed twice) gives the mix's own sum of its
/// inputs bit for bit, negative zeros included (`x + 0.0` is not `x` when `x` is -0.0).
#[test]
fn pair_sums_with_silent_or_single_halves_match_whole_sums() {
    let cases: [(usize, &[std::ops::RangeInclusive<usize>]); 7] = [
        // The second half of block [1-16] silent, then port 17 alone: nothing after the
        // block's sum adds +0.0 to it.
        (17, &[1..=8, 17..=17]),
        // Blocks [1-16] and [17-25]: the second's right half is port 25 alone.
        (25, &[1..=25]),
        // The first half of block [1-16] silent.
        (40, &[9..=40]),
        // The second half of block [1-16] silent, and ports 33-40.
        (40, &[1..=8, 17..=32]),
        // Block [17-32] silent, and port 40 alone after a silent 33-39.
        (40, &[1..=16, 40..=40]),
        // A first half of one fed port, the rest of the block silent.
        (34, &[1..=1, 17..=34]),
        // Two levels of blocks (300 inputs), every tenth port silent.
        (300, &[1..=9, 11..=19, 21..=300]),
    ];
    for (k, fed) in cases {
        let mut src = format!(
            "x = {{ kind: \"source\", out: {k}, }};\nm = {{ kind: \"mix\", in: {k}, }};\nout = {{ kind: \"sink\", }};\n"
        );
        let fed: Vec<usize> = fed
            .iter()
            .flat_map(|r| r.clone())
            .filter(|p| k != 300 || p % 10 != 0)
            .collect();
        for &p in &fed {
            src += &format!("x.{p} -> m.{p};\n");
        }
        // One port fed twice.
        src += &format!("x.1 -> m.{};\nm.1 -> out.1;\n", fed[fed.len() / 2]);
        let g = parse(&src, "pairs.ag").unwrap();
        let mut plan =
            Plan::compile(&g, &Registry::with_builtin_kinds(), &opts(48_000.0, 64)).unwrap();
        assert!(plan.len() > g.len(), "{k} inputs: the mix is split");
        let mut whole =
            Plan::compile(&g, &common::whole_sums_registry(), &opts(48_000.0, 64)).unwrap();
        for c in 0..k {
            // Frame 0: -0.0 everywhere (the sum of fed ports alone would be -0.0).
            let data: Vec<f32> = (0..64)
                .map(|i| match (i + c) % 7 {
                    _ if i == 0 => -0.0,
                    0 => -0.0,
                    1 => 0.0,
                    r => ((i * 31 + c * 17) % 23) as f32 * [1e-3, 1.0, 1e3][r % 3] - 0.4,
                })
                .collect();
            plan.set_input(c, &data);
            whole.set_input(c, &data);
        }
        // Frames where every fed input is -0.0 (their sum is -0.0 only if no +0.0 is added).
        let neg: Vec<f32> = vec![-0.0; 64];
        for c in 0..k {
            if c % 3 == 0 {
                plan.set_input(c, &neg);
                whole.set_input(c, &neg);
            }
        }
        SeqExecutor::new().run_cycle(&mut plan);
        SeqExecutor::new().run_cycle(&mut whole);
        assert!(
            fugue_testkit::bits::same_bits(plan.output(0), whole.output(0)),
            "{k} inputs, fed {fed:?}: split and whole sums differ"
        );
    }
}

/// The units reachable from the sources without going through unit `skip`.
fn reachable_without(plan: &Plan, skip: usize) -> Vec<bool> {
    let mut seen = vec![false; plan.n_units()];
    let mut stack: Vec<usize> = plan
        .unit_sources()
        .iter()
        .map(|&u| u as usize)
        .filter(|&u| u != skip)
        .collect();
    while let Some(u) = stack.pop() {
        if seen[u] {
            continue;
        }
        seen[u] = true;
        for &v in plan.unit_successors(u) {
            if v as usize != skip && !seen[v as usize] {
                stack.push(v as usize);
            }
        }
    }
    seen
}

#[test]
fn dominated_costs_are_the_work_only_a_unit_makes_reachable() {
    // By definition: `u` dominates `v` when `v` cannot be reached from the sources without
    // going through `u`. Checked against that definition on generated shapes, with their
    // declared costs (different per kind) and with split sums.
    let reg = Registry::with_builtin_kinds();
    let graphs = [
        fugue_graph::gen::diamond(4),
        fugue_graph::gen::rake(33),
        fugue_graph::gen::random_dag(60, 0.08, Default::default(), 7),
        fugue_graph::gen::layered(6, 5, 0.4, Default::default(), 3),
    ];
    for (gi, g) in graphs.iter().enumerate() {
        let plan = Plan::compile(g, &reg, &opts(48_000.0, 512)).unwrap();
        let n = plan.n_units();
        let total: f64 = (0..n).map(|u| f64::from(plan.unit_cost(u))).sum();
        assert!((total - plan.total_cost()).abs() <= 1e-6 * total.max(1.0));
        for u in 0..n {
            let reach = reachable_without(&plan, u);
            let expect: f64 = (0..n)
                .filter(|&v| v == u || !reach[v])
                .map(|v| f64::from(plan.unit_cost(v)))
                .sum();
            let got = f64::from(plan.unit_dominated_cost(u));
            assert!(
                (got - expect).abs() <= 1e-4 * expect.max(1.0),
                "graph {gi}, unit {u}: dominated cost {got}, expected {expect}"
            );
        }
    }
    // The diamond: each half's first unit dominates its half (the split tree below it and
    // the merges of its branches), the source the whole graph.
    let plan = Plan::compile(&fugue_graph::gen::diamond(4), &reg, &opts(48_000.0, 64)).unwrap();
    let src = plan.unit_sources()[0] as usize;
    assert!((f64::from(plan.unit_dominated_cost(src)) - plan.total_cost()).abs() < 1e-3);
    let halves = plan.unit_successors(src);
    assert_eq!(halves.len(), 2);
    for &h in halves {
        let d = f64::from(plan.unit_dominated_cost(h as usize));
        assert!(
            d > 0.4 * plan.total_cost() && d < 0.5 * plan.total_cost(),
            "{d}"
        );
    }
}
