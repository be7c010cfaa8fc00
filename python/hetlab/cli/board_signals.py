"""Board commands (`govern`, `chase`, `--backend linux`) restore what they changed on SIGINT,
SIGTERM, SIGHUP and SIGQUIT by reading them from a signalfd (`hetlab_linux::stop`), which sees
a signal only if every thread of the process blocks it. numpy's BLAS starts its threads when
this package imports it, with the mask they are born with: a SIGTERM the kernel hands to one of
them would kill the process before anything is restored. So the command line blocks these
signals here, first, before any import starts a thread, when its arguments name a board
command."""

from __future__ import annotations

import signal
import sys

RESTORED_ON = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


def is_board_command(argv: list[str]) -> bool:
    """The command's arguments name a board command (the rule `cli._blocks_signals_itself`
    applies to the parsed arguments, read here from the raw ones)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    linux_backend = any(
        a == "--backend=linux" or (a == "--backend" and b == "linux") for a, b in zip(argv, argv[1:] + [""])
    )
    return command in ("govern", "chase") or linux_backend


if sys.argv and sys.argv[0].endswith(("hetlab", "__main__.py")) and is_board_command(sys.argv[1:]):
    signal.pthread_sigmask(signal.SIG_BLOCK, RESTORED_ON)
