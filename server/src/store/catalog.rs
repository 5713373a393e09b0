//! The catalogue of published standard Syzygy tables (3 to 7 pieces): every
//! file's name, size and sha256, shipped with the program (`checksums/`) so
//! a table set can be surveyed, fetched and checked offline, and which
//! tables a table's captures and promotions lead to.
//!
//! A *table* is a material such as `KRPvKR`; it has two *files*, `.rtbw`
//! (win/draw/loss) and `.rtbz` (distance to zeroing). Probing a position
//! needs both, and both files of every table one capture or promotion away.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::LazyLock,
};

/// The two file extensions of a standard table: WDL, then DTZ.
pub const EXTENSIONS: [&str; 2] = ["rtbw", "rtbz"];

/// Piece counts the published tables cover.
pub const PIECE_COUNTS: std::ops::RangeInclusive<usize> = 3..=7;

static SHA256: &str = include_str!("../../checksums/sha256");
static BYTES: &str = include_str!("../../checksums/bytes.tsv");

/// What is published about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub size: u64,
    pub sha256: &'static str,
}

struct Catalog {
    digests: HashMap<&'static str, &'static str>,
    sizes: HashMap<&'static str, u64>,
    /// Materials with both files published, sorted.
    materials: BTreeSet<&'static str>,
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    let digests: HashMap<&str, &str> = SHA256
        .lines()
        .filter_map(|line| {
            let (digest, name) = line.split_once(char::is_whitespace)?;
            Some((name.trim_start_matches([' ', '*']), digest))
        })
        .collect();
    let sizes: HashMap<&str, u64> = BYTES
        .lines()
        .filter_map(|line| {
            let (size, name) = line.split_once('\t')?;
            Some((name.trim(), size.trim().parse().ok()?))
        })
        .collect();
    let materials = digests
        .keys()
        .filter_map(|name| name.split_once('.').map(|(material, _)| material))
        .filter(|material| {
            EXTENSIONS
                .iter()
                .all(|ext| digests.contains_key(format!("{material}.{ext}").as_str()))
        })
        .collect();
    Catalog {
        digests,
        sizes,
        materials,
    }
});

/// The published sha256 (lowercase hex) of a table file name.
pub fn sha256(file: &str) -> Option<&'static str> {
    CATALOG.digests.get(file).copied()
}

/// The published size and digest of a table file name.
pub fn published(file: &str) -> Option<Published> {
    let sha256 = sha256(file)?;
    let size = *CATALOG.sizes.get(file)?;
    Some(Published { size, sha256 })
}

/// Every published table file name.
pub fn names() -> impl Iterator<Item = &'static str> {
    CATALOG.digests.keys().copied()
}

/// Every published material (table), sorted.
pub fn materials() -> impl Iterator<Item = &'static str> {
    CATALOG.materials.iter().copied()
}

/// The published materials of one piece count, sorted.
pub fn materials_with(pieces: usize) -> impl Iterator<Item = &'static str> {
    materials().filter(move |m| piece_count(m) == pieces)
}

/// Pieces in a table or file named like `KRPvKP` or `KRPvKP.rtbw`.
pub fn piece_count(name: &str) -> usize {
    name.split('.')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_uppercase())
        .count()
}

/// The material of a published file name (`KRvK.rtbz` → `KRvK`).
pub fn material_of(file: &str) -> Option<&'static str> {
    let (material, _) = file.split_once('.')?;
    CATALOG.materials.get(material).copied()
}

/// Both file names of a table, WDL first.
pub fn files_of(material: &str) -> [String; 2] {
    EXTENSIONS.map(|ext| format!("{material}.{ext}"))
}

/// The published spelling of a material, whichever side is written first
/// and in whatever order the pieces of a side are given (`KPRvKR` →
/// `KRPvKR`); `None` for what is not a published table.
pub fn canonical(material: &str) -> Option<&'static str> {
    let (a, b) = material.split_once('v')?;
    let (a, b) = (sorted_side(a)?, sorted_side(b)?);
    [format!("{a}v{b}"), format!("{b}v{a}")]
        .iter()
        .find_map(|m| CATALOG.materials.get(m.as_str()).copied())
}

/// Pieces of one side in the order table names use (K, Q, R, B, N, P);
/// `None` for a letter that is not a piece.
fn sorted_side(side: &str) -> Option<String> {
    const ORDER: &str = "KQRBNP";
    let mut ranks: Vec<usize> = side.chars().map(|c| ORDER.find(c)).collect::<Option<_>>()?;
    ranks.sort_unstable();
    Some(ranks.iter().map(|&r| &ORDER[r..=r]).collect())
}

/// The tables one capture or one promotion away from `material` (tables of
/// fewer than 3 pieces, which are not published, left out).
pub fn successors(material: &str) -> BTreeSet<&'static str> {
    let Some((white, black)) = material.split_once('v') else {
        return BTreeSet::new();
    };
    let mut next = BTreeSet::new();
    for (side, other) in [(white, black), (black, white)] {
        for (i, piece) in side.char_indices() {
            if piece == 'K' {
                continue;
            }
            let without = format!("{}{}", &side[..i], &side[i + piece.len_utf8()..]);
            next.insert(format!("{without}v{other}"));
            if piece == 'P' {
                for promoted in ['Q', 'R', 'B', 'N'] {
                    next.insert(format!("{without}{promoted}v{other}"));
                }
            }
        }
    }
    next.iter().filter_map(|m| canonical(m)).collect()
}

/// The selection and every table its captures and promotions lead to, and
/// theirs in turn: what must be installed for every move of every position
/// of the selection to be answered.
pub fn with_dependencies<'a>(
    selection: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<&'static str> {
    let mut closure = BTreeSet::new();
    let mut todo: Vec<&'static str> = selection.into_iter().filter_map(canonical).collect();
    while let Some(material) = todo.pop() {
        if closure.insert(material) {
            todo.extend(successors(material));
        }
    }
    closure
}

/// Files and bytes of the published tables of each piece count.
pub fn totals() -> BTreeMap<usize, (usize, u64)> {
    let mut totals = BTreeMap::new();
    for name in names() {
        let entry = totals.entry(piece_count(name)).or_insert((0, 0));
        entry.0 += 1;
        entry.1 += published(name).map_or(0, |p| p.size);
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_every_published_file() {
        assert_eq!(
            sha256("KPvK.rtbw"),
            Some("02fd2bdcd92821c869458f019f63524def1c9e7a2862ca8d2b16dc7712b16183")
        );
        assert_eq!(names().count(), 3022);
        assert!(names().all(|n| published(n).is_some()), "a size is missing");
        assert_eq!(published("KPvK.rtbw").map(|p| p.size), Some(7824));
        assert_eq!(piece_count("KRPvKP.rtbw"), 5);
    }

    #[test]
    fn counts_tables_and_files_per_piece_count() {
        let counts: Vec<usize> = PIECE_COUNTS.map(|p| materials_with(p).count()).collect();
        assert_eq!(counts, [5, 30, 110, 365, 1001]);
        let totals = totals();
        assert_eq!(totals[&5], (220, 979_611_840));
        assert_eq!(totals[&7].0, 2002);
    }

    #[test]
    fn spells_materials_as_published() {
        assert_eq!(canonical("KRPvKR"), Some("KRPvKR"));
        assert_eq!(canonical("KRvKPR"), Some("KRPvKR"));
        assert_eq!(canonical("KvKQ"), Some("KQvK"));
        assert_eq!(canonical("KXvK"), None);
        assert_eq!(canonical("KvK"), None);
    }

    #[test]
    fn follows_captures_and_promotions() {
        let next: Vec<&str> = successors("KRPvKR").into_iter().collect();
        assert_eq!(
            next,
            [
                "KBRvKR", "KNRvKR", "KPvKR", "KQRvKR", "KRPvK", "KRRvKR", "KRvKR"
            ]
            .map(|m| canonical(m).unwrap())
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
        );
        let all = with_dependencies(["KPvK"]);
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK"]
        );
    }
}
