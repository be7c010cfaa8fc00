//! hetlab-core: the model of a big.LITTLE SoC. No I/O beyond parsing.
//!
//! Map (each module owns one thing; the engine composes them; no module depends on another in
//! a cycle, and no file references the files of its folder in a circle but the scheduling
//! classes', checked by the tests below):
//! - inputs: [`platform`] (SoC descriptions, `data/platforms/*.toml`; `platform/validate.rs`
//!   checks each section), [`workload`] (what runs: the model; `workload/file.rs` reads
//!   `data/workloads/*.toml`, `workload/generators.rs` the generators), [`rtapp`] (rt-app JSON
//!   files: `rtapp/json.rs` the dialect, the other files rt-app's model), [`measured`] (profiles
//!   fitted from a cache simulator), [`input`] (TOML errors as one line);
//! - [`model`]: the mechanisms — caches, CCI, DRAM, power, the energy account, thermal, idle;
//! - [`sched`]: placement behind the `Placement` seam (the policies listed in `sched::registry`),
//!   CFS run queues and task groups, the RT and deadline classes, PELT, the energy model EAS
//!   reads;
//! - [`kernel`]: the kernel's own work (OS jitter, kernel threads, RCU) and its idle policy (the
//!   menu governor);
//! - [`governor`]: DVFS policies behind the `PolicyView` seam, each owning its tunables;
//! - [`counters`]: the PMU vocabulary and the anti-snoop features, shared with the board;
//! - [`engine`]: the event loop composing all of the above; [`random`] its seeded stream;
//! - outputs: [`result`] (run summary, time series), [`trace`] (the events; ftrace text, LISA
//!   platform info, run intervals);
//! - [`tree`]: decision trees (the anti-snoop model); [`tree_blob`] the same trees as the
//!   kernel module's integer tests (`kmod/`).

pub mod counters;
pub mod engine;
pub mod governor;
pub mod input;
pub mod isa;
pub mod kernel;
pub mod measured;
pub mod model;
pub mod platform;
pub mod random;
pub mod result;
pub mod rtapp;
pub mod sched;
pub mod sweep;
pub mod trace;
pub mod tree;
pub mod tree_blob;
pub mod workload;

/// The files of data/ embedded by build.rs.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

#[cfg(test)]
mod layering {
    //! The crate's modules depend on each other without a cycle, and the files of each folder
    //! reference each other without a circle (checked on the sources).

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// `crate::X` references in every file under `dir`, keyed by the top-level module the file
    /// belongs to.
    fn references(dir: &Path, module: Option<&str>, graph: &mut BTreeMap<String, BTreeSet<String>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let owner = module.map(str::to_string).unwrap_or_else(|| stem.clone());
            if path.is_dir() {
                references(&path, Some(&owner), graph);
                continue;
            }
            if owner == "lib" || path.extension().is_none_or(|x| x != "rs") || stem == "tests" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let deps = graph.entry(owner.clone()).or_default();
            for (i, _) in text.match_indices("crate::") {
                let name: String = text[i + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != owner {
                    deps.insert(name);
                }
            }
        }
    }

    #[test]
    fn modules_form_no_cycle() {
        let mut graph = BTreeMap::new();
        references(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), None, &mut graph);
        assert!(graph.contains_key("engine") && graph["engine"].contains("sched"), "{graph:?}");
        // depth-first search for a back edge
        fn visit<'g>(
            m: &'g str,
            graph: &'g BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<&'g str>,
            done: &mut BTreeSet<&'g str>,
        ) {
            if done.contains(m) {
                return;
            }
            assert!(!path.contains(&m), "module cycle: {} -> {m}", path.join(" -> "));
            path.push(m);
            for d in graph.get(m).into_iter().flatten() {
                visit(d, graph, path, done);
            }
            path.pop();
            done.insert(m);
        }
        let mut done = BTreeSet::new();
        for m in graph.keys() {
            visit(m, &graph, &mut Vec::new(), &mut done);
        }
    }

    /// The one circle allowed between files of a folder: the scheduling classes of `sched/`,
    /// which use each other's run queues and rules as the kernel's classes do through
    /// kernel/sched/sched.h (fair.c, rt.c and deadline.c: what the higher classes leave CFS,
    /// the CPU a lower class may take).
    const SCHED_CLASSES: (&str, &[&str]) = ("sched", &["cfs", "rt", "deadline"]);

    /// A file's source without comment lines and without its inline `#[cfg(test)] mod` blocks
    /// (tests may reach anywhere).
    fn production_code(text: &str) -> String {
        let mut out = String::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let opens_test_mod = |l: &str| {
                let l = l.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
                l.starts_with("mod ") && l.ends_with('{')
            };
            if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|l| opens_test_mod(l)) {
                for l in lines.by_ref() {
                    if l == "}" {
                        break;
                    }
                }
                continue;
            }
            if !line.trim_start().starts_with("//") {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// The module paths `text` refers to (`crate::a::b`, `super::x`, `super::{x, y::z}`,
    /// `self::x`), each resolved from the module `module` and cut to its first segment past
    /// the prefix.
    fn referenced_paths(text: &str, module: &[String]) -> Vec<Vec<String>> {
        let is_ident = |c: char| c.is_alphanumeric() || c == '_';
        let ident = |s: &str| s.chars().take_while(|&c| is_ident(c)).collect::<String>();
        let mut out = Vec::new();
        for (i, _) in text.match_indices("::") {
            // the start of a path: `crate`, `super` or `self` just before, not after another `::`
            let head: String = text[..i].chars().rev().take_while(|&c| is_ident(c)).collect();
            let head: String = head.chars().rev().collect();
            let before = &text[..i - head.len()];
            if !matches!(head.as_str(), "crate" | "super" | "self")
                || before.ends_with("::")
                || before.chars().next_back().is_some_and(is_ident)
            {
                continue;
            }
            let mut base: Vec<String> = if head == "crate" { Vec::new() } else { module.to_vec() };
            if head == "super" {
                base.pop();
            }
            let mut rest = &text[i + 2..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let firsts: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => {
                    // the first segment of each item of the group, at its top level
                    let (mut depth, mut items, mut item) = (0, Vec::new(), String::new());
                    for c in group.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                            _ => {}
                        }
                        if depth == 0 && c != ',' {
                            item.push(c);
                        }
                    }
                    items.push(item);
                    items.iter().map(|it| ident(it.trim_start())).collect()
                }
                None => vec![ident(rest)],
            };
            for first in firsts.into_iter().filter(|f| !f.is_empty()) {
                let mut path = base.clone();
                path.push(first);
                out.push(path);
            }
        }
        out
    }

    /// Per folder (its module path joined by `/`, the crate root `""`), its files' and
    /// subfolders' references to each other: `x` -> `y` when something in `x` names the
    /// module `y` of the same folder.
    fn folder_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
        fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    files(&path, out);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    out.push(path);
                }
            }
        }
        let mut all = Vec::new();
        files(src, &mut all);
        let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for path in all {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            let text = production_code(&std::fs::read_to_string(&path).unwrap());
            for target in referenced_paths(&text, &module) {
                let k = module.iter().zip(&target).take_while(|(a, b)| a == b).count();
                if k == module.len() || k == target.len() {
                    continue; // a module's own or its children's, or an ancestor
                }
                let folder = src.join(module[..k].join("/"));
                let (from, to) = (&module[k], &target[k]);
                let is_module = folder.join(format!("{to}.rs")).is_file() || folder.join(to).is_dir();
                if is_module {
                    graphs
                        .entry(module[..k].join("/"))
                        .or_default()
                        .entry(from.clone())
                        .or_default()
                        .insert(to.clone());
                }
            }
        }
        graphs
    }

    #[test]
    fn files_of_a_folder_form_no_circle() {
        let mut graphs = folder_graphs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        // the reading is not blind: the classes do use each other, a policy its helpers
        assert!(graphs["sched"]["cfs"].contains("rt") && graphs["sched"]["smp"].contains("select"), "{graphs:?}");
        let (folder, classes) = SCHED_CLASSES;
        for (from, to) in graphs.get_mut(folder).unwrap() {
            if classes.contains(&from.as_str()) {
                to.retain(|t| !classes.contains(&t.as_str()));
            }
        }
        for (folder, graph) in graphs.iter() {
            // depth-first search for a back edge
            fn visit<'g>(
                folder: &str,
                f: &'g str,
                graph: &'g BTreeMap<String, BTreeSet<String>>,
                path: &mut Vec<&'g str>,
                done: &mut BTreeSet<&'g str>,
            ) {
                if done.contains(f) {
                    return;
                }
                assert!(!path.contains(&f), "circle between the files of {folder}/: {} -> {f}", path.join(" -> "));
                path.push(f);
                for t in graph.get(f).into_iter().flatten() {
                    visit(folder, t, graph, path, done);
                }
                path.pop();
                done.insert(f);
            }
            let mut done = BTreeSet::new();
            for f in graph.keys() {
                visit(folder, f, graph, &mut Vec::new(), &mut done);
            }
        }
    }
}
