//! A host playing in real time (the clocked backend) loads and unloads graphs of plugins
//! with no deadline missed in the cycles that swap them in and out; a graph that names a
//! plugin that is not installed is refused in one sentence while the host plays on.

mod common;

use std::time::Duration;

use fugue_engine::host::{Host, HostBackend, HostOptions, Mode};

#[test]
fn a_playing_host_swaps_plugin_graphs_without_a_miss_and_refuses_a_bad_one() {
    let chain = common::example("chain.ag");
    let g = fugue_graph::read_file(&chain, None).unwrap();
    if !common::installed("a_playing_host_swaps_plugin_graphs_without_a_miss", &g) {
        return;
    }
    let dir = fugue_testkit::host::fresh_dir("lv2-swaps");
    let bad = dir.join("bad.ag");
    std::fs::write(
        &bad,
        "p = { kind: \"lv2\", uri: \"http://plugin.org.uk/swh-plugins/platee\", };\n\
         s = { kind: \"sink\", }; p.1 -> s.1;",
    )
    .unwrap();
    let mut host = Host::with_registry(
        HostOptions {
            backend: HostBackend::Clocked,
            threads: 2,
            mode: Mode::Shared,
            block: 256,
            ..HostOptions::default()
        },
        common::registry(),
    )
    .unwrap();
    host.load("base", &chain).unwrap();
    host.wait(Duration::from_millis(50)).unwrap();
    for i in 0..8 {
        let name = format!("g{i}");
        host.load(&name, &chain).unwrap();
        host.wait(Duration::from_millis(30)).unwrap();
        host.unload(&name).unwrap();
        host.wait(Duration::from_millis(20)).unwrap();
    }
    let before = host.host_stats().cycles;
    let e = host.load("bad", &bad).unwrap_err().to_string();
    assert!(
        e.contains("node `p`")
            && e.contains("nearest installed: http://plugin.org.uk/swh-plugins/plate"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    host.wait(Duration::from_millis(50)).unwrap();
    assert!(
        host.host_stats().cycles > before,
        "the host stopped playing"
    );
    assert_eq!(host.list().len(), 1, "only the first graph is left");
    let report = host.finish().unwrap();
    let (cycles, misses) = (report.stats.swap_cycles, report.stats.swap_misses);
    if let Err(e) = fugue_testkit::host::swaps_met(cycles, misses, 16) {
        panic!("plugin graphs: {e} ({:?})", report.stats);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
