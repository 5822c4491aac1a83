//! The Voronoi demo's frame loop (`fugue pool voronoi`): the diagram drawn on a pool frame
//! after frame, the seeds moving between frames, each frame written as it is drawn into an
//! animated GIF or a PNG sequence.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fugue_pool::Stats;

use super::image::{self, GifWriter};
use super::work::{Voronoi, VoronoiAlgorithm};
use super::{Outcome, Runner, Workload};
use crate::error::{BenchError, Context as _};

/// Where the frames go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Picture {
    /// An animated GIF at `path`, `delay` hundredths of a second per frame.
    Gif {
        /// The file.
        path: PathBuf,
        /// Hundredths of a second per frame.
        delay: u16,
    },
    /// PNG files: the path itself for one frame, else one file per frame named by
    /// [`frame_path`].
    Png(PathBuf),
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct VoronoiOptions {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Number of seeds (cells).
    pub seeds: usize,
    /// Seed of the seeds' positions and velocities.
    pub random_seed: u64,
    /// Per pixel or by recursive split.
    pub algorithm: VoronoiAlgorithm,
    /// Frames to draw, the seeds moving between frames.
    pub frames: u64,
    /// Where the frames go; `None`: drawn and timed only.
    pub picture: Option<Picture>,
}

/// What the frames took.
#[derive(Clone, Debug)]
pub struct VoronoiReport {
    /// Wall and CPU time over every frame, and the pool's statistics summed (tasks, steals,
    /// failed steals, sleeps).
    pub total: Outcome,
    /// Each frame's wall time, seconds, in the order drawn.
    pub frame_seconds: Vec<f64>,
}

impl VoronoiReport {
    /// The median frame's wall time, seconds (the upper one of an even count).
    pub fn median_frame(&self) -> f64 {
        let mut t = self.frame_seconds.clone();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(0.0)
    }
}

/// Where frame `i` (from 0) of `frames` PNG frames goes: `base` itself for a single frame,
/// else `dir/stem-0001.png` (at least four digits).
pub fn frame_path(base: &Path, i: u64, frames: u64) -> PathBuf {
    if frames == 1 {
        return base.to_path_buf();
    }
    let stem = base.file_stem().and_then(|s| s.to_str()).unwrap_or("frame");
    let digits = frames.to_string().len().max(4);
    base.with_file_name(format!("{stem}-{:0digits$}.png", i + 1))
}

/// The temporary name of frame `i` beside `first`, the first frame's
/// (`.fugue-PID-N.part`): `.fugue-PID-M.part` with `M = N × 1,000,000 + i`, a name the output
/// module recognises as this process's (so that a later run clears it if this one was
/// killed) and that its own counter never reaches.
fn frame_temp(first: &Path, i: u64) -> PathBuf {
    let name = first
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = name
        .strip_suffix(".part")
        .and_then(|r| r.rsplit_once('-'))
        .and_then(|(_, n)| n.parse::<u64>().ok())
        .unwrap_or(0);
    first.with_file_name(format!(
        ".fugue-{}-{}.part",
        std::process::id(),
        n.saturating_mul(1_000_000).saturating_add(i)
    ))
}

/// Draws `o.frames` frames of a random Voronoi diagram on `runner` (`threads` threads),
/// moving the seeds between frames, and writes them as `o.picture` says.
pub fn voronoi(
    runner: &Runner,
    threads: usize,
    o: &VoronoiOptions,
) -> Result<VoronoiReport, BenchError> {
    let diagram = Voronoi::random(o.width, o.height, o.seeds, o.random_seed);
    let mut w = Workload::Voronoi {
        diagram,
        algorithm: o.algorithm,
    };
    let palette = image::voronoi_palette();
    let mut gif = match &o.picture {
        Some(Picture::Gif { path, delay }) => Some(GifWriter::create(
            path, o.width, o.height, &palette, *delay,
        )?),
        _ => None,
    };
    // A sequence of PNG frames is written as one output: each frame into a temporary file,
    // all of them given their names at the end; a run that fails or is stopped leaves none
    // (and no half of a new sequence over an old one).
    let mut frames: Vec<(fugue_engine::output::Temp, PathBuf)> = Vec::new();
    let frames_shown = match &o.picture {
        Some(Picture::Png(base)) if o.frames > 1 => Some(PathBuf::from(format!(
            "{} .. {}",
            frame_path(base, 0, o.frames).display(),
            frame_path(base, o.frames - 1, o.frames).display()
        ))),
        _ => None,
    };
    let mut report = VoronoiReport {
        total: Outcome {
            wall: Duration::ZERO,
            cpu: Duration::ZERO,
            stats: None,
        },
        frame_seconds: Vec::new(),
    };
    let prepared = w.prepare_light();
    for i in 0..o.frames {
        let (out, canvas) = w.run(runner, threads, &prepared)?;
        report.add(out);
        let Workload::Voronoi { diagram, .. } = &mut w else {
            unreachable!("built as Voronoi above")
        };
        if let (Some(picture), Some(c)) = (&o.picture, canvas) {
            let idx = image::voronoi_indices(&c, diagram);
            match (picture, gif.as_mut()) {
                (Picture::Png(base), _) => {
                    let path = frame_path(base, i, o.frames);
                    let rgb = image::indexed_to_rgb(&idx, &palette);
                    match &frames_shown {
                        None => image::write_png(&path, c.width, c.height, &rgb)
                            .with_context(|| format!("frame {} of {}", i + 1, o.frames))?,
                        Some(shown) => {
                            let bytes = image::encode_png(&path, c.width, c.height, &rgb)?;
                            let name = match frames.first() {
                                // One temporary name from the output module (which clears
                                // the folder of dead processes' files once), the others
                                // numbered after it.
                                None => crate::report::temp_path(&path)?,
                                Some((t, _)) => frame_temp(t.path(), i),
                            };
                            let cannot =
                                |e| BenchError::io(format!("cannot write {}", path.display()), e);
                            let (tmp, mut f) =
                                fugue_engine::output::Temp::create(name, shown).map_err(cannot)?;
                            f.write_all(&bytes).map_err(cannot)?;
                            frames.push((tmp, path));
                        }
                    }
                }
                (Picture::Gif { .. }, g) => g.expect("opened for a GIF above").add(&idx)?,
            }
        }
        diagram.step();
    }
    if let Some(g) = gif {
        g.finish()?;
    }
    // All named in one step: a stop meanwhile waits for the last one, so that what the
    // stop says of the frames holds (none written before this, all of them after).
    fugue_engine::output::commit_all(frames)?;
    Ok(report)
}

impl VoronoiReport {
    /// Adds one frame's measurement.
    fn add(&mut self, out: Outcome) {
        self.frame_seconds.push(out.wall.as_secs_f64());
        let total = &mut self.total;
        total.wall += out.wall;
        total.cpu += out.cpu;
        if let Some(st) = out.stats {
            let t = total.stats.get_or_insert_with(Stats::default);
            t.total.tasks += st.total.tasks;
            t.total.steals += st.total.steals;
            t.total.failed_steals += st.total.failed_steals;
            t.total.sleeps += st.total.sleeps;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_numbered_beside_the_base() {
        let base = Path::new("/tmp/x/v.png");
        assert_eq!(frame_path(base, 0, 1), base);
        assert_eq!(frame_path(base, 0, 3), Path::new("/tmp/x/v-0001.png"));
        assert_eq!(
            frame_path(base, 11, 12_000),
            Path::new("/tmp/x/v-00012.png")
        );
    }

    #[test]
    fn a_short_animation_is_written_as_a_gif() {
        let dir = std::env::temp_dir().join(format!("fugue-animate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("v.gif");
        let o = VoronoiOptions {
            width: 40,
            height: 30,
            seeds: 6,
            random_seed: 1,
            algorithm: VoronoiAlgorithm::Split,
            frames: 3,
            picture: Some(Picture::Gif {
                path: path.clone(),
                delay: 4,
            }),
        };
        let r = voronoi(&Runner::Serial, 1, &o).unwrap();
        assert_eq!(r.frame_seconds.len(), 3);
        assert!(r.median_frame() > 0.0);
        assert!(path.is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
