"""`hetlab pingpong` / `hetlabd pingpong`: the inter-core latency matrix measured on this machine,
next to the model's same-cluster and cross-cluster transfer latencies."""

import json
import os

import pytest

from helpers import hetlab_cli
from hetlab import api
from hetlab.api import HetlabError


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a line needs two CPUs to bounce between")
def test_the_measured_matrix_has_every_ordered_pair_and_the_model_follows():
    p = hetlab_cli("pingpong", "--platform", "exynos5433", "--round-trips", "2000", "--repeats", "2")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("pingpong: ns per one-way cache-line transfer")
    cpus = sorted(os.sched_getaffinity(0))
    rows = lines[2 : 2 + len(cpus)]
    for i, row in enumerate(rows):
        cells = row.split()
        assert cells[0] == f"cpu{cpus[i]}" and cells[1 + i] == "-"
        assert all(float(c) > 0 for j, c in enumerate(cells[1:]) if j != i)
    assert any(ln.startswith("model exynos5433 (top OPPs)") for ln in lines)
    r = api.pingpong(f"{cpus[0]},{cpus[1]}", round_trips=500, repeats=1)
    assert r.report["cpus"] == cpus[:2] and r.report["one_way_ns"][0][1] > 0
    j = hetlab_cli("pingpong", "--cpus", f"{cpus[0]},{cpus[1]}", "--round-trips", "500", "--json")
    assert j.returncode == 0, j.stderr
    assert json.loads(j.stdout)["one_way_ns"][1][0] > 0


def test_the_model_moves_lines_across_clusters_slower_than_within():
    for platform in ("exynos5433", "exynos5422"):
        ns = api.line_transfer_ns(platform)
        assert ns[("big", "little")] > 2 * ns[("little", "little")]
        assert ns[("little", "big")] > 2 * ns[("big", "big")]
    # the snoop is served at the snooped cluster's clock: a slower big clock slows lines from big
    assert (
        api.line_transfer_ns("exynos5433")[("big", "little")]
        > 3 * api.line_transfer_ns("exynos5433")[("little", "little")]
    )
    p = hetlab_cli("pingpong", "--backend", "sim", "--platform", "exynos5433")
    assert p.returncode == 0 and "pingpong:" not in p.stdout and "little" in p.stdout


def test_bad_input_is_one_line():
    for args in (("--cpus", "100000"), ("--round-trips", "lots"), ("--backend", "sim", "--platform", "nosuch")):
        p = hetlab_cli("pingpong", *args)
        assert (
            p.returncode != 0
            and p.stderr.count("\n") == 1
            and p.stderr.startswith(("hetlab: error:", "usage:"))
            or "error" in p.stderr
        ), p.stderr
    with pytest.raises(HetlabError, match="not one this process may run on"):
        api.pingpong("8000")
    # no kernel numbers a CPU past CONFIG_NR_CPUS's largest value
    with pytest.raises(HetlabError, match="below 8192"):
        api.pingpong("100000")
