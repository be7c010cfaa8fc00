#!/usr/bin/env python3
"""Measure report pages as a reader gets them: size, the time headless Chromium takes to load
each (the page's own <body data-load-ms>, the navigation's loadEventStart, in real time: no
virtual time budget), whether every figure drew with every drill-down opened, html5lib's
parse errors and repeated element ids.

    .venv/bin/python scripts/page_metrics.py PAGE.html [PAGE.html ...]

Chromium is Debian's `chromium` (/usr/bin/chromium). Prints one line per page. Wall-clock
figures depend on the machine and its load: this script reports them, no test asserts them.
"""

from __future__ import annotations

import base64
import collections
import gzip
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def _expanded(text: str) -> str:
    return re.sub(
        r"<details data-lazy='([^']+)'>",
        lambda m: "<details>" + gzip.decompress(base64.b64decode(m.group(1))).decode(),
        text,
    )


def _dom(page: Path, fragment: str, virtual_ms: int | None) -> str:
    with tempfile.TemporaryDirectory() as profile:
        args = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
        args += [f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND"]
        if virtual_ms:
            args.append(f"--virtual-time-budget={virtual_ms}")
        proc = subprocess.run([*args, "--dump-dom", page.resolve().as_uri() + fragment], capture_output=True, text=True)
        return proc.stdout


def measure(page: Path) -> str:
    import html5lib

    text = page.read_text()
    parser = html5lib.HTMLParser()
    parser.parse(text)
    inner = _expanded(text)
    repeated = sum(1 for n in collections.Counter(re.findall(r"""\bid=["']([^"']+)""", inner)).values() if n > 1)
    loads = [re.search(r'data-load-ms="(\d+)"', _dom(page, "", None)) for _ in range(3)]
    load_ms = sorted(int(m.group(1)) for m in loads if m)
    figures = re.search(r'data-figures="([^"]+)"', _dom(page, "#open-all", 20000))
    return (
        f"{page}: {len(text.encode()) / 1e6:.2f} MB, load {load_ms[len(load_ms) // 2] if load_ms else '?'} ms "
        f"(median of 3), figures {figures.group(1) if figures else '?'}, html5lib errors {len(parser.errors)}, "
        f"repeated ids {repeated}"
    )


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(measure(Path(arg)))
