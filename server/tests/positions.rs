//! Our WDL and DTZ agree with python-chess, an independent Syzygy prober, on
//! every position of the test sets: the 3-4 piece one the repository
//! carries, and the 5-piece one in `shared/` when present.

mod common;

use std::{path::Path, sync::Arc};

use server::{engine::Tables, store::pread::PreadFilesystem};
use shakmaty::{CastlingMode, Chess, fen::Fen};

fn check_file(csv_path: &Path, tables: &Tables) -> usize {
    let mut reader = csv::Reader::from_path(csv_path).expect("csv opens");
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for record in reader.records() {
        let record = record.expect("csv record");
        let (fen, wdl, dtz) = (&record[0], &record[1], &record[2]);
        let wdl: i32 = wdl.parse().expect("wdl number");
        let dtz: i32 = dtz.parse().expect("dtz number");
        let pos: Chess = fen
            .parse::<Fen>()
            .expect("fen parses")
            .into_position(CastlingMode::Standard)
            .expect("legal position");
        let our_wdl = tables
            .tablebase
            .probe_wdl_after_zeroing(&pos)
            .unwrap_or_else(|err| panic!("{fen}: {err}")) as i32;
        let our_dtz = tables
            .tablebase
            .probe_dtz(&pos)
            .unwrap_or_else(|err| panic!("{fen}: {err}"))
            .ignore_rounding()
            .0;
        if (our_wdl, our_dtz) != (wdl, dtz) {
            mismatches.push(format!(
                "{fen}: expected wdl {wdl} dtz {dtz}, got wdl {our_wdl} dtz {our_dtz}"
            ));
        }
        checked += 1;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} positions disagree:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    checked
}

fn tables(dirs: &[std::path::PathBuf]) -> Tables {
    Tables::load(Arc::new(PreadFilesystem::default()), dirs)
        .expect("tables load")
        .0
}

#[test]
fn three_and_four_piece_positions_agree_with_python_chess() {
    let csv = common::fixture("positions-34.csv");
    let checked = check_file(&csv, &tables(&[common::embedded_tables_dir()]));
    assert!(checked >= 2000, "only {checked} positions checked");
}

#[test]
fn five_piece_positions_agree_with_python_chess() {
    let Some((dir, csv)) = common::shared_tables_and("testdata/positions-345.csv") else {
        return;
    };
    let checked = check_file(&csv, &tables(&[dir]));
    assert!(checked >= 3000, "only {checked} positions checked");
}
