//! The companion LISA needs for its analyses: the platform's CPU capacities, frequency
//! domains and frequencies, rt-app's calibration per CPU and the energy model, as a
//! `PlatformInfo` YAML map.

use std::fmt::Write as _;

use crate::platform::Platform;

/// What LISA's platform info holds beyond the platform file's facts, from the model (the
/// caller makes it: `rtapp::calibration::per_cpu`, `sched::energy_model::EnergyModel::of`).
#[derive(Debug, Clone, Default)]
pub struct LisaExtras {
    /// rt-app's ns per loop on each CPU at its top OPP (`rtapp: calib`), in CPU order.
    pub rtapp_calib_ns: Vec<u32>,
    /// The kernel's energy model (`nrg-model`); empty where the kernel would have none.
    pub energy_model: Vec<LisaEmDomain>,
}

/// One performance domain of the energy model.
#[derive(Debug, Clone)]
pub struct LisaEmDomain {
    /// The platform cluster it describes.
    pub cluster: usize,
    pub cpus: Vec<usize>,
    /// Its CPUs' capacity at the top state, 0..=1024.
    pub capacity: u64,
    /// (kHz, power in the EM's units), ascending.
    pub states: Vec<(u32, u64)>,
}

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
///
/// `rtapp: calib` is each CPU's ns per loop of rt-app's busy loop at its top OPP, what rt-app's
/// calibration would measure on the board (`rtapp::calibration`, which the caller runs: this
/// module stays below the model in the layering): LISA's `RTA` scales `run`
/// durations by it and derives the rt-app capacities from it. `nrg-model` is the energy model
/// LISA's `LinuxEnergyModel.from_target` would build on the board (the kernel's EM, as
/// `platform export-em` writes it, with each CPU's capacity at each state, `f · cap / fmax`,
/// and the board's idle states by name at 0 power, as the simplified EM has none), written
/// with LISA's `!call:` YAML tag (lisa.utils.Serializable) so `from_yaml_map` builds the
/// object; a platform whose EM the kernel would refuse has none.
pub fn write_lisa_plat_info(platform: &Platform, extras: &LisaExtras, out: &mut String) {
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
    if !extras.rtapp_calib_ns.is_empty() {
        out.push_str("        rtapp:\n            calib:\n");
        for (cpu, ns) in extras.rtapp_calib_ns.iter().enumerate() {
            let _ = writeln!(out, "                {cpu}: {ns}");
        }
    }
    if !extras.energy_model.is_empty() {
        write_nrg_model(platform, &extras.energy_model, out);
    }
}

/// The idle states of `cluster`'s CPUs by name, in cpu_idle's index order (`model::idle`).
fn idle_state_names(platform: &Platform, cluster: usize) -> Vec<&'static str> {
    let c = &platform.clusters[cluster];
    let mut names = vec!["WFI"];
    if c.core_off_us().is_some() {
        names.push("core-off");
    }
    if c.cluster_off_us().is_some() {
        names.push("cluster-off");
    }
    names
}

/// `nrg-model`: LISA's `LinuxEnergyModel(root_node, root_power_domain, freq_domains)` as
/// `from_target` builds it (lisa/energy_model.py): a root over one node per CPU with its
/// active states (kHz: capacity, power) and its idle states, each CPU its own power domain.
fn write_nrg_model(platform: &Platform, em: &[LisaEmDomain], out: &mut String) {
    const LISA_EM: &str = "lisa.energy_model";
    let _ = writeln!(out, "        nrg-model: !call:{LISA_EM}.LinuxEnergyModel");
    out.push_str("            root_node: !call:lisa.energy_model.EnergyModelRoot\n                children:\n");
    let mut cpus: Vec<(usize, usize)> =
        em.iter().enumerate().flat_map(|(d, dom)| dom.cpus.iter().map(move |&cpu| (cpu, d))).collect();
    cpus.sort_unstable();
    for &(cpu, d) in &cpus {
        let domain = &em[d];
        let fmax = domain.states.last().map_or(1.0, |&(khz, _)| f64::from(khz));
        let _ = writeln!(out, "                -   !call:{LISA_EM}.EnergyModelNode\n                    cpu: {cpu}");
        out.push_str("                    active_states: !!omap\n");
        for &(khz, power) in &domain.states {
            let capacity = domain.capacity as f64 * f64::from(khz) / fmax;
            let _ = writeln!(
                out,
                "                    -   {khz}: !call:{LISA_EM}.ActiveState {{capacity: {capacity:?}, power: {power}}}"
            );
        }
        out.push_str("                    idle_states: !!omap\n");
        for name in idle_state_names(platform, domain.cluster) {
            let _ = writeln!(out, "                    -   {name}: 0");
        }
    }
    out.push_str("            root_power_domain: !call:lisa.energy_model.PowerDomain\n");
    out.push_str("                idle_states: []\n                children:\n");
    for &(cpu, d) in &cpus {
        let names = idle_state_names(platform, em[d].cluster).join(", ");
        let _ = writeln!(out, "                -   !call:{LISA_EM}.PowerDomain {{cpu: {cpu}, idle_states: [{names}]}}");
    }
    out.push_str("            freq_domains:\n");
    for domain in em {
        let mut cpus = domain.cpus.clone();
        cpus.sort_unstable();
        let _ =
            writeln!(out, "            -   [{}]", cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lisa_plat_info_lists_capacities_domains_and_frequencies() {
        let p = Platform::builtin("exynos5422").unwrap();
        let states = |top: u64| vec![(200_000, top / 10), (2_000_000, top)];
        let extras = LisaExtras {
            rtapp_calib_ns: vec![411, 411, 411, 411, 152, 152, 152, 152],
            energy_model: vec![
                LisaEmDomain {
                    cluster: p.cluster_index("little").unwrap(),
                    cpus: vec![0, 1, 2, 3],
                    capacity: 377,
                    states: states(200),
                },
                LisaEmDomain {
                    cluster: p.cluster_index("big").unwrap(),
                    cpus: vec![4, 5, 6, 7],
                    capacity: 1024,
                    states: states(1067),
                },
            ],
        };
        let mut text = String::new();
        write_lisa_plat_info(&p, &extras, &mut text);
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
        want += "        rtapp:\n            calib:\n";
        for (cpu, ns) in extras.rtapp_calib_ns.iter().enumerate() {
            want += &format!("                {cpu}: {ns}\n");
        }
        assert!(text.starts_with(&want), "{text}");
        // the energy model follows, as LISA's !call: tags build it
        let em = &text[want.len()..];
        assert!(em.starts_with("        nrg-model: !call:lisa.energy_model.LinuxEnergyModel\n"), "{em}");
        assert_eq!(em.matches("!call:lisa.energy_model.EnergyModelNode").count(), 8);
        assert!(
            em.contains("-   2000000: !call:lisa.energy_model.ActiveState {capacity: 1024.0, power: 1067}"),
            "{em}"
        );
        assert!(em.contains("-   200000: !call:lisa.energy_model.ActiveState {capacity: 37.7, power: 20}"), "{em}");
        assert!(em.ends_with("            freq_domains:\n            -   [0, 1, 2, 3]\n            -   [4, 5, 6, 7]\n"));
    }
}
