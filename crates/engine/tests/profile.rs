//! The profile: it does not change the audio; its tables agree with what it recorded; the
//! slowest cycles' chains and timelines describe real cycles; render and the clocked run
//! return it when asked.

use std::time::Duration;

use fugue_engine::{
    Backend, Engine, ExecutorChoice, Output, RenderOptions, RunOptions, StatsOptions,
};
use fugue_exec::ExecutorKind;

fn choice(kind: ExecutorKind) -> ExecutorChoice {
    ExecutorChoice {
        kind,
        threads: if kind == ExecutorKind::Seq { 1 } else { 2 },
        ..ExecutorChoice::default()
    }
}

#[test]
fn the_profile_changes_no_sample_and_its_tables_add_up() {
    let graph = fugue_graph::gen::layered(5, 6, 0.4, Default::default(), 11);
    for kind in [ExecutorKind::Seq, ExecutorKind::Ws, ExecutorKind::Static] {
        let (mut plain, _) = Engine::build(
            &graph,
            &fugue_engine::Registry::with_builtin_kinds(),
            48_000.0,
            128,
            &choice(kind),
            false,
        )
        .unwrap();
        let (mut profiled, _) = Engine::build(
            &graph,
            &fugue_engine::Registry::with_builtin_kinds(),
            48_000.0,
            128,
            &choice(kind),
            false,
        )
        .unwrap();
        profiled.enable_profile().unwrap();
        assert!(plain.profile_report().is_none());
        for cycle in 0..300 {
            plain.run_cycle();
            profiled.run_cycle();
            for ch in 0..plain.plan.n_outputs() {
                let (a, b) = (plain.plan.output(ch), profiled.plan.output(ch));
                assert!(
                    fugue_testkit::bits::first_difference(a, b).is_none(),
                    "{kind}: cycle {cycle}, channel {ch} differs with the profile on"
                );
            }
        }
        let r = profiled.profile_report().unwrap();
        assert_eq!(r.cycles, 300, "{kind}");
        assert_eq!(r.threads, choice(kind).threads);
        assert_eq!(r.nodes.len(), graph.len(), "{kind}: one row per node");
        let total: f64 = r.nodes.iter().map(|n| n.mean_ns).sum();
        assert!(
            (total - r.work_mean_ns).abs() <= 1e-6 * r.work_mean_ns.max(1.0),
            "{kind}: nodes total {total} vs work {}",
            r.work_mean_ns
        );
        for n in &r.nodes {
            assert_eq!(n.calls, 300);
            assert!(
                n.min_ns as f64 <= n.mean_ns && n.mean_ns <= n.max_ns as f64,
                "{n:?}"
            );
            // The 99th percentile comes from a 2-digit histogram: within 1 % of the maximum.
            assert!(n.p99_ns as f64 <= n.max_ns as f64 * 1.01 + 1.0, "{n:?}");
        }
        // Sorted by share of the work.
        assert!(r.nodes.windows(2).all(|w| w[0].mean_ns >= w[1].mean_ns));
        // The critical path: a chain of tasks no longer than the work and no shorter than
        // its longest task, said in the conclusion.
        let cp = r.critical_path_ns();
        assert!(!r.critical_path.is_empty(), "{kind}");
        assert!(
            cp <= r.work_mean_ns * 1.0001,
            "{kind}: {cp} > {}",
            r.work_mean_ns
        );
        assert!(
            r.conclusion().contains("on any number of threads"),
            "{}",
            r.conclusion()
        );
        // Work cannot exceed the threads' time, nor the cycle be shorter than its tasks.
        assert!(r.work_mean_ns <= r.threads as f64 * r.cycle_mean_ns * 1.0001);
        let busy: f64 = r.workers.iter().map(|w| w.busy_mean_ns).sum();
        assert!((busy - r.work_mean_ns).abs() <= 1e-6 * busy.max(1.0));
        if kind == ExecutorKind::Seq {
            assert_eq!(r.workers.len(), 1);
            assert_eq!(r.workers[0].ran, 300);
        }

        assert!(!r.slowest.is_empty() && r.slowest.len() <= fugue_engine::profile::SLOWEST_KEPT);
        assert!(r
            .slowest
            .windows(2)
            .all(|w| w[0].duration_ns >= w[1].duration_ns));
        let worst = &r.slowest[0];
        assert!(worst.duration_ns as f64 >= r.cycle_max_ns as f64 / 1.01);
        for t in r.slowest.iter().chain(r.median.iter()) {
            assert_eq!(t.bars.len(), profiled.plan.n_cells());
            let last_end = t.bars.iter().map(|b| b.end_ns).max().unwrap();
            assert!(last_end <= t.duration_ns);
            assert_eq!(t.duration_ns - last_end, t.tail_ns);
            // The chain: in time order, without overlap, ending with the cycle's last task;
            // its steps' runs and waits account for the time up to the last task's end.
            let c = &t.chain;
            assert!(!c.is_empty());
            let end = c.last().map(|s| s.start_ns + s.run_ns).unwrap();
            assert_eq!(end, last_end, "{kind}: the chain ends with the last task");
            assert!(c
                .windows(2)
                .all(|w| w[0].start_ns + w[0].run_ns <= w[1].start_ns));
            let accounted: u64 = c.iter().map(|s| s.run_ns + s.wait_ns).sum();
            assert_eq!(accounted, last_end, "{kind}: the chain's runs and waits");
            let svg = r.gantt_svg(t, "test");
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            assert!(svg.matches("<title>").count() >= t.bars.len());
            // Every step of the chain is drawn as its task's bar, in the chain's colour.
            assert!(
                svg.matches(r##"fill="#e0584f""##).count() >= c.len(),
                "{kind}: {} of {} chain steps drawn",
                svg.matches(r##"fill="#e0584f""##).count(),
                c.len()
            );
            assert!(!t.breakdown().is_empty());
        }
        let text = r.text();
        for n in &r.nodes {
            assert!(
                text.contains(&n.name),
                "{kind}: {} missing from the text",
                n.name
            );
        }
        assert!(text.contains("total (nodes)") && text.contains("overhead and waits"));
        let csv = r.nodes_csv();
        assert_eq!(csv.lines().count(), graph.len() + 1);
    }
}

#[test]
fn render_and_the_clocked_run_return_the_profile_when_asked() {
    let graph = fugue_graph::gen::rake(4);
    let options = RenderOptions {
        block: 256,
        seconds: Some(0.5),
        output: Output::Discard,
        executor: choice(ExecutorKind::Ws),
        profile: true,
        ..RenderOptions::default()
    };
    let s = fugue_engine::render(&graph, &options, |_| {}).unwrap();
    let p = s.profile.expect("a profile");
    // 0.5 s at 48 kHz in blocks of 256: 94 cycles (the last one partial).
    assert_eq!(p.cycles, 94);
    let s = fugue_engine::render(
        &graph,
        &RenderOptions {
            profile: false,
            ..options
        },
        |_| {},
    )
    .unwrap();
    assert!(s.profile.is_none());

    let run = RunOptions {
        backend: Backend::Clocked {
            rate: 48_000,
            block: 256,
        },
        executor: choice(ExecutorKind::Ws),
        duration: Some(Duration::from_millis(200)),
        stats: StatsOptions::default(),
        profile: true,
        ..RunOptions::default()
    };
    let r = fugue_engine::run(&graph, &run, |_| {}).unwrap();
    let p = r.profile.expect("a profile");
    assert_eq!(p.cycles, r.summary.cycles + r.summary.dropped);
    assert_eq!(p.workers.len(), 2);
}

/// `fugue profile`'s recording states node-time inflation: a parallel executor's profile
/// carries a sequential reference run (the nodes' total and each node's mean, matched by
/// name), its ratio is the nodes' total over the reference's, and the text, CSV and JSON say
/// it; a profile of seq on one thread has no reference.
#[test]
fn a_parallel_profile_states_node_time_inflation_against_seq() {
    use fugue_engine::report::profile::{record, Recording};
    let graph = fugue_graph::gen::rake(6);
    let recording = |kind| Recording {
        offline: true,
        rate: 48_000,
        buffer: 128,
        seconds: 0.5,
        placeholder: false,
        executor: choice(kind),
        stop: None,
        registry: fugue_dsp::Registry::with_builtin_kinds(),
    };
    let (ws, _, _) = record(&graph, &recording(ExecutorKind::Ws)).unwrap();
    let ws = ws.unwrap();
    let seq_total = ws.seq_work_mean_ns.expect("a reference run");
    assert!(seq_total > 0.0);
    let f = ws.inflation().unwrap();
    assert!((f - ws.work_mean_ns / seq_total).abs() < 1e-12 && f > 0.0);
    assert!(ws
        .nodes
        .iter()
        .all(|n| n.seq_mean_ns.is_some_and(|s| s > 0.0)));
    assert!(ws.text().contains("node-time inflation: "), "{}", ws.text());
    assert!(ws.text().contains("vs seq"));
    let csv = ws.nodes_csv();
    assert!(csv.starts_with("node,kind,calls,min_ns,mean_ns,p99_ns,max_ns,seq_mean_ns\n"));
    assert!(csv.lines().skip(1).all(|l| !l.ends_with(',')), "{csv}");
    let dir = std::env::temp_dir().join(format!("fugue-profile-infl-{}", std::process::id()));
    fugue_engine::report::profile::write(&ws, &dir, "test").unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("profile.json")).unwrap()).unwrap();
    // (JSON's decimal text round-trips to within the last bit.)
    assert!((json["node_time_inflation"].as_f64().unwrap() - f).abs() < 1e-9);
    assert!(json["nodes"][0]["seq_mean_ns"].as_f64().is_some());
    let _ = std::fs::remove_dir_all(&dir);

    let (seq, _, _) = record(&graph, &recording(ExecutorKind::Seq)).unwrap();
    let seq = seq.unwrap();
    assert_eq!(seq.seq_work_mean_ns, None);
    assert_eq!(seq.inflation(), None);
    assert!(!seq.text().contains("node-time inflation"));
}
