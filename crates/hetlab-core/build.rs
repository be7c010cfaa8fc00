//! Embeds the built-in platforms and workloads: every `data/platforms/*.toml` and
//! `data/workloads/*.toml` of the repository becomes an entry (name = file stem) of
//! `BUILTIN_PLATFORMS` / `BUILTIN_WORKLOADS`, sorted by name. Adding a file is all it takes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            println!("cargo:rerun-if-changed={}", p.display());
            let stem = p.file_stem().expect("a file name").to_string_lossy().into_owned();
            (stem, p.canonicalize().expect("an existing file"))
        })
        .collect();
    found.sort();
    found
}

fn table(name: &str, doc: &str, files: &[(String, PathBuf)]) -> String {
    let mut out = format!("/// {doc}\npub const {name}: &[(&str, &str)] = &[\n");
    for (stem, path) in files {
        writeln!(out, "    ({stem:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    out
}

fn main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let code = table(
        "BUILTIN_PLATFORMS",
        "Platforms shipped with hetlab (data/platforms/*.toml), by name.",
        &entries(&data.join("platforms")),
    ) + &table(
        "BUILTIN_WORKLOADS",
        "Named workloads shipped with hetlab (data/workloads/*.toml), by name.",
        &entries(&data.join("workloads")),
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
