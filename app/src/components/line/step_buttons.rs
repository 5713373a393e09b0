//! Start, back, forward and end: the buttons that step through a line of
//! moves, shared by the move history and the mainline. The arrows are inline
//! SVG because Debian's chromium has no font with ⏮ and ⏭.

use leptos::prelude::*;

use crate::hooks::history::Step;

/// How each step looks on its button.
impl Step {
    fn class(self) -> &'static str {
        match self {
            Step::Start => "step-start",
            Step::Back => "step-back",
            Step::Forward => "step-forward",
            Step::End => "step-end",
        }
    }

    /// The button's name, with the key that does the same.
    fn label(self) -> &'static str {
        match self {
            Step::Start => "To the start (Home)",
            Step::Back => "Back one move (←)",
            Step::Forward => "Forward one move (→)",
            Step::End => "To the end (End)",
        }
    }

    /// The arrow, drawn on a 16×16 grid in the text colour.
    fn icon(self) -> impl IntoView {
        let (bar, triangle) = match self {
            Step::Start => (Some("2"), "13,3 5,8 13,13"),
            Step::Back => (None, "11,3 4,8 11,13"),
            Step::Forward => (None, "5,3 12,8 5,13"),
            Step::End => (Some("12"), "3,3 11,8 3,13"),
        };
        view! {
            <svg class="step-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
                {bar.map(|x| view! { <rect x=x y="3" width="2" height="10" fill="currentColor"></rect> })}
                <polygon points=triangle fill="currentColor"></polygon>
            </svg>
        }
    }
}

/// The four step buttons; `children` (a counter, say) go between back and forward.
#[component]
pub fn StepButtons(
    #[prop(into)] at_start: Signal<bool>,
    #[prop(into)] at_end: Signal<bool>,
    on_step: Callback<Step>,
    #[prop(optional)] children: Option<Children>,
) -> impl IntoView {
    let button = move |step: Step| {
        let off = move || match step {
            Step::Start | Step::Back => at_start.get(),
            Step::Forward | Step::End => at_end.get(),
        };
        view! {
            <button
                type="button"
                class=format!("step-button {}", step.class())
                title=step.label()
                aria-label=step.label()
                disabled=off
                on:click=move |_| on_step.run(step)
            >
                {step.icon()}
            </button>
        }
    };
    view! {
        <div class="step-buttons">
            {button(Step::Start)}
            {button(Step::Back)}
            {children.map(|c| c())}
            {button(Step::Forward)}
            {button(Step::End)}
        </div>
    }
}
