//! [`fugue_exec::lines`]: under [`LineAllocator`], what is allocated inside `apart` (a plan's
//! processors among it) has pairs of cache lines of its own, and every allocation, inside or
//! not, stays usable: zeroed, grown, shrunk, freed on either side.

use std::sync::{Arc, Mutex};

use fugue_dsp::Registry;
use fugue_exec::lines::{apart, LineAllocator, PAIR};
use fugue_exec::{CompileOptions, Executor, Plan, SeqExecutor};

#[global_allocator]
static LINES: LineAllocator = LineAllocator;

/// The 128-byte pairs of lines that `len` bytes from `p` touch.
fn pairs(p: usize, len: usize) -> std::ops::Range<usize> {
    p / PAIR..(p + len.max(1)).div_ceil(PAIR)
}

#[test]
fn allocations_inside_apart_share_no_pair_of_lines() {
    let (small, mid, floats) = apart(|| {
        let small: Vec<Box<u32>> = (0..64).map(Box::new).collect();
        let mid: Vec<Box<[u64; 5]>> = (0..64).map(|i| Box::new([i; 5])).collect();
        let floats: Vec<Vec<f32>> = (0..16).map(|i| vec![i as f32; 100 + i]).collect();
        (small, mid, floats)
    });
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for b in &small {
        spans.push((&**b as *const u32 as usize, 4));
    }
    for b in &mid {
        spans.push((b.as_ptr() as usize, 40));
    }
    for v in &floats {
        spans.push((v.as_ptr() as usize, v.len() * 4));
    }
    for &(p, _) in &spans {
        assert_eq!(p % PAIR, 0, "{p:#x} starts a pair of lines");
    }
    spans.sort();
    for w in spans.windows(2) {
        let (a, b) = (pairs(w[0].0, w[0].1), pairs(w[1].0, w[1].1));
        assert!(
            a.end <= b.start,
            "{:#x} and {:#x} share a pair",
            w[0].0,
            w[1].0
        );
    }
    assert!(small.iter().enumerate().all(|(i, b)| **b == i as u32));
    assert!(mid.iter().enumerate().all(|(i, b)| b[4] == i as u64));
}

#[test]
fn blocks_stay_valid_across_apart() {
    // Made inside, grown and shrunk outside, and the other way round; contents kept.
    let mut v: Vec<u16> = apart(|| (0..10).collect());
    v.extend(10..5000);
    v.truncate(7);
    v.shrink_to_fit();
    assert_eq!(v, (0..7).collect::<Vec<u16>>());
    let mut w: Vec<u64> = (0..3).collect();
    apart(|| {
        w.extend(3..1000);
        assert_eq!(
            w.as_ptr() as usize % PAIR,
            0,
            "regrown inside: lines of its own"
        );
    });
    assert!(w.iter().enumerate().all(|(i, &x)| x == i as u64));
    // Zeroed blocks, inside and outside, of any alignment.
    #[repr(align(4096))]
    struct Page([u8; 4096]);
    for inside in [false, true] {
        let run = || {
            let z = vec![0u8; 3000];
            let p: Box<Page> = Box::new(Page([0; 4096]));
            (z, p)
        };
        let (z, p) = if inside { apart(run) } else { run() };
        assert!(z.iter().all(|&x| x == 0));
        assert_eq!(&*p as *const Page as usize % 4096, 0);
        assert!(p.0.iter().all(|&x| x == 0));
    }
}

#[test]
fn a_plans_processors_have_lines_of_their_own() {
    // A kind that records where each of its processors lies.
    let seen = Arc::new(Mutex::new(Vec::<usize>::new()));
    let builtin = Registry::with_builtin_kinds();
    let mut reg = Registry::with_builtin_kinds();
    let s = seen.clone();
    reg.register("spot", move |ctx| {
        let at_gain = fugue_graph::Node {
            kind: "gain".into(),
            ..ctx.node.clone()
        };
        let here = fugue_dsp::NodeContext {
            node: &at_gain,
            ..*ctx
        };
        let (node, _) = builtin.build(&here, false)?;
        s.lock()
            .unwrap()
            .push(&*node as *const dyn fugue_dsp::DspNode as *const u8 as usize);
        Ok(node)
    });
    let src = "o = { kind: \"osc\", freq: 440, };\n\
               a = { kind: \"spot\", db: -3, };  b = { kind: \"spot\", db: -6, };\n\
               s = { kind: \"sink\", in: 2, };\n\
               o.1 -> a.1 -> s.1;  o.1 -> b.1 -> s.2;\n";
    let g = fugue_graph::read::ag::parse(src, "spot.ag").unwrap();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block: 64,
        ..Default::default()
    };
    let mut plan = Plan::compile(&g, &reg, &opts).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "both processors built once");
    for p in seen {
        assert_eq!(p % PAIR, 0, "a processor at {p:#x} starts a pair of lines");
    }
    // And the plan runs as any other: the two gains of the oscillator.
    SeqExecutor::new().run_cycle(&mut plan);
    let (l, r) = (plan.output(0).to_vec(), plan.output(1).to_vec());
    assert!(l.iter().any(|&x| x != 0.0));
    let ratio = 10f32.powf(-3.0 / 20.0) / 10f32.powf(-6.0 / 20.0);
    for (a, b) in l.iter().zip(&r) {
        assert!((a - b * ratio).abs() < 1e-5);
    }
}
