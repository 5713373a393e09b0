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
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, Waker},
};

use leptos::wasm_bindgen::JsCast;
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

/// A split point's call on its way to the part's view.
type PartFuture = Pin<Box<dyn Future<Output = Loaded>>>;

/// A part's split point, with the part's props: boxed, so `Part` and
/// `ServerPart` are compiled once for all parts. Generic over each part's
/// closure, every part added its own copy of them to the first download.
#[derive(Clone, Copy)]
pub struct Loader(StoredValue<Arc<dyn Fn() -> PartFuture + Send + Sync>>);

impl Loader {
    /// `load` calls the part's split point (`split_points`).
    pub fn new<F>(load: impl Fn() -> F + Send + Sync + 'static) -> Self
    where
        F: Future<Output = Loaded> + 'static,
    {
        let load = move || -> PartFuture { Box::pin(load()) };
        Loader(StoredValue::new(Arc::new(load)))
    }

    /// Calls the split point; `None` once the part's owner is gone.
    fn start(self) -> Option<PartFuture> {
        self.0.try_with_value(|load| load())
    }
}

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
    fn fill(self, load: Loader, then: impl FnOnce() + 'static) {
        let run = move || {
            let Some(mut future) = load.start() else {
                return;
            };
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
pub fn Part(
    /// What the part is, for the failure message ("The editor").
    what: &'static str,
    /// The part's split point.
    load: Loader,
    /// Shown while the code is on its way.
    #[prop(optional, into)]
    waiting: ViewFn,
) -> impl IntoView {
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
pub fn ServerPart(
    /// What the part is, for the failure message ("The mainline").
    what: &'static str,
    /// The part's markup, rendered by the server (empty in the browser:
    /// hydration keeps the server's).
    html: String,
    /// The part's split point.
    load: Loader,
    #[prop(optional)] load_when: Option<Signal<bool>>,
) -> impl IntoView {
    let slot = Slot::new();
    let started = StoredValue::new(false);
    let node = NodeRef::<html::Div>::new();
    let replay = Replay::new(node);
    let start = move || {
        if started.get_value() && slot.stage.get_untracked() != Stage::Failed {
            return;
        }
        started.set_value(true);
        slot.stage.set(Stage::Waiting);
        slot.fill(load, move || replay.run());
    };
    // The first load, on a hint that the part is wanted; after a failure
    // only a click (Retry, or the part's own buttons) tries again.
    let begin = move || {
        if !started.get_value() {
            start();
        }
    };
    begin_when_wanted(begin, load_when);
    let on_click = move |ev: leptos::ev::MouseEvent| {
        if slot.stage.get_untracked() == Stage::Ready {
            return;
        }
        replay.note_click(&ev);
        start();
    };
    // A form sent before the part is live (Enter in a field) waits for it,
    // unless the part failed to load: then the server's form goes as it is.
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        if matches!(slot.stage.get_untracked(), Stage::Ready | Stage::Failed) {
            return;
        }
        ev.prevent_default();
        replay.note_submit();
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
        <div class="part" node_ref=node on:click=on_click on:submit=on_submit on:pointerover=move |_| begin() on:focusin=move |_| begin()>
            {body}
            {move || (slot.stage.get() == Stage::Failed).then(|| not_loaded(what, start))}
        </div>
    }
}

/// Starts a server part's first load when the browser is first idle, or
/// when `load_when` turns true: the server's markup of a part that follows
/// the position is stale once the page shows another one.
fn begin_when_wanted(
    begin: impl Fn() + Copy + Send + Sync + 'static,
    load_when: Option<Signal<bool>>,
) {
    Effect::new(move |_| request_idle_callback(begin));
    if let Some(when) = load_when {
        Effect::new(move |_| {
            if when.get() {
                begin();
            }
        });
    }
}

/// What the visitor did to a server part's markup before the part was
/// live (the button clicked, whether a form was sent, what was typed): the
/// live part does it again, so the first click is not lost to the wait.
#[derive(Clone, Copy)]
struct Replay {
    node: NodeRef<html::Div>,
    clicked: StoredValue<Option<usize>>,
    submitted: StoredValue<bool>,
}

impl Replay {
    fn new(node: NodeRef<html::Div>) -> Self {
        Replay {
            node,
            clicked: StoredValue::new(None),
            submitted: StoredValue::new(false),
        }
    }

    fn note_click(self, ev: &leptos::ev::MouseEvent) {
        if let Some(index) = button_index(self.node, ev) {
            self.clicked.set_value(Some(index));
        }
    }

    fn note_submit(self) {
        self.submitted.set_value(true);
    }

    /// Called while the server's markup is still in place (the swap is a
    /// reactive update, run after this turn): what was typed into it is
    /// read now and written into the live part once it is there.
    fn run(self) {
        let node = self.node;
        let typed = typed_values(node);
        let clicked = self.clicked.try_update_value(Option::take).flatten();
        let submitted = self
            .submitted
            .try_update_value(std::mem::take)
            .unwrap_or(false);
        request_animation_frame(move || {
            restore_typed(node, &typed);
            match clicked {
                Some(index) => click_button(node, index),
                None if submitted => submit_form(node),
                None => {}
            }
        });
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
    let target = ev.target()?.dyn_into::<web_sys::Element>().ok()?;
    let button = target.closest("button").ok()??;
    part_elements::<web_sys::Element>(node, ".part-server button")
        .iter()
        .position(|b| b.is_same_node(Some(button.as_ref())))
}

/// What was typed into the server markup's fields before the part was
/// live, field by field in document order, and which field had the focus.
struct Typed {
    values: Vec<String>,
    focused: Option<usize>,
}

fn typed_values(node: NodeRef<html::Div>) -> Typed {
    let inputs = part_elements::<web_sys::HtmlInputElement>(node, ".part-server input");
    let active = leptos::prelude::document().active_element();
    let focused = inputs.iter().position(|input| {
        active
            .as_ref()
            .is_some_and(|a| a.is_same_node(Some(input.as_ref())))
    });
    Typed {
        values: inputs.iter().map(|i| i.value()).collect(),
        focused,
    }
}

/// Writes what was typed into the live part's fields, and gives the focus
/// back to the field that had it.
fn restore_typed(node: NodeRef<html::Div>, typed: &Typed) {
    let inputs = part_elements::<web_sys::HtmlInputElement>(node, "input");
    for (input, value) in inputs.iter().zip(&typed.values) {
        if input.value() != *value {
            input.set_value(value);
        }
    }
    if let Some(input) = typed.focused.and_then(|i| inputs.get(i)) {
        let _ = input.focus();
    }
}

/// The part's elements that `selector` matches, in document order.
fn part_elements<T: JsCast>(node: NodeRef<html::Div>, selector: &str) -> Vec<T> {
    let Some(list) = node
        .get_untracked()
        .and_then(|part| part.query_selector_all(selector).ok())
    else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<T>().ok())
        .collect()
}

/// Sends the live part's form, as a press of Enter would.
fn submit_form(node: NodeRef<html::Div>) {
    let form = node
        .get_untracked()
        .and_then(|part| part.query_selector("form").ok().flatten())
        .and_then(|f| f.dyn_into::<web_sys::HtmlFormElement>().ok());
    if let Some(form) = form {
        let _ = form.request_submit();
    }
}

/// Clicks the part's `index`-th button, if the live part has one there.
fn click_button(node: NodeRef<html::Div>, index: usize) {
    if let Some(button) = part_elements::<web_sys::HtmlElement>(node, "button").get(index) {
        button.click();
    }
}
