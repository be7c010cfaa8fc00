"""What the LISA driver scripts (tests/lisa_*.py) share. They run in the LISA venv
(``scripts/lisa-venv.sh`` prints its interpreter), not with the project's Python."""

import json
import logging
import sys
import traceback
import warnings


def read_text_trace(trace_path, plat_info_path, events):
    """A hetlab ftrace text trace and its platform info as LISA reads them: its parser for the
    kernel's text format, the trace's own timestamps."""
    from lisa.platforms.platinfo import PlatformInfo
    from lisa.trace import HRTxtTraceParser, Trace

    plat_info = PlatformInfo.from_yaml_map(plat_info_path)
    return Trace(
        trace_path,
        plat_info=plat_info,
        parser=HRTxtTraceParser.from_txt_file,
        events=events,
        normalize_time=False,
        enable_swap=False,
    )


def print_json(analyse, *args):
    """Prints ``analyse(*args)`` as JSON on stdout and returns 0; if LISA fails, its traceback
    and one line naming the script go to stderr (never into the JSON stream) and it returns 1."""
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        result = analyse(*args)
    except Exception as error:  # LISA's own exceptions vary by version
        traceback.print_exc(file=sys.stderr)
        print(f"{sys.argv[0]}: LISA failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0
