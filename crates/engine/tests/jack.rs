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

/// How a capture matches a render, block by block.
#[derive(Debug)]
struct Blocks {
    /// Full blocks of the capture (after its leading silence) compared.
    compared: usize,
    /// For each, the index of the render's block it equals bit for bit, or `None` for a block
    /// of zeros (a cycle the client did not run in time) that equals no render block.
    found: Vec<Option<usize>>,
    /// Blocks that equal no render block and are not silent.
    strays: usize,
    /// The first of them: (capture block, first differing sample against the render block
    /// expected there).
    stray: Option<(usize, usize)>,
}

/// Whether a captured sample is the rendered one: the same bits, or both below the smallest
/// normal float. JACK's process thread may run with subnormals flushed to zero (the capture
/// holds zeros, or other subnormals, where the render, computed with IEEE subnormals, holds
/// subnormals: seen here around 1e-39); that changes nothing above 1.2e-38.
fn same(a: u32, b: u32) -> bool {
    let tiny = |x: u32| f32::from_bits(x).abs() < f32::MIN_POSITIVE;
    a == b || (tiny(a) && tiny(b))
}

fn same_block(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(*x, *y))
}

/// Aligns `cap` on `rendered` (the first `probe` samples of the capture that are not silence,
/// found bit for bit in the render, give the block boundaries), then finds each full block of
/// the capture among the render's blocks, bit for bit, from the block the previous one matched
/// (a late cycle can make jack_capture record a block twice; a dropped one skips a block).
fn match_blocks(cap: &[f32], rendered: &[f32], block: usize, probe: usize) -> Blocks {
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
    let (cap_bits, ren_bits) = (bits(cap), bits(rendered));
    let first = cap
        .iter()
        .position(|&x| x != 0.0)
        .expect("a silent capture");
    let p = &cap_bits[first..first + probe];
    let o = (0..=ren_bits.len() - probe)
        .find(|&o| same_block(&ren_bits[o..o + probe], p))
        .expect("the capture's first samples appear in the offline render, bit for bit");
    // The capture's block boundary at or after `first`.
    let start = first + (block - o % block) % block;
    let mut m = Blocks {
        compared: 0,
        found: Vec::new(),
        strays: 0,
        stray: None,
    };
    let n_render = ren_bits.len() / block;
    let mut next = o.div_ceil(block);
    let mut i = start;
    while i + block <= cap_bits.len() {
        let c = &cap_bits[i..i + block];
        m.compared += 1;
        let at = |j: usize| &ren_bits[j * block..(j + 1) * block];
        let hit = (next.saturating_sub(1)..n_render).find(|&j| same_block(at(j), c));
        match hit {
            Some(j) => {
                m.found.push(Some(j));
                next = j + 1;
            }
            None if c.iter().all(|&x| f32::from_bits(x) == 0.0) => m.found.push(None),
            None => {
                m.strays += 1;
                if m.stray.is_none() {
                    let want = at(next.min(n_render - 1));
                    let k = c
                        .iter()
                        .zip(want)
                        .position(|(a, b)| !same(*a, *b))
                        .unwrap_or(0);
                    m.stray = Some((m.compared - 1, k));
                }
                m.found.push(None);
            }
        }
        i += block;
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
        // The capture must be the offline render, block after block, bit for bit (both are
        // 32-bit float samples computed the same way; the capture file stores them as they
        // were). With no xrun and every server cycle run, the blocks follow each other with
        // none missing or repeated. When the server falls behind real time (a loaded machine),
        // a cycle can reach jack_capture late or twice, be dropped, or (a cycle the client
        // did not run in time) be silent, and jack_capture can record a block that an xrun cut
        // short: each block must then still be a block of the render, in order, or silence,
        // but for at most two blocks per xrun. Samples compare as `same` says: bit for bit
        // above the subnormal range.
        let m = match_blocks(&captured, &rendered, played.block, 256);
        let ran = played.cycles_run();
        let server_cycles = played.server_cycles().unwrap_or(0);
        let clean = played.xruns == 0 && ran == server_cycles && played.silent_cycles == 0;
        let silent = m.found.iter().filter(|f| f.is_none()).count();
        println!(
            "capture: {} blocks of {} compared, {} silent; {} xruns, {} of {} server cycles run",
            m.compared, played.block, silent, played.xruns, ran, server_cycles
        );
        assert!(
            m.compared * played.block > rate as usize / 2,
            "{} blocks captured",
            m.compared
        );
        if let Some((b, k)) = m.stray {
            println!(
                "{} captured block(s) are neither blocks of the offline render nor silence, the \
                 first ({b}) from its sample {k} on",
                m.strays
            );
            assert!(
                m.strays <= 2 * played.xruns as usize,
                "more garbled blocks ({}) than two per xrun ({} xruns)",
                m.strays,
                played.xruns
            );
        }
        let found: Vec<usize> = m.found.iter().flatten().copied().collect();
        if clean {
            assert_eq!(silent, 0, "silent blocks without a missed cycle");
            assert!(
                found.windows(2).all(|w| w[1] == w[0] + 1),
                "blocks missing or repeated without an xrun: {found:?}"
            );
        } else {
            assert!(found.windows(2).all(|w| w[1] >= w[0]), "{found:?}");
            assert!(found.len() * 2 >= m.compared, "{m:?}");
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
