//! Which tables a `tables fetch` asks for: whole piece counts (`3-4-5`),
//! named tables (`KRPvKR,KQPvKQ`), and optionally every table their
//! captures and promotions lead to, all within one variant's catalogue.

use std::collections::BTreeSet;

use app::{material::piece_count, variant::Variant};

use crate::catalog::Catalog;

/// Why a selection cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    #[error("--pieces {0}: expected piece counts joined by '-', e.g. 3-4-5, 6 or 7")]
    Pieces(String),
    #[error(
        "--pieces {spec}: the {variant} catalogue ({list}) has tables of {counts} pieces; choose among those, e.g. {example}"
    )]
    NotPublished {
        spec: String,
        variant: Variant,
        list: &'static str,
        counts: String,
        example: &'static str,
    },
    #[error(
        "--only {name}: not a published {variant} Syzygy table (not in {list}); name tables by material, e.g. {example}"
    )]
    Unknown {
        name: String,
        variant: Variant,
        list: &'static str,
        example: &'static str,
    },
    #[error("nothing selected: give --pieces (e.g. {0}) or --only (e.g. {1})")]
    Empty(&'static str, &'static str),
    #[error(
        "--pieces {spec}: the mirror's MD5SUMS ({list}) lists Prophet DTM files of {counts} pieces; choose among those"
    )]
    DtmPieces {
        spec: String,
        list: String,
        counts: String,
    },
    #[error(
        "--only {name}: the mirror's MD5SUMS ({list}) lists no such Prophet DTM file; name a file by its material with the side to move's pieces first (KBNK: K+B+N to move against a bare king; KKBN the other way round), or both files of a material as KBNvK"
    )]
    DtmUnknown { name: String, list: String },
}

/// Reads `--pieces` such as `3-4-5` or `6` (which counts a variant has is
/// checked by [`select`]).
pub fn parse_pieces(spec: &str) -> Result<BTreeSet<usize>, SelectionError> {
    spec.split('-')
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .map_err(|_| SelectionError::Pieces(spec.to_string()))
        })
        .collect()
}

/// The published tables (materials) selected.
pub fn select(
    catalog: &Catalog,
    pieces: &BTreeSet<usize>,
    only: &[String],
    with_dependencies: bool,
) -> Result<BTreeSet<&'static str>, SelectionError> {
    let counts = catalog.piece_counts();
    if !pieces.is_subset(&counts) {
        return Err(not_published(catalog, pieces, &counts));
    }
    let mut selected: BTreeSet<&'static str> = catalog
        .materials()
        .filter(|m| pieces.contains(&piece_count(m)))
        .collect();
    for name in only {
        // A file name stands for its table.
        let name = name.trim().split('.').next().unwrap_or_default();
        let material = catalog
            .canonical(name)
            .ok_or_else(|| SelectionError::Unknown {
                name: name.to_string(),
                variant: catalog.variant(),
                list: catalog.list(),
                example: example_table(catalog),
            })?;
        selected.insert(material);
    }
    if selected.is_empty() {
        return Err(SelectionError::Empty(
            example_set(catalog),
            example_table(catalog),
        ));
    }
    if with_dependencies {
        selected = catalog.with_dependencies(selected);
    }
    Ok(selected)
}

fn not_published(
    catalog: &Catalog,
    pieces: &BTreeSet<usize>,
    counts: &BTreeSet<usize>,
) -> SelectionError {
    let spec: Vec<String> = pieces.iter().map(usize::to_string).collect();
    let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
    SelectionError::NotPublished {
        spec: spec.join("-"),
        variant: catalog.variant(),
        list: catalog.list(),
        counts: counts.join(", "),
        example: example_set(catalog),
    }
}

/// The first usual set of the variant (`3-4-5`, `2-3-4`), for messages.
fn example_set(catalog: &Catalog) -> &'static str {
    catalog.sets().first().map_or("3-4-5", |(set, _)| set)
}

/// A table of the variant to show in messages.
fn example_table(catalog: &Catalog) -> &'static str {
    match catalog.variant() {
        Variant::Standard => "KRPvKR",
        Variant::Atomic => "KQvKR",
        Variant::Antichess => "BBvN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn reads_piece_counts() {
        assert_eq!(
            parse_pieces("3-4-5")
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert!(parse_pieces("six").is_err());
        let two = BTreeSet::from([2]);
        let err = select(catalog::of(Variant::Standard), &two, &[], false).unwrap_err();
        assert!(err.to_string().contains("3, 4, 5, 6, 7"), "{err}");
        assert!(select(catalog::of(Variant::Antichess), &two, &[], false).is_ok());
        let six = BTreeSet::from([6]);
        let err = select(catalog::of(Variant::Atomic), &six, &[], false).unwrap_err();
        assert!(err.to_string().contains("atomic-3-4-5.md5"), "{err}");
    }

    #[test]
    fn selects_tables_and_what_they_lead_to() {
        let standard = catalog::of(Variant::Standard);
        let none = BTreeSet::new();
        let only = select(standard, &none, &["KRPvKR".into()], false).unwrap();
        assert_eq!(only.into_iter().collect::<Vec<_>>(), ["KRPvKR"]);
        let closure = select(standard, &none, &["KRPvKR".into()], true).unwrap();
        assert!(closure.contains("KQRvKR") && closure.contains("KRvK"));
        assert!(closure.iter().all(|m| piece_count(m) <= 5));
        let err = select(standard, &none, &["KRPvKX".into()], false).unwrap_err();
        assert!(err.to_string().contains("KRPvKX"), "{err}");
        let atomic = catalog::of(Variant::Atomic);
        let err = select(atomic, &none, &["KRPPvKRP".into()], false).unwrap_err();
        assert!(err.to_string().contains("atomic"), "{err}");
        let by_file = select(atomic, &none, &["KQvKR.atbz".into()], false).unwrap();
        assert_eq!(by_file.into_iter().collect::<Vec<_>>(), ["KQvKR"]);
    }
}
