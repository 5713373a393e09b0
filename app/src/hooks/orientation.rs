//! Which side is at the bottom of the board, kept in the URL
//! (`&orientation=black`) so a shared link shows the board as it was seen.
//!
//! The orientation is the tab's setting, not the position's: links to
//! positions carry only the FEN, and after each navigation the URL gets the
//! orientation back (a replace, so back/forward are not touched).

use crate::url::{NavigateOptions, Query, use_navigate, use_query_map};
use leptos::prelude::*;
use shakmaty::Color;

use crate::source::position_href;

/// The board's orientation, read from the URL once and written back to it.
pub fn use_orientation() -> RwSignal<Color> {
    let query = use_query_map();
    let black_in = move |q: &Query| q.get("orientation").as_deref() == Some("black");
    let start = if query.with_untracked(black_in) {
        Color::Black
    } else {
        Color::White
    };
    let orientation = RwSignal::new(start);
    let navigate = use_navigate();
    Effect::new(move |_| {
        let black = orientation.get() == Color::Black;
        let (url_black, fen, variant) = query.with(|q| {
            let variant = q
                .get("variant")
                .and_then(|v| v.parse().ok())
                .unwrap_or_default();
            (black_in(q), q.get("fen"), variant)
        });
        if black == url_black {
            return;
        }
        let url = match (fen, black) {
            (Some(fen), true) => format!("{}&orientation=black", position_href(variant, &fen)),
            (Some(fen), false) => position_href(variant, &fen),
            (None, true) => "/?orientation=black".to_string(),
            (None, false) => "/".to_string(),
        };
        navigate(
            &url,
            NavigateOptions {
                replace: true,
                scroll: false,
            },
        );
    });
    orientation
}
