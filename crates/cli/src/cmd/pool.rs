//! `fugue pool quicksort|mandelbrot|voronoi`: the task pool's demos. Each runs one workload of
//! [`fugue_bench::pool`] on fugue's pool (or, with `--serial`, as the sequential program),
//! prints its time, tasks, steals and CPU use, and writes the picture with `-o`.

use std::path::{Path, PathBuf};

use fugue_bench::pool::animate::{self, frame_path, Picture, VoronoiOptions};
use fugue_bench::pool::image;
use fugue_bench::pool::work::{Mandelbrot, VoronoiAlgorithm};
use fugue_bench::pool::{Outcome, PoolKind, Runner, Workload};
use fugue_pool::Policy;

use crate::output::Output;
use crate::util::usage;

/// The largest image side the demos draw.
const MAX_SIDE: u64 = 32_768;
/// The most pixels a demo image may have (1 GiB of pixels in memory at 4 bytes each).
const MAX_PIXELS: u64 = 1 << 28;

/// Arguments of `fugue pool`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which demo.
    #[command(subcommand)]
    pub demo: Demo,
}

/// The demos.
#[derive(clap::Subcommand, Debug)]
pub enum Demo {
    /// Sort pseudo-random 32-bit integers: partition, spawn both halves, insertion sort below
    /// the cutoff; the result is checked.
    #[command(after_help = examples!("fugue pool quicksort -n 10000000 --policy steal --threads 2", "fugue pool quicksort -n 1000000 --serial"))]
    Quicksort(QuicksortArgs),
    /// Draw the Mandelbrot set, bands of rows as tasks; `-o FILE.png` writes the picture.
    #[command(after_help = examples!("fugue pool mandelbrot --width 1920 --height 1080 -o mandelbrot.png"))]
    Mandelbrot(MandelbrotArgs),
    /// Draw a Voronoi diagram per pixel or by recursive split into four; `--frames N` moves
    /// the seeds each frame and writes an animated GIF (`-o FILE.gif`) or PNG frames
    /// (`-o FILE.png`: FILE-0001.png, ...).
    #[command(after_help = examples!("fugue pool voronoi --algorithm split --frames 60 -o voronoi.gif"))]
    Voronoi(VoronoiArgs),
}

/// The flags every demo takes.
#[derive(clap::Args, Debug)]
pub struct Common {
    /// The pool's policy: lifo-mutex, lifo-spin, steal-mutex, steal-backoff-shared,
    /// steal-backoff-local, steal-condvar, steal.
    #[arg(long, default_value = "steal")]
    pub policy: Policy,
    /// Worker threads (default: the cores this process may use).
    #[arg(long, short = 't', allow_negative_numbers = true, value_parser = crate::util::count(u64::MAX))]
    pub threads: Option<u64>,
    /// Run the sequential program instead (every spawn is a call; no pool).
    #[arg(long)]
    pub serial: bool,
}

/// Arguments of `fugue pool quicksort`.
#[derive(clap::Args, Debug)]
pub struct QuicksortArgs {
    #[command(flatten)]
    common: Common,
    /// Integers to sort.
    #[arg(long, short = 'n', default_value_t = 10_000_000, allow_negative_numbers = true, value_parser = crate::util::count(1_000_000_000))]
    n: u64,
    /// Slices of at most this many integers are sorted serially.
    #[arg(long, default_value_t = 128, allow_negative_numbers = true, value_parser = crate::util::count(1_000_000_000))]
    cutoff: u64,
}

/// Arguments of `fugue pool mandelbrot`.
#[derive(clap::Args, Debug)]
pub struct MandelbrotArgs {
    #[command(flatten)]
    common: Common,
    /// Width in pixels.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true, value_parser = crate::util::count(MAX_SIDE))]
    width: u64,
    /// Height in pixels.
    #[arg(long, default_value_t = 768, allow_negative_numbers = true, value_parser = crate::util::count(MAX_SIDE))]
    height: u64,
    /// Iterations before a point counts as inside the set.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true, value_parser = crate::util::count(1_000_000))]
    iterations: u64,
    /// Write the picture to this PNG file.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    force: bool,
}

/// Arguments of `fugue pool voronoi`.
#[derive(clap::Args, Debug)]
pub struct VoronoiArgs {
    #[command(flatten)]
    common: Common,
    /// `pixel` (every pixel asks every seed) or `split` (a block whose corners agree is
    /// filled at once, else split into four tasks).
    #[arg(long, default_value = "split")]
    algorithm: VoronoiAlgorithm,
    /// Number of seeds (cells).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true, value_parser = crate::util::count(100_000))]
    seeds: u64,
    /// Width in pixels.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true, value_parser = crate::util::count(MAX_SIDE))]
    width: u64,
    /// Height in pixels.
    #[arg(long, default_value_t = 768, allow_negative_numbers = true, value_parser = crate::util::count(MAX_SIDE))]
    height: u64,
    /// Frames to draw, the seeds moving between frames.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::util::count(100_000))]
    frames: u64,
    /// Hundredths of a second per frame of an animated GIF.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_parser = crate::util::count(65_535))]
    delay: u64,
    /// Seed of the seeds' positions and velocities.
    #[arg(long, default_value_t = 1)]
    random_seed: u64,
    /// Write the picture: `.png` (with several frames: FILE-0001.png, ...) or `.gif`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Replace existing output files.
    #[arg(long)]
    force: bool,
}

/// Runs `fugue pool`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.demo {
        Demo::Quicksort(a) => quicksort(a),
        Demo::Mandelbrot(a) => mandelbrot(a),
        Demo::Voronoi(a) => voronoi(a),
    }
}

/// The runner the common flags ask for, and its thread count.
fn start(c: &Common) -> anyhow::Result<(Runner, usize)> {
    let threads = match c.threads {
        Some(t) => usize::try_from(t).unwrap_or(usize::MAX),
        None => fugue_pool::default_threads(),
    };
    if c.serial {
        return Ok((Runner::Serial, 1));
    }
    match Runner::start(PoolKind::Fugue(c.policy), threads) {
        Ok(r) => Ok((r, threads)),
        // The count was the user's: a refusal from the pool or from the system is theirs to fix.
        Err(fugue_bench::BenchError::Pool(e)) => Err(usage(format!("--threads {threads}: {e}"))),
        Err(e) => Err(e.into()),
    }
}

/// Checks an image's size before any memory is taken for it.
fn check_pixels(width: u64, height: u64) -> anyhow::Result<()> {
    if width * height > MAX_PIXELS {
        return Err(usage(format!(
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
    s.push_str(&format!(
        "; CPU {:.3} s ({:.2} cores busy)",
        out.cpu.as_secs_f64(),
        out.cores_busy()
    ));
    s
}

fn quicksort(a: QuicksortArgs) -> anyhow::Result<()> {
    let (runner, threads) = start(&a.common)?;
    let w = Workload::Quicksort {
        n: a.n as usize,
        cutoff: a.cutoff as usize,
    };
    let prepared = w.prepare_light();
    let (out, _) = w.run(&runner, threads, &prepared)?;
    println!(
        "{}; sorted and checked",
        summary(
            &format!("quicksort of {} integers", a.n),
            &runner,
            threads,
            &out
        )
    );
    Ok(())
}

fn mandelbrot(a: MandelbrotArgs) -> anyhow::Result<()> {
    check_pixels(a.width, a.height)?;
    if let Some(o) = &a.output {
        if extension(o) != "png" {
            return Err(usage(format!(
                "{}: the Mandelbrot picture is written as PNG; name the file .png",
                o.display()
            )));
        }
        Output::check(o, a.force, &[])?;
    }
    let (runner, threads) = start(&a.common)?;
    let set = Mandelbrot {
        width: a.width as usize,
        height: a.height as usize,
        iterations: a.iterations as u32,
        ..Mandelbrot::default()
    };
    let w = Workload::Mandelbrot(set);
    let (out, canvas) = w.run(&runner, threads, &w.prepare_light())?;
    let what = format!(
        "mandelbrot {}x{}, {} iterations",
        a.width, a.height, a.iterations
    );
    let mut line = summary(&what, &runner, threads, &out);
    if let (Some(o), Some(c)) = (&a.output, canvas) {
        image::write_png(
            o,
            c.width,
            c.height,
            &image::mandelbrot_rgb(&c, a.iterations as u32),
        )?;
        line.push_str(&format!("; wrote {}", o.display()));
    }
    println!("{line}");
    Ok(())
}

fn voronoi(a: VoronoiArgs) -> anyhow::Result<()> {
    check_pixels(a.width, a.height)?;
    let picture = match &a.output {
        None => None,
        Some(o) => {
            let e = extension(o);
            if e != "png" && e != "gif" {
                return Err(usage(format!(
                    "{}: the Voronoi picture is written as PNG (.png) or animated GIF (.gif)",
                    o.display()
                )));
            }
            if e == "gif" && (a.width > 65_535 || a.height > 65_535) {
                return Err(usage(format!(
                    "{}: a GIF is at most 65535 pixels a side",
                    o.display()
                )));
            }
            if e == "png" {
                for i in 0..a.frames {
                    Output::check(&frame_path(o, i, a.frames), a.force, &[])?;
                }
                Some(Picture::Png(o.clone()))
            } else {
                Output::check(o, a.force, &[])?;
                Some(Picture::Gif {
                    path: o.clone(),
                    delay: a.delay as u16,
                })
            }
        }
    };
    let (runner, threads) = start(&a.common)?;
    let options = VoronoiOptions {
        width: a.width as usize,
        height: a.height as usize,
        seeds: a.seeds as usize,
        random_seed: a.random_seed,
        algorithm: a.algorithm,
        frames: a.frames,
        picture,
    };
    let report = animate::voronoi(&runner, threads, &options)?;
    let what = format!(
        "voronoi {}x{}, {} seeds, {} algorithm, {} frame{}",
        a.width,
        a.height,
        a.seeds,
        a.algorithm.name(),
        a.frames,
        if a.frames == 1 { "" } else { "s" }
    );
    let mut line = summary(&what, &runner, threads, &report.total);
    if a.frames > 1 {
        line.push_str(&format!(
            "; median frame {:.2} ms",
            report.median_frame() * 1e3
        ));
    }
    match &options.picture {
        Some(Picture::Png(o)) if a.frames > 1 => line.push_str(&format!(
            "; wrote {} .. {}",
            frame_path(o, 0, a.frames).display(),
            frame_path(o, a.frames - 1, a.frames).display()
        )),
        Some(Picture::Png(o) | Picture::Gif { path: o, .. }) => {
            line.push_str(&format!("; wrote {}", o.display()))
        }
        None => {}
    }
    println!("{line}");
    Ok(())
}
