"""Every public API function's arguments checked against its annotations, once, before it runs:
the one rule that turns a wrong type anywhere in the API into one `HetlabError` line naming the
function, the argument, what it takes and what it got (issue 34, class 7).

`checked` wraps a function (or method): the call is bound to the signature (a missing or unknown
argument is an error line, not a TypeError), each bound value is matched against its type hint
(str, int, float, bool, None, os.PathLike, Mapping[K, V], Sequence[T], Callable, unions and
classes), and a TypeError, ValueError, KeyError or OverflowError that still escapes the body
(a value of the right type that a library below cannot take) becomes a HetlabError naming the
function. `PUBLIC` lists every function so wrapped, for the property test over all of them.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import inspect
import math
import numbers
import os
import types
import typing
from collections.abc import Callable
from typing import Any

from hetlab._errors import HetlabError

PUBLIC: list[Callable] = []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "None"
    if hint is Any:
        return "anything"
    if origin is not None:
        args = typing.get_args(hint)
        if origin in (abc.Mapping, dict):
            return f"a dict of {_describe(args[0])} -> {_describe(args[1])}" if args else "a dict"
        if origin in (abc.Sequence, list, tuple, abc.Iterable):
            return f"a list of {_describe(args[0])}" if args else "a list"
        if origin is abc.Callable:
            return "a function"
        return getattr(origin, "__name__", str(origin))
    names = {str: "a string", int: "an integer", float: "a number", bool: "True or False", os.PathLike: "a path"}
    return names.get(hint, f"a {getattr(hint, '__name__', hint)}")


def matches(hint: Any, value: Any) -> bool:
    """Whether `value` is of the type `hint` says (containers checked item by item)."""
    origin = typing.get_origin(hint)
    if hint is Any or hint is inspect.Parameter.empty:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(matches(a, value) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is abc.Callable or hint is abc.Callable:
        return callable(value)
    if origin is not None:
        args = typing.get_args(hint)
        if origin in (abc.Mapping, dict):
            if not isinstance(value, abc.Mapping):
                return False
            return not args or all(matches(args[0], k) and matches(args[1], v) for k, v in value.items())
        if origin in (abc.Sequence, list, tuple, abc.Iterable):
            if isinstance(value, (str, bytes)) or not isinstance(value, (abc.Sequence, abc.Set)):
                return False
            return not args or origin is tuple or all(matches(args[0], v) for v in value)
        return isinstance(value, origin)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _finite(value: Any) -> bool:
    return not (isinstance(value, float) and not math.isfinite(value))


def _suggestion(signature: inspect.Signature, kwargs: dict[str, Any]) -> str:
    """` (did you mean 'x'?)` for a keyword close to one of the signature's."""
    import difflib

    for key in kwargs:
        if key not in signature.parameters:
            close = difflib.get_close_matches(key, list(signature.parameters), n=1)
            if close:
                return f" (did you mean '{close[0]}'?)"
    return ""


def checked(func: Callable | None = None, *, types: bool = True) -> Callable:
    """`func` with its arguments checked as the module docstring says; `types=False` for a
    function whose body checks every argument's type itself with its own, more specific lines
    (`simulate`'s `_engine_options`, `sweep`'s grid), which keeps binding and the boundary."""
    if func is None:
        return functools.partial(checked, types=types)
    signature = inspect.signature(func)
    name = func.__qualname__
    hints: dict[str, Any] | None = None

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal hints
        if hints is None:
            hints = typing.get_type_hints(func)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise HetlabError(f"{name}(): {e}{_suggestion(signature, kwargs)}; see help(hetlab.{name})") from None
        for arg, value in bound.arguments.items() if types else ():
            kind = signature.parameters[arg].kind
            if arg == "self" or kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            hint = hints.get(arg, Any)
            if not matches(hint, value):
                raise HetlabError(f"{name}(): {arg} must be {_describe(hint)}, got {_short(value)}")
            if not _finite(value):
                raise HetlabError(f"{name}(): {arg} must be a finite number, got {_short(value)}")
        try:
            return func(*args, **kwargs)
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            if isinstance(e, HetlabError):
                raise
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            raise HetlabError(
                f"{name}(): {first} ({type(e).__name__}); check the arguments against help(hetlab.{name})"
            ) from None

    PUBLIC.append(wrapper)
    return wrapper
