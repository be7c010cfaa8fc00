"""`hetlab govern` and `hetlab characterize --backend linux` against a fake Exynos 5422 sysfs
tree (the real-board side of issue 5, through the Python package). The daemon's signal, error and
refusal paths are tested on the hetlabd binary in crates/hetlab-cli/tests/; these tests pin the
Python CLI to the same behaviour once the bindings are in the build."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import processes

LITTLE = [k * 100_000 for k in range(2, 15)]
BIG = [k * 100_000 for k in range(2, 21)]
START = {0: ("schedutil", 300_000, 1_300_000), 4: ("conservative", 400_000, 1_800_000)}
COLUMNS = (
    "backend,platform,platform_sha256,run_id,config_id,active_cluster,idle_cluster,big_khz,little_khz,pattern,"
    "size_elements,iterations,rep,seed,run_time_s,period_index,t_end_s,period_s,cci_cycles,si_rrq_hs_any_little,"
    "si_rrq_stall_tt_full_little,cci_congestion_little,si_rrq_hs_any_big,si_rrq_stall_tt_full_big,cci_congestion_big,"
    "cpu_cycles,inst_retired,bus_access,l2d_cache_refill,memory_access"
).split(",")


def make_board(root: Path) -> Path:
    """sysfs laid out like an Odroid-XU3 on a mainline kernel: policy0 = cpus 0-3, policy4 = 4-7."""
    for n, cpus, opps in ((0, "0 1 2 3", LITTLE), (4, "4 5 6 7", BIG)):
        d = root / "sys/devices/system/cpu/cpufreq" / f"policy{n}"
        d.mkdir(parents=True)
        gov, lo, hi = START[n]
        files = {
            "scaling_available_frequencies": " ".join(map(str, opps)) + " ",
            "scaling_available_governors": "conservative ondemand userspace powersave performance schedutil",
            "scaling_governor": gov,
            "scaling_min_freq": lo,
            "scaling_max_freq": hi,
            "scaling_setspeed": "<unsupported>",
            "scaling_cur_freq": lo,
            "cpuinfo_min_freq": opps[0],
            "cpuinfo_max_freq": opps[-1],
            "cpuinfo_transition_latency": 140000,
            "related_cpus": cpus,
            "affected_cpus": cpus,
        }
        for name, value in files.items():
            (d / name).write_text(f"{value}\n")
    (root / "proc").mkdir()
    (root / "run").mkdir()
    write_stat(root, busy=None)
    return root


def write_stat(root: Path, busy: int | None, rounds: int = 1) -> None:
    """/proc/stat at the start (busy=None), or after `rounds` x 100 more ticks per CPU, `busy` %
    of them busy. Written by rename, so the daemon never reads half a file."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for cpu in range(8):
        user = 1000 + (busy or 0) * rounds
        idle = 5000 + ((100 - busy) * rounds if busy is not None else 0)
        lines.append(f"cpu{cpu} {user} 0 0 {idle} 0 0 0 0 0 0")
    tmp = root / "proc" / ".stat.tmp"
    tmp.write_text("\n".join(lines) + "\nintr 0\nctxt 0\n")
    os.replace(tmp, root / "proc" / "stat")


def policy(root: Path, n: int, name: str) -> str:
    return (root / "sys/devices/system/cpu/cpufreq" / f"policy{n}" / name).read_text().strip()


def tree_files(root: Path) -> dict[str, str]:
    return {str(p): p.read_text() for p in sorted((root / "sys").rglob("*")) if p.is_file()}


def test_hetlab_govern_dry_run_decides_from_load_and_writes_nothing(tmp_path):
    root = make_board(tmp_path)
    before = tree_files(root)
    cmd = [
        sys.executable,
        "-m",
        "hetlab",
        "govern",
        "--governor",
        "ondemand",
        "--tunable",
        "sampling_rate=10000",
        "--dry-run",
        "--duration",
        "1.5",
        "--sysfs-root",
        str(root / "sys"),
        "--procfs-root",
        str(root / "proc"),
    ]
    proc = processes.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the CPUs get busy once the daemon samples (its first decision printed), however long it
    # took to start
    first = proc.stdout.readline()
    write_stat(root, busy=100)
    rest, err = proc.communicate(timeout=30)
    out = first + rest
    assert proc.returncode == 0, err
    targets = {
        (w["policy"], int(w["target_khz"]))
        for line in out.splitlines()
        if "policy=" in line
        for w in [dict(kv.split("=", 1) for kv in line.split())]
    }
    assert ("policy0", 1_300_000) in targets and ("policy4", 1_800_000) in targets, out
    assert all(k in (LITTLE if p == "policy0" else BIG) for p, k in targets)
    assert tree_files(root) == before
    assert list((root / "run").iterdir()) == []


def test_hetlab_govern_reads_only_the_threads_that_ran_unless_told_to_read_all(tmp_path):
    # anti-snoop over per-thread stand-in counters on this test's own threads: the start-up line
    # says how they are read (this kernel updates the task clock's user page at sched-in)
    root = make_board(tmp_path)
    base = [sys.executable, "-m", "hetlab", "govern", "--governor", "anti-snoop", "--dry-run", "--duration", "0.3"]
    base += ["--pmu", "software", "--counters", f"pid={os.getpid()}", "--sysfs-root", str(root / "sys")]
    base += ["--procfs-root", "/proc"]
    for extra, said in (([], "are not read"), (["--read-all-threads"], "every group read each sample")):
        run = processes.run(base + extra, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert said in run.stderr, run.stderr


def test_hetlab_govern_restores_on_sigterm(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the daemon refuses to run without root")
    import signal

    root = make_board(tmp_path)
    cmd = [
        sys.executable,
        "-m",
        "hetlab",
        "govern",
        "--governor",
        "ondemand",
        "--tunable",
        "sampling_rate=10000",
        "--sysfs-root",
        str(root / "sys"),
        "--procfs-root",
        str(root / "proc"),
    ]
    proc = processes.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    while time.time() < deadline and policy(root, 4, "scaling_governor") != "userspace":
        time.sleep(0.01)
    # The load keeps advancing until the daemon acts on it: a single write could land before
    # the daemon's first read of /proc/stat, which then sees no busy ticks at all.
    rounds = 0
    while time.time() < deadline and policy(root, 4, "scaling_setspeed") != "1800000":
        rounds += 1
        write_stat(root, busy=100, rounds=rounds)
        time.sleep(0.02)
    assert policy(root, 4, "scaling_setspeed") == "1800000"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    for n, (gov, lo, hi) in START.items():
        assert (
            policy(root, n, "scaling_governor"),
            policy(root, n, "scaling_min_freq"),
            policy(root, n, "scaling_max_freq"),
        ) == (gov, str(lo), str(hi))


def test_hetlab_characterize_linux_backend_writes_the_dataset_columns(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("characterize sets frequencies: root only")
    import pandas as pd

    root = make_board(tmp_path)
    out = tmp_path / "sweep.parquet"
    last = max(os.sched_getaffinity(0))
    processes.run(
        [
            sys.executable,
            "-m",
            "hetlab",
            "characterize",
            "--backend",
            "linux",
            "--out",
            str(out),
            "--reps",
            "2",
            "--patterns",
            "random",
            "--sizes",
            "4096",
            "--run-s",
            "0.02",
            "--period-us",
            "5000",
            "--big-khz",
            "200000,2000000",
            "--little-khz",
            "1400000",
            "--chase-cpu",
            f"little=0,big={last}",
            "--pmu",
            "software",
            "--sysfs-root",
            str(root / "sys"),
        ],
        check=True,
    )
    df = pd.read_parquet(out)
    assert list(df.columns) == COLUMNS
    assert set(df["backend"]) == {"linux"}
    assert sorted(df["run_id"].unique()) == list(range(8))
    assert set(df["big_khz"]) == {200_000, 2_000_000}
    for n, (gov, _lo, _hi) in START.items():
        assert policy(root, n, "scaling_governor") == gov


def test_hetlab_train_reads_the_csv_sweep_of_hetlabd(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("characterize sets frequencies: root only")
    import pandas as pd

    from test_linux_chase import hetlabd

    root = make_board(tmp_path)
    sweep = tmp_path / "sweep.csv"
    last = max(os.sched_getaffinity(0))
    board = ["--sysfs-root", str(root / "sys"), "--pmu", "software"]
    processes.run(
        [hetlabd(), "characterize", "--out", str(sweep), "--reps", "2", "--patterns", "random", "--sizes", "4096"]
        + ["--run-s", "0.02", "--period-us", "5000", "--big-khz", "200000,2000000", "--little-khz", "1400000"]
        + ["--chase-cpu", f"little=0,big={last}", *board],
        check=True,
        capture_output=True,
    )
    proc = processes.run(
        [sys.executable, "-m", "hetlab", "train", str(sweep), "--out", str(tmp_path / "model")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    model = __import__("json").loads((tmp_path / "model" / "model.json").read_text())
    assert model["provenance"]["sweep"]["rows"] == len(pd.read_csv(sweep))
    assert model["provenance"]["sweep"]["backend"] == ["linux"]


# hetlabd's options in the Python CLI: each number's range (and each list's rules) is declared
# once, in hetlab_linux::flags; `hetlab` reads them through the binding and refuses a value with
# hetlabd's own line, before it starts anything (the board is left as it was).
SAME_LINE = [
    (["govern", "--governor", "ondemand", "--duration", "1e300"], "--duration expects a number from 0.001 to"),
    (["govern", "--governor", "ondemand", "--duration", "0"], "--duration expects a number from 0.001 to"),
    (["govern", "--governor", "ondemand", "--duration", "nan"], "--duration expects a number from 0.001 to"),
    (["chase", "--iterations", "0"], "--iterations expects a whole number from 1 to"),
    (["chase", "--cpu", "99999"], "--cpu expects a whole number from 0 to 8191"),
    (["chase", "--elements", "4096,4096"], "--elements lists '4096' twice"),
    (["chase", "--pattern", "random,,sequential"], "--pattern 'random,,sequential' has an empty item"),
    (["pingpong", "--repeats", "0"], "--repeats expects a whole number from 1 to"),
    (["characterize", "--out", "s.csv", "--period-us", "0"], "--period-us expects a whole number from 100 to"),
    (["characterize", "--out", "s.csv", "--sizes", "4096,4096"], "--sizes lists '4096' twice"),
    (["characterize", "--out", "s.csv", "--patterns", "random,,sequential"], "has an empty item"),
    (["characterize", "--out", "s.csv", "--seed", str(1 << 64)], "--seed expects a whole number from 0 to"),
    (["characterize", "--out", "s.csv", "--run-s", "1e308"], "--run-s expects a number from 0.001 to 3600"),
    (["characterize", "--out", "s.csv", "--reps", "1"], "--reps expects a whole number from 2 to 1000"),
    (["characterize", "--out", "s.csv", "--big-khz", "0"], "--big-khz expects a whole number from 1 to"),
]


@pytest.mark.parametrize("args, says", SAME_LINE, ids=[" ".join(a[:1] + a[-2:]) for a, _ in SAME_LINE])
def test_hetlabd_options_in_the_python_cli_are_refused_with_hetlabds_own_line(tmp_path, args, says):
    from test_linux_chase import hetlabd

    root = make_board(tmp_path)
    board = ["--sysfs-root", str(root / "sys"), "--procfs-root", str(root / "proc")]
    extra = {"govern": board, "characterize": board, "chase": [], "pingpong": []}[args[0]]
    before = tree_files(root)
    python_args = [*args, *extra] + (["--backend", "linux"] if args[0] in ("characterize", "pingpong") else [])
    py = processes.run([sys.executable, "-m", "hetlab", *python_args], capture_output=True, text=True, cwd=tmp_path)
    rs = processes.run([hetlabd(), *args, *extra], capture_output=True, text=True, cwd=tmp_path)
    assert rs.returncode == 2 and rs.stderr.startswith("hetlabd: error: ") and says in rs.stderr, rs.stderr
    assert py.returncode == 2 and py.stdout == "", py.stderr
    assert py.stderr == rs.stderr.replace("hetlabd: error: ", "hetlab: error: ", 1), (py.stderr, rs.stderr)
    assert tree_files(root) == before and sorted(p.name for p in tmp_path.iterdir()) == ["proc", "run", "sys"]
