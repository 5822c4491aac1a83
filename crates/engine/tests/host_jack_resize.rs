//! The host follows a JACK buffer-size change (`jack_bufsize`): every loaded graph is compiled
//! again at the new size and keeps playing (the recording is not silent after the change, the
//! cycles advance, the per-graph ports stay), in every mode, pipelined; loads and unloads that
//! cross the change still work; a pipeline that does not divide the new size falls back to a
//! divisor, with a notice.
//!
//! The test runs its own JACK server (the dummy driver, under a private name), so that the
//! change of size disturbs no other test; without jackd it says it is skipped.

use std::time::Duration;

use fugue_engine::host::{Host, HostBackend, HostOptions, Mode};
use fugue_engine::Pipeline;
use fugue_testkit::host;
use fugue_testkit::jackd::{has, DummyServer};

/// One test only in this binary: it sets `JACK_DEFAULT_SERVER` for the whole process.
#[test]
fn the_host_follows_a_jack_buffer_size_change() {
    if !has("jack_bufsize") {
        eprintln!("SKIPPED the_host_follows_a_jack_buffer_size_change: jack_bufsize is not installed (Debian package jackd2)");
        return;
    }
    let server = match DummyServer::start("host-resize", 44_100, 128) {
        Ok(s) => s,
        Err(why) => {
            eprintln!("SKIPPED the_host_follows_a_jack_buffer_size_change: {why}");
            return;
        }
    };
    // Before any thread of this process opens a JACK client.
    std::env::set_var("JACK_DEFAULT_SERVER", server.name());
    jack::set_logger(jack::LoggerType::None);
    let dir = host::fresh_dir("resize");
    let mono = host::write(&dir, "mono.ag", host::MONO);
    let duo = host::write(&dir, "duo.ag", host::DUO);
    let (probe, _) =
        jack::Client::new("fugue-resize-probe", jack::ClientOptions::NO_START_SERVER).unwrap();
    for (mode, threads, pipeline) in [
        (Mode::Shared, 2, Pipeline::Sub(4)),
        (Mode::Partitioned, 3, Pipeline::Auto),
        (Mode::Separate, 2, Pipeline::Sub(1)),
    ] {
        // Three partitions on one core take turns on it, JACK's thread waiting for the ones
        // that are not running: the cycles crawl, which is what one core gives.
        if mode == Mode::Partitioned && fugue_exec::placement::available_cores() < 2 {
            eprintln!("{mode}: skipped, one core");
            continue;
        }
        server.set_buffer(128).unwrap();
        let wav = dir.join(format!("{mode}.wav"));
        let mut host = Host::start(HostOptions {
            backend: HostBackend::Jack {
                client_name: "fugue-host-resize".into(),
                connect: false,
                per_graph_ports: true,
            },
            threads,
            mode,
            pipeline,
            record: Some(wav.clone()),
            ..HostOptions::default()
        })
        .unwrap();
        assert_eq!(host.options().block, 128, "{mode}");
        let r = host.load("mono", &mono).unwrap();
        if pipeline == Pipeline::Sub(4) {
            assert_eq!(r.pipeline, 4, "{mode}");
        }
        host.load("duo", &duo).unwrap();
        host.set_gain("duo", -6.0).unwrap();
        host.wait(Duration::from_millis(300)).unwrap();

        // The change, while graphs come and go: every load and unload succeeds, whichever
        // side of the change it falls on.
        let bufsize = {
            let name = server.name().to_string();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                std::process::Command::new("jack_bufsize")
                    .arg("256")
                    .env("JACK_DEFAULT_SERVER", name)
                    .status()
                    .unwrap()
                    .success()
            })
        };
        for i in 0..20 {
            let name = format!("x{i}");
            host.load(&name, if i % 2 == 0 { &mono } else { &duo })
                .unwrap_or_else(|e| panic!("{mode}: load {name}: {e}"));
            host.wait(Duration::from_millis(5)).unwrap();
            host.unload(&name)
                .unwrap_or_else(|e| panic!("{mode}: unload {name}: {e}"));
        }
        assert!(bufsize.join().unwrap(), "{mode}: jack_bufsize 256 failed");
        host.wait(Duration::from_millis(300)).unwrap();
        assert_eq!(host.options().block, 256, "{mode}: {:?}", host.host_stats());
        let notices = host.take_notices();
        assert!(
            notices.iter().any(|n| n.contains("128 -> 256 frames")),
            "{mode}: {notices:?}"
        );
        let before = host.host_stats();
        println!(
            "{mode}: {} buffer-size change(s) followed, {} silent cycles meanwhile; {notices:?}",
            before.resizes, before.resize_cycles
        );
        assert!(before.resizes >= 1, "{mode}: {before:?}");
        host.wait(Duration::from_millis(300)).unwrap();
        let after = host.host_stats();
        assert!(
            after.cycles >= before.cycles + 10,
            "{mode}: the cycles stalled after the change: {before:?} -> {after:?}"
        );
        // The graphs are still there, with their gains and their own ports.
        let list = host.list();
        assert_eq!(list.len(), 2, "{mode}");
        assert_eq!(list[1].gain_db, -6.0);
        let ports = |p: &str| probe.ports(Some(p), None, jack::PortFlags::empty()).len();
        assert_eq!(ports("fugue-host-resize:mono_out_"), 1, "{mode}");
        assert_eq!(ports("fugue-host-resize:duo_out_"), 2, "{mode}");
        assert_eq!(ports("fugue-host-resize:x"), 0, "{mode}");
        // A load at the new size.
        let r = host.load("late", &mono).unwrap();
        if pipeline == Pipeline::Sub(4) {
            assert_eq!(r.pipeline, 4, "{mode}");
        }
        host.wait(Duration::from_millis(100)).unwrap();
        let report = host.finish().unwrap();
        // The recording's last 0.2 s (at 256 frames per cycle) is the mix, not silence.
        let got = fugue_testkit::wav::channels(&wav);
        assert!(report.recorded_frames > 0);
        let tail = &got[0][got[0].len() - 8820..];
        assert!(
            tail.iter().any(|&x| x != 0.0),
            "{mode}: silence after the change"
        );
    }

    // A pipeline that does not divide the new size falls back to its largest divisor below.
    server.set_buffer(128).unwrap();
    let mut host = Host::start(HostOptions {
        backend: HostBackend::Jack {
            client_name: "fugue-host-resize".into(),
            connect: false,
            per_graph_ports: false,
        },
        threads: 2,
        pipeline: Pipeline::Sub(128),
        ..HostOptions::default()
    })
    .unwrap();
    assert_eq!(host.load("mono", &mono).unwrap().pipeline, 128);
    server.set_buffer(64).unwrap();
    host.wait(Duration::from_millis(300)).unwrap();
    assert_eq!(host.options().block, 64);
    let notices = host.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("128 -> 64 frames") && n.contains("64 sub-blocks instead")),
        "{notices:?}"
    );
    assert_eq!(host.list()[0].pipeline, 64);
    let before = host.host_stats().cycles;
    host.wait(Duration::from_millis(200)).unwrap();
    assert!(host.host_stats().cycles > before + 10);
    host.finish().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
