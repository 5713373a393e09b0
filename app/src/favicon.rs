//! The tab's icon, written into the page as a PNG `data:` URL.
//!
//! Chrome fetches and decodes the page's icon again after every
//! same-document navigation, that is after every move here (in a fresh
//! browser context, as the click benchmark's): `/favicon.svg` cost a request
//! to the server and a whole SVG document built in the renderer each time,
//! about a fifth of the renderer's CPU per move. A small PNG in the page
//! costs neither. `public/favicon.png` is `public/favicon.svg` drawn at 32 px.

use std::sync::LazyLock;

use base64::{Engine, engine::general_purpose::STANDARD};

const PNG: &[u8] = include_bytes!("../../public/favicon.png");

/// Encoded once: every page the server renders carries it.
static DATA_URL: LazyLock<String> =
    LazyLock::new(|| format!("data:image/png;base64,{}", STANDARD.encode(PNG)));

/// The icon's `href`.
pub fn data_url() -> &'static str {
    &DATA_URL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_icon_is_a_png() {
        // The PNG signature, base64-encoded.
        assert!(data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
    }
}
