use super::{annotate::annotated_pgn, pgn::read_pgn, *};
use crate::practice::defence::tests::{after, answer};

const ROOK: &str = "[White \"Ann\"]\n[Black \"Bob\"]\n[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w - - 0 1\"]\n\n1. Rh7 Kd8 2. Kd2 *\n";

/// Answers as the API would give them: Rh7 the best of a mate in 12, Kd8
/// resisting less long than Kf8, Kd2 throwing the win away.
fn answers() -> Vec<Result<TablebaseAnswer, String>> {
    vec![
        Ok(answer(
            Category::Win,
            Some(23),
            vec![
                after("h1h7", Category::Loss, -5, Some(-22)),
                after("h1h2", Category::Loss, -7, Some(-26)),
            ],
        )),
        Ok(answer(
            Category::Loss,
            Some(-22),
            vec![
                after("e8f8", Category::Win, 9, Some(21)),
                after("e8d8", Category::Win, 3, Some(17)),
            ],
        )),
        Ok(answer(
            Category::Win,
            Some(17),
            vec![
                after("h7h8", Category::Loss, -5, Some(-16)),
                after("e1d2", Category::Draw, 0, Some(0)),
            ],
        )),
    ]
}

#[test]
fn every_move_is_judged_by_the_practice_judge() {
    let (titles, game) = read_pgn(ROOK, 1).expect("read");
    let judged_from = first_covered(&game, 5);
    assert_eq!(judged_from, Some(0));
    assert_eq!(positions_to_judge(&game, judged_from).len(), 3);
    let answers = answers();
    let review = assemble(&titles, 1, &game, (5, &[]), &answers);
    for (ply, answer) in review.plies.iter().zip(&answers) {
        let answer = answer.as_ref().expect("an answer");
        assert_eq!(ply.judgement, judge(answer, &ply.uci), "{}", ply.label);
    }
    let marks: Vec<Option<Mark>> = review
        .plies
        .iter()
        .map(|p| p.judgement.as_ref().map(|j| j.mark))
        .collect();
    assert_eq!(
        marks,
        [Some(Mark::Best), Some(Mark::Slower), Some(Mark::Mistake)]
    );
    assert_eq!(review.plies[1].label, "1…Kd8");
    assert_eq!(
        review.plies[1].words.as_deref(),
        Some("slower: was mated in 11, now mated in 9; best e8f8")
    );
    assert_eq!(review.plies[2].nag, Some(4));
    assert_eq!(review.moments.len(), 1);
    assert_eq!(
        review.moments[0].words,
        "2.Kd2?? threw the win away: now a draw; 2.h7h8 kept the win"
    );
    assert_eq!(review.counts.white.best, 1);
    assert_eq!(review.counts.white.mistake, 1);
    assert_eq!(review.counts.black.slower, 1);
    let chart = review.chart.as_deref().expect("a chart");
    assert_eq!(chart, "/review/chart.svg?from=0&s=m12.m11.m9.d&x=3");
    assert!(
        review
            .link
            .starts_with("/review?fen=4k3/8/8/8/8/8/8/4K2R_w_-_-_0_1&moves=h1h7_e8d8_e1d2")
    );
}

#[test]
fn the_annotated_pgn_carries_the_nags_comments_and_start() {
    let (titles, game) = read_pgn(ROOK, 1).expect("read");
    let review = assemble(&titles, 1, &game, (5, &[]), &answers());
    let pgn = annotated_pgn(&review);
    assert!(pgn.contains("[White \"Ann\"]\n"), "{pgn}");
    assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w - - 0 1\"]\n"));
    let movetext = pgn.replace('\n', " ");
    assert!(
        movetext.contains("1. Rh7 {best: mate in 12} 1... Kd8 $2 {slower:"),
        "{pgn}"
    );
    assert!(
        movetext.contains("2. Kd2 $4 {mistake: win thrown away: now a draw"),
        "{pgn}"
    );
    assert!(pgn.trim_end().ends_with('*'));
    // It reads back as the same game.
    let (_, again) = read_pgn(&pgn, 1).expect("read back");
    assert_eq!(again.plies, game.plies);
    assert_eq!(again.error, None);
}

#[test]
fn moves_before_the_tables_reach_are_shown_not_judged() {
    let (titles, game) = read_pgn(
        "[FEN \"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1\"]\n\n1. O-O Kd7 2. Ra7+ *",
        1,
    )
    .expect("read");
    assert_eq!(first_covered(&game, 5), Some(1));
    let review = assemble(&titles, 1, &game, (5, &[]), &[]);
    assert_eq!(review.plies[0].verdict, Verdict::BeforeTables);
    assert_eq!(review.plies[1].verdict, Verdict::NotJudged);
    assert!(
        review
            .not_judged
            .as_deref()
            .is_some_and(|w| w.contains("from 1…Kd7 on"))
    );
    assert_eq!(review.counts.white.not_judged, 1);
    // A game that keeps its castling rights is not judged at all.
    let (titles, game) = read_pgn(
        "[FEN \"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1\"]\n\n1. Ra2 Kd7 *",
        1,
    )
    .expect("read");
    assert_eq!(first_covered(&game, 5), None);
    let review = assemble(&titles, 1, &game, (5, &[]), &[]);
    assert!(review.not_judged.expect("why").contains("castling rights"));
    assert_eq!(review.chart, None);
    // A variant without tables says so.
    let (titles, game) =
        read_pgn("[Variant \"Antichess\"]\n\n1. e3 b5 2. Bxb5 *", 1).expect("read");
    let review = assemble(&titles, 1, &game, (0, &[]), &[]);
    assert_eq!(
        review.not_judged.as_deref(),
        Some("No antichess tables are installed here: no move is judged.")
    );
}

#[test]
fn a_review_link_replays_the_game() {
    let (_, game) = read_pgn(ROOK, 1).expect("read");
    let link = review_href(&game);
    let query = crate::url::Query::parse(link.split_once('?').expect("a query").1);
    let again = game_of_link(
        Variant::Standard,
        query.get("fen").as_deref(),
        &query.get("moves").expect("moves"),
    )
    .expect("replayed");
    assert_eq!(again.plies, game.plies);
    let broken = game_of_link(Variant::Standard, None, "e2e4_e7e5_e1e3").expect("a game");
    assert_eq!(broken.plies.len(), 2);
    assert!(
        broken
            .error
            .expect("why")
            .starts_with("move 3 (e1e3) is not legal")
    );
}
