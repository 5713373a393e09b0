//! The published md5 digests of the atomic and antichess tables, shipped
//! with the program (`checksums/atomic-3-4-5.md5`,
//! `checksums/antichess-published.md5`: the lists published beside those
//! tables, which have md5 only), so `verify`, the scrub and `tier build`
//! check variant files as they check standard ones against `catalog`; and
//! the one reader of `md5sum` lists, these and the Prophet `MD5SUMS`.

use std::{collections::HashMap, sync::LazyLock};

static ATOMIC: &str = include_str!("../../checksums/atomic-3-4-5.md5");
static ANTICHESS: &str = include_str!("../../checksums/antichess-published.md5");

/// File name → md5 (lowercase hex), from both lists (`md5sum` format).
static DIGESTS: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    [ATOMIC, ANTICHESS]
        .into_iter()
        .flat_map(parse_md5sums)
        .map(|(digest, name)| (name, digest))
        .collect()
});

/// The lines of an md5 list (`md5sum` output: `HEX  PATH`, or `HEX *PATH`);
/// other lines are left out.
pub fn parse_md5sums(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.lines().filter_map(|line| {
        let (digest, path) = line.split_once(char::is_whitespace)?;
        let path = path.trim_start_matches([' ', '*']).trim_end();
        (digest.len() == 32 && digest.bytes().all(|b| b.is_ascii_hexdigit()) && !path.is_empty())
            .then_some((digest, path))
    })
}

/// A list in the Prophet generator's form (`md5  ./4men/0pawns/KBNK.egtb.bz`,
/// sorted) of the lines of `existing` with those of `added` put in, each
/// replacing the line of the same file: a second fetch or upload into the
/// same place keeps what the first one listed. Both `tables fetch --dtm`
/// into a directory and into a bucket write it.
pub fn merge_md5sums<'a>(
    existing: &str,
    added: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut entries: std::collections::BTreeMap<String, String> = parse_md5sums(existing)
        .map(|(md5, file)| {
            let file = file.split('/').filter(|p| *p != ".").collect::<Vec<_>>();
            (file.join("/"), md5.to_ascii_lowercase())
        })
        .collect();
    for (file, md5) in added {
        entries.insert(file.to_string(), md5.to_ascii_lowercase());
    }
    entries
        .iter()
        .map(|(file, md5)| format!("{md5}  ./{file}\n"))
        .collect()
}

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
