//! The reviewed game as an annotated PGN: its tags (with `[SetUp "1"]`
//! and `[FEN]` where it starts from a position), and every judged move
//! with its NAG (`$4` a result lost, `$2` a result kept but further away)
//! and a comment with the result before and after and the best move.

use super::{GameReview, Verdict};
use crate::variant::Variant;

/// Lines of movetext are kept to this width, as the PGN standard asks.
const LINE: usize = 79;

/// Tags the review writes itself.
const OWN_TAGS: [&str; 5] = ["SetUp", "FEN", "Annotator", "Result", "Variant"];

/// The annotated PGN of a review.
pub fn annotated_pgn(review: &GameReview) -> String {
    let mut out = tags(review);
    let mut line = String::new();
    for token in movetext(review) {
        if !line.is_empty() && line.len() + 1 + token.len() > LINE {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The game's tags, then the review's own, and the blank line after them.
fn tags(review: &GameReview) -> String {
    let mut out = String::new();
    let tag = |out: &mut String, name: &str, value: &str| {
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("[{name} \"{value}\"]\n"));
    };
    for t in &review.tags {
        if !OWN_TAGS.iter().any(|own| own.eq_ignore_ascii_case(&t.name)) {
            tag(&mut out, &t.name, &t.value);
        }
    }
    tag(&mut out, "Result", &review.result);
    if review.variant != Variant::Standard {
        tag(&mut out, "Variant", review.variant.label());
    }
    if review.from_position {
        tag(&mut out, "SetUp", "1");
        tag(&mut out, "FEN", &review.start_fen);
    }
    tag(&mut out, "Annotator", "Zugzwang tablebase review");
    out.push('\n');
    out
}

/// The movetext's tokens: numbers, moves, NAGs, comments and the result.
fn movetext(review: &GameReview) -> Vec<String> {
    let mut tokens: Vec<String> = Vec::new();
    if let Some(note) = &review.not_judged {
        tokens.push(comment(note));
    }
    let mut after_comment = false;
    for ply in &review.plies {
        let number = ply.label.split(['.', '…']).next().unwrap_or("1");
        if ply.side == "white" {
            tokens.push(format!("{number}."));
        } else if ply.ply == 0 || after_comment {
            tokens.push(format!("{number}..."));
        }
        tokens.push(ply.san.clone());
        if let Some(nag) = ply.nag {
            tokens.push(format!("${nag}"));
        }
        after_comment = false;
        if ply.verdict != Verdict::BeforeTables
            && let Some(words) = &ply.words
        {
            tokens.push(comment(words));
            after_comment = true;
        }
    }
    if let Some(error) = &review.error {
        tokens.push(comment(&format!("not read further: {error}")));
    }
    tokens.push(review.result.clone());
    tokens
}

/// A comment: braces cannot nest, so none inside.
fn comment(text: &str) -> String {
    format!("{{{}}}", text.replace(['{', '}'], ""))
}
