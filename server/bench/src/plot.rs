//! `zugzwang-bench plot`: ECDFs of response time, one curve per replay, on a
//! log time axis with the client's ping added, as the design notes ask for
//! tail-latency figures. SVG and PNG; the font is bundled, so no system
//! fonts are needed.

use std::{
    path::{Path, PathBuf},
    sync::Once,
};

use plotters::{
    coord::Shift,
    prelude::*,
    style::{FontStyle, register_font},
};

use super::{BenchError, result::Record};

/// DejaVu Sans Mono (Bitstream Vera licence, see fonts/DejaVu-LICENSE).
const FONT: &[u8] = include_bytes!("fonts/DejaVuSansMono.ttf");
const FONT_NAME: &str = "sans-serif";

/// Points drawn per curve at most: beyond this the body of the distribution
/// is thinned evenly, but the slowest [`TAIL_POINTS`] are always drawn, as
/// that is where the curves differ.
const MAX_POINTS: usize = 2000;
const TAIL_POINTS: usize = 500;

/// Colour-blind-friendly colours (Okabe–Ito), then a few more for large tables.
const COLOURS: [RGBColor; 12] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
    RGBColor(127, 63, 152),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
];

/// One curve: the measured response times of one replay.
#[derive(Debug, Clone)]
pub struct Curve {
    pub name: String,
    /// (response time + ping in ms, fraction of requests at or below), ascending.
    pub points: Vec<(f64, f64)>,
}

/// The empirical CDF of the measured (non-warm-up) requests, with `ping_ms`
/// added to each response time; empty when everything was warm-up.
pub fn ecdf(records: &[Record], ping_ms: f64) -> Vec<(f64, f64)> {
    let mut ms: Vec<f64> = records
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.ms + ping_ms)
        .collect();
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    ms.into_iter()
        .enumerate()
        .map(|(i, x)| (x, (i + 1) as f64 / n as f64))
        .collect()
}

/// Keeps at most about [`MAX_POINTS`] points, always the first, the last and the tail.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let n = points.len();
    if n <= MAX_POINTS {
        return points;
    }
    let body = n - TAIL_POINTS;
    let step = body.div_ceil(MAX_POINTS - TAIL_POINTS);
    points
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i >= body)
        .map(|(_, p)| p)
        .collect()
}

/// Reads each result file into a curve named after the file (or `labels`).
pub fn curves(
    files: &[PathBuf],
    labels: &[String],
    ping_ms: f64,
) -> Result<Vec<Curve>, BenchError> {
    files
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let points = ecdf(&super::result::read(path)?, ping_ms);
            if points.is_empty() {
                return Err(BenchError::NothingToPlot { path: path.clone() });
            }
            let name = labels.get(i).cloned().unwrap_or_else(|| {
                path.file_stem().map_or_else(
                    || path.display().to_string(),
                    |s| s.to_string_lossy().into(),
                )
            });
            Ok(Curve {
                name,
                points: thin(points),
            })
        })
        .collect()
}

/// Draws the curves into every file in `outs` (SVG or PNG by extension).
pub fn plot(
    curves: &[Curve],
    title: &str,
    ping_ms: f64,
    outs: &[PathBuf],
) -> Result<(), BenchError> {
    static FONT_ONCE: Once = Once::new();
    FONT_ONCE.call_once(|| {
        // The bundled font is checked by a test; a failure here only loses labels.
        let _ = register_font(FONT_NAME, FontStyle::Normal, FONT);
    });
    for out in outs {
        let draw_err = |reason: String| BenchError::Draw {
            path: out.clone(),
            reason,
        };
        match out.extension().and_then(|e| e.to_str()) {
            Some("svg") => {
                let root = SVGBackend::new(out, (1000, 650)).into_drawing_area();
                draw(&root, curves, title, ping_ms).map_err(draw_err)?;
            }
            Some("png") => {
                let root = BitMapBackend::new(out, (1000, 650)).into_drawing_area();
                draw(&root, curves, title, ping_ms).map_err(draw_err)?;
            }
            _ => return Err(BenchError::UnknownImageType { path: out.clone() }),
        }
    }
    Ok(())
}

/// Smallest and largest x over all curves, widened to 1, 2 or 5 times a
/// power of ten so the log axis starts and ends on a labelled value.
fn x_range(curves: &[Curve]) -> (f64, f64) {
    let lo = curves
        .iter()
        .filter_map(|c| c.points.first())
        .map(|p| p.0)
        .fold(f64::INFINITY, f64::min);
    let hi = curves
        .iter()
        .filter_map(|c| c.points.last())
        .map(|p| p.0)
        .fold(0.0, f64::max);
    let lo = round_125(lo.max(0.01), false);
    let hi = round_125(hi.max(lo * 2.0), true);
    (lo, hi)
}

/// The values m × 10^k in `lo..=hi` for each mantissa m: labelled and
/// light grid lines of the log axis (plotters' own choice skips short ranges).
fn ticks(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in mantissas {
            let x = m * decade;
            if x >= lo * (1.0 - 1e-9) && x <= hi * (1.0 + 1e-9) {
                out.push(x);
            }
        }
        decade *= 10.0;
    }
    out
}

/// The nearest of 1, 2, 5 × 10^k at or below `x`, or at or above it when `up`.
fn round_125(x: f64, up: bool) -> f64 {
    let decade = 10f64.powf(x.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0];
    let m = x / decade;
    let pick = if up {
        steps.iter().find(|s| **s >= m - 1e-9)
    } else {
        steps.iter().rev().find(|s| **s <= m + 1e-9)
    };
    pick.copied().unwrap_or(1.0) * decade
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    curves: &[Curve],
    title: &str,
    ping_ms: f64,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (lo, hi) = x_range(curves);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT_NAME, 22))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (lo..hi)
                .log_scale()
                .with_key_points(ticks(lo, hi, &[1.0, 2.0, 5.0]))
                .with_light_points(ticks(
                    lo,
                    hi,
                    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
                )),
            0f64..1f64,
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(format!(
            "response time in ms, with a {ping_ms} ms client ping added (log scale)"
        ))
        .x_label_formatter(&log_label)
        .y_desc("fraction of requests answered")
        .y_labels(11)
        .label_style((FONT_NAME, 14))
        .axis_desc_style((FONT_NAME, 15))
        .draw()
        .map_err(err)?;
    for (i, curve) in curves.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        // A step function: flat until the next response time, then up.
        let mut steps = Vec::with_capacity(curve.points.len() * 2 + 1);
        steps.push((curve.points[0].0, 0.0));
        let mut previous = 0.0;
        for &(x, y) in &curve.points {
            steps.push((x, previous));
            steps.push((x, y));
            previous = y;
        }
        let style = colour.stroke_width(2);
        chart
            .draw_series(LineSeries::new(steps, style))
            .map_err(err)?
            .label(curve.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT_NAME, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Labels only 1, 2 and 5 times a power of ten, so a log axis with many
/// grid lines stays readable.
fn log_label(x: &f64) -> String {
    if *x <= 0.0 {
        return String::new();
    }
    let decade = 10f64.powf(x.log10().floor());
    let mantissa = x / decade;
    if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        if *x >= 1.0 {
            format!("{x:.0}")
        } else {
            format!("{x}")
        }
    } else {
        String::new()
    }
}

/// For `--out` defaults and messages.
pub fn describe(outs: &[PathBuf]) -> String {
    outs.iter()
        .map(|p: &PathBuf| Path::new(p).display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ms: f64, warmup: bool) -> Record {
        Record {
            fen: "x".into(),
            ms,
            status: 200,
            warmup,
        }
    }

    #[test]
    fn ecdf_adds_the_ping_and_skips_the_warmup() {
        let records = vec![
            record(9000.0, true),
            record(3.0, false),
            record(1.0, false),
            record(2.0, false),
            record(2.0, false),
        ];
        assert_eq!(
            ecdf(&records, 30.0),
            vec![(31.0, 0.25), (32.0, 0.5), (32.0, 0.75), (33.0, 1.0)]
        );
        assert!(ecdf(&records[..1], 30.0).is_empty());
    }

    #[test]
    fn ticks_cover_the_range() {
        assert_eq!(
            ticks(20.0, 1000.0, &[1.0, 2.0, 5.0]),
            vec![20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(ticks(0.5, 2.0, &[1.0, 5.0]), vec![0.5, 1.0]);
    }

    #[test]
    fn axis_ends_on_round_values() {
        assert_eq!(round_125(31.0, false), 20.0);
        assert_eq!(round_125(31.0, true), 50.0);
        assert_eq!(round_125(6300.0, true), 10_000.0);
        assert_eq!(round_125(100.0, false), 100.0);
    }

    #[test]
    fn log_axis_labels_only_round_values() {
        assert_eq!(log_label(&50.0), "50");
        assert_eq!(log_label(&2000.0), "2000");
        assert_eq!(log_label(&0.5), "0.5");
        assert_eq!(log_label(&70.0), "");
        assert_eq!(log_label(&0.0), "");
    }

    #[test]
    fn thinning_keeps_ends_and_tail() {
        let points: Vec<(f64, f64)> = (0..20_000).map(|i| (i as f64, i as f64)).collect();
        let thinned = thin(points);
        assert!(thinned.len() <= MAX_POINTS + 1, "{}", thinned.len());
        assert_eq!(thinned[0], (0.0, 0.0));
        assert_eq!(thinned.last(), Some(&(19_999.0, 19_999.0)));
        let tail = thinned
            .iter()
            .filter(|p| p.0 >= (20_000 - TAIL_POINTS) as f64)
            .count();
        assert_eq!(tail, TAIL_POINTS);
    }

    #[test]
    fn draws_svg_and_png_with_the_bundled_font() {
        assert!(register_font("bundled-check", FontStyle::Normal, FONT).is_ok());
        let dir = tempfile::tempdir().unwrap();
        let curves = vec![
            Curve {
                name: "fast".into(),
                points: ecdf(&[record(1.0, false), record(4.0, false)], 30.0),
            },
            Curve {
                name: "slow".into(),
                points: ecdf(&[record(100.0, false), record(900.0, false)], 30.0),
            },
        ];
        let outs = vec![dir.path().join("e.svg"), dir.path().join("e.png")];
        plot(&curves, "test", 30.0, &outs).unwrap();
        let svg = std::fs::read_to_string(&outs[0]).unwrap();
        assert!(svg.contains("slow") && svg.contains("<svg"));
        let png = std::fs::read(&outs[1]).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(matches!(
            plot(&curves, "t", 30.0, &[dir.path().join("e.gif")]),
            Err(BenchError::UnknownImageType { .. })
        ));
    }
}
