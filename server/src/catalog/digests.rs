//! The published md5 digests of the atomic and antichess tables, shipped
//! with the program (`checksums/atomic-3-4-5.md5`,
//! `checksums/antichess-published.md5`: the lists published beside those
//! tables, which have md5 only), so `verify`, the scrub and `tier build`
//! check variant files as they check standard ones against `catalog`.

use std::{collections::HashMap, sync::LazyLock};

static ATOMIC: &str = include_str!("../../checksums/atomic-3-4-5.md5");
static ANTICHESS: &str = include_str!("../../checksums/antichess-published.md5");

/// File name → md5 (lowercase hex), from both lists (`md5sum` format).
static DIGESTS: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    [ATOMIC, ANTICHESS]
        .iter()
        .flat_map(|list| list.lines())
        .filter_map(|line| {
            let (digest, name) = line.split_once(char::is_whitespace)?;
            Some((name.trim_start_matches([' ', '*']), digest))
        })
        .collect()
});

/// The published md5 of an atomic or antichess table file name.
pub fn md5(file: &str) -> Option<&'static str> {
    DIGESTS.get(file).copied()
}

/// Every atomic and antichess table file name with a published digest.
pub fn names() -> impl Iterator<Item = &'static str> {
    DIGESTS.keys().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_lists_are_read() {
        assert_eq!(md5("KQvK.atbw"), Some("1024e9c2d5ef85dad4c0ff9bb009b1e8"));
        assert_eq!(md5("BBBvB.stbz"), Some("de874cab875ab8a677ce9e185079d09c"));
        assert!(md5("KQvK.rtbw").is_none());
        assert_eq!(names().filter(|n| n.ends_with(".atbw")).count(), 145);
        assert_eq!(names().count(), 290 + 884);
    }
}
