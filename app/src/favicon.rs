//! The tab's icon, written into the page as a PNG `data:` URL.
//!
//! Chrome fetches and decodes the page's icon again after every
//! same-document navigation, that is after every move here (in a fresh
//! browser context, as the click benchmark's): `/favicon.svg` cost a request
//! to the server and a whole SVG document built in the renderer each time,
//! about a fifth of the renderer's CPU per move. A small PNG in the page
//! costs neither. `public/favicon.png` is `public/favicon.svg` drawn at 32 px.

const PNG: &[u8] = include_bytes!("../../public/favicon.png");

/// The icon's `href`.
pub fn data_url() -> String {
    format!("data:image/png;base64,{}", base64(PNG))
}

/// Standard base64 with padding (RFC 4648), for the few bytes of the icon.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_rfc_4648_says() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn the_icon_is_a_png() {
        // The PNG signature, base64-encoded.
        assert!(data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
    }
}
