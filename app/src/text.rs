//! Words as the page prints them.

/// A phrase as the start of a sentence: an error message from the rules or
/// the server ("illegal position: ..."), or a colour name ("White").
pub fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_letter_changes() {
        assert_eq!(capitalized("white to move"), "White to move");
        assert_eq!(capitalized("ünknown"), "Ünknown");
        assert_eq!(capitalized(""), "");
    }
}
