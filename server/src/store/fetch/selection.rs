//! Which tables a `tables fetch` asks for: whole piece counts (`3-4-5`),
//! named tables (`KRPvKR,KQPvKQ`), and optionally every table their
//! captures and promotions lead to.

use std::collections::BTreeSet;

use crate::store::catalog::{self, PIECE_COUNTS};

/// Why a selection cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    #[error("--pieces {0}: expected piece counts from 3 to 7 joined by '-', e.g. 3-4-5, 6 or 7")]
    Pieces(String),
    #[error(
        "--only {0}: not a published standard Syzygy table; name tables by material, e.g. KRPvKR or KQvKR"
    )]
    Unknown(String),
    #[error("nothing selected: give --pieces (e.g. 3-4-5) or --only (e.g. KRPvKR)")]
    Empty,
}

/// Reads `--pieces` such as `3-4-5` or `6`.
pub fn parse_pieces(spec: &str) -> Result<BTreeSet<usize>, SelectionError> {
    spec.split('-')
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| PIECE_COUNTS.contains(n))
                .ok_or_else(|| SelectionError::Pieces(spec.to_string()))
        })
        .collect()
}

/// The published tables (materials) selected.
pub fn select(
    pieces: &BTreeSet<usize>,
    only: &[String],
    with_dependencies: bool,
) -> Result<BTreeSet<&'static str>, SelectionError> {
    let mut selected: BTreeSet<&'static str> = catalog::materials()
        .filter(|m| pieces.contains(&catalog::piece_count(m)))
        .collect();
    for name in only {
        let name = name
            .trim()
            .trim_end_matches(".rtbw")
            .trim_end_matches(".rtbz");
        let material =
            catalog::canonical(name).ok_or_else(|| SelectionError::Unknown(name.to_string()))?;
        selected.insert(material);
    }
    if selected.is_empty() {
        return Err(SelectionError::Empty);
    }
    if with_dependencies {
        selected = catalog::with_dependencies(selected);
    }
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_piece_counts() {
        assert_eq!(
            parse_pieces("3-4-5")
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert!(parse_pieces("2-3").is_err());
        assert!(parse_pieces("six").is_err());
    }

    #[test]
    fn selects_tables_and_what_they_lead_to() {
        let only = select(&BTreeSet::new(), &["KRPvKR".into()], false).unwrap();
        assert_eq!(only.into_iter().collect::<Vec<_>>(), ["KRPvKR"]);
        let closure = select(&BTreeSet::new(), &["KRPvKR".into()], true).unwrap();
        assert!(closure.contains("KQRvKR") && closure.contains("KRvK"));
        assert!(closure.iter().all(|m| catalog::piece_count(m) <= 5));
        let err = select(&BTreeSet::new(), &["KRPvKX".into()], false).unwrap_err();
        assert!(err.to_string().contains("KRPvKX"), "{err}");
    }
}
