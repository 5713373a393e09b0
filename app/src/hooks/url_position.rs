//! The position in the URL (`/?fen=...`, with `&variant=atomic` or
//! `antichess` for the variants), the page's single source of the position:
//! playing a move, loading a FEN or leaving the editor navigates, so back and
//! forward walk the history and every position is a link.

use crate::game::Game;
use crate::url::use_query_map;
use leptos::prelude::*;

use crate::{
    position::to_fen,
    {game::read_game_fen, variant::Variant},
};

/// Where a visitor without a `?fen=` starts: a classic won rook ending.
pub const START_FEN: &str = "4k3/8/8/8/8/8/8/4K2R w - - 0 1";

/// The URL's position, read once per navigation.
#[derive(Clone, Copy)]
pub struct UrlPosition {
    /// The rules the position is read under.
    pub variant: Memo<Variant>,
    /// The FEN as the URL spells it.
    pub fen: Memo<String>,
    /// The legal position, or why the FEN gives none (in words).
    pub parsed: Memo<Result<Game, String>>,
    /// The legal position's FEN in full, as the API and links carry it.
    pub current_fen: Memo<Option<String>>,
    /// The pieces on show, which an illegal position has too.
    pub placement: Memo<shakmaty::Board>,
}

impl UrlPosition {
    /// The legal position, `None` for an illegal one.
    pub fn pos(self) -> Signal<Option<Game>> {
        let parsed = self.parsed;
        Signal::derive(move || parsed.get().ok())
    }
}

pub fn use_url_position() -> UrlPosition {
    let query = use_query_map();
    let fen = Memo::new(move |_| {
        query
            .read()
            .get("fen")
            .unwrap_or_else(|| START_FEN.to_string())
    });
    // An unknown variant name reads as standard chess rather than no page.
    let variant = Memo::new(move |_| {
        query
            .read()
            .get("variant")
            .and_then(|v| v.parse().ok())
            .unwrap_or_default()
    });
    position_of(variant, fen)
}

/// The variant on show, for components that read FENs or build links
/// (provided by the explorer; standard chess where there is none).
pub fn use_variant() -> Memo<Variant> {
    use_context::<Memo<Variant>>().unwrap_or_else(|| Memo::new(|_| Variant::Standard))
}

/// The position on show: the editor's while it is open and has one (the
/// analysis follows the editing live), else the URL's.
pub fn use_shown_position(url: UrlPosition, editor_fen: Signal<Option<String>>) -> UrlPosition {
    let fen = Memo::new(move |_| editor_fen.get().unwrap_or_else(|| url.fen.get()));
    position_of(url.variant, fen)
}

/// Everything the page reads from one FEN.
fn position_of(variant: Memo<Variant>, fen: Memo<String>) -> UrlPosition {
    let reading = Memo::new(move |_| read_game_fen(variant.get(), &fen.get()));
    let parsed =
        Memo::new(move |_| reading.with(|r| r.position.clone().map_err(|err| err.to_string())));
    UrlPosition {
        variant,
        fen,
        parsed,
        current_fen: Memo::new(move |_| parsed.get().ok().map(|p| to_fen(&p))),
        placement: Memo::new(move |_| reading.with(|r| r.placement.clone())),
    }
}
