"""The commands beyond one run: a workload measured from a real program (`hetlab profile`), a
seed document's reproduction (`hetlab reproduce`) and its HTML page (`hetlab report`), and a
recommendation from candidate runs (`hetlab advise`). reproduce and advise declare their own
options in their modules."""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from hetlab import _core, advise, reproduce
from hetlab._files import check_output_path, write_output
from hetlab.cli.values import CliError

PROFILE_HELP = """\
Run a real program under valgrind's cache simulator (callgrind --cache-sim=yes) with the cache
geometry of the platform's core types (L1I, L1D: size, ways, line; L2: size, ways), once per LL
size (half the smallest L2 up to four times the largest; the runs go in parallel), and write a
workload .toml in hetlab's grammar: one phase per instruction slice, with its instructions, data
references per instruction, write fraction and up to 4 access components fitted so that the
model's own miss ratios match the measured ones at every size. Each file states its command,
valgrind version, host, date, caveats and the MEASURED MPKI at each platform L2 size. Expect
roughly a 50-100x slowdown per run. cpi and the instruction mix are not measured.

examples:
  hetlab profile --out measured-gcc.toml -- gcc -O2 -c file.c
  hetlab profile --slice-instructions 5e8 -- ffmpeg -threads 1 -i clip.mkv -f null -
  hetlab simulate --workload measured-gcc.toml --cluster little
"""


# `report --time-limit`: the page is drawn from finished runs, so its limit is wall-clock time; a
# reproduction's page takes seconds
DEFAULT_REPORT_S = 600.0
MAX_REPORT_S = 86_400.0


def cmd_report(args: argparse.Namespace) -> int:
    from hetlab import html_report

    out = Path(args.out) if args.out else Path(args.dir) / html_report.REPORT_HTML
    with _wall_limit(args.time_limit, "--time-limit"):
        text = html_report.experiment_page(args.dir)
    write_output(str(out), text)
    print(f"wrote {out}")
    return 0


@contextmanager
def _wall_limit(seconds: float, flag: str):
    """Stops the block with one error line after `seconds` of wall-clock time (a timer signal;
    the main thread only, where Python delivers it; elsewhere no limit)."""
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_REPORT_S):
        raise CliError(f"{flag} {seconds} s is out of range; give a number of seconds in (0, {MAX_REPORT_S:g}]")
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(_signum, _frame):
        raise CliError(
            f"the page took longer than {flag} {seconds:g} s to build; the folder is larger than any reproduction "
            f"writes, or raise {flag}"
        )

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cmd_profile(args: argparse.Namespace) -> int:
    from hetlab import profile

    if args.out:
        check_output_path(args.out, "workload profile")
    command = args.command_argv[1:] if args.command_argv[:1] == ["--"] else args.command_argv
    name = Path(args.out).stem if args.out and args.out != "-" else None
    text = profile.profile(
        command,
        platform=args.platform,
        slices=args.slices,
        slice_instructions=args.slice_instructions,
        name=name,
        description=args.description,
        progress=profile.stderr_progress,
    )
    write_output(args.out or "-", text, "workload profile")
    if args.out and args.out != "-":
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def configure_parser(sub: argparse._SubParsersAction) -> None:
    """`hetlab report`, `profile`, `reproduce` and `advise`."""
    rp = sub.add_parser(
        "report",
        help="write the HTML page of a reproduction's outputs (claims, vector figures, every run)",
        description="Writes one self-contained HTML page for the folder `hetlab reproduce` wrote: report.md's "
        "claims, notes and tables, its figures redrawn as vectors from the runs, and a drill-down of every run. "
        "It opens from disk with no network.",
    )
    rp.add_argument("dir", metavar="DIR", help="the folder `hetlab reproduce` wrote")
    rp.add_argument("--out", metavar="FILE", help="where the page goes (default: DIR/report.html)")
    rp.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        default=DEFAULT_REPORT_S,
        help=f"stop after S seconds of wall-clock time, 0 < S <= {MAX_REPORT_S:g} (a page takes seconds; the "
        "simulations it shows ran before) (default: %(default)g)",
    )
    rp.set_defaults(func=cmd_report)

    pf = sub.add_parser(
        "profile",
        help="measure a real program's cache behaviour (valgrind) and write it as a workload .toml",
        description=PROFILE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pf.add_argument(
        "--platform", default=_core.DEFAULT_PLATFORM, help="whose caches to simulate (default: %(default)s)"
    )
    slicing = pf.add_mutually_exclusive_group()
    slicing.add_argument(
        "--slices", type=int, metavar="N", help="cut the run into N phases of equal length (default 4)"
    )
    slicing.add_argument(
        "--slice-instructions", type=float, metavar="N", help="cut the run into phases of about N instructions"
    )
    pf.add_argument("--out", metavar="FILE.toml", help="where the workload goes (default: stdout)")
    pf.add_argument("--description", metavar="TEXT", help="the workload's description (default: the command)")
    pf.add_argument("command_argv", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS...")
    pf.set_defaults(func=cmd_profile)

    reproduce.configure_parser(
        sub.add_parser(
            "reproduce",
            help="reproduce a seed document's experiment (tables, figures, report.md); --list names them",
        )
    )

    advise.configure_parser(
        sub.add_parser(
            "advise",
            help="simulate a workload's candidate configurations and recommend one for an objective",
        )
    )
