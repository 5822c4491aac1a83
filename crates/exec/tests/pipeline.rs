//! Pipelining (`CompileOptions::pipeline`): the unit graph it builds, the options it refuses,
//! and every executor's output, bit for bit equal to `seq` without pipelining, on generated
//! shapes and on every graph of the corpus.

use std::path::PathBuf;

use fugue_dsp::Registry;
use fugue_exec::{
    build, CompileError, CompileOptions, ExecOptions, ExecutorKind, Plan, SpinBudget,
};
use fugue_graph::TaskGraph;

/// The corpus's `.ag` files, sorted; `None` (after saying so) when the corpus is not there.
fn corpus() -> Option<Vec<PathBuf>> {
    let dir = fugue_testkit::corpus::dir(env!("CARGO_MANIFEST_DIR"), "ag", "corpus pipeline")?;
    Some(fugue_testkit::corpus::files(&dir, "ag"))
}

fn copts(block: usize, pipeline: usize, segments: usize) -> CompileOptions {
    CompileOptions {
        sample_rate: 8000.0,
        block,
        pipeline,
        pipeline_segments: segments,
        ..Default::default()
    }
}

fn quick() -> ExecOptions {
    // Short budgets: many executors are alive at once on few cores in the test run.
    let b = SpinBudget {
        spins: 100,
        time: std::time::Duration::from_micros(50),
    };
    ExecOptions {
        idle_budget: b,
        steal_budget: b,
        ..ExecOptions::default()
    }
}

/// `cycles` cycles of `g` compiled with `o`, run by `kind` on `threads` threads (static:
/// round-robin lists over the units, valid for any plan), each output channel concatenated.
fn render(
    g: &TaskGraph,
    o: &CompileOptions,
    kind: ExecutorKind,
    threads: usize,
    cycles: usize,
) -> Vec<Vec<f32>> {
    let reg = Registry::with_builtin_kinds();
    let mut plan = Plan::compile(g, &reg, o).expect("compiles");
    let lists = (kind == ExecutorKind::Static).then(|| {
        let mut l = vec![Vec::new(); threads];
        for u in 0..plan.n_units() {
            l[u % threads].push(u as u32);
        }
        l
    });
    let mut exec = build(kind, &plan, threads, lists, &quick()).expect("builds");
    let mut out = vec![Vec::new(); plan.n_outputs()];
    for _ in 0..cycles {
        exec.run_cycle(&mut plan);
        for (c, o) in out.iter_mut().enumerate() {
            o.extend_from_slice(plan.output(c));
        }
    }
    out
}

/// A line of 8 nodes, 2 segments, 4 sub-blocks:
///
/// ```text
///   (s0,0) -> (s0,1) -> (s0,2) -> (s0,3)
///     |         |         |         |
///     v         v         v         v
///   (s1,0) -> (s1,1) -> (s1,2) -> (s1,3)
/// ```
///
/// 8 units, numbered segment by segment; each sub-block of the second segment waits for the
/// same sub-block of the first and for its own previous sub-block; one source, one sink.
#[test]
fn a_pipelined_line_is_two_segments_of_four_sub_blocks() {
    let g = fugue_graph::gen::line(8);
    let reg = Registry::with_builtin_kinds();
    let plain = Plan::compile(&g, &reg, &copts(64, 1, 2)).unwrap();
    assert_eq!(plain.n_units(), 1);
    assert_eq!(plain.pipeline(), 1);
    let plan = Plan::compile(&g, &reg, &copts(64, 4, 2)).unwrap();
    assert_eq!(plan.pipeline(), 4);
    assert_eq!(plan.n_units(), 8);
    assert!(!plan.is_sequential());
    let seg = |u: usize| u / 4;
    for u in 0..8 {
        assert_eq!(plan.unit_sub(u), (u % 4, 4));
        assert_eq!(plan.unit_tasks(u), plan.unit_tasks(seg(u) * 4));
        let mut want: Vec<u32> = Vec::new();
        if u % 4 < 3 {
            want.push(u as u32 + 1);
        }
        if seg(u) == 0 {
            want.push(u as u32 + 4);
        }
        assert_eq!(plan.unit_successors(u), &want[..], "unit {u}");
    }
    assert_eq!(plan.unit_sources(), &[0]);
    assert_eq!(plan.unit_sinks(), &[7]);
    // The segments split the line's cost in halves, and the units share it by sub-block.
    assert_eq!(plan.unit_tasks(0).len() + plan.unit_tasks(4).len(), g.len());
    assert!((plan.total_cost() - plain.total_cost()).abs() < 1e-9);
    // The critical path: 5 sub-blocks of one segment's cost instead of the whole line's.
    let cp = plan.critical_path_cost();
    assert!(cp < 0.7 * plain.critical_path_cost(), "{cp}");
}

/// A stateless join (mix) has a processor per sub-block: its sub-blocks do not wait for each
/// other, only for the same sub-block of their inputs.
#[test]
fn stateless_sub_blocks_are_independent() {
    let g = fugue_graph::gen::rake(4);
    let reg = Registry::with_builtin_kinds();
    // One unit per task: the mix is not chained with the sink after it (a stateful kind's
    // segment keeps its sub-blocks in order).
    let o = CompileOptions {
        merge_chains: false,
        ..copts(64, 2, 1)
    };
    let plan = Plan::compile(&g, &reg, &o).unwrap();
    let mix = (0..plan.n_units())
        .find(|&u| plan.kind(plan.unit_tasks(u)[0] as usize) == "mix" && plan.unit_sub(u).0 == 0)
        .expect("the rake has a mix");
    let next = mix + 1;
    assert_eq!(plan.unit_sub(next), (1, 2));
    assert!(
        !plan.unit_successors(mix).contains(&(next as u32)),
        "the mix's sub-blocks are chained: {:?}",
        plan.unit_successors(mix)
    );
}

#[test]
fn a_pipeline_that_does_not_divide_the_block_is_refused() {
    let g = fugue_graph::gen::line(3);
    let reg = Registry::with_builtin_kinds();
    for n in [0, 3, 7] {
        let e = Plan::compile(&g, &reg, &copts(128, n, 2)).unwrap_err();
        assert_eq!(
            e,
            CompileError::Pipeline {
                pipeline: n,
                block: 128
            }
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("{n} sub-blocks")) && msg.contains("128"),
            "{msg}"
        );
    }
}

#[test]
fn a_graph_that_changes_rates_is_not_pipelined_and_says_why() {
    let g = fugue_graph::read::ag::parse(
        "o = { kind: \"osc\", freq: 440, }; r = { kind: \"resampler\", ratio: 0.5, };\n\
         s = { kind: \"sink\", }; o.1 -> r.1; r.1 -> s.1;",
        "rates.ag",
    )
    .unwrap();
    let reg = Registry::with_builtin_kinds();
    let plan = Plan::compile(&g, &reg, &copts(64, 4, 2)).unwrap();
    assert_eq!(plan.pipeline(), 1);
    let note = plan.pipeline_note().expect("a note");
    assert!(note.contains("`r`") && note.contains("rate"), "{note}");
    assert!((0..plan.n_units()).all(|u| plan.unit_sub(u) == (0, 1)));
    let plain = Plan::compile(&g, &reg, &copts(64, 1, 2)).unwrap();
    assert_eq!(plain.pipeline_note(), None);
}

/// Every executor (seq included: it runs the pipelined units in order) on 1 to 3 threads,
/// with 2, 4 and 8 sub-blocks, equals seq without pipelining, on generated shapes.
#[test]
fn every_executor_matches_seq_when_pipelined_on_generated_shapes() {
    let shapes = [
        ("line", fugue_graph::gen::line(20)),
        ("diamond", fugue_graph::gen::diamond(3)),
        ("rake", fugue_graph::gen::rake(12)),
        (
            "layered",
            fugue_graph::gen::layered(6, 4, 0.5, Default::default(), 5),
        ),
        (
            "random",
            fugue_graph::gen::random_dag(40, 0.1, Default::default(), 9),
        ),
    ];
    for (name, g) in &shapes {
        let reference = render(g, &copts(64, 1, 2), ExecutorKind::Seq, 1, 4);
        for kind in ExecutorKind::ALL {
            for threads in 1..=3 {
                for n in [2, 4, 8] {
                    let got = render(g, &copts(64, n, threads), kind, threads, 4);
                    fugue_testkit::bits::assert_same_channels(
                        &got,
                        &reference,
                        &format!("{name} with {kind} on {threads} threads, {n} sub-blocks"),
                    );
                }
            }
        }
    }
}

/// The same on every graph of the corpus: each graph with a part of the matrix of executors,
/// threads (1 to 3) and sub-blocks (2, 4, 8) that rotates from graph to graph (a ninth on the
/// line, diamond and rake graphs, a 27th on the many random ones: every cell of the matrix is
/// met on many graphs).
#[test]
fn every_executor_matches_seq_when_pipelined_on_the_corpus() {
    let Some(files) = corpus() else {
        return;
    };
    let mut checked = 0;
    for (i, f) in files.iter().enumerate() {
        let Ok(g) = fugue_graph::read_file(f, None) else {
            continue;
        };
        let path = f.to_string_lossy();
        let whole = !path.contains("random");
        let reference = render(&g, &copts(64, 1, 2), ExecutorKind::Seq, 1, 3);
        let mut combo = 0usize;
        for kind in ExecutorKind::ALL {
            for threads in 1..=3 {
                for n in [2, 4, 8] {
                    combo += 1;
                    let every = if whole { 9 } else { 27 };
                    if !(i + combo).is_multiple_of(every) {
                        continue;
                    }
                    let got = render(&g, &copts(64, n, threads), kind, threads, 3);
                    fugue_testkit::bits::assert_same_channels(
                        &got,
                        &reference,
                        &format!(
                            "{} with {kind} on {threads} threads, {n} sub-blocks",
                            f.display()
                        ),
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "no corpus graph checked");
    println!("{checked} pipelined configurations equal seq");
}
