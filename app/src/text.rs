//! Words as the page prints them.

/// A phrase as the start of a sentence: an error message from the rules or
/// the server ("illegal position: ..."), or a colour name ("White").
///
/// Only an ASCII first letter changes: every phrase the page capitalizes is
/// its own or the server's English, and Unicode case mapping would bring
/// about 13 KB of tables into the WASM bundle.
pub fn capitalized(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_letter_changes() {
        assert_eq!(capitalized("white to move"), "White to move");
        assert_eq!(capitalized("illegal position: x"), "Illegal position: x");
        assert_eq!(capitalized("ünknown"), "ünknown", "no Unicode case tables");
        assert_eq!(capitalized(""), "");
    }
}
