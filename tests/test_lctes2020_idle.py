"""lctes2020_idle: the last-step check behind 'no pair held at the top OPP unless its counter
says snooping continues there' (issue 31)."""

from hetlab.experiments import lctes2020_idle as idle


def _run(time_s: float, stalls: int, reads: int = 1_000_000) -> dict:
    return {"time_s": time_s, "stalls": stalls, "reads": reads, "bus_access": 5_000, "cpu_cycles": 1_000_000}


def test_a_hold_is_justified_only_while_counter_and_time_still_fall_on_the_last_step():
    falling = {"below": _run(1.10, 20_000), "top": _run(1.00, 10_000)}
    flat = {"below": _run(1.00, 10_000), "top": _run(1.00, 10_000)}
    assert "snooping continues at the top" in idle._verdict(True, falling, "increase")
    said = idle._verdict(True, flat, "increase")
    assert "own reads in flight" in said and "counter flat, time flat" in said
    assert idle._verdict(False, falling, "increase") == "not held at the top"
    # the counter falling alone (the run not faster) does not justify the hold
    assert "snooping continues" not in idle._verdict(True, {"below": _run(1.0, 20_000), "top": _run(1.0, 10_000)}, "x")


def test_last_step_runs_the_idle_cluster_one_opp_below_its_top_and_at_it():
    # gcc on big: with "overlap" the LITTLE cluster's snoop hides under the DRAM access from
    # about 0.4 GHz, so 1.3 and 1.4 GHz read the same counter and take the same time
    step = idle._last_step("exynos5422", {"gcc-g23-b": ("spec-gcc-g23", "big")})["gcc-g23-b"]
    assert step["idle"] == "little"
    below, top = step["below"], step["top"]
    assert top["reads"] > 0 and top["stalls"] > 0  # the A15's own reads in flight fill S4 now and then
    assert idle._per_read(below) == idle._per_read(top)
    assert below["time_s"] == top["time_s"]
    # and the Figure 4 tree's evaluator runs on those counts
    assert idle._tree_says(idle._model_text("lctes2020-fig4"), "little", top) in ("increase", "decrease")
