"""Snapshots of the kernel's variables, so the server thread can complete names without touching them.

The user namespace belongs to the kernel's main thread: reading it from the
server thread could race a running cell (or run arbitrary `__getattr__` code).
So after each cell, on the main thread, `NamespaceWatcher` copies what
completion needs — each variable's name and the names of its type and base
classes — into an immutable `NamespaceSnapshot`. The server thread only ever
reads the latest snapshot.

`read_variables` is the one read of values: for a prompt whose `NAME:var`
arguments a client filled in, it runs on the main thread (between cells) and
formats each named variable as `%mcp get NAME=@variable` would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from ..exceptions import VariableArgumentError
from ..models import CompletionResult
from ..rendering import MAX_COMPLETIONS
from ..sources.kernel import VariableReference

__all__ = [
    "NamespaceSnapshot",
    "NamespaceWatcher",
    "VariableInfo",
    "is_user_variable",
    "read_variables",
    "take_namespace_snapshot",
]


@dataclass(frozen=True, slots=True)
class VariableInfo:
    """A variable's name and the names its type answers to (`DataFrame`, `pandas.core.frame.DataFrame`, …)."""

    name: str
    type_names: frozenset[str]

    def has_type(self, names: Iterable[str]) -> bool:
        return any(name in self.type_names for name in names)


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


def _type_names(value: object) -> frozenset[str]:
    # type() and the class attributes below never run user code, unlike value.__class__ or isinstance hooks.
    names: set[str] = set()
    for cls in type(value).__mro__:
        if cls is object:
            continue
        names.add(cls.__name__)
        names.add(f"{cls.__module__}.{cls.__qualname__}")
    return frozenset(names)


def is_user_variable(name: object, hidden: Container[str] = ()) -> TypeGuard[str]:
    """Whether `%who` would list `name`: a string not starting with `_` and not hidden by IPython."""
    return isinstance(name, str) and not name.startswith("_") and name not in hidden


def take_namespace_snapshot(namespace: Mapping[str, Any], hidden: Container[str] = ()) -> NamespaceSnapshot:
    """What `%who` would list (see `is_user_variable`), sorted."""
    variables = [
        VariableInfo(name=name, type_names=_type_names(value))
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
        if found and (not types or VariableInfo(name, _type_names(value)).has_type(types)):
            values[reference.argument] = format_value(value)
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
