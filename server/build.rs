//! Checks the tables compiled into the binary against their published
//! digests before they are embedded: the embedded tables answer without
//! any check at run time, so a damaged fixture must fail the build, not
//! give a wrong answer.
//!
//! Then it re-blocks the embedded Prophet DTM tables into
//! `$OUT_DIR/tables-prophet`, which is what the binary carries: the same
//! header (so the same checksum over the same values) with 4,096 instead
//! of 32,768 positions per zstd frame. A DTM lookup decompresses one frame
//! whole (zstd cannot stop inside one), and with the generator's 64 KiB
//! frames that was a third of a hot request's CPU
//! (server/docs/benchmarks.md, "Smaller DTM blocks"). Each embedded table
//! is still checked whole against its header's checksum before its first
//! lookup, so a wrong re-encoding can only fail, never answer.

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
};

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

/// Positions per frame of the embedded DTM tables (the reader accepts it
/// beside the generator's 32,768: `dtm::format::EMBEDDED_BLOCK_POSITIONS`).
/// 4,096 decodes in 8 µs against 52 µs for the generator's 64 KiB frames,
/// for 39 MB instead of 25 MB carried (measured on this set: smaller frames
/// pay more per frame than they save, larger ones decode longer).
const EMBEDDED_BLOCK_POSITIONS: usize = 4096;

/// zstd's level for the re-blocked frames: level 7 compresses this set in
/// about 6 s and decodes faster than level 3 (fewer, longer matches);
/// higher levels take minutes for a few MB less.
const EMBEDDED_LEVEL: i32 = 7;

/// A Prophet file's values, all blocks decompressed, and its header.
fn prophet_values(path: &Path) -> ([u8; 24], Vec<u8>) {
    let bytes =
        fs::read(path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    let damaged = |what: &str| -> ! { panic!("{}: {what}; restore it from git", path.display()) };
    let header: [u8; 24] = match bytes.get(..24).map(<[u8; 24]>::try_from) {
        Some(Ok(header)) => header,
        _ => damaged("shorter than its header"),
    };
    let word = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
    let (positions, block_positions) = (word(1) as usize, word(2) as usize);
    if block_positions != 32768 {
        damaged("not the generator's 32,768 positions per block");
    }
    let blocks = positions.div_ceil(block_positions);
    let mut offset = 24 + blocks * 2;
    let mut values = Vec::with_capacity(positions * 2);
    for block in 0..blocks {
        let entry = bytes.get(24 + block * 2..26 + block * 2);
        let length = entry.map_or(0, |e| u16::from_le_bytes([e[0], e[1]]) as usize);
        let Some(frame) = bytes.get(offset..offset + length) else {
            damaged("a block runs past the end of the file")
        };
        let decoded = zstd::bulk::decompress(frame, block_positions * 2)
            .unwrap_or_else(|err| damaged(&format!("block {block} does not decompress: {err}")));
        values.extend_from_slice(&decoded);
        offset += length;
    }
    if values.len() != positions * 2 || offset != bytes.len() {
        damaged("its blocks do not match its header");
    }
    (header, values)
}

/// Writes `path`'s table to `out` with [`EMBEDDED_BLOCK_POSITIONS`] per
/// frame: the header with only its block size changed, a u16 length per
/// frame, the frames.
fn reblock(path: &Path, out: &Path) {
    let (mut header, values) = prophet_values(path);
    header[16..24].copy_from_slice(&(EMBEDDED_BLOCK_POSITIONS as u64).to_le_bytes());
    let frames: Vec<Vec<u8>> = values
        .chunks(EMBEDDED_BLOCK_POSITIONS * 2)
        .map(|chunk| {
            zstd::bulk::compress(chunk, EMBEDDED_LEVEL)
                .unwrap_or_else(|err| panic!("cannot compress {}: {err}", path.display()))
        })
        .collect();
    let mut file = header.to_vec();
    for frame in &frames {
        let length = u16::try_from(frame.len()).expect("a frame of 8 KiB compresses below 64 KiB");
        file.extend_from_slice(&length.to_le_bytes());
    }
    for frame in &frames {
        file.extend_from_slice(frame);
    }
    fs::write(out, file).unwrap_or_else(|err| panic!("cannot write {}: {err}", out.display()));
}

/// Re-blocks every table of `dir` into `$OUT_DIR/tables-prophet`.
fn reblock_all(dir: &str) {
    let out_dir = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let out = PathBuf::from(out_dir).join("tables-prophet");
    // Written afresh: a table removed from `dir` must not stay embedded.
    if out.exists() {
        fs::remove_dir_all(&out)
            .unwrap_or_else(|err| panic!("cannot remove {}: {err}", out.display()));
    }
    fs::create_dir_all(&out).unwrap_or_else(|err| panic!("cannot create {}: {err}", out.display()));
    let entries =
        fs::read_dir(dir).unwrap_or_else(|err| panic!("cannot read the directory {dir}: {err}"));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".egtb.bz") {
            reblock(&path, &out.join(name));
        }
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
    reblock_all("tables-prophet");
}
