//! Moves written as a score sheet writes them, numbered from the start
//! position's move number: "37. Kf2 Kd7 38. Ke3", and "37... Kd7" when Black
//! moves first. One home for the numbering, so the history, the mainline and
//! their PGN count alike.

use leptos::{html, prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::Color;

use shakmaty::fen::Fen;

/// One move on show: its SAN, the link to the position after it, whether the
/// board is there.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownMove {
    pub san: String,
    pub href: String,
    pub current: bool,
}

/// The move number and side to move of a FEN (read as fields, so any
/// variant's FEN counts); a FEN that does not read counts from move 1 with
/// White.
fn first_move(start_fen: &str) -> (u32, Color) {
    Fen::from_ascii(start_fen.replace('_', " ").as_bytes())
        .map(|f| {
            let setup = f.into_setup();
            (setup.fullmoves.get(), setup.turn)
        })
        .unwrap_or((1, Color::White))
}

/// The move number of each ply and who plays it.
fn numbers(start_fen: &str, count: usize) -> Vec<(u32, Color)> {
    let (mut number, mut turn) = first_move(start_fen);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push((number, turn));
        if turn == Color::Black {
            number += 1;
        }
        turn = turn.other();
    }
    out
}

/// The moves grouped by move number, as the page shows them: each group
/// starts with its label ("37." or "37...") and holds the indexes of its plies.
fn fullmoves(start_fen: &str, count: usize) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, (number, turn)) in numbers(start_fen, count).into_iter().enumerate() {
        match (turn, groups.last_mut()) {
            (Color::Black, Some((_, plies))) => plies.push(i),
            (Color::Black, None) => groups.push((format!("{number}..."), vec![i])),
            (Color::White, _) => groups.push((format!("{number}."), vec![i])),
        }
    }
    groups
}

/// PGN movetext with a comment after each move that has one; a Black move
/// gets its number again after a comment, as the PGN export format asks.
pub fn pgn_movetext(start_fen: &str, moves: &[(String, Option<String>)]) -> String {
    let mut out = Vec::new();
    let mut commented = false;
    for ((number, turn), (san, comment)) in numbers(start_fen, moves.len()).into_iter().zip(moves) {
        if turn == Color::White {
            out.push(format!("{number}."));
        } else if out.is_empty() || commented {
            out.push(format!("{number}..."));
        }
        out.push(san.clone());
        commented = comment.is_some();
        if let Some(comment) = comment {
            out.push(format!("{{{comment}}}"));
        }
    }
    out.join(" ")
}

/// A whole PGN game from a start FEN: the headers, the moves and the result.
pub fn pgn(
    event: &str,
    start_fen: &str,
    moves: &[(String, Option<String>)],
    result: &str,
) -> String {
    let movetext = pgn_movetext(start_fen, moves);
    let space = if movetext.is_empty() { "" } else { " " };
    format!(
        "[Event \"{event}\"]\n[Site \"Zugzwang\"]\n[Result \"{result}\"]\n[SetUp \"1\"]\n[FEN \"{start_fen}\"]\n\n{movetext}{space}{result}\n"
    )
}

/// Percent-encodes text for a `data:` URL (the PGN downloads).
pub fn data_url(mime: &str, text: &str) -> String {
    let mut out = format!("data:{mime};charset=utf-8,");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The PGN comment for a DTZ, counted in plies from the side to move.
pub fn dtz_comment(dtz: Option<i32>) -> Option<String> {
    dtz.map(|d| format!("DTZ {}", d.abs()))
}

/// Numbered moves, each a link to its position; `on_pick` hears which move
/// is clicked before the link navigates. Each move number's group is keyed
/// by its moves, so a move played or stepped to keeps the links already on
/// show and only moves the `current` mark: rebuilding a long line on every
/// click cost more than the rest of the click.
#[component]
pub fn Movetext(
    #[prop(into)] start_fen: Signal<String>,
    #[prop(into)] moves: Signal<Vec<ShownMove>>,
    #[prop(optional)] on_pick: Option<Callback<usize>>,
) -> impl IntoView {
    let groups =
        Memo::new(move |_| moves.with(|moves| start_fen.with(|start| grouped(start, moves))));
    let current = Memo::new(move |_| moves.with(|moves| moves.iter().position(|m| m.current)));
    let list = NodeRef::<html::Div>::new();
    Effect::new(move |_| {
        current.track();
        if let Some(list) = list.get() {
            // At the next frame, which lays the page out anyway: measuring
            // now would lay it out an extra time, mid-navigation.
            request_animation_frame(move || keep_current_in_view(&list));
        }
    });
    view! {
        <div class="movetext" node_ref=list>
            <For
                each=move || groups.get()
                key=|group| group.clone()
                children=move |group| fullmove_view(group, current, on_pick)
            />
        </div>
    }
}

/// One move number's group: its label and its plies (index, SAN, link).
type Group = (String, Vec<(usize, String, String)>);

/// The moves as the page groups them, without the `current` mark, which
/// changes without changing the groups.
fn grouped(start_fen: &str, moves: &[ShownMove]) -> Vec<Group> {
    fullmoves(start_fen, moves.len())
        .into_iter()
        .map(|(label, plies)| {
            let plies = plies
                .into_iter()
                .map(|i| (i, moves[i].san.clone(), moves[i].href.clone()))
                .collect();
            (label, plies)
        })
        .collect()
}

/// A move number and its moves. Spaces between the pieces, so the text
/// reads and copies as "37. Kf2 Kd7".
fn fullmove_view(
    (label, plies): Group,
    current: Memo<Option<usize>>,
    on_pick: Option<Callback<usize>>,
) -> impl IntoView {
    let links = plies
        .into_iter()
        .map(|(i, san, href)| ply_link(i, san, href, current, on_pick))
        .collect_view();
    view! {
        <span class="fullmove">
            <span class="move-number">{label}</span>
            {links}
        </span>
        " "
    }
}

/// Scrolls the list, and only the list, so the current move is in sight
/// (`scrollIntoView` would scroll the page too).
fn keep_current_in_view(list: &web_sys::HtmlElement) {
    let Ok(Some(current)) = list.query_selector(".current") else {
        return;
    };
    let Ok(current) = current.dyn_into::<web_sys::HtmlElement>() else {
        return;
    };
    let top = current.offset_top();
    let bottom = top + current.offset_height();
    if top < list.scroll_top() {
        list.set_scroll_top(top);
    } else if bottom > list.scroll_top() + list.client_height() {
        list.set_scroll_top(bottom - list.client_height());
    }
}

/// One move as a link, marked while the board is on it.
fn ply_link(
    i: usize,
    san: String,
    href: String,
    current: Memo<Option<usize>>,
    on_pick: Option<Callback<usize>>,
) -> impl IntoView {
    let here = move || current.get() == Some(i);
    view! {
        " "
        <a
            class="ply"
            class:current=here
            href=href
            aria-current=move || here().then_some("step")
            on:click=move |_| {
                if let Some(pick) = on_pick {
                    pick.run(i);
                }
            }
        >
            {san}
        </a>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(sans: &[&str]) -> Vec<(String, Option<String>)> {
        sans.iter().map(|s| (s.to_string(), None)).collect()
    }

    #[test]
    fn groups_by_move_number_from_black() {
        let groups = fullmoves("8/8/8/8/8/2k5/8/K1Q5 b - - 0 37", 4);
        assert_eq!(
            groups,
            vec![
                ("37...".to_string(), vec![0]),
                ("38.".to_string(), vec![1, 2]),
                ("39.".to_string(), vec![3]),
            ]
        );
    }

    #[test]
    fn pgn_numbers_black_again_after_a_comment() {
        let moves = vec![
            ("Kf2".to_string(), Some("DTZ 15".to_string())),
            ("Kd7".to_string(), Some("DTZ 14".to_string())),
            ("Ke3".to_string(), None),
            ("Kd6".to_string(), None),
        ];
        assert_eq!(
            pgn_movetext("8/8/8/8/8/8/8/4K2k w - - 0 37", &moves),
            "37. Kf2 {DTZ 15} 37... Kd7 {DTZ 14} 38. Ke3 Kd6"
        );
        assert_eq!(
            pgn_movetext("8/8/8/8/8/8/8/4K2k b - - 0 7", &plain(&["Kb3", "Qc2+"])),
            "7... Kb3 8. Qc2+"
        );
    }

    #[test]
    fn pgn_has_the_start_position() {
        let text = pgn("Test", "8/8/8/8/8/2k5/8/K1Q5 b - - 0 7", &[], "*");
        assert!(text.contains("[SetUp \"1\"]\n[FEN \"8/8/8/8/8/2k5/8/K1Q5 b - - 0 7\"]"));
        assert!(text.ends_with("\n\n*\n"), "{text}");
    }
}
