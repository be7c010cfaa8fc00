//! One decision in three places: the kernel module's C core (`kmod/anti_snoop_core.c`, built
//! here as the user-space `core_replay`), hetlabd's governor and the simulator's must choose the
//! same frequency, and the same next sampling delay, at every sample of the same recorded
//! counter sequence, for the shipped trained model (`kmod/models/`) and the paper's Figure 4
//! trees (`lctes2020-fig4`, compared in floating point by Rust and exactly in integers by C).
//!
//! The sequences:
//! * recorded from the simulator: every governor sample of anti-snoop runs on the Exynos 5422
//!   (the view its governor saw and the decision it made, live, through the engine's
//!   `watch_governor` hook), with the default tunables and with changed ones;
//! * synthetic: random views built to sit on the trees' thresholds (a count either side of
//!   each), with zero denominators, counts beyond 2^53, long idle periods, moved limits and
//!   thermal caps, missing CCI ports. Their "simulator" side is the governor as the engine
//!   builds it (registry, the platform's tick, the model), fed the views.
//!
//! hetlabd's side is its own governor (`daemon::policy_governor`) started on the first view and
//! answered through `daemon::frequency_to_write`, as its loop does.
//!
//! With `HETLAB_KMOD_FEED_DIR=DIR`, the test also writes what the QEMU boot test feeds the
//! module (scripts/kmod-ci.sh): per model `NAME.blob`, `NAME.feed` (the synthetic sequence and
//! the head of each recording) and `NAME.expected` (the decisions all three agreed on).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use hetlab_core::counters::{CciPortSample, ThreadSample};
use hetlab_core::engine::{Engine, SimConfig};
use hetlab_core::governor::{registry, CpuSample, Decision, GovernorContext, PolicyView};
use hetlab_core::platform::Platform;
use hetlab_core::tree::AntiSnoopModel;
use hetlab_core::tree_blob::kernel_blob;
use hetlab_core::workload::Workload;
use hetlab_linux::daemon::{frequency_to_write, policy_governor};

const GOVERNOR: &str = "anti-snoop";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shipped_model() -> AntiSnoopModel {
    let path = repo().join("kmod/models/exynos5422-significant-depth3.json");
    AntiSnoopModel::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A sequence: the policies' samples in order, each with the simulator's decision when it was
/// recorded live.
struct Recording {
    name: String,
    tunables: Vec<(String, f64)>,
    samples: Vec<(PolicyView, Option<Decision>)>,
}

// ---- sequences ---------------------------------------------------------------------------------

fn simulated(
    platform: &Platform,
    model: &AntiSnoopModel,
    workload: &str,
    on: &str,
    tunables: &[(&str, f64)],
) -> Recording {
    let tunables: Vec<(String, f64)> = tunables.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let active = platform.cluster_index(on);
    let plan = SimConfig::governor_plan(platform, GOVERNOR, &tunables, active, &[]).unwrap();
    let mut config = SimConfig::new(plan);
    config.cluster = active;
    config.model = Some(model.clone());
    config.time_limit_s = 4.0;
    let name = format!("simulated {workload} on {on}");
    let workload = Workload::from_spec(workload).unwrap();
    let mut samples = Vec::new();
    {
        let mut engine = Engine::new(platform, &workload, config).unwrap();
        engine.watch_governor(|view, decision| samples.push((view.clone(), Some(decision))));
        engine.run().unwrap();
    }
    Recording { name, tunables, samples }
}

/// xorshift64: the synthetic sequence is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// (num, den) on, just under or just over `threshold`, or anywhere: what the trees split on.
/// Counts beyond 2^53 are rounded to doubles by Rust's float trees: some sit half a unit of
/// the double apart, where rounding to even decides.
fn counts_near(rng: &mut Rng, thresholds: &[f64]) -> (u64, u64) {
    let den = match rng.below(8) {
        0 => 0,
        1 => rng.next() >> rng.below(64),
        2 => (rng.next() >> 8) | (1 << 55),
        3 => rng.next() | (1 << 63),
        4 => ((rng.next() | (1 << 63)) & !0x7ff) | 0x400, // exactly between two doubles
        _ => rng.below(50_000_000) + 1,
    };
    let t = thresholds[rng.below(thresholds.len() as u64) as usize];
    let near = (t * den as f64) as u64;
    let half_ulp = match 64 - near.leading_zeros() {
        bits if bits > 54 => 1u64 << (bits - 54),
        _ => 1,
    };
    let num = match rng.below(5) {
        0 => near.saturating_sub(half_ulp * rng.below(3)),
        1 => near,
        2 => near.saturating_add(half_ulp * rng.below(3)),
        3 => near ^ (rng.below(8)),
        _ => rng.next() >> rng.below(64),
    };
    (num, den)
}

fn synthetic(platform: &Platform, model: &AntiSnoopModel, n: usize) -> Recording {
    let mut rng = Rng(0x005E_ED0F_C0DE);
    let mut thresholds = vec![0.0];
    for (_, t) in &model.trees {
        thresholds.extend(t.nodes.iter().filter(|n| n.feature.is_some()).map(|n| n.threshold));
    }
    let tick_us = platform.tick_us();
    let mut samples = Vec::new();
    for i in 0..n {
        let p = (rng.below(2)) as usize;
        let c = &platform.clusters[p];
        let opps = c.freqs_khz();
        let pick = |rng: &mut Rng| opps[rng.below(opps.len() as u64) as usize];
        let mut v = PolicyView {
            now_us: i as u64 * 10_000,
            policy: p,
            cpuinfo_min_khz: opps[0],
            cpuinfo_max_khz: *opps.last().unwrap(),
            policy_min_khz: opps[0],
            policy_max_khz: *opps.last().unwrap(),
            thermal_cap_khz: *opps.last().unwrap(),
            cur_khz: if rng.below(10) == 0 { pick(&mut rng) + 50_000 } else { pick(&mut rng) },
            transition_latency_ns: c.transition_latency_ns,
            tick_us,
            cpu_capacity: platform.cpu_capacity(p),
            opps_khz: opps.clone(),
            ..Default::default()
        };
        match rng.below(12) {
            0 => v.thermal_cap_khz = pick(&mut rng),
            1 => v.policy_min_khz = pick(&mut rng),
            2 => v.policy_max_khz = pick(&mut rng),
            3 => (v.policy_min_khz, v.policy_max_khz) = (pick(&mut rng) + 30_000, pick(&mut rng) + 70_000),
            _ => {}
        }
        for &cpu in &c.cpus {
            let wall_us = match rng.below(20) {
                0 => 0,
                1 => 100_000 + rng.below(400_000), // a long idle stretch
                _ => 9_000 + rng.below(2_000),
            };
            let idle_us = match rng.below(4) {
                0 => wall_us,
                1 => 0,
                _ => rng.below(wall_us + 1),
            };
            let nice_us = if rng.below(4) == 0 { rng.below(wall_us - idle_us + 1) } else { 0 };
            v.cpus.push(CpuSample { cpu, wall_us, idle_us, nice_us, was_idle: idle_us > 0, ..Default::default() });
        }
        let ports = match rng.below(8) {
            0 => vec![],
            1 => vec![p],
            2 => vec![1 - p, p],
            _ => vec![0, 1],
        };
        for cluster in ports {
            let (stall, hs) = counts_near(&mut rng, &thresholds);
            v.cci_ports.push(CciPortSample {
                port: 3 + cluster as u8,
                cluster,
                si_rrq_hs_any: hs,
                si_rrq_stall_tt_full: stall,
            });
        }
        for t in 0..rng.below(4) {
            let (bus, cycles) = counts_near(&mut rng, &thresholds);
            // a few split over threads: the sums must cross the threshold, not each thread
            let mut s = ThreadSample { tid: 100 + t as u32, cluster: rng.below(2) as usize, ..Default::default() };
            s.pmu.bus_access = bus >> (t % 2);
            s.pmu.cpu_cycles = cycles >> (t % 2);
            v.threads.push(s);
        }
        samples.push((v, None));
    }
    let tunables = vec![("up_threshold".to_string(), 80.0), ("ignore_nice_load".to_string(), 1.0)];
    Recording { name: "synthetic".into(), tunables, samples }
}

// ---- the feed the C core reads ---------------------------------------------------------------

/// The policies a recording samples, each with its first view.
fn policies(r: &Recording) -> Vec<&PolicyView> {
    let mut first: Vec<&PolicyView> = Vec::new();
    for (v, _) in &r.samples {
        if !first.iter().any(|f| f.policy == v.policy) {
            first.push(v);
        }
    }
    first.sort_by_key(|v| v.policy);
    first
}

fn tunable(r: &Recording, name: &str, default: f64) -> u64 {
    r.tunables.iter().find(|(k, _)| k == name).map_or(default, |(_, v)| *v) as u64
}

fn limits(v: &PolicyView) -> String {
    format!("{} {} {} {}", v.cur_khz, v.policy_min_khz, v.policy_max_khz, v.thermal_cap_khz)
}

fn feed_section(r: &Recording, platform: &Platform, limit: usize, out: &mut String) {
    writeln!(out, "# {} ({} samples)", r.name, r.samples.len().min(limit)).unwrap();
    for v in policies(r) {
        let name = &platform.clusters[v.policy].name;
        let opps: Vec<String> = v.opps_khz.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "P {} {name} {} {} {} {} {} {}",
            v.policy,
            v.cpuinfo_min_khz,
            v.cpuinfo_max_khz,
            v.tick_us,
            v.transition_latency_ns,
            opps.len(),
            opps.join(" ")
        )
        .unwrap();
        writeln!(
            out,
            "T {} {} {} {} {} 1",
            v.policy,
            tunable(r, "sampling_rate", 0.0),
            tunable(r, "up_threshold", 95.0),
            tunable(r, "sampling_down_factor", 1.0),
            tunable(r, "ignore_nice_load", 0.0)
        )
        .unwrap();
        writeln!(out, "B {} {}", v.policy, limits(v)).unwrap();
    }
    for (v, _) in r.samples.iter().take(limit) {
        write!(out, "S {} {} {}", v.policy, limits(v), v.cpus.len()).unwrap();
        for c in &v.cpus {
            write!(out, " {} {} {} {}", c.cpu, c.wall_us, c.idle_us, c.nice_us).unwrap();
        }
        write!(out, " {}", v.cci_ports.len()).unwrap();
        for p in &v.cci_ports {
            write!(out, " {} {} {}", p.cluster, p.si_rrq_hs_any, p.si_rrq_stall_tt_full).unwrap();
        }
        write!(out, " {}", v.threads.len()).unwrap();
        for t in &v.threads {
            write!(out, " {} {} {}", t.cluster, t.pmu.bus_access, t.pmu.cpu_cycles).unwrap();
        }
        out.push('\n');
    }
}

// ---- the three deciders -----------------------------------------------------------------------

type Answer = (usize, u32, u64);

/// hetlabd's governors (one per policy), started on each policy's first view: the answers to
/// the B lines, then one per sample.
fn hetlabd(r: &Recording, model: &AntiSnoopModel, platform: &Platform, tally: &mut Tally) -> Vec<Answer> {
    let mut govs = Vec::new();
    let mut out = Vec::new();
    for v in policies(r) {
        let mut g =
            policy_governor(GOVERNOR, &r.tunables, Some(model), platform.tick_us(), &platform.clusters[v.policy].name)
                .unwrap();
        let d = g.start(v);
        out.push((v.policy, d.target_khz, d.next_sample_us));
        govs.push((v.policy, g));
    }
    for (v, _) in &r.samples {
        let g = &mut govs.iter_mut().find(|(p, _)| *p == v.policy).unwrap().1;
        let d = g.sample(v);
        let mut said = String::new();
        g.explain(&mut said).unwrap();
        tally.consulted += usize::from(!said.contains("tree=-"));
        tally.increase += usize::from(said.contains("tree=increase"));
        let khz = frequency_to_write(&v.opps_khz, d.target_khz, v.policy_min_khz, v.upper_limit_khz());
        out.push((v.policy, khz, d.next_sample_us));
    }
    out
}

/// The simulator's answers: recorded live, or (synthetic views) its governor as the engine
/// builds it fed the views.
fn simulator(r: &Recording, model: &AntiSnoopModel, platform: &Platform) -> Vec<Answer> {
    let mut govs: Vec<(usize, Box<dyn hetlab_core::governor::Governor>)> = Vec::new();
    let mut out = Vec::new();
    for v in policies(r) {
        let ctx = GovernorContext {
            cluster_name: &platform.clusters[v.policy].name,
            tick_us: platform.tick_us(),
            model: Some(model),
        };
        let mut g = registry::build(GOVERNOR, &r.tunables, &ctx).unwrap();
        g.start(v);
        govs.push((v.policy, g));
    }
    for (v, recorded) in &r.samples {
        let d = match recorded {
            Some(d) => *d,
            None => govs.iter_mut().find(|(p, _)| *p == v.policy).unwrap().1.sample(v),
        };
        out.push((v.policy, d.target_khz, d.next_sample_us));
    }
    out
}

fn build_core_replay(dir: &Path) -> PathBuf {
    let kmod = repo().join("kmod");
    let exe = dir.join("core_replay");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(&kmod)
        .arg(kmod.join("test/core_replay.c"))
        .arg(kmod.join("anti_snoop_core.c"))
        .arg(kmod.join("anti_snoop_feed.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (cc, or $CC) builds the module's core for this test");
    assert!(status.success(), "core_replay did not build");
    exe
}

fn run_core(exe: &Path, blob: &Path, feed: &Path) -> Vec<Answer> {
    let out = Command::new(exe).arg(blob).arg(feed).output().unwrap();
    assert!(out.status.success(), "core_replay: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (f[0] as usize, f[1] as u32, f[2])
        })
        .collect()
}

// ---- the tests -----------------------------------------------------------------------------

/// Every split at the resolution where it can go wrong: counts a unit either side of each
/// threshold, and pairs beyond 2^53 half a double apart, fed to the C tree walk and to
/// `predict_counts`.
#[test]
fn the_modules_trees_split_exactly_as_rust_does() {
    let dir = std::env::temp_dir().join(format!("hetlab-kmod-trees-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build_core_replay(&dir);
    let mut rng = Rng(0x7EE5);
    let mut compared = 0;
    for model in [shipped_model(), AntiSnoopModel::lctes2020_fig4()] {
        let blob = dir.join("model.blob");
        std::fs::write(&blob, kernel_blob(&model).unwrap()).unwrap();
        for (cluster, tree) in &model.trees {
            let per_feature: Vec<Vec<f64>> = (0..tree.features.len())
                .map(|f| {
                    let mut t: Vec<f64> =
                        tree.nodes.iter().filter(|n| n.feature == Some(f)).map(|n| n.threshold).collect();
                    t.push(0.0);
                    t
                })
                .collect();
            let mut input = String::new();
            let mut want = Vec::new();
            for _ in 0..40_000 {
                let counts: Vec<(u64, u64)> = per_feature.iter().map(|t| counts_near(&mut rng, t)).collect();
                for (n, d) in &counts {
                    write!(input, "{n} {d} ").unwrap();
                }
                input.push('\n');
                want.push(u8::from(tree.predict_counts(&counts) == hetlab_core::tree::INCREASE));
            }
            let mut child = Command::new(&exe)
                .arg(&blob)
                .args(["--tree", cluster])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()).unwrap());
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap();
            let got: Vec<u8> = String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect();
            assert_eq!(got.len(), want.len());
            let wrong: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
            assert!(wrong.is_empty(), "{} {cluster}: {} of {} differ", model.name, wrong.len(), want.len());
            compared += want.len();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("kmod conformance: {compared} tree walks compared, 0 differences");
}

struct Tally {
    samples: usize,
    differences: usize,
    first: Option<String>,
    /// Samples where the tree was asked, and said increase (hetlabd's explain()).
    consulted: usize,
    increase: usize,
}

#[test]
fn the_modules_core_hetlabd_and_the_simulator_decide_alike_at_every_sample() {
    let platform = Platform::builtin("exynos5422").unwrap();
    let dir = std::env::temp_dir().join(format!("hetlab-kmod-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build_core_replay(&dir);
    let feed_dir = std::env::var_os("HETLAB_KMOD_FEED_DIR").map(PathBuf::from);
    let chase = "ccbench:size=1048576,pattern=random,iterations=20000000";
    let mut lines = vec![];
    for model in [shipped_model(), AntiSnoopModel::lctes2020_fig4()] {
        let recordings = vec![
            synthetic(&platform, &model, 4_000),
            simulated(&platform, &model, chase, "little", &[]),
            simulated(&platform, &model, chase, "big", &[]),
            simulated(&platform, &model, "mixed8", "little", &[]),
            simulated(
                &platform,
                &model,
                chase,
                "little",
                &[("sampling_rate", 20_000.0), ("up_threshold", 60.0), ("sampling_down_factor", 4.0)],
            ),
        ];
        let blob = dir.join(format!("{}.blob", model.name));
        std::fs::write(&blob, kernel_blob(&model).unwrap()).unwrap();
        let mut tally = Tally { samples: 0, differences: 0, first: None, consulted: 0, increase: 0 };
        let mut qemu_feed = String::from("hetlab-kmod-feed 1\n");
        let mut qemu_expected = String::new();
        for r in &recordings {
            let mut text = String::from("hetlab-kmod-feed 1\n");
            feed_section(r, &platform, usize::MAX, &mut text);
            let feed = dir.join("feed.txt");
            std::fs::write(&feed, &text).unwrap();
            let c = run_core(&exe, &blob, &feed);
            let d = hetlabd(r, &model, &platform, &mut tally);
            let s = simulator(r, &model, &platform);
            let starts = policies(r).len();
            assert_eq!((c.len(), d.len()), (r.samples.len() + starts, r.samples.len() + starts), "{}", r.name);
            // the starts: C against hetlabd (the simulator's were before its run was watched)
            for i in 0..c.len() {
                let sim = if i >= starts { Some(s[i - starts]) } else { None };
                if c[i] != d[i] || sim.is_some_and(|x| x != c[i]) {
                    tally.differences += 1;
                    tally.first.get_or_insert_with(|| {
                        format!("{} line {i}: C {:?} hetlabd {:?} simulator {sim:?}", r.name, c[i], d[i])
                    });
                }
            }
            tally.samples += r.samples.len();
            println!("kmod conformance: {}: {}, {} samples", model.name, r.name, r.samples.len());
            // the QEMU guest gets the head of each sequence
            let head = 1_500;
            feed_section(r, &platform, head, &mut qemu_feed);
            for a in c.iter().take(head + starts) {
                writeln!(qemu_expected, "{} {} {}", a.0, a.1, a.2).unwrap();
            }
        }
        lines.push(format!(
            "{:<30} {:>6} samples compared, {} differences (C core, hetlabd, simulator); tree asked at {}, increase at {}{}",
            model.name,
            tally.samples,
            tally.differences,
            tally.consulted,
            tally.increase,
            tally.first.as_deref().map_or(String::new(), |f| format!("; first: {f}"))
        ));
        if let Some(fd) = &feed_dir {
            std::fs::create_dir_all(fd).unwrap();
            std::fs::copy(&blob, fd.join(format!("{}.blob", model.name))).unwrap();
            std::fs::write(fd.join(format!("{}.feed", model.name)), &qemu_feed).unwrap();
            std::fs::write(fd.join(format!("{}.expected", model.name)), &qemu_expected).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for l in &lines {
        println!("kmod conformance: {l}");
    }
    assert!(lines.iter().all(|l| l.contains(" 0 differences")), "{lines:#?}");
}
