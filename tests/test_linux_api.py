"""The real board through the Python API (`hetlab.chase`, `hetlab.govern`,
`hetlab.characterize(backend="linux")`) against the fake Exynos 5422 sysfs tree of
test_linux_cli, and the `hetlab` board commands' parsers against hetlabd's."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import hetlab
import processes
from hetlab import cli
from hetlab.api import HetlabError
from test_linux_chase import hetlabd
from test_linux_cli import COLUMNS, START, make_board, policy, tree_files


def test_characterize_linux_backend_through_the_api(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("characterize sets frequencies: root only")
    root = make_board(tmp_path)
    out = tmp_path / "sweep.parquet"
    path = hetlab.characterize(
        str(out),
        backend="linux",
        reps=2,
        patterns=["random"],
        sizes=[4096],
        run_s=0.02,
        seed=7,
        period_us=5000,
        freqs_khz={"big": [200_000, 2_000_000], "little": [1_400_000]},
        chase_cpus={"little": 0, "big": max(os.sched_getaffinity(0))},
        pmu="software",
        sysfs_root=str(root / "sys"),
    )
    df = pd.read_parquet(path)
    assert list(df.columns) == COLUMNS
    assert set(df.backend) == {"linux"} and sorted(df.run_id.unique()) == list(range(8))
    assert (df.seed == 7 + df.run_id).all(), "run i's chain uses seed + i"
    # the same types as the simulated sweep's columns
    sim = pd.read_parquet(
        hetlab.characterize(str(tmp_path / "sim.parquet"), reps=2, patterns=["random"], sizes=[4096], run_s=0.01)
    )
    assert (df.dtypes == sim.dtypes).all()
    for n, (gov, lo, hi) in START.items():
        restored = (policy(root, n, "scaling_governor"), policy(root, n, "scaling_min_freq"))
        assert restored + (policy(root, n, "scaling_max_freq"),) == (gov, str(lo), str(hi))


def test_board_options_are_refused_for_the_simulator(tmp_path):
    with pytest.raises(HetlabError, match="pmu, sysfs_root: board options, for backend 'linux' only"):
        hetlab.characterize(str(tmp_path / "s.parquet"), pmu="software", sysfs_root="/tmp")
    r = processes.run(
        [sys.executable, "-m", "hetlab", "characterize", "--out", "s.parquet", "--period-us", "5000"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 2 and r.stderr == "hetlab: error: --period-us belongs to --backend linux\n"


def test_govern_dry_run_through_the_api_writes_nothing(tmp_path, capfd):
    root = make_board(tmp_path)
    before = tree_files(root)
    r = hetlab.govern(
        "ondemand",
        tunables={"sampling_rate": 10_000},
        dry_run=True,
        duration_s=0.2,
        sysfs_root=str(root / "sys"),
        procfs_root=str(root / "proc"),
    )
    assert r.stop_reason == "duration" and r.samples >= 2 and r.writes == 0 and r.restored == []
    assert "policy=policy0" in capfd.readouterr().out
    assert tree_files(root) == before
    with pytest.raises(HetlabError, match="--duration must be a positive number of seconds, got -1"):
        hetlab.govern("ondemand", dry_run=True, duration_s=-1, sysfs_root=str(root / "sys"))
    with pytest.raises(HetlabError, match=r"got 1e300 \(at most 31536000 s, a year\)"):
        hetlab.govern("ondemand", dry_run=True, duration_s=1e300, sysfs_root=str(root / "sys"))
    with pytest.raises(HetlabError, match="unknown counter mode 'some'"):
        hetlab.govern("ondemand", dry_run=True, counters="some", sysfs_root=str(root / "sys"))


def test_after_govern_python_gets_its_signals_back(tmp_path):
    # govern blocks SIGINT while it runs (a signalfd reads it); once it returns, Ctrl-C is
    # Python's KeyboardInterrupt again
    root = make_board(tmp_path)
    script = textwrap.dedent(
        f"""
        import os, signal, hetlab
        hetlab.govern("ondemand", dry_run=True, duration_s=0.1, sysfs_root={str(root / "sys")!r},
                      procfs_root={str(root / "proc")!r})
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a call that lets the handler run
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
        """
    )
    r = processes.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "KeyboardInterrupt"


def test_hetlab_govern_restores_on_sigint(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the daemon refuses to run without root")
    import time

    root = make_board(tmp_path)
    cmd = [sys.executable, "-m", "hetlab", "govern", "--governor", "performance"]
    for flag, sub in (("--sysfs-root", "sys"), ("--procfs-root", "proc")):
        cmd += [flag, str(root / sub)]
    proc = processes.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    # performance: the policy's max, which START limits to 1.8 GHz
    while time.time() < deadline and policy(root, 4, "scaling_setspeed") != "1800000":
        time.sleep(0.01)
    assert policy(root, 4, "scaling_governor") == "userspace"
    assert policy(root, 4, "scaling_setspeed") == "1800000"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "hetlab: stopped (SIGINT)" in err and "restored policy0 governor=schedutil" in err
    for n, (gov, lo, hi) in START.items():
        assert (policy(root, n, "scaling_min_freq"), policy(root, n, "scaling_max_freq")) == (str(lo), str(hi))
        assert policy(root, n, "scaling_governor") == gov


def test_chase_through_the_api():
    r = hetlab.chase("16K", patterns=["random", "stride-16"], min_time_s=0.01, freq_khz=1_000_000)
    assert [p["pattern"] for p in r.points] == ["random", "stride-16"]
    assert all(p["size_bytes"] == 16 << 10 and p["cycles_per_access"] > 0 for p in r.points)
    assert r.text.startswith("chase: cpu any  min time 0.01 s per point") and "stride-16" in r.text
    assert hetlab.chase(elements=[4096], min_time_s=0.0).points[0]["size_elements"] == 4096
    with pytest.raises(HetlabError, match="unknown pattern 'zigzag'"):
        hetlab.chase("16K", patterns=["zigzag"])
    with pytest.raises(HetlabError, match="not both"):
        hetlab.chase("16K", elements=[4096])


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", help_text)) - {"--help"}


@pytest.mark.parametrize("command", ["chase", "govern"])
def test_board_commands_take_hetlabds_options_and_help_returns(command, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0, "--help prints and returns; the process lives on"
    ours = capsys.readouterr().out
    theirs = processes.run([hetlabd(), command, "--help"], capture_output=True, text=True, check=True).stdout
    flags = _options(theirs.split("options:")[1])
    assert flags and flags == _options(ours.split("options:")[1])
    # same words: each option's help and default come from one declaration
    assert (
        "(default 0.2)" in ours
        if command == "chase"
        else "(/run for /sys or any mount of it)" in " ".join(ours.split())
    )


def test_characterize_takes_hetlabds_options_but_its_own_output():
    ours = processes.run(
        [sys.executable, "-m", "hetlab", "characterize", "--help"], capture_output=True, text=True, check=True
    ).stdout
    theirs = processes.run([hetlabd(), "characterize", "--help"], capture_output=True, text=True, check=True).stdout
    extra = {"--backend", "--jobs", "--executor"}  # the simulator's; --out is Parquet here, CSV there
    assert _options(theirs.split("options:")[1]) == _options(ours.split("options:")[1]) - extra
