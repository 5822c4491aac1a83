//! `fugue pool quicksort|mandelbrot|voronoi`: the task pool's demos. Each runs one workload of
//! [`crate::pool::demo`] on fugue's pool (or, with `--serial`, as the sequential program),
//! prints its time, tasks, steals and CPU use, and writes the picture with `-o`.

use std::path::PathBuf;

use fugue_pool::Policy;

use super::count;
use crate::error::BenchError;
use crate::pool::demo::{self, Demo, VoronoiDemo, MAX_SIDE};
use crate::pool::work::VoronoiAlgorithm;

/// Arguments of `fugue pool`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which demo.
    #[command(subcommand)]
    pub demo: Which,
}

/// The demos.
#[derive(clap::Subcommand, Debug)]
pub enum Which {
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
    #[arg(long, short = 't', allow_negative_numbers = true, value_parser = count(u64::MAX))]
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
    #[arg(long, short = 'n', default_value_t = 10_000_000, allow_negative_numbers = true, value_parser = count(1_000_000_000))]
    n: u64,
    /// Slices of at most this many integers are sorted serially.
    #[arg(long, default_value_t = 128, allow_negative_numbers = true, value_parser = count(1_000_000_000))]
    cutoff: u64,
}

/// Arguments of `fugue pool mandelbrot`.
#[derive(clap::Args, Debug)]
pub struct MandelbrotArgs {
    #[command(flatten)]
    common: Common,
    /// Width in pixels.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true, value_parser = count(MAX_SIDE))]
    width: u64,
    /// Height in pixels.
    #[arg(long, default_value_t = 768, allow_negative_numbers = true, value_parser = count(MAX_SIDE))]
    height: u64,
    /// Iterations before a point counts as inside the set.
    #[arg(long, default_value_t = 500, allow_negative_numbers = true, value_parser = count(1_000_000))]
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
    #[arg(long, default_value_t = 64, allow_negative_numbers = true, value_parser = count(100_000))]
    seeds: u64,
    /// Width in pixels.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true, value_parser = count(MAX_SIDE))]
    width: u64,
    /// Height in pixels.
    #[arg(long, default_value_t = 768, allow_negative_numbers = true, value_parser = count(MAX_SIDE))]
    height: u64,
    /// Frames to draw, the seeds moving between frames.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = count(100_000))]
    frames: u64,
    /// Hundredths of a second per frame of an animated GIF.
    #[arg(long, default_value_t = 4, allow_negative_numbers = true, value_parser = count(65_535))]
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

/// Runs `fugue pool`: the line it prints.
pub fn run(args: Args) -> Result<String, BenchError> {
    let line = match args.demo {
        Which::Quicksort(a) => demo::quicksort(&a.common.demo(), a.n, a.cutoff)?,
        Which::Mandelbrot(a) => demo::mandelbrot(
            &a.common.demo(),
            (a.width, a.height),
            a.iterations,
            a.output.as_deref(),
            a.force,
        )?,
        Which::Voronoi(a) => demo::voronoi(
            &a.common.demo(),
            &VoronoiDemo {
                size: (a.width, a.height),
                seeds: a.seeds,
                algorithm: a.algorithm,
                frames: a.frames,
                delay: a.delay,
                random_seed: a.random_seed,
                output: a.output,
                force: a.force,
            },
        )?,
    };
    Ok(format!("{line}\n"))
}

impl Common {
    /// Who runs the demo.
    fn demo(&self) -> Demo {
        Demo {
            policy: self.policy,
            threads: self.threads,
            serial: self.serial,
        }
    }
}
