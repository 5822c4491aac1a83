//! The host's cycles allocate and free nothing on the audio thread while graphs of plugins
//! play, and while they are loaded and unloaded: the plugins are instantiated and activated
//! on the control thread, run on the audio thread, and freed back on the control thread.

mod common;

use fugue_engine::host::{Host, HostOptions, Mode};

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

/// One test only in this binary, so no other test allocates while we count.
#[test]
fn host_cycles_with_plugin_graphs_loaded_and_unloaded_do_not_allocate() {
    let chain = common::example("chain.ag");
    let parallel = common::example("parallel.ag");
    for file in [&chain, &parallel] {
        let g = fugue_graph::read_file(file, None).unwrap();
        if !common::installed("host_cycles_with_plugin_graphs_do_not_allocate", &g) {
            return;
        }
    }
    for (mode, threads) in [(Mode::Shared, 2), (Mode::Separate, 2)] {
        let mut host = Host::with_registry(
            HostOptions {
                threads,
                mode,
                block: 128,
                ..HostOptions::default()
            },
            common::registry(),
        )
        .unwrap();
        host.load("chain", &chain).unwrap();
        // Warm up: first-touch effects, worker start-up, the plugins' first runs.
        host.run_cycles(20).unwrap();
        let mut total = 0;
        for i in 0..6 {
            let name = format!("x{i}");
            host.load(&name, if i % 2 == 0 { &parallel } else { &chain })
                .unwrap();
            let (n, r) = fugue_testkit::alloc::count_this_thread(|| host.run_cycles(5));
            r.unwrap();
            total += n;
            host.unload(&name).unwrap();
            let (n, r) = fugue_testkit::alloc::count_this_thread(|| host.run_cycles(3));
            r.unwrap();
            total += n;
        }
        assert_eq!(total, 0, "{mode}: the audio thread allocated or freed");
        assert!(host.host_stats().swap_cycles >= 12);
        host.finish().unwrap();
    }
}
