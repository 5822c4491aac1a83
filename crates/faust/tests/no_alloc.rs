//! A `faust` node's processor allocates nothing when it runs: its `process` (and `reset`)
//! under the counting global allocator, for both backends, with inputs, parameters and
//! sub-block calls.
//!
//! The counter sees the Rust side (the processor's buffers and pointer arrays); the program's
//! `compute` is the code libfaust generated, which calls no allocator.

use fugue_faust::node_for_code;

#[global_allocator]
static GLOBAL: fugue_testkit::alloc::Counting = fugue_testkit::alloc::Counting;

/// One test only in this binary, so no other test allocates while we count.
#[test]
fn process_and_reset_do_not_allocate() {
    if !fugue_faust::available_for("process_and_reset_do_not_allocate") {
        return;
    }
    let code = "import(\"stdfaust.lib\"); g = hslider(\"gain\", 0.5, 0, 1, 0.01); \
                process = os.osc(440) * g, no.noise : fi.lowpass(2, 2000), de.delay(4096, 1000);";
    for backend in ["llvm", "interp"] {
        let node = node_for_code(code, backend, 48_000.0, 256).unwrap();
        assert_eq!((node.inputs(), node.outputs()), (0, 2));
        let mut p = node.processor();
        let mut a = vec![0.0f32; 256];
        let mut b = vec![0.0f32; 256];
        let (events, ()) = fugue_testkit::alloc::count_this_thread(|| {
            for _ in 0..50 {
                let mut outs: [&mut [f32]; 2] = [&mut a, &mut b];
                p.process(&[], &mut outs);
                // A cycle in two parts, as the plan's pipelining cuts it.
                let (a1, a2) = a.split_at_mut(100);
                let (b1, b2) = b.split_at_mut(100);
                p.process(&[], &mut [a1, b1]);
                p.process(&[], &mut [a2, b2]);
            }
            p.reset();
        });
        assert_eq!(events, 0, "{backend}: the processor allocated");
        assert!(a.iter().chain(&b).all(|x| x.is_finite()));
        assert!(a.iter().any(|&x| x != 0.0), "{backend}: silence");
    }
}

/// A live change of a name that several parameters share (a label in two groups) sets them
/// all, as the attribute does at load, without allocating; a full path sets its own.
#[test]
fn a_shared_name_sets_every_parameter_it_names_live() {
    if !fugue_faust::available_for("a_shared_name_sets_every_parameter_it_names_live") {
        return;
    }
    let code = "process = hgroup(\"left\", hslider(\"gain\", 0.1, 0, 1, 0.01)), \
                vgroup(\"right\", hslider(\"gain\", 0.2, 0, 1, 0.01));";
    let node = node_for_code(code, "llvm", 48_000.0, 64).unwrap();
    let mut p = node.processor();
    let (mut a, mut b) = (vec![0.0f32; 64], vec![0.0f32; 64]);
    let mut run = |p: &mut Box<dyn fugue_dsp::Processor>| {
        p.process(&[], &mut [&mut a, &mut b]);
        (a[63], b[63])
    };
    assert_eq!(run(&mut p), (0.1, 0.2));
    let both = node.live_param("gain").unwrap();
    let (events, ()) = fugue_testkit::alloc::count_this_thread(|| p.set_param(both, 0.9));
    assert_eq!(events, 0, "the change allocated");
    assert_eq!(run(&mut p), (0.9, 0.9));
    let left = node.live_param("/left/gain").unwrap();
    p.set_param(left, 0.5);
    assert_eq!(run(&mut p), (0.5, 0.9));
    // A reset keeps what was set live.
    p.reset();
    assert_eq!(run(&mut p), (0.5, 0.9));
}
