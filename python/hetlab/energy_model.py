"""Energy models in and out: a platform's EM (the kernel's, as hetlab builds it: the platform
file's explicit `[[energy_model]]` tables, else the derivation from its OPPs) written

- as the tree Linux shows under /sys/kernel/debug/energy_model (5.10: a directory per
  performance domain named after its first CPU, `cpus` as a CPU list, and `ps:<kHz>/` with
  `frequency`, `power` and `cost`; kernel/power/energy_model.c `em_debug_create_pd`), which
  LISA's `LinuxEnergyModel` reads from a board;
- as `[[energy_model]]` tables to paste into a platform file;

and read back from such a tree (a board's debugfs, or an export), to give a platform file the
measured model of a real board. Older kernels named the state directories `cs:<kHz>`; both
are read, and so are the powers' units as the kernel marks them (a `units` or `flags` file:
µW from Linux 5.19 are read as mW, an abstract scale is kept as `units = "bogoWatts"`).

`write_board` lays out a board's root for LISA's `LinuxEnergyModel.from_target`: the debugfs
tree under sys/kernel/debug/energy_model and each CPU's sys/devices/system/cpu/cpuN/cpu_capacity
(the capacity the kernel gives the CPU at its top OPP, which LISA scales each state's by).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hetlab import _core, api
from hetlab._files import check_output_folder
from hetlab.api import HetlabError


def energy_model(platform: str) -> dict:
    """{platform, domains: [{cluster, cpus, capacity, states: [{frequency_khz, performance,
    power_mw, cost}]}]} as the kernel would build it for `platform`."""
    handle = api.load_platform(platform)
    try:
        return json.loads(_core.energy_model(handle))
    except ValueError as e:
        raise HetlabError(str(e)) from None


def cpu_list(cpus: list[int]) -> str:
    """The kernel's `%*pbl` form: ascending ranges, e.g. [0, 1, 2, 3, 6] -> "0-3,6"."""
    return _core.format_cpu_list(list(cpus))


def parse_cpu_list(text: str) -> list[int]:
    """A kernel CPU list ("0-3,6") as CPU numbers (hetlab_linux's parser, bounded)."""
    try:
        return _core.parse_cpu_list(text)
    except ValueError as e:
        raise HetlabError(str(e)) from None


def write_debugfs(em: dict, root: str | os.PathLike) -> list[Path]:
    """The EM as /sys/kernel/debug/energy_model lays it out, under `root` (created; it must
    not exist or be empty). Returns the domain directories."""
    root = Path(root)
    check_output_folder(root, "energy model tree")
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


def write_board(em: dict, root: str | os.PathLike) -> list[Path]:
    """The EM as a board's root shows it (`write_debugfs` under sys/kernel/debug/energy_model)
    with each CPU's `cpu_capacity` under sys/devices/system/cpu, under `root` (created; it must
    not exist or be empty). Returns the files and directories written."""
    root = Path(root)
    check_output_folder(root, "energy model tree")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise HetlabError(f"'{root}' exists and is not an empty directory; give a new one")
    written = write_debugfs(em, root / "sys/kernel/debug/energy_model")
    for domain in em["domains"]:
        for cpu in domain["cpus"]:
            d = root / f"sys/devices/system/cpu/cpu{cpu}"
            d.mkdir(parents=True)
            (d / "cpu_capacity").write_text(f"{domain['capacity']}\n")
            written.append(d / "cpu_capacity")
    return written


def read_debugfs(root: str | os.PathLike) -> list[dict]:
    """The domains of a tree laid out like /sys/kernel/debug/energy_model: [{cpus, ps:
    [{frequency_khz, power_mw}], units}], ascending frequency (the platform file's shape). Read in Rust
    (hetlab_linux::em_debugfs) as hetlabd reads sysfs: regular files of at most a page, never
    blocking, values the kernel could show."""
    try:
        return _core.read_debugfs_energy_model(str(root))
    except ValueError as e:
        raise HetlabError(str(e)) from None


def toml_tables(domains: list[dict], source: str) -> str:
    """`[[energy_model]]` tables for a platform file, from domains in `read_debugfs`'s shape."""
    lines = [f"# Energy model: {source}"]
    for d in domains:
        states = ", ".join(f"{{ frequency_khz = {s['frequency_khz']}, power_mw = {s['power_mw']} }}" for s in d["ps"])
        lines += ["[[energy_model]]", f"cpus = {d['cpus']}", f"ps = [{states}]"]
        if d.get("units", "milliWatts") != "milliWatts":
            # the kernel marks these powers as an abstract scale: EAS compares them, nothing reads them as mW
            lines.append(f'units = "{d["units"]}"')
        lines.append("")
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
