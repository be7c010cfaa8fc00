"""The anti-snoop model's commands: `hetlab train` (trees from a characterization sweep),
`hetlab show-model` (a model's trees in the features' units) and `hetlab export-model` (the
model for the kernel module, kmod/)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hetlab import _core, api
from hetlab.cli.values import CliError


def cmd_train(args: argparse.Namespace) -> int:
    from hetlab import model_export, train
    from hetlab._files import check_output_folder

    out = Path(args.out)
    check_output_folder(out, "--out folder")  # before the training, not after it
    if out.exists() and not out.is_dir():  # before the training, not after it
        raise CliError(f"--out '{args.out}' exists and is not a directory")
    model = train.train_model(
        args.sweep,
        max_depth=args.max_depth,
        label_rule=args.label_rule,
        seed=args.seed,
        reference=args.reference,
        class_weight=None if args.class_weight == "none" else args.class_weight,
    )
    files = model_export.write_model(model, out)  # checks `out` (no link in its path as root), then makes it
    print(model_export.render_text(model, units=True))
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0


def _load_model(name: str) -> dict:
    from hetlab import model_export

    if name == api.BUILTIN_MODEL:
        return json.loads(_core.builtin_model_json(name))
    path = Path(name)
    return model_export.read_model(path / "model.json" if path.is_dir() else path)


def cmd_show_model(args: argparse.Namespace) -> int:
    from hetlab import model_export

    print(model_export.render_text(_load_model(args.model), units=True))
    return 0


def cmd_export_model(args: argparse.Namespace) -> int:
    from hetlab import model_export
    from hetlab._files import write_output

    model = _load_model(args.model)
    out = Path(args.out)
    if args.kernel:
        blob = model_export.kernel_blob(model)
        write_output(out, blob, "model blob")
        what = f"{len(blob)} bytes; put it under /lib/firmware and load the module with model={out.name}"
    else:
        write_output(out, model_export.kernel_c_array(model), "C array")
        what = "a C array to compile into the module"
    print(f"wrote {out} ({what})")
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab train` and `hetlab show-model`."""
    tr = sub.add_parser(
        "train",
        help="train the anti-snoop model from a characterization sweep",
        description="Label each configuration with a Student's t-test of its run times against a reference "
        "configuration (p < 0.05 and slower: the idle cluster must speed up), then learn one entropy decision tree "
        "per cluster over the other cluster's CCI congestion and the memory access of its processes. Writes "
        "model.json (load with --model), model.h (integer-only C), model.dot (Graphviz) and model.txt.",
    )
    tr.add_argument(
        "sweep", help="the Parquet file of hetlab characterize, or the CSV (FILE.csv) of hetlabd characterize"
    )
    tr.add_argument("--out", required=True, help="output directory")
    tr.add_argument(
        "--max-depth", type=int, default=3, help="tree depth (default: 3; the paper used 2, see docs/training.md)"
    )
    tr.add_argument(
        "--label-rule",
        default="significant",
        choices=["significant", "paper-literal"],
        help="significant: increase iff p < 0.05 and slower (default);"
        " paper-literal: increase iff p > 0.05, the paper's text read literally",
    )
    tr.add_argument(
        "--reference",
        default="idle-max",
        choices=["idle-max", "both-max"],
        help="t-test reference: same active frequency with the idle cluster at max (default), or both clusters at max",
    )
    tr.add_argument(
        "--class-weight", default="none", choices=["none", "balanced"], help="class weighting (default: none)"
    )
    tr.add_argument("--seed", type=int, default=0, help="seed of the tree fit and the held-out split")
    tr.set_defaults(func=cmd_train)

    sm = sub.add_parser("show-model", help="print a trained model's trees with thresholds in the features' units")
    sm.add_argument(
        "model",
        help=f"model.json, the directory hetlab train wrote, or {api.BUILTIN_MODEL} (the paper's Figure 4 trees)",
    )
    sm.set_defaults(func=cmd_show_model)

    ex = sub.add_parser(
        "export-model",
        help="write a model for the kernel module (cpufreq_anti_snoop, kmod/)",
        description="Write a model as the anti_snoop kernel module reads it: --kernel a small binary blob to put "
        "under /lib/firmware and load with the module's model= parameter; --kernel-c the same bytes as a C array to "
        "compile in. Every threshold becomes an exact integer test, so the module decides as hetlab's governor does "
        "(docs/kernel-module.md).",
    )
    ex.add_argument(
        "model",
        help=f"model.json, the directory hetlab train wrote, or {api.BUILTIN_MODEL} (the paper's Figure 4 trees)",
    )
    fmt = ex.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--kernel", action="store_true", help="the blob for request_firmware")
    fmt.add_argument("--kernel-c", action="store_true", help="the blob as a C array (as_builtin_model)")
    ex.add_argument("--out", required=True, help="output file")
    ex.set_defaults(func=cmd_export_model)
