"""The figures of one HTML page (`hetlab.html_report`), small and valid together: each
matplotlib SVG inlined with its element ids made unique within the page (matplotlib numbers
them per file, so two figures repeat each other's), the marker shapes every figure defines
(ticks, dots) kept once in one shared `<defs>`, coordinates cut to hundredths of a point, its
metadata dropped; a figure with more marks than a browser draws quickly (a placement chart's
thousands of bars) becomes a PNG that the browser decodes off the main thread
(`decoding="async"`). Text stays text (`plots.save_figure` writes SVG fonts as text).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable
from pathlib import Path

# marks (paths, uses, texts) above which a figure is a raster: a few thousand SVG elements
# lay out in tens of ms, a placement chart's tens of thousands in seconds
MAX_SVG_MARKS = 3000
# bytes of compacted SVG above which a figure is a raster too: a PNG of the same figure (at the
# figure's own dpi, 900-1200 pixels wide) weighs tens of kB, whatever it draws
MAX_SVG_BYTES = 100_000

_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(href="#|url\(#)([^")]+)')
_NUMBER = re.compile(r"-?\d+\.\d{2,}")
_NUMERIC_ATTRIBUTE = re.compile(r'\b(d|x|y|x1|x2|y1|y2|width|height|transform|points|viewBox)="([^"]*)"')
_DEF_PATH = re.compile(r'<path id="([^"]+)"([^>]*?)/>')
_MARKS = re.compile(r"<(path|use|text|rect|polygon|polyline|line|circle|ellipse)\b")


def _round(text: str) -> str:
    """Numbers to a tenth of a point (1/720 inch: below a pixel at any zoom a page is read at)."""
    return _NUMBER.sub(lambda m: f"{float(m.group()):.1f}".rstrip("0").rstrip("."), text)


_PATH_DATA = re.compile(r'\bd="([^"]*)"')
_LINE_PATH = re.compile(r"^[MLZz0-9.\s-]+$")


def _tenths(x: float) -> str:
    text = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _compact_path(d: str) -> str:
    """A path of straight lines (matplotlib's `M x y L x y ... z`) in relative steps, vertical
    and horizontal ones as `v`/`h` (a step plot is all of them), positions rounded to tenths
    of a point first so that the steps add up to them exactly; any other path only rounded."""
    if not _LINE_PATH.match(d):
        return _round(d)
    tokens = d.replace("z", " z ").replace("Z", " z ").split()
    out: list[str] = []
    x = y = 0  # the current point, in tenths of a point
    start = (0, 0)  # the subpath's first point, where `z` leaves the current point
    i = 0
    while i < len(tokens):
        command = tokens[i]
        if command == "z":
            out.append("z")
            x, y = start
            i += 1
            continue
        if command not in ("M", "L") or i + 2 >= len(tokens):
            return _round(d)
        nx, ny = round(float(tokens[i + 1]) * 10), round(float(tokens[i + 2]) * 10)
        dx, dy = nx - x, ny - y
        if command == "M":
            out.append(f"M{_tenths(nx / 10)} {_tenths(ny / 10)}")
            start = (nx, ny)
        elif dy == 0:
            out.append(f"h{_tenths(dx / 10)}")
        elif dx == 0:
            out.append(f"v{_tenths(dy / 10)}")
        else:
            out.append(f"l{_tenths(dx / 10)} {_tenths(dy / 10)}")
        x, y = nx, ny
        i += 3
    return "".join(out)


class PageFigures:
    """Figures for one page: `inline` each, then put `shared_defs()` once in the page."""

    def __init__(self) -> None:
        self._pooled: dict[str, str] = {}  # a marker's shape -> its id in the shared defs
        self._defs: list[str] = []
        self._names: set[str] = set()

    def _prefix(self, name: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "fig"
        prefix, n = base, 1
        while prefix in self._names:
            n += 1
            prefix = f"{base}-{n}"
        self._names.add(prefix)
        return prefix

    def svg(self, text: str, name: str) -> str:
        """matplotlib's SVG `text` as an element of the page, tagged for the page's check."""
        prefix = self._prefix(name)
        svg = text[text.index("<svg") :]  # no XML prolog or DOCTYPE inside HTML
        svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.DOTALL)
        ids = {old: f"{prefix}-{old}" for old in _ID.findall(svg)}

        # a marker shape defined before (by this figure or another) is used from the shared defs
        def pool(defs: re.Match) -> str:
            for old, attributes in _DEF_PATH.findall(defs.group(1)):
                shape = _round(attributes)
                pooled = self._pooled.get(shape)
                if pooled is None:
                    pooled = f"m{hashlib.sha256(shape.encode()).hexdigest()[:12]}"
                    self._pooled[shape] = pooled
                    self._defs.append(f'<path id="{pooled}"{shape}/>')
                ids[old] = pooled
            rest = _DEF_PATH.sub("", defs.group(1))
            return f"<defs>{rest}</defs>" if rest.strip() else ""

        svg = re.sub(r"<defs>(.*?)</defs>", pool, svg, flags=re.DOTALL)
        # an id nothing refers to is dropped (matplotlib names every group); the rest made unique
        referenced = {ref for _, ref in _REF.findall(svg)}
        svg = _ID.sub(lambda m: f'id="{ids[m.group(1)]}"' if m.group(1) in referenced else "", svg)
        svg = _REF.sub(lambda m: m.group(1) + ids.get(m.group(2), m.group(2)), svg)
        svg = re.sub(r"<g\s*>", "<g>", svg)
        svg = _PATH_DATA.sub(lambda m: f'd="{_compact_path(m.group(1))}"', svg)
        svg = _NUMERIC_ATTRIBUTE.sub(
            lambda m: m.group(0) if m.group(1) == "d" else f'{m.group(1)}="{_round(m.group(2))}"', svg
        )
        svg = re.sub(r">\s+<", "><", svg)
        return svg.replace("<svg", f"<svg class='hetlab-figure' id='fig-{prefix}' role='img'", 1)

    def raster(self, png: bytes, name: str, alt: str) -> str:
        """A PNG figure as an element of the page, decoded off the main thread."""
        prefix = self._prefix(name)
        data = base64.b64encode(png).decode("ascii")
        alt = html.escape(alt, quote=True)
        return (
            f"<img class='hetlab-figure-raster' id='fig-{prefix}' decoding='async' alt='{alt}' "
            f"src='data:image/png;base64,{data}'>"
        )

    def figure(self, draw: Callable[[Path], None], name: str, alt: str, directory: Path) -> str:
        """The figure `draw(path)` saves (as SVG, or as PNG when the SVG has too many marks)."""
        path = directory / f"{self._safe(name)}.svg"
        draw(path)
        return self.best(path, lambda png: draw(png), name, alt)

    def best(self, svg_path: Path, draw_png: Callable[[Path], None], name: str, alt: str) -> str:
        """The SVG at `svg_path` inlined, or a PNG from `draw_png` where the SVG has more than
        MAX_SVG_MARKS marks or weighs more than MAX_SVG_BYTES compacted."""
        text = read_svg(svg_path)
        few_marks = len(_MARKS.findall(text)) <= MAX_SVG_MARKS
        names = set(self._names)
        compact = self.svg(text, name) if few_marks else ""
        if few_marks and len(compact) <= MAX_SVG_BYTES:
            return compact
        self._names = names  # the raster takes the name
        png = svg_path.with_suffix(".png")
        draw_png(png)
        raster = self.raster(png.read_bytes(), name, alt)
        if few_marks and len(compact) <= len(raster):
            self._names.add(self._prefix_of(compact))
            return compact  # a large SVG, but smaller than its raster
        return raster

    @staticmethod
    def _prefix_of(svg: str) -> str:
        return re.search(r"id='fig-([^']+)'", svg).group(1)

    @staticmethod
    def _safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]+", "-", name) or "fig"

    def shared_defs(self) -> str:
        """The marker shapes every figure uses, once (hidden, not display:none: a `<use>`
        elsewhere in the page still draws them)."""
        if not self._defs:
            return ""
        return (
            "<svg aria-hidden='true' width='0' height='0' style='position:absolute;overflow:hidden'>"
            f"<defs>{''.join(self._defs)}</defs></svg>"
        )


def read_svg(path: Path) -> str:
    """The SVG file a figure's drawing wrote, or an error naming what it wrote instead."""
    from hetlab.api import HetlabError

    data = path.read_bytes()
    if data.startswith(b"\x89PNG"):
        raise HetlabError(
            f"the chart that draws {path.with_suffix('.png').name} saved PNG bytes into {path.name}: its drawing "
            "must save by the file's suffix (hetlab.plots.save_figure), so a page can inline the SVG"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise HetlabError(f"the chart that draws {path.name} wrote no SVG text") from None
    if "<svg" not in text:
        raise HetlabError(f"the chart that draws {path.name} wrote no <svg> element")
    return text
