#!/usr/bin/env python3
"""Run LISA's energy analysis on a hetlab trace: the energy model of the trace's platform info
(``nrg-model``, which hetlab writes there) estimates each CPU's power from the trace's
``cpu_idle`` and ``cpu_frequency`` events (``EnergyModel.estimate_from_trace``). Prints, as
JSON on stdout, the energy each CPU's node used over the trace::

    {"window": [start, end], "energy": {"cpu": joules-in-the-model's-units, ...},
     "states": {"cpu": [kHz, ...]}}      # the frequencies LISA saw per CPU

Run it with the LISA venv's interpreter (``scripts/lisa-venv.sh`` prints its path):

    .venv-lisa/bin/python tests/lisa_energy_estimate.py TRACE PLAT_INFO_YML

Exit status 1 if LISA fails.
"""

import sys

from lisa_common import print_json, read_text_trace


def analyse(trace_path, plat_info_path):
    import numpy as np

    trace = read_text_trace(trace_path, plat_info_path, ["cpu_idle", "cpu_frequency"])
    em = trace.plat_info["nrg-model"]
    power = em.estimate_from_trace(trace)
    # each row holds until the next one; the last until the trace's end
    times = np.append(power.index.to_numpy(dtype=float), float(trace.end))
    durations = np.diff(times)
    energy = {str(column): float((power[column].to_numpy() * durations).sum()) for column in power.columns}
    freqs = trace.ana.frequency.df_cpus_frequency()
    states = {str(cpu): sorted({int(f) for f in df["frequency"]}) for cpu, df in freqs.groupby("cpu")}
    return {"window": [float(power.index[0]), float(trace.end)], "energy": energy, "states": states}


if __name__ == "__main__":
    sys.exit(print_json(analyse, sys.argv[1], sys.argv[2]))
