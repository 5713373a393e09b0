//! The list of legal moves with their outcome and DTZ, best first.

use leptos::prelude::*;
use shakmaty::{Chess, Position, uci::UciMove};

use crate::{
    api::{Category, MoveInfo, TablebaseAnswer},
    position::{parse_fen, to_fen},
    source::encode,
};

/// A one-line summary of the position for the side to move.
pub fn status_text(answer: &TablebaseAnswer) -> String {
    let pos = &answer.pos;
    if pos.checkmate {
        return "Checkmate".to_string();
    }
    if pos.stalemate {
        return "Stalemate: draw".to_string();
    }
    if pos.insufficient_material {
        return "Insufficient material: draw".to_string();
    }
    let dtz = pos.dtz.map(|d| format!(", DTZ {d}")).unwrap_or_default();
    format!("{}{dtz}", category_label(pos.category))
}

/// Words for a category from the side to move's view.
pub fn category_label(category: Category) -> &'static str {
    match category {
        Category::Win | Category::SyzygyWin => "Win",
        Category::MaybeWin => "Win or cursed win",
        Category::CursedWin => "Cursed win (draw under the 50-move rule)",
        Category::Draw => "Draw",
        Category::BlessedLoss => "Blessed loss (draw under the 50-move rule)",
        Category::MaybeLoss => "Loss or blessed loss",
        Category::Loss | Category::SyzygyLoss => "Loss",
        Category::Unknown => "Not in the tables",
    }
}

/// The FEN after playing a UCI move, for the move's link.
fn fen_after(fen: &str, uci: &str) -> Option<String> {
    let mut pos: Chess = parse_fen(fen).ok()?;
    let m = uci.parse::<UciMove>().ok()?.to_move(&pos).ok()?;
    pos.play_unchecked(m);
    Some(to_fen(&pos))
}

#[component]
pub fn MoveList(moves: Vec<MoveInfo>, fen: String) -> impl IntoView {
    view! {
        <ol class="moves">
            {moves
                .into_iter()
                .map(|m| {
                    let href = fen_after(&fen, &m.uci)
                        .map(|after| format!("/?fen={}", encode(&after)))
                        .unwrap_or_default();
                    let dtz = m.pos.dtz.map(|d| d.to_string()).unwrap_or_default();
                    let class = format!("move {}", m.pos.category.flip().as_str());
                    view! {
                        <li class=class data-uci=m.uci.clone()>
                            <a href=href>
                                <span class="san">{m.san.clone()}</span>
                                <span class="dtz">{dtz}</span>
                            </a>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}
