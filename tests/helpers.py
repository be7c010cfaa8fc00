"""Helpers the test modules share (tests/ is on sys.path under pytest)."""

import struct
import subprocess
import sys

import processes

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def hetlab_cli(*args: str) -> subprocess.CompletedProcess:
    """`hetlab ARGS` in a process of its own, output captured as text."""
    return processes.run([sys.executable, "-m", "hetlab", *args], capture_output=True, text=True)


def png_size(path) -> tuple[int, int]:
    """(width, height) of a PNG file, from its IHDR chunk; fails if it is not a PNG."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return struct.unpack(">II", data[16:24])
