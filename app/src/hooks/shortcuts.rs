//! Keyboard shortcuts: ←/→ step back and forward (↑ or Home to the start,
//! ↓ or End to the end, as on lichess) through the line on show in the
//! mainline panel (by its buttons), else through the moves played in this
//! tab; Space plays the best move (clicks the list's first), f flips the
//! board, e opens or closes the editor. The help lists them all
//! (`components::about::help`).
//!
//! Stepping stays inside the page's own lines (`hooks::history`), never the
//! browser's history: ← at the start does nothing rather than leave the site.

use leptos::{ev, prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::Color;

use crate::hooks::{
    history::{MoveHistory, Step},
    mode::Mode,
};

/// Listens on the window for as long as the calling component lives.
pub fn use_shortcuts(orientation: RwSignal<Color>, mode: RwSignal<Mode>, history: MoveHistory) {
    Effect::new(move |_| {
        let handle = window_event_listener(ev::keydown, move |ev| {
            // A key an element handled itself (a focused square, say) is not a shortcut.
            if ev.default_prevented() || typing(&ev) {
                return;
            }
            if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                return;
            }
            let key = ev.key();
            let playing = mode.get_untracked() == Mode::Playing;
            if let Some((step, button)) = step_key(&key).filter(|_| playing) {
                // The line on show (Show line, Fastest mate) first: its own
                // buttons, whose tooltips name these keys.
                if !click(button) {
                    history.step(step);
                }
                ev.prevent_default();
                return;
            }
            match key.as_str() {
                // The best move is the list's first (while the list is the
                // position's, not a previous one greyed while loading).
                // Space on a button, a checkbox or a summary is theirs.
                " " if playing && !activates_on_space(&ev) => {
                    click(".results:not(.pending) .move-list a.move");
                }
                "f" => orientation.update(|o| *o = o.other()),
                "e" => mode.update(Mode::toggle_editor),
                _ => return,
            }
            ev.prevent_default();
        });
        on_cleanup(move || handle.remove());
    });
}

/// The step a key asks for, and its button in a line's panel.
fn step_key(key: &str) -> Option<(Step, &'static str)> {
    match key {
        "ArrowLeft" => Some((Step::Back, ".mainline .line-nav .step-back")),
        "ArrowRight" => Some((Step::Forward, ".mainline .line-nav .step-forward")),
        "ArrowUp" | "Home" => Some((Step::Start, ".mainline .line-nav .step-start")),
        "ArrowDown" | "End" => Some((Step::End, ".mainline .line-nav .step-end")),
        _ => None,
    }
}

/// Clicks the first element `selector` finds, unless it is disabled; false
/// when there is none to click. Keys act through the page's own buttons and
/// links, so they do what a click does, with no code of their own.
fn click(selector: &str) -> bool {
    let Some(el) = document().query_selector(selector).ok().flatten() else {
        return false;
    };
    if el.has_attribute("disabled") {
        return false;
    }
    el.dyn_into::<web_sys::HtmlElement>()
        .map(|el| el.click())
        .is_ok()
}

/// Keys typed into a text field are text, not shortcuts (radio buttons and
/// checkboxes do not take letters).
fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target().is_some_and(|t| {
        if let Some(input) = t.dyn_ref::<web_sys::HtmlInputElement>() {
            !matches!(
                input.type_().as_str(),
                "radio" | "checkbox" | "button" | "submit"
            )
        } else {
            t.dyn_ref::<web_sys::HtmlElement>()
                .is_some_and(|el| matches!(el.tag_name().as_str(), "TEXTAREA" | "SELECT"))
        }
    })
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
