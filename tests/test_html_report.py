"""The HTML report, rendered by a real browser: headless Chromium opens each page from disk
with every network lookup failing, and must log no console error and draw every figure (the
page's own check writes the outcome on <body data-figures=...>). A screenshot of each page is
kept in the test's temporary directory.

Chromium is Debian's `chromium` (.ci/run installs it). Without it the tests skip, unless
HETLAB_REQUIRE_CHROMIUM=1 (CI), where they fail."""

import os
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import processes

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("HETLAB_REQUIRE_CHROMIUM") == "1":
            pytest.fail("Chromium is not installed (apt-get install chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return path


def hetlab(*args):
    proc = processes.run([str(BIN / "hetlab"), *args], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return proc


def render(chromium: str, page: Path, tmp: Path) -> tuple[str, str]:
    """(the DOM after load, the browser's log) of `page`; a screenshot goes beside it."""
    common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # the page must need no network
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
    ]
    url = page.resolve().as_uri()
    dom = processes.run([chromium, *common, "--dump-dom", url], capture_output=True, text=True, timeout=300)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = page.with_suffix(".png")
    processes.run(
        [chromium, *common, f"--screenshot={shot}", "--window-size=1200,2400", url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shot.is_file() and shot.stat().st_size > 10_000, "no screenshot"
    return dom.stdout, dom.stderr


def check(dom: str, log: str, figures_at_least: int) -> None:
    console = [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, "\n".join(console)
    m = re.search(r'data-figures="([^"]+)"', dom)
    assert m, "the page's figure check did not run"
    state, _, detail = m.group(1).partition(":")
    assert state == "drawn", f"figures not drawn: {detail}"
    assert int(detail) >= figures_at_least


def test_a_reproduction_report_renders_in_chromium(chromium, tmp_path):
    out = tmp_path / "blmp"
    args = ["reproduce", "bl-mp-sched", "--reps", "2", "--benchmarks", "linsched-test-linsched"]
    hetlab(*args, "--out", str(out), "--html")
    page = out / "report.html"
    text = page.read_text()
    # self-contained: no image files, stylesheets or scripts from elsewhere
    assert "<img" not in text and "<link" not in text and not re.search(r"""src=["']""", text)
    # the claims table, with its verdicts, and provenance
    assert "<th>holds?</th>" in text and "Provenance" in text
    claims = re.findall(r"^\| (LinSched[^|]*)\|.*\| (yes|no|partly) \|$", (out / "report.md").read_text(), re.MULTILINE)
    assert claims and all(verdict in text for _, verdict in claims)
    # the drill-down's series: the first seed of every configuration, each cpufreq policy
    runs, series = pd.read_csv(out / "runs.csv"), pd.read_csv(out / "series.csv")
    assert set(series["config"]) == set(runs["config"]) and set(series["seed"]) == {runs["seed"].min()}
    assert series.groupby("config")["cluster"].nunique().min() == 2
    assert "linsched-test-linsched: frequency, power and snoop latency per policy" in text
    dom, log = render(chromium, page, tmp_path)
    # the experiment's two LinSched figures, a placement chart per configuration, the series
    check(dom, log, figures_at_least=5)
    # `hetlab report DIR` writes the same page from the folder
    hetlab("report", str(out), "--out", str(tmp_path / "again.html"))
    assert (tmp_path / "again.html").read_text() == text


def test_a_run_report_renders_in_chromium(chromium, tmp_path):
    page = tmp_path / "run.html"
    hetlab("simulate", "--workload", "mixed8", "--scheduler", "hmp", "--report", str(page))
    text = page.read_text()
    for what in ("Frequency per cpufreq policy", "Power per rail", "Snoop latency", "Which CPU each thread ran on"):
        assert what in text, what
    assert "Threads and migrations" in text
    dom, log = render(chromium, page, tmp_path)
    check(dom, log, figures_at_least=4)


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory) -> Path:
    """A small reproduction's folder (four-vs-eight, one benchmark, one seed: seconds)."""
    out = tmp_path_factory.mktemp("reproduced") / "out"
    hetlab("reproduce", "four-vs-eight", "--benchmarks", "dhrystone", "--reps", "1", "--out", str(out))
    return out


def _without_column(name: str, column: str):
    return lambda out: pd.read_csv(out / name).drop(columns=[column]).to_csv(out / name, index=False)


def _append(name: str, text: str):
    return lambda out: (out / name).open("a").write(text)


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda out: (out / "runs.csv").write_text(""), "runs.csv' is not a CSV table (No columns to parse"),
        (lambda out: (out / "summary.csv").write_text(""), "summary.csv' is not a CSV table"),
        (lambda out: (out / "series.csv").write_text(""), "series.csv' is not a CSV table"),
        (
            lambda out: (out / "runs.csv").write_text('a,b\n1,2,3,,\n"'),
            "runs.csv' is not a CSV table (Error tokenizing",
        ),
        (lambda out: (out / "runs.csv").write_text("a,b\n1,2\n"), "runs.csv' lacks the columns benchmark, label"),
        (lambda out: (out / "summary.csv").open("ab").write(b"\xff\xfe\n"), "summary.csv'"),
        (_without_column("series.csv", "time_s"), "are not the runs of four-vs-eight (KeyError: 'time_s')"),
        # python-markdown recursed into a RecursionError, and ran for minutes on nested brackets
        (_append("report.md", "".join("\t" * i + "- x\n" for i in range(800))), "nests indented lists deeper"),
        (_append("report.md", "[" * 15000 + "x" + "]" * 15000), "nests brackets deeper than 32"),
    ],
)
def test_a_damaged_results_folder_is_one_line(reproduced, tmp_path, change, says):
    out = tmp_path / "out"
    shutil.copytree(reproduced, out)
    change(out)
    proc = processes.run([str(BIN / "hetlab"), "report", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("hetlab: error: ") and says in proc.stderr, proc.stderr
    assert not (out / "report.html").exists()


def test_html_in_a_report_is_shown_as_text_not_run(reproduced, tmp_path):
    """A results folder from elsewhere cannot put script into the reader's browser."""
    out = tmp_path / "out"
    shutil.copytree(reproduced, out)
    _append("report.md", "\n<script>alert(1)</script>\n\nsee <b onmouseover=alert(2)>this</b>\n")(out)
    hetlab("report", str(out))
    text = (out / "report.html").read_text()
    assert "alert(1)" in text and "<script>alert" not in text and "<b onmouseover" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
