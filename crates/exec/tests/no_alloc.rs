//! The real-time path never allocates: cycles of the sequential executor, and `process` of
//! every kind, run under a counting global allocator.

use fugue_dsp::{NodeContext, Ratio, Registry};
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::read::ag::parse;

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

use fugue_testkit::alloc::count_this_thread as count;

/// Every kind in one graph.
const ALL_KINDS: &str = r#"
    in = { kind: "source", out: 1, };
    o = { kind: "osc", freq: 220, };
    nz = { kind: "noise", volume: 0.1, };
    md = { kind: "mod", freq: 3, };
    bq = { kind: "biquad", type: "bandpass", freq: 800, q: 2, };
    dl = { kind: "delay", time: 0.01, feedback: 0.5, };
    ks = { kind: "karplus", freq: 110, period: 0.005, };
    rv = { kind: "reverb", out: 2, };
    g = { kind: "gain", db: -6, };
    ld = { kind: "load", wcet: 1, };
    r1 = { kind: "resampler", ratio: 0.5, };
    r2 = { kind: "resampler", ratio: 2, conv: "linear", };
    r3 = { kind: "resampler", ratio: 0.5, conv: "zero_hold", };
    m = { kind: "mix", };
    s = { kind: "sink", };
    t = { kind: "sink", };
    o.1 -> md.1 -> bq.1 -> dl.1 -> rv.1;
    nz.1 -> ks.1;  in.1 -> m.4;
    rv.1 -> m.1;  rv.2 -> g.1 -> ld.1 -> m.2;  ks.1 -> m.3;
    m.1 -> r1.1 -> r2.1 -> s.1;  o.1 -> s.2;
    o.1 -> r3.1 -> t.1;
"#;

fn cycles_allocate_nothing(src: &str, name: &str, block: usize, cycles: usize) {
    let g = parse(src, name).unwrap();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    let mut plan = Plan::compile(&g, &Registry::with_builtin_kinds(), &opts).unwrap();
    let mut ex = SeqExecutor::new();
    ex.run_cycle(&mut plan); // the first cycle may touch lazily initialised state
    let input = vec![0.25f32; block];
    let (allocs, peak) = count(|| {
        let mut peak = 0.0f32;
        for _ in 0..cycles {
            for c in 0..plan.n_inputs() {
                plan.set_input(c, &input);
            }
            ex.run_cycle(&mut plan);
            for c in 0..plan.n_outputs() {
                peak = plan.output(c).iter().fold(peak, |m, x| m.max(x.abs()));
            }
        }
        peak
    });
    assert_eq!(allocs, 0, "{name}: {allocs} allocations in {cycles} cycles");
    assert!(peak > 0.0, "{name}: silent");
}

#[test]
fn the_counter_counts() {
    let (n, v) = count(|| vec![1u8; 10]);
    assert!(n >= 1);
    drop(v);
}

#[test]
fn sequential_cycles_of_every_kind_allocate_nothing() {
    cycles_allocate_nothing(ALL_KINDS, "all-kinds.ag", 64, 2000);
}

#[test]
fn sequential_cycles_of_corpus_graphs_allocate_nothing() {
    let Some(d) = fugue_testkit::corpus::dir(
        env!("CARGO_MANIFEST_DIR"),
        "ag",
        "sequential_cycles_of_corpus_graphs_allocate_nothing",
    ) else {
        return;
    };
    for rel in [
        "seq_test.ag",
        "work_stealing_test.ag",
        "rateau/rateau101.ag",
        "losange/losange36.ag",
        "ligne/ligne20.ag",
        "random-small/rand-10-node-graph-0-ex-0.ag",
    ] {
        let path = d.join(rel);
        let src = std::fs::read_to_string(&path).unwrap();
        cycles_allocate_nothing(&src, rel, 64, 2000);
    }
    // A graph with resamplers, whichever the corpus has.
    let rs = std::fs::read_dir(d.join("random-small")).unwrap();
    let mut with_resampler = 0;
    for e in rs.take(60) {
        let path = e.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        if src.contains("resampler") && src.contains("\"osc\"") && with_resampler < 3 {
            with_resampler += 1;
            let g = parse(&src, "x.ag").unwrap();
            let opts = CompileOptions {
                sample_rate: 48_000.0,
                block: 64,
                placeholder: false,
                merge_chains: true,
                ..Default::default()
            };
            let mut plan = Plan::compile(&g, &Registry::with_builtin_kinds(), &opts).unwrap();
            let mut ex = SeqExecutor::new();
            ex.run_cycle(&mut plan);
            let (allocs, ()) = count(|| {
                for _ in 0..1000 {
                    ex.run_cycle(&mut plan);
                }
            });
            assert_eq!(allocs, 0, "{}", path.display());
        }
    }
    assert!(with_resampler > 0);
}

/// `process` of every built-in kind, called directly, allocates nothing.
#[test]
fn process_of_every_kind_allocates_nothing() {
    let g = parse(ALL_KINDS, "all-kinds.ag").unwrap();
    let reg = Registry::with_builtin_kinds();
    let mut seen = Vec::new();
    for (v, node) in g.nodes().iter().enumerate() {
        let ctx = NodeContext {
            node,
            inputs: g.inputs(v),
            outputs: g.outputs(v),
            in_edges: g.in_edges(v).len(),
            sample_rate: 48_000.0,
            block: 128,
            rate: Ratio::ONE,
            engine_rate: 48_000.0,
            engine_block: 128,
            folder: None,
        };
        let (d, _) = reg.build(&ctx, false).unwrap();
        let mut p = d.processor();
        let out_len = d.rate_ratio().scale(128).unwrap();
        // Sources read engine channels, everything else its ports: 128 frames either way.
        let in_len = 128;
        let input: Vec<Vec<f32>> = (0..d.inputs())
            .map(|i| (0..in_len).map(|k| ((k + i) as f32 * 0.1).sin()).collect())
            .collect();
        let mut output: Vec<Vec<f32>> = (0..d.outputs()).map(|_| vec![f32::NAN; out_len]).collect();
        let (allocs, ()) = count(|| {
            let ins: [&[f32]; 4] =
                std::array::from_fn(|i| input.get(i).map_or(&[][..], |v| &v[..]));
            for _ in 0..50 {
                let mut it = output.iter_mut();
                let mut a = it.next();
                let mut b = it.next();
                let mut outs_arr: [&mut [f32]; 2] = [
                    a.as_mut().map_or(&mut [][..], |v| &mut v[..]),
                    b.as_mut().map_or(&mut [][..], |v| &mut v[..]),
                ];
                let n_out = d.outputs().min(2);
                p.process(&ins[..d.inputs().min(4)], &mut outs_arr[..n_out]);
            }
        });
        assert_eq!(allocs, 0, "kind {}", node.kind);
        for o in &output {
            assert!(
                o.iter().all(|x| x.is_finite()),
                "kind {} must fill every output",
                node.kind
            );
        }
        seen.push(node.kind.clone());
    }
    seen.sort();
    seen.dedup();
    let mut all: Vec<String> = reg.names().iter().map(|s| s.to_string()).collect();
    all.sort();
    assert_eq!(seen, all, "every kind is covered");
}
