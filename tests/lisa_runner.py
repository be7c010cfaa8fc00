#!/usr/bin/env python3
"""Runs the tests' LISA scripts (tests/lisa_*.py) one after another in one LISA interpreter.

Importing LISA (holoviews, panel, bokeh, scipy) is 90 % of each script's time, 5-20 s a run: the
suite pays it once per session instead of once per script. Run with the LISA venv's interpreter
(conftest.py's `lisa` fixture starts it).

Protocol, one JSON object per line: after its imports it prints {"ready": true}; then for each
request {"script": PATH, "args": [...]} on standard input it runs PATH as `__main__` with those
arguments and prints {"returncode": N, "stdout": "...", "stderr": "..."} — what the script would
have printed and returned as a process of its own.
"""

import contextlib
import io
import json
import runpy
import sys
import traceback


def run_script(script: str, args: list[str]) -> dict:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    sys.argv = [script, *args]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:  # as the interpreter ends on it: None 0, an int itself, else 1
            if isinstance(e.code, int) or e.code is None:
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - the script's failure is its result, not ours
            traceback.print_exc()
            code = 1
    return {"returncode": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


def main() -> None:
    answer = sys.stdout
    import lisa.analysis.base  # noqa: F401 - what every script imports first, paid once here
    import lisa.trace  # noqa: F401

    print(json.dumps({"ready": True}), file=answer, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(run_script(request["script"], request["args"])), file=answer, flush=True)


if __name__ == "__main__":
    main()
