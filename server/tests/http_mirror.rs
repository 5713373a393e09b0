//! Tables on a plain HTTP mirror that lists its directory and honours Range
//! (issue 46): `tier build --from http://…` builds the prefixes from the
//! mirror's files (checked against the published digests), and `serve
//! --tables http://…` answers the request log as the local directory does,
//! byte for byte, with at most one GET per slow read (the variants' and
//! DTM tables on mirrors: `remote_variants.rs`). The mirror is
//! tower-http's `ServeDir` (Range, HEAD) in the test, over the 3-4 piece
//! tables the repository carries, so this runs on a bare clone too.

mod common;
mod process;
mod remote_support;

use std::{path::PathBuf, sync::atomic::Ordering};

use remote_support::{mirror::Mirror, *};

fn tables_dir() -> PathBuf {
    common::embedded_tables_dir()
}

#[test]
fn an_http_mirror_answers_as_the_local_directory_does() {
    let mirror = Mirror::start(&tables_dir());
    let url = mirror.url();
    let tables = tables_dir().display().to_string();
    let tiers = Tiers::build(&[&tables], &[&url], &[], &[]);
    let built = &tiers.remote_output;
    let (local_fast_dir, remote_fast_dir) = tiers.dirs();
    let tables_there = std::fs::read_dir(tables_dir())
        .expect("the tables")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x != "md"))
        })
        .count();
    assert!(
        built.contains(&format!("{tables_there} prefixes written")),
        "not every table of the mirror was built:\n{built}"
    );

    let local = serve(&["--tables", &tables, "--fast", &local_fast_dir], &[]);
    let remote = serve(&["--tables", &url, "--fast", &remote_fast_dir], &[]);
    let paths = slice(&common::fixture("explore-34.txt"), 0, 7);
    assert!(paths.len() > 200, "{} positions", paths.len());
    let before = mirror.ranged_gets.load(Ordering::Relaxed);
    let local_answers = replay(local.addr, &paths);
    let remote_answers = replay(remote.addr, &paths);
    let (slow, gets) = assert_same(&paths, &local_answers, &remote_answers);
    let seen = mirror.ranged_gets.load(Ordering::Relaxed) - before;
    let remote_slow: u64 = remote_answers.iter().map(|a| a.slow).sum();
    println!(
        "{} requests: {slow} slow reads on the local directory, {remote_slow} slow reads and {gets} GETs counted by the server on the mirror, {seen} ranged GETs seen by the mirror",
        paths.len()
    );

    assert!(gets > 0, "no GET was counted:\n{}", remote.log());
    assert_gets_within(gets, slow);
    assert_eq!(
        seen, gets,
        "the mirror saw other GETs than the server counted"
    );
}

#[test]
fn tables_status_judges_a_mirror_by_its_listing() {
    let mirror = Mirror::start(&tables_dir());
    let url = mirror.url();
    let local = zugzwang(
        &["tables", "status", &tables_dir().display().to_string()],
        &[],
    );
    let remote = zugzwang(&["tables", "status", &url], &[]);
    let counts = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(counts(&local).len(), 5, "a row per piece count: {local}");
    assert_eq!(counts(&remote), counts(&local), "{remote}");
}

#[test]
fn a_mirror_that_is_gone_at_start_is_named() {
    let gone = free_port();
    let url = format!("http://{gone}/syzygy/");
    let output = process::binary()
        .args(["serve", "--bind", "127.0.0.1:0", "--tables", &url])
        .env("NO_COLOR", "1")
        .output()
        .expect("run zugzwang");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot list the tables at http://{gone}/syzygy")),
        "{stderr}"
    );
}
