"""The HTML report, rendered by a real browser: headless Chromium opens each page from disk
with every network lookup failing (and `#open-all`, which opens every lazily packed drill-down),
and must log no console error and draw every figure (the page's own check writes the outcome
on <body data-figures=...>). Every experiment's page is built and opened, and checked to be
valid HTML (html5lib, strict), to repeat no element id and to weigh under 1.5 MB; the time it
took to load (<body data-load-ms=...>) is printed, not asserted. A screenshot of each page is
kept in the test's temporary directory.

Chromium is Debian's `chromium` (.ci/run installs it). Without it the tests skip, unless
HETLAB_REQUIRE_CHROMIUM=1 (CI), where they fail."""

import base64
import collections
import gzip
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
    dom = processes.run(
        [chromium, *common, "--dump-dom", url + "#open-all"], capture_output=True, text=True, timeout=300
    )
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


def expanded(text: str) -> str:
    """The page with every lazily packed drill-down's content (gzip, base64) put back in place."""
    return re.sub(
        r"<details data-lazy='([^']+)'><summary>(.*?)</summary></details>",
        lambda m: (
            f"<details><summary>{m.group(2)}</summary>{gzip.decompress(base64.b64decode(m.group(1))).decode()}"
            "</details>"
        ),
        text,
    )


def check_markup(text: str) -> None:
    """Valid HTML as html5lib's strict parser reads it, its drill-downs included, and no
    element id twice."""
    import html5lib

    html5lib.HTMLParser(strict=True).parse(expanded(text))
    ids = collections.Counter(re.findall(r"""\bid=["']([^"']+)""", expanded(text)))
    assert not [i for i, n in ids.items() if n > 1], "repeated ids"


def self_contained(text: str) -> None:
    """No stylesheet, script or image from elsewhere: the only sources are inline PNGs."""
    assert "<link" not in text
    assert all(src.startswith("data:image/png;base64,") for src in re.findall(r"""src=["']([^"']+)""", text))


def test_a_reproduction_report_renders_in_chromium(chromium, tmp_path):
    out = tmp_path / "blmp"
    args = ["reproduce", "bl-mp-sched", "--reps", "2", "--benchmarks", "linsched-test-linsched"]
    hetlab(*args, "--out", str(out), "--html")
    page = out / "report.html"
    text = page.read_text()
    self_contained(text)
    check_markup(text)
    text = expanded(text)
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
    assert (tmp_path / "again.html").read_text() == page.read_text()


def test_a_run_report_renders_in_chromium(chromium, tmp_path):
    page = tmp_path / "run.html"
    hetlab("simulate", "--workload", "mixed8", "--scheduler", "hmp", "--report", str(page))
    text = page.read_text()
    self_contained(text)
    check_markup(text)
    for what in ("Frequency per cpufreq policy", "Power per rail", "Snoop latency", "Which CPU each thread ran on"):
        assert what in text, what
    assert "Threads and migrations" in text
    dom, log = render(chromium, page, tmp_path)
    check(dom, log, figures_at_least=4)


# Each experiment's page, from a reproduction small enough for the suite (one benchmark, the
# fewest seeds its claims need); the pages of full reproductions are measured in the note.
PAGES = {
    "lctes2020": ["--benchmarks", "ccbench-4-random", "--reps", "1", "--model", "lctes2020-fig4"],
    "bl-mp-sched": ["--benchmarks", "linsched-test-linsched", "--reps", "2"],
    "rcu-amp": ["--benchmarks", "cyclictest", "--reps", "1"],
    "four-vs-eight": ["--benchmarks", "dhrystone", "--reps", "1"],
}
MAX_PAGE_BYTES = 1_500_000


@pytest.mark.parametrize("name", PAGES)
def test_every_experiments_page_is_small_valid_and_opens_in_chromium(chromium, tmp_path, name):
    from hetlab import experiments

    out = tmp_path / name
    proc = processes.run(
        [str(BIN / "hetlab"), "reproduce", name, *PAGES[name], "--out", str(out), "--html"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    page = out / "report.html"
    text = page.read_text()
    assert len(text.encode()) < MAX_PAGE_BYTES
    self_contained(text)
    check_markup(text)
    dom, log = render(chromium, page, tmp_path)
    experiment = experiments.get(name)
    check(dom, log, figures_at_least=1)
    load_ms = re.search(r'data-load-ms="(\d+)"', dom)
    print(f"{name}: {len(text.encode())} bytes, loaded in {load_ms.group(1) if load_ms else '?'} ms (virtual time)")
    assert experiment.name == name


def test_a_chart_that_writes_no_svg_is_named_not_the_csv_files(tmp_path):
    from hetlab.api import HetlabError
    from hetlab.page_figures import read_svg

    svg = tmp_path / "fig_x.svg"
    svg.write_bytes(b"\x89PNG\r\n\x1a\n rest")
    with pytest.raises(HetlabError, match="saved PNG bytes into fig_x.svg.*hetlab.plots.save_figure"):
        read_svg(svg)


def test_page_figures_are_compact_unique_and_share_their_markers():
    from hetlab.page_figures import MAX_SVG_BYTES, PageFigures

    marker = '<path id="m1" d="M 0 0 L 0 3.5" style="stroke: #000"/>'
    one = (
        '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><metadata>x</metadata>'
        f'<defs>{marker}<clipPath id="p1"><rect x="1.123456" y="2" width="3" height="4"/></clipPath></defs>'
        '<g id="patch_1"><path d="M 10.04 20 L 12.5 20 L 12.5 30.26 z" clip-path="url(#p1)"/></g>'
        '<use xlink:href="#m1" x="5.55555" y="1"/></svg>'
    )
    figures = PageFigures()
    a, b = figures.svg(one, "a"), figures.svg(one, "a")
    # ids unique per figure, unreferenced ones gone, the marker defined once for both
    assert "id='fig-a'" in a and "id='fig-a-2'" in b
    assert 'id="a-p1"' in a and 'id="a-2-p1"' in b and "patch_1" not in a + b
    assert "<metadata>" not in a and "<?xml" not in a and "m1" not in a
    shared = figures.shared_defs()
    assert shared.count("<path id=") == 1 and re.search(r'href="#(m[0-9a-f]+)"', a).group(1) in shared
    # coordinates to tenths; lines as relative h/v steps
    assert 'd="M10 20h2.5v10.3z"' in a and 'x="1.1"' in a and 'x="5.6"' in a
    assert MAX_SVG_BYTES > 0


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
