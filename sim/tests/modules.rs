//! No `use` cycle between the engine's files: at every level of the module tree, a module's
//! children (`src/tcp/rate.rs`, `src/tcp/recovery/`, ...) name each other in one direction only,
//! as import-linter's `acyclic_siblings` contract holds the Python packages (docs/engine.md,
//! Layout). A parent (`mod.rs`, `lib.rs`) and its children may name each other: the parent holds
//! the traits and the registry its children fill. A reference is any `crate::`, `self::` or
//! `super::` path, in a `use` tree or inline, in tests too; a name a `mod.rs` re-exports
//! (`pub use`) counts as the module it comes from. The paths are parsed by hand: syn would parse
//! Rust fully but not resolve paths, and these few forms are all the crate writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate's files by their path under `src/` ("tcp/rate.rs"), with comments removed.
fn read_crate(src: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(src).unwrap().to_str().unwrap().replace('\\', "/");
            let code = fs::read_to_string(p).unwrap();
            (rel, code.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n"))
        })
        .collect()
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The module a file is, from its place under `src/` ("tcp/mod.rs" and "tcp.rs" are `tcp`),
/// or from a `#[path = "file.rs"] mod name;` in another file.
fn module_paths(files: &BTreeMap<String, String>) -> BTreeMap<String, ModPath> {
    let mut out: BTreeMap<String, ModPath> = BTreeMap::new();
    for rel in files.keys() {
        let mut parts: ModPath = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        out.insert(rel.clone(), parts);
    }
    for (rel, code) in files {
        for (i, _) in code.match_indices("#[path = \"") {
            let rest = &code[i + 10..];
            let target = &rest[..rest.find('"').unwrap()];
            let name = ident(rest[rest.find("mod ").unwrap() + 4..].trim_start());
            let dir = rel.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
            let mut m = out[rel].clone();
            m.push(name.to_string());
            out.insert(format!("{dir}{target}"), m);
        }
    }
    out
}

/// The full paths a `use` tree names: `a::{b, c::{d, e}}` gives `a::b`, `a::c::d`, `a::c::e`.
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        None => out.push(format!("{prefix}{}", tree.split(" as ").next().unwrap().trim())),
        Some(open) => {
            let head = &tree[..open];
            let body = &tree[open + 1..tree.rfind('}').unwrap()];
            let (mut depth, mut start) = (0, 0);
            for (i, c) in body.char_indices().chain([(body.len(), ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !body[start..i].trim().is_empty() {
                            expand_use(&body[start..i], &format!("{prefix}{head}"), out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Every `crate::`, `self::` and `super::` path in a file, each with the module it is written in
/// (a file's inline `mod tests { ... }` changes what `super` means).
fn references(code: &str, file_mod: &ModPath) -> Vec<(ModPath, String)> {
    let mut out = Vec::new();
    // The inline modules open at each brace depth.
    let (mut depth, mut inline): (usize, Vec<(usize, String)>) = (0, Vec::new());
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let here = |inline: &Vec<(usize, String)>| {
            let mut m = file_mod.clone();
            m.extend(inline.iter().map(|(_, n)| n.clone()));
            m
        };
        let rest = &code[i..];
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if word_start && rest.starts_with("use ") {
            let end = rest.find(';').unwrap();
            let mut paths = Vec::new();
            expand_use(&rest[4..end], "", &mut paths);
            out.extend(paths.into_iter().map(|p| (here(&inline), p)));
            i += end;
            continue;
        }
        if word_start && rest.starts_with("mod ") {
            let name = ident(rest[4..].trim_start());
            let after = rest[4..].trim_start()[name.len()..].trim_start();
            if after.starts_with('{') {
                inline.push((depth, name.to_string()));
            }
        }
        if word_start && ["crate::", "self::", "super::"].iter().any(|p| rest.starts_with(p)) {
            let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            out.push((here(&inline), rest[..len].trim_end_matches(':').to_string()));
            i += len;
            continue;
        }
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The module a path written in module `from` ends in: the deepest module along it, through the
/// names a module re-exports. `None` for paths outside the crate (`std::`, `pyo3::`).
fn resolve(
    path: &str,
    from: &ModPath,
    modules: &BTreeSet<ModPath>,
    reexports: &BTreeMap<(ModPath, String), String>,
) -> Option<ModPath> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut m: ModPath = match segs.first()? {
        &"crate" => vec![],
        &"self" | &"super" => from.clone(),
        _ => return None,
    };
    let mut rest = &segs[1..];
    if segs[0] == "super" {
        m.pop();
    }
    while let Some(&"super") = rest.first() {
        m.pop();
        rest = &rest[1..];
    }
    // `from` may be an inline module (`tests`): the deepest known module at or above it.
    while !modules.contains(&m) && !m.is_empty() {
        m.pop();
    }
    for seg in rest {
        let mut child = m.clone();
        child.push(seg.to_string());
        if modules.contains(&child) {
            m = child;
        } else if let Some(target) = reexports.get(&(m.clone(), seg.to_string())) {
            return resolve(target, &m, modules, reexports).or(Some(m));
        } else {
            break;
        }
    }
    Some(m)
}

/// Per parent module, the edges between its children: (child, child) -> the files' references
/// that make it, as "file -> path".
type Levels = BTreeMap<ModPath, BTreeMap<(String, String), Vec<String>>>;

fn sibling_edges(files: &BTreeMap<String, String>) -> Levels {
    let paths = module_paths(files);
    let modules: BTreeSet<ModPath> = paths.values().cloned().collect();
    let mut reexports = BTreeMap::new();
    for (rel, code) in files {
        for line in
            code.lines().map(str::trim).filter(|l| l.starts_with("pub use ") || l.starts_with("pub(crate) use "))
        {
            let tree = &line[line.find("use ").unwrap() + 4..line.find(';').unwrap_or(line.len())];
            let mut full = Vec::new();
            expand_use(tree, "", &mut full);
            for p in full {
                let name = p.rsplit("::").next().unwrap().to_string();
                if p == name {
                    continue; // a local item made public (`pub(crate) use fifo_methods;`, a macro)
                }
                let p = if p.starts_with("crate::") || p.starts_with("super::") { p } else { format!("self::{p}") };
                reexports.insert((paths[rel].clone(), name), p);
            }
        }
    }
    let mut levels: Levels = BTreeMap::new();
    for (rel, code) in files {
        let file_mod = &paths[rel];
        for (from, path) in references(code, file_mod) {
            let Some(to) = resolve(&path, &from, &modules, &reexports) else { continue };
            let common = file_mod.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < file_mod.len() && common < to.len() {
                let edge = (file_mod[common].clone(), to[common].clone());
                let why = format!("{rel} -> {path}");
                levels.entry(file_mod[..common].to_vec()).or_default().entry(edge).or_default().push(why);
            }
        }
    }
    levels
}

/// A cycle in a graph of edges, if any, by depth-first search.
fn cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    fn visit<'a>(
        g: &BTreeMap<&'a str, Vec<&'a str>>,
        n: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| *p == n) {
            return Some(path[i..].iter().chain([&n]).map(|s| s.to_string()).collect());
        }
        if done.contains(n) {
            return None;
        }
        path.push(n);
        for m in &g[n] {
            if let Some(c) = visit(g, m, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n);
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(&graph, n, &mut Vec::new(), &mut done))
}

/// Each cycle found, as "in `parent`: a -> b -> a (because file -> path; ...)".
fn cycles(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (parent, edges) in sibling_edges(files) {
        let keys: BTreeSet<(String, String)> = edges.keys().cloned().collect();
        if let Some(c) = cycle(&keys) {
            let why: Vec<String> = c.windows(2).map(|w| edges[&(w[0].clone(), w[1].clone())][0].clone()).collect();
            out.push(format!("in `{}`: {} (because {})", parent.join("::"), c.join(" -> "), why.join("; ")));
        }
    }
    out
}

fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
}

#[test]
fn no_use_cycle_between_files_at_any_level() {
    let crate_files = read_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let levels = sibling_edges(&crate_files);
    let top = &levels[&vec![]];
    let tcp = &levels[&vec!["tcp".to_string()]];
    // The parser sees the crate: the world names tcp; the sender names the rate sampler, and the
    // recoveries through `super::AnyRecovery`, which tcp/mod.rs re-exports; the recoveries name
    // the sender's core.
    assert!(top.contains_key(&("world".into(), "tcp".into())), "{top:?}");
    assert!(tcp.contains_key(&("sender".into(), "rate".into())), "{tcp:?}");
    assert!(tcp.contains_key(&("sender".into(), "recovery".into())), "{tcp:?}");
    assert!(tcp.contains_key(&("recovery".into(), "sender_core".into())), "{tcp:?}");
    assert_eq!(cycles(&crate_files), Vec::<String>::new(), "a use cycle between sim/src's files");
}

/// The check finds the cycle the engine had (issue 56): the rate sampler named SACK's range
/// lists, SACK names the sender, and the sender names the rate sampler.
#[test]
fn the_check_finds_a_cycle_between_files_inside_a_module() {
    let tree = files(&[
        ("lib.rs", "pub mod tcp;"),
        ("tcp/mod.rs", "pub mod rate; pub mod recovery; pub mod sender;\npub use recovery::Sack;"),
        ("tcp/rate.rs", "use super::recovery::sack::{gaps, LastBlocks};"),
        ("tcp/recovery/mod.rs", "pub mod sack;"),
        ("tcp/recovery/sack.rs", "use crate::tcp::sender::SenderCore;\nfn f() { crate::time::to_secs(1) }"),
        ("tcp/sender.rs", "use super::{rate::RateSampler, Ack};\n#[cfg(test)]\nmod tests { use super::*; }"),
    ]);
    let found = cycles(&tree);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("in `tcp`: rate -> recovery -> sender -> rate"), "{found:?}");
    // Through a re-export too: the sender names `crate::tcp::Sack`, which tcp/mod.rs re-exports.
    let mut tree = tree;
    tree.insert("tcp/rate.rs".into(), String::new());
    tree.insert("tcp/sender.rs".into(), "use crate::tcp::Sack;".into());
    tree.insert("tcp/recovery/sack.rs".into(), "fn f() -> crate::tcp::sender::SenderCore { todo!() }".into());
    assert!(cycles(&tree)[0].starts_with("in `tcp`: recovery -> sender -> recovery"), "{:?}", cycles(&tree));
    // A parent and its child may name each other; a child's tests name the file's own items.
    let ok = files(&[
        ("lib.rs", "pub mod tcp;"),
        ("tcp/mod.rs", "pub mod cubic;\nfn make() -> cubic::Cubic { todo!() }\npub trait Law {}"),
        ("tcp/cubic.rs", "use super::Law;\npub struct Cubic;\nmod tests { use super::*; use super::super::Law; }"),
    ]);
    assert_eq!(cycles(&ok), Vec::<String>::new());
}

#[test]
fn use_trees_expand_to_full_paths() {
    let mut out = Vec::new();
    expand_use("crate::tcp::{Ack, recovery::{sack::Sack, RecoveryEntry as E}, self}", "", &mut out);
    assert_eq!(
        out,
        [
            "crate::tcp::Ack",
            "crate::tcp::recovery::sack::Sack",
            "crate::tcp::recovery::RecoveryEntry",
            "crate::tcp::self"
        ]
    );
}
