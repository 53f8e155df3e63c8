"""Snapshots of the kernel's variables, so the server thread can complete names without touching them.

The user namespace belongs to the kernel's main thread: reading it from the
server thread could race a running cell (or run arbitrary `__getattr__` code).
So after each cell, on the main thread, `NamespaceWatcher` copies what
completion needs — each variable's name and the names of its type and base
classes — into an immutable `NamespaceSnapshot`. The server thread only ever
reads the latest snapshot.

`read_variables` is the one read of values: for a prompt whose `NAME:var`
arguments a client filled in, it runs on the main thread (between cells) and
formats each named variable as `%mcp get NAME=@variable` would, under a budget:
a value whose text would be over `MAX_VARIABLE_CHARS` is refused before its
text is built where its size says so (a string, bytes, a built-in container),
and formatting that runs past `FORMAT_SECONDS` is stopped (where the main
thread can take a timer signal), so the kernel's cells never wait on it.

A declared type is matched by its qualified name (`type_matches`): a name
without a module is a built-in type, matched exactly (`int` is not `bool`, nor
an `IntEnum`: their text is built by code of theirs); `pandas.DataFrame` is
a class of that name defined in `pandas` or below it (`pandas.core.frame`), or
any subclass of one (a `geopandas.GeoDataFrame` is a DataFrame), never a class
of that name from anywhere else.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from ..exceptions import VariableArgumentError
from ..models import CompletionResult
from ..rendering import MAX_COMPLETIONS
from ..sources.kernel import VariableReference

__all__ = [
    "FORMAT_SECONDS",
    "MAX_VARIABLE_CHARS",
    "NamespaceSnapshot",
    "NamespaceWatcher",
    "VariableInfo",
    "is_user_variable",
    "read_variables",
    "take_namespace_snapshot",
    "type_matches",
]

MAX_VARIABLE_CHARS: Final = 1_000_000
"""The longest text a variable may become in a prompt (a prompt argument's limit)."""
FORMAT_SECONDS: Final = 2.0
"""How long formatting one variable may hold the kernel's main thread."""

Classes = tuple[tuple[str, str], ...]  # (module, qualified name) of a value's type and its bases, nearest first


def type_matches(declared: str, classes: Classes) -> bool:
    """Whether a value whose type and bases are `classes` is of the type named `declared` (module docstring)."""
    module, dot, name = declared.rpartition(".")
    if not dot or module == "builtins":
        return bool(classes) and classes[0] == ("builtins", name)
    return any(
        f"{owner}.{qualname}" == declared or (qualname == name and owner.startswith(module + "."))
        for owner, qualname in classes
    )


@dataclass(frozen=True, slots=True)
class VariableInfo:
    """A variable's name and its type's classes (`("pandas.core.frame", "DataFrame")`, then its bases)."""

    name: str
    classes: Classes

    def has_type(self, names: Iterable[str]) -> bool:
        return any(type_matches(name, self.classes) for name in names)


@dataclass(frozen=True, slots=True)
class NamespaceSnapshot:
    """The kernel's user variables at the end of one cell."""

    variables: tuple[VariableInfo, ...] = ()

    def complete(self, prefix: str, types: tuple[str, ...] = ()) -> CompletionResult:
        """Variable names starting with `prefix` (case-insensitive), only of `types` when given; at most 100."""
        folded = prefix.casefold()
        matches = [
            v.name for v in self.variables if v.name.casefold().startswith(folded) and (not types or v.has_type(types))
        ]
        return CompletionResult(
            values=tuple(matches[:MAX_COMPLETIONS]), total=len(matches), has_more=len(matches) > MAX_COMPLETIONS
        )


def _classes(value: object) -> Classes:
    # type() and the class attributes below never run user code, unlike value.__class__ or isinstance hooks.
    return tuple((str(cls.__module__), str(cls.__qualname__)) for cls in type(value).__mro__ if cls is not object)


def is_user_variable(name: object, hidden: Container[str] = ()) -> TypeGuard[str]:
    """Whether `%who` would list `name`: a string not starting with `_` and not hidden by IPython."""
    return isinstance(name, str) and not name.startswith("_") and name not in hidden


def take_namespace_snapshot(namespace: Mapping[str, Any], hidden: Container[str] = ()) -> NamespaceSnapshot:
    """What `%who` would list (see `is_user_variable`), sorted."""
    variables = [
        VariableInfo(name=name, classes=_classes(value))
        for name, value in list(namespace.items())
        if is_user_variable(name, hidden)
    ]
    variables.sort(key=lambda v: v.name.casefold())
    return NamespaceSnapshot(variables=tuple(variables))


def _described_types(types: Sequence[str]) -> str:
    return " or ".join(types) if types else "any type"


def read_variables(
    prompt: str,
    namespace: Mapping[str, Any],
    references: Sequence[VariableReference],
    format_value: Callable[[Any], str],
    hidden: Container[str] = (),
) -> dict[str, str]:
    """Each reference's variable, formatted by `format_value`, by argument name. Main thread only.

    Only what `%who` lists may be read, and only a variable of the types the
    argument declares; any other name raises `VariableArgumentError` naming
    the variables that would do.
    """
    values: dict[str, str] = {}
    for reference in references:
        name, types = reference.variable, reference.types
        found = is_user_variable(name, hidden) and name in namespace
        value = namespace[name] if found else None
        if found and (not types or VariableInfo(name, _classes(value)).has_type(types)):
            values[reference.argument] = _formatted(prompt, reference.argument, name, value, format_value)
            continue
        fitting = take_namespace_snapshot(namespace, hidden).complete("", types).values
        kinds = _described_types(types)
        offer = f"; the kernel has {', '.join(fitting)}" if fitting else f"; the kernel has no variable of {kinds}"
        if found:
            problem = f"{name!r} is a {type(value).__name__}, not a {kinds}"
        else:
            problem = f"the kernel has no variable named {name!r}"
        raise VariableArgumentError(prompt, reference.argument, problem + offer)
    return values


class _OverTime(BaseException):
    """Raised in the main thread when formatting runs past its budget (a BaseException: `except Exception` in a
    `__str__` does not swallow it)."""


def _formatted(prompt: str, argument: str, name: str, value: Any, format_value: Callable[[Any], str]) -> str:
    """`format_value(value)` within the size and time budget; raises `VariableArgumentError` past either."""
    kind = type(value).__name__

    def refused(problem: str) -> VariableArgumentError:
        return VariableArgumentError(
            prompt, argument, f"{name!r} {problem}; send a smaller variable (a part of it, assigned to a name)"
        )

    size = _known_size(value)
    if size is not None and size > MAX_VARIABLE_CHARS:
        raise refused(f"is a {kind} of {size:,} items, over the {MAX_VARIABLE_CHARS:,} characters a value may have")
    try:
        with _time_limit(FORMAT_SECONDS):
            text = format_value(value)
    except _OverTime:
        raise VariableArgumentError(
            prompt,
            argument,
            f"writing {name!r} (a {kind}) out took over {FORMAT_SECONDS:g} s and was stopped, "
            "so that the kernel's cells do not wait; send a smaller variable, or one that is quick to print",
        ) from None
    if len(text) > MAX_VARIABLE_CHARS:
        raise refused(f"written out is {len(text):,} characters, over the {MAX_VARIABLE_CHARS:,} a value may have")
    return text


def _known_size(value: Any) -> int | None:
    """How many characters (or items) at least a value's text has, where that is known without building it.

    Only for built-in types, exactly (a subclass's `__len__` is its own code): a string's, bytes' length;
    a built-in container's length (each item takes at least one character).
    """
    if type(value) in (str, bytes, bytearray, list, tuple, dict, set, frozenset):
        return len(value)
    return None


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise `_OverTime` in the main thread once `seconds` have passed (and every 50 ms after, until the block
    ends), interrupting Python code and blocking calls alike; no limit off the main thread or without timers."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def over(signum: int, frame: object) -> None:
        raise _OverTime

    previous = signal.signal(signal.SIGALRM, over)
    try:
        earlier = signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, *earlier)
    finally:
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


class NamespaceWatcher:
    """Keeps a `NamespaceSnapshot` of a shell's user namespace, refreshed after every cell.

    Create and close it on the kernel's main thread; read `snapshot` from any thread.
    """

    def __init__(self, shell: Any) -> None:
        self._shell = shell
        self._snapshot = NamespaceSnapshot()
        self._registered = False
        self.refresh()
        shell.events.register("post_run_cell", self.on_post_run_cell)
        self._registered = True

    @property
    def snapshot(self) -> NamespaceSnapshot:
        return self._snapshot

    def refresh(self) -> None:
        """Take a new snapshot now (main thread only)."""
        hidden = getattr(self._shell, "user_ns_hidden", {})
        self._snapshot = take_namespace_snapshot(self._shell.user_ns, hidden)

    def on_post_run_cell(self, result: object) -> None:
        self.refresh()

    def close(self) -> None:
        """Stop following the shell."""
        if self._registered:
            self._registered = False
            with contextlib.suppress(ValueError):  # already gone, e.g. the shell reset its events
                self._shell.events.unregister("post_run_cell", self.on_post_run_cell)
