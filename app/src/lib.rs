//! The Zugzwang web app: API types shared with the server, and the Leptos
//! page rendered on the server and hydrated in the browser.

// The page's nested view types are deep; the hydrate build needs more room
// than the default limit of 128 to compute their layout.
#![recursion_limit = "256"]

pub mod api;
pub mod components;
pub mod favicon;
pub mod game;
pub mod game_review;
pub mod hooks;
pub mod json;
pub mod material;
pub mod move_squares;
pub mod needed_table;
pub mod position;
pub mod practice;
pub mod source;
pub mod text;
pub mod url;
pub mod variant;

use crate::components::{explorer::Explorer, practice_route};
use leptos::{either::EitherOf3, prelude::*};
use leptos_meta::{HashedStylesheet, Meta, MetaTags, Title, provide_meta_context};

/// The HTML document around the app, rendered by the server only.
///
/// `style` is the page's stylesheet, written into the head when the server
/// has it: on a slow line a linked stylesheet costs the first paint a
/// round trip and a download that shares the line with the WASM, and it is
/// small (about 4 KiB gzipped). Without it (no site built) the page links
/// the stylesheet instead.
///
/// The styles written here carry the nonce of the page's
/// Content-Security-Policy (the server's `security_headers`), as Leptos's
/// inline scripts do.
pub fn shell(options: LeptosOptions, style: Option<std::sync::Arc<str>>) -> impl IntoView {
    let nonce = leptos::nonce::use_nonce();
    let style = match style {
        Some(css) => {
            view! { <style nonce=nonce.clone() inner_html=css.to_string()></style> }.into_any()
        }
        // The stylesheet's name carries its content hash (hash-files).
        None => view! { <HashedStylesheet options=options.clone() id="leptos"/> }.into_any(),
    };
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                // First, so the browser starts fetching the WASM before it
                // reads the rest of the head.
                <HydrationScripts options=options.clone()/>
                <AutoReload options=options.clone()/>
                {style}
                // Controls that need the WASM (flip, editor, mainline) are
                // hidden without JavaScript. In the head, which only the
                // server renders: hydration never looks inside it.
                <noscript>
                    <style nonce=nonce inner_html=".js-only { display: none !important; }"></style>
                </noscript>
                <link rel="icon" type="image/png" href=favicon::data_url()/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    url::provide_address();
    // Either types, not `into_any`: an `AnyView` here would carry the async
    // hydration of everything inside it into the first download.
    let page = match url::use_path().as_str() {
        "/" => EitherOf3::A(view! { <Explorer/> }),
        // Its code is a part of its own (practice_route).
        practice_route::PATH => EitherOf3::B(practice_route::page()),
        _ => EitherOf3::C("Page not found."),
    };
    view! {
        <Title text="Zugzwang — Syzygy endgame explorer"/>
        <Meta name="description" content="Every legal move of a chess endgame with its result and DTZ, from Syzygy tablebases."/>
        <header class="top">
            <h1>
                <a href="/">"Zugzwang"</a>
            </h1>
            <p>"Syzygy endgame explorer"</p>
        </header>
        <main>{page}</main>
    }
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    let path = leptos::prelude::location().pathname().unwrap_or_default();
    if path != practice_route::PATH {
        leptos::mount::hydrate_body(App);
        return;
    }
    // The practice page's code comes first: the page the server rendered
    // is hydrated with it.
    wasm_bindgen_futures::spawn_local(async {
        if practice_route::preload().await {
            leptos::mount::hydrate_body(App);
        } else {
            practice_route::say_not_loaded();
        }
    });
}
