//! `hetlab platform from-dt`: a platform skeleton from a device tree's CPU description (read by
//! [`crate::dts`]): the clusters of `/cpus/cpu-map`, each CPU's `capacity-dmips-mhz`,
//! `dynamic-power-coefficient`, caches (`i-cache-*`, `d-cache-*`, `next-level-cache`), its
//! `operating-points-v2` table (kHz, target µV, `clock-latency-ns`) and its idle states:
//! `cpu-idle-states`, or PSCI's power-domain hierarchy (`power-domains` -> the domain's
//! `domain-idle-states`, then its parent domain's: the cluster's), each state's level from
//! `arm,psci-suspend-param` (the kernel's exit latency is entry + exit, its target residency
//! `min-residency-us`; the platform keeps one state per level, the first).
//! A cpu-map cluster whose CPUs name different frequency domains (`qcom,freq-domain`: one DynamIQ
//! cluster, several cpufreq policies, as Qualcomm's SoCs) becomes one cluster per domain: hetlab's
//! clusters are DVFS domains.
//! Every value's comment names the file and line it came from; what the tree does not give is
//! listed in [`Skeleton::missing`], for the caller to print, and left out of the text.

use std::fmt::Write as _;
use std::path::Path;

use crate::dts::{self, Node};

pub struct Skeleton {
    /// Platform TOML: `[[core_types]]` and `[[clusters]]` tables (not a whole platform: the
    /// memory system, power beyond the DT's coefficient and thermal are for the author).
    pub toml: String,
    /// What the tree did not give, one line each.
    pub missing: Vec<String>,
    /// What the reader skipped (C headers).
    pub notes: Vec<String>,
}

/// One cluster: its name in the cpu-map (or its frequency domain's), where that is, and its CPU
/// nodes with their logical numbers.
struct Cluster<'a> {
    name: String,
    source: &'static str,
    at: dts::Loc,
    cpus: Vec<(usize, &'a Node)>,
}

/// The `qcom,freq-domain` a CPU names (`<&cpufreq_hw N>`), as written, and where.
fn freq_domain(cpu: &Node) -> Option<(String, dts::Loc)> {
    let prop = cpu.prop("qcom,freq-domain")?;
    let cells: Vec<String> = prop
        .values
        .iter()
        .flat_map(|v| match v {
            dts::Value::Cells(cells) => cells
                .iter()
                .map(|c| match c {
                    dts::Cell::Num(n) => n.to_string(),
                    dts::Cell::Ref(r) | dts::Cell::Symbol(r) => r.clone(),
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    Some((cells.join(" "), prop.at.clone()))
}

/// Each cluster split by its CPUs' frequency domains where they name more than one; a domain's
/// cluster is named after the cpu-map cluster and the domain's last cell (`cluster0-fd3`).
fn by_freq_domain(clusters: Vec<Cluster<'_>>) -> Vec<Cluster<'_>> {
    let mut out = Vec::new();
    for cl in clusters {
        let domains: Vec<Option<(String, dts::Loc)>> = cl.cpus.iter().map(|(_, n)| freq_domain(n)).collect();
        let keys: Vec<Option<&String>> = domains.iter().map(|d| d.as_ref().map(|(k, _)| k)).collect();
        if keys.iter().all(|k| *k == keys[0]) {
            out.push(cl);
            continue;
        }
        let mut split: Vec<(Option<&String>, Cluster)> = Vec::new();
        for ((i, n), d) in cl.cpus.iter().zip(&domains) {
            let key = d.as_ref().map(|(k, _)| k);
            match split.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => c.cpus.push((*i, *n)),
                None => {
                    let suffix = key.and_then(|k| k.rsplit(' ').next()).unwrap_or("none");
                    let at = d.as_ref().map_or(cl.at.clone(), |(_, at)| at.clone());
                    let name = format!("{}-fd{suffix}", cl.name);
                    split.push((key, Cluster { name, source: "qcom,freq-domain", at, cpus: vec![(*i, *n)] }));
                }
            }
        }
        out.extend(split.into_iter().map(|(_, c)| c));
    }
    out
}

pub fn from_dt(path: &Path) -> Result<Skeleton, String> {
    let (root, notes) = dts::read(path)?;
    let cpus = root.child("cpus").ok_or_else(|| format!("{}: no /cpus node", path.display()))?;
    // Linux numbers the CPUs in the order of the /cpus nodes (the boot CPU first)
    let cpu_nodes: Vec<&Node> =
        cpus.children.iter().filter(|c| c.strings("device_type").iter().any(|t| t == "cpu")).collect();
    if cpu_nodes.is_empty() {
        return Err(format!("{}: /cpus has no node with device_type = \"cpu\"", path.display()));
    }
    let mut missing = Vec::new();
    let clusters = match cpus.child("cpu-map") {
        Some(map) => by_freq_domain(clusters_of(map, &cpu_nodes, &mut missing)),
        None => {
            missing.push("/cpus/cpu-map: absent; one cluster per operating-points-v2 table".into());
            by_opp_table(&cpu_nodes)
        }
    };
    let mut toml = format!("# Skeleton from {} by `hetlab platform from-dt`.\n", path.display());
    let mut types: Vec<String> = Vec::new();
    for cl in &clusters {
        let cpu = cl.cpus[0].1;
        let name = core_type(cpu);
        if !types.contains(&name) {
            types.push(name.clone());
            core_type_table(&mut toml, &name, cpu, &mut missing);
        }
    }
    for cl in &clusters {
        cluster_table(&mut toml, cl, &root, &mut missing);
    }
    Ok(Skeleton { toml, missing, notes })
}

fn core_type(cpu: &Node) -> String {
    let c = cpu.strings("compatible").into_iter().next().unwrap_or_else(|| "unknown".into());
    c.split_once(',').map_or(c.clone(), |(_, model)| model.to_string())
}

/// The clusters of a cpu-map, in its order (sockets and nested clusters flattened).
fn clusters_of<'a>(map: &Node, cpu_nodes: &[&'a Node], missing: &mut Vec<String>) -> Vec<Cluster<'a>> {
    let mut out = Vec::new();
    for child in &map.children {
        let cores: Vec<&Node> = child.children.iter().filter(|c| c.name.starts_with("core")).collect();
        if cores.is_empty() {
            out.extend(clusters_of(child, cpu_nodes, missing));
            continue;
        }
        let mut cpus = Vec::new();
        for core in cores {
            let threads: Vec<&Node> = core.children.iter().filter(|t| t.name.starts_with("thread")).collect();
            let leaves = if threads.is_empty() { vec![core] } else { threads };
            for leaf in leaves {
                for label in leaf.refs("cpu") {
                    match cpu_nodes.iter().position(|n| n.labels.contains(&label)) {
                        Some(i) => cpus.push((i, cpu_nodes[i])),
                        None => missing.push(format!("{}: cpu = <&{label}> names no CPU node", leaf.at)),
                    }
                }
            }
        }
        if !cpus.is_empty() {
            out.push(Cluster { name: child.name.clone(), source: "cpu-map", at: child.at.clone(), cpus });
        }
    }
    out
}

fn by_opp_table<'a>(cpu_nodes: &[&'a Node]) -> Vec<Cluster<'a>> {
    let mut out: Vec<(Vec<String>, Cluster<'a>)> = Vec::new();
    for (i, n) in cpu_nodes.iter().enumerate() {
        let key = n.refs("operating-points-v2");
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => c.cpus.push((i, n)),
            None => {
                let name = format!("cluster{}", out.len());
                out.push((key, Cluster { name, source: "operating-points-v2", at: n.at.clone(), cpus: vec![(i, n)] }))
            }
        }
    }
    out.into_iter().map(|(_, c)| c).collect()
}

/// `key = value  # file:line`, or a missing line when the property is absent.
fn field(toml: &mut String, node: &Node, key: &str, prop: &str, missing: &mut Vec<String>) {
    match (node.num(prop), node.prop(prop)) {
        (Some(v), Some(p)) => {
            let _ = writeln!(toml, "{key} = {v}  # {prop}, {}", p.at);
        }
        _ => missing.push(format!("{} ({}): no {prop} (for {key})", node.name, node.at)),
    }
}

fn core_type_table(toml: &mut String, name: &str, cpu: &Node, missing: &mut Vec<String>) {
    let at = cpu.prop("compatible").map_or(&cpu.at, |p| &p.at);
    let _ = writeln!(toml, "\n[[core_types]]\nname = \"{name}\"  # compatible, {at}");
    field(toml, cpu, "capacity_dmips_mhz", "capacity-dmips-mhz", missing);
    field(toml, cpu, "dynamic_power_coefficient", "dynamic-power-coefficient", missing);
    field(toml, cpu, "l1d_bytes", "d-cache-size", missing);
    field(toml, cpu, "line_bytes", "d-cache-line-size", missing);
    // the L1 geometry a cache simulator wants: `caches = { ... }` once all four are known
    let ways = |size: &str, sets: &str, line: &str| {
        cpu.num(size).zip(cpu.num(sets).zip(cpu.num(line))).and_then(|(s, (n, l))| s.checked_div(n * l))
    };
    let l1d_ways = ways("d-cache-size", "d-cache-sets", "d-cache-line-size");
    let l1i_ways = ways("i-cache-size", "i-cache-sets", "i-cache-line-size");
    match (cpu.num("i-cache-size"), l1i_ways, cpu.num("i-cache-line-size"), l1d_ways) {
        (Some(ib), Some(iw), Some(il), Some(dw)) => {
            let at = cpu.prop("i-cache-size").map_or(&cpu.at, |p| &p.at);
            let _ = writeln!(
                toml,
                "# i-cache-size, i-cache-line-size from {at} on; the ways DERIVED: size / (sets x line)\n\
                 caches = {{ l1i_bytes = {ib}, l1i_ways = {iw}, l1i_line_bytes = {il}, l1d_ways = {dw} }}"
            );
        }
        _ => missing.push(format!("{} ({}): no i-cache-*/d-cache-sets (for caches)", cpu.name, cpu.at)),
    }
}

fn cluster_table(toml: &mut String, cl: &Cluster, root: &Node, missing: &mut Vec<String>) {
    let cpu = cl.cpus[0].1;
    let ids: Vec<String> = cl.cpus.iter().map(|(i, _)| i.to_string()).collect();
    let _ = writeln!(
        toml,
        "\n[[clusters]]\nname = \"{}\"  # {}, {}\ncore_type = \"{}\"\ncpus = [{}]  # the order of the /cpus nodes",
        cl.name,
        cl.source,
        cl.at,
        core_type(cpu),
        ids.join(", ")
    );
    next_level_caches(toml, cpu, root, missing);
    opp_table(toml, cpu, root, missing);
    idle_states(toml, cl, root, missing);
    // one cluster, one set of idle states: say where a CPU of it has others
    let first = idle_state_labels(cpu, root, &mut Vec::new());
    for (_, other) in &cl.cpus[1..] {
        let theirs = idle_state_labels(other, root, &mut Vec::new());
        if theirs != first {
            missing.push(format!(
                "{} ({}): idle states {} differ from {}'s {} (the cluster takes the first CPU's)",
                other.name,
                other.at,
                theirs.join(", "),
                cpu.name,
                first.join(", ")
            ));
        }
    }
}

fn next_level_caches(toml: &mut String, cpu: &Node, root: &Node, missing: &mut Vec<String>) {
    let mut at = cpu;
    while let Some(label) = at.refs("next-level-cache").into_iter().next() {
        let Some(cache) = root.find_label(&label) else {
            missing.push(format!("{}: next-level-cache = <&{label}> names no node", at.at));
            return;
        };
        let level = cache.num("cache-level").unwrap_or(2);
        let key = format!("l{level}");
        match cache.prop("cache-size").and(cache.num("cache-size")) {
            Some(bytes) if level == 2 => {
                let _ = writeln!(toml, "{key}_bytes = {bytes}  # cache-size, {}", cache.at);
            }
            Some(bytes) => {
                let _ = writeln!(toml, "# {key}: {bytes} bytes (cache-size, {}); no platform key for it", cache.at);
                at = cache;
                continue;
            }
            None => missing.push(format!("{} ({}): no cache-size (for {key}_bytes)", cache.name, cache.at)),
        }
        let sets_bytes = cache.num("cache-sets").zip(cache.num("cache-line-size")).map(|(n, l)| n * l);
        if let Some(ways) = cache.num("cache-size").zip(sets_bytes).and_then(|(s, b)| s.checked_div(b)) {
            let _ = writeln!(toml, "{key}_ways = {ways}  # DERIVED: cache-size / (cache-sets x cache-line-size)");
        }
        at = cache;
    }
    if at.name == cpu.name {
        missing.push(format!("{} ({}): no next-level-cache (l2_bytes)", cpu.name, cpu.at));
    }
}

fn opp_table(toml: &mut String, cpu: &Node, root: &Node, missing: &mut Vec<String>) {
    let Some(table) = cpu.refs("operating-points-v2").first().and_then(|l| root.find_label(l)) else {
        let why = match freq_domain(cpu) {
            Some((domain, _)) => format!("its frequency domain <{domain}> takes its table from the firmware"),
            None => "no operating-points-v2 table".into(),
        };
        missing.push(format!("{} ({}): {why} (opps, transition_latency_ns)", cpu.name, cpu.at));
        return;
    };
    let mut opps = Vec::new();
    let mut latency_ns = 0;
    for opp in table.children.iter().filter(|o| o.prop("opp-hz").is_some()) {
        let hz = opp.nums("opp-hz").map(|c| c.iter().fold(0u64, |acc, &x| (acc << 32) | x));
        match (hz, opp.nums("opp-microvolt").and_then(|v| v.first().copied())) {
            (Some(hz), Some(uv)) => opps.push((hz / 1000, uv, opp.at.clone(), opp.prop("turbo-mode").is_some())),
            _ => missing.push(format!("{} ({}): opp-hz or opp-microvolt not numbers", opp.name, opp.at)),
        }
        latency_ns = latency_ns.max(opp.num("clock-latency-ns").unwrap_or(0));
    }
    opps.sort_by_key(|o| o.0);
    if latency_ns > 0 {
        let _ = writeln!(toml, "transition_latency_ns = {latency_ns}  # the largest clock-latency-ns, {}", table.at);
    } else {
        missing.push(format!("{} ({}): no clock-latency-ns (transition_latency_ns)", table.name, table.at));
    }
    let _ = writeln!(toml, "# [kHz, µV]: opp-hz and the target of opp-microvolt, {}", table.name);
    toml.push_str("opps = [\n");
    for (khz, uv, at, turbo) in &opps {
        let turbo = if *turbo { " (turbo-mode)" } else { "" };
        let _ = writeln!(toml, "  [{khz}, {uv}],  # {at}{turbo}");
    }
    toml.push_str("]\n");
}

/// A CPU's idle states: `cpu-idle-states`, or, where the tree describes PSCI's OS-initiated
/// hierarchy (Documentation/devicetree/bindings/power/domain-idle-state.yaml, arm/psci.yaml),
/// the `domain-idle-states` of the power domain its `power-domains` names and of that domain's
/// parents (the CPU's own domain first, then the cluster's).
fn idle_state_labels(cpu: &Node, root: &Node, missing: &mut Vec<String>) -> Vec<String> {
    let labels = cpu.refs("cpu-idle-states");
    if !labels.is_empty() {
        return labels;
    }
    let mut labels = Vec::new();
    for pd in power_domains(cpu, root, missing) {
        labels.extend(root.find_label(&pd).map_or(Vec::new(), |n| n.refs("domain-idle-states")));
    }
    labels
}

/// The PSCI power domains above `cpu` (its `power-domains`, then each one's parent), by label.
fn power_domains(cpu: &Node, root: &Node, missing: &mut Vec<String>) -> Vec<String> {
    let mut chain = Vec::new();
    let mut domain = cpu.refs("power-domains").into_iter().next();
    // a parent chain is short (CPU, cluster, system); the bound stops a cycle
    while let Some(label) = domain.filter(|_| chain.len() < 8) {
        let Some(pd) = root.find_label(&label) else {
            missing.push(format!("{}: power-domains = <&{label}> names no node", cpu.at));
            break;
        };
        domain = pd.refs("power-domains").into_iter().next();
        chain.push(label);
    }
    chain
}

/// The power domain whose `domain-idle-states` lists `state` also holds a CPU outside `cl`:
/// a state of the whole DynamIQ cluster, which spans several of hetlab's clusters (DVFS domains).
fn shared_beyond(state: &str, cl: &Cluster, root: &Node) -> Option<String> {
    let cpus = root.child("cpus")?;
    let ours = |c: &Node| cl.cpus.iter().any(|&(_, n)| std::ptr::eq(n, c));
    let holds = |cpu: &Node| {
        power_domains(cpu, root, &mut Vec::new())
            .into_iter()
            .find(|pd| root.find_label(pd).is_some_and(|n| n.refs("domain-idle-states").iter().any(|s| s == state)))
    };
    let mine = holds(cl.cpus[0].1)?;
    cpus.children
        .iter()
        .filter(|c| c.strings("device_type").iter().any(|t| t == "cpu") && !ours(c))
        .any(|c| holds(c).as_deref() == Some(mine.as_str()))
        .then_some(mine)
}

fn idle_states(toml: &mut String, cl: &Cluster, root: &Node, missing: &mut Vec<String>) {
    let cpu = cl.cpus[0].1;
    let labels = idle_state_labels(cpu, root, missing);
    if labels.is_empty() {
        missing.push(format!(
            "{} ({}): no cpu-idle-states or PSCI domain-idle-states (core_off_*, cluster_off_*)",
            cpu.name, cpu.at
        ));
        return;
    }
    let mut written: Vec<&str> = Vec::new();
    for label in labels {
        let Some(s) = root.find_label(&label) else {
            missing.push(format!("{}: idle state <&{label}> names no node", cpu.at));
            continue;
        };
        // PSCI's StateID (original and extended formats as these trees use them): bits 24-25
        // the power level (0 a core, 1 a cluster)
        let level = s.num("arm,psci-suspend-param").map(|p| (p >> 24) & 3);
        let scope = match level {
            Some(0) => "core_off",
            Some(1) => "cluster_off",
            _ => {
                missing.push(format!("{} ({}): power level unknown (no numeric arm,psci-suspend-param)", s.name, s.at));
                continue;
            }
        };
        if let Some(pd) = (scope == "cluster_off").then(|| shared_beyond(&label, cl, root)).flatten() {
            missing.push(format!(
                "{} ({}): a state of power domain <&{pd}>, which spans CPUs of other frequency domains (one \
                 DynamIQ cluster): no per-domain cluster_off",
                s.name, s.at
            ));
            continue;
        }
        if written.contains(&scope) {
            // the platform has one state per level: the shallowest (the first listed) is kept
            missing.push(format!("{} ({}): a deeper {scope} state; the platform keeps the first", s.name, s.at));
            continue;
        }
        match (s.num("entry-latency-us"), s.num("exit-latency-us"), s.num("min-residency-us")) {
            (Some(entry), Some(exit), Some(res)) => {
                written.push(scope);
                let _ = writeln!(
                    toml,
                    "{scope}_exit_latency_us = {}  # entry-latency-us {entry} + exit-latency-us {exit} (as cpuidle \
                     counts it), {}\n{scope}_target_residency_us = {res}  # min-residency-us, {}",
                    entry + exit,
                    s.at,
                    s.at
                );
            }
            _ => missing.push(format!("{} ({}): entry/exit latency or min-residency absent", s.name, s.at)),
        }
    }
}
