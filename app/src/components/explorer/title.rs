//! The tab's title, which names the material and the side to move
//! ("KRvK, white to move") so a row of tabs tells its positions apart.

use leptos::prelude::*;
use shakmaty::Position;

use crate::{components::board::pieces::color_name, game::Game, material, variant::Variant};

/// The title, following the position on show.
///
/// The server renders <title> after the page's reactive values may already
/// be disposed, so this falls back to the title of the position the page
/// was rendered for instead of panicking.
pub fn title(
    variant: Memo<Variant>,
    placement: Memo<shakmaty::Board>,
    parsed: Memo<Result<Game, String>>,
) -> impl Fn() -> String + Send + Sync + 'static {
    let first_title = page_title(
        variant.get_untracked(),
        &placement.get_untracked(),
        parsed.get_untracked().ok(),
    );
    move || match (variant.try_get(), placement.try_get(), parsed.try_get()) {
        (Some(v), Some(board), Some(pos)) => page_title(v, &board, pos.ok()),
        _ => first_title.clone(),
    }
}

/// The tab's title: the material and the side to move, "KRvK, white to move".
fn page_title(variant: Variant, board: &shakmaty::Board, pos: Option<Game>) -> String {
    let material = material::titled(variant, board);
    match pos {
        Some(p) => format!("{material}, {} to move — Zugzwang", color_name(p.turn())),
        None => "Illegal position — Zugzwang".to_string(),
    }
}
