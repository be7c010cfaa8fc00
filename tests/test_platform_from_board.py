"""`hetlab platform from-board` on a fake board tree laid out like sysfs and procfs: what the
kernel shows (policies, OPP lists, capacities, caches, cpuidle, the CPU part, the energy model
in debugfs) is read, the rest comes from the template marked TODO, and the platform loads and
simulates. (`hetlab_linux::board_platform`.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import processes
from hetlab import api

# An Exynos 5433 as a mainline arm64 kernel shows it: cpu0-3 Cortex-A53 (part 0xd03), cpu4-7
# Cortex-A57 (0xd07); the OPP lists and capacities of hetlab's own exynos5433 platform.
PARTS = {0: 0xD03, 4: 0xD07}
CACHES = {  # (level, type, size, ways, line)
    0: [(1, "Data", "32K", 4, 64), (1, "Instruction", "32K", 2, 64), (2, "Unified", "256K", 16, 64)],
    4: [(1, "Data", "32K", 2, 64), (1, "Instruction", "48K", 3, 64), (2, "Unified", "2048K", 16, 64)],
}
IDLE = {0: [("WFI", 1, 1), ("C1", 150, 1500)], 4: [("WFI", 1, 1), ("C1", 300, 3000)]}


def hetlab(*args: str) -> subprocess.CompletedProcess:
    return processes.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, timeout=300)


def make_board(root: Path, with_em: bool) -> Path:
    summary = json.loads(api.load_platform("exynos5433").summary())
    sys_cpu = root / "sys/devices/system/cpu"
    cpuinfo = []
    for cluster in summary["clusters"]:
        cpus, first = cluster["cpus"], cluster["cpus"][0]
        d = sys_cpu / "cpufreq" / f"policy{first}"
        d.mkdir(parents=True)
        opps = cluster["opps_khz"]
        for name, value in {
            "scaling_available_frequencies": " ".join(map(str, opps)) + " ",
            "cpuinfo_min_freq": opps[0],
            "cpuinfo_max_freq": opps[-1],
            "cpuinfo_transition_latency": 100000,
            "related_cpus": " ".join(map(str, cpus)),
            "affected_cpus": " ".join(map(str, cpus)),
            "scaling_available_governors": "ondemand userspace performance schedutil",
        }.items():
            (d / name).write_text(f"{value}\n")
        for cpu in cpus:
            c = sys_cpu / f"cpu{cpu}"
            c.mkdir(parents=True, exist_ok=True)
            (c / "cpu_capacity").write_text(f"{cluster['capacity']}\n")
            for i, (level, kind, size, ways, line) in enumerate(CACHES[first]):
                index = c / "cache" / f"index{i}"
                index.mkdir(parents=True)
                for name, value in (("level", level), ("type", kind), ("size", size)):
                    (index / name).write_text(f"{value}\n")
                (index / "ways_of_associativity").write_text(f"{ways}\n")
                (index / "coherency_line_size").write_text(f"{line}\n")
            for i, (name, latency, residency) in enumerate(IDLE[first]):
                state = c / "cpuidle" / f"state{i}"
                state.mkdir(parents=True)
                for f, value in (("name", name), ("latency", latency), ("residency", residency)):
                    (state / f).write_text(f"{value}\n")
            cpuinfo.append(f"processor\t: {cpu}\nCPU implementer\t: 0x41\nCPU part\t: {PARTS[first]:#x}\n")
    (root / "proc").mkdir()
    (root / "proc/cpuinfo").write_text("\n".join(cpuinfo))
    if with_em:
        em = hetlab(
            "platform",
            "export-em",
            "exynos5433",
            "--format",
            "debugfs",
            "--out",
            str(root / "sys/kernel/debug/energy_model"),
        )
        assert em.returncode == 0, em.stderr
    return root


def from_board(root: Path, out: Path, template: str) -> str:
    run = hetlab(
        "platform",
        "from-board",
        "--template",
        template,
        "--sysfs-root",
        str(root / "sys"),
        "--procfs-root",
        str(root / "proc"),
        "--out",
        str(out),
    )
    assert run.returncode == 0, run.stderr
    return out.read_text()


def test_a_board_becomes_a_platform_that_loads_and_simulates(tmp_path):
    board = make_board(tmp_path / "board", with_em=True)
    text = from_board(board, tmp_path / "board.toml", "exynos5433")
    p = tomllib.loads(text)
    little, big = p["clusters"]
    assert (little["core_type"], big["core_type"]) == ("cortex-a53", "cortex-a57")
    assert little["cpus"] == [0, 1, 2, 3] and big["cpus"] == [4, 5, 6, 7]
    assert (little["l2_bytes"], big["l2_bytes"]) == (256 * 1024, 2048 * 1024)
    assert (big["cluster_off_exit_latency_us"], big["cluster_off_target_residency_us"]) == (300, 3000)
    a57 = next(c for c in p["core_types"] if c["name"] == "cortex-a57")
    assert a57["caches"] == {"l1i_bytes": 48 * 1024, "l1i_ways": 3, "l1i_line_bytes": 64, "l1d_ways": 2}
    assert a57["capacity_dmips_mhz"] == 1024
    # the board's energy model, read from its debugfs
    assert len(p["energy_model"]) == 2
    # every value says where it came from
    assert "read: devices/system/cpu/cpufreq/policy4/related_cpus" in text
    assert "read: /proc/cpuinfo CPU part 0xd07 of cpu4" in text
    assert "TODO template exynos5433: CONFIG_HZ is not in sysfs" in text
    run = hetlab("simulate", "--platform", str(tmp_path / "board.toml"), "--workload", "cpu-bound", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["time_s"] > 0


def test_a_template_of_other_cores_lends_its_figures_and_says_so(tmp_path):
    board = make_board(tmp_path / "board", with_em=False)
    text = from_board(board, tmp_path / "board.toml", "exynos5422")
    p = tomllib.loads(text)
    assert [c["name"] for c in p["core_types"]] == ["cortex-a53", "cortex-a57"]
    assert "are cortex-a7's from template exynos5422 (a different core type)" in text
    assert "energy_model" not in p
    # the A53's OPPs are the board's; their voltages the template's, marked
    assert [o[0] for o in p["clusters"][0]["opps"]] == json.loads(api.load_platform("exynos5433").summary())[
        "clusters"
    ][0]["opps_khz"]
    assert "µV from cluster 'little'" in text


@pytest.mark.parametrize(
    "breakage, says",
    [
        (lambda root: __import__("shutil").rmtree(root / "sys/devices/system/cpu/cpufreq"), "no cpufreq policies"),
        (lambda root: None, "unknown platform 'nope'"),
        (
            lambda root: (root / "sys/kernel/debug/energy_model/cpu0/cpus").write_text("0-2\n"),
            "the energy model does not fit the board's cpufreq policies",
        ),
    ],
)
def test_what_cannot_be_read_is_one_error_line(tmp_path, breakage, says):
    board = make_board(tmp_path / "board", with_em=True)
    breakage(board)
    template = "nope" if "nope" in says else "exynos5433"
    run = hetlab("platform", "from-board", "--template", template, "--sysfs-root", str(board / "sys"))
    assert run.returncode != 0 and run.stdout == ""
    assert run.stderr.startswith("hetlab: error: ") and run.stderr.count("\n") == 1 and says in run.stderr


@pytest.mark.parametrize(
    "where",
    [
        "sys/devices/system/cpu/cpu4/cache/index2/size",
        "sys/devices/system/cpu/cpufreq/policy0/affected_cpus",
        "proc/cpuinfo",
    ],
)
def test_a_fifo_in_the_board_tree_is_one_error_naming_it(tmp_path, where):
    board = make_board(tmp_path / "board", with_em=False)
    (board / where).unlink()
    os.mkfifo(board / where)  # read blocking, this would hang until the helper's timeout
    run = hetlab("platform", "from-board", "--sysfs-root", str(board / "sys"), "--procfs-root", str(board / "proc"))
    assert run.returncode != 0 and run.stdout == "", run.stderr
    assert run.stderr.startswith("hetlab: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert where.split("/", 1)[1] in run.stderr and "not a regular file" in run.stderr


def test_a_fifo_in_the_board_energy_model_is_one_error(tmp_path):
    board = make_board(tmp_path / "board", with_em=True)
    power = next((board / "sys/kernel/debug/energy_model").glob("*/ps:*/power"))
    power.unlink()
    os.mkfifo(power)
    run = hetlab("platform", "from-board", "--sysfs-root", str(board / "sys"), "--procfs-root", str(board / "proc"))
    assert run.returncode != 0 and run.stderr.count("\n") == 1 and "not a regular file" in run.stderr, run.stderr


def test_attributes_that_hold_no_plausible_value_become_todos_with_the_reason(tmp_path):
    board = make_board(tmp_path / "board", with_em=False)
    cpu = board / "sys/devices/system/cpu"
    (cpu / "cpu0/cpu_capacity").write_text("-5\n")
    (cpu / "cpu4/cache/index2/ways_of_associativity").write_text("lots\n")
    (cpu / "cpu0/cache/index2/size").write_text("99999999K\n")
    text = from_board(board, tmp_path / "board.toml", "exynos5433")
    assert "cpu0/cpu_capacity holds '-5', not a capacity in 1..=1024; not derived" in text
    assert "cpu4/cache/index2/ways_of_associativity holds 'lots', not a number of ways" in text
    assert "cpu0/cache/index2/size holds '99999999K', not a cache size" in text
    p = tomllib.loads(text)
    assert p["clusters"][1]["l2_bytes"] == 2048 * 1024  # the size was fine: still read
    run = hetlab("simulate", "--platform", str(tmp_path / "board.toml"), "--workload", "cpu-bound", "--json")
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    "pattern, text, says",
    [
        ("*/cpus", "0-99999999999\n", "holds '0-99999999999', not a CPU list"),  # once a 10^11-element list
        ("*/ps:*/frequency", "abc\n", "holds 'abc', not a frequency in kHz"),
        ("*/ps:*/frequency", "0\n", "holds '0', not a frequency in kHz"),
        ("*/ps:*/power", "-5\n", "holds '-5', not a power in mW (1..=65535)"),
        ("*/ps:*/power", "1" + "0" * 30 + "\n", "not a power in mW (1..=65535)"),
        ("*/cpus", b"\xff\n", "it is not text"),
    ],
)
def test_the_board_energy_model_is_read_in_rust_each_bad_value_named_with_its_file(tmp_path, pattern, text, says):
    """The debugfs energy model is read by hetlab_linux::em_debugfs (the one bounded reader, no
    Python copy of it): a value the kernel could not show is one line naming the file."""
    board = make_board(tmp_path / "board", with_em=True)
    target = next((board / "sys/kernel/debug/energy_model").glob(pattern))
    target.write_bytes(text if isinstance(text, bytes) else text.encode())
    run = hetlab("platform", "from-board", "--sysfs-root", str(board / "sys"), "--procfs-root", str(board / "proc"))
    assert run.returncode != 0 and run.stdout == "", run.stderr
    assert run.stderr.startswith("hetlab: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert str(target.relative_to(board)) in run.stderr and says in run.stderr, run.stderr
    from hetlab import _files

    assert not hasattr(_files, "read_attribute"), "one reader, in Rust"
