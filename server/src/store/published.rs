//! The published sha256 digests of every standard Syzygy table (3 to 7
//! pieces), shipped with the program so a table set can be checked offline.

use std::{collections::HashMap, sync::LazyLock};

static SHA256: &str = include_str!("../../checksums/sha256");

static BY_NAME: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    SHA256
        .lines()
        .filter_map(|line| {
            let (digest, name) = line.split_once(char::is_whitespace)?;
            Some((name.trim_start_matches([' ', '*']), digest))
        })
        .collect()
});

/// The published sha256 (lowercase hex) of a table file name.
pub fn sha256(table: &str) -> Option<&'static str> {
    BY_NAME.get(table).copied()
}

/// Every published table name.
pub fn names() -> impl Iterator<Item = &'static str> {
    BY_NAME.keys().copied()
}

/// Pieces in a table named like `KRPvKP.rtbw`.
pub fn piece_count(table: &str) -> usize {
    table
        .split('.')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_uppercase())
        .count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn knows_the_published_digests() {
        assert_eq!(
            super::sha256("KPvK.rtbw"),
            Some("02fd2bdcd92821c869458f019f63524def1c9e7a2862ca8d2b16dc7712b16183")
        );
        assert_eq!(super::names().count(), 3022);
        assert_eq!(super::piece_count("KRPvKP.rtbw"), 5);
    }
}
