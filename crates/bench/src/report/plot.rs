//! Figures through plotters: a [`Figure`] draws itself on any backend; [`write`] draws it into
//! an SVG or PNG file (chosen by the extension) through a temporary file and a rename.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::BenchError;

/// A drawing area of any backend.
pub type Area<DB> = DrawingArea<DB, Shift>;

/// A backend's error as text (the figures report it with the file's name).
pub fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Something that can be drawn.
pub trait Figure {
    /// Draws the figure on `root`.
    fn draw<DB: DrawingBackend>(&self, root: Area<DB>) -> Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// Draws `figure` into `path` (`.svg`: SVG, otherwise PNG) at `size` pixels.
pub fn write(path: &Path, size: (u32, u32), figure: &impl Figure) -> Result<(), BenchError> {
    let svg = path.extension().is_some_and(|e| e == "svg");
    // The temporary name keeps the extension: the PNG encoder is chosen from it.
    let ext = if svg { "svg" } else { "png" };
    let tmp = super::temp_path(path)?.with_extension(format!("part.{ext}"));
    let res = if svg {
        figure.draw(SVGBackend::new(&tmp, size).into_drawing_area())
    } else {
        figure.draw(BitMapBackend::new(&tmp, size).into_drawing_area())
    };
    if let Err(message) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(BenchError::Plot {
            path: path.to_path_buf(),
            message,
        });
    }
    super::commit(&tmp, path)
}

/// Draws `figure` as `dir/NAME.svg` and `dir/NAME.png`.
pub fn write_both(
    dir: &Path,
    name: &str,
    size: (u32, u32),
    figure: &impl Figure,
) -> Result<(), BenchError> {
    for ext in ["svg", "png"] {
        write(&dir.join(format!("{name}.{ext}")), size, figure)?;
    }
    Ok(())
}
