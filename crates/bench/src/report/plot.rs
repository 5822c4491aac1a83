//! Figures through plotters: a [`Figure`] draws itself on any backend; [`write()`] draws it into
//! an SVG or PNG file (chosen by the extension) through a temporary file and a rename.
//!
//! What every benchmark's figures share is here too: one palette ([`color`]), the frame of a
//! chart ([`chart`]: caption, margin, label areas; [`mesh`]: axis descriptions and fonts), a
//! labelled line with a dot at each point ([`line()`]) and the legend box ([`legend`]).

use std::path::Path;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;

use crate::error::BenchError;

/// A drawing area of any backend.
pub type Area<DB> = DrawingArea<DB, Shift>;

/// A backend's error as text (the figures report it with the file's name).
pub fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// The font of every text in the figures.
pub const FONT: &str = "sans-serif";

/// The palette of every figure: the eight colours of Okabe and Ito, told apart by readers
/// with any common colour-vision deficiency; the yellow is darkened to read on white.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(204, 170, 0),
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
];

/// The grey of reference lines and of a peer drawn for comparison.
pub const GREY: RGBColor = RGBColor(127, 127, 127);

/// Colour `i` of [`PALETTE`] (repeated beyond eight).
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A chart of the coordinates `X` × `Y` on an area of the backend `DB`.
pub type Chart<'a, DB, X, Y> = ChartContext<
    'a,
    DB,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// A chart on `area` with `caption` (`caption_size` points), room for the y labels of
/// `y_label_area` pixels, and the coordinates `x` × `y`.
pub fn chart<'a, DB, X, Y>(
    area: &'a Area<DB>,
    caption: impl AsRef<str>,
    caption_size: u32,
    y_label_area: u32,
    x: X,
    y: Y,
) -> Result<Chart<'a, DB, X, Y>, String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord,
    Y: AsRangedCoord,
{
    ChartBuilder::on(area)
        .caption(caption, (FONT, caption_size))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(y_label_area)
        .build_cartesian_2d(x, y)
        .map_err(err)
}

/// The mesh of `chart` with its axes described and the figures' label fonts; the caller adds
/// what is particular to the chart and draws it.
pub fn mesh<'a, 'b, DB, X, Y, XT, YT>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut m = chart.configure_mesh();
    m.x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18));
    m
}

/// The legend's sample of a series drawn in `style`: a short horizontal line.
pub fn key(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new([(x, y), (x + 18, y)], style)
}

/// Draws `points` as a line of `colour`, `width` pixels wide, with a dot at each point, and
/// names it `label` in the legend.
pub fn line<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    label: &str,
    colour: RGBColor,
    width: u32,
    points: &[(f64, f64)],
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = ShapeStyle::from(&colour).stroke_width(width);
    chart
        .draw_series(LineSeries::new(points.iter().copied(), style))
        .map_err(err)?
        .label(label)
        .legend(key(style));
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
        .map_err(err)?;
    Ok(())
}

/// Fills `root` white, splits it into `rows` × `cols` panels, draws each (`draw(i, panel)`,
/// row by row) and presents it.
pub fn grid<DB>(
    root: &Area<DB>,
    (rows, cols): (usize, usize),
    mut draw: impl FnMut(usize, &Area<DB>) -> Result<(), String>,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    for (i, area) in root.split_evenly((rows, cols)).iter().enumerate() {
        draw(i, area)?;
    }
    root.present().map_err(err)
}

/// Draws the legend of `chart`'s labelled series at `position`.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 13))
        .draw()
        .map_err(err)
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
        // A file that could not be written (a full disk) is said as the system says it, not
        // as the drawing library's nested debug output.
        let message =
            os_reason(&message).map_or(message, |r| format!("cannot write the file: {r}"));
        return Err(BenchError::Plot {
            path: path.to_path_buf(),
            message,
        });
    }
    super::commit(&tmp, path)
}

/// The system's sentence inside a drawing library's error text, when it holds one (`... error:
/// "No space left on device (os error 28)" ...` or `... No space left on device (os error
/// 28) ...`).
fn os_reason(message: &str) -> Option<String> {
    let at = message.find("(os error ")?;
    let end = at + message[at..].find(')')? + 1;
    let start = message[..at].rfind(['"', ':', '(']).map_or(0, |i| i + 1);
    let reason = message[start..end].trim();
    (!reason.is_empty()).then(|| reason.to_string())
}

#[cfg(test)]
mod os_reason_tests {
    use super::os_reason;

    #[test]
    fn the_systems_sentence_is_taken_from_a_nested_error() {
        assert_eq!(
            os_reason("backend error: Drawing backend error: ImageError(IoError(Custom { kind: Other, error: \"No space left on device (os error 28)\" }))").as_deref(),
            Some("No space left on device (os error 28)")
        );
        assert_eq!(
            os_reason("Drawing backend error: Io: Permission denied (os error 13)").as_deref(),
            Some("Permission denied (os error 13)")
        );
        assert_eq!(os_reason("a font is missing"), None);
    }
}
