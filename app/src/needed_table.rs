//! Which table a position needs, and why the installed tables give no
//! answer for it: "KRPvKR not installed" tells a self-hoster what to fetch,
//! where a bare "unknown" tells them nothing.

use shakmaty::Position;

use crate::{api::InstalledTables, game::Game, material::table_name, variant::Variant};

/// Why the installed tables cannot answer a position; its words are for a
/// player and a self-hoster alike.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownReason {
    #[error("castling is still possible: the tables hold no positions with castling rights")]
    Castling,
    #[error("{pieces} pieces: Syzygy {variant} tables hold at most {}", variant.max_table_pieces())]
    TooManyPieces { pieces: usize, variant: Variant },
    #[error("{0} not installed")]
    NotInstalled(String),
}

/// Why the installed tables cannot answer a position; `None` when they should.
pub fn unknown_reason(pos: &Game, installed: &InstalledTables) -> Option<UnknownReason> {
    if pos.castles().any() {
        return Some(UnknownReason::Castling);
    }
    let pieces = pos.board().occupied().count();
    if pieces > pos.variant().max_table_pieces() {
        return Some(UnknownReason::TooManyPieces {
            pieces,
            variant: pos.variant(),
        });
    }
    missing_table(pos, installed).map(UnknownReason::NotInstalled)
}

/// The first table a position needs that is not installed: its own, or
/// one its captures and promotions lead to (the DTZ of a position is
/// found through them).
fn missing_table(pos: &Game, installed: &InstalledTables) -> Option<String> {
    let has = |name: &String| installed.tables.binary_search(name).is_ok();
    if needs_no_table(pos) {
        return None;
    }
    let own = table_name(pos.board());
    if !has(&own) {
        return Some(own);
    }
    pos.legal_moves()
        .into_iter()
        .filter(|m| m.is_conversion())
        .map(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            after
        })
        .filter(|after| !needs_no_table(after))
        .map(|after| table_name(after.board()))
        .find(|name| !has(name))
}

/// Positions the prober answers without a table: a game the variant's
/// own rule has ended (a king exploded, a side with no pieces left), and
/// bare kings outside antichess, where the king is an ordinary piece and
/// two-piece tables exist.
fn needs_no_table(pos: &Game) -> bool {
    pos.is_variant_end()
        || (pos.variant() != Variant::Antichess && pos.board().occupied().count() <= 2)
}

/// The command that fetches missing tables of a variant (`table` may be a
/// comma-separated list) and those their captures and promotions lead to.
pub fn fetch_command(variant: Variant, table: &str) -> String {
    let pieces = table
        .split(',')
        .map(|name| name.chars().filter(char::is_ascii_uppercase).count())
        .max()
        .unwrap_or(0);
    let variant_flag = match variant {
        Variant::Standard => String::new(),
        other => format!("--variant {other} "),
    };
    let from: String = mirrors_for(variant, pieces)
        .iter()
        .map(|url| format!("--from {url} "))
        .collect();
    format!(
        "zugzwang tables fetch {variant_flag}--only {table} --with-dependencies {from}--to <your {variant} table directory>"
    )
}

/// Public mirrors of a variant's tables up to a piece count, as the lichess
/// mirror lays them out (server/docs/operations.md, "Atomic and antichess
/// tables"); every directory a table and its dependencies may lie in, since
/// `tables fetch` asks the next `--from` for a file the first lacks.
/// Standard 7-piece tables are split over many directories there, so they
/// are left for the host to name.
fn mirrors_for(variant: Variant, pieces: usize) -> &'static [&'static str] {
    match (variant, pieces) {
        (Variant::Standard, 0..=5) => &["https://tablebase.lichess.ovh/tables/standard/3-4-5"],
        (Variant::Atomic, 0..=5) => &["https://tablebase.lichess.ovh/tables/atomic/3-4-5/"],
        (Variant::Atomic, 6) => &[
            "https://tablebase.lichess.ovh/tables/atomic/6-wdl/",
            "https://tablebase.lichess.ovh/tables/atomic/6-dtz/",
            "https://tablebase.lichess.ovh/tables/atomic/3-4-5/",
        ],
        (Variant::Antichess, 0..=5) => &[
            "https://tablebase.lichess.ovh/tables/antichess/2-3-4-5-giveaway/",
            "https://tablebase.lichess.ovh/tables/antichess/2-3-4-5-pawnless/",
        ],
        (Variant::Antichess, 6) => &[
            "https://tablebase.lichess.ovh/tables/antichess/6-giveaway/",
            "https://tablebase.lichess.ovh/tables/antichess/6-pawnless/",
            "https://tablebase.lichess.ovh/tables/antichess/2-3-4-5-giveaway/",
            "https://tablebase.lichess.ovh/tables/antichess/2-3-4-5-pawnless/",
        ],
        _ => &["<mirror URL>"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{game::parse_game_fen, variant::Variant};

    fn parse_fen(fen: &str) -> Result<Game, crate::position::FenError> {
        parse_game_fen(Variant::Standard, fen)
    }

    fn installed(names: &[&str]) -> InstalledTables {
        let mut tables: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        tables.sort();
        InstalledTables {
            tables,
            pieces: Vec::new(),
            dtm: Vec::new(),
            damaged: Vec::new(),
        }
    }

    #[test]
    fn says_which_table_is_missing() {
        let pos = parse_fen("8/8/4k3/8/4PK2/8/8/r6R w - - 0 50").expect("legal");
        let shared = installed(&["KRPvKR", "KRPvK"]);
        assert_eq!(unknown_reason(&pos, &shared), None);
        let subset = installed(&["KRvKR", "KRPvK", "KPvK", "KRvK"]);
        assert_eq!(
            unknown_reason(&pos, &subset)
                .map(|r| r.to_string())
                .as_deref(),
            Some("KRPvKR not installed")
        );
        let castling = parse_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").expect("legal");
        assert!(
            unknown_reason(&castling, &subset).is_some_and(|r| r.to_string().contains("castling")),
        );
        assert!(fetch_command(Variant::Standard, "KRPvKR").contains("--only KRPvKR"));
    }

    #[test]
    fn too_many_pieces_is_counted_by_the_variants_own_limit() {
        let none = installed(&[]);
        // Seven pieces: within standard's 7-piece tables, beyond atomic's 6.
        let seven = "4k3/8/8/8/8/8/PPPPP3/4K3 w - - 0 1";
        let standard = parse_game_fen(Variant::Standard, seven).expect("legal");
        assert_eq!(
            unknown_reason(&standard, &none).map(|r| r.to_string()),
            Some("KPPPPPvK not installed".to_string())
        );
        let atomic = parse_game_fen(Variant::Atomic, seven).expect("legal");
        assert_eq!(
            unknown_reason(&atomic, &none).map(|r| r.to_string()),
            Some("7 pieces: Syzygy atomic tables hold at most 6".to_string())
        );
        let eight = parse_fen("4k3/8/8/8/8/8/PPPPPP2/4K3 w - - 0 1").expect("legal");
        assert_eq!(
            unknown_reason(&eight, &none).map(|r| r.to_string()),
            Some("8 pieces: Syzygy standard tables hold at most 7".to_string())
        );
    }

    #[test]
    fn variant_tables_are_named_by_their_own_rules() {
        let none = installed(&[]);
        // Atomic: the capture next to the black king ends the game, so it
        // needs no table; the position itself needs KQvKN.
        let atomic =
            parse_game_fen(Variant::Atomic, "8/8/8/8/8/2k5/2n5/K1Q5 w - - 0 1").expect("legal");
        assert_eq!(missing_table(&atomic, &none).as_deref(), Some("KQvKN"));
        let own = installed(&["KQvKN"]);
        assert_eq!(
            missing_table(&atomic, &own),
            None,
            "Qxc2 explodes the king: no table"
        );
        // Antichess: two pieces have a table of their own (the king is an
        // ordinary piece), and taking the last piece ends the game.
        let two = parse_game_fen(Variant::Antichess, "8/8/8/8/8/8/k7/7K w - - 0 1").expect("legal");
        assert_eq!(missing_table(&two, &none).as_deref(), Some("KvK"));
        let last =
            parse_game_fen(Variant::Antichess, "8/8/8/8/8/8/1k6/K7 w - - 0 1").expect("legal");
        assert_eq!(
            missing_table(&last, &installed(&["KvK"])),
            None,
            "Kxb2 takes Black's last piece: no table"
        );
        // The command fetches from the variant's own tree.
        let command = fetch_command(Variant::Antichess, "KvK");
        assert!(
            command.contains("--variant antichess --only KvK"),
            "{command}"
        );
        assert!(command.contains("antichess/2-3-4-5-giveaway/"), "{command}");
        assert!(command.contains("antichess/2-3-4-5-pawnless/"), "{command}");
        let command = fetch_command(Variant::Standard, "KRPvKR");
        assert!(!command.contains("--variant"), "{command}");
        // Six atomic pieces: the split 6-piece directories, and 3-4-5 for
        // what their captures lead to.
        let command = fetch_command(Variant::Atomic, "KQRvKQN");
        for dir in ["atomic/6-wdl/", "atomic/6-dtz/", "atomic/3-4-5/"] {
            assert!(command.contains(dir), "{command}");
        }
    }
}
