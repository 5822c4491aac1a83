//! `fugue bench faust`: Faust's own builds of a program (scalar, `-vec`, and its two parallel
//! modes, `-vec -sch`, Faust's work-stealing scheduler, and `-vec -omp`, OpenMP) against
//! fugue on a graph of the same music (one node per voice), in one run.
//!
//! Each Faust build is the program compiled by `faust -a driver.cpp` (the driver in
//! `crates/bench/faust/driver.cpp`: it sets the parameters, runs the blocks and writes the
//! outputs) and `g++ -O3`; the parallel modes run at each thread count (`OMP_NUM_THREADS`).
//! fugue renders the graph with `fugue render` (seq, and ws and static at each thread count
//! above 1). Every run is timed twice: the whole process (start-up, compilation by libfaust
//! for fugue, the instance's init for Faust) and the blocks alone (the driver's timed loop,
//! the render's own wall time; fugue's programs are compiled by one untimed render first, as
//! a user's second run finds them in the disk cache), and its output is checked: fugue's against its own seq, bit
//! for bit; Faust's against its scalar build, within [`FaustBenchConfig::tolerance`]. The
//! runs are interleaved (every contender once, then again), so that a slow spell of the
//! machine falls on all of them alike.

mod write;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub use write::{findings, write, FILES};

use crate::error::BenchError;

/// The largest difference between fugue's seq render of a graph and Faust's scalar build of
/// its program that still counts as the same music: two compilers and another order of the
/// voices' sum differ by about 1e-5 at most; a graph of other voices or parameters differs by
/// the music's own size.
pub const SAME_MUSIC: f64 = 1e-3;

/// The driver that Faust compiles each program into.
pub const DRIVER: &str = include_str!("../../faust/driver.cpp");

/// One program and the fugue graph of the same music.
#[derive(Clone, Debug)]
pub struct Program {
    /// Its name in the tables.
    pub name: String,
    /// The Faust program.
    pub dsp: PathBuf,
    /// The fugue graph of the same music.
    pub graph: PathBuf,
    /// Parameters set in the Faust builds (`NAME=VALUE`, as the driver takes them), so that
    /// they play what the graph plays.
    pub params: Vec<String>,
}

/// fugue's `examples` folder: in the current folder, else in the source tree fugue was built
/// from.
fn examples() -> Option<PathBuf> {
    let here = PathBuf::from("examples");
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    [here, built]
        .into_iter()
        .find(|p| p.join("faust/karplus32/karplus32.ag").is_file())
}

/// The programs to measure: those of [`default_programs`] named in `names` (both when
/// `names` is `None` and no `other` is given; Faust's examples in `faust_examples`), and
/// `other`, a Faust program, its fugue graph and its builds' parameters (`NAME=VALUE`).
/// Files are checked; `faust` and `g++` must be on the PATH.
pub fn programs(
    names: Option<&[String]>,
    faust_examples: &Path,
    other: Option<(&Path, &Path, &[String])>,
) -> Result<Vec<Program>, BenchError> {
    for tool in ["faust", "g++"] {
        if crate::machine::command_output(tool, &["--version"]).is_none() {
            return Err(BenchError::Failed(format!(
                "`fugue bench faust` needs `{tool}` on the PATH (Debian: apt install faust g++)"
            )));
        }
    }
    let mut programs = Vec::new();
    if other.is_none() || names.is_some() {
        let names = names.map_or(vec!["karplus32".into(), "mixer".into()], <[String]>::to_vec);
        let examples = examples().ok_or_else(|| {
            BenchError::Config("fugue's examples folder (examples/faust/karplus32) is not in the current folder; run from fugue's source tree, or give --dsp and --graph".into())
        })?;
        for p in default_programs(faust_examples, &examples) {
            if !names.contains(&p.name) {
                continue;
            }
            if !p.dsp.is_file() {
                return Err(BenchError::Failed(format!(
                    "{}: no such Faust program (Debian's faust package installs it; --faust-examples names another folder)",
                    p.dsp.display()
                )));
            }
            programs.push(p);
        }
    }
    if let Some((dsp, graph, params)) = other {
        if let Some(f) = [dsp, graph].into_iter().find(|f| !f.is_file()) {
            let why = if f.is_dir() {
                "it is a folder, not a file"
            } else {
                "no such file"
            };
            return Err(BenchError::Failed(format!("{}: {why}", f.display())));
        }
        for p in params {
            let Some((_, value)) = p.split_once('=') else {
                return Err(BenchError::Config(format!(
                    "--param {p}: expected NAME=VALUE"
                )));
            };
            // The range is the program's, checked by its builds' driver; a number first.
            if !value.parse::<f64>().is_ok_and(f64::is_finite) {
                return Err(BenchError::Config(format!(
                    "--param {p}: `{value}` is not a number"
                )));
            }
        }
        let name = dsp.file_stem().map(|s| s.to_string_lossy().into_owned());
        programs.push(Program {
            name: name.unwrap_or_else(|| "program".into()),
            dsp: dsp.to_path_buf(),
            graph: graph.to_path_buf(),
            params: params.to_vec(),
        });
    }
    Ok(programs)
}

/// The programs measured when none is named: Faust's `karplus32` (32 strings) against
/// `examples/faust/karplus32/karplus32.ag` and its `mixer` (8 channel strips) against
/// `examples/faust/mixer8/mixer8.ag`. `faust_examples` is Faust's examples folder,
/// `examples` fugue's.
pub fn default_programs(faust_examples: &Path, examples: &Path) -> Vec<Program> {
    vec![
        Program {
            name: "karplus32".into(),
            dsp: faust_examples.join("physicalModeling/old/karplus32.dsp"),
            graph: examples.join("faust/karplus32/karplus32.ag"),
            // The graph's strings all play and its excitation fires at the first sample.
            params: vec!["play=1".into(), "polyphony=32".into()],
        },
        Program {
            name: "mixer".into(),
            dsp: faust_examples.join("misc/mixer.dsp"),
            graph: examples.join("faust/mixer8/mixer8.ag"),
            params: Vec::new(),
        },
    ]
}

/// What the benchmark runs.
#[derive(Clone, Debug)]
pub struct FaustBenchConfig {
    /// The fugue binary that renders the graphs.
    pub fugue: PathBuf,
    /// The programs.
    pub programs: Vec<Program>,
    /// Thread counts of the parallel contenders (1 is always measured: the single-thread
    /// run each speed-up is over).
    pub threads: Vec<usize>,
    /// Seconds of audio of each run.
    pub seconds: f64,
    /// Frames per block.
    pub block: usize,
    /// Sample rate, Hz.
    pub rate: u32,
    /// Runs of each contender.
    pub runs: usize,
    /// The largest difference allowed between a Faust build's samples and its scalar
    /// build's (absolute).
    pub tolerance: f64,
    /// Where the builds, inputs and outputs go.
    pub work: PathBuf,
}

/// One way to run a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contender {
    /// Faust's scalar code.
    FaustScalar,
    /// Faust's vector code (`-vec`).
    FaustVec,
    /// Faust's work-stealing scheduler (`-vec -sch`).
    FaustSch,
    /// Faust's OpenMP code (`-vec -omp`).
    FaustOmp,
    /// fugue, sequential.
    FugueSeq,
    /// fugue, work stealing.
    FugueWs,
    /// fugue, static list schedule (HLFET).
    FugueStatic,
}

impl Contender {
    /// Every contender, in table order.
    pub const ALL: [Contender; 7] = [
        Contender::FaustScalar,
        Contender::FaustVec,
        Contender::FaustSch,
        Contender::FaustOmp,
        Contender::FugueSeq,
        Contender::FugueWs,
        Contender::FugueStatic,
    ];

    /// Its name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            Contender::FaustScalar => "faust scalar",
            Contender::FaustVec => "faust -vec",
            Contender::FaustSch => "faust -vec -sch",
            Contender::FaustOmp => "faust -vec -omp",
            Contender::FugueSeq => "fugue seq",
            Contender::FugueWs => "fugue ws",
            Contender::FugueStatic => "fugue static",
        }
    }

    /// Faust's options, for a Faust build.
    pub fn faust_flags(self) -> Option<&'static [&'static str]> {
        match self {
            Contender::FaustScalar => Some(&[]),
            Contender::FaustVec => Some(&["-vec"]),
            Contender::FaustSch => Some(&["-vec", "-sch"]),
            Contender::FaustOmp => Some(&["-vec", "-omp"]),
            _ => None,
        }
    }

    /// Whether it runs at several thread counts.
    pub fn parallel(self) -> bool {
        matches!(
            self,
            Contender::FaustSch | Contender::FaustOmp | Contender::FugueWs | Contender::FugueStatic
        )
    }

    /// The single-thread run its speed-up is over: its own at 1 thread for Faust's modes,
    /// fugue's seq for fugue's executors.
    pub fn base(self) -> Contender {
        match self {
            Contender::FugueWs | Contender::FugueStatic => Contender::FugueSeq,
            c => c,
        }
    }

    /// Whose output its output is checked against: Faust's scalar build for Faust's
    /// modes, fugue's seq for fugue's executors (each its own reference).
    pub fn reference(self) -> Contender {
        if self.faust_flags().is_some() {
            Contender::FaustScalar
        } else {
            Contender::FugueSeq
        }
    }

    /// The file name of its build.
    fn file(self) -> &'static str {
        match self {
            Contender::FaustScalar => "scalar",
            Contender::FaustVec => "vec",
            Contender::FaustSch => "sch",
            Contender::FaustOmp => "omp",
            Contender::FugueSeq => "seq",
            Contender::FugueWs => "ws",
            Contender::FugueStatic => "static",
        }
    }
}

/// One timed run.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The program.
    pub program: String,
    /// Who ran it.
    pub contender: Contender,
    /// Threads.
    pub threads: usize,
    /// The run's number (from 1).
    pub run: usize,
    /// Wall time of the whole process, s.
    pub whole_s: f64,
    /// Time per block, µs (the blocks alone).
    pub block_us: f64,
    /// The largest difference from the reference's samples (fugue: its seq; Faust: its
    /// scalar build); 0 for the reference itself.
    pub max_diff: f64,
}

/// What the benchmark measured.
#[derive(Clone, Debug, Default)]
pub struct FaustBench {
    /// Every run.
    pub samples: Vec<Sample>,
    /// Seconds each Faust build took (faust and g++), by program and contender.
    pub builds: Vec<(String, Contender, f64)>,
    /// For each program: the largest difference between fugue's seq and Faust's scalar
    /// build (the same music computed by two compilers, summed in another order).
    pub cross: Vec<(String, f64)>,
    /// Blocks of each run.
    pub blocks: usize,
}

/// One row of the summary: a contender at a thread count, over its runs.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The program.
    pub program: String,
    /// Who.
    pub contender: Contender,
    /// Threads.
    pub threads: usize,
    /// Runs.
    pub runs: usize,
    /// Whole process, s: median, min, max.
    pub whole: (f64, f64, f64),
    /// Per block, µs: median, min, max.
    pub block: (f64, f64, f64),
    /// Speed-up of the whole process over its base's median (see [`Contender::base`]).
    pub whole_speedup: Option<f64>,
    /// Speed-up per block over its base's median.
    pub block_speedup: Option<f64>,
    /// The largest difference from its reference over the runs.
    pub max_diff: f64,
    /// Runs whose output was beyond [`FaustBenchConfig::tolerance`] from the reference (a
    /// Faust mode that computed something else).
    pub beyond: usize,
}

/// Median, min and max of `v` (not empty).
pub(crate) fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    (median, s[0], s[n - 1])
}

impl FaustBench {
    /// One row per program, contender and thread count, in table order; `tolerance` counts
    /// the runs beyond it ([`Summary::beyond`]).
    pub fn summaries(&self, tolerance: f64) -> Vec<Summary> {
        let mut keys: Vec<(String, Contender, usize)> = Vec::new();
        for s in &self.samples {
            let k = (s.program.clone(), s.contender, s.threads);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        let order = |p: &str| self.samples.iter().position(|s| s.program == p);
        keys.sort_by_key(|(p, c, t)| (order(p), *c, *t));
        let of = |p: &str, c: Contender, t: usize| -> Vec<&Sample> {
            self.samples
                .iter()
                .filter(|s| s.program == p && s.contender == c && s.threads == t)
                .collect()
        };
        keys.iter()
            .map(|(p, c, t)| {
                let mine = of(p, *c, *t);
                let whole = spread(&mine.iter().map(|s| s.whole_s).collect::<Vec<_>>());
                let block = spread(&mine.iter().map(|s| s.block_us).collect::<Vec<_>>());
                let base = of(p, c.base(), 1);
                let (bw, bb) = if base.is_empty() {
                    (None, None)
                } else {
                    (
                        Some(spread(&base.iter().map(|s| s.whole_s).collect::<Vec<_>>()).0),
                        Some(spread(&base.iter().map(|s| s.block_us).collect::<Vec<_>>()).0),
                    )
                };
                Summary {
                    program: p.clone(),
                    contender: *c,
                    threads: *t,
                    runs: mine.len(),
                    whole,
                    block,
                    whole_speedup: bw.map(|b| b / whole.0),
                    block_speedup: bb.map(|b| b / block.0),
                    max_diff: mine.iter().map(|s| s.max_diff).fold(0.0, f64::max),
                    beyond: mine.iter().filter(|s| s.max_diff > tolerance).count(),
                }
            })
            .collect()
    }
}

/// `cmd`'s output, or an error naming `what` with its standard error.
fn run_checked(cmd: &mut Command, what: &str) -> Result<std::process::Output, BenchError> {
    let out = cmd
        .output()
        .map_err(|e| BenchError::io(format!("cannot run {what}"), e))?;
    succeeded(out, what)
}

/// `out`, the output of a command that ran, or an error naming `what` with its standard error
/// when the command failed.
fn succeeded(out: std::process::Output, what: &str) -> Result<std::process::Output, BenchError> {
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        let last = err
            .lines()
            .chain(text.lines())
            .filter(|l| !l.trim().is_empty())
            .take(4)
            .collect::<Vec<_>>()
            .join(" / ");
        return Err(BenchError::Failed(format!(
            "{what} failed ({}): {last}",
            out.status
        )));
    }
    Ok(out)
}

/// Builds the Faust modes of `p` into `dir`: `faust FLAGS -a driver.cpp` then `g++ -O3`
/// (`-fopenmp` for the omp mode). Returns each build's path and seconds.
fn build(
    p: &Program,
    dir: &Path,
    driver: &Path,
) -> Result<Vec<(Contender, PathBuf, f64)>, BenchError> {
    let mut out = Vec::new();
    for c in Contender::ALL {
        let Some(flags) = c.faust_flags() else {
            continue;
        };
        let start = Instant::now();
        let cpp = dir.join(format!("{}-{}.cpp", p.name, c.file()));
        let bin = dir.join(format!("{}-{}", p.name, c.file()));
        let mut faust = Command::new("faust");
        faust
            .args(flags)
            .arg("-a")
            .arg(driver)
            .arg(&p.dsp)
            .arg("-o")
            .arg(&cpp);
        if let Some(folder) = p.dsp.parent() {
            faust.arg("-I").arg(folder);
        }
        run_checked(
            &mut faust,
            &match flags {
                // Faust's scalar mode takes no flag.
                [] => format!("faust (scalar) on {}", p.dsp.display()),
                _ => format!("faust {} on {}", flags.join(" "), p.dsp.display()),
            },
        )?;
        let mut gxx = Command::new("g++");
        gxx.args(["-O3", "-w", "-std=c++14"]);
        if c == Contender::FaustOmp {
            gxx.arg("-fopenmp");
        }
        gxx.arg(&cpp).arg("-o").arg(&bin).arg("-lpthread");
        run_checked(&mut gxx, &format!("g++ on {}", cpp.display()))?;
        out.push((c, bin, start.elapsed().as_secs_f64()));
    }
    Ok(out)
}

/// The input of a program with `channels` inputs, `frames` long: on channel `c` a sine at
/// 110 (c + 1) Hz, 0.25 peak, plus a little noise (fugue's seeded generator), interleaved.
fn input_signal(channels: usize, frames: usize, rate: u32) -> Vec<f32> {
    let mut v = Vec::with_capacity(channels * frames);
    let mut rng = fugue_sync::Rng::new(0x2545_f491);
    for n in 0..frames {
        let t = n as f64 / f64::from(rate);
        for c in 0..channels {
            let noise = f64::from(rng.bipolar()) * 0.01;
            let f = 110.0 * (c + 1) as f64;
            v.push((0.25 * (2.0 * std::f64::consts::PI * f * t).sin() + noise) as f32);
        }
    }
    v
}

/// Writes `samples` (interleaved) as raw 32-bit floats and as a WAV file of `channels`.
fn write_input(
    raw: &Path,
    wav: &Path,
    samples: &[f32],
    channels: usize,
    rate: u32,
) -> Result<(), BenchError> {
    let bytes: Vec<u8> = samples.iter().flat_map(|x| x.to_ne_bytes()).collect();
    std::fs::write(raw, bytes)
        .map_err(|e| BenchError::io(format!("cannot write {}", raw.display()), e))?;
    let spec = hound::WavSpec {
        channels: channels as u16,
        sample_rate: rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let werr = |e: hound::Error| BenchError::Failed(format!("cannot write {}: {e}", wav.display()));
    let mut w = hound::WavWriter::create(wav, spec).map_err(werr)?;
    for &x in samples {
        w.write_sample(x).map_err(werr)?;
    }
    w.finalize().map_err(werr)
}

/// The samples of a raw 32-bit float file.
fn read_raw(path: &Path) -> Result<Vec<f32>, BenchError> {
    let bytes = std::fs::read(path)
        .map_err(|e| BenchError::io(format!("cannot read {}", path.display()), e))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// The samples of a 32-bit float WAV file, interleaved.
fn read_wav(path: &Path) -> Result<Vec<f32>, BenchError> {
    let fail = |e: hound::Error| BenchError::Failed(format!("cannot read {}: {e}", path.display()));
    let r = hound::WavReader::open(path).map_err(fail)?;
    r.into_samples::<f32>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)
}

/// The largest absolute difference between `a` and `b` (infinite when their lengths differ
/// or a sample is not finite).
fn max_diff(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = (f64::from(*x) - f64::from(*y)).abs();
            if d.is_finite() {
                d
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
}

/// The file of the output of `program` run by `contender` on `threads`: raw floats from a
/// Faust build, a WAV file from fugue.
fn output_name(program: &str, contender: Contender, threads: usize) -> String {
    let ext = if contender.faust_flags().is_some() {
        "raw"
    } else {
        "wav"
    };
    format!("{program}-{}-{threads}.{ext}", contender.file())
}

/// Runs the benchmark; `say` hears a line per step.
pub fn run(c: &FaustBenchConfig, say: &mut dyn FnMut(&str)) -> Result<FaustBench, BenchError> {
    if c.programs.is_empty() || c.runs == 0 || c.block == 0 || c.seconds <= 0.0 {
        return Err(BenchError::Config(
            "nothing to measure: give a program, runs, a block and seconds above 0".into(),
        ));
    }
    std::fs::create_dir_all(&c.work)
        .map_err(|e| BenchError::io(format!("cannot create {}", c.work.display()), e))?;
    let driver = c.work.join("driver.cpp");
    std::fs::write(&driver, DRIVER)
        .map_err(|e| BenchError::io(format!("cannot write {}", driver.display()), e))?;
    let blocks = ((c.seconds * f64::from(c.rate)) / c.block as f64)
        .round()
        .max(1.0) as usize;
    let frames = blocks * c.block;
    // The render's length in seconds: exactly `frames` frames.
    let seconds = format!("{:.9}", frames as f64 / f64::from(c.rate));
    let mut threads: Vec<usize> = c.threads.iter().copied().filter(|&t| t >= 1).collect();
    threads.push(1);
    threads.sort_unstable();
    threads.dedup();
    let mut bench = FaustBench {
        blocks,
        ..FaustBench::default()
    };
    let mut prepared = Vec::new();
    for p in &c.programs {
        prepared.push(prepare(c, p, &driver, frames, &mut bench, say)?);
    }
    for run in 1..=c.runs {
        for (p, prep) in c.programs.iter().zip(&prepared) {
            say(&format!("{}: run {run} of {}", p.name, c.runs));
            // This run's outputs of Faust's scalar build and of fugue's seq.
            let mut refs: [Option<Vec<f32>>; 2] = [None, None];
            for contender in Contender::ALL {
                for &t in &threads {
                    if (t > 1 && !contender.parallel())
                        || (t == 1
                            && matches!(contender, Contender::FugueWs | Contender::FugueStatic))
                    {
                        continue;
                    }
                    let out = c.work.join(output_name(&p.name, contender, t));
                    // The previous run's file goes first, and the disk is synced, outside
                    // the timing: no run pays for deleting or flushing another's output.
                    let _ = std::fs::remove_file(&out);
                    // SAFETY: `sync` takes nothing and has no memory-safety preconditions.
                    unsafe { libc::sync() };
                    let start = Instant::now();
                    let block_us = time(c, p, prep, (contender, t), (blocks, &seconds), &out)?;
                    let whole_s = start.elapsed().as_secs_f64();
                    let samples = if contender.faust_flags().is_some() {
                        read_raw(&out)?
                    } else {
                        read_wav(&out)?
                    };
                    if !samples.iter().all(|x| x.is_finite()) {
                        return Err(BenchError::Failed(format!(
                            "{}: {} on {t} threads wrote a non-finite sample",
                            p.name,
                            contender.label()
                        )));
                    }
                    // The reference of this run (Faust's scalar build, fugue's seq) runs
                    // first among its contenders and is kept in memory for them.
                    let faust = contender.faust_flags().is_some();
                    let diff = compare(c, p, &refs, (contender, t, run), &samples, say)?;
                    bench.samples.push(Sample {
                        program: p.name.clone(),
                        contender,
                        threads: t,
                        run,
                        whole_s,
                        block_us,
                        max_diff: diff,
                    });
                    if contender == contender.reference() {
                        refs[usize::from(!faust)] = Some(samples);
                    }
                }
            }
            if run == 1 {
                if let [Some(faust), Some(fugue)] = &refs {
                    let d = max_diff(faust, fugue);
                    if d > SAME_MUSIC {
                        // Outputs of other lengths (other channels), or a sample that is not
                        // a number, give an infinite difference: said as such.
                        let by = if d.is_finite() {
                            format!("by up to {d:.2e} (more than {SAME_MUSIC:e})")
                        } else if faust.len() != fugue.len() {
                            format!(
                                "in its length ({} samples against {}: another count of channels)",
                                fugue.len(),
                                faust.len()
                            )
                        } else {
                            "by a sample that is not a finite number".to_string()
                        };
                        return Err(BenchError::Failed(format!(
                            "{}: fugue's seq render of {} differs from Faust's scalar build of {} {by}: the graph does not play the program's music, so their times do not compare; give a graph of the same voices and parameters",
                            p.name,
                            p.graph.display(),
                            p.dsp.display()
                        )));
                    }
                    bench.cross.push((p.name.clone(), d));
                }
            }
        }
    }
    Ok(bench)
}

/// A program's builds, inputs and contenders.
struct Prepared {
    builds: Vec<(Contender, PathBuf)>,
    raw_in: Option<PathBuf>,
    wav_in: Option<PathBuf>,
}

/// Builds Faust's modes of `p` (recorded in `bench`), asks the scalar build how many inputs
/// it has, and writes its input of `frames` frames when it has some.
fn prepare(
    c: &FaustBenchConfig,
    p: &Program,
    driver: &Path,
    frames: usize,
    bench: &mut FaustBench,
    say: &mut dyn FnMut(&str),
) -> Result<Prepared, BenchError> {
    say(&format!(
        "{}: building Faust's four modes of {}",
        p.name,
        p.dsp.display()
    ));
    let built = build(p, &c.work, driver)?;
    for (k, _, s) in &built {
        bench.builds.push((p.name.clone(), *k, *s));
    }
    // The number of inputs, from a one-block run of the scalar build, which also checks
    // each --param's value against the program's range (its refusal said as the flag's).
    let mut cmd = Command::new(&built[0].1);
    cmd.args(["1", &c.block.to_string(), &c.rate.to_string(), "-"])
        .arg(c.work.join("probe.raw"))
        .args(&p.params);
    let what = format!("the scalar build of {}", p.name);
    let out = cmd
        .output()
        .map_err(|e| BenchError::io(format!("cannot run {what}"), e))?;
    let refused = (!out.status.success())
        .then(|| serde_json::from_slice::<serde_json::Value>(&out.stdout).ok())
        .flatten()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .filter(|e| e.starts_with("--param "));
    if let Some(e) = refused {
        return Err(BenchError::Config(e));
    }
    let probe = succeeded(out, &what)?;
    let v: serde_json::Value = serde_json::from_slice(&probe.stdout).map_err(|_| {
        BenchError::Failed(format!("the scalar build of {} printed no JSON", p.name))
    })?;
    let inputs = v["inputs"].as_u64().unwrap_or(0) as usize;
    let (raw_in, wav_in) = if inputs > 0 {
        let raw = c.work.join(format!("{}-input.raw", p.name));
        let wav = c.work.join(format!("{}-input.wav", p.name));
        write_input(
            &raw,
            &wav,
            &input_signal(inputs, frames, c.rate),
            inputs,
            c.rate,
        )?;
        (Some(raw), Some(wav))
    } else {
        (None, None)
    };
    // One short render of fugue's graph, not timed, so that its programs are compiled and
    // kept in the disk cache before the timed runs: otherwise the first contender of the
    // first run (seq) would pay the compilation, which the others do not, and its whole
    // process time would not be comparable.
    let warm = c.work.join(format!("{}-warm.wav", p.name));
    let mut cmd = Command::new(&c.fugue);
    cmd.arg("render")
        .arg(&p.graph)
        .arg("-o")
        .arg(&warm)
        .args(["--seconds", "0.01", "-e", "seq", "--force"])
        .args(["--buffer", &c.block.to_string()])
        .args(["--rate", &c.rate.to_string()]);
    if let Some(w) = &wav_in {
        cmd.arg("--input").arg(w);
    }
    run_checked(&mut cmd, &format!("fugue's warm-up render of {}", p.name))?;
    let _ = std::fs::remove_file(&warm);
    Ok(Prepared {
        builds: built.into_iter().map(|(k, b, _)| (k, b)).collect(),
        raw_in,
        wav_in,
    })
}

/// Runs `contender` on `t` threads over `p` (`blocks` blocks, `seconds` long), its output
/// to `out`; its compute time per block, µs.
fn time(
    c: &FaustBenchConfig,
    p: &Program,
    prep: &Prepared,
    (contender, t): (Contender, usize),
    (blocks, seconds): (usize, &str),
    out: &Path,
) -> Result<f64, BenchError> {
    if let Some((_, bin)) = prep.builds.iter().find(|(k, _)| *k == contender) {
        let o = run_checked(
            Command::new(bin)
                .env("OMP_NUM_THREADS", t.to_string())
                .args([blocks.to_string(), c.block.to_string(), c.rate.to_string()])
                .arg(prep.raw_in.as_deref().unwrap_or(Path::new("-")))
                .arg(out)
                .args(&p.params),
            &format!("{} of {}", contender.label(), p.name),
        )?;
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let Some(compute) = v["compute_s"].as_f64() else {
            return Err(BenchError::Failed(format!(
                "{} of {} printed no time",
                contender.label(),
                p.name
            )));
        };
        Ok(compute * 1e6 / blocks as f64)
    } else {
        let exec = contender.file();
        let mut cmd = Command::new(&c.fugue);
        cmd.arg("render")
            .arg(&p.graph)
            .arg("-o")
            .arg(out)
            .args(["--seconds", seconds])
            .args(["--buffer", &c.block.to_string()])
            .args(["--rate", &c.rate.to_string()])
            .args(["-e", exec, "-t", &t.to_string(), "--force", "--json"]);
        if let Some(w) = &prep.wav_in {
            cmd.arg("--input").arg(w);
        }
        let o = run_checked(&mut cmd, &format!("fugue render -e {exec} of {}", p.name))?;
        // The report is one JSON object on standard output.
        let json = String::from_utf8_lossy(&o.stdout);
        let v: serde_json::Value = json
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .unwrap_or_default();
        let Some(wall) = v["cycles_s"].as_f64() else {
            return Err(BenchError::Failed(format!(
                "fugue render -e {exec} of {} printed no report",
                p.name
            )));
        };
        Ok(wall * 1e6 / blocks as f64)
    }
}

/// The largest difference of `samples` from its reference of this run (Faust's scalar build,
/// fugue's seq; `refs`): fugue's executors must be bit-identical to seq, and a Faust mode
/// beyond the tolerance is said (its result kept, and marked in the tables).
fn compare(
    c: &FaustBenchConfig,
    p: &Program,
    refs: &[Option<Vec<f32>>; 2],
    (contender, t, run): (Contender, usize, usize),
    samples: &[f32],
    say: &mut dyn FnMut(&str),
) -> Result<f64, BenchError> {
    let faust = contender.faust_flags().is_some();
    Ok(
        match (
            &refs[usize::from(!faust)],
            contender == contender.reference(),
        ) {
            (_, true) => 0.0,
            (None, false) => {
                return Err(BenchError::Failed(format!(
                    "{}: {} ran before its reference",
                    p.name,
                    contender.label()
                )))
            }
            (Some(r), false) => {
                let bits_equal = r.len() == samples.len()
                    && r.iter()
                        .zip(samples)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                let d = if bits_equal {
                    0.0
                } else {
                    max_diff(r, samples)
                };
                if !faust && !bits_equal {
                    return Err(BenchError::Failed(format!(
                    "{}: fugue {} on {t} threads differs from its seq (largest difference {d:e}); its times do not count",
                    p.name,
                    contender.file()
                )));
                }
                if d > c.tolerance {
                    // Faust's own result: kept, and marked in the tables.
                    say(&format!(
                    "{}: {} on {t} threads, run {run}: differs from Faust's scalar build by {d:e}, beyond the tolerance {:e}",
                    p.name,
                    contender.label(),
                    c.tolerance
                ));
                }
                d
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_is_the_same_every_time_and_bounded() {
        let a = input_signal(3, 1000, 48_000);
        assert_eq!(a, input_signal(3, 1000, 48_000));
        assert_eq!(a.len(), 3000);
        assert!(a.iter().all(|x| x.abs() <= 0.27));
    }

    #[test]
    fn differences_of_unequal_or_non_finite_outputs_are_infinite() {
        assert_eq!(max_diff(&[1.0], &[1.0, 2.0]), f64::INFINITY);
        assert_eq!(max_diff(&[f32::NAN], &[0.0]), f64::INFINITY);
        assert!((max_diff(&[1.0, 2.0], &[1.0, 2.5]) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn speedups_are_over_each_contenders_own_single_thread_run() {
        let s = |contender, threads, block_us| Sample {
            program: "p".into(),
            contender,
            threads,
            run: 1,
            whole_s: block_us,
            block_us,
            max_diff: 0.0,
        };
        let b = FaustBench {
            samples: vec![
                s(Contender::FaustSch, 1, 10.0),
                s(Contender::FaustSch, 2, 20.0),
                s(Contender::FugueSeq, 1, 8.0),
                s(Contender::FugueWs, 2, 4.0),
            ],
            ..FaustBench::default()
        };
        let rows = b.summaries(1e-5);
        let get = |c, t| {
            rows.iter()
                .find(|r| r.contender == c && r.threads == t)
                .unwrap()
        };
        assert_eq!(get(Contender::FaustSch, 2).block_speedup, Some(0.5));
        assert_eq!(get(Contender::FugueWs, 2).block_speedup, Some(2.0));
        assert_eq!(get(Contender::FugueSeq, 1).block_speedup, Some(1.0));
    }
}
