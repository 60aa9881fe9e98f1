//! The crate's top-level modules (`src/X.rs` or `src/X/`) form no `use` cycle: every
//! `crate::X` path in a module's files is an edge, and the graph must be acyclic (docs/engine.md,
//! Layout). Parsing the paths by hand is enough: the crate names modules only as `crate::X`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

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

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules each module's code names, `crate::a` and `crate::{a, b::c}` alike.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let top = |p: &Path| {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_str().unwrap();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| top(p)).filter(|m| m != "lib").collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for path in &files {
        let from = top(path);
        if from == "lib" {
            continue;
        }
        let code: String = fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    group.split(',').map(|n| ident(n.trim())).collect()
                }
                None => vec![ident(rest)],
            };
            for n in names {
                if n != from && modules.contains(n) {
                    graph.get_mut(&from).unwrap().insert(n.to_string());
                }
            }
        }
    }
    graph
}

/// A cycle through `node`, if any, by depth-first search.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        n: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            return Some(path[i..].iter().cloned().chain([n.to_string()]).collect());
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in &g[n] {
            if let Some(c) = visit(g, m, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(graph, n, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_have_no_use_cycle() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10 && graph["world"].contains("tcp"), "the parser sees the crate: {graph:?}");
    assert_eq!(cycle(&graph), None, "a use cycle among sim/src's modules");
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(x, y)| (x.to_string(), BTreeSet::from([y.to_string()])))
        .collect();
    assert_eq!(cycle(&g), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
}
