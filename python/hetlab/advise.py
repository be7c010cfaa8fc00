"""`hetlab advise`: which configuration runs a workload best on a board, by simulation.

It simulates the candidates — affinity (every cluster, or one) or, where the platform pairs its
cores, a big.LITTLE switcher (the in-kernel switcher or cluster switching: the OS sees one CPU
per pair), for parallel workloads the thread count (one per CPU of the affinity) and the work
allocator (static split or dynamic pool), the governor and the placement policy — in parallel,
prints each one's predicted time and energy with the recommendation for the objective (time,
energy, EDP, or time under an energy budget) and why, and draws time against energy with the
Pareto front. Every number is the simulator's.
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from hetlab import _core, api
from hetlab._files import check_output_path, write_output
from hetlab.api import HetlabError
from hetlab.executor import EXECUTOR_HELP, check_workers, using

OBJECTIVES = ("time", "energy", "edp", "time-under-energy")
GOVERNORS = ("performance", "powersave", "ondemand", "conservative", "interactive", "schedutil")
SCHEDULERS = ("pinned", "smp", "hmp", "eas")
ALLOCATORS = ("static", "dynamic")
# Under a switcher the OS sees identical CPUs: only the placements that do not tell them apart.
SWITCHERS = ("iks", "cluster-switching")
SWITCHED_SCHEDULERS = ("pinned", "smp")


@dataclass(frozen=True)
class Candidate:
    cluster: str | None  # None: every CPU
    allocator: str | None  # None: the workload as given (no parallel phase)
    governor: str
    scheduler: str
    switching: str = "gts"  # or a switcher (then every CPU: the switcher picks the cluster)

    def cores(self) -> str:
        """Which cores it runs on: a cluster, all of them, or a switcher's pairs."""
        return self.switching if self.switching != "gts" else self.cluster or "all"

    def name(self) -> str:
        return " ".join([self.cores(), *([self.allocator] if self.allocator else []), self.governor, self.scheduler])


@dataclass(frozen=True)
class Outcome:
    candidate: Candidate
    time_s: float
    energy_j: float
    throughput_gips: float
    dram_gb_s: float
    # the standard deviation over the seeds: what a difference must exceed to count
    time_noise_s: float = 0.0
    energy_noise_j: float = 0.0
    seeds: int = 1

    @property
    def edp_js(self) -> float:
        return self.time_s * self.energy_j


# each candidate's limit unless --time-limit: simulate's
DEFAULT_TIME_LIMIT_S = inspect.signature(api.simulate).parameters["time_limit_s"].default


def _accepted(platform: str, workload: str, **options) -> bool:
    """Whether the simulator takes the workload on the platform with these options."""
    try:
        api.simulate(platform, workload, governor="performance", time_limit_s=1e-6, **options)
    except HetlabError:
        return False
    return True


def _parallel(workload: str, platform: str) -> bool:
    """Whether the workload takes the parallel parameters (a built-in with parallel phases)."""
    if api._spec(workload, "workload")[1] or ":" in workload:  # a file, or a spec with its own parameters
        return False
    return _accepted(platform, f"{workload}:threads=cpus")


def candidates(workload: str, platform: str) -> list[Candidate]:
    clusters = [c["name"] for c in json.loads(api.load_platform(platform).summary())["clusters"]]
    allocators: tuple[str | None, ...] = ALLOCATORS if _parallel(workload, platform) else (None,)
    gts = [
        Candidate(cluster, alloc, gov, sched)
        for cluster in (None, *clusters)
        for alloc in allocators
        for gov in GOVERNORS
        for sched in SCHEDULERS
    ]
    switched = [
        Candidate(None, alloc, gov, sched, mode)
        for mode in SWITCHERS
        if _accepted(platform, workload, switching=mode)
        for alloc in allocators
        for gov in GOVERNORS
        for sched in SWITCHED_SCHEDULERS
    ]
    return gts + switched


def _spec(workload: str, c: Candidate) -> str:
    return f"{workload}:threads=cpus,allocation={c.allocator}" if c.allocator else workload


def _run_candidate(
    workload: str, platform: _core.Platform, c: Candidate, seed: int, line_bytes: int, time_limit_s: float
) -> Outcome | str:
    """One candidate's run (on an executor's worker); the simulator's refusal, or a run the
    time limit cut, as its text. `line_bytes`: the platform's cache line, what its DRAM lines
    are counted in."""
    try:
        r = api.simulate(
            platform,
            _spec(workload, c),
            cluster=c.cluster,
            governor=c.governor,
            scheduler=c.scheduler,
            switching=c.switching,
            seed=seed,
            time_limit_s=time_limit_s,
        )
    except HetlabError as e:
        return str(e)
    if not r.summary["completed"]:
        return f"did not finish within --time-limit {time_limit_s:g} s of simulated time"
    s = r.summary
    inst = sum(t["pmu"]["inst_retired"] for t in s["threads"])
    return Outcome(c, r.time_s, r.energy_j, inst / r.time_s / 1e9, s["dram_lines"] * line_bytes / r.time_s / 1e9)


def simulate_all(
    workload: str,
    platform: str,
    cands: list[Candidate],
    jobs: int | None,
    progress: bool,
    seed: int,
    executor: str | None = None,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    seeds: int = 1,
) -> tuple[list[Outcome], list[tuple[Candidate, str]]]:
    """Every candidate's runs (`seeds` of them, seed, seed+1, ...) averaged, in candidate order,
    on the executor (`hetlab.executor`: local threads, or a Dask cluster); candidates the
    simulator refuses (e.g. eas without schedutil) come back with the reason."""
    from tqdm import tqdm

    handle = api.load_platform(platform)  # parsed once for every candidate
    line_bytes = api.line_bytes(handle)
    items = [(workload, handle, c, seed + i, line_bytes, time_limit_s) for c in cands for i in range(seeds)]
    results: list = [None] * len(items)
    with using(executor, jobs) as runner:  # a bad --executor fails before anything starts
        bar = tqdm(total=len(items), desc="advise", unit="run", disable=None if progress else True, file=sys.stderr)

        def done(index: int, result) -> None:
            results[index] = result
            bar.update(1)

        try:
            runner.run(_run_candidate, items, done)
        finally:
            bar.close()
    outcomes, refused = [], []
    for k, c in enumerate(cands):
        runs = results[k * seeds : (k + 1) * seeds]
        why_not = next((r for r in runs if isinstance(r, str)), None)
        if why_not is not None:
            refused.append((c, why_not))
        else:
            outcomes.append(_averaged(c, runs))
    return outcomes, refused


def _averaged(c: Candidate, runs: list[Outcome]) -> Outcome:
    """One candidate's seeds: the mean of each figure, and the spread of time and energy."""

    def mean(xs):
        return sum(xs) / len(xs)

    def std(xs):
        m = mean(xs)
        return (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0

    t, e = [r.time_s for r in runs], [r.energy_j for r in runs]
    return Outcome(
        c,
        mean(t),
        mean(e),
        mean([r.throughput_gips for r in runs]),
        mean([r.dram_gb_s for r in runs]),
        std(t),
        std(e),
        len(runs),
    )


def pareto(outcomes: list[Outcome]) -> list[Outcome]:
    """The candidates no other one beats in both time and energy, fastest first."""
    front, best_energy = [], float("inf")
    for o in sorted(outcomes, key=lambda o: (o.time_s, o.energy_j)):
        if o.energy_j < best_energy:
            front.append(o)
            best_energy = o.energy_j
    return front


# Each objective's figure, its noise (the standard deviation over the seeds) and the objective
# that breaks a tie within that noise.
_FIGURE = {
    "time": (lambda o: o.time_s, lambda o: o.time_noise_s),
    "energy": (lambda o: o.energy_j, lambda o: o.energy_noise_j),
    "edp": (
        lambda o: o.edp_js,
        lambda o: o.edp_js * ((o.time_noise_s / o.time_s) ** 2 + (o.energy_noise_j / o.energy_j) ** 2) ** 0.5,
    ),
}
SECONDARY = {"time": "energy", "energy": "time", "edp": "energy", "time-under-energy": "energy"}
# two figures tie when they differ by less than this many standard deviations of the difference
NOISE_SIGMAS = 2.0


def tied(outcomes: list[Outcome], objective: str) -> list[Outcome]:
    """The outcomes whose figure for `objective` is within the seeds' noise of the best one."""
    figure, noise = _FIGURE["time" if objective == "time-under-energy" else objective]
    best = min(outcomes, key=figure)
    return [o for o in outcomes if figure(o) - figure(best) <= NOISE_SIGMAS * (noise(o) ** 2 + noise(best) ** 2) ** 0.5]


def recommend(outcomes: list[Outcome], objective: str, budget_j: float | None) -> Outcome:
    """The best candidate of the Pareto set for the objective: a candidate another beats in time
    and energy is never recommended; among those within the seeds' noise of the best, the one
    best in the secondary objective (SECONDARY)."""
    front = pareto(outcomes)
    if objective == "time-under-energy":
        if budget_j is None:
            raise HetlabError("--objective time-under-energy needs --energy-budget-j")
        front = [o for o in front if o.energy_j <= budget_j]
        if not front:
            least = min(o.energy_j for o in outcomes)
            raise HetlabError(f"no candidate fits {budget_j:g} J; the least energy any takes is {least:.3f} J")
    primary = _FIGURE["time" if objective == "time-under-energy" else objective][0]
    secondary = _FIGURE[SECONDARY[objective]][0]
    return min(tied(front, objective), key=lambda o: (secondary(o), primary(o)))


def why(best: Outcome, outcomes: list[Outcome]) -> list[str]:
    """The recommendation against the run of each other affinity or switcher with the same
    allocator, governor and placement: what the other cores add or cost, in throughput, time,
    energy and DRAM traffic."""
    lines = []
    c = best.candidate
    for o in outcomes:
        oc = o.candidate
        same = (oc.allocator, oc.governor, oc.scheduler) == (c.allocator, c.governor, c.scheduler)
        if not same or oc.cores() == c.cores():
            continue
        lines.append(
            f"vs {oc.name()}: throughput {best.throughput_gips:.2f} vs {o.throughput_gips:.2f} G instr/s "
            f"({100 * (best.throughput_gips / o.throughput_gips - 1):+.0f}%), time {best.time_s:.3f} vs "
            f"{o.time_s:.3f} s, energy {best.energy_j:.2f} vs {o.energy_j:.2f} J, DRAM {best.dram_gb_s:.2f} vs "
            f"{o.dram_gb_s:.2f} GB/s"
        )
    if c.switching != "gts":
        lines.append(
            f"under {c.switching} the OS runs one CPU per core pair and the switcher picks each pair's core by the "
            "frequency asked: the cores it leaves are power-gated and a cluster with none in use is powered down, "
            "where on one cluster under GTS the other stays powered, idle"
        )
    most_dram = max(o.dram_gb_s for o in outcomes)
    if most_dram > 1.0 and best.dram_gb_s >= 0.95 * most_dram:
        lines.append(
            f"memory-bound: it moves {best.dram_gb_s:.2f} GB/s, the most any candidate reached (the DRAM's sustained "
            "bandwidth): cores beyond those that saturate it add energy, not throughput"
        )
    if c.allocator is not None:
        other = next(
            (
                o
                for o in outcomes
                if o.candidate
                == Candidate(
                    c.cluster,
                    "static" if c.allocator == "dynamic" else "dynamic",
                    c.governor,
                    c.scheduler,
                    c.switching,
                )
            ),
            None,
        )
        if other is not None:
            lines.append(
                f"vs the {other.candidate.allocator} allocator on the same cores: time {best.time_s:.3f} vs "
                f"{other.time_s:.3f} s (a static split waits at the barrier for the slowest core; a pool keeps every "
                "core busy until the work runs out)"
            )
    return lines


def plot(outcomes: list[Outcome], best: Outcome, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    front = pareto(outcomes)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ax.scatter([o.time_s for o in outcomes], [o.energy_j for o in outcomes], s=14, c="#aaaaaa", label="candidates")
    ax.plot([o.time_s for o in front], [o.energy_j for o in front], "o-", c="#1f77b4", ms=5, label="Pareto front")
    ax.scatter([best.time_s], [best.energy_j], s=120, marker="*", c="#d62728", zorder=5, label="recommended")
    ax.annotate(best.candidate.name(), (best.time_s, best.energy_j), textcoords="offset points", xytext=(8, 8))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("energy (J)")
    ax.set_title(title, fontsize=10)
    ax.legend()
    fig.tight_layout()
    png = io.BytesIO()  # drawn in memory, then written whole: no temporary file of its own
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    write_output(path, png.getvalue(), "--plot file")


HELP = """\
Simulates every candidate configuration of WORKLOAD on the platform (affinity, switcher, work
allocator, governor, placement), --seeds runs each (seeds --seed, --seed+1, ...), and prints
each one's mean time, energy and EDP with their spread over the seeds, the Pareto set (the
candidates no other one beats in both time and energy) and the recommendation for --objective.

The recommendation is always in the Pareto set. Among its members whose figure for the
objective is within the seeds' noise of the best (a difference under 2 standard deviations of
the difference), the one best in the secondary objective wins: energy for time, EDP and
time-under-energy, time for energy. With --seeds 1 there is no noise to measure and only an
exact tie falls to the secondary objective."""


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.description = HELP
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("workload", help="a built-in workload, a generator spec or a workload .toml")
    p.add_argument("--platform", default=api.DEFAULT_PLATFORM, help="built-in name or platform .toml")
    p.add_argument("--objective", choices=OBJECTIVES, default="time")
    p.add_argument("--energy-budget-j", type=float, help="for --objective time-under-energy")
    p.add_argument("--plot", type=Path, help="write the time-vs-energy Pareto plot here (PNG)")
    p.add_argument("--jobs", type=int, help="parallel simulations (default: one per CPU)")
    p.add_argument("--executor", metavar="SPEC", help=EXECUTOR_HELP)
    p.add_argument("--seed", type=int, default=api.DEFAULT_SEED, help="the first seed")
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        default=DEFAULT_TIME_LIMIT_S,
        help=f"stop each candidate's run after S simulated seconds, 0 < S <= {_core.MAX_TIME_LIMIT_S:g}; a run "
        "it cuts is not applicable (default: %(default)g, as simulate)",
    )
    p.add_argument(
        "--seeds", type=int, default=3, help="runs per candidate, their mean compared and their spread the noise (3)"
    )
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_advise)


def cmd_advise(args: argparse.Namespace) -> int:
    if args.energy_budget_j is not None and not args.energy_budget_j > 0:
        raise HetlabError(f"--energy-budget-j must be positive, got {args.energy_budget_j}")
    if args.objective == "time-under-energy" and args.energy_budget_j is None:
        raise HetlabError("--objective time-under-energy needs --energy-budget-j")
    if args.objective != "time-under-energy" and args.energy_budget_j is not None:
        raise HetlabError(f"--energy-budget-j applies to --objective time-under-energy only, not {args.objective}")
    check_workers(args.jobs)
    api.check_time_limit(args.time_limit)
    if args.seeds < 1:
        raise HetlabError(f"--seeds must be at least 1, got {args.seeds}")
    if args.plot is not None:  # a plot that cannot be written fails now, not after the runs
        check_output_path(args.plot, "--plot file")
    # a bad workload or platform fails here, with the simulator's one-line error
    api.simulate(args.platform, args.workload, governor="performance", time_limit_s=1e-6)
    cands = candidates(args.workload, args.platform)
    outcomes, refused = simulate_all(
        args.workload,
        args.platform,
        cands,
        args.jobs,
        not args.no_progress,
        args.seed,
        args.executor,
        args.time_limit,
        args.seeds,
    )
    if not outcomes:
        raise HetlabError(f"no candidate could run: {refused[0][1]}")
    if any(o.throughput_gips == 0 for o in outcomes):  # nothing to compare placements by
        raise HetlabError(
            f"{args.workload} retires no instructions: advise compares placements by the work they do; "
            "give a workload with run phases (instructions or run_us)"
        )
    best = recommend(outcomes, args.objective, args.energy_budget_j)
    front_list = pareto(outcomes)
    front = set(map(id, front_list))
    print(f"{args.workload} on {args.platform}: {len(outcomes)} candidates simulated", end="")
    print(f", {len(refused)} not applicable ({refused[0][1]})" if refused else "")
    print()
    print(
        f"{'candidate (cores allocator governor placement)':48} {'time s':>9} {'± s':>8} {'energy J':>9} "
        f"{'± J':>7} {'EDP J·s':>9}  pareto"
    )
    for o in sorted(outcomes, key=lambda o: (o.time_s, o.energy_j)):
        mark = " <- recommended" if o is best else ""
        print(
            f"{o.candidate.name():48} {o.time_s:9.4f} {o.time_noise_s:8.5f} {o.energy_j:9.3f} {o.energy_noise_j:7.4f} "
            f"{o.edp_js:9.3f}  {'yes' if id(o) in front else '':6}{mark}"
        )
    print()
    print(f"Pareto set ({len(front_list)}, fastest first): " + "; ".join(o.candidate.name() for o in front_list))
    pool = [o for o in front_list if args.energy_budget_j is None or o.energy_j <= args.energy_budget_j]
    ties = tied(pool, args.objective)
    if len(ties) > 1:
        print(
            f"within the seeds' noise of the best for {args.objective} ({args.seeds} seeds each): "
            + "; ".join(o.candidate.name() for o in ties)
            + f"; the tie broken by {SECONDARY[args.objective]}"
        )
    print(f"recommended for {args.objective}: {best.candidate.name()} — {best.time_s:.4f} s, {best.energy_j:.3f} J")
    for line in why(best, outcomes):
        print(f"  {line}")
    if args.plot is not None:
        plot(outcomes, best, args.plot, f"{args.workload} on {args.platform}: time vs energy")
        print(f"wrote {args.plot}")
    return 0
