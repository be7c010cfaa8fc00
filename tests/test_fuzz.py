"""Bounded-time fuzzing of the parsers at the package's edges (hypothesis): platform and
workload TOML (mutations of the built-in files), workload specs, model files, and the command
line's value parsers. The property everywhere: bad input is a ValueError (HetlabError, CliError)
with a one-line message, never a panic, another exception or a hang.

Examples per test: HETLAB_FUZZ_EXAMPLES (default 150, a few seconds each in CI); a longer local
run: HETLAB_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz.py."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetlab import _core, api, cli, html_report, model_export
from hetlab.cli import values

EXAMPLES = int(os.environ.get("HETLAB_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

PLATFORMS = {name: _core.builtin_platform_text(name) for name in _core.builtin_platforms()}
NUMBERS = st.sampled_from(
    ["0", "-1", "nan", "inf", "-inf", "1e308", "-1e308", "18446744073709551616", "4294967296", "1e-320", '"x"', "[]"]
)


def _one_line(e: BaseException) -> None:
    """The message as `hetlab` prints it is one line."""
    line = cli.error_line(e)
    assert str(e) and len(line.splitlines()) == 1 and line.isprintable(), line


def _mutate(text: str, data) -> str:
    """Replaces one number of `text` with a hostile value, or cuts/duplicates a slice."""
    kind = data.draw(st.sampled_from(["number", "cut", "dup", "byte"]))
    if kind == "number":
        spans = [m.span() for m in re.finditer(r"(?<![\w.])-?\d[\d_.eE+-]*", text)]
        a, b = spans[data.draw(st.integers(0, len(spans) - 1))]
        return text[:a] + data.draw(NUMBERS) + text[b:]
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, min(len(text), i + 200)))
    if kind == "cut":
        return text[:i] + text[j:]
    if kind == "dup":
        return text[:j] + text[i:j] + text[j:]
    return text[:i] + data.draw(st.characters(codec="utf-8")) + text[i:]


@FUZZ
@given(name=st.sampled_from(sorted(PLATFORMS)), data=st.data())
def test_mutated_platforms_load_or_fail_in_one_line(name, data):
    text = _mutate(PLATFORMS[name], data)
    try:
        summary = json.loads(_core.Platform(None, "fuzz.toml", text).summary())
    except ValueError as e:
        _one_line(e)
        return
    # a platform that loads has only finite numbers: no null (NaN, inf) in its summary
    assert "null" not in json.dumps([c["capacity"] for c in summary["clusters"]])
    for c in summary["clusters"]:
        assert all(isinstance(k, int) and k > 0 for k in c["opps_khz"])


@FUZZ
@given(
    gen=st.sampled_from(["ccbench", "periodic", "cpu-bound"]),
    pairs=st.lists(
        st.tuples(
            st.sampled_from(
                ["size", "pattern", "iterations", "threads", "run_us", "period_us", "duration_us", "instructions", "x"]
            ),
            st.one_of(NUMBERS, st.sampled_from(["stride-0", "stride-7", "random", "1"]), st.text(max_size=6)),
        ),
        max_size=4,
    ),
)
def test_workload_specs_load_or_fail_in_one_line(gen, pairs):
    spec = gen + ":" + ",".join(f"{k}={v}" for k, v in pairs)
    try:
        _core.workload_summary(spec, "", None)
    except ValueError as e:
        _one_line(e)


def _tree(data, n):
    node = st.fixed_dictionaries(
        {
            "feature": st.one_of(st.none(), st.integers(-1, 3)),
            "threshold": st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-(1 << 70), 1 << 70)),
            "left": st.one_of(st.none(), st.integers(-1, n + 1)),
            "right": st.one_of(st.none(), st.integers(-1, n + 1)),
            "value": st.lists(st.floats(0, 10), max_size=3),
            "entropy": st.floats(0, 1),
        }
    )
    return {
        "features": ["cci_congestion", "memory_access"],
        "classes": ["keep", "increase_frequency"],
        "nodes": data.draw(st.lists(node, min_size=0, max_size=n)),
        "fixed_point_shift": data.draw(st.one_of(st.none(), st.integers(0, 200))),
    }


@FUZZ
@given(data=st.data(), n=st.integers(0, 12))
def test_hostile_models_are_refused_or_evaluate_and_terminate(tmp_path_factory, data, n):
    import numpy as np

    model = {"name": "fuzz", "trees": [["big", _tree(data, n)]]}
    path = tmp_path_factory.mktemp("m") / "model.json"
    path.write_text(json.dumps(model))
    try:
        model_export.read_model(path)
    except api.HetlabError as e:
        _one_line(e)
        return
    # accepted: the governor's evaluator terminates on any counts
    counts = [np.array([0, 1, 1 << 40, (1 << 64) - 1], dtype=np.uint64) for _ in range(2)]
    out = _core.tree_predict(json.dumps(model), "big", counts, counts[::-1])
    assert len(out) == 4
    model_export.render_text(model_export.read_model(path))


@FUZZ
@given(text=st.text(max_size=40))
def test_command_line_value_parsers_raise_only_cli_errors(text):
    for parse in (values.parse_freq, lambda t: values.parse_tunables([t]), lambda t: values.ints(t, "--sizes")):
        try:
            parse(text)
        except (values.CliError, api.HetlabError) as e:  # the two the command line prints as one line
            _one_line(e)


REPORT_FILES = ("report.md", "runs.csv", "summary.csv", "series.csv", "warm.csv", "sensitivity.csv")


# A page draws its charts (1.5-6 s each): a twentieth of the examples of the parsers' tests
# (HETLAB_FUZZ_EXAMPLES=20000 for a long local run).
@settings(FUZZ, max_examples=max(4, EXAMPLES // 20))
@given(name=st.sampled_from(REPORT_FILES), data=st.data())
def test_mutated_report_folders_render_or_fail_in_one_line(reproduced, tmp_path_factory, name, data):
    # `hetlab report`'s readers (the page, its tables and charts) over a folder someone edited
    folder = tmp_path_factory.mktemp("mutated") / "out"
    shutil.copytree(reproduced, folder)
    path = folder / name
    path.write_text(_mutate(path.read_text(), data))
    try:
        page = html_report.experiment_page(str(folder))
    except (api.HetlabError, cli.CliError) as e:
        _one_line(e)
        return
    assert page.lstrip().lower().startswith("<!doctype html>")


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_every_builtin_platform_still_loads(name):
    json.loads(_core.Platform(name).summary())
