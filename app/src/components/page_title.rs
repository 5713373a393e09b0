//! The tab's title, which follows the position ("KRvK, white to move").
//!
//! The server writes it into the page's head with leptos_meta; the browser
//! then keeps `document.title` up to date itself. leptos_meta's client side
//! (its context, and hydrating the head's tags) would otherwise be in the
//! first download, for one string.

use leptos::prelude::*;

#[component]
pub fn PageTitle<F>(
    /// The title; on the server it may be called after the page's reactive
    /// values are disposed, so it must not panic then.
    text: F,
) -> impl IntoView
where
    F: Fn() -> String + Send + Sync + 'static,
{
    #[cfg(feature = "ssr")]
    {
        leptos_meta::Title(leptos_meta::TitleProps::builder().text(text).build())
    }
    #[cfg(not(feature = "ssr"))]
    {
        Effect::new(move |_| document().set_title(&text()));
    }
}
