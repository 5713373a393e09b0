//! The practice page's route (`/practice`): its code is a part of its own
//! (`cargo leptos --split`), which the router loads before showing the
//! page, and the browser before hydrating a page the server rendered with
//! it (`hydrate_lazy`). It sits beside `split_points` rather than in it:
//! the practice page uses the board, whose promotion choice is a split
//! point, and the two would import each other.

use leptos::prelude::*;
use leptos_router::LazyRoute;
use wasm_split_helpers::wasm_split;

use crate::components::{
    part::{Loaded, not_loaded},
    practice::Practice,
};

/// The practice page (`/practice`), a route whose code loads when it is
/// first visited: the router awaits it before showing the page, and the
/// browser before hydrating a page the server rendered.
pub struct PracticeRoute;

impl LazyRoute for PracticeRoute {
    fn data() -> Self {
        PracticeRoute
    }

    async fn view(_: Self) -> AnyView {
        match practice().await {
            Ok(view) => view,
            // Reloading asks for the part again (the server's page works
            // without it meanwhile: its moves are links).
            Err(_) => not_loaded("The practice page", || {
                if let Some(window) = leptos::web_sys::window() {
                    let _ = window.location().reload();
                }
            })
            .into_any(),
        }
    }

    async fn preload() {
        preload().await;
    }
}

/// The practice page's content.
#[wasm_split(practice, fallible, preload(preload_practice))]
pub fn practice() -> Loaded {
    Ok(Practice().into_any())
}

/// Fetches the practice page's code ahead of its first use (the explorer's
/// idle prefetch ends with it); a failure is left for the visit to show.
pub async fn preload() {
    let _: Result<(), _> = preload_practice().await;
}
