"""Energy models out and back in: `hetlab platform export-em` writes the tree Linux shows under
/sys/kernel/debug/energy_model (or platform tables); `import-em` reads such a tree back; a
platform file given those tables has the same model, and EAS decides the same on it; LISA's
LinuxEnergyModel reads an exported tree as it reads a board's and estimates what hetlab's EM does."""

import sys
from pathlib import Path

import pytest

import hetlab
import processes
from hetlab import _core, energy_model
from hetlab.api import HetlabError

BIN = Path(sys.executable).parent


def hetlab_cli(*args):
    proc = processes.run([str(BIN / "hetlab"), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("platform", ["exynos5422", "linsched-2b2l"])
def test_an_exported_tree_read_back_gives_the_same_model(tmp_path, platform):
    tree = tmp_path / "energy_model"
    hetlab_cli("platform", "export-em", platform, "--format", "debugfs", "--out", str(tree))
    original = energy_model.energy_model(platform)
    first = original["domains"][0]
    top = first["states"][-1]
    # the kernel's layout: a directory per domain named after its first CPU, ps:<kHz>/ files
    domain_dir = tree / f"cpu{min(first['cpus'])}"
    assert (domain_dir / "cpus").read_text() == energy_model.cpu_list(first["cpus"]) + "\n"
    for name, key in (("frequency", "frequency_khz"), ("power", "power_mw"), ("cost", "cost")):
        assert (domain_dir / f"ps:{top['frequency_khz']}" / name).read_text() == f"{top[key]}\n"

    tables = tmp_path / "em.toml"
    hetlab_cli("platform", "import-em", str(tree), "--out", str(tables))
    board = tmp_path / f"{platform}-measured.toml"
    board.write_text(_core.builtin_platform_text(platform) + "\n" + tables.read_text())
    assert energy_model.energy_model(str(board))["domains"] == original["domains"]


def test_eas_decides_the_same_on_the_re_imported_model(tmp_path):
    tables = hetlab_cli("platform", "export-em", "exynos5422")
    board = tmp_path / "exynos5422-em.toml"
    board.write_text(_core.builtin_platform_text("exynos5422") + "\n" + tables)
    runs = [
        hetlab.simulate(p, "mixed8", scheduler="eas", governor="schedutil", time_limit_s=2.0)
        for p in ("exynos5422", str(board))
    ]
    assert runs[0].metrics() == runs[1].metrics()
    assert [t["cpu_time_on_s"] for t in runs[0].summary["threads"]] == [
        t["cpu_time_on_s"] for t in runs[1].summary["threads"]
    ]


def test_cpu_lists_read_and_write_as_the_kernel_prints_them():
    assert energy_model.cpu_list([4, 5, 6, 7]) == "4-7"
    assert energy_model.cpu_list([0, 1, 3, 5, 6]) == "0-1,3,5-6"
    assert energy_model.parse_cpu_list("0-1,3,5-6\n") == [0, 1, 3, 5, 6]


def test_older_kernels_cs_directories_are_read(tmp_path):
    d = tmp_path / "pd0"
    (d / "cs:500000").mkdir(parents=True)
    (d / "cpus").write_text("0-1\n")
    (d / "cs:500000" / "frequency").write_text("500000\n")
    (d / "cs:500000" / "power").write_text("120\n")
    assert energy_model.read_debugfs(tmp_path) == [
        {"cpus": [0, 1], "ps": [{"frequency_khz": 500000, "power_mw": 120}], "units": "milliWatts"}
    ]


def test_bad_trees_are_one_line_errors(tmp_path):
    with pytest.raises(HetlabError, match="holds no performance domain"):
        energy_model.read_debugfs(tmp_path)
    (tmp_path / "cpu0").mkdir()
    (tmp_path / "cpu0" / "cpus").write_text("zero\n")
    (tmp_path / "cpu0" / "ps:1").mkdir()
    (tmp_path / "cpu0" / "ps:1" / "frequency").write_text("1\n")
    (tmp_path / "cpu0" / "ps:1" / "power").write_text("1\n")
    with pytest.raises(HetlabError, match="not a CPU list"):
        energy_model.read_debugfs(tmp_path)
    proc = processes.run(
        [str(BIN / "hetlab"), "platform", "export-em", "exynos5422", "--format", "debugfs"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and proc.stderr.startswith("hetlab: error: --format debugfs writes a directory")


# LISA's `LinuxEnergyModel` reads an exported tree as it reads a board (tests/lisa_energy_model.py
# in the LISA venv: conftest.py's `lisa_python`).
UTILS = [[0] * 8, [100, 0, 0, 0, 0, 0, 0, 0], [300, 300, 0, 0, 600, 0, 0, 0], [400] * 4 + [900] * 4]


def expected_bogo_watts(em: dict, utils: list[int]) -> float:
    """EAS's estimate by hand: per domain, the lowest state whose capacity covers its busiest
    CPU, each CPU charged that state's power x util / capacity (util at most the CPU's
    capacity), the capacity at a state being
    frequency / top frequency x the CPU's capacity (em_cpu_energy's cost x util / scale_cpu)."""
    total = 0.0
    for domain in em["domains"]:
        top_khz = domain["states"][-1]["frequency_khz"]
        capacity = {s["frequency_khz"]: s["frequency_khz"] / top_khz * domain["capacity"] for s in domain["states"]}
        util = {c: min(utils[c], domain["capacity"]) for c in domain["cpus"]}  # a CPU runs at most flat out
        busiest = max(util.values())
        state = next(s for s in domain["states"] if capacity[s["frequency_khz"]] >= busiest)
        total += sum(state["power_mw"] * u / capacity[state["frequency_khz"]] for u in util.values())
    return total


@pytest.mark.lisa
def test_lisa_reads_an_exported_model_as_it_reads_a_board(tmp_path, lisa_python):
    import json

    # the export is a board's root: the debugfs tree and each CPU's cpu_capacity
    root = tmp_path / "board"
    hetlab_cli("platform", "export-em", "exynos5422", "--format", "board", "--out", str(root))
    em = energy_model.energy_model("exynos5422")
    for domain in em["domains"]:
        for cpu in domain["cpus"]:
            assert (root / f"sys/devices/system/cpu/cpu{cpu}/cpu_capacity").read_text() == f"{domain['capacity']}\n"
    script = [lisa_python, str(Path(__file__).parent / "lisa_energy_model.py"), str(root), json.dumps(UTILS)]
    proc = processes.run(script, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lisa = json.loads(proc.stdout)
    assert sorted(lisa["freq_domains"]) == sorted(d["cpus"] for d in em["domains"])
    for domain in em["domains"]:
        for cpu in domain["cpus"]:
            states = lisa["cpus"][str(cpu)]
            assert [f for f, _, _ in states] == [s["frequency_khz"] for s in domain["states"]]
            assert [p for _, _, p in states] == [s["power_mw"] for s in domain["states"]]
            # the kernel's performance is the same ratio, truncated to an integer
            assert [c for _, c, _ in states] == pytest.approx([s["performance"] for s in domain["states"]], abs=1)
    for utils, estimate in zip(UTILS, lisa["estimates"]):
        assert estimate == pytest.approx(expected_bogo_watts(em, utils), rel=1e-3), utils


@pytest.mark.parametrize(
    "marks, micro",
    [
        ({"units": "microWatts\n"}, True),  # Linux 5.19..6.8: µW, read back as mW
        ({"flags": "0x1\n"}, True),  # from 6.9: flags bit 0 is µW
        ({"units": "bogoWatts\n"}, False),  # an abstract scale stays one, marked
        ({"flags": "0\n"}, False),
        ({"units": "milliWatts\n"}, False),
    ],
)
def test_powers_are_read_as_the_kernel_marks_their_units(tmp_path, marks, micro):
    em = energy_model.energy_model("exynos5422")
    tree = tmp_path / "em"
    energy_model.write_debugfs(em, tree)
    for d in tree.iterdir():
        for name, text in marks.items():
            (d / name).write_text(text)
        if micro:  # the same powers, in µW
            for power in d.glob("ps:*/power"):
                power.write_text(f"{int(power.read_text()) * 1000}\n")
    domains = energy_model.read_debugfs(tree)
    want = "bogoWatts" if "bogo" in str(marks) or marks.get("flags") == "0\n" else "milliWatts"
    assert [d["units"] for d in domains] == [want, want]
    assert [[s["power_mw"] for s in d["ps"]] for d in domains] == [
        [s["power_mw"] for s in d["states"]] for d in em["domains"]
    ]
    tables = hetlab_cli("platform", "import-em", str(tree))
    assert tables.count('units = "bogoWatts"') == (2 if want == "bogoWatts" else 0)
    # the tables make a platform that runs EAS
    platform = tmp_path / "p.toml"
    platform.write_text(_core.builtin_platform_text("exynos5422") + "\n" + tables)
    workload = "periodic:run_us=2000,period_us=10000,duration_us=50000"
    hetlab_cli(
        "simulate", "--platform", str(platform), "--workload", workload, "--scheduler", "eas", "--governor", "schedutil"
    )
