//! One square as both boards draw it (the play board and the editor).

use leptos::prelude::*;
use shakmaty::{Piece, Square};

use crate::components::{
    board::drag::Drag,
    board::pieces::{piece_class, piece_name},
};

/// A square: its piece (faded while lifted by a drag) and, on the bottom
/// row and left column, its coordinate. It is a button to assistive
/// technology, named by its square and piece ("e4, white rook, selected"),
/// and the keyboard cursor's square is the board's one tab stop.
pub fn square_view(
    index: u32,
    sq: Square,
    class: Signal<String>,
    placement: Signal<shakmaty::Board>,
    drag: Signal<Option<Drag>>,
    cursor: RwSignal<Square>,
) -> impl IntoView {
    let file = (index / 8 == 7).then(|| sq.file().char().to_string());
    let rank = index
        .is_multiple_of(8)
        .then(|| sq.rank().char().to_string());
    // What stands here, as a memo: a move changes two or three squares, and
    // only those draw their piece and label again.
    let here = Memo::new(move |_| placement.with(|b| b.piece_at(sq)));
    let piece = move || {
        here.get().map(|piece| {
            let class = if Drag::lifts(drag.get(), sq) {
                format!("{} dragged", piece_class(piece))
            } else {
                piece_class(piece)
            };
            view! { <div class=class></div> }
        })
    };
    let label = move || class.with(|c| square_label(sq, here.get(), c));
    view! {
        <div
            class=class
            data-square=sq.to_string()
            role="button"
            aria-label=label
            tabindex=move || if cursor.get() == sq { "0" } else { "-1" }
            on:focus=move |_| cursor.set(sq)
        >
            {piece}
            {file.map(|f| view! { <span class="coord file" aria-hidden="true">{f}</span> })}
            {rank.map(|r| view! { <span class="coord rank" aria-hidden="true">{r}</span> })}
        </div>
    }
}

/// What a screen reader says for a square: where, what stands there, and
/// what the board marks on it.
fn square_label(sq: Square, piece: Option<Piece>, class: &str) -> String {
    let mut label = match piece {
        Some(p) => format!("{sq}, {}", piece_name(p)),
        None => format!("{sq}, empty"),
    };
    let marks = [
        ("selected", "selected"),
        ("target", "a move goes here"),
        ("last", "last move"),
        ("check", "in check"),
    ];
    for (class_name, words) in marks {
        if class.split(' ').any(|c| c == class_name) {
            label.push_str(", ");
            label.push_str(words);
        }
    }
    label
}

/// The background class of a square.
pub fn square_shade(sq: Square) -> &'static str {
    if sq.is_light() {
        "square light"
    } else {
        "square dark"
    }
}
