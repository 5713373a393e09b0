//! `server/docs/architecture.md` is the map a new engineer reads first; a
//! source file it does not name is a room nobody is told about. So every
//! `.rs` file of the crates' sources must be named there, by its path from
//! the repository's root.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

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

/// A crate's modules by path (`store::pread`), each with its source.
fn modules(root: &Path, src: &str) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(root, Path::new(src), &mut files);
    files
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(src)?.trim_start_matches('/');
            let name = relative
                .trim_end_matches(".rs")
                .trim_end_matches("/mod")
                .replace('/', "::");
            if name == "lib" || name == "main" {
                return None;
            }
            let text = std::fs::read_to_string(root.join(&file)).ok()?;
            Some((name, code_of(&text)))
        })
        .collect()
}

/// The code the crate is built from: tests and comments left out (a test
/// may use anything, and a doc link is not a dependency).
fn code_of(text: &str) -> String {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
    before_tests
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules `code` (of module `name`) names through `crate::` or
/// `super::` paths, grouped imports with or without a prefix
/// (`use crate::a::{b, c::{d}}`) included. A folder's `mod.rs` using its
/// own parts is not counted: the folder is one concept, and its parts may
/// use what the `mod.rs` holds; a circle is between concepts.
fn imports(name: &str, code: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let here: Vec<&str> = name.split("::").collect();
    let mut paths = Vec::new();
    for tree in use_trees(code) {
        paths.extend(flatten(&tree));
    }
    // Paths written in the code itself (`crate::store::read_counters::render()`);
    // a word ending in `::` opens a grouped import, read above.
    paths.extend(
        code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .filter(|word| word.contains("::") && !word.ends_with("::"))
            .map(str::to_string),
    );
    let mut found = BTreeSet::new();
    for path in paths {
        if let Some(module) = resolve(&here, &path, all) {
            found.insert(module);
        }
    }
    let own_part = format!("{name}::");
    found.retain(|module| module != name && !module.starts_with(&own_part));
    found
}

/// The module of this crate that `path`, written in module `here`, names,
/// if it names one: `None` for another crate's path (`leptos::prelude`).
fn resolve(here: &[&str], path: &str, all: &BTreeMap<String, String>) -> Option<String> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut base: Vec<&str> = match *segments.peek()? {
        "crate" => {
            segments.next();
            Vec::new()
        }
        "super" => {
            let mut base = here.to_vec();
            while segments.next_if_eq(&"super").is_some() {
                base.pop()?;
            }
            base
        }
        _ => return None,
    };
    base.extend(segments);
    longest_module(&base, all)
}

/// The trees of every `use` statement in `code`, without `use` and `;`:
/// `use crate::{a::{b, c}, d};` → `crate::{a::{b, c}, d}`.
fn use_trees(code: &str) -> Vec<String> {
    let mut trees = Vec::new();
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let statement = line.trim_start();
        let visible = ["pub ", "pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|p| statement.strip_prefix(p))
            .unwrap_or(statement);
        if let Some(tree) = visible.strip_prefix("use ") {
            let at = offset + line.len() - tree.len();
            let end = code[at..].find(';').map_or(code.len(), |e| at + e);
            trees.push(code[at..end].to_string());
        }
        offset += line.len();
    }
    trees
}

/// The paths a `use` tree names, nested groups expanded:
/// `crate::{a::{b, c}, d}` → `crate::a::b`, `crate::a::c`, `crate::d`.
fn flatten(tree: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut prefix: Vec<String> = Vec::new();
    let mut word = String::new();
    // `a as b` names `a`: keep the `as` as one mark to cut at below.
    let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    for c in tree.replace(" as ", "@").chars() {
        match c {
            '{' => {
                prefix.push(word.trim().trim_end_matches("::").to_string());
                word.clear();
            }
            ',' | '}' => {
                let item = word.trim().trim_end_matches("::");
                if !item.is_empty() && item != "self" {
                    paths.push([prefix.join("::"), item.to_string()].join("::"));
                } else if item == "self" {
                    paths.push(prefix.join("::"));
                }
                word.clear();
                if c == '}' {
                    prefix.pop();
                }
            }
            c if c.is_whitespace() => {}
            c => word.push(c),
        }
    }
    let item = word.trim().trim_end_matches("::");
    if !item.is_empty() {
        paths.push([prefix.join("::"), item.to_string()].join("::"));
    }
    paths
        .into_iter()
        // `a as b` names `a`.
        .map(|p| p.split('@').next().unwrap_or_default().to_string())
        .map(|p| p.trim_start_matches("::").to_string())
        .collect()
}

fn longest_module(path: &[&str], all: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|candidate| all.contains_key(candidate))
}

/// A circle of imports among `graph`'s modules, if there is one.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, done, path) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// Layers look down and concepts do not lean on each other both ways: a
/// circle of imports between files is how a reshaped house drifts back
/// (the store once rendered its metrics by calling into the modules that
/// recorded into it, five files in a circle).
#[test]
fn no_source_files_import_each_other_in_a_circle() {
    let root = root();
    for src in SOURCES {
        let all = modules(&root, src);
        let graph: BTreeMap<String, BTreeSet<String>> = all
            .iter()
            .map(|(name, code)| (name.clone(), imports(name, code, &all)))
            .collect();
        assert!(
            graph.values().map(BTreeSet::len).sum::<usize>() > 0 || all.len() < 3,
            "{src}: no imports found at all; the parser is broken"
        );
        if let Some(circle) = find_circle(&graph) {
            panic!("{src}: these files import each other in a circle: {circle:?}");
        }
    }
}

/// The store is a library layer: what it has to say goes to `tracing` or
/// into errors and figures, never straight to a terminal.
#[test]
fn nothing_in_the_store_prints() {
    let root = root();
    for (name, code) in modules(&root, "server/src") {
        if !name.starts_with("store") {
            continue;
        }
        for macro_name in ["println!", "eprintln!", "print!(", "eprint!(", "dbg!"] {
            assert!(
                !code.contains(macro_name),
                "server/src/{}: uses {macro_name}; report through tracing, an error or a figure instead",
                name.replace("::", "/")
            );
        }
    }
}

/// The circle check itself: it must see imports in all their spellings,
/// or it would pass whatever the code does.
#[test]
fn the_circle_check_sees_grouped_nested_and_path_imports() {
    let mut all = BTreeMap::new();
    for name in [
        "store",
        "store::read_counters",
        "store::context",
        "store::pread",
        "http",
    ] {
        all.insert(name.to_string(), String::new());
    }
    let grouped = "use super::{\n    context::{self, Tally},\n    pread::PreadFile,\n};";
    assert_eq!(
        imports("store::read_counters", grouped, &all),
        BTreeSet::from(["store::context".to_string(), "store::pread".to_string()])
    );
    let path = "fn f() { crate::store::read_counters::render(); }";
    assert_eq!(
        imports("store::context", path, &all),
        BTreeSet::from(["store::read_counters".to_string()])
    );
    // A group after a prefix, a nested `super::super`, and a folder's use
    // of its own part (not counted).
    let prefixed = "use crate::store::{context::Tally, pread as file};\nuse super::super::http;";
    assert_eq!(
        imports("store::read_counters", prefixed, &all),
        BTreeSet::from([
            "store::context".to_string(),
            "store::pread".to_string(),
            "http".to_string()
        ])
    );
    assert_eq!(
        imports("store", "use crate::store::pread::PreadFile;", &all),
        BTreeSet::new()
    );
    let graph = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::from(["c".to_string()])),
        ("c".to_string(), BTreeSet::from(["a".to_string()])),
        ("d".to_string(), BTreeSet::new()),
    ]);
    assert_eq!(find_circle(&graph).map(|c| c.len()), Some(4));
    let line = BTreeMap::from([
        ("a".to_string(), BTreeSet::from(["b".to_string()])),
        ("b".to_string(), BTreeSet::new()),
    ]);
    assert_eq!(find_circle(&line), None);
}

/// Whether `module` is `prefix` or one of its parts.
fn within(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

/// The layering rule of server/docs/architecture.md, checked: the layers
/// look only down (`cli` → `http` → `engine` → `store`), the store's read
/// path and the DTM reader beside it use neither the catalogue nor anything
/// above them, and only the two parts of the store that compare whole files
/// with the published digests (the tier's builder and the scrub) use the
/// catalogue.
#[test]
fn layers_only_look_down() {
    let root = root();
    let all = modules(&root, "server/src");
    let uses_catalog = ["store::tier::build", "store::scrub"];
    let above_store = ["cli", "http", "engine", "service", "fetch", "upstream"];
    let mut wrong = Vec::new();
    for (name, code) in &all {
        let store_level = within(name, "store")
            || (within(name, "dtm")
                && !within(name, "dtm::catalog")
                && !within(name, "dtm::fetch"));
        let forbidden: Vec<&str> = if store_level && uses_catalog.contains(&name.as_str()) {
            above_store.to_vec()
        } else if store_level {
            [&above_store[..], &["catalog", "dtm::catalog", "dtm::fetch"]].concat()
        } else if within(name, "catalog") || within(name, "dtm::catalog") {
            vec!["cli", "http", "engine", "service", "fetch"]
        } else if within(name, "engine") {
            vec!["cli", "http", "upstream"]
        } else if within(name, "upstream") {
            vec!["cli", "http", "service", "fetch"]
        } else if within(name, "http") || within(name, "service") || within(name, "fetch") {
            vec!["cli"]
        } else {
            Vec::new()
        };
        for import in imports(name, code, &all) {
            if forbidden.iter().any(|layer| within(&import, layer)) {
                wrong.push(format!("{name} uses {import}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that look up or sideways against the layering of server/docs/architecture.md: {wrong:#?}"
    );
}

/// Where a name the notes give as a path lives: a file from the
/// repository's root, or from one of the source folders.
fn find_source(root: &Path, path: &str) -> Option<PathBuf> {
    [
        "",
        "server/src/",
        "app/src/",
        "server/",
        "server/bench/src/",
    ]
    .iter()
    .map(|base| root.join(format!("{base}{path}")))
    .find(|candidate| candidate.is_file())
}

/// Whether `code` defines `name` (a function, type, constant, module,
/// macro) or brings it in with a `use`, so that a reader who opens the
/// file finds it there.
fn defines(code: &str, name: &str) -> bool {
    let name = name.trim_end_matches("()");
    let word_at = |at: usize| {
        let after = code[at + name.len()..].chars().next();
        let before = code[..at].chars().next_back();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let keywords = [
        "fn ",
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "const ",
        "static ",
        "mod ",
        "macro_rules! ",
    ];
    code.match_indices(name).any(|(at, _)| {
        if !word_at(at) {
            return false;
        }
        let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = code[line_start..at].trim_start();
        keywords.iter().any(|k| line.ends_with(k))
            || line.starts_with("pub use ")
            || line.starts_with("use ")
            // an enum's variant or a struct's field, on a line of its own
            || line.is_empty() && code[at + name.len()..].starts_with([',', ' ', '(', '{', ':'])
    })
}

/// What one backticked name of the notes claims, if it is one of ours.
fn check_claim(
    root: &Path,
    modules_of: &BTreeMap<&str, BTreeMap<String, String>>,
    token: &str,
    next: Option<&str>,
) -> Option<String> {
    let identifier = |s: &str| {
        let s = s.trim_end_matches("()");
        !s.is_empty()
            && s.split("::")
                .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'))
    };
    if token.ends_with(".rs") && !token.contains(' ') {
        let Some(file) = find_source(root, token) else {
            return Some(format!("`{token}`: no such file"));
        };
        let next = next.filter(|n| identifier(n))?;
        let code = std::fs::read_to_string(&file).ok()?;
        let first = next.split("::").next()?;
        return (!defines(&code, first))
            .then(|| format!("`{token}` `{next}`: `{first}` is not in {}", file.display()));
    }
    if !token.contains("::") || !identifier(token) {
        return None;
    }
    let mut segments: Vec<&str> = token.trim_end_matches("()").split("::").collect();
    let src = match segments[0] {
        "app" => {
            segments.remove(0);
            "app/src"
        }
        "server" | "crate" => {
            segments.remove(0);
            "server/src"
        }
        first if modules_of["server/src"].contains_key(first) => "server/src",
        _ => return None,
    };
    let all = &modules_of[src];
    let module = longest_module(&segments, all)?;
    let depth = module.split("::").count();
    let rest = &segments[depth..];
    let first = rest.first()?;
    let file = src.to_string() + "/" + &module.replace("::", "/");
    let code = std::fs::read_to_string(
        find_source(root, &format!("{file}.rs"))
            .or_else(|| find_source(root, &format!("{file}/mod.rs")))?,
    )
    .ok()?;
    if !defines(&code, first) {
        return Some(format!("`{token}`: `{first}` is not in {file}"));
    }
    let second = rest.get(1)?;
    (!defines(&code, second) && !all.values().any(|other| defines(other, second)))
        .then(|| format!("`{token}`: no `{second}` in {src}"))
}

/// The notes a new engineer reads first must not send them looking for a
/// file, module or function that moved: every source path, module path and
/// "file `function`" pair they give in backticks exists where they say.
#[test]
fn the_architecture_notes_name_what_exists() {
    let root = root();
    let notes = std::fs::read_to_string(root.join("server/docs/architecture.md"))
        .expect("server/docs/architecture.md is readable");
    let modules_of: BTreeMap<&str, BTreeMap<String, String>> = ["server/src", "app/src"]
        .into_iter()
        .map(|src| (src, modules(&root, src)))
        .collect();
    // Backticked spans with what follows each: "`a.rs` `f`" pairs a file
    // with a name in it.
    let parts: Vec<&str> = notes.split('`').collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for i in (1..parts.len()).step_by(2) {
        let next = (parts.get(i + 1) == Some(&" "))
            .then(|| parts.get(i + 2).copied())
            .flatten();
        let token = parts[i];
        if token.ends_with(".rs") || token.contains("::") {
            checked += 1;
        }
        if let Some(problem) = check_claim(&root, &modules_of, token, next) {
            wrong.push(problem);
        }
    }
    assert!(
        checked > 100,
        "found only {checked} names to check; the reader is broken"
    );
    assert!(
        wrong.is_empty(),
        "server/docs/architecture.md names what is not there: {wrong:#?}"
    );
}

/// The notes' check itself: it must catch a moved file, a renamed
/// function and a module path that points nowhere.
#[test]
fn the_notes_check_catches_what_moved() {
    let root = root();
    let modules_of: BTreeMap<&str, BTreeMap<String, String>> = ["server/src", "app/src"]
        .into_iter()
        .map(|src| (src, modules(&root, src)))
        .collect();
    let claim = |token: &str, next: Option<&str>| check_claim(&root, &modules_of, token, next);
    assert!(claim("store/tier/read.rs", Some("TieredFilesystem")).is_none());
    assert!(claim("server/src/tier_build.rs", None).is_some());
    assert!(claim("http/api.rs", Some("no_such_handler")).is_some());
    assert!(claim("app::variant::parse_variant_fen", None).is_none());
    assert!(claim("app::position::parse_fen_nowhere", None).is_some());
    assert!(claim("store::context::counting", None).is_none());
    assert!(claim("engine::Engine::probe", None).is_none());
    assert!(claim("engine::Engine::no_such_method", None).is_some());
}
