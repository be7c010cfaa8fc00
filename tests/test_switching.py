"""The big.LITTLE switching modes from the command line: `--switching` runs the in-kernel
switcher or cluster switching and says how many CPUs it moved, `hetlab schedulers` lists the
modes, and what a switcher cannot run is a one-line error (the mechanisms themselves are tested
in crates/hetlab-core/tests/switching.rs)."""

from helpers import hetlab_cli
from hetlab import api

WORK = ["--platform", "exynos5433", "--workload", "cpu-bound:threads=1,instructions=1e9", "--governor", "ondemand"]


def test_iks_moves_one_cpu_and_cluster_switching_all_four():
    iks = api.simulate("exynos5433", "cpu-bound:threads=1,instructions=1e9", governor="ondemand", switching="iks")
    cs = api.simulate(
        "exynos5433", "cpu-bound:threads=1,instructions=1e9", governor="ondemand", switching="cluster-switching"
    )
    assert (iks.summary["cpu_switches"], cs.summary["cpu_switches"]) == (1, 4)
    online = {c["name"]: c["online"] for c in cs.summary["clusters"]}
    assert online == {"little": False, "big": True}
    p = hetlab_cli("simulate", *WORK, "--switching", "iks")
    assert p.returncode == 0, p.stderr
    assert "switching iks (1 CPU switches)" in p.stdout.splitlines()[0]
    # per-CPU counter totals: the busy CPU's counts span both clusters
    assert "\ncpu0 " in p.stdout


def test_the_modes_are_listed_and_what_a_switcher_cannot_run_is_one_line():
    p = hetlab_cli("schedulers")
    assert p.returncode == 0 and "switching modes" in p.stdout and "cluster-switching:" in p.stdout
    for args, needle in (
        (["--switching", "iks", "--scheduler", "hmp"], "use pinned or smp"),
        (["--switching", "iks", "--cluster", "big"], "drop --cluster"),
        (["--switching", "cluster-switching", "--platform", "tc2"], "as many in each"),
        (["--switching", "iks", "--platform", "vexpress-a9"], "two clusters"),
    ):
        p = hetlab_cli("simulate", *WORK, *args)
        assert p.returncode != 0 and p.stdout == "", p.stdout
        assert p.stderr.startswith("hetlab: error:") and p.stderr.count("\n") == 1 and needle in p.stderr, p.stderr
