//! Feedback edges (`a.1 ~> b.1`): a comb filter loops back through one, and every executor,
//! thread count and pipelining renders it as seq does, bit for bit; its impulse response has
//! the echoes it must have; a loop without `~>` is refused with the loop named.

use fugue_engine::{Engine, ExecutorChoice, Pipeline, Registry};
use fugue_exec::ExecutorKind;

/// A comb filter: the input plus the mix delayed by 48 frames (1 ms at 48 kHz) and halved,
/// looped back through a feedback edge, which adds one block.
const COMB: &str = r#"
    in = { kind: "source", out: 1, };
    mix = { kind: "mix", };
    dl = { kind: "delay", time: 0.001, dry: 0, wet: 1, feedback: 0, };
    g = { kind: "gain", gain: 0.5, };
    out = { kind: "sink", in: 1, };
    in.1 -> mix.1;
    mix.1 -> dl.1 -> g.1;
    g.1 ~> mix.2;
    mix.1 -> out.1;
"#;

const BLOCK: usize = 256;

/// An engine of `graph` at 48 kHz and [`BLOCK`] frames.
fn engine(graph: &fugue_graph::TaskGraph, choice: &ExecutorChoice) -> Engine {
    Engine::build(
        graph,
        &Registry::with_builtin_kinds(),
        48_000.0,
        BLOCK,
        choice,
        false,
    )
    .unwrap()
    .0
}

/// `cycles` blocks of the graph's output, with an impulse at frame 0 and another at 5000.
fn render(graph: &fugue_graph::TaskGraph, choice: &ExecutorChoice, cycles: usize) -> Vec<f32> {
    let mut engine = engine(graph, choice);
    let mut out = Vec::with_capacity(cycles * BLOCK);
    for c in 0..cycles {
        let input: Vec<f32> = (0..BLOCK)
            .map(|k| match c * BLOCK + k {
                0 => 1.0,
                5000 => -0.5,
                _ => 0.0,
            })
            .collect();
        engine.plan.set_input(0, &input);
        engine.run_cycle();
        out.extend_from_slice(engine.plan.output(0));
    }
    out
}

fn graph() -> fugue_graph::TaskGraph {
    fugue_graph::read::ag::parse(COMB, "comb.ag").unwrap()
}

#[test]
fn a_comb_filter_echoes_every_delay_plus_one_block() {
    let out = render(&graph(), &ExecutorChoice::default(), 40);
    // y[n] = x[n] + 0.5 y[n - 48 - 256]: the first impulse's echoes every 304 frames, halved
    // each time (exactly: powers of two), until the second impulse.
    for k in 0..16 {
        let n = 304 * k;
        if n >= 5000 {
            break;
        }
        assert_eq!(out[n], 0.5f32.powi(k as i32), "echo {k} at frame {n}");
        assert!(out[n + 1..n + 304].iter().all(|&x| x == 0.0), "only echoes");
    }
    assert!(out[5000] != 0.0);
}

#[test]
fn every_executor_and_thread_count_loops_back_as_seq_does() {
    let g = graph();
    let reference = render(&g, &ExecutorChoice::default(), 60);
    for kind in ExecutorKind::ALL {
        for threads in [1, 2, 3] {
            for pipeline in [1, 2, 4] {
                if kind == ExecutorKind::Seq && (threads > 1 || pipeline > 1) {
                    continue;
                }
                let choice = ExecutorChoice {
                    kind,
                    threads,
                    pipeline: Pipeline::Sub(pipeline),
                    ..ExecutorChoice::default()
                };
                let out = render(&g, &choice, 60);
                assert!(
                    out.iter()
                        .zip(&reference)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{} on {threads} threads, pipeline {pipeline}, differs from seq",
                    kind.name()
                );
            }
        }
    }
    // The automatic choice, offline (it may try cycles run as one, which a feedback edge
    // refuses: its delay is one block).
    let auto = ExecutorChoice {
        auto: true,
        auto_overlap: true,
        auto_cycles: Some(4000),
        ..ExecutorChoice::default()
    };
    assert_eq!(render(&g, &auto, 60), reference);
}

#[test]
fn two_plans_of_one_graph_keep_their_own_loops_and_a_reset_clears_them() {
    let g = graph();
    let one = render(&g, &ExecutorChoice::default(), 10);
    let (mut a, mut b) = (
        engine(&g, &ExecutorChoice::default()),
        engine(&g, &ExecutorChoice::default()),
    );
    let mut impulse = vec![0.0f32; BLOCK];
    impulse[0] = 1.0;
    let silence = vec![0.0f32; BLOCK];
    let mut out_a = Vec::new();
    for c in 0..10 {
        a.plan
            .set_input(0, if c == 0 { &impulse } else { &silence });
        a.run_cycle();
        out_a.extend_from_slice(a.plan.output(0));
        // `b` hears silence only: `a`'s loop must not leak into it.
        b.plan.set_input(0, &silence);
        b.run_cycle();
        assert!(b.plan.output(0).iter().all(|&x| x == 0.0), "cycle {c}");
    }
    assert_eq!(out_a, one);
    // After a reset the loop is empty: silence in, silence out.
    a.plan.reset();
    a.plan.set_input(0, &silence);
    for _ in 0..3 {
        a.run_cycle();
        assert!(a.plan.output(0).iter().all(|&x| x == 0.0));
    }
}

#[test]
fn a_loop_without_a_feedback_edge_is_refused_with_the_loop_named() {
    let text = COMB.replace("g.1 ~> mix.2", "g.1 -> mix.2");
    let e = fugue_graph::read::ag::parse(&text, "loop.ag")
        .unwrap_err()
        .to_string();
    // The place of an edge on the loop: `mix.1 -> dl.1 -> g.1` is on line 8.
    assert!(e.starts_with("loop.ag:8:"), "{e}");
    assert!(e.contains("the graph has a cycle: "), "{e}");
    assert!(e.contains("dl -> g -> mix -> dl"), "{e}");
    assert!(e.contains("`~>`"), "{e}");
}

#[test]
fn the_ag_and_dot_writers_keep_the_feedback_edge() {
    let g = graph();
    let text = fugue_graph::write::to_ag(&g);
    assert!(text.contains("g.1 ~> mix.2;"), "{text}");
    assert!(!text.contains("feedback-read"), "{text}");
    let back = fugue_graph::read::ag::parse(&text, "back.ag").unwrap();
    assert_eq!(back, g);
    assert_eq!(back.feedback_edges().len(), 1);
    let dot = fugue_graph::write::to_dot(&g, "comb");
    assert!(dot.contains("\"g\" -> \"mix\" [feedback=true"), "{dot}");
    let from_dot = fugue_graph::read::dot::parse(&dot, "comb.dot").unwrap();
    assert_eq!(from_dot.feedback_edges().len(), 1);
    let f = &from_dot.feedback_edges()[0];
    assert_eq!(
        (
            from_dot.node(f.src).name.as_str(),
            from_dot.node(f.dst).name.as_str()
        ),
        ("g", "mix")
    );
}
