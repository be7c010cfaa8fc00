"""The shipped measured profiles (scripts/measure-profiles.sh) and lctes2020's section that runs
them next to the assumed ones."""

import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from hetlab import _core
from hetlab.experiments import lctes2020, lctes2020_model, measured_profiles

DATA = Path(__file__).resolve().parent.parent / "data" / "workloads"
MEASURED = [m for _, m in measured_profiles.PAIRS]
ASSUMED = ["spec-gcc-g23", "spec-bwaves-test", "spec-povray-train", "spec-h264ref-train", "bbench", "speedometer2"]


@pytest.mark.parametrize("name", MEASURED)
def test_measured_profiles_are_shipped_marked_and_state_their_mpki(name):
    text = (DATA / f"{name}.toml").read_text()
    assert text.startswith("# MEASURED profile")
    for key in ("# command: ", "# tool: valgrind-", "# host: x86_64", "# caveats: ", 'description = "MEASURED: '):
        assert key in text, key
    assert name in _core.builtin_workloads()
    doc = tomllib.loads(text)
    phases = doc["tasks"][0]["phases"]
    assert len(phases) == 4
    for size in ("512 KB", "2 MB"):
        whole = re.search(rf"# MEASURED LL MPKI at +{size}: ([0-9.]+)", text)
        assert whole and float(whole[1]) >= 0
        assert text.count(f"# MEASURED MPKI at {size}: ") == len(phases)
    # the fit is the model's: its stated fitted MPKI is what the model gives back for the phase
    for i, body in enumerate(text.split("# Phase ")[1:]):
        fitted = float(re.search(r"# MEASURED MPKI at 2 MB: [0-9.]+ \(the fitted profile gives ([0-9.]+)\)", body)[1])
        _, l2, _ = _core.phase_miss_ratios(name, cluster=1, l2_bytes=2097152, phase=i)
        assert fitted == pytest.approx(1000 * phases[i]["refs_per_instr"] * l2, rel=0.01, abs=0.002)


@pytest.mark.parametrize("name", [*ASSUMED, "mplayer-1080p"])
def test_unmeasured_profiles_say_they_are_assumptions(name):
    assert (DATA / f"{name}.toml").read_text().startswith("# ASSUMED profile, not measured")


def test_section_runs_the_measured_profile_beside_the_assumed_one():
    # a summary in which only speedometer2 ran (one seed), and the paper's own trees for the
    # anti-snoop column: the section runs measured-js-todomvc under the same configurations
    summary = pd.DataFrame(
        [
            {
                "benchmark": "speedometer2",
                "label": f"speedometer2-{tag}",
                "config": c.name,
                "reps": 1,
                "l2_mpki": 13.0,
                "speedup_mean": 1.0,
                "energy_saving_mean": 1.0,
            }
            for tag in ("L", "b")
            for c in lctes2020.CONFIGS
        ]
    )
    prepared = lctes2020_model.Trained({}, lctes2020_model.FIG4, lctes2020_model.FIG4)
    lines = measured_profiles.section(summary, prepared, lctes2020.EXPERIMENT)
    table = [ln for ln in lines if ln.startswith("| speedometer2 |")]
    assert len(table) == 4  # assumed and measured, on both clusters
    measured = [ln for ln in table if "measured: `measured-js-todomvc`" in ln]
    assert len(measured) == 2
    for ln in measured:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        assert float(cells[3]) >= 0  # its MPKI
        assert all(c.endswith("x") for c in cells[4:]), ln
    nothing = measured_profiles.section(summary.assign(benchmark="povray-train"), prepared, lctes2020.EXPERIMENT)
    assert nothing[-1].startswith("Not run")
