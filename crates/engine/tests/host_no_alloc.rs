//! The host's cycles allocate and free nothing on the audio thread, including the cycles
//! that adopt and remove graphs (the boxes travel back to the control thread, which frees
//! them) and those that set live parameters, in every mode, pipelined or not.

use std::time::Duration;

use fugue_engine::host::{Host, HostOptions, Mode};
use fugue_engine::Pipeline;
use fugue_exec::TenantGrain;

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

/// One test only in this binary, so no other test allocates while we count.
#[test]
fn host_cycles_with_swaps_do_not_allocate() {
    let dir = fugue_testkit::host::fresh_dir("noalloc");
    let a = dir.join("a.ag");
    std::fs::write(
        &a,
        "o = { kind: \"osc\", freq: 440, }; f = { kind: \"biquad\", type: \"lowpass\", freq: 900.0, q: 1.0, };\n\
         n = { kind: \"noise\", seed: 1, }; s = { kind: \"sink\", in: 2, }; o.1 -> f.1 -> s.1; n.1 -> s.2;",
    )
    .unwrap();
    let rake = dir.join("rake.ag");
    std::fs::write(
        &rake,
        fugue_graph::write::to_ag(&fugue_graph::gen::rake(10)),
    )
    .unwrap();
    // Partitioned (groups of one thread) and the whole grain run several cycles in a row.
    for (mode, threads, pipeline, grain) in [
        (Mode::Shared, 2, Pipeline::Sub(1), TenantGrain::Auto),
        (Mode::Shared, 2, Pipeline::Sub(1), TenantGrain::Whole),
        (Mode::Separate, 2, Pipeline::Sub(1), TenantGrain::Auto),
        (Mode::Partitioned, 3, Pipeline::Sub(1), TenantGrain::Auto),
        (Mode::Shared, 2, Pipeline::Sub(4), TenantGrain::Auto),
        (Mode::Separate, 2, Pipeline::Sub(4), TenantGrain::Auto),
        (Mode::Partitioned, 3, Pipeline::Auto, TenantGrain::Auto),
    ] {
        let mut host = Host::start(HostOptions {
            threads,
            mode,
            block: 128,
            pipeline,
            grain,
            record: Some(dir.join("mix.wav")),
            ..HostOptions::default()
        })
        .unwrap();
        host.load("a", &a).unwrap();
        host.load("rake", &rake).unwrap();
        // Warm up (first-touch effects, worker start-up).
        host.wait(Duration::from_millis(100)).unwrap();
        let mut total = 0;
        for i in 0..20 {
            let name = format!("x{i}");
            host.load(&name, if i % 2 == 0 { &a } else { &rake })
                .unwrap();
            let (n, r) = fugue_testkit::alloc::count_this_thread(|| host.run_cycles(7));
            r.unwrap();
            total += n;
            host.unload(&name).unwrap();
            if i == 10 {
                host.set_gain("a", -3.0).unwrap();
            }
            // Live parameters: the values travel to the audio thread and are set between
            // the cycles counted below.
            host.set_param("a", "o", "freq", 440.0 + i as f64).unwrap();
            host.set_param("a", "f", "q", 0.5 + i as f64 / 10.0)
                .unwrap();
            host.set_param("a", "n", "volume", 0.5).unwrap();
            let (n, r) = fugue_testkit::alloc::count_this_thread(|| host.run_cycles(3));
            r.unwrap();
            total += n;
        }
        assert_eq!(
            total, 0,
            "{mode}, pipeline {pipeline}: the audio thread allocated or freed"
        );
        if pipeline == Pipeline::Sub(4) {
            assert!(host.list().iter().all(|g| g.pipeline == 4));
        }
        assert!(host.host_stats().swap_cycles >= 40);
        host.finish().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
