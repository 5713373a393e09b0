//! `GET /review/chart.svg?from=<ply>&s=<points>&x=<marks>`: the story of a
//! reviewed game at a glance, drawn by the server as the DTZ histogram is
//! (`dtz_histogram`), so the review page only writes an `<img>`. A bar per
//! point (the position before each judged ply, and after the last): above
//! the line White wins, below Black wins, the height the moves to mate
//! (DTZ where mate is not known); a draw is a dot on the line; red lines
//! mark the moments the result changed hands. The points come from the
//! review (`app::game_review::chart_point`), so drawing probes nothing.

use std::{collections::HashMap, fmt::Write};

use app::game_review::pgn::MAX_PLIES;
use axum::{
    extract::Query,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

use super::svg_chart::{self, tenths};

/// One point of the chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// White mates in n (negative: Black mates).
    Mate(i32),
    /// A win by DTZ, White's positive.
    Dtz(i32),
    Draw,
    /// A cursed win: White's when true.
    Cursed(bool),
    Unknown,
}

impl Point {
    pub fn parse(token: &str) -> Option<Point> {
        let (sign, rest) = match token.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, token),
        };
        let number = |s: &str| s.parse::<i32>().ok().filter(|n| (0..10_000).contains(n));
        match rest {
            "d" if sign == 1 => Some(Point::Draw),
            "u" if sign == 1 => Some(Point::Unknown),
            "c" => Some(Point::Cursed(sign == 1)),
            _ => match rest.split_at_checked(1)? {
                ("m", n) => Some(Point::Mate(sign * number(n)?)),
                ("z", n) => Some(Point::Dtz(sign * number(n)?)),
                _ => None,
            },
        }
    }

    fn height(self) -> i32 {
        match self {
            Point::Mate(n) | Point::Dtz(n) => n,
            _ => 0,
        }
    }

    fn words(self) -> String {
        let side = |n: i32| if n > 0 { "White" } else { "Black" };
        match self {
            Point::Mate(n) => format!("{} mates in {}", side(n), n.abs()),
            Point::Dtz(n) => format!("{} wins (DTZ {})", side(n), n.abs()),
            Point::Draw => "a draw".to_string(),
            Point::Cursed(white) => format!(
                "a cursed win for {}, drawn by the 50-move rule",
                if white { "White" } else { "Black" }
            ),
            Point::Unknown => "not known".to_string(),
        }
    }
}

const WIDTH: i64 = 600;
const HEIGHT: i64 = 160;
const BOTTOM: i64 = 18;
const TOP: i64 = 14;

/// "34." or "34…": the move of an absolute ply (0: White's first move).
fn move_at(ply: usize) -> String {
    let number = ply / 2 + 1;
    if ply.is_multiple_of(2) {
        format!("{number}.")
    } else {
        format!("{number}…")
    }
}

/// The image for points starting at ply `from`, with the points `marks`
/// (indices) marked.
pub fn svg(from: usize, points: &[Point], marks: &[usize]) -> String {
    let mut out = svg_chart::open(
        WIDTH,
        HEIGHT,
        &format!(
            "The result from {} on: above the line White wins, below Black wins; the height is the moves to mate (DTZ where mate is not known)",
            move_at(from)
        ),
        ".w{fill:#2f6fd6}.b{fill:#4a5160}.d{fill:#6b6b70}.c{fill:#8a5a00}.a{stroke:#6b6b70}.x{stroke:#b0262c;stroke-width:2}",
        ".w{fill:#7aa7f0}.b{fill:#c8ccd6}.x{stroke:#f08080}",
    );
    let step = (WIDTH * 10) / points.len().max(1) as i64;
    bars(&mut out, from, points, step);
    for &m in marks.iter().filter(|&&m| m < points.len()) {
        let x = tenths(m as i64 * step);
        let _ = write!(
            out,
            r#"<line class="x" x1="{x}" y1="{TOP}" x2="{x}" y2="{}"/>"#,
            HEIGHT - BOTTOM
        );
    }
    let _ = write!(
        out,
        concat!(
            r#"<line class="a" x1="0" y1="{mid}" x2="{w}" y2="{mid}"/>"#,
            r#"<text x="{c}" y="11" text-anchor="middle">▲ White wins</text>"#,
            r#"<text x="{c}" y="{ly}" text-anchor="middle">▼ Black wins</text>"#,
            r#"<text x="0" y="{ly}">{first}</text>"#,
            r#"<text x="{w}" y="{ly}" text-anchor="end">{last}</text>"#,
            "</svg>",
        ),
        mid = MID,
        w = WIDTH,
        c = WIDTH / 2,
        ly = HEIGHT - 2,
        first = move_at(from),
        last = move_at(from + points.len().saturating_sub(1)),
    );
    out
}

/// The middle line: a draw.
const MID: i64 = TOP + (HEIGHT - BOTTOM - TOP) / 2;

/// A bar per known point, `step` tenths of a pixel apart, scaled to the
/// longest distance; the point's move and result as its tooltip.
fn bars(out: &mut String, from: usize, points: &[Point], step: i64) {
    let max = points
        .iter()
        .map(|p| p.height().abs())
        .max()
        .unwrap_or(1)
        .max(1) as i64;
    let half = MID - TOP - 2;
    let bar = (step * 7 / 10).max(10);
    for (i, p) in points.iter().enumerate() {
        let (class, y, height) = match *p {
            Point::Mate(v) | Point::Dtz(v) => {
                let h = ((v.abs() as i64 * half * 10) / max).max(10);
                if v > 0 {
                    ("w", MID * 10 - h, h)
                } else {
                    ("b", MID * 10, h)
                }
            }
            Point::Draw => ("d", MID * 10 - 15, 30),
            Point::Cursed(white) => ("c", if white { MID * 10 - 40 } else { MID * 10 }, 40),
            Point::Unknown => continue,
        };
        let _ = write!(
            out,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}"><title>{} {}</title></rect>"#,
            tenths(i as i64 * step + (step - bar) / 2),
            tenths(y),
            tenths(bar),
            tenths(height),
            move_at(from + i),
            p.words(),
        );
    }
}

/// The handler: 400 naming what is wrong with the query.
pub async fn chart(Query(query): Query<HashMap<String, String>>) -> Response {
    let bad = |why: String| (StatusCode::BAD_REQUEST, why).into_response();
    let from = match query.get("from").map(|f| f.parse::<usize>()) {
        None => 0,
        Some(Ok(f)) if f <= 20_000 => f,
        Some(_) => return bad("from: a ply number, 0 for White's first move".to_string()),
    };
    let Some(series) = query.get("s").filter(|s| !s.is_empty()) else {
        return bad("s: the points, as a review's chart link gives them".to_string());
    };
    let tokens: Vec<&str> = series.split('.').collect();
    if tokens.len() > MAX_PLIES + 1 {
        return bad(format!("s: at most {} points", MAX_PLIES + 1));
    }
    let mut points = Vec::with_capacity(tokens.len());
    for token in tokens {
        match Point::parse(token) {
            Some(p) => points.push(p),
            None => {
                return bad(format!(
                    "s: \"{token}\" is not a point (m12, -m7, z14, d, c, -c, u)"
                ));
            }
        }
    }
    let marks: Vec<usize> = query
        .get("x")
        .map(|x| x.split('.').filter_map(|m| m.parse().ok()).collect())
        .unwrap_or_default();
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        svg(from, &points, &marks),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_read_as_the_review_writes_them() {
        assert_eq!(Point::parse("m12"), Some(Point::Mate(12)));
        assert_eq!(Point::parse("-m7"), Some(Point::Mate(-7)));
        assert_eq!(Point::parse("-z14"), Some(Point::Dtz(-14)));
        assert_eq!(Point::parse("d"), Some(Point::Draw));
        assert_eq!(Point::parse("-c"), Some(Point::Cursed(false)));
        assert_eq!(Point::parse("u"), Some(Point::Unknown));
        assert_eq!(Point::parse("q"), None);
        assert_eq!(Point::parse("m"), None);
        assert_eq!(Point::parse("-d"), None);
    }

    #[test]
    fn a_bar_per_known_point_and_a_line_per_moment() {
        let points = [
            Point::Mate(12),
            Point::Mate(11),
            Point::Draw,
            Point::Mate(-9),
            Point::Unknown,
        ];
        let svg = svg(106, &points, &[2]);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<rect").count(), 4);
        assert_eq!(svg.matches(r#"class="x""#).count(), 1);
        assert!(svg.contains("54. White mates in 12"), "{svg}");
        assert!(svg.contains("55… Black mates in 9"), "{svg}");
    }
}
