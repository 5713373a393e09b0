//! The page's address: which page it is (`/` the explorer, `/practice`),
//! and the query that holds the position (`?fen=…&variant=…`).
//!
//! Why not leptos_router: the page has two pages and needs only to read the
//! query, to push or replace it, and to follow back and forward. The router
//! brought its route matching, nested views and their asynchronous
//! hydration into the first download, about 10 % of it
//! (server/docs/benchmarks.md). Going between the two pages is an ordinary
//! page load; within a page, a link to the same page changes the query in
//! place, as the router did.

use leptos::prelude::*;

/// The URL's query, decoded (`+` and `%20` are spaces, as in a form).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Decodes `fen=…&variant=…` (without the `?`).
    pub fn parse(query: &str) -> Self {
        let query = query.strip_prefix('?').unwrap_or(query);
        Query(
            form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// How a navigation changes the tab's history.
#[derive(Clone, Copy, Debug)]
pub struct NavigateOptions {
    /// In place of the current entry (back skips it), instead of a new one.
    pub replace: bool,
    /// To the top of the page afterwards (or to the `#anchor`).
    pub scroll: bool,
}

impl Default for NavigateOptions {
    fn default() -> Self {
        NavigateOptions {
            replace: false,
            scroll: true,
        }
    }
}

/// The page's address, shared by every hook that reads or writes it.
#[derive(Clone, Copy)]
struct Address {
    /// The page (`/`, `/practice`): fixed, another page is another load.
    path: StoredValue<String>,
    /// The query as the address bar has it (`?fen=…`, or empty).
    search: RwSignal<String>,
}

/// Sets up the address for the page: on the server from the request, in
/// the browser from the address bar, following back and forward and taking
/// over the clicks on links to this same page.
pub fn provide_address() {
    let (path, search) = current();
    let address = Address {
        path: StoredValue::new(path),
        search: RwSignal::new(search),
    };
    provide_context(address);
    #[cfg(feature = "hydrate")]
    browser::follow(address);
}

/// The page's path (`/`, `/practice`).
pub fn use_path() -> String {
    address().path.get_value()
}

/// The query, decoded anew at each navigation.
pub fn use_query_map() -> Memo<Query> {
    let search = address().search;
    Memo::new(move |_| search.with(|s| Query::parse(s)))
}

/// Goes to `href` (a path with its query) in this page, as a link would.
pub fn use_navigate() -> impl Fn(&str, NavigateOptions) + Clone + Send + Sync + 'static {
    let address = address();
    move |href: &str, options: NavigateOptions| {
        #[cfg(feature = "hydrate")]
        browser::navigate(address, href, options);
        #[cfg(not(feature = "hydrate"))]
        let _ = (address, href, options);
    }
}

fn address() -> Address {
    use_context::<Address>().unwrap_or_else(|| Address {
        path: StoredValue::new("/".to_string()),
        search: RwSignal::new(String::new()),
    })
}

/// The request's path and query while the server renders the page.
#[cfg(not(feature = "hydrate"))]
fn current() -> (String, String) {
    #[cfg(feature = "ssr")]
    if let Some(parts) = use_context::<http::request::Parts>() {
        let search = parts
            .uri
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        return (parts.uri.path().to_string(), search);
    }
    ("/".to_string(), String::new())
}

/// The address bar's path and query.
#[cfg(feature = "hydrate")]
fn current() -> (String, String) {
    let location = leptos::prelude::location();
    (
        location.pathname().unwrap_or_else(|_| "/".to_string()),
        location.search().unwrap_or_default(),
    )
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::wasm_bindgen::{JsCast, JsValue};
    use leptos::{ev, prelude::*};
    use web_sys::{HtmlAnchorElement, MouseEvent};

    use super::{Address, NavigateOptions};

    /// Back and forward change the query; links to this page do too,
    /// without a page load.
    pub fn follow(address: Address) {
        let _ = window_event_listener_untyped("popstate", move |_| {
            address.search.set(super::current().1);
        });
        // After hydration, so the page's own click handlers have run first
        // (they are on the window too) and a link they took over is left
        // alone.
        Effect::new(move |_| {
            let _ = window_event_listener(ev::click, move |ev| on_click(address, &ev));
        });
    }

    /// A plain click on a link to this same page: the query changes in
    /// place. Other pages, new tabs, downloads and other sites are the
    /// browser's.
    fn on_click(address: Address, ev: &MouseEvent) {
        if ev.default_prevented()
            || ev.button() != 0
            || ev.meta_key()
            || ev.alt_key()
            || ev.ctrl_key()
            || ev.shift_key()
        {
            return;
        }
        let Some(a) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a[href]").ok().flatten())
            .and_then(|el| el.dyn_into::<HtmlAnchorElement>().ok())
        else {
            return;
        };
        if !a.target().is_empty() || a.has_attribute("download") {
            return;
        }
        let location = location();
        let same_page =
            location.origin().ok() == Some(a.origin()) && a.pathname() == address.path.get_value();
        if !same_page {
            return;
        }
        ev.prevent_default();
        let href = format!("{}{}{}", a.pathname(), a.search(), a.hash());
        navigate(address, &href, NavigateOptions::default());
    }

    /// Pushes (or replaces) the history entry and shows its query. The same
    /// address again adds no entry, so back does not stall on it.
    pub fn navigate(address: Address, href: &str, options: NavigateOptions) {
        let Ok(history) = window().history() else {
            return;
        };
        let location = location();
        let here = format!(
            "{}{}{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default(),
            location.hash().unwrap_or_default()
        );
        let written = if options.replace {
            history.replace_state_with_url(&JsValue::NULL, "", Some(href))
        } else if href != here {
            history.push_state_with_url(&JsValue::NULL, "", Some(href))
        } else {
            Ok(())
        };
        if written.is_err() {
            // Another origin, or a browser that refuses: a page load.
            let _ = location.set_href(href);
            return;
        }
        address.search.set(super::current().1);
        if options.scroll {
            scroll(&location.hash().unwrap_or_default());
        }
    }

    /// To the `#anchor` if there is one, else to the top.
    fn scroll(hash: &str) {
        let target = hash
            .strip_prefix('#')
            .filter(|id| !id.is_empty())
            .and_then(|id| document().get_element_by_id(id));
        match target {
            Some(el) => el.scroll_into_view(),
            None => window().scroll_to_with_x_and_y(0.0, 0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Query;

    #[test]
    fn the_query_is_decoded_as_a_form() {
        let q = Query::parse("?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1&variant=atomic");
        assert_eq!(
            q.get("fen").as_deref(),
            Some("4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1")
        );
        assert_eq!(q.get("variant").as_deref(), Some("atomic"));
        assert_eq!(
            Query::parse("fen=a+b%20c").get("fen").as_deref(),
            Some("a b c")
        );
        assert_eq!(Query::parse("").get("fen"), None);
        assert_eq!(Query::parse("x=1&x=2").get("x").as_deref(), Some("1"));
    }
}
