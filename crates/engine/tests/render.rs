//! Offline rendering: the whole corpus, differential tests, output formats.

use std::path::{Path, PathBuf};

use fugue_dsp::Registry;
use fugue_engine::{render, Bits, Output, RenderError, RenderOptions};
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};
use fugue_graph::TaskGraph;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The corpus test's sample rate: low, so that the 815 files render in seconds even in a
/// debug build (the 300-node random graphs sum about 22,000 edges per cycle).
const RATE: u32 = 2_205;

/// Every corpus file renders one second (at [`RATE`], to stay fast in debug builds) except the two that do not
/// load; every graph with an `osc` is audible.
#[test]
fn every_corpus_graph_renders() {
    let Some(dir) = fugue_testkit::corpus::dir(
        env!("CARGO_MANIFEST_DIR"),
        "ag",
        "every_corpus_graph_renders",
    ) else {
        return;
    };
    let files = fugue_testkit::corpus::files(&dir, "ag");
    assert!(files.len() > 800, "{} files", files.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let (rendered, refused) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::Mutex::new(Vec::new()),
    );
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let graph = match fugue_graph::read_file(path, None) {
                    Ok(g) => g,
                    Err(_) => {
                        refused
                            .lock()
                            .unwrap()
                            .push(path.file_name().unwrap().to_string_lossy().into_owned());
                        continue;
                    }
                };
                let opts = RenderOptions {
                    sample_rate: RATE,
                    block: 64,
                    seconds: Some(1.0),
                    ..Default::default()
                };
                match render(&graph, &opts, |_| {}) {
                    Ok(sum) => {
                        rendered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let has_osc = graph.nodes().iter().any(|n| n.kind == "osc");
                        if sum.frames != RATE as u64
                            || (has_osc && sum.peak == 0.0)
                            || !sum.peak.is_finite()
                        {
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{}: {sum:?}", path.display()));
                        }
                    }
                    Err(e) => failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {e}", path.display())),
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    let mut refused = refused.into_inner().unwrap();
    refused.sort();
    assert_eq!(refused, ["rateau14.ag", "rateau17.ag"]);
    assert_eq!(rendered.into_inner(), files.len() - 2);
}

fn read(path: &Path) -> TaskGraph {
    fugue_graph::read_file(path, None).unwrap()
}

/// Runs `cycles * block` frames of every output channel through a fresh plan.
fn frames(plan: &mut Plan, total: usize) -> Vec<Vec<f32>> {
    let mut out = vec![Vec::with_capacity(total); plan.n_outputs()];
    let mut ex = SeqExecutor::new();
    while out[0].len() < total {
        ex.run_cycle(plan);
        for (c, o) in out.iter_mut().enumerate() {
            o.extend_from_slice(plan.output(c));
        }
    }
    for o in &mut out {
        o.truncate(total);
    }
    out
}

fn compile(g: &TaskGraph, block: usize) -> Plan {
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block,
        placeholder: false,
        merge_chains: true,
        ..Default::default()
    };
    Plan::compile(g, &Registry::with_builtin_kinds(), &opts).unwrap()
}

fn graphs_for_differential_tests() -> Vec<TaskGraph> {
    let mut v: Vec<TaskGraph> = ["pluck.ag", "synth.ag", "rake.ag"]
        .iter()
        .map(|f| read(&examples().join(f)))
        .collect();
    if let Some(d) = fugue_testkit::corpus::dir(
        env!("CARGO_MANIFEST_DIR"),
        "ag",
        "the differential tests' corpus graphs",
    ) {
        v.push(read(&d.join("seq_test.ag")));
        v.push(read(&d.join("losange/losange16.ag")));
        // Resamplers by 0.5 and 2 (sinc).
        v.push(read(&d.join("random-small/rand-10-node-graph-0-ex-0.ag")));
    }
    v
}

/// Rendering with buffer 64 equals buffer 512 (within 1e-6: the sine kinds start each block
/// from a rounded phase; every other kind is block-size independent exactly).
#[test]
fn buffer_64_equals_buffer_512() {
    for g in graphs_for_differential_tests() {
        let a = frames(&mut compile(&g, 64), 48_000);
        let b = frames(&mut compile(&g, 512), 48_000);
        let mut worst = 0.0f32;
        for (x, y) in a.iter().zip(&b) {
            for (p, q) in x.iter().zip(y) {
                worst = worst.max((p - q).abs());
            }
        }
        assert!(worst <= 1e-6, "{} nodes: {worst}", g.len());
        assert!(a.iter().flatten().any(|&x| x != 0.0));
    }
}

/// After `reset`, a plan renders exactly what a fresh plan renders.
#[test]
fn reset_equals_a_fresh_plan() {
    for g in graphs_for_differential_tests() {
        let mut plan = compile(&g, 256);
        let first = frames(&mut plan, 24_000);
        plan.reset();
        let again = frames(&mut plan, 24_000);
        assert_eq!(first, again);
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fugue-engine-tests");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// 16-bit output clips and counts samples beyond ±1; 32-bit float keeps them.
#[test]
fn integer_formats_clip_and_count() {
    let g = fugue_graph::read::ag::parse(
        r#"o = { kind: "osc", freq: 1000, volume: 2, };  s = { kind: "sink", };  o.1 -> s.1;"#,
        "loud.ag",
    )
    .unwrap();
    for (bits, name) in [
        (Bits::I16, "loud16.wav"),
        (Bits::I24, "loud24.wav"),
        (Bits::F32, "loud32.wav"),
    ] {
        let path = scratch(name);
        let opts = RenderOptions {
            seconds: Some(0.1),
            bits,
            output: Output::Wav(path.clone()),
            ..Default::default()
        };
        let sum = render(&g, &opts, |_| {}).unwrap();
        assert_eq!(sum.frames, 4800);
        assert!((sum.peak - 2.0).abs() < 1e-5);
        let mut r = hound::WavReader::open(&path).unwrap();
        assert_eq!(r.spec().channels, 1);
        assert_eq!(r.len(), 4800);
        match bits {
            Bits::I16 => {
                assert!(sum.clipped > 1000, "{}", sum.clipped);
                let v: Vec<i16> = r.samples::<i16>().map(|s| s.unwrap()).collect();
                assert_eq!(v.iter().max(), Some(&32_767));
                assert_eq!(v.iter().min(), Some(&-32_768));
            }
            Bits::I24 => {
                assert!(sum.clipped > 1000);
                let v: Vec<i32> = r.samples::<i32>().map(|s| s.unwrap()).collect();
                assert_eq!(v.iter().max(), Some(&8_388_607));
                assert_eq!(v.iter().min(), Some(&-8_388_608));
            }
            Bits::F32 => {
                assert_eq!(sum.clipped, 0);
                let max = r
                    .samples::<f32>()
                    .map(|s| s.unwrap())
                    .fold(0.0f32, f32::max);
                assert!((max - 2.0).abs() < 1e-5);
            }
        }
    }
}

/// Integer samples read and written again are the same integers: a pass-through of every
/// 16-bit value gives them back in 16 bits, times 256 in 24 bits; every 24-bit value of a
/// stretch (and both ends) comes back in 24 bits.
#[test]
fn integer_samples_pass_through_unchanged() {
    let g = fugue_graph::read::ag::parse(
        r#"i = { kind: "source", out: 1, };  s = { kind: "sink", };  i.1 -> s.1;"#,
        "thru1.ag",
    )
    .unwrap();
    let pass = |bits_in: u16, values: &[i32], bits_out: Bits, name: &str| -> Vec<i32> {
        let input = scratch(&format!("{name}-in.wav"));
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 48_000,
            bits_per_sample: bits_in,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(&input, spec).unwrap();
        for &v in values {
            if bits_in == 16 {
                w.write_sample(v as i16).unwrap();
            } else {
                w.write_sample(v).unwrap();
            }
        }
        w.finalize().unwrap();
        let out = scratch(&format!("{name}-out.wav"));
        let opts = RenderOptions {
            input: Some(input),
            bits: bits_out,
            output: Output::Wav(out.clone()),
            ..Default::default()
        };
        let sum = render(&g, &opts, |_| {}).unwrap();
        assert_eq!(sum.clipped, 0, "{name}");
        let mut r = hound::WavReader::open(&out).unwrap();
        if bits_out == Bits::I16 {
            r.samples::<i16>().map(|s| i32::from(s.unwrap())).collect()
        } else {
            r.samples::<i32>().map(|s| s.unwrap()).collect()
        }
    };
    let all16: Vec<i32> = (-32_768..=32_767).collect();
    assert_eq!(pass(16, &all16, Bits::I16, "p16"), all16);
    let times256: Vec<i32> = all16.iter().map(|v| v * 256).collect();
    assert_eq!(pass(16, &all16, Bits::I24, "p16-24"), times256);
    let some24: Vec<i32> = (-8_388_608..-8_388_608 + 20_000)
        .chain(-10_000..10_000)
        .chain(8_388_607 - 20_000..=8_388_607)
        .collect();
    assert_eq!(pass(24, &some24, Bits::I24, "p24"), some24);
}

/// The input file feeds the sources; its length is the render's natural length.
#[test]
fn input_file_feeds_sources() {
    let input = scratch("in.wav");
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 48_000,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(&input, spec).unwrap();
    for k in 0..1000 {
        w.write_sample(k as f32 / 1000.0).unwrap();
        w.write_sample(-0.5f32).unwrap();
    }
    w.finalize().unwrap();
    let g = fugue_graph::read::ag::parse(
        r#"i = { kind: "source", out: 3, };  s = { kind: "sink", };  i.2 -> s.1;  i.1 -> s.2;  i.3 -> s.3;"#,
        "thru.ag",
    )
    .unwrap();
    let out = scratch("thru.wav");
    let opts = RenderOptions {
        block: 64,
        input: Some(input),
        output: Output::Wav(out.clone()),
        ..Default::default()
    };
    let sum = render(&g, &opts, |_| {}).unwrap();
    assert_eq!((sum.frames, sum.channels), (1000, 3));
    let samples: Vec<f32> = hound::WavReader::open(&out)
        .unwrap()
        .samples::<f32>()
        .map(|s| s.unwrap())
        .collect();
    for k in 0..1000 {
        assert_eq!(&samples[3 * k..3 * k + 3], &[-0.5, k as f32 / 1000.0, 0.0]);
    }
}

#[test]
fn errors_are_typed() {
    let g = fugue_graph::read::ag::parse(r#"o = { kind: "osc", freq: 1, };"#, "nosink.ag").unwrap();
    assert!(matches!(
        render(&g, &RenderOptions::default(), |_| {}),
        Err(RenderError::NoSink)
    ));
    let g = fugue_graph::read::ag::parse(
        r#"o = { kind: "osc", freq: 1, }; s = { kind: "sink", }; o.1 -> s.1;"#,
        "x.ag",
    )
    .unwrap();
    let opts = RenderOptions {
        output: Output::Wav(PathBuf::from("/nonexistent-folder/x.wav")),
        ..Default::default()
    };
    assert!(matches!(
        render(&g, &opts, |_| {}),
        Err(RenderError::Write { .. })
    ));
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let opts = RenderOptions {
        cancel: Some(cancel),
        ..Default::default()
    };
    assert!(matches!(
        render(&g, &opts, |_| {}),
        Err(RenderError::Cancelled { .. })
    ));
}

/// A render into a registered temporary file writes over it; once the file is removed (as
/// on a signal), the render fails and does not make it again.
#[test]
fn a_render_writes_over_its_temporary_file_and_never_makes_it_again() {
    let g = fugue_graph::read::ag::parse(
        r#"o = { kind: "osc", freq: 440, }; s = { kind: "sink", }; o.1 -> s.1;"#,
        "x.ag",
    )
    .unwrap();
    let (tmp, mut f) =
        fugue_engine::output::Temp::create(scratch("over.part"), Path::new("over.wav")).unwrap();
    std::io::Write::write_all(&mut f, &vec![7u8; 1 << 20]).unwrap();
    drop(f);
    let opts = RenderOptions {
        output: Output::Wav(tmp.path().to_path_buf()),
        seconds: Some(0.1),
        ..Default::default()
    };
    let summary = render(&g, &opts, |_| {}).unwrap();
    assert_eq!(summary.frames, 4800);
    // The header and 4,800 float samples: the megabyte written before is gone.
    let len = std::fs::metadata(tmp.path()).unwrap().len();
    assert!(len > 4800 * 4 && len < 4800 * 4 + 200, "{len} bytes");
    assert_eq!(hound::WavReader::open(tmp.path()).unwrap().duration(), 4800);
    std::fs::remove_file(tmp.path()).unwrap();
    assert!(matches!(
        render(&g, &opts, |_| {}),
        Err(RenderError::Write { .. })
    ));
    assert!(!tmp.path().exists());
}

#[test]
fn progress_reaches_the_end() {
    let g = fugue_graph::read::ag::parse(
        r#"o = { kind: "osc", freq: 1, }; s = { kind: "sink", }; o.1 -> s.1;"#,
        "x.ag",
    )
    .unwrap();
    let mut last = None;
    let opts = RenderOptions {
        seconds: Some(2.0),
        ..Default::default()
    };
    render(&g, &opts, |p| last = Some(p)).unwrap();
    let p = last.unwrap();
    assert_eq!((p.frames_done, p.frames_total), (96_000, 96_000));
}

/// A static schedule that its time limit cut short is said among the executor's warnings
/// (render and run have no `--time-limit`: the warning is all that tells).
#[test]
fn a_static_schedule_cut_short_is_said() {
    let g = read(&examples().join("rake.ag"));
    let plan = compile(&g, 64);
    let registry = Registry::with_builtin_kinds();
    for algorithm in [fugue_sched::Algorithm::Cpfd, fugue_sched::Algorithm::Etf] {
        let choice = fugue_engine::ExecutorChoice {
            kind: fugue_exec::ExecutorKind::Static,
            threads: 2,
            algorithm,
            time_limit: std::time::Duration::ZERO,
            ..Default::default()
        };
        let (_, warnings) = fugue_engine::build_executor(&g, &registry, &plan, &choice).unwrap();
        let said: Vec<&String> = warnings
            .iter()
            .filter(|w| w.starts_with("the static schedule: "))
            .collect();
        assert_eq!(said.len(), 1, "{algorithm}: {warnings:?}");
        assert!(
            said[0].contains(&format!(
                "{algorithm} did not finish within the time limit of 0 s; the schedule is HLFET's"
            )),
            "{}",
            said[0]
        );
        let ample = fugue_engine::ExecutorChoice {
            time_limit: std::time::Duration::from_secs(60),
            ..choice
        };
        let (_, warnings) = fugue_engine::build_executor(&g, &registry, &plan, &ample).unwrap();
        assert!(
            warnings
                .iter()
                .all(|w| !w.starts_with("the static schedule")),
            "{warnings:?}"
        );
    }
}
