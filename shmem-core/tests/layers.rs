//! The layers of shmem-core stay true: every file of `src/` imports only from its own layer and
//! the layers below it, and inside a layer only from its own tier and the tiers below (the
//! order each layer's `mod.rs` documents). A new file must be given a place in [`LAYERS`]; an
//! import that points up fails this test with the file, the line and both places, unless it is
//! in [`ALLOWED`] with its reason. Also: no file below the composition root names `Runtime` or
//! `World`, and no import cycle joins more than [`MAX_KNOT`] files.
//!
//! Pure file reading (no PEs, no dependency): a small lexer drops comments, strings and
//! character literals, then every `crate::`, `super::` and `self::` path, every `use` of a child
//! module, and every `use` group is resolved to the module file it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, each a list of tiers (lowest first) of module paths (`mod.rs`
/// files are their folder's path; the crate root is `lib`).
const LAYERS: &[(&str, &[&[&str]])] = &[
    ("base", &[&["element", "error"], &["complex", "config"]]),
    (
        "mem",
        &[
            &[
                "mem::copy::log",
                "mem::layout",
                "mem::private_shm",
                "mem::segment",
                "mem::word",
            ],
            &["mem::copy::moves"],
            &["mem::copy::x86"],
            &["mem::copy"],
            &["mem::allocator", "mem::dataseg"],
            &["mem"],
        ],
    ),
    (
        "transport",
        &[
            &["transport::progress"],
            &["transport::slots"],
            // The active-message protocol, its parts lowest first (see `transport/am/mod.rs`).
            &["transport::am::wire"],
            &[
                "transport::am::batch",
                "transport::am::get",
                "transport::am::ledger",
            ],
            &["transport::am::state"],
            &["transport::am::quiet"],
            &["transport::am::send"],
            &["transport::am::coalesce", "transport::am::runs"],
            &["transport::am::fuzz", "transport::am::handlers"],
            &["transport::am"],
            &["transport"],
            &["transport::atomic"],
            &["transport::rma", "transport::route"],
            &["transport::collective"],
        ],
    ),
    (
        "object",
        &[
            &["object"],
            &["object::bounds", "object::storage"],
            &["object::statics"],
            &["object::heap", "object::view"],
        ],
    ),
    (
        "ops",
        &[
            &["ops::amo"],
            &["ops::signal"],
            &["ops::rma::array"],
            &["ops::rma"],
            &["ops::wait"],
            &["ops::lock", "ops::p2p", "ops::query"],
            &["ops::ctx"],
            &["ops"],
        ],
    ),
    (
        "coll",
        &[
            &["coll::stores", "coll::team"],
            &["coll::fetch", "coll::mailbox"],
            &["coll::alltoall", "coll::large"],
            &["coll::staged"],
            &["coll::collectives"],
            &["coll::reduce", "coll::split"],
            &["coll"],
        ],
    ),
    (
        "adapter",
        &[
            // The address-based API, its parts lowest first (see `adapter/raw/mod.rs`).
            &["adapter::raw::located", "adapter::raw::nbi"],
            &["adapter::raw::word"],
            &["adapter::dsl", "adapter::raw"],
            &["adapter"],
        ],
    ),
    (
        "runtime",
        &[
            &["runtime::bootstrap::pmix"],
            &["runtime::bootstrap"],
            &["runtime::bootstrap::tests", "runtime::peer_info"],
            &["runtime::start"],
            &["runtime"],
        ],
    ),
    ("world", &[&["world"]]),
    ("root", &[&["lib"]]),
];

/// Imports that point up but are accepted: (from, to, why). Keep it short.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// The largest set of files allowed to import each other in a circle.
const MAX_KNOT: usize = 3;

/// The first layer whose files may name the composition root's types.
const ROOT_LAYER: &str = "runtime";

/// A module's place: (layer index, tier index).
type Place = (usize, usize);

fn places() -> BTreeMap<&'static str, Place> {
    let mut map = BTreeMap::new();
    for (l, (_, tiers)) in LAYERS.iter().enumerate() {
        for (t, tier) in tiers.iter().enumerate() {
            for m in *tier {
                assert!(map.insert(*m, (l, t)).is_none(), "{m} is listed twice");
            }
        }
    }
    map
}

fn describe(m: &str, (l, t): Place) -> String {
    format!("{m} (layer {}, tier {t})", LAYERS[l].0)
}

/// Every `.rs` file under `dir`, by module path.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") && parts.len() > 1 {
                parts.pop();
            }
            (parts.join("::"), path)
        })
        .collect()
}

/// The source with comments, string literals and character literals blanked out (lines kept).
fn code_only(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    // Keeps newlines so that line numbers stay right; everything else becomes a space.
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                blank(&mut out, b[j]);
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                if let Some(&x) = b.get(i) {
                    blank(&mut out, x);
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a), left as it is.
            if next == Some('\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// A token of the code: an identifier, `::`, or any other single character.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path,
    Punct(char),
}

/// The tokens with their line numbers.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphabetic() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((Tok::Ident(chars[start..i].iter().collect()), n + 1));
            } else if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push((Tok::Path, n + 1));
                i += 2;
            } else {
                if !c.is_whitespace() {
                    out.push((Tok::Punct(c), n + 1));
                }
                i += 1;
            }
        }
    }
    out
}

/// Every path the tokens name from a `crate`, `super` or `self` start, or from a child module
/// in `children`; groups `{a, b::c}` are expanded. Each path starts with the names of the
/// inline modules (`mod tests { .. }`) it is written in, then `@`, and comes with its line.
fn paths(toks: &[(Tok, usize)], children: &BTreeSet<String>) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    // Inline modules around the current token, with the brace depth inside each.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
                i += 1;
            }
            Tok::Ident(m) if m == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
                i += 1;
            }
            Tok::Ident(w)
                if (w == "crate" || w == "super" || w == "self" || children.contains(w))
                    && toks.get(i + 1).is_some_and(|t| t.0 == Tok::Path)
                    && !(i > 0 && toks[i - 1].0 == Tok::Path) =>
            {
                let line = toks[i].1;
                let mut prefix: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                prefix.push("@".to_string());
                let (found, end) = path_tree(toks, i, prefix);
                out.extend(found.into_iter().map(|p| (p, line)));
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// The paths of the tree that starts at token `i` (a segment), prefixed with `prefix`; and the
/// index after it.
fn path_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(w)) => {
                prefix.push(w.clone());
                i += 1;
            }
            Some(Tok::Punct('{')) => {
                let mut all = Vec::new();
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) | None => return (all, i + 1),
                        Some(Tok::Punct(',')) => i += 1,
                        _ => {
                            let (found, end) = path_tree(toks, i, prefix.clone());
                            all.extend(found);
                            i = end;
                        }
                    }
                }
            }
            Some(Tok::Punct('*')) => return (vec![prefix], i + 1),
            _ => return (vec![prefix], i),
        }
        if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
            i += 1;
        } else {
            // `as NAME`, a generic, a call: the path ends here.
            return (vec![prefix], i);
        }
    }
}

/// The module that `path` (as written in module `from`, inside the inline modules that
/// `path` lists before its `@`) names: the longest prefix that is a module file. `crate::Item`
/// of a root re-export names `lib`. (A `mod.rs` file's module is its folder's path, so `super`
/// always leaves one segment.)
fn resolve(from: &str, path: &[String], mods: &BTreeMap<String, PathBuf>) -> String {
    let at = path.iter().position(|s| s == "@").unwrap_or(0);
    let mut base: Vec<String> = if from == "lib" {
        Vec::new()
    } else {
        from.split("::").map(String::from).collect()
    };
    base.extend(path[..at].iter().cloned());
    let mut rest = if path.get(at).is_some_and(|s| s == "@") {
        &path[at + 1..]
    } else {
        path
    };
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        // A child module's name: relative to the module.
        _ => {}
    }
    let full: Vec<String> = base.into_iter().chain(rest.iter().cloned()).collect();
    (1..=full.len())
        .rev()
        .map(|k| full[..k].join("::"))
        .find(|m| mods.contains_key(m))
        .unwrap_or_else(|| "lib".to_string())
}

/// The modules `code` declares with `mod NAME;` (children in their own files).
fn children(toks: &[(Tok, usize)]) -> BTreeSet<String> {
    toks.windows(3)
        .filter_map(|w| match (&w[0].0, &w[1].0, &w[2].0) {
            (Tok::Ident(m), Tok::Ident(name), Tok::Punct(';')) if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect()
}

struct Crate {
    /// Module -> the modules it imports, with the first line of each import.
    imports: BTreeMap<String, BTreeMap<String, usize>>,
    /// Module -> identifiers used in code, with their first line.
    idents: BTreeMap<String, BTreeMap<String, usize>>,
    files: BTreeMap<String, PathBuf>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let mut imports = BTreeMap::new();
    let mut idents = BTreeMap::new();
    for (m, path) in &files {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let toks = tokens(&code_only(&text));
        let kids = children(&toks);
        let mut to: BTreeMap<String, usize> = BTreeMap::new();
        for (p, line) in paths(&toks, &kids) {
            let target = resolve(m, &p, &files);
            if target != *m {
                to.entry(target).or_insert(line);
            }
        }
        imports.insert(m.clone(), to);
        let mut seen = BTreeMap::new();
        for (t, line) in &toks {
            if let Tok::Ident(w) = t {
                seen.entry(w.clone()).or_insert(*line);
            }
        }
        idents.insert(m.clone(), seen);
    }
    Crate {
        imports,
        idents,
        files,
    }
}

#[test]
fn every_file_has_a_place_and_imports_only_downward() {
    let places = places();
    let krate = read_crate();
    let mut problems = Vec::new();
    for m in krate.files.keys() {
        if !places.contains_key(m.as_str()) {
            problems.push(format!(
                "{m} ({}) has no place in LAYERS: add it to its layer's tiers",
                krate.files[m].display()
            ));
        }
    }
    for m in places.keys() {
        if !krate.files.contains_key(*m) {
            problems.push(format!("LAYERS lists {m}, which is not a file of src/"));
        }
    }
    for (from, targets) in &krate.imports {
        let Some(&pf) = places.get(from.as_str()) else {
            continue;
        };
        for (to, line) in targets {
            let Some(&pt) = places.get(to.as_str()) else {
                continue;
            };
            let allowed = ALLOWED.iter().any(|(f, t, _)| f == from && t == to);
            if pt > pf && !allowed {
                problems.push(format!(
                    "{}:{line}: {} imports {}, which lies above it",
                    krate.files[from].display(),
                    describe(from, pf),
                    describe(to, pt)
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "layering broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn nothing_below_the_composition_root_names_it() {
    let places = places();
    let root = LAYERS
        .iter()
        .position(|(name, _)| *name == ROOT_LAYER)
        .expect("the root layer is listed");
    let krate = read_crate();
    let mut problems = Vec::new();
    for (m, idents) in &krate.idents {
        let Some(&(layer, _)) = places.get(m.as_str()) else {
            continue;
        };
        if layer >= root {
            continue;
        }
        for name in ["Runtime", "World"] {
            if let Some(line) = idents.get(name) {
                problems.push(format!(
                    "{}:{line}: {m} names `{name}` (layer {} is below {ROOT_LAYER}: carry a \
                     `&'static Transport` or the allocator instead)",
                    krate.files[m].display(),
                    LAYERS[layer].0
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_import_cycle_joins_more_than_a_few_files() {
    let krate = read_crate();
    let largest = strongly_connected(&krate.imports)
        .into_iter()
        .max_by_key(|c| c.len())
        .unwrap_or_default();
    let edges: usize = krate.imports.values().map(|t| t.len()).sum();
    println!(
        "{} files, {edges} file-to-file imports; the largest circle: {} file(s) {largest:?}",
        krate.files.len(),
        largest.len()
    );
    assert!(
        largest.len() <= MAX_KNOT,
        "{} files import each other in a circle (at most {MAX_KNOT} may): {largest:?}",
        largest.len()
    );
}

/// Tarjan's strongly connected components of the import graph.
fn strongly_connected(g: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeMap<String, usize>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flat_map(|t| t.keys()) {
            let w = w.as_str();
            if !g.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The checker itself: it must see what it is meant to catch.
#[test]
fn the_checker_sees_imports_through_comments_strings_and_groups() {
    let code = code_only(
        "// use crate::hidden;\n/* crate::hidden */ let s = \"crate::hidden\";\nlet c = '\"';\n\
         use crate::mem::{copy::copy_bytes, segment::{A, B}};\nuse super::x;\nfn f<'a>() { crate::ops::rma::f(); }\nuse kid::Y;\n\
         mod tests { use super::Z; }\n",
    );
    let toks = tokens(&code);
    let kids: BTreeSet<String> = ["kid".to_string()].into();
    let found: Vec<String> = paths(&toks, &kids)
        .into_iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert!(!found.iter().any(|p| p.contains("hidden")), "{found:?}");
    for want in [
        "@::crate::mem::copy::copy_bytes",
        "@::crate::mem::segment::A",
        "@::crate::mem::segment::B",
        "@::super::x",
        "@::crate::ops::rma::f",
        "@::kid::Y",
        "tests::@::super::Z",
    ] {
        assert!(found.iter().any(|p| p == want), "{want} not in {found:?}");
    }
    let mods: BTreeMap<String, PathBuf> = [
        "mem",
        "mem::copy",
        "ops::rma",
        "transport",
        "transport::rma",
    ]
    .iter()
    .map(|m| (m.to_string(), PathBuf::new()))
    .collect();
    let p = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        resolve("transport::rma", &p("super::Peer"), &mods),
        "transport"
    );
    assert_eq!(
        resolve("transport", &p("self::rma::Dir"), &mods),
        "transport::rma"
    );
    assert_eq!(
        resolve("transport", &p("super::mem::copy"), &mods),
        "mem::copy"
    );
    assert_eq!(resolve("ops::rma", &p("crate::Element"), &mods), "lib");
    assert_eq!(resolve("x", &p("crate::mem::copy::f"), &mods), "mem::copy");
    assert_eq!(
        resolve("mem::copy", &p("tests::@::super::f"), &mods),
        "mem::copy"
    );
    assert_eq!(
        resolve("transport", &p("@::rma::Dir"), &mods),
        "transport::rma"
    );
}

/// The most lines a source file may have before its tests (its first `#[cfg(test)]` line): a
/// reader should see a file's parts, so a file that grows past this is cut by what its parts do.
const MAX_LINES_BEFORE_TESTS: usize = 900;

/// Files that hold nothing but tests, exempt from [`MAX_LINES_BEFORE_TESTS`].
const TEST_ONLY_FILES: &[&str] = &["shmem-launch/src/tests.rs"];

#[test]
fn no_file_is_longer_than_900_lines_before_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    let mut seen = 0;
    for krate in ["shmem-core", "shmem-launch", "shmem-run"] {
        let src = root.join(krate).join("src");
        if krate != "shmem-core" && !src.is_dir() {
            continue; // a packaged shmem-core has no sibling crates
        }
        for path in modules(&src).into_values() {
            let rel = format!(
                "{krate}/src/{}",
                path.strip_prefix(&src).expect("under src").display()
            );
            if TEST_ONLY_FILES.contains(&rel.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            let lines = text
                .lines()
                .take_while(|l| l.trim() != "#[cfg(test)]")
                .count();
            seen += 1;
            if lines > MAX_LINES_BEFORE_TESTS {
                long.push(format!("{rel}: {lines} lines before its tests"));
            }
        }
    }
    assert!(seen > 100, "only {seen} files found: wrong directory?");
    assert!(
        long.is_empty(),
        "files over {MAX_LINES_BEFORE_TESTS} lines before their tests (cut them by what their \
         parts do):\n{}",
        long.join("\n")
    );
}
