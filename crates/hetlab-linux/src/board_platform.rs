//! A platform file from a running board (`hetlab platform from-board`): what the kernel shows
//! of its CPUs, laid over a built-in template for what it does not show.
//!
//! Read from the board: the cpufreq policies (one cluster each: related CPUs, OPP list,
//! transition latency; `sysfs::discover`), each CPU's `cpu_capacity`, its caches
//! (`cpuN/cache/indexK`: level, type, size, ways, line), its core type (the `CPU part` of
//! `/proc/cpuinfo`) and its deepest cpuidle state (taken as the cluster power-down state).
//! Derived: a core type's DMIPS/MHz from `cpu_capacity` and the top frequency (arch_topology's
//! normalisation run backwards). Everything else — OPP voltages, power and leakage, the memory
//! system, thermal, noise — comes from the template, each value marked `TODO` with the reason:
//! a board's sysfs does not show it. Each value's comment says which of the three it is.

use std::path::Path;

use hetlab_core::platform::Platform;
use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table, Value};

use crate::sysfs::{cpu_dir, discover, read_optional, Policy};
use crate::Roots;

/// ARM's core part numbers (`CPU part` in /proc/cpuinfo, MIDR bits 15:4, implementer 0x41) as
/// hetlab's core-type names; Linux arch/arm64/include/asm/cputype.h and
/// arch/arm/include/asm/cputype.h.
const ARM_PARTS: &[(u32, &str)] = &[
    (0xc05, "cortex-a5"),
    (0xc07, "cortex-a7"),
    (0xc08, "cortex-a8"),
    (0xc09, "cortex-a9"),
    (0xc0d, "cortex-a12"),
    (0xc0e, "cortex-a17"),
    (0xc0f, "cortex-a15"),
    (0xd03, "cortex-a53"),
    (0xd04, "cortex-a35"),
    (0xd05, "cortex-a55"),
    (0xd07, "cortex-a57"),
    (0xd08, "cortex-a72"),
    (0xd09, "cortex-a73"),
    (0xd0a, "cortex-a75"),
    (0xd0b, "cortex-a76"),
    (0xd0d, "cortex-a77"),
];

/// One CPU's caches as `cpuN/cache/indexK` shows them.
#[derive(Debug, Default)]
struct Caches {
    l1d: Option<CacheLevel>,
    l1i: Option<CacheLevel>,
    l2: Option<CacheLevel>,
    /// Attributes that hold no plausible value, each with the reason: left out, the
    /// template's value stays (marked TODO) rather than the whole board being refused.
    problems: Vec<String>,
}

/// Cache geometry as ARM's CCSIDR can describe it (sysfs's cacheinfo reads it from there or
/// from the device tree): up to 1024 ways, lines of 16..=2048 bytes; sizes 1 KiB to 1 GiB.
const MAX_WAYS: u32 = 1024;
const LINE_BYTES: std::ops::RangeInclusive<u64> = 16..=2048;
const CACHE_BYTES: std::ops::RangeInclusive<u64> = 1 << 10..=1 << 30;

/// Largest /proc/cpuinfo read: about 1 KB per CPU, far beyond the CPUs a platform may have.
const CPUINFO_LIMIT: u64 = 1 << 20;

#[derive(Debug, Clone, Copy)]
struct CacheLevel {
    bytes: u64,
    ways: Option<u32>,
    line_bytes: Option<u64>,
}

/// A cpuidle state: name, exit latency and target residency, µs.
#[derive(Debug)]
struct IdleState {
    index: usize,
    name: String,
    latency_us: u64,
    residency_us: u64,
}

/// What the board shows of one cpufreq policy.
struct BoardCluster {
    policy: Policy,
    core_type: String,
    /// How the core type was found (for its comment).
    core_type_source: String,
    capacity: Option<u32>,
    /// Why `cpu_capacity` was not used, if the board shows one that is not a capacity.
    capacity_problem: Option<String>,
    caches: Caches,
    deepest_idle: Option<IdleState>,
}

/// The platform TOML for the board under `roots`, over the built-in `template`.
pub fn from_board(roots: &Roots, template: &str) -> Result<String, String> {
    let text = template_text(template)?;
    let base = Platform::from_toml(template, text)?;
    let mut board: Vec<BoardCluster> =
        discover(roots)?.into_iter().map(|p| read_cluster(roots, p)).collect::<Result<_, _>>()?;
    // smallest capacity first, as the template's clusters are matched by rank
    board.sort_by_key(|c| (c.capacity.unwrap_or(0), c.policy.related_cpus[0]));
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("template {template}: {e}"))?;
    strip_comments(doc.as_table_mut());
    let tpl = Template::new(template, base, &doc)?;

    doc["name"] = value("board");
    doc["description"] = value(format!("written by hetlab platform from-board over template {template}"));
    note(&mut doc["hz"], &tpl.todo("CONFIG_HZ is not in sysfs (zcat /proc/config.gz | grep CONFIG_HZ=)"));
    let (clusters, core_types) = board_clusters(&tpl, &board, roots);
    doc["core_types"] = Item::ArrayOfTables(core_types);
    doc["clusters"] = Item::ArrayOfTables(clusters);
    // the template's explicit energy model is not this board's
    doc.remove("energy_model");
    mark_template_sections(&mut doc, &tpl);
    let out = doc.to_string();
    // what comes out must load, or the skeleton is no use
    Platform::from_toml("from-board", &out).map_err(|e| {
        format!("the board's platform does not load over template {template} ({e}); try another --template")
    })?;
    Ok(out)
}

/// The built-in platform `template`'s text.
fn template_text(template: &str) -> Result<&'static str, String> {
    hetlab_core::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == template).map(|(_, t)| *t).ok_or_else(|| {
        let names: Vec<&str> = hetlab_core::platform::BUILTIN_PLATFORMS.iter().map(|(n, _)| *n).collect();
        format!("--template: unknown platform '{template}'; built-in: {}", names.join(", "))
    })
}

/// The template a board's platform is laid over: what a board does not show comes from it,
/// marked TODO.
struct Template<'a> {
    name: &'a str,
    base: Platform,
    /// Its `[[clusters]]` and `[[core_types]]` tables, comments stripped.
    clusters: ArrayOfTables,
    core_types: ArrayOfTables,
    /// Its clusters by capacity, smallest first (a board's cluster of no known core type takes
    /// the one of its rank).
    by_capacity: Vec<usize>,
}

impl<'a> Template<'a> {
    fn new(name: &'a str, base: Platform, doc: &DocumentMut) -> Result<Template<'a>, String> {
        let clusters = doc["clusters"].as_array_of_tables().ok_or("template has no [[clusters]]")?.clone();
        let core_types = doc["core_types"].as_array_of_tables().ok_or("template has no [[core_types]]")?.clone();
        let mut by_capacity: Vec<usize> = (0..base.clusters.len()).collect();
        by_capacity.sort_by_key(|&c| base.cpu_capacity(c));
        Ok(Template { name, base, clusters, core_types, by_capacity })
    }

    /// The comment of a value taken from the template.
    fn todo(&self, what: &str) -> String {
        format!("TODO template {}: {what}", self.name)
    }

    /// The template cluster for the board's cluster of capacity rank `rank`: the one of its
    /// core type, else the one of its rank.
    fn matching_cluster(&self, bc: &BoardCluster, rank: usize) -> usize {
        self.base
            .clusters
            .iter()
            .position(|c| c.core_type == bc.core_type)
            .unwrap_or(self.by_capacity[rank.min(self.by_capacity.len() - 1)])
    }
}

/// The board's clusters, one per policy, and their core types, each over the template's
/// matching cluster and core type for what sysfs does not show.
fn board_clusters(tpl: &Template, board: &[BoardCluster], roots: &Roots) -> (ArrayOfTables, ArrayOfTables) {
    let mut clusters = ArrayOfTables::new();
    let mut core_types = ArrayOfTables::new();
    let dmips = dmips_per_mhz(board);
    for (rank, bc) in board.iter().enumerate() {
        let matched = tpl.matching_cluster(bc, rank);
        let name = if board.len() == tpl.base.clusters.len() {
            tpl.base.clusters[matched].name.clone()
        } else {
            format!("cluster{rank}")
        };
        clusters.push(cluster_table(tpl, bc, matched, name, roots));
        if !core_types.iter().any(|ct| ct["name"].as_str() == Some(bc.core_type.as_str())) {
            core_types.push(core_type_table(tpl, bc, matched, dmips[rank], board));
        }
    }
    (clusters, core_types)
}

/// The board's cluster `name` of policy `bc`, over the template's cluster `matched`: CPUs,
/// transition latency, OPPs, L2 and cluster power-down read from the board, the rest noted as
/// the template's.
fn cluster_table(tpl: &Template, bc: &BoardCluster, matched: usize, name: String, roots: &Roots) -> Table {
    let mut t = tpl.clusters.get(matched).expect("a template cluster").clone();
    let from = format!("cluster '{}'", tpl.base.clusters[matched].name);
    let policy = &bc.policy;
    let at = policy.dir.strip_prefix(&roots.sysfs).unwrap_or(&policy.dir).display().to_string();
    t["name"] = value(name);
    t["core_type"] = value(bc.core_type.clone());
    note(&mut t["core_type"], &bc.core_type_source);
    t["cpus"] = value(int_array(policy.related_cpus.iter().map(|&c| c as i64)));
    note(&mut t["cpus"], &format!("read: {at}/related_cpus"));
    if policy.transition_latency_ns > 0 {
        t["transition_latency_ns"] = value(i64::from(policy.transition_latency_ns));
        note(&mut t["transition_latency_ns"], &format!("read: {at}/cpuinfo_transition_latency"));
    } else {
        note(&mut t["transition_latency_ns"], &tpl.todo("the driver reports no transition latency"));
    }
    set_opps(&mut t, tpl, policy, &tpl.base.clusters[matched].opps, &at, &from);
    set_l2_and_cluster_off(&mut t, tpl, bc);
    for key in ["cci_port", "leakage_mw", "thermal_resistance_c_per_w", "thermal_capacitance_j_per_c"] {
        if t.contains_key(key) {
            note(&mut t[key], &tpl.todo(&format!("{key} of {from}: not shown by a board")));
        }
    }
    t
}

/// The cluster's OPPs: the board's frequencies, each at the template's voltage for it (`voltages`,
/// [kHz, µV]), else at the next frequency up (or its top).
fn set_opps(t: &mut Table, tpl: &Template, policy: &Policy, voltages: &[[u32; 2]], at: &str, from: &str) {
    let mut opps = Array::new();
    let mut guessed = 0;
    for &khz in &policy.opps_khz {
        // the template's voltage at this frequency, else at the next one up (or its top)
        let uv = match voltages.iter().find(|o| o[0] >= khz) {
            Some(o) if o[0] == khz => o[1],
            Some(o) => {
                guessed += 1;
                o[1]
            }
            None => {
                guessed += 1;
                voltages.last().expect("validated")[1]
            }
        };
        opps.push(int_array([i64::from(khz), i64::from(uv)]));
    }
    t["opps"] = value(opps);
    note(
        &mut t["opps"],
        &format!(
            "read: kHz from {at}/{}; {}",
            policy.opps_source,
            tpl.todo(&format!(
                "µV from {from} ({guessed} of {} at a frequency it lacks); voltages are in the device \
                 tree's opp-microvolt, not in sysfs",
                policy.opps_khz.len()
            ))
        ),
    );
}

/// The cluster's L2 from the first CPU's caches, its power-down state from that CPU's deepest
/// cpuidle state (none beyond WFI: no cluster power-down), and the cache attributes that were
/// not usable, as comments.
fn set_l2_and_cluster_off(t: &mut Table, tpl: &Template, bc: &BoardCluster) {
    let cpu0 = bc.policy.related_cpus[0];
    match bc.caches.l2 {
        Some(l2) => {
            t["l2_bytes"] = value(l2.bytes as i64);
            note(&mut t["l2_bytes"], &format!("read: cpu{cpu0}/cache/index*/ (level 2)"));
            if let Some(ways) = l2.ways {
                t["l2_ways"] = value(i64::from(ways));
                note(&mut t["l2_ways"], "read: ways_of_associativity");
            }
        }
        None => note(&mut t["l2_bytes"], &tpl.todo(&format!("cpu{cpu0}/cache shows no usable level-2 cache"))),
    }
    match &bc.deepest_idle {
        Some(s) if s.index > 0 => {
            t["cluster_off_exit_latency_us"] = value(s.latency_us as i64);
            t["cluster_off_target_residency_us"] = value(s.residency_us as i64);
            let read = format!("read: cpu{cpu0}/cpuidle/state{} ('{}'), the deepest state", s.index, s.name);
            note(&mut t["cluster_off_exit_latency_us"], &read);
            note(&mut t["cluster_off_target_residency_us"], &read);
        }
        _ => {
            if t.contains_key("cluster_off_exit_latency_us") {
                t.remove("cluster_off_exit_latency_us");
                t.remove("cluster_off_target_residency_us");
            }
            let reason = format!("cpu{cpu0}/cpuidle shows no state beyond WFI: no cluster power-down");
            t.decor_mut().set_prefix(format!("\n# {reason}\n"));
        }
    }
    if !bc.caches.problems.is_empty() {
        let mut prefix = t.decor().prefix().and_then(|p| p.as_str()).unwrap_or("\n").to_string();
        for problem in &bc.caches.problems {
            prefix += &format!("# {}\n", tpl.todo(&format!("{problem}; not used, the template's value stays")));
        }
        t.decor_mut().set_prefix(prefix);
    }
}

/// The core type of the board's cluster `bc`: the template's of that name, else the template
/// cluster `matched`'s, renamed; DMIPS/MHz derived from the board (`dmips`) and L1 caches read.
fn core_type_table(
    tpl: &Template,
    bc: &BoardCluster,
    matched: usize,
    dmips: Option<u32>,
    board: &[BoardCluster],
) -> Table {
    let template_types = &tpl.core_types;
    let same_name = template_types.iter().position(|ct| ct["name"].as_str() == Some(bc.core_type.as_str()));
    let source = same_name.unwrap_or_else(|| {
        let name = &tpl.base.clusters[matched].core_type;
        template_types.iter().position(|ct| ct["name"].as_str() == Some(name)).expect("validated")
    });
    let mut ct = template_types.get(source).expect("a template core type").clone();
    let source_name = ct["name"].as_str().unwrap_or_default().to_string();
    ct["name"] = value(bc.core_type.clone());
    ct.decor_mut().set_prefix(format!(
        "\n# The microarchitecture figures below are {source_name}'s from template {} ({}): \
         TODO measure them on this board's cores\n",
        tpl.name,
        if same_name.is_some() { "the same core type" } else { "a different core type" }
    ));
    match dmips {
        Some(d) => {
            ct["capacity_dmips_mhz"] = value(i64::from(d));
            note(&mut ct["capacity_dmips_mhz"], "derived: cpu_capacity / cpuinfo_max_freq, the largest at 1024");
        }
        None => {
            let why = board.iter().find_map(|c| c.capacity_problem.clone());
            let why = why.unwrap_or_else(|| "not every cluster shows cpu_capacity".into());
            note(&mut ct["capacity_dmips_mhz"], &tpl.todo(&format!("{why}; not derived")));
        }
    }
    note(&mut ct["dynamic_power_coefficient"], &tpl.todo("the device tree's dynamic-power-coefficient, not in sysfs"));
    set_l1_caches(&mut ct, bc);
    ct
}

/// The core type's L1 caches as the cluster's first CPU shows them.
fn set_l1_caches(ct: &mut Table, bc: &BoardCluster) {
    let cpu0 = bc.policy.related_cpus[0];
    if let Some(l1d) = bc.caches.l1d {
        ct["l1d_bytes"] = value(l1d.bytes as i64);
        note(&mut ct["l1d_bytes"], &format!("read: cpu{cpu0}/cache/index*/ (level 1, Data)"));
        if let Some(line) = l1d.line_bytes {
            ct["line_bytes"] = value(line as i64);
            note(&mut ct["line_bytes"], "read: coherency_line_size");
        }
    }
    if let (Some(l1d), Some(l1i)) = (bc.caches.l1d, bc.caches.l1i) {
        if let (Some(dways), Some(iways), Some(iline)) = (l1d.ways, l1i.ways, l1i.line_bytes) {
            let mut geometry = toml_edit::InlineTable::new();
            geometry.insert("l1i_bytes", (l1i.bytes as i64).into());
            geometry.insert("l1i_ways", i64::from(iways).into());
            geometry.insert("l1i_line_bytes", (iline as i64).into());
            geometry.insert("l1d_ways", i64::from(dways).into());
            ct["caches"] = value(geometry);
            note(&mut ct["caches"], &format!("read: cpu{cpu0}/cache/index*/ (level 1)"));
        }
    }
}

/// What no sysfs shows: whole sections from the template, each marked.
fn mark_template_sections(doc: &mut DocumentMut, tpl: &Template) {
    let sections = [
        ("cci", "the interconnect's clock, latency and read tracker"),
        ("dram", "DRAM latency, bandwidth and energy"),
        ("board", "the power of the rest of the board"),
        ("thermal", "the thermal zones' trips as caps per cluster (see /sys/class/thermal)"),
        ("noise", "OS noise and DRAM latency noise"),
        ("governor_cost", "the cost of a governor's PMC sample"),
        ("pmu", "the PMU's bus-access boundary"),
        ("caches", "the system share of a cluster's L2"),
        ("sensors", "the power sensors' period"),
        ("sched", "the active-migration latency"),
        ("hmp", "the HMP scheduler's thresholds (/sys/kernel/hmp on an HMP kernel)"),
    ];
    for (key, what) in sections {
        if let Some(Item::Table(t)) = doc.get_mut(key) {
            t.decor_mut().set_prefix(format!("\n# {}\n", tpl.todo(&format!("{what}: not shown by a board's sysfs"))));
        }
    }
}

fn read_cluster(roots: &Roots, policy: Policy) -> Result<BoardCluster, String> {
    let cpu = policy.related_cpus[0];
    let (core_type, core_type_source) = match cpu_part(roots, cpu)? {
        Some((0x41, part)) => match ARM_PARTS.iter().find(|(p, _)| *p == part) {
            Some((_, name)) => (name.to_string(), format!("read: /proc/cpuinfo CPU part {part:#x} of cpu{cpu}")),
            None => (
                format!("arm-{part:#x}"),
                format!("read: /proc/cpuinfo CPU part {part:#x}, a part hetlab does not name"),
            ),
        },
        Some((implementer, part)) => (
            format!("cpu-{implementer:#x}-{part:#x}"),
            format!("read: /proc/cpuinfo CPU implementer {implementer:#x} part {part:#x}"),
        ),
        None => (format!("cpu{cpu}-core"), format!("TODO: /proc/cpuinfo names no CPU part for cpu{cpu}")),
    };
    let (capacity, capacity_problem) = match crate::sysfs::cpu_capacity(roots, cpu)? {
        Ok(capacity) => (capacity, None),
        Err(problem) => (None, Some(problem)),
    };
    Ok(BoardCluster {
        capacity,
        capacity_problem,
        caches: read_caches(&cpu_dir(roots).join(format!("cpu{cpu}/cache")), cpu)?,
        deepest_idle: read_idle(&cpu_dir(roots).join(format!("cpu{cpu}/cpuidle")))?,
        core_type,
        core_type_source,
        policy,
    })
}

/// (implementer, part) of `cpu` from /proc/cpuinfo.
fn cpu_part(roots: &Roots, cpu: usize) -> Result<Option<(u32, u32)>, String> {
    let path = roots.proc("cpuinfo");
    if !path.try_exists().unwrap_or(true) {
        return Ok(None);
    }
    let text = crate::infile::read_text(&path, CPUINFO_LIMIT, true)?;
    Ok(part_of(&text, cpu))
}

fn part_of(text: &str, cpu: usize) -> Option<(u32, u32)> {
    let hex = |v: &str| u32::from_str_radix(v.trim().trim_start_matches("0x"), 16).ok();
    for block in text.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|l| l.split_once(':').filter(|(k, _)| k.trim() == name).map(|(_, v)| v.trim()))
        };
        if field("processor").and_then(|p| p.parse::<usize>().ok()) == Some(cpu) {
            return Some((hex(field("CPU implementer")?)?, hex(field("CPU part")?)?));
        }
    }
    None
}

fn read_caches(dir: &Path, cpu: usize) -> Result<Caches, String> {
    let mut caches = Caches::default();
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(caches) };
    let mut entries: Vec<_> =
        entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("index")).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let d = entry.path();
        let index = entry.file_name().to_string_lossy().to_string();
        let field = |name: &str| read_optional(&d.join(name));
        let (Some(level), Some(kind), Some(size)) = (field("level")?, field("type")?, field("size")?) else { continue };
        let mut problem = |name: &str, text: &str, want: &str| {
            caches.problems.push(format!("cpu{cpu}/cache/{index}/{name} holds '{text}', not {want}"));
        };
        let Some(bytes) = parse_size(&size).filter(|b| CACHE_BYTES.contains(b)) else {
            problem("size", &size, "a cache size of 1K..1G (e.g. 32K)");
            continue;
        };
        let ways = match field("ways_of_associativity")? {
            Some(w) => match w.parse::<u32>() {
                Ok(n) if (1..=MAX_WAYS).contains(&n) => Some(n),
                _ => {
                    problem("ways_of_associativity", &w, &format!("a number of ways in 1..={MAX_WAYS}"));
                    None
                }
            },
            None => None,
        };
        let line_bytes = match field("coherency_line_size")? {
            Some(l) => match l.parse::<u64>() {
                Ok(n) if n.is_power_of_two() && LINE_BYTES.contains(&n) => Some(n),
                _ => {
                    problem("coherency_line_size", &l, "a power of two in 16..=2048 bytes");
                    None
                }
            },
            None => None,
        };
        // sets = size / (ways x line) must be whole: otherwise one of the three is wrong
        if let (Some(w), Some(l)) = (ways, line_bytes) {
            if bytes % (u64::from(w) * l) != 0 {
                problem("size", &size, &format!("a whole number of sets of {w} ways x {l} bytes"));
                continue;
            }
        }
        let cache = CacheLevel { bytes, ways, line_bytes };
        match (level.as_str(), kind.as_str()) {
            ("1", "Data") => caches.l1d = Some(cache),
            ("1", "Instruction") => caches.l1i = Some(cache),
            ("2", "Unified" | "Data") => caches.l2 = Some(cache),
            _ => {}
        }
    }
    Ok(caches)
}

/// A cache `size` attribute: "32K", "2048K", "1M".
fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "" => n,
        "K" => n << 10,
        "M" => n << 20,
        _ => return None,
    })
}

/// The deepest cpuidle state of a CPU.
fn read_idle(dir: &Path) -> Result<Option<IdleState>, String> {
    let mut deepest = None;
    for index in 0..16 {
        let d = dir.join(format!("state{index}"));
        let number = |name: &str| Ok::<_, String>(read_optional(&d.join(name))?.and_then(|v| v.parse::<u64>().ok()));
        let (Some(name), Some(latency_us), Some(residency_us)) =
            (read_optional(&d.join("name"))?, number("latency")?, number("residency")?)
        else {
            break;
        };
        deepest = Some(IdleState { index, name, latency_us, residency_us });
    }
    Ok(deepest)
}

/// Per cluster: DMIPS/MHz from `cpu_capacity` and the top frequency (capacity ∝ DMIPS/MHz ×
/// max MHz, the largest at 1024), if every cluster shows its capacity.
fn dmips_per_mhz(board: &[BoardCluster]) -> Vec<Option<u32>> {
    let per_mhz: Option<Vec<f64>> = board
        .iter()
        .map(|c| c.capacity.map(|cap| f64::from(cap) / f64::from(c.policy.cpuinfo_max_khz.max(1))))
        .collect();
    match per_mhz {
        Some(v) => {
            let top = v.iter().copied().fold(0.0, f64::max);
            v.iter().map(|x| (top > 0.0).then(|| (x / top * 1024.0).round() as u32)).collect()
        }
        None => vec![None; board.len()],
    }
}

fn int_array(values: impl IntoIterator<Item = i64>) -> Array {
    values.into_iter().map(Value::from).collect()
}

/// Puts `comment` after a value.
fn note(item: &mut Item, comment: &str) {
    if let Some(v) = item.as_value_mut() {
        v.decor_mut().set_suffix(format!("  # {comment}"));
    }
}

/// Drops the template's comments: they cite the template's sources, not the board's.
fn strip_comments(table: &mut Table) {
    table.decor_mut().clear();
    for (mut key, item) in table.iter_mut() {
        key.leaf_decor_mut().clear();
        match item {
            Item::Value(v) => v.decor_mut().clear(),
            Item::Table(t) => strip_comments(t),
            Item::ArrayOfTables(a) => a.iter_mut().for_each(strip_comments),
            Item::None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysfs::fake::exynos5422;

    #[test]
    fn cache_sizes_read_as_the_kernel_prints_them() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("12Q"), None);
    }

    #[test]
    fn the_fake_exynos5422_becomes_a_platform_that_loads() {
        let t = exynos5422("from-board");
        let text = from_board(&t.roots(), "exynos5422").unwrap();
        let p = Platform::from_toml("board.toml", &text).unwrap();
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].cpus, [0, 1, 2, 3]);
        assert_eq!(p.clusters[1].opps.len(), crate::sysfs::fake::BIG_KHZ.len());
        // capacity 462 at 1.4 GHz against 1024 at 2 GHz: 1024 x (462 / 1.4) / (1024 / 2.0)
        assert_eq!(p.core_types.iter().find(|c| c.name == p.clusters[0].core_type).unwrap().capacity_dmips_mhz, 660);
        assert!(text.contains("read: devices/system/cpu/cpufreq/policy0/related_cpus"), "{text}");
        assert!(text.contains("TODO template exynos5422"), "{text}");
        let e = from_board(&t.roots(), "nope").unwrap_err();
        assert!(e.contains("unknown platform 'nope'"), "{e}");
    }
}
