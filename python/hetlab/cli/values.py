"""The value parsers the command groups share: per-cluster lists, NAME=VALUE tunables, lists of
integers and words, the options a command line set, and the API defaults help texts quote. A
bad value is a `CliError`, which `hetlab.cli.main` prints as one `hetlab: error:` line."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from hetlab import api


class CliError(Exception):
    """A command-line value a command cannot take; `main` prints it as one error line."""


def per_cluster(text: str, flag: str, example: str) -> dict[str, int]:
    """`CLUSTER=N,CLUSTER=N` as {cluster: N}."""
    out = {}
    for item in api.comma_items(text, flag):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise CliError(f"{flag} expects {example}; got '{item}'")
        if name.strip() in out:
            raise CliError(f"{flag} gives {name.strip()} twice in '{text}'; give each cluster once")
        out[name.strip()] = int(value)
    return out


def parse_freq(text: str) -> dict[str, int]:
    return per_cluster(text, "--freq", "CLUSTER=KHZ[,CLUSTER=KHZ], e.g. little=1400000,big=200000")


def parse_tunables(items: list[str], flag: str = "--tunable", example: str = "up_threshold=80") -> dict[str, float]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise CliError(f"{flag} expects NAME=VALUE, e.g. {example}; got '{item}'")
        if name.strip() in out:
            raise CliError(f"{flag} sets {name.strip()} twice; give each once")
        out[name.strip()] = number
    return out


def ints(text: str | None, flag: str, minimum: int | None = None) -> list[int] | None:
    """A comma-separated list of integers (at least `minimum`), or None when the option was not given."""
    if text is None:
        return None
    items = api.comma_items(text, flag)
    try:
        values = [int(x) for x in items]
    except ValueError:
        raise CliError(f"{flag} expects comma-separated integers, got '{text}'") from None
    low = [v for v in values if minimum is not None and v < minimum]
    if low:
        raise CliError(f"{flag} expects comma-separated integers of at least {minimum}, got {low[0]}")
    return values


def words(text: str | None, flag: str) -> list[str] | None:
    return None if text is None else api.comma_items(text, flag)


def given_options(**options: Any) -> dict[str, Any]:
    """The options the command line set; the others (None) take the API's defaults."""
    return {name: value for name, value in options.items() if value is not None}


def api_default(func: Callable, name: str) -> Any:
    """The default of `func`'s parameter `name`: help texts quote the API's defaults."""
    return _parameters(func)[name].default


@functools.cache
def _parameters(func: Callable) -> Mapping[str, inspect.Parameter]:
    # once per function: a command's parser quotes a dozen of its defaults
    return inspect.signature(func).parameters
