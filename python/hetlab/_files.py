"""Files written whole and files hashed: the package's one copy of each rule. (Files read from
a board's trees, and input files, are read in Rust: hetlab_linux::infile.)

`write_output` is how every command writes a file:
- `-` is standard output;
- a regular file (or a new name) is written to a temporary file with a random name in the same
  directory (mkstemp: O_CREAT|O_EXCL|O_NOFOLLOW), given mode 0644 less the umask, and renamed
  over the target (atomic on POSIX, and rename replaces a planted link rather than following
  it), so a failure or an interrupt never leaves a partial file;
- a character device or a FIFO is written in place (renaming over it would replace the node);
  a directory, a block device or a socket is refused;
- a symbolic link is followed to its target, except when running as root, where it is refused
  (a link planted in a shared directory must not redirect a root write), in any component of
  the path, not only the last: the directory is opened component by component with openat and
  O_NOFOLLOW (`open_directory`) and the file is made and renamed inside that descriptor;
- a file replaced keeps its mode, and as root its owner and group (a 0600 file stays 0600).
Failures raise `OutputError`, one line naming the file, the reason and the fix.

`command_inputs` marks the inputs of one command (its declared input paths, and every file read
through `note_input`); while it lasts, `check_output_path`, `write_output`, `staging_folder` and
`temporary_path` refuse an output that is one of them (the same device and inode, whatever path
or link names it) or lies inside an input directory, in one line, before anything is written.

`staging_folder` is how a set of files is written (a reproduction's outputs, a trained model):
into a new folder beside them, then each moved into place with a rename, so none is ever seen
half-written; a failure leaves the old files and no folder.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OUTPUT_MODE = 0o644


class OutputError(ValueError):
    """An output file cannot be written; the message names it, the reason and the fix."""


# (shown path, st_dev, st_ino, is a directory) of the running command's inputs; None outside a
# command (a direct API call), where nothing is compared
_inputs: list[tuple[str, int, int, bool]] | None = None


@contextmanager
def command_inputs(paths: Iterator[str] | list[str] = ()) -> Iterator[None]:
    """The scope of one command: `paths` (existing files or directories) and every file later
    given to `note_input` are its inputs, which no output may replace."""
    global _inputs
    previous, _inputs = _inputs, []
    try:
        for path in paths:
            note_input(path)
        yield
    finally:
        _inputs = previous


def note_input(path: str | os.PathLike) -> None:
    """Marks `path` as an input of the running command (nothing outside one, or if it is gone)."""
    if _inputs is None:
        return
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    _inputs.append((str(path), st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode)))


def check_not_input(path: str | os.PathLike, what: str = "output") -> None:
    """Raises `OutputError` when `path` is an input of the running command, or lies inside an
    input directory (compared by device and inode, so another path or a link to it is seen)."""
    if not _inputs or str(path) == "-":
        return
    p = Path(os.path.abspath(path))
    try:
        st = os.stat(p)
        own = (st.st_dev, st.st_ino)
    except OSError:
        own = None
    for shown, dev, ino, _is_dir in _inputs:
        if own == (dev, ino):
            raise OutputError(
                f"cannot write {what} '{path}': it is this command's input '{shown}', which it would overwrite; "
                "give another output path"
            )
    for parent in p.parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue
        for shown, dev, ino, is_dir in _inputs:
            if is_dir and (st.st_dev, st.st_ino) == (dev, ino):
                raise OutputError(
                    f"cannot write {what} '{path}': it is inside this command's input directory '{shown}'; "
                    "give an output path outside it"
                )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fix(e: OSError) -> str:
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "choose a writable directory"
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some space or choose another file system"
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return "create the directory first"
    return "choose another path"


def _fail(path: str | os.PathLike, what: str, e: OSError) -> OutputError:
    return OutputError(f"cannot write {what} '{path}': {e.strerror or e}; {_fix(e)}")


def _as_bytes(data: str | bytes) -> bytes:
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"an output is text or bytes, not {type(data).__name__}")


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_stdout(data: str | bytes) -> None:
    """Writes `data` to standard output and flushes it (errors as OSError, e.g. EPIPE, ENOSPC)."""
    sys.stdout.flush()
    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    if out is None:
        sys.stdout.write(data if isinstance(data, str) else data.decode())
    else:
        out.write(_as_bytes(data))
    sys.stdout.flush()


def check_output_path(path: str | os.PathLike, what: str = "output") -> None:
    """Raises `OutputError` now when `path` can certainly not be written (missing directory, a
    directory, a refused node or link): commands check before long runs, not after."""
    if str(path) == "-":
        return
    check_not_input(path, what)
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _fail(path, what, e) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        if os.geteuid() == 0:
            raise OutputError(
                f"cannot write {what} '{path}': it is a symbolic link, which hetlab does not follow when run as "
                "root; give the real path"
            )
        try:
            st = os.stat(p)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise _fail(path, what, e) from None
        p = Path(os.path.realpath(p))
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(f"cannot write {what} '{path}': it is a directory; give a file name")
        if stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            raise OutputError(
                f"cannot write {what} '{path}': it is a block device or a socket; give a regular file, a FIFO or -"
            )
        if not stat.S_ISREG(st.st_mode):
            return
    parent = p.parent
    if os.geteuid() == 0 and parent.is_dir():  # a link in a parent directory: refused now
        os.close(open_directory(parent, path, what))
    if not parent.is_dir():
        raise OutputError(f"cannot write {what} '{path}': directory '{parent}' does not exist; create it first")
    # The file goes in through a temporary file beside it: make (and remove) one now, so an
    # unwritable directory fails here rather than after the work (access() would pass root).
    import tempfile  # here, as in every writer below: a run that writes no file never loads it

    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=".probe")
    except OSError as e:
        raise OutputError(
            f"cannot write {what} '{path}': no file can be made in '{parent}' ({e.strerror}); "
            "choose a writable directory"
        ) from None
    os.close(fd)
    os.unlink(probe)


def check_output_folder(path: str | os.PathLike, what: str = "output folder") -> None:
    """Before a tree of files is written under `path` (made if missing): not an input of the
    command nor inside one, and as root no symbolic link in its path, its last component and
    every existing ancestor included."""
    check_not_input(path, what)
    if os.geteuid() != 0:
        return
    p = Path(path)
    existing = p
    while not (existing.exists() or existing.is_symlink()) and existing != existing.parent:
        existing = existing.parent
    os.close(open_directory(existing, path, what))


def write_output(path: str | os.PathLike, data: str | bytes, what: str = "output") -> None:
    """Writes `data` (text or bytes) whole to `path` as the module docstring says."""
    if str(path) == "-":
        write_stdout(data)
        return
    check_output_path(path, what)
    p = Path(path)
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # a character device or a FIFO: in place, never replaced
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                _write_fd(fd, _as_bytes(data))
            finally:
                os.close(fd)
        except OSError as e:
            raise _fail(path, what, e) from None
        return
    _replace(target, _as_bytes(data), path, what)


def open_directory(path: str | os.PathLike, shown: str | os.PathLike, what: str) -> int:
    """A descriptor of directory `path`. As root every component is opened with openat and
    O_NOFOLLOW, from / or the working directory, so a symbolic link anywhere in the path (not
    only the last component) is refused, never followed; otherwise the path is opened as given."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    if os.geteuid() != 0:
        try:
            return os.open(path, flags)
        except OSError as e:
            raise _fail(shown, what, e) from None
    p = Path(path)
    fd = os.open("/" if p.is_absolute() else ".", flags)
    try:
        for part in p.parts[1:] if p.is_absolute() else p.parts:
            if part == ".":
                continue
            try:
                inner = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OutputError(
                        f"cannot write {what} '{shown}': '{part}' in its path is a symbolic link (or not a "
                        "directory), which hetlab does not follow when run as root; give the real path"
                    ) from None
                raise _fail(shown, what, e) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _replace(target: Path, data: bytes, shown: str | os.PathLike, what: str) -> None:
    """`data` into a new file beside `target` (openat in its directory, `open_directory`), then
    renamed over it. A file it replaces keeps its mode, and as root its owner and group; a new
    one gets OUTPUT_MODE less the umask."""
    dir_fd = open_directory(target.parent, shown, what)
    tmp = f".{target.name}.{os.urandom(6).hex()}.tmp"  # secrets.token_hex(6), without its import
    try:
        try:
            old = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
        except OSError as e:
            raise _fail(shown, what, e) from None
        try:
            try:
                if old is not None and stat.S_ISREG(old.st_mode):
                    if os.geteuid() == 0:
                        os.fchown(fd, old.st_uid, old.st_gid)
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
                else:
                    os.fchmod(fd, OUTPUT_MODE & ~_umask())
                _write_fd(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as e:
            _unlink_at(tmp, dir_fd)
            raise _fail(shown, what, e) from None
        except BaseException:
            _unlink_at(tmp, dir_fd)
            raise
    finally:
        os.close(dir_fd)


def _unlink_at(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


@contextmanager
def staging_folder(
    dest: str | os.PathLike, within: str | os.PathLike | None = None, prefix: str = ".staging."
) -> Iterator[Path]:
    """A new folder with a random name (mkdtemp: mode 0700) in `within` (default: `dest`, which
    must exist then) for files that go to `dest` together. The caller writes them into it; when
    the block ends without an error, `dest` is made if missing and each entry is moved into it
    with os.replace (so each appears whole and replaces its old version, in name order). The
    folder is removed however the block ends."""
    import shutil
    import tempfile

    dest = Path(dest)
    check_not_input(dest)
    if os.geteuid() == 0:  # no link in the destination's path, its last component included
        for folder in (dest if dest.exists() or dest.is_symlink() else dest.parent, within):
            if folder is not None:
                os.close(open_directory(folder, dest, "output folder"))
    staging = Path(tempfile.mkdtemp(dir=dest if within is None else within, prefix=prefix))
    try:
        yield staging
        entries = sorted(staging.iterdir())
        for entry in entries:  # all checked before any is moved: nothing half replaced
            check_not_input(dest / entry.name)
        dest.mkdir(exist_ok=True)
        for entry in entries:
            os.replace(entry, dest / entry.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# temporary_path's files still open in this process -> the descriptor holding each one's flock:
# `remove_temporaries` (a command stopped by a signal) removes them, and a later temporary_path
# beside the same output removes the ones whose lock no process holds (a SIGKILLed run's)
_temporaries: dict[Path, int] = {}


def temporary_path(path: str | os.PathLike) -> Path:
    """A new, empty file with a random name beside `path` (O_EXCL|O_NOFOLLOW, mode 0600), for a
    writer that needs a file name (Parquet); the caller renames it over `path` (`publish`) or
    removes it (`discard`). Held with an flock while it lives; left-overs of killed runs beside
    `path` (their lock gone) are removed first."""
    path = Path(path)
    check_not_input(path)
    if os.geteuid() == 0:
        os.close(open_directory(path.parent, path, "output"))
    _remove_stale(path)
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise _fail(path, "output", e) from None
    fcntl.flock(fd, fcntl.LOCK_EX)
    _temporaries[Path(tmp)] = fd
    return Path(tmp)


def _remove_stale(path: Path) -> None:
    """Removes `.NAME.*.tmp` beside `path` that no process holds (a killed run's temporary)."""
    try:
        siblings = [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.") and p.name.endswith(".tmp")]
    except OSError:
        return
    for old in siblings:
        try:
            fd = os.open(old, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.unlink(old)
        except OSError:
            pass  # held: another run is writing it
        finally:
            os.close(fd)


def _release(tmp: Path) -> None:
    fd = _temporaries.pop(Path(tmp), None)
    if fd is not None:
        os.close(fd)


def publish(tmp: Path, path: str | os.PathLike) -> None:
    """Gives a file made by `temporary_path` the outputs' mode and renames it over `path`."""
    os.chmod(tmp, OUTPUT_MODE & ~_umask())
    os.replace(tmp, path)
    _release(tmp)


def discard(tmp: Path) -> None:
    """Removes a file made by `temporary_path` that will not be published."""
    Path(tmp).unlink(missing_ok=True)
    _release(tmp)


def remove_temporaries() -> None:
    """Removes every temporary of this process (a command leaving at once on a signal)."""
    for tmp in list(_temporaries):
        discard(tmp)


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
