//! The JACK backend against a running JACK server (`scripts/jack-test.sh` starts one with the
//! dummy driver). Without a server, the tests check the "no server" error and say that the
//! server tests were skipped.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use fugue_engine::stats::read_csv;
use fugue_engine::{
    run, Backend, EndReason, ExecutorChoice, Output, RenderOptions, RunError, RunOptions,
    StatsOptions,
};
use fugue_exec::ExecutorKind;

fn server_running() -> bool {
    jack::set_logger(jack::LoggerType::None);
    jack::Client::new("fugue-probe", jack::ClientOptions::NO_START_SERVER).is_ok()
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fugue-jack-{}-{name}", std::process::id()))
}

fn has(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd} >/dev/null"))
        .status()
        .is_ok_and(|s| s.success())
}

fn jack_options(name: &str, secs: f64, csv: Option<PathBuf>) -> RunOptions {
    RunOptions {
        backend: Backend::Jack {
            connect: false,
            client_name: name.into(),
        },
        executor: ExecutorChoice {
            kind: ExecutorKind::Ws,
            threads: 2,
            ..ExecutorChoice::default()
        },
        duration: Some(Duration::from_secs_f64(secs)),
        stats: StatsOptions {
            csv,
            keep_records: true,
        },
        ..RunOptions::default()
    }
}

fn read_mono(path: &std::path::Path) -> (u32, Vec<f32>) {
    let r = hound::WavReader::open(path).unwrap();
    let spec = r.spec();
    let ch = spec.channels as usize;
    let v: Vec<f32> = match spec.sample_format {
        hound::SampleFormat::Float => r.into_samples::<f32>().map(Result::unwrap).collect(),
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32;
            r.into_samples::<i32>()
                .map(|s| s.unwrap() as f32 * scale)
                .collect()
        }
    };
    (spec.sample_rate, v.chunks(ch).map(|f| f[0]).collect())
}

/// Everything that needs the server, in sequence (the buffer-size change affects the server
/// for every client).
#[test]
fn jack_backend() {
    let graph = fugue_graph::gen::rake(33);
    if !server_running() {
        let r = run(&graph, &jack_options("fugue-test", 1.0, None), |_| {});
        assert!(matches!(r, Err(RunError::NoServer)), "{r:?}");
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains("no JACK server is running") && msg.contains("jackd -d dummy"));
        println!("skipped: no JACK server is running (scripts/jack-test.sh starts one)");
        return;
    }

    // 1. Cycle count, one CSV row per cycle, summary = CSV.
    let csv = tmp("cycles.csv");
    let secs = 2.0;
    let report = run(
        &graph,
        &jack_options("fugue-test", secs, Some(csv.clone())),
        |_| {},
    )
    .unwrap();
    assert_eq!(report.end, EndReason::Duration);
    let expected = secs * report.sample_rate as f64 / report.block as f64;
    let got = (report.summary.cycles + report.summary.dropped) as f64;
    assert!(
        (got - expected).abs() <= 0.05 * expected,
        "{got} cycles in {secs} s at {} Hz / {} frames (expected {expected:.0} ± 5 %)",
        report.sample_rate,
        report.block
    );
    let rows = read_csv(&csv).unwrap();
    assert_eq!(rows.len() as u64, report.summary.cycles);
    assert_eq!(rows, report.records);
    assert_eq!(
        rows.iter().map(|r| r.duration_ns).max(),
        Some(report.summary.max_ns)
    );
    assert_eq!(
        rows.iter().filter(|r| r.missed).count() as u64,
        report.summary.misses
    );
    let _ = std::fs::remove_file(&csv);

    // 2. Recorded by jack_capture, the output equals the offline render (after alignment).
    if has("jack_capture") {
        let name = format!("fugue-cap-{}", std::process::id());
        let wav = tmp("capture.wav");
        let g2 = graph.clone();
        let n2 = name.clone();
        let player = std::thread::spawn(move || {
            run(&g2, &jack_options(&n2, 3.0, None), |_| {}).map_err(|e| e.to_string())
        });
        std::thread::sleep(Duration::from_millis(500));
        let status = Command::new("jack_capture")
            .args([
                "--daemon", "-d", "1", "-f", "wav", "-b", "FLOAT", "-c", "1", "-p",
            ])
            .arg(format!("{name}:out_1"))
            .arg(&wav)
            .status()
            .unwrap();
        let played = player.join().unwrap().unwrap();
        assert!(status.success());
        let (rate, captured) = read_mono(&wav);
        assert_eq!(rate, played.sample_rate);
        let rendered_path = tmp("render.wav");
        fugue_engine::render(
            &graph,
            &RenderOptions {
                sample_rate: played.sample_rate,
                block: played.block,
                seconds: Some(4.0),
                output: Output::Wav(rendered_path.clone()),
                ..RenderOptions::default()
            },
            |_| {},
        )
        .unwrap();
        let (_, rendered) = read_mono(&rendered_path);
        // Skip the capture's leading silence (before the connection was made).
        let first = captured.iter().position(|&x| x != 0.0).unwrap();
        let cap = &captured[first..];
        assert!(
            cap.len() > rate as usize / 2,
            "{} samples captured",
            cap.len()
        );
        let probe = &cap[..1024];
        let off = (0..rendered.len() - cap.len())
            .find(|&o| {
                rendered[o..o + probe.len()]
                    .iter()
                    .zip(probe)
                    .all(|(a, b)| (a - b).abs() <= 1e-6)
            })
            .expect("the captured audio appears in the offline render");
        // Tolerance 1e-6: both are 32-bit float, computed the same way.
        let worst = cap
            .iter()
            .zip(&rendered[off..])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-6, "largest difference {worst}");
        let _ = std::fs::remove_file(&wav);
        let _ = std::fs::remove_file(&rendered_path);
    } else {
        println!("skipped the capture comparison: jack_capture is not installed");
    }

    // 3. A buffer-size change while running: a new plan is compiled and swapped in.
    if has("jack_bufsize") {
        let before = report.block;
        let other = if before == 256 { 128 } else { 256 };
        let g2 = graph.clone();
        let player = std::thread::spawn(move || {
            run(&g2, &jack_options("fugue-bufsize", 2.0, None), |_| {}).map_err(|e| e.to_string())
        });
        std::thread::sleep(Duration::from_millis(600));
        let ok = Command::new("jack_bufsize")
            .arg(other.to_string())
            .status()
            .unwrap()
            .success();
        let r = player.join().unwrap().unwrap();
        let _ = Command::new("jack_bufsize")
            .arg(before.to_string())
            .status();
        if ok {
            assert_eq!(r.block, other);
            assert!(r.buffer_changes >= 1);
            assert!(r.records.iter().any(|c| c.frames as usize == before));
            assert!(r.records.iter().any(|c| c.frames as usize == other));
        }
    }
}
