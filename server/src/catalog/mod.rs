//! The catalogue of published Syzygy tables of each variant: every file's
//! name, digest and (where published) size, shipped with the program
//! (`checksums/`) so a table set can be surveyed, fetched and checked
//! offline, and which tables a table's captures and promotions lead to.
//!
//! A *table* is a material such as `KRPvKR`; it has two *files*, WDL
//! (win/draw/loss) and DTZ (distance to zeroing): `.rtbw`/`.rtbz` in
//! standard chess, `.atbw`/`.atbz` in atomic, `.gtbw`/`.gtbz` in antichess
//! (`.stbw`/`.stbz` for antichess tables without pawns, as published).
//! Probing a position needs both, and both files of every table one
//! capture or promotion away.
//!
//! What is published differs: standard tables have sha256 and sizes for
//! 3 to 7 pieces; atomic and antichess tables have md5 lists only, and the
//! ones shipped cover atomic 3-4-5 and the antichess tables in
//! `antichess-published.md5` (2 and 3 pieces, 4 without pawns). Files
//! outside a list are unknown to the catalogue, whatever their suffix.
//!
//! Beside the catalogue itself: `digests` (the md5 lists of atomic and
//! antichess tables), `material` (each variant's rules for which tables a
//! capture or promotion leads to), `whole_file` (whole files checked
//! against the published digests) and `inventory` (what directories hold
//! against the catalogue; Prophet DTM files have their own catalogue beside
//! their reader, `crate::dtm::catalog`). Nothing here is on the read path
//! of a request.

pub mod dependencies;
pub mod digests;
pub mod inventory;
pub mod whole_file;

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    ops::RangeInclusive,
    sync::LazyLock,
};

use app::{material::piece_count, variant::Variant};
use shakmaty_syzygy::Metric;

use crate::store::layout::{variant_of_name, variant_table_name};
use whole_file::PublishedDigest;

static SHA256: &str = include_str!("../../checksums/sha256");
static BYTES: &str = include_str!("../../checksums/bytes.tsv");

/// What is published about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// `None` where no size is published (atomic and antichess tables).
    pub size: Option<u64>,
    pub digest: PublishedDigest,
}

/// The published tables of one variant.
pub struct Catalog {
    variant: Variant,
    files: HashMap<&'static str, Published>,
    /// Materials with both files published, sorted.
    materials: BTreeSet<&'static str>,
}

static STANDARD: LazyLock<Catalog> = LazyLock::new(|| {
    let sizes: HashMap<&str, u64> = BYTES
        .lines()
        .filter_map(|line| {
            let (size, name) = line.split_once('\t')?;
            Some((name.trim(), size.trim().parse().ok()?))
        })
        .collect();
    let files = SHA256
        .lines()
        .filter_map(|line| {
            let (digest, name) = line.split_once(char::is_whitespace)?;
            let name = name.trim_start_matches([' ', '*']);
            let published = Published {
                size: sizes.get(name).copied(),
                digest: PublishedDigest::Sha256(digest),
            };
            Some((name, published))
        })
        .collect();
    Catalog::new(Variant::Standard, files)
});

static ATOMIC: LazyLock<Catalog> = LazyLock::new(|| md5_catalog(Variant::Atomic));
static ANTICHESS: LazyLock<Catalog> = LazyLock::new(|| md5_catalog(Variant::Antichess));

/// A variant's catalogue from the md5 lists: digests, no sizes.
fn md5_catalog(variant: Variant) -> Catalog {
    let files = digests::names()
        .filter(|name| variant_of_name(name) == Some(variant))
        .filter_map(|name| {
            let digest = PublishedDigest::Md5(digests::md5(name)?);
            Some((name, Published { size: None, digest }))
        })
        .collect();
    Catalog::new(variant, files)
}

/// The catalogue of a variant's published tables.
pub fn of(variant: Variant) -> &'static Catalog {
    match variant {
        Variant::Standard => &STANDARD,
        Variant::Atomic => &ATOMIC,
        Variant::Antichess => &ANTICHESS,
    }
}

impl Catalog {
    fn new(variant: Variant, files: HashMap<&'static str, Published>) -> Catalog {
        let mut catalog = Catalog {
            variant,
            files,
            materials: BTreeSet::new(),
        };
        let materials = catalog
            .files
            .keys()
            .filter_map(|name| name.split_once('.').map(|(material, _)| material))
            .filter(|material| {
                catalog
                    .files_of(material)
                    .iter()
                    .all(|f| catalog.files.contains_key(f.as_str()))
            })
            .collect();
        catalog.materials = materials;
        catalog
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The shipped list the digests come from, as messages name it.
    pub fn list(&self) -> &'static str {
        match self.variant {
            Variant::Standard => "checksums/sha256",
            Variant::Atomic => "checksums/atomic-3-4-5.md5",
            Variant::Antichess => "checksums/antichess-published.md5",
        }
    }

    /// Whether sizes are published, so a file of another size is damaged
    /// without reading it.
    pub fn has_sizes(&self) -> bool {
        self.files.values().all(|p| p.size.is_some())
    }

    /// The digest algorithm of the variant's list (`sha256`, `md5`).
    pub fn algorithm(&self) -> &'static str {
        match self.variant {
            Variant::Standard => "sha256",
            Variant::Atomic | Variant::Antichess => "md5",
        }
    }

    /// The sets tables are usually installed and published in, as far as
    /// the shipped list covers them (`--pieces` takes these names).
    pub fn sets(&self) -> &'static [(&'static str, RangeInclusive<usize>)] {
        match self.variant {
            Variant::Standard => &[("3-4-5", 3..=5), ("6", 6..=6), ("7", 7..=7)],
            Variant::Atomic => &[("3-4-5", 3..=5)],
            Variant::Antichess => &[("2-3-4", 2..=4)],
        }
    }

    /// What the shipped list leaves out of the published tables, for
    /// messages; `None` when it has them all.
    pub fn scope(&self) -> Option<&'static str> {
        match self.variant {
            Variant::Standard => None,
            Variant::Atomic => Some(
                "the shipped atomic list has the 3-4-5 piece tables; no digests of the published 6-piece ones are shipped, so they show as unknown",
            ),
            Variant::Antichess => Some(
                "the shipped antichess list has the 2- and 3-piece tables and the 4-piece ones without pawns; 4-piece tables with pawns and larger ones show as unknown",
            ),
        }
    }

    /// What is published about a file name of this variant.
    pub fn published(&self, file: &str) -> Option<Published> {
        self.files.get(file).copied()
    }

    /// Every published file name, unsorted.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.files.keys().copied()
    }

    /// Every published material (table), sorted.
    pub fn materials(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.materials.iter().copied()
    }

    /// The published materials of one piece count, sorted.
    pub fn materials_with(&self, pieces: usize) -> impl Iterator<Item = &'static str> + '_ {
        self.materials().filter(move |m| piece_count(m) == pieces)
    }

    /// The piece counts the catalogue has tables of, ascending.
    pub fn piece_counts(&self) -> BTreeSet<usize> {
        self.materials().map(piece_count).collect()
    }

    /// The material of a published file name (`KRvK.rtbz` → `KRvK`).
    pub fn material_of(&self, file: &str) -> Option<&'static str> {
        let (material, _) = file.split_once('.')?;
        let material = self.materials.get(material).copied()?;
        self.files_of(material)
            .iter()
            .any(|f| f == file)
            .then_some(material)
    }

    /// Both file names of a table, WDL first.
    pub fn files_of(&self, material: &str) -> [String; 2] {
        [Metric::Wdl, Metric::Dtz].map(|metric| variant_table_name(self.variant, material, metric))
    }

    /// The published spelling of a material, whichever side is written
    /// first and in whatever order the pieces of a side are given (`KPRvKR`
    /// → `KRPvKR`); `None` for what is not a published table.
    pub fn canonical(&self, material: &str) -> Option<&'static str> {
        let (a, b) = material.split_once('v')?;
        let (a, b) = (dependencies::sorted_side(a)?, dependencies::sorted_side(b)?);
        [format!("{a}v{b}"), format!("{b}v{a}")]
            .iter()
            .find_map(|m| self.materials.get(m.as_str()).copied())
    }

    /// The published tables one capture or one promotion away from
    /// `material` under the variant's rules.
    pub fn successors(&self, material: &str) -> BTreeSet<&'static str> {
        dependencies::successors(self.variant, material)
            .iter()
            .filter_map(|m| self.canonical(m))
            .collect()
    }

    /// The selection and every table its captures and promotions lead to,
    /// and theirs in turn: what must be installed for every move of every
    /// position of the selection to be answered (as far as the catalogue
    /// has those tables).
    pub fn with_dependencies<'a>(
        &self,
        selection: impl IntoIterator<Item = &'a str>,
    ) -> BTreeSet<&'static str> {
        let mut closure = BTreeSet::new();
        let mut todo: Vec<&'static str> = selection
            .into_iter()
            .filter_map(|m| self.canonical(m))
            .collect();
        while let Some(material) = todo.pop() {
            if closure.insert(material) {
                todo.extend(self.successors(material));
            }
        }
        closure
    }

    /// Files and bytes of the published tables of each piece count; bytes
    /// are `None` where sizes are not published.
    pub fn totals(&self) -> BTreeMap<usize, (usize, Option<u64>)> {
        let mut totals = BTreeMap::new();
        for (name, published) in &self.files {
            let entry = totals.entry(piece_count(name)).or_insert((0, Some(0)));
            entry.0 += 1;
            entry.1 = entry.1.zip(published.size).map(|(a, b)| a + b);
        }
        totals
    }
}

/// The published sha256 (lowercase hex) of a standard table file name.
pub fn sha256(file: &str) -> Option<&'static str> {
    match STANDARD.published(file)?.digest {
        PublishedDigest::Sha256(hex) => Some(hex),
        PublishedDigest::Md5(_) => None,
    }
}

/// The published materials of one piece count, sorted (standard tables).
pub fn materials_with(pieces: usize) -> impl Iterator<Item = &'static str> {
    STANDARD.materials_with(pieces)
}

/// The material of a published standard file name (`KRvK.rtbz` → `KRvK`).
pub fn material_of(file: &str) -> Option<&'static str> {
    STANDARD.material_of(file)
}

/// Both file names of a standard table, WDL first.
pub fn files_of(material: &str) -> [String; 2] {
    STANDARD.files_of(material)
}

/// A standard selection and every table its captures and promotions lead to.
pub fn with_dependencies<'a>(
    selection: impl IntoIterator<Item = &'a str>,
) -> BTreeSet<&'static str> {
    STANDARD.with_dependencies(selection)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_every_published_standard_file() {
        assert_eq!(
            sha256("KPvK.rtbw"),
            Some("02fd2bdcd92821c869458f019f63524def1c9e7a2862ca8d2b16dc7712b16183")
        );
        let standard = of(Variant::Standard);
        assert_eq!(standard.names().count(), 3022);
        assert!(standard.has_sizes(), "a size is missing");
        assert_eq!(
            standard.published("KPvK.rtbw").and_then(|p| p.size),
            Some(7824)
        );
    }

    #[test]
    fn counts_tables_and_files_per_piece_count() {
        let standard = of(Variant::Standard);
        let counts: Vec<usize> = (3..=7)
            .map(|p| standard.materials_with(p).count())
            .collect();
        assert_eq!(counts, [5, 30, 110, 365, 1001]);
        let totals = standard.totals();
        assert_eq!(totals[&5], (220, Some(979_611_840)));
        assert_eq!(totals[&7].0, 2002);
    }

    #[test]
    fn knows_the_variant_lists_without_sizes() {
        let atomic = of(Variant::Atomic);
        assert_eq!(
            atomic.piece_counts().into_iter().collect::<Vec<_>>(),
            [3, 4, 5]
        );
        let counts: Vec<usize> = (3..=5).map(|p| atomic.materials_with(p).count()).collect();
        assert_eq!(counts, [5, 30, 110]);
        assert!(!atomic.has_sizes());
        assert_eq!(atomic.totals()[&4], (60, None));
        assert_eq!(
            atomic.published("KQvK.atbw").map(|p| p.digest),
            Some(PublishedDigest::Md5("1024e9c2d5ef85dad4c0ff9bb009b1e8"))
        );
        assert!(atomic.published("KQvK.rtbw").is_none());

        let antichess = of(Variant::Antichess);
        let counts: Vec<usize> = (2..=4)
            .map(|p| antichess.materials_with(p).count())
            .collect();
        assert_eq!(counts, [21, 126, 295]);
        assert_eq!(antichess.files_of("BvP"), ["BvP.gtbw", "BvP.gtbz"]);
        assert_eq!(antichess.files_of("BBvB"), ["BBvB.stbw", "BBvB.stbz"]);
        assert_eq!(antichess.material_of("BvP.gtbz"), Some("BvP"));
        assert_eq!(antichess.material_of("BvP.stbz"), None);
    }

    #[test]
    fn spells_materials_as_published() {
        let standard = of(Variant::Standard);
        assert_eq!(standard.canonical("KRPvKR"), Some("KRPvKR"));
        assert_eq!(standard.canonical("KRvKPR"), Some("KRPvKR"));
        assert_eq!(standard.canonical("KvKQ"), Some("KQvK"));
        assert_eq!(standard.canonical("KXvK"), None);
        assert_eq!(standard.canonical("KvK"), None);
        assert_eq!(of(Variant::Antichess).canonical("QvK"), Some("KvQ"));
        assert_eq!(of(Variant::Antichess).canonical("Kv"), None);
    }

    #[test]
    fn follows_captures_and_promotions() {
        let standard = of(Variant::Standard);
        let next: Vec<&str> = standard.successors("KRPvKR").into_iter().collect();
        let mut expected: Vec<&str> = [
            "KBRvKR", "KNRvKR", "KPvKR", "KQRvKR", "KRPvK", "KRRvKR", "KRvKR",
        ]
        .map(|m| standard.canonical(m).unwrap())
        .to_vec();
        expected.sort_unstable();
        assert_eq!(next, expected);
        let all = with_dependencies(["KPvK"]);
        assert_eq!(
            all.into_iter().collect::<Vec<_>>(),
            ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK"]
        );
    }

    #[test]
    fn follows_each_variants_rules() {
        // Atomic: a capture takes both pieces, so KQvKP leads to KvK (no
        // table), never to KQvK or KPvK; only the promotions remain.
        let atomic = of(Variant::Atomic);
        assert_eq!(
            atomic
                .with_dependencies(["KQvKP"])
                .into_iter()
                .collect::<Vec<_>>(),
            ["KQvKB", "KQvKN", "KQvKP", "KQvKQ", "KQvKR"]
        );
        // Antichess: the pawn may become a king.
        let antichess = of(Variant::Antichess);
        assert_eq!(
            antichess
                .with_dependencies(["PvK"])
                .into_iter()
                .collect::<Vec<_>>(),
            ["KvB", "KvK", "KvN", "KvP", "KvQ", "KvR"]
                .map(|m| antichess.canonical(m).unwrap())
                .into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
    }
}
