//! The practice page (`/practice`): its code is a part of its own
//! (`cargo leptos --split`), which the browser fetches before hydrating the
//! page the server rendered (`hydrate` in lib.rs). It sits beside
//! `split_points` rather than in it: the practice page uses the board,
//! whose promotion choice is a split point, and the two would import each
//! other.

use std::{
    future::Future,
    task::{Context, Poll, Waker},
};

use leptos::{either::Either, prelude::*};
use wasm_split_helpers::wasm_split;

use crate::components::{
    part::{Loaded, not_loaded},
    practice::Practice,
};

/// The practice page's path.
pub const PATH: &str = "/practice";

/// The practice page's content. Its code is here by now: the server has it
/// all, and the browser hydrates this page only after `preload`.
pub fn page() -> impl IntoView {
    let mut future = Box::pin(practice());
    let mut now = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut now) {
        Poll::Ready(Ok(view)) => Either::Left(view),
        _ => Either::Right(reload_notice()),
    }
}

/// The practice page's content.
#[wasm_split(practice, fallible, preload(preload_practice))]
pub fn practice() -> Loaded {
    Ok(Practice().into_any())
}

/// Fetches the practice page's code: before hydrating the practice page,
/// and ahead of a first visit when the explorer is idle. False if it did
/// not arrive.
pub async fn preload() -> bool {
    preload_practice().await.is_ok()
}

/// The practice page without its code: the server's page stays as it is
/// (its moves are links, so it works without the code), with a line that
/// says so and reloads.
#[cfg(feature = "hydrate")]
pub fn say_not_loaded() {
    use leptos::wasm_bindgen::JsCast;

    let Some(main) = document()
        .query_selector("main")
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    // Kept for the page's lifetime: nothing unmounts it.
    std::mem::forget(leptos::mount::mount_to(main, reload_notice));
}

/// "The practice page did not load", with a retry that loads the page again.
fn reload_notice() -> impl IntoView {
    not_loaded("The practice page", || {
        if let Some(window) = leptos::web_sys::window() {
            let _ = window.location().reload();
        }
    })
}
