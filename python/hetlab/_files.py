"""Files written whole and files hashed: the package's one copy of each rule.

A file is written to a temporary file in its own directory and then renamed over the target
(os.replace, atomic on POSIX), so a failure or an interrupt never leaves a partial file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: str | os.PathLike, data: str | bytes) -> None:
    """Writes `data` (text or bytes) to `path` through a temporary file in the same directory;
    the file gets the mode open() would give it (0o666 less the umask)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())  # mkstemp makes it 0o600
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
