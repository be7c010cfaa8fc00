#!/usr/bin/env python3
"""Build LISA's ``LinuxEnergyModel`` from a directory laid out like a board's root (what
``LinuxEnergyModel.from_target`` reads: ``/sys/kernel/debug/energy_model`` and each CPU's
``/sys/devices/system/cpu/cpuN/cpu_capacity``) and print what LISA makes of it as JSON.

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path):

    .venv-lisa/bin/python tests/lisa_energy_model.py ROOT UTILS_JSON

``UTILS_JSON``: a list of per-CPU utilisation lists to estimate. Output::

    {"freq_domains": [[cpu, ...], ...],
     "cpus": {cpu: [[kHz, capacity, power], ...]},    # each CPU's active states
     "estimates": [total bogo-watts, ...]}            # estimate_from_cpu_util per list

LISA reads a board through a devlib target; ``TreeTarget`` is the two calls of it that
``from_target`` makes, over the directory instead of a device. Exit status 1 if LISA fails.
"""

import json
import sys
from pathlib import Path

from lisa_common import print_json


class TreeTarget:
    """devlib's ``read_tree_values`` and ``read_value``, over a local directory as the root."""

    def __init__(self, root):
        self.root = Path(root)

    def _local(self, path):
        return self.root / str(path).lstrip("/")

    def read_tree_values(self, directory, depth=1, tar=False):
        def walk(d, depth):
            out = {}
            for p in sorted(d.iterdir()):
                if p.is_dir() and depth > 1:
                    out[p.name] = walk(p, depth - 1)
                elif p.is_file():
                    out[p.name] = p.read_text().strip()
            return out

        return walk(self._local(directory), depth)

    def read_value(self, path, kind=None):
        value = self._local(path).read_text().strip()
        return kind(value) if kind else value


def analyse(root, utils):
    from lisa.energy_model import LinuxEnergyModel

    em = LinuxEnergyModel.from_target(TreeTarget(root))
    return {
        "freq_domains": [list(d) for d in em.freq_domains],
        "cpus": {
            int(node.cpu): [[int(f), float(s.capacity), float(s.power)] for f, s in node.active_states.items()]
            for node in em.cpu_nodes
        },
        "estimates": [float(sum(em.estimate_from_cpu_util(u).values())) for u in utils],
    }


if __name__ == "__main__":
    sys.exit(print_json(analyse, sys.argv[1], json.loads(sys.argv[2])))
