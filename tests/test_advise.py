"""`hetlab advise`: a compute-bound and a bandwidth-bound workload get different recommendations
with the numbers behind them; the Pareto front and the objectives are what they say; bad input is
one line."""

import re
import struct

import pytest

from helpers import hetlab_cli
from hetlab import advise
from hetlab.advise import Candidate, Outcome
from hetlab.api import HetlabError


def _recommended(stdout: str) -> str:
    m = re.search(r"^recommended for \S+: (.+?) — ([\d.]+) s, ([\d.]+) J$", stdout, flags=re.M)
    assert m, stdout
    return m[1]


def test_compute_and_bandwidth_bound_workloads_get_different_advice(tmp_path):
    plot = tmp_path / "pareto.png"
    common = ("--platform", "exynos5433", "--objective", "edp", "--no-progress")
    compute = hetlab_cli("advise", "sandra-dhrystone", *common, "--plot", str(plot))
    memory = hetlab_cli("advise", "sandra-sfft", *common)
    assert compute.returncode == 0 and memory.returncode == 0, compute.stderr + memory.stderr
    c, m = _recommended(compute.stdout), _recommended(memory.stdout)
    assert c != m
    # compute-bound: every core helps, through a pool that lets the A53s add throughput
    assert c.startswith("all dynamic"), c
    assert "vs big dynamic" in compute.stdout and "throughput" in compute.stdout
    # bandwidth-bound: the DRAM is saturated, the extra cores only add energy
    assert not m.startswith("all "), m
    assert "memory-bound" in memory.stdout
    # every candidate is listed with its time and energy: 3 affinities x 2 allocators x 6 governors x 4
    # placements, less eas without schedutil, and the 5433's two switchers with the placements that
    # see identical CPUs
    cores = r"all|big|little|iks|cluster-switching"
    rows = [ln for ln in compute.stdout.splitlines() if re.match(rf"^({cores}) (static|dynamic) ", ln)]
    assert len(rows) == int(re.search(r"(\d+) candidates simulated", compute.stdout)[1]) > 50
    switched = [ln for ln in rows if ln.startswith(("iks ", "cluster-switching "))]
    assert len(switched) == 2 * 2 * len(advise.GOVERNORS) * 2, switched
    data = plot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24])[0] > 300


def _o(t, e, name="x"):
    return Outcome(Candidate(None, None, name, "pinned"), t, e, 1.0, 0.0)


def test_pareto_front_and_objectives():
    a, b, c, d = _o(1.0, 5.0), _o(2.0, 3.0), _o(3.0, 4.0), _o(4.0, 1.0)
    assert advise.pareto([c, a, d, b]) == [a, b, d]  # c is beaten by b in both
    assert advise.recommend([a, b, c, d], "time", None) is a
    assert advise.recommend([a, b, c, d], "energy", None) is d
    assert advise.recommend([a, b, c, d], "edp", None) is d  # 4 J·s vs 5, 6, 12
    assert advise.recommend([a, b, c, d], "time-under-energy", 3.5) is b
    with pytest.raises(HetlabError, match="least energy any takes is 1.000 J"):
        advise.recommend([a, b, c, d], "time-under-energy", 0.5)


@pytest.mark.parametrize(
    "args,says",
    [
        (("nosuch",), "unknown workload 'nosuch'"),
        (("sandra-dhrystone", "--objective", "time-under-energy"), "needs --energy-budget-j"),
        (("sandra-dhrystone", "--energy-budget-j", "-1"), "must be positive"),
        (("sandra-dhrystone", "--plot", "/nonexistent/dir/p.png"), "does not exist"),
        (("sandra-dhrystone", "--energy-budget-j", "5"), "applies to --objective time-under-energy only"),
    ],
)
def test_bad_input_is_one_line(args, says):
    p = hetlab_cli("advise", *args, "--platform", "exynos5433", "--no-progress")
    assert p.returncode != 0 and p.stderr.startswith("hetlab: error:") and p.stderr.count("\n") == 1, p.stderr
    assert says in p.stderr and p.stdout == ""


def test_a_workload_that_does_no_work_is_one_line(tmp_path):
    """Only sleeps: every candidate's throughput is 0, nothing to rank placements by (it was a
    division by zero after the table had been printed)."""
    workload = tmp_path / "sleeper.toml"
    workload.write_text('name = "sleeper"\n[[tasks]]\nname = "t"\n[[tasks.phases]]\nsleep_us = 1000\n')
    p = hetlab_cli("advise", str(workload), "--platform", "exynos5433", "--no-progress", "--jobs", "1")
    assert p.returncode != 0 and p.stderr.count("\n") == 1, p.stderr
    assert "retires no instructions" in p.stderr and p.stdout == ""


def _noisy(t, e, sd_t, sd_e, name):
    return Outcome(Candidate(None, None, name, "pinned"), t, e, 1.0, 0.0, sd_t, sd_e, 3)


def test_a_tie_within_the_seeds_noise_goes_to_the_secondary_objective():
    fast = _noisy(10.000, 5.0, 0.01, 0.01, "fast")
    frugal = _noisy(10.005, 4.0, 0.01, 0.01, "frugal")
    slow = _noisy(11.0, 3.0, 0.01, 0.01, "slow")
    # 5 ms apart with 10 ms of noise each: a tie on time, broken by energy
    assert advise.recommend([fast, frugal, slow], "time", None) is frugal
    # without noise the faster one wins
    assert advise.recommend([_o(10.0, 5.0), _o(10.005, 4.0)], "time", None).time_s == 10.0
    # a dominated candidate is never recommended, even when within the noise of the best
    dominated = _noisy(10.001, 6.0, 0.5, 0.5, "dominated")
    assert advise.recommend([fast, dominated], "time", None) is fast
    assert advise.recommend([fast, dominated], "edp", None) is fast


def test_mixed8_gets_a_recommendation_no_candidate_dominates():
    p = hetlab_cli("advise", "mixed8", "--platform", "exynos5433", "--no-progress", "--seeds", "2")
    assert p.returncode == 0, p.stderr
    rows = {}
    for ln in p.stdout.splitlines():
        m = re.match(r"^(\S.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(yes)?", ln)
        if m and not ln.startswith(("candidate", "recommended", "Pareto")):
            rows[m[1]] = (float(m[2]), float(m[4]))
    best = _recommended(p.stdout)
    t, e = rows[best]
    assert not any(ot <= t and oe <= e and (ot, oe) != (t, e) for ot, oe in rows.values()), best
    front = re.search(r"^Pareto set \((\d+), fastest first\): (.+)$", p.stdout, flags=re.M)
    assert front and best in front[2].split("; ") and int(front[1]) == len(front[2].split("; "))


def test_help_explains_the_seeds_the_pareto_set_and_the_tie_break():
    p = hetlab_cli("advise", "--help")
    assert p.returncode == 0
    for words in ("--seeds", "Pareto set", "secondary objective", "noise"):
        assert words in p.stdout, words
    bad = hetlab_cli("advise", "mixed8", "--seeds", "0")
    assert bad.returncode != 0 and bad.stderr.startswith("hetlab: error: --seeds") and bad.stderr.count("\n") == 1
