//! The companion LISA needs for its frequency analysis: the platform's CPU capacities,
//! frequency domains and frequencies as a `PlatformInfo` YAML map.

use std::fmt::Write as _;

use crate::platform::Platform;

/// Renders the platform as the YAML map LISA loads with
/// `lisa.platforms.platinfo.PlatformInfo.from_yaml_map` (the layout of LISA's own
/// `doc/traces/plat_info.yml` and `lisa-platinfo-extract` output): name, CPU count, each CPU's
/// capacity at its top OPP (`cpu-capacities/orig`, from the core type's DMIPS/MHz and top
/// frequency, as arch_topology normalises them), the frequency domains (one cpufreq policy per
/// cluster) and each CPU's frequencies, kHz ascending. LISA's frequency analysis needs
/// `freq-domains`; its load-tracking analysis reads the capacities.
///
/// CPU numbers are the logical CPUs at boot (logical CPU i on core i); a run that moves
/// logical CPUs onto other cores traces the new capacities as `sched_cpu_capacity`.
/// No `nrg-model`: LISA's `EnergyModel` is a Python object, not plain YAML.
pub fn write_lisa_plat_info(platform: &Platform, out: &mut String) {
    let ncpus = platform.ncpus();
    let cluster_of = |cpu: usize| platform.clusters.iter().position(|c| c.cpus.contains(&cpu));
    let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(", ");
    // A JSON string is a YAML double-quoted scalar.
    let name = serde_json::to_string(&platform.name).unwrap_or_else(|_| "\"platform\"".into());

    out.push_str("# LISA PlatformInfo: PlatformInfo.from_yaml_map(path) (lisa.platforms.platinfo)\n");
    out.push_str("platform-info:\n    conf:\n");
    let _ = writeln!(out, "        name: {name}");
    out.push_str("        os: linux\n");
    let _ = writeln!(out, "        cpus-count: {ncpus}");
    out.push_str("        numa-nodes-count: 1\n");
    out.push_str("        cpu-capacities:\n            writeable: false\n            orig:\n");
    for cpu in 0..ncpus {
        if let Some(c) = cluster_of(cpu) {
            let _ = writeln!(out, "                {cpu}: {}", platform.cpu_capacity(c));
        }
    }
    out.push_str("        freq-domains:\n");
    for cluster in &platform.clusters {
        let mut cpus = cluster.cpus.clone();
        cpus.sort_unstable();
        let _ = writeln!(out, "        - [{}]", list(&mut cpus.iter().map(|c| c.to_string())));
    }
    out.push_str("        freqs:\n");
    for cpu in 0..ncpus {
        if let Some(c) = cluster_of(cpu) {
            let mut khz = platform.clusters[c].freqs_khz();
            khz.sort_unstable();
            let _ = writeln!(out, "            {cpu}: [{}]", list(&mut khz.iter().map(|f| f.to_string())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lisa_plat_info_lists_capacities_domains_and_frequencies() {
        let p = Platform::builtin("exynos5422").unwrap();
        let mut text = String::new();
        write_lisa_plat_info(&p, &mut text);
        let little = p.cluster_index("little").unwrap();
        let big = p.cluster_index("big").unwrap();
        let (cap_l, cap_b) = (p.cpu_capacity(little), p.cpu_capacity(big));
        assert_eq!(cap_b, 1024);
        let freqs = |c: usize| p.clusters[c].freqs_khz().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ");
        let mut want = String::from(
            "# LISA PlatformInfo: PlatformInfo.from_yaml_map(path) (lisa.platforms.platinfo)\n\
             platform-info:\n    conf:\n        name: \"exynos5422\"\n        os: linux\n\
             \x20       cpus-count: 8\n        numa-nodes-count: 1\n        cpu-capacities:\n\
             \x20           writeable: false\n            orig:\n",
        );
        for cpu in 0..8 {
            want += &format!("                {cpu}: {}\n", if cpu < 4 { cap_l } else { cap_b });
        }
        want += "        freq-domains:\n        - [0, 1, 2, 3]\n        - [4, 5, 6, 7]\n        freqs:\n";
        for cpu in 0..8 {
            want += &format!("            {cpu}: [{}]\n", freqs(if cpu < 4 { little } else { big }));
        }
        assert_eq!(text, want);
    }
}
