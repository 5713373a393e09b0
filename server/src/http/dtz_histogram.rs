//! `GET /stats/dtz.svg?fen=...`: how the positions of the FEN's table are
//! spread over DTZ for its side to move, with the position itself marked,
//! as an SVG image. The statistics section links it with an `<img>`, so the
//! page's WASM carries neither the counts nor the drawing.
//!
//! The counts are the Syzygy generator's per-table statistics (the same
//! source as the section's `stats.tsv`), condensed into `dtz_counts.tsv`:
//! one line per table, then for white to move and for black to move the
//! wins and the losses as `plies:positions` pairs.

use std::{collections::HashMap, fmt::Write};

use app::{
    api::Category,
    material,
    position::FenError,
    variant::{Variant, parse_variant_fen},
};
use axum::{
    extract::{Query, State},
    http::header,
    response::{IntoResponse, Response},
};
use shakmaty::{Color, Position};

use super::{
    AppState,
    error::HttpError,
    svg_chart::{self, tenths},
};

const DATA: &str = include_str!("dtz_counts.tsv");

/// How many positions of one table, one side to move, end in each DTZ:
/// `(dtz, positions)`, a loss's DTZ negative (as the API's).
#[derive(Debug, PartialEq)]
pub struct Histogram {
    /// The table, with the side to move, as the image's title says it.
    pub title: String,
    pub bars: Vec<(i32, u64)>,
}

/// The histogram for a board and side to move: its table looked up either
/// way round (the tables list the stronger side first, as White).
pub fn histogram(board: &shakmaty::Board, turn: Color) -> Option<Histogram> {
    [Color::White, Color::Black].into_iter().find_map(|first| {
        let name = material::with_first(board, first);
        let line = DATA
            .lines()
            .find(|line| line.split('\t').next() == Some(name.as_str()))?;
        let cols: Vec<&str> = line.split('\t').collect();
        // The table's white is the board's `first`.
        let table_side = if first == Color::White {
            turn
        } else {
            turn.other()
        };
        let at = if table_side == Color::White { 1 } else { 3 };
        let mut bars = pairs(cols.get(at)?, 1);
        bars.extend(pairs(cols.get(at + 1)?, -1));
        bars.sort_unstable();
        let side = match turn {
            Color::White => "white",
            Color::Black => "black",
        };
        Some(Histogram {
            title: format!("{name}, {side} to move"),
            bars,
        })
    })
}

/// `plies:positions` pairs, the plies signed by `sign`.
fn pairs(col: &str, sign: i32) -> Vec<(i32, u64)> {
    col.split(' ')
        .filter_map(|pair| {
            let (plies, count) = pair.split_once(':')?;
            Some((sign * plies.parse::<i32>().ok()?, count.parse().ok()?))
        })
        .collect()
}

/// What the image marks: the position's DTZ, a draw (at 0, where no
/// bar is), or nothing where the tables do not know it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    Dtz(i32),
    Draw,
    Unknown,
}

const WIDTH: i64 = 600;
const HEIGHT: i64 = 150;
/// Room under the bars for the axis labels, above them for the mark's.
const BOTTOM: i64 = 20;
const TOP: i64 = 18;

/// The image: a bar per DTZ (wins green, losses red), the DTZ at the ends
/// of the axis, and a line at the position's DTZ when it is known. Its
/// colours follow the page's scheme (an SVG image sees
/// `prefers-color-scheme` as the page does).
pub fn svg(h: &Histogram, mark: Mark) -> String {
    let dtz = match mark {
        Mark::Dtz(d) => Some(d),
        Mark::Draw => Some(0),
        Mark::Unknown => None,
    };
    let lo = h
        .bars
        .first()
        .map_or(0, |b| b.0)
        .min(dtz.unwrap_or(0))
        .min(0);
    let hi = h
        .bars
        .last()
        .map_or(0, |b| b.0)
        .max(dtz.unwrap_or(0))
        .max(0);
    let span = i64::from(hi - lo) + 1;
    let max = h.bars.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let plot = HEIGHT - BOTTOM - TOP;
    // Integer pixels (tenths): no float formatting.
    let x = |d: i32| (i64::from(d - lo) * WIDTH * 10) / span;
    let bar_w = ((WIDTH * 10) / span).max(10);
    let marked = match mark {
        Mark::Dtz(d) => format!("this position: DTZ {d}"),
        Mark::Draw => "this position: a draw".to_string(),
        Mark::Unknown => "this position's DTZ is not known".to_string(),
    };
    let mut out = svg_chart::open(
        WIDTH,
        HEIGHT,
        &format!(
            "{}: positions by DTZ (wins right, losses left); {marked}",
            h.title
        ),
        ".w{fill:#1f7a3a}.l{fill:#b0262c}.m{stroke:#0b57d0;stroke-width:2}.a{stroke:#6b6b70}",
        ".w{fill:#6fd08c}.l{fill:#f08080}.m{stroke:#9ec5ff}",
    );
    let base = HEIGHT - BOTTOM;
    for &(d, count) in &h.bars {
        // At least a pixel, so a rare DTZ still shows.
        let height = ((count as u128 * plot as u128 * 10) / max as u128).max(10) as i64;
        let class = if d > 0 { "w" } else { "l" };
        let _ = write!(
            out,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}"><title>DTZ {d}: {count} positions</title></rect>"#,
            tenths(x(d)),
            tenths(base * 10 - height),
            tenths(bar_w),
            tenths(height),
        );
    }
    let _ = write!(
        out,
        concat!(
            r#"<line class="a" x1="0" y1="{base}" x2="{w}" y2="{base}"/>"#,
            r#"<text x="0" y="{label_y}">DTZ {lo}</text>"#,
            r#"<text x="{w}" y="{label_y}" text-anchor="end">DTZ {hi}</text>"#,
        ),
        base = base,
        w = WIDTH,
        label_y = HEIGHT - 5,
        lo = lo,
        hi = hi,
    );
    if let Some(d) = dtz {
        let mx = tenths(x(d) + bar_w / 2);
        let _ = write!(
            out,
            concat!(
                r#"<line class="m" x1="{mx}" y1="{top}" x2="{mx}" y2="{base}"/>"#,
                r#"<text class="mark" x="{mx}" y="{ty}" text-anchor="{anchor}">{marked}</text>"#,
            ),
            mx = mx,
            top = TOP - 4,
            base = base,
            ty = TOP - 7,
            anchor = if x(d) < WIDTH * 5 { "start" } else { "end" },
            marked = marked,
        );
    }
    out.push_str("</svg>");
    out
}

/// The handler: 400 for a missing or illegal FEN, 404 for a material
/// without statistics; the mark where the tables know the position's DTZ.
pub async fn dtz_svg(
    State(state): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, HttpError> {
    let fen = query.get("fen").ok_or(FenError::Missing)?;
    let pos = parse_variant_fen(Variant::Standard, fen)?;
    let Some(h) = histogram(pos.board(), pos.turn()) else {
        return Ok((
            axum::http::StatusCode::NOT_FOUND,
            "no statistics for this material",
        )
            .into_response());
    };
    // A position outside the installed tables is drawn unmarked.
    let mark = match state.engine.probe(pos).await {
        Ok(a) if a.pos.category == Category::Draw => Mark::Draw,
        Ok(a) => a.pos.dtz.map_or(Mark::Unknown, Mark::Dtz),
        Err(_) => Mark::Unknown,
    };
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        svg(&h, mark),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn board(fen: &str) -> shakmaty::Board {
        Fen::from_ascii(fen.as_bytes())
            .expect("fen")
            .into_setup()
            .board
    }

    #[test]
    fn the_side_to_move_is_the_tables_either_way_round() {
        // KRvK: White to move only wins; Black to move only loses or draws.
        let white =
            histogram(&board("4k3/8/8/8/8/8/8/4K2R w - - 0 1"), Color::White).expect("KRvK");
        assert_eq!(white.title, "KRvK, white to move");
        assert_eq!(white.bars.first(), Some(&(1, 189)));
        assert!(white.bars.iter().all(|b| b.0 > 0));
        let black =
            histogram(&board("4k3/8/8/8/8/8/8/4K2R w - - 0 1"), Color::Black).expect("KRvK");
        assert_eq!(black.bars.first(), Some(&(-32, 390)));
        assert_eq!(black.bars.last(), Some(&(0, 27)));
        // The colours swapped: Black's rook, Black to move wins.
        let swapped =
            histogram(&board("4K3/8/8/8/8/8/8/4k2r b - - 0 1"), Color::Black).expect("KRvK");
        assert_eq!(swapped.bars, white.bars);
        assert!(histogram(&board("4k3/8/8/8/8/8/8/4K3 w - - 0 1"), Color::White).is_none());
    }

    #[test]
    fn the_image_marks_the_position() {
        let h = histogram(&board("4k3/8/8/8/8/8/8/4K2R w - - 0 1"), Color::White).expect("KRvK");
        let svg = svg(&h, Mark::Dtz(17));
        assert!(svg.starts_with("<svg"), "{svg}");
        assert_eq!(svg.matches("<rect").count(), h.bars.len());
        assert!(svg.contains("this position: DTZ 17"), "{svg}");
        assert!(svg.contains(r#"class="m""#), "{svg}");
        assert!(!super::svg(&h, Mark::Unknown).contains(r#"class="m""#));
        assert!(super::svg(&h, Mark::Draw).contains("this position: a draw"));
    }
}
