//! `hetlab platform from-dt` on real SoC descriptions: RK3588 (rk3588-facts.dts, which includes
//! rk3588-facts-opp.dtsi: fixtures written from the facts of the kernel's rk3588-base.dtsi and
//! rk3588-opp.dtsi) and GS101 (a fixture written from the facts of gs101.dtsi). Values checked
//! against the kernel files by hand.

use std::path::Path;

use hetlab_linux::dt_platform::from_dt;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dt").join(name)
}

/// The tables of the skeleton, parsed back (comments dropped by the TOML reader).
fn tables(text: &str) -> toml::Table {
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn rk3588_three_clusters_with_their_opps_caches_and_idle_state() {
    let s = from_dt(&data("rk3588-facts.dts")).unwrap();
    let t = tables(&s.toml);
    let clusters = t["clusters"].as_array().unwrap();
    let cpus: Vec<Vec<i64>> = clusters
        .iter()
        .map(|c| c["cpus"].as_array().unwrap().iter().map(|v| v.as_integer().unwrap()).collect())
        .collect();
    assert_eq!(cpus, [vec![0, 1, 2, 3], vec![4, 5], vec![6, 7]]);
    let little = &clusters[0];
    assert_eq!(little["core_type"].as_str(), Some("cortex-a55"));
    // the kernel's rk3588-opp.dtsi: cluster0 1008 MHz at 675 mV ... 1800 MHz at 950 mV, clock latency 40 µs
    let opps = little["opps"].as_array().unwrap();
    assert_eq!(opps.len(), 5);
    assert_eq!(opps[0].as_array().unwrap()[0].as_integer(), Some(1_008_000));
    assert_eq!(opps[4].as_array().unwrap()[1].as_integer(), Some(950_000));
    assert_eq!(little["transition_latency_ns"].as_integer(), Some(40_000));
    // L2 128 KiB per A55 (512 sets x 64 B: 4 ways), the shared L3 3 MiB (4096 sets x 64 B: 12)
    assert_eq!(little["l2_bytes"].as_integer(), Some(131_072));
    assert_eq!(little["l2_ways"].as_integer(), Some(4));
    // the shared L3 has no platform key: a comment
    assert!(little.get("l3_bytes").is_none());
    assert!(s.toml.contains("# l3: 3145728 bytes (cache-size, rk3588-facts.dts:"), "{}", s.toml);
    // CPU_SLEEP: entry 100 + exit 120 µs, min residency 1000 µs; a core-level PSCI state
    assert_eq!(little["core_off_exit_latency_us"].as_integer(), Some(220));
    assert_eq!(little["core_off_target_residency_us"].as_integer(), Some(1000));
    assert_eq!(clusters[2]["opps"].as_array().unwrap().len(), 7);
    let types = t["core_types"].as_array().unwrap();
    assert_eq!(types.len(), 2);
    assert_eq!(types[1]["capacity_dmips_mhz"].as_integer(), Some(1024));
    assert_eq!(types[1]["dynamic_power_coefficient"].as_integer(), Some(416));
    // 32 KiB, 128 sets of 64 B: 4 ways (both L1s of the A55)
    assert_eq!(types[0]["caches"]["l1d_ways"].as_integer(), Some(4));
    assert_eq!(types[0]["caches"]["l1i_bytes"].as_integer(), Some(32_768));
    // each value cites its file and line
    assert!(s.toml.contains("capacity-dmips-mhz, rk3588-facts.dts:"), "{}", s.toml);
    assert!(s.toml.contains("rk3588-facts-opp.dtsi:"), "{}", s.toml);
    assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
    assert!(s.missing.is_empty(), "{:?}", s.missing);
}

#[test]
fn gs101_lists_the_caches_it_lacks() {
    let s = from_dt(&data("gs101-facts.dts")).unwrap();
    let t = tables(&s.toml);
    let clusters = t["clusters"].as_array().unwrap();
    let names: Vec<&str> = clusters.iter().map(|c| c["core_type"].as_str().unwrap()).collect();
    assert_eq!(names, ["cortex-a55", "cortex-a76", "cortex-x1"]);
    let x1 = &clusters[2];
    let opps = x1["opps"].as_array().unwrap();
    assert_eq!(opps.len(), 17);
    assert_eq!(opps[16].as_array().unwrap()[0].as_integer(), Some(2_802_000));
    assert_eq!(opps[16].as_array().unwrap()[1].as_integer(), Some(1_056_250));
    assert_eq!(x1["core_off_exit_latency_us"].as_integer(), Some(455));
    assert_eq!(x1["core_off_target_residency_us"].as_integer(), Some(3500));
    assert_eq!(t["core_types"].as_array().unwrap()[2]["dynamic_power_coefficient"].as_integer(), Some(650));
    // gs101.dtsi describes no caches: each CPU type's L1 and each cluster's L2 are listed
    assert!(s.missing.iter().any(|m| m.contains("d-cache-size")), "{:?}", s.missing);
    assert!(s.missing.iter().any(|m| m.contains("next-level-cache")), "{:?}", s.missing);
}

#[test]
fn a_file_it_cannot_read_is_one_line_with_the_place() {
    let dir = std::env::temp_dir().join(format!("hetlab-dt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.dts"), "/dts-v1/;\n#if 1\n/ { };\n#endif\n").unwrap();
    let e = from_dt(&dir.join("x.dts")).err().unwrap();
    assert!(e.contains("x.dts:2") && !e.contains('\n'), "{e}");
    std::fs::write(dir.join("y.dts"), "/dts-v1/;\n/ { soc { }; };\n").unwrap();
    assert!(from_dt(&dir.join("y.dts")).err().unwrap().contains("no /cpus node"));
}

#[test]
fn sm8650_one_dynamiq_cluster_becomes_its_four_frequency_domains() {
    let s = from_dt(&data("sm8650-facts.dts")).unwrap();
    let t = tables(&s.toml);
    let clusters = t["clusters"].as_array().unwrap();
    let cpus: Vec<Vec<i64>> = clusters
        .iter()
        .map(|c| c["cpus"].as_array().unwrap().iter().map(|v| v.as_integer().unwrap()).collect())
        .collect();
    // sm8650.dtsi: CPUs 0-1 in domain 0, 2-4 in 3, 5-6 in 1, 7 in 2 (one cpu-map cluster)
    assert_eq!(cpus, [vec![0, 1], vec![2, 3, 4], vec![5, 6], vec![7]]);
    let names: Vec<&str> = clusters.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["cluster0-fd0", "cluster0-fd3", "cluster0-fd1", "cluster0-fd2"]);
    assert!(s.toml.contains("# qcom,freq-domain, sm8650-facts.dts:"), "{}", s.toml);
    let types = t["core_types"].as_array().unwrap();
    let dpc: Vec<i64> = types.iter().map(|c| c["dynamic_power_coefficient"].as_integer().unwrap()).collect();
    assert_eq!(dpc, [100, 238, 588]);
    // no OPP table: the firmware's, named in what is missing for each domain
    assert!(clusters.iter().all(|c| c.get("opps").is_none()));
    let firmware = s.missing.iter().filter(|m| m.contains("takes its table from the firmware")).count();
    assert_eq!(firmware, 4, "{:?}", s.missing);
}

#[test]
fn sm8650_idle_states_come_from_its_psci_power_domains() {
    // sm8650.dtsi (6.12.19) gives no cpu-idle-states: each CPU's `power-domains` names a PSCI
    // domain whose domain-idle-states is its core state, under one cluster domain with two
    // cluster states (0x41000044 and 0x4100c344: level 1). Hand-worked from the file: silver
    // 550 + 750 = 1300 µs, residency 6700; gold 600 + 1300 = 1900, 8136; gold-plus 500 + 1350 =
    // 1850, 7480. The cluster domain holds all eight CPUs, four frequency domains (hetlab's
    // clusters): its states are the whole DynamIQ cluster's, so no cluster_off is written, and
    // that is said (as data/platforms/sm8650.toml has it)
    let s = from_dt(&data("sm8650-facts.dts")).unwrap();
    let t = tables(&s.toml);
    let clusters = t["clusters"].as_array().unwrap();
    let core_off: Vec<(i64, i64)> = clusters
        .iter()
        .map(|c| {
            (
                c["core_off_exit_latency_us"].as_integer().unwrap(),
                c["core_off_target_residency_us"].as_integer().unwrap(),
            )
        })
        .collect();
    // the freq-domain clusters in /cpus order: A520 x2, A720 x3 (cpu2-4), A720 x2, X4
    assert_eq!(core_off, [(1300, 6700), (1300, 6700), (1900, 8136), (1850, 7480)]);
    assert!(clusters.iter().all(|c| c.get("cluster_off_exit_latency_us").is_none()));
    assert!(
        s.missing.iter().any(|m| m.contains("cluster-sleep-0") && m.contains("no per-domain cluster_off")),
        "{:?}",
        s.missing
    );
    // cpu2 (silver's state) and cpu3-4 (gold's) share a frequency domain: said, not hidden
    assert!(s.missing.iter().any(|m| m.contains("cpu@300") && m.contains("differ")), "{:?}", s.missing);
    assert!(!s.missing.iter().any(|m| m.contains("no cpu-idle-states")), "{:?}", s.missing);
}

#[test]
fn a_cluster_power_domain_of_its_own_gives_the_clusters_first_state() {
    // two cpu-map clusters, each CPU in its own PSCI domain under its cluster's domain, which
    // lists a shallow and a deep state: cluster_off is the first (100 + 200 = 300 µs, 1000), the
    // deeper one is listed as not kept
    let dir = std::env::temp_dir().join(format!("hetlab-dt-pd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cpu = |n: usize| {
        format!(
            "c{n}: cpu@{n} {{ device_type = \"cpu\"; compatible = \"arm,cortex-a55\"; reg = <{n}>; \
             power-domains = <&pd{n}>; }};\n"
        )
    };
    let pd = |n: usize, cl: usize| {
        format!("pd{n}: power-domain-cpu{n} {{ power-domains = <&cl{cl}>; domain-idle-states = <&core>; }};\n")
    };
    let text = format!(
        "/dts-v1/;\n/ {{ cpus {{ cpu-map {{ cluster0 {{ core0 {{ cpu = <&c0>; }}; }}; cluster1 {{ core0 {{ cpu = <&c1>; }}; }}; }};\n\
         {}{}\
         idle-states {{ core: core-off {{ arm,psci-suspend-param = <0x40000003>; entry-latency-us = <40>; exit-latency-us = <60>; min-residency-us = <500>; }}; }};\n\
         domain-idle-states {{ shallow: cl-off {{ arm,psci-suspend-param = <0x41000033>; entry-latency-us = <100>; exit-latency-us = <200>; min-residency-us = <1000>; }};\n\
         deep: cl-deep {{ arm,psci-suspend-param = <0x41000044>; entry-latency-us = <900>; exit-latency-us = <900>; min-residency-us = <9000>; }}; }}; }};\n\
         psci {{ {}{}cl0: power-domain-cl0 {{ domain-idle-states = <&shallow>, <&deep>; }};\n\
         cl1: power-domain-cl1 {{ domain-idle-states = <&shallow>, <&deep>; }}; }}; }};\n",
        cpu(0),
        cpu(1),
        pd(0, 0),
        pd(1, 1)
    );
    std::fs::write(dir.join("pd.dts"), text).unwrap();
    let s = from_dt(&dir.join("pd.dts")).unwrap();
    let t = tables(&s.toml);
    for c in t["clusters"].as_array().unwrap() {
        assert_eq!(c["core_off_exit_latency_us"].as_integer(), Some(100));
        assert_eq!(c["cluster_off_exit_latency_us"].as_integer(), Some(300));
        assert_eq!(c["cluster_off_target_residency_us"].as_integer(), Some(1000));
    }
    assert!(s.missing.iter().any(|m| m.contains("cl-deep") && m.contains("keeps the first")), "{:?}", s.missing);
}
