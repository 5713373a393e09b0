//! An upstream answer is checked before it is served or kept: a broken or
//! hostile upstream must not put a wrong answer in the store, where it
//! would be served for ever. A position's answer must list exactly the
//! position's legal moves (by UCI, each once) with valid categories and
//! whole numbers where numbers go; a line's moves must be legal one after
//! another. The bytes themselves are served as they came.

use std::collections::HashSet;

use app::api::{Category, POSITION_DISTANCES, POSITION_FLAGS};
use serde_json::{Map, Value};
use shakmaty::{CastlingMode, Position, uci::UciMove, variant::VariantPosition};

use super::Route;

/// Why an upstream answer was refused, in words for the log and the
/// `X-Upstream-Unavailable` header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(text: impl Into<String>) -> Invalid {
    Invalid(text.into())
}

/// Checks `body`, the answer of `route` for `pos`.
pub fn check(route: Route, pos: &VariantPosition, body: &[u8]) -> Result<(), Invalid> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| invalid(format!("not JSON ({err})")))?;
    let object = value
        .as_object()
        .ok_or_else(|| invalid("not a JSON object"))?;
    match route {
        Route::Probe(_) => probe_answer(object, pos),
        Route::Mainline(_) => line(object, pos, "dtz"),
        Route::FastestMate => line(object, pos, "dtm"),
    }
}

/// A position's answer: the root's fields, and one entry per legal move.
fn probe_answer(object: &Map<String, Value>, pos: &VariantPosition) -> Result<(), Invalid> {
    position_fields(object, "the position")?;
    let moves = object
        .get("moves")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no list of moves"))?;
    let legal: HashSet<String> = pos
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    let mut seen = HashSet::with_capacity(moves.len());
    for entry in moves {
        let entry = entry
            .as_object()
            .ok_or_else(|| invalid("a move that is not an object"))?;
        let uci = string(entry, "uci", "a move")?;
        string(entry, "san", uci)?;
        if !legal.contains(uci) {
            return Err(invalid(format!(
                "{uci} is not a legal move of the position"
            )));
        }
        if !seen.insert(uci.to_string()) {
            return Err(invalid(format!("{uci} is listed twice")));
        }
        position_fields(entry, uci)?;
        if let Some(flag) = entry.get("zeroing")
            && !flag.is_boolean()
        {
            return Err(invalid(format!("{uci}: zeroing is not true or false")));
        }
    }
    if let Some(missing) = legal.iter().find(|m| !seen.contains(*m)) {
        return Err(invalid(format!(
            "{} legal moves listed of {}: {missing} is missing",
            seen.len(),
            legal.len()
        )));
    }
    Ok(())
}

/// The fields a position (the root or a move's) has: a valid category,
/// whole numbers or null for the distances, true or false for the flags.
fn position_fields(object: &Map<String, Value>, what: &str) -> Result<(), Invalid> {
    let category = string(object, "category", what)?;
    if Category::from_name(category).is_none() {
        return Err(invalid(format!("{what}: `{category}` is not a category")));
    }
    for field in POSITION_DISTANCES {
        match object.get(field) {
            None | Some(Value::Null) => {}
            Some(number) if whole(number) => {}
            Some(_) => return Err(invalid(format!("{what}: {field} is not a whole number"))),
        }
    }
    for field in POSITION_FLAGS {
        if let Some(flag) = object.get(field)
            && !flag.is_boolean()
        {
            return Err(invalid(format!("{what}: {field} is not true or false")));
        }
    }
    Ok(())
}

/// A line (`/mainline`, `/standard/fastest-mate`): moves legal one after
/// another from the position, each with its `distance` (dtz or dtm), and
/// a winner of `w`, `b` or null.
fn line(object: &Map<String, Value>, pos: &VariantPosition, distance: &str) -> Result<(), Invalid> {
    let steps = object
        .get("mainline")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("no mainline"))?;
    match object.get("winner") {
        None | Some(Value::Null) => {}
        Some(Value::String(w)) if w == "w" || w == "b" => {}
        Some(_) => return Err(invalid("the winner is not w, b or null")),
    }
    match object.get(distance) {
        None | Some(Value::Null) => {}
        Some(n) if whole(n) => {}
        Some(_) => return Err(invalid(format!("{distance} is not a whole number"))),
    }
    let mut pos = pos.clone();
    for (ply, step) in steps.iter().enumerate() {
        let step = step
            .as_object()
            .ok_or_else(|| invalid("a step that is not an object"))?;
        let uci = string(step, "uci", "a step")?;
        string(step, "san", uci)?;
        match step.get(distance) {
            None | Some(Value::Null) => {}
            Some(n) if whole(n) => {}
            Some(_) => {
                return Err(invalid(format!(
                    "step {}: {distance} is not a whole number",
                    ply + 1
                )));
            }
        }
        let m = uci
            .parse::<UciMove>()
            .ok()
            .and_then(|m| m.to_move(&pos).ok())
            .ok_or_else(|| invalid(format!("step {}: {uci} is not a legal move there", ply + 1)))?;
        pos.play_unchecked(m);
    }
    Ok(())
}

fn string<'a>(object: &'a Map<String, Value>, field: &str, what: &str) -> Result<&'a str, Invalid> {
    object
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{what}: no {field}")))
}

fn whole(value: &Value) -> bool {
    value.as_i64().is_some_and(|n| i32::try_from(n).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::variant::{Variant, parse_variant_fen};

    const KRK: &str = "4k3/8/8/8/8/8/8/4K2R b - - 0 1";

    fn pos(fen: &str) -> VariantPosition {
        parse_variant_fen(Variant::Standard, fen).unwrap()
    }

    /// An answer listing `moves` (UCI) with category `category` each.
    fn answer(moves: &[&str], category: &str) -> String {
        let moves: Vec<String> = moves
            .iter()
            .map(|m| {
                format!(
                    r#"{{"uci":"{m}","san":"x","zeroing":false,"checkmate":false,"stalemate":false,"dtz":1,"precise_dtz":null,"dtm":null,"category":"{category}"}}"#
                )
            })
            .collect();
        format!(
            r#"{{"checkmate":false,"stalemate":false,"dtz":-1,"dtm":null,"category":"loss","moves":[{}]}}"#,
            moves.join(",")
        )
    }

    fn legal(fen: &str) -> Vec<String> {
        pos(fen)
            .legal_moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect()
    }

    #[test]
    fn an_answer_with_exactly_the_legal_moves_passes() {
        let moves = legal(KRK);
        let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
        let body = answer(&refs, "win");
        assert_eq!(
            check(Route::Probe(Variant::Standard), &pos(KRK), body.as_bytes()),
            Ok(())
        );
    }

    #[test]
    fn poisoned_answers_are_refused() {
        let moves = legal(KRK);
        let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
        let route = Route::Probe(Variant::Standard);
        let p = pos(KRK);
        // One move missing, one added, one twice.
        let fewer = answer(&refs[1..], "win");
        assert!(check(route, &p, fewer.as_bytes()).is_err());
        let mut more = refs.clone();
        more.push("a1a8");
        assert!(check(route, &p, answer(&more, "win").as_bytes()).is_err());
        let mut twice = refs.clone();
        twice[0] = refs[1];
        assert!(check(route, &p, answer(&twice, "win").as_bytes()).is_err());
        // A category that is none.
        assert!(check(route, &p, answer(&refs, "victory").as_bytes()).is_err());
        // A distance that is no whole number; not JSON; not an object.
        let fraction = answer(&refs, "win").replace("\"dtz\":1,", "\"dtz\":1.5,");
        assert!(check(route, &p, fraction.as_bytes()).is_err());
        assert!(check(route, &p, b"<html>").is_err());
        assert!(check(route, &p, b"[]").is_err());
    }

    #[test]
    fn a_line_must_be_legal_move_after_move() {
        let p = pos("4k3/8/8/8/8/8/8/4K2R w - - 0 1");
        let good = r#"{"mainline":[{"uci":"h1h7","san":"Rh7","dtz":-30,"precise_dtz":null},{"uci":"e8d8","san":"Kd8","dtz":29,"precise_dtz":null}],"winner":"w","dtz":31,"precise_dtz":null}"#;
        assert_eq!(
            check(Route::Mainline(Variant::Standard), &p, good.as_bytes()),
            Ok(())
        );
        let illegal = good.replace("e8d8", "e8e6");
        assert!(check(Route::Mainline(Variant::Standard), &p, illegal.as_bytes()).is_err());
        let winner = good.replace("\"winner\":\"w\"", "\"winner\":\"white\"");
        assert!(check(Route::Mainline(Variant::Standard), &p, winner.as_bytes()).is_err());
    }
}
