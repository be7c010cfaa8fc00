//! A platform's checks, one validator per section; each error names the field and the reason
//! (`Platform::from_toml` prefixes the file).

use super::dsu::MAX_VOTE_RATIO;
use super::{
    Board, BusAccess, CacheSharing, Cci, Cluster, CoreType, Dram, Dsu, ExecutionState, GovernorCost, Noise,
    PerfSampleCost, Platform, PmuSemantics, SchedCosts, Sensors, EM_MAX_POWER_MW, HMP_KNOBS, MAX_CLUSTERS, MAX_CPUS,
    MAX_REQUESTS_IN_FLIGHT,
};

/// No quantity of a platform in its units (µs, ns, mW, kB, ...) comes near this; a larger one
/// turns time and energy sums into infinities.
const MAX_VALUE: f64 = 1e12;

/// Most power one of a platform's rails draws, mW: 100 W, far above any cluster, DRAM or board
/// of a phone or development board (ASSUMPTION: the built-in boards draw at most a few W per
/// rail); a leakage of 1e12 mW ran the temperature and energies to infinity.
pub const MAX_POWER_MW: f64 = 1e5;

/// The ambient temperature a platform may name, °C: the widest rated range of integrated
/// circuits (ASSUMPTION: the military range, -55 to 125 °C).
pub const AMBIENT_RANGE_C: (f64, f64) = (-55.0, 125.0);

/// A thermal trip's temperature, °C: from the coldest ambient to 200 °C, above any junction
/// limit of a data sheet (ASSUMPTION: 125-150 °C maxima).
pub const TRIP_RANGE_C: (f64, f64) = (-55.0, 200.0);

/// The unit of a field, from its name's suffix (the files' convention), for error lines.
fn unit_of(field: &str) -> &'static str {
    const UNITS: [(&str, &str); 14] = [
        ("_mw", " mW"),
        ("_us", " µs"),
        ("_ns", " ns"),
        ("_ms", " ms"),
        ("_khz", " kHz"),
        ("_nj", " nJ"),
        ("_uj", " µJ"),
        ("_c", " °C"),
        ("_bytes", " bytes"),
        ("_mb_s", " MB/s"),
        ("_c_per_w", " °C/W"),
        ("_j_per_c", " J/°C"),
        ("_mhz", " DMIPS/MHz"),
        ("_lines", " lines"),
    ];
    let name = field.rsplit('.').next().unwrap_or(field).trim_end_matches(|c: char| c == ']' || c.is_ascii_digit());
    let name = name.trim_end_matches('[');
    UNITS.iter().filter(|(s, _)| name.ends_with(s)).max_by_key(|(s, _)| s.len()).map_or("", |(_, u)| u)
}

/// A value for an error line: scientific notation where plain digits would run long (1e300 was
/// printed as 301 digits).
fn shown(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn positive(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 && v <= MAX_VALUE {
        Ok(())
    } else {
        Err(format!("{field} must be a positive number at most {MAX_VALUE:e}{}, got {}", unit_of(field), shown(v)))
    }
}

fn non_negative(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=MAX_VALUE).contains(&v) {
        Ok(())
    } else {
        Err(format!("{field} must not be negative nor above {MAX_VALUE:e}{}, got {}", unit_of(field), shown(v)))
    }
}

/// A finite value within `lo..=hi` in the field's unit.
fn within(field: &str, v: f64, (lo, hi): (f64, f64)) -> Result<(), String> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        let u = unit_of(field);
        Err(format!("{field} must be within {lo}{u} to {hi}{u}, got {}", shown(v)))
    }
}

/// A power, mW: `non_negative` and at most `MAX_POWER_MW`.
fn power_mw(field: &str, v: f64) -> Result<(), String> {
    within(field, v, (0.0, MAX_POWER_MW))
}

fn fraction(field: &str, v: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("{field} must be within 0..=1, got {}", shown(v)))
    }
}

impl Platform {
    /// Every section checked, the first error returned (the sections in the order they have
    /// always been checked, so a file with several errors reports the same one).
    pub(super) fn validate(&self) -> Result<(), String> {
        self.validate_tick()?;
        self.sched.validate()?;
        self.validate_core_types()?;
        self.validate_clusters()?;
        if let Some(dsu) = &self.dsu {
            if self.cci.is_some() {
                return Err("[dsu] and [cci]: a platform has one or the other (a DynamIQ SoC has a DSU, a \
                     big.LITTLE one a CCI); remove one"
                    .into());
            }
            dsu.validate(self.clusters.len())?;
        }
        self.validate_cluster_wiring()?;
        if let Some(cci) = &self.cci {
            cci.validate()?;
        }
        if let Some(cost) = &self.perf_sample {
            cost.validate()?;
        }
        self.dram.validate()?;
        self.board.validate()?;
        self.validate_thermal()?;
        self.noise.validate_dram_latency()?;
        self.sensors.validate()?;
        self.pmu.validate()?;
        self.caches.validate()?;
        self.governor_cost.validate()?;
        self.validate_energy_model()?;
        self.validate_hmp()?;
        self.validate_kernel()?;
        self.noise.validate_periods()
    }

    /// `[hmp]`: names and values of `sched::hmp`'s knobs (`HMP_KNOBS`), checked whichever
    /// scheduler runs (a typo passed unless `--scheduler hmp` did).
    fn validate_hmp(&self) -> Result<(), String> {
        for (name, &value) in &self.hmp {
            let Some(&(_, min, max)) = HMP_KNOBS.iter().find(|(k, _, _)| k == name) else {
                let known: Vec<&str> = HMP_KNOBS.iter().map(|(k, _, _)| *k).collect();
                return Err(format!("[hmp]: hmp: unknown tunable '{name}'; known: {}", known.join(", ")));
            };
            if !value.is_finite() || value.fract() != 0.0 || !(min..=max).contains(&value) {
                return Err(format!("[hmp]: hmp: {name} must be an integer in {min}..={max}, got {value}"));
            }
        }
        Ok(())
    }

    /// `[kernel]`'s figures; a cluster whose power-down stops the local timers needs the
    /// broadcast timer that wakes its CPUs.
    fn validate_kernel(&self) -> Result<(), String> {
        if let Some(kernel) = &self.kernel {
            kernel.validate()?;
        }
        let broadcast = self.kernel.as_ref().and_then(|k| k.broadcast_timer.as_ref());
        match self.clusters.iter().find(|c| c.cluster_off_stops_local_timer) {
            Some(c) if c.cluster_off_us().is_none() => Err(format!(
                "clusters '{}': cluster_off_stops_local_timer needs the cluster's power-down state (cluster_off_*)",
                c.name
            )),
            Some(c) if broadcast.is_none() => Err(format!(
                "clusters '{}': cluster_off_stops_local_timer needs [kernel] broadcast_timer, the device that wakes \
                 its CPUs",
                c.name
            )),
            _ => Ok(()),
        }
    }

    /// `hz`: a tick of at least 1 µs.
    fn validate_tick(&self) -> Result<(), String> {
        if self.hz == 0 {
            return Err("hz must be positive".into());
        }
        if self.hz > 1_000_000 {
            return Err(format!("hz must be at most 1000000 (a tick of at least 1 µs), got {}", self.hz));
        }
        Ok(())
    }

    /// `[[core_types]]`: at least one, each checked.
    fn validate_core_types(&self) -> Result<(), String> {
        if self.core_types.is_empty() {
            return Err("core_types: at least one core type is needed".into());
        }
        for t in &self.core_types {
            t.validate(self.execution_state)?;
        }
        Ok(())
    }

    /// `[[clusters]]`: one to `MAX_CLUSTERS`, at most `MAX_CPUS` CPUs numbered 0..N-1 without
    /// gaps, each cluster's fields checked.
    fn validate_clusters(&self) -> Result<(), String> {
        if self.clusters.is_empty() {
            return Err("clusters: at least one cluster is needed".into());
        }
        if self.clusters.len() > MAX_CLUSTERS {
            return Err(format!("clusters: at most {MAX_CLUSTERS} clusters are supported"));
        }
        if self.ncpus() > MAX_CPUS {
            return Err(format!("clusters.cpus: at most {MAX_CPUS} CPUs are supported"));
        }
        let mut seen_cpus = Vec::new();
        for c in &self.clusters {
            c.validate(&self.core_types, &mut seen_cpus)?;
        }
        seen_cpus.sort_unstable();
        if seen_cpus.iter().enumerate().any(|(i, &c)| i != c) {
            return Err("clusters.cpus: CPUs must be numbered 0..N-1 without gaps".into());
        }
        Ok(())
    }

    /// Each cluster against the others and the platform: a name of its own, its CCI port (every
    /// cluster has one if the platform has a `[cci]`, none otherwise, no port twice), and its
    /// power-down states given whole.
    fn validate_cluster_wiring(&self) -> Result<(), String> {
        for (i, c) in self.clusters.iter().enumerate() {
            if self.clusters[..i].iter().any(|o| o.name.eq_ignore_ascii_case(&c.name)) {
                return Err(format!("clusters: duplicate cluster name '{}'", c.name));
            }
            match (&self.cci, c.cci_port) {
                (Some(_), None) => {
                    return Err(format!(
                        "clusters '{}'.cci_port: the platform has a [cci] section, so every cluster needs the CCI \
                         slave interface it is wired to (e.g. cci_port = 3)",
                        c.name
                    ))
                }
                (None, Some(port)) => {
                    return Err(format!(
                        "clusters '{}'.cci_port: S{port} given but the platform has no [cci] section; describe the \
                         interconnect in [cci] or remove cci_port",
                        c.name
                    ))
                }
                (Some(_), Some(port)) if self.clusters[..i].iter().any(|o| o.cci_port == Some(port)) => {
                    return Err(format!("clusters '{}'.cci_port: port S{port} is used twice", c.name));
                }
                _ => {}
            }
            match (&self.cci, c.read_tracker_entries) {
                (None, Some(_)) => {
                    return Err(format!(
                        "clusters '{}'.read_tracker_entries: given but the platform has no [cci] section; describe \
                         the interconnect in [cci] or remove read_tracker_entries",
                        c.name
                    ))
                }
                (_, Some(0)) => {
                    return Err(format!("clusters '{}'.read_tracker_entries: must be at least 1 (got 0)", c.name))
                }
                _ => {}
            }
            if c.core_off_exit_latency_us.is_some() != c.core_off_target_residency_us.is_some() {
                return Err(format!(
                    "clusters '{}': give both core_off_exit_latency_us and core_off_target_residency_us \
                     (a core power-down state), or neither",
                    c.name
                ));
            }
            match (c.cluster_off_exit_latency_us, c.cluster_off_target_residency_us) {
                (Some(_), None) | (None, Some(_)) => {
                    return Err(format!(
                        "clusters '{}': give both cluster_off_exit_latency_us and cluster_off_target_residency_us \
                         (a cluster power-down state), or neither (WFI only)",
                        c.name
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `[thermal]`: its polling interval, and trips ascending in temperature that cap known
    /// clusters.
    fn validate_thermal(&self) -> Result<(), String> {
        positive("thermal.polling_interval_ms", self.thermal.polling_interval_ms as f64)?;
        within("thermal.ambient_c", self.thermal.ambient_c, AMBIENT_RANGE_C)?;
        for (i, trip) in self.thermal.trips.iter().enumerate() {
            within(&format!("thermal.trips[{i}].temp_c"), trip.temp_c, TRIP_RANGE_C)?;
            if i > 0 && trip.temp_c <= self.thermal.trips[i - 1].temp_c {
                return Err(format!("thermal.trips[{i}].temp_c: trips must be sorted by temperature, ascending"));
            }
            for (name, &cap) in &trip.caps_khz {
                let Some(c) = self.cluster_index(name) else {
                    return Err(format!("thermal.trips[{i}].caps_khz: unknown cluster '{name}'"));
                };
                // 0 kHz caps nothing a cooling device can (a cap below the lowest OPP is
                // met at the lowest OPP, as the kernel's deepest cooling state; templates
                // lend such caps to boards with other OPPs)
                if cap == 0 {
                    return Err(format!(
                        "thermal.trips[{i}].caps_khz.{name}: 0 kHz is no cap; give a positive frequency in kHz \
                         (the cluster's lowest OPP is {} kHz)",
                        self.clusters[c].opps[0][0]
                    ));
                }
            }
        }
        Ok(())
    }

    /// An explicit energy model must describe whole cpufreq policies (a performance domain is
    /// one policy: one cluster's CPUs), each once, with one state per OPP of the cluster at the
    /// OPP's frequency, and powers the kernel accepts (`em_create_perf_table`: positive, at most
    /// `EM_MAX_POWER`).
    fn validate_energy_model(&self) -> Result<(), String> {
        let mut covered = Vec::new();
        for (i, d) in self.energy_model.iter().enumerate() {
            let f = |x: &str| format!("energy_model[{i}].{x}");
            let mut cpus = d.cpus.clone();
            cpus.sort_unstable();
            let Some(c) = self.clusters.iter().position(|cl| {
                let mut own = cl.cpus.clone();
                own.sort_unstable();
                own == cpus
            }) else {
                return Err(format!(
                    "{}: {:?} is not the CPU list of one cluster (a performance domain is one cpufreq policy)",
                    f("cpus"),
                    d.cpus
                ));
            };
            if covered.contains(&c) {
                return Err(format!("{}: cluster '{}' has two energy models", f("cpus"), self.clusters[c].name));
            }
            covered.push(c);
            let opps = self.clusters[c].freqs_khz();
            let given: Vec<u32> = d.ps.iter().map(|s| s.frequency_khz).collect();
            if given != opps {
                return Err(format!(
                    "{}: the frequencies must be cluster '{}''s OPPs, ascending: {opps:?} kHz, got {given:?}",
                    f("ps"),
                    self.clusters[c].name
                ));
            }
            if let Some((j, s)) = d.ps.iter().enumerate().find(|(_, s)| s.power_mw == 0 || s.power_mw > EM_MAX_POWER_MW)
            {
                return Err(format!(
                    "{}: power_mw must be within 1..={EM_MAX_POWER_MW} (the kernel's EM_MAX_POWER), got {} at {} kHz",
                    f(&format!("ps[{j}]")),
                    s.power_mw,
                    s.frequency_khz
                ));
            }
        }
        Ok(())
    }
}

impl SchedCosts {
    fn validate(&self) -> Result<(), String> {
        non_negative("sched.active_migration_latency_us", self.active_migration_latency_us)?;
        non_negative("sched.tick_cycles", self.tick_cycles)?;
        non_negative("sched.switch_transfer_us", self.switch_transfer_us)
    }
}

impl CoreType {
    /// `execution_state`: the instruction set the board's software runs in (AArch32 has no
    /// ARMv8 crypto or NEON FP64 classes).
    fn validate(&self, execution_state: ExecutionState) -> Result<(), String> {
        let f = |x: &str| format!("core_types '{}'.{x}", self.name);
        positive(&f("capacity_dmips_mhz"), self.capacity_dmips_mhz as f64)?;
        positive(&f("dynamic_power_coefficient"), self.dynamic_power_coefficient)?;
        if let Some(c) = self.measured_power_coefficient {
            positive(&f("measured_power_coefficient"), c)?;
        }
        positive(&f("l1d_bytes"), self.l1d_bytes as f64)?;
        if !self.line_bytes.is_power_of_two() {
            return Err(format!("{} must be a power of two, got {}", f("line_bytes"), self.line_bytes));
        }
        non_negative(&f("l1_hit_cycles"), self.l1_hit_cycles)?;
        non_negative(&f("l2_hit_cycles"), self.l2_hit_cycles)?;
        // Bounded: each miss in flight is a request source of the interconnect's tracker model.
        if self.mlp.is_nan() || !(1.0..=MAX_REQUESTS_IN_FLIGHT as f64).contains(&self.mlp) {
            return Err(format!("{} must be between 1 and {MAX_REQUESTS_IN_FLIGHT}, got {}", f("mlp"), self.mlp));
        }
        fraction(&f("prefetch_coverage"), self.prefetch_coverage)?;
        if self.prefetch_degree > MAX_REQUESTS_IN_FLIGHT {
            return Err(format!(
                "{} must be at most {MAX_REQUESTS_IN_FLIGHT}, got {}",
                f("prefetch_degree"),
                self.prefetch_degree
            ));
        }
        positive(&f("cpi_factor"), self.cpi_factor)?;
        fraction(&f("stall_activity"), self.stall_activity)?;
        if let Some(cc) = &self.code_classes {
            cc.validate(&f("code_classes"))?;
            if execution_state == ExecutionState::Aarch32 && (cc.crypto.is_some() || cc.neon_fp64.is_some()) {
                return Err(format!(
                    "{}: AArch32 has no ARMv8 crypto or NEON FP64 instructions; remove crypto/neon_fp64",
                    f("code_classes")
                ));
            }
        }
        Ok(())
    }
}

impl Cluster {
    /// The cluster's own fields: a known core type, CPUs no other cluster has (`seen_cpus`,
    /// which this adds them to), OPPs, caches, power and thermal figures.
    fn validate(&self, core_types: &[CoreType], seen_cpus: &mut Vec<usize>) -> Result<(), String> {
        let f = |x: &str| format!("clusters '{}'.{x}", self.name);
        if !core_types.iter().any(|t| t.name == self.core_type) {
            return Err(format!("{}: unknown core type '{}'", f("core_type"), self.core_type));
        }
        if self.cpus.is_empty() {
            return Err(format!("{}: a cluster needs at least one core (zero cores given)", f("cpus")));
        }
        for &cpu in &self.cpus {
            if seen_cpus.contains(&cpu) {
                return Err(format!("{}: cpu{cpu} appears in more than one cluster", f("cpus")));
            }
            seen_cpus.push(cpu);
        }
        self.validate_opps()?;
        positive(&f("l2_bytes"), self.l2_bytes as f64)?;
        power_mw(&f("leakage_mw"), self.leakage_mw)?;
        non_negative(&f("clock_power_coefficient"), self.clock_power_coefficient)?;
        non_negative(&f("snoop_lookup_energy_nj"), self.snoop_lookup_energy_nj)?;
        fraction(&f("core_leakage_share"), self.core_leakage_share)?;
        non_negative(&f("cluster_off_wakeup_energy_uj"), self.cluster_off_wakeup_energy_uj)?;
        if !self.active_mw.is_empty() && self.active_mw.len() != self.opps.len() {
            return Err(format!(
                "{}: give one value per OPP ({} OPPs, {} values) or none",
                f("active_mw"),
                self.opps.len(),
                self.active_mw.len()
            ));
        }
        for (i, &mw) in self.active_mw.iter().enumerate() {
            power_mw(&f(&format!("active_mw[{i}]")), mw)?;
        }
        positive(&f("thermal_resistance_c_per_w"), self.thermal_resistance_c_per_w)?;
        positive(&f("thermal_capacitance_j_per_c"), self.thermal_capacitance_j_per_c)
    }

    /// `opps`: at least one, each with a frequency and a voltage, strictly ascending in
    /// frequency.
    fn validate_opps(&self) -> Result<(), String> {
        let at = format!("clusters '{}'.opps", self.name);
        if self.opps.is_empty() {
            return Err(format!("{at}: at least one OPP is needed"));
        }
        for (i, [khz, uv]) in self.opps.iter().enumerate() {
            if *khz == 0 || *uv == 0 {
                return Err(format!("{at}[{i}]: frequency and voltage must be positive"));
            }
            if i > 0 {
                let prev = self.opps[i - 1][0];
                if *khz == prev {
                    return Err(format!("{at}[{i}]: duplicate OPP {khz} kHz"));
                }
                if *khz < prev {
                    return Err(format!(
                        "{at}[{i}]: OPPs must be sorted by frequency, ascending ({khz} kHz after {prev} kHz)"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Cci {
    fn validate(&self) -> Result<(), String> {
        positive("cci.clock_khz", self.clock_khz as f64)?;
        non_negative("cci.latency_ns", self.latency_ns)?;
        positive("cci.read_tracker_entries", self.read_tracker_entries as f64)?;
        non_negative("cci.snoop_path_l2_lookups", self.snoop_path_l2_lookups)?;
        non_negative("cci.snoop_fixed_ns", self.snoop_fixed_ns)
    }
}

impl PerfSampleCost {
    fn validate(&self) -> Result<(), String> {
        positive("perf_sample.handler_cycles", self.handler_cycles)?;
        non_negative("perf_sample.handler_data_lines", self.handler_data_lines)?;
        non_negative("perf_sample.handler_code_lines", self.handler_code_lines)?;
        if let Some(share) = self.code_cold_share {
            if !(0.0..=1.0).contains(&share) {
                return Err(format!("perf_sample.code_cold_share must be within 0..=1, got {share}"));
            }
        }
        non_negative("perf_sample.handler_tlb_entries", self.handler_tlb_entries)?;
        non_negative("perf_sample.counted_instructions", self.counted_instructions)
    }
}

impl Dram {
    fn validate(&self) -> Result<(), String> {
        positive("dram.idle_latency_ns", self.idle_latency_ns)?;
        positive("dram.peak_bandwidth_mb_s", self.peak_bandwidth_mb_s)?;
        fraction("dram.bandwidth_efficiency", self.bandwidth_efficiency)?;
        positive("dram.bandwidth_efficiency", self.bandwidth_efficiency)?;
        power_mw("dram.background_power_mw", self.background_power_mw)?;
        non_negative("dram.energy_per_line_nj", self.energy_per_line_nj)
    }
}

impl Board {
    fn validate(&self) -> Result<(), String> {
        power_mw("board.rest_power_mw", self.rest_power_mw)
    }
}

impl Noise {
    fn validate_dram_latency(&self) -> Result<(), String> {
        non_negative("noise.dram_latency_sigma", self.dram_latency_sigma)?;
        non_negative("noise.kernel_wakeup_footprint_lines", self.kernel_wakeup_footprint_lines)
    }

    /// The noise's periods (checked last, after the energy model: see `Platform::validate`).
    fn validate_periods(&self) -> Result<(), String> {
        positive("noise.dram_noise_period_us", self.dram_noise_period_us as f64)?;
        positive("noise.kernel_wakeup_mean_interval_us", self.kernel_wakeup_mean_interval_us as f64)
    }
}

impl Sensors {
    fn validate(&self) -> Result<(), String> {
        positive("sensors.period_us", self.period_us as f64)?;
        power_mw("sensors.unmodelled_rails_mw", self.unmodelled_rails_mw)
    }
}

impl PmuSemantics {
    fn validate(&self) -> Result<(), String> {
        if self.bus_access == BusAccess::L1Beat && !matches!(self.beat_bytes, Some(b) if b > 0) {
            return Err(
                "pmu.bus_access = \"l1-beat\" needs pmu.beat_bytes, the L1-L2 data path's width in bytes".into()
            );
        }
        Ok(())
    }
}

impl CacheSharing {
    fn validate(&self) -> Result<(), String> {
        if !(0.0..1.0).contains(&self.system_share) {
            return Err(format!("caches.system_share must be in [0, 1), got {}", self.system_share));
        }
        if !self.page_bytes.is_power_of_two() || !(1024..=1 << 30).contains(&self.page_bytes) {
            return Err(format!(
                "caches.page_bytes must be a power of two from 1024 to 1 GiB, got {}",
                self.page_bytes
            ));
        }
        if ![4, 8].contains(&self.descriptor_bytes) {
            return Err(format!(
                "caches.descriptor_bytes must be 4 (short descriptors) or 8 (LPAE), got {}",
                self.descriptor_bytes
            ));
        }
        Ok(())
    }
}

impl GovernorCost {
    fn validate(&self) -> Result<(), String> {
        non_negative("governor_cost.pmc_sample_base_us", self.pmc_sample_base_us)?;
        non_negative("governor_cost.pmc_per_thread_us", self.pmc_per_thread_us)?;
        non_negative("governor_cost.cci_read_us", self.cci_read_us)
    }
}

impl Dsu {
    /// Its sizes, cycles, energies and operating points, one vote ratio per cluster, and a fixed
    /// clock that is one of its operating points.
    pub(super) fn validate(&self, nclusters: usize) -> Result<(), String> {
        positive("dsu.l3_bytes", self.l3_bytes as f64)?;
        positive("dsu.l3_ways", self.l3_ways as f64)?;
        positive("dsu.l3_hit_cycles", self.l3_hit_cycles)?;
        within("dsu.snoop_filter_cycles", self.snoop_filter_cycles, (0.0, 1e5))?;
        within("dsu.clock_coefficient", self.clock_coefficient, (0.0, 1e5))?;
        power_mw("dsu.static_mw", self.static_mw)?;
        within("dsu.l3_hit_nj", self.l3_hit_nj, (0.0, 1e5))?;
        within("dsu.l3_miss_nj", self.l3_miss_nj, (0.0, 1e5))?;
        if self.opps.is_empty() {
            return Err("dsu.opps: at least one [kHz, µV] operating point is needed".into());
        }
        for (i, [khz, uv]) in self.opps.iter().enumerate() {
            if *khz == 0 || *uv == 0 || *uv > 2_000_000 {
                return Err(format!("dsu.opps[{i}]: [{khz}, {uv}] needs a kHz above 0 and 0 < µV <= 2000000"));
            }
            if i > 0 && *khz <= self.opps[i - 1][0] {
                return Err(format!("dsu.opps[{i}]: {khz} kHz is not above the previous point; list them ascending"));
            }
        }
        if self.vote_ratios.len() != nclusters {
            return Err(format!(
                "dsu.vote_ratios: one ratio per cluster is needed ({nclusters}), got {}",
                self.vote_ratios.len()
            ));
        }
        for (c, ratio) in self.vote_ratios.iter().enumerate() {
            within(&format!("dsu.vote_ratios[{c}]"), *ratio, (0.0, MAX_VOTE_RATIO))?;
        }
        if !self.opps.iter().any(|o| o[0] == self.fixed_khz) {
            return Err(format!(
                "dsu.fixed_khz: {} kHz is not one of dsu.opps; name one of their frequencies",
                self.fixed_khz
            ));
        }
        Ok(())
    }
}
