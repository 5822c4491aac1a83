//! fugue's `faust` node computes what Faust's own C output computes: six programs of
//! different kinds (an oscillator, a plucked string, an echo and reverb, a noise gate, a
//! Moog filter, a mixer) compiled with `faust -lang c` and `cc`, run by a small C harness on
//! the same input, over one second in blocks of 256. The difference is relative to the
//! sample's magnitude (at least 1):
//!
//! - the LLVM backend (the default): within 1e-6. The harness is built for this machine
//!   with contraction of multiply-adds (`-march=native -ffp-contract=fast`), as LLVM compiles
//!   for it;
//! - the interpreter: within 1e-5 (it evaluates the math functions, a sine table for one,
//!   its own way).

use std::path::{Path, PathBuf};
use std::process::Command;

use fugue_dsp::{NodeContext, Ratio};
use fugue_graph::{Node, Value};

const RATE: usize = 48_000;
const BLOCK: usize = 256;
const BLOCKS: usize = RATE / BLOCK;

/// The harness: the program's default parameters, the input of [`input`], raw floats out
/// (block after block, output after output).
const HARNESS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include "faust/gui/CInterface.h"
#ifndef RESTRICT
#define RESTRICT __restrict__
#endif
/* As Faust's minimal.c architecture defines them for the generated code. */
#define max(a,b) ((a < b) ? b : a)
#define min(a,b) ((a < b) ? a : b)
#include "prog.c"

int main(void) {
    mydsp* d = newmydsp();
    initmydsp(d, 48000);
    int ni = getNumInputsmydsp(d), no = getNumOutputsmydsp(d);
    float* in[16];
    float* out[16];
    for (int i = 0; i < ni; i++) in[i] = malloc(256 * sizeof(float));
    for (int j = 0; j < no; j++) out[j] = malloc(256 * sizeof(float));
    for (int b = 0; b < 48000 / 256; b++) {
        for (int i = 0; i < ni; i++)
            for (int n = 0; n < 256; n++) {
                long t = (long)b * 256 + n;
                in[i][n] = (float)((t * 37 + i * 11) % 200) / 200.0f - 0.5f;
            }
        computemydsp(d, 256, in, out);
        for (int j = 0; j < no; j++) fwrite(out[j], sizeof(float), 256, stdout);
    }
    return 0;
}
"#;

/// Input `i`'s sample at frame `t`: the harness's sawtooth.
fn input(i: usize, t: usize) -> f32 {
    ((t * 37 + i * 11) % 200) as f32 / 200.0 - 0.5
}

/// The C build's output of `program`: `None` (with the reason said) where `faust` or `cc`
/// is missing.
fn c_output(program: &Path, dir: &Path) -> Option<Vec<f32>> {
    let c = dir.join("prog.c");
    let faust = Command::new("faust")
        .args(["-lang", "c", "-cn", "mydsp"])
        .arg(program)
        .arg("-o")
        .arg(&c)
        .output();
    match faust {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "faust -lang c {}: {}",
            program.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            eprintln!("SKIPPED against_c: no faust command ({e})");
            return None;
        }
    }
    std::fs::write(dir.join("harness.c"), HARNESS).unwrap();
    let exe = dir.join("harness");
    let cc = Command::new("cc")
        .args([
            "-O2",
            "-march=native",
            "-ffp-contract=fast",
            "-std=gnu99",
            "-o",
        ])
        .arg(&exe)
        .arg(dir.join("harness.c"))
        .arg("-lm")
        .output();
    match cc {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "cc {}: {}",
            program.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            eprintln!("SKIPPED against_c: no cc ({e})");
            return None;
        }
    }
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success());
    Some(
        o.stdout
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

/// fugue's output of `program`, in the harness's layout.
fn fugue_output(program: &Path, backend: &str) -> Vec<f32> {
    let node = Node::new("p", "faust")
        .with_attr("file", Value::Str(program.display().to_string()))
        .with_attr("backend", Value::Str(backend.into()));
    let ctx = NodeContext {
        node: &node,
        inputs: 0,
        outputs: 1,
        in_edges: 0,
        sample_rate: RATE as f64,
        block: BLOCK,
        rate: Ratio::ONE,
        engine_rate: RATE as f64,
        engine_block: BLOCK,
        folder: None,
    };
    let d = fugue_faust::build(&ctx).unwrap();
    let mut p = d.processor();
    let (ni, no) = (d.inputs(), d.outputs());
    let mut ins = vec![vec![0.0f32; BLOCK]; ni];
    let mut outs = vec![vec![0.0f32; BLOCK]; no];
    let mut all = Vec::with_capacity(RATE * no);
    for b in 0..BLOCKS {
        for (i, x) in ins.iter_mut().enumerate() {
            for (n, s) in x.iter_mut().enumerate() {
                *s = input(i, b * BLOCK + n);
            }
        }
        let refs: Vec<&[f32]> = ins.iter().map(|x| &x[..]).collect();
        let mut orefs: Vec<&mut [f32]> = outs.iter_mut().map(|x| &mut x[..]).collect();
        p.process(&refs, &mut orefs);
        for o in &outs {
            all.extend_from_slice(o);
        }
    }
    all
}

#[test]
fn six_programs_match_their_c_build() {
    if !fugue_faust::available_for("six_programs_match_their_c_build") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut programs: Vec<PathBuf> = vec![
        PathBuf::from("/usr/share/faust/examples/generator/osc.dsp"),
        root.join("examples/faust/string.dsp"),
        root.join("examples/faust/effects.dsp"),
        PathBuf::from("/usr/share/faust/examples/dynamic/noiseGate.dsp"),
        PathBuf::from("/usr/share/faust/examples/filtering/moogVCF.dsp"),
        PathBuf::from("/usr/share/faust/examples/misc/mixer.dsp"),
    ];
    if let Some(list) = std::env::var_os("FUGUE_FAUST_C_PROGRAMS") {
        programs = std::env::split_paths(&list).collect();
    }
    let dir = std::env::temp_dir().join(format!("fugue-faust-c-{}", std::process::id()));
    let mut bad = Vec::new();
    for program in &programs {
        if !program.exists() {
            eprintln!("SKIPPED {}: not installed", program.display());
            continue;
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let Some(want) = c_output(program, &dir) else {
            return;
        };
        for backend in ["llvm", "interp"] {
            let got = fugue_output(program, backend);
            assert_eq!(got.len(), want.len(), "{}", program.display());
            assert!(
                want.iter().any(|&x| x != 0.0),
                "{}: silent",
                program.display()
            );
            let worst = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
                .fold(0.0f32, f32::max);
            eprintln!(
                "{} ({backend}): largest difference {worst:e}",
                program.display()
            );
            let tolerance = if backend == "llvm" { 1e-6 } else { 1e-5 };
            if worst > tolerance {
                bad.push(format!("{} ({backend}): {worst:e}", program.display()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "beyond the tolerance: {bad:?}");
}
