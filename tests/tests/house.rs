//! Rules the house keeps, read from the source: data flows one way, so no module of the
//! daemon or of the CLI reaches, through the paths it names (`use crate::..`, `super::..`,
//! a child module's `child::..`, globs included), back to itself. A module is a file; its
//! tests are left out (they may look anywhere). A module may use what its ancestors define
//! (a family of modules, such as `perform/emulate/`, is one unit to the rest of the crate,
//! its children implementing parts of what its `mod.rs` declares), so a path to an ancestor
//! is no edge. On a failure the circles are printed, each a list of files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's modules: each file by its module path (`perform::emulate::calls`), and the
/// module paths each one names.
struct Crate {
    modules: BTreeMap<Vec<String>, PathBuf>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        walk(src, src, &mut modules);
        Crate { modules }
    }

    /// The module a path names: its longest prefix that is a module (the rest are items).
    fn module_of(&self, path: &[String]) -> Option<Vec<String>> {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| self.modules.contains_key(p))
    }

    /// Every module `m` names, other than itself and its own descendants' tests.
    fn edges(&self, m: &[String], file: &Path) -> BTreeSet<Vec<String>> {
        let text = without_tests(&std::fs::read_to_string(file).unwrap());
        let children: Vec<String> = self
            .modules
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect();
        let mut out = BTreeSet::new();
        for path in paths(&text) {
            let absolute = match path.first().map(String::as_str) {
                Some("crate") => path[1..].to_vec(),
                Some("super") => {
                    let ups = path.iter().take_while(|s| *s == "super").count();
                    // A `mod.rs` is its directory's module: `super` is the directory above.
                    let Some(base) = m.len().checked_sub(ups) else {
                        continue;
                    };
                    let mut p = m[..base].to_vec();
                    p.extend_from_slice(&path[ups..]);
                    p
                }
                Some("self") => [m, &path[1..]].concat(),
                Some(first) if children.iter().any(|c| c == first) => [m, &path[..]].concat(),
                _ => continue,
            };
            let absolute: Vec<String> = absolute.into_iter().filter(|s| s != "*").collect();
            if let Some(target) = self.module_of(&absolute) {
                if !m.starts_with(&target) {
                    out.insert(target);
                }
            }
        }
        out
    }

    /// The circles: strongly connected sets of more than one module.
    fn circles(&self) -> Vec<Vec<String>> {
        let names: Vec<&Vec<String>> = self.modules.keys().collect();
        let index = |m: &Vec<String>| names.iter().position(|n| *n == m).unwrap();
        let graph: Vec<Vec<usize>> = names
            .iter()
            .map(|m| self.edges(m, &self.modules[*m]).iter().map(index).collect())
            .collect();
        strongly_connected(&graph)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                c.into_iter()
                    .map(|i| self.modules[names[i]].display().to_string())
                    .collect()
            })
            .collect()
    }
}

/// The `.rs` files under `dir`, each with its module path; test files are left out.
fn walk(src: &Path, dir: &Path, out: &mut BTreeMap<Vec<String>, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            walk(src, &path, out);
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        let is_test = stem == "tests" || stem.ends_with("_tests");
        let rel = path.parent().unwrap().strip_prefix(src).unwrap();
        let mut m: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        // The crate's roots, and a directory's module file.
        let top = m.is_empty() && matches!(stem, "main" | "lib");
        if !is_test && !top && stem != "mod" {
            m.push(stem.to_string());
        }
        if !is_test && (!top || !out.contains_key(&m)) {
            out.insert(m, path);
        }
    }
}

/// The text before the file's `#[cfg(test)]` module, which comes last by the house's habit.
fn without_tests(text: &str) -> String {
    match text.find("#[cfg(test)]\nmod ") {
        Some(i) => text[..i].to_string(),
        None => text.to_string(),
    }
}

/// The paths the text names, brace groups of `use` spread out: `crate::a::{b, c::d}` gives
/// `crate::a::b` and `crate::a::c::d`. Comments are skipped.
fn paths(text: &str) -> Vec<Vec<String>> {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = i == 0
            || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        if starts && (chars[i].is_alphabetic() || chars[i] == '_') {
            let (mut found, next) = path_at(&chars, i, Vec::new());
            if found.iter().any(|p| p.len() > 1) {
                out.append(&mut found);
                i = next;
                continue;
            }
            i = next.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// Reads a path starting at `i` (after `prefix`), with brace groups; returns the full paths
/// and where it ended.
fn path_at(c: &[char], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    loop {
        let start = i;
        while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
            i += 1;
        }
        // A glob: `super::meta::*` names the module `meta`.
        if i == start && c.get(i) == Some(&'*') {
            i += 1;
        }
        if i > start {
            path.push(c[start..i].iter().collect());
        }
        if c.get(i) == Some(&':') && c.get(i + 1) == Some(&':') {
            i += 2;
            if c.get(i) == Some(&'{') {
                return group(c, i + 1, path);
            }
            continue;
        }
        return (vec![path], i);
    }
}

/// A `{a, b::c, self}` group after `prefix::`.
fn group(c: &[char], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut out = Vec::new();
    loop {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ',') {
            i += 1;
        }
        match c.get(i) {
            None => return (out, i),
            Some('}') => return (out, i + 1),
            _ => {}
        }
        let (mut found, next) = path_at(c, i, prefix.clone());
        for p in &mut found {
            if p.last().is_some_and(|s| s == "self") {
                p.pop();
            }
        }
        out.append(&mut found);
        // Skip `as name` and anything else up to the next item.
        i = next;
        while i < c.len() && c[i] != ',' && c[i] != '}' {
            i += 1;
        }
    }
}

/// Tarjan's strongly connected components.
fn strongly_connected(g: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, g: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &g[v] {
            match s.index[w] {
                None => {
                    visit(w, g, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                c.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(c);
        }
    }
    let n = g.len();
    let mut s = State {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, g, &mut s);
        }
    }
    s.out
}

fn source(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
}

fn no_circles(krate: &str) {
    let c = Crate::read(&source(krate));
    assert!(c.modules.len() > 10, "{krate}: too few modules read");
    let circles = c.circles();
    assert!(
        circles.is_empty(),
        "{krate}: modules that reach back to themselves:\n{}",
        circles
            .iter()
            .map(|c| format!("  {}", c.join(" ~ ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_clis_imports_flow_one_way() {
    no_circles("hallpass-cli");
}

#[test]
fn the_daemons_imports_flow_one_way() {
    no_circles("hallpassd");
}

/// The reader itself: it finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let dir = std::env::temp_dir().join(format!("hp-house-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::{x::{Y, self}, Z};\n").unwrap();
    // A parent and its child may use each other; that is no circle.
    std::fs::write(dir.join("b/mod.rs"), "mod x;\nmod y;\nfn h() { x::f() }\n").unwrap();
    std::fs::write(
        dir.join("b/x.rs"),
        "use super::*;\nfn f() { super::super::a::g() }\n",
    )
    .unwrap();
    std::fs::write(dir.join("b/y.rs"), "use super::x::*;\n").unwrap();
    let c = Crate::read(&dir);
    let circles = c.circles();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(circles.len(), 1, "{circles:?}");
    let mut files: Vec<String> = circles[0]
        .iter()
        .map(|f| Path::new(f).file_name().unwrap().to_string_lossy().into())
        .collect();
    files.sort();
    // `a` uses `b`, which uses its child `x`, which uses `a`; `y` only uses `x`.
    assert_eq!(files, ["a.rs", "mod.rs", "x.rs"]);
}
