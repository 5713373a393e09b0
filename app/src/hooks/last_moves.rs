//! The move that led to each position seen in this tab, to highlight it
//! again when back/forward return there (the URL holds only the position).

use std::collections::HashMap;

use leptos::prelude::*;
use shakmaty::Square;

#[derive(Clone, Copy)]
pub struct LastMoves(RwSignal<HashMap<String, (Square, Square)>>);

impl LastMoves {
    /// Notes the squares of the move that leads to `fen`.
    pub fn record(self, fen: String, squares: (Square, Square)) {
        self.0.update(|map| {
            map.insert(fen, squares);
        });
    }

    /// The move that led to the position on show, if this tab made it. A
    /// memo: every square of the board reads it, and it changes once a move.
    pub fn leading_to(self, current_fen: Memo<Option<String>>) -> Signal<Option<(Square, Square)>> {
        Memo::new(move |_| {
            current_fen.with(|fen| {
                let fen = fen.as_ref()?;
                self.0.with(|m| m.get(fen).copied())
            })
        })
        .into()
    }
}

pub fn use_last_moves() -> LastMoves {
    LastMoves(RwSignal::new(HashMap::new()))
}
