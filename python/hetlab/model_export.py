"""Writing and showing a trained anti-snoop model (`hetlab train`, `hetlab show-model`).

`write_model(model, out_dir)` writes:
- model.json: what the Rust governor loads (sorted keys, so the same model gives the same bytes);
- model.h:    a C99 header, integer arithmetic only, for a kernel-module governor;
- model.dot:  Graphviz, in the style of scikit-learn's export_graphviz;
- model.txt:  the trees in the text style of the seed paper's Figure 4.

`kernel_blob(model)` and `kernel_c_array(model)` give the model as the kernel module
(kmod/, docs/kernel-module.md) reads it: `hetlab export-model --kernel` / `--kernel-c`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from hetlab import _core
from hetlab._files import check_output_folder, note_input, write_output
from hetlab.api import HetlabError
from hetlab.train import INCREASE, fixed_threshold

# Per feature: the counters of the C functions' arguments (numerator, denominator) and the unit
# of the ratio.
FEATURE_COUNTERS = {
    "cci_congestion": ("cci_stall_cycles", "cci_read_requests", "stall cycles per read request"),
    "memory_access": ("bus_access", "cpu_cycles", "bus accesses per cycle"),
}
C_ARGS = ("cci_stall_cycles", "cci_read_requests", "bus_access", "cpu_cycles")
UINT64_MAX = (1 << 64) - 1


def model_json_text(model: dict) -> str:
    return json.dumps(model, sort_keys=True, indent=2) + "\n"


def read_model(path: str | os.PathLike) -> dict:
    """Reads a model.json; `HetlabError` (one line) when it cannot be used."""
    try:
        text = _core.read_input(str(path))
    except ValueError as e:  # read in Rust: a regular file, bounded, UTF-8
        raise HetlabError(f"cannot read model file '{path}': {e}; pass a model.json from `hetlab train`") from None
    note_input(path)
    try:
        model = json.loads(text)
    except RecursionError:
        raise HetlabError(f"model file '{path}' nests too deeply; pass a model.json from `hetlab train`") from None
    except ValueError as e:
        raise HetlabError(f"model file '{path}' is not JSON ({e}); pass a model.json from `hetlab train`") from None
    trees = model.get("trees") if isinstance(model, dict) else None
    if not isinstance(trees, list) or not all(isinstance(t, list) and len(t) == 2 for t in trees):
        raise HetlabError(
            f"model file '{path}' has no [cluster, tree] list under \"trees\"; pass a model.json from `hetlab train`"
        )
    try:
        _core.check_model(text)  # the governor's own checks: no cycles, bounded depth, sane numbers
    except ValueError as e:
        raise HetlabError(f"model file '{path}': {e}; pass a model.json from `hetlab train`") from None
    for cluster, tree in trees:
        for i, node in enumerate(tree["nodes"]):
            problem = _node_problem(node, len(tree["classes"]))
            if problem:
                raise HetlabError(
                    f"model file '{path}': tree for {cluster}, node {i}: {problem}; "
                    "pass a model.json from `hetlab train`"
                )
    return model


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _node_problem(node: dict, classes: int) -> str | None:
    """What a node lacks for the text, DOT and C renderings (the governor's checks passed)."""
    if not all(_is_number(node.get(k)) for k in ("entropy", "samples")):
        return "needs numbers 'entropy' and 'samples'"
    value = node.get("value")
    if not isinstance(value, list) or len(value) != classes or not all(_is_number(v) for v in value):
        return f"needs 'value', one count per class ({classes})"
    if node.get("feature") is not None and not _is_number(node.get("threshold")):
        return "a split needs a numeric 'threshold'"
    return None


def write_model(model: dict, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Writes model.json, model.h, model.dot and model.txt into `out_dir` (created if needed)
    and returns their paths by name."""
    out = Path(out_dir)
    header = c_header(model)  # fails before anything is written when the model cannot be exported
    check_output_folder(out, "model folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        files = {
            "model.json": model_json_text(model),
            "model.h": header,
            "model.dot": graphviz_dot(model),
            "model.txt": figure4_text(model),
        }
        paths = {}
        for name, text in files.items():
            write_output(out / name, text, "model")
            paths[name] = out / name
    except OSError as e:
        raise HetlabError(
            f"cannot write the model into '{out}': {e.strerror}; pick a writable --out directory"
        ) from None
    return paths


# --- number formatting (sklearn's export_graphviz with precision=5, as in the paper) --------


def _num(x: float) -> str:
    r = round(float(x), 5)
    return repr(r) if (r != 0 or x == 0) else f"{x:.5g}"


def _value(value: list) -> str:
    return "[" + ", ".join(str(int(v)) if float(v).is_integer() else _num(v) for v in value) + "]"


def _class(tree: dict, node: dict) -> str:
    value = node["value"]
    return tree["classes"][max(range(len(value)), key=lambda k: (value[k], -k))]  # ties: first


def _node_lines(tree: dict, node: dict, units: bool = False) -> list[str]:
    lines = []
    if node.get("feature") is not None:
        name = tree["features"][node["feature"]]
        cond = f"{name} <= {_num(node['threshold'])}"
        if units:
            unit = FEATURE_COUNTERS.get(name, (None, None, ""))[2]
            shift = tree.get("fixed_point_shift")
            fixed = (
                ""
                if shift is None
                else f" (fixed point: q <= {fixed_threshold(node['threshold'], shift)} at 2^-{shift})"
            )
            cond = f"{cond} {unit}{fixed}".replace("  ", " ")
        lines.append(cond)
    lines += [
        f"entropy = {_num(node['entropy'])}",
        f"samples = {node['samples']}",
        f"value = {_value(node['value'])}",
        f"class = {_class(tree, node)}",
    ]
    return lines


# --- text (Figure 4 style) ---------------------------------------------------------------------


def _tree_text(tree: dict, units: bool) -> list[str]:
    out: list[str] = []

    def walk(i: int, depth: int) -> None:
        node = tree["nodes"][i]
        pad = "    " * depth
        out.extend(pad + line for line in _node_lines(tree, node, units))
        if node.get("feature") is not None:
            out.append(pad + "True:")
            walk(node["left"], depth + 1)
            out.append(pad + "False:")
            walk(node["right"], depth + 1)

    walk(0, 0)
    return out


def _tree_title(cluster: str, tree: dict) -> str:
    shift = tree.get("fixed_point_shift")
    scaling = "floating point" if shift is None else f"fixed point, shift {shift}"
    return f"Decision tree used to manage the frequency of the {cluster} cluster ({scaling}):"


def figure4_text(model: dict) -> str:
    parts = [f"# model {model.get('name', '?')}"]
    for cluster, tree in model["trees"]:
        parts += ["", _tree_title(cluster, tree)] + _tree_text(tree, units=False)
    return "\n".join(parts) + "\n"


def render_text(model: dict, units: bool = True) -> str:
    """`hetlab show-model`: each tree with thresholds in the features' units (cci_congestion in
    stall cycles per read request, memory_access in bus accesses per cycle), then the provenance
    and the held-out metrics."""
    parts = [f"model {model.get('name', '?')}"]
    if units:
        features = sorted({f for _, tree in model["trees"] for f in tree["features"]})
        parts += ["features (read while the managed cluster is idle):"]
        parts += [
            f"  {f} = {FEATURE_COUNTERS[f][0]} / {FEATURE_COUNTERS[f][1]}, in {FEATURE_COUNTERS[f][2]}"
            for f in features
            if f in FEATURE_COUNTERS
        ]
    for cluster, tree in model["trees"]:
        parts += ["", _tree_title(cluster, tree)] + ["  " + line for line in _tree_text(tree, units)]
    prov = model.get("provenance")
    if prov:
        sweep, training, libs = prov.get("sweep", {}), prov.get("training", {}), prov.get("libraries", {})
        parts += ["", "provenance:"]
        parts += [f"  {k}: {json.dumps(v, sort_keys=True)}" for k, v in sweep.items()]
        parts += [f"  {k}: {json.dumps(v, sort_keys=True)}" for k, v in training.items()]
        if libs:
            parts.append("  libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(libs.items())))
    metrics = model.get("metrics")
    if metrics:
        parts += ["", "held-out metrics (split by configuration; rows true, columns predicted [decrease, increase]):"]
        for cluster, m in metrics.items():
            h = m.get("heldout")
            if not h:
                parts.append(f"  {cluster}: no held-out split (fewer than 2 configurations)")
                continue
            cm = h["confusion_matrix"]["counts"]
            parts.append(
                f"  {cluster}: accuracy {h['accuracy']:.3f} on {h['test_rows']} rows of "
                f"{h['test_configs']} configurations; confusion {cm}"
            )
    return "\n".join(parts) + "\n"


# --- Graphviz (sklearn export_graphviz style) ------------------------------------------------


def graphviz_dot(model: dict) -> str:
    lines = ["digraph Tree {", 'node [shape=box, fontname="helvetica"] ;', 'edge [fontname="helvetica"] ;']
    for cluster, tree in model["trees"]:
        ident = _c_ident(cluster)
        lines += [f"subgraph cluster_{ident} {{", f'label="{_tree_title(cluster, tree)}" ;']
        for i, node in enumerate(tree["nodes"]):
            label = "\\n".join(_node_lines(tree, node))
            lines.append(f'{ident}_{i} [label="{label}"] ;')
        for i, node in enumerate(tree["nodes"]):
            if node.get("feature") is not None:
                # sklearn labels the root's edges only; we label every edge, as Figure 4 does
                lines.append(
                    f'{ident}_{i} -> {ident}_{node["left"]} [labeldistance=2.5, labelangle=45, headlabel="True"] ;'
                )
                lines.append(
                    f'{ident}_{i} -> {ident}_{node["right"]} [labeldistance=2.5, labelangle=-45, headlabel="False"] ;'
                )
        lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- C header ----------------------------------------------------------------------------------

_C_RATIO = r"""
#ifndef HETLAB_FIXED_RATIO_DEFINED
#define HETLAB_FIXED_RATIO_DEFINED
/*
 * floor(num * 2^shift / den), or 0 when den == 0; saturates at UINT64_MAX, which is exact for
 * the comparisons below because every threshold constant is smaller than UINT64_MAX.
 * Restoring shift-and-subtract division of the (64 + shift)-bit dividend num * 2^shift: no
 * 128-bit type and no division instruction, so 32-bit ARM kernels (no __int128, no
 * __aeabi_uldivmod) build it too. At most 64 + 32 iterations; runs once per governor sample.
 */
static inline uint64_t hetlab_fixed_ratio(uint64_t num, uint64_t den, unsigned shift)
{
	uint64_t rem = 0, quot = 0;
	int saturated = 0;
	unsigned i;

	if (den == 0)
		return 0;
	for (i = 0; i < 64u + shift; i++) {
		uint64_t carry = rem >> 63;	/* the bit that rem << 1 pushes out */

		rem = (rem << 1) | (num >> 63);	/* next dividend bit; zeros once num is used up */
		num <<= 1;
		if (quot >> 63)
			saturated = 1;	/* the quotient needs more than 64 bits */
		quot <<= 1;
		if (carry || rem >= den) {
			rem -= den;	/* with carry the true rem is rem + 2^64 < 2 den: wraps right */
			quot |= 1;
		}
	}
	return saturated ? ~(uint64_t)0 : quot;
}
#endif
"""


def _c_ident(name: str) -> str:
    ident = re.sub(r"[^0-9A-Za-z_]", "_", name).lower()
    return ident if not ident[:1].isdigit() else "_" + ident


def _c_tree(cluster: str, tree: dict) -> list[str]:
    shift = tree.get("fixed_point_shift")
    if shift is None:
        raise HetlabError(
            f"the tree for {cluster} compares floating point (no fixed_point_shift): "
            "model.h needs a model trained by `hetlab train`"
        )
    unknown = [f for f in tree["features"] if f not in FEATURE_COUNTERS]
    if unknown:
        raise HetlabError(
            f"the tree for {cluster} uses features {', '.join(unknown)} that model.h cannot read; "
            f"use {', '.join(FEATURE_COUNTERS)}"
        )
    fn = f"hetlab_{_c_ident(cluster)}_increase"
    nodes = tree["nodes"]
    depth = _depth(nodes)
    out = [
        "",
        f"/* Tree managing the {cluster} cluster: {len(nodes)} nodes, depth {depth}, shift S = {shift}.",
        f" * Read the counters while {cluster} is idle: the CCI port of the other cluster and the",
        " * process running on it. Returns 1 for increase_frequency, 0 for decrease_frequency. */",
        f"static inline int {fn}(uint64_t cci_stall_cycles, uint64_t cci_read_requests,",
        " " * len(f"static inline int {fn}(") + "uint64_t bus_access, uint64_t cpu_cycles)",
        "{",
    ]
    out += [f"\t(void){a};" for a in C_ARGS]  # a single-leaf tree reads none of them

    def walk(i: int, level: int) -> None:
        node, pad = nodes[i], "\t" * level
        if node.get("feature") is None:
            verdict = 1 if _class(tree, node) == INCREASE else 0
            out.append(f"{pad}return {verdict};\t/* {_class(tree, node)}, value = {_value(node['value'])} */")
            return
        name = tree["features"][node["feature"]]
        num, den, unit = FEATURE_COUNTERS[name]
        thr_q = fixed_threshold(node["threshold"], shift)
        if thr_q >= UINT64_MAX:  # the saturating ratio would be ambiguous
            raise HetlabError(
                f"the tree for {cluster}: threshold {node['threshold']} does not fit 64-bit fixed point "
                f"with shift {shift}; retrain with a smaller fixed_point_shift"
            )
        out.append(f"{pad}/* node {i}: {name} <= {node['threshold']!r} {unit} */")
        out.append(f"{pad}if (hetlab_fixed_ratio({num}, {den}, {shift}u) <= {thr_q}ULL) {{")
        walk(node["left"], level + 1)
        out.append(f"{pad}}} else {{")
        walk(node["right"], level + 1)
        out.append(f"{pad}}}")

    walk(0, 1)
    out.append("}")
    return out


def _depth(nodes: list[dict], i: int = 0) -> int:
    node = nodes[i]
    if node.get("feature") is None:
        return 0
    return 1 + max(_depth(nodes, node["left"]), _depth(nodes, node["right"]))


def c_header(model: dict) -> str:
    """model.h: one `static inline int hetlab_<cluster>_increase(...)` per tree; C99, integer
    arithmetic only, nothing from libc but the uint64_t type."""
    name = model.get("name", "?")
    guard = "HETLAB_MODEL_H"
    head = [
        f'/* model.h: the hetlab anti-snoop decision trees "{name}", generated by hetlab train.',
        " *",
        " * hetlab_<cluster>_increase() returns 1 when the tree managing <cluster> says",
        " * increase_frequency (processes on the other cluster stall snooping <cluster>'s caches),",
        " * 0 for decrease_frequency. Arguments: counts over one governor period while <cluster> is",
        " * idle:",
        " *   cci_stall_cycles  - CCI-400 event 0x09 (SI_RRQ_STALL_TT_FULL) on the OTHER cluster's port",
        " *   cci_read_requests - CCI-400 event 0x00 (SI_RRQ_HS_ANY) on the same port",
        " *   bus_access        - core PMU event 0x19 of the process on the other cluster",
        " *   cpu_cycles        - core PMU event 0x11 of the same process",
        " * Features: cci_congestion = cci_stall_cycles / cci_read_requests (stall cycles per read",
        " * request); memory_access = bus_access / cpu_cycles (bus accesses per cycle); a zero",
        " * denominator reads as 0.",
        " * Fixed point with shift S: feature q = floor(num * 2^S / den); a node goes left (True)",
        " * when q <= floor(threshold * 2^S), the integer written after each test (the comment above",
        " * it gives the threshold in the feature's unit). Exactly hetlab's Rust and Python evaluators.",
        " * No floating point, no division instruction, no libc: usable from a kernel module.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#ifdef __KERNEL__",
        "#include <linux/types.h>",
        "#else",
        "#include <stdint.h>",
        "#endif",
    ]
    body = _C_RATIO.rstrip("\n").split("\n")
    for cluster, tree in model["trees"]:
        body += _c_tree(cluster, tree)
    return "\n".join(head + body + ["", f"#endif /* {guard} */", ""])


# --- the kernel module's model (kmod/) ----------------------------------------------------------


def kernel_blob(model: dict) -> bytes:
    """The blob cpufreq_anti_snoop loads with request_firmware (its layout and exact integer
    thresholds: hetlab-core's tree_blob.rs); `HetlabError` names what the module cannot take."""
    try:
        return _core.kernel_model_blob(model_json_text(model))
    except ValueError as e:
        raise HetlabError(f"{e}; retrain with `hetlab train`") from None


def kernel_c_array(model: dict) -> str:
    """The same bytes as a C array `as_builtin_model`, to compile into the module (the built-in
    lctes2020-fig4 is kmod/anti_snoop_fig4.h)."""
    blob = kernel_blob(model)
    rows = [", ".join(f"0x{b:02x}" for b in blob[i : i + 12]) for i in range(0, len(blob), 12)]
    name = model.get("name", "?")
    return "\n".join(
        [
            "/* SPDX-License-Identifier: GPL-2.0 */",
            f'/* The anti-snoop model "{name}" compiled into cpufreq_anti_snoop ({len(blob)} bytes),',
            f" * written by `hetlab export-model {name} --kernel-c`; do not edit. */",
            "#ifndef ANTI_SNOOP_BUILTIN_MODEL_H",
            "#define ANTI_SNOOP_BUILTIN_MODEL_H",
            "",
            "static const u8 as_builtin_model[] = {",
            *[f"\t{row}," for row in rows],
            "};",
            "",
            "#endif /* ANTI_SNOOP_BUILTIN_MODEL_H */",
            "",
        ]
    )
