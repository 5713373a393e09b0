//! The slow tier in an S3 object store (issue 46), against a real one: a
//! one-node Garage on loopback, started by the test in a temp dir on free
//! ports, holds the shared 3-4-5 tables; `zugzwang tier build --from
//! s3://…` builds the prefixes locally, and `zugzwang serve --tables
//! s3://…` must answer a slice of the explore-345 log as the local
//! directory does, byte for byte, each request with no more GETs than its
//! own slow reads, and the replay's GETs within 10 % of the local slow
//! tier's slow reads (why not exactly: `remote_support::assert_gets_within`);
//! a flipped byte in a stored object is caught by the
//! block checksums (no wrong answer); with the store stopped, reads that
//! need it are 503s naming their table, and answers come back when it does.
//!
//! Needs `garage` 2.5.0 on the PATH (`.ci/install` builds it) and
//! `../shared`; without either the test says so in one `SKIPPED:` line,
//! or fails under `ZUGZWANG_REQUIRE_SHARED`.

mod common;
mod process;
mod remote_support;

use std::{
    path::Path,
    thread,
    time::{Duration, Instant},
};

use process::PATIENCE;
use remote_support::{garage::*, *};
use server::store::tier::manifest::Manifest;

/// The table a replay reads most: the material of most of its positions.
fn most_asked_material(paths: &[String]) -> String {
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    for path in paths {
        let board = path
            .split_once("fen=")
            .and_then(|(_, fen)| fen.split('_').next())
            .expect("a FEN");
        let pieces = |white: bool| -> String {
            let order = "KQRBNP";
            let mut side: Vec<char> = board
                .chars()
                .filter(|c| c.is_ascii_alphabetic() && c.is_ascii_uppercase() == white)
                .map(|c| c.to_ascii_uppercase())
                .collect();
            side.sort_by_key(|c| order.find(*c));
            side.into_iter().collect()
        };
        let (white, black) = (pieces(true), pieces(false));
        let material = match (white.len(), black.len()) {
            (w, b) if w > b || (w == b && white <= black) => format!("{white}v{black}"),
            _ => format!("{black}v{white}"),
        };
        if material.len() == 6 {
            *counts.entry(material).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(material, n)| (*n, material.clone()))
        .map(|(material, _)| material)
        .expect("5-piece positions in the slice")
}

/// A copy of a table with one byte flipped in every checksum block past
/// its prefix: any data block a lookup reads is damaged.
fn damaged(tables: &Path, fast: &Path, name: &str) -> Vec<u8> {
    let manifest = Manifest::load(fast, name)
        .expect("manifest")
        .expect("the table has a manifest");
    let mut bytes = std::fs::read(tables.join(name)).expect("read the table");
    let block = manifest.block_size as usize;
    let mut at = (manifest.fast_len as usize).div_ceil(block) * block + 17;
    while at < bytes.len() {
        bytes[at] ^= 0x40;
        at += block;
    }
    bytes
}

#[test]
fn tables_in_garage_answer_as_the_local_directory_does() {
    if !available("tables in an object store") {
        return;
    }
    let Some((tables, log)) = common::shared_tables_and("workloads/explore-345.txt") else {
        return;
    };
    let mut garage = Garage::start();
    upload(&garage.store(), table_files(&tables));

    let url = format!("s3://{BUCKET}/{PREFIX}");
    let endpoint = garage.endpoint();
    let env = garage.env();
    let local_fast = tempfile::tempdir().expect("temp dir");
    let remote_fast = tempfile::tempdir().expect("temp dir");
    let local_fast_dir = local_fast.path().display().to_string();
    let remote_fast_dir = remote_fast.path().display().to_string();
    let tables_arg = tables.display().to_string();
    zugzwang(
        &[
            "tier",
            "build",
            "--from",
            &tables_arg,
            "--to",
            &local_fast_dir,
        ],
        &[],
    );
    let built = zugzwang(
        &[
            "tier",
            "build",
            "--from",
            &url,
            "--to",
            &remote_fast_dir,
            "--s3-endpoint",
            &endpoint,
        ],
        &env,
    );
    println!("tier build from the bucket:\n{built}");

    let remote_args = [
        "--tables",
        &url,
        "--fast",
        &remote_fast_dir,
        "--s3-endpoint",
        &endpoint,
    ];
    let local = serve(&["--tables", &tables_arg, "--fast", &local_fast_dir], &[]);
    let remote = serve(&remote_args, &env);

    // Byte for byte, and no more GETs than the local tier's slow reads.
    let paths = slice(&log, 3, 50);
    let local_answers = replay(local.addr, &paths);
    let remote_answers = replay(remote.addr, &paths);
    let (slow, gets) = assert_same(&paths, &local_answers, &remote_answers);
    println!(
        "{} requests: {slow} slow reads on the local directory, {gets} GETs to the bucket",
        paths.len()
    );
    assert!(gets > 0, "no GET was counted:\n{}", remote.log());
    assert_gets_within(gets, slow);
    drop(remote);

    // The store stopped mid-replay: 503s naming tables, never a wrong
    // answer; answers again once it is back.
    let outage = serve(&remote_args, &env);
    let later = slice(&log, 11, 50);
    let expected = replay(local.addr, &later);
    let (before, during) = later.split_at(later.len() / 3);
    assert_same(
        before,
        &expected[..before.len()],
        &replay(outage.addr, before),
    );
    garage.stop();
    let mut refused = 0;
    for (path, local) in during.iter().zip(&expected[before.len()..]) {
        let answer = ask(outage.addr, path);
        match answer.status {
            200 => assert_eq!(answer.body, local.body, "{path}: a wrong answer"),
            503 => {
                assert!(
                    answer.body.contains(".rtb"),
                    "{path}: the 503 names no table: {}",
                    answer.body
                );
                refused += 1;
            }
            status => panic!("{path}: {status} {}", answer.body),
        }
    }
    assert!(refused > 0, "no request needed the stopped store");
    garage.restart();
    let started = Instant::now();
    loop {
        let answers = replay(outage.addr, during);
        let failed = answers.iter().filter(|a| a.status != 200).count();
        if failed == 0 {
            assert_same(during, &expected[before.len()..], &answers);
            break;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{failed} requests still fail after the store came back:\n{}",
            outage.log()
        );
        thread::sleep(Duration::from_millis(500));
    }
    drop(outage);

    // A flipped byte in every data block of the tables most asked for:
    // caught by the block checksums, never answered from.
    let material = most_asked_material(&paths);
    let names = [format!("{material}.rtbw"), format!("{material}.rtbz")];
    let damaged_files: Vec<(String, Vec<u8>)> = names
        .iter()
        .map(|name| (name.clone(), damaged(&tables, remote_fast.path(), name)))
        .collect();
    upload(&garage.store(), damaged_files);
    let after_damage = serve(&remote_args, &env);
    let mut caught = 0;
    for (path, local) in paths.iter().zip(&local_answers) {
        let answer = ask(after_damage.addr, path);
        if answer.status == 200 {
            assert_eq!(answer.body, local.body, "{path}: a wrong answer");
            continue;
        }
        assert!(
            names.iter().any(|name| answer.body.contains(name.as_str())),
            "{path}: {} names neither damaged table: {}",
            answer.status,
            answer.body
        );
        caught += 1;
    }
    assert!(
        caught > 0,
        "no request read the damaged {material} tables:\n{}",
        after_damage.log()
    );
    println!("{caught} requests refused on the damaged {material} tables, none answered wrongly");
}
