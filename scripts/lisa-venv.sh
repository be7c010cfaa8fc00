#!/usr/bin/env bash
# Create (once) the venv that runs ARM's LISA for the trace checks, and print its python.
#
#   scripts/lisa-venv.sh            -> prints /abs/path/to/repo/.venv-lisa/bin/python on stdout
#
# LISA (lisa-linux==3.1.0) needs numpy<2, pandas<2.2, pyarrow<15 and nest_asyncio, which clash
# with the project's own environment, hence a separate venv pinned by constraints-lisa.txt
# (shared/reference/ecosystem.md §7). Needs Python 3.11 and access to PyPI (or to the index pip
# is configured with) the first time; later runs only check the venv and return at once.
#
# Environment: LISA_BASE_PYTHON  interpreter to build the venv from (default: python3.11, else
#                                python3); LISA_VENV  venv directory (default: <repo>/.venv-lisa).
# All progress output goes to stderr; stdout carries only the python path.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
constraints="$repo/constraints-lisa.txt"
venv="${LISA_VENV:-$repo/.venv-lisa}"
py="$venv/bin/python"
stamp="$venv/.hetlab-lisa-stamp"

if [[ ! -f "$constraints" ]]; then
    echo "lisa-venv: missing $constraints" >&2
    exit 1
fi

base="${LISA_BASE_PYTHON:-}"
if [[ -z "$base" ]]; then
    base="$(command -v python3.11 || command -v python3 || true)"
fi
if [[ -z "$base" ]] || ! "$base" -c 'import sys' 2>/dev/null; then
    echo "lisa-venv: no Python interpreter found (set LISA_BASE_PYTHON)" >&2
    exit 1
fi
base_version="$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$base_version" != "3.11" ]]; then
    echo "lisa-venv: warning: constraints-lisa.txt was frozen on Python 3.11, $base is $base_version" >&2
fi

# Serialise concurrent callers (e.g. pytest-xdist workers) on the constraints file itself.
if command -v flock >/dev/null 2>&1; then
    exec 9<"$constraints"
    flock 9
fi

want_stamp="$(cksum <"$constraints" | cut -d' ' -f1)-py$base_version"

venv_ok() {
    [[ -x "$py" ]] && [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want_stamp" ]] \
        && "$py" -c 'import importlib.metadata as m, sys; sys.exit(m.version("lisa-linux") != "3.1.0")' 2>/dev/null
}

if venv_ok; then
    echo "$py"
    exit 0
fi

echo "lisa-venv: creating $venv from $base (Python $base_version)" >&2
rm -f "$stamp"
if [[ -x "$py" ]] && "$py" -c 'import sys' 2>/dev/null; then
    "$base" -m venv "$venv" >&2
else
    "$base" -m venv --clear "$venv" >&2
fi
"$py" -m pip install --disable-pip-version-check --no-input \
    -c "$constraints" lisa-linux nest_asyncio numpy pandas pyarrow >&2
# The check the tests rely on: LISA's trace module imports.
"$py" -c 'import lisa.trace' >&2
echo "$want_stamp" >"$stamp"
echo "$py"
