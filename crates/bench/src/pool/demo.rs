//! The task pool's demos (`fugue pool quicksort|mandelbrot|voronoi`): one workload run on
//! fugue's pool under a policy (or as the sequential program), its picture written, and what
//! ran said in one line: time, tasks, steals and CPU use. Sizes and output files are checked
//! before any memory is taken or any work done (a file that exists without `force` is a
//! configuration error).

use std::path::{Path, PathBuf};

use fugue_engine::output::OutputFile;
use fugue_pool::Policy;

use super::animate::{self, frame_path, Picture, VoronoiOptions};
use super::image;
use super::work::{Mandelbrot, VoronoiAlgorithm};
use super::{Outcome, PoolKind, Runner, Workload};
use crate::error::BenchError;

/// The largest image side the demos draw.
pub const MAX_SIDE: u64 = 32_768;
/// The most pixels a demo image may have (1 GiB of pixels in memory at 4 bytes each).
pub const MAX_PIXELS: u64 = 1 << 28;

/// Who runs a demo.
#[derive(Clone, Copy, Debug)]
pub struct Demo {
    /// The pool's policy.
    pub policy: Policy,
    /// Worker threads (`None`: the cores this process may use).
    pub threads: Option<u64>,
    /// Run the sequential program instead.
    pub serial: bool,
}

/// A Voronoi demo: the picture's size, its seeds and frames, where it goes.
#[derive(Clone, Debug)]
pub struct VoronoiDemo {
    /// Width and height in pixels.
    pub size: (u64, u64),
    /// Number of seeds (cells).
    pub seeds: u64,
    /// How each pixel finds its cell.
    pub algorithm: VoronoiAlgorithm,
    /// Frames, the seeds moving between them.
    pub frames: u64,
    /// Hundredths of a second per frame of a GIF.
    pub delay: u64,
    /// Seed of the seeds' positions and velocities.
    pub random_seed: u64,
    /// The picture: `.png` (several frames: FILE-0001.png, ...) or `.gif`.
    pub output: Option<PathBuf>,
    /// Replace existing files.
    pub force: bool,
}

impl Demo {
    /// The runner and its thread count; a thread count the pool or the system refuses is the
    /// user's to fix (a configuration error).
    fn start(&self) -> Result<(Runner, usize), BenchError> {
        let threads = match self.threads {
            Some(t) => usize::try_from(t).unwrap_or(usize::MAX),
            None => fugue_pool::default_threads(),
        };
        if self.serial {
            return Ok((Runner::Serial, 1));
        }
        match Runner::start(PoolKind::Fugue(self.policy), threads) {
            Ok(r) => Ok((r, threads)),
            Err(BenchError::Pool(e)) => {
                Err(BenchError::Config(format!("--threads {threads}: {e}")))
            }
            Err(e) => Err(e),
        }
    }
}

/// Checks an image's size before any memory is taken for it.
fn check_pixels(width: u64, height: u64) -> Result<(), BenchError> {
    if width * height > MAX_PIXELS {
        return Err(BenchError::Config(format!(
            "{width}x{height} is {} pixels, more than the {MAX_PIXELS} the demos draw",
            width * height
        )));
    }
    Ok(())
}

/// The extension of `path`, lower case.
fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// What ran, in one line: time, tasks, steals and CPU use.
fn summary(what: &str, runner: &Runner, threads: usize, out: &Outcome) -> String {
    let who = match runner.kind() {
        PoolKind::Serial => "the sequential program".to_string(),
        k => format!(
            "policy {} with {threads} thread{}",
            k.name(),
            if threads == 1 { "" } else { "s" }
        ),
    };
    let mut s = format!("{what}: {:.3} s on {who}", out.wall.as_secs_f64());
    if let Some(st) = &out.stats {
        s.push_str(&format!(
            "; {} tasks, {} steals ({} failed attempts), {} sleeps",
            st.total.tasks, st.total.steals, st.total.failed_steals, st.total.sleeps
        ));
    }
    // The process's CPU time counts every thread's, accounted at the scheduler's grain: over
    // a run of a few milliseconds their ratio says nothing (3.07 cores busy was printed for
    // the sequential program on 2 cores).
    if out.wall >= MIN_WALL_FOR_CORES {
        s.push_str(&format!(
            "; CPU {:.3} s ({:.2} cores busy)",
            out.cpu.as_secs_f64(),
            out.cores_busy()
        ));
    } else {
        s.push_str(&format!(
            "; CPU {:.3} s (too short a run to say how many cores were busy)",
            out.cpu.as_secs_f64()
        ));
    }
    s
}

/// The shortest run whose cores-busy figure [`summary`] gives.
const MIN_WALL_FOR_CORES: std::time::Duration = std::time::Duration::from_millis(20);

/// Sorts `n` pseudo-random integers (slices of at most `cutoff` serially), checks the
/// result, and says what ran.
pub fn quicksort(demo: &Demo, n: u64, cutoff: u64) -> Result<String, BenchError> {
    let (runner, threads) = demo.start()?;
    let w = Workload::Quicksort {
        n: n as usize,
        cutoff: cutoff as usize,
    };
    let (out, _) = w.run(&runner, threads, &w.prepare_light())?;
    let what = format!("quicksort of {n} integers");
    Ok(format!(
        "{}; sorted and checked",
        summary(&what, &runner, threads, &out)
    ))
}

/// Draws the Mandelbrot set, `width` x `height`, `iterations` deep, written to `output` (a
/// PNG file), and says what ran.
pub fn mandelbrot(
    demo: &Demo,
    (width, height): (u64, u64),
    iterations: u64,
    output: Option<&Path>,
    force: bool,
) -> Result<String, BenchError> {
    check_pixels(width, height)?;
    if let Some(o) = output {
        if extension(o) != "png" {
            return Err(BenchError::Config(format!(
                "{}: the Mandelbrot picture is written as PNG; name the file .png",
                o.display()
            )));
        }
        OutputFile::check(o, force, &[])?;
    }
    let (runner, threads) = demo.start()?;
    let set = Mandelbrot {
        width: width as usize,
        height: height as usize,
        iterations: iterations as u32,
        ..Mandelbrot::default()
    };
    let w = Workload::Mandelbrot(set);
    let (out, canvas) = w.run(&runner, threads, &w.prepare_light())?;
    let what = format!("mandelbrot {width}x{height}, {iterations} iterations");
    let mut line = summary(&what, &runner, threads, &out);
    if let (Some(o), Some(c)) = (output, canvas) {
        let rgb = image::mandelbrot_rgb(&c, iterations as u32);
        image::write_png(o, c.width, c.height, &rgb)?;
        line.push_str(&format!("; wrote {}", o.display()));
    }
    Ok(line)
}

/// The picture a Voronoi demo writes, its files checked.
fn voronoi_picture(v: &VoronoiDemo) -> Result<Option<Picture>, BenchError> {
    let Some(o) = &v.output else {
        return Ok(None);
    };
    let e = extension(o);
    let config = |why: &str| Err(BenchError::Config(format!("{}: {why}", o.display())));
    if e != "png" && e != "gif" {
        return config("the Voronoi picture is written as PNG (.png) or animated GIF (.gif)");
    }
    if e == "gif" && (v.size.0 > 65_535 || v.size.1 > 65_535) {
        return config("a GIF is at most 65535 pixels a side");
    }
    if e == "png" {
        let first = OutputFile::check(&frame_path(o, 0, v.frames), v.force, &[])?;
        for i in 1..v.frames {
            OutputFile::check_beside(&first, &frame_path(o, i, v.frames), v.force, &[])?;
        }
        return Ok(Some(Picture::Png(o.clone())));
    }
    OutputFile::check(o, v.force, &[])?;
    Ok(Some(Picture::Gif {
        path: o.clone(),
        delay: v.delay.min(u64::from(u16::MAX)) as u16,
    }))
}

/// Draws the Voronoi diagram (frames of it, the seeds moving), writes the picture, and says
/// what ran.
pub fn voronoi(demo: &Demo, v: &VoronoiDemo) -> Result<String, BenchError> {
    let (width, height) = v.size;
    check_pixels(width, height)?;
    let picture = voronoi_picture(v)?;
    let (runner, threads) = demo.start()?;
    let options = VoronoiOptions {
        width: width as usize,
        height: height as usize,
        seeds: v.seeds as usize,
        random_seed: v.random_seed,
        algorithm: v.algorithm,
        frames: v.frames,
        picture,
    };
    let report = animate::voronoi(&runner, threads, &options)?;
    let what = format!(
        "voronoi {width}x{height}, {} seeds, {} algorithm, {} frame{}",
        v.seeds,
        v.algorithm.name(),
        v.frames,
        if v.frames == 1 { "" } else { "s" }
    );
    let mut line = summary(&what, &runner, threads, &report.total);
    if v.frames > 1 {
        line.push_str(&format!(
            "; median frame {:.2} ms",
            report.median_frame() * 1e3
        ));
    }
    match &options.picture {
        Some(Picture::Png(o)) if v.frames > 1 => line.push_str(&format!(
            "; wrote {} .. {}",
            frame_path(o, 0, v.frames).display(),
            frame_path(o, v.frames - 1, v.frames).display()
        )),
        Some(Picture::Png(o) | Picture::Gif { path: o, .. }) => {
            line.push_str(&format!("; wrote {}", o.display()))
        }
        None => {}
    }
    Ok(line)
}
