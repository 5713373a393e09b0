//! Keyboard shortcuts: ←/→ step through the moves played in this tab (↑ or
//! Home to their start, ↓ or End to their end, as on lichess), f flips the
//! board, e opens or closes the editor. Space and the keys of a line on
//! show are `hooks::click_keys`', which take their key first. The help
//! lists them all (`components::about::help`).
//!
//! Stepping stays inside the page's own line (`hooks::history`), never the
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
            if let Some(step) = step_key(&key).filter(|_| playing) {
                history.step(step);
                ev.prevent_default();
                return;
            }
            match key.as_str() {
                "f" => orientation.update(|o| *o = o.other()),
                "e" => mode.update(Mode::toggle_editor),
                _ => return,
            }
            ev.prevent_default();
        });
        on_cleanup(move || handle.remove());
    });
}

/// The step a key asks for.
fn step_key(key: &str) -> Option<Step> {
    match key {
        "ArrowLeft" => Some(Step::Back),
        "ArrowRight" => Some(Step::Forward),
        "ArrowUp" | "Home" => Some(Step::Start),
        "ArrowDown" | "End" => Some(Step::End),
        _ => None,
    }
}

/// Keys typed into a text field are text, not shortcuts (radio buttons and
/// checkboxes do not take letters).
pub fn typing(ev: &web_sys::KeyboardEvent) -> bool {
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
