//! The example of sixteen parallel branches of plugins renders the same samples, bit for bit,
//! with every executor as with seq.

mod common;

use fugue_engine::{render, ExecutorChoice, Output, RenderOptions};
use fugue_exec::ExecutorKind;

#[test]
fn every_executor_renders_the_parallel_plugins_as_seq_does() {
    let file = common::example("parallel.ag");
    let graph = fugue_graph::read_file(&file, None).unwrap();
    if !common::installed(
        "every_executor_renders_the_parallel_plugins_as_seq_does",
        &graph,
    ) {
        return;
    }
    let plugins = graph.nodes().iter().filter(|n| n.kind == "lv2").count();
    assert!(plugins >= 16, "{plugins} plugin nodes");
    let dir = std::env::temp_dir().join(format!("fugue-lv2-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |kind: ExecutorKind, threads: usize| {
        let wav = dir.join(format!("{kind:?}-{threads}.wav"));
        let s = render(
            &graph,
            &RenderOptions {
                sample_rate: 48_000,
                block: 256,
                seconds: Some(0.25),
                output: Output::Wav(wav.clone()),
                executor: ExecutorChoice {
                    kind,
                    threads,
                    ..ExecutorChoice::default()
                },
                registry: common::registry(),
                ..RenderOptions::default()
            },
            |_| {},
        )
        .unwrap();
        assert!(s.panics.is_empty(), "{kind:?}: {s:?}");
        let bits: Vec<u32> = fugue_testkit::wav::channels(&wav)
            .concat()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        bits
    };
    let seq = run(ExecutorKind::Seq, 1);
    assert!(
        seq.iter().any(|&b| b != 0) && seq.iter().all(|&b| f32::from_bits(b).is_finite()),
        "seq's output is silent or not finite"
    );
    for kind in ExecutorKind::ALL
        .iter()
        .copied()
        .filter(|&k| k != ExecutorKind::Seq)
    {
        for threads in [2, 3] {
            let got = run(kind, threads);
            let differ = got.iter().zip(&seq).filter(|(a, b)| a != b).count();
            let first = got.iter().zip(&seq).position(|(a, b)| a != b);
            assert_eq!(
                (got.len(), differ),
                (seq.len(), 0),
                "{kind:?} on {threads} threads differs from seq, from sample {first:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
