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

/// A node of one input and one output whose processors say where they lie when they run.
struct Spot {
    gain: f32,
    seen: Arc<Mutex<Vec<usize>>>,
}

/// [`Spot`]'s processor.
struct SpotProc {
    gain: f32,
    seen: Arc<Mutex<Vec<usize>>>,
    said: bool,
}

impl fugue_dsp::DspNode for Spot {
    fn inputs(&self) -> usize {
        1
    }
    fn outputs(&self) -> usize {
        1
    }
    fn processor(&self) -> Box<dyn fugue_dsp::Processor> {
        Box::new(SpotProc {
            gain: self.gain,
            seen: self.seen.clone(),
            said: false,
        })
    }
}

impl fugue_dsp::Processor for SpotProc {
    fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        if !self.said {
            self.said = true;
            self.seen.lock().unwrap().push(self as *const Self as usize);
        }
        for (o, &i) in outputs[0].iter_mut().zip(inputs[0]) {
            *o = i * self.gain;
        }
    }
    fn reset(&mut self) {}
}

#[test]
fn a_plans_processors_have_lines_of_their_own() {
    let seen = Arc::new(Mutex::new(Vec::<usize>::new()));
    let nodes = Arc::new(Mutex::new(Vec::<usize>::new()));
    let mut reg = Registry::with_builtin_kinds();
    let (s, n) = (seen.clone(), nodes.clone());
    reg.register("spot", move |ctx| {
        let gain = ctx
            .node
            .attr("gain")
            .and_then(|v| v.as_f64())
            .unwrap_or(1.0) as f32;
        let node = Box::new(Spot {
            gain,
            seen: s.clone(),
        });
        n.lock().unwrap().push(&*node as *const Spot as usize);
        Ok(node as Box<dyn fugue_dsp::DspNode>)
    });
    let src = "o = { kind: \"osc\", freq: 440, };\n\
               a = { kind: \"spot\", gain: 0.5, };  b = { kind: \"spot\", gain: 0.25, };\n\
               s = { kind: \"sink\", in: 2, };\n\
               o.1 -> a.1 -> s.1;  o.1 -> b.1 -> s.2;\n";
    let g = fugue_graph::read::ag::parse(src, "spot.ag").unwrap();
    let opts = CompileOptions {
        sample_rate: 48_000.0,
        block: 64,
        ..Default::default()
    };
    let mut plan = Plan::compile(&g, &reg, &opts).unwrap();
    SeqExecutor::new().run_cycle(&mut plan);
    // The nodes as built and the processors as they run.
    let (nodes, seen) = (nodes.lock().unwrap().clone(), seen.lock().unwrap().clone());
    assert_eq!(nodes.len(), 2, "both nodes built once");
    assert_eq!(seen.len(), 2, "both processors ran");
    for p in nodes.iter().chain(&seen) {
        assert_eq!(p % PAIR, 0, "{p:#x} starts a pair of lines");
    }
    // And the plan runs as any other: the two gains of the oscillator.
    let (l, r) = (plan.output(0).to_vec(), plan.output(1).to_vec());
    assert!(l.iter().any(|&x| x != 0.0));
    for (a, b) in l.iter().zip(&r) {
        assert_eq!(*a, b * 2.0);
    }
}

#[test]
fn zeroed_and_moved_blocks_of_any_alignment() {
    use std::alloc::{alloc, alloc_zeroed, dealloc, realloc, Layout};
    for inside in [false, true] {
        for align in [8, 16, 64, 4096] {
            let layout = Layout::from_size_align(8192, align).unwrap();
            let run = || {
                // SAFETY: a non-zero layout; each block is written within its size and
                // freed once with the layout it was made with.
                unsafe {
                    // A dirty block freed first, so that a zeroed one made in its place
                    // shows a clearing left out.
                    let dirty = alloc(layout);
                    assert!(!dirty.is_null());
                    std::ptr::write_bytes(dirty, 0xff, 8192);
                    dealloc(dirty, layout);
                    let z = alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0);
                    assert!(std::slice::from_raw_parts(z, 8192).iter().all(|&b| b == 0));
                    // Grown, then shrunk: contents kept, alignment kept.
                    for (i, b) in std::slice::from_raw_parts_mut(z, 8192)
                        .iter_mut()
                        .enumerate()
                    {
                        *b = i as u8;
                    }
                    let g = realloc(z, layout, 20_000);
                    assert!(!g.is_null());
                    assert_eq!(g as usize % align, 0);
                    let grown = Layout::from_size_align(20_000, align).unwrap();
                    let k = realloc(g, grown, 100);
                    assert!(!k.is_null());
                    assert_eq!(k as usize % align, 0);
                    assert!(std::slice::from_raw_parts(k, 100)
                        .iter()
                        .enumerate()
                        .all(|(i, &b)| b == i as u8));
                    dealloc(k, Layout::from_size_align(100, align).unwrap());
                }
            };
            if inside {
                apart(run)
            } else {
                run()
            }
        }
    }
}
