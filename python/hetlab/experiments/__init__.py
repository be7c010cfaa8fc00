"""The reproductions `hetlab reproduce` knows, one module each, listed once here.

A new reproduction is a module in this package that builds an `hetlab.experiment.Experiment`
named EXPERIMENT, plus one line in MODULES.
"""

from __future__ import annotations

from hetlab.api import HetlabError
from hetlab.experiment import Experiment
from hetlab.experiments import bl_mp_sched, four_vs_eight, lctes2020, modern_placement, rcu_amp

MODULES = (lctes2020, bl_mp_sched, rcu_amp, four_vs_eight, modern_placement)
EXPERIMENTS: dict[str, Experiment] = {m.EXPERIMENT.name: m.EXPERIMENT for m in MODULES}


def get(name: str) -> Experiment:
    """The experiment called `name`; a one-line HetlabError naming the known ones otherwise."""
    if name not in EXPERIMENTS:
        raise HetlabError(f"unknown experiment '{name}'; known: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]
