//! Endgame statistics for the material on the board: the share of wins,
//! draws and losses for each side to move, and the longest win (in DTZ plies).
//!
//! The figures come from the Syzygy generator's per-table statistics,
//! condensed into `stats.tsv` (about 6 KB, compiled in, so the server renders
//! them and the browser needs no extra request). One line per table:
//! material, then for white to move and for black to move the counts of wins,
//! cursed wins, draws, cursed losses and losses, then the longest win for
//! white and for black as plies and an example FEN (empty if none).
//! Regenerate it from the generator's `*.txt` files with the short parser in
//! the commit that added this file.

use leptos::prelude::*;
use shakmaty::Color;

use crate::{
    api::DTZ_HISTOGRAM_PATH,
    material,
    practice::setup::practice_href,
    source::{encode, position_href},
    variant::Variant,
};

const DATA: &str = include_str!("stats.tsv");

/// The outcome counts of one table for one side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Counts {
    wins: u64,
    cursed_wins: u64,
    draws: u64,
    cursed_losses: u64,
    losses: u64,
}

impl Counts {
    fn total(&self) -> u64 {
        self.wins + self.cursed_wins + self.draws + self.cursed_losses + self.losses
    }
}

/// Statistics of one table, from the view of the table's white side.
#[derive(Clone, Debug, PartialEq)]
struct TableStats {
    white_to_move: Counts,
    black_to_move: Counts,
    longest_white: Option<(u32, String)>,
    longest_black: Option<(u32, String)>,
}

fn lookup(material: &str) -> Option<TableStats> {
    let line = DATA
        .lines()
        .find(|line| line.split('\t').next() == Some(material))?;
    let cols: Vec<&str> = line.split('\t').collect();
    let num = |i: usize| cols.get(i).and_then(|c| c.parse::<u64>().ok()).unwrap_or(0);
    let counts = |at: usize| Counts {
        wins: num(at),
        cursed_wins: num(at + 1),
        draws: num(at + 2),
        cursed_losses: num(at + 3),
        losses: num(at + 4),
    };
    let longest = |at: usize| {
        let ply = cols.get(at)?.parse::<u32>().ok()?;
        let fen = cols.get(at + 1)?.to_string();
        Some((ply, format!("{fen} 0 1")))
    };
    Some(TableStats {
        white_to_move: counts(1),
        black_to_move: counts(6),
        longest_white: longest(11),
        longest_black: longest(13),
    })
}

/// The table's name for a board and whether the board's colours are the
/// other way round from the table's (the tables list the stronger side first).
fn table_for(board: &shakmaty::Board) -> Option<(String, bool)> {
    let direct = material::with_first(board, Color::White);
    if lookup(&direct).is_some() {
        return Some((direct, false));
    }
    let swapped = material::with_first(board, Color::Black);
    lookup(&swapped).is_some().then_some((swapped, true))
}

fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "–".to_string();
    }
    // Tenths of a percent in integers (no float printing in the WASM), in
    // u64 (no 128-bit division either): the largest table has about 10^13
    // positions, and 1000 times that is far below 2^64.
    let tenths = (part.saturating_mul(1000) + total / 2) / total;
    format!("{}.{}%", tenths / 10, tenths % 10)
}

/// The statistics section for the material on the board, live as the board
/// changes.
///
/// Its content is one HTML string (`inner_html`) rather than a tree of
/// Leptos views: the table is static markup around a few numbers, and as
/// views its element types alone were about 8 KB of the gzipped WASM. Every
/// value in it is a table name, a number or a link made by
/// [`position_href`] or [`practice_href`], none of which holds a character
/// HTML would read.
#[component]
pub fn Stats(
    #[prop(into)] placement: Signal<shakmaty::Board>,
    /// The position on show, which the DTZ histogram marks.
    #[prop(into)]
    fen: Signal<String>,
) -> impl IntoView {
    // The table, as a memo: most moves keep the material.
    let table = Memo::new(move |_| placement.with(table_for));
    view! { <section class="stats" inner_html=move || stats_html(table.get(), &fen.get())></section> }
}

/// The section's markup for a table (`table_for`), or for a material
/// without one; `fen` is the position the DTZ histogram marks.
fn stats_html(table: Option<(String, bool)>, fen: &str) -> String {
    let heading = "<h2>Endgame statistics</h2>";
    let Some((name, swapped)) = table else {
        return format!(r#"{heading}<p class="stats-none">No statistics for this material.</p>"#);
    };
    let Some(stats) = lookup(&name) else {
        return heading.to_string();
    };
    // Rows for the board's colours: when the board has the table's colours
    // swapped, the table's "white to move" is our black to move.
    let (white_side, black_side) = if swapped {
        (stats.black_to_move, stats.white_to_move)
    } else {
        (stats.white_to_move, stats.black_to_move)
    };
    format!(
        concat!(
            "{heading}",
            r#"<div class="stats-body">"#,
            "<p>Table <strong>{name}</strong>: how its positions end with best play, as a share of all its positions with that side to move</p>",
            "<table><thead><tr><th></th>",
            r#"<th class="win">▲ win</th><th class="cursed">◆ cursed / blessed</th><th class="draw">● draw</th><th class="loss">▼ loss</th>"#,
            "</tr></thead><tbody>{white}{black}</tbody></table>",
            r#"<ul class="longest">{longest}</ul>"#,
            // Drawn by the server (`/stats/dtz.svg`): the counts and the
            // drawing stay out of the page's code.
            r#"<figure class="dtz-histogram"><img src="{histogram}?fen={fen}" width="600" height="150" loading="lazy" "#,
            r#"alt="How the positions of {name} spread over DTZ for the side to move, this position marked">"#,
            "<figcaption>Positions by DTZ for the side to move: ▲ wins right, ▼ losses left; the line marks this position</figcaption></figure></div>",
        ),
        histogram = DTZ_HISTOGRAM_PATH,
        fen = encode(fen),
        heading = heading,
        name = name,
        white = outcome_row("White to move", white_side),
        black = outcome_row("Black to move", black_side),
        longest = longest_wins(&stats, swapped),
    )
}

/// One side to move's shares of each outcome. The generator counts
/// outcomes from the side to move's view already.
fn outcome_row(label: &str, c: Counts) -> String {
    let total = c.total();
    format!(
        concat!(
            r#"<tr><th scope="row">{label}</th>"#,
            r#"<td class="win">{win}</td><td class="cursed">{cursed}</td>"#,
            r#"<td class="draw">{draw}</td><td class="loss">{loss}</td></tr>"#,
        ),
        label = label,
        win = percent(c.wins, total),
        cursed = percent(c.cursed_wins + c.cursed_losses, total),
        draw = percent(c.draws, total),
        loss = percent(c.losses, total),
    )
}

/// The longest win for each side, with an example position to open.
fn longest_wins(stats: &TableStats, swapped: bool) -> String {
    let (first, second) = if swapped {
        ("Black", "White")
    } else {
        ("White", "Black")
    };
    [
        (&stats.longest_white, first),
        (&stats.longest_black, second),
    ]
    .into_iter()
    .filter_map(|(longest, who)| {
        let (ply, fen) = longest.as_ref()?;
        // The example is in the table's colours (stronger side white).
        // The statistics are of the standard tables.
        let href = position_href(Variant::Standard, fen);
        let practice = practice_href(Variant::Standard, fen);
        Some(format!(
            r#"<li>Longest win for {who}: DTZ {ply} <a href="{href}">(example)</a> <a class="play-out-example" href="{practice}">(play it out)</a></li>"#
        ))
    })
    .collect()
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
    fn finds_tables_either_way_round() {
        assert_eq!(
            table_for(&board("8/8/8/8/4k3/8/1Q6/K7 w - - 0 1")),
            Some(("KQvK".into(), false))
        );
        assert_eq!(
            table_for(&board("8/8/8/8/4K3/8/1q6/k7 w - - 0 1")),
            Some(("KQvK".into(), true))
        );
        assert!(lookup("KQvK").is_some_and(|s| s.longest_white.is_some_and(|l| l.0 == 20)));
    }

    #[test]
    fn markup_names_the_table_and_links_the_longest_wins() {
        let html = stats_html(
            table_for(&board("8/8/8/8/4K3/8/1q6/k7 w - - 0 1")),
            "8/8/8/8/4K3/8/1q6/k7 w - - 0 1",
        );
        assert!(html.starts_with("<h2>Endgame statistics</h2>"), "{html}");
        assert!(html.contains("Table <strong>KQvK</strong>"), "{html}");
        assert!(
            html.contains("<li>Longest win for Black: DTZ 20 <a href=\"/?fen="),
            "{html}"
        );
        assert!(
            html.contains(r#"<a class="play-out-example" href="/practice?fen="#),
            "{html}"
        );
        assert_eq!(html.matches("<tr>").count(), 3, "{html}");
        assert!(
            html.contains(r#"<img src="/stats/dtz.svg?fen=8/8/8/8/4K3/8/1q6/k7_w_-_-_0_1""#),
            "{html}"
        );
        let none = stats_html(table_for(&board("8/8/8/8/4K3/8/8/k7 w - - 0 1")), "");
        assert!(none.ends_with(r#"<p class="stats-none">No statistics for this material.</p>"#));
    }

    #[test]
    fn shares_in_tenths_of_a_percent() {
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(2, 3), "66.7%");
        assert_eq!(percent(0, 0), "–");
        // A 7-piece table's count, times 1000, still fits.
        assert_eq!(percent(9_000_000_000_000, 10_000_000_000_000), "90.0%");
    }
}
