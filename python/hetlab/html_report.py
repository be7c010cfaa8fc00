"""One self-contained HTML page for a result, to open from disk in any browser with no network:
every figure an inline SVG (vector, searchable text), styles inline, no scripts from elsewhere.

- `experiment_page(DIR)` (`hetlab report DIR`, `hetlab reproduce ... --html`): the experiment's
  report.md (claims, notes, tables, provenance) with its figures redrawn as vectors from the
  runs in DIR, and a drill-down per benchmark: every run's metrics, the first seed's frequency,
  power and snoop latency per cpufreq policy under each configuration and, where the experiment
  kept them, where each thread ran over time.
- `run_page(result)` (`hetlab simulate ... --report FILE`): one run: its summary, frequency per
  cpufreq policy, power per rail, snoop latency, task placement over time and migrations.

Figures are compact (`hetlab.page_figures`): ids unique in the page, marker shapes shared,
coordinates cut to hundredths, text as text; a figure of thousands of marks (a placement
chart) is a PNG the browser decodes off the main thread. A small inline script checks on load
that every figure drew (a non-empty box, a decoded image) and records the outcome on <body
data-figures=...>, and the time the page took to load on <body data-load-ms=...>, which the
browser test reads.
"""

from __future__ import annotations

import base64
import gzip
import html
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

from hetlab import _core
from hetlab._files import note_input
from hetlab.api import HetlabError, SimResult
from hetlab.page_figures import PageFigures, read_svg

REPORT_HTML = "report.html"
# points per plotted line: a run's series can hold 10^5 samples, a screen shows ~10^3
MAX_POINTS = 1000
# horizontal resolution of a placement chart (a 9-inch plot at 100 dpi is 900 pixels)
PLACEMENT_PIXELS = 1800

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
td:not(:first-child) { font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #f6f6f6; }
figure { margin: 1.2em 0; } figure svg, figure img { max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #555; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-weight: 600; }
code { background: #f2f2f2; padding: 0 3px; }
"""

# a lazy <details> (`lazy_details`) gets its content when first opened; `#open-all` in the
# address opens them all before the figure check (the browser test's way of checking them too)
OPEN_LAZY = """
async function openLazy(details) {
  const packed = details.dataset.lazy;
  if (!packed) return;
  delete details.dataset.lazy;
  const bytes = Uint8Array.from(atob(packed), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  details.insertAdjacentHTML("beforeend", await new Response(stream).text());
}
document.addEventListener("toggle", e => { if (e.target.open) openLazy(e.target); }, true);
"""

CHECK_FIGURES = """
window.addEventListener("load", async () => {
  const nav = performance.getEntriesByType("navigation")[0];
  document.body.dataset.loadMs = Math.round(nav ? nav.loadEventStart : performance.now());
  if (location.hash === "#open-all") {
    const lazy = Array.from(document.querySelectorAll("details[data-lazy]"));
    await Promise.all(lazy.map(d => { d.open = true; return openLazy(d); }));
    const pending = Array.from(document.images).filter(img => !img.complete);
    await Promise.all(pending.map(img => new Promise(done => { img.onload = img.onerror = done; })));
  }
  const figures = Array.from(document.querySelectorAll("svg.hetlab-figure"));
  const images = Array.from(document.querySelectorAll("img.hetlab-figure-raster"));
  const blank = figures.filter(svg => { const b = svg.getBBox(); return !(b.width > 0 && b.height > 0); })
    .concat(images.filter(img => !(img.complete && img.naturalWidth > 0)));
  const drawn = figures.length + images.length;
  document.body.dataset.figures = blank.length ? "blank:" + blank.map(s => s.id).join(",") : "drawn:" + drawn;
});
"""


def page(title: str, body: str, figures: PageFigures | None = None) -> str:
    defs = figures.shared_defs() if figures is not None else ""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{CSS}</style>"
        f"<script>{OPEN_LAZY}{CHECK_FIGURES}</script></head>\n<body>\n{defs}{body}\n</body></html>\n"
    )


def _svg(figures: PageFigures, draw, name: str, alt: str = "") -> str:
    """The figure `draw(path)` saves, as the page shows it (`PageFigures.figure`)."""
    with tempfile.TemporaryDirectory() as tmp:
        return figures.figure(draw, name, alt or name, Path(tmp))


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _table(df) -> str:
    return df.to_html(index=False, border=0, float_format=lambda v: f"{v:.6g}", escape=True)


# --- one run ------------------------------------------------------------------------------------


def _decimate(values, n: int):
    step = max(1, -(-len(values) // n))
    return values[::step]


def _line_chart(result: SimResult, column: str, ylabel: str, title: str):
    def draw(path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        from hetlab.plots import save_figure

        s = result.series
        fig, ax = plt.subplots(figsize=(9, 2.8), dpi=100)
        for cluster in dict.fromkeys(s["cluster"]):
            on = np.asarray(s["cluster"]) == cluster
            ax.step(
                _decimate(s["time_s"][on], MAX_POINTS),
                _decimate(s[column][on], MAX_POINTS),
                where="post",
                label=cluster,
            )
        ax.set_xlabel("time (s)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=11)
        ax.grid(linestyle=":", linewidth=0.6)
        ax.legend(fontsize=8, frameon=False)
        save_figure(fig, path)

    return draw


def _series_chart(series, title: str):
    """A benchmark's first-seed series under each configuration: a panel per quantity, a
    colour per configuration, a line style per cluster (cpufreq policy)."""

    def draw(path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from hetlab.plots import save_figure
        from hetlab.report import SERIES_COLUMNS

        # (axis label, scale): the charts show MHz where series.csv keeps kHz
        axis = {
            "freq_khz": ("frequency (MHz)", 1e-3),
            "power_mw": ("power (mW)", 1.0),
            "snoop_latency_ns": ("snoop latency (ns)", 1.0),
        }
        configs = list(dict.fromkeys(series["config"]))
        clusters = list(dict.fromkeys(series["cluster"]))
        styles = ["-", "--", ":", "-."]
        colours = plt.get_cmap("tab10" if len(configs) <= 10 else "tab20")
        fig, axes = plt.subplots(len(SERIES_COLUMNS), 1, figsize=(9, 1.9 * len(SERIES_COLUMNS)), dpi=100, sharex=True)
        for (config, cluster), part in series.groupby(["config", "cluster"], sort=False):
            style = dict(
                color=colours(configs.index(config) % colours.N),
                linestyle=styles[clusters.index(cluster) % len(styles)],
                linewidth=1.0,
                label=f"{config}, {cluster}",
            )
            for ax, column in zip(axes, SERIES_COLUMNS):
                ax.step(part["time_s"], part[column] * axis[column][1], where="post", **style)
        for ax, column in zip(axes, SERIES_COLUMNS):
            ax.set_ylabel(axis[column][0], fontsize=8)
            ax.grid(linestyle=":", linewidth=0.6)
        axes[0].set_title(title, fontsize=11)
        axes[-1].set_xlabel("time (s)")
        axes[-1].legend(
            fontsize=7,
            ncol=min(4, len(configs) * len(clusters)),
            frameon=False,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.45),
        )
        save_figure(fig, path)

    return draw


def _merge_spans(starts, ends, gap_s: float) -> list[tuple[float, float]]:
    """(start, width) of the intervals, sorted, with those less than gap_s apart joined."""
    spans: list[list[float]] = []
    for start, end in sorted(zip(starts, ends)):
        if spans and start - spans[-1][1] <= gap_s:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(start, end - start) for start, end in spans]


def _placement_chart(intervals, title: str, cpus: int | None = None):
    """Which CPU each thread ran on over time: a row per thread, a bar per interval, coloured
    by CPU."""

    def draw(path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch

        from hetlab.plots import save_figure

        threads = list(dict.fromkeys(intervals["thread"]))
        # gaps narrower than a pixel of the plot are not drawn: the page stays small
        pixel_s = (intervals["end_s"].max() - intervals["start_s"].min()) / PLACEMENT_PIXELS
        n_cpus = cpus or int(intervals["cpu"].max()) + 1
        colours = plt.get_cmap("tab10" if n_cpus <= 10 else "tab20")
        # room for the title, the time axis and the legend below it besides the rows: with one
        # or two threads a height of rows alone leaves tight_layout no space (and it warns)
        legend_rows = -(-n_cpus // 8)
        fig, ax = plt.subplots(figsize=(9, 1.3 + 0.2 * legend_rows + 0.28 * len(threads)), dpi=100)
        for row, name in enumerate(threads):
            mine = intervals[intervals["thread"] == name]
            for cpu, part in mine.groupby("cpu"):
                spans = _merge_spans(part["start_s"].to_numpy(), part["end_s"].to_numpy(), pixel_s)
                ax.broken_barh(spans, (row - 0.4, 0.8), color=colours(int(cpu) % colours.N), linewidth=0)
        ax.set_yticks(range(len(threads)), threads, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("time (s)")
        ax.set_title(title, fontsize=11)
        handles = [Patch(color=colours(c % colours.N), label=f"CPU {c}") for c in range(n_cpus)]
        ax.legend(
            handles=handles,
            fontsize=7,
            ncol=min(n_cpus, 8),
            frameon=False,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.25),
        )
        save_figure(fig, path)

    return draw


def run_section(result: SimResult, title: str, figures: PageFigures) -> str:
    """A run's drill-down: summary numbers, the series per cluster, placement, migrations."""
    import pandas as pd

    s = result.summary
    parts = [f"<h2>{html.escape(title)}</h2>"]
    metrics = pd.DataFrame([{"metric": k, "value": v} for k, v in result.metrics().items()])
    parts.append(_table(metrics))
    key = re.sub(r"\W+", "-", title)
    if len(result.series["time_s"]):
        for column, ylabel, what in (
            ("freq_khz", "kHz", "Frequency per cpufreq policy"),
            ("power_mw", "mW", "Power per rail (cluster)"),
            ("snoop_latency_ns", "ns", "Snoop latency seen by each cluster"),
        ):
            svg = _svg(figures, _line_chart(result, column, ylabel, what), f"{key}-{column}", what)
            parts.append(_figure(svg, f"{what}, sampled at each governor period."))
    if result.intervals is not None and len(result.intervals["tid"]):
        chart = _placement_chart(result.intervals_df(), "Which CPU each thread ran on", len(s["cpus"]))
        svg = _svg(figures, chart, f"{key}-placement", "Which CPU each thread ran on")
        parts.append(
            _figure(svg, "From the run's sched_switch events; one row per thread; gaps under a pixel not drawn.")
        )
    threads = pd.DataFrame(
        [
            {
                "thread": t["name"],
                "tid": t["tid"],
                "cpu_time_s": t["cpu_time_s"],
                "finish_s": t["finish_s"],
                "migrations": t["migrations"],
                "lines_from_other_cores": t["peer_lines_in"],
            }
            for t in s["threads"]
        ]
    )
    parts.append("<h3>Threads and migrations</h3>" + _table(threads))
    return "\n".join(parts)


def run_page(result: SimResult, title: str) -> str:
    figures = PageFigures()
    body = f"<h1>{html.escape(title)}</h1>\n" + run_section(result, "The run", figures)
    return page(title, body, figures)


# --- an experiment's outputs --------------------------------------------------------------------


def _experiment_of(report_md: str):
    from hetlab import experiments, report

    name = report.experiment_of_report(report_md)
    if name is None:
        raise HetlabError("report.md names no experiment in its provenance; re-run `hetlab reproduce` into the folder")
    return experiments.get(name)


def experiment_page(out_dir: str | Path) -> str:
    """The page for the outputs of `hetlab reproduce` in `out_dir`."""
    import markdown
    import pandas as pd

    from hetlab import plots, report

    out = Path(out_dir)
    needed = [out / "report.md", out / "runs.csv", out / "summary.csv"]
    missing = [p.name for p in needed if not p.is_file()]
    if missing:
        raise HetlabError(f"'{out}' lacks {', '.join(missing)}: give a folder `hetlab reproduce` wrote")
    md = _read_text(out / "report.md")
    _check_markdown(md, out / "report.md")
    experiment = _experiment_of(md)
    runs = _read_csv(out / "runs.csv", RUNS_COLUMNS)
    summary = _read_csv(out / "summary.csv", SUMMARY_COLUMNS)
    intervals_path = out / report.INTERVALS
    intervals = _read_csv(intervals_path, ()) if intervals_path.is_file() else pd.DataFrame()
    series_path = out / report.SERIES
    series = _read_csv(series_path, ()) if series_path.is_file() else pd.DataFrame()

    figures = PageFigures()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            names = plots.write_figures(Path(tmp), experiment, summary, runs, intervals, suffix=".svg")
            svgs = _experiment_figures(Path(tmp), names, figures, (experiment, summary, runs, intervals))
        drilldown = _drilldown(runs, intervals, series, figures)
    except HetlabError as e:  # a chart of the experiment's own drew no SVG: name it, not the data
        raise HetlabError(f"{experiment.name}: {e}") from None
    except (KeyError, ValueError, TypeError) as e:  # columns or values no run of the experiment has
        raise HetlabError(
            f"the CSV files in '{out}' are not the runs of {experiment.name} ({type(e).__name__}: {e}); "
            "re-run `hetlab reproduce` into the folder"
        ) from None

    converter = markdown.Markdown(extensions=["tables"], output_format="html")
    # raw HTML in report.md is shown as text, never passed into the page: a results folder
    # from elsewhere must not be able to run script in the reader's browser
    converter.preprocessors.deregister("html_block")
    converter.inlinePatterns.deregister("html")
    converter.treeprocessors.register(_SafeLinks(converter), "hetlab_safe_links", 0)
    body = converter.convert(md)

    def inline(m: re.Match) -> str:
        src, alt = m.group("src"), html.unescape(m.group("alt"))
        if src not in svgs:
            raise HetlabError(f"report.md shows {src}, which the runs in '{out}' cannot redraw")
        return f"<figure>{svgs[src]}<figcaption>{html.escape(alt)}</figcaption></figure>"

    # a figure cannot stand inside a paragraph (the browser would close the paragraph early and
    # leave a stray </p>): a paragraph with images is split around them
    image = r'<img alt="(?P<alt>[^"]*)" src="(?P<src>[^"]+)"\s*/?>'

    def split(paragraph: re.Match) -> str:
        pieces = re.split(f"({image})", paragraph.group(1))
        out, k = [], 0
        while k < len(pieces):
            if re.fullmatch(image, pieces[k] or ""):
                out.append(re.sub(image, inline, pieces[k]))
                k += 3  # the image, then its alt and src groups
            else:
                if pieces[k] and pieces[k].strip():
                    out.append(f"<p>{pieces[k].strip()}</p>")
                k += 1
        return "\n".join(out)

    body = re.sub(rf"<p>((?:(?!</p>).)*?{image}(?:(?!</p>).)*?)</p>", split, body, flags=re.DOTALL)
    body = re.sub(image, inline, body)
    body += "\n" + drilldown
    title = re.search(r"^# (.+)$", md, re.MULTILINE)
    return page(title.group(1) if title else experiment.name, body, figures)


def _experiment_figures(tmp: Path, names: list[str], figures: PageFigures, inputs) -> dict[str, str]:
    """The experiment's figures and charts (written as SVG into `tmp`) as the page shows them:
    an SVG each, or a PNG (drawn again as one) where the SVG has too many marks."""
    from hetlab import plots

    pngs: dict[str, Path] = {}

    def draw_png(name: str) -> Callable[[Path], None]:
        def draw(png: Path) -> None:
            if not pngs:
                raster = tmp / "raster"
                raster.mkdir()
                for written in plots.write_figures(raster, *inputs, suffix=".png"):
                    pngs[written] = raster / written
            png.write_bytes(pngs[name].read_bytes())

        return draw

    out = {}
    for name in names:
        svg = (tmp / name).with_suffix(".svg")
        read_svg(svg)  # an error naming the chart if it wrote something else
        out[name] = figures.best(svg, draw_png(name), Path(name).stem, Path(name).stem)
    return out


# the columns every runs.csv and summary.csv of `hetlab reproduce` has (report.runs_frame,
# report.summarize); the page groups and draws by them
RUNS_COLUMNS = ("benchmark", "label", "group", "config", "seed")
SUMMARY_COLUMNS = ("benchmark", "config")  # long, wide and ratio summaries alike
# python-markdown recurses per level of list nesting and scans nested brackets in quadratic
# time: a report.md hetlab wrote nests neither more than a few levels
MAX_MARKDOWN_NESTING = 32


def _read_text(path: Path) -> str:
    try:
        text = _core.read_input(str(path))
    except ValueError as e:
        raise HetlabError(f"cannot read '{path}': {e}; give a folder `hetlab reproduce` wrote") from None
    note_input(path)
    return text


def _read_csv(path: Path, columns: tuple[str, ...]):
    """A CSV of the outputs, readable and with `columns`, or a one-line error naming it."""
    import io

    import pandas as pd

    text = _read_text(path)
    rows = text.count("\n")
    if rows > MAX_CSV_ROWS:
        raise HetlabError(
            f"'{path}' has {rows} lines, more than the {MAX_CSV_ROWS} of any table hetlab writes; "
            "re-run `hetlab reproduce`"
        )
    try:
        table = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise HetlabError(f"'{path}' is not a CSV table ({first_line}); re-run `hetlab reproduce`") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise HetlabError(f"'{path}' lacks the columns {', '.join(missing)}; re-run `hetlab reproduce`")
    _check_values(table, path)
    return table


# the integer columns a reproduction writes and their ranges: a seed is a u64, a CPU a number of
# a platform (a CPU of 1e9 made the placement chart's colour list grow past 3.5 GB), a thread id
# a pid (at most 2^22, PID_MAX_LIMIT)
INTEGER_COLUMNS = {"seed": (0, 2**64 - 1), "cpu": (0, _core.MAX_CPUS - 1), "tid": (0, 1 << 22)}
# the time columns, s: finite and within the longest run (`MAX_TIME_LIMIT_S`)
TIME_COLUMNS = ("time_s", "start_s", "end_s")


def _check_values(table, path: Path) -> None:
    """Every integer column of `INTEGER_COLUMNS` whole and in range, every time finite and
    within the longest run: a value a reproduction cannot write is refused naming the file."""
    import numpy as np
    import pandas as pd

    for column, (lo, hi) in INTEGER_COLUMNS.items():
        if column not in table:
            continue
        values = pd.to_numeric(table[column], errors="coerce").astype(float)
        bad = ~(np.isfinite(values) & (values == np.floor(values)) & (values >= lo) & (values <= hi))
        if bad.any():
            raise HetlabError(
                f"'{path}': column {column} has {str(table[column][bad].iloc[0])[:40]!r}, not a whole number "
                f"from {lo} to {hi}; re-run `hetlab reproduce`"
            )
    for column in TIME_COLUMNS:
        if column not in table:
            continue
        values = pd.to_numeric(table[column], errors="coerce").astype(float)
        bad = ~(np.isfinite(values) & (values >= 0) & (values <= _core.MAX_TIME_LIMIT_S))
        if bad.any():
            raise HetlabError(
                f"'{path}': column {column} has {str(table[column][bad].iloc[0])[:40]!r}, not a time from 0 to "
                f"{_core.MAX_TIME_LIMIT_S:g} s; re-run `hetlab reproduce`"
            )


# python-markdown's inline patterns take super-linear time in a block's length (800 KB of `*a`
# in one paragraph took 144 s): the reports hetlab writes are at most ~30 KB with blocks of
# ~6 KB, so these bounds (17x and 10x those) refuse only foreign files, and bound the worst
# page to seconds
MAX_MARKDOWN_BYTES = 512 * 1024
MAX_MARKDOWN_BLOCK_BYTES = 64 * 1024
# rows of one CSV of the folder: a reproduction writes a few thousand
MAX_CSV_ROWS = 1_000_000


def safe_link(url: str) -> bool:
    """Whether a link of report.md may stay live in the page: http(s), a relative path or a
    fragment. The scheme is read as a browser reads it (entities decoded; tabs, newlines and
    leading controls or spaces ignored), so `jav&#x61;script:` or `java\tscript:` is seen."""
    text = html.unescape(url)
    text = re.sub(r"[\t\n\r]", "", text).lstrip("".join(map(chr, range(0x21))))
    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", text)
    if scheme is None:  # a fragment, or a relative path (no scheme before its first / ? #)
        return True
    return scheme.group(1).lower() in ("http", "https")


def _link_guard():
    """python-markdown's treeprocessor that takes `safe_link`'s verdict on every href and src:
    a link it refuses is shown as its text, an image source is dropped (issue 34, class 5)."""
    from markdown.treeprocessors import Treeprocessor

    class SafeLinks(Treeprocessor):
        def run(self, root):
            for element in root.iter():
                for attribute in ("href", "src"):
                    value = element.get(attribute)
                    if value is not None and not safe_link(value):
                        del element.attrib[attribute]
                        if element.tag == "a":
                            element.tag = "span"
                            element.attrib.pop("title", None)
            return None

    return SafeLinks


def _SafeLinks(converter):  # noqa: N802 (a class made on first use: markdown is imported late)
    return _link_guard()(converter)


def _check_markdown(md: str, path: Path) -> None:
    """Refuses sizes and nesting no report hetlab writes has, before python-markdown spends
    minutes on them."""
    depth = deepest = 0
    for ch in md:
        if ch == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "]":
            depth = max(depth - 1, 0)
    indent = max((len(line.expandtabs(4)) - len(line.lstrip()) for line in md.splitlines()), default=0)
    if deepest > MAX_MARKDOWN_NESTING or indent > 4 * MAX_MARKDOWN_NESTING:
        what = "brackets" if deepest > MAX_MARKDOWN_NESTING else "indented lists"
        raise HetlabError(
            f"'{path}' nests {what} deeper than {MAX_MARKDOWN_NESTING} levels, which no report hetlab writes does; "
            "re-run `hetlab reproduce` into the folder"
        )
    if len(md) > MAX_MARKDOWN_BYTES:
        raise HetlabError(
            f"'{path}' has {len(md)} characters, more than the {MAX_MARKDOWN_BYTES} of any report hetlab writes; "
            "re-run `hetlab reproduce` into the folder"
        )
    block = max((len(b) for b in re.split(r"\n[ \t]*\n", md)), default=0)
    if block > MAX_MARKDOWN_BLOCK_BYTES:
        raise HetlabError(
            f"'{path}' has a paragraph of {block} characters, more than the {MAX_MARKDOWN_BLOCK_BYTES} of any "
            "report hetlab writes; re-run `hetlab reproduce` into the folder"
        )


def _drilldown(runs, intervals, series, figures: PageFigures) -> str:
    """Per benchmark label: every run's metrics, the first seed's frequency, power and snoop
    latency under each configuration (series.csv), and its placement per configuration where
    the experiment kept the run intervals."""
    parts = ["<h2>Runs</h2>", "<p>Every run of runs.csv, by benchmark; open one to see its runs.</p>"]
    shown = [c for c in runs.columns if c not in ("benchmark", "label", "group", "workload")]
    for label, mine in runs.groupby("label", sort=False):
        inner = [_table(mine[shown])]
        if not series.empty and "label" in series:
            ran = series[series["label"] == label]
            if len(ran):
                name = re.sub(r"\W+", "-", f"{label}-series")
                what = f"{label}: frequency, power and snoop latency per policy"
                svg = _svg(figures, _series_chart(ran, what), name, what)
                inner.append(
                    _figure(
                        svg,
                        f"seed {int(ran['seed'].iloc[0])}, from series.csv: each governor sample, "
                        "at most 200 per run and cluster",
                    )
                )
        if not intervals.empty and "label" in intervals:
            for config, placed in intervals[intervals["label"] == label].groupby("config", sort=False):
                first = placed[placed["seed"] == placed["seed"].min()]
                name = re.sub(r"\W+", "-", f"{label}-{config}-placement")
                what = f"{label}, {config}: which CPU each thread ran on"
                svg = _svg(figures, _placement_chart(first, what), name, what)
                inner.append(
                    _figure(svg, f"seed {int(first['seed'].iloc[0])}, from intervals.csv; gaps under a pixel not drawn")
                )
        parts.append(lazy_details(f"{html.escape(str(label))} ({len(mine)} runs)", "\n".join(inner)))
    return "\n".join(parts)


def lazy_details(summary: str, inner: str) -> str:
    """A <details> whose content (`inner`, HTML) is kept gzipped in the page and put in place
    when it is first opened (OPEN_LAZY): a drill-down of every run weighs most of a page, and
    most readers open few of them. `gzip` without a time stamp, so the page is reproducible."""
    packed = base64.b64encode(gzip.compress(inner.encode("utf-8"), mtime=0)).decode("ascii")
    return f"<details data-lazy='{packed}'><summary>{summary}</summary></details>"


def write_page(text: str, path: str | Path) -> Path:
    from hetlab._files import write_output

    path = Path(path)
    write_output(path, text)
    return path
