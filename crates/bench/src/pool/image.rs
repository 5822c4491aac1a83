//! The demos' pictures: colours for a Mandelbrot escape-count image and for a Voronoi
//! diagram, written as PNG or as an animated GIF (each file through a temporary name and a
//! rename, as every output of fugue).

use std::path::{Path, PathBuf};

use super::work::{Canvas, Voronoi};
use crate::error::{config, BenchError};
use crate::report::write_atomic;

/// RGB bytes of a Mandelbrot image: points inside are black, the others coloured by how fast
/// they escape (square-root scale, so that the slow escapes near the set stay visible).
pub fn mandelbrot_rgb(c: &Canvas, iterations: u32) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(c.width * c.height * 3);
    let max = f64::from(iterations.max(1));
    for v in c.pixels() {
        if v >= iterations {
            rgb.extend_from_slice(&[0, 0, 0]);
            continue;
        }
        let t = (f64::from(v) / max).sqrt();
        // A blue -> white -> orange ramp.
        let (r, g, b) = if t < 0.5 {
            let u = t * 2.0;
            (20.0 + 235.0 * u, 40.0 + 215.0 * u, 120.0 + 135.0 * u)
        } else {
            let u = (t - 0.5) * 2.0;
            (255.0, 255.0 - 120.0 * u, 255.0 - 235.0 * u)
        };
        rgb.extend_from_slice(&[r as u8, g as u8, b as u8]);
    }
    rgb
}

/// The colour of seed `i` (a fixed palette of 255 colours, repeated beyond).
pub fn seed_color(i: u32) -> [u8; 3] {
    // Golden-ratio hues, two lightness levels.
    let i = i % 255;
    let h = (f64::from(i) * 0.618_033_988_75).fract();
    let l = if i.is_multiple_of(2) { 0.62 } else { 0.78 };
    hsl(h, 0.55, l)
}

fn hsl(h: f64, s: f64, l: f64) -> [u8; 3] {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h * 6.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    [
        ((r + m) * 255.0) as u8,
        ((g + m) * 255.0) as u8,
        ((b + m) * 255.0) as u8,
    ]
}

/// Palette indices of a Voronoi diagram: seed `i` takes index `i % 255`, and each seed's
/// position is marked with index 255 (black), 5 pixels across.
pub fn voronoi_indices(c: &Canvas, d: &Voronoi) -> Vec<u8> {
    let mut idx: Vec<u8> = c.pixels().into_iter().map(|v| (v % 255) as u8).collect();
    for s in &d.seeds {
        for dy in -2i64..=2 {
            for dx in -2i64..=2 {
                if dx.abs() + dy.abs() > 2 {
                    continue;
                }
                let (x, y) = (s.x + dx, s.y + dy);
                if (0..c.width as i64).contains(&x) && (0..c.height as i64).contains(&y) {
                    idx[y as usize * c.width + x as usize] = 255;
                }
            }
        }
    }
    idx
}

/// The 256-colour palette of [`voronoi_indices`], as RGB bytes.
pub fn voronoi_palette() -> Vec<u8> {
    let mut p: Vec<u8> = (0..255).flat_map(seed_color).collect();
    p.extend_from_slice(&[0, 0, 0]);
    p
}

/// RGB bytes of indexed pixels.
pub fn indexed_to_rgb(idx: &[u8], palette: &[u8]) -> Vec<u8> {
    idx.iter()
        .flat_map(|&i| {
            let k = usize::from(i) * 3;
            [palette[k], palette[k + 1], palette[k + 2]]
        })
        .collect()
}

/// `rgb` (`width x height` pixels, 3 bytes each) encoded as a PNG file's bytes; `path` names
/// it in errors.
pub fn encode_png(
    path: &Path,
    width: usize,
    height: usize,
    rgb: &[u8],
) -> Result<Vec<u8>, BenchError> {
    let (w, h) = dims_u32(width, height)?;
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let fail = |e: png::EncodingError| {
            BenchError::Failed(format!("cannot encode {} as PNG: {e}", path.display()))
        };
        let mut writer = enc.write_header().map_err(fail)?;
        writer.write_image_data(rgb).map_err(fail)?;
    }
    Ok(bytes)
}

/// Writes `rgb` as a PNG file at `path`, through a temporary file and a rename.
pub fn write_png(path: &Path, width: usize, height: usize, rgb: &[u8]) -> Result<(), BenchError> {
    write_atomic(path, &encode_png(path, width, height, rgb)?)
}

/// An animated GIF written frame by frame into a temporary file beside its path, renamed
/// to it by [`finish`](GifWriter::finish) (removed if dropped unfinished, and by a process
/// that ends on a signal: it is registered, [`fugue_engine::output::Temp`]).
pub struct GifWriter {
    enc: Option<gif::Encoder<std::io::BufWriter<std::fs::File>>>,
    tmp: Option<fugue_engine::output::Temp>,
    path: PathBuf,
    width: u16,
    height: u16,
    delay_cs: u16,
}

impl GifWriter {
    /// Starts `path`: `width` × `height` frames of indices into `palette` (256 RGB colours),
    /// `delay_cs` hundredths of a second per frame, looping.
    pub fn create(
        path: &Path,
        width: usize,
        height: usize,
        palette: &[u8],
        delay_cs: u16,
    ) -> Result<GifWriter, BenchError> {
        let (Ok(w), Ok(h)) = (u16::try_from(width), u16::try_from(height)) else {
            return config(format!(
                "{}: a GIF is at most 65535 pixels a side ({width}x{height} asked); write PNG frames instead",
                path.display()
            ));
        };
        let (tmp, file) = fugue_engine::output::Temp::create(crate::report::temp_path(path)?, path)
            .map_err(|e| BenchError::io(format!("cannot write {}", path.display()), e))?;
        let mut g = GifWriter {
            enc: None,
            tmp: Some(tmp),
            path: path.to_path_buf(),
            width: w,
            height: h,
            delay_cs,
        };
        let mut enc = gif::Encoder::new(std::io::BufWriter::new(file), w, h, palette)
            .map_err(|e| g.fail(e))?;
        enc.set_repeat(gif::Repeat::Infinite)
            .map_err(|e| g.fail(e))?;
        g.enc = Some(enc);
        Ok(g)
    }

    fn fail(&self, e: gif::EncodingError) -> BenchError {
        match e {
            gif::EncodingError::Io(e) => {
                BenchError::io(format!("cannot write {}", self.path.display()), e)
            }
            e => BenchError::Failed(format!("cannot encode {} as GIF: {e}", self.path.display())),
        }
    }

    /// Appends a frame (`width` × `height` palette indices).
    pub fn add(&mut self, indices: &[u8]) -> Result<(), BenchError> {
        let mut frame = gif::Frame::from_indexed_pixels(self.width, self.height, indices, None);
        frame.delay = self.delay_cs;
        let res = self
            .enc
            .as_mut()
            .expect("open until finished")
            .write_frame(&frame);
        res.map_err(|e| self.fail(e))
    }

    /// Writes the trailer, syncs the file and gives it its name.
    pub fn finish(mut self) -> Result<(), BenchError> {
        let enc = self.enc.take().expect("open until finished");
        let file = enc
            .into_inner()
            .map_err(|e| BenchError::io(format!("cannot write {}", self.path.display()), e))?;
        let file = file.into_inner().map_err(|e| {
            BenchError::io(
                format!("cannot write {}", self.path.display()),
                e.into_error(),
            )
        })?;
        file.sync_all()
            .map_err(|e| BenchError::io(format!("cannot write {}", self.path.display()), e))?;
        let tmp = self.tmp.take().expect("open until finished");
        let res = crate::report::commit(tmp.path(), &self.path);
        // Renamed, or removed by the failed commit.
        tmp.keep();
        res
    }
}

impl Drop for GifWriter {
    fn drop(&mut self) {
        // The encoder's file is closed before its temporary name is removed (by `Temp`).
        self.enc = None;
        self.tmp = None;
    }
}

fn dims_u32(width: usize, height: usize) -> Result<(u32, u32), BenchError> {
    match (u32::try_from(width), u32::try_from(height)) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => config(format!(
            "an image of {width}x{height} pixels cannot be written"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::work::{voronoi, Inline, VoronoiAlgorithm};

    #[test]
    fn png_and_gif_files_decode_to_what_was_drawn() {
        let dir = std::env::temp_dir().join(format!("fugue-pool-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut d = Voronoi::random(40, 30, 6, 3);
        let mut frames = Vec::new();
        for _ in 0..3 {
            let c = Canvas::new(40, 30);
            voronoi(&Inline, &d, &c, VoronoiAlgorithm::Split);
            frames.push(voronoi_indices(&c, &d));
            d.step();
        }
        let palette = voronoi_palette();
        let png_path = dir.join("v.png");
        write_png(&png_path, 40, 30, &indexed_to_rgb(&frames[0], &palette)).unwrap();
        let dec = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
        let mut reader = dec.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (40, 30));
        assert_eq!(
            &buf[..info.buffer_size()],
            &indexed_to_rgb(&frames[0], &palette)[..]
        );

        let gif_path = dir.join("v.gif");
        let mut g = GifWriter::create(&gif_path, 40, 30, &palette, 4).unwrap();
        for f in &frames {
            g.add(f).unwrap();
        }
        g.finish().unwrap();
        let mut opts = gif::DecodeOptions::new();
        opts.set_color_output(gif::ColorOutput::Indexed);
        let mut dec = opts
            .read_info(std::fs::File::open(&gif_path).unwrap())
            .unwrap();
        let mut n = 0;
        while let Some(f) = dec.read_next_frame().unwrap() {
            assert_eq!(&f.buffer[..], &frames[n][..]);
            n += 1;
        }
        assert_eq!(n, 3);
        assert!(GifWriter::create(&dir.join("w.gif"), 70_000, 1, &palette, 4).is_err());
        // Dropped unfinished: no file, no temporary left behind.
        drop(GifWriter::create(&dir.join("u.gif"), 4, 4, &palette, 4).unwrap());
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
