//! Checks the tables compiled into the binary against their published
//! digests before they are embedded: the embedded tables answer without
//! any check at run time, so a damaged fixture must fail the build, not
//! give a wrong answer.

use std::{collections::HashMap, fs, path::Path};

use md5::Md5;
use sha2::Sha256;

/// `digest  NAME` lines (sha256sum and md5sum output; `./sub/NAME` too).
fn digests(list: &Path) -> HashMap<String, String> {
    let text = fs::read_to_string(list)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", list.display()));
    text.lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(digest, name)| {
            let name = name.rsplit('/').next().unwrap_or(name);
            (name.trim().to_string(), digest.trim().to_string())
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file of `dir` with one of `suffixes` must have the digest `list` gives.
fn check(dir: &str, list: &str, suffixes: &[&str], digest: fn(&[u8]) -> String) {
    println!("cargo::rerun-if-changed={dir}");
    println!("cargo::rerun-if-changed={list}");
    let published = digests(Path::new(list));
    let entries =
        fs::read_dir(dir).unwrap_or_else(|err| panic!("cannot read the directory {dir}: {err}"));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| suffixes.iter().any(|s| n.ends_with(s))) else {
            continue;
        };
        let bytes =
            fs::read(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
        let Some(expected) = published.get(&name) else {
            panic!("{name}: embedded, but {list} gives no digest for it");
        };
        let got = digest(&bytes);
        assert!(
            &got == expected,
            "{}: digest {got} differs from {expected} in {list}: the embedded table is damaged; restore it from git",
            path.display()
        );
    }
}

fn main() {
    check("tables", "checksums/sha256", &[".rtbw", ".rtbz"], |b| {
        hex(&<Sha256 as sha2::Digest>::digest(b))
    });
    check(
        "tables-atomic",
        "checksums/atomic-3-4-5.md5",
        &[".atbw", ".atbz"],
        |b| hex(&<Md5 as md5::Digest>::digest(b)),
    );
    check(
        "tables-prophet",
        "tables-prophet/MD5SUMS",
        &[".egtb.bz"],
        |b| hex(&<Md5 as md5::Digest>::digest(b)),
    );
}
