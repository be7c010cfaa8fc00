"""Energy models in and out: a platform's EM (the kernel's, as hetlab builds it: the platform
file's explicit `[[energy_model]]` tables, else the derivation from its OPPs) written

- as the tree Linux shows under /sys/kernel/debug/energy_model (5.10: a directory per
  performance domain named after its first CPU, `cpus` as a CPU list, and `ps:<kHz>/` with
  `frequency`, `power` and `cost`; kernel/power/energy_model.c `em_debug_create_pd`), which
  LISA's `LinuxEnergyModel` reads from a board;
- as `[[energy_model]]` tables to paste into a platform file;

and read back from such a tree (a board's debugfs, or an export), to give a platform file the
measured model of a real board. Older kernels named the state directories `cs:<kHz>`; both
are read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hetlab import _core, api
from hetlab._files import read_attribute
from hetlab.api import HetlabError


def energy_model(platform: str) -> dict:
    """{platform, domains: [{cluster, cpus, capacity, states: [{frequency_khz, performance,
    power_mw, cost}]}]} as the kernel would build it for `platform`."""
    try:
        return json.loads(_core.energy_model(*api._platform_args(platform)))
    except ValueError as e:
        raise HetlabError(str(e)) from None


def cpu_list(cpus: list[int]) -> str:
    """The kernel's `%*pbl` form: ascending ranges, e.g. [0, 1, 2, 3, 6] -> "0-3,6"."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)


def parse_cpu_list(text: str) -> list[int]:
    cpus: list[int] = []
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        cpus += range(int(first), int(last or first) + 1)
    return cpus


def write_debugfs(em: dict, root: str | os.PathLike) -> list[Path]:
    """The EM as /sys/kernel/debug/energy_model lays it out, under `root` (created; it must
    not exist or be empty). Returns the domain directories."""
    root = Path(root)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise HetlabError(f"'{root}' exists and is not an empty directory; give a new one")
    written = []
    for domain in em["domains"]:
        d = root / f"cpu{min(domain['cpus'])}"
        d.mkdir(parents=True)
        (d / "cpus").write_text(cpu_list(domain["cpus"]) + "\n")
        for state in domain["states"]:
            ps = d / f"ps:{state['frequency_khz']}"
            ps.mkdir()
            for name, key in (("frequency", "frequency_khz"), ("power", "power_mw"), ("cost", "cost")):
                (ps / name).write_text(f"{state[key]}\n")
        written.append(d)
    return written


def read_debugfs(root: str | os.PathLike) -> list[dict]:
    """The domains of a tree laid out like /sys/kernel/debug/energy_model: [{cpus, ps:
    [{frequency_khz, power_mw}]}], ascending frequency (the platform file's shape)."""
    root = Path(root)
    if not root.is_dir():
        raise HetlabError(f"'{root}' is not a directory laid out like /sys/kernel/debug/energy_model")
    domains = []
    for d in sorted(p for p in root.iterdir() if (p / "cpus").is_file()):
        states = []
        for ps in d.iterdir():
            if not ps.is_dir() or not ps.name.startswith(("ps:", "cs:")):
                continue
            try:
                states.append(
                    {
                        "frequency_khz": int(read_attribute(ps / "frequency")),
                        "power_mw": int(read_attribute(ps / "power")),
                    }
                )
            except (OSError, ValueError) as e:
                raise HetlabError(f"'{ps}': cannot read its frequency and power ({e})") from None
        try:
            cpus = parse_cpu_list(read_attribute(d / "cpus"))
        except (OSError, ValueError):
            raise HetlabError(f"'{d / 'cpus'}' is not a CPU list such as 0-3 (or cannot be read)") from None
        if not states:
            raise HetlabError(f"'{d}' has no ps:<kHz> (or cs:<kHz>) directories")
        domains.append({"cpus": cpus, "ps": sorted(states, key=lambda s: s["frequency_khz"])})
    if not domains:
        raise HetlabError(f"'{root}' holds no performance domain (a directory with a cpus file)")
    return sorted(domains, key=lambda d: min(d["cpus"]))


def toml_tables(domains: list[dict], source: str) -> str:
    """`[[energy_model]]` tables for a platform file, from domains in `read_debugfs`'s shape."""
    lines = [f"# Energy model: {source}"]
    for d in domains:
        states = ", ".join(f"{{ frequency_khz = {s['frequency_khz']}, power_mw = {s['power_mw']} }}" for s in d["ps"])
        lines += ["[[energy_model]]", f"cpus = {d['cpus']}", f"ps = [{states}]", ""]
    return "\n".join(lines)


def domains_of(em: dict) -> list[dict]:
    """An EM from `energy_model` in `read_debugfs`'s shape."""
    return [
        {
            "cpus": d["cpus"],
            "ps": [{"frequency_khz": s["frequency_khz"], "power_mw": s["power_mw"]} for s in d["states"]],
        }
        for d in em["domains"]
    ]
