//! hetlabd chase and characterize as separate processes.

mod common;

use std::fs;
use std::process::Command;

use common::*;

#[test]
fn random_chase_at_64mb_takes_at_least_5x_longer_per_access_than_at_16kb() {
    let out = Command::new(hetlabd())
        .args(["chase", "--sizes", "16K,64M", "--pattern", "random", "--min-time", "0.1", "--cpu", "0", "--json"])
        .run();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pts = doc["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0]["size_bytes"], 16 << 10);
    assert_eq!(pts[1]["size_elements"], 16 << 20);
    assert!(pts.iter().all(|p| p["cpu"] == 0 && p["pattern"] == "random" && p["time_s"].as_f64().unwrap() >= 0.1));
    let small = pts[0]["ns_per_access"].as_f64().unwrap();
    let large = pts[1]["ns_per_access"].as_f64().unwrap();
    eprintln!("random chase: 16 KB {small:.2} ns, 64 MB {large:.2} ns per access ({:.1}x)", large / small);
    assert!(large >= 5.0 * small, "64 MB {large} ns vs 16 KB {small} ns per access");
}

#[test]
fn chase_rejects_bad_input_with_one_line() {
    for args in [
        &["chase", "--sizes", "lots"][..],
        &["chase", "--pattern", "zigzag"],
        &["chase", "--cpu", "100000", "--sizes", "4K"],
    ] {
        let out = Command::new(hetlabd()).args(args).run();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(e.starts_with("hetlabd: error: ") && e.lines().count() == 1, "{args:?}: {e}");
    }
}

/// docs/dataset.md, in order.
const COLUMNS: &str = "backend,platform,platform_sha256,run_id,config_id,active_cluster,idle_cluster,big_khz,little_khz,pattern,size_elements,iterations,rep,seed,run_time_s,period_index,t_end_s,period_s,cci_cycles,si_rrq_hs_any_little,si_rrq_stall_tt_full_little,cci_congestion_little,si_rrq_hs_any_big,si_rrq_stall_tt_full_big,cci_congestion_big,cpu_cycles,inst_retired,bus_access,l2d_cache_refill,memory_access";

/// A small random-chase sweep (2 reps of 4096 elements, 20 ms runs) on the fake board: this VM has
/// no cpufreq (fake tree) and no PMUs (software stand-ins); both "clusters" run on real CPUs.
fn small_sweep(b: &Board, out_csv: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let last_cpu = std::thread::available_parallelism().map(|n| n.get() - 1).unwrap_or(0);
    Command::new(hetlabd())
        .args(["characterize", "--pmu", "software", "--reps", "2", "--sizes", "4096", "--patterns", "random"])
        .args(["--run-s", "0.02", "--period-us", "5000", "--chase-cpu", &format!("little=0,big={last_cpu}")])
        .args(extra)
        .arg("--sysfs-root")
        .arg(b.sys())
        .arg("--out")
        .arg(out_csv)
        .run()
}

#[test]
fn characterize_writes_dataset_rows_and_restores_the_policies() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let b = Board::new("characterize");
    let out_csv = b.root.join("sweep.csv");
    let out = small_sweep(&b, &out_csv, &["--big-khz", "200000,2000000", "--little-khz", "1400000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let text = fs::read_to_string(&out_csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), COLUMNS);
    let cols: Vec<&str> = COLUMNS.split(',').collect();
    let col = |name: &str| cols.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let text = hetlab_core::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5422").unwrap().1;
    let sha = hetlab_linux::sha256::hex(text.as_bytes());
    assert!(rows.iter().all(|r| r.len() == cols.len()));
    let run_ids: std::collections::BTreeSet<u64> = rows.iter().map(|r| r[col("run_id")].parse().unwrap()).collect();
    // 2 active clusters x 2 frequency pairs x 2 reps
    assert_eq!(run_ids, (0..8).collect());
    for r in &rows {
        assert_eq!(r[col("backend")], "linux");
        assert!(["200000", "2000000"].contains(&r[col("big_khz")]));
        assert_eq!(r[col("little_khz")], "1400000");
        assert_eq!(r[col("size_elements")], "4096");
        assert_eq!(
            r[col("platform_sha256")],
            sha,
            "the SHA-256 of the platform text, as the simulated sweep writes it"
        );
        let cfg = format!("{}-random-4096-{}-1400000", r[col("active_cluster")], r[col("big_khz")]);
        assert_eq!(r[col("config_id")], cfg);
        let (seed, run_id): (u64, u64) = (r[col("seed")].parse().unwrap(), r[col("run_id")].parse().unwrap());
        assert_eq!(seed, 1 + run_id, "run i's chain uses seed + i, as the simulated sweep's runs do");
    }
    for id in &run_ids {
        let run: Vec<&Vec<&str>> = rows.iter().filter(|r| r[col("run_id")] == id.to_string()).collect();
        // one row per sampling period, numbered from 0
        let idx: Vec<usize> = run.iter().map(|r| r[col("period_index")].parse().unwrap()).collect();
        assert_eq!(idx, (0..run.len()).collect::<Vec<_>>());
        let cycles: u64 = run.iter().map(|r| r[col("cpu_cycles")].parse::<u64>().unwrap()).sum();
        assert!(cycles > 0, "run {id}: the chase thread's (stand-in) cycles are counted");
    }
    b.assert_restored();
    assert!(!b.run_dir().join("hetlabd.saved").exists());
}

#[test]
fn characterize_with_active_opp_top_sweeps_only_the_idle_cluster() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let b = Board::new("characterize-top");
    let out_csv = b.root.join("sweep.csv");
    let freqs = ["--big-khz", "200000,2000000", "--little-khz", "600000,1000000,1400000"];
    let out = small_sweep(&b, &out_csv, &[&freqs[..], &["--active-opp", "top"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = fs::read_to_string(&out_csv).unwrap();
    let cols: Vec<&str> = COLUMNS.split(',').collect();
    let col = |name: &str| cols.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let mut pairs = std::collections::BTreeSet::new();
    for r in &rows {
        // the active cluster stays at its top listed frequency; the idle one takes every listed one
        let (active, big, little) = (r[col("active_cluster")], r[col("big_khz")], r[col("little_khz")]);
        let (active_khz, top_khz) = if active == "big" { (big, "2000000") } else { (little, "1400000") };
        assert_eq!(active_khz, top_khz);
        pairs.insert((active.to_string(), big.to_string(), little.to_string()));
    }
    assert_eq!(pairs.len(), 2 + 3, "LITTLE active: 2 big frequencies; big active: 3 LITTLE frequencies");
    let run_ids: std::collections::BTreeSet<u64> = rows.iter().map(|r| r[col("run_id")].parse().unwrap()).collect();
    assert_eq!(run_ids, (0..(2 + 3) * 2).collect(), "run ids are dense over the smaller plan");
    b.assert_restored();
}

#[test]
fn characterize_stopped_by_sigint_restores_the_policies() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let b = Board::new("characterize-int");
    let child = Command::new(hetlabd())
        .args([
            "characterize",
            "--pmu",
            "software",
            "--reps",
            "5",
            "--sizes",
            "4096",
            "--patterns",
            "random",
            "--run-s",
            "0.05",
        ])
        .args(["--chase-cpu", "little=0,big=0"])
        .arg("--sysfs-root")
        .arg(b.sys())
        .arg("--out")
        .arg(b.root.join("sweep.csv"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .start();
    wait_for("the sweep to take the policies", 10.0, || b.read(4, "scaling_governor") == "userspace");
    std::thread::sleep(std::time::Duration::from_millis(200));
    signal(&child, libc::SIGINT);
    let f = finish(child);
    assert_eq!(f.code, Some(1), "{}", f.stderr);
    assert!(f.stderr.contains("stopped by SIGINT"), "{}", f.stderr);
    b.assert_restored();
    assert!(!b.root.join("sweep.csv").exists(), "an interrupted sweep is not passed off as complete");
    assert!(b.root.join("sweep.csv.partial").exists());
}

#[test]
fn characterize_out_dash_is_stdout_a_device_is_written_in_place_and_a_link_is_refused_as_root() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let b = Board::new("characterize-out");
    let freqs = ["--big-khz", "2000000", "--little-khz", "1400000"];
    // `-`: the rows on stdout, no file named `-`
    let out = Command::new(hetlabd())
        .current_dir(&b.root)
        .args(["characterize", "--pmu", "software", "--reps", "2", "--sizes", "4096", "--patterns", "random"])
        .args(["--run-s", "0.02", "--period-us", "5000", "--chase-cpu", "little=0,big=0"])
        .args(freqs)
        .arg("--sysfs-root")
        .arg(b.sys())
        .args(["--out", "-"])
        .run();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some(COLUMNS));
    assert!(text.lines().count() > 4, "{text}");
    assert!(!b.root.join("-").exists(), "no file named '-'");
    assert!(String::from_utf8_lossy(&out.stderr).contains("written to standard output"));
    // a character device (a /dev/null of our own) is written in place, not replaced
    use std::os::unix::fs::FileTypeExt;
    let null = b.root.join("null");
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(null.as_os_str())).unwrap();
    // SAFETY: mknod on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) }, 0);
    let out = small_sweep(&b, &null, &freqs);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fs::symlink_metadata(&null).unwrap().file_type().is_char_device(), "the device node is still there");
    // a symbolic link is refused as root, before anything changes
    let victim = b.root.join("victim");
    fs::write(&victim, "keep\n").unwrap();
    let link = b.root.join("sweep.csv");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = small_sweep(&b, &link, &freqs);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.starts_with("hetlabd: error: ") && e.lines().count() == 1 && e.contains("symbolic link"), "{e}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    b.assert_restored();
}

#[test]
fn numeric_options_out_of_range_and_sloppy_lists_are_one_line_errors_before_anything_runs() {
    let b = Board::new("bad-numbers");
    let before = b.snapshot();
    let out_csv = b.root.join("sweep.csv");
    let sweep = |extra: &[&str]| {
        let mut c = Command::new(hetlabd());
        c.args(["characterize", "--pmu", "software", "--sizes", "4096", "--patterns", "random"])
            .arg("--sysfs-root")
            .arg(b.sys())
            .arg("--out")
            .arg(&out_csv)
            .args(extra);
        c
    };
    let cmd = |args: &[&str]| {
        let mut c = Command::new(hetlabd());
        c.args(args);
        c
    };
    let huge = "18446744073709551615";
    let cases: Vec<(Command, &str)> = vec![
        (sweep(&["--period-us", "0"]), "--period-us expects a whole number from 100 to"),
        (sweep(&["--period-us", huge]), "--period-us expects"),
        (sweep(&["--seed", "18446744073709551610"]), "--seed expects a whole number from 0 to 9007199254740992"),
        (sweep(&["--run-s", "1e300"]), "--run-s expects a number from"),
        (sweep(&["--reps", "1"]), "--reps expects a whole number from 2"),
        (sweep(&["--sizes", ",,,"]), "empty item"),
        (sweep(&["--sizes", "4096,4096"]), "lists '4096' twice"),
        (sweep(&["--patterns", "random,random"]), "lists 'random' twice"),
        (sweep(&["--big-khz", "2000000,,200000"]), "empty item"),
        (sweep(&["--chase-cpu", ",,,"]), "empty item"),
        (sweep(&["--chase-cpu", "little=x"]), "'x' is not a CPU number"),
        (sweep(&["--chase-cpu", "little=0-3"]), "is not a CPU number"),
        (sweep(&["--chase-cpu", "little=0,little=1"]), "names cluster little twice"),
        (sweep(&["--chase-cpu", "little=0,middle=1"]), "'middle'"),
        (cmd(&["govern", "--governor", "ondemand", "--dry-run", "--duration", "1e300"]), "--duration expects"),
        (cmd(&["govern", "--governor", "ondemand", "--dry-run", "--duration", "0"]), "--duration expects"),
        (cmd(&["chase", "--iterations", huge]), "--iterations expects a whole number from 1 to 4294967296"),
        (cmd(&["chase", "--iterations", "0"]), "--iterations expects"),
        (cmd(&["chase", "--min-time", "1e300"]), "--min-time expects"),
        (cmd(&["chase", "--sizes", ",,,"]), "empty item"),
        (cmd(&["chase", "--sizes", "16K,16K"]), "lists '16K' twice"),
        (cmd(&["chase", "--sizes", "16K,16384"]), "16 KB twice"),
        (cmd(&["chase", "--elements", "4096,4096"]), "lists '4096' twice"),
        (cmd(&["chase", "--pattern", "random,,random"]), "empty item"),
        (cmd(&["chase", "--cpu", "99999"]), "--cpu expects a whole number from 0 to 8191"),
        (cmd(&["chase", "--freq-khz", "5000000000"]), "--freq-khz expects"),
        (cmd(&["pingpong", "--round-trips", huge]), "--round-trips expects a whole number from 1 to 1000000000"),
        (cmd(&["pingpong", "--repeats", "4294967296"]), "--repeats expects"),
    ];
    for (mut c, want) in cases {
        let out = c.run();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{c:?}: {e}");
        assert!(e.starts_with("hetlabd: error: ") && e.lines().count() == 1 && e.contains(want), "{c:?}: {e}");
        assert!(out.stdout.is_empty(), "{c:?}: no partial output");
    }
    assert_eq!(b.snapshot(), before, "nothing was changed");
    assert!(!out_csv.exists());
}
