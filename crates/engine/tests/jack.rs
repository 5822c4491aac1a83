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
            hash_outputs: false,
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

/// How a capture matches a render.
struct Segments {
    /// Samples equal (within 1e-6: both are 32-bit float, computed the same way) to the
    /// render at their segment's offset.
    matched: usize,
    /// Runs of consecutive matching samples.
    segments: usize,
    /// Each segment starts later in the render than the previous one ended.
    in_order: bool,
}

/// Walks `cap`: finds where a probe of `probe` samples lies in `rendered`, extends the match
/// sample by sample, and after a mismatch looks for the next probe (in steps of 32 samples).
fn match_segments(cap: &[f32], rendered: &[f32], probe: usize) -> Segments {
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-6;
    let mut m = Segments {
        matched: 0,
        segments: 0,
        in_order: true,
    };
    let mut end_in_render = 0usize;
    let mut i = 0;
    while i + probe <= cap.len() {
        let p = &cap[i..i + probe];
        let Some(o) = (0..=rendered.len().saturating_sub(probe)).find(|&o| {
            rendered[o..o + probe]
                .iter()
                .zip(p)
                .all(|(a, b)| close(*a, *b))
        }) else {
            i += 32;
            continue;
        };
        if m.segments > 0 && o < end_in_render {
            m.in_order = false;
        }
        m.segments += 1;
        let mut k = 0;
        while i + k < cap.len() && o + k < rendered.len() && close(cap[i + k], rendered[o + k]) {
            k += 1;
        }
        m.matched += k;
        end_in_render = o + k;
        i += k;
    }
    m
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
    // The server's own frame clock is the reference: it advances by one block per cycle and
    // jumps ahead when the server falls behind real time (on a loaded machine the dummy
    // driver does, so neither the wall clock nor the server clock gives an exact count).
    // Every cycle run is counted, never more than the server's clock allows, never more than
    // real time allows, and the server did run the client.
    let got = report.cycles_run();
    let server_frames = report
        .server_frames
        .expect("the jack backend reads the server clock");
    let block = report.block as u64;
    assert_eq!(server_frames % block, 0, "{server_frames} frames");
    let server = report.server_cycles().expect("no buffer-size change");
    let nominal = secs * report.sample_rate as f64 / report.block as f64;
    println!(
        "{got} cycles in {secs} s (real time: {nominal:.0}), server clock {server} cycles, {} xruns",
        report.xruns
    );
    assert!(got >= 1 && got <= server, "{got} cycles");
    assert!(
        (got as f64) <= nominal * 1.05 + 2.0,
        "{got} cycles in {secs} s at {} Hz / {} frames (real time: {nominal:.0})",
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
        // The capture must be the offline render, in order. When the server falls behind
        // real time (a loaded machine), a cycle can reach jack_capture late or twice, so the
        // capture is matched in segments: with no xrun and no skipped cycle it must be one
        // segment, bit for bit; otherwise at least half of it must still match, segment by
        // segment.
        let m = match_segments(cap, &rendered, 1024);
        let ran = played.cycles_run();
        let server_cycles = played.server_cycles().unwrap_or(0);
        let clean = played.xruns == 0 && ran == server_cycles && played.silent_cycles == 0;
        println!(
            "capture: {} of {} samples matched in {} segment(s); {} xruns, {} of {} server cycles run",
            m.matched,
            cap.len(),
            m.segments,
            played.xruns,
            ran,
            server_cycles
        );
        assert!(
            m.segments >= 1,
            "the captured audio appears in the offline render"
        );
        if clean {
            assert_eq!(m.segments, 1);
            assert_eq!(m.matched, cap.len());
        } else {
            // A late cycle can leave jack_capture a stale buffer (a block seen twice), so the
            // order is only reported here.
            println!("segments in the render's order: {}", m.in_order);
            assert!(m.matched * 2 >= cap.len(), "{} of {}", m.matched, cap.len());
        }
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
