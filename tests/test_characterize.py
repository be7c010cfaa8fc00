"""The simulated characterization sweep through the API: the plan's rules (hetlab_core::sweep),
its errors, and resuming an interrupted sweep."""

import sys

import pandas as pd
import pytest

import processes
from hetlab.api import HetlabError
from hetlab.characterize import characterize

SMALL = dict(reps=2, patterns=("random",), sizes=(4096, 1048576), run_s=0.02, active_opp="top", seed=5)


def test_rows_follow_the_plan_and_each_run_has_its_own_seed(tmp_path):
    df = pd.read_parquet(characterize(str(tmp_path / "s.parquet"), **SMALL))
    runs = df.drop_duplicates("run_id")
    assert list(runs.run_id) == list(range((19 + 13) * 2 * 2)), "dense, in sweep order"
    assert (runs.seed == 5 + runs.run_id).all(), "run i uses seed + i"
    assert list(runs.rep[:4]) == [0, 1, 0, 1]
    little = runs[runs.active_cluster == "little"]
    assert set(little.little_khz) == {1_400_000} and list(little.big_khz[:4]) == [200_000, 200_000, 300_000, 300_000]
    parts = [df.active_cluster, "random", df.size_elements.astype(str), df.big_khz.astype(str), df.little_khz]
    assert (
        df.config_id == parts[0] + "-" + parts[1] + "-" + parts[2] + "-" + parts[3] + "-" + parts[4].astype(str)
    ).all()
    assert (df.memory_access == df.bus_access / df.cpu_cycles).all()


class _StopAfter:
    """A progress bar that interrupts the sweep after `n` runs, as Ctrl-C would."""

    def __init__(self, n):
        self.left = n

    def __call__(self, total, done):
        return self

    def update(self, n):
        self.left -= n
        if self.left <= 0:
            raise KeyboardInterrupt

    def close(self):
        pass


def test_an_interrupted_sweep_resumes_to_the_same_rows(tmp_path):
    whole = pd.read_parquet(characterize(str(tmp_path / "whole.parquet"), **SMALL))
    out = tmp_path / "cut.parquet"
    with pytest.raises(KeyboardInterrupt):
        characterize(str(out), progress=_StopAfter(19 * 2 + 5), workers=1, **SMALL)
    partial = tmp_path / "cut.parquet.partial"
    assert sorted(p.name for p in partial.iterdir()) == ["chunk-little-random-4096.arrow", "plan.json"]
    assert not out.exists()
    with pytest.raises(HetlabError, match="interrupted sweep with other parameters"):
        characterize(str(out), **{**SMALL, "seed": 6})
    assert pd.read_parquet(characterize(str(out), **SMALL)).equals(whole)
    assert not partial.exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(reps=1), "--reps must be at least 2 (the t-test needs repetitions), got 1"),
        (dict(run_s=0.0), "--run-s must be a positive number of seconds, got 0"),
        (dict(patterns=("zigzag",)), "unknown pattern(s) zigzag; known: random, sequential, stride-16"),
        (dict(active_opp="some"), "unknown --active-opp 'some'; use one of all, top"),
        (dict(sizes=(0,)), "--sizes: array sizes are counts of 4-byte elements, at least 1; got 0"),
    ],
)
def test_bad_options_are_one_line_errors_before_anything_is_written(tmp_path, options, message):
    with pytest.raises(HetlabError) as e:
        characterize(str(tmp_path / "s.parquet"), **{**SMALL, **options})
    assert str(e.value) == message
    assert list(tmp_path.iterdir()) == []


def test_a_platform_without_big_and_little_is_refused_in_one_line(tmp_path):
    from hetlab import _core

    text = _core.builtin_platform_text("exynos5422")
    text = text.replace('name = "big"', 'name = "prime"').replace("{ big = ", "{ prime = ")
    assert 'name = "prime"' in text
    (tmp_path / "p.toml").write_text(text)
    r = processes.run(
        [sys.executable, "-m", "hetlab", "characterize", "--platform", str(tmp_path / "p.toml"), "--out", "s.parquet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 2
    assert r.stderr.startswith("hetlab: error: the sweep needs a platform with two clusters named big and little")
    assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "s.parquet.partial").exists()
