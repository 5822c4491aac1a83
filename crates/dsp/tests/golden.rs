//! Golden and differential tests of the kinds, with stated tolerances.

use fugue_dsp::{DspNode, NodeContext, Processor, Ratio, Registry};
use fugue_graph::{Node, Value};
use realfft::RealFftPlanner;
use std::f64::consts::FRAC_1_SQRT_2;

/// A node of `kind` with numeric or string attributes.
fn node(kind: &str, attrs: &[(&str, &str)]) -> Node {
    let mut n = Node::new(format!("test-{kind}"), kind);
    for (k, v) in attrs {
        n = n.with_attr(*k, Value::Str(v.to_string()));
    }
    n
}

fn build(n: &Node, inputs: usize, outputs: usize, rate: f64, block: usize) -> Box<dyn DspNode> {
    let ctx = NodeContext {
        node: n,
        inputs,
        outputs,
        in_edges: inputs,
        sample_rate: rate,
        block,
        rate: Ratio::ONE,
        engine_rate: rate,
        engine_block: block,
        folder: None,
    };
    Registry::with_builtin_kinds().build(&ctx, false).unwrap().0
}

/// Runs a processor over `input` (one channel, or none) in blocks of `block`, returns output 0.
fn run(
    p: &mut dyn Processor,
    d: &dyn DspNode,
    input: Option<&[f32]>,
    frames: usize,
    block: usize,
) -> Vec<f32> {
    let out_block = d.rate_ratio().scale(block).unwrap();
    let mut out = Vec::with_capacity(frames);
    let mut o = vec![0.0f32; out_block];
    let mut k = 0;
    while k < frames {
        let slice: Vec<&[f32]> = match input {
            Some(x) => vec![&x[k..k + block]],
            None => vec![],
        };
        let mut outs: [&mut [f32]; 1] = [&mut o];
        p.process(&slice, &mut outs);
        out.extend_from_slice(&o);
        k += block;
    }
    out
}

/// `sin(2π n f / rate)` with the phase computed exactly in integers (`f`, `rate` integral).
fn exact_sine(n: u64, f: u64, rate: u64) -> f64 {
    let turns = ((n * f) % rate) as f64 / rate as f64;
    (2.0 * std::f64::consts::PI * turns).sin()
}

/// `osc` 440 Hz at 48 kHz is a sine of that frequency and amplitude within 1e-5, sample by
/// sample, at the start and after ten minutes of rendered time.
#[test]
fn osc_is_an_exact_sine_even_after_ten_minutes() {
    for (rate, block) in [(48_000u64, 512usize), (44_100, 64)] {
        let n = node("osc", &[("freq", "440"), ("volume", "0.8")]);
        let d = build(&n, 0, 1, rate as f64, block);
        let mut p = d.processor();
        let mut o = vec![0.0f32; block];
        let ten_minutes = 600 * rate;
        let mut pos = 0u64;
        let mut worst = 0.0f64;
        let mut checked = 0u64;
        while pos < ten_minutes + 2 * rate {
            p.process(&[], &mut [&mut o]);
            if pos < rate || pos >= ten_minutes {
                for (k, &y) in o.iter().enumerate() {
                    let want = 0.8 * exact_sine(pos + k as u64, 440, rate);
                    worst = worst.max((y as f64 - want).abs());
                    checked += 1;
                }
            }
            pos += block as u64;
        }
        assert!(checked > 3 * rate - 2 * block as u64);
        assert!(worst < 1e-5, "rate {rate}: worst error {worst}");
    }
}

#[test]
fn mix_sums_its_inputs_times_volume() {
    let n = node("mix", &[("volume", "0.5")]);
    let d = build(&n, 3, 2, 48_000.0, 16);
    let mut p = d.processor();
    let a: Vec<f32> = (0..16).map(|k| k as f32).collect();
    let b = vec![1.0f32; 16];
    let c: Vec<f32> = (0..16).map(|k| -(k as f32) * 0.25).collect();
    let (mut o1, mut o2) = (vec![9.0f32; 16], vec![9.0f32; 16]);
    p.process(&[&a, &b, &c], &mut [&mut o1, &mut o2]);
    for k in 0..16 {
        let want = 0.5 * (a[k] + b[k] + c[k]);
        assert_eq!(o1[k], want);
        assert_eq!(o2[k], want);
    }
}

#[test]
fn mod_multiplies_its_input_by_a_sine() {
    let n = node("mod", &[("freq", "55"), ("volume", "0.5")]);
    let d = build(&n, 1, 1, 48_000.0, 64);
    let mut p = d.processor();
    let input: Vec<f32> = (0..4800).map(|k| 0.1 + (k % 7) as f32 * 0.1).collect();
    let out = run(p.as_mut(), d.as_ref(), Some(&input), 4800, 64);
    for (k, &y) in out.iter().enumerate() {
        let want = 0.5 * input[k] as f64 * exact_sine(k as u64, 55, 48_000);
        assert!((y as f64 - want).abs() < 1e-6, "frame {k}: {y} vs {want}");
    }
}

fn amplitude(x: &[f32]) -> f64 {
    (2.0 * x.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
}

/// The resampler gives `block * ratio` frames per cycle; the band-limited converter keeps a
/// 1 kHz tone within 0.1 dB both ways.
#[test]
fn resampler_lengths_and_band_limited_amplitude() {
    let rate = 48_000.0;
    let tone: Vec<f32> = (0..48_000)
        .map(|k| exact_sine(k, 1000, 48_000) as f32)
        .collect();
    for (ratio, out_rate) in [("0.5", 24_000usize), ("2", 96_000)] {
        for conv in ["sinc", "linear", "zero_hold"] {
            let n = node("resampler", &[("ratio", ratio), ("conv", conv)]);
            let d = build(&n, 1, 1, rate, 480);
            let mut p = d.processor();
            let out = run(p.as_mut(), d.as_ref(), Some(&tone), 48_000, 480);
            assert_eq!(out.len(), out_rate, "{ratio} {conv}");
            if conv == "sinc" {
                // Steady state: the second half, a whole number of periods.
                let per = out_rate / 1000;
                let tail = &out[out.len() / 2..out.len() / 2 + 100 * per];
                let db = 20.0 * amplitude(tail).log10();
                assert!(db.abs() < 0.1, "ratio {ratio}: {db} dB");
            }
        }
    }
}

/// Impulse response of a processor, `n` frames.
fn impulse_response(p: &mut dyn Processor, n: usize) -> Vec<f32> {
    let mut x = vec![0.0f32; n];
    x[0] = 1.0;
    let mut y = vec![0.0f32; n];
    p.process(&[&x], &mut [&mut y]);
    y
}

/// The biquad's response measured by FFT matches the analytic RBJ response within 0.05 dB.
#[test]
fn biquad_responses_match_the_analytic_response() {
    let rate = 48_000.0;
    let n = 16_384;
    let mut planner = RealFftPlanner::<f64>::new();
    let fft = planner.plan_fft_forward(n);
    for (ty, f0, q) in [
        ("lowpass", 1000.0, FRAC_1_SQRT_2),
        ("lowpass", 5000.0, 2.0),
        ("highpass", 300.0, FRAC_1_SQRT_2),
        ("bandpass", 2000.0, 4.0),
        ("notch", 3000.0, 1.0),
    ] {
        let nd = node(
            "biquad",
            &[
                ("type", ty),
                ("freq", &f0.to_string()),
                ("q", &q.to_string()),
            ],
        );
        let d = build(&nd, 1, 1, rate, n);
        let mut p = d.processor();
        let h = impulse_response(p.as_mut(), n);
        let mut input: Vec<f64> = h.iter().map(|&v| v as f64).collect();
        let mut spectrum = fft.make_output_vec();
        fft.process(&mut input, &mut spectrum).unwrap();
        let shape = match ty {
            "lowpass" => fugue_dsp::kinds::biquad::Shape::Lowpass,
            "highpass" => fugue_dsp::kinds::biquad::Shape::Highpass,
            "bandpass" => fugue_dsp::kinds::biquad::Shape::Bandpass,
            _ => fugue_dsp::kinds::biquad::Shape::Notch,
        };
        let [b0, b1, b2, a1, a2] = fugue_dsp::kinds::biquad::coefficients(shape, f0, q, rate);
        for f in [100.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0] {
            if ty == "notch" && f == 3000.0 {
                continue;
            }
            let bin = (f / rate * n as f64).round() as usize;
            let w = 2.0 * std::f64::consts::PI * bin as f64 / n as f64;
            // |H(e^jw)| = |b0 + b1 z^-1 + b2 z^-2| / |1 + a1 z^-1 + a2 z^-2|.
            let num = (b0 + b1 * w.cos() + b2 * (2.0 * w).cos())
                .hypot(b1 * w.sin() + b2 * (2.0 * w).sin());
            let den = (1.0 + a1 * w.cos() + a2 * (2.0 * w).cos())
                .hypot(a1 * w.sin() + a2 * (2.0 * w).sin());
            let want_db = 20.0 * (num / den).log10();
            let got_db = 20.0 * spectrum[bin].norm().log10();
            assert!(
                (got_db - want_db).abs() < 0.05,
                "{ty} {f0} Hz at {f} Hz: measured {got_db:.3} dB, analytic {want_db:.3} dB"
            );
        }
        if ty == "lowpass" && q == FRAC_1_SQRT_2 {
            // Butterworth: -3.01 dB at the cut-off, 0 dB at DC.
            let bin = (f0 / rate * n as f64).round() as usize;
            let at_fc = 20.0 * spectrum[bin].norm().log10();
            assert!((at_fc + 3.01).abs() < 0.05, "{at_fc}");
            assert!((20.0 * spectrum[0].norm().log10()).abs() < 0.01);
        }
    }
}

/// Inputs for every kind's differential tests: a deterministic, non-trivial signal.
fn signal(frames: usize) -> Vec<f32> {
    (0..frames)
        .map(|k| (k as f32 * 0.013).sin() * 0.5 + ((k * 7919) % 97) as f32 / 970.0)
        .collect()
}

/// Every kind, with attributes, inputs and outputs for the differential tests.
fn every_kind() -> Vec<(Node, usize)> {
    vec![
        (node("osc", &[("freq", "440")]), 0),
        (node("mod", &[("freq", "55")]), 1),
        (node("mix", &[]), 2),
        (node("gain", &[("db", "-3")]), 1),
        (node("biquad", &[("freq", "1200"), ("q", "3")]), 1),
        (node("delay", &[("time", "0.003"), ("feedback", "0.6")]), 1),
        (node("noise", &[]), 0),
        (node("karplus", &[("freq", "220"), ("period", "0.01")]), 0),
        (node("reverb", &[("room", "0.8")]), 1),
        (node("resampler", &[("ratio", "0.5")]), 1),
        (node("load", &[("wcet", "0")]), 1),
        (node("sink", &[]), 1),
        (node("source", &[]), 0),
    ]
}

/// Graph output ports: none for a sink (it writes an engine channel instead).
fn outputs(n: &Node) -> usize {
    usize::from(n.kind != "sink")
}

/// Output after `reset` equals a fresh processor's, exactly, for every kind.
#[test]
fn reset_equals_a_fresh_run() {
    let frames = 4096;
    let x = signal(frames);
    for (n, inputs) in every_kind() {
        let d = build(&n, inputs, outputs(&n), 48_000.0, 128);
        let input = (inputs > 0 || n.kind == "source").then_some(&x[..]);
        let mut p = d.processor();
        let fresh = run(p.as_mut(), d.as_ref(), input, frames, 128);
        p.reset();
        let again = run(p.as_mut(), d.as_ref(), input, frames, 128);
        assert_eq!(fresh, again, "kind {}", n.kind);
        assert!(fresh.iter().any(|&v| v != 0.0), "kind {} is silent", n.kind);
    }
}

/// Rendering in blocks of 64 equals rendering in blocks of 512, exactly, for every kind (the
/// sine kinds' phases depend on each sample's index alone).
#[test]
fn block_size_does_not_change_the_output() {
    let frames = 8192;
    let x = signal(frames);
    for (n, inputs) in every_kind() {
        let input = (inputs > 0 || n.kind == "source").then_some(&x[..]);
        let d64 = build(&n, inputs, outputs(&n), 48_000.0, 64);
        let d512 = build(&n, inputs, outputs(&n), 48_000.0, 512);
        let a = run(d64.processor().as_mut(), d64.as_ref(), input, frames, 64);
        let b = run(d512.processor().as_mut(), d512.as_ref(), input, frames, 512);
        assert_eq!(a.len(), b.len());
        let worst = a
            .iter()
            .zip(&b)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0f32, f32::max);
        let tol = 0.0;
        assert!(
            worst <= tol,
            "kind {}: blocks of 64 and 512 differ by {worst}",
            n.kind
        );
    }
}

/// Feedback kinds decay to exact zeros in silence, never through subnormal numbers.
#[test]
fn decaying_tails_have_no_subnormals() {
    let rate = 8_000.0;
    let frames = 8_000 * 40;
    let mut impulse = vec![0.0f32; frames];
    impulse[0] = 1.0;
    for (n, inputs) in [
        (node("delay", &[("time", "0.01"), ("feedback", "0.9")]), 1),
        (
            node(
                "karplus",
                &[("freq", "200"), ("period", "0"), ("decay", "0.99")],
            ),
            0,
        ),
        (node("reverb", &[("room", "0.9")]), 1),
        (node("biquad", &[("freq", "100"), ("q", "10")]), 1),
    ] {
        let d = build(&n, inputs, 1, rate, 400);
        let mut p = d.processor();
        let out = run(
            p.as_mut(),
            d.as_ref(),
            (inputs > 0).then_some(&impulse[..]),
            frames,
            400,
        );
        assert!(
            out.iter().all(|x| *x == 0.0 || x.is_normal()),
            "kind {}: subnormal output",
            n.kind
        );
        assert!(
            out[frames - 400..].iter().all(|&x| x == 0.0),
            "kind {}: the tail does not reach zero",
            n.kind
        );
    }
}

/// Processing a block in one call equals processing it in any cuts (consecutive calls on
/// parts of the block, as a pipelined plan does), bit for bit, over several blocks, for every
/// kind that keeps its rate (the resampler changes it and is never pipelined). The cuts are
/// drawn at random (seeded), including calls of one frame and cuts inside a sine's run of 8.
/// Twice: on a signal, and on a signal that stops after two blocks, so that the kinds' state
/// decays to the values they flush to zero (a filter's, below 1e-30) within the run.
#[test]
fn cuts_do_not_change_the_output() {
    let block = 512;
    let blocks = 12;
    let frames = block * blocks;
    let x = signal(frames);
    let mut stops = x.clone();
    stops[2 * block..].iter_mut().for_each(|v| *v = 0.0);
    for x in [x, stops] {
        cuts_do_not_change(&x, block, blocks);
    }
}

fn cuts_do_not_change(x: &[f32], block: usize, blocks: usize) {
    let mut rng = fugue_dsp::fast::Rng::new(11);
    for (n, inputs) in every_kind() {
        if n.kind == "resampler" {
            continue;
        }
        let input = (inputs > 0 || n.kind == "source").then_some(x);
        let d = build(&n, inputs, outputs(&n), 48_000.0, block);
        let whole = play(d.as_ref(), input, block, blocks, &[], |_| Vec::new());
        for trial in 0..8 {
            let out = play(d.as_ref(), input, block, blocks, &[], |_| {
                random_cuts(&mut rng, trial, block)
            });
            assert_same(&whole, &out, &format!("kind {} (trial {trial})", n.kind));
        }
    }
}

/// Cut points in (0, block): trial 0 cuts in 4 equal sub-blocks, the others at 1 to 6 random
/// places.
fn random_cuts(rng: &mut fugue_dsp::fast::Rng, trial: usize, block: usize) -> Vec<usize> {
    if trial == 0 {
        return vec![block / 4, block / 2, 3 * block / 4];
    }
    let k = 1 + (rng.next_u64() % 6) as usize;
    (0..k)
        .map(|_| 1 + (rng.next_u64() % (block as u64 - 1)) as usize)
        .collect()
}

/// `blocks` blocks of a fresh processor of `d`, each block in the calls that `cuts` (of the
/// block's index) gives, with the live changes `(block, param, value)` made before their
/// blocks, as the engine makes them at a cycle's start.
fn play(
    d: &dyn DspNode,
    input: Option<&[f32]>,
    block: usize,
    blocks: usize,
    changes: &[(usize, usize, f64)],
    mut cuts: impl FnMut(usize) -> Vec<usize>,
) -> Vec<f32> {
    let mut p = d.processor();
    let mut out = vec![0.0f32; block * blocks];
    for b in 0..blocks {
        for &(_, param, value) in changes.iter().filter(|c| c.0 == b) {
            p.set_param(param, value);
        }
        let mut cuts = cuts(b);
        cuts.push(0);
        cuts.push(block);
        cuts.sort_unstable();
        cuts.dedup();
        for w in cuts.windows(2) {
            let (a, e) = (b * block + w[0], b * block + w[1]);
            let slice: Vec<&[f32]> = match input {
                Some(x) => vec![&x[a..e]],
                None => vec![],
            };
            let mut outs: [&mut [f32]; 1] = [&mut out[a..e]];
            p.process(&slice, &mut outs);
        }
    }
    out
}

fn assert_same(whole: &[f32], cut: &[f32], what: &str) {
    let differ = whole
        .iter()
        .zip(cut)
        .position(|(p, q)| p.to_bits() != q.to_bits());
    assert_eq!(differ, None, "{what}: cut calls differ from whole calls");
}

/// Live changes made between blocks give the same samples whether the blocks come whole or
/// cut into calls (a pipelined plan): every live parameter of every kind, changed twice
/// (once in two successive blocks), including a delay's `time`, whose change fades over
/// the next block.
#[test]
fn live_changes_do_not_depend_on_cuts() {
    let (block, blocks) = (256, 10);
    let x = signal(block * blocks);
    let mut rng = fugue_dsp::fast::Rng::new(5);
    // Values that every kind holding the attribute accepts.
    let values: &[(&str, f64, f64)] = &[
        ("time", 0.001, 0.0021),
        ("feedback", 0.3, -0.5),
        ("freq", 330.0, 1250.0),
        ("q", 2.0, 0.7),
        ("db", -6.0, 2.0),
        ("gain", 0.5, 1.5),
        ("room", 0.5, 0.9),
        ("volume", 0.5, 0.8),
        ("wet", 0.3, 0.9),
        ("dry", 0.7, 0.2),
        ("decay", 0.9, 0.99),
        ("damp", 0.2, 0.6),
        ("width", 0.5, 0.0),
    ];
    let mut changed = 0;
    for (n, inputs) in every_kind() {
        if n.kind == "resampler" {
            continue;
        }
        let input = (inputs > 0 || n.kind == "source").then_some(&x[..]);
        let d = build(&n, inputs, outputs(&n), 48_000.0, block);
        let doc = fugue_dsp::kinds::doc::builtin_doc(&n.kind).expect("a built-in kind");
        for attr in doc.live.iter() {
            assert!(
                values.iter().any(|v| v.0 == attr),
                "kind {}: no values for its live `{attr}`",
                n.kind
            );
        }
        for &(attr, a, b) in values {
            let Some(param) = d.live_param(attr) else {
                continue;
            };
            changed += 1;
            let changes = [(2, param, a), (5, param, b), (6, param, a)];
            let whole = play(d.as_ref(), input, block, blocks, &changes, |_| Vec::new());
            for trial in 0..6 {
                let out = play(d.as_ref(), input, block, blocks, &changes, |_| {
                    random_cuts(&mut rng, trial, block)
                });
                assert_same(
                    &whole,
                    &out,
                    &format!("kind {}, live {attr} (trial {trial})", n.kind),
                );
            }
        }
    }
    assert!(changed >= 8, "only {changed} live parameters were changed");
}

/// The frames of `out` that are not zero.
fn nonzero(out: &[f32]) -> Vec<usize> {
    (0..out.len()).filter(|&i| out[i] != 0.0).collect()
}

/// A live change of a delay's `time` moves its echo: an impulse comes back `time` later,
/// before and after the change (the block after it fades from the old delay to the new one).
/// The line is `max_time` long (1 s by default), and the node says so as its live bound.
#[test]
fn delay_time_changes_live_within_its_line() {
    let (rate, block) = (48_000.0, 64);
    let n = node(
        "delay",
        &[
            ("time", "0.001"),
            ("wet", "1"),
            ("dry", "0"),
            ("feedback", "0"),
        ],
    );
    let d = build(&n, 1, 1, rate, block);
    let time = d.live_param("time").expect("time is live");
    assert_eq!(d.live_max(time), Some(1.0));
    let mut p = d.processor();
    let mut impulse = vec![0.0f32; 4 * block];
    impulse[0] = 1.0;
    // 48 frames of delay: the echo at frame 48.
    let out = run(p.as_mut(), d.as_ref(), Some(&impulse), 4 * block, block);
    assert_eq!(nonzero(&out), [48]);
    p.set_param(time, 0.002);
    // One block of silence carries the fade; then 96 frames of delay.
    let silence = vec![0.0f32; block];
    let faded = run(p.as_mut(), d.as_ref(), Some(&silence), block, block);
    assert!(faded.iter().all(|&x| x == 0.0), "{faded:?}");
    let out = run(p.as_mut(), d.as_ref(), Some(&impulse), 4 * block, block);
    assert_eq!(nonzero(&out), [96]);
    // A longer `max_time` is a longer bound.
    let n = node("delay", &[("time", "0.5"), ("max_time", "3")]);
    let d = build(&n, 1, 1, rate, block);
    assert_eq!(d.live_max(time), Some(3.0));
}

/// A delay as long as its line (`time` = `max_time`) and one in a longer line compute the
/// same samples.
#[test]
fn a_delay_in_a_longer_line_is_the_same_delay() {
    let (rate, block) = (48_000.0, 128);
    let noise: Vec<f32> = (0..48_000)
        .map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0)
        .collect();
    let attrs = [("time", "0.01"), ("feedback", "0.6"), ("wet", "0.7")];
    let mut exact = attrs.to_vec();
    exact.push(("max_time", "0.01"));
    let mut long = attrs.to_vec();
    long.push(("max_time", "0.5"));
    let outs: Vec<Vec<f32>> = [exact, long]
        .iter()
        .map(|a| {
            let d = build(&node("delay", a), 1, 1, rate, block);
            let mut p = d.processor();
            run(
                p.as_mut(),
                d.as_ref(),
                Some(&noise),
                48_000 - 48_000 % block,
                block,
            )
        })
        .collect();
    assert_eq!(outs[0], outs[1]);
}

/// `mod` frequency, `reverb` room and wet, and `karplus` decay change live: the output after
/// the change differs from the output without it, and the kinds name them.
#[test]
fn mod_reverb_and_karplus_parameters_change_live() {
    let (rate, block) = (48_000.0, 256);
    // 4 blocks before the change, 16 after (a reverb's combs come back after 1116 frames).
    let input: Vec<f32> = (0..20 * block)
        .map(|i| ((i % 97) as f32 / 48.0) - 1.0)
        .collect();
    for (kind, attrs, attr, value) in [
        ("mod", vec![("freq", "55")], "freq", 220.0),
        ("reverb", vec![], "room", 0.95),
        ("reverb", vec![], "wet", 0.9),
        ("karplus", vec![("freq", "220")], "decay", 0.5),
    ] {
        let d = build(&node(kind, &attrs), 1, 1, rate, block);
        let param = d
            .live_param(attr)
            .unwrap_or_else(|| panic!("{kind} {attr} is live"));
        let mut plain = d.processor();
        let mut changed = d.processor();
        let a = run(
            plain.as_mut(),
            d.as_ref(),
            Some(&input[..4 * block]),
            4 * block,
            block,
        );
        let b = run(
            changed.as_mut(),
            d.as_ref(),
            Some(&input[..4 * block]),
            4 * block,
            block,
        );
        assert!(a == b, "{kind}: the same before the change");
        changed.set_param(param, value);
        let a = run(
            plain.as_mut(),
            d.as_ref(),
            Some(&input[4 * block..]),
            16 * block,
            block,
        );
        let b = run(
            changed.as_mut(),
            d.as_ref(),
            Some(&input[4 * block..]),
            16 * block,
            block,
        );
        assert!(a != b, "{kind} {attr}: the change is not heard");
    }
}

/// The DOT reader leaves Graphviz's drawing attributes out of a node's attributes; no
/// built-in kind reads an attribute of one of those names (else a `.dot` file could not give
/// it).
#[test]
fn no_builtin_kind_reads_a_graphviz_drawing_attribute() {
    let r = Registry::with_builtin_kinds();
    assert!(r.docs().len() >= 10);
    for doc in r.docs() {
        for a in fugue_graph::read::dot::DISPLAY_ATTRIBUTES {
            assert!(
                !doc.attribute_names().split(", ").any(|n| n == *a),
                "kind {} reads `{a}`",
                doc.name
            );
        }
    }
}

/// A plucked `karplus` string sounds at its `freq`, within 2 cents, from 110 Hz to 4 kHz (a
/// string of whole frames alone is up to half a frame off: 36 cents sharp at 2 kHz). The
/// pitch is the peak of the spectrum of the ringing string (Hann window, zero-padded 4x,
/// the peak interpolated by a parabola through its log magnitudes).
#[test]
fn karplus_sounds_at_its_pitch() {
    let mut planner = RealFftPlanner::<f64>::new();
    for (rate, freq, frames) in [
        (48_000.0, 110.0, 65_536),
        (48_000.0, 440.0, 32_768),
        (48_000.0, 1000.0, 16_384),
        (48_000.0, 2000.0, 8192),
        (44_100.0, 3000.0, 4096),
        (48_000.0, 4000.0, 2048),
    ] {
        let nd = node(
            "karplus",
            &[
                ("freq", &freq.to_string()),
                ("decay", "1"),
                ("period", "0"),
                ("seed", "7"),
            ],
        );
        let block = 256;
        let d = build(&nd, 0, 1, rate, block);
        let mut p = d.processor();
        let x = run(p.as_mut(), d.as_ref(), None, frames, block);
        let n = 4 * frames;
        let fft = planner.plan_fft_forward(n);
        let mut input = vec![0.0f64; n];
        for (k, v) in x.iter().enumerate() {
            let hann = 0.5 - 0.5 * (std::f64::consts::TAU * k as f64 / frames as f64).cos();
            input[k] = f64::from(*v) * hann;
        }
        let mut spectrum = fft.make_output_vec();
        fft.process(&mut input, &mut spectrum).unwrap();
        let bin_hz = rate / n as f64;
        // The strongest bin within a semitone of the pitch.
        let lo = (freq * 0.94 / bin_hz) as usize;
        let hi = (freq * 1.06 / bin_hz) as usize;
        let peak = (lo..=hi)
            .max_by(|&a, &b| spectrum[a].norm().total_cmp(&spectrum[b].norm()))
            .unwrap();
        let [a, b, c] = [peak - 1, peak, peak + 1].map(|i| spectrum[i].norm().ln());
        let offset = 0.5 * (a - c) / (a - 2.0 * b + c);
        let heard = (peak as f64 + offset) * bin_hz;
        let cents = 1200.0 * (heard / freq).log2();
        assert!(
            cents.abs() < 2.0,
            "karplus at {freq} Hz ({rate} Hz) sounds at {heard:.3} Hz: {cents:.2} cents off"
        );
    }
}
