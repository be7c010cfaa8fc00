"""The anti-snoop model the `lctes2020` reproduction's anti-snoop column runs with: its options
(the model given, or the characterization sweep to train one from), the sweep and the training
that make it (the preparation, reusing what an earlier run of the same plan left in OUT), and
what report.md says of it (held-out accuracy, provenance). lctes2020.py owns the rest of the
paper's reproduction."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hetlab import api
from hetlab._files import sha256_file, staging_folder, write_output
from hetlab.api import HetlabError
from hetlab.experiment import Context, Prepared

if TYPE_CHECKING:
    import argparse

FIG4 = "lctes2020-fig4"


# --- its own options ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepOptions:
    """Passed through to `hetlab characterize` (None: its defaults)."""

    reps: int = 5
    patterns: tuple[str, ...] | None = None
    sizes: tuple[int, ...] | None = None
    run_s: float = 0.08
    active_opp: str = "all"


@dataclass(frozen=True)
class Settings:
    """The model to use (None: train one from a sweep made with `sweep`)."""

    model: str | None = None
    sweep: SweepOptions = SweepOptions()

    @classmethod
    def add_arguments(cls, group: argparse._ArgumentGroup) -> None:
        d = SweepOptions()
        group.add_argument(
            "--model",
            metavar="PATH",
            help="use this anti-snoop model.json (or lctes2020-fig4) instead of running the sweep and training",
        )
        group.add_argument(
            "--sweep-reps",
            type=int,
            default=d.reps,
            metavar="N",
            help=f"characterization: repetitions per configuration (default: {d.reps})",
        )
        group.add_argument(
            "--sweep-patterns",
            metavar="LIST",
            help="characterization: subset of random,sequential,stride-16 (default: all)",
        )
        group.add_argument(
            "--sweep-sizes",
            metavar="LIST",
            help="characterization: array sizes in 4-byte elements (default: around every cache size)",
        )
        group.add_argument(
            "--sweep-run-s",
            type=float,
            default=d.run_s,
            metavar="S",
            help=f"characterization: run length at the top OPPs, simulated s (default: {d.run_s})",
        )
        group.add_argument(
            "--sweep-active-opp",
            choices=["all", "top"],
            default=d.active_opp,
            help="characterization: every OPP pair (default) or the active cluster at its top OPP (the paper's layout)",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Settings:
        sizes = None
        if args.sweep_sizes is not None:
            items = api.comma_items(args.sweep_sizes, "--sweep-sizes")
            try:
                sizes = tuple(int(x) for x in items)
            except ValueError:
                raise HetlabError(
                    f"--sweep-sizes expects comma-separated element counts, got '{args.sweep_sizes}'"
                ) from None
        patterns = None
        if args.sweep_patterns is not None:
            patterns = tuple(api.comma_items(args.sweep_patterns, "--sweep-patterns"))
        sweep = SweepOptions(args.sweep_reps, patterns, sizes, args.sweep_run_s, args.sweep_active_opp)
        return cls(args.model, sweep)


# --- the sweep and training (the preparation) ---------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What `prepare` will do: use `model` (checked) or make the sweep `sweep_plan` and train."""

    model: str | None
    sweep: SweepOptions
    sweep_plan: dict | None


@dataclass
class Trained(Prepared):
    """The model the anti-snoop column runs with, and where it came from."""

    model_path: str = ""  # the file the governor loads, or FIG4
    model_shown: str = ""  # as report.md names it (relative to OUT when inside it)
    model_sha256: str | None = None  # None: FIG4
    model_doc: dict | None = None  # model.json's content (None: FIG4)
    sweep_plan: dict | None = None  # the sweep it was trained on, when made in this run
    sweep_path: str | None = None  # that sweep's rows (sweep.parquet), when made or reused in this run
    platform: str = ""  # the platform the runs use (a built-in name or a file)


def check_model(path: str, platform: str) -> str:
    """The model.json to use for `path` (a file, or a directory `hetlab train` wrote); raises a
    one-line HetlabError unless the anti-snoop governor can load it on `platform`."""
    if path == FIG4:
        return path
    if Path(path).is_dir():
        path = str(Path(path) / "model.json")
    from hetlab import model_export

    model_export.read_model(path)
    try:
        api.simulate(
            platform,
            "ccbench:size=4096,pattern=random,iterations=1000",
            cluster="little",
            governor="anti-snoop",
            model=path,
            time_limit_s=0.001,
        )
    except HetlabError as e:
        raise HetlabError(f"model '{path}': {e}") from None
    return path


def check(settings: Settings, ctx: Context) -> Plan:
    """A given model must load; otherwise the sweep options must be valid. Writes nothing."""
    if settings.model is not None:
        return Plan(check_model(settings.model, ctx.platform), settings.sweep, None)
    # characterize loads pandas: imported here, where it is needed, so that `hetlab` starts fast
    from hetlab.characterize import PATTERNS, sweep_plan

    sweep = settings.sweep
    # the sweep's own rules, under this command's names for its options (--sweep-...)
    options = dict(
        patterns=list(sweep.patterns or PATTERNS),
        sizes=list(sweep.sizes or ()),
        reps=sweep.reps,
        run_s=sweep.run_s,
        seed=1,
        active_opp=sweep.active_opp,
    )
    sweep_plan(ctx.platform, options, flags="--sweep-")
    # the platform's hash: a platform file, or a built-in one in another hetlab version, may change
    # under the same name, and a sweep of the old one must not be reused
    plan = {
        "platform": ctx.platform,
        "platform_sha256": ctx.platform_sha256,
        "reps": sweep.reps,
        "patterns": list(sweep.patterns or PATTERNS),
        "sizes": list(sweep.sizes) if sweep.sizes else "default",
        "run_s": sweep.run_s,
        "active_opp": sweep.active_opp,
        "seed": 1,
    }
    return Plan(None, sweep, plan)


def _reusable(sweep_path: Path, meta_path: Path, plan: dict) -> bool:
    """Whether OUT/sweep.parquet was written by this command with `plan` and not changed since."""
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("plan") == plan and meta.get("sha256") == sha256_file(sweep_path)


def _plan_text(plan: dict) -> str:
    sizes = plan["sizes"] if plan["sizes"] == "default" else ",".join(map(str, plan["sizes"]))
    return (
        f"platform {plan['platform']} (sha256 {plan['platform_sha256'][:12]}…), reps {plan['reps']}, "
        f"patterns {','.join(plan['patterns'])}, sizes {sizes}, run_s {plan['run_s']}, active OPP {plan['active_opp']}"
    )


def train_here(out: Path, sweep: SweepOptions, plan: dict, ctx: Context) -> tuple[Path, dict[str, float]]:
    """The characterization sweep (`plan`, from `check`) and training into OUT/sweep.parquet and
    OUT/model/, reusing what an earlier run of the same plan left there. Returns the model.json
    path and the wall time of each step."""
    from hetlab import model_export, train
    from hetlab.characterize import PATTERNS, characterize

    timings = {"sweep": 0.0, "train": 0.0}
    sweep_path, meta_path = out / "sweep.parquet", out / "sweep.json"
    if sweep_path.exists() and _reusable(sweep_path, meta_path, plan):
        ctx.log(f"reusing the characterization sweep {sweep_path}")
    else:
        if sweep_path.exists():
            raise HetlabError(
                f"'{sweep_path}' holds a sweep made with other options than {_plan_text(plan)} (see sweep.json); "
                "delete it and sweep.json, or choose another --out"
            )
        start = time.perf_counter()

        def bar(total: int, done: int):
            from tqdm import tqdm

            return tqdm(
                total=total,
                initial=done,
                unit="run",
                desc="characterize",
                disable=None if ctx.progress else True,
                file=sys.stderr,
            )

        characterize(
            str(sweep_path),
            platform=plan["platform"],
            reps=sweep.reps,
            patterns=tuple(sweep.patterns or PATTERNS),
            sizes=sweep.sizes,
            run_s=sweep.run_s,
            seed=1,
            workers=ctx.jobs,
            executor=ctx.executor,
            progress=bar,
            active_opp=sweep.active_opp,
        )
        write_output(meta_path, json.dumps({"plan": plan, "sha256": sha256_file(sweep_path)}, indent=2) + "\n")
        timings["sweep"] = time.perf_counter() - start
    model_dir = out / "model"
    model_path = model_dir / "model.json"
    sweep_sha = sha256_file(sweep_path)
    if model_path.exists():
        try:
            old = json.loads(model_path.read_text())
            if (
                old["provenance"]["sweep"]["dataset_sha256"] == sweep_sha
                and old["provenance"]["training"]["max_depth"] == train.DEFAULT_MAX_DEPTH
            ):
                ctx.log(f"reusing the trained model {model_path}")
                return model_path, timings
        except (ValueError, KeyError, TypeError):
            pass
    start = time.perf_counter()
    ctx.log("training the anti-snoop model ...")
    model = train.train_model(sweep_path)
    with staging_folder(model_dir, within=out, prefix=".model.") as staging:
        model_export.write_model(model, staging)
    timings["train"] = time.perf_counter() - start
    return model_path, timings


def _shown_path(path: str, out: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(out.resolve()))
    except ValueError:
        return str(path)


def prepare(plan: Plan, out: Path, ctx: Context) -> Trained:
    """The model of the anti-snoop column: the one given, or one trained here."""
    sweep_path = None
    if plan.model is not None:
        model_path, timings = plan.model, {"sweep": 0.0, "train": 0.0}
    else:
        trained, timings = train_here(out, plan.sweep, plan.sweep_plan, ctx)
        model_path = check_model(str(trained), ctx.platform)
        sweep_path = str(out / "sweep.parquet")
    if model_path == FIG4:
        return Trained(timings, model_path, FIG4, sweep_path=sweep_path, platform=ctx.platform)
    doc = json.loads(Path(model_path).read_text())
    return Trained(
        timings,
        model_path,
        _shown_path(model_path, out),
        sha256_file(model_path),
        doc,
        plan.sweep_plan,
        sweep_path,
        ctx.platform,
    )


def accuracy_section(prepared: Trained) -> list[str]:
    lines = ["## The anti-snoop model", ""]
    if prepared.model_path == FIG4:
        return lines + [
            "The `anti-snoop` column uses the paper's Figure 4 trees (`--model lctes2020-fig4`); no held-out accuracy."
        ]
    doc = prepared.model_doc
    lines.append(f"`{prepared.model_shown}` (`{doc.get('name', '')}`, sha256 `{prepared.model_sha256[:16]}…`).")
    sweep = doc.get("provenance", {}).get("sweep", {})
    training = doc.get("provenance", {}).get("training", {})
    if sweep:
        lines.append(
            f"Trained on a characterization sweep of {sweep.get('configurations', '?')} configurations "
            f"({sweep.get('runs', '?')} runs; patterns {', '.join(sweep.get('patterns', []))}; sizes "
            f"{', '.join(str(s) for s in sweep.get('sizes_elements', []))} elements), "
            f"depth {training.get('max_depth', '?')},"
            f" labels `{training.get('label_rule', '?')}`."
        )
    metrics = doc.get("metrics", {})
    if metrics:
        lines += [
            "",
            "| tree (manages) | held-out accuracy | held-out rows | held-out configurations"
            " | confusion [[TN, FP], [FN, TP]] |",
            "|---|---:|---:|---:|---|",
        ]
        for cluster, m in sorted(metrics.items()):
            h = m.get("heldout", {})
            lines.append(
                f"| {cluster} | {h.get('accuracy', float('nan')):.3f} | {h.get('test_rows', '?')} | "
                f"{h.get('test_configs', '?')} | {h.get('confusion_matrix', {}).get('counts', '?')} |"
            )
        lines += [
            "",
            "The paper reports no accuracy for its trees;"
            " `hetlab show-model` prints them in the layout of its Figure 4.",
        ]
    else:
        lines.append("The model file holds no held-out metrics.")
    return lines


def provenance(prepared: Trained) -> list[str]:
    lines = [
        f"- model `{prepared.model_shown}`"
        + (f", sha256 `{prepared.model_sha256}`" if prepared.model_sha256 is not None else "")
    ]
    if prepared.sweep_plan is not None:
        lines.append(
            "- characterization sweep: "
            + ", ".join(f"{k} {v}" for k, v in prepared.sweep_plan.items())
            + " (sweep.parquet, sweep.json)"
        )
    return lines
