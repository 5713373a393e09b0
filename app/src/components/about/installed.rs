//! "About these tables": how complete each piece count is on this server,
//! so a player knows what to expect and a self-hoster what to fetch.

use leptos::{either::Either, prelude::*};

use crate::{api::PieceCoverage, hooks::answers::TablesResource};

/// One piece count in words: "5 pieces: 28 of 110 tables (partial)".
pub fn coverage_text(c: &PieceCoverage) -> String {
    let state = match (c.installed, c.published) {
        (0, _) => "none installed".to_string(),
        (i, p) if i >= p => format!("all {p} tables"),
        (i, p) => format!("{i} of {p} tables (partial)"),
    };
    format!("{} pieces: {state}", c.pieces)
}

/// What a player (or the self-hoster) is told of a table the server
/// refuses: which, and what replaces it.
pub fn damaged_text(file: &str) -> String {
    let stem = file.split('.').next().unwrap_or(file);
    let name = if file.ends_with(".egtb.bz") {
        format!("The {stem} depth-to-mate table")
    } else {
        stem.to_string()
    };
    format!(
        "{name} is damaged: its answers are refused until it is replaced; run `zugzwang tables fetch` (with `--only {stem}`) to replace it"
    )
}

/// The section, following the variant's list of installed tables. A part of
/// its own (`split_points::installed`): the server renders it into the
/// page ([`server_view`]), and the browser needs its code only when the
/// rules change, rarely, so the first download does without it.
#[component]
pub fn InstalledTables(tables: TablesResource) -> impl IntoView {
    let body = move || Suspend::new(async move { coverage_view(tables.await) });
    view! {
        <section class="installed">
            <h2>"About these tables"</h2>
            <Suspense fallback=|| ()>{body}</Suspense>
        </section>
    }
}

/// The server's markup of the section for `variant`, from the list the
/// page is rendered with: at once, as `part::server_html` renders, where
/// the resource of [`InstalledTables`] would not have come yet.
pub fn server_view(variant: crate::variant::Variant) -> AnyView {
    #[cfg(feature = "ssr")]
    let installed = use_context::<crate::source::InstalledByVariant>()
        .and_then(|all| all.0.get(&variant).cloned());
    // The browser keeps the server's markup (`part::server_html`).
    #[cfg(not(feature = "ssr"))]
    let installed = {
        let _ = variant;
        None
    };
    view! {
        <section class="installed">
            <h2>"About these tables"</h2>
            {coverage_view(installed)}
        </section>
    }
    .into_any()
}

/// The damaged tables and each piece count's coverage, or that the server
/// did not say.
fn coverage_view(installed: Option<crate::api::InstalledTables>) -> impl IntoView {
    let Some(installed) = installed else {
        return Either::Left(
            view! { <p class="no-moves">"The server did not say which tables it has."</p> },
        );
    };
    let damaged = installed
        .damaged
        .iter()
        .map(|d| {
            view! {
                <p class="damaged" title=d.reason.clone()>
                    {damaged_text(&d.table)}
                </p>
            }
        })
        .collect_view();
    Either::Right(view! {
        {damaged}
        <ul>
            {installed
                .pieces
                .iter()
                .map(|c| {
                    let class = if c.installed == 0 {
                        "none"
                    } else if c.installed >= c.published {
                        "complete"
                    } else {
                        "partial"
                    };
                    view! { <li class=class data-pieces=c.pieces>{coverage_text(c)}</li> }
                })
                .collect_view()}
        </ul>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_damaged_tables_and_what_replaces_them() {
        assert_eq!(
            damaged_text("KQBvKR.rtbz"),
            "KQBvKR is damaged: its answers are refused until it is replaced; run `zugzwang tables fetch` (with `--only KQBvKR`) to replace it"
        );
        assert!(
            damaged_text("KQKR.egtb.bz").starts_with("The KQKR depth-to-mate table is damaged")
        );
    }

    #[test]
    fn complete_partial_and_none() {
        let c = |installed, published| PieceCoverage {
            pieces: 5,
            installed,
            published,
        };
        assert_eq!(coverage_text(&c(110, 110)), "5 pieces: all 110 tables");
        assert_eq!(
            coverage_text(&c(28, 110)),
            "5 pieces: 28 of 110 tables (partial)"
        );
        assert_eq!(coverage_text(&c(0, 110)), "5 pieces: none installed");
    }
}
