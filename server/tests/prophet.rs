//! Prophet DTM tables read by `dtm`: known values,
//! Prophet's own longest mates, agreement with Syzygy WDL and move-by-move
//! consistency on random positions, and damaged files.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    sync::Arc,
};

use server::dtm::{Dtm, ProphetError, ProphetOptions, ProphetTables, Verification};
use shakmaty::{
    Bitboard, CastlingMode, Chess, Color, FromSetup, Piece, Position, Role, Setup, Square, fen::Fen,
};
use shakmaty_syzygy::{Tablebase, Wdl, filesystem::OsFilesystem};

fn fs() -> Arc<OsFilesystem> {
    Arc::new(OsFilesystem::new())
}

fn position(fen: &str) -> Chess {
    let fen: Fen = fen.trim().parse().expect("fen parses");
    fen.into_position(CastlingMode::Standard)
        .expect("legal position")
}

/// All of `shared/prophet`, or `None` after one `SKIPPED:` line.
fn shared_tables(what: &str) -> Option<ProphetTables> {
    let dir = common::shared_dir("prophet", what)?;
    Some(ProphetTables::open(&[dir], fs()).expect("shared/prophet opens"))
}

/// A temporary directory holding only the KQK fixture (under `name`).
fn kqk_dir(name: &str, bytes: Option<Vec<u8>>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let bytes = bytes.unwrap_or_else(|| fs::read(common::fixture("prophet_KQK.egtb.bz")).unwrap());
    fs::write(dir.path().join(name), bytes).unwrap();
    dir
}

#[test]
fn kbnk_longest_mate_is_65_plies() {
    let Some(tables) = shared_tables("the KBNvK example") else {
        return;
    };
    assert_eq!(tables.len(), 66, "{:?}", tables.names());
    let pos = position("8/8/8/8/8/7B/8/Nk5K w - - 0 1");
    assert_eq!(tables.probe(&pos).unwrap().and_then(Dtm::lila), Some(65));
    assert_eq!(tables.probe(&pos).unwrap(), Some(Dtm::Win(65)));
}

#[test]
fn castling_rights_and_missing_material_are_none() {
    let dir = kqk_dir("KQK.egtb.bz", None);
    let tables = ProphetTables::open(&[dir.path().to_owned()], fs()).unwrap();
    assert_eq!(tables.names(), ["KQK"]);
    // KRK with castling rights: not in the tables, as in lila.
    let castling = position("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    assert_eq!(tables.probe(&castling).unwrap(), None);
    // No KRK table on either side.
    let krk = position("4k3/8/8/8/8/8/8/4K2R w - - 0 1");
    assert_eq!(tables.probe(&krk).unwrap(), None);
}

/// Prophet's longest mate for KQK from the fixture table alone (bare clone),
/// and a KKQ position (no KKQ table here) answered by one ply of search.
#[test]
fn fixture_kqk_and_one_sided_search() {
    let dir = kqk_dir("KQK.egtb.bz", None);
    let tables = ProphetTables::open(&[dir.path().to_owned()], fs()).unwrap();
    let longest = position("7K/6Q1/8/8/8/3k4/8/8 w - - 0 1");
    assert_eq!(
        tables.probe(&longest).unwrap().and_then(Dtm::lila),
        Some(19)
    );
    // Black to move against KQ: only KQK (White to move) exists.
    let kkq = [
        "7K/6Q1/8/8/8/8/2k5/8 b - - 0 1",
        "8/8/8/8/8/8/1Q6/k1K5 b - - 0 1", // mated
        "k7/8/1Q6/8/8/8/8/7K b - - 0 1",  // stalemate
        "8/8/8/3k4/8/8/8/Q6K b - - 0 1",
        "8/8/8/8/8/2k5/8/K1Q5 b - - 0 1", // queen can be taken? no: defended
    ];
    let full = shared_tables("the comparison of the search with KKQ");
    for fen in kkq {
        let pos = position(fen);
        let searched = tables.probe(&pos).unwrap();
        assert!(searched.is_some(), "{fen}");
    }
    // Taking the queen leads to KK, which has no table here: no answer.
    let hanging = position("8/8/8/8/8/8/1kQ5/7K b - - 0 1");
    assert_eq!(tables.probe(&hanging).unwrap(), None);
    for fen in kkq {
        let pos = position(fen);
        let searched = tables.probe(&pos).unwrap();
        if pos.is_checkmate() {
            assert_eq!(searched, Some(Dtm::Loss(0)), "{fen}");
            assert_eq!(
                tables.probe(&pos).unwrap().and_then(Dtm::lila),
                None,
                "lila gives no dtm when mated"
            );
        }
        if pos.is_stalemate() {
            assert_eq!(searched, Some(Dtm::Draw), "{fen}");
        }
        if let Some(full) = &full {
            assert_eq!(
                searched,
                full.probe(&pos).unwrap(),
                "{fen}: search vs the KKQ table"
            );
        }
    }
}

#[test]
fn longest_mates_of_prophets_csv() {
    let Some(tables) = shared_tables("the longest mates of Prophet's csv") else {
        return;
    };
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_path(common::fixture("prophet_longest_mates.csv"))
        .unwrap();
    let (mut checked, mut without_mate) = (0, 0);
    for row in reader.records() {
        let row = row.unwrap();
        let (id, fen, dtm) = (&row[0], &row[1], &row[2]);
        assert!(tables.names().iter().any(|n| n == id), "no table {id}");
        if fen.is_empty() {
            without_mate += 1;
            continue;
        }
        let pos = position(fen);
        let expected: i32 = dtm.parse().unwrap();
        assert_eq!(
            tables.probe(&pos).unwrap().and_then(Dtm::lila),
            Some(expected),
            "{id}: {fen}"
        );
        checked += 1;
    }
    println!("longest mates: {checked} checked, {without_mate} materials without a mate");
    assert_eq!(checked, 40);
}

/// splitmix64: a seeded generator, enough to pick squares.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random legal position of `name` (White's pieces first, e.g. `KRKP`),
/// either side to move.
fn random_position(rng: &mut Rng, name: &str) -> Chess {
    loop {
        let mut setup = Setup::empty();
        let mut color = Color::Black;
        let mut ok = true;
        for c in name.chars() {
            if c == 'K' {
                color = !color;
            }
            let role = Role::from_char(c.to_ascii_lowercase()).unwrap();
            let sq = Square::new(rng.below(64) as u32);
            if setup.board.piece_at(sq).is_some()
                || (role == Role::Pawn && !Bitboard(0x00ff_ffff_ffff_ff00).contains(sq))
            {
                ok = false;
                break;
            }
            setup.board.set_piece_at(sq, Piece { color, role });
        }
        if !ok {
            continue;
        }
        setup.turn = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        if let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) {
            return pos;
        }
    }
}

fn value(tables: &ProphetTables, pos: &Chess) -> Dtm {
    tables
        .probe(pos)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| {
            panic!(
                "no value for {}",
                Fen::from_position(pos, shakmaty::EnPassantMode::Legal)
            )
        })
}

/// On random positions of several materials: the sign of DTM is Syzygy's
/// WDL (a cursed win is a win), and DTM is consistent with the moves: a
/// win is 1 + the shortest of the moves to lost positions, a loss 1 + the
/// longest of the (all winning) replies, a checkmate a loss in 0.
#[test]
fn random_positions_agree_with_syzygy_and_their_moves() {
    let Some(tables) = shared_tables("the random-position checks") else {
        return;
    };
    let Some(syzygy_dir) = common::shared_dir("syzygy/standard", "the random-position checks")
    else {
        return;
    };
    let mut syzygy = Tablebase::<Chess>::new();
    syzygy.add_directory(&syzygy_dir).unwrap();

    const PER_MATERIAL: usize = 250;
    let materials = [
        "KQK", "KRK", "KPK", "KBNK", "KBBK", "KQKR", "KRKB", "KQKQ", "KRKP", "KQKP", "KPKP",
        "KPPK", "KNKP", "KBKP",
    ];
    let mut rng = Rng(0x5eed_0024);
    let (mut positions, mut moves, mut wins, mut losses, mut draws, mut ep_children) =
        (0, 0, 0, 0, 0, 0);
    for name in materials {
        for _ in 0..PER_MATERIAL {
            let pos = random_position(&mut rng, name);
            let fen = Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string();
            let v = value(&tables, &pos);
            let wdl = syzygy.probe_wdl_after_zeroing(&pos).unwrap();
            let expected_sign = match wdl {
                Wdl::Win | Wdl::CursedWin => 1,
                Wdl::Draw => 0,
                Wdl::Loss | Wdl::BlessedLoss => -1,
            };
            let sign = match v {
                Dtm::Win(_) => 1,
                Dtm::Draw => 0,
                Dtm::Loss(_) => -1,
            };
            assert_eq!(sign, expected_sign, "{fen}: {v:?} vs Syzygy {wdl:?}");

            let legal = pos.legal_moves();
            let mut children = Vec::new();
            for m in &legal {
                let mut child = pos.clone();
                child.play_unchecked(*m);
                if child.ep_square(shakmaty::EnPassantMode::Legal).is_some() {
                    ep_children += 1;
                }
                children.push(value(&tables, &child));
            }
            moves += children.len();
            positions += 1;
            match v {
                Dtm::Win(n) => {
                    wins += 1;
                    let best = children
                        .iter()
                        .filter_map(|c| match c {
                            Dtm::Loss(m) => Some(*m),
                            _ => None,
                        })
                        .min();
                    assert_eq!(Some(n), best.map(|m| m + 1), "{fen}: {v:?} {children:?}");
                }
                Dtm::Loss(0) => {
                    losses += 1;
                    assert!(pos.is_checkmate(), "{fen}: loss in 0 but not mate");
                }
                Dtm::Loss(n) => {
                    losses += 1;
                    assert!(!children.is_empty(), "{fen}");
                    let mut longest = 0;
                    for c in &children {
                        match c {
                            Dtm::Win(m) => longest = longest.max(*m),
                            _ => panic!("{fen}: {v:?} but a reply is {c:?}"),
                        }
                    }
                    assert_eq!(n, longest + 1, "{fen}: {v:?} {children:?}");
                }
                Dtm::Draw => {
                    draws += 1;
                    assert!(!pos.is_checkmate(), "{fen}");
                    assert!(
                        children.iter().all(|c| !matches!(c, Dtm::Loss(_))),
                        "{fen}: draw but a move mates"
                    );
                    assert!(
                        children.is_empty() || children.contains(&Dtm::Draw),
                        "{fen}: draw but every move loses"
                    );
                }
            }
        }
    }
    println!(
        "{positions} positions of {} materials ({wins} wins, {draws} draws, {losses} losses), \
         {moves} moves probed ({ep_children} with en passant)",
        materials.len()
    );
    assert_eq!(positions, PER_MATERIAL * materials.len());
}

/// The error names the table's file, never its directory (it reaches
/// clients); the path stays in the error for the log.
fn assert_names_table(err: &ProphetError, table: &Path) {
    let message = err.to_string();
    let name = table.file_name().unwrap().to_string_lossy();
    assert!(
        message.contains(&*name),
        "error does not name {name}: {message}"
    );
    let dir = table.parent().unwrap().display().to_string();
    assert!(
        !message.contains(&dir),
        "error shows the directory: {message}"
    );
    assert_eq!(err.path(), table);
}

/// Positions of KQK to probe damaged copies with (White to move).
fn kqk_positions() -> Vec<Chess> {
    let mut rng = Rng(7);
    let mut out = Vec::new();
    while out.len() < 200 {
        let pos = random_position(&mut rng, "KQK");
        if pos.turn() == Color::White {
            out.push(pos);
        }
    }
    out
}

#[test]
fn damaged_files_give_errors_naming_the_table() {
    let original = fs::read(common::fixture("prophet_KQK.egtb.bz")).unwrap();
    let open = |bytes: Vec<u8>,
                verification|
     -> (
        tempfile::TempDir,
        PathBuf,
        Result<ProphetTables, ProphetError>,
    ) {
        let dir = kqk_dir("KQK.egtb.bz", Some(bytes));
        let path = dir.path().join("KQK.egtb.bz");
        let options = ProphetOptions {
            verification,
            ..ProphetOptions::default()
        };
        let tables = ProphetTables::open_with(&[dir.path().to_owned()], fs(), options);
        (dir, path, tables)
    };

    // Structural damage is found at open: the file is skipped (the others
    // still serve), and every lookup that needs it names it.
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "truncated by one byte",
            original[..original.len() - 1].to_vec(),
        ),
        ("truncated into the header", original[..10].to_vec()),
        ("truncated into the block list", original[..30].to_vec()),
        ("empty", Vec::new()),
        ("a byte appended", [original.as_slice(), &[0]].concat()),
    ];
    let mut positions = original.clone();
    positions[8] ^= 1; // number of positions
    cases.push(("wrong number of positions", positions));
    let mut block_size = original.clone();
    block_size[16..24].copy_from_slice(&0u64.to_le_bytes());
    cases.push(("zero positions per block", block_size));
    let mut list = original.clone();
    list[24] ^= 0x40; // first block's compressed size
    cases.push(("a wrong block size", list));
    for (what, bytes) in cases {
        let (_dir, path, tables) = open(bytes, Verification::OnFirstUse);
        let tables = tables.expect(what);
        assert_eq!(tables.rejected().len(), 1, "{what}");
        assert_eq!(tables.rejected()[0].path, path, "{what}");
        let err = tables.probe(&kqk_positions()[0]).expect_err(what);
        assert!(matches!(err, ProphetError::Corrupt { .. }), "{what}: {err}");
        assert_names_table(&err, &path);
    }

    // Damage inside the compressed blocks: the lookups give an error naming
    // the table (checksum or zstd), never a value, never a panic.
    let (_dir, _path, good) = open(original.clone(), Verification::OnFirstUse);
    let good = good.unwrap();
    good.verify_all().unwrap();
    let positions = kqk_positions();
    let expected: Vec<_> = positions.iter().map(|p| good.probe(p).unwrap()).collect();
    // Header and the one block size (KQK: one block of 32768 positions).
    let data_start = 24 + 2;
    let mut errors = 0;
    let step = (original.len() - data_start) / 40;
    for offset in (data_start..original.len()).step_by(step.max(1)) {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bytes = original.clone();
            bytes[offset] ^= flip;
            let (_dir, path, tables) = open(bytes.clone(), Verification::OnFirstUse);
            let tables = tables.unwrap();
            for (pos, want) in positions.iter().zip(&expected).take(5) {
                match tables.probe(pos) {
                    Err(err) => {
                        assert_names_table(&err, &path);
                        errors += 1;
                    }
                    Ok(got) => assert_eq!(&got, want, "damage at {offset} changed a value"),
                }
            }
            // Without the checksum nothing panics either.
            let (_dir, path, unchecked) = open(bytes, Verification::Never);
            for pos in &positions {
                if let Err(err) = unchecked.as_ref().unwrap().probe(pos) {
                    assert_names_table(&err, &path);
                }
            }
        }
    }
    println!("damaged blocks: {errors} lookups refused");
    assert!(errors > 0);
}

/// Positions right after a double pawn step that can be taken en passant
/// (Prophet indexes them apart): their value agrees with Syzygy and with
/// their moves, the en passant capture included.
#[test]
fn en_passant_positions_agree_with_syzygy_and_their_moves() {
    let Some(tables) = shared_tables("the en passant checks") else {
        return;
    };
    let Some(syzygy_dir) = common::shared_dir("syzygy/standard", "the en passant checks") else {
        return;
    };
    let mut syzygy = Tablebase::<Chess>::new();
    syzygy.add_directory(&syzygy_dir).unwrap();
    let mut rng = Rng(0xe9);
    let mut checked = 0;
    while checked < 300 {
        let white = rng.below(2) == 0;
        let file = rng.below(8) as u32;
        let other = if file == 0 || (file < 7 && rng.below(2) == 0) {
            file + 1
        } else {
            file - 1
        };
        // The pawn about to step two squares, and the one that can take it.
        let (mover, taker, turn) = if white {
            (Square::new(8 + file), Square::new(24 + other), Color::White)
        } else {
            (
                Square::new(48 + file),
                Square::new(32 + other),
                Color::Black,
            )
        };
        let mut setup = Setup::empty();
        setup.board.set_piece_at(
            mover,
            Piece {
                color: turn,
                role: Role::Pawn,
            },
        );
        setup.board.set_piece_at(
            taker,
            Piece {
                color: !turn,
                role: Role::Pawn,
            },
        );
        for color in [Color::White, Color::Black] {
            loop {
                let sq = Square::new(rng.below(64) as u32);
                if setup.board.piece_at(sq).is_none() {
                    setup.board.set_piece_at(
                        sq,
                        Piece {
                            color,
                            role: Role::King,
                        },
                    );
                    break;
                }
            }
        }
        setup.turn = turn;
        let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) else {
            continue;
        };
        let step = pos.legal_moves().into_iter().find(|m| {
            m.role() == Role::Pawn
                && m.from() == Some(mover)
                && m.to().rank().distance(mover.rank()) == 2
        });
        let Some(step) = step else { continue };
        let mut child = pos.clone();
        child.play_unchecked(step);
        if child.ep_square(shakmaty::EnPassantMode::Legal).is_none() {
            continue;
        }
        let fen = Fen::from_position(&child, shakmaty::EnPassantMode::Legal).to_string();
        let v = value(&tables, &child);
        let wdl = syzygy.probe_wdl_after_zeroing(&child).unwrap();
        let sign = |d: Dtm| match d {
            Dtm::Win(_) => 1,
            Dtm::Draw => 0,
            Dtm::Loss(_) => -1,
        };
        let expected = match wdl {
            Wdl::Win | Wdl::CursedWin => 1,
            Wdl::Draw => 0,
            Wdl::Loss | Wdl::BlessedLoss => -1,
        };
        assert_eq!(sign(v), expected, "{fen}: {v:?} vs Syzygy {wdl:?}");
        let replies: Vec<Dtm> = child
            .legal_moves()
            .into_iter()
            .map(|m| {
                let mut next = child.clone();
                next.play_unchecked(m);
                value(&tables, &next)
            })
            .collect();
        let best = replies
            .iter()
            .map(|r| match *r {
                Dtm::Win(n) => Dtm::Loss(n + 1),
                Dtm::Loss(n) => Dtm::Win(n + 1),
                Dtm::Draw => Dtm::Draw,
            })
            .max_by_key(|d| match *d {
                Dtm::Win(n) => 2000 - i32::from(n),
                Dtm::Draw => 0,
                Dtm::Loss(n) => -2000 + i32::from(n),
            });
        assert_eq!(Some(v), best, "{fen}: {v:?} vs its replies {replies:?}");
        checked += 1;
    }
    println!("{checked} en passant positions checked");
}

/// A header or block list that would size a lookup's read and buffers
/// beyond a block of the generator's (32768 positions, at most zstd's bound
/// compressed): refused at open, by the fast tier's layout and by the
/// whole-file check alike, with an error naming the table, never a panic
/// or an allocation of the hostile size. Both copies are otherwise whole:
/// their length is exactly header, list and blocks.
#[test]
fn a_block_larger_than_the_generators_is_refused_at_open() {
    let original = fs::read(common::fixture("prophet_KQK.egtb.bz")).unwrap();
    // KQK: 28644 positions, one block, its u16 length at 24..26.
    assert_eq!(&original[16..24], &32768u64.to_le_bytes());
    let length = u16::from_le_bytes([original[24], original[25]]);
    assert_eq!(usize::from(length), original.len() - 26);
    let block = &original[26..];

    // One block of 2^20 positions: the list switches to u32 lengths, and a
    // block could be as large as the file.
    let mut huge_blocks = original[..16].to_vec();
    huge_blocks.extend_from_slice(&(1u64 << 20).to_le_bytes());
    huge_blocks.extend_from_slice(&u32::from(length).to_le_bytes());
    huge_blocks.extend_from_slice(block);
    // The generator's block size, but a block length past what zstd can
    // need for 28644 values (57,288 bytes: bound 57,547), the file padded
    // to match it.
    let mut long_block = original[..24].to_vec();
    long_block.extend_from_slice(&u16::MAX.to_le_bytes());
    long_block.extend_from_slice(block);
    long_block.resize(26 + usize::from(u16::MAX), 0);

    for (what, bytes, says) in [
        (
            "2^20 positions per block",
            huge_blocks,
            "1048576 positions per block, not the generator's 32768",
        ),
        (
            "a block longer than zstd's bound",
            long_block,
            "block 0 is 65535 bytes long in the block list, more than zstd's bound",
        ),
    ] {
        let dir = kqk_dir("KQK.egtb.bz", Some(bytes.clone()));
        let path = dir.path().join("KQK.egtb.bz");
        let tables = ProphetTables::open(&[dir.path().to_owned()], fs()).expect(what);
        assert_eq!(tables.len(), 0, "{what}");
        assert_eq!(tables.rejected().len(), 1, "{what}");
        assert!(
            tables.rejected()[0].reason.contains(says),
            "{what}: {}",
            tables.rejected()[0].reason
        );
        let err = tables.probe(&kqk_positions()[0]).expect_err(what);
        assert!(matches!(err, ProphetError::Corrupt { .. }), "{what}: {err}");
        assert_names_table(&err, &path);

        // `tier build`, `verify --init` and `tables fetch` lay the file out
        // the same way: refused too.
        let err = server::dtm::format::layout(&path).expect_err(what);
        assert!(err.to_string().contains(says), "{what}: {err}");
        assert_names_table(&err, &path);
        // And the whole-file check the scrub and `verify` run.
        let mut check = server::dtm::format::StreamCheck::new(&path).unwrap();
        check.feed(&bytes);
        let err = check.finish().expect_err(what);
        assert!(err.to_string().contains(says), "{what}: {err}");
    }
}
