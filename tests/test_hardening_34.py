"""Issue 34's hardening classes, each reproducer of the issue a regression test: every bad input
is one `hetlab: error:` line naming the thing and the fix, a non-zero exit, no traceback and no
file written (`one_error`)."""

from __future__ import annotations

import html
import inspect
import os
import shutil
import sys
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetlab as hl
import processes
from hetlab import _checked
from hetlab.api import HetlabError

BIN = Path(sys.executable).parent
QUICK = ["--workload", "ccbench:size=4096,iterations=2000"]


def hetlab(args, cwd, **kw):
    return processes.run(
        [sys.executable, "-m", "hetlab", *args], capture_output=True, text=True, cwd=cwd, timeout=120, **kw
    )


def files(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def one_error(args, cwd: Path, says: str = "") -> str:
    """Runs hetlab; asserts one `hetlab: error:` line containing `says`, exit != 0, no traceback,
    nothing on stdout and no new file in `cwd`."""
    before = files(cwd)
    r = hetlab(args, cwd)
    assert r.returncode not in (0, None), r.stdout + r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("hetlab: error: ") and len(r.stderr.splitlines()) == 1, r.stderr
    assert says in r.stderr, r.stderr
    assert r.stdout == "", r.stdout
    assert files(cwd) == before, "no partial output"
    return r.stderr


def exynos_text() -> str:
    root = Path(__file__).resolve().parent.parent
    return (root / "data" / "platforms" / "exynos5422.toml").read_text()


def platform_file(d: Path, find: str, replace: str, name: str = "p.toml") -> Path:
    text = exynos_text()
    assert find in text, find
    path = d / name
    path.write_text(text.replace(find, replace, 1))
    return path


# --- class 2: non-finite and out-of-range floats from files -----------------------------------


@pytest.mark.parametrize(
    "find, replace, says",
    [
        ("ambient_c = 35.0", "ambient_c = nan", "thermal.ambient_c must be within -55 °C to 125 °C, got NaN"),
        ("ambient_c = 35.0", "ambient_c = 1e308", "thermal.ambient_c must be within"),
        ("ambient_c = 35.0", "ambient_c = -300.0", "thermal.ambient_c must be within"),
        ("temp_c = 70.0", "temp_c = nan", "thermal.trips[0].temp_c must be within"),
        ("big = 1800000", "big = 0", "caps_khz.big: 0 kHz is no cap"),
        ("leakage_mw = 75.0", "leakage_mw = 1e12", "leakage_mw must be within 0 mW to 100000 mW"),
    ],
)
@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_platform_floats_out_of_their_physical_range_are_one_line(tmp_path, find, replace, says, mode):
    src = tmp_path / "src"
    src.mkdir()
    path = platform_file(src, find, replace)
    one_error(["simulate", "--platform", str(path), *QUICK, *mode], tmp_path, says)


def test_advise_refuses_an_out_of_range_platform_in_one_line(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = platform_file(src, "leakage_mw = 75.0", "leakage_mw = 1e12")
    one_error(["advise", "--platform", str(path), QUICK[1]], tmp_path, "leakage_mw must be within")


def test_thermal_runaway_is_an_error_never_null_energies(tmp_path):
    """Values each inside its range that together heat a cluster without bound: the run is an
    error naming the cluster and the fields, under --json too (it printed null energies)."""
    src = tmp_path / "src"
    src.mkdir()
    path = platform_file(src, "leakage_mw = 75.0", "leakage_mw = 100000.0")
    text = path.read_text().replace("thermal_resistance_c_per_w = ", "thermal_resistance_c_per_w = 1e6 # ", 2)
    text = text.replace("thermal_capacitance_j_per_c = ", "thermal_capacitance_j_per_c = 1e-9 # ", 2)
    path.write_text(text)
    for mode in ([], ["--json"]):
        one_error(["simulate", "--platform", str(path), *QUICK, *mode], tmp_path, "thermal runaway")


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Path:
    """A small reproduction's folder (four-vs-eight, one benchmark, one seed: seconds)."""
    out = tmp_path_factory.mktemp("reproduced") / "out"
    r = hetlab(["reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--out", str(out)], None)
    assert r.returncode == 0, r.stderr
    return out


def damaged(reproduced: Path, tmp_path: Path, name: str, column: str, value: str) -> Path:
    """A copy of the folder with `column` of the first row of `name` set to `value`."""
    import pandas as pd

    out = tmp_path / "out"
    shutil.copytree(reproduced, out)
    table = pd.read_csv(out / name)
    table[column] = table[column].astype(object)
    table.loc[0, column] = value
    table.to_csv(out / name, index=False)
    return out


@pytest.mark.parametrize(
    "name, column, value, says",
    [
        ("runs.csv", "seed", "inf", "column seed has 'inf', not a whole number from 0 to"),
        ("runs.csv", "seed", "-1", "column seed has '-1'"),
        ("series.csv", "time_s", "nan", "column time_s has 'nan'"),
    ],
)
def test_report_refuses_values_no_reproduction_writes(reproduced, tmp_path, name, column, value, says):
    out = damaged(reproduced, tmp_path, name, column, value)
    one_error(["report", str(out)], tmp_path, says)


# --- class 3: outputs written over the command's own inputs ----------------------------------


def unchanged(path: Path):
    """Asserts `path`'s bytes are the same after the block as before it."""
    before = path.read_bytes()
    return lambda: path.read_bytes() == before


@pytest.fixture
def inputs(tmp_path):
    """A workload file and a platform file (copies of the built-in ones) in `tmp_path/in`."""
    root = Path(__file__).resolve().parent.parent
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(root / "data" / "workloads" / "bbench.toml", d / "w.toml")
    shutil.copy(root / "data" / "platforms" / "exynos5422.toml", d / "p.toml")
    return d


def refused_over_input(args, cwd: Path, victim: Path) -> None:
    same = unchanged(victim)
    one_error(args, cwd, "it is this command's input")
    assert same(), f"{victim} was changed"


def test_simulate_trace_onto_its_workload_is_refused(inputs, tmp_path):
    w = inputs / "w.toml"
    refused_over_input(["simulate", "--workload", str(w), "--time-limit", "0.01", "--trace", str(w)], tmp_path, w)


def test_simulate_series_onto_its_platform_by_a_link_is_refused(inputs, tmp_path):
    """Another path to the same file (a hard link) is the same input: compared by inode."""
    p = inputs / "p.toml"
    os.link(p, inputs / "alias.toml")
    args = ["simulate", "--platform", str(p), *QUICK, "--series", str(inputs / "alias.toml")]
    refused_over_input(args, tmp_path, p)


def test_advise_plot_onto_its_workload_is_refused(inputs, tmp_path):
    w = inputs / "w.toml"
    refused_over_input(["advise", str(w), "--plot", str(w)], tmp_path, w)


def test_characterize_out_onto_its_platform_is_refused(inputs, tmp_path):
    p = inputs / "p.toml"
    refused_over_input(["characterize", "--platform", str(p), "--out", str(p)], tmp_path, p)


def test_profile_out_onto_the_profiled_program_is_refused(tmp_path):
    program = tmp_path / "prog.sh"
    program.write_text("#!/bin/sh\ntrue\n")
    program.chmod(0o755)
    refused_over_input(["profile", "--out", str(program), "--", str(program)], tmp_path, program)


def test_report_out_onto_its_runs_csv_is_refused(reproduced, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(reproduced, out)
    refused_over_input(["report", str(out), "--out", str(out / "runs.csv")], tmp_path, out / "runs.csv")


def test_import_em_out_inside_the_tree_it_reads_is_refused(tmp_path):
    tree = tmp_path / "em"
    r = hetlab(["platform", "export-em", "exynos5422", "--format", "debugfs", "--out", str(tree)], tmp_path)
    assert r.returncode == 0, r.stderr
    one_error(["platform", "import-em", str(tree), "--out", str(tree / "em.toml")], tmp_path, "input directory")


# --- class 7: typed one-line errors from every public API function ---------------------------

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.binary(max_size=6),
    st.lists(st.one_of(st.integers(), st.text(max_size=4), st.floats()), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4), st.none()), max_size=2),
    st.just(object()),
)


def _public_functions() -> list:
    return [f for f in _checked.PUBLIC if not f.__qualname__.startswith("SimResult.")]


def test_every_public_function_is_checked():
    """Every function `hetlab` exports, and SimResult's methods that take arguments, go through
    `_checked.checked` (a new one that does not fails here)."""
    wrapped = {getattr(f, "__wrapped__", None) for f in _checked.PUBLIC}
    for name in hl.__all__:
        obj = getattr(hl, name)
        if inspect.isfunction(obj):
            assert obj in _checked.PUBLIC, f"hl.{name} is not wrapped by _checked.checked"
    for name, method in inspect.getmembers(hl.SimResult, inspect.isfunction):
        takes = [p for p in inspect.signature(method).parameters if p != "self"]
        if not name.startswith("_") and takes:
            assert getattr(hl.SimResult, name) in _checked.PUBLIC or method in wrapped, name


@settings(
    max_examples=int(os.environ.get("HETLAB_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_any_bad_argument_of_any_public_function_is_one_hetlab_error_line(data):
    """One argument of one public function given a value its annotation does not take (the
    others left at their defaults, required ones given a bad value too): a HetlabError of one
    line naming the function, never a TypeError, ValueError, KeyError or a traceback from below.
    Values that the annotation takes are skipped: they would run simulations or the board."""
    func = data.draw(st.sampled_from(_public_functions()), label="function")
    signature = inspect.signature(func)
    hints = typing.get_type_hints(func.__wrapped__)
    params = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if not params:  # governors(), platforms(), ...: an argument they do not take
        with pytest.raises(HetlabError, match="got an unexpected keyword argument"):
            func(surprise=data.draw(ANY_VALUE))
        return
    target = data.draw(st.sampled_from(params), label="argument")
    value = data.draw(ANY_VALUE.filter(lambda v: not _checked.matches(hints.get(target.name, typing.Any), v)))
    kwargs = {target.name: value}
    for p in params:  # required arguments: a bad value each, so nothing runs
        if p.default is inspect.Parameter.empty and p.name not in kwargs:
            kwargs[p.name] = object()
    with pytest.raises(HetlabError) as e:
        func(**kwargs)
    assert len(str(e.value).splitlines()) == 1, str(e.value)


@pytest.fixture(scope="module")
def small_result():
    return hl.simulate(workload="ccbench:size=4096,iterations=2000")


@pytest.mark.parametrize(
    "call, says",
    [
        (lambda r: hl.simulate_reps("3"), "reps must be an integer, got '3'"),
        (lambda r: hl.simulate_reps(2, workers="x"), "workers must be an integer"),
        (lambda r: hl.simulate_reps(2, progress=5), "progress must be a function"),
        (lambda r: hl.characterize(5), "characterize(): out must be a string, got 5"),
        (lambda r: hl.characterize("x.parquet", reps="2"), "characterize(): reps must be an integer"),
        (lambda r: hl.characterize("x.parquet", run_s=float("nan")), "run_s must be a finite number"),
        (lambda r: hl.govern(5), "govern(): governor must be a string, got 5"),
        (lambda r: hl.govern("ondemand", tunables={"up_threshold": "high"}), "govern(): tunables must be a dict"),
        (lambda r: hl.chase(sizes=[1.5]), "chase(): sizes must be"),
        (lambda r: hl.chase(cpu="0"), "chase(): cpu must be an integer or None"),
        (lambda r: r.cluster("prime"), "SimResult.cluster(): no cluster 'prime' in this run; give one of"),
        (lambda r: r.cluster(5), "SimResult.cluster(): name must be a string, got 5"),
    ],
)
def test_the_reviews_api_tracebacks_are_one_hetlab_error_line(small_result, call, says):
    with pytest.raises(HetlabError) as e:
        call(small_result)
    assert says in str(e.value) and len(str(e.value).splitlines()) == 1, str(e.value)


# --- class 1: total bounds on every input, checked before work starts ------------------------


def copied(reproduced: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(reproduced, out)
    return out


@pytest.mark.parametrize(
    "name, text, says",
    [
        ("report.md", "\n\n" + "x" * (600 * 1024), "more than the 524288 of any report hetlab writes"),
        # 800 KB of `*a` took 144 s in python-markdown
        ("report.md", "\n\n" + "*a" * (40 * 1024), "has a paragraph of 8192"),
        # one CPU number of 1e9 grew the placement chart's colours past 3.5 GB
        (
            "intervals.csv",
            "label,config,seed,tid,thread,cpu,start_s,end_s\nx,y,1,1,t,1000000000,0,1\n",
            "column cpu has '1000000000', not a whole number from 0 to 63",
        ),
        ("intervals.csv", "label,cpu\n" + "x,1\n" * 1_000_001, "more than the 1000000 of any table"),
    ],
)
def test_report_readers_have_bounds(reproduced, tmp_path, name, text, says):
    out = copied(reproduced, tmp_path)
    with (out / name).open("a") as f:
        f.write(text)
    one_error(["report", str(out)], tmp_path, says)


def test_report_has_a_time_limit(reproduced, tmp_path):
    out = copied(reproduced, tmp_path)
    one_error(["report", str(out), "--time-limit", "nan"], tmp_path, "--time-limit nan s is out of range")
    one_error(["report", str(out), "--time-limit", "0.001"], tmp_path, "took longer than --time-limit 0.001 s")


@pytest.mark.parametrize("value", ["nan", "-1", "0", "1e308"])
def test_advise_and_reproduce_check_their_time_limit_first(tmp_path, value):
    one_error(["advise", QUICK[1], "--time-limit", value], tmp_path, "--time-limit")
    args = ["reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--out", "o"]
    one_error([*args, "--time-limit", value], tmp_path, "--time-limit")


def test_advise_time_limit_cuts_every_candidate(tmp_path):
    says = "no candidate could run: did not finish within --time-limit 1e-05 s of simulated time"
    long_run = "ccbench:size=4096,iterations=20000000"
    one_error(["advise", long_run, "--time-limit", "1e-5", "--no-progress"], tmp_path, says)


def test_reproduce_time_limit_cutting_a_run_is_an_error_never_a_row(tmp_path):
    """(The experiment's prepare step writes its own inputs, pairs/ and sensitivity/, before any
    run; no result of a run, runs.csv or report.md, is written.)"""
    args = ["reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--out", "o"]
    r = hetlab([*args, "--time-limit", "1e-5"], tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("hetlab: error: ") and len(r.stderr.splitlines()) == 1
    assert "did not finish within --time-limit 1e-05 s" in r.stderr, r.stderr
    assert not (tmp_path / "o" / "runs.csv").exists() and not (tmp_path / "o" / "report.md").exists()


def test_a_dynamic_chunk_of_1e_300_instructions_is_refused(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "w.toml").write_text(
        "name='x'\n[[tasks]]\nname='t'\nthreads=2\n[[tasks.phases]]\nparallel_instructions=8e6\n"
        "allocation='dynamic'\nchunk_instructions=1e-300\n"
    )
    one_error(["simulate", "--workload", str(src / "w.toml")], tmp_path, "chunk_instructions must be at least 1")


# --- class 5: the HTML page keeps only http(s), relative and fragment links ------------------


def _hrefs(page: str) -> list[str]:
    from html.parser import HTMLParser

    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend(v for k, v in attrs if k in ("href", "src") and v is not None and not v.startswith("data:"))

    Links().feed(page)
    return found


def test_a_report_links_only_to_http_relative_and_fragments(reproduced, tmp_path):
    out = copied(reproduced, tmp_path)
    hostile = [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(2)",
        "jav&#x61;script:alert(3)",
        "java%0ascript:alert(4)",
        "vbscript:msgbox(5)",
        "data:text/html,<script>alert(6)</script>",
        "file:///etc/passwd",
    ]
    kept = ["https://example.org/a", "http://example.org/b", "docs/model.md", "#runs"]
    lines = [f"[h{i}]({u})" for i, u in enumerate(hostile)] + [f"[k{i}]({u})" for i, u in enumerate(kept)]
    lines.append("[ref][r]\n\n[r]: javascript:alert(7)")
    with (out / "report.md").open("a") as f:
        f.write("\n\n" + "\n\n".join(lines) + "\n")
    r = hetlab(["report", str(out)], tmp_path)
    assert r.returncode == 0, r.stderr
    page = (out / "report.html").read_text()
    links = _hrefs(page)
    for url in kept:
        assert url in links, url
    from urllib.parse import urlsplit

    for link in links:  # as a browser parses it (a scheme with % in it is no scheme: a relative path)
        assert urlsplit(html.unescape(link)).scheme in ("", "http", "https"), link
    assert not [u for u in links if u.lower().startswith(("javascript", "vbscript", "data", "file", "jav&"))]
    assert ">h0<" in page  # the refused link's text is still shown


def test_safe_link_reads_the_scheme_as_a_browser_does():
    from hetlab.html_report import safe_link

    for url in ["javascript:x", " \x01javascript:x", "java\tscript:x", "jav&#x61;script:x", "JAVASCRIPT:x", "ftp://h"]:
        assert not safe_link(url), url
    for url in ["https://h/p", "HTTP://h", "a/b.md", "./x:y", "#frag", "?q=1", ""]:
        assert safe_link(url), url


# --- class 4: links in any component of an output's path, as root; replaced files keep owner -


IS_ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not IS_ROOT, reason="the rule is root's (links are followed otherwise)")


@pytest.fixture
def linked(tmp_path):
    """`tmp_path/real` and `tmp_path/link` -> real (a directory link, as planted in a shared /tmp)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    return tmp_path


@as_root
@pytest.mark.parametrize(
    "args",
    [
        ["simulate", *QUICK, "--trace", "link/x"],
        ["simulate", *QUICK, "--series", "link/x.csv"],
        ["platform", "export-em", "exynos5422", "--format", "debugfs", "--out", "link/em"],
        ["platform", "export-em", "exynos5422", "--out", "link/em.toml"],
    ],
)
def test_a_link_in_a_parent_directory_is_refused_as_root(linked, args):
    one_error(args, linked, "'link' in its path is a symbolic link")
    assert list((linked / "real").iterdir()) == []


@as_root
def test_reproduce_force_into_a_linked_folder_is_refused_as_root(linked, reproduced):
    shutil.copytree(reproduced, linked / "real" / "out")
    args = ["reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--force", "--out", "link/out"]
    before = sorted(p.name for p in (linked / "real" / "out").iterdir())
    r = hetlab(args, linked)
    assert r.returncode == 2 and "'link' in its path is a symbolic link" in r.stderr, r.stderr
    assert sorted(p.name for p in (linked / "real" / "out").iterdir()) == before


def test_a_replaced_file_keeps_its_mode_and_as_root_its_owner(tmp_path):
    series = tmp_path / "s.csv"
    series.write_text("old\n")
    series.chmod(0o600)
    if IS_ROOT:
        os.chown(series, 1234, 4321)
    r = hetlab(["simulate", *QUICK, "--series", str(series)], tmp_path)
    assert r.returncode == 0, r.stderr
    st = series.stat()
    assert series.read_text() != "old\n" and oct(st.st_mode & 0o7777) == "0o600"
    if IS_ROOT:
        assert (st.st_uid, st.st_gid) == (1234, 4321)


def test_an_error_quotes_a_short_excerpt_of_a_long_value(tmp_path):
    """A value of 4,000 characters (a file a link points at) is quoted in 200 at most."""
    w = tmp_path / "w.toml"
    w.write_text(f"name='w'\n[[tasks]]\nname='t'\npolicy='{'A' * 4000}'\n[[tasks.phases]]\ninstructions=10\n")
    line = one_error(["simulate", "--workload", str(w)], tmp_path, "unknown policy 'AAAA")
    assert len(line) < 600 and "A" * 201 not in line, len(line)


# --- class 6: a Dask cluster with no worker, or that loses its last one ----------------------


@pytest.fixture
def scheduler(tmp_path):
    """A `dask scheduler` alone on 127.0.0.1: (its executor spec, its scheduler file)."""
    pytest.importorskip("distributed")
    import json as _json
    import subprocess
    import time

    scheduler_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "scheduler.log", "w")
    proc = processes.popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0"]
        + ["--scheduler-file", str(scheduler_file)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        for _ in range(600):
            if scheduler_file.exists():
                break
            time.sleep(0.1)
        address = _json.loads(scheduler_file.read_text())["address"]
        yield "dask://" + address.removeprefix("tcp://"), scheduler_file
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_a_cluster_with_no_worker_is_one_line_not_a_wait(scheduler, tmp_path):
    spec, _ = scheduler
    env = {**os.environ, "HETLAB_DASK_WORKER_WAIT_S": "1"}
    before = files(tmp_path)
    r = processes.run(
        [str(BIN / "hetlab"), "advise", QUICK[1], "--executor", spec, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "the Dask scheduler has no worker (waited 1 s); start one with `dask worker tcp://" in r.stderr
    assert files(tmp_path) == before


def test_a_cluster_that_loses_its_last_worker_stops_with_one_line(scheduler, tmp_path):
    """The only worker (no nanny to restart it) is killed once the sweep's first chunk is back."""
    import signal
    import subprocess
    import time

    spec, scheduler_file = scheduler
    worker = processes.popen(
        [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--no-nanny", "--nthreads", "1"]
        + ["--no-dashboard", "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out, partial = tmp_path / "s.parquet", tmp_path / "s.parquet.partial"
    sweep = processes.popen(
        [str(BIN / "hetlab"), "characterize", "--patterns", "random", "--reps", "2", "--run-s", "1"]
        + ["--out", str(out), "--executor", spec],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HETLAB_DASK_WORKER_WAIT_S": "2", "PYTHONFAULTHANDLER": "1"},
    )
    for _ in range(3000):  # the first chunk back: the others are queued on the only worker
        if partial.exists() and any(partial.glob("chunk-*.arrow")) or sweep.poll() is not None:
            break
        time.sleep(0.1)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    try:
        _, stderr = sweep.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sweep.send_signal(signal.SIGABRT)
        _, stderr = sweep.communicate(timeout=60)
        raise AssertionError(stderr[-5000:]) from None
    assert sweep.returncode == 2 and len(stderr.strip().splitlines()) == 1, stderr
    assert "the cluster lost its last worker and none came back in 2 s" in stderr, stderr
    assert not out.exists()


# --- class 8: profile's TOML and background children -----------------------------------------

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")


@needs_valgrind
def test_a_profile_with_newlines_and_quotes_in_its_text_loads(tmp_path):
    out = tmp_path / 'we"ird.toml'
    description = 'line one\nline "two" \\ end\r'
    r = hetlab(["profile", "--description", description, "--out", str(out), "--", "sh", "-c", "true\n#'\"x"], tmp_path)
    assert r.returncode == 0, r.stderr
    import tomllib

    doc = tomllib.loads(out.read_text())
    assert doc["description"] == description and doc["name"] == 'we"ird'
    r = hetlab(["simulate", "--workload", str(out), "--time-limit", "0.01"], tmp_path)
    assert r.returncode == 0, r.stderr


@needs_valgrind
def test_a_profiled_program_that_leaves_a_background_child_is_one_line_and_nothing_runs_on(tmp_path):
    import subprocess

    marker = f"sleep {60 + os.getpid() % 10000 / 10000:.4f}"  # a duration no other process has
    r = hetlab(["profile", "--", "sh", "-c", f"{marker} & exit 0"], tmp_path)
    assert r.returncode == 2, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("hetlab: error: ") and "left a background process running" in last, r.stderr
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps, [line for line in ps.splitlines() if marker in line]


# --- class 9: validation gaps -----------------------------------------------------------------

SLOW_SWEEP = ["characterize", "--patterns", "random", "--reps", "2", "--active-opp", "top"]
SLOW_SWEEP += ["--sizes", "1024,2048,4096,8192,16384,32768,65536,131072", "--run-s", "1", "--jobs", "1"]
SLOW_SWEEP += ["--out", "s.parquet"]


def _sweep_until_a_chunk(cwd: Path):
    """A sweep started in `cwd`, returned once it wrote a chunk into s.parquet.partial."""
    import subprocess
    import time

    partial = cwd / "s.parquet.partial"
    before = set(partial.glob("chunk-*.arrow"))  # an earlier run's: not this one's progress
    proc = processes.popen([str(BIN / "hetlab"), *SLOW_SWEEP], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(3000):
        if set(partial.glob("chunk-*.arrow")) - before or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before a signal could reach it"
    return proc


def _temporaries(cwd: Path) -> list[str]:
    return sorted(p.name for p in cwd.glob(".s.parquet.*.tmp"))


def test_killed_sweeps_leave_no_temporary_and_a_damaged_chunk_is_named(tmp_path):
    import signal

    # SIGKILL: nothing runs in the killed process; the next run removes what it left
    proc = _sweep_until_a_chunk(tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert _temporaries(tmp_path), "the killed run's temporary output is there"
    chunk = sorted((tmp_path / "s.parquet.partial").glob("chunk-*.arrow"))[0]
    chunk.write_bytes(b"not arrow at all")
    r = hetlab(SLOW_SWEEP, tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("hetlab: error: chunk '") and len(r.stderr.splitlines()) == 1
    assert f"{chunk.name}' of the interrupted sweep is damaged" in r.stderr, r.stderr
    assert not (tmp_path / "s.parquet").exists()
    assert _temporaries(tmp_path) == [], "removed by the next run"
    # SIGINT and SIGTERM: the run removes its own temporary as it leaves
    chunk.unlink()
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = _sweep_until_a_chunk(tmp_path)
        proc.send_signal(sig)
        proc.communicate(timeout=120)
        assert proc.returncode in (130, 143), proc.returncode
        assert _temporaries(tmp_path) == []


def test_an_hmp_typo_is_refused_whatever_the_scheduler(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    path = platform_file(src, "[hmp]\n", "[hmp]\nup_treshold = 700\n")
    for scheduler in ("pinned", "eas"):
        args = ["simulate", "--platform", str(path), *QUICK, "--scheduler", scheduler]
        one_error(args, tmp_path, "[hmp]: hmp: unknown tunable 'up_treshold'")


def test_import_em_refuses_two_states_of_one_frequency(tmp_path):
    tree = tmp_path / "em"
    r = hetlab(["platform", "export-em", "exynos5422", "--format", "debugfs", "--out", str(tree)], tmp_path)
    assert r.returncode == 0, r.stderr
    state = sorted((tree / "cpu0").glob("ps:*"))[0]
    shutil.copytree(state, state.with_name(state.name.replace("ps:", "cs:")))
    one_error(["platform", "import-em", str(tree)], tmp_path, "has two performance states at")
