//! `server/docs/architecture.md` is the map a new engineer reads first; a
//! source file it does not name is a room nobody is told about. So every
//! `.rs` file of the crates' sources must be named there, by its path from
//! the repository's root.

use std::path::{Path, PathBuf};

/// The source folders the map covers, from the repository's root.
const SOURCES: [&str; 3] = ["server/src", "server/bench/src", "app/src"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, as a path from the repository's root.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(root.join(dir))
        .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
    for entry in entries {
        let path = dir.join(entry.expect("a directory entry").file_name());
        if root.join(&path).is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.to_string_lossy().into_owned());
        }
    }
}

#[test]
fn every_source_file_is_named_in_the_architecture_notes() {
    let root = root();
    let notes = std::fs::read_to_string(root.join("server/docs/architecture.md"))
        .expect("server/docs/architecture.md is readable");
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root, Path::new(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {files:?}");
    let unnamed: Vec<&String> = files
        .iter()
        .filter(|file| !notes.contains(&format!("`{file}`")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "server/docs/architecture.md does not name these source files (add a line under Modules saying what each is for): {unnamed:?}"
    );
}
