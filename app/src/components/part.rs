//! Parts of the page whose code is not in the first download: their WASM
//! arrives when they are first used, or when the browser is idle before that
//! (`split_points` names them; `cargo leptos … --split` cuts them out).
//!
//! Two kinds, by what the server renders:
//! - [`Part`]: nothing of it is in the server's page (the editor, the
//!   promotion choice, the played moves): it appears when the page asks for
//!   it, after its code has arrived.
//! - [`ServerPart`]: the server renders it into the page (the mainline, the
//!   statistics), so it shows before any WASM and without JavaScript. The
//!   browser leaves that markup alone while hydrating (it is `inner_html`,
//!   which hydration keeps) and puts the live part in its place once the
//!   code is there: the same markup, so nothing moves.
//!
//! A part whose code fails to load says so and offers a retry; the rest of
//! the page goes on working.

use std::{
    future::Future,
    task::{Context, Poll, Waker},
};

use leptos::{either::Either, html, prelude::*, task::spawn_local_scoped};
use send_wrapper::SendWrapper;

/// A part's code could not be fetched or instantiated (the network, or a
/// server that no longer has that build's files).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("this part of the page did not load")]
pub struct PartNotLoaded;

impl From<wasm_split_helpers::SplitLoaderError> for PartNotLoaded {
    fn from(_: wasm_split_helpers::SplitLoaderError) -> Self {
        PartNotLoaded
    }
}

/// What a split point gives: the part's view, made inside its chunk.
pub type Loaded = Result<AnyView, PartNotLoaded>;

/// Where a part's loading stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Waiting,
    Ready,
    Failed,
}

/// One part's view on its way: the stage to show, the view once made, and
/// the owner to make it in (the part's: a load that starts from an idle
/// callback or a click has no owner of its own, and the part's components
/// read the page's context).
#[derive(Clone, Copy)]
struct Slot {
    stage: RwSignal<Stage>,
    view: StoredValue<Option<SendWrapper<AnyView>>>,
    owner: StoredValue<Option<Owner>>,
}

impl Slot {
    fn new() -> Self {
        Slot {
            stage: RwSignal::new(Stage::Waiting),
            view: StoredValue::new(None),
            owner: StoredValue::new(Owner::current()),
        }
    }

    /// Calls the split point and fills the slot, in the part's owner; `then`
    /// runs once the part is made (not after a failure). A part whose code
    /// is already here is made at once, in this turn, so opening it again
    /// never flashes the loading state; otherwise it is awaited.
    fn fill<F>(self, load: impl FnOnce() -> F, then: impl FnOnce() + 'static)
    where
        F: Future<Output = Loaded> + 'static,
    {
        let run = move || {
            let mut future = Box::pin(load());
            let mut now = Context::from_waker(Waker::noop());
            match future.as_mut().poll(&mut now) {
                Poll::Ready(loaded) => {
                    if self.settle(loaded) {
                        then();
                    }
                }
                Poll::Pending => spawn_local_scoped(async move {
                    let loaded: Loaded = future.await;
                    if self.settle(loaded) {
                        then();
                    }
                }),
            }
        };
        match self.owner.get_value() {
            Some(owner) => owner.with(run),
            None => run(),
        }
    }

    /// Shows the part, or its failure; true when the part is made.
    fn settle(self, loaded: Loaded) -> bool {
        match loaded {
            Ok(view) => {
                self.view.set_value(Some(SendWrapper::new(view)));
                self.stage.set(Stage::Ready);
                true
            }
            Err(PartNotLoaded) => {
                self.stage.set(Stage::Failed);
                false
            }
        }
    }

    /// The view, taken once when the stage turns `Ready`.
    fn take(self) -> Option<AnyView> {
        self.view
            .try_update_value(Option::take)
            .flatten()
            .map(SendWrapper::take)
    }
}

/// A part the server does not render: made when this component is, shown
/// once its code has arrived. `waiting` fills its place meanwhile (sized
/// like the part, so nothing moves when it comes).
#[component]
pub fn Part<F, L>(
    /// What the part is, for the failure message ("The editor").
    what: &'static str,
    /// Calls the part's split point (`split_points`).
    load: L,
    /// Shown while the code is on its way.
    #[prop(optional, into)]
    waiting: ViewFn,
) -> impl IntoView
where
    F: Future<Output = Loaded> + 'static,
    L: Fn() -> F + Copy + Send + Sync + 'static,
{
    let slot = Slot::new();
    slot.fill(load, || {});
    let retry = move || {
        slot.stage.set(Stage::Waiting);
        slot.fill(load, || {});
    };
    move || match slot.stage.get() {
        Stage::Waiting => Either::Left(waiting.run()),
        Stage::Ready => Either::Right(Either::Left(slot.take())),
        Stage::Failed => Either::Right(Either::Right(not_loaded(what, retry))),
    }
}

/// A part the server renders into the page and the browser takes over
/// once its code has arrived: when the browser is first idle, at the first
/// click, key or pointer inside it, or when `load_when` turns true (for a
/// part whose content follows the position). A click that came before the
/// code is played again on the same button once the part is live.
#[component]
pub fn ServerPart<F, L>(
    /// What the part is, for the failure message ("The mainline").
    what: &'static str,
    /// The part's markup, rendered by the server (empty in the browser:
    /// hydration keeps the server's).
    html: String,
    /// Calls the part's split point (`split_points`).
    load: L,
    #[prop(optional)] load_when: Option<Signal<bool>>,
) -> impl IntoView
where
    F: Future<Output = Loaded> + 'static,
    L: Fn() -> F + Copy + Send + Sync + 'static,
{
    let slot = Slot::new();
    let started = StoredValue::new(false);
    let node = NodeRef::<html::Div>::new();
    // The index of the button clicked before the part was live.
    let clicked = StoredValue::new(None::<usize>);
    let replay = move || {
        let Some(index) = clicked.try_update_value(Option::take).flatten() else {
            return;
        };
        request_animation_frame(move || click_button(node, index));
    };
    let start = move || {
        if started.get_value() && slot.stage.get_untracked() != Stage::Failed {
            return;
        }
        started.set_value(true);
        slot.stage.set(Stage::Waiting);
        slot.fill(load, replay);
    };
    // The first load, on a hint that the part is wanted; after a failure
    // only a click (Retry, or the part's own buttons) tries again.
    let begin = move || {
        if !started.get_value() {
            start();
        }
    };
    Effect::new(move |_| request_idle_callback(begin));
    if let Some(when) = load_when {
        Effect::new(move |_| {
            if when.get() {
                begin();
            }
        });
    }
    let on_click = move |ev: leptos::ev::MouseEvent| {
        if slot.stage.get_untracked() == Stage::Ready {
            return;
        }
        if let Some(index) = button_index(node, &ev) {
            clicked.set_value(Some(index));
        }
        start();
    };
    // Only readiness redraws the body: the server's markup stays untouched
    // while the code is on its way or has failed to come.
    let ready = Memo::new(move |_| slot.stage.get() == Stage::Ready);
    let body = move || {
        if ready.get() {
            Either::Left(slot.take())
        } else {
            Either::Right(view! { <div class="part-server" inner_html=html.clone()></div> })
        }
    };
    view! {
        <div class="part" node_ref=node on:click=on_click on:pointerover=move |_| begin() on:focusin=move |_| begin()>
            {body}
            {move || (slot.stage.get() == Stage::Failed).then(|| not_loaded(what, start))}
        </div>
    }
}

/// The server's markup of a part the browser takes over later
/// (`ServerPart`), or of markup only the server writes (the help); the browser keeps what the server sent, so its
/// build has none of the part's code here.
pub fn server_html(render: impl FnOnce() -> AnyView) -> String {
    #[cfg(not(feature = "hydrate"))]
    {
        render().to_html()
    }
    #[cfg(feature = "hydrate")]
    {
        let _ = render;
        String::new()
    }
}

/// The line a part shows when its code did not arrive.
pub fn not_loaded(what: &'static str, retry: impl Fn() + Send + Sync + 'static) -> impl IntoView {
    view! {
        <p class="part-error" role="alert">
            {what}" did not load (no connection?). "
            <button class="retry" on:click=move |_| retry()>"Retry"</button>
        </p>
    }
}

/// Which of the server markup's buttons an event hit, counted in document
/// order (a click on the failure line's Retry is none of them).
fn button_index(node: NodeRef<html::Div>, ev: &leptos::ev::MouseEvent) -> Option<usize> {
    use leptos::wasm_bindgen::JsCast;
    let part = node.get_untracked()?;
    let target = ev.target()?.dyn_into::<web_sys::Element>().ok()?;
    let button = target.closest("button").ok()??;
    let buttons = part.query_selector_all(".part-server button").ok()?;
    (0..buttons.length())
        .find(|&i| {
            buttons
                .item(i)
                .is_some_and(|b| b.is_same_node(Some(button.as_ref())))
        })
        .map(|i| i as usize)
}

/// Clicks the part's `index`-th button, if the live part has one there.
fn click_button(node: NodeRef<html::Div>, index: usize) {
    use leptos::wasm_bindgen::JsCast;
    let button = node
        .get_untracked()
        .and_then(|part| part.query_selector_all("button").ok())
        .and_then(|buttons| buttons.item(index as u32))
        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(button) = button {
        button.click();
    }
}
