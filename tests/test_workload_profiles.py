"""The benchmark workloads of the seed paper's evaluation (issue 4): SPEC CPU2006 profiles, BBench,
Speedometer 2.0 and mplayer. Each must load, run on either cluster, and show the memory and
threading behaviour its file claims -- checks that come out of the model, not out of the file."""

from pathlib import Path

import pytest

import hetlab

DATA = Path(__file__).resolve().parent.parent / "data" / "workloads"
PROFILES = [
    "spec-gcc-g23",
    "spec-bwaves-test",
    "spec-povray-train",
    "spec-h264ref-train",
    "bbench",
    "speedometer2",
    "mplayer-1080p",
]
CLUSTER_CPUS = {"little": {0, 1, 2, 3}, "big": {4, 5, 6, 7}}

_cache: dict = {}


def run(name, cluster, **kw):
    """One ondemand run (cached: several tests read the same run)."""
    key = (name, cluster, tuple(sorted((kw.get("freq") or {}).items())))
    if key not in _cache:
        # `freq` pins clusters (userspace) over ondemand, as `hetlab simulate --freq` does
        _cache[key] = hetlab.simulate(workload=name, cluster=cluster, governor="ondemand", time_limit_s=300.0, **kw)
    return _cache[key]


def l2_per_kinstr(r, threads=None):
    ths = [t for t in r.summary["threads"] if threads is None or t["name"].startswith(threads)]
    inst = sum(t["pmu"]["inst_retired"] for t in ths)
    return 1000.0 * sum(t["pmu"]["l2d_cache_refill"] for t in ths) / inst


def busy_fraction(t):
    return t["cpu_time_s"] / t["finish_s"]


def test_every_profile_is_built_in_and_its_file_loads():
    assert set(PROFILES) <= set(hetlab.workloads())
    for name in PROFILES:
        path = DATA / f"{name}.toml"
        text = path.read_text()
        assert f'name = "{name}"' in text
        assert "affinity" not in text  # the experiment restricts the workload with --cluster
        # the file itself (not only the embedded copy) parses and runs
        r = hetlab.simulate(workload=str(path), cluster="big", governor="performance", time_limit_s=300.0)
        assert r.summary["completed"], name


@pytest.mark.parametrize("cluster", ["big", "little"])
@pytest.mark.parametrize("name", PROFILES)
def test_runs_to_completion_on_either_cluster(name, cluster):
    r = run(name, cluster)
    s = r.summary
    assert s["completed"], f"{name} did not finish on {cluster}"
    assert 0.5 < r.time_s < 120.0, r.time_s
    assert all(t["finish_s"] > 0 for t in s["threads"])
    # --cluster keeps every instruction on that cluster's CPUs
    for c in s["cpus"]:
        if c["cpu"] not in CLUSTER_CPUS[cluster]:
            assert c["pmu"]["inst_retired"] == 0, (name, cluster, c)


@pytest.mark.parametrize("name", PROFILES)
def test_big_cluster_run_lasts_a_few_seconds(name):
    # The files scale real runs to 2-8 s on the A15 at 2 GHz (ondemand takes it there).
    assert 2.0 <= run(name, "big").time_s <= 8.0


def test_gcc_and_bwaves_miss_a_lot_in_both_l2s():
    # The seed paper picked them for "high MPKI for both clusters" (512 KB and 2 MB L2).
    for name in ("spec-gcc-g23", "spec-bwaves-test"):
        for cluster in ("little", "big"):
            assert l2_per_kinstr(run(name, cluster)) > 5.0, (name, cluster)


def test_povray_barely_misses_compared_with_gcc():
    povray = l2_per_kinstr(run("spec-povray-train", "big"))
    gcc = l2_per_kinstr(run("spec-gcc-g23", "big"))
    assert povray < 0.05 * gcc, (povray, gcc)
    assert l2_per_kinstr(run("spec-povray-train", "little")) < 1.0


def test_h264ref_fits_the_a15_l2_but_not_the_a7_l2():
    little = l2_per_kinstr(run("spec-h264ref-train", "little"))
    big = l2_per_kinstr(run("spec-h264ref-train", "big"))
    assert big < 0.5, big
    assert little > 20 * big, (little, big)


def test_snoop_sensitivity_follows_memory_intensity():
    # With the idle cluster at 200 MHz its snoops outlast DRAM, so every L2 miss of the active
    # cluster waits longer. Memory-bound h264ref on the A7 (L2 too small) slows down much more
    # than compute-bound povray; on the A15 (h264ref fits its L2) neither notices.
    top = {"little": 1400000, "big": 2000000}

    def slowdown(name, cluster):
        other = "big" if cluster == "little" else "little"
        slow = run(name, cluster, freq={cluster: top[cluster], other: 200000}).time_s
        fast = run(name, cluster, freq={cluster: top[cluster], other: top[other]}).time_s
        return slow / fast

    h264_little = slowdown("spec-h264ref-train", "little")
    povray_little = slowdown("spec-povray-train", "little")
    assert h264_little > 1.2
    assert povray_little - 1.0 < 0.5 * (h264_little - 1.0), (povray_little, h264_little)
    assert slowdown("spec-h264ref-train", "big") < 1.02
    assert slowdown("spec-povray-train", "big") < 1.02


def test_speedometer_reaches_71_threads_at_once():
    for cluster in ("big", "little"):
        threads = run("speedometer2", cluster).summary["threads"]
        assert len(threads) >= 71
        # all of them are alive together for the first seconds (the paper's peak of 71)
        assert sum(t["finish_s"] > 3.0 for t in threads) >= 71


@pytest.mark.parametrize("name", ["bbench", "speedometer2"])
def test_browsers_have_several_threads_that_run_in_bursts(name):
    for cluster in ("big", "little"):
        threads = run(name, cluster).summary["threads"]
        bursty = [t for t in threads if 0.001 < busy_fraction(t) < 0.9]
        assert len(bursty) >= 4, (name, cluster, [(t["name"], busy_fraction(t)) for t in threads])
        assert min(busy_fraction(t) for t in threads) < 0.5


def test_speedometer_js_main_thread_is_the_busy_one():
    threads = run("speedometer2", "big").summary["threads"]
    main = next(t for t in threads if t["name"].startswith("js-main"))
    others = [busy_fraction(t) for t in threads if t is not main]
    assert busy_fraction(main) > 0.7
    assert busy_fraction(main) > max(others)


def test_mplayer_decode_is_cpu_bound():
    for cluster in ("big", "little"):
        threads = run("mplayer-1080p", cluster).summary["threads"]
        decode = [t for t in threads if t["name"].startswith("mplayer-decode")]
        assert len(decode) == 1
        assert busy_fraction(decode[0]) > 0.98
