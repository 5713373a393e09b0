//! The keys that act through the page's own buttons and links: Space plays
//! the best move (clicks the list's first, as on syzygy-tables.info), and
//! ←/→ (↑ or Home, ↓ or End) step the line on show (Show line, Fastest
//! mate) by its buttons, whose tooltips name these keys. They do what a
//! click does, with no code of their own.
//!
//! They are a part of their own (`split_points::click_keys`), loaded while
//! the browser is idle, so they cost the first download nothing. They
//! listen on the document, which hears a key after the element that has
//! it (a board square stops its arrows there) and before the window, where
//! `hooks::shortcuts` steps the moves played: a key used here is marked
//! handled, and the window's shortcuts leave it alone.

use std::cell::Cell;

use leptos::{
    prelude::document,
    wasm_bindgen::{JsCast, closure::Closure},
    web_sys,
};

use crate::hooks::shortcuts::typing;

thread_local! {
    /// One listener for the page's lifetime, however often the explorer mounts.
    static LISTENING: Cell<bool> = const { Cell::new(false) };
}

/// Starts listening, once.
pub fn listen() {
    if LISTENING.with(|l| l.replace(true)) {
        return;
    }
    // A closure of the type leptos's window listeners use, whose glue the
    // first download has already; it lives as long as the page.
    let on_key: Box<dyn FnMut(web_sys::Event)> = Box::new(|ev| on_key(ev.unchecked_into()));
    let on_key = Closure::wrap(on_key).into_js_value();
    let _ = document().add_event_listener_with_callback("keydown", on_key.unchecked_ref());
    // Says the keys work now (the end-to-end tests wait for it).
    if let Some(html) = document().document_element() {
        let _ = html.set_attribute("data-keys", "ready");
    }
}

fn on_key(ev: web_sys::KeyboardEvent) {
    if ev.default_prevented() || typing(&ev) || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
        return;
    }
    let Some(target) = target(&ev) else {
        return;
    };
    if click(target) {
        ev.prevent_default();
    }
}

/// The button or link a key stands for, on the explorer while it shows the
/// board (not the editor).
fn target(ev: &web_sys::KeyboardEvent) -> Option<&'static str> {
    match ev.key().as_str() {
        // The best move is the list's first, while the list is the
        // position's (not the last one's, greyed while loading). Space on
        // a button, a checkbox or a summary is theirs.
        " " if !activates_on_space(ev) => {
            Some(".explorer:not(.editing) .results:not(.pending) .move-list a.move")
        }
        "ArrowLeft" => Some(".explorer:not(.editing) .mainline .line-nav .step-back"),
        "ArrowRight" => Some(".explorer:not(.editing) .mainline .line-nav .step-forward"),
        "ArrowUp" | "Home" => Some(".explorer:not(.editing) .mainline .line-nav .step-start"),
        "ArrowDown" | "End" => Some(".explorer:not(.editing) .mainline .line-nav .step-end"),
        _ => None,
    }
}

/// Clicks the first element `selector` finds, unless it is disabled; false
/// when there is none to click (the key is then the window's shortcuts').
fn click(selector: &str) -> bool {
    let Some(el) = document().query_selector(selector).ok().flatten() else {
        return false;
    };
    if el.has_attribute("disabled") {
        // A line's end: the key is spent on the line, not the moves played.
        return true;
    }
    el.dyn_into::<web_sys::HtmlElement>()
        .map(|el| el.click())
        .is_ok()
}

/// Whether the focused element acts on Space itself (a button, a
/// checkbox, a summary; text fields are `typing`'s, and the board's
/// squares handle their keys first and stop them there).
fn activates_on_space(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target().is_some_and(|t| {
        t.dyn_ref::<web_sys::HtmlElement>()
            .is_some_and(|el| matches!(el.tag_name().as_str(), "BUTTON" | "INPUT" | "SUMMARY"))
    })
}
