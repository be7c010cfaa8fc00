"""`hetlab platform from-dt`: a platform skeleton from device-tree source, on the RK3588 fixture
(rk3588-facts.dts + rk3588-facts-opp.dtsi, written from the facts of the kernel's rk3588-base.dtsi
and rk3588-opp.dtsi) under crates/hetlab-linux/tests/data/dt/; what the tree lacks goes to stderr,
a file it cannot read is one line. (`hetlab_linux::dt_platform`.)"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import processes

DT = Path(__file__).resolve().parent.parent / "crates/hetlab-linux/tests/data/dt"


def hetlab(*args: str) -> subprocess.CompletedProcess:
    return processes.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, timeout=300)


def test_rk3588_skeleton_has_its_clusters_and_cites_lines(tmp_path: Path) -> None:
    out = tmp_path / "rk3588.toml"
    r = hetlab("platform", "from-dt", str(DT / "rk3588-facts.dts"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads(out.read_text())
    assert [c["cpus"] for c in doc["clusters"]] == [[0, 1, 2, 3], [4, 5], [6, 7]]
    assert doc["clusters"][1]["opps"][-1] == [2400000, 1000000]  # rk3588-opp.dtsi cluster1's top
    assert [t["name"] for t in doc["core_types"]] == ["cortex-a55", "cortex-a76"]
    assert "rk3588-facts.dts:" in out.read_text()
    assert "not read" in r.stderr and "not in the device tree" not in r.stderr


def test_gs101_lacks_caches_and_says_so() -> None:
    r = hetlab("platform", "from-dt", str(DT / "gs101-facts.dts"))
    assert r.returncode == 0, r.stderr
    assert "not in the device tree" in r.stderr and "d-cache-size" in r.stderr
    assert tomllib.loads(r.stdout)["clusters"][2]["core_type"] == "cortex-x1"


def test_sm8650_idle_states_from_psci_power_domains() -> None:
    # sm8650.dtsi hangs its idle states off PSCI power domains (domain-idle-states); the cluster
    # domain spans the four frequency domains, so no per-domain cluster_off (said on stderr)
    r = hetlab("platform", "from-dt", str(DT / "sm8650-facts.dts"))
    assert r.returncode == 0, r.stderr
    clusters = tomllib.loads(r.stdout)["clusters"]
    assert [c["core_off_exit_latency_us"] for c in clusters] == [1300, 1300, 1900, 1850]
    assert "no per-domain cluster_off" in r.stderr and "no cpu-idle-states" not in r.stderr


def test_unreadable_source_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dts"
    bad.write_text("/dts-v1/;\n#ifdef X\n/ { };\n#endif\n")
    r = hetlab("platform", "from-dt", str(bad))
    assert r.returncode != 0
    assert r.stderr.startswith("hetlab: error: ") and "bad.dts:2" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = hetlab("platform", "from-dt", str(tmp_path / "missing.dts"))
    assert r.returncode != 0 and "missing.dts" in r.stderr and "Traceback" not in r.stderr


# The kernel's energy model from a DT (dev_pm_opp_of_register_em -> em_dev_register_perf_domain,
# the OPP core's estimate): power = dynamic-power-coefficient x mV^2 x MHz / 10^9 mW, on integer
# mV and MHz, truncated. Hand-worked from the DT values (gs101.dtsi, rk3588-opp.dtsi):
DT_POWER_MW = {
    "rk3588": {
        # A55, 1800 MHz at 950 mV: 228 x 950^2 x 1800 / 10^9 = 370.4 -> 370
        (0, 1800000): 370,
        # A76, 2400 MHz at 1000 mV: 416 x 1000^2 x 2400 / 10^9 = 998.4 -> 998
        (4, 2400000): 998,
    },
    "gs101": {
        # A55, 1803 MHz at 906.25 mV -> 906: 70 x 906^2 x 1803 / 10^9 = 103.6 -> 103
        (0, 1803000): 103,
        # A76, 2253 MHz at 968.75 mV -> 968: 284 x 968^2 x 2253 / 10^9 = 599.5 -> 599
        (4, 2253000): 599,
        # X1, 2802 MHz at 1056.25 mV -> 1056: 650 x 1056^2 x 2802 / 10^9 = 2030.997 -> 2030
        (6, 2802000): 2030,
    },
    # sm8650: the DT's coefficients (sm8650.dtsi) at the firmware table, an ASSUMPTION
    "sm8650": {
        # A520, 2300 MHz at 1000 mV: 100 x 1000^2 x 2300 / 10^9 = 230
        (0, 2300000): 230,
        # X4, 3300 MHz at 1000 mV: 588 x 1000^2 x 3300 / 10^9 = 1940.4 -> 1940
        (7, 3300000): 1940,
    },
}


def test_dt_platforms_energy_model_is_the_kernels_formula() -> None:
    from hetlab import api

    for name, hand in DT_POWER_MW.items():
        r = hetlab("platform", "export-em", name)
        assert r.returncode == 0, r.stderr
        domains = tomllib.loads(r.stdout)["energy_model"]
        summary = api.load_platform(name).summary()
        clusters = json.loads(summary)["clusters"]
        dpc = {
            t["name"]: t["dynamic_power_coefficient"]
            for t in tomllib.loads(
                (Path(__file__).resolve().parent.parent / "data/platforms" / f"{name}.toml").read_text()
            )["core_types"]
        }
        for domain, cluster in zip(domains, clusters, strict=True):
            assert domain["cpus"] == cluster["cpus"]
            c = dpc[cluster["core_type"]]
            for ps, khz, uv in zip(domain["ps"], cluster["opps_khz"], cluster["opps_uv"], strict=True):
                assert ps["frequency_khz"] == khz
                assert ps["power_mw"] == c * (uv // 1000) ** 2 * (khz // 1000) // 10**9, (name, khz)
        for (cpu, khz), mw in hand.items():
            domain = next(d for d in domains if cpu in d["cpus"])
            assert next(p["power_mw"] for p in domain["ps"] if p["frequency_khz"] == khz) == mw, (name, cpu, khz)
