//! hetlab-core: the model of a big.LITTLE SoC. No I/O beyond parsing.
//!
//! Map (each module owns one thing; the engine composes them; no module depends on another in
//! a cycle, checked by a test below):
//! - inputs: [`platform`] (SoC descriptions, `data/platforms/*.toml`; `platform/validate.rs`
//!   checks each section), [`workload`] (what runs: the model; `workload/file.rs` reads
//!   `data/workloads/*.toml`, `workload/generators.rs` the generators), [`rtapp`] (rt-app JSON
//!   files: `rtapp/json.rs` the dialect, the other files rt-app's model), [`measured`] (profiles
//!   fitted from a cache simulator), [`input`] (TOML errors as one line);
//! - [`model`]: the mechanisms — caches, CCI, DRAM, power, the energy account, thermal, idle;
//! - [`sched`]: placement behind the `Placement` seam, CFS run queues, PELT;
//! - [`kernel`]: the kernel's own work (OS jitter, kernel threads);
//! - [`governor`]: DVFS policies behind the `PolicyView` seam, each owning its tunables;
//! - [`counters`]: the PMU vocabulary and the anti-snoop features, shared with the board;
//! - [`engine`]: the event loop composing all of the above; [`random`] its seeded stream;
//! - outputs: [`result`] (run summary, time series), [`trace`] (ftrace text);
//! - [`tree`]: decision trees (the anti-snoop model).

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
pub mod workload;

/// The files of data/ embedded by build.rs.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}

#[cfg(test)]
mod layering {
    //! The crate's modules depend on each other without a cycle (checked on the sources).

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
}
