//! The fastest mate from a position: the winner plays the move that mates
//! soonest, the loser the one that resists longest, to mate (DTM-optimal
//! play, which the DTZ mainline is not: it heads for the next capture or
//! pawn move, and its mates look roundabout to people).

use app::api::{MateLineAnswer, MateStep};
use shakmaty::{
    CastlingMode, Chess, Color, Move, Position, san::SanPlus, variant::VariantPosition,
};

use super::{EngineError, Tables};
use crate::{dtm::Dtm, store::context};

/// Longer than any 6-piece mate (549 plies); a longer line is a bug in the
/// tables or in us: stop rather than spin.
const MAX_STEPS: usize = 1_000;

/// Follows the DTM-optimal move until mate; empty for a drawn position or
/// one already mated. Among moves equally fast (or slow), the first in
/// shakmaty's move order, so the same position always gives the same line.
/// The 50-move rule does not shorten it: depth to mate ignores that rule.
pub fn mate_line(tables: &Tables, pos: VariantPosition) -> Result<MateLineAnswer, EngineError> {
    let VariantPosition::Chess(mut pos) = pos else {
        return Err(EngineError::NotInTables(
            "depth to mate is known for standard chess only".to_string(),
        ));
    };
    let start = value(tables, &pos)?;
    let mover = pos.turn();
    let mut steps = Vec::new();
    let mut now = start;
    while !matches!(now, Dtm::Draw | Dtm::Loss(0)) && steps.len() < MAX_STEPS {
        let Some((m, after)) = best_move(tables, &pos)? else {
            break;
        };
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
        steps.push(MateStep {
            uci,
            san,
            dtm: after.lila(),
        });
        now = after;
    }
    let winner = match start {
        Dtm::Draw => None,
        Dtm::Win(_) => Some(mover),
        Dtm::Loss(_) => Some(mover.other()),
    };
    Ok(MateLineAnswer {
        mainline: steps,
        winner: winner.map(|color| color.char().to_string()),
        dtm: start.lila(),
    })
}

/// The position's value, which a fastest-mate line needs.
fn value(tables: &Tables, pos: &Chess) -> Result<Dtm, EngineError> {
    context::count_probes(1);
    tables
        .dtm_value(&VariantPosition::Chess(pos.clone()))?
        .ok_or_else(|| {
            let reason = if pos.castles().any() {
                "positions with castling rights are not in the DTM tables".to_string()
            } else {
                format!(
                    "no DTM table for {} is installed",
                    app::material::with_first(pos.board(), Color::White)
                )
            };
            EngineError::NotInTables(reason)
        })
}

/// The move that mates fastest (or resists longest) and the value after
/// it, for the side to move there; `None` when there is no legal move.
fn best_move(tables: &Tables, pos: &Chess) -> Result<Option<(Move, Dtm)>, EngineError> {
    let mut best: Option<(Move, Dtm)> = None;
    for m in pos.legal_moves() {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let value = value(tables, &after)?;
        let better = best.is_none_or(|(_, b)| value.before().goodness() > b.before().goodness());
        if better {
            best = Some((m, value));
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{TableDirs, TableDirsByVariant};
    use crate::store::embedded::{EMBEDDED_DIR, EMBEDDED_PROPHET_DIR, EmbeddedFilesystem};
    use std::{path::PathBuf, sync::Arc};

    fn embedded() -> Tables {
        let dirs = |dir: &str| TableDirs {
            filesystem: Arc::new(EmbeddedFilesystem),
            dirs: vec![PathBuf::from(dir)],
        };
        let sets = TableDirsByVariant {
            standard: dirs(EMBEDDED_DIR),
            atomic: TableDirs::none(),
            antichess: TableDirs::none(),
            dtm: dirs(EMBEDDED_PROPHET_DIR),
            dtm_cache_bytes: 16 << 20,
            dtm_verification: crate::dtm::Verification::default(),
        };
        Tables::load_sets(&sets).expect("embedded tables").0
    }

    fn line(tables: &Tables, fen: &str) -> MateLineAnswer {
        let pos =
            app::variant::parse_variant_fen(app::variant::Variant::Standard, fen).expect("legal");
        mate_line(tables, pos).expect("a line")
    }

    #[test]
    fn kbnk_mates_in_65_plies_each_step_one_ply_nearer() {
        let tables = embedded();
        let answer = line(&tables, "8/8/8/8/8/7B/8/Nk5K w - - 0 1");
        assert_eq!(answer.dtm, Some(65));
        assert_eq!(answer.winner.as_deref(), Some("w"));
        assert_eq!(answer.mainline.len(), 65);
        for (i, step) in answer.mainline.iter().enumerate() {
            let left = 64 - i as i32;
            let expected = if left == 0 {
                None
            } else if i % 2 == 0 {
                Some(-left)
            } else {
                Some(left)
            };
            assert_eq!(step.dtm, expected, "step {} ({})", i + 1, step.san);
        }
        assert!(answer.mainline.last().is_some_and(|s| s.san.ends_with('#')));
    }

    #[test]
    fn the_losing_side_resists_and_a_draw_has_no_line() {
        let tables = embedded();
        // Black to move, mated: the line starts with Black's longest defence.
        let answer = line(&tables, "8/8/8/8/8/2k5/8/K1Q5 b - - 0 1");
        assert_eq!(answer.winner.as_deref(), Some("w"));
        let plies = answer.dtm.expect("a known loss").unsigned_abs() as usize;
        assert_eq!(answer.mainline.len(), plies);
        let draw = line(&tables, "8/8/8/8/8/2k5/8/K1B5 w - - 0 1");
        assert_eq!(
            (draw.dtm, draw.winner, draw.mainline.len()),
            (Some(0), None, 0)
        );
    }

    #[test]
    fn no_table_and_castling_rights_are_errors_saying_so() {
        let tables = embedded();
        let five = app::variant::parse_variant_fen(
            app::variant::Variant::Standard,
            "8/8/8/8/8/2k5/1pp5/K1Q1R3 w - - 0 1",
        )
        .expect("legal");
        let err = mate_line(&tables, five).expect_err("no 5-piece DTM table");
        assert!(err.to_string().contains("no DTM table"), "{err}");
        let castling = app::variant::parse_variant_fen(
            app::variant::Variant::Standard,
            "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1",
        )
        .expect("legal");
        let err = mate_line(&tables, castling).expect_err("castling rights");
        assert!(err.to_string().contains("castling"), "{err}");
    }
}
