"""The `hetlab` command line. Every subcommand is a thin wrapper over `hetlab.api`; each group of
commands is a module here with one `configure_parser` (simulate, board, model, platform,
experiments, catalogue; `values` holds the value parsers they share). This module builds the
parser from them and runs a command: every failure becomes one `hetlab: error:` line and an exit
code."""

from __future__ import annotations

from hetlab.cli import board_signals  # noqa: F401 (first: before any import starts a thread)

# isort: split
import argparse
import gc
import importlib
import os
import re
import signal
import sys
import threading

from hetlab import api
from hetlab._errors import printable
from hetlab._files import OutputError, command_inputs, remove_temporaries
from hetlab.cli.values import CliError

# The groups of commands, each a module here with one `configure_parser`, in the order `hetlab
# --help` lists their commands
GROUPS = ("simulate", "board", "model", "platform", "experiments", "catalogue")

MAIN_HELP = """\
hetlab: energy and performance management for big.LITTLE SoCs.

The default board is a simulated Samsung Exynos 5422 (Odroid-XU3): 4 Cortex-A7 + 4 Cortex-A15
behind a CCI-400, whose snoops are served at the snooped cluster's clock. A slow idle cluster
makes the busy one stall; the anti-snoop governor fixes that.

examples:
  hetlab simulate --workload ccbench:size=1048576,pattern=random --cluster little \\
      --governor ondemand
  hetlab simulate --workload ccbench:size=1048576,pattern=random --cluster little \\
      --freq little=1400000,big=200000 --reps 5
  hetlab simulate --workload mixed8 --scheduler smp --governor schedutil --trace run.trace
  hetlab simulate --workload mixed8 --scheduler hmp --sched-tunable up_threshold=512
  hetlab governors          # tunables and defaults
  hetlab schedulers         # placement policies and their knobs
"""


class OneLineParser(argparse.ArgumentParser):
    """argparse with the command line's one error form: `hetlab: error: ...` on one line
    instead of a usage block. Subparsers are made of the same class (argparse uses the parent's
    type), so every subcommand and every option's type conversion reports this way."""

    def error(self, message: str):
        # a hetlabd option's own line (see _BoardValue), which names the option: as hetlabd says it
        own = re.match(r"^argument (--[\w-]+): (\1 .*)$", message)
        if own:
            print(error_line(own.group(2)), file=sys.stderr)
            raise SystemExit(2)
        # "argument --seed: invalid int value: 'nan'" -> "--seed expects a whole number, got 'nan'"
        message = re.sub(r"^argument ([^:]+): ", r"\1: ", message)
        message = re.sub(r": invalid int value: ", " expects a whole number, got ", message)
        message = re.sub(r": invalid float value: ", " expects a number, got ", message)
        print(error_line(f"{message} (see {self.prog} --help)"), file=sys.stderr)
        raise SystemExit(2)


class VersionAction(argparse.Action):
    """`--version`: reads the installed version only when asked (importlib.metadata is slow to
    import, and every other command would pay for it)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        help = help or "show program's version number and exit"
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from hetlab import __version__

        print(f"hetlab {__version__}")  # on standard output, as argparse's own action prints it
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every group's commands, or with `command` (the first argument,
    when it names one) only the groups up to the one that declares it. A command parses the same
    either way (argparse hands what follows its name to its own parser); the other groups' modules,
    and what they import, are left alone (`hetlab simulate` imports no experiment)."""
    parser = OneLineParser(prog="hetlab", description=MAIN_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in GROUPS:
        importlib.import_module(f"hetlab.cli.{group}").configure_parser(sub)
        if command is not None and command in sub.choices:
            break
    return parser


# Longest quoted value an error line shows (a file's contents, through a link, were quoted up to
# 4 KB), and longest error line
MAX_QUOTED = 200
MAX_ERROR_LINE = 2000


def _shorten_quoted(match: re.Match) -> str:
    quote, inner = match.group(1), match.group(2)
    return f"{quote}{inner[: MAX_QUOTED - 3]}...{quote}"


def error_line(message: object) -> str:
    """`hetlab: error: MESSAGE` on one line: control characters a user's value brought in
    (a newline in an option) are shown escaped, and any quoted value (in '', "" or ``) longer
    than MAX_QUOTED is cut to a short excerpt, the line to MAX_ERROR_LINE."""
    text = printable(str(message).strip())
    text = re.sub(rf"(['\"`])([^'\"`]{{{MAX_QUOTED + 1},}})\1", _shorten_quoted, text)
    if len(text) > MAX_ERROR_LINE:
        text = text[: MAX_ERROR_LINE - 3] + "..."
    return f"hetlab: error: {text}"


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


def _raise_terminated(signum, frame):
    raise _Terminated


def _blocks_signals_itself(args: argparse.Namespace) -> bool:
    """Board commands block SIGINT/SIGTERM while they run and read them from a signalfd, to
    restore the policies first: no Python handler for those."""
    return args.command in ("govern", "chase") or getattr(args, "backend", None) == "linux"


def _exit_now(code: int, message: str | None) -> int:
    """Leaves at once: simulations still running in worker threads are not waited for (they
    write nothing; outputs are written only after every run finished)."""
    if message:
        print(message, file=sys.stderr)
    remove_temporaries()  # a sweep's half-written output (os._exit runs no cleanup)
    if threading.active_count() == 1:
        return code  # nothing to leave behind: return to the caller (main() called from Python)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    os._exit(code)


def _silence_stdout() -> None:
    """Points standard output at /dev/null, so the interpreter's own flush at exit has nothing
    left to fail on (after a full disk or a closed pipe was reported)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _empty_value(argv: list[str]) -> str | None:
    """The first empty value on the command line (`--report ""`, `--out=`), said as an error:
    it is a shell variable left unset, never "use the default" (which argparse's falsy "" would
    quietly give: no report written, every benchmark run). Arguments after `--` are another
    program's (`hetlab profile -- CMD`)."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg.startswith("--") and arg.endswith("=") and "=" not in arg[:-1]:
            return f"{arg[:-1]} is given an empty value; give a value or leave the option out"
        if arg == "":
            after = argv[i - 1] if i and argv[i - 1].startswith("-") else None
            where = f" after {after}" if after else ""
            return f"an empty argument{where}; give a value or leave the option out"
    return None


def run() -> int:
    """The `hetlab` program (its console script and `python -m hetlab`): `main()`, then the
    objects it leaves are frozen out of the collector (`gc.freeze`): the interpreter's collection
    at exit would walk every object of every module imported, ~8 ms of each command's exit, to
    free memory the process is about to give back. What exit must do still happens: streams
    are flushed, atexit handlers run, objects whose last reference goes are finalized."""
    try:
        return main()
    finally:
        gc.freeze()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    empty = _empty_value(argv)
    if empty:
        print(error_line(empty), file=sys.stderr)
        return 2
    # a command named first builds its own group only; anything else (--help, --version, no or an
    # unknown command) the whole parser, which lists every command
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    previous = None
    if not _blocks_signals_itself(args) and threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return _run(args)
    finally:
        if previous is not None:  # main() called from Python (tests) leaves SIGTERM as it was
            signal.signal(signal.SIGTERM, previous)


# The options that name a command's inputs (files, or trees it reads), by command function: no
# output of the command may replace one or lie inside one (`_files.command_inputs`). `report`'s
# DIR is not one (its page goes there): the files it reads in it are marked as it reads them.
INPUT_OPTIONS = {
    "cmd_simulate": ("platform", "workload", "model"),
    "cmd_characterize": ("platform",),
    "cmd_govern": ("platform", "model"),
    "cmd_train": ("sweep", "reference"),
    "cmd_show_model": ("model",),
    "cmd_export_model": ("model",),
    "cmd_profile": ("platform", "program"),
    "cmd_reproduce": ("platform", "workload", "model"),
    "cmd_advise": ("platform", "workload"),
    "cmd_export_em": ("platform",),
    "cmd_import_em": ("dir",),
    "cmd_from_board": ("template", "sysfs_root", "procfs_root"),
}


def _declared_inputs(args: argparse.Namespace) -> list[str]:
    """The existing paths the command's input options name (a profiled program by its PATH)."""
    import shutil

    names = INPUT_OPTIONS.get(getattr(args.func, "__name__", ""), ())
    found = []
    for name in names:
        if name == "program":
            argv = getattr(args, "command_argv", None) or []
            argv = argv[1:] if argv[:1] == ["--"] else argv
            value = (shutil.which(argv[0]) or argv[0]) if argv else None
        else:
            value = getattr(args, name, None)
        if isinstance(value, str) and value and os.path.exists(value):
            found.append(value)
    return found


def _run(args: argparse.Namespace) -> int:
    """Runs the command; every failure becomes one error line and an exit code."""
    try:
        with command_inputs(_declared_inputs(args)):
            code = args.func(args)
        sys.stdout.flush()  # a full disk or a closed pipe on stdout shows here, not at exit
        return code
    except (CliError, api.HetlabError, OutputError) as e:
        print(error_line(e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader (`| head`) is gone: stop quietly, as a pipeline expects
        _silence_stdout()
        return _exit_now(141, None)
    except _Terminated:
        return _exit_now(143, "hetlab: terminated")
    except KeyboardInterrupt:
        return _exit_now(130, "hetlab: interrupted")
    except UnicodeDecodeError as e:
        print(
            error_line(f"an input file is not UTF-8 text ({e.reason} at byte {e.start}); give a text file"),
            file=sys.stderr,
        )
        return 2
    except OSError as e:
        if e.filename:
            print(error_line(f"cannot use '{e.filename}': {e.strerror or e}"), file=sys.stderr)
        else:
            _silence_stdout()
            print(error_line(f"cannot write standard output: {e.strerror or e}"), file=sys.stderr)
        return 2
    except BaseException as e:
        # a panic in the Rust engine reaches Python as pyo3's PanicException (a BaseException):
        # a bug in hetlab, said on one line with what to report, not a traceback
        if type(e).__name__ != "PanicException":
            raise
        from hetlab import _core

        at = _core.last_panic_at()
        where = f" at {at}" if at else ""
        print(
            error_line(
                f"internal error in the engine ({e}{where}); a bug in hetlab: please report the command "
                "and its input files"
            ),
            file=sys.stderr,
        )
        return 70  # EX_SOFTWARE
