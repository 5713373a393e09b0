//! An upstream answer weighed against the local one before it is served
//! or kept. Its bytes are served as they came, so they cannot be merged
//! with what the local tables know: it is taken only when it knows all the
//! local answer knows (every result, every `dtm`) and more. An upstream
//! server with fewer tables of some kind than this one (a lila-tablebase
//! without atomic tables, say) would otherwise turn the local tables'
//! results into unknowns; one that knows nothing more is not worth keeping.

use std::collections::HashMap;

use app::api::{Category, PositionInfo, TablebaseAnswer};
use serde_json::Value;

/// What one position's answer says of a position (the root, or one a move
/// leads to).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Knows {
    result: bool,
    dtm: bool,
}

impl Knows {
    fn of_info(info: &PositionInfo) -> Knows {
        Knows {
            result: info.category != Category::Unknown,
            dtm: info.dtm.is_some(),
        }
    }

    fn of_json(value: &Value) -> Knows {
        Knows {
            result: value.get("category").and_then(Value::as_str) != Some("unknown"),
            dtm: value.get("dtm").is_some_and(|dtm| !dtm.is_null()),
        }
    }

    /// What `self` (the local answer) knows that `other` does not.
    fn lost_in(self, other: Knows) -> Option<&'static str> {
        if self.result && !other.result {
            return Some("result");
        }
        if self.dtm && !other.dtm {
            return Some("dtm");
        }
        None
    }

    fn gained_in(self, other: Knows) -> bool {
        (!self.result && other.result) || (!self.dtm && other.dtm)
    }
}

/// What the local tables know of a position's answer, kept while its
/// position is asked upstream.
#[derive(Clone, Debug)]
pub struct LocalAnswer {
    root: Knows,
    moves: HashMap<String, Knows>,
}

impl LocalAnswer {
    pub fn of(answer: &TablebaseAnswer) -> LocalAnswer {
        LocalAnswer {
            root: Knows::of_info(&answer.pos),
            moves: answer
                .moves
                .iter()
                .map(|m| (m.uci.clone(), Knows::of_info(&m.pos)))
                .collect(),
        }
    }

    /// Why `body`, an upstream answer for the same position (already
    /// checked: it lists the same legal moves), is not to be served in
    /// place of the local answer; `None` when it is.
    pub fn shortfall(&self, body: &[u8]) -> Option<String> {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return Some("its answer is not JSON".into());
        };
        let root = Knows::of_json(&value);
        if let Some(what) = self.root.lost_in(root) {
            return Some(format!(
                "it lacks the position's {what}, which the local tables give"
            ));
        }
        let mut gained = self.root.gained_in(root);
        let upstream_moves = value.get("moves").and_then(Value::as_array);
        for m in upstream_moves.into_iter().flatten() {
            let Some(local) = m
                .get("uci")
                .and_then(Value::as_str)
                .and_then(|uci| self.moves.get(uci))
            else {
                continue;
            };
            let theirs = Knows::of_json(m);
            if let Some(what) = local.lost_in(theirs) {
                let uci = m.get("uci").and_then(Value::as_str).unwrap_or_default();
                return Some(format!(
                    "it lacks the {what} after {uci}, which the local tables give"
                ));
            }
            gained |= local.gained_in(theirs);
        }
        (!gained).then(|| "it knows no more than the local tables".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A local answer (from JSON in lila's shape, as the page reads it).
    fn local(json: &str) -> LocalAnswer {
        LocalAnswer::of(&app::json::read::<TablebaseAnswer>(json).expect("an answer"))
    }

    fn position(category: &str, dtm: Option<i32>, moves: &[(&str, &str, Option<i32>)]) -> String {
        let dtm_json = |d: Option<i32>| d.map_or("null".to_string(), |d| d.to_string());
        let moves: Vec<String> = moves
            .iter()
            .map(|(uci, category, dtm)| {
                format!(
                    r#"{{"uci":"{uci}","san":"{uci}","zeroing":false,"conversion":false,"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"dtz":null,"precise_dtz":null,"dtm":{},"dtw":null,"dtc":null,"category":"{category}"}}"#,
                    dtm_json(*dtm)
                )
            })
            .collect();
        format!(
            r#"{{"checkmate":false,"stalemate":false,"variant_win":false,"variant_loss":false,"insufficient_material":false,"dtz":null,"precise_dtz":null,"dtm":{},"dtw":null,"dtc":null,"category":"{category}","moves":[{}]}}"#,
            dtm_json(dtm),
            moves.join(",")
        )
    }

    #[test]
    fn an_answer_that_fills_a_gap_and_loses_nothing_is_taken() {
        let mine = local(&position(
            "unknown",
            None,
            &[("a1a2", "unknown", None), ("a1b1", "draw", None)],
        ));
        let theirs = position(
            "win",
            None,
            &[("a1a2", "loss", None), ("a1b1", "draw", None)],
        );
        assert_eq!(mine.shortfall(theirs.as_bytes()), None);
        // A depth to mate the local tables lack counts as more too.
        let mine = local(&position("win", None, &[("a1a2", "loss", None)]));
        let theirs = position("win", Some(15), &[("a1a2", "loss", Some(-14))]);
        assert_eq!(mine.shortfall(theirs.as_bytes()), None);
    }

    #[test]
    fn an_answer_that_loses_a_local_result_or_dtm_is_not() {
        let mine = local(&position(
            "unknown",
            None,
            &[("a1a2", "unknown", None), ("a1b1", "draw", None)],
        ));
        let theirs = position(
            "win",
            None,
            &[("a1a2", "loss", None), ("a1b1", "unknown", None)],
        );
        let why = mine.shortfall(theirs.as_bytes()).expect("refused");
        assert!(why.contains("result after a1b1"), "{why}");

        let mine = local(&position("win", Some(9), &[("a1a2", "unknown", None)]));
        let theirs = position("win", None, &[("a1a2", "loss", None)]);
        let why = mine.shortfall(theirs.as_bytes()).expect("refused");
        assert!(why.contains("position's dtm"), "{why}");
    }

    #[test]
    fn an_answer_that_knows_no_more_is_not_taken() {
        let answer = position(
            "unknown",
            None,
            &[("a1a2", "unknown", None), ("a1b1", "win", None)],
        );
        let why = local(&answer)
            .shortfall(answer.as_bytes())
            .expect("refused");
        assert_eq!(why, "it knows no more than the local tables");
    }
}
