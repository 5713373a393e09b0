//! Keyboard shortcuts: ←/→ walk the history, f flips the board, e opens or
//! closes the editor.

use leptos::{ev, prelude::*, wasm_bindgen::JsCast, web_sys};
use shakmaty::Color;

use crate::components::mode::Mode;

/// Listens on the window for as long as the calling component lives.
pub fn use_shortcuts(orientation: RwSignal<Color>, mode: RwSignal<Mode>) {
    Effect::new(move |_| {
        let handle = window_event_listener(ev::keydown, move |ev| {
            if typing(&ev) || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                return;
            }
            let playing = mode.get_untracked() == Mode::Playing;
            let history = window().history().ok();
            match ev.key().as_str() {
                "ArrowLeft" if playing => {
                    if let Some(h) = history {
                        let _ = h.back();
                    }
                }
                "ArrowRight" if playing => {
                    if let Some(h) = history {
                        let _ = h.forward();
                    }
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
