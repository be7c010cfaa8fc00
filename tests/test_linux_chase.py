"""The native pointer chase on this machine: `hetlabd chase` (the static binary) and `hetlab chase`
(the same Rust code through the Python package). Random-pattern time per access at 64 MB must be
at least 5x that at 16 KB (issue 5)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import processes

REPO = Path(__file__).resolve().parents[1]


def hetlabd() -> str:
    """The hetlabd binary `cargo test --release` built (built here if missing)."""
    if os.environ.get("HETLABD"):
        return os.environ["HETLABD"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    exe = target / "release" / "hetlabd"
    if not exe.exists():
        processes.run(["cargo", "build", "--release", "-p", "hetlab-cli"], cwd=REPO, check=True)
    return str(exe)


def _ratio(points: list[dict]) -> float:
    by_size = {p["size_bytes"]: p for p in points if p["pattern"] == "random"}
    small, large = by_size[16 << 10], by_size[64 << 20]
    assert small["size_elements"] == 4096 and large["size_elements"] == 16 << 20
    for p in (small, large):
        assert p["time_s"] >= 0.1 and p["accesses"] > 0 and p["cpu"] == 0
        assert p["ns_per_access"] == pytest.approx(p["time_s"] * 1e9 / p["accesses"])
    return large["ns_per_access"] / small["ns_per_access"]


def test_hetlabd_chase_random_64mb_is_at_least_5x_slower_per_access_than_16kb():
    out = processes.run(
        [hetlabd(), "chase", "--cpu", "0", "--sizes", "16K,64M", "--pattern", "random", "--min-time", "0.1", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["benchmark"] == "chase" and doc["min_time_s"] == 0.1
    ratio = _ratio(doc["points"])
    print(f"hetlabd chase: 64 MB / 16 KB random = {ratio:.1f}x")
    assert ratio >= 5.0


def test_hetlabd_chase_table_and_cycles_given_a_frequency():
    out = processes.run(
        [
            hetlabd(),
            "chase",
            "--sizes",
            "16K",
            "--pattern",
            "random,sequential,stride-16",
            "--min-time",
            "0.02",
            "--freq-khz",
            "1400000",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert "ns/access" in lines[1] and "cycles/access" in lines[1]
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["random", "sequential", "stride-16"]
    for r in rows:
        ns, cycles = float(r[-2]), float(r[-1])
        assert cycles == pytest.approx(ns * 1.4, rel=2e-3, abs=0.01)


def test_hetlab_chase_cli_random_64mb_is_at_least_5x_slower_per_access_than_16kb():
    out = processes.run(
        [
            sys.executable,
            "-m",
            "hetlab",
            "chase",
            "--cpu",
            "0",
            "--sizes",
            "16K,64M",
            "--pattern",
            "random",
            "--min-time",
            "0.1",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    ratio = _ratio(json.loads(out.stdout)["points"])
    print(f"hetlab chase: 64 MB / 16 KB random = {ratio:.1f}x")
    assert ratio >= 5.0
